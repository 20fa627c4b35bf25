/* SPDX-License-Identifier: Apache-2.0 */
/* Statistics of benchmark rounds (nettune bench-run --compare): a sample's
 * median and spread, and whether two samples differ by more than noise, by
 * the two-sided Mann-Whitney U test. Pure functions of their arguments: no
 * I/O, the inputs are never changed, nothing is kept between calls. */
#ifndef NT_BASE_STATS_H
#define NT_BASE_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* Samples larger than this are refused (-E2BIG): bench rounds are few. */
#define NT_STATS_MAX_N 100000
/* The exact U distribution is used up to this many values in each sample
 * (without ties); beyond it the normal approximation is as good. */
#define NT_STATS_EXACT_MAX 50

typedef struct nt_summary {
	size_t n;
	double min, q1, median, q3, max;
	double iqr; /* q3 - q1 */
} nt_summary;

/* The quantile P (0..1) of the N ascending values SORTED, interpolated
 * linearly between closest ranks (R's type 7, numpy's default). N > 0. */
double nt_stats_quantile_sorted(const double *sorted, size_t n, double p);

/* The N values X summarised into *OUT. Returns 0, -EINVAL (N == 0 or a
 * value not finite), -E2BIG or -ENOMEM. */
int nt_stats_summary(const double *x, size_t n, nt_summary *out);

typedef struct nt_mwu {
	double u; /* U of the first sample: pairs (a, b) with a > b, ties half */
	double p; /* two-sided p-value */
	bool exact; /* from the exact distribution of U (small samples) */
	bool ties; /* some value occurs in both or twice */
} nt_mwu;

/* The two-sided Mann-Whitney U test of samples A (NA values) and B (NB).
 * Exact when NA, NB <= NT_STATS_EXACT_MAX: p = 2 min(P(U <= u),
 * P(U >= u)), at most 1, from the distribution of U over every way to
 * split the pooled values, ties as they are (the exact conditional test:
 * three equal rounds against three other equal ones give 0.1, as without
 * ties, not the 0.047 of the normal approximation). Otherwise the normal
 * approximation with the tie correction of the variance and a continuity
 * correction of 0.5; when every value is the same, p = 1. Returns 0,
 * -EINVAL (an empty sample, a value not finite), -E2BIG or -ENOMEM. */
int nt_stats_mwu(const double *a, size_t na, const double *b, size_t nb, nt_mwu *out);

/* The smallest two-sided p-value the exact test can give samples of M and
 * N values: 2 / C(M+N, M), at most 1. 3 + 3 rounds give 0.1, so no
 * difference between them is ever significant at 0.05. */
double nt_stats_mwu_min_p(size_t m, size_t n);

/* The fewest values in each of two equal samples for which the exact test
 * can reach CONFIDENCE (0.5 to 0.9999): 4 for 0.95. */
size_t nt_stats_min_rounds(double confidence);

/* The standard normal quantile: z with P(Z <= z) = P (0 < P < 1). */
double nt_stats_norm_quantile(double p);

/* The shift of sample A against sample B (A - B) with its confidence
 * interval, the Hodges-Lehmann way: the estimate is the median of the NA*NB
 * differences a_i - b_j, and the interval runs from the k-th smallest to
 * the k-th largest of them, k taken from the distribution of the
 * Mann-Whitney U so that the interval holds the true shift with at least
 * CONFIDENCE. Exact when there are no ties and NA, NB <= NT_STATS_EXACT_MAX
 * ("confidence" is then the level reached, which may exceed the one
 * asked); otherwise the normal approximation with the tie correction.
 * When the samples are too small to reach CONFIDENCE at all, the interval
 * is unbounded (lo -inf, hi +inf, bounded false). Given logarithms, the
 * shift is a log ratio. */
typedef struct nt_shift {
	double estimate;
	double lo, hi;
	double confidence; /* the level the interval has; 0 when unbounded */
	bool bounded;
	bool exact;
} nt_shift;

/* Returns 0, -EINVAL (an empty sample, a value not finite, CONFIDENCE
 * outside 0.5..0.9999), -E2BIG (over 10^7 differences) or -ENOMEM. */
int nt_stats_hl_shift(const double *a, size_t na, const double *b, size_t nb, double confidence, nt_shift *out);

/* The exact P(U <= u) for samples of M and N values without ties. Returns
 * a probability, or a negative number when M or N is 0 or over
 * NT_STATS_EXACT_MAX, or memory ran out. */
double nt_stats_mwu_cdf(size_t m, size_t n, double u);

/* Paired samples (bench-run --compare --paired: one candidate/baseline
 * log-ratio per block of rounds). The two-sided Wilcoxon signed-rank test
 * of N differences D against 0. Differences of 0 are dropped (Wilcoxon's
 * own rule; "zeros" says how many) and the others ranked by their absolute
 * value, equal ones at their midrank. Exact when at most
 * NT_STATS_EXACT_MAX differences remain: p = 2 min(P(T+ <= t),
 * P(T+ >= t)), at most 1, over the 2^n ways to give the ranks signs, ties
 * as they are (the exact conditional test, as nt_stats_mwu's). Otherwise
 * the normal approximation with the tie correction of the variance and a
 * continuity correction of 0.5. No difference left: p = 1. */
typedef struct nt_wsr {
	double t_plus; /* the sum of the (mid)ranks of the positive differences */
	double p; /* two-sided */
	size_t n; /* the differences ranked (not 0) */
	size_t zeros;
	bool exact;
	bool ties; /* some absolute value occurs twice */
} nt_wsr;

/* Returns 0, -EINVAL (N == 0, a value not finite), -E2BIG or -ENOMEM. */
int nt_stats_signed_rank(const double *d, size_t n, nt_wsr *out);

/* The exact P(T+ <= t) for N differences without ties or zeros (ranks
 * 1..N). Returns a probability, or a negative number when N is 0 or over
 * NT_STATS_EXACT_MAX, or memory ran out. */
double nt_stats_signed_rank_cdf(size_t n, double t);

/* The smallest two-sided p-value the exact signed-rank test can give N
 * differences: 2 / 2^N, at most 1 (5 blocks: 0.0625, 6: 0.03125). */
double nt_stats_signed_rank_min_p(size_t n);

/* The fewest differences with which the signed-rank test can reach
 * CONFIDENCE (0.5 to 0.9999): 6 for 0.95, 8 for 0.99. */
size_t nt_stats_min_pairs(double confidence);

/* The centre of N paired differences D with its confidence interval, the
 * Hodges-Lehmann way: the estimate is the median of the N(N+1)/2 Walsh
 * averages (d_i + d_j) / 2, i <= j, and the interval runs from the k-th
 * smallest to the k-th largest of them, k taken from the distribution of
 * the signed-rank T+ so that the interval holds the true centre with at
 * least CONFIDENCE. Every difference counts, zeros too. Exact when no
 * difference is 0, no two have the same absolute value and N <=
 * NT_STATS_EXACT_MAX ("confidence" is then the level reached); otherwise
 * the normal approximation with the tie correction (zeros one tie group).
 * Too few differences to reach CONFIDENCE: unbounded, as nt_stats_hl_shift.
 * Returns 0, -EINVAL (N == 0, a value not finite, CONFIDENCE outside
 * 0.5..0.9999), -E2BIG (over 10^7 Walsh averages) or -ENOMEM. */
int nt_stats_hl_paired(const double *d, size_t n, double confidence, nt_shift *out);

#endif
