/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the transaction integration tests (test_txn*.c):
 * throw-away copies of fixtures, snapshots, byte-for-byte comparison, and
 * HTTP with an Idempotency-Key header. Include after nt_agent.h. */
#ifndef NT_TXN_UTIL_H
#define NT_TXN_UTIL_H

#include <pthread.h>
#include <stdarg.h>

/* cp -a FIXTURE into a fresh temporary directory; ROOT gets DIR/root. */
__attribute__((unused)) static int tu_copy(const char *fixture, char *dir, size_t dsize, char *root, size_t rsize)
{
	char tmpl[] = "/tmp/nt-txn-XXXXXX", cmd[PATH_MAX * 3];
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(dir, dsize, "%s", tmpl);
	snprintf(root, rsize, "%s/root", tmpl);
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", fixture, root);
	return system(cmd) == 0 ? 0 : -1;
}

static int tu_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static int tu_sh(const char *fmt, ...)
{
	char cmd[PATH_MAX * 4];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int r = system(cmd);
	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

/* Run SCRIPT with sh, $R = ROOT and $D = DIR. Returns its exit code. */
__attribute__((unused)) static int tu_script(const char *root, const char *dir, const char *script)
{
	setenv("R", root, 1);
	setenv("D", dir, 1);
	int r = system(script);
	unsetenv("R");
	unsetenv("D");
	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

/* ROOT/REL made to hold VALUE and a newline, written whole (a new file
 * renamed over the old), as a kernel file changes: the agent never reads
 * it half-written. */
__attribute__((unused)) static void tu_put(const char *root, const char *rel, const char *value)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "%s\n", value);
		fclose(f);
		rename(tmp, path);
	}
}

/* Contents of ROOT/REL with the trailing newline removed, in BUF. */
__attribute__((unused)) static const char *tu_read(const char *root, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return "(missing)";
	size_t n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return buf;
}

/* Wait up to MS for ROOT/REL to read VALUE (trailing newline removed). */
__attribute__((unused)) static bool tu_wait_file(const char *root, const char *rel,
						 const char *value, int ms)
{
	char buf[256];
	for (int waited = 0; waited <= ms; waited += 100) {
		if (!strcmp(tu_read(root, rel, buf, sizeof(buf)), value))
			return true;
		nt_agent_sleep_ms(100);
	}
	return false;
}

/* Ring sizes from the fixture's ethtool/IFACE.json: "rx=N,tx=N". */
__attribute__((unused)) static const char *tu_rings(const char *root, const char *iface, char *buf, size_t size)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *j = json_load_file(path, 0, NULL);
	json_t *r = json_object_get(j, "rings");
	snprintf(buf, size, "rx=%lld,tx=%lld", (long long)json_integer_value(json_object_get(r, "rx")),
		 (long long)json_integer_value(json_object_get(r, "tx")));
	json_decref(j);
	return buf;
}

/* HTTP with an optional Idempotency-Key. */
__attribute__((unused)) static int tu_http(const char *method, const char *url, const char *body, const char *idem,
		   long *status, json_t **json)
{
	nt_http_result r = { 0 };
	struct curl_slist *h = NULL;
	char hdr[256];
	CURL *c = curl_easy_init();
	if (!c)
		return -1;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, nt_http_body_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		h = curl_slist_append(h, "Content-Type: application/json");
	}
	if (idem) {
		snprintf(hdr, sizeof(hdr), "Idempotency-Key: %s", idem);
		h = curl_slist_append(h, hdr);
	}
	if (h)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	CURLcode cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	*json = r.body_len ? json_loadb(r.body, r.body_len, 0, NULL) : NULL;
	free(r.body);
	return cc == CURLE_OK ? 0 : -1;
}

__attribute__((unused)) static const char *tu_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "(none)";
}

/* An apply run in a thread, for concurrency and crash tests. */
typedef struct tu_async {
	pthread_t th;
	char url[256];
	char *body;
	long status;
	json_t *json;
	int rc;
} tu_async;

__attribute__((unused)) static void *tu_async_main(void *arg)
{
	tu_async *a = arg;
	a->rc = tu_http("POST", a->url, a->body, NULL, &a->status, &a->json);
	return NULL;
}

__attribute__((unused)) static void tu_async_start(tu_async *a, const char *url, const char *body)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->url, sizeof(a->url), "%s", url);
	a->body = strdup(body);
	pthread_create(&a->th, NULL, tu_async_main, a);
}

