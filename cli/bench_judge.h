/* SPDX-License-Identifier: Apache-2.0 */
/* The verdict of an A/B benchmark run (nettune bench-run --compare): the
 * effect of the candidate as a ratio to the baseline with its confidence
 * interval, the gain in the direction that is better, and whether the CI
 * gates (--require-gain, --require-no-loss) are shown to hold. A gate
 * passes only on evidence: the interval must clear it; an interval that
 * straddles it is "not shown", which is not a pass. Pure: numbers in,
 * numbers and words out. */
#ifndef NT_CLI_BENCH_JUDGE_H
#define NT_CLI_BENCH_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

/* The significance level of the p-value's verdict ("better", "worse"). */
#define NT_BENCH_ALPHA 0.05
/* The default confidence of the interval, and --require-no-loss's
 * default margin: a loss up to 2% is no loss. */
#define NT_BENCH_CONFIDENCE 0.95
#define NT_BENCH_LOSS_MARGIN 0.02

typedef struct nt_bench_gates {
	bool lower_is_better;
	double require_gain; /* a fraction (0.05 for 5%); negative: not asked */
	bool require_no_loss;
	double loss_margin; /* a fraction: --require-no-loss passes above -margin */
	double confidence; /* of the interval, 0.5 to 0.999 */
} nt_bench_gates;

/* The candidate/baseline ratio, estimated the Hodges-Lehmann way on the
 * logarithms of the figures (so it reads as a ratio), with its interval. */
typedef struct nt_bench_effect {
	bool defined; /* every figure positive: a ratio has a meaning */
	double ratio, lo, hi; /* lo 0 and hi +inf when unbounded */
	double confidence; /* the level the interval has; 0 when unbounded */
	bool bounded, exact;
	size_t rounds; /* the smaller arm's; paired: the blocks */
	double log_sd; /* the logs' spread within the arms (pooled standard deviation);
			* paired: the standard deviation of the blocks' log-ratios */
	bool paired; /* over blocks (nt_bench_effect_paired) */
} nt_bench_effect;

/* The effect of CAND (NC figures) against BASE (NB) at CONFIDENCE.
 * Returns 0, -EINVAL or -ENOMEM; figures not all positive are not an
 * error: OUT->defined is false. */
int nt_bench_effect_of(const double *base, size_t nb, const double *cand, size_t nc, double confidence,
		       nt_bench_effect *out);

/* The effect over N blocks, each with one baseline figure BASE[i] and one
 * candidate figure CAND[i]: the Hodges-Lehmann centre (Walsh averages) of
 * the blocks' log-ratios log(CAND[i] / BASE[i]) with its interval from the
 * signed-rank distribution (base/stats.h, nt_stats_hl_paired). A drift
 * shared by a block's two rounds falls out of its ratio, so on a drifting
 * machine this interval is narrower than the two-sample one. Returns as
 * nt_bench_effect_of. */
int nt_bench_effect_paired(const double *base, const double *cand, size_t n, double confidence,
			   nt_bench_effect *out);

typedef struct nt_bench_verdict {
	double ratio; /* candidate median / baseline median; NAN when the baseline's is 0 */
	/* How much better the candidate is, as a fraction: ratio - 1 when
	 * higher is better, 1 - ratio when lower is; negative when worse. */
	double gain;
	/* The same of the effect's estimate and interval (NAN when the
	 * effect is not defined; -inf/+inf when unbounded). */
	double gain_est, gain_lo, gain_hi;
	const char *verdict; /* "better", "worse", "no significant difference" (the p-value's) */
	int exit_code; /* 0, or NT_EXIT_GAIN_TOO_SMALL, _NOT_SHOWN, _LOSS */
	/* The rounds per arm the observed spread would need for the first
	 * gate not shown; 0 when none is needed or more rounds would not do. */
	size_t rounds_needed;
	char gate[1024]; /* what the gates found, for people ("" when none asked) */
} nt_bench_verdict;

/* Judge BASE_MEDIAN and CAND_MEDIAN with the two-sided p-value P and the
 * effect E under G. */
void nt_bench_judge(double base_median, double cand_median, double p, const nt_bench_effect *e,
		    const nt_bench_gates *g, nt_bench_verdict *out);

/* --require-gain's and --loss-margin's value: "5%", "5" (both 5%) or
 * "0.5%", from 0 to 1000%, into *OUT as a fraction. Returns 0 or -EINVAL. */
int nt_bench_parse_gain(const char *s, double *out);

/* --confidence: "0.95" or "95%", from 50% to 99.9%, into *OUT as a
 * fraction. Returns 0 or -EINVAL. */
int nt_bench_parse_confidence(const char *s, double *out);

#endif
