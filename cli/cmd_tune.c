/* SPDX-License-Identifier: Apache-2.0 */
/* nettune tune [--baseline B.json] CANDIDATE.json... | --space SPACE.json
 * [--budget 20m] [--max-rounds N] [--keep] [--report R.json] [--plot R.svg]
 * [--seed N] [--confidence C] -- COMMAND: which profile, if any, makes
 * COMMAND's figure better?
 *
 * Every candidate (the files, or the space expanded by cli/tune_space.c)
 * and the baseline are planned on the agent before anything is applied: a
 * refused one stops the run naming it and the JSON path, and candidates
 * that plan the same changes are merged. Then the race: sweeps of one
 * round of each arm still in it (the baseline and the candidates not
 * dropped), in an order drawn from a printed seed; after each sweep a
 * candidate shown worse than the best arm so far (its ratio interval
 * against it entirely on the worse side of 1) is dropped; the race ends
 * when the budget would not hold another sweep, every arm has --max-rounds
 * or every candidate is dropped. Last, Holm's step-down procedure judges
 * every candidate against the baseline (cli/tune_race.c): the winner is
 * the best of those shown better at their corrected level; without one
 * the baseline is kept, and said. A space raced one factor at a time then
 * has one more step, its factors' best levels combined and raced against
 * the winner and the baseline (cli/tune_combined.c).
 *
 * Each round is bench-run --compare's (cli/bench_round.c): the profile
 * applied by its plan id with a confirm window, reverted in place as soon
 * as COMMAND ends, so between rounds, and at the end, the host is as it
 * was; --keep then applies the winner with "persist" (the agent's desired
 * state, as `nettune apply --persist`). SIGINT, SIGTERM and SIGHUP end the
 * current round, put it back and stop with a report; a SIGKILL leaves at
 * most one round's profile, which the agent reverts when its window closes. */
#include "base/stats.h"
#include "cli/bench.h"
#include "cli/bench_design.h"
#include "cli/bench_judge.h"
#include "cli/bench_metrics.h"
#include "cli/bench_plot.h"
#include "cli/exit.h"
#include "cli/tune.h"
#include "cli/tune_run.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_BUDGET_S (20 * 60)

typedef nt_tune_arm arm;
typedef nt_tune_run tune;

double nt_tune_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void nt_tune_decide(tune *t, const arm *a, const char *decision, const char *fmt, ...)
{
	char reason[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	fprintf(stderr, "nettune: tune: %s: %s: %s\n", a->label, decision, reason);
	json_array_append_new(t->decisions, json_pack("{s:i,s:i,s:s,s:s}", "after_round", t->round_no, "candidate", a->id,
						      "decision", decision, "reason", reason));
	json_object_set_new(a->entry, "decision", json_string(decision));
	json_object_set_new(a->entry, "reason", json_string(reason));
}

int nt_tune_plan_arm(tune *t, arm *a)
{
	char err[4096];
	long status;
	json_t *ans = NULL;
	if (!a->profile) {
		a->key = json_array();
		return 0;
	}
	int cr = nt_bench_call(t->run.agent, "POST", "/v1/plan", a->profile, &status, &ans, err, sizeof(err));
	if (cr < 0) {
		fprintf(stderr, "nettune: tune: %s could not be planned: %s\n", a->label, err);
		json_decref(ans);
		return -2;
	}
	if (status != 200) {
		fprintf(stderr, "nettune: tune: %s was refused: %s\n", a->label, err);
		json_object_set_new(a->entry, "refused", json_string(err));
		json_decref(ans);
		return -1;
	}
	nt_bench_netns_warning(&t->ctx, json_object_get(ans, "steps"), t->report);
	a->key = nt_tune_plan_key(json_object_get(ans, "steps"));
	json_object_set_new(a->entry, "plan_steps", json_integer((json_int_t)json_array_size(a->key)));
	json_decref(ans);
	return a->key ? 0 : -2;
}

static int add_value(arm *a, double v, size_t sweep)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		double *x = realloc(a->values, cap * sizeof(*x));
		if (!x)
			return -1;
		a->values = x;
		size_t *w = realloc(a->sweep, cap * sizeof(*w));
		if (!w)
			return -1;
		a->sweep = w;
		a->cap = cap;
	}
	a->sweep[a->n] = sweep;
	a->values[a->n++] = v;
	return 0;
}

long nt_tune_concurrent_base(const arm *base, const arm *a, double **out)
{
	size_t k = 0;
	*out = malloc((base->n ? base->n : 1) * sizeof(**out));
	if (!*out)
		return -1;
	for (size_t i = 0; i < base->n; i++)
		for (size_t j = 0; j < a->n; j++)
			if (base->sweep[i] == a->sweep[j]) {
				(*out)[k++] = base->values[i];
				break;
			}
	return (long)k;
}

