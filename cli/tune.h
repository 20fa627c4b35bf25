/* SPDX-License-Identifier: Apache-2.0 */
/* The pure parts of nettune tune (cli/cmd_tune.c): a search space's
 * expansion into candidate profiles (cli/tune_space.c) and the race's
 * decisions on recorded figures (cli/tune_race.c): which candidate is
 * dropped as shown worse than the best so far, and at the end which one,
 * if any, is shown better than the baseline with the confidence corrected
 * for the number of candidates compared (Holm). Numbers and JSON in,
 * numbers and JSON out: nothing here prints, reads a file or talks to the
 * agent. */
#ifndef NT_CLI_TUNE_H
#define NT_CLI_TUNE_H

#include "cli/bench_judge.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A space expands to at most this many candidates unless it says its own
 * "max_candidates" (1 to NT_TUNE_MAX_CANDIDATES). */
#define NT_TUNE_DEFAULT_CAP 32
#define NT_TUNE_MAX_CANDIDATES 128

/* Set VALUE (a new reference is taken) at PATH inside PROFILE (changed in
 * place). PATH is a profile's field path as the agent's errors name them,
 * without "$.": segments parted by '.', array elements as [N], a key with
 * dots or brackets as ["net.core.rmem_max"] or ['net.core.rmem_max'] (as
 * the agent's errors spell it); after a top-level "sysctl."
 * the rest is one key (sysctl names are dotted). Missing objects on the
 * way are made; a missing array element is an error. Returns 0, -EINVAL
 * (a path that cannot be parsed, or that goes through a value of the
 * wrong type) or -ENOENT (an array element the profile does not have),
 * with why in ERR. */
int nt_tune_set_path(json_t *profile, const char *path, json_t *value, char *err, size_t errsize);

/* SPACE expanded into candidates: a new array of objects {"label":
 * "rings[0].rx=4096, sysctl.net.core.rmem_max=16777216", "assignment":
 * {path: value, ...}, "profile": the space's "base" with each assigned
 * value set and "name" BASE-NAME-N (tune-N without one)} in *OUT (the
 * caller's), and the design in *MODE: "factorial" when every combination
 * of the parameters' values fits the cap, else "one-factor-at-a-time"
 * (each value of each parameter alone on the base). Returns 0, or -EINVAL
 * with ERR naming the JSON path of what is wrong in SPACE ($.parameters[1]
 * .values: ...), or -E2BIG when even one factor at a time exceeds the cap. */
int nt_tune_expand(const json_t *space, json_t **out, const char **mode, char *err, size_t errsize);

/* The best levels combined, after a race of SPACE's candidates one factor
 * at a time (nt_tune_expand's "one-factor-at-a-time", N candidates, each
 * parameter's values in turn): for each parameter the level of its
 * candidates shown better than the baseline (WON[i], candidate i from 0;
 * the caller's test) with the best estimated ratio RATIO[i] against it (the highest, the
 * lowest when LOWER), all of them set on the space's base as one more
 * candidate as nt_tune_expand makes them (number N + 1), into *OUT (the
 * caller's). *OUT stays NULL when fewer than two parameters have a level
 * shown better: one factor's winner is already a candidate. Returns 0,
 * -EINVAL (SPACE does not expand to N candidates one factor at a time) or
 * -ENOMEM, with why in ERR. */
int nt_tune_combine(const json_t *space, size_t n, const bool *won, const double *ratio, bool lower, json_t **out,
		    char *err, size_t errsize);

/* For each of the N documents DOCS[i] (plans' steps, profiles), the index
 * of the first document equal to it (json_equal), i itself for the first
 * of its kind, into SAME[i]. */
void nt_tune_same(json_t *const *docs, size_t n, size_t *same);

/* A plan's steps reduced to what makes two plans the same change:
 * [[kind, target, after], ...] in the plan's order. New reference. */
json_t *nt_tune_plan_key(const json_t *steps);

/* The arm whose median is best (highest, or lowest when LOWER) among the
 * NARMS arms whose ALIVE is set and that have a figure; ties: the lower
 * index. Returns the index, or -1 when none has a figure. */
int nt_tune_best(double *const *values, const size_t *n, const bool *alive, size_t narms, bool lower);

/* Is a candidate (CAND, NC figures) shown worse than the best arm (BEST,
 * NB figures) at CONFIDENCE? Its effect interval against BEST entirely on
 * the worse side of 1 (below when higher is better, above when LOWER).
 * *E: the effect. Returns 1 (shown worse), 0 (not), or a negative errno. */
int nt_tune_shown_worse(const double *cand, size_t nc, const double *best, size_t nb, double confidence, bool lower,
			nt_bench_effect *e);

enum nt_tune_outcome {
	NT_TUNE_NOT_SHOWN, /* its interval holds 1, or Holm stopped before it */
	NT_TUNE_BETTER, /* shown better than the baseline at its Holm level */
	NT_TUNE_WORSE, /* shown worse than the baseline at its Holm level */
	NT_TUNE_UNTESTED, /* too few figures for any interval */
};

typedef struct nt_tune_holm {
	size_t step; /* 1 for the smallest p, ... (Holm's order) */
	double p; /* the two-sided Mann-Whitney p against the baseline */
	double level; /* the confidence its interval was taken at: 1 - (1 - C) / (M - step + 1) */
	nt_bench_effect effect; /* candidate/baseline at LEVEL */
	enum nt_tune_outcome outcome;
	bool stopped; /* Holm stopped at an earlier step: not tested at all */
} nt_tune_holm;

/* Holm's step-down procedure over M candidates, each against the
 * baseline's figures BASE[i] (NB[i] of them: the baseline's rounds of the
 * sweeps candidate i ran in, so that a candidate dropped early is not
 * judged against rounds taken later on a host that drifted): CANDS[i]
 * (N[i] figures) ordered by their p-value, the one at step j (from 1)
 * judged by its effect interval at confidence 1 - (1 - CONFIDENCE) / (M -
 * j + 1); the first whose interval holds 1 (or has too few figures for
 * one) and every one after it are not shown (family-wise error at most 1
 * - CONFIDENCE). OUT[i] is candidate i's. *WINNER: the candidate shown
 * better with the best estimated ratio, -1 when none. Returns 0 or a
 * negative errno. */
int nt_tune_holm_judge(double *const *base, const size_t *nb, double *const *cands, const size_t *n, size_t m,
		       double confidence, bool lower, nt_tune_holm *out, int *winner);

/* The fewest rounds an arm needs for the strictest of M Holm levels at
 * CONFIDENCE (1 - (1 - C) / M): 5 for three candidates at 0.95. */
size_t nt_tune_min_rounds(size_t m, double confidence);

/* "20m", "90s", "1h", "1h30m", "45" (seconds) into *OUT seconds, 1 s to 7
 * days. Returns 0 or -EINVAL. */
int nt_tune_parse_budget(const char *s, double *out);

#endif
