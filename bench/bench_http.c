/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark load generator: GET one path over HTTP/1.1 keep-alive
 * connections, each driven by its own thread over a raw socket, and report
 * requests per second, latency percentiles and the status codes seen as one
 * JSON object on stdout. Python's HTTP client tops out far below what the
 * agent serves (/v1/health), so bench/run.py measures throughput and warm
 * latency with this.
 *
 *   bench_http [-c CONNS] [-d SECONDS | -n REQUESTS] [-w WARMUP] HOST PORT PATH
 *
 * -c connections (default 1), -d run for SECONDS (default 5), -n stop after
 * REQUESTS in all instead, -w WARMUP requests per connection first, neither
 * timed nor counted (a warm agent, a connection already open). A response
 * ends after Content-Length bytes of body, or after the last chunk of a
 * chunked body; a server that closes the connection (Connection: close, a
 * connection limit) is reconnected and counted in "reconnects". Any
 * transport failure is counted in "errors" and the connection reopened. */
#include "bench/bench_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define NSTATUS 600

typedef struct {
	/* shared, read-only */
	struct sockaddr_in addr;
	const char *req;
	size_t reqlen;
	int warmup;
	double seconds; /* a timed run: its length after the warm-up */
	atomic_long *budget; /* requests left, or NULL for a timed run */
	/* the thread's own */
	double *lat;
	size_t nlat, caplat;
	long status[NSTATUS];
	long errors, reconnects;
	unsigned long long bytes;
	char buf[65536];
	size_t have, off; /* bytes in buf, of which consumed */
	int fd;
	double start, end, deadline; /* the measured window, after the warm-up */
} conn_t;

static int conn_open(conn_t *c)
{
	int one = 1;
	c->have = c->off = 0;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	/* Small requests and replies: Nagle would add delayed-ACK waits. */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (const struct sockaddr *)&c->addr, sizeof(c->addr)) < 0) {
		int r = -errno;
		close(c->fd);
		c->fd = -1;
		return r;
	}
	return 0;
}

