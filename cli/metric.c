/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/metric.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set(nt_metric *out, double v, const char *unit, const char *source)
{
	out->value = v;
	snprintf(out->unit, sizeof(out->unit), "%s", unit);
	snprintf(out->source, sizeof(out->source), "%s", source);
}

static bool number(const json_t *v, double *out)
{
	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return isfinite(*out);
}

int nt_metric_iperf3(const char *text, nt_metric *out, char *err, size_t errsize)
{
	json_t *doc = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
	int r = -ENOENT;
	double v;
	if (!json_is_object(doc)) {
		snprintf(err, errsize, "the output is not iperf3's JSON (run it with --json)");
		goto out;
	}
	const char *error = json_string_value(json_object_get(doc, "error"));
	const json_t *end = json_object_get(doc, "end");
	const char *proto = json_string_value(
		json_object_get(json_object_get(json_object_get(doc, "start"), "test_start"), "protocol"));
	/* TCP: what the receiver got (the sender's figure counts bytes still
	 * in flight). UDP: end.sum, whose loss is the receiver's; iperf3 has
	 * no sum_received for UDP before 3.x. */
	const json_t *sum = proto && !strcmp(proto, "UDP") ? json_object_get(end, "sum") :
							    json_object_get(end, "sum_received");
	if (!sum)
		sum = json_object_get(end, "sum");
	if (!number(json_object_get(sum, "bits_per_second"), &v)) {
		snprintf(err, errsize, "iperf3's JSON has no end.%s.bits_per_second%s%s",
			 proto && !strcmp(proto, "UDP") ? "sum" : "sum_received", error ? ": iperf3 said: " : "",
			 error ? error : "");
		goto out;
	}
	set(out, v, "bits/s", "iperf3");
	r = 0;
out:
	json_decref(doc);
	return r;
}

/* The factor to bits/s of a netperf unit ("10^6bits/s", "10^9bits/sec",
 * "bits/s"), 0 when it is not a bit rate. */
static double bit_factor(const char *u)
{
	double f = 1;
	if (!strncmp(u, "10^", 3)) {
		char *end;
		long e = strtol(u + 3, &end, 10);
		if (end == u + 3 || e < 0 || e > 15)
			return 0;
		f = pow(10, (double)e);
		u = end;
	}
	if (!strncasecmp(u, "bits/s", 6))
		return f;
	return 0;
}

/* Set OUT from VALUE in netperf's UNIT: bit rates in bits/s, anything
 * else (Trans/s, KBytes/s) as netperf says it. Returns 0, or -ERANGE
 * when the rate in bits/s is past the largest double (1.5e308 in
 * 10^3bits/s would be taken as inf, and an infinite gain then compared),
 * leaving OUT as it was. */
static int netperf_value(nt_metric *out, double value, const char *unit)
{
	double f = bit_factor(unit);
	if (f > 0 && !isfinite(value * f))
		return -ERANGE;
	if (f > 0)
		set(out, value * f, "bits/s", "netperf");
	else
		set(out, value, unit, "netperf");
	return 0;
}

/* Whether S[0..N) is one finite number and nothing else, into *D. Of any
 * length: "0.000...0001" with 70 digits is a number, and a copy cut short
 * would be read as another. */
bool nt_metric_number_in(const char *s, size_t n, double *d)
{
	char small[128], *buf = n < sizeof(small) ? small : malloc(n + 1);
	if (!buf || n == 0) {
		if (buf != small)
			free(buf);
		return false;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *e;
	*d = strtod(buf, &e);
	bool ok = e == buf + n && isfinite(*d);
	if (buf != small)
		free(buf);
	return ok;
}

/* Every field of LINE (up to 16) as numbers; how many, or -1 when one is
 * not a number. */
static int numeric_fields(const char *line, size_t len, double *v, int max)
{
	int n = 0;
	const char *p = line, *end = line + len;
	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p >= end)
			break;
		const char *w = p;
		while (p < end && !isspace((unsigned char)*p))
			p++;
		double d;
		if (n >= max || !nt_metric_number_in(w, (size_t)(p - w), &d))
			return -1;
		v[n++] = d;
	}
	return n;
}