/* One round of A in SWEEP. Returns as nt_bench_round. The confirm window:
 * --confirm-timeout, else a minute more than four times the longest round
 * so far (10 minutes before any), so that a killed tune, or a dead agent
 * that comes back, leaves the host tuned for about a minute, not the hour
 * a single bench-run allows. */
int nt_tune_round(tune *t, arm *a, size_t sweep)
{
	double value = 0, t0 = nt_tune_now();
	t->round_no++;
	if (!t->o->confirm_timeout)
		t->run.ct = t->longest_s > 0 ? (long)ceil(60 + 4 * t->longest_s) : 600;
	json_t *rr = json_pack("{s:i,s:I,s:s,s:i,s:n,s:n,s:n,s:n,s:n,s:I}", "round", t->round_no, "sweep",
			       (json_int_t)sweep, "arm", a->name, "candidate", a->id, "value", "exit_status", "duration_s",
			       "transaction", "rollback", "confirm_timeout_s", (json_int_t)t->run.ct);
	if (!rr || json_array_append_new(t->rounds, rr) < 0)
		return NT_BENCH_FAILED;
	fprintf(stderr, "nettune: tune: round %d, sweep %zu, %s%s\n", t->round_no, sweep, a->label,
		a->profile ? "" : " (the host as it is)");
	int rc = nt_bench_round(&t->run, a->profile, a->id ? "candidate" : "baseline", t->round_no, rr, &value);
	double wall = nt_tune_now() - t0;
	a->wall_s += wall;
	t->rounds_wall_s += wall;
	if (wall > t->longest_s)
		t->longest_s = wall;
	if (rc == 0 && add_value(a, value, sweep) < 0)
		rc = NT_BENCH_FAILED;
	return rc;
}

static bool in_race(const arm *a)
{
	return !a->merged && !a->dropped;
}

/* After a sweep: each candidate shown worse than the best arm so far is
 * dropped. The drop is a heuristic of the race, at the confidence asked
 * without correction; the final judgement is Holm's. */
static void drop_worse(tune *t, size_t min_rounds)
{
	double **v = calloc(t->narms, sizeof(*v));
	size_t *n = calloc(t->narms, sizeof(*n));
	bool *alive = calloc(t->narms, sizeof(*alive));
	if (!v || !n || !alive)
		goto out;
	for (size_t k = 0; k < t->narms; k++) {
		v[k] = t->arms[k].values;
		n[k] = t->arms[k].n;
		alive[k] = in_race(&t->arms[k]);
	}
	int best = nt_tune_best(v, n, alive, t->narms, t->lower);
	if (best < 0 || n[best] < min_rounds)
		goto out;
	arm *b = &t->arms[best];
	for (size_t k = 1; k < t->narms; k++) {
		arm *a = &t->arms[k];
		nt_bench_effect e;
		if (!alive[k] || (int)k == best || a->n < min_rounds)
			continue;
		if (nt_tune_shown_worse(a->values, a->n, b->values, b->n, t->confidence, t->lower, &e) == 1) {
			a->dropped = true;
			json_object_set_new(a->entry, "dropped_after_round", json_integer(t->round_no));
			nt_tune_decide(t, a, "dropped",
			       "shown worse than the best so far, %s: %s/%s %.4g, %.4g%% CI [%.4g, %.4g] after %zu + %zu "
			       "rounds",
			       b->label, a->name, b->name, e.ratio, 100 * e.confidence, e.lo, e.hi, a->n, b->n);
		}
	}
out:
	free(v);
	free(n);
	free(alive);
}

void nt_tune_shuffle(tune *t, size_t *idx, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(nt_bench_splitmix64(&t->rng) % i);
		size_t x = idx[i - 1];
		idx[i - 1] = idx[j];
		idx[j] = x;
	}
}

static const char *outcome_word(enum nt_tune_outcome o)
{
	switch (o) {
	case NT_TUNE_BETTER: return "shown better";
	case NT_TUNE_WORSE: return "shown worse";
	case NT_TUNE_NOT_SHOWN: return "not shown better";
	default: return "too few rounds";
	}
}

