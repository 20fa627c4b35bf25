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
#include <stdlib.h>

#define NEAR(a, b, tol) CHECK_MSG(fabs((a) - (b)) <= (tol), "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))

/* The exact two-sided p by brute force: every way to choose which M of the
 * M+N pooled values are the first sample's (at most 2^20 subsets), ties
 * counted half. */
static double brute_p(const double *a, size_t m, const double *b, size_t n)
{
	size_t total = m + n;
	double pool[64], obs = 0;
	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < n; j++)
			obs += a[i] > b[j] ? 1 : a[i] == b[j] ? 0.5 : 0;
	for (size_t i = 0; i < total; i++)
		pool[i] = i < m ? a[i] : b[i - m];
	double all = 0, lo = 0, hi = 0;
	for (unsigned long mask = 0; mask < (1ul << total); mask++) {
		if ((size_t)__builtin_popcountl(mask) != m)
			continue;
		/* U of this split: pairs (first, second) with first > second,
		 * ties half. */
		double u = 0;
		for (size_t i = 0; i < total; i++)
			if (mask & (1ul << i))
				for (size_t j = 0; j < total; j++)
					if (!(mask & (1ul << j)))
						u += pool[i] > pool[j] ? 1 : pool[i] == pool[j] ? 0.5 : 0;
		all++;
		lo += u <= obs + 1e-9;
		hi += u >= obs - 1e-9;
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
	/* Ties in small samples: the exact distribution with the ties as
	 * they are, against every split enumerated (the normal approximation
	 * gave 0.0875544413328335). */
	const double a[] = { 1, 2, 2, 3, 5, 5 }, b[] = { 2, 4, 5, 6, 7, 7 };
	CHECK_INT(nt_stats_mwu(a, 6, b, 6, &r), 0);
	CHECK(r.exact && r.ties);
	NEAR(r.u, 7, 0);
	NEAR(r.p, brute_p(a, 6, b, 6), 1e-12);
	/* Three equal rounds against three other equal ones: 0.1, never
	 * significant (the approximation said 0.047). */
	const double e5[] = { 5, 5, 5 }, e7[] = { 7, 7, 7 };
	CHECK_INT(nt_stats_mwu(e7, 3, e5, 3, &r), 0);
	CHECK(r.exact && r.ties);
	NEAR(r.p, 0.1, 1e-12);
	/* Ties between the samples and within them, 7 against 8. */
	const double t1[] = { 1, 1, 2, 3, 3, 3, 9 }, t2[] = { 0, 1, 3, 3, 4, 4, 4, 8 };
	CHECK_INT(nt_stats_mwu(t1, 7, t2, 8, &r), 0);
	NEAR(r.p, brute_p(t1, 7, t2, 8), 1e-12);
	/* Past the exact limit with ties: 60 against 60 in pairs; Python (the
	 * formula): U = 800, p = 1.537430564975575e-07. */
	double tx[60], ty[60];
	for (int i = 0; i < 60; i++) {
		tx[i] = i / 2;
		ty[i] = i / 2 + 10;
	}
	CHECK_INT(nt_stats_mwu(tx, 60, ty, 60, &r), 0);
	CHECK(!r.exact && r.ties);
	NEAR(r.u, 800, 0);
	NEAR(r.p / 1.537430564975575e-07, 1, 1e-9);

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

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The Hodges-Lehmann shift and its exact interval against a second
 * algorithm: every difference sorted here, and k from the distribution of
 * U enumerated split by split. */
static void check_hl_exact(const double *a, size_t m, const double *b, size_t n, double conf)
{
	double d[400];
	size_t mn = m * n, total = m + n;
	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < n; j++)
			d[i * n + j] = a[i] - b[j];
	qsort(d, mn, sizeof(*d), cmp_d);
	double med = mn % 2 ? d[mn / 2] : (d[mn / 2 - 1] + d[mn / 2]) / 2;
	/* count[u]: splits of 0..total-1 whose U is u. */
	double count[401] = { 0 }, all = 0;
	for (unsigned long mask = 0; mask < (1ul << total); mask++) {
		if ((size_t)__builtin_popcountl(mask) != m)
			continue;
		size_t u = 0;
		for (size_t i = 0; i < total; i++)
			if (mask & (1ul << i))
				for (size_t j = 0; j < i; j++)
					u += !(mask & (1ul << j));
		count[u]++;
		all++;
	}
	size_t k = 0;
	double cum = 0, reached = 0;
	for (size_t u = 0; u <= mn; u++) {
		cum += count[u];
		if (cum / all > (1 - conf) / 2 + 1e-12)
			break;
		k = u + 1;
		reached = 1 - 2 * cum / all;
	}
	nt_shift h;
	CHECK_INT(nt_stats_hl_shift(a, m, b, n, conf, &h), 0);
	NEAR(h.estimate, med, 1e-12);
	CHECK(h.exact);
	CHECK_MSG(h.bounded == (k > 0), "%zu+%zu at %g: bounded %d, k %zu", m, n, conf, h.bounded, k);
	if (k) {
		NEAR(h.lo, d[k - 1], 0);
		NEAR(h.hi, d[mn - k], 0);
		NEAR(h.confidence, reached, 1e-12);
		CHECK(h.confidence >= conf - 1e-12);
	} else {
		CHECK(isinf(h.lo) && h.lo < 0 && isinf(h.hi) && h.hi > 0 && h.confidence == 0);
	}
}

