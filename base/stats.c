/* SPDX-License-Identifier: Apache-2.0 */
#include "base/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

static int check(const double *x, size_t n)
{
	if (n == 0)
		return -EINVAL;
	if (n > NT_STATS_MAX_N)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -EINVAL;
	return 0;
}

double nt_stats_quantile_sorted(const double *sorted, size_t n, double p)
{
	if (n == 1 || p <= 0)
		return sorted[0];
	if (p >= 1)
		return sorted[n - 1];
	double h = (double)(n - 1) * p;
	size_t lo = (size_t)floor(h);
	double frac = h - (double)lo;
	if (lo + 1 >= n)
		return sorted[n - 1];
	/* Weighted, not lo + frac * (hi - lo): the difference of two finite
	 * figures of opposite sign can overflow, their mean cannot. */
	return frac == 0 ? sorted[lo] : sorted[lo] * (1 - frac) + sorted[lo + 1] * frac;
}

int nt_stats_summary(const double *x, size_t n, nt_summary *out)
{
	int r = check(x, n);
	if (r < 0)
		return r;
	double *s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->q1 = nt_stats_quantile_sorted(s, n, 0.25);
	out->median = nt_stats_quantile_sorted(s, n, 0.5);
	out->q3 = nt_stats_quantile_sorted(s, n, 0.75);
	out->iqr = out->q3 - out->q1;
	free(s);
	return 0;
}

/* The number of arrangements of M values of one sample and N of the other
 * (no ties) whose U is u, for every u in 0..M*N, by the recurrence
 * f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u): the largest value is either
 * one of the first sample's, above all N of the other's, or not. Row i
 * holds f(i, j, .) for j = 0..N, each of width M*N+1. Counts as doubles:
 * C(100, 50) is about 1e29, far inside a double's range, and the relative
 * error stays near the machine epsilon. Returns the M*N+1 counts of
 * f(M, N, .) (owned by the caller) or NULL. */
static double *u_counts(size_t m, size_t n)
{
	size_t w = m * n + 1;
	double *prev = calloc((n + 1) * w, sizeof(double));
	double *cur = calloc((n + 1) * w, sizeof(double));
	double *res = NULL;
	if (!prev || !cur)
		goto out;
	/* f(0, j, .): only U = 0. */
	for (size_t j = 0; j <= n; j++)
		prev[j * w] = 1;
	for (size_t i = 1; i <= m; i++) {
		memset(cur, 0, (n + 1) * w * sizeof(double));
		cur[0] = 1; /* f(i, 0, .): only U = 0 */
		for (size_t j = 1; j <= n; j++)
			for (size_t u = 0; u <= i * j; u++)
				cur[j * w + u] = (u >= j ? prev[j * w + u - j] : 0) + cur[(j - 1) * w + u];
		double *t = prev;
		prev = cur;
		cur = t;
	}
	res = malloc(w * sizeof(double));
	if (res)
		memcpy(res, prev + n * w, w * sizeof(double));
out:
	free(prev);
	free(cur);
	return res;
}

double nt_stats_mwu_cdf(size_t m, size_t n, double u)
{
	if (m == 0 || n == 0 || m > NT_STATS_EXACT_MAX || n > NT_STATS_EXACT_MAX)
		return -1;
	double *f = u_counts(m, n);
	if (!f)
		return -1;
	double below = 0, all = 0;
	for (size_t k = 0; k <= m * n; k++) {
		all += f[k];
		if ((double)k <= u + 1e-9)
			below += f[k];
	}
	free(f);
	return below / all;
}

/* The exact P(U <= u) and P(U >= u) with ties as they are: U of a split
 * is the first part's sum of (mid)ranks less m(m+1)/2, so count the splits
 * by that sum. Doubled midranks are whole numbers; f[k][s] is the number of
 * ways to take k of the values seen so far with doubled ranks summing to
 * s, one value at a time (k downwards, so each is taken once). At most
 * 100 values: 100 x 50 x 10100 additions. */
