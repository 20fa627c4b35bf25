#include "cli/client.h"
#include "cli/libcurl.h"
#include "cli/output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	nt_cli_reply *r = userdata;
	size_t n = size * nmemb;
	char *nd = realloc(r->body, r->len + n + 1);
	if (!nd)
		return 0;
	r->body = nd;
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

int nt_cli_request(const char *agent, const char *method, const char *path, const char *body,
		   const char *waiting, nt_cli_reply *r)
{
	nt_progress prog;
	char url[2048], auth[1024];
	struct curl_slist *h = NULL;
	int rc = -ENOMEM;

	memset(r, 0, sizeof(*r));
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
	/* A transaction with many steps, or a confirm deadline, takes its time;
	 * the agent answers when it has finished. */
	cu->easy_setopt(c, CURLOPT_TIMEOUT, 300L);
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
	r->doc = NULL;
}
