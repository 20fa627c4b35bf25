/* SPDX-License-Identifier: Apache-2.0 */
/* The verdict of an A/B benchmark run (nettune bench-run --compare): the
 * ratio of the arms' medians, the gain in the direction that is better,
 * and whether the CI gates (--require-gain, --require-no-loss) hold. Pure:
 * numbers in, numbers and words out. */
#ifndef NT_CLI_BENCH_JUDGE_H
#define NT_CLI_BENCH_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

/* The significance level of the gates. */
#define NT_BENCH_ALPHA 0.05

typedef struct nt_bench_gates {
	bool lower_is_better;
	double require_gain; /* a fraction (0.05 for 5%); negative: not asked */
	bool require_no_loss;
} nt_bench_gates;

typedef struct nt_bench_verdict {
	double ratio; /* candidate median / baseline median; NAN when the baseline's is 0 */
	/* How much better the candidate is, as a fraction: ratio - 1 when
	 * higher is better, 1 - ratio when lower is; negative when worse. */
	double gain;
	const char *verdict; /* "better", "worse", "no significant difference" */
	int exit_code; /* 0, or NT_EXIT_GAIN_TOO_SMALL, _NOT_SIGNIFICANT, _LOSS */
	char gate[512]; /* what the gates found, for people ("" when none asked) */
} nt_bench_verdict;

/* Judge BASE_MEDIAN and CAND_MEDIAN with the two-sided p-value P under G. */
void nt_bench_judge(double base_median, double cand_median, double p, const nt_bench_gates *g, nt_bench_verdict *out);

/* --require-gain's value: "5%", "5" (both 5%) or "0.5%", from 0 to 1000%,
 * into *OUT as a fraction. Returns 0 or -EINVAL. */
int nt_bench_parse_gain(const char *s, double *out);

#endif