const char *nt_metric_keyval(const char *text, const char *key, size_t *len)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			const char *v = p + kl + 1;
			size_t n = strcspn(v, "\r\n");
			while (n && isspace((unsigned char)v[n - 1]))
				n--;
			*len = n;
			return v;
		}
	}
	return NULL;
}

/* netperf -o: a line of column names and a line of values, comma-separated. */
static int netperf_csv(const char *text, nt_metric *out)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t len = strcspn(p, "\r\n");
		if (!memchr(p, ',', len))
			continue;
		const char *next = p + len;
		next += strspn(next, "\r\n");
		if (!*next)
			return -ENOENT;
		size_t vlen = strcspn(next, "\r\n");
		/* Column by column, the names and the values. */
		int col = 0, tcol = -1, ucol = -1;
		const char *h = p;
		while (h < p + len) {
			size_t k = strcspn(h, ",\r\n");
			if (k == 10 && !strncasecmp(h, "Throughput", 10))
				tcol = col;
			else if (k == 16 && !strncasecmp(h, "Throughput Units", 16))
				ucol = col;
			col++;
			h += k;
			if (*h == ',')
				h++;
			else
				break;
		}
		if (tcol < 0)
			continue;
		const char *tv = NULL;
		size_t tl = 0;
		char uv[32] = "";
		const char *v = next;
		for (col = 0; v < next + vlen; col++) {
			size_t k = strcspn(v, ",\r\n");
			if (col == tcol) {
				tv = v;
				tl = k;
			}
			if (col == ucol)
				snprintf(uv, sizeof(uv), "%.*s", (int)k, v);
			v += k;
			if (*v == ',')
				v++;
			else
				break;
		}
		double d;
		if (!tv || !nt_metric_number_in(tv, tl, &d))
			return -ENOENT;
		return netperf_value(out, d, uv);
	}
	return -ENOENT;
}

/* netperf -O: columns aligned under their names, the figure under
 * "Throughput" and its unit after it ("37914.31   10^6bits/s"). */
static int netperf_columns(const char *text, nt_metric *out)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t len = strcspn(p, "\r\n");
		const char *t = memmem(p, len, "Throughput", 10);
		if (!t || (t > p && !isspace((unsigned char)t[-1])))
			continue;
		size_t col = (size_t)(t - p);
		for (const char *q = p + len; *q;) {
			q += strspn(q, "\r\n");
			size_t qlen = strcspn(q, "\r\n");
			if (qlen > col && !isspace((unsigned char)q[col]) && (col == 0 || isspace((unsigned char)q[col - 1]))) {
				char *e;
				double d = strtod(q + col, &e);
				if (e == q + col || !isfinite(d) || (*e && !isspace((unsigned char)*e)))
					break; /* the "Units" line or text: not this header */
				char unit[32];
				const char *u = e + strspn(e, " \t");
				size_t ul = strcspn(u, " \t\r\n");
				snprintf(unit, sizeof(unit), "%.*s", (int)ul, u);
				return netperf_value(out, d, unit);
			}
			q += qlen;
		}
	}
	return -ENOENT;
}

