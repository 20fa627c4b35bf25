/* SPDX-License-Identifier: Apache-2.0 */
/* The figures beside the primary one in a benchmark's output (cli/metric.h,
 * nt_metric_others_read): what a profile may cost while it buys
 * throughput, shown in bench-run --compare's table and report but never
 * gated on. iperf3's JSON: end.sum_sent.retransmits (TCP) and
 * end.cpu_utilization_percent's host_total and remote_total (the client's
 * and the server's CPU, whichever way the data went); for UDP end.sum's
 * lost_percent and jitter_ms, the receiver's. netperf's omni output
 * selectors (its doc/omni_output_list.txt; the latency ones need the
 * global -j): as -k KEY=value lines or as -o's CSV with netperf's column
 * names. neper's in cli/metric_neper.c. Read without a regular
 * expression. */
#include "cli/metric.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add(nt_metric_others *out, const char *name, double v, const char *unit)
{
	/* netperf prints -1 for a CPU it did not measure: absent, not a
	 * figure; the same for anything else below 0 or not finite. */
	if (out->n >= NT_METRIC_MAX_OTHERS || !(v >= 0) || !isfinite(v))
		return;
	for (size_t i = 0; i < out->n; i++)
		if (!strcmp(out->m[i].name, name))
			return;
	nt_metric_other *m = &out->m[out->n++];
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->value = v;
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
	m->lower_is_better = true;
}

static void add_json(nt_metric_others *out, const json_t *obj, const char *key, const char *name, const char *unit)
{
	const json_t *v = json_object_get(obj, key);
	if (json_is_number(v))
		add(out, name, json_number_value(v), unit);
}

void nt_metric_others_iperf3(const char *text, nt_metric_others *out)
{
	json_t *doc = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
	const json_t *end = json_object_get(doc, "end");
	const char *proto = json_string_value(
		json_object_get(json_object_get(json_object_get(doc, "start"), "test_start"), "protocol"));
	if (!json_is_object(end))
		goto out;
	if (proto && !strcmp(proto, "UDP")) {
		const json_t *sum = json_object_get(end, "sum");
		add_json(out, sum, "lost_percent", "lost_percent", "%");
		add_json(out, sum, "jitter_ms", "jitter_ms", "ms");
	} else {
		add_json(out, json_object_get(end, "sum_sent"), "retransmits", "retransmits", "");
	}
	const json_t *cpu = json_object_get(end, "cpu_utilization_percent");
	add_json(out, cpu, "host_total", "cpu_host_percent", "%");
	add_json(out, cpu, "remote_total", "cpu_remote_percent", "%");
out:
	json_decref(doc);
}

/* netperf's output selectors: the -k key, -o's column name, ours. */
static const struct {
	const char *key, *column, *name, *unit;
} selectors[] = {
	{ "MEAN_LATENCY", "Mean Latency Microseconds", "mean_latency", "us" },
	{ "P50_LATENCY", "50th Percentile Latency Microseconds", "p50_latency", "us" },
	{ "P90_LATENCY", "90th Percentile Latency Microseconds", "p90_latency", "us" },
	{ "P99_LATENCY", "99th Percentile Latency Microseconds", "p99_latency", "us" },
	{ "MIN_LATENCY", "Minimum Latency Microseconds", "min_latency", "us" },
	{ "MAX_LATENCY", "Maximum Latency Microseconds", "max_latency", "us" },
	{ "RT_LATENCY", "Round Trip Latency usec/tran", "rt_latency", "us" },
	{ "LOCAL_CPU_UTIL", "Local CPU Util %", "local_cpu_util", "%" },
	{ "REMOTE_CPU_UTIL", "Remote CPU Util %", "remote_cpu_util", "%" },
};
#define NSEL (sizeof(selectors) / sizeof(selectors[0]))

/* -o: the first line of comma-separated column names that names one of
 * the selectors, and the line after it, its values. */
static void netperf_csv(const char *text, nt_metric_others *out)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t len = strcspn(p, "\r\n");
		if (!memchr(p, ',', len))
			continue;
		int col_of[NSEL];
		bool any = false;
		for (size_t s = 0; s < NSEL; s++)
			col_of[s] = -1;
		int col = 0;
		for (const char *h = p; h <= p + len; col++) {
			size_t k = strcspn(h, ",\r\n");
			for (size_t s = 0; s < NSEL; s++)
				if (strlen(selectors[s].column) == k && !strncmp(h, selectors[s].column, k)) {
					col_of[s] = col;
					any = true;
				}
			h += k;
			if (*h != ',')
				break;
			h++;
		}
		if (!any)
			continue;
		const char *v = p + len;
		v += strspn(v, "\r\n");
		size_t vlen = strcspn(v, "\r\n");
		col = 0;
		for (const char *f = v; *v && f <= v + vlen; col++) {
			size_t k = strcspn(f, ",\r\n");
			double d;
			for (size_t s = 0; s < NSEL; s++)
				if (col_of[s] == col && nt_metric_number_in(f, k, &d))
					add(out, selectors[s].name, d, selectors[s].unit);
			f += k;
			if (*f != ',')
				break;
			f++;
		}
		return;
	}
}

void nt_metric_others_netperf(const char *text, nt_metric_others *out)
{
	for (size_t s = 0; s < NSEL; s++) {
		size_t n;
		double d;
		const char *v = nt_metric_keyval(text, selectors[s].key, &n);
		if (v && nt_metric_number_in(v, n, &d))
			add(out, selectors[s].name, d, selectors[s].unit);
	}
	netperf_csv(text, out);
}

void nt_metric_others_read(enum nt_metric_source source, const char *text, size_t len, nt_metric_others *out)
{
	out->n = 0;
	if (source == NT_METRIC_JSON || source == NT_METRIC_REGEX)
		return;
	/* A C string, as nt_metric_read reads it: a NUL ends the text. */
	char *s = malloc(len + 1);
	if (!s)
		return;
	memcpy(s, text, len);
	s[len] = '\0';
	if (source == NT_METRIC_AUTO) {
		const char *p = s + strspn(s, " \t\r\n");
		source = *p == '{' ? NT_METRIC_IPERF3 : nt_metric_is_neper(s) ? NT_METRIC_NEPER : NT_METRIC_NETPERF;
	}
	if (source == NT_METRIC_IPERF3)
		nt_metric_others_iperf3(s, out);
	else if (source == NT_METRIC_NETPERF)
		nt_metric_others_netperf(s, out);
	else if (source == NT_METRIC_NEPER)
		nt_metric_others_neper(s, out);
	free(s);
}