static int write_plot(tune *t, const nt_tune_holm *h, const size_t *cand_arm, size_t m)
{
	nt_plot_arm *pa = calloc(t->narms, sizeof(*pa));
	char title[512];
	size_t np = 0;
	int rc = -1;
	if (!pa)
		return -1;
	for (size_t k = 0; k < t->narms; k++) {
		arm *a = &t->arms[k];
		nt_summary s;
		if (a->merged || !a->n)
			continue; /* the best levels combined, not raced, has no round */
		pa[np] = (nt_plot_arm){ .name = k ? a->label : a->label, .values = a->values, .n = a->n };
		if (a->n && nt_stats_summary(a->values, a->n, &s) == 0)
			pa[np].median = s.median;
		/* A candidate's interval of its ratio to the baseline, drawn
		 * in the figure's unit around the baseline's median. */
		for (size_t i = 0; i < m && k; i++)
			if (cand_arm[i] == k && h[i].effect.defined && h[i].effect.bounded && t->arms[0].n) {
				nt_summary bs;
				if (nt_stats_summary(t->arms[0].values, t->arms[0].n, &bs) == 0) {
					pa[np].interval = true;
					pa[np].lo = bs.median * h[i].effect.lo;
					pa[np].hi = bs.median * h[i].effect.hi;
				}
			}
		pa[np].note = a->dropped ? ", dropped" : NULL;
		np++;
	}
	snprintf(title, sizeof(title), "%s: tune, %zu candidates against the baseline", t->run.args[0], m);
	char *svg = nt_bench_svg_arms(title, t->run.unit, pa, np);
	if (svg)
		rc = nt_bench_write_text("tune", "the chart", svg, t->o->plot);
	else
		fprintf(stderr, "nettune: tune: out of memory for the chart\n");
	free(svg);
	free(pa);
	return rc;
}

/* Apply the winner W as the desired state: planned again (the plan of the
 * start may have expired) and applied with "persist", no confirm window. */
static int keep_winner(tune *t, arm *w)
{
	char err[2048];
	long status;
	json_t *ans = NULL, *req = NULL;
	int rc = -1;
	int cr = nt_bench_call(t->run.agent, "POST", "/v1/plan", w->profile, &status, &ans, err, sizeof(err));
	const char *plan_id = cr == 0 && status == 200 ? json_string_value(json_object_get(ans, "id")) : NULL;
	if (!plan_id) {
		fprintf(stderr, "nettune: tune: --keep: %s could not be planned: %s\n", w->label,
			cr == 0 && status == 200 ? "the plan has no id" : err);
		goto out;
	}
	req = json_pack("{s:s,s:b}", "plan_id", plan_id, "persist", true);
	json_decref(ans);
	ans = NULL;
	cr = nt_bench_call(t->run.agent, "POST", "/v1/transactions", req, &status, &ans, err, sizeof(err));
	const char *st = cr == 0 ? json_string_value(json_object_get(ans, "status")) : NULL;
	json_object_set_new(t->report, "keep",
			    json_pack("{s:i,s:O,s:s?}", "candidate", w->id, "transaction",
				      json_object_get(ans, "id") ?: json_null(), "status", st));
	if (cr < 0 || (status != 200 && status != 201) || !st || strcmp(st, "applied")) {
		fprintf(stderr, "nettune: tune: --keep: %s was not applied: %s\n", w->label,
			cr == 0 && st ? st : err);
		goto out;
	}
	fprintf(stderr, "nettune: tune: %s applied as the desired state (transaction %lld)\n", w->label,
		(long long)json_integer_value(json_object_get(ans, "id")));
	rc = 0;
out:
	json_decref(req);
	json_decref(ans);
	return rc;
}

/* The candidates from the files or the space into T's arms (after the
 * baseline). Returns 0 or an exit code. */
static int load_candidates(tune *t, int ncand, char **files)
{
	const cli_opts *o = t->o;
	json_t *cands = NULL;
	if (o->space) {
		json_t *space;
		const char *mode;
		char err[2048];
		if (nt_bench_load("tune", o->space, &space) < 0)
			return NT_EXIT_USAGE;
		int r = nt_tune_expand(space, &cands, &mode, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "nettune: tune: %s: %s\n", o->space, err);
			json_decref(space);
			return NT_EXIT_USAGE;
		}
		fprintf(stderr, "nettune: tune: %s: %zu candidates (%s)\n", o->space, json_array_size(cands), mode);
		json_object_set_new(t->report, "space",
				    json_pack("{s:s,s:O,s:s}", "file", o->space, "parameters",
					      json_object_get(space, "parameters"), "design", mode));
		t->space = space; /* for the best levels combined */
		t->design = mode;
		ncand = (int)json_array_size(cands);
	} else if (ncand > NT_TUNE_MAX_CANDIDATES) {
		fprintf(stderr, "nettune: tune: %d candidates, more than %d\n", ncand, NT_TUNE_MAX_CANDIDATES);
		return NT_EXIT_USAGE;
	}
	json_t *list = json_object_get(t->report, "candidates");
	for (int i = 0; i < ncand; i++) {
		arm *a = &t->arms[1 + i];
		a->id = 1 + i;
		snprintf(a->name, sizeof(a->name), "candidate %d", a->id);
		json_t *entry;
		if (cands) {
			json_t *c = json_array_get(cands, (size_t)i);
			a->profile = json_incref(json_object_get(c, "profile"));
			snprintf(a->label, sizeof(a->label), "candidate %d (%s)", a->id,
				 json_string_value(json_object_get(c, "label")));
			entry = json_pack("{s:i,s:n,s:O,s:O}", "id", a->id, "file", "assignment",
					  json_object_get(c, "assignment"), "profile", a->profile);
		} else {
			if (nt_bench_load("tune", files[i], &a->profile) < 0)
				return NT_EXIT_USAGE;
			snprintf(a->label, sizeof(a->label), "candidate %d (%s)", a->id, files[i]);
			entry = json_pack("{s:i,s:s,s:n,s:O}", "id", a->id, "file", files[i], "assignment", "profile",
					  a->profile);
		}
		a->entry = entry;
		json_array_append_new(list, entry);
	}
	json_decref(cands);
	t->narms = 1 + (size_t)ncand;
	return 0;
}