static void test_hl(void)
{
	/* Small samples without ties at several levels, against enumeration. */
	const double a[] = { 10.2, 11.9, 9.7, 12.4, 10.8, 11.1, 13.0 };
	const double b[] = { 9.1, 10.0, 8.4, 9.9, 10.5, 8.8, 9.5, 7.7 };
	const double levels[] = { 0.5, 0.8, 0.9, 0.95, 0.99 };
	for (size_t m = 2; m <= 7; m++)
		for (size_t n = 2; n <= 8; n++)
			for (size_t l = 0; l < 5; l++)
				check_hl_exact(a, m, b, n, levels[l]);
	/* 3 + 3 rounds cannot reach 95% (the smallest p is 0.1): unbounded;
	 * 4 + 4 can, at 1 - 2/70. */
	nt_shift h;
	CHECK_INT(nt_stats_hl_shift(a, 3, b, 3, 0.95, &h), 0);
	CHECK(!h.bounded);
	CHECK_INT(nt_stats_hl_shift(a, 4, b, 4, 0.95, &h), 0);
	CHECK(h.bounded);
	NEAR(h.confidence, 1 - 2.0 / 70, 1e-12);
	NEAR(nt_stats_mwu_min_p(3, 3), 0.1, 1e-12);
	NEAR(nt_stats_mwu_min_p(4, 4), 2.0 / 70, 1e-12);
	CHECK_INT((long)nt_stats_min_rounds(0.95), 4);
	CHECK_INT((long)nt_stats_min_rounds(0.99), 5);
	NEAR(nt_stats_norm_quantile(0.975), 1.9599639845400536, 1e-9);
	NEAR(nt_stats_norm_quantile(0.025), -1.9599639845400536, 1e-9);
	/* Ties, and past the exact limit: the normal approximation; Python
	 * (the formula): k = 1426, interval [-13, -7], estimate -10. */
	double tx[60], ty[60];
	for (int i = 0; i < 60; i++) {
		tx[i] = i / 2;
		ty[i] = i / 2 + 10;
	}
	CHECK_INT(nt_stats_hl_shift(tx, 60, ty, 60, 0.95, &h), 0);
	CHECK(!h.exact && h.bounded);
	NEAR(h.estimate, -10, 0);
	NEAR(h.lo, -13, 0);
	NEAR(h.hi, -7, 0);
	/* Each arm's rounds all equal: ties make it the approximation, which
	 * cannot reach 95% with 3 + 3 either. */
	const double e5[] = { 5, 5, 5 }, e7[] = { 7, 7, 7 };
	CHECK_INT(nt_stats_hl_shift(e7, 3, e5, 3, 0.95, &h), 0);
	CHECK(!h.bounded);
	NEAR(h.estimate, 2, 0);
	/* Bad input. */
	CHECK_INT(nt_stats_hl_shift(a, 0, b, 3, 0.95, &h), -EINVAL);
	CHECK_INT(nt_stats_hl_shift(a, 3, b, 3, 1.0, &h), -EINVAL);
	CHECK_INT(nt_stats_hl_shift(a, 3, b, 3, 0.2, &h), -EINVAL);
}


/* The signed-rank test by brute force: every way to give the non-zero
 * differences' absolute values signs (at most 2^20), each one's midrank
 * counted directly, T+ of each assignment against the observed one. */
