/* SPDX-License-Identifier: Apache-2.0 */
/* The second hostile round's smaller findings (docs/operations.md lists the rules), over
 * a real socket where the finding was about the wire: a NIC name with bytes
 * from 0x7f up, profile names "." and "..", HTTP leniencies (a method with
 * a NUL, HTTP/1.1 without Host, a query value with %00, a second
 * Idempotency-Key, 413/414/431 as problem documents, the 503 of the
 * connections past one address's share), the tokens
 * file's NUL byte and owner, the store's state in /metrics, the echo of a
 * refused configuration value and a stop behind a storm of reloads. Runs
 * on copies of the fixtures. */
#include "harness.h"
#include "integration/nt_agent_ext.h"
#include "integration/test_txn_util.h"

#include <poll.h>

#define X460 NT_FIXTURES "/x460-4node-8nic"
#define VM NT_FIXTURES "/vm-virtio-2cpu"

/* U+202E (a right-to-left override) before "eth1": valid UTF-8. */
#define BIDI_NAME "\xe2\x80\xae" "eth1"
/* Not UTF-8 at all. */
#define RAW_NAME "eth2\xff"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Send REQ (LEN bytes) on a new connection to PORT and read until the
 * server closes or TIMEOUT_S passes, into BUF. Returns the status of the
 * first reply, 0 when none came. With CLOSED, also waits (up to TIMEOUT_S)
 * after the reply for the server to close the connection and says whether
 * it did, with an orderly end of stream (not a reset). */
static int raw_request_ex(int port, const char *req, size_t len, char *buf, size_t size,
			  double timeout_s, bool *closed)
{
	int fd = nt_tcp_connect(port);
	size_t got = 0;
	buf[0] = '\0';
	if (closed)
		*closed = false;
	if (fd < 0)
		return 0;
	if (len && write(fd, req, len) != (ssize_t)len) {
		close(fd);
		return 0;
	}
	double t0 = now_s();
	bool replied = false;
	while (now_s() - t0 < timeout_s) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 100) <= 0)
			continue;
		char sink[4096];
		bool full = got + 1 >= size;
		ssize_t n = full ? read(fd, sink, sizeof(sink)) : read(fd, buf + got, size - 1 - got);
		if (n == 0 && closed)
			*closed = true;
		if (n <= 0)
			break;
		if (full)
			continue;
		got += (size_t)n;
		buf[got] = '\0';
		/* One reply is enough once its body (Content-Length) is in. */
		char *end = strstr(buf, "\r\n\r\n");
		const char *cl = strcasestr(buf, "\r\nContent-Length:");
		if (!replied && end && cl && cl < end &&
		    got >= (size_t)(end + 4 - buf) + strtoul(cl + 17, NULL, 10)) {
			replied = true;
			if (!closed)
				break;
		}
	}
	close(fd);
	int status = 0;
	sscanf(buf, "HTTP/1.%*d %d", &status);
	return status;
}

static int raw_request(int port, const char *req, size_t len, char *buf, size_t size, double timeout_s)
{
	return raw_request_ex(port, req, len, buf, size, timeout_s, NULL);
}

#define RAW(port, lit, buf) raw_request(port, lit, sizeof(lit) - 1, buf, sizeof(buf), 5)

/* ---- 9: a NIC name with bytes from 0x7f up ---- */