int nt_cmd_tune(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	(void)cmd;
	tune t = { .o = o, .confidence = NT_BENCH_CONFIDENCE, .budget_s = DEFAULT_BUDGET_S };
	int rc = NT_BENCH_FAILED, ncand = 0;
	char **command = args;
	int ncommand = nargs;
	nt_tune_holm *holm = NULL;
	size_t *cand_arm = NULL, m = 0;

	/* CANDIDATE.json... -- COMMAND: getopt stopped at the first file, so
	 * the "--" is still there; with --space it took the "--" itself. */
	if (o->space) {
		size_t l0 = nargs > 0 ? strlen(args[0]) : 0;
		for (int i = 1; l0 > 5 && !strcmp(args[0] + l0 - 5, ".json") && i < nargs; i++)
			if (!strcmp(args[i], "--")) {
				fprintf(stderr, "nettune: tune: --space takes no CANDIDATE.json ('%s'): the space makes the "
						"candidates\n", args[0]);
				return NT_EXIT_USAGE;
			}
		if (nargs > 0 && !strcmp(args[0], "--")) {
			command++;
			ncommand--;
		}
	} else {
		int sep = -1;
		for (int i = 0; i < nargs && sep < 0; i++)
			if (!strcmp(args[i], "--"))
				sep = i;
		for (int i = 0; i < sep; i++)
			if (args[i][0] == '-') {
				fprintf(stderr, "nettune: tune: '%s' after a candidate: options go before the candidates\n",
					args[i]);
				return NT_EXIT_USAGE;
			}
		ncand = sep < 0 ? 0 : sep;
		command = args + sep + 1;
		ncommand = sep < 0 ? 0 : nargs - sep - 1;
	}
	if ((!o->space && ncand < 1) || ncommand < 1) {
		fprintf(stderr, "nettune: tune wants [--baseline B.json] CANDIDATE.json... -- COMMAND, or --space "
				"SPACE.json -- COMMAND\n");
		return NT_EXIT_USAGE;
	}
	if (o->json && fcntl(STDOUT_FILENO, F_GETFD) < 0) {
		fprintf(stderr, "nettune: tune: --json writes the result to standard output, which is closed; give "
				"--report FILE\n");
		return NT_EXIT_USAGE;
	}
	t.run = (nt_bench_rounds){ .o = o, .ctx = &t.ctx, .args = command, .who = "tune", .run = "search",
				   .restored = true };
	t.run.agent = o->agent ? o->agent : getenv("NETTUNE_AGENT") ? getenv("NETTUNE_AGENT") : NT_CLI_DEFAULT_AGENT;
	t.run.ct = o->confirm_timeout > 0 ? o->confirm_timeout : NT_BENCH_DEFAULT_CONFIRM_S;
	t.lower = o->lower_is_better;
	if (nt_bench_metric_setup(o, "tune", &t.run) < 0)
		return NT_EXIT_USAGE;
	if (o->confidence && nt_bench_parse_confidence(o->confidence, &t.confidence) < 0) {
		fprintf(stderr, "nettune: tune: --confidence wants a level from 0.5 to 0.999 (or 50%% to 99.9%%) such as "
				"0.95, not '%s'\n", o->confidence);
		return NT_EXIT_USAGE;
	}
	if (o->budget && nt_tune_parse_budget(o->budget, &t.budget_s) < 0) {
		fprintf(stderr, "nettune: tune: --budget wants a duration from 1s to 7 days such as 20m, 90s or 1h30m, "
				"not '%s'\n", o->budget);
		return NT_EXIT_USAGE;
	}
	if (nt_bench_seed(o, "tune", &t.seed) < 0)
		return NT_EXIT_USAGE;
	t.rng = t.seed;
	if (nt_ctx_init(&t.ctx, o->root ? o->root : "/") < 0) {
		fprintf(stderr, "nettune: tune: bad --root %s\n", o->root);
		return NT_BENCH_FAILED;
	}
	/* With a space, one more: the best levels combined. */
	size_t max_arms = 1 + (size_t)(o->space ? NT_TUNE_MAX_CANDIDATES + 1 : ncand);
	t.max_arms = max_arms;
	if (!(t.arms = calloc(max_arms, sizeof(*t.arms))))
		return NT_BENCH_FAILED;
	char seed_text[32];
	snprintf(seed_text, sizeof(seed_text), "%llu", (unsigned long long)t.seed);
	t.report = json_pack("{s:s,s:s,s:f,s:f,s:o,s:s,s:[],s:[],s:[],s:[],s:n,s:n}", "mode", "tune", "seed", seed_text,
			     "confidence", t.confidence, "budget_s", t.budget_s, "max_rounds",
			     o->max_rounds ? json_integer(o->max_rounds) : json_null(), "agent", t.run.agent, "command",
			     "candidates", "rounds", "decisions", "winner", "budget_used_s");
	if (!t.report)
		goto out;
	for (int i = 0; i < ncommand; i++)
		json_array_append_new(json_object_get(t.report, "command"), json_string(command[i]));
	t.run.report = t.report;
	t.rounds = json_object_get(t.report, "rounds");
	t.decisions = json_object_get(t.report, "decisions");

	/* The baseline: the host as it is, or B. */
	arm *base = &t.arms[0];
	snprintf(base->name, sizeof(base->name), "baseline");
	if (o->baseline) {
		if (nt_bench_load("tune", o->baseline, &base->profile) < 0) {
			rc = NT_EXIT_USAGE;
			goto out;
		}
		snprintf(base->label, sizeof(base->label), "baseline (%s)", o->baseline);
	} else {
		snprintf(base->label, sizeof(base->label), "baseline");
	}
	base->entry = json_pack("{s:o,s:O}", "file", o->baseline ? json_string(o->baseline) : json_null(), "profile",
				base->profile ?: json_null());
	json_object_set_new(t.report, "baseline", base->entry);
	if ((rc = load_candidates(&t, ncand, args)) != 0)
		goto out;
	rc = NT_BENCH_FAILED;

	/* Every profile planned before anything is applied: all refusals
	 * said at once, each naming its candidate and the JSON paths. */
	if (o->near && nt_cli_bind_near(o, o->near, NULL, 0) != 0)
		goto out;
	int refused = 0;
	for (size_t k = 0; k < t.narms; k++) {
		int pr = nt_tune_plan_arm(&t, &t.arms[k]);
		if (pr == -2)
			goto out;
		refused += pr < 0;
	}
	if (refused) {
		fprintf(stderr, "nettune: tune: %d of %zu profiles refused; nothing was applied\n", refused, t.narms);
		rc = NT_EXIT_REFUSED;
		goto out;
	}
	/* Candidates that plan the same changes are one candidate. */
	{
		json_t **keys = calloc(t.narms, sizeof(*keys));
		size_t *same = calloc(t.narms, sizeof(*same));
		if (!keys || !same) {
			free(keys);
			free(same);
			goto out;
		}
		for (size_t k = 0; k < t.narms; k++)
			keys[k] = t.arms[k].key;
		nt_tune_same(keys, t.narms, same);
		for (size_t k = 1; k < t.narms; k++) {
			if (same[k] == k)
				continue;
			arm *a = &t.arms[k], *into = &t.arms[same[k]];
			a->merged = true;
			json_object_set_new(a->entry, "merged_into", json_integer(into->id));
			nt_tune_decide(&t, a, "merged",
			       same[k] == 0 ? "it plans the same changes as the baseline (%s): not raced" :
					      "it plans the same changes as %s: raced as that one",
			       same[k] == 0 ? (json_array_size(a->key) ? "the same steps" : "no change to this host") :
					      into->label);
		}
		free(keys);
		free(same);
	}
	for (size_t k = 1; k < t.narms; k++)
		m += !t.arms[k].merged;
	if (!m) {
		fprintf(stderr, "nettune: tune: no candidate differs from the baseline: nothing to race\n");
		rc = NT_EXIT_USAGE;
		goto out;
	}
	size_t need = nt_tune_min_rounds(m, t.confidence), need_drop = nt_stats_min_rounds(t.confidence);
	double strictest = 1 - (1 - t.confidence) / (double)m;
	if (o->max_rounds && (size_t)o->max_rounds < need) {
		fprintf(stderr, "nettune: tune: --max-rounds %ld cannot show anything: the first of %zu comparisons is "
				"judged at %.4g%% (Holm), which needs %zu rounds of each arm\n",
			o->max_rounds, m, 100 * strictest, need);
		rc = NT_EXIT_USAGE;
		goto out;
	}
	json_object_set_new(t.report, "holm_levels", json_pack("{s:I,s:f,s:f,s:I}", "comparisons", (json_int_t)m,
								 "strictest", strictest, "loosest", t.confidence,
								 "rounds_needed", (json_int_t)need));
	fprintf(stderr, "nettune: tune: %zu candidates against the %s, seed %llu (--seed %llu repeats the order), "
			"budget %.0f s; each comparison at its Holm level, from %.4g%% to %.4g%%, needs %zu rounds an arm\n",
		m, base->label, (unsigned long long)t.seed, (unsigned long long)t.seed, t.budget_s, 100 * strictest,
		100 * t.confidence, need);

	nt_bench_catch_signals();
	t.start = nt_tune_now();
	int stop = 0;
	const char *stopped_by = NULL;
	size_t *order = calloc(t.narms, sizeof(*order));
	if (!order)
		goto out;
	/* The first round is the baseline's, which also times a round: a
	 * budget that cannot hold the rounds any comparison needs is refused
	 * before a candidate is applied. */
	stop = nt_tune_round(&t, base, 1);
	if (!stop) {
		double per = t.rounds_wall_s, want = per * (double)(need * (m + 1));
		if (want > t.budget_s) {
			fprintf(stderr, "nettune: tune: --budget %.0f s is too small: a round took %.2f s, and %zu rounds of "
					"each of the %zu arms (what a comparison at %.4g%% needs) take about %.0f s; no "
					"candidate was applied\n",
				t.budget_s, per, need, m + 1, 100 * strictest, want);
			json_object_set_new(t.report, "stopped_by", json_string("budget too small"));
			rc = NT_EXIT_USAGE;
			free(order);
			goto finish;
		}
	}
	for (size_t sweep = 1; !stop; sweep++) {
		size_t no = 0, cands = 0;
		for (size_t k = 0; k < t.narms; k++) {
			arm *a = &t.arms[k];
			if (!in_race(a) || (o->max_rounds && a->n >= (size_t)o->max_rounds) || (sweep == 1 && k == 0))
				continue;
			order[no++] = k;
			cands += k > 0;
		}
		if (!cands) {
			bool any = false;
			for (size_t k = 1; k < t.narms; k++)
				any |= in_race(&t.arms[k]);
			stopped_by = any ? "max rounds" : "every candidate dropped";
			break;
		}
		double avg = t.rounds_wall_s / (double)t.round_no;
		if (sweep > 1 && nt_tune_now() - t.start + avg * (double)no > t.budget_s) {
			stopped_by = "budget";
			break;
		}
		nt_tune_shuffle(&t, order, no);
		t.sweeps = sweep;
		for (size_t i = 0; i < no && !stop; i++)
			stop = nt_tune_round(&t, &t.arms[order[i]], sweep);
		if (!stop)
			drop_worse(&t, need_drop);
	}
	free(order);
	if (stop)
		stopped_by = nt_bench_signal() ? "signal" : "a failed round";
	json_object_set_new(t.report, "stopped_by", json_string(stopped_by));
	json_object_set_new(t.report, "elapsed_s", json_real(nt_tune_now() - t.start));
	fprintf(stderr, "nettune: tune: the race ended (%s) after %d rounds in %.1f s\n", stopped_by, t.round_no,
		nt_tune_now() - t.start);
	if (stop) {
		rc = stop;
		goto finish;
	}

	/* Holm over every candidate raced, dropped ones included. */
	holm = calloc(m, sizeof(*holm));
	cand_arm = calloc(m, sizeof(*cand_arm));
	double **cv = calloc(m, sizeof(*cv)), **bv = calloc(m, sizeof(*bv));
	size_t *cn = calloc(m, sizeof(*cn)), *bn = calloc(m, sizeof(*bn));
	int winner = -1, hr = -ENOMEM;
	if (!holm || !cand_arm || !cv || !cn || !bv || !bn)
		goto judged;
	for (size_t k = 1, i = 0; k < t.narms; k++)
		if (!t.arms[k].merged) {
			cand_arm[i] = k;
			cv[i] = t.arms[k].values;
			cn[i] = t.arms[k].n;
			long nb = nt_tune_concurrent_base(base, &t.arms[k], &bv[i]);
			if (nb < 0)
				goto judged;
			bn[i++] = (size_t)nb;
		}
	hr = nt_tune_holm_judge(bv, bn, cv, cn, m, t.confidence, t.lower, holm, &winner);
judged:
	for (size_t i = 0; bv && i < m; i++) {
		if (cand_arm && cand_arm[i] && bn)
			json_object_set_new(t.arms[cand_arm[i]].entry, "baseline_rounds_compared",
					    json_integer((json_int_t)bn[i]));
		free(bv[i]);
	}
	free(cv);
	free(cn);
	free(bv);
	free(bn);
	if (hr < 0) {
		fprintf(stderr, "nettune: tune: the figures cannot be compared\n");
		goto finish;
	}
	json_t *hj = json_array();
	char a_[48], b_[48];
	nt_summary bs;
	fprintf(stderr, "\ntune: %zu candidates against the %s, seed %llu; figure: %s (%s, %s is better)\n\n", m,
		base->label, (unsigned long long)t.seed, t.run.reader, *t.run.unit ? t.run.unit : "no unit",
		t.lower ? "lower" : "higher");
	if (nt_stats_summary(base->values, base->n, &bs) == 0) {
		nt_bench_fmt_value(a_, sizeof(a_), bs.median, t.run.unit);
		json_object_set_new(base->entry, "rounds", json_integer((json_int_t)base->n));
		json_object_set_new(base->entry, "median", json_real(bs.median));
		fprintf(stderr, "%-40.40s  %6zu rounds  median %s\n", base->label, base->n, a_);
	}
	for (size_t i = 0; i < m; i++) {
		arm *a = &t.arms[cand_arm[i]];
		nt_tune_holm *h = &holm[i];
		nt_summary s;
		b_[0] = '\0';
		if (a->n && nt_stats_summary(a->values, a->n, &s) == 0) {
			nt_bench_fmt_value(b_, sizeof(b_), s.median, t.run.unit);
			json_object_set_new(a->entry, "median", json_real(s.median));
		}
		json_object_set_new(a->entry, "rounds", json_integer((json_int_t)a->n));
		const nt_bench_effect *e = &h->effect;
		json_t *row = json_pack("{s:i,s:I,s:o,s:f,s:o,s:o,s:o,s:f,s:b,s:s,s:b}", "candidate", a->id, "step",
					(json_int_t)h->step, "p_value", nt_bench_real_or_null(h->p), "level", h->level,
					"ratio", e->defined ? nt_bench_real_or_null(e->ratio) : json_null(), "ratio_lo",
					e->defined && e->bounded ? nt_bench_real_or_null(e->lo) : json_null(), "ratio_hi",
					e->defined && e->bounded ? nt_bench_real_or_null(e->hi) : json_null(),
					"confidence", e->confidence, "exact", e->exact, "outcome", outcome_word(h->outcome),
					"holm_stopped", h->stopped);
		json_array_append_new(hj, row);
		json_object_set_new(a->entry, "holm", json_incref(row));
		fprintf(stderr, "%-40.40s  %6zu rounds  median %s; vs baseline (its %lld rounds of the same sweeps) %.4g",
			a->label, a->n, b_, (long long)json_integer_value(json_object_get(a->entry, "baseline_rounds_compared")),
			e->ratio);
		if (e->defined && e->bounded)
			fprintf(stderr, ", %.4g%% CI [%.4g, %.4g]", 100 * e->confidence, e->lo, e->hi);
		fprintf(stderr, " (Holm step %zu of %zu at %.4g%%, p = %.3g): %s%s%s\n", h->step, m, 100 * h->level, h->p,
			outcome_word(h->outcome), h->stopped ? " (Holm stopped at an earlier step)" : "",
			a->dropped ? "; dropped in the race" : "");
	}
	json_object_set_new(t.report, "holm", hj);
	/* The other figures, per candidate: what the race did not judge. */
	const char *primary = nt_bench_primary_name(t.run.source, t.run.metric_arg);
	for (size_t i = 0, shown = 0; i < m; i++) {
		arm *a = &t.arms[cand_arm[i]];
		json_t *mj = nt_tune_metrics(&t, a, primary);
		if (!mj)
			continue;
		if (json_array_size(mj) > 1) {
			if (!shown++) {
				fprintf(stderr, "\nthe other figures of COMMAND's output, each candidate against the "
						"baseline's rounds of its sweeps, not judged (the race and Holm judge %s "
						"alone):\n",
					primary);
				nt_bench_metrics_header(stderr);
			}
			fprintf(stderr, "%s\n", a->label);
			nt_bench_metrics_rows(mj, stderr);
		}
		json_object_set_new(a->entry, "metrics", mj);
	}
	/* Each candidate's last word. */
	for (size_t i = 0; i < m; i++) {
		arm *a = &t.arms[cand_arm[i]];
		nt_tune_holm *h = &holm[i];
		char why[512];
		char iv[128];
		if (h->effect.defined && h->effect.bounded)
			snprintf(iv, sizeof(iv), " [%.4g, %.4g]", h->effect.lo, h->effect.hi);
		else
			snprintf(iv, sizeof(iv), ", no interval");
		snprintf(why, sizeof(why), "against the baseline %.4g%s at %.4g%% (Holm step %zu of %zu)%s", h->effect.ratio,
			 iv, 100 * h->level, h->step, m, h->stopped ? ", not judged: Holm stopped at an earlier step" : "");
		if ((int)i == winner)
			nt_tune_decide(&t, a, "winner", "shown better, the best of those shown better: %s", why);
		else if (h->outcome == NT_TUNE_BETTER)
			nt_tune_decide(&t, a, "shown better, not the best", "%s", why);
		else if (a->dropped) {
			json_object_set_new(a->entry, "final", json_string(outcome_word(h->outcome)));
			nt_tune_decide(&t, a, "dropped", "dropped in the race after round %lld; %s %s",
			       (long long)json_integer_value(json_object_get(a->entry, "dropped_after_round")),
			       outcome_word(h->outcome), why);
		}
		else if (h->outcome == NT_TUNE_WORSE)
			nt_tune_decide(&t, a, "shown worse", "%s", why);
		else if (h->outcome == NT_TUNE_NOT_SHOWN)
			nt_tune_decide(&t, a, "not shown better", "%s", why);
		else
			nt_tune_decide(&t, a, "not shown better", "too few rounds for an interval at %.4g%% (%zu + %lld)",
			       100 * h->level, a->n,
			       (long long)json_integer_value(json_object_get(a->entry, "baseline_rounds_compared")));
	}
	arm *w = winner >= 0 ? &t.arms[cand_arm[winner]] : NULL;
	/* One factor at a time, then the best levels combined: a step of its
	 * own (cli/tune_combined.c), which may change the winner. */
	if (w && t.design && !strcmp(t.design, "one-factor-at-a-time")) {
		int cr = nt_tune_combined(&t, &w);
		if (cr) {
			rc = cr;
			json_object_set_new(t.report, "stopped_by",
					    json_string(nt_bench_signal() ? "signal" : "a failed round"));
			goto finish;
		}
	}
	if (w) {
		json_object_set_new(t.report, "winner", json_integer(w->id));
		if (o->keep) {
			rc = keep_winner(&t, w) == 0 ? NT_EXIT_OK : NT_BENCH_FAILED;
		} else {
			fprintf(stderr, "nettune: tune: winner %s; the host is as it was (--keep makes the winner the "
					"desired state)\n", w->label);
			rc = NT_EXIT_OK;
		}
	} else {
		json_object_set_new(t.report, "winner", json_null());
		fprintf(stderr, "nettune: tune: no candidate was shown better than the %s: the baseline is kept%s\n",
			base->label, o->keep ? " (--keep applies nothing)" : "");
		rc = NT_EXIT_NO_WINNER;
	}
	if (o->plot && write_plot(&t, holm, cand_arm, m) < 0 && rc == NT_EXIT_OK)
		rc = NT_BENCH_FAILED;
finish:
	/* The budget used: the race's time, its first round (the baseline's,
	 * which times a round) included. */
	json_object_set_new(t.report, "budget_used_s", json_real(nt_tune_now() - t.start));
	json_object_set_new(t.report, "host_restored", json_boolean(t.run.restored));
	json_object_set_new(t.report, "interrupted_by",
			    nt_bench_signal() ? json_string(strsignal(nt_bench_signal())) : json_null());
	json_object_set_new(t.report, "metric",
			    json_pack("{s:s,s:s,s:s}", "reader", t.run.reader, "unit", t.run.unit, "better",
				      t.lower ? "lower" : "higher"));
out:
	if (t.report && !t.run.restored)
		rc = NT_BENCH_FAILED;
	if (t.report)
		json_object_set_new(t.report, "exit_status", json_integer(rc));
	if (t.report && o->report && nt_bench_write_report(t.report, o->report) < 0 && (rc == 0 || rc == NT_EXIT_NO_WINNER))
		rc = NT_BENCH_FAILED;
	/* --json: the same document on stdout, written once the candidates
	 * were read (a refusal's too: it names each refused candidate). A
	 * document that cannot be written fails the run, as bench-run's. */
	if (t.report && o->json && nt_bench_json_stdout(t.report, "tune") < 0)
		rc = NT_BENCH_FAILED;
	for (size_t k = 0; t.arms && k < max_arms; k++) {
		json_decref(t.arms[k].profile);
		json_decref(t.arms[k].key);
		free(t.arms[k].values);
		free(t.arms[k].sweep);
	}
	free(t.arms);
	free(holm);
	free(cand_arm);
	json_decref(t.report);
	json_decref(t.space);
	return rc;
}