int nt_metric_netperf(const char *text, nt_metric *out, char *err, size_t errsize)
{
	char ubuf[32] = "";
	const char *kv;
	size_t kvl;
	double d;
	int r;
	/* -k: THROUGHPUT=... and THROUGHPUT_UNITS=... lines. */
	if ((kv = nt_metric_keyval(text, "THROUGHPUT", &kvl))) {
		while (kvl && isspace((unsigned char)kv[kvl - 1]))
			kvl--;
		if (nt_metric_number_in(kv, kvl, &d)) {
			const char *u = nt_metric_keyval(text, "THROUGHPUT_UNITS", &kvl);
			if (u)
				snprintf(ubuf, sizeof(ubuf), "%.*s", (int)(kvl < sizeof(ubuf) ? kvl : sizeof(ubuf) - 1), u);
			r = netperf_value(out, d, ubuf);
			if (r < 0)
				goto range;
			return 0;
		}
	}
	if ((r = netperf_csv(text, out)) == 0)
		return 0;
	if (r == -ERANGE)
		goto range;
	/* The classic table (TCP_STREAM, TCP_RR, ...): the header's last
	 * column names the unit ("10^6bits/sec", "per sec"), and the first row
	 * of at least five numbers after it ends with the figure. Of TCP_RR's
	 * two rows (local, then remote) the first is the rate. */
	char unitbuf[32] = "";
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t len = strcspn(p, "\r\n");
		double v[16];
		int n = numeric_fields(p, len, v, 16);
		if (n >= 5) {
			if (!strcmp(unitbuf, "per sec"))
				set(out, v[n - 1], "transactions/s", "netperf");
			else if (netperf_value(out, v[n - 1], unitbuf) < 0)
				goto range;
			return 0;
		}
		/* A header line's last word: "10^6bits/sec", or "per sec". */
		if (n < 0) {
			const char *q = p + len;
			while (q > p && isspace((unsigned char)q[-1]))
				q--;
			const char *w = q;
			while (w > p && !isspace((unsigned char)w[-1]))
				w--;
			if (q - w >= 3 && !strncasecmp(w, "sec", 3) && w - p >= 4 && !strncasecmp(w - 4, "per ", 4))
				snprintf(unitbuf, sizeof(unitbuf), "per sec");
			else if (q > w && (size_t)(q - w) < sizeof(unitbuf) && memmem(w, (size_t)(q - w), "/sec", 4))
				snprintf(unitbuf, sizeof(unitbuf), "%.*s", (int)(q - w), w);
		}
	}
	if ((r = netperf_columns(text, out)) == 0)
		return 0;
	if (r == -ERANGE)
		goto range;
	snprintf(err, errsize, "no netperf result in the output (a TCP_STREAM or TCP_RR table, "
			       "or -k THROUGHPUT=, or -o with a Throughput column)");
	return -ENOENT;
range:
	snprintf(err, errsize, "netperf's throughput is out of range: more bits/s than a double holds");
	return -ENOENT;
}

/* One step of PATH from *P: a key (up to '.', '[') or an [index] (a
 * negative one counts from the end). Moves *P past it. */
static int path_step(const char **p, const json_t *cur, const json_t **next, char *err, size_t errsize)
{
	const char *s = *p;
	if (*s == '.')
		s++;
	if (*s == '[') {
		char *e;
		long i = strtol(s + 1, &e, 10);
		if (e == s + 1 || *e != ']') {
			snprintf(err, errsize, "bad index at '%s'", s);
			return -EINVAL;
		}
		*p = e + 1;
		if (!json_is_array(cur)) {
			*next = NULL;
			return 0;
		}
		long n = (long)json_array_size(cur);
		if (i < 0)
			i += n;
		*next = i >= 0 && i < n ? json_array_get(cur, (size_t)i) : NULL;
		return 0;
	}
	size_t k = strcspn(s, ".[");
	if (k == 0 || k >= 256) {
		snprintf(err, errsize, "empty or too long key at '%s'", s);
		return -EINVAL;
	}
	char key[256];
	memcpy(key, s, k);
	key[k] = '\0';
	*p = s + k;
	if (json_is_array(cur)) {
		/* jq-like "a.0.b" as well as "a[0].b". */
		char *e;
		long i = strtol(key, &e, 10);
		if (*e == '\0') {
			long n = (long)json_array_size(cur);
			if (i < 0)
				i += n;
			*next = i >= 0 && i < n ? json_array_get(cur, (size_t)i) : NULL;
			return 0;
		}
	}
	*next = json_object_get(cur, key);
	return 0;
}

