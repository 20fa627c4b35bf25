/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/bench_metrics.h"
#include "base/stats.h"
#include "cli/bench.h"
#include "cli/bench_judge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The figure named NAME (NULL: the primary, "value") of each counted
 * round of ARM into X; how many. */
static size_t gather(const json_t *rounds, const char *arm, const char *name, double *x)
{
	size_t i, n = 0;
	const json_t *r;
	json_array_foreach(rounds, i, r) {
		const char *a = json_string_value(json_object_get(r, "arm"));
		const json_t *v = name ? json_object_get(json_object_get(r, "metrics"), name) : json_object_get(r, "value");
		if (!a || strcmp(a, arm) || !json_is_integer(json_object_get(r, "block")) || !json_is_number(v))
			continue;
		x[n++] = json_number_value(v);
	}
	return n;
}

static json_t *one(const json_t *rounds, const char *name, const char *key, const char *unit, bool lower,
		   bool primary, double confidence, double *base, double *cand)
{
	size_t nb = gather(rounds, "baseline", key, base), nc = gather(rounds, "candidate", key, cand);
	nt_summary sb, sc;
	nt_mwu u;
	nt_bench_effect e;
	if (!nb || !nc)
		return NULL;
	if (nt_stats_summary(base, nb, &sb) < 0 || nt_stats_summary(cand, nc, &sc) < 0 ||
	    nt_stats_mwu(cand, nc, base, nb, &u) < 0 || nt_bench_effect_of(base, nb, cand, nc, confidence, &e) < 0)
		return NULL;
	/* The verdict as the primary's, in this figure's direction, without
	 * a gate. */
	nt_bench_gates g = { .lower_is_better = lower, .require_gain = -1, .confidence = confidence };
	nt_bench_verdict v;
	nt_bench_judge(sb.median, sc.median, u.p, &e, &g, &v);
	return json_pack("{s:s,s:s,s:s,s:b,s:b,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:f,s:b,s:o,s:s}", "name", name, "unit",
			 unit, "better", lower ? "lower" : "higher", "primary", primary, "gated", primary,
			 "baseline_rounds", (json_int_t)nb, "candidate_rounds", (json_int_t)nc, "baseline_median",
			 nt_bench_real_or_null(sb.median), "candidate_median", nt_bench_real_or_null(sc.median), "ratio",
			 e.defined ? nt_bench_real_or_null(e.ratio) : json_null(), "ratio_lo",
			 e.defined && e.bounded ? nt_bench_real_or_null(e.lo) : json_null(), "ratio_hi",
			 e.defined && e.bounded ? nt_bench_real_or_null(e.hi) : json_null(), "confidence",
			 e.defined && e.bounded ? e.confidence : confidence, "exact", e.exact, "p_value",
			 nt_bench_real_or_null(u.p), "verdict", v.verdict);
}

json_t *nt_bench_metrics_json(const json_t *rounds, const char *primary, const char *unit, bool lower,
			      const nt_metric_others *others, double confidence)
{
	size_t n = json_array_size(rounds) + 1;
	double *base = malloc(n * sizeof(*base)), *cand = malloc(n * sizeof(*cand));
	json_t *out = json_array();
	if (!base || !cand || !out) {
		json_decref(out);
		out = NULL;
		goto done;
	}
	json_array_append_new(out, one(rounds, primary, NULL, unit, lower, true, confidence, base, cand));
	for (size_t i = 0; others && i < others->n; i++)
		json_array_append_new(out, one(rounds, others->m[i].name, others->m[i].name, others->m[i].unit,
					       others->m[i].lower_is_better, false, confidence, base, cand));
done:
	free(base);
	free(cand);
	return out;
}

const char *nt_bench_primary_name(enum nt_metric_source source, const char *arg)
{
	if (source == NT_METRIC_JSON)
		return arg ? arg : "the figure";
	return source == NT_METRIC_REGEX ? "the figure" : "throughput";
}

static void cell(char *buf, size_t size, const json_t *v, const char *unit)
{
	if (json_is_number(v))
		nt_bench_fmt_value(buf, size, json_number_value(v), unit);
	else
		snprintf(buf, size, "-");
}

void nt_bench_metrics_header(FILE *f)
{
	fprintf(f, "%-20s  %6s  %7s  %14s  %14s  %9s  %-22s  %7s  %s\n", "figure", "better", "rounds", "baseline",
		"candidate", "cand/base", "interval", "p", "verdict");
}

size_t nt_bench_metrics_rows(const json_t *metrics, FILE *f)
{
	size_t i, shown = 0;
	const json_t *m;
	json_array_foreach(metrics, i, m) {
		if (json_is_true(json_object_get(m, "primary")))
			continue;
		const char *unit = json_string_value(json_object_get(m, "unit")) ?: "";
		char a[48], b[48], ratio[24], ci[48], p[16];
		shown++;
		cell(a, sizeof(a), json_object_get(m, "baseline_median"), unit);
		cell(b, sizeof(b), json_object_get(m, "candidate_median"), unit);
		const json_t *r = json_object_get(m, "ratio"), *lo = json_object_get(m, "ratio_lo"),
			     *hi = json_object_get(m, "ratio_hi");
		if (json_is_number(r))
			snprintf(ratio, sizeof(ratio), "%.4g", json_number_value(r));
		else
			snprintf(ratio, sizeof(ratio), "-");
		if (json_is_number(lo) && json_is_number(hi))
			snprintf(ci, sizeof(ci), "%.4g%% [%.4g, %.4g]",
				 100 * json_number_value(json_object_get(m, "confidence")), json_number_value(lo),
				 json_number_value(hi));
		else
			snprintf(ci, sizeof(ci), "%s", json_is_number(r) ? "too few rounds" : "some figure is 0");
		snprintf(p, sizeof(p), "%.3g", json_number_value(json_object_get(m, "p_value")));
		char rounds[24];
		snprintf(rounds, sizeof(rounds), "%lld+%lld",
			 (long long)json_integer_value(json_object_get(m, "baseline_rounds")),
			 (long long)json_integer_value(json_object_get(m, "candidate_rounds")));
		fprintf(f, "%-20s  %6s  %7s  %14s  %14s  %9s  %-22s  %7s  %s\n",
			json_string_value(json_object_get(m, "name")), json_string_value(json_object_get(m, "better")),
			rounds, a, b, ratio, ci, p, json_string_value(json_object_get(m, "verdict")));
	}
	return shown;
}

void nt_bench_metrics_print(const json_t *metrics, const char *primary, FILE *f)
{
	size_t i;
	const json_t *m;
	json_array_foreach(metrics, i, m) {
		if (json_is_true(json_object_get(m, "primary")))
			continue;
		fprintf(f, "\nthe other figures of COMMAND's output, not gated (--require-gain and "
			   "--require-no-loss judge %s alone):\n",
			primary);
		nt_bench_metrics_header(f);
		nt_bench_metrics_rows(metrics, f);
		return;
	}
}
