/* SPDX-License-Identifier: Apache-2.0 */
/* base/stats.c against values computed apart from it: the quartiles by
 * Python's statistics.quantiles(method='inclusive'), the normal
 * approximation by its formula in Python (math.erfc), and the exact
 * Mann-Whitney p-values by enumerating every arrangement, here in the test
 * itself (a second algorithm) and once in Python for the constants. */
#include "base/stats.h"
#include "harness.h"

#include <errno.h>
#include <math.h>

#define NEAR(a, b, tol) CHECK_MSG(fabs((a) - (b)) <= (tol), "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))

/* The exact two-sided p by brute force: every way to choose which M of the
 * M+N pooled ranks are the first sample's (at most 2^20 subsets). */
static double brute_p(const double *a, size_t m, const double *b, size_t n)
{
	size_t total = m + n;
	double obs = 0;
	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < n; j++)
			obs += a[i] > b[j];
	double all = 0, lo = 0, hi = 0;
	for (unsigned long mask = 0; mask < (1ul << total); mask++) {
		if ((size_t)__builtin_popcountl(mask) != m)
			continue;
		double u = 0;
		for (size_t i = 0; i < total; i++)
			if (mask & (1ul << i))
				for (size_t j = 0; j < i; j++)
					u += !(mask & (1ul << j));
		all++;
		lo += u <= obs;
		hi += u >= obs;
	}
	double p = 2 * fmin(lo, hi) / all;
	return p > 1 ? 1 : p;
}

static void test_summary(void)
{
	nt_summary s;
	const double x[] = { 3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0 };
	CHECK_INT(nt_stats_summary(x, 8, &s), 0);
	CHECK_INT(s.n, 8);
	NEAR(s.min, 1.0, 1e-12);
	NEAR(s.q1, 1.875, 1e-12);
	NEAR(s.median, 3.5, 1e-12);
	NEAR(s.q3, 5.25, 1e-12);
	NEAR(s.max, 9.0, 1e-12);
	NEAR(s.iqr, 3.375, 1e-12);
	CHECK(x[0] == 3.0 && x[7] == 6.0); /* the input is not sorted in place */

	const double y[] = { 50, 40, 30, 20, 10 };
	CHECK_INT(nt_stats_summary(y, 5, &s), 0);
	NEAR(s.q1, 20, 1e-12);
	NEAR(s.median, 30, 1e-12);
	NEAR(s.q3, 40, 1e-12);

	const double one[] = { 7.5 };
	CHECK_INT(nt_stats_summary(one, 1, &s), 0);
	CHECK(s.min == 7.5 && s.q1 == 7.5 && s.median == 7.5 && s.q3 == 7.5 && s.max == 7.5 && s.iqr == 0);

	CHECK_INT(nt_stats_summary(one, 0, &s), -EINVAL);
	const double bad[] = { 1, NAN };
	CHECK_INT(nt_stats_summary(bad, 2, &s), -EINVAL);
	const double inf[] = { 1, INFINITY };
	CHECK_INT(nt_stats_summary(inf, 2, &s), -EINVAL);
}