static void nic_names(void)
{
	char dir[PATH_MAX], root[PATH_MAX];
	nt_agent a;
	if (tu_copy(X460, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy %s", X460);
		return;
	}
	/* The links renamed, as `ip link set eth1 name ...` would; their
	 * devices keep their IRQs. */
	CHECK(tu_sh("cd '%s/sys/class/net' && mv eth1 '" BIDI_NAME "' && mv eth2 '" RAW_NAME "' && "
		    "cd '%s/ethtool' && { [ ! -e eth1.json ] || mv eth1.json '" BIDI_NAME ".json'; } && "
		    "{ [ ! -e eth2.json ] || mv eth2.json '" RAW_NAME ".json'; }",
		    root, root) == 0);
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		tu_sh("rm -rf '%s'", dir);
		return;
	}
	long st = 0;
	json_t *nics = NULL, *irqs = NULL, *diag = NULL;
	tu_http("GET", nt_url(&a, "/v1/nics"), NULL, NULL, &st, &nics);
	CHECK_INT(st, 200);
	bool found = false;
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(nics, "nics"), i, n)
		if (!strcmp(tu_str(n, "name"), BIDI_NAME))
			found = true;
	CHECK_MSG(found, "no NIC named U+202E eth1 in /v1/nics");
	/* The one that is not UTF-8 is said, escaped, among the host's
	 * problems. */
	json_t *topo = NULL;
	tu_http("GET", nt_url(&a, "/v1/topology"), NULL, NULL, &st, &topo);
	CHECK_INT(st, 200);
	bool said = false;
	json_array_foreach(json_object_get(topo, "problems"), i, n)
		if (!strcmp(tu_str(n, "path"), "/sys/class/net/eth2\\xff") && strstr(tu_str(n, "error"), "not UTF-8"))
			said = true;
	CHECK_MSG(said, "eth2\\xff is not in the problems of /v1/topology");
	json_decref(topo);

	/* Its IRQs have their owner. */
	tu_http("GET", nt_url(&a, "/v1/irqs"), NULL, NULL, &st, &irqs);
	CHECK_INT(st, 200);
	int owned = 0;
	json_array_foreach(json_object_get(irqs, "irqs"), i, n)
		owned += !strcmp(tu_str(n, "owner"), BIDI_NAME);
	CHECK_MSG(owned > 0, "no IRQ owned by U+202E eth1");

	/* In the metrics (a label, as UTF-8) and the diagnostics. */
	nt_http_result m = { 0 };
	nt_http_do1("GET", nt_url(&a, "/metrics"), NULL, 0, NULL, &m);
	CHECK_INT(m.status, 200);
	CHECK_MSG(m.body && strstr(m.body, "nic=\"" BIDI_NAME "\""), "no metrics of U+202E eth1");
	nt_http_result_free(&m);
	tu_http("GET", nt_url(&a, "/v1/diagnostics"), NULL, NULL, &st, &diag);
	CHECK_INT(st, 200);
	char *text = diag ? json_dumps(diag, 0) : NULL;
	CHECK_MSG(text && strstr(text, BIDI_NAME), "the diagnostics do not name U+202E eth1");
	free(text);
	json_decref(nics);
	json_decref(irqs);
	json_decref(diag);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* ---- 10: profile names "." and ".." ---- */

static void dot_profiles(nt_agent *a)
{
	char buf[8192];
	static const char *const names[] = { ".", "..", "%2e", "%2E%2e" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char req[512];
		const char *body = "{\"sysctl\":{\"net.core.rmem_max\":\"4194304\"}}";
		int n = snprintf(req, sizeof(req),
				 "PUT /v1/profiles/%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
				 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
				 names[i], strlen(body), body);
		int st = raw_request(a->port, req, (size_t)n, buf, sizeof(buf), 5);
		CHECK_MSG(st == 400, "PUT /v1/profiles/%s: %d", names[i], st);
		CHECK_MSG(strstr(buf, "not . or ..") != NULL, "PUT /v1/profiles/%s: %s", names[i], buf);
	}
	/* None was stored. */
	long st = 0;
	json_t *list = NULL;
	tu_http("GET", nt_url(a, "/v1/profiles"), NULL, NULL, &st, &list);
	CHECK_INT(st, 200);
	char *text = list ? json_dumps(list, 0) : NULL;
	CHECK_MSG(text && !strstr(text, "\"name\": \".\"") && !strstr(text, "\"name\": \"..\""), "%s", text);
	free(text);
	json_decref(list);
}

