#include "cli/client.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
	char *data;
	size_t len;
} buf;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	buf *b = userdata;
	size_t n = size * nmemb;
	char *nd = realloc(b->data, b->len + n + 1);
	if (!nd)
		return 0;
	b->data = nd;
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/* Send one request; print the answer pretty. */
static int request(const char *agent, const char *method, const char *path, const char *body)
{
	char url[2048];
	buf b = { NULL, 0 };
	long status = 0;
	int rc;

	snprintf(url, sizeof(url), "%s%s", agent, path);
	CURL *c = curl_easy_init();
	if (!c) {
		fprintf(stderr, "nettune: cannot initialise libcurl\n");
		return 3;
	}
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json");
	const char *token = getenv("NETTUNE_TOKEN");
	char auth[1024];
	if (token && *token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		h = curl_slist_append(h, auth);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	CURLcode cr = curl_easy_perform(c);
	if (cr != CURLE_OK) {
		fprintf(stderr, "nettune: cannot reach the agent at %s: %s\n", agent, curl_easy_strerror(cr));
		rc = 3;
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	json_error_t jerr;
	json_t *doc = b.data ? json_loads(b.data, 0, &jerr) : NULL;
	FILE *f = status >= 200 && status < 300 ? stdout : stderr;
	if (doc) {
		char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
		fprintf(f, "%s\n", s ? s : "");
		free(s);
		json_decref(doc);
	} else if (b.data) {
		fprintf(f, "%s\n", b.data);
	}
	rc = status >= 200 && status < 300 ? 0 : 1;
out:
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(b.data);
	return rc;
}

static json_t *load_profile(const char *path)
{
	json_error_t err;
	json_t *p = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (!p)
		fprintf(stderr, "nettune: %s: line %d: %s\n", path, err.line, err.text);
	return p;
}

static int send_json(const char *agent, const char *method, const char *path, json_t *body)
{
	char *s = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!s) {
		fprintf(stderr, "nettune: out of memory\n");
		return 1;
	}
	int rc = request(agent, method, path, s);
	free(s);
	return rc;
}

int nt_cli_plan(const char *agent, const char *profile_path)
{
	json_t *p = load_profile(profile_path);
	if (!p)
		return 2;
	return send_json(agent, "POST", "/v1/plan", p);
}

int nt_cli_apply(const char *agent, const char *profile_path, long confirm_timeout_s,
		 bool persist)
{
	json_t *p = load_profile(profile_path);
	if (!p)
		return 2;
	json_t *body = json_pack("{s:o}", "profile", p);
	if (confirm_timeout_s > 0)
		json_object_set_new(body, "confirm_timeout_s", json_integer(confirm_timeout_s));
	if (persist)
		json_object_set_new(body, "persist", json_true());
	return send_json(agent, "POST", "/v1/transactions", body);
}

static int valid_id(const char *id)
{
	if (!*id || strlen(id) > 64)
		return 0;
	for (const char *p = id; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '-'))
			return 0;
	return 1;
}

int nt_cli_confirm(const char *agent, const char *id)
{
	char path[256];
	if (!valid_id(id)) {
		fprintf(stderr, "nettune: '%s' is not a transaction id\n", id);
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/transactions/%s/confirm", id);
	return request(agent, "POST", path, "{}");
}

int nt_cli_rollback(const char *agent, const char *id, bool force)
{
	char path[256];
	if (!valid_id(id)) {
		fprintf(stderr, "nettune: '%s' is not a transaction id\n", id);
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/transactions/%s/rollback", id);
	return request(agent, "POST", path, force ? "{\"force\":true}" : "{}");
}

int nt_cli_show(const char *agent, const char *id)
{
	char path[256];
	if (!valid_id(id)) {
		fprintf(stderr, "nettune: '%s' is not a transaction id\n", id);
		return 2;
	}
	snprintf(path, sizeof(path), "/v1/transactions/%s", id);
	return request(agent, "GET", path, NULL);
}

int nt_cli_history(const char *agent, const char *status, long limit)
{
	char path[256];
	int n = snprintf(path, sizeof(path), "/v1/transactions?limit=%ld", limit > 0 ? limit : 20);
	if (status) {
		for (const char *p = status; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || *p == '_')) {
				fprintf(stderr, "nettune: --status wants a status such as applied or rolled_back\n");
				return 2;
			}
		snprintf(path + n, sizeof(path) - (size_t)n, "&status=%s", status);
	}
	return request(agent, "GET", path, NULL);
}

int nt_cli_desired_show(const char *agent)
{
	return request(agent, "GET", "/v1/desired", NULL);
}

int nt_cli_desired_set(const char *agent, const char *profile_path)
{
	json_t *p = load_profile(profile_path);
	if (!p)
		return 2;
	return send_json(agent, "PUT", "/v1/desired", json_pack("{s:o}", "profile", p));
}

int nt_cli_desired_clear(const char *agent)
{
	return request(agent, "DELETE", "/v1/desired", NULL);
}

int nt_cli_drift(const char *agent)
{
	return request(agent, "GET", "/v1/drift", NULL);
}