static int exact_tied(const double *a, size_t na, const double *b, size_t nb, double u, double *lo, double *hi)
{
	size_t n = na + nb, smax = n * (n + 1), w = smax + 1;
	double *all = malloc(n * sizeof(*all));
	long *r2 = malloc(n * sizeof(*r2));
	double *f = calloc((na + 1) * w, sizeof(*f));
	int r = -ENOMEM;
	if (!all || !r2 || !f)
		goto out;
	memcpy(all, a, na * sizeof(*all));
	memcpy(all + na, b, nb * sizeof(*all));
	qsort(all, n, sizeof(*all), cmp_double);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && all[j] == all[i])
			j++;
		for (size_t k = i; k < j; k++)
			r2[k] = (long)(i + 1 + j); /* twice the midrank of ranks i+1..j */
		i = j;
	}
	f[0] = 1;
	for (size_t i = 0; i < n; i++)
		for (size_t k = (i + 1 < na ? i + 1 : na); k >= 1; k--)
			for (size_t s2 = (size_t)r2[i]; s2 <= smax; s2++)
				f[k * w + s2] += f[(k - 1) * w + s2 - (size_t)r2[i]];
	double all_n = 0, below = 0, above = 0, u2 = 2 * u + (double)(na * (na + 1));
	for (size_t s2 = 0; s2 <= smax; s2++) {
		double c = f[na * w + s2];
		all_n += c;
		if ((double)s2 <= u2 + 1e-6)
			below += c;
		if ((double)s2 >= u2 - 1e-6)
			above += c;
	}
	*lo = below / all_n;
	*hi = above / all_n;
	r = 0;
out:
	free(all);
	free(r2);
	free(f);
	return r;
}

/* The sum of t^3 - t over the tie groups of A and B pooled (t values
 * each), for the tie correction of U's variance. 0 or -ENOMEM. */
static int tie_sum_of(const double *a, size_t na, const double *b, size_t nb, double *out)
{
	size_t n = na + nb;
	double *all = malloc(n * sizeof(*all));
	if (!all)
		return -ENOMEM;
	memcpy(all, a, na * sizeof(*all));
	memcpy(all + na, b, nb * sizeof(*all));
	qsort(all, n, sizeof(*all), cmp_double);
	*out = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && all[j] == all[i])
			j++;
		double t = (double)(j - i);
		*out += t * t * t - t;
		i = j;
	}
	free(all);
	return 0;
}

int nt_stats_mwu(const double *a, size_t na, const double *b, size_t nb, nt_mwu *out)
{
	int r;
	if ((r = check(a, na)) < 0 || (r = check(b, nb)) < 0)
		return r;
	size_t n = na + nb;
	double tie_sum;
	if ((r = tie_sum_of(a, na, b, nb, &tie_sum)) < 0)
		return r;
	double u = 0;
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			u += a[i] > b[j] ? 1 : a[i] == b[j] ? 0.5 : 0;
	memset(out, 0, sizeof(*out));
	out->u = u;
	out->ties = tie_sum > 0;
	double mn = (double)na * (double)nb;
	if (!out->ties && na <= NT_STATS_EXACT_MAX && nb <= NT_STATS_EXACT_MAX) {
		/* The distribution is symmetric: P(U >= u) = P(U <= mn - u). */
		double lo = nt_stats_mwu_cdf(na, nb, u), hi = nt_stats_mwu_cdf(na, nb, mn - u);
		if (lo < 0 || hi < 0)
			return -ENOMEM;
		out->p = fmin(1.0, 2 * fmin(lo, hi));
		out->exact = true;
		return 0;
	}
	if (na <= NT_STATS_EXACT_MAX && nb <= NT_STATS_EXACT_MAX) {
		double lo, hi;
		if ((r = exact_tied(a, na, b, nb, u, &lo, &hi)) < 0)
			return r;
		out->p = fmin(1.0, 2 * fmin(lo, hi));
		out->exact = true;
		return 0;
	}
	double nn = (double)n;
	double var = mn / 12.0 * ((nn + 1) - tie_sum / (nn * (nn - 1)));
	if (var <= 0) {
		out->p = 1; /* every value the same: no evidence of a difference */
		return 0;
	}
	double z = (fabs(u - mn / 2) - 0.5) / sqrt(var);
	if (z < 0)
		z = 0;
	out->p = fmin(1.0, erfc(z / sqrt(2.0)));
	return 0;
}

