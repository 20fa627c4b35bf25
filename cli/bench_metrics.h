/* SPDX-License-Identifier: Apache-2.0 */
/* Every figure of bench-run --compare's rounds compared between the arms
 * (cli/cmd_bench_compare.c): the primary one, which the gates judge, and
 * the others COMMAND's output held (cli/metric.h: iperf3's retransmits and
 * CPU, netperf's latency percentiles, neper's latencies), which are shown
 * beside it and never gated on. Each the way the primary is: the arms'
 * medians, the candidate/baseline ratio (Hodges-Lehmann on the logs) with
 * its interval, the two-sided Mann-Whitney p-value and the verdict in the
 * figure's own direction. The comparison is pure (rounds in, JSON out);
 * the table is the edge's. */
#ifndef NT_CLI_BENCH_METRICS_H
#define NT_CLI_BENCH_METRICS_H

#include "cli/metric.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* The figures of ROUNDS (a --compare report's "rounds": objects with
 * "arm" "baseline" or "candidate", "block" (null for the warm-up round,
 * which counts in no arm), "value" and "metrics" {name: number}): the
 * primary, each round's "value", named PRIMARY in UNIT with LOWER its
 * direction, then each of OTHERS. An array of {name, unit, better
 * ("higher", "lower"), primary, gated (the primary's alone), baseline_rounds,
 * candidate_rounds, baseline_median, candidate_median, ratio, ratio_lo,
 * ratio_hi (null when not every figure is above 0 or too few rounds bound
 * it), confidence, exact, p_value, verdict}, a figure without a round in
 * each arm left out. A new reference; NULL without memory. */
json_t *nt_bench_metrics_json(const json_t *rounds, const char *primary, const char *unit, bool lower,
			      const nt_metric_others *others, double confidence);

/* What the primary figure is called for SOURCE (ARG: --metric-json's
 * path, borrowed): "throughput" for the benchmarks' readers, the path for
 * a JSON path, "the figure" for a regular expression's. */
const char *nt_bench_primary_name(enum nt_metric_source source, const char *arg);

/* The other figures of METRICS (as above) as a table on F, said to be
 * beside the gates, which judge PRIMARY alone; nothing when there are
 * none. */
void nt_bench_metrics_print(const json_t *metrics, const char *primary, FILE *f);
/* Its parts: the column header, and the rows of the other figures of
 * METRICS (how many). */
void nt_bench_metrics_header(FILE *f);
size_t nt_bench_metrics_rows(const json_t *metrics, FILE *f);

#endif
