/* SPDX-License-Identifier: Apache-2.0 */
/* neper's samples file (its -A/--all-samples FILE, "samples.csv" by
 * default): a row per flow per interval, "tid,flow_id,time,THINGS,THINGS/s,
 * utime,stime,maxrss,minflt,majflt,nvcsw,nivcsw" where THINGS is what the
 * flow counted since it began ("bytes_read" for the stream tests,
 * "transactions" for the RR ones, a running total), and for the RR tests
 * the interval's latency_min, _mean, _max, _stddev and one latency_pN per
 * --percentiles value, in seconds (neper's print.c, stats.c, rr.c). The
 * key=value lines give the whole run; this file gives its intervals, and so
 * what the whole-run figures average away: the slow seconds of a stream,
 * the worst interval's tail latency. Pure: the text in, figures out. */
#include "base/stats.h"
#include "cli/metric.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 64
#define MAX_FLOWS 4096

/* Splits the line at P (up to the end of line) at commas into COL (at
 * most MAX_COLS; each NUL-less, with its length in LEN). Returns the
 * number of columns, and in *NEXT the start of the next line or NULL. */
static int split(const char *p, const char **col, size_t *len, const char **next)
{
	size_t line = strcspn(p, "\n");
	int n = 0;
	const char *end = p + line;
	*next = *end ? end + 1 : NULL;
	if (line && p[line - 1] == '\r')
		end--;
	while (n < MAX_COLS) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		col[n] = p;
		len[n] = c ? (size_t)(c - p) : (size_t)(end - p);
		n++;
		if (!c)
			break;
		p = c + 1;
	}
	return n;
}

static int col_index(const char **col, const size_t *len, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (len[i] == strlen(name) && !memcmp(col[i], name, len[i]))
			return i;
	return -1;
}

typedef struct flow {
	double tid, id, time, things;
	size_t k; /* intervals counted so far */
} flow;

static void add(nt_metric_others *out, const char *name, double v, const char *unit, bool lower)
{
	if (out->n >= NT_METRIC_MAX_OTHERS || !(v >= 0) || !isfinite(v))
		return;
	nt_metric_other *m = &out->m[out->n++];
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->value = v;
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
	m->lower_is_better = lower;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int nt_metric_neper_samples(const char *text, nt_metric_others *out, char *err, size_t errsize)
{
	const char *col[MAX_COLS], *next;
	size_t len[MAX_COLS];
	int rc = -ENOENT;
	flow *flows = NULL;
	size_t nflows = 0, cap = 0, nrates = 0;
	double *rate = NULL; /* the sum over flows of each one's k-th interval rate */
	double worst[MAX_COLS];
	char latname[MAX_COLS][24];
	int lat[MAX_COLS], nlat = 0;

	int n = split(text, col, len, &next);
	int ti = col_index(col, len, n, "tid"), fi = col_index(col, len, n, "flow_id"),
	    tm = col_index(col, len, n, "time");
	bool bytes = col_index(col, len, n, "bytes_read") == 3, trans = col_index(col, len, n, "transactions") == 3;
	if (ti != 0 || fi != 1 || tm != 2 || (!bytes && !trans)) {
		snprintf(err, errsize, "not neper's samples file (its header starts tid,flow_id,time,bytes_read or "
				       "tid,flow_id,time,transactions)");
		return -EINVAL;
	}
	for (int i = 0; i < n; i++)
		if (len[i] > 9 && !memcmp(col[i], "latency_p", 9) && len[i] < sizeof(latname[0])) {
			lat[nlat] = i;
			snprintf(latname[nlat], sizeof(latname[nlat]), "%.*s", (int)len[i], col[i]);
			worst[nlat++] = -1;
		}
	int ncols = n;
	while (next && *next) {
		double v[MAX_COLS];
		n = split(next, col, len, &next);
		if (n < ncols)
			continue; /* a line cut short (neper killed mid-write) */
		bool good = true;
		for (int i = 0; i < ncols && good; i++)
			good = nt_metric_number_in(col[i], len[i], &v[i]);
		if (!good)
			continue;
		for (int j = 0; j < nlat; j++)
			if (v[lat[j]] > worst[j])
				worst[j] = v[lat[j]];
		size_t f;
		for (f = 0; f < nflows; f++)
			if (flows[f].tid == v[0] && flows[f].id == v[1])
				break;
		if (f == nflows) {
			/* The first row of a flow: what it counted since it
			 * began, at a time neper does not give. */
			if (nflows == MAX_FLOWS)
				continue;
			if (nflows == cap) {
				size_t nc = cap ? 2 * cap : 16;
				flow *nf = realloc(flows, nc * sizeof(*nf));
				if (!nf) {
					rc = -ENOMEM;
					goto out;
				}
				flows = nf;
				cap = nc;
			}
			flows[nflows++] = (flow){ v[0], v[1], v[2], v[3], 0 };
			continue;
		}
		flow *fl = &flows[f];
		double dt = v[2] - fl->time;
		if (dt > 0 && v[3] >= fl->things) {
			if (fl->k >= nrates) {
				double *nr = realloc(rate, (fl->k + 1) * sizeof(*nr));
				if (!nr) {
					rc = -ENOMEM;
					goto out;
				}
				rate = nr;
				for (size_t k = nrates; k <= fl->k; k++)
					rate[k] = 0;
				nrates = fl->k + 1;
			}
			rate[fl->k++] += (v[3] - fl->things) / dt;
		}
		fl->time = v[2];
		fl->things = v[3];
	}
	/* Only the intervals every flow counted: a sum over some of the
	 * flows (one ended a little early) is no interval of the run. */
	size_t full = nrates;
	for (size_t f = 0; f < nflows; f++)
		if (flows[f].k < full)
			full = flows[f].k;
	if (full) {
		double scale = bytes ? 8 : 1;
		for (size_t k = 0; k < full; k++)
			rate[k] *= scale;
		qsort(rate, full, sizeof(*rate), cmp_double);
		const char *unit = bytes ? "bits/s" : "transactions/s";
		add(out, "interval_rate_p10", nt_stats_quantile_sorted(rate, full, 0.10), unit, false);
		add(out, "interval_rate_p50", nt_stats_quantile_sorted(rate, full, 0.50), unit, false);
		add(out, "interval_rate_min", rate[0], unit, false);
		rc = 0;
	}
	for (int j = 0; j < nlat; j++) {
		char name[40];
		if (worst[j] < 0)
			continue;
		/* latency_p99 -> interval_latency_p99_max: the worst interval's. */
		snprintf(name, sizeof(name), "interval_%s_max", latname[j]);
		add(out, name, worst[j], "s", true);
		rc = 0;
	}
	if (rc == -ENOENT)
		snprintf(err, errsize, "neper's samples file holds no interval (a flow needs two rows)");
out:
	free(flows);
	free(rate);
	return rc;
}
