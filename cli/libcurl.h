/* SPDX-License-Identifier: Apache-2.0 */
/* libcurl, opened on first use (kernel/dynlib.h says why): only the CLI's
 * agent commands (cli/client.c) speak HTTP as a client, so `nettune
 * serve`, `nettune topology` and `nettune --help` never map it. (The
 * serve watchdog's probe of its own API is cli/probe.c.) */
#ifndef NT_CLI_LIBCURL_H
#define NT_CLI_LIBCURL_H

#include <curl/curl.h>
#include <stddef.h>

/* The functions used, typed as the header declares them. */
typedef struct nt_curl {
	typeof(curl_global_init) *global_init;
	typeof(curl_easy_init) *easy_init;
	typeof(curl_easy_setopt) *easy_setopt;
	typeof(curl_easy_perform) *easy_perform;
	typeof(curl_easy_getinfo) *easy_getinfo;
	typeof(curl_easy_strerror) *easy_strerror;
	typeof(curl_easy_cleanup) *easy_cleanup;
	typeof(curl_slist_append) *slist_append;
	typeof(curl_slist_free_all) *slist_free_all;
} nt_curl;

/* libcurl.so.4, opened and initialised (curl_global_init) once, by the
 * first caller of any thread. NULL when it cannot be, with ERR saying why
 * ("libcurl.so.4 is needed for the agent commands: apt-get install
 * libcurl4"). */
const nt_curl *nt_curl_get(char *err, size_t errsize);

#endif