static double brute_sr_p(const double *d, size_t n, double *t_obs)
{
	double a[64], rank[64];
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0)
			a[m++] = d[i];
	for (size_t i = 0; i < m; i++) {
		double below = 0, same = 0;
		for (size_t j = 0; j < m; j++) {
			below += fabs(a[j]) < fabs(a[i]);
			same += fabs(a[j]) == fabs(a[i]);
		}
		rank[i] = below + (same + 1) / 2;
	}
	double obs = 0;
	for (size_t i = 0; i < m; i++)
		if (a[i] > 0)
			obs += rank[i];
	*t_obs = obs;
	if (!m)
		return 1;
	double all = 0, lo = 0, hi = 0;
	for (unsigned long mask = 0; mask < (1ul << m); mask++) {
		double t = 0;
		for (size_t i = 0; i < m; i++)
			if (mask & (1ul << i))
				t += rank[i];
		all++;
		lo += t <= obs + 1e-9;
		hi += t >= obs - 1e-9;
	}
	double p = 2 * fmin(lo, hi) / all;
	return p > 1 ? 1 : p;
}

static void check_sr(const double *d, size_t n)
{
	double t;
	double p = brute_sr_p(d, n, &t);
	nt_wsr w;
	CHECK_INT(nt_stats_signed_rank(d, n, &w), 0);
	CHECK(w.exact);
	NEAR(w.t_plus, t, 1e-12);
	NEAR(w.p, p, 1e-12);
}

/* The Walsh-average estimate and its exact interval against a second
 * algorithm: every average sorted here, and k from the distribution of T+
 * enumerated assignment by assignment. */
static void check_walsh_exact(const double *d, size_t n, double conf)
{
	double w[64 * 65 / 2];
	size_t mw = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			w[mw++] = (d[i] + d[j]) / 2;
	qsort(w, mw, sizeof(*w), cmp_d);
	double med = mw % 2 ? w[mw / 2] : (w[mw / 2 - 1] + w[mw / 2]) / 2;
	double count[64 * 65 / 2 + 1] = { 0 }, all = 0;
	for (unsigned long mask = 0; mask < (1ul << n); mask++) {
		size_t t = 0;
		for (size_t i = 0; i < n; i++)
			if (mask & (1ul << i))
				t += i + 1;
		count[t]++;
		all++;
	}
	size_t k = 0;
	double cum = 0, reached = 0;
	for (size_t u = 0; u <= mw; u++) {
		cum += count[u];
		if (cum / all > (1 - conf) / 2 + 1e-12)
			break;
		k = u + 1;
		reached = 1 - 2 * cum / all;
	}
	nt_shift h;
	CHECK_INT(nt_stats_hl_paired(d, n, conf, &h), 0);
	NEAR(h.estimate, med, 1e-12);
	CHECK(h.exact);
	CHECK_MSG(h.bounded == (k > 0), "%zu at %g: bounded %d, k %zu", n, conf, h.bounded, k);
	if (k) {
		NEAR(h.lo, w[k - 1], 1e-15);
		NEAR(h.hi, w[mw - k], 1e-15);
		NEAR(h.confidence, reached, 1e-12);
		CHECK(h.confidence >= conf - 1e-12);
	} else {
		CHECK(isinf(h.lo) && h.lo < 0 && isinf(h.hi) && h.hi > 0 && h.confidence == 0);
	}
}

