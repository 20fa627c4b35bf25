/* SPDX-License-Identifier: Apache-2.0 */
/* nettune tune's last step after a space raced one factor at a time: the
 * best levels combined (cli/tune_run.h, nt_tune_combined). One factor at a
 * time measures each level alone on the base, so it cannot say whether
 * two levels that each helped help together (a larger ring and a larger
 * socket buffer may both relieve the same bottleneck); the combination is
 * therefore not simply declared the winner but raced as its own step,
 * against the race's winner and the baseline in fresh sweeps (their
 * rounds from the race were taken earlier, on a host that may have
 * drifted), and kept only when shown better than both, Holm over the two
 * comparisons. */
#include "base/stats.h"
#include "cli/tune_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The report's object of a comparison in the step. */
static json_t *holm_json(const nt_tune_holm *h, const char *against)
{
	const nt_bench_effect *e = &h->effect;
	static const char *const words[] = { "not shown better", "shown better", "shown worse", "too few rounds" };
	return json_pack("{s:s,s:I,s:o,s:f,s:o,s:o,s:o,s:f,s:s}", "against", against, "step", (json_int_t)h->step,
			 "p_value", nt_bench_real_or_null(h->p), "level", h->level, "ratio",
			 e->defined ? nt_bench_real_or_null(e->ratio) : json_null(), "ratio_lo",
			 e->defined && e->bounded ? nt_bench_real_or_null(e->lo) : json_null(), "ratio_hi",
			 e->defined && e->bounded ? nt_bench_real_or_null(e->hi) : json_null(), "confidence",
			 e->confidence, "outcome", words[h->outcome]);
}

static void say(const nt_tune_holm *h, const char *against, const char *unit, const nt_tune_arm *c, double base_median)
{
	char med[48];
	nt_bench_fmt_value(med, sizeof(med), base_median, unit);
	fprintf(stderr, "  vs %s (median %s in this step): %.4g", against, med, h->effect.ratio);
	if (h->effect.defined && h->effect.bounded)
		fprintf(stderr, ", %.4g%% CI [%.4g, %.4g]", 100 * h->effect.confidence, h->effect.lo, h->effect.hi);
	fprintf(stderr, " (Holm step %zu of 2 at %.4g%%, p = %.3g, %zu + %zu rounds): %s%s\n", h->step,
		100 * h->level, h->p, c->n, c->n,
		h->outcome == NT_TUNE_BETTER ? "shown better" : h->outcome == NT_TUNE_WORSE ? "shown worse" : "not shown better",
		h->stopped ? " (Holm stopped at an earlier step)" : "");
}

static double median(const nt_tune_arm *a)
{
	nt_summary s;
	return a->n && nt_stats_summary(a->values, a->n, &s) == 0 ? s.median : NAN;
}