static void test_mwu_exact(void)
{
	nt_mwu r;
	/* Full separation, 5 against 5: 2 of C(10,5) = 252 arrangements are as
	 * extreme, p = 2/252. */
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };
	CHECK_INT(nt_stats_mwu(a, 5, b, 5, &r), 0);
	CHECK(r.exact && !r.ties);
	NEAR(r.u, 0, 0);
	NEAR(r.p, 2.0 / 252, 1e-12);
	NEAR(r.p, 0.007936507936507936, 1e-12);
	/* The other way round: U = 25, the same p. */
	CHECK_INT(nt_stats_mwu(b, 5, a, 5, &r), 0);
	NEAR(r.u, 25, 0);
	NEAR(r.p, 2.0 / 252, 1e-12);

	/* Unequal sizes, overlapping: Python's enumeration says 0.03496503496503497. */
	const double c[] = { 1.1, 2.5, 3.2, 7.0, 4.4, 9.9 }, d[] = { 5.5, 6.1, 8.0, 8.5, 10.2, 11.0, 12.5 };
	CHECK_INT(nt_stats_mwu(c, 6, d, 7, &r), 0);
	CHECK(r.exact);
	NEAR(r.u, 6, 0);
	NEAR(r.p, 0.03496503496503497, 1e-12);
	NEAR(r.p, brute_p(c, 6, d, 7), 1e-12);

	/* U at its mean: p = 1. */
	const double e[] = { 5, 1, 9 }, f[] = { 2, 8, 3, 7 };
	CHECK_INT(nt_stats_mwu(e, 3, f, 4, &r), 0);
	NEAR(r.u, 6, 0);
	NEAR(r.p, 1, 1e-12);

	/* Every split of 0..9 into 4 and 6 by a pattern, against brute force. */
	for (unsigned pat = 0; pat < 1024; pat += 37) {
		double g[10], h[10];
		size_t ng = 0, nh = 0;
		for (int i = 0; i < 10; i++) {
			if ((pat >> i) & 1)
				g[ng++] = i * 1.5;
			else
				h[nh++] = i * 1.5;
		}
		if (!ng || !nh)
			continue;
		CHECK_INT(nt_stats_mwu(g, ng, h, nh, &r), 0);
		NEAR(r.p, brute_p(g, ng, h, nh), 1e-9);
	}
	/* The CDF's ends. */
	NEAR(nt_stats_mwu_cdf(5, 5, 25), 1, 1e-12);
	NEAR(nt_stats_mwu_cdf(5, 5, 0), 1.0 / 252, 1e-12);
	CHECK(nt_stats_mwu_cdf(0, 5, 0) < 0);
	CHECK(nt_stats_mwu_cdf(NT_STATS_EXACT_MAX + 1, 5, 0) < 0);
	/* The largest exact case still sums to 1 and is symmetric. */
	/* By symmetry around the mean 1250, P(U <= 1250) = 1 - P(U <= 1249). */
	double below = nt_stats_mwu_cdf(NT_STATS_EXACT_MAX, NT_STATS_EXACT_MAX, 1249.0);
	double at = nt_stats_mwu_cdf(NT_STATS_EXACT_MAX, NT_STATS_EXACT_MAX, 1250.0);
	NEAR(below + at, 1, 1e-9);
	CHECK(below < 0.5 && at > 0.5);
}

static void test_mwu_normal(void)
{
	nt_mwu r;
	/* Ties: U = 7, tie-corrected variance; Python: 0.0875544413328335. */
	const double a[] = { 1, 2, 2, 3, 5, 5 }, b[] = { 2, 4, 5, 6, 7, 7 };
	CHECK_INT(nt_stats_mwu(a, 6, b, 6, &r), 0);
	CHECK(!r.exact && r.ties);
	NEAR(r.u, 7, 0);
	NEAR(r.p, 0.0875544413328335, 1e-12);

	/* All the same: no evidence, p = 1. */
	const double s[] = { 3, 3, 3 };
	CHECK_INT(nt_stats_mwu(s, 3, s, 3, &r), 0);
	NEAR(r.u, 4.5, 0);
	NEAR(r.p, 1, 0);

	/* Past the exact limit: 60 against 60, shifted; Python: 8.747567722893554e-08. */
	double x[60], y[60];
	for (int i = 0; i < 60; i++) {
		x[i] = i;
		y[i] = i + 20.5;
	}
	CHECK_INT(nt_stats_mwu(x, 60, y, 60, &r), 0);
	CHECK(!r.exact && !r.ties);
	NEAR(r.u, 780, 0);
	NEAR(r.p / 8.747567722893554e-08, 1, 1e-9);

	CHECK_INT(nt_stats_mwu(a, 0, b, 6, &r), -EINVAL);
	const double bad[] = { NAN };
	CHECK_INT(nt_stats_mwu(bad, 1, b, 6, &r), -EINVAL);
}

int main(void)
{
	test_summary();
	test_mwu_exact();
	test_mwu_normal();
	TEST_MAIN_END();
}