int nt_metric_json_path(const char *text, const char *path, nt_metric *out, char *err, size_t errsize)
{
	if (!path || !*path || !strcmp(path, ".")) {
		snprintf(err, errsize, "--metric-json wants a path such as end.sum_received.bits_per_second");
		return -EINVAL;
	}
	json_error_t jerr;
	json_t *doc = json_loads(text, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &jerr);
	if (!doc) {
		snprintf(err, errsize, "the output is not JSON: line %d: %s", jerr.line, jerr.text);
		return -ENOENT;
	}
	const json_t *cur = doc;
	const char *p = path;
	int r = 0;
	while (*p && cur) {
		const json_t *next;
		if ((r = path_step(&p, cur, &next, err, errsize)) < 0)
			goto out;
		cur = next;
	}
	double v;
	if (!cur || !number(cur, &v)) {
		snprintf(err, errsize, "%s is %s in the output", path, cur ? "not a number" : "absent");
		r = -ENOENT;
		goto out;
	}
	set(out, v, "", "json");
out:
	json_decref(doc);
	return r;
}

int nt_metric_regex(const char *text, const char *re, nt_metric *out, char *err, size_t errsize)
{
	regex_t rx;
	regmatch_t m[2];
	int rc = regcomp(&rx, re ? re : "", REG_EXTENDED | REG_NEWLINE);
	if (rc) {
		char msg[128];
		regerror(rc, &rx, msg, sizeof(msg));
		snprintf(err, errsize, "--metric-regex: %s", msg);
		return -EINVAL;
	}
	int r = -EINVAL;
	if (rx.re_nsub != 1) {
		snprintf(err, errsize, "--metric-regex wants exactly one group (...), not %zu", rx.re_nsub);
		goto out;
	}
	r = -ENOENT;
	if (regexec(&rx, text, 2, m, 0) != 0 || m[1].rm_so < 0) {
		snprintf(err, errsize, "--metric-regex matched nothing in the output");
		goto out;
	}
	size_t n = (size_t)(m[1].rm_eo - m[1].rm_so);
	double d;
	if (!nt_metric_number_in(text + m[1].rm_so, n, &d)) {
		snprintf(err, errsize, "--metric-regex's group matched '%.*s%s', not a number", n > 60 ? 60 : (int)n,
			 text + m[1].rm_so, n > 60 ? "..." : "");
		goto out;
	}
	set(out, d, "", "regex");
	r = 0;
out:
	regfree(&rx);
	return r;
}

int nt_metric_read(enum nt_metric_source source, const char *arg, const char *text, size_t len, nt_metric *out,
		   char *err, size_t errsize)
{
	/* The output as a C string: a NUL inside ends it, as it would for
	 * every reader of text. */
	char *s = malloc(len + 1);
	if (!s) {
		snprintf(err, errsize, "out of memory");
		return -ENOMEM;
	}
	memcpy(s, text, len);
	s[len] = '\0';
	int r;
	memset(out, 0, sizeof(*out));
	switch (source) {
	case NT_METRIC_IPERF3: r = nt_metric_iperf3(s, out, err, errsize); break;
	case NT_METRIC_NETPERF: r = nt_metric_netperf(s, out, err, errsize); break;
	case NT_METRIC_JSON: r = nt_metric_json_path(s, arg, out, err, errsize); break;
	case NT_METRIC_REGEX: r = nt_metric_regex(s, arg, out, err, errsize); break;
	case NT_METRIC_NEPER: r = nt_metric_neper(s, out, err, errsize); break;
	default: {
		const char *p = s + strspn(s, " \t\r\n");
		if (*p == '{') {
			r = nt_metric_iperf3(s, out, err, errsize);
		} else if (nt_metric_is_neper(s)) {
			r = nt_metric_neper(s, out, err, errsize);
		} else {
			r = nt_metric_netperf(s, out, err, errsize);
			if (r == -ENOENT)
				snprintf(err, errsize, "neither iperf3's JSON (--json) nor a netperf or neper result "
						       "in the output; name the figure with --metric-json PATH or --metric-regex RE");
		}
	}
	}
	free(s);
	return r;
}
