/* SPDX-License-Identifier: Apache-2.0 */
/* cli/bench_metrics.c: every figure of bench-run --compare's recorded
 * rounds compared between the arms, each in its own direction, the
 * warm-up round in neither arm, the primary marked as the one gated. */
#include "cli/bench_metrics.h"
#include "base/stats.h"
#include "cli/bench_judge.h"
#include "harness.h"

#include <math.h>

#define NEAR(a, b) CHECK_MSG(fabs((a) - (double)(b)) <= 1e-9 * fabs((double)(b)), "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))

/* Four blocks and a warm-up: the candidate faster, with more
 * retransmits and less CPU; "lost" only in the baseline's rounds. */
static const char rounds_json[] =
	"["
	"{\"arm\": \"baseline\", \"block\": null, \"value\": 1, \"metrics\": {\"retransmits\": 1000, \"cpu_host_percent\": 1}},"
	"{\"arm\": \"baseline\", \"block\": 1, \"value\": 10, \"metrics\": {\"retransmits\": 0, \"cpu_host_percent\": 50, \"lost\": 1}},"
	"{\"arm\": \"candidate\", \"block\": 1, \"value\": 20, \"metrics\": {\"retransmits\": 5, \"cpu_host_percent\": 40}},"
	"{\"arm\": \"candidate\", \"block\": 2, \"value\": 22, \"metrics\": {\"retransmits\": 7, \"cpu_host_percent\": 41}},"
	"{\"arm\": \"baseline\", \"block\": 2, \"value\": 11, \"metrics\": {\"retransmits\": 2, \"cpu_host_percent\": 52}},"
	"{\"arm\": \"baseline\", \"block\": 3, \"value\": 12, \"metrics\": {\"retransmits\": 1, \"cpu_host_percent\": 51}},"
	"{\"arm\": \"candidate\", \"block\": 3, \"value\": 21, \"metrics\": {\"retransmits\": 6, \"cpu_host_percent\": 39}},"
	"{\"arm\": \"candidate\", \"block\": 4, \"value\": 23, \"metrics\": {\"retransmits\": 8, \"cpu_host_percent\": 42}},"
	"{\"arm\": \"baseline\", \"block\": 4, \"value\": 13, \"metrics\": {\"retransmits\": 3, \"cpu_host_percent\": 53}}"
	"]";

static const json_t *find(const json_t *metrics, const char *name)
{
	size_t i;
	const json_t *m;
	json_array_foreach(metrics, i, m)
		if (!strcmp(json_string_value(json_object_get(m, "name")), name))
			return m;
	return NULL;
}

static double num(const json_t *m, const char *key)
{
	const json_t *v = json_object_get(m, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

int main(void)
{
	json_t *rounds = json_loads(rounds_json, 0, NULL);
	nt_metric_others o = { .n = 3 };
	snprintf(o.m[0].name, sizeof(o.m[0].name), "retransmits");
	snprintf(o.m[1].name, sizeof(o.m[1].name), "cpu_host_percent");
	snprintf(o.m[1].unit, sizeof(o.m[1].unit), "%%");
	snprintf(o.m[2].name, sizeof(o.m[2].name), "lost");
	for (size_t i = 0; i < 3; i++)
		o.m[i].lower_is_better = true;
	CHECK(rounds != NULL);
	json_t *m = nt_bench_metrics_json(rounds, "throughput", "bits/s", false, &o, 0.95);
	CHECK(m != NULL);
	CHECK_INT(json_array_size(m), 3); /* "lost" has no candidate round: left out */

	const json_t *t = find(m, "throughput");
	CHECK(t && json_is_true(json_object_get(t, "primary")) && json_is_true(json_object_get(t, "gated")));
	CHECK(t == json_array_get(m, 0));
	CHECK_INT(num(t, "baseline_rounds"), 4); /* the warm-up's 1 counts in no arm */
	NEAR(num(t, "baseline_median"), 11.5);
	NEAR(num(t, "candidate_median"), 21.5);
	/* 4 + 4 rounds wholly apart: exact p = 2 / C(8,4) = 2/70. */
	NEAR(num(t, "p_value"), 2.0 / 70);
	CHECK_STR(json_string_value(json_object_get(t, "verdict")), "better");
	CHECK(num(t, "ratio_lo") > 1 && num(t, "ratio") > num(t, "ratio_lo") && num(t, "ratio_hi") > num(t, "ratio"));

	const json_t *r = find(m, "retransmits");
	CHECK(r && json_is_false(json_object_get(r, "gated")));
	CHECK_STR(json_string_value(json_object_get(r, "better")), "lower");
	NEAR(num(r, "candidate_median"), 6.5);
	CHECK_STR(json_string_value(json_object_get(r, "verdict")), "worse"); /* more, and lower is better */
	CHECK(json_is_null(json_object_get(r, "ratio"))); /* a round of 0: no ratio */
	NEAR(num(r, "p_value"), 2.0 / 70);

	const json_t *c = find(m, "cpu_host_percent");
	CHECK_STR(json_string_value(json_object_get(c, "verdict")), "better"); /* less CPU */
	CHECK_STR(json_string_value(json_object_get(c, "unit")), "%");
	CHECK(num(c, "ratio") < 1 && num(c, "ratio_hi") < 1);
	/* The same interval as the estimator gives on these figures. */
	double b[] = { 50, 52, 51, 53 }, k[] = { 40, 41, 39, 42 };
	nt_bench_effect e;
	CHECK_INT(nt_bench_effect_of(b, 4, k, 4, 0.95, &e), 0);
	NEAR(num(c, "ratio"), e.ratio);
	NEAR(num(c, "ratio_lo"), e.lo);
	NEAR(num(c, "ratio_hi"), e.hi);

	/* The table: the other figures only, named as not gated. */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	nt_bench_metrics_print(m, "throughput", f);
	fclose(f);
	CHECK_MSG(buf && strstr(buf, "judge throughput alone") && strstr(buf, "retransmits") &&
			  strstr(buf, "cpu_host_percent") && !strstr(buf, "\nthroughput "),
		  "%s", buf ? buf : "");
	free(buf);

	/* Without other figures, nothing is printed. */
	json_t *only = nt_bench_metrics_json(rounds, "the figure", "", true, NULL, 0.95);
	CHECK_INT(json_array_size(only), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(only, 0), "verdict")), "worse");
	buf = NULL;
	f = open_memstream(&buf, &len);
	nt_bench_metrics_print(only, "the figure", f);
	fclose(f);
	CHECK_INT(len, 0);
	free(buf);
	CHECK_STR(nt_bench_primary_name(NT_METRIC_JSON, "end.x"), "end.x");
	CHECK_STR(nt_bench_primary_name(NT_METRIC_AUTO, NULL), "throughput");
	json_decref(only);
	json_decref(m);
	json_decref(rounds);
	TEST_MAIN_END();
}
