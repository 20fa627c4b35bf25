/* SPDX-License-Identifier: Apache-2.0 */
/* Limits and bad input over a real socket: configurable body size (413
 * answered before the body is read), JSON too deep or too large refused
 * before parsing, malformed JSON and wrong content types, slow clients
 * timed out, the connection cap, and hostile names in paths. Runs on a
 * copy of the VM fixture. */
#include "harness.h"
#include "integration/nt_agent_ext.h"

#include <poll.h>

#define ROOT NT_FIXTURES "/vm-virtio-2cpu"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static nt_ext_result post(nt_agent *a, const char *path, const char *body, size_t len,
			  const char *ctype)
{
	nt_ext_result x;
	nt_req_opts o = { .ctype = ctype };
	nt_http_ext("POST", nt_url(a, path), body, len, &o, &x);
	return x;
}

/* As post, but straight to the agent even in contract mode: a proxy in
 * front re-serializes JSON bodies, and these tests are about the exact
 * bytes (size, nesting, value count) the agent receives. */
static nt_ext_result post_raw(nt_agent *a, const char *path, const char *body, size_t len)
{
	nt_ext_result x;
	nt_http_ext1("POST", nt_url_direct(a, path), body, len, NULL, &x);
	return x;
}

static const char *detail(const nt_ext_result *x)
{
	const char *d = json_string_value(json_object_get(x->r.json, "detail"));
	return d ? d : "";
}

/* Read from FD until the peer closes or TIMEOUT_S passes. Returns the
 * bytes read before the close (>= 0), or -1 when still open. */
static long wait_close(int fd, double timeout_s, char *buf, size_t size)
{
	double end = now_s() + timeout_s;
	size_t got = 0;
	while (now_s() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 100) <= 0)
			continue;
		char tmp[4096];
		ssize_t n = recv(fd, tmp, sizeof(tmp), 0);
		if (n <= 0)
			return (long)got;
		if (buf && got + (size_t)n < size) {
			memcpy(buf + got, tmp, (size_t)n);
			buf[got + (size_t)n] = '\0';
		}
		got += (size_t)n;
	}
	return -1;
}

static void body_limits(void)
{
	nt_agent a;
	const char *extra[] = { "--max-body", "2048", NULL };
	nt_agent_opts ao = { .extra = extra };
	if (nt_agent_start_ext(&a, ROOT, &ao) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	char big[4096];
	memset(big, ' ', sizeof(big));
	big[0] = '{';
	big[sizeof(big) - 2] = '}';
	big[sizeof(big) - 1] = '\0';
	nt_ext_result x = post_raw(&a, "/v1/plan", big, strlen(big));
	CHECK_MSG(nt_is_problem(&x.r, 413), "4 KiB with --max-body 2048: %ld", x.r.status);
	CHECK_MSG(strstr(detail(&x), "2048") != NULL, "detail: %s", detail(&x));
	nt_ext_result_free(&x);

	/* Under the limit the body is read and judged on its content. */
	x = post(&a, "/v1/plan", "{\"sysctl\": ", 11, NULL);
	CHECK_MSG(nt_is_problem(&x.r, 400), "malformed JSON: %ld", x.r.status);
	nt_ext_result_free(&x);
	x = post(&a, "/v1/plan", "{}", 2, "text/plain");
	CHECK_MSG(nt_is_problem(&x.r, 415), "text/plain: %ld", x.r.status);
	nt_ext_result_free(&x);
	x = post(&a, "/v1/plan", "{}", 2, "application/jsonx");
	CHECK_MSG(nt_is_problem(&x.r, 415), "application/jsonx: %ld", x.r.status);
	nt_ext_result_free(&x);
	x = post(&a, "/v1/plan", "{}", 2, "application/json; charset=utf-8");
	CHECK_MSG(x.r.status != 415 && x.r.status != 413, "application/json; charset: %ld",
		  x.r.status);
	nt_ext_result_free(&x);

	/* A huge Content-Length is answered at once, before any body. */
	int fd = nt_tcp_connect(a.port);
	CHECK(fd >= 0);
	if (fd >= 0) {
		const char req[] = "POST /v1/plan HTTP/1.1\r\nHost: x\r\n"
				   "Content-Type: application/json\r\n"
				   "Content-Length: 10737418240\r\n\r\n{";
		CHECK(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof(req) - 1));
		char buf[2048] = "";
		double t0 = now_s();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n = poll(&p, 1, 5000) > 0 ? recv(fd, buf, sizeof(buf) - 1, 0) : -1;
		if (n > 0)
			buf[n] = '\0';
		CHECK_MSG(n > 0 && strncmp(buf, "HTTP/1.1 413", 12) == 0, "raw 10 GiB: '%.40s'", buf);
		CHECK_MSG(now_s() - t0 < 3, "413 took %.1f s", now_s() - t0);
		close(fd);
	}
	nt_agent_stop(&a);
}

