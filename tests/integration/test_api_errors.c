/* SPDX-License-Identifier: Apache-2.0 */
/* The API's refusals over a real socket: every bad request gets the right
 * status as an RFC 9457 problem document, nothing a client sends takes the
 * agent down, and it keeps answering many clients at once. Runs on the
 * captured VM tree (one virtio NIC, eth0). */
#include "harness.h"
#include "integration/nt_agent.h"
#include "api/http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#define ROOT NT_FIXTURES "/vm-virtio-2cpu"

static nt_agent A;

/* Send METHOD PATH and check the answer is a STATUS problem document whose
 * instance is the path; returns the result for further checks (caller
 * frees). */
static void expect_problem(const char *method, const char *path, long status,
			   nt_http_result *out)
{
	nt_http_result r;
	int rc = nt_http_do(method, nt_url(&A, path), NULL, 0, NULL, &r);
	CHECK_MSG(rc == 0, "%s %s: no response", method, path);
	CHECK_MSG(nt_is_problem(&r, status), "%s %s: status %ld type '%s' body %.200s", method,
		  path, r.status, r.content_type, r.body ? r.body : "");
	CHECK_MSG(r.json && json_is_string(json_object_get(r.json, "instance")),
		  "%s %s: problem without instance", method, path);
	if (out)
		*out = r;
	else
		nt_http_result_free(&r);
}

static const char *detail(const nt_http_result *r)
{
	const char *d = json_string_value(json_object_get(r->json, "detail"));
	return d ? d : "";
}

static void health_ok(const char *after)
{
	long st = 0;
	json_t *doc = NULL;
	nt_http("GET", nt_url(&A, "/v1/health"), NULL, &st, &doc, NULL, 0);
	CHECK_MSG(st == 200 && doc, "agent not healthy after %s (status %ld)", after, st);
	json_decref(doc);
}

/* Write BYTES on a fresh connection, half-close, and read what comes back
 * (up to 2 s of silence) into REPLY. Returns the reply length or -1. */
static ssize_t raw_exchange(const void *bytes, size_t len, char *reply, size_t size)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)A.port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t got = 0;

	reply[0] = '\0';
	if (fd < 0)
		return -1;
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	if (len)
		(void)!send(fd, bytes, len, MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 2000) <= 0)
			break;
		ssize_t n = recv(fd, reply + got, size - 1 - (size_t)got, 0);
		if (n <= 0)
			break;
		got += n;
		if ((size_t)got >= size - 1)
			break;
	}
	reply[got] = '\0';
	close(fd);
	return got;
}

static void test_not_found(void)
{
	nt_http_result r;

	expect_problem("GET", "/v1/nics/nosuch0", 404, &r);
	CHECK_MSG(strstr(detail(&r), "nosuch0") != NULL, "404 detail does not name the NIC: %s",
		  detail(&r));
	CHECK_STR(json_string_value(json_object_get(r.json, "instance")), "/v1/nics/nosuch0");
	CHECK_STR(json_string_value(json_object_get(r.json, "type")),
		  "https://nettune.dev/problems/not-found");
	nt_http_result_free(&r);

	expect_problem("GET", "/v1/nope", 404, NULL);
	{
		/* "/" is the agent's address in a browser: to the web view. */
		nt_http_result root;
		nt_http_do("GET", nt_url(&A, "/"), NULL, 0, NULL, &root);
		CHECK_INT(root.status, 301);
		CHECK_STR(root.location, "/ui/");
		nt_http_result_free(&root);
	}
	expect_problem("GET", "//", 404, NULL);
	expect_problem("GET", "/v1/nics/", 404, NULL); /* a parameter is never empty */
	expect_problem("GET", "/v1/topology/extra", 404, NULL);
	expect_problem("GET", "/v1/nics/eth0/irqs/x/y", 404, NULL);
	char deep[256] = "/v1/nics";
	for (int i = 0; i < 40; i++)
		strcat(deep, "/a");
	expect_problem("GET", deep, 404, NULL); /* more segments than any route */
}