static void conn_close(conn_t *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Makes at least one more byte available in buf; 0, or -1 on EOF/error. */
static int fill(conn_t *c)
{
	if (c->off == c->have) {
		c->off = c->have = 0;
	} else if (c->have == sizeof(c->buf)) {
		memmove(c->buf, c->buf + c->off, c->have - c->off);
		c->have -= c->off;
		c->off = 0;
	}
	ssize_t n;
	do {
		n = read(c->fd, c->buf + c->have, sizeof(c->buf) - c->have);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	c->have += (size_t)n;
	c->bytes += (unsigned long long)n;
	return 0;
}

/* Reads up to and including the next CRLF; the line (without CRLF) is
 * copied to LINE, truncated to CAP-1. */
static int read_line(conn_t *c, char *line, size_t cap)
{
	size_t len = 0;
	for (;;) {
		while (c->off < c->have) {
			char ch = c->buf[c->off++];
			if (ch == '\n') {
				if (len && line[len - 1] == '\r')
					len--;
				line[len] = '\0';
				return 0;
			}
			if (len < cap - 1)
				line[len++] = ch;
		}
		if (fill(c) < 0)
			return -1;
	}
}

static int skip_bytes(conn_t *c, unsigned long long n)
{
	while (n) {
		if (c->off == c->have && fill(c) < 0)
			return -1;
		size_t take = c->have - c->off;
		if (take > n)
			take = (size_t)n;
		c->off += take;
		n -= take;
	}
	return 0;
}

/* One response: returns its status code, or -1 on a transport error or a
 * response this client cannot frame. *CLOSE is set when the server says it
 * closes the connection. */
static int read_response(conn_t *c, bool *close_after)
{
	char line[8192];
	int status;
	long long clen = -1;
	bool chunked = false;

	*close_after = false;
	if (read_line(c, line, sizeof(line)) < 0 || sscanf(line, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	for (;;) {
		if (read_line(c, line, sizeof(line)) < 0)
			return -1;
		if (!line[0])
			break;
		if (!strncasecmp(line, "Content-Length:", 15))
			clen = strtoll(line + 15, NULL, 10);
		else if (!strncasecmp(line, "Transfer-Encoding:", 18) && strcasestr(line + 18, "chunked"))
			chunked = true;
		else if (!strncasecmp(line, "Connection:", 11) && strcasestr(line + 11, "close"))
			*close_after = true;
	}
	if (chunked) {
		for (;;) {
			if (read_line(c, line, sizeof(line)) < 0)
				return -1;
			unsigned long long n = strtoull(line, NULL, 16);
			if (n == 0)
				break;
			if (skip_bytes(c, n) < 0 || read_line(c, line, sizeof(line)) < 0)
				return -1;
		}
		/* Trailer fields, up to the empty line. */
		do {
			if (read_line(c, line, sizeof(line)) < 0)
				return -1;
		} while (line[0]);
	} else if (clen >= 0) {
		if (skip_bytes(c, (unsigned long long)clen) < 0)
			return -1;
	} else {
		return -1; /* a body up to EOF: not what a keep-alive benchmark wants */
	}
	return status;
}

static int send_all(conn_t *c)
{
	size_t done = 0;
	while (done < c->reqlen) {
		ssize_t n = send(c->fd, c->req + done, c->reqlen - done, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* One request and its response on C, reconnecting first when needed.
 * Returns the status, or -1 (counted as an error; the connection is
 * reopened for the next one). */
static int one_request(conn_t *c)
{
	bool close_after;
	if (c->fd < 0) {
		if (conn_open(c) < 0)
			return -1;
	}
	int st = -1;
	if (send_all(c) == 0)
		st = read_response(c, &close_after);
	if (st < 0 || close_after) {
		conn_close(c);
		if (st >= 0)
			c->reconnects++;
	}
	return st;
}

static bool more(conn_t *c)
{
	if (c->budget)
		return atomic_fetch_sub(c->budget, 1) > 0;
	return now_ms() < c->deadline;
}

static void *run(void *arg)
{
	conn_t *c = arg;
	for (int i = 0; i < c->warmup; i++)
		if (one_request(c) < 0)
			c->errors++;
	c->start = now_ms();
	c->deadline = c->start + c->seconds * 1e3;
	while (more(c)) {
		double t0 = now_ms();
		int st = one_request(c);
		double dt = now_ms() - t0;
		if (st < 0) {
			c->errors++;
			continue;
		}
		c->status[st < NSTATUS ? st : 0]++;
		if (c->nlat == c->caplat) {
			size_t cap = c->caplat ? c->caplat * 2 : 4096;
			double *p = realloc(c->lat, cap * sizeof(double));
			if (!p) {
				c->errors++;
				break;
			}
			c->lat = p;
			c->caplat = cap;
		}
		c->lat[c->nlat++] = dt;
	}
	c->end = now_ms();
	conn_close(c);
	return NULL;
}

static double pct(const double *v, size_t n, double p)
{
	if (!n)
		return 0;
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_http [-c CONNS] [-d SECONDS | -n REQUESTS] [-w WARMUP] HOST PORT PATH\n");
	return 2;
}

int main(int argc, char **argv)
{
	int conns = 1, warmup = 0, opt, rc = 1;
	double seconds = 5;
	long nreq = 0;
	while ((opt = getopt(argc, argv, "c:d:n:w:")) != -1) {
		switch (opt) {
		case 'c': conns = atoi(optarg); break;
		case 'd': seconds = atof(optarg); break;
		case 'n': nreq = atol(optarg); break;
		case 'w': warmup = atoi(optarg); break;
		default: return usage();
		}
	}
	if (argc - optind != 3 || conns < 1 || conns > 1024 || seconds <= 0 || nreq < 0 || warmup < 0)
		return usage();
	const char *host = argv[optind], *path = argv[optind + 2];
	int port = atoi(argv[optind + 1]);
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	/* The path is echoed into the JSON unescaped: keep it plain. */
	if (port < 1 || port > 65535 || inet_pton(AF_INET, host, &addr.sin_addr) != 1 || path[0] != '/' ||
	    strpbrk(path, "\"\\ \r\n"))
		return usage();

	char req[2048];
	int reqlen = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: */*\r\n\r\n", path,
			      host, port);
	if (reqlen < 0 || reqlen >= (int)sizeof(req))
		return usage();

	atomic_long budget = nreq;
	conn_t *cs = calloc((size_t)conns, sizeof(conn_t));
	pthread_t *th = calloc((size_t)conns, sizeof(pthread_t));
	double *all = NULL;
	if (!cs || !th)
		goto out;
	/* Each connection is opened and warmed before its own clock starts;
	 * the run's window spans the first start to the last end. */
	for (int i = 0; i < conns; i++) {
		cs[i].addr = addr;
		cs[i].req = req;
		cs[i].reqlen = (size_t)reqlen;
		cs[i].warmup = warmup;
		cs[i].seconds = seconds;
		cs[i].budget = nreq ? &budget : NULL;
		cs[i].fd = -1;
	}
	for (int i = 0; i < conns; i++)
		if (pthread_create(&th[i], NULL, run, &cs[i]) != 0) {
			fprintf(stderr, "bench_http: cannot start thread %d\n", i);
			for (int j = 0; j < i; j++)
				pthread_join(th[j], NULL);
			goto out;
		}
	for (int i = 0; i < conns; i++)
		pthread_join(th[i], NULL);
	double first = cs[0].start, last = cs[0].end;
	for (int i = 1; i < conns; i++) {
		first = cs[i].start < first ? cs[i].start : first;
		last = cs[i].end > last ? cs[i].end : last;
	}
	double elapsed = last - first;

	size_t total = 0;
	long errors = 0, reconnects = 0;
	unsigned long long bytes = 0;
	long status[NSTATUS] = { 0 };
	for (int i = 0; i < conns; i++) {
		total += cs[i].nlat;
		errors += cs[i].errors;
		reconnects += cs[i].reconnects;
		bytes += cs[i].bytes;
		for (int s = 0; s < NSTATUS; s++)
			status[s] += cs[i].status[s];
	}
	all = malloc((total ? total : 1) * sizeof(double));
	if (!all)
		goto out;
	size_t k = 0;
	for (int i = 0; i < conns; i++) {
		memcpy(all + k, cs[i].lat, cs[i].nlat * sizeof(double));
		k += cs[i].nlat;
	}
	qsort(all, total, sizeof(double), cmp_d);
	printf("{\"path\": \"%s\", \"connections\": %d, \"requests\": %zu, \"seconds\": %.3f, "
	       "\"rps\": %.1f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, "
	       "\"errors\": %ld, \"reconnects\": %ld, \"bytes\": %llu, \"status\": {",
	       path, conns, total, elapsed / 1e3, total && elapsed > 0 ? (double)total / (elapsed / 1e3) : 0.0,
	       pct(all, total, 0.5), pct(all, total, 0.99), total ? all[total - 1] : 0.0, errors, reconnects,
	       bytes);
	const char *sep = "";
	for (int s = 0; s < NSTATUS; s++)
		if (status[s]) {
			printf("%s\"%d\": %ld", sep, s, status[s]);
			sep = ", ";
		}
	printf("}}\n");
	rc = errors ? 1 : 0;
out:
	if (cs)
		for (int i = 0; i < conns; i++)
			free(cs[i].lat);
	free(all);
	free(cs);
	free(th);
	return rc;
}