double nt_stats_mwu_min_p(size_t m, size_t n)
{
	/* C(m+n, m) as a product of ratios: no overflow before it matters. */
	double c = 1;
	for (size_t i = 1; i <= m; i++)
		c = c * (double)(n + i) / (double)i;
	return fmin(1.0, 2 / c);
}

size_t nt_stats_min_rounds(double confidence)
{
	size_t k = 1;
	while (k < 1000 && nt_stats_mwu_min_p(k, k) > 1 - confidence + 1e-12)
		k++;
	return k;
}

double nt_stats_norm_quantile(double p)
{
	if (p <= 0)
		return -INFINITY;
	if (p >= 1)
		return INFINITY;
	if (p < 0.5)
		return -nt_stats_norm_quantile(1 - p);
	/* P(Z > z) = erfc(z / sqrt 2) / 2 falls as z grows: bisect it. */
	double lo = 0, hi = 40, tail = 1 - p;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (0.5 * erfc(mid / sqrt(2.0)) > tail)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

int nt_stats_hl_shift(const double *a, size_t na, const double *b, size_t nb, double confidence, nt_shift *out)
{
	int r;
	if ((r = check(a, na)) < 0 || (r = check(b, nb)) < 0)
		return r;
	if (!(confidence >= 0.5 && confidence <= 0.9999))
		return -EINVAL;
	if ((double)na * (double)nb > 1e7)
		return -E2BIG;
	size_t mn = na * nb;
	double *d = malloc(mn * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			d[i * nb + j] = a[i] - b[j];
	qsort(d, mn, sizeof(*d), cmp_double);
	memset(out, 0, sizeof(*out));
	out->estimate = mn % 2 ? d[mn / 2] : (d[mn / 2 - 1] + d[mn / 2]) / 2;
	double alpha = 1 - confidence;
	nt_mwu t;
	if ((r = nt_stats_mwu(a, na, b, nb, &t)) < 0)
		goto out;
	size_t k = 0; /* the interval is d[k-1] .. d[mn-k]; 0: unbounded */
	if (!t.ties && na <= NT_STATS_EXACT_MAX && nb <= NT_STATS_EXACT_MAX) {
		/* The largest k with P(U <= k-1) <= alpha/2. */
		double *f = u_counts(na, nb);
		if (!f) {
			r = -ENOMEM;
			goto out;
		}
		double all = 0, cum = 0;
		for (size_t u = 0; u <= mn; u++)
			all += f[u];
		for (size_t u = 0; u < mn / 2 + 1; u++) {
			cum += f[u];
			if (cum / all > alpha / 2 + 1e-12)
				break;
			k = u + 1;
			out->confidence = 1 - 2 * cum / all;
		}
		free(f);
		out->exact = true;
	} else {
		/* U's variance with the tie correction, as the test's. */
		double n = (double)(na + nb), tie_sum;
		if ((r = tie_sum_of(a, na, b, nb, &tie_sum)) < 0)
			goto out;
		double var = (double)mn / 12.0 * ((n + 1) - tie_sum / (n * (n - 1)));
		double z = nt_stats_norm_quantile(1 - alpha / 2);
		double kk = floor((double)mn / 2 - z * sqrt(var > 0 ? var : 0));
		k = kk >= 1 ? (size_t)kk : 0;
		if (k > (mn + 1) / 2)
			k = (mn + 1) / 2;
		if (k)
			out->confidence = confidence;
	}
	if (k) {
		out->lo = d[k - 1];
		out->hi = d[mn - k];
		out->bounded = true;
	} else {
		out->lo = -INFINITY;
		out->hi = INFINITY;
		out->confidence = 0;
	}
	r = 0;
out:
	free(d);
	return r;
}

static int cmp_abs(const void *pa, const void *pb)
{
	double a = fabs(*(const double *)pa), b = fabs(*(const double *)pb);
	return (a > b) - (a < b);
}

/* The signed-rank picture of D (N values): the non-zero ones sorted by
 * absolute value into *NZ (owned by the caller), *M of them, each one's
 * doubled midrank in *R2, and the sum of t^3 - t over the tie groups of
 * their absolute values into *TIE_SUM. 0 or -ENOMEM. */
static int signed_ranks(const double *d, size_t n, double **nz, size_t *m, long **r2, double *tie_sum)
{
	*nz = malloc((n ? n : 1) * sizeof(**nz));
	*r2 = malloc((n ? n : 1) * sizeof(**r2));
	if (!*nz || !*r2) {
		free(*nz);
		free(*r2);
		*nz = NULL;
		*r2 = NULL;
		return -ENOMEM;
	}
	*m = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0)
			(*nz)[(*m)++] = d[i];
	qsort(*nz, *m, sizeof(**nz), cmp_abs);
	*tie_sum = 0;
	for (size_t i = 0; i < *m;) {
		size_t j = i;
		while (j < *m && fabs((*nz)[j]) == fabs((*nz)[i]))
			j++;
		for (size_t k = i; k < j; k++)
			(*r2)[k] = (long)(i + 1 + j); /* twice the midrank of ranks i+1..j */
		double t = (double)(j - i);
		*tie_sum += t * t * t - t;
		i = j;
	}
	return 0;
}

/* The number of sign assignments of the M doubled ranks R2 for each
 * doubled T+ from 0 to M(M+1): each rank is on the positive side or not,
 * one at a time (the sums downwards, so each is taken once). Counts as
 * doubles: 2^50 is exact in one. Returns the M(M+1)+1 counts (owned by the
 * caller) or NULL. */
static double *t_counts(const long *r2, size_t m)
{
	size_t smax = m * (m + 1);
	double *f = calloc(smax + 1, sizeof(*f));
	if (!f)
		return NULL;
	f[0] = 1;
	size_t top = 0;
	for (size_t i = 0; i < m; i++) {
		top += (size_t)r2[i];
		for (size_t s = top; s >= (size_t)r2[i]; s--) {
			f[s] += f[s - (size_t)r2[i]];
			if (s == 0)
				break;
		}
	}
	return f;
}

double nt_stats_signed_rank_cdf(size_t n, double t)
{
	if (n == 0 || n > NT_STATS_EXACT_MAX)
		return -1;
	long *r2 = malloc(n * sizeof(*r2));
	if (!r2)
		return -1;
	for (size_t i = 0; i < n; i++)
		r2[i] = 2 * (long)(i + 1);
	double *f = t_counts(r2, n);
	free(r2);
	if (!f)
		return -1;
	double below = 0, all = 0;
	for (size_t s = 0; s <= n * (n + 1); s++) {
		all += f[s];
		if ((double)s <= 2 * t + 1e-9)
			below += f[s];
	}
	free(f);
	return below / all;
}

int nt_stats_signed_rank(const double *d, size_t n, nt_wsr *out)
{
	int r;
	if ((r = check(d, n)) < 0)
		return r;
	double *nz;
	long *r2;
	size_t m;
	double tie_sum;
	if ((r = signed_ranks(d, n, &nz, &m, &r2, &tie_sum)) < 0)
		return r;
	memset(out, 0, sizeof(*out));
	out->n = m;
	out->zeros = n - m;
	out->ties = tie_sum > 0;
	long t2 = 0;
	for (size_t i = 0; i < m; i++)
		if (nz[i] > 0)
			t2 += r2[i];
	out->t_plus = (double)t2 / 2;
	out->p = 1;
	if (m == 0) {
		r = 0; /* every difference 0: no evidence either way */
		goto out;
	}
	if (m <= NT_STATS_EXACT_MAX) {
		double *f = t_counts(r2, m);
		if (!f) {
			r = -ENOMEM;
			goto out;
		}
		double all = 0, below = 0, above = 0;
		for (size_t s = 0; s <= m * (m + 1); s++) {
			all += f[s];
			if ((long)s <= t2)
				below += f[s];
			if ((long)s >= t2)
				above += f[s];
		}
		free(f);
		out->p = fmin(1.0, 2 * fmin(below, above) / all);
		out->exact = true;
		r = 0;
		goto out;
	}
	double mm = (double)m;
	double var = mm * (mm + 1) * (2 * mm + 1) / 24 - tie_sum / 48;
	if (var > 0) {
		double z = (fabs(out->t_plus - mm * (mm + 1) / 4) - 0.5) / sqrt(var);
		out->p = fmin(1.0, erfc((z > 0 ? z : 0) / sqrt(2.0)));
	}
	r = 0;
out:
	free(nz);
	free(r2);
	return r;
}

double nt_stats_signed_rank_min_p(size_t n)
{
	return n >= 64 ? 0 : fmin(1.0, 2 / ldexp(1.0, (int)n));
}

size_t nt_stats_min_pairs(double confidence)
{
	size_t k = 1;
	while (k < 64 && nt_stats_signed_rank_min_p(k) > 1 - confidence + 1e-12)
		k++;
	return k;
}

int nt_stats_hl_paired(const double *d, size_t n, double confidence, nt_shift *out)
{
	int r;
	if ((r = check(d, n)) < 0)
		return r;
	if (!(confidence >= 0.5 && confidence <= 0.9999))
		return -EINVAL;
	if ((double)n * ((double)n + 1) / 2 > 1e7)
		return -E2BIG;
	size_t mw = n * (n + 1) / 2, k = 0;
	double *w = malloc(mw * sizeof(*w)), *nz = NULL, tie_sum;
	long *r2 = NULL;
	size_t m;
	if (!w)
		return -ENOMEM;
	size_t q = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			w[q++] = d[i] / 2 + d[j] / 2; /* halves first: no overflow */
	qsort(w, mw, sizeof(*w), cmp_double);
	memset(out, 0, sizeof(*out));
	out->estimate = mw % 2 ? w[mw / 2] : (w[mw / 2 - 1] + w[mw / 2]) / 2;
	double alpha = 1 - confidence;
	if ((r = signed_ranks(d, n, &nz, &m, &r2, &tie_sum)) < 0)
		goto out;
	if (m == n && tie_sum == 0 && n <= NT_STATS_EXACT_MAX) {
		/* The largest k with P(T+ <= k-1) <= alpha/2. */
		double *f = t_counts(r2, n);
		if (!f) {
			r = -ENOMEM;
			goto out;
		}
		double all = 0, cum = 0;
		for (size_t s = 0; s <= n * (n + 1); s++)
			all += f[s];
		/* Doubled ranks without ties are even: T+ = u sits at f[2u]. */
		for (size_t u = 0; u < mw / 2 + 1; u++) {
			cum += f[2 * u];
			if (cum / all > alpha / 2 + 1e-12)
				break;
			k = u + 1;
			out->confidence = 1 - 2 * cum / all;
		}
		free(f);
		out->exact = true;
	} else {
		/* Zeros are one more tie group of the absolute values. */
		double nn = (double)n, z0 = (double)(n - m);
		double var = nn * (nn + 1) * (2 * nn + 1) / 24 - (tie_sum + z0 * z0 * z0 - z0) / 48;
		double z = nt_stats_norm_quantile(1 - alpha / 2);
		double kk = floor((double)mw / 2 - z * sqrt(var > 0 ? var : 0));
		k = kk >= 1 ? (size_t)kk : 0;
		if (k > (mw + 1) / 2)
			k = (mw + 1) / 2;
		if (k)
			out->confidence = confidence;
	}
	if (k) {
		out->lo = w[k - 1];
		out->hi = w[mw - k];
		out->bounded = true;
	} else {
		out->lo = -INFINITY;
		out->hi = INFINITY;
		out->confidence = 0;
	}
	r = 0;
out:
	free(w);
	free(nz);
	free(r2);
	return r;
}