int nt_tune_combined(nt_tune_run *t, nt_tune_arm **w)
{
	size_t n = t->narms - 1; /* the space's candidates, merged ones included */
	bool *won = calloc(n ? n : 1, sizeof(*won));
	double *ratio = calloc(n ? n : 1, sizeof(*ratio));
	json_t *cand = NULL, *rec = json_object();
	nt_tune_arm sb = { 0 }, sw = { 0 }, *c = NULL;
	char err[1024];
	int rc = 0;

	if (!won || !ratio || !rec)
		goto out;
	json_object_set_new(t->report, "combined", json_incref(rec));
	/* Each level against the baseline's rounds of its own sweeps. */
	for (size_t k = 0; k < n; k++) {
		const nt_tune_arm *a = &t->arms[k + 1];
		double *bv = NULL;
		nt_bench_effect e;
		long nb = a->merged || !a->n ? 0 : nt_tune_concurrent_base(&t->arms[0], a, &bv);
		if (nb > 0 && nt_bench_effect_of(bv, (size_t)nb, a->values, a->n, t->confidence, &e) == 0 && e.defined &&
		    e.bounded && (t->lower ? e.hi < 1 : e.lo > 1)) {
			won[k] = true;
			ratio[k] = e.ratio;
		}
		free(bv);
	}
	if (nt_tune_combine(t->space, n, won, ratio, t->lower, &cand, err, sizeof(err)) < 0) {
		fprintf(stderr, "nettune: tune: best levels combined: %s\n", err);
		json_object_set_new(rec, "raced", json_false());
		json_object_set_new(rec, "reason", json_string(err));
		goto out;
	}
	if (!cand) {
		const char *why = "fewer than two factors have a level shown better than the baseline: nothing to "
				  "combine";
		fprintf(stderr, "nettune: tune: best levels combined: %s\n", why);
		json_object_set_new(rec, "raced", json_false());
		json_object_set_new(rec, "reason", json_string(why));
		goto out;
	}
	/* The combination is one more candidate, in the report's list too. */
	c = &t->arms[t->narms];
	c->id = (int)t->narms;
	snprintf(c->name, sizeof(c->name), "candidate %d", c->id);
	snprintf(c->label, sizeof(c->label), "candidate %d (%s)", c->id,
		 json_string_value(json_object_get(cand, "label")));
	c->profile = json_incref(json_object_get(cand, "profile"));
	c->entry = json_pack("{s:i,s:n,s:O,s:O,s:b}", "id", c->id, "file", "assignment",
			     json_object_get(cand, "assignment"), "profile", c->profile, "combined", true);
	json_array_append_new(json_object_get(t->report, "candidates"), c->entry);
	t->narms++;
	json_object_set_new(rec, "candidate", json_integer(c->id));
	json_object_set_new(rec, "winner_before", json_integer((*w)->id));
	fprintf(stderr, "\nnettune: tune: best levels combined: %s, raced against the winner %s and the %s\n", c->label,
		(*w)->label, t->arms[0].label);
	int pr = nt_tune_plan_arm(t, c);
	if (pr == -2) {
		rc = NT_BENCH_FAILED;
		goto out;
	}
	if (pr < 0) {
		json_object_set_new(rec, "raced", json_false());
		nt_tune_decide(t, c, "not raced", "the agent refused the combination of the best levels");
		json_object_set_new(rec, "reason", json_string("refused"));
		goto out;
	}
	if (json_equal(c->key, (*w)->key) || json_equal(c->key, t->arms[0].key)) {
		bool same_w = json_equal(c->key, (*w)->key);
		json_object_set_new(rec, "raced", json_false());
		nt_tune_decide(t, c, "merged", "it plans the same changes as %s: not raced",
			       same_w ? (*w)->label : t->arms[0].label);
		json_object_set_new(rec, "reason", json_string("the same plan"));
		goto out;
	}
	/* Rounds: what the stricter of the two Holm levels needs, or
	 * --max-rounds; within the budget left, or not at all. */
	size_t need = nt_tune_min_rounds(2, t->confidence);
	size_t rounds = t->o->max_rounds && (size_t)t->o->max_rounds > need ? (size_t)t->o->max_rounds : need;
	double avg = t->round_no ? t->rounds_wall_s / (double)t->round_no : 0;
	double left = t->budget_s - (nt_tune_now() - t->start), want = avg * (double)(3 * rounds);
	json_object_set_new(rec, "rounds_per_arm", json_integer((json_int_t)rounds));
	if (want > left) {
		char why[256];
		snprintf(why, sizeof(why), "the budget left (%.0f s) cannot hold %zu rounds of each of the three arms "
					   "(about %.0f s)", left > 0 ? left : 0, rounds, want);
		json_object_set_new(rec, "raced", json_false());
		json_object_set_new(rec, "reason", json_string(why));
		nt_tune_decide(t, c, "not raced", "%s", why);
		goto out;
	}
	/* The step's own arms: the baseline's and the winner's profiles with
	 * fresh figures, so that all three are measured side by side. */
	sb = (nt_tune_arm){ .id = 0, .profile = t->arms[0].profile, .entry = t->arms[0].entry };
	snprintf(sb.name, sizeof(sb.name), "%s", t->arms[0].name);
	snprintf(sb.label, sizeof(sb.label), "%s", t->arms[0].label);
	sw = (nt_tune_arm){ .id = (*w)->id, .profile = (*w)->profile, .entry = (*w)->entry };
	snprintf(sw.name, sizeof(sw.name), "%s", (*w)->name);
	snprintf(sw.label, sizeof(sw.label), "%s", (*w)->label);
	nt_tune_arm *arms[3] = { &sb, &sw, c };
	fprintf(stderr, "nettune: tune: %zu sweeps of the three arms, about %.0f s\n", rounds, want);
	for (size_t s = 0; s < rounds && !rc; s++) {
		size_t order[3] = { 0, 1, 2 };
		size_t sweep = ++t->sweeps;
		nt_tune_shuffle(t, order, 3);
		for (size_t i = 0; i < 3 && !rc; i++) {
			rc = nt_tune_round(t, arms[order[i]], sweep);
			json_object_set_new(json_array_get(t->rounds, json_array_size(t->rounds) - 1), "step",
					    json_string("combined"));
		}
	}
	json_object_set_new(rec, "raced", json_true());
	if (rc)
		goto out;
	/* Holm over the two comparisons, the combination against each. */
	double *bv[2] = { sb.values, sw.values }, *cv[2] = { c->values, c->values };
	size_t bn[2] = { sb.n, sw.n }, cn[2] = { c->n, c->n };
	nt_tune_holm h[2];
	int best = -1;
	if (nt_tune_holm_judge(bv, bn, cv, cn, 2, t->confidence, t->lower, h, &best) < 0) {
		fprintf(stderr, "nettune: tune: the figures of the combination cannot be compared\n");
		rc = NT_BENCH_FAILED;
		goto out;
	}
	json_object_set_new(rec, "against_baseline", holm_json(&h[0], "baseline"));
	json_object_set_new(rec, "against_winner", holm_json(&h[1], "winner"));
	json_object_set_new(c->entry, "rounds", json_integer((json_int_t)c->n));
	json_object_set_new(c->entry, "median", nt_bench_real_or_null(median(c)));
	char med[48];
	nt_bench_fmt_value(med, sizeof(med), median(c), t->run.unit);
	fprintf(stderr, "%s: %zu rounds, median %s\n", c->label, c->n, med);
	say(&h[0], "the baseline", t->run.unit, c, median(&sb));
	say(&h[1], (*w)->label, t->run.unit, c, median(&sw));
	if (h[0].outcome == NT_TUNE_BETTER && h[1].outcome == NT_TUNE_BETTER) {
		nt_tune_arm *old = *w;
		nt_tune_decide(t, c, "winner",
			       "the best levels combined, shown better than the baseline (%.4g) and than %s (%.4g) in a "
			       "step of their own",
			       h[0].effect.ratio, old->label, h[1].effect.ratio);
		nt_tune_decide(t, old, "shown better, not the best",
			       "the best levels combined, %s, were shown better than it (%.4g)", c->label,
			       h[1].effect.ratio);
		json_object_set_new(rec, "outcome", json_string("winner"));
		*w = c;
	} else {
		nt_tune_decide(t, c, "not shown better than the winner",
			       "against the baseline %.4g (%s), against %s %.4g (%s): %s stays the winner",
			       h[0].effect.ratio, h[0].outcome == NT_TUNE_BETTER ? "shown better" : "not shown better",
			       (*w)->label, h[1].effect.ratio,
			       h[1].outcome == NT_TUNE_BETTER ? "shown better" : "not shown better", (*w)->label);
		json_object_set_new(rec, "outcome", json_string("not shown better than the winner"));
	}
out:
	free(sb.values);
	free(sb.sweep);
	free(sw.values);
	free(sw.sweep);
	free(won);
	free(ratio);
	json_decref(cand);
	json_decref(rec);
	return rc;
}
