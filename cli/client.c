/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/client.h"
#include "cli/libcurl.h"
#include "cli/output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	nt_cli_reply *r = userdata;
	size_t n = size * nmemb;
	if (n > NT_CLI_MAX_REPLY - r->len) {
		r->too_big = true;
		return 0; /* curl ends the transfer with CURLE_WRITE_ERROR */
	}
	/* Grown by doubling: an answer of tens of megabytes arrives in
	 * 16 KiB pieces, and growing by each piece copied it thousands of
	 * times (minutes under AddressSanitizer, whose realloc always moves). */
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 16384;
		while (cap < r->len + n + 1)
			cap *= 2;
		char *nd = realloc(r->body, cap);
		if (!nd)
			return 0;
		r->body = nd;
		r->cap = cap;
	}
	memcpy(r->body + r->len, ptr, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	nt_progress_tick(userdata);
	return 0;
}

int nt_cli_timeout_s(const char *env, long *out)
{
	char *end;
	if (!env || !*env) {
		*out = NT_CLI_DEFAULT_TIMEOUT_S;
		return 0;
	}
	errno = 0;
	long v = strtol(env, &end, 10);
	if (errno || *end || end == env || v < 1 || v > 86400)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Only http:// and https:// agents: libcurl would also read file://,
 * speak gopher or follow a redirect to anything it was built with. */
static bool http_url(const char *url)
{
	return !strncasecmp(url, "http://", 7) || !strncasecmp(url, "https://", 8);
}

int nt_cli_request(const char *agent, const char *method, const char *path, const char *body,
		   const char *waiting, nt_cli_reply *r)
{
	nt_progress prog;
	char url[2048], auth[1024];
	struct curl_slist *h = NULL;
	int rc = -ENOMEM;
	long timeout_s;

	memset(r, 0, sizeof(*r));
	if (nt_cli_timeout_s(getenv("NETTUNE_TIMEOUT"), &timeout_s) < 0) {
		snprintf(r->error, sizeof(r->error), "NETTUNE_TIMEOUT wants a number of seconds from 1 to 86400, not '%s'",
			 getenv("NETTUNE_TIMEOUT"));
		return -EINVAL;
	}
	if (!http_url(agent)) {
		snprintf(r->error, sizeof(r->error), "the agent's URL '%.200s' is not http:// or https://", agent);
		return -EINVAL;
	}
	const nt_curl *cu = nt_curl_get(r->error, sizeof(r->error));
	if (!cu)
		return -ELIBACC;
	snprintf(url, sizeof(url), "%s%s", agent, path);
	CURL *c = cu->easy_init();
	if (!c) {
		snprintf(r->error, sizeof(r->error), "cannot initialise libcurl");
		return -ENOMEM;
	}
	h = cu->slist_append(h, "Content-Type: application/json");
	h = cu->slist_append(h, "Accept: application/json");
	const char *token = getenv("NETTUNE_TOKEN");
	if (token && *token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		h = cu->slist_append(h, auth);
	}
	cu->easy_setopt(c, CURLOPT_URL, url);
	cu->easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	cu->easy_setopt(c, CURLOPT_HTTPHEADER, h);
	cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	cu->easy_setopt(c, CURLOPT_WRITEDATA, r);
	cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	/* A transaction with many steps takes its time (a few thousand steps
	 * within 30 s) and the agent answers when it has finished; an agent
	 * silent for longer than NETTUNE_TIMEOUT is not waited for. */
	cu->easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	cu->easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)NT_CLI_MAX_REPLY);
	if (cu->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	    cu->easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK) {
		/* libcurl before 7.85: the older option, by its number (its
		 * name is deprecated in newer headers). */
		cu->easy_setopt(c, (CURLoption)181, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
		cu->easy_setopt(c, (CURLoption)182, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	}
	if (body)
		cu->easy_setopt(c, CURLOPT_POSTFIELDS, body);
	nt_progress_begin(&prog, waiting ? waiting : "");
	if (waiting && prog.on) {
		cu->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		cu->easy_setopt(c, CURLOPT_XFERINFODATA, &prog);
		cu->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	}
	CURLcode cr = cu->easy_perform(c);
	nt_progress_end(&prog);
	if (r->too_big || cr == CURLE_FILESIZE_EXCEEDED) {
		snprintf(r->error, sizeof(r->error), "the agent's answer is larger than %d MiB: not read",
			 (int)(NT_CLI_MAX_REPLY >> 20));
		rc = -EFBIG;
		goto out;
	}
	if (cr == CURLE_OPERATION_TIMEDOUT) {
		snprintf(r->error, sizeof(r->error), "no answer within %ld s (NETTUNE_TIMEOUT=SECONDS waits longer)",
			 timeout_s);
		rc = -ETIMEDOUT;
		goto out;
	}
	if (cr != CURLE_OK) {
		snprintf(r->error, sizeof(r->error), "%s", cu->easy_strerror(cr));
		rc = cr == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EHOSTUNREACH;
		goto out;
	}
	cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	if (!r->body) {
		r->body = strdup("");
		if (!r->body)
			goto out;
	}
	r->doc = json_loadb(r->body, r->len, 0, NULL);
	rc = 0;
out:
	cu->slist_free_all(h);
	cu->easy_cleanup(c);
	return rc;
}

void nt_cli_reply_free(nt_cli_reply *r)
{
	free(r->body);
	json_decref(r->doc);
	r->body = NULL;
	r->cap = 0;
	r->doc = NULL;
}
