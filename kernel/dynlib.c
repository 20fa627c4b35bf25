/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

int nt_dynlib_open(const char *soname, const nt_dynsym *syms, size_t n, const char *hint,
		   char *err, size_t errsize)
{
	/* RTLD_LOCAL: its symbols serve only these pointers, never resolve
	 * anything else in the process. */
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		if (hint)
			snprintf(err, errsize, "%s", hint);
		else
			snprintf(err, errsize, "cannot load %s: %s", soname, why ? why : "not found");
		return -ENOENT;
	}
	for (size_t i = 0; i < n; i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (!*syms[i].slot) {
			snprintf(err, errsize, "%s has no %s (too old?)", soname, syms[i].name);
			for (size_t j = 0; j <= i; j++)
				*syms[j].slot = NULL;
			dlclose(h);
			return -ELIBBAD;
		}
	}
	return 0;
}
