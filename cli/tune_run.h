/* SPDX-License-Identifier: Apache-2.0 */
/* The state of one nettune tune run, shared by its race (cli/cmd_tune.c)
 * and its last step, the best levels combined (cli/tune_combined.c). Not a
 * public API: the edge's, where these print. */
#ifndef NT_CLI_TUNE_RUN_H
#define NT_CLI_TUNE_RUN_H

#include "cli/bench.h"
#include "cli/tune.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nt_tune_arm {
	int id; /* 0: the baseline; candidates from 1 */
	char label[512]; /* for people: "candidate 2 (big.json)" */
	char name[64]; /* in the rounds: "baseline", "candidate 2" */
	json_t *profile; /* NULL: the host as it is */
	json_t *entry; /* the report's entry (borrowed from the report) */
	json_t *key; /* the plan's changes (nt_tune_plan_key) */
	double *values;
	size_t *sweep; /* the sweep of each figure */
	size_t n, cap;
	bool merged, dropped;
	double wall_s; /* the time its rounds took, apply and revert included */
} nt_tune_arm;

typedef struct nt_tune_run {
	const cli_opts *o;
	nt_ctx ctx;
	nt_bench_rounds run;
	nt_tune_arm *arms; /* [0] the baseline */
	size_t narms, max_arms;
	double confidence, budget_s;
	bool lower;
	uint64_t seed, rng;
	json_t *report, *rounds, *decisions;
	json_t *space; /* --space's document, NULL without */
	const char *design; /* nt_tune_expand's mode, NULL without a space */
	int round_no;
	size_t sweeps; /* the last sweep's number */
	double start; /* when the first round began: the budget counts from it */
	double rounds_wall_s; /* every round's wall time, for the budget */
	double longest_s; /* the longest round's, for the confirm window */
} nt_tune_run;

/* CLOCK_MONOTONIC in seconds. */
double nt_tune_now(void);

/* A decision about A, said on stderr and kept in the report's
 * "decisions" and A's entry. */
void nt_tune_decide(nt_tune_run *t, const nt_tune_arm *a, const char *decision, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Plan A's profile on the agent. Returns 0, -1 when the agent refused it
 * (said, naming A and the JSON paths), -2 when no answer came. */
int nt_tune_plan_arm(nt_tune_run *t, nt_tune_arm *a);

/* One round of A in SWEEP, recorded in the report's "rounds". Returns as
 * nt_bench_round. */
int nt_tune_round(nt_tune_run *t, nt_tune_arm *a, size_t sweep);

/* Fisher-Yates on IDX (N entries) from T's sequence. */
void nt_tune_shuffle(nt_tune_run *t, size_t *idx, size_t n);

/* The baseline's figures of the sweeps A ran in, into *OUT (the caller
 * frees). Returns how many, or -1 (no memory). */
long nt_tune_concurrent_base(const nt_tune_arm *base, const nt_tune_arm *a, double **out);

/* Every figure of A's rounds against the baseline's rounds of the sweeps
 * A ran in (cli/tune_metrics.c), as bench-run --compare's "metrics"
 * (cli/bench_metrics.h): PRIMARY (its name) first, then the other figures
 * COMMAND printed. A new reference; NULL without memory. */
json_t *nt_tune_metrics(const nt_tune_run *t, const nt_tune_arm *a, const char *primary);

/* The best levels combined (docs/tune.md): after a race of a space's
 * candidates one factor at a time, each factor's best level is the one
 * with the best estimated ratio among its levels whose interval against
 * the baseline's rounds of their sweeps, at --confidence, lies on the
 * better side of 1. The race drops a factor's good level as soon as
 * another factor's is better, before Holm could judge it, so the Holm
 * outcomes cannot pick the levels; the pick is a heuristic, and the
 * evidence is the step's. When at least two factors have such a level,
 * one more candidate with each factor's best (nt_tune_combine) is planned
 * and raced as its own step against the winner *W and the baseline, in
 * fresh sweeps within the budget left; shown better than both (Holm over
 * the two comparisons), it becomes the winner: *W then points at it
 * (added to T's arms). Said and recorded in the report's "combined" either
 * way (why it was not raced, too). Returns 0, or NT_BENCH_FAILED or 128+N
 * when a round stopped the run. */
int nt_tune_combined(nt_tune_run *t, nt_tune_arm **w);

#endif
