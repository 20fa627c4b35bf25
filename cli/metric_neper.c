/* SPDX-License-Identifier: Apache-2.0 */
/* neper's output (github.com/google/neper): one key=value a line, first
 * the options as neper took them, then the results. Its README's
 * "Standard output keys": tcp_rr, tcp_crr and udp_rr print "throughput"
 * in transactions per second; tcp_stream and udp_stream print
 * "throughput" with "throughput_units" (its --throughput-opt table:
 * "Mbit/s" by default, "10^9bits/s", "GiB/s", ...) and, in older
 * versions, "throughput_Mbps"; the RR tests print latency_min, _max,
 * _mean, _stddev and one latency_pN per --percentiles value, in seconds;
 * every test its own user and system time (utime_start, utime_end,
 * stime_start, stime_end). Keys are case-sensitive and their order is not
 * significant (README). Read without a regular expression. */
#include "cli/metric.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* neper's units of throughput (its common.c conversions[] table) as
 * bits per second. */
static const struct {
	const char *unit;
	double bits;
} units[] = {
	{ "bits/s", 1 },	   { "10^3bits/s", 1e3 },	{ "10^6bits/s", 1e6 },	    { "10^9bits/s", 1e9 },
	{ "B/s", 8 },		   { "KBytes/s", 8 * 1024.0 },	{ "MBytes/s", 8 * 1048576.0 }, { "GBytes/s", 8 * 1073741824.0 },
	{ "Kbit/s", 1e3 },	   { "Mbit/s", 1e6 },		{ "Gbit/s", 1e9 },	    { "KB/s", 8e3 },
	{ "MB/s", 8e6 },	   { "GB/s", 8e9 },		{ "Kibit/s", 1024.0 },	    { "Mibit/s", 1048576.0 },
	{ "Gibit/s", 1073741824.0 }, { "KiB/s", 8 * 1024.0 }, { "MiB/s", 8 * 1048576.0 }, { "GiB/s", 8 * 1073741824.0 },
};

static bool key_number(const char *text, const char *key, double *d)
{
	size_t n;
	const char *v = nt_metric_keyval(text, key, &n);
	return v && nt_metric_number_in(v, n, d);
}

bool nt_metric_is_neper(const char *text)
{
	size_t n;
	return nt_metric_keyval(text, "throughput", &n) && nt_metric_keyval(text, "num_transactions", &n);
}

int nt_metric_neper(const char *text, nt_metric *out, char *err, size_t errsize)
{
	double v;
	size_t ul;
	if (key_number(text, "throughput", &v)) {
		const char *u = nt_metric_keyval(text, "throughput_units", &ul);
		if (!u) {
			/* The RR tests: transactions a second. */
			out->value = v;
			snprintf(out->unit, sizeof(out->unit), "transactions/s");
		} else {
			size_t i;
			for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
				if (strlen(units[i].unit) == ul && !strncmp(units[i].unit, u, ul))
					break;
			if (i == sizeof(units) / sizeof(units[0])) {
				snprintf(err, errsize, "neper's throughput_units '%.*s' is not one neper prints",
					 (int)(ul < 32 ? ul : 32), u);
				return -ENOENT;
			}
			if (!isfinite(v * units[i].bits)) {
				snprintf(err, errsize, "neper's throughput is out of range: more bits/s than a double holds");
				return -ENOENT;
			}
			out->value = v * units[i].bits;
			snprintf(out->unit, sizeof(out->unit), "bits/s");
		}
	} else if (key_number(text, "throughput_Mbps", &v) && isfinite(v * 1e6)) {
		out->value = v * 1e6;
		snprintf(out->unit, sizeof(out->unit), "bits/s");
	} else {
		snprintf(err, errsize, "no neper result in the output (a throughput= line)");
		return -ENOENT;
	}
	snprintf(out->source, sizeof(out->source), "neper");
	return 0;
}

static void add(nt_metric_others *out, const char *name, size_t nlen, double v, const char *unit)
{
	if (out->n >= NT_METRIC_MAX_OTHERS || !(v >= 0) || !isfinite(v) || nlen >= sizeof(out->m[0].name))
		return;
	nt_metric_other *m = &out->m[out->n++];
	snprintf(m->name, sizeof(m->name), "%.*s", (int)nlen, name);
	m->value = v;
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
	m->lower_is_better = true;
}

/* neper's latencies and CPU time (cli/metric.h, nt_metric_others_read). */
void nt_metric_others_neper(const char *text, nt_metric_others *out)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "latency_", 8))
			continue;
		size_t line = strcspn(p, "\r\n"), k = strcspn(p, "=\r\n");
		double d;
		if (k >= line || k <= 8 || strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_.") < k)
			continue; /* a name is shown as it is: neper's are latency_p99.9 and the like */
		const char *v = p + k + 1;
		size_t vl = line - k - 1;
		while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			vl--;
		if (nt_metric_number_in(v, vl, &d))
			add(out, p, k, d, "s");
	}
	double u0, u1, s0, s1;
	if (key_number(text, "utime_start", &u0) && key_number(text, "utime_end", &u1) &&
	    key_number(text, "stime_start", &s0) && key_number(text, "stime_end", &s1))
		add(out, "cpu_s", 5, (u1 - u0) + (s1 - s0), "s");
}