static void test_bad_names(void)
{
	nt_http_result r;
	char path[4200];

	/* An encoded '/' stays inside the segment and is refused as a name,
	 * never walked as a path. */
	expect_problem("GET", "/v1/nics/..%2F..%2Fetc", 400, &r);
	CHECK_MSG(strstr(detail(&r), "../../etc") != NULL, "detail: %s", detail(&r));
	nt_http_result_free(&r);
	expect_problem("GET", "/v1/nics/..", 400, NULL);
	expect_problem("GET", "/v1/nics/eth0%2Fdevice", 400, NULL);
	expect_problem("GET", "/v1/nics/a%20b", 400, NULL);
	expect_problem("GET", "/v1/nics/%00", 400, NULL); /* NUL never becomes a C string */
	expect_problem("GET", "/v1/nics/%zz", 400, NULL); /* broken escape */
	/* IFNAMSIZ is 16 with the NUL: 15 bytes is the longest name. */
	expect_problem("GET", "/v1/nics/abcdefghijklmnop", 400, NULL);
	memcpy(path, "/v1/nics/", 9);
	memset(path + 9, 'x', 4000);
	path[4009] = '\0';
	expect_problem("GET", path, 400, NULL);

	/* A valid name that exists still works alongside. */
	long st = 0;
	json_t *doc = NULL;
	nt_http("GET", nt_url(&A, "/v1/nics/eth0"), NULL, &st, &doc, NULL, 0);
	CHECK_INT(st, 200);
	CHECK_STR(json_string_value(json_object_get(doc, "name")), "eth0");
	json_decref(doc);
	/* Percent-encoded but valid: decoded before matching. */
	nt_http("GET", nt_url(&A, "/v1/nics/%65th0"), NULL, &st, &doc, NULL, 0);
	CHECK_INT(st, 200);
	CHECK_STR(json_string_value(json_object_get(doc, "name")), "eth0");
	json_decref(doc);
}