static void json_limits(void)
{
	nt_agent a;
	nt_agent_opts ao = { 0 };
	if (nt_agent_start_ext(&a, ROOT, &ao) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	char deep[256];
	int k = 0;
	for (int i = 0; i < 33; i++)
		deep[k++] = '[';
	for (int i = 0; i < 33; i++)
		deep[k++] = ']';
	deep[k] = '\0';
	nt_ext_result x = post_raw(&a, "/v1/plan", deep, strlen(deep));
	CHECK_MSG(nt_is_problem(&x.r, 400) && strstr(detail(&x), "deeper than 32"),
		  "33 levels: %ld %s", x.r.status, detail(&x));
	nt_ext_result_free(&x);
	/* Nesting inside strings is not nesting. */
	char str[256];
	snprintf(str, sizeof(str), "{\"name\":\"%s\"}", deep);
	x = post_raw(&a, "/v1/plan", str, strlen(str));
	CHECK_MSG(!strstr(detail(&x), "deeper"), "brackets in a string: %s", detail(&x));
	nt_ext_result_free(&x);
	/* 32 levels of objects pass the pre-scan (and fail as a profile). */
	k = 0;
	for (int i = 0; i < 32; i++)
		k += snprintf(deep + k, sizeof(deep) - (size_t)k, "{\"a\":");
	k += snprintf(deep + k, sizeof(deep) - (size_t)k, "1");
	for (int i = 0; i < 32; i++)
		deep[k++] = '}';
	deep[k] = '\0';
	x = post_raw(&a, "/v1/plan", deep, strlen(deep));
	CHECK_MSG(x.r.status >= 400 && x.r.status < 500 && !strstr(detail(&x), "deeper"),
		  "32 levels: %ld %s", x.r.status, detail(&x));
	nt_ext_result_free(&x);

	/* 100001 values in 200 KB (well under the body limit). */
	size_t n = 100001, len = 0;
	char *many = malloc(n * 2 + 16);
	many[len++] = '[';
	for (size_t i = 0; i < n - 2; i++) {
		many[len++] = '0';
		many[len++] = ',';
	}
	many[len - 1] = ']'; /* 99999 zeros + the array = 100000 values */
	many[len] = '\0';
	x = post_raw(&a, "/v1/plan", many, len);
	CHECK_MSG(!strstr(detail(&x), "values"), "100000 values: %ld %s", x.r.status, detail(&x));
	nt_ext_result_free(&x);
	many[len - 1] = ',';
	many[len++] = '0';
	many[len++] = ']';
	many[len] = '\0';
	x = post_raw(&a, "/v1/plan", many, len);
	CHECK_MSG(nt_is_problem(&x.r, 400) && strstr(detail(&x), "more than 100000 values"),
		  "100001 values: %ld %s", x.r.status, detail(&x));
	nt_ext_result_free(&x);
	free(many);

	/* Hostile names never reach a path: refused as invalid or unknown. */
	static const char *const hostile[] = {
		"/v1/nics/..%2F..%2Fetc", "/v1/nics/eth0%2F..%2Fx", "/v1/nics/%2E%2E",
		"/v1/nics/eth0%01", "/v1/nics/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"/v1/nics/eth0%00x", "/v1/nics/..%2Feth0/placement", "/v1/profiles/..%2F..%2Fetc",
		"/v1/profiles/a%2Fb", "/v1/transactions/..%2F1",
	};
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		nt_ext_result y;
		nt_http_ext("GET", nt_url(&a, hostile[i]), NULL, 0, NULL, &y);
		CHECK_MSG(y.r.status == 400 || y.r.status == 404, "%s: %ld", hostile[i], y.r.status);
		nt_ext_result_free(&y);
	}
	const char *badput = "{\"sysctl\":{\"net.ipv4/../../../etc/x\":\"1\"}}";
	x = post(&a, "/v1/plan", badput, strlen(badput), NULL);
	CHECK_MSG(x.r.status == 422, "sysctl key with ../: %ld", x.r.status);
	nt_ext_result_free(&x);
	nt_agent_stop(&a);
}