/* ---- 11: HTTP leniencies ---- */

/* The reply in BUF is a problem document of STATUS whose detail says
 * WANT. */
static void check_problem(const char *what, int st, int want_status, const char *buf, const char *want)
{
	CHECK_MSG(st == want_status, "%s: status %d, expected %d: %.300s", what, st, want_status, buf);
	CHECK_MSG(strcasestr(buf, "Content-Type: application/problem+json") != NULL, "%s: not problem+json: %.300s",
		  what, buf);
	CHECK_MSG(strstr(buf, want) != NULL, "%s: no '%s' in %.400s", what, want, buf);
}

static void oversized(nt_agent *a);

static void http_leniencies(nt_agent *a)
{
	char buf[16384];
	int st = RAW(a->port, "GET\0 /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf);
	check_problem("GET\\0", st, 400, buf, "method is malformed");
	st = RAW(a->port, "GET\0X /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf);
	check_problem("GET\\0X", st, 400, buf, "method is malformed");
	st = RAW(a->port, "GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n", buf);
	check_problem("HTTP/1.1 without Host", st, 400, buf, "needs a Host header");
	/* HTTP/1.0 has no Host to require; the ordinary request is served. */
	st = RAW(a->port, "GET /v1/health HTTP/1.0\r\n\r\n", buf);
	CHECK_INT(st, 200);
	st = RAW(a->port, "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf);
	CHECK_INT(st, 200);
	st = RAW(a->port, "GET /v1/irqs/rates?interval_ms=10%00 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf);
	check_problem("interval_ms=10%00", st, 400, buf, "query parameter 'interval_ms' holds a NUL byte");
	st = RAW(a->port, "GET /v1/transactions?limit%00x=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf);
	CHECK_MSG(st == 400, "a NUL in a query name: %d", st);
	char req[1024];
	const char *body = "{\"profile\":{\"name\":\"s\",\"sysctl\":{\"net.core.rmem_max\":\"4194304\"}}}";
	int n = snprintf(req, sizeof(req),
			 "POST /v1/transactions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
			 "Idempotency-Key: one\r\nidempotency-key: two\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
			 strlen(body), body);
	st = raw_request(a->port, req, (size_t)n, buf, sizeof(buf), 10);
	check_problem("two Idempotency-Key headers", st, 400, buf, "Idempotency-Key header is given more than once");
	/* ... and nothing was applied. */
	long hst = 0;
	json_t *list = NULL;
	tu_http("GET", nt_url(a, "/v1/transactions"), NULL, NULL, &hst, &list);
	CHECK_INT(json_integer_value(json_object_get(list, "total")), 0);
	json_decref(list);

	oversized(a);
}

/* A request of TARGET bytes of query and HEADER bytes in one header field
 * to PORT: its status, with BUF holding the reply and CLOSED whether the
 * server closed the connection after it. */
static int big_request(int port, size_t target, size_t header, char *buf, size_t size, bool *closed)
{
	char *req = malloc(target + header + 512);
	if (!req)
		return 0;
	int n = sprintf(req, "GET /v1/health?");
	memset(req + n, 'a', target);
	n += (int)target;
	n += sprintf(req + n, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: ");
	memset(req + n, 'a', header);
	n += (int)header;
	n += sprintf(req + n, "\r\n\r\n");
	int st = raw_request_ex(port, req, (size_t)n, buf, size, 10, closed);
	free(req);
	return st;
}

/* 413, 414 and 431 are the agent's problem documents up to about 128 KiB
 * of request head (docs/operations.md, "Limits"); the connection is closed
 * after each. */
static void oversized(nt_agent *a)
{
	char buf[16384];
	bool closed;
	int st = big_request(a->port, 10 * 1000, 0, buf, sizeof(buf), &closed);
	check_problem("a 10 KB request target", st, 414, buf, "longer than 8192 bytes");
	CHECK_MSG(closed, "a 10 KB request target: the connection stayed open");
	st = big_request(a->port, 100 * 1000, 0, buf, sizeof(buf), &closed);
	check_problem("a 100 KB request target", st, 414, buf, "longer than 8192 bytes");
	CHECK_MSG(closed, "a 100 KB request target: the connection stayed open");
	st = big_request(a->port, 0, 10 * 1000, buf, sizeof(buf), &closed);
	CHECK_MSG(st == 200, "a 10 KB header: %d", st);
	st = big_request(a->port, 0, 100 * 1000, buf, sizeof(buf), &closed);
	check_problem("a 100 KB header", st, 431, buf, "larger than 32768 bytes");
	CHECK_MSG(closed, "a 100 KB header: the connection stayed open");
	/* Beyond libmicrohttpd's memory limit it answers itself, with the
	 * same statuses (and its HTML). */
	st = big_request(a->port, 200 * 1000, 0, buf, sizeof(buf), &closed);
	CHECK_MSG(st == 414, "a 200 KB request target: %d", st);
	st = big_request(a->port, 0, 200 * 1000, buf, sizeof(buf), &closed);
	CHECK_MSG(st == 431, "a 200 KB header: %d", st);
	/* A body over --max-body, refused from its Content-Length. */
	static const char post[] = "POST /v1/plan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
				   "Content-Length: 2000000\r\n\r\n{}";
	st = raw_request_ex(a->port, post, sizeof(post) - 1, buf, sizeof(buf), 10, &closed);
	check_problem("a 2 MB body", st, 413, buf, "limited to 1048576 bytes");
	CHECK_MSG(closed, "a 2 MB body: the connection stayed open");
}

/* Connections past --max-per-client from one address: each is answered
 * 503 with Retry-After and closed, whether it sends its request at once,
 * late or never; once the address is back within its share, it is served. */
static void per_address(void)
{
	nt_agent a;
	const char *extra[] = { "--max-per-client", "2", NULL };
	if (nt_agent_start(&a, VM, NULL, extra) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	int hold[2];
	for (int i = 0; i < 2; i++)
		hold[i] = nt_tcp_connect(a.port);
	CHECK(hold[0] >= 0 && hold[1] >= 0);
	nt_agent_sleep_ms(500); /* accepted and counted */
	char buf[8192];
	bool closed;
	static const char get[] = "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n";
	for (int i = 0; i < 3; i++) {
		double t0 = now_s();
		int st = raw_request_ex(a.port, get, sizeof(get) - 1, buf, sizeof(buf), 5, &closed);
		double took = now_s() - t0;
		check_problem("a third connection", st, 503, buf, "too many connections are open from this address");
		CHECK_MSG(strcasestr(buf, "\r\nRetry-After: 1\r\n") != NULL, "no Retry-After: %.300s", buf);
		CHECK_MSG(closed && took < 2, "the excess connection was %s after %.2f s",
			  closed ? "closed" : "not closed", took);
	}
	/* One that sends nothing gets the answer and the close as well. */
	double t0 = now_s();
	int st = raw_request_ex(a.port, "", 0, buf, sizeof(buf), 5, &closed);
	check_problem("a silent third connection", st, 503, buf, "too many connections");
	CHECK_MSG(closed && now_s() - t0 < 2, "the silent excess connection was %s after %.2f s",
		  closed ? "closed" : "not closed", now_s() - t0);
	/* The held ones are served, and the excess cost them nothing. */
	for (int i = 0; i < 2; i++) {
		CHECK(hold[i] >= 0 && write(hold[i], get, sizeof(get) - 1) == (ssize_t)(sizeof(get) - 1));
		struct pollfd p = { .fd = hold[i], .events = POLLIN };
		char b[256] = "";
		CHECK(poll(&p, 1, 5000) == 1 && read(hold[i], b, sizeof(b) - 1) > 0);
		CHECK_MSG(!strncmp(b, "HTTP/1.1 200", 12), "held connection %d: %.60s", i, b);
		close(hold[i]);
	}
	nt_agent_sleep_ms(300);
	st = RAW(a.port, "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf);
	CHECK_MSG(st == 200, "after the held connections closed: %d %.200s", st, buf);
	nt_agent_stop(&a);
}

/* ---- 15: a stop behind a storm of reloads ---- */

static void reload_storm(void)
{
	char dir[PATH_MAX], root[PATH_MAX], pdir[PATH_MAX + 16], log[PATH_MAX + 16];
	nt_agent a;
	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy %s", VM);
		return;
	}
	snprintf(pdir, sizeof(pdir), "%s/profiles", dir);
	snprintf(log, sizeof(log), "%s/agent.err", dir);
	mkdir(pdir, 0755);
	for (int i = 0; i < 3000; i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof(path), "%s/p%d.json", pdir, i);
		FILE *f = fopen(path, "w");
		if (f) {
			fprintf(f, "{\"name\":\"p%d\",\"sysctl\":{\"net.core.rmem_max\":\"%d\"}}\n", i, 4194304 + i);
			fclose(f);
		}
	}
	const char *extra[] = { "--profiles-dir", pdir, NULL };
	nt_agent_opts o = { .extra = extra, .stderr_path = log };
	if (nt_agent_start_ext(&a, root, &o) < 0) {
		CHECK_MSG(0, "agent did not start");
		tu_sh("rm -rf '%s'", dir);
		return;
	}
	/* 100 SIGHUPs 10 ms apart, each one while a reload of 3,000 files
	 * may be running, then SIGTERM right after the last. */
	for (int i = 0; i < 100; i++) {
		kill(a.pid, SIGHUP);
		nt_agent_sleep_ms(10);
	}
	double t0 = now_s();
	kill(a.pid, SIGTERM);
	int status = 0;
	bool gone = false;
	while (now_s() - t0 < 30)
		if (waitpid(a.pid, &status, WNOHANG) == a.pid) {
			gone = true;
			break;
		} else {
			nt_agent_sleep_ms(5);
		}
	double took = now_s() - t0;
	printf("SIGTERM after 100 SIGHUPs over 3000 profile files: exited in %.2f s\n", took);
	CHECK_MSG(gone && took < 3.0, "the agent took %.1f s to stop%s", took, gone ? "" : " (still running)");
	CHECK_MSG(gone && WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d", status);
	if (gone)
		a.pid = 0;
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

int main(void)
{
	if (access(X460, F_OK) != 0 || access(VM, F_OK) != 0)
		SKIP("fixtures x460-4node-8nic and vm-virtio-2cpu are needed");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	nic_names();
	reload_storm();
	per_address();
	nt_agent a;
	char dir[PATH_MAX], root[PATH_MAX];
	int copied = tu_copy(VM, dir, sizeof(dir), root, sizeof(root));
	/* 13: what a kill -9 during a fixture write leaves is gone once the
	 * agent has started. */
	char tmp[PATH_MAX + 64];
	snprintf(tmp, sizeof(tmp), "%s/ethtool/.eth0.json.k9Xq2Z", root);
	CHECK(copied == 0 && tu_sh("mkdir -p '%s/ethtool' && echo '{\"rin' > '%s'", root, tmp) == 0);
	if (copied == 0 && nt_agent_start(&a, root, NULL, NULL) == 0) {
		CHECK_MSG(access(tmp, F_OK) != 0, "%s is still there after the start", tmp);
		dot_profiles(&a);
		http_leniencies(&a);
		nt_agent_stop(&a);
	} else {
		CHECK_MSG(0, "no agent on a copy of %s", VM);
	}
	tu_sh("rm -rf '%s'", dir);
	curl_global_cleanup();
	TEST_MAIN_END();
}
