/* Run the agent as a real subprocess and talk HTTP to it, for integration
 * tests. Include once per test binary (everything is static), after
 * harness.h. Every helper is static inline, so a test uses what it needs.
 * Links with libcurl and jansson (the test build does).
 *
 *   nt_agent a;
 *   if (nt_agent_start(&a, NT_FIXTURES "/seed000-x460", NULL, NULL) < 0) ...fail;
 *   long st; json_t *doc; char ct[128];
 *   nt_http("GET", nt_url(&a, "/v1/nics"), NULL, &st, &doc, ct, sizeof(ct));
 *   ...
 *   json_decref(doc);
 *   nt_agent_stop(&a);
 *
 * nt_agent_start runs `NT_BIN serve --listen 127.0.0.1:0 --root ROOT
 * --state-dir DIR [EXTRA...]` and waits for the line "listening on
 * http://ADDR:PORT" the CLI prints once it accepts connections. The child's
 * stdout goes to a file (never a pipe that could fill up and block it),
 * unlinked once that line is read; its stderr is the test's stderr. When
 * STATE_DIR is NULL a fresh temporary directory is made and removed again by
 * nt_agent_stop. */
#ifndef NT_TEST_AGENT_H
#define NT_TEST_AGENT_H

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct nt_agent {
	pid_t pid;
	int port;
	char base[64]; /* "http://127.0.0.1:PORT" */
	char state_dir[PATH_MAX];
	bool own_state_dir; /* made by nt_agent_start, removed by nt_agent_stop */
	char out_path[PATH_MAX]; /* the child's stdout */
	char url[1024]; /* buffer behind nt_url() */
} nt_agent;

static inline int nt_agent_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	remove(path);
	return 0;
}

static inline void nt_agent_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Stop the agent: SIGTERM, wait up to 10 s, then SIGKILL. Returns the
 * child's exit status as waitpid gave it (0 for a clean exit), -1 when it
 * had to be killed. Safe to call twice. */
