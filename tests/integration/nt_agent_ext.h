/* SPDX-License-Identifier: Apache-2.0 */
/* Extensions of nt_agent.h for the security tests: start the agent with
 * HTTPS and a captured stderr, send requests with an Authorization header
 * and TLS options, and run `nettune serve` expecting it to refuse to start.
 * Include after harness.h; includes nt_agent.h itself. */
#ifndef NT_TEST_AGENT_EXT_H
#define NT_TEST_AGENT_EXT_H

#include "integration/nt_agent.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

/* Run `NT_BIN serve ARGS...` expecting it to exit by itself within
 * TIMEOUT_S; its stderr (up to ERRSIZE-1 bytes) goes to ERR. Returns its
 * exit code, or -1 when it was still running (it is then killed). */
static inline int nt_serve_expect_exit(const char *const *args, int timeout_s, char *err,
				       size_t errsize)
{
	char tmpl[] = "/tmp/nt-serve-err-XXXXXX";
	const char *argv[64];
	int argc = 0, status = 0, rc = -1;
	int fd = mkstemp(tmpl);
	if (fd < 0)
		return -1;
	argv[argc++] = NT_BIN;
	argv[argc++] = "serve";
	for (int i = 0; args[i] && argc < 63; i++)
		argv[argc++] = args[i];
	argv[argc] = NULL;
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		nt_child_dies_with(parent);
		int nul = open("/dev/null", O_WRONLY);
		dup2(nul, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(NT_BIN, (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; pid > 0 && i < timeout_s * 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
			pid = 0;
			break;
		}
		nt_agent_sleep_ms(10);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	ssize_t n = pread(fd, err, errsize - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(tmpl);
	return rc;
}

typedef struct nt_req_opts {
	const char *bearer; /* Authorization: Bearer X, or NULL */
	const char *authz; /* a raw Authorization header value, or NULL */
	const char *cacert; /* TLS: trust this CA file */
	const char *cert, *key; /* TLS client certificate */
	const char *ctype; /* request Content-Type; NULL: application/json when a body */
	long timeout_s; /* 0: 60 */
} nt_req_opts;

/* Like nt_http_do with the options above; also records WWW-Authenticate
 * into RES->allow's neighbour WWW (the caller passes a buffer). */
typedef struct nt_ext_result {
	nt_http_result r;
	char www_authenticate[256];
	CURLcode curl_code;
} nt_ext_result;

static inline size_t nt_ext_header_cb(char *p, size_t sz, size_t n, void *ud)
{
	nt_ext_result *x = ud;
	nt_http_copy_header(p, sz * n, "WWW-Authenticate:", x->www_authenticate, sizeof(x->www_authenticate));
	nt_http_copy_header(p, sz * n, "sl-violations:", x->r.violations, sizeof(x->r.violations));
	nt_http_copy_header(p, sz * n, "Cache-Control:", x->r.cache_control, sizeof(x->r.cache_control));
	return sz * n;
}

static inline void nt_ext_result_free(nt_ext_result *x)
{
	nt_http_result_free(&x->r);
}

static inline int nt_http_ext1(const char *method, const char *url, const char *body,
			       size_t body_len, const nt_req_opts *o, nt_ext_result *x)
{
	struct curl_slist *hdrs = NULL;
	char h[1024];
	CURL *c;

	memset(x, 0, sizeof(*x));
	c = curl_easy_init();
	if (!c)
		return -1;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, o && o->timeout_s ? o->timeout_s : 60L);
	curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, nt_http_body_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &x->r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, nt_ext_header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
		snprintf(h, sizeof(h), "Content-Type: %s",
			 o && o->ctype ? o->ctype : "application/json");
		hdrs = curl_slist_append(hdrs, h);
	}
	if (o && o->bearer) {
		snprintf(h, sizeof(h), "Authorization: Bearer %s", o->bearer);
		hdrs = curl_slist_append(hdrs, h);
	} else if (o && o->authz) {
		snprintf(h, sizeof(h), "Authorization: %s", o->authz);
		hdrs = curl_slist_append(hdrs, h);
	}
	if (hdrs)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	if (o && o->cacert) {
		curl_easy_setopt(c, CURLOPT_CAINFO, o->cacert);
		/* The test certificates name 127.0.0.1. */
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	}
	if (o && o->cert) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, o->cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, o->key);
	}
	x->curl_code = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &x->r.status);
	char *ct = NULL;
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
	if (ct)
		snprintf(x->r.content_type, sizeof(x->r.content_type), "%s", ct);
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	if (x->r.body_len)
		x->r.json = json_loadb(x->r.body, x->r.body_len, 0, NULL);
	return x->r.status ? 0 : -1;
}

/* nt_http_ext1, with contract mode's rules of nt_http_do: a response
 * Prism flags is a failure, and one Prism made itself (no `Cache-Control:
 * no-store`, which every agent response carries) is asked again straight
 * from the agent, since nothing in the document can check it. */
static inline int nt_http_ext(const char *method, const char *url, const char *body,
			      size_t body_len, const nt_req_opts *o, nt_ext_result *x)
{
	int rc = nt_http_ext1(method, url, body, body_len, o, x);
	char direct[2048];
	size_t n = 0;
	const char *base = rc == 0 && nt_via_prism() ? nt_prism_direct(url, &n) : NULL;
	if (!base)
		return rc;
	if (x->r.violations[0]) {
		nt_contract_fail();
		fprintf(stderr, "CONTRACT VIOLATION: %s %s answered %ld: %s\n", method, url, x->r.status,
			x->r.violations);
		return rc;
	}
	if (strcmp(method, "HEAD") == 0 || strcasecmp(x->r.cache_control, "no-store") != 0) {
		snprintf(direct, sizeof(direct), "%s%s", base, url + n);
		nt_ext_result_free(x);
		nt_prism_unchecked++;
		return nt_http_ext1(method, direct, body, body_len, o, x);
	}
	return rc;
}

/* Write TEXT to PATH with MODE. Returns 0 or -1. */
static inline int nt_write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	int r = write(fd, text, n) == (ssize_t)n ? 0 : -1;
	if (fchmod(fd, mode) < 0)
		r = -1;
	close(fd);
	return r;
}

/* A TCP connection to 127.0.0.1:PORT, or -1. */
static inline int nt_tcp_connect(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif
