/* SPDX-License-Identifier: Apache-2.0 */
/* What production and hostile clients do to the agent, over a real socket:
 * slow requests (rate measurements) must not starve health, confirmations
 * and rollbacks, nor a long transaction the keep-alive connections of its
 * worker thread; malformed framing (conflicting Content-Length, unknown
 * Transfer-Encoding) is answered at once; duplicate JSON keys are refused
 * with their path; a huge list of validation errors is capped; an
 * Idempotency-Key is scoped to its route and bound to its body; a FIFO or a
 * symlink in place of a kernel file is refused without hanging; a FIFO as
 * the token file does not hang start-up; a database that cannot be opened
 * makes health say so. Runs on copies of the fixtures. */
#include "harness.h"
#include "integration/nt_agent_ext.h"
#include "integration/test_txn_util.h"

#include <poll.h>

#define VM NT_FIXTURES "/vm-virtio-2cpu"
#define SYSCTL_PROFILE(v) "{\"name\":\"s\",\"sysctl\":{\"net.core.rmem_max\":\"" v "\"}}"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* How much of a reply read_reply waits for. */
enum reply_until {
	UNTIL_CLOSE, /* the server closes */
	UNTIL_HEAD, /* the end of its head */
	UNTIL_BODY, /* its head and Content-Length bytes of body */
};

/* Read a reply on FD into BUF (SIZE bytes) up to UNTIL, for TIMEOUT_S at
 * most from T0. Returns its status; 0 when none came, or with UNTIL_BODY
 * when the whole reply did not. */