static void slow_clients(void)
{
	nt_agent a;
	const char *extra[] = { "--client-timeout", "1", NULL };
	nt_agent_opts ao = { .extra = extra };
	if (nt_agent_start_ext(&a, ROOT, &ao) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	/* Half a request line, then nothing: closed after about a second. */
	int fd = nt_tcp_connect(a.port);
	CHECK(fd >= 0);
	if (fd >= 0) {
		double t0 = now_s();
		CHECK(send(fd, "GET /v1/hea", 11, MSG_NOSIGNAL) == 11);
		long got = wait_close(fd, 10, NULL, 0);
		double took = now_s() - t0;
		CHECK_MSG(got >= 0, "slow client not disconnected within 10 s");
		CHECK_MSG(took >= 0.5 && took < 5, "slow client closed after %.2f s", took);
		close(fd);
	}
	/* A prompt client on the same agent is served. */
	nt_ext_result x;
	nt_http_ext("GET", nt_url(&a, "/v1/health"), NULL, 0, NULL, &x);
	CHECK_INT(x.r.status, 200);
	nt_ext_result_free(&x);
	nt_agent_stop(&a);
}

static void connection_cap(void)
{
	nt_agent a;
	/* The per-address cap as high: this is about the global one (the
	 * per-address 503 is test_hostile_edges.c's). */
	const char *extra[] = { "--max-connections", "4", "--max-per-client", "4", NULL };
	nt_agent_opts ao = { .extra = extra };
	int fds[4];
	if (nt_agent_start_ext(&a, ROOT, &ao) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	/* Each held by a request being served (a 4 s rate measurement): a
	 * connection with no request yet would be cut for the reserve of
	 * slots kept for prompt clients (api/server_limits.c). */
	static const char wait[] = "GET /v1/irqs/rates?interval_ms=4000 HTTP/1.1\r\nHost: x\r\n\r\n";
	for (int i = 0; i < 4; i++) {
		fds[i] = nt_tcp_connect(a.port);
		CHECK(fds[i] >= 0 && write(fds[i], wait, sizeof(wait) - 1) == (ssize_t)(sizeof(wait) - 1));
	}
	nt_agent_sleep_ms(300);
	/* A fifth client gets no answer while four are held open. */
	nt_ext_result x;
	nt_req_opts o = { .timeout_s = 2 };
	nt_http_ext("GET", nt_url(&a, "/v1/health"), NULL, 0, &o, &x);
	CHECK_MSG(x.r.status == 0, "fifth connection answered %ld", x.r.status);
	nt_ext_result_free(&x);
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* Once they close, it is served again. */
	long st = 0;
	for (int i = 0; i < 50 && st != 200; i++) {
		o.timeout_s = 5;
		nt_http_ext("GET", nt_url(&a, "/v1/health"), NULL, 0, &o, &x);
		st = x.r.status;
		nt_ext_result_free(&x);
		if (st != 200)
			nt_agent_sleep_ms(100);
	}
	CHECK_INT(st, 200);
	nt_agent_stop(&a);

	/* Values out of range are refused at start. */
	char err[1024];
	const char *bad[] = { "--max-connections", "0", "--root", ROOT, NULL };
	CHECK_INT(nt_serve_expect_exit(bad, 10, err, sizeof(err)), 2);
	const char *bad2[] = { "--max-body", "10", "--root", ROOT, NULL };
	CHECK_INT(nt_serve_expect_exit(bad2, 10, err, sizeof(err)), 2);
	const char *bad3[] = { "--client-timeout", "x", "--root", ROOT, NULL };
	CHECK_INT(nt_serve_expect_exit(bad3, 10, err, sizeof(err)), 2);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	body_limits();
	json_limits();
	slow_clients();
	connection_cap();
	TEST_MAIN_END();
}
