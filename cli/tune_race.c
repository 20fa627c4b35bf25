/* SPDX-License-Identifier: Apache-2.0 */
/* nettune tune's decisions on recorded figures (cli/tune.h): the best arm
 * so far, a candidate shown worse than it (dropped from the race), and
 * Holm's step-down judgement of every candidate against the baseline. */
#include "base/stats.h"
#include "cli/tune.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int nt_tune_best(double *const *values, const size_t *n, const bool *alive, size_t narms, bool lower)
{
	int best = -1;
	double bm = 0;
	for (size_t k = 0; k < narms; k++) {
		nt_summary s;
		if (!alive[k] || !n[k] || nt_stats_summary(values[k], n[k], &s) < 0)
			continue;
		if (best < 0 || (lower ? s.median < bm : s.median > bm)) {
			best = (int)k;
			bm = s.median;
		}
	}
	return best;
}

int nt_tune_shown_worse(const double *cand, size_t nc, const double *best, size_t nb, double confidence, bool lower,
			nt_bench_effect *e)
{
	int r = nt_bench_effect_of(best, nb, cand, nc, confidence, e);
	if (r < 0)
		return r;
	if (!e->defined || !e->bounded)
		return 0;
	return lower ? e->lo > 1 : e->hi < 1;
}

size_t nt_tune_min_rounds(size_t m, double confidence)
{
	if (m < 1)
		m = 1;
	return nt_stats_min_rounds(1 - (1 - confidence) / (double)m);
}

typedef struct ranked {
	size_t i;
	double p, dist; /* dist: |log ratio|, the tie-break (the larger effect first) */
} ranked;

static int by_p(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	if (x->dist != y->dist)
		return x->dist > y->dist ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int nt_tune_holm_judge(double *const *base, const size_t *nb, double *const *cands, const size_t *n, size_t m,
		       double confidence, bool lower, nt_tune_holm *out, int *winner)
{
	ranked *r = calloc(m ? m : 1, sizeof(*r));
	int rc = 0;
	*winner = -1;
	if (!r)
		return -ENOMEM;
	memset(out, 0, m * sizeof(*out));
	for (size_t i = 0; i < m; i++) {
		nt_mwu u;
		nt_bench_effect e;
		r[i].i = i;
		r[i].p = 1;
		r[i].dist = 0;
		out[i].p = NAN;
		out[i].outcome = NT_TUNE_UNTESTED;
		if (!nb[i] || !n[i])
			continue;
		if ((rc = nt_stats_mwu(cands[i], n[i], base[i], nb[i], &u)) < 0 ||
		    (rc = nt_bench_effect_of(base[i], nb[i], cands[i], n[i], confidence, &e)) < 0)
			goto out;
		r[i].p = u.p;
		out[i].p = u.p;
		r[i].dist = e.defined ? fabs(log(e.ratio)) : 0;
	}
	qsort(r, m, sizeof(*r), by_p);
	bool stopped = false;
	double best_ratio = 0;
	for (size_t j = 0; j < m; j++) {
		nt_tune_holm *h = &out[r[j].i];
		size_t i = r[j].i;
		h->step = j + 1;
		h->level = 1 - (1 - confidence) / (double)(m - j);
		if (!nb[i] || !n[i]) {
			h->outcome = NT_TUNE_UNTESTED;
			h->stopped = stopped;
			stopped = true;
			continue;
		}
		if ((rc = nt_bench_effect_of(base[i], nb[i], cands[i], n[i], h->level, &h->effect)) < 0)
			goto out;
		if (stopped) {
			/* Holm retains every hypothesis after the first it cannot
			 * reject: reported at its step's level, not judged. */
			h->stopped = true;
			h->outcome = h->effect.bounded ? NT_TUNE_NOT_SHOWN : NT_TUNE_UNTESTED;
			continue;
		}
		if (!h->effect.defined || !h->effect.bounded) {
			h->outcome = NT_TUNE_UNTESTED;
			stopped = true;
			continue;
		}
		bool better = lower ? h->effect.hi < 1 : h->effect.lo > 1;
		bool worse = lower ? h->effect.lo > 1 : h->effect.hi < 1;
		if (better) {
			h->outcome = NT_TUNE_BETTER;
			/* The best estimate among those shown better: highest
			 * ratio, or lowest when lower is better. */
			double score = lower ? 1 / h->effect.ratio : h->effect.ratio;
			if (*winner < 0 || score > best_ratio) {
				*winner = (int)i;
				best_ratio = score;
			}
		} else if (worse) {
			h->outcome = NT_TUNE_WORSE;
		} else {
			h->outcome = NT_TUNE_NOT_SHOWN;
			stopped = true;
		}
	}
out:
	free(r);
	return rc;
}

int nt_tune_parse_budget(const char *s, double *out)
{
	double total = 0;
	bool any = false;
	const char *p = s;
	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		char *end;
		errno = 0;
		double v = strtod(p, &end);
		if (errno || end == p)
			return -EINVAL;
		double unit = 1;
		if (*end == 'h')
			unit = 3600;
		else if (*end == 'm')
			unit = 60;
		else if (*end == 's')
			unit = 1;
		else if (*end || any)
			return -EINVAL; /* a bare number only alone: "1h30" is ambiguous */
		total += v * unit;
		any = true;
		p = *end ? end + 1 : end;
	}
	if (!(total >= 1) || total > 7 * 86400)
		return -EINVAL;
	*out = total;
	return 0;
}