static inline int nt_agent_stop(nt_agent *a)
{
	int status = 0, ret = -1;
	if (a->pid > 0) {
		kill(a->pid, SIGTERM);
		for (int i = 0; i < 1000; i++) {
			pid_t w = waitpid(a->pid, &status, WNOHANG);
			if (w == a->pid) {
				ret = status;
				break;
			}
			nt_agent_sleep_ms(10);
		}
		if (ret == -1) {
			fprintf(stderr, "nt_agent: pid %d ignored SIGTERM, killing\n", (int)a->pid);
			kill(a->pid, SIGKILL);
			waitpid(a->pid, &status, 0);
		}
		a->pid = 0;
	}
	if (a->out_path[0]) {
		unlink(a->out_path);
		a->out_path[0] = '\0';
	}
	if (a->own_state_dir && a->state_dir[0]) {
		nftw(a->state_dir, nt_agent_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
		a->state_dir[0] = '\0';
		a->own_state_dir = false;
	}
	return ret;
}

/* Start the agent on ROOT (a fixture tree or "/"). EXTRA is a
 * NULL-terminated list of further serve arguments, or NULL. Returns 0, or -1
 * with the reason printed to stderr. */
static inline int nt_agent_start(nt_agent *a, const char *root, const char *state_dir,
			  const char *const *extra)
{
	char tmpl[] = "/tmp/nt-agent-out-XXXXXX";
	const char *argv[64];
	int argc = 0, fd;

	memset(a, 0, sizeof(*a));
	if (state_dir) {
		snprintf(a->state_dir, sizeof(a->state_dir), "%s", state_dir);
	} else {
		char st[] = "/tmp/nt-agent-state-XXXXXX";
		if (!mkdtemp(st)) {
			perror("nt_agent: mkdtemp");
			return -1;
		}
		snprintf(a->state_dir, sizeof(a->state_dir), "%s", st);
		a->own_state_dir = true;
	}
	fd = mkstemp(tmpl);
	if (fd < 0) {
		perror("nt_agent: mkstemp");
		nt_agent_stop(a);
		return -1;
	}
	snprintf(a->out_path, sizeof(a->out_path), "%s", tmpl);

	argv[argc++] = NT_BIN;
	argv[argc++] = "serve";
	argv[argc++] = "--listen";
	argv[argc++] = "127.0.0.1:0";
	argv[argc++] = "--root";
	argv[argc++] = root;
	argv[argc++] = "--state-dir";
	argv[argc++] = a->state_dir;
	for (int i = 0; extra && extra[i] && argc < 63; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;

	fflush(NULL);
	a->pid = fork();
	if (a->pid < 0) {
		perror("nt_agent: fork");
		close(fd);
		nt_agent_stop(a);
		return -1;
	}
	if (a->pid == 0) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
		execv(NT_BIN, (char *const *)argv);
		fprintf(stderr, "nt_agent: exec %s: %s\n", NT_BIN, strerror(errno));
		_exit(127);
	}
	close(fd);

	/* Up to 15 s for the "listening on" line. */
	for (int i = 0; i < 1500; i++) {
		char buf[4096];
		FILE *f = fopen(a->out_path, "r");
		if (f) {
			while (fgets(buf, sizeof(buf), f)) {
				const char *p = strstr(buf, "listening on http://");
				const char *colon = p ? strrchr(p, ':') : NULL;
				if (p && colon && strchr(buf, '\n')) {
					a->port = atoi(colon + 1);
					break;
				}
			}
			fclose(f);
		}
		if (a->port > 0)
			break;
		int status;
		if (waitpid(a->pid, &status, WNOHANG) == a->pid) {
			fprintf(stderr, "nt_agent: %s serve exited (status %d) before listening\n",
				NT_BIN, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			a->pid = 0;
			nt_agent_stop(a);
			return -1;
		}
		nt_agent_sleep_ms(10);
	}
	if (a->port <= 0) {
		fprintf(stderr, "nt_agent: no \"listening on\" line from %s serve\n", NT_BIN);
		nt_agent_stop(a);
		return -1;
	}
	snprintf(a->base, sizeof(a->base), "http://127.0.0.1:%d", a->port);
	/* The line is read; the child keeps its descriptor, so the file can go
	 * now and is not left behind however the test ends the agent. */
	unlink(a->out_path);
	a->out_path[0] = '\0';
	return 0;
}

/* BASE + PATH in a buffer inside A (valid until the next call). */
static inline const char *nt_url(nt_agent *a, const char *path)
{
	snprintf(a->url, sizeof(a->url), "%s%s", a->base, path);
	return a->url;
}

/* ---- HTTP ---- */

typedef struct nt_http_result {
	long status; /* 0 when no response arrived */
	char content_type[128]; /* "" when none */
	char allow[128]; /* Allow header, "" when none */
	char location[256]; /* Location header, "" when none */
	char *body; /* raw body, NUL-terminated (owned) */
	size_t body_len;
	json_t *json; /* body parsed, NULL when empty or not JSON (owned) */
} nt_http_result;

static inline void nt_http_result_free(nt_http_result *r)
{
	free(r->body);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

static inline size_t nt_http_body_cb(char *p, size_t sz, size_t n, void *ud)
{
	nt_http_result *r = ud;
	size_t len = sz * n;
	char *nb = realloc(r->body, r->body_len + len + 1);
	if (!nb)
		return 0;
	r->body = nb;
	memcpy(r->body + r->body_len, p, len);
	r->body_len += len;
	r->body[r->body_len] = '\0';
	return len;
}

static inline void nt_http_copy_header(const char *line, size_t len, const char *name, char *dst,
				size_t dstsize)
{
	size_t nl = strlen(name);
	if (len <= nl || strncasecmp(line, name, nl) != 0)
		return;
	const char *v = line + nl;
	const char *end = line + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		end--;
	snprintf(dst, dstsize, "%.*s", (int)(end - v), v);
}

static inline size_t nt_http_header_cb(char *p, size_t sz, size_t n, void *ud)
{
	nt_http_result *r = ud;
	size_t len = sz * n;
	nt_http_copy_header(p, len, "Allow:", r->allow, sizeof(r->allow));
	nt_http_copy_header(p, len, "Location:", r->location, sizeof(r->location));
	return len;
}

/* Send METHOD URL with BODY (BODY_LEN bytes; NULL for none) as REQ_CTYPE
 * (NULL: no Content-Type header). Fills RES (free with nt_http_result_free).
 * Returns 0 when a response arrived, -1 otherwise (curl's reason printed).
 * A server that answers before reading the whole body (413) may reset the
 * upload; the response still counts when its status arrived. */
static inline int nt_http_do(const char *method, const char *url, const char *body, size_t body_len,
		      const char *req_ctype, nt_http_result *res)
{
	static bool inited;
	struct curl_slist *hdrs = NULL;
	char ctype_hdr[256];
	CURLcode cc;
	CURL *h;

	memset(res, 0, sizeof(*res));
	if (!inited) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		inited = true;
	}
	h = curl_easy_init();
	if (!h)
		return -1;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	/* Paths are sent exactly as written: the tests probe "..". */
	curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, nt_http_body_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, res);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, nt_http_header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, res);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	}
	if (req_ctype) {
		snprintf(ctype_hdr, sizeof(ctype_hdr), "Content-Type: %s", req_ctype);
		hdrs = curl_slist_append(hdrs, ctype_hdr);
	} else if (body) {
		hdrs = curl_slist_append(hdrs, "Content-Type:"); /* curl's default removed */
	}
	if (hdrs)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);

	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res->status);
	char *ct = NULL;
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	if (ct)
		snprintf(res->content_type, sizeof(res->content_type), "%s", ct);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);

	if (cc != CURLE_OK && res->status == 0) {
		fprintf(stderr, "nt_http: %s %s: %s\n", method, url, curl_easy_strerror(cc));
		return -1;
	}
	if (res->body_len)
		res->json = json_loadb(res->body, res->body_len, 0, NULL);
	return 0;
}

/* The common case: BODY (a NUL-terminated JSON text or NULL) sent as
 * application/json; *STATUS, the parsed *JSON (caller decrefs; NULL when the
 * body is not JSON) and the response's Content-Type into CTYPE (may be
 * NULL). Returns 0 when a response arrived, -1 otherwise. */
static inline int nt_http(const char *method, const char *url, const char *body, long *status,
		   json_t **json, char *ctype, size_t ctsize)
{
	nt_http_result r;
	int rc = nt_http_do(method, url, body, body ? strlen(body) : 0,
			    body ? "application/json" : NULL, &r);
	*status = r.status;
	if (json) {
		*json = r.json;
		r.json = NULL;
	}
	if (ctype && ctsize)
		snprintf(ctype, ctsize, "%s", r.content_type);
	nt_http_result_free(&r);
	return rc;
}

/* Whether RES is an RFC 9457 problem document with STATUS. */
static inline bool nt_is_problem(const nt_http_result *res, long status)
{
	return res->status == status &&
	       strncmp(res->content_type, "application/problem+json", 24) == 0 && res->json &&
	       json_integer_value(json_object_get(res->json, "status")) == status &&
	       json_is_string(json_object_get(res->json, "type")) &&
	       json_is_string(json_object_get(res->json, "title")) &&
	       json_is_string(json_object_get(res->json, "detail"));
}

#endif
