/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the query string of a request, which fuzz_request
 * leaves out. The input is the target after '?'; the first byte picks the
 * route (of those that take one). The query is counted as api/server.c counts it, split and decoded
 * as libmicrohttpd does before it hands the arguments over ('&', '=', '+'
 * for a space, then MHD_http_unescape, whose length tells a %00 apart),
 * each argument checked against the route (unknown, repeated, a NUL), and
 * then every value read as the routes read them: the integer parameters
 * with their own bounds, steps and status by name. */
#include "api/server_int.h"
#include "base/cpuset.h"
#include "host/delivery.h"
#include "store/status.h"

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const nt_area *const areas[] = { &nt_area_read, &nt_area_place, &nt_area_txn,
					&nt_area_desired, &nt_area_metrics, &nt_area_doc,
					&nt_area_ui };

/* The integer parameters and the bounds their routes give them. */
static const struct {
	const char *name;
	int lo, hi;
} ints[] = {
	{ "limit", 1, 500 },
	{ "offset", 0, 1000000000 },
	{ "rtt_ms", 1, 10000 },
	{ "window_ms", NT_DELIVERY_WINDOW_MIN_MS, NT_DELIVERY_WINDOW_MAX_MS },
	{ "cpus", 1, NT_MAX_CPUS },
	{ "interval_ms", 10, 10000 },
};

#define MAX_ARGS 64

/* The Kth route that takes a query (modulo their number), or the first
 * route of all (which takes none) when K is 255. */
static const nt_route *pick_route(unsigned k)
{
	int n = 0;
	if (k == 255)
		return areas[0]->routes;
	for (size_t a = 0; a < sizeof(areas) / sizeof(areas[0]); a++)
		for (const nt_route *r = areas[a]->routes; r->method; r++)
			n += r->query != NULL;
	k %= (unsigned)n;
	for (size_t a = 0; a < sizeof(areas) / sizeof(areas[0]); a++)
		for (const nt_route *r = areas[a]->routes; r->method; r++)
			if (r->query && k-- == 0)
				return r;
	return NULL;
}

static void check_int(const char *v, int lo, int hi)
{
	int out = -1;
	if (nt_query_parse_int(v, lo, hi, lo, &out) < 0)
		return;
	if (out < lo || out > hi)
		abort();
	if (!v)
		return;
	/* Accepted: plain decimal digits whose value is OUT. */
	long want = 0;
	if (!*v)
		abort();
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9')
			abort();
		want = want * 10 + (*p - '0');
		if (want > hi)
			abort();
	}
	if (want != out)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *keys[MAX_ARGS], *vals[MAX_ARGS];
	size_t ksz[MAX_ARGS], vsz[MAX_ARGS];
	int nargs = 0;
	char bad[64];

	if (size < 1)
		return 0;
	const nt_route *route = pick_route(data[0]);
	/* As on_uri sees it: the target, then the count. */
	char *uri = malloc(size + 3);
	if (!uri)
		return 0;
	memcpy(uri, "/x?", 3);
	memcpy(uri + 3, data + 1, size - 1);
	uri[size + 2] = '\0';
	size_t qlen = strlen(uri + 3);
	int count = nt_srv_count_query(uri, NT_MAX_QUERY_PARAMS);
	int amps = 0;
	for (size_t i = 0; i < qlen; i++)
		amps += uri[3 + i] == '&';
	if (count < 0 || count > NT_MAX_QUERY_PARAMS + 1 ||
	    (qlen && count <= NT_MAX_QUERY_PARAMS && count != amps + 1) || (!qlen && count))
		abort();

	/* libmicrohttpd's MHD_parse_arguments_: pieces split at '&', a key
	 * without '=' has no value; '+' is a space, then %XX decoded. */
	char *q = uri + 3;
	while (q && *q && nargs < MAX_ARGS) {
		char *amp = strchr(q, '&');
		if (amp)
			*amp = '\0';
		char *eq = strchr(q, '=');
		if (eq)
			*eq = '\0';
		for (char *p = q; *p; p++)
			*p = *p == '+' ? ' ' : *p;
		keys[nargs] = q;
		ksz[nargs] = MHD_http_unescape(q);
		vals[nargs] = NULL;
		vsz[nargs] = 0;
		if (eq) {
			for (char *p = eq + 1; *p; p++)
				*p = *p == '+' ? ' ' : *p;
			vals[nargs] = eq + 1;
			vsz[nargs] = MHD_http_unescape(eq + 1);
		}
		nargs++;
		q = amp ? amp + 1 : NULL;
	}

	struct nt_query_check qc = { .route = route, .bad = bad, .badsize = sizeof(bad) };
	bad[0] = '\0';
	int r = 0;
	for (int i = 0; i < nargs && r == 0; i++)
		r = nt_srv_query_arg(&qc, keys[i], ksz[i], vals[i], vsz[i]);
	if (r < 0 && (!memchr(bad, '\0', sizeof(bad)) || (int)qc.why < NT_QUERY_UNKNOWN ||
		      qc.why > NT_QUERY_NUL))
		abort();
	if (r == 0) {
		/* Every key the route accepted, read as its handler reads it
		 * (nt_query gives "" for a key without a value). */
		for (int i = 0; i < nargs; i++) {
			const char *v = vals[i] ? vals[i] : "";
			bool known = false;
			for (const char *const *a = route->query; a && *a; a++)
				known |= !strcmp(*a, keys[i]);
			if (!known || strlen(keys[i]) != ksz[i])
				abort(); /* accepted a parameter the route does not take */
			for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++)
				if (!strcmp(keys[i], ints[k].name))
					check_int(v, ints[k].lo, ints[k].hi);
			if (!strcmp(keys[i], "status"))
				(void)nt_txn_status_parse(v);
		}
	}
	/* Whatever the query, the integer reader on the raw value too. */
	check_int(nargs ? vals[0] : NULL, 0, 1000000000);
	check_int(nargs ? keys[0] : NULL, 1, NT_MAX_CPUS);
	free(uri);
	return 0;
}
