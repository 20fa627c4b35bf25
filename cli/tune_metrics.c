/* SPDX-License-Identifier: Apache-2.0 */
/* The other figures of COMMAND's output in a tune run (iperf3's
 * retransmits and CPU, netperf's latency percentiles, neper's latencies:
 * cli/metric.h), per candidate against the baseline's rounds of the sweeps
 * the candidate ran in, the way bench-run --compare shows them beside its
 * primary figure (cli/bench_metrics.c). The race and Holm judge the
 * primary alone: these say what a winner may cost, never decide. */
#include "cli/bench_metrics.h"
#include "cli/tune_run.h"

#include <jansson.h>
#include <stdbool.h>

/* Whether A ran a round in SWEEP. */
static bool ran_in(const nt_tune_arm *a, size_t sweep)
{
	for (size_t j = 0; j < a->n; j++)
		if (a->sweep[j] == sweep)
			return true;
	return false;
}

/* Round RR of the report as an arm's round of bench_metrics: "arm" WHO,
 * its sweep as the block, its value and other figures. */
static int add_round(json_t *out, const json_t *rr, const char *who)
{
	json_t *m = json_object_get(rr, "metrics");
	return json_array_append_new(out, json_pack("{s:s,s:O,s:O,s:O}", "arm", who, "block",
						    json_object_get(rr, "sweep"), "value",
						    json_object_get(rr, "value"), "metrics", m ? m : json_null()));
}

json_t *nt_tune_metrics(const nt_tune_run *t, const nt_tune_arm *a, const char *primary)
{
	const nt_tune_arm *base = &t->arms[0];
	json_t *rounds = json_array(), *rr, *out = NULL;
	size_t i;
	if (!rounds)
		return NULL;
	json_array_foreach(t->rounds, i, rr) {
		if (!json_is_number(json_object_get(rr, "value")))
			continue;
		json_int_t id = json_integer_value(json_object_get(rr, "candidate"));
		size_t sweep = (size_t)json_integer_value(json_object_get(rr, "sweep"));
		int r = 0;
		if (id == a->id)
			r = add_round(rounds, rr, "candidate");
		else if (id == base->id && ran_in(a, sweep))
			r = add_round(rounds, rr, "baseline");
		if (r < 0)
			goto out;
	}
	out = nt_bench_metrics_json(rounds, primary, t->run.unit, t->lower, &t->run.others, t->confidence);
out:
	json_decref(rounds);
	return out;
}
