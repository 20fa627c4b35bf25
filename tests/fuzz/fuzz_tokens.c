/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the token file of `nettune serve --tokens` (api/auth.c)
 * read from memory, then Authorization headers against what it loaded:
 * every token line's secret must name its token, and the input's last line
 * as a header must not crash the check. */
#include "api/auth.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	nt_auth *a = NULL;
	const char *name;
	nt_scope scope;

	if (size == 0)
		return 0;
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	err[0] = '\0';
	int r = nt_auth_read(f, "fuzz", &a, err, sizeof(err));
	fclose(f);
	if (r < 0) {
		if (a || !err[0])
			abort(); /* refused without a reason, or with a result */
		return 0;
	}
	if (!a || nt_auth_count(a) < 1 || nt_auth_count(a) > 1024)
		abort();

	/* Read back each line as the loader did: NAME SCOPE SECRET, and
	 * "Bearer SECRET" must give NAME with its scope. */
	char *text = malloc(size + 1);
	if (!text)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	int seen = 0;
	char *last = text;
	for (char *line = text, *next; line; line = next) {
		char *nl = strchr(line, '\n');
		next = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		size_t len = strlen(line);
		while (len && line[len - 1] == '\r')
			line[--len] = '\0';
		if (len)
			last = line;
		char *p = line + strspn(line, " \t");
		if (!*p || *p == '#')
			continue;
		char *copy = strdup(p), *save = NULL;
		if (!copy)
			abort();
		char *n = strtok_r(copy, " \t", &save);
		char *s = strtok_r(NULL, " \t", &save);
		char *sec = strtok_r(NULL, " \t", &save);
		if (!n || !s || !sec)
			abort(); /* loaded a line without three fields */
		char hdr[300];
		snprintf(hdr, sizeof(hdr), "bearer\t %s ", sec);
		if (nt_auth_bearer(a, hdr, &name, &scope) != 0 || strcmp(name, n) != 0 ||
		    scope != (!strcmp(s, "read") ? NT_SCOPE_READ : NT_SCOPE_APPLY))
			abort();
		free(copy);
		seen++;
	}
	if (seen != nt_auth_count(a))
		abort();
	(void)nt_auth_bearer(a, last, &name, &scope);
	free(text);
out:
	nt_auth_free(a);
	return 0;
}
