/* SPDX-License-Identifier: Apache-2.0 */
/* cli/tune_space.c and cli/tune_race.c, nettune tune's pure parts: a
 * space's paths and its expansion (every combination up to the cap, else
 * one factor at a time, each error naming its JSON path), identical plans
 * found, and the race's decisions on recorded figures: the best arm, a
 * candidate shown worse than it, and Holm's step-down judgement, whose p
 * values, levels and interval ends are computed here again by brute force
 * (every split of the ranks enumerated), not through base/stats.c. */
#include "cli/tune.h"
#include "harness.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static json_t *js(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	if (!j)
		fprintf(stderr, "bad test JSON %s: %s\n", text, e.text);
	return j;
}

static bool same_json(const json_t *a, const char *text)
{
	json_t *b = js(text);
	bool eq = json_equal(a, b);
	if (!eq) {
		char *t = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
		fprintf(stderr, "  got %s\n  expected %s\n", t, text);
		free(t);
	}
	json_decref(b);
	return eq;
}

static void test_set_path(void)
{
	char err[512];
	json_t *p = js("{\"name\": \"x\", \"rings\": [{\"interface\": \"eth0\", \"rx\": 512}]}");
	json_t *v = json_integer(4096), *s = json_string("16777216");

	CHECK_INT(nt_tune_set_path(p, "rings[0].rx", v, err, sizeof(err)), 0);
	CHECK_INT(nt_tune_set_path(p, "sysctl.net.core.rmem_max", s, err, sizeof(err)), 0);
	CHECK_INT(nt_tune_set_path(p, "sysctl['net.ipv4.tcp_rmem']", s, err, sizeof(err)), 0);
	CHECK_INT(nt_tune_set_path(p, "coalesce[\"a.b\"]", v, err, sizeof(err)), 0);
	CHECK(same_json(p, "{\"name\": \"x\", \"rings\": [{\"interface\": \"eth0\", \"rx\": 4096}],"
			   "\"sysctl\": {\"net.core.rmem_max\": \"16777216\", \"net.ipv4.tcp_rmem\": \"16777216\"},"
			   "\"coalesce\": {\"a.b\": 4096}}"));
	/* An element the base does not have is not made up. */
	CHECK_INT(nt_tune_set_path(p, "rings[1].rx", v, err, sizeof(err)), -ENOENT);
	CHECK_MSG(strstr(err, "no [1]") != NULL, "%s", err);
	CHECK_INT(nt_tune_set_path(p, "channels[0].rx", v, err, sizeof(err)), -ENOENT);
	CHECK_MSG(strstr(err, "no 'channels'") != NULL, "%s", err);
	/* Through a value of the wrong type. */
	CHECK_INT(nt_tune_set_path(p, "rings.rx", v, err, sizeof(err)), -EINVAL);
	CHECK_INT(nt_tune_set_path(p, "name[0]", v, err, sizeof(err)), -EINVAL);
	/* Paths that cannot be parsed. */
	const char *bad[] = { "", "a..b", "[0].x", "a[x]", "a[-1]", "a.", "sysctl", "a b", "a[\"b]", "a.b!c" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_MSG(nt_tune_set_path(p, bad[i], v, err, sizeof(err)) == -EINVAL, "'%s' accepted", bad[i]);
	json_decref(v);
	json_decref(s);
	json_decref(p);
}

static void test_factorial(void)
{
	char err[512];
	const char *mode;
	json_t *out;
	json_t *space = js("{\"base\": {\"name\": \"web\", \"rings\": [{\"interface\": \"eth0\", \"tx\": 256}]},"
			   " \"parameters\": [{\"path\": \"rings[0].rx\", \"values\": [1024, 4096, \"max\"]},"
			   "  {\"path\": \"sysctl.net.core.rmem_max\", \"values\": [\"4194304\", \"16777216\"]}]}");
	CHECK_INT(nt_tune_expand(space, &out, &mode, err, sizeof(err)), 0);
	CHECK_STR(mode, "factorial");
	CHECK_INT(json_array_size(out), 6);
	/* The last parameter fastest; every candidate keeps the rest of the base. */
	const char *labels[] = {
		"rings[0].rx=1024, sysctl.net.core.rmem_max=4194304", "rings[0].rx=1024, sysctl.net.core.rmem_max=16777216",
		"rings[0].rx=4096, sysctl.net.core.rmem_max=4194304", "rings[0].rx=4096, sysctl.net.core.rmem_max=16777216",
		"rings[0].rx=max, sysctl.net.core.rmem_max=4194304", "rings[0].rx=max, sysctl.net.core.rmem_max=16777216",
	};
	for (size_t i = 0; i < 6 && i < json_array_size(out); i++)
		CHECK_STR(json_string_value(json_object_get(json_array_get(out, i), "label")), labels[i]);
	CHECK(same_json(json_object_get(json_array_get(out, 3), "profile"),
			"{\"name\": \"web-4\", \"rings\": [{\"interface\": \"eth0\", \"tx\": 256, \"rx\": 4096}],"
			" \"sysctl\": {\"net.core.rmem_max\": \"16777216\"}}"));
	CHECK(same_json(json_object_get(json_array_get(out, 4), "assignment"),
			"{\"rings[0].rx\": \"max\", \"sysctl.net.core.rmem_max\": \"4194304\"}"));
	/* The space's base is not changed by its expansion. */
	CHECK(same_json(json_object_get(space, "base"),
			"{\"name\": \"web\", \"rings\": [{\"interface\": \"eth0\", \"tx\": 256}]}"));
	json_decref(out);

	/* Over the cap: one factor at a time, each value alone on the base. */
	json_object_set_new(space, "max_candidates", json_integer(5));
	CHECK_INT(nt_tune_expand(space, &out, &mode, err, sizeof(err)), 0);
	CHECK_STR(mode, "one-factor-at-a-time");
	CHECK_INT(json_array_size(out), 5);
	CHECK_STR(json_string_value(json_object_get(json_array_get(out, 0), "label")), "rings[0].rx=1024");
	CHECK_STR(json_string_value(json_object_get(json_array_get(out, 3), "label")),
		  "sysctl.net.core.rmem_max=4194304");
	CHECK(same_json(json_object_get(json_array_get(out, 3), "profile"),
			"{\"name\": \"web-4\", \"rings\": [{\"interface\": \"eth0\", \"tx\": 256}],"
			" \"sysctl\": {\"net.core.rmem_max\": \"4194304\"}}"));
	json_decref(out);
	/* Even one factor at a time over the cap: refused. */
	json_object_set_new(space, "max_candidates", json_integer(4));
	CHECK_INT(nt_tune_expand(space, &out, &mode, err, sizeof(err)), -E2BIG);
	CHECK(out == NULL);
	CHECK_MSG(strstr(err, "$.parameters: 6 combinations and 5 candidates") != NULL, "%s", err);
	json_decref(space);

	/* Without a base: from an empty profile, named tune-N. */
	space = js("{\"parameters\": [{\"path\": \"sysctl.net.core.somaxconn\", \"values\": [\"1024\"]}]}");
	CHECK_INT(nt_tune_expand(space, &out, &mode, err, sizeof(err)), 0);
	CHECK(same_json(json_object_get(json_array_get(out, 0), "profile"),
			"{\"name\": \"tune-1\", \"sysctl\": {\"net.core.somaxconn\": \"1024\"}}"));
	json_decref(out);
	json_decref(space);
}

/* Each bad space's error starts with the JSON path of what is wrong. */
static void test_space_errors(void)
{
	static const struct { const char *space, *path; } cases[] = {
		{ "[]", "$:" },
		{ "{\"parameters\": [], \"bogus\": 1}", "$.bogus:" },
		{ "{\"base\": 3, \"parameters\": []}", "$.base:" },
		{ "{\"parameters\": []}", "$.parameters:" },
		{ "{\"parameters\": [{\"path\": \"a\"}]}", "$.parameters[0]:" },
		{ "{\"parameters\": [{\"path\": \"a\", \"values\": [], \"x\": 1}]}", "$.parameters[0]:" },
		{ "{\"parameters\": [{\"path\": \"a\", \"values\": []}]}", "$.parameters[0].values:" },
		{ "{\"parameters\": [{\"path\": \"a..b\", \"values\": [1]}]}", "$.parameters[0].path:" },
		{ "{\"parameters\": [{\"path\": \"a\", \"values\": [1]}, {\"path\": \"a\", \"values\": [2]}]}",
		  "$.parameters[1].path:" },
		{ "{\"parameters\": [{\"path\": \"a\", \"values\": [1, 2, 1]}]}", "$.parameters[0].values[2]:" },
		{ "{\"parameters\": [{\"path\": \"rings[0].rx\", \"values\": [1]}]}", "$.parameters[0].path:" },
		{ "{\"max_candidates\": 0, \"parameters\": [{\"path\": \"a\", \"values\": [1]}]}", "$.max_candidates:" },
		{ "{\"max_candidates\": 1000, \"parameters\": [{\"path\": \"a\", \"values\": [1]}]}", "$.max_candidates:" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[512] = "";
		const char *mode = "x";
		json_t *out = (json_t *)1, *space = js(cases[i].space);
		CHECK_MSG(nt_tune_expand(space, &out, &mode, err, sizeof(err)) == -EINVAL, "case %zu accepted", i);
		CHECK_MSG(!strncmp(err, cases[i].path, strlen(cases[i].path)), "case %zu: '%s', expected '%s...'", i, err,
			  cases[i].path);
		CHECK(out == NULL && mode == NULL);
		json_decref(space);
	}
}

static void test_same(void)
{
	json_t *d[5] = { js("[[\"sysctl\", \"a\", \"1\"]]"), js("[]"), js("[[\"sysctl\", \"a\", \"1\"]]"),
			 js("[[\"sysctl\", \"a\", \"2\"]]"), js("[]") };
	size_t same[5];
	nt_tune_same(d, 5, same);
	CHECK_INT(same[0], 0);
	CHECK_INT(same[1], 1);
	CHECK_INT(same[2], 0);
	CHECK_INT(same[3], 3);
	CHECK_INT(same[4], 1);
	for (int i = 0; i < 5; i++)
		json_decref(d[i]);
	/* A plan's key keeps what it changes, not what the host had. */
	json_t *a = js("[{\"kind\": \"sysctl\", \"target\": \"k\", \"before\": \"1\", \"after\": \"2\"}]");
	json_t *b = js("[{\"kind\": \"sysctl\", \"target\": \"k\", \"before\": \"7\", \"after\": \"2\", \"interface\": null}]");
	json_t *ka = nt_tune_plan_key(a), *kb = nt_tune_plan_key(b);
	CHECK(json_equal(ka, kb));
	CHECK(same_json(ka, "[[\"sysctl\", \"k\", \"2\"]]"));
	json_decref(a);
	json_decref(b);
	json_decref(ka);
	json_decref(kb);
}

static void test_best_and_drop(void)
{
	double base[] = { 100, 104, 98, 101 }, good[] = { 210, 190, 205, 199 }, bad[] = { 20, 25, 22, 19 };
	double *v[3] = { base, good, bad };
	size_t n[3] = { 4, 4, 4 };
	bool alive[3] = { true, true, true };
	CHECK_INT(nt_tune_best(v, n, alive, 3, false), 1);
	CHECK_INT(nt_tune_best(v, n, alive, 3, true), 2);
	alive[1] = false;
	CHECK_INT(nt_tune_best(v, n, alive, 3, false), 0);
	size_t none[3] = { 0, 0, 0 };
	CHECK_INT(nt_tune_best(v, none, alive, 3, false), -1);

	/* 4 + 4 rounds, every "bad" below every "good": the exact interval at
	 * 95% is the whole range of the 16 ratios (k = 1: P(U <= 0) = 1/70 <=
	 * 0.025 < P(U <= 1) = 2/70), so its upper end is max(bad)/min(good). */
	nt_bench_effect e;
	CHECK_INT(nt_tune_shown_worse(bad, 4, good, 4, 0.95, false, &e), 1);
	CHECK_MSG(fabs(e.hi - 25.0 / 190) < 1e-12, "hi %.17g", e.hi);
	CHECK_MSG(fabs(e.lo - 19.0 / 210) < 1e-12, "lo %.17g", e.lo);
	CHECK_MSG(fabs(e.confidence - (1 - 2.0 / 70)) < 1e-12, "confidence %.17g", e.confidence);
	/* Lower is better: the same figures are the best, not dropped; the
	 * other way round they are. */
	CHECK_INT(nt_tune_shown_worse(bad, 4, good, 4, 0.95, true, &e), 0);
	CHECK_INT(nt_tune_shown_worse(good, 4, bad, 4, 0.95, true, &e), 1);
	/* Overlapping arms are not shown worse. */
	double near[] = { 99, 103, 97, 102 };
	CHECK_INT(nt_tune_shown_worse(near, 4, base, 4, 0.95, false, &e), 0);
	/* 3 + 3 rounds cannot reach 95%: never dropped on them. */
	CHECK_INT(nt_tune_shown_worse(bad, 3, good, 3, 0.95, false, &e), 0);
	CHECK(!e.bounded);
}

/* The race on recorded figures, as cmd_tune.c runs it: after each sweep
 * (one round of every arm in the race) the best by median, and each
 * candidate shown worse than it dropped. Four arms: the baseline,
 * helpful (x4), harmful (x0.25), neutral (the baseline's figures with
 * other wobbles). The harmful one is dropped after the fourth sweep,
 * when 4 + 4 rounds first reach 95%, and so is the neutral one (shown
 * worse than the helpful); the helpful one never. */
static void test_race(void)
{
	const double wob[8] = { 1.00, 1.03, 0.98, 1.01, 0.99, 1.02, 0.97, 1.04 };
	const double wob2[8] = { 1.02, 0.99, 1.01, 0.97, 1.03, 1.00, 0.98, 1.01 };
	double rec[4][8];
	for (int i = 0; i < 8; i++) {
		rec[0][i] = 100 * wob[i];
		rec[1][i] = 400 * wob2[i];
		rec[2][i] = 25 * wob[7 - i];
		rec[3][i] = 100 * wob2[7 - i];
	}
	double *v[4] = { rec[0], rec[1], rec[2], rec[3] };
	size_t n[4] = { 0, 0, 0, 0 }, dropped_at[4] = { 0, 0, 0, 0 };
	bool alive[4] = { true, true, true, true };
	for (size_t sweep = 1; sweep <= 8; sweep++) {
		for (int k = 0; k < 4; k++)
			if (alive[k])
				n[k]++;
		int best = nt_tune_best(v, n, alive, 4, false);
		CHECK_INT(best, 1);
		for (int k = 1; k < 4; k++) {
			nt_bench_effect e;
			if (alive[k] && k != best && n[k] >= 4 &&
			    nt_tune_shown_worse(v[k], n[k], v[best], n[best], 0.95, false, &e) == 1) {
				alive[k] = false;
				dropped_at[k] = sweep;
			}
		}
	}
	CHECK_INT(dropped_at[1], 0);
	CHECK_INT(dropped_at[2], 4);
	CHECK_INT(dropped_at[3], 4);
	CHECK_INT(n[1], 8);
	CHECK_INT(n[2], 4);
}

static double binom(int n, int k)
{
	double r = 1;
	for (int i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return r;
}

/* The exact interval of log(cand) - log(base) at LEVEL, by brute force:
 * every way to give M of the M+N ranks to the candidate counted by its U,
 * k the largest with P(U <= k-1) <= (1 - LEVEL)/2, the interval from the
 * k-th smallest to the k-th largest of the M*N differences. Returns
 * false when k is 0 (unbounded). */
static bool brute_interval(const double *c, int m, const double *b, int n, double level, double *lo, double *hi)
{
	double count[64] = { 0 }, all = 0;
	for (unsigned mask = 0; mask < (1u << (m + n)); mask++) {
		if (__builtin_popcount(mask) != m)
			continue;
		int u = 0, below = 0;
		for (int r = 0; r < m + n; r++) {
			if (mask & (1u << r))
				u += below;
			else
				below++;
		}
		count[u]++;
		all++;
	}
	int k = 0;
	double cum = 0;
	for (int u = 0; u <= m * n; u++) {
		cum += count[u];
		if (cum / all > (1 - level) / 2)
			break;
		k = u + 1;
	}
	if (!k)
		return false;
	double d[64];
	int nd = 0;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++)
			d[nd++] = log(c[i]) - log(b[j]);
	for (int i = 1; i < nd; i++)
		for (int j = i; j > 0 && d[j - 1] > d[j]; j--) {
			double x = d[j];
			d[j] = d[j - 1];
			d[j - 1] = x;
		}
	*lo = exp(d[k - 1]);
	*hi = exp(d[nd - k]);
	return true;
}

/* The Hodges-Lehmann ratio, by hand: the median of the M*N log-ratios. */
static double hl_ratio(const double *c, int m, const double *b, int n)
{
	double d[64];
	int nd = 0;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++)
			d[nd++] = log(c[i] / b[j]);
	for (int i = 1; i < nd; i++)
		for (int j = i; j > 0 && d[j - 1] > d[j]; j--) {
			double x = d[j];
			d[j] = d[j - 1];
			d[j - 1] = x;
		}
	return exp(nd % 2 ? d[nd / 2] : (d[nd / 2 - 1] + d[nd / 2]) / 2);
}

static void test_holm(void)
{
	double base[6] = { 100, 101, 102, 103, 104, 105 };
	double a[6] = { 200, 201, 202, 203, 204, 205 }; /* every round above: better */
	double b[6] = { 99.5, 100.5, 101.5, 102.5, 103.5, 104.5 }; /* interleaved: nothing shown */
	double c[6] = { 50, 51, 52, 53, 54, 55 }; /* every round below: worse */
	double *cands[3] = { a, b, c };
	size_t n[3] = { 6, 6, 6 };
	nt_tune_holm h[3];
	int winner = 7;
	double *bases[3] = { base, base, base };
	CHECK_INT(nt_tune_holm_judge(bases, n, cands, n, 3, 0.95, false, h, &winner), 0);
	/* A and C: U at its extreme, p = 2 / C(12, 6) = 2/924. They tie on p;
	 * the larger effect goes first: A's estimate is about 202.5/102.5
	 * (the median of the 36 ratios), C's about 52.5/102.5, and |log 1.976|
	 * > |log 0.512|, so A is step 1 and C step 2. */
	double pmin = 2 / binom(12, 6);
	CHECK_MSG(fabs(h[0].p - pmin) < 1e-12 && fabs(h[2].p - pmin) < 1e-12, "p %.17g %.17g, expected %.17g", h[0].p,
		  h[2].p, pmin);
	CHECK_MSG(fabs(h[0].effect.ratio - hl_ratio(a, 6, base, 6)) < 1e-12, "%.17g", h[0].effect.ratio);
	CHECK_MSG(fabs(h[2].effect.ratio - hl_ratio(c, 6, base, 6)) < 1e-12, "%.17g", h[2].effect.ratio);
	CHECK_INT(h[0].step, 1);
	CHECK_INT(h[2].step, 2);
	CHECK_INT(h[1].step, 3);
	CHECK_MSG(fabs(h[0].level - (1 - 0.05 / 3)) < 1e-15, "%.17g", h[0].level);
	CHECK_MSG(fabs(h[2].level - (1 - 0.05 / 2)) < 1e-15, "%.17g", h[2].level);
	CHECK_MSG(fabs(h[1].level - 0.95) < 1e-15, "%.17g", h[1].level);
	CHECK_INT(h[2].outcome, NT_TUNE_WORSE);
	CHECK_INT(h[0].outcome, NT_TUNE_BETTER);
	CHECK_INT(h[1].outcome, NT_TUNE_NOT_SHOWN);
	CHECK(!h[0].stopped && !h[1].stopped && !h[2].stopped);
	CHECK_INT(winner, 0);
	/* Each interval at its own level, as enumerated here. */
	for (int i = 0; i < 3; i++) {
		double lo, hi;
		CHECK(brute_interval(cands[i], 6, base, 6, h[i].level, &lo, &hi));
		CHECK_MSG(h[i].effect.bounded && fabs(h[i].effect.lo - lo) < 1e-9 && fabs(h[i].effect.hi - hi) < 1e-9,
			  "candidate %d: [%.10g, %.10g], brute force [%.10g, %.10g]", i, h[i].effect.lo, h[i].effect.hi,
			  lo, hi);
	}
	CHECK(h[1].effect.lo < 1 && h[1].effect.hi > 1);

	/* Lower is better: the same figures make C the winner. */
	CHECK_INT(nt_tune_holm_judge(bases, n, cands, n, 3, 0.95, true, h, &winner), 0);
	CHECK_INT(winner, 2);
	CHECK_INT(h[0].outcome, NT_TUNE_WORSE);
}

/* Holm is what makes the difference: 4 + 4 rounds all above reach 97.1%
 * (2/70 = 0.0286), enough alone at 95%, not at the first of three
 * comparisons' 98.33%; then Holm stops and nothing is shown. */
static void test_holm_correction(void)
{
	double base[4] = { 100, 102, 101, 99 }, a[4] = { 120, 125, 118, 122 };
	double o1[4] = { 101, 99, 102, 100 }, o2[4] = { 98, 103, 100, 101 };
	double *one[1] = { a };
	size_t n1[1] = { 4 };
	nt_tune_holm h[3];
	int winner;
	double *bases[3] = { base, base, base };
	CHECK_INT(nt_tune_holm_judge(bases, n1, one, n1, 1, 0.95, false, h, &winner), 0);
	CHECK_INT(winner, 0);
	CHECK_INT(h[0].outcome, NT_TUNE_BETTER);
	CHECK_MSG(fabs(h[0].effect.confidence - (1 - 2.0 / 70)) < 1e-12, "%.17g", h[0].effect.confidence);
	double lo, hi;
	CHECK(brute_interval(a, 4, base, 4, 0.95, &lo, &hi));
	CHECK_MSG(fabs(h[0].effect.lo - lo) < 1e-9 && fabs(lo - 118.0 / 102) < 1e-12, "lo %.10g", h[0].effect.lo);

	double *three[3] = { a, o1, o2 };
	size_t n3[3] = { 4, 4, 4 };
	CHECK_INT(nt_tune_holm_judge(bases, n3, three, n3, 3, 0.95, false, h, &winner), 0);
	CHECK_INT(winner, -1);
	CHECK_INT(h[0].step, 1);
	CHECK_INT(h[0].outcome, NT_TUNE_UNTESTED);
	CHECK(!h[0].effect.bounded);
	CHECK(!brute_interval(a, 4, base, 4, 1 - 0.05 / 3, &lo, &hi));
	CHECK(h[1].stopped && h[2].stopped);
	CHECK(h[1].outcome != NT_TUNE_BETTER && h[2].outcome != NT_TUNE_BETTER);
}

static void test_numbers(void)
{
	/* 2/C(2n, n) <= 1 - level: 0.95 -> 4, 1 - 0.05/3 -> 5, 1 - 0.05/10 -> 6. */
	CHECK_INT(nt_tune_min_rounds(1, 0.95), 4);
	CHECK_INT(nt_tune_min_rounds(3, 0.95), 5);
	CHECK_INT(nt_tune_min_rounds(10, 0.95), 6);
	double s;
	CHECK_INT(nt_tune_parse_budget("20m", &s), 0);
	CHECK(s == 1200);
	CHECK_INT(nt_tune_parse_budget("1h30m", &s), 0);
	CHECK(s == 5400);
	CHECK_INT(nt_tune_parse_budget("90s", &s), 0);
	CHECK(s == 90);
	CHECK_INT(nt_tune_parse_budget("45", &s), 0);
	CHECK(s == 45);
	const char *bad[] = { "", "0", "0.5s", "1x", "1h30", "-5m", "m", "8d", "200h" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_MSG(nt_tune_parse_budget(bad[i], &s) == -EINVAL, "'%s' accepted", bad[i]);
}

/* The best levels combined after one factor at a time: each parameter's
 * best level shown better, set together on the base; nothing with fewer
 * than two factors that won. */
static void test_combine(void)
{
	char err[512];
	json_error_t je;
	json_t *space = json_loads("{\"base\": {\"name\": \"web\", \"rings\": [{\"interface\": \"eth0\"}]},"
				   " \"max_candidates\": 5, \"parameters\": ["
				   "{\"path\": \"rings[0].rx\", \"values\": [1024, 4096, \"max\"]},"
				   "{\"path\": \"sysctl.net.core.rmem_max\", \"values\": [\"4194304\", \"16777216\"]}]}",
				   0, &je);
	json_t *cands = NULL, *c = NULL;
	const char *mode;
	CHECK(space != NULL);
	CHECK_INT(nt_tune_expand(space, &cands, &mode, err, sizeof(err)), 0);
	CHECK_STR(mode, "one-factor-at-a-time");
	CHECK_INT(json_array_size(cands), 5);
	/* rx 4096 and "max" both won, "max" by more; rmem_max 16777216 won. */
	bool won[5] = { false, true, true, false, true };
	double ratio[5] = { 0.9, 1.2, 1.3, 1.0, 1.1 };
	CHECK_INT(nt_tune_combine(space, 5, won, ratio, false, &c, err, sizeof(err)), 0);
	CHECK(c != NULL);
	CHECK_STR(json_string_value(json_object_get(c, "label")), "rings[0].rx=max, sysctl.net.core.rmem_max=16777216");
	CHECK_STR(json_string_value(json_object_get(json_object_get(c, "profile"), "name")), "web-6");
	const json_t *prof = json_object_get(c, "profile");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(prof, "rings"), 0), "rx")), "max");
	CHECK_STR(json_string_value(json_object_get(json_object_get(prof, "sysctl"), "net.core.rmem_max")), "16777216");
	CHECK_STR(json_string_value(json_object_get(json_object_get(c, "assignment"), "rings[0].rx")), "max");
	json_decref(c);
	c = NULL;
	/* Lower is better: the lowest ratio of each factor, 4096's. */
	double low[5] = { 0.9, 0.7, 0.8, 1.0, 0.95 };
	CHECK_INT(nt_tune_combine(space, 5, won, low, true, &c, err, sizeof(err)), 0);
	CHECK_STR(json_string_value(json_object_get(c, "label")), "rings[0].rx=4096, sysctl.net.core.rmem_max=16777216");
	json_decref(c);
	c = NULL;
	/* One factor won: nothing to combine. */
	bool one[5] = { false, true, true, false, false };
	CHECK_INT(nt_tune_combine(space, 5, one, ratio, false, &c, err, sizeof(err)), 0);
	CHECK(c == NULL);
	/* Not the space the candidates came from. */
	CHECK_INT(nt_tune_combine(space, 6, won, ratio, false, &c, err, sizeof(err)), -EINVAL);
	CHECK(c == NULL && strstr(err, "5 candidates") != NULL);
	json_decref(cands);
	json_decref(space);
}

int main(void)
{
	test_set_path();
	test_combine();
	test_factorial();
	test_space_errors();
	test_same();
	test_best_and_drop();
	test_race();
	test_holm();
	test_holm_correction();
	test_numbers();
	TEST_MAIN_END();
}