__attribute__((unused)) static void tu_async_join(tu_async *a)
{
	pthread_join(a->th, NULL);
	free(a->body);
	a->body = NULL;
}

#define X460_FIX "{\"name\":\"x460-fix\",\"irq_affinity\":[{\"interface\":\"eth*\"," \
	"\"policy\":\"local\",\"exclude_cpus\":\"0\"}]}"
#define EPYC_FIX "{\"name\":\"epyc-fix\",\"rings\":[{\"interface\":\"enos*\",\"rx\":4096}]," \
	"\"bonds\":[{\"interface\":\"bond0\",\"xmit_hash_policy\":\"layer3+4\"}]," \
	"\"sysctl\":{\"net.ipv4.tcp_rmem\":\"4096 87380 16777216\"," \
	"\"net.ipv4.tcp_wmem\":\"4096 65536 16777216\",\"net.core.rmem_max\":\"16777216\"," \
	"\"net.core.wmem_max\":\"16777216\"}}"

static const int x460_irqs[] = { 177, 185, 193, 201, 209, 217, 225, 233 };

/* POST BODY to PATH, check the status is WANT; the parsed answer (caller
 * decrefs). */
static inline json_t *tu_post(nt_agent *a, const char *path, const char *body, long want)
{
	long st = 0;
	json_t *doc = NULL;
	tu_http("POST", nt_url(a, path), body, NULL, &st, &doc);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	CHECK_MSG(st == want, "POST %s: %ld, wanted %ld: %s", path, st, want, text ? text : "");
	free(text);
	return doc;
}

/* GET PATH, checked to answer 200; the parsed answer (caller decrefs). */
static inline json_t *tu_get(nt_agent *a, const char *path)
{
	long st = 0;
	json_t *doc = NULL;
	tu_http("GET", nt_url(a, path), NULL, NULL, &st, &doc);
	CHECK_MSG(st == 200, "GET %s: %ld", path, st);
	return doc;
}

/* Whether DOC's "errors" holds one at PATH whose message has WORDS; when
 * not, the errors there were are printed. */
static inline bool tu_error_at(json_t *doc, const char *path, const char *words)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(doc, "errors"), i, e)
		if (!strcmp(tu_str(e, "path"), path) && strstr(tu_str(e, "message"), words))
			return true;
	char *t = json_dumps(json_object_get(doc, "errors"), JSON_COMPACT);
	fprintf(stderr, "no error at %s saying '%s' in %s\n", path, words, t ? t : "(none)");
	free(t);
	return false;
}

/* DOC written to PATH as the fixture writes a document after a change
 * (two-space indent and a newline), so that a rollback must give back the
 * very bytes. */
static inline void tu_write_doc(const char *path, const json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2));
	FILE *f = fopen(path, "w");
	CHECK_MSG(f && text, "writing %s", path);
	if (f && text)
		fprintf(f, "%s\n", text);
	if (f)
		fclose(f);
	free(text);
}

/* Roll transaction ID back through the API (201, "applied") and check that
 * ROOT's REL is byte for byte DIR/snap/REL, the copy taken before it. */
static inline void tu_rollback_restores(nt_agent *a, long long id, const char *dir, const char *root, const char *rel)
{
	char url[96];
	snprintf(url, sizeof(url), "/v1/transactions/%lld/rollback", id);
	json_t *t = tu_post(a, url, "{}", 201);
	CHECK_STR(tu_str(t, "status"), "applied");
	json_decref(t);
	CHECK_MSG(tu_sh("cmp '%s/snap/%s' '%s/%s' >&2", dir, rel, root, rel) == 0,
		  "%s is not byte for byte as before the transaction", rel);
}

/* The copy of FIXTURE an API test runs on: DIR (its scratch folder), ROOT
 * (the tree) and STATE (the agent's); the test is skipped when FIXTURE or
 * NT_BIN is missing. False, a failed check, when it cannot be copied. */
static inline bool tu_fixture_copy(const char *fixture, char *dir, size_t dsize, char *root, size_t rsize,
				   char *state, size_t ssize)
{
	if (access(fixture, F_OK) != 0)
		SKIP("fixture %s is missing", fixture);
	if (access(NT_BIN, X_OK) != 0)
		SKIP("%s is not built", NT_BIN);
	if (tu_copy(fixture, dir, dsize, root, rsize) < 0) {
		CHECK_MSG(0, "cannot copy %s", fixture);
		return false;
	}
	snprintf(state, ssize, "%s/state", dir);
	return true;
}

#endif