static int read_reply(int fd, double t0, double timeout_s, enum reply_until until, char *buf,
		      size_t size)
{
	size_t got = 0;
	bool whole = until != UNTIL_BODY;
	int st = 0;
	buf[0] = '\0';
	while (now_s() - t0 < timeout_s && got < size - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t r = recv(fd, buf + got, size - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
		buf[got] = '\0';
		const char *end = strstr(buf, "\r\n\r\n");
		if (until == UNTIL_HEAD && end)
			break;
		const char *cl = until == UNTIL_BODY ? strcasestr(buf, "\r\nContent-Length:") : NULL;
		if (end && cl && cl < end &&
		    got >= (size_t)(end + 4 - buf) + strtoul(cl + 17, NULL, 10)) {
			whole = true;
			break;
		}
	}
	if (!whole || sscanf(buf, "HTTP/1.1 %d", &st) != 1)
		st = 0;
	return st;
}

/* Send N bytes of BYTES on a fresh connection and read the reply into
 * BUF (SIZE bytes): up to the end of its head when HEAD_ONLY, else until
 * the server closes; for TIMEOUT_S at most (*SECS, when not NULL: how long
 * it took). A write the server cuts short (it answered already) still
 * reads its answer. Returns the reply's status, 0 when none came, -1 when
 * no connection could be made. */
static int raw_exchange(int port, const char *bytes, size_t n, double timeout_s, bool head_only,
			char *buf, size_t size, double *secs)
{
	int fd = nt_tcp_connect(port);
	double t0 = now_s();
	size_t sent = 0;
	buf[0] = '\0';
	if (fd < 0)
		return -1;
	while (sent < n) {
		ssize_t w = write(fd, bytes + sent, n - sent);
		if (w <= 0)
			break;
		sent += (size_t)w;
	}
	int st = read_reply(fd, t0, timeout_s, head_only ? UNTIL_HEAD : UNTIL_CLOSE, buf, size);
	close(fd);
	if (secs)
		*secs = now_s() - t0;
	return st;
}

/* Send BYTES on a fresh connection; the status of the reply, 0 when none
 * came within TIMEOUT_S (*SECS: how long it took). */
static int raw_status(int port, const char *bytes, double timeout_s, double *secs)
{
	char buf[4096];
	return raw_exchange(port, bytes, strlen(bytes), timeout_s, true, buf, sizeof(buf), secs);
}

struct slow_get {
	pthread_t th;
	char url[256];
	long status;
};

static void *slow_main(void *arg)
{
	struct slow_get *g = arg;
	json_t *doc = NULL;
	tu_http("GET", g->url, NULL, NULL, &g->status, &doc);
	json_decref(doc);
	return NULL;
}

/* Twelve 3-second rate measurements at once (three times the worker
 * threads): health, an apply and its confirmation still answer at once,
 * and every measurement still gets its answer. */
static void slow_requests(void)
{
	char dir[PATH_MAX], root[PATH_MAX];
	nt_agent a;
	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0 ||
	    nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	struct slow_get g[12];
	for (int i = 0; i < 12; i++) {
		snprintf(g[i].url, sizeof(g[i].url), "%s/v1/irqs/rates?interval_ms=3000", a.direct);
		g[i].status = 0;
		pthread_create(&g[i].th, NULL, slow_main, &g[i]);
	}
	nt_agent_sleep_ms(300);
	double worst = 0;
	for (int i = 0; i < 5; i++) {
		long st = 0;
		json_t *doc = NULL;
		double t0 = now_s();
		tu_http("GET", nt_url(&a, "/v1/health"), NULL, NULL, &st, &doc);
		double dt = now_s() - t0;
		worst = dt > worst ? dt : worst;
		CHECK_INT(st, 200);
		json_decref(doc);
	}
	CHECK_MSG(worst < 1.0, "health took %.2f s while measurements ran", worst);
	/* An apply waiting for confirmation, confirmed while they still run. */
	double t0 = now_s();
	json_t *doc = tu_post(&a, "/v1/transactions",
			      "{\"profile\":" SYSCTL_PROFILE("5242880") ",\"confirm_timeout_s\":60}",
			      201);
	CHECK_STR(tu_str(doc, "status"), "pending_confirm");
	char path[128];
	snprintf(path, sizeof(path), "/v1/transactions/%lld/confirm",
		 (long long)json_integer_value(json_object_get(doc, "id")));
	json_decref(doc);
	doc = tu_post(&a, path, NULL, 200);
	CHECK_STR(tu_str(doc, "status"), "applied");
	json_decref(doc);
	CHECK_MSG(now_s() - t0 < 2.0, "apply and confirm took %.2f s", now_s() - t0);
	for (int i = 0; i < 12; i++) {
		pthread_join(g[i].th, NULL);
		CHECK_INT(g[i].status, 200);
	}
	/* Out of range stays a 400 naming the limit. */
	long st = 0;
	tu_http("GET", nt_url(&a, "/v1/irqs/rates?interval_ms=10001"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 400);
	CHECK(strstr(tu_str(doc, "detail"), "10000") != NULL);
	json_decref(doc);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* GET PATH on the open keep-alive connection FD and read its whole answer
 * (head, then Content-Length bytes of body) within TIMEOUT_S. Its status,
 * 0 when none came. */
static int keepalive_get(int fd, const char *path, double timeout_s)
{
	char req[256], buf[16384];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
	double t0 = now_s();
	if (write(fd, req, (size_t)n) != n)
		return 0;
	return read_reply(fd, t0, timeout_s, UNTIL_BODY, buf, sizeof(buf));
}

/* Transaction 1's status as the agent reports it, asked on a fresh
 * connection ("" when there is none). */
static void txn1_status(nt_agent *a, char *buf, size_t size)
{
	long st = 0;
	json_t *doc = NULL;
	tu_http("GET", nt_url_direct(a, "/v1/transactions/1"), NULL, NULL, &st, &doc);
	snprintf(buf, size, "%s", st == 200 ? tu_str(doc, "status") : "");
	json_decref(doc);
}

/* A transaction that takes seconds (a driver resetting for a ring change)
 * runs off the worker threads: every keep-alive connection the agent
 * already serves (a fleet controller's pool, the web view) is answered
 * while it runs, whichever worker thread accepted it. Three times as many
 * connections as workers, so some share the apply's worker. */
static void long_apply_keepalive(void)
{
	enum { K = 24 };
	char dir[PATH_MAX], root[PATH_MAX], status[64] = "";
	int fds[K], answered = 0;
	nt_agent a;
	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy the fixture");
		return;
	}
	setenv("NETTUNE_TEST_STEP_DELAY_MS", "4000", 1);
	int r = nt_agent_start(&a, root, NULL, NULL);
	unsetenv("NETTUNE_TEST_STEP_DELAY_MS");
	if (r < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	for (int i = 0; i < K; i++) {
		fds[i] = nt_tcp_connect(a.port);
		CHECK_INT(keepalive_get(fds[i], "/v1/health", 5), 200);
	}
	tu_async t;
	tu_async_start(&t, nt_url_direct(&a, "/v1/transactions"),
		       "{\"profile\":" SYSCTL_PROFILE("5242880") "}");
	for (int i = 0; i < 300 && strcmp(status, "applying"); i++) {
		nt_agent_sleep_ms(10);
		txn1_status(&a, status, sizeof(status));
	}
	CHECK_STR(status, "applying");
	for (int i = 0; i < K; i++)
		answered += keepalive_get(fds[i], "/v1/health", 10) == 200;
	txn1_status(&a, status, sizeof(status));
	CHECK_INT(answered, K);
	CHECK_MSG(!strcmp(status, "applying"),
		  "the apply was %s before every keep-alive connection had its answer", status);
	tu_async_join(&t);
	CHECK_INT(t.status, 201);
	CHECK_STR(tu_str(t.json, "status"), "applied");
	json_decref(t.json);
	for (int i = 0; i < K; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* Send BYTES (asking the server to close after its answer) and read the
 * whole reply into BUF; its status, 0 when none came within TIMEOUT_S. */
static int raw_reply(int port, const char *bytes, size_t n, double timeout_s, char *buf,
		     size_t size)
{
	return raw_exchange(port, bytes, n, timeout_s, false, buf, size, NULL);
}

/* A GET of PATH followed by a query of N parameters NAME (numbered when
 * NUMBERED, "=1" after each when VALUED), joined by '&', then one more
 * parameter with a value of PAD bytes when PAD. */
static char *flood_request(const char *path, int n, const char *name, bool numbered,
			   bool valued, size_t pad, size_t *len)
{
	size_t cap = strlen(path) + (size_t)n * 32 + pad + 256;
	char *b = malloc(cap);
	size_t l = (size_t)snprintf(b, cap, "GET %s?", path);
	for (int i = 0; i < n; i++) {
		if (i)
			b[l++] = '&';
		l += (size_t)snprintf(b + l, cap - l, "%s", name);
		if (numbered)
			l += (size_t)snprintf(b + l, cap - l, "%d", i);
		if (valued)
			l += (size_t)snprintf(b + l, cap - l, "=1");
	}
	if (pad) {
		l += (size_t)snprintf(b + l, cap - l, "%sz=", n ? "&" : "");
		memset(b + l, 'x', pad);
		l += pad;
	}
	l += (size_t)snprintf(b + l, cap - l, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	*len = l;
	return b;
}

/* A query of thousands of parameters is answered 400 at once, naming the
 * limit, instead of exhausting the connection's memory while the server
 * parses it (which left the client without an answer until the timeout).
 * The wait allowed is far below that timeout, so a hang fails the test. */
static void query_flood(void)
{
	nt_agent a;
	if (nt_agent_start(&a, VM, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	static char reply[16384];
	struct {
		int n;
		bool numbered, valued;
	} cases[] = { { 1000, false, false }, { 1000, true, true }, { 5000, false, false },
		      { 5000, true, true }, { 65, true, false } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;
		char *req = flood_request("/v1/irqs", cases[i].n, "a", cases[i].numbered,
					  cases[i].valued, 0, &len);
		int st = raw_reply(a.port, req, len, 5, reply, sizeof(reply));
		CHECK_MSG(st == 400, "%d parameters: status %d", cases[i].n, st);
		CHECK_MSG(strstr(reply, "application/problem+json") != NULL, "%.300s", reply);
		CHECK_MSG(strstr(reply, "at most 64 query parameters") != NULL, "%.600s", reply);
		free(req);
	}
	/* However long (up to libmicrohttpd's 128 KiB of connection memory),
	 * a flood is a problem document naming the limit, not the 414 of a
	 * long request target. */
	for (size_t total = 8000; total <= 64000; total += 8000) {
		size_t len;
		char *req = flood_request("/v1/irqs", (int)(total / 2), "a", false, false, 0, &len);
		int st = raw_reply(a.port, req, len, 5, reply, sizeof(reply));
		CHECK_MSG(st == 400, "a %zu-byte query: status %d", len, st);
		CHECK_MSG(strstr(reply, "at most 64 query parameters") != NULL, "%.600s", reply);
		free(req);
	}
	/* One long value (within the 8 KiB of a request target) is no
	 * flood: the route's own check answers it. */
	{
		size_t len;
		char *req = flood_request("/v1/irqs", 0, "a", false, false, 7000, &len);
		CHECK_INT(raw_reply(a.port, req, len, 5, reply, sizeof(reply)), 400);
		CHECK_MSG(strstr(reply, "unknown query parameter 'z'") != NULL, "%.600s", reply);
		free(req);
	}
	/* Up to the limit, the usual checks apply, and normal queries work. */
	size_t len;
	char *req = flood_request("/v1/irqs", 64, "a", true, false, 0, &len);
	CHECK_INT(raw_reply(a.port, req, len, 5, reply, sizeof(reply)), 400);
	CHECK_MSG(strstr(reply, "unknown query parameter 'a0'") != NULL, "%.600s", reply);
	free(req);
	long st = 0;
	json_t *doc = NULL;
	tu_http("GET", nt_url_direct(&a, "/v1/irqs/rates?interval_ms=10"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	json_decref(doc);
	tu_http("GET", nt_url_direct(&a, "/v1/health"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	json_decref(doc);
	nt_agent_stop(&a);
}

static void framing_and_json(void)
{
	nt_agent a;
	if (nt_agent_start(&a, VM, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	double secs = 0;
	CHECK_INT(raw_status(a.port,
			     "POST /v1/plan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
			     "Content-Length: 2\r\nContent-Length: 30\r\n\r\n{}",
			     5, &secs),
		  400);
	CHECK_INT(raw_status(a.port,
			     "POST /v1/plan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
			     "Transfer-Encoding: gzip\r\n\r\n{}",
			     5, &secs),
		  501);
	CHECK_MSG(secs < 2, "an unsupported Transfer-Encoding took %.1f s", secs);
	CHECK_INT(raw_status(a.port,
			     "POST /v1/plan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
			     "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			     5, &secs),
		  400);
	/* The same length twice is not a conflict. */
	CHECK_INT(raw_status(a.port,
			     "POST /v1/plan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
			     "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
			     5, &secs),
		  422);

	/* Duplicate keys, with their path. */
	long st = 0;
	json_t *doc = NULL;
	tu_http("POST", nt_url_direct(&a, "/v1/plan"), "{\"name\":\"p\",\"name\":\"q\"}", NULL, &st,
		&doc);
	CHECK_INT(st, 400);
	CHECK_MSG(strstr(tu_str(doc, "detail"), "$.name") != NULL, "%s", tu_str(doc, "detail"));
	json_decref(doc);
	tu_http("POST", nt_url_direct(&a, "/v1/plan"),
		"{\"name\":\"p\",\"sysctl\":{\"net.core.rmem_max\":\"1\",\"net.core.rmem_max\":\"2\"}}",
		NULL, &st, &doc);
	CHECK_INT(st, 400);
	CHECK_MSG(strstr(tu_str(doc, "detail"), "$.sysctl['net.core.rmem_max']") != NULL, "%s",
		  tu_str(doc, "detail"));
	json_decref(doc);

	/* 3000 bad sysctl keys: the first 100 errors, and how many there were. */
	size_t cap = 3000 * 48 + 64, len = 0;
	char *body = malloc(cap);
	len += (size_t)snprintf(body + len, cap - len, "{\"name\":\"big\",\"sysctl\":{");
	for (int i = 0; i < 3000; i++)
		len += (size_t)snprintf(body + len, cap - len, "%s\"net.bogus.k%d\":\"1\"",
					i ? "," : "", i);
	snprintf(body + len, cap - len, "}}");
	tu_http("POST", nt_url_direct(&a, "/v1/plan"), body, NULL, &st, &doc);
	CHECK_INT(st, 422);
	CHECK_INT(json_array_size(json_object_get(doc, "errors")), 100);
	CHECK_INT(json_integer_value(json_object_get(doc, "errors_total")), 3000);
	json_decref(doc);

	/* Planning work is bounded before it starts: 5000 entries matching
	 * every NIC are refused at once, naming the limit. */
	cap = 5000 * 40 + 64;
	len = 0;
	body = realloc(body, cap);
	len += (size_t)snprintf(body + len, cap - len, "{\"name\":\"big\",\"irq_affinity\":[");
	for (int i = 0; i < 5000; i++)
		len += (size_t)snprintf(body + len, cap - len, "%s{\"interface\":\"*\",\"cpus\":\"0-1\"}",
					i ? "," : "");
	snprintf(body + len, cap - len, "]}");
	double t0 = now_s();
	tu_http("POST", nt_url_direct(&a, "/v1/plan"), body, NULL, &st, &doc);
	CHECK_INT(st, 422);
	CHECK_MSG(now_s() - t0 < 2, "refusing took %.1f s", now_s() - t0);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	CHECK_MSG(text && strstr(text, "at most 1024"), "%s", text ? text : "");
	free(text);
	json_decref(doc);
	free(body);
	nt_agent_stop(&a);
}

static void idempotency(void)
{
	char dir[PATH_MAX], root[PATH_MAX];
	nt_agent a;
	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0 ||
	    nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	long st = 0;
	json_t *first = NULL, *doc = NULL;
	const char *a_body = "{\"profile\":" SYSCTL_PROFILE("5242880") "}";
	const char *b_body = "{\"profile\":" SYSCTL_PROFILE("8388608") "}";
	tu_http("POST", nt_url(&a, "/v1/transactions"), a_body, "k-1", &st, &first);
	CHECK_INT(st, 201);
	json_int_t id = json_integer_value(json_object_get(first, "id"));
	/* A retry: the first transaction again, nothing applied. */
	tu_http("POST", nt_url(&a, "/v1/transactions"), a_body, "k-1", &st, &doc);
	CHECK_INT(st, 200);
	CHECK_INT(json_integer_value(json_object_get(doc, "id")), id);
	json_decref(doc);
	/* The same key with another body: refused, and nothing written. */
	tu_http("POST", nt_url(&a, "/v1/transactions"), b_body, "k-1", &st, &doc);
	CHECK_INT(st, 422);
	CHECK(strstr(tu_str(doc, "type"), "idempotency-key-reused") != NULL);
	json_decref(doc);
	char buf[64];
	CHECK_STR(tu_read(root, "/proc/sys/net/core/rmem_max", buf, sizeof(buf)), "5242880");
	/* The apply's key on a rollback is a new request: it rolls back. */
	char path[128];
	snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback", (long long)id);
	tu_http("POST", nt_url(&a, path), NULL, "k-1", &st, &doc);
	CHECK_INT(st, 201);
	CHECK_INT(json_integer_value(json_object_get(doc, "rollback_of")), id);
	json_decref(doc);
	CHECK(strcmp(tu_read(root, "/proc/sys/net/core/rmem_max", buf, sizeof(buf)), "5242880") != 0);
	json_decref(first);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* Kernel files that are not files: a FIFO as a sysctl, a symlink leading
 * out of the root. The apply answers at once, names the step and what is
 * wrong, and nothing outside the root is written. */
static void hostile_files(void)
{
	char dir[PATH_MAX], root[PATH_MAX];
	nt_agent a;
	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	tu_sh("rm '%1$s/proc/sys/net/core/rmem_max' && mkfifo '%1$s/proc/sys/net/core/rmem_max'", root);
	tu_sh("echo 212992 > '%1$s/outside' && rm '%2$s/proc/sys/net/core/wmem_max' && "
	      "ln -s '%1$s/outside' '%2$s/proc/sys/net/core/wmem_max'", dir, root);
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	double t0 = now_s();
	long st = 0;
	json_t *doc = NULL;
	tu_http("POST", nt_url(&a, "/v1/transactions"), "{\"profile\":" SYSCTL_PROFILE("5242880") "}",
		NULL, &st, &doc);
	CHECK_MSG(now_s() - t0 < 5, "apply took %.1f s", now_s() - t0);
	CHECK_MSG(st == 201 || st == 422 || st == 500, "status %ld", st);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	CHECK_MSG(text && strstr(text, "not a regular file"), "%s", text ? text : "(none)");
	free(text);
	json_decref(doc);
	tu_http("POST", nt_url(&a, "/v1/transactions"),
		"{\"profile\":{\"name\":\"w\",\"sysctl\":{\"net.core.wmem_max\":\"4194304\"}}}", NULL, &st,
		&doc);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	CHECK_MSG(text && strstr(text, "not a regular file"), "%s", text ? text : "(none)");
	free(text);
	json_decref(doc);
	char buf[64];
	CHECK_STR(tu_read(dir, "/outside", buf, sizeof(buf)), "212992");
	/* Health still answers: nothing hangs. */
	tu_http("GET", nt_url(&a, "/v1/health"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	json_decref(doc);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* Lax values: a sysctl value with a newline and leading zeros is written
 * as the kernel shows it, so the next plan has nothing to do; a cpulist
 * with spaces or leading zeros is refused with its path. */
static void lax_values(void)
{
	char dir[PATH_MAX], root[PATH_MAX], buf[64];
	nt_agent a;
	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0 ||
	    nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	const char *lax = "{\"name\":\"s\",\"sysctl\":{\"net.core.rmem_max\":\" 0005242880\\n\"}}";
	char body[256];
	snprintf(body, sizeof(body), "{\"profile\":%s}", lax);
	json_t *doc = tu_post(&a, "/v1/transactions", body, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	json_decref(doc);
	CHECK_STR(tu_read(root, "/proc/sys/net/core/rmem_max", buf, sizeof(buf)), "5242880");
	doc = tu_post(&a, "/v1/plan", lax, 200);
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 0);
	json_decref(doc);
	doc = tu_post(&a, "/v1/plan",
		      "{\"name\":\"c\",\"irq_affinity\":[{\"interface\":\"*\",\"cpus\":\" 00-1\"}]}",
		      422);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	CHECK_MSG(text && strstr(text, "$.irq_affinity[0].cpus"), "%s", text ? text : "");
	free(text);
	json_decref(doc);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* A connection from ADDR (a loopback address) to PORT, or -1. */
static int connect_from(const char *addr, int port)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	inet_pton(AF_INET, addr, &src.sin_addr);
	dst.sin_port = htons((uint16_t)port);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0 ||
	    connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

#define TRICKLERS 200

struct trickle {
	pthread_t th;
	int port;
	bool stop; /* set by the main thread: __atomic, as volatile orders nothing */
	long connects;
};

/* TRICKLERS connections from 127.0.0.2, each sending one more header line
 * every second and never finishing; each one cut off is opened again. */
static void *trickle_main(void *arg)
{
	struct trickle *t = arg;
	int fds[TRICKLERS];
	for (int i = 0; i < TRICKLERS; i++)
		fds[i] = -1;
	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < TRICKLERS && !__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE); i++) {
			if (fds[i] < 0) {
				fds[i] = connect_from("127.0.0.2", t->port);
				if (fds[i] >= 0) {
					t->connects++;
					if (send(fds[i], "GET /v1/health HTTP/1.1\r\n", 25, MSG_NOSIGNAL) < 0) {
						close(fds[i]);
						fds[i] = -1;
					}
				}
				continue;
			}
			if (send(fds[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				close(fds[i]);
				fds[i] = -1;
			}
		}
		for (int k = 0; k < 10 && !__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE); k++)
			nt_agent_sleep_ms(100);
	}
	for (int i = 0; i < TRICKLERS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return NULL;
}

/* 200 connections trickling headers from one address: a client from
 * another address is still served (the share of its probes answered is
 * measured), and one trickling connection is cut off at the head deadline
 * although it keeps sending. */
static void trickle_attack(void)
{
	nt_agent a;
	const char *extra[] = { "--client-timeout", "3", NULL };
	int probe = connect_from("127.0.0.2", 9);
	if (probe < 0 && errno == EADDRNOTAVAIL) {
		fprintf(stderr, "trickle: 127.0.0.2 is not usable here; part skipped\n");
		return;
	}
	if (probe >= 0)
		close(probe);
	if (nt_agent_start(&a, VM, NULL, extra) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	/* One trickler alone: cut off about 3 s after it connected. */
	int fd = connect_from("127.0.0.2", a.port);
	CHECK(fd >= 0);
	double t0 = now_s(), cut = -1;
	if (fd >= 0 && send(fd, "GET /v1/health HTTP/1.1\r\n", 25, MSG_NOSIGNAL) == 25) {
		while (now_s() - t0 < 15) {
			nt_agent_sleep_ms(500);
			if (send(fd, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) < 0) {
				cut = now_s() - t0;
				break;
			}
			struct pollfd p = { .fd = fd, .events = POLLIN };
			char b[256];
			if (poll(&p, 1, 0) > 0 && recv(fd, b, sizeof(b), MSG_DONTWAIT) <= 0) {
				cut = now_s() - t0;
				break;
			}
		}
	}
	if (fd >= 0)
		close(fd);
	CHECK_MSG(cut > 2 && cut < 6, "a trickling connection was cut after %.1f s", cut);

	struct trickle t = { .port = a.port };
	pthread_create(&t.th, NULL, trickle_main, &t);
	nt_agent_sleep_ms(2000);
	int ok = 0, n = 0;
	double end = now_s() + 8;
	while (now_s() < end) {
		nt_ext_result x;
		nt_req_opts o = { .timeout_s = 2 };
		nt_http_ext("GET", nt_url_direct(&a, "/v1/health"), NULL, 0, &o, &x);
		ok += x.r.status == 200;
		n++;
		nt_ext_result_free(&x);
		nt_agent_sleep_ms(100);
	}
	__atomic_store_n(&t.stop, true, __ATOMIC_RELEASE);
	pthread_join(t.th, NULL);
	printf("trickle: %d of %d probes answered (%.0f%%) during %d trickling connections "
	       "(%ld opened)\n", ok, n, n ? 100.0 * ok / n : 0.0, TRICKLERS, t.connects);
	CHECK_MSG(n > 0 && ok * 100 >= n * 95, "%d of %d probes answered", ok, n);
	nt_agent_stop(&a);
}

/* The state directory fills up in the middle of a transaction: the host is
 * restored, the reply says what happened and that the store could not
 * record it, and the next start (with room again) settles the record. */
static void full_disk(void)
{
	char dir[PATH_MAX], root[PATH_MAX], mnt[PATH_MAX + 8], snap[PATH_MAX + 8];
	if (geteuid() != 0) {
		printf("full_disk: needs root to mount a small tmpfs; part skipped\n");
		return;
	}
	if (tu_copy(NT_FIXTURES "/x460-4node-8nic", dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	snprintf(mnt, sizeof(mnt), "%s/state", dir);
	snprintf(snap, sizeof(snap), "%s/snap", dir);
	tu_sh("cp -a '%s/proc' '%s'", root, snap);
	if (tu_sh("mkdir -p '%1$s' && mount -t tmpfs -o size=2m tmpfs '%1$s'", mnt) != 0) {
		printf("full_disk: cannot mount a tmpfs here; part skipped\n");
		tu_sh("rm -rf '%s'", dir);
		return;
	}
	nt_agent a;
	setenv("NETTUNE_TEST_STEP_DELAY_MS", "300", 1);
	int started = nt_agent_start(&a, root, mnt, NULL);
	unsetenv("NETTUNE_TEST_STEP_DELAY_MS");
	if (started < 0) {
		CHECK_MSG(0, "agent did not start");
		tu_sh("umount '%s'; rm -rf '%s'", mnt, dir);
		return;
	}
	char body[1024];
	snprintf(body, sizeof(body), "{\"profile\":%s}", X460_FIX);
	tu_async ap;
	tu_async_start(&ap, nt_url(&a, "/v1/transactions"), body);
	nt_agent_sleep_ms(1000); /* a few of the 8 steps are applied */
	tu_sh("dd if=/dev/zero of='%s/fill' bs=64k >/dev/null 2>&1; sync", mnt);
	tu_async_join(&ap);
	CHECK_INT(ap.status, 201);
	const char *status = tu_str(ap.json, "status");
	CHECK_MSG(strcmp(status, "rolled_back") == 0 || strcmp(status, "rollback_failed") == 0,
		  "status %s", status);
	CHECK_MSG(strstr(tu_str(ap.json, "error"), "could not record") != NULL, "error %s",
		  tu_str(ap.json, "error"));
	json_int_t id = json_integer_value(json_object_get(ap.json, "id"));
	json_decref(ap.json);
	CHECK_MSG(tu_sh("diff -r '%s' '%s/proc' >&2", snap, root) == 0, "the host was not restored");
	nt_agent_stop(&a);

	/* Room again: the next start settles it. */
	tu_sh("rm -f '%s/fill'", mnt);
	if (nt_agent_start(&a, root, mnt, NULL) < 0) {
		CHECK_MSG(0, "agent did not start again");
	} else {
		char path[64];
		long st = 0;
		json_t *doc = NULL;
		snprintf(path, sizeof(path), "/v1/transactions/%lld", (long long)id);
		tu_http("GET", nt_url(&a, path), NULL, NULL, &st, &doc);
		CHECK_INT(st, 200);
		const char *now = tu_str(doc, "status");
		CHECK_MSG(strcmp(now, "applying") != 0 && strcmp(now, "rolling_back") != 0,
			  "transaction %lld is still %s after a restart", (long long)id, now);
		json_decref(doc);
		CHECK_MSG(tu_sh("diff -r '%s' '%s/proc' >&2", snap, root) == 0,
			  "recovery changed the host");
		nt_agent_stop(&a);
	}
	tu_sh("umount '%s'; rm -rf '%s'", mnt, dir);
}

/* kill -9 at varied moments inside an IRQ transaction on a fixture (each
 * step rewrites four files: the mask, its list, and the effective ones):
 * after every restart and recovery, no file is empty or torn, and the
 * host is as it was. */
static void crash_mid_write(void)
{
	char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8], snap[PATH_MAX + 8], body[1024];
	if (nt_via_prism()) {
		/* 48 agent starts, each behind a proxy of its own: the files
		 * are what this checks, not the replies. */
		printf("crash_mid_write: not run behind the contract proxy\n");
		return;
	}
	if (tu_copy(NT_FIXTURES "/x460-4node-8nic", dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(snap, sizeof(snap), "%s/snap", dir);
	tu_sh("cp -a '%s/proc' '%s'", root, snap);
	snprintf(body, sizeof(body), "{\"profile\":%s}", X460_FIX);
	int runs = 0, empty = 0, differ = 0;
	json_int_t seen = 0; /* the newest transaction before this run */
	for (int k = 0; k < 24; k++) {
		nt_agent a;
		if (nt_agent_start(&a, root, state, NULL) < 0) {
			CHECK_MSG(0, "agent did not start (run %d)", k);
			break;
		}
		tu_async t;
		tu_async_start(&t, nt_url(&a, "/v1/transactions"), body);
		/* From before the first write to past the last, in 1 ms steps. */
		nt_agent_sleep_ms(1 + k);
		kill(a.pid, SIGKILL);
		waitpid(a.pid, NULL, 0);
		a.pid = 0;
		tu_async_join(&t);
		json_decref(t.json);
		/* Recovery runs at start; then this run's transaction (the
		 * newest, when newer than the last run's), if it did finish, is
		 * rolled back, so that every run starts from the snapshot. A
		 * kill before the request was taken leaves no transaction of
		 * this run: the newest is then the last run's rollback. */
		if (nt_agent_start(&a, root, state, NULL) < 0) {
			CHECK_MSG(0, "agent did not restart (run %d)", k);
			break;
		}
		long st = 0;
		json_t *list = NULL;
		tu_http("GET", nt_url(&a, "/v1/transactions?limit=1"), NULL, NULL, &st, &list);
		json_t *last = json_array_get(json_object_get(list, "transactions"), 0);
		json_int_t id = json_integer_value(json_object_get(last, "id"));
		if (id > seen && strcmp(tu_str(last, "status"), "applied") == 0) {
			char path[96];
			json_t *doc = NULL;
			snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback", (long long)id);
			tu_http("POST", nt_url(&a, path), NULL, NULL, &st, &doc);
			CHECK_INT(st, 201);
			id = json_integer_value(json_object_get(doc, "id"));
			json_decref(doc);
		}
		if (id > seen)
			seen = id;
		json_decref(list);
		nt_agent_stop(&a);
		runs++;
		/* NAME.nt-new is what a kill before the rename may leave; the
		 * files themselves are what counts. */
		empty += tu_sh("test -z \"$(find '%s/proc/irq' -type f -empty ! -name '*.nt-new')\"",
			       root) != 0;
		differ += tu_sh("diff -r -x '*.nt-new' '%s' '%s/proc' >&2", snap, root) != 0;
	}
	CHECK_MSG(runs == 24 && empty == 0, "%d of %d crash runs left an empty file", empty, runs);
	CHECK_MSG(differ == 0, "%d of %d crash runs did not end as the host began", differ, runs);
	tu_sh("rm -rf '%s'", dir);
}

static void startup(void)
{
	char dir[] = "/tmp/nt-hostile-XXXXXX", fifo[PATH_MAX], err[4096];
	if (!mkdtemp(dir)) {
		CHECK_MSG(0, "mkdtemp");
		return;
	}
	/* A FIFO as the token file: refused at once, not waited on. */
	snprintf(fifo, sizeof(fifo), "%s/tokens", dir);
	CHECK_INT(mkfifo(fifo, 0600), 0);
	const char *args[] = { "--listen", "127.0.0.1:0", "--root", VM, "--state-dir", dir,
			       "--tokens", fifo, NULL };
	int rc = nt_serve_expect_exit(args, 10, err, sizeof(err));
	CHECK_MSG(rc > 0, "serve with a FIFO token file: rc %d", rc);
	CHECK_MSG(strstr(err, "not a regular file") != NULL, "%s", err);

	/* A database that is not one: health is 503 "degraded" and says that
	 * recovery did not run. */
	char state[PATH_MAX + 8];
	snprintf(state, sizeof(state), "%s/state", dir);
	tu_sh("mkdir -p '%1$s' && yes 'not a database' | head -c 65536 > '%1$s/nettune.db'", state);
	nt_agent a;
	if (nt_agent_start(&a, VM, state, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
	} else {
		long st = 0;
		json_t *doc = NULL;
		tu_http("GET", nt_url(&a, "/v1/health"), NULL, NULL, &st, &doc);
		CHECK_INT(st, 503);
		CHECK_STR(tu_str(doc, "status"), "degraded");
		CHECK_STR(tu_str(doc, "store"), "unavailable");
		char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
		CHECK_MSG(text && strstr(text, "recovery did not run"), "%s", text ? text : "");
		free(text);
		json_decref(doc);
		nt_agent_stop(&a);
	}
	tu_sh("rm -rf '%s'", dir);
}

int main(void)
{
	if (access(VM, F_OK) != 0)
		SKIP("fixture vm-virtio-2cpu is missing");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	query_flood();
	framing_and_json();
	idempotency();
	hostile_files();
	lax_values();
	startup();
	slow_requests();
	long_apply_keepalive();
	trickle_attack();
	crash_mid_write();
	full_disk();
	curl_global_cleanup();
	TEST_MAIN_END();
}
