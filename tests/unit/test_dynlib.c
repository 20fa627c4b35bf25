/* SPDX-License-Identifier: Apache-2.0 */
/* Libraries opened on first use (kernel/dynlib.c): a library and its
 * symbols into typed pointers, a missing library with its hint, a missing
 * symbol; and the two real users resolve everything they need here. */
#include "cli/libcurl.h"
#include "kernel/dynlib.h"
#include "kernel/irqbalance_client.h"
#include "harness.h"

#include <errno.h>
#include <string.h>

int main(void)
{
	char err[256] = "";
	typeof(strlen) *my_strlen = NULL;
	typeof(strcmp) *my_strcmp = NULL;

	const nt_dynsym ok[] = { NT_DYNSYM(strlen, my_strlen), NT_DYNSYM(strcmp, my_strcmp) };
	CHECK_INT(nt_dynlib_open("libc.so.6", ok, 2, NULL, err, sizeof(err)), 0);
	CHECK(my_strlen && my_strlen("four") == 4);
	CHECK(my_strcmp && my_strcmp("a", "a") == 0);

	const nt_dynsym missing_sym[] = { NT_DYNSYM(strlen, my_strlen),
					  { "nettune_no_such_symbol", (void **)&my_strcmp } };
	CHECK_INT(nt_dynlib_open("libc.so.6", missing_sym, 2, NULL, err, sizeof(err)), -ELIBBAD);
	CHECK_MSG(strstr(err, "nettune_no_such_symbol") != NULL, "err \"%s\"", err);
	/* Nothing half-resolved is left to call. */
	CHECK(my_strlen == NULL && my_strcmp == NULL);

	CHECK_INT(nt_dynlib_open("libnettune-absent.so.9", ok, 2, "install the absent package", err,
				 sizeof(err)),
		  -ENOENT);
	CHECK_STR(err, "install the absent package");
	CHECK_INT(nt_dynlib_open("libnettune-absent.so.9", ok, 2, NULL, err, sizeof(err)), -ENOENT);
	CHECK_MSG(strstr(err, "libnettune-absent.so.9") != NULL, "err \"%s\"", err);

	/* libcurl4 is a build and test dependency: every function resolves. */
	err[0] = '\0';
	const nt_curl *cu = nt_curl_get(err, sizeof(err));
	CHECK_MSG(cu != NULL, "libcurl: %s", err);
	if (cu) {
		CURL *c = cu->easy_init();
		CHECK(c != NULL);
		if (c)
			cu->easy_cleanup(c);
		CHECK_STR(cu->easy_strerror(CURLE_OK), "No error");
		CHECK(cu == nt_curl_get(err, sizeof(err))); /* opened once */
	}

#ifdef NT_HAVE_SYSTEMD
	/* sd-bus opened and resolved, then asked on a bus address that
	 * does not exist (the variable sd_bus_open_system honours), so no
	 * unit of this host is touched: the error must come from the bus,
	 * not from loading the library. */
	setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/nettune-test-bus", 1);
	err[0] = '\0';
	int r = nt_irqbalance_start("systemd", err, sizeof(err));
	CHECK(r < 0);
	CHECK_MSG(strstr(err, "systemd") != NULL && strstr(err, "libsystemd.so.0 is needed") == NULL,
		  "err \"%s\"", err);
	unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
#endif
	TEST_MAIN_END();
}
