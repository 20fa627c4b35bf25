/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/libcurl.h"
#include "kernel/dynlib.h"

#include <pthread.h>
#include <stdio.h>

static nt_curl curl;
static int curl_rc;
static char curl_err[256];
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_load(void)
{
	const nt_dynsym syms[] = {
		NT_DYNSYM(curl_global_init, curl.global_init),
		NT_DYNSYM(curl_easy_init, curl.easy_init),
		NT_DYNSYM(curl_easy_setopt, curl.easy_setopt),
		NT_DYNSYM(curl_easy_perform, curl.easy_perform),
		NT_DYNSYM(curl_easy_getinfo, curl.easy_getinfo),
		NT_DYNSYM(curl_easy_strerror, curl.easy_strerror),
		NT_DYNSYM(curl_easy_cleanup, curl.easy_cleanup),
		NT_DYNSYM(curl_slist_append, curl.slist_append),
		NT_DYNSYM(curl_slist_free_all, curl.slist_free_all),
	};
	curl_rc = nt_dynlib_open("libcurl.so.4", syms, sizeof(syms) / sizeof(syms[0]),
				 "libcurl.so.4 is needed for the agent commands: apt-get install libcurl4",
				 curl_err, sizeof(curl_err));
	/* Once, before any handle exists (curl_easy_init would otherwise do
	 * it implicitly, in whichever thread came first). Never cleaned up:
	 * the library stays for the life of the process. */
	if (curl_rc == 0 && curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(curl_err, sizeof(curl_err), "libcurl.so.4 could not initialise");
		curl_rc = -1;
	}
}

const nt_curl *nt_curl_get(char *err, size_t errsize)
{
	pthread_once(&curl_once, curl_load);
	if (curl_rc < 0) {
		snprintf(err, errsize, "%s", curl_err);
		return NULL;
	}
	return &curl;
}