static void test_methods(void)
{
	nt_http_result r;

	expect_problem("POST", "/v1/topology", 405, &r);
	CHECK_MSG(strstr(r.allow, "GET") != NULL, "405 Allow header is '%s'", r.allow);
	nt_http_result_free(&r);
	expect_problem("DELETE", "/v1/nics/eth0", 405, &r);
	CHECK_MSG(strstr(r.allow, "GET") != NULL, "405 Allow header is '%s'", r.allow);
	nt_http_result_free(&r);
	expect_problem("PUT", "/v1/health", 405, NULL);

	/* HEAD is GET without a body. */
	CHECK(nt_http_do("HEAD", nt_url(&A, "/v1/health"), NULL, 0, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_INT(r.body_len, 0);
	nt_http_result_free(&r);
}

static void test_query(void)
{
	nt_http_result r;
	long st = 0;
	json_t *doc = NULL;

	expect_problem("GET", "/v1/diagnostics?verbose=1", 400, &r);
	CHECK_MSG(strstr(detail(&r), "verbose") != NULL, "detail does not name it: %s",
		  detail(&r));
	nt_http_result_free(&r);
	expect_problem("GET", "/v1/topology?rtt_ms=5", 400, NULL); /* not a topology parameter */
	expect_problem("GET", "/v1/diagnostics?rtt_ms=abc", 400, &r);
	CHECK_MSG(strstr(detail(&r), "rtt_ms") != NULL, "detail: %s", detail(&r));
	nt_http_result_free(&r);
	expect_problem("GET", "/v1/diagnostics?rtt_ms=", 400, NULL);
	expect_problem("GET", "/v1/diagnostics?rtt_ms", 400, NULL);
	expect_problem("GET", "/v1/diagnostics?rtt_ms=0", 400, NULL);
	expect_problem("GET", "/v1/diagnostics?rtt_ms=10001", 400, NULL);
	expect_problem("GET", "/v1/diagnostics?rtt_ms=-5", 400, NULL);
	expect_problem("GET", "/v1/diagnostics?rtt_ms=12abc", 400, NULL);
	expect_problem("GET", "/v1/diagnostics?rtt_ms=99999999999999999999", 400, NULL);
	expect_problem("GET", "/v1/diagnostics?rtt_ms=5&rtt_ms=6", 400, NULL);

	/* The limits themselves are accepted and used. */
	nt_http("GET", nt_url(&A, "/v1/diagnostics?rtt_ms=10000"), NULL, &st, &doc, NULL, 0);
	CHECK_INT(st, 200);
	CHECK_INT(json_integer_value(json_object_get(doc, "rtt_ms")), 10000);
	json_decref(doc);
	nt_http("GET", nt_url(&A, "/v1/diagnostics?rtt_ms=1"), NULL, &st, &doc, NULL, 0);
	CHECK_INT(st, 200);
	CHECK_INT(json_integer_value(json_object_get(doc, "rtt_ms")), 1);
	json_decref(doc);
}

/* A POST route of the server without path parameters, to send bodies to;
 * NULL while no area has one. */
static const char *post_route(void)
{
	for (const nt_route *r = nt_area_txn.routes; r && r->method; r++)
		if (strcmp(r->method, "POST") == 0 && !strchr(r->pattern, '{'))
			return r->pattern;
	return NULL;
}

static void test_bodies(void)
{
	size_t big = 2u << 20;
	char *body = malloc(big + 1);
	nt_http_result r;

	CHECK(body != NULL);
	if (!body)
		return;
	memset(body, 'a', big);
	body[0] = '"';
	body[big - 1] = '"';
	body[big] = '\0';

	/* Refused from Content-Length alone, wherever it is sent. */
	CHECK(nt_http_do("POST", nt_url(&A, "/v1/topology"), body, big, "application/json", &r) == 0);
	CHECK_MSG(nt_is_problem(&r, 413), "2 MiB POST: status %ld", r.status);
	nt_http_result_free(&r);
	CHECK(nt_http_do("POST", nt_url(&A, "/v1/nowhere"), body, big, "application/json", &r) == 0);
	CHECK_MSG(nt_is_problem(&r, 413), "2 MiB POST to an unknown path: status %ld", r.status);
	nt_http_result_free(&r);
	health_ok("a 2 MiB body");

	const char *post = post_route();
	if (post) {
		/* Without Content-Length the limit applies as the body arrives.
		 * Straight to the agent: a validating proxy in front refuses a
		 * body this large itself. */
		CURL *h = curl_easy_init();
		struct curl_slist *hd = curl_slist_append(NULL, "Transfer-Encoding: chunked");
		hd = curl_slist_append(hd, "Content-Type: application/json");
		long st = 0;
		curl_easy_setopt(h, CURLOPT_URL, nt_url_direct(&A, post));
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, nt_http_body_cb);
		memset(&r, 0, sizeof(r));
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
		curl_easy_perform(h);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
		CHECK_MSG(st == 413, "chunked 2 MiB POST %s: status %ld", post, st);
		curl_easy_cleanup(h);
		curl_slist_free_all(hd);
		nt_http_result_free(&r);

		CHECK(nt_http_do("POST", nt_url(&A, post), "{}", 2, "text/plain", &r) == 0);
		CHECK_MSG(nt_is_problem(&r, 415), "text/plain POST %s: status %ld", post, r.status);
		nt_http_result_free(&r);
	} else {
		printf("note: no POST route without parameters yet; 415 and chunked 413 "
		       "not exercised\n");
	}
	free(body);
}

/* A string literal and its length without the terminating NUL. */
#define RAW(s) s, sizeof(s) - 1

static void test_garbage(void)
{
	static const struct {
		const char *bytes;
		size_t len;
		const char *reply_prefix; /* NULL: any reply or none */
	} cases[] = {
		{ RAW("GARBAGE\x00\xff\xfe\r\n\r\n"), NULL },
		{ RAW("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"), NULL }, /* a TLS hello */
		{ RAW("GET /v1/nics/\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 400" },
		{ RAW("GET /v1/nics/%ff HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 400" },
		{ RAW("GET * HTTP/1.1\r\nHost: x\r\n\r\n"), "HTTP/1.1 404" },
		{ RAW("GET /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"),
		  "HTTP/1.1 4" },
		{ RAW("GET /v1/health HTTP/9.9\r\nHost: x\r\n\r\n"), NULL },
		{ RAW("POST /v1/topology HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "zz\r\n"), NULL },
		{ RAW(""), NULL },
	};
	char reply[8192];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ssize_t n = raw_exchange(cases[i].bytes, cases[i].len, reply, sizeof(reply));
		if (cases[i].reply_prefix)
			CHECK_MSG(n > 0 && strncmp(reply, cases[i].reply_prefix,
						   strlen(cases[i].reply_prefix)) == 0,
				  "garbage case %zu: reply '%.40s'", i, reply);
		char what[64];
		snprintf(what, sizeof(what), "garbage case %zu", i);
		health_ok(what);
	}

	/* A client-provided path with invalid UTF-8 still yields valid JSON. */
	raw_exchange(RAW("GET /v1/nics/\xc3\x28 HTTP/1.1\r\nHost: x\r\n\r\n"), reply, sizeof(reply));
	const char *b = strstr(reply, "\r\n\r\n");
	json_t *doc = b ? json_loads(b + 4, 0, NULL) : NULL;
	CHECK_MSG(doc && json_integer_value(json_object_get(doc, "status")) == 400,
		  "invalid UTF-8 name: reply %.200s", reply);
	json_decref(doc);
}

/* N clients at once, each on its own connection: all answered. */
static void concurrent(int n, double max_seconds)
{
	CURLM *m = curl_multi_init();
	CURL **h = calloc((size_t)n, sizeof(*h));
	nt_http_result *res = calloc((size_t)n, sizeof(*res));
	static const char *paths[] = { "/v1/health", "/v1/topology", "/v1/nics", "/v1/irqs",
				       "/v1/diagnostics", "/v1/nics/eth0" };
	char url[128];
	struct timespec t0, t1;

	CHECK(m && h && res);
	if (!m || !h || !res)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
	curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
	for (int i = 0; i < n; i++) {
		snprintf(url, sizeof(url), "%s%s", A.base, paths[i % 6]);
		h[i] = curl_easy_init();
		curl_easy_setopt(h[i], CURLOPT_URL, url);
		curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, nt_http_body_cb);
		curl_easy_setopt(h[i], CURLOPT_WRITEDATA, &res[i]);
		curl_easy_setopt(h[i], CURLOPT_TIMEOUT, 60L);
		curl_easy_setopt(h[i], CURLOPT_FRESH_CONNECT, 1L);
		curl_multi_add_handle(m, h[i]);
	}
	int running = 1;
	while (running) {
		curl_multi_perform(m, &running);
		if (running)
			curl_multi_poll(m, NULL, 0, 1000, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int ok = 0;
	for (int i = 0; i < n; i++) {
		long st = 0;
		curl_easy_getinfo(h[i], CURLINFO_RESPONSE_CODE, &st);
		json_t *doc = res[i].body ? json_loads(res[i].body, 0, NULL) : NULL;
		if (st == 200 && doc)
			ok++;
		else
			fprintf(stderr, "concurrent %d (%s): status %ld\n", i, paths[i % 6], st);
		json_decref(doc);
		curl_multi_remove_handle(m, h[i]);
		curl_easy_cleanup(h[i]);
		nt_http_result_free(&res[i]);
	}
	CHECK_INT(ok, n);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK_MSG(secs < max_seconds, "%d concurrent requests took %.1f s", n, secs);
out:
	if (m)
		curl_multi_cleanup(m);
	free(h);
	free(res);
}

static void test_concurrent(void)
{
	concurrent(50, 30);
	/* More clients than the connection limit (64): the excess waits in the
	 * listen backlog, and must not wait for idle keep-alive connections to
	 * time out (30 s) before it is served. */
	concurrent(150, 20);
}

int main(void)
{
	if (access(ROOT, F_OK) != 0)
		SKIP("fixture %s is missing", ROOT);
	/* Every client here is 127.0.0.1: let one address use every slot,
	 * so that the burst below tests the connection cap and its backlog
	 * (the per-address cap is test_hostile.c's). */
	static const char *const extra[] = { "--max-per-client", "64", NULL };
	if (nt_agent_start(&A, ROOT, NULL, extra) < 0) {
		CHECK_MSG(0, "agent did not start on %s", ROOT);
		TEST_MAIN_END();
	}
	test_not_found();
	test_bad_names();
	test_methods();
	test_query();
	test_bodies();
	test_garbage();
	test_concurrent();
	health_ok("everything");
	CHECK_MSG(nt_agent_stop(&A) == 0, "agent did not exit cleanly on SIGTERM");
	TEST_MAIN_END();
}