static void test_signed_rank(void)
{
	/* Without ties, every prefix of 1..14 differences against brute force,
	 * and the CDF's ends. */
	const double d[] = { 0.031, -0.012, 0.054, 0.007, 0.022, -0.041, 0.018, 0.063, -0.003, 0.029, 0.011, -0.026,
			     0.047, 0.015 };
	for (size_t n = 1; n <= 14; n++)
		check_sr(d, n);
	NEAR(nt_stats_signed_rank_cdf(6, 0), 1.0 / 64, 1e-15);
	NEAR(nt_stats_signed_rank_cdf(6, 21), 1, 1e-15);
	CHECK(nt_stats_signed_rank_cdf(0, 0) < 0 && nt_stats_signed_rank_cdf(NT_STATS_EXACT_MAX + 1, 0) < 0);
	/* By symmetry around 27.5 for 10 ranks: P(T <= 27) = 1/2. */
	NEAR(nt_stats_signed_rank_cdf(10, 27), 0.5, 1e-15);
	/* All six positive: T+ = 21, p = 2/64 (the smallest six can give). */
	const double up[] = { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6 };
	nt_wsr w;
	CHECK_INT(nt_stats_signed_rank(up, 6, &w), 0);
	NEAR(w.t_plus, 21, 0);
	NEAR(w.p, 2.0 / 64, 1e-15);
	NEAR(nt_stats_signed_rank_min_p(6), 2.0 / 64, 1e-15);
	NEAR(nt_stats_signed_rank_min_p(5), 0.0625, 1e-15);
	CHECK_INT((long)nt_stats_min_pairs(0.95), 6);
	CHECK_INT((long)nt_stats_min_pairs(0.99), 8);
	/* Ties and zeros, exact as they are, against brute force. */
	const double t1[] = { 0.5, -0.5, 0.5, 0, 1.0, 1.0, -0.25, 0.25, 0, 0.75, 0.5 };
	for (size_t n = 1; n <= 11; n++)
		check_sr(t1, n);
	/* Every difference equal: five positive ties, p = 2/32, exact. */
	const double eq[] = { 0.2, 0.2, 0.2, 0.2, 0.2 };
	CHECK_INT(nt_stats_signed_rank(eq, 5, &w), 0);
	CHECK(w.exact && w.ties);
	NEAR(w.p, 2.0 / 32, 1e-15);
	/* Every difference 0: no evidence, p = 1. */
	const double z[] = { 0, 0, 0 };
	CHECK_INT(nt_stats_signed_rank(z, 3, &w), 0);
	CHECK(w.n == 0 && w.zeros == 3);
	NEAR(w.p, 1, 0);
	/* Past the exact limit: 60 differences 1..60, the odd ones negative;
	 * Python (the formula): T+ = 930, z = (|930 - 915| - 0.5) /
	 * sqrt(60*61*121/24), p = 0.9149926751975315. */
	double big[60];
	for (int i = 0; i < 60; i++)
		big[i] = (i + 1) * (i % 2 ? 1 : -1);
	CHECK_INT(nt_stats_signed_rank(big, 60, &w), 0);
	CHECK(!w.exact && !w.ties);
	NEAR(w.t_plus, 930, 0);
	NEAR(w.p, erfc((15 - 0.5) / sqrt(60.0 * 61 * 121 / 24) / sqrt(2.0)), 1e-12);
	NEAR(w.p, 0.9149926751975315, 1e-9);
	CHECK_INT(nt_stats_signed_rank(d, 0, &w), -EINVAL);
	const double bad[] = { 1, INFINITY };
	CHECK_INT(nt_stats_signed_rank(bad, 2, &w), -EINVAL);

	/* The Walsh estimate and exact interval: every prefix of 1..14 at five
	 * levels against enumeration. */
	const double levels[] = { 0.5, 0.8, 0.9, 0.95, 0.99 };
	for (size_t n = 1; n <= 14; n++)
		for (size_t l = 0; l < 5; l++)
			check_walsh_exact(d, n, levels[l]);
	/* Five blocks cannot reach 95%: unbounded; six can, at 1 - 2/64. */
	nt_shift h;
	CHECK_INT(nt_stats_hl_paired(up, 5, 0.95, &h), 0);
	CHECK(!h.bounded);
	CHECK_INT(nt_stats_hl_paired(up, 6, 0.95, &h), 0);
	CHECK(h.bounded && h.exact);
	NEAR(h.confidence, 1 - 2.0 / 64, 1e-12);
	NEAR(h.lo, 0.1, 1e-15);
	NEAR(h.hi, 0.6, 1e-15);
	NEAR(h.estimate, 0.35, 1e-15);
	/* Ties: the normal approximation; Python (the formula) for 1, 1, 2,
	 * 2, 3, 3, 4, 4 (var = 8*9*17/24 - 4*6/48 = 50.5, k = floor(18 -
	 * 1.95996*sqrt(50.5)) = 4): the 4th smallest and largest of the 36
	 * Walsh averages, 1.5 and 3.5; the estimate 2.5. */
	const double tied[] = { 1, 1, 2, 2, 3, 3, 4, 4 };
	CHECK_INT(nt_stats_hl_paired(tied, 8, 0.95, &h), 0);
	CHECK(!h.exact && h.bounded);
	NEAR(h.estimate, 2.5, 0);
	NEAR(h.lo, 1.5, 0);
	NEAR(h.hi, 3.5, 0);
	CHECK_INT(nt_stats_hl_paired(d, 0, 0.95, &h), -EINVAL);
	CHECK_INT(nt_stats_hl_paired(d, 6, 1.0, &h), -EINVAL);
}

int main(void)
{
	test_signed_rank();
	test_hl();
	test_summary();
	test_mwu_exact();
	test_mwu_normal();
	TEST_MAIN_END();
}
