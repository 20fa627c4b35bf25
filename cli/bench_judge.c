/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/bench_judge.h"
#include "cli/exit.h"
#include "base/stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nt_bench_parse_gain(const char *s, double *out)
{
	if (!s || !*s)
		return -EINVAL;
	char *end;
	double v = strtod(s, &end);
	if (end == s || (*end && strcmp(end, "%")) || !isfinite(v) || v < 0 || v > 1000)
		return -EINVAL;
	*out = v / 100;
	return 0;
}

int nt_bench_parse_confidence(const char *s, double *out)
{
	if (!s || !*s)
		return -EINVAL;
	char *end;
	double v = strtod(s, &end);
	if (end == s || !isfinite(v))
		return -EINVAL;
	if (!strcmp(end, "%"))
		v /= 100;
	else if (*end)
		return -EINVAL;
	if (v < 0.5 || v > 0.999)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The pooled standard deviation within the arms of X (NX) and Y (NY). */
static double pooled_sd(const double *x, size_t nx, const double *y, size_t ny)
{
	double mx = 0, my = 0, ss = 0;
	for (size_t i = 0; i < nx; i++)
		mx += x[i] / (double)nx;
	for (size_t i = 0; i < ny; i++)
		my += y[i] / (double)ny;
	for (size_t i = 0; i < nx; i++)
		ss += (x[i] - mx) * (x[i] - mx);
	for (size_t i = 0; i < ny; i++)
		ss += (y[i] - my) * (y[i] - my);
	return nx + ny > 2 ? sqrt(ss / (double)(nx + ny - 2)) : 0;
}

int nt_bench_effect_of(const double *base, size_t nb, const double *cand, size_t nc, double confidence,
		       nt_bench_effect *out)
{
	memset(out, 0, sizeof(*out));
	out->ratio = out->lo = out->hi = NAN;
	if (!nb || !nc)
		return -EINVAL;
	out->rounds = nb < nc ? nb : nc;
	for (size_t i = 0; i < nb; i++)
		if (!(base[i] > 0) || !isfinite(base[i]))
			return 0;
	for (size_t i = 0; i < nc; i++)
		if (!(cand[i] > 0) || !isfinite(cand[i]))
			return 0;
	double *lb = malloc(nb * sizeof(*lb)), *lc = malloc(nc * sizeof(*lc));
	int r = -ENOMEM;
	if (!lb || !lc)
		goto out;
	for (size_t i = 0; i < nb; i++)
		lb[i] = log(base[i]);
	for (size_t i = 0; i < nc; i++)
		lc[i] = log(cand[i]);
	nt_shift s;
	if ((r = nt_stats_hl_shift(lc, nc, lb, nb, confidence, &s)) < 0)
		goto out;
	out->defined = true;
	out->ratio = exp(s.estimate);
	out->lo = s.bounded ? exp(s.lo) : 0;
	out->hi = s.bounded ? exp(s.hi) : INFINITY;
	out->confidence = s.confidence;
	out->bounded = s.bounded;
	out->exact = s.exact;
	out->log_sd = pooled_sd(lb, nb, lc, nc);
out:
	free(lb);
	free(lc);
	return r;
}

int nt_bench_effect_paired(const double *base, const double *cand, size_t n, double confidence,
			   nt_bench_effect *out)
{
	memset(out, 0, sizeof(*out));
	out->ratio = out->lo = out->hi = NAN;
	out->paired = true;
	if (!n)
		return -EINVAL;
	out->rounds = n;
	for (size_t i = 0; i < n; i++)
		if (!(base[i] > 0) || !isfinite(base[i]) || !(cand[i] > 0) || !isfinite(cand[i]))
			return 0;
	double *d = malloc(n * sizeof(*d));
	if (!d)
		return -ENOMEM;
	double mean = 0, ss = 0;
	for (size_t i = 0; i < n; i++) {
		d[i] = log(cand[i]) - log(base[i]);
		mean += d[i] / (double)n;
	}
	for (size_t i = 0; i < n; i++)
		ss += (d[i] - mean) * (d[i] - mean);
	nt_shift s;
	int r = nt_stats_hl_paired(d, n, confidence, &s);
	free(d);
	if (r < 0)
		return r;
	out->defined = true;
	out->ratio = exp(s.estimate);
	out->lo = s.bounded ? exp(s.lo) : 0;
	out->hi = s.bounded ? exp(s.hi) : INFINITY;
	out->confidence = s.confidence;
	out->bounded = s.bounded;
	out->exact = s.exact;
	out->log_sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	return 0;
}

/* The smallest p the effect's rounds (or blocks) can give, and the fewest
 * that can reach CONFIDENCE. */
static double min_p(const nt_bench_effect *e)
{
	return e->paired ? nt_stats_signed_rank_min_p(e->rounds) : nt_stats_mwu_min_p(e->rounds, e->rounds);
}

static size_t min_rounds(const nt_bench_effect *e, double confidence)
{
	return e->paired ? nt_stats_min_pairs(confidence) : nt_stats_min_rounds(confidence);
}

/* A gain interval end as text: "+3.1%", "-inf" for unbounded. */
static const char *pct(char *buf, size_t size, double g)
{
	if (isinf(g))
		snprintf(buf, size, "%s", g < 0 ? "-inf" : "+inf");
	else
		snprintf(buf, size, "%+.1f%%", 100 * g);
	return buf;
}

/* The rounds per arm that would show the gain above T (a fraction of
 * gain), from the effect's spread: the interval narrows as one over the
 * square root of the rounds. 0 when the estimate itself is not above T
 * (more rounds would not show it) or nothing can be said. */
static size_t rounds_for(const nt_bench_effect *e, const nt_bench_gates *g, double t)
{
	/* In log-ratio space, with "up" the better direction. */
	double est = log(e->ratio), bound;
	if (!g->lower_is_better)
		bound = log(1 + t);
	else if (1 - t > 0)
		bound = log(1 - t);
	else
		return 0;
	double d = g->lower_is_better ? bound - est : est - bound;
	if (!(d > 0))
		return 0;
	double z = nt_stats_norm_quantile(1 - (1 - g->confidence) / 2);
	double n = (double)e->rounds, h;
	if (e->bounded)
		h = g->lower_is_better ? log(e->hi) - est : est - log(e->lo);
	else
		h = z * e->log_sd * sqrt((e->paired ? 1.0 : 2.0) / n);
	double need = h > 0 ? ceil(n * (h / d) * (h / d)) : n;
	size_t floor_n = min_rounds(e, g->confidence);
	if (need <= n)
		need = n + 1;
	if (need < (double)floor_n)
		need = (double)floor_n;
	return need > 100000 ? 100000 : (size_t)need;
}

/* One gate: the gain interval against T, the text after NAME. Returns the
 * gate's exit code: 0 shown above, BELOW when shown below, else
 * NT_EXIT_NOT_SHOWN. */
static int gate(const nt_bench_effect *e, const nt_bench_gates *g, const nt_bench_verdict *v, double t, int below,
		const char *name, char *buf, size_t size, size_t *need)
{
	char a[32], b[32], c[32];
	/* The level the interval has (an exact one may exceed the one
	 * asked); the one asked when there is none. */
	double conf = 100 * (e->bounded ? e->confidence : g->confidence);
	if (!e->defined) {
		snprintf(buf, size, "%s: NOT SHOWN: the ratio needs positive figures", name);
		return NT_EXIT_NOT_SHOWN;
	}
	pct(a, sizeof(a), v->gain_lo);
	pct(b, sizeof(b), v->gain_hi);
	pct(c, sizeof(c), t);
	if (v->gain_lo > t) {
		snprintf(buf, size, "%s: passed: the gain's %.4g%% interval [%s, %s] is above %s", name, conf, a, b, c);
		return 0;
	}
	if (v->gain_hi < t) {
		snprintf(buf, size, "%s: FAILED: the gain's %.4g%% interval [%s, %s] is below %s", name, conf, a, b, c);
		return below;
	}
	size_t n = rounds_for(e, g, t);
	char what[64];
	if (e->paired)
		snprintf(what, sizeof(what), "%zu blocks", e->rounds);
	else
		snprintf(what, sizeof(what), "%zu + %zu rounds", e->rounds, e->rounds);
	if (!*need)
		*need = n;
	if (!e->bounded && n)
		snprintf(buf, size,
			 "%s: NOT SHOWN: %s cannot reach %.4g%% confidence (the smallest p they can give is "
			 "%.3g); the spread seen would need about %zu rounds per arm",
			 name, what, conf, min_p(e), n);
	else if (!e->bounded)
		snprintf(buf, size,
			 "%s: NOT SHOWN: %s cannot reach %.4g%% confidence (the smallest p they can give is "
			 "%.3g), and the estimate %s is not above %s",
			 name, what, conf, min_p(e),
			 pct(b, sizeof(b), v->gain_est), c);
	else if (n)
		snprintf(buf, size,
			 "%s: NOT SHOWN: the gain's %.4g%% interval [%s, %s] reaches %s; the spread seen would need about "
			 "%zu rounds per arm",
			 name, conf, a, b, c, n);
	else
		snprintf(buf, size,
			 "%s: NOT SHOWN: the gain's %.4g%% interval [%s, %s] reaches %s, and its estimate is not above it",
			 name, conf, a, b, c);
	return NT_EXIT_NOT_SHOWN;
}

void nt_bench_judge(double base_median, double cand_median, double p, const nt_bench_effect *e,
		    const nt_bench_gates *g, nt_bench_verdict *out)
{
	memset(out, 0, sizeof(*out));
	out->ratio = base_median != 0 ? cand_median / base_median : NAN;
	/* Without a ratio (a baseline of 0), the sign of the difference still
	 * says which is better, but not by how much. */
	double diff = g->lower_is_better ? base_median - cand_median : cand_median - base_median;
	if (isfinite(out->ratio))
		out->gain = g->lower_is_better ? 1 - out->ratio : out->ratio - 1;
	else
		out->gain = diff > 0 ? INFINITY : diff < 0 ? -INFINITY : 0;
	bool significant = p < NT_BENCH_ALPHA;
	out->verdict = significant && diff > 0 ? "better" : significant && diff < 0 ? "worse" : "no significant difference";
	out->gain_est = out->gain_lo = out->gain_hi = NAN;
	if (e->defined) {
		out->gain_est = g->lower_is_better ? 1 - e->ratio : e->ratio - 1;
		out->gain_lo = g->lower_is_better ? 1 - e->hi : e->lo - 1;
		out->gain_hi = g->lower_is_better ? 1 - e->lo : e->hi - 1;
		if (!e->bounded) {
			out->gain_lo = -INFINITY;
			out->gain_hi = INFINITY;
		}
	}

	size_t n = 0;
	char name[64];
	if (g->require_no_loss) {
		snprintf(name, sizeof(name), "--require-no-loss %.4g%%", 100 * g->loss_margin);
		out->exit_code = gate(e, g, out, -g->loss_margin, NT_EXIT_LOSS, name, out->gate, sizeof(out->gate),
				      &out->rounds_needed);
		n = strlen(out->gate);
	}
	if (g->require_gain >= 0 && n + 2 < sizeof(out->gate)) {
		snprintf(name, sizeof(name), "--require-gain %.4g%%", 100 * g->require_gain);
		if (n) {
			memcpy(out->gate + n, "; ", 3);
			n += 2;
		}
		int rc = gate(e, g, out, g->require_gain, NT_EXIT_GAIN_TOO_SMALL, name, out->gate + n,
			      sizeof(out->gate) - n, &out->rounds_needed);
		if (!out->exit_code)
			out->exit_code = rc;
	}
}
