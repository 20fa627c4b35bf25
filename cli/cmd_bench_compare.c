/* SPDX-License-Identifier: Apache-2.0 */
/* nettune bench-run --compare ROUNDS --profile P.json [--baseline B.json]
 * -- COMMAND: did the profile help? COMMAND runs 2 x ROUNDS times, a
 * baseline round (the host as it is, or B applied) and a candidate round
 * (P applied) in each block, the blocks in mirrored couples AB BA or BA AB
 * drawn from a printed seed (cli/bench_design.h), so that a slow drift of
 * the host (a warming NIC, a neighbour's load) falls on both arms alike;
 * --warmup runs one baseline round first and discards its figure;
 * --paired judges the blocks' log-ratios (signed-rank test, Walsh
 * interval) instead of the two arms as samples. Each
 * applied round is its own transaction with a confirm window, rolled back
 * (reverted in place) as soon as COMMAND ends, exactly as a single
 * bench-run (cli/cmd_bench.c): a SIGKILL leaves at most one round's
 * profile, which the agent reverts when its window closes; SIGINT, SIGTERM
 * and SIGHUP end the round, put the host back and stop.
 *
 * Each round's figure is read from COMMAND's standard output (cli/metric.h)
 * and its counters taken as bench-run takes them; the arms are summarised
 * and compared by the Mann-Whitney U test (base/stats.h), judged against
 * the CI gates (cli/bench_judge.h), and shown as a table on stderr, JSON
 * (--json on stdout, --report FILE) and an SVG chart (--plot FILE). */
#include "base/stats.h"
#include "cli/bench.h"
#include "cli/bench_design.h"
#include "cli/bench_judge.h"
#include "cli/bench_metrics.h"
#include "cli/bench_plot.h"
#include "cli/escape.h"
#include "cli/exit.h"
#include "cli/metric.h"
#include "host/counters.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ARM_BASE, ARM_CAND };
static const char *const arm_name[2] = { "baseline", "candidate" };

typedef struct compare {
	const cli_opts *o;
	char **args;
	const char *agent;
	long ct;
	nt_ctx ctx;
	json_t *profile[2]; /* NULL: the baseline is the host as it is */
	nt_bench_rounds run; /* the round runner's state (cli/bench.h) */
	nt_bench_gates gates;
	double *values[2];
	size_t n[2];
	const char *unit, *reader; /* run's */
	json_t *report, *rounds;
	uint64_t seed;
	unsigned char *arm; /* the design: round i's arm and block */
	size_t *block;
} compare;

/* One round of ARM, number K (from 1; 0 the warm-up round, whose figure
 * counts in no arm) in block BLOCK (from 0), recorded in c->rounds and,
 * when its figure was read, c->values. Returns 0, or NT_BENCH_FAILED or
 * 128+N (signal N) to stop; the host is put back before either. */
static int one_round(compare *c, int arm, int k, size_t block)
{
	bool warmup = k == 0;
	json_t *rr;
	double value = 0;

	rr = json_pack("{s:i,s:s,s:o,s:b,s:n,s:n,s:n,s:n,s:n}", "round", k, "arm", arm_name[arm], "block",
		       warmup ? json_null() : json_integer((json_int_t)block + 1), "warmup", warmup, "value",
		       "exit_status", "duration_s", "transaction", "rollback");
	if (!rr || json_array_append_new(c->rounds, rr) < 0)
		return NT_BENCH_FAILED;
	if (warmup)
		fprintf(stderr, "nettune: bench-run: warm-up round, %s%s, its figure discarded\n", arm_name[arm],
			c->profile[arm] ? "" : " (the host as it is)");
	else
		fprintf(stderr, "nettune: bench-run: round %d of %zu, block %zu, %s%s\n", k, 2 * (size_t)c->o->compare,
			block + 1, arm_name[arm], c->profile[arm] ? "" : " (the host as it is)");
	int rc = nt_bench_round(&c->run, c->profile[arm], arm_name[arm], k, rr, &value);
	if (rc == 0 && !warmup)
		c->values[arm][c->n[arm]++] = value;
	return rc;
}

static json_t *arm_json(const nt_summary *s, const json_t *profile)
{
	return json_pack("{s:O,s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "profile",
			 profile ? json_object_get(profile, "name") ?: json_string("") : json_null(), "rounds",
			 (json_int_t)s->n, "median", nt_bench_real_or_null(s->median), "q1", nt_bench_real_or_null(s->q1), "q3",
			 nt_bench_real_or_null(s->q3), "iqr", nt_bench_real_or_null(s->iqr), "min", nt_bench_real_or_null(s->min), "max",
			 nt_bench_real_or_null(s->max));
}

/* The effect in the report: the ratio's estimate and interval, and the
 * same as a gain in the better direction. */
static json_t *effect_json(const nt_bench_effect *e, const nt_bench_verdict *v, const nt_bench_gates *g)
{
	if (!e->defined)
		return json_pack("{s:s, s:n, s:f}", "method", "hodges-lehmann-log-ratio", "ratio", "confidence_asked",
				 g->confidence);
	return json_pack("{s:s, s:o, s:o, s:o, s:f, s:f, s:b, s:b, s:o, s:o, s:o}", "method",
			 "hodges-lehmann-log-ratio", "ratio", nt_bench_real_or_null(e->ratio), "ratio_lo",
			 e->bounded ? nt_bench_real_or_null(e->lo) : json_null(), "ratio_hi",
			 e->bounded ? nt_bench_real_or_null(e->hi) : json_null(), "confidence_asked", g->confidence, "confidence",
			 e->confidence, "bounded", e->bounded, "exact", e->exact, "gain", nt_bench_real_or_null(v->gain_est),
			 "gain_lo", nt_bench_real_or_null(v->gain_lo), "gain_hi", nt_bench_real_or_null(v->gain_hi));
}

static void print_effect(const char *what, const nt_bench_effect *eff, const nt_bench_gates *g)
{
	double sign = g->lower_is_better ? -1 : 1, base = g->lower_is_better ? 1 : -1;
	if (!eff->defined)
		fprintf(stderr, "%s: no ratio interval: some figure is not positive\n", what);
	else if (!eff->bounded)
		fprintf(stderr, "%s: candidate/baseline %.4g (Hodges-Lehmann); %zu %s cannot reach %.4g%% "
				"confidence: no interval\n", what, eff->ratio, eff->rounds,
			eff->paired ? "blocks" : "rounds per arm", 100 * g->confidence);
	else
		fprintf(stderr, "%s: candidate/baseline %.4g, %.4g%% CI [%.4g, %.4g] (Hodges-Lehmann, %s): gain %+.1f%% "
				"[%+.1f%%, %+.1f%%]\n", what, eff->ratio, 100 * eff->confidence, eff->lo, eff->hi,
			eff->exact ? "exact" : "normal approximation", 100 * (sign * eff->ratio + base),
			100 * (g->lower_is_better ? 1 - eff->hi : eff->lo - 1),
			100 * (g->lower_is_better ? 1 - eff->lo : eff->hi - 1));
}

/* The cost rows: a round counter of busy CPU-seconds (cli/bench_round.c)
 * and how the table names it. The classes exist when the round's CPU time
 * does (host/counters.h): nic_irq always, app only with --near. */
static const struct {
	const char *key, *label;
} cost_rows[] = {
	{ "cpu_busy_s", "CPU busy a round (host-wide)" },
	{ "cpu_busy_nic_irq_s", "CPU busy a round on the CPUs that served NIC interrupts" },
	{ "cpu_busy_app_s", "CPU busy a round on the application CPUs (--near)" },
};

/* One cost row: each arm's median of X (N[k] rounds an arm) and the
 * candidate/baseline effect, as the figure's; printed as LABEL when
 * PRINT (UNIT: the figure's unit for a figure per CPU-second, NULL for
 * seconds). NULL when an arm has no round. */
static json_t *cost_row(const compare *c, double *const x[2], const size_t n[2], const char *label,
			const char *unit, bool print)
{
	nt_summary sm[2];
	nt_bench_effect e;
	if (!n[0] || !n[1] || nt_stats_summary(x[0], n[0], &sm[0]) < 0 || nt_stats_summary(x[1], n[1], &sm[1]) < 0 ||
	    nt_bench_effect_of(x[0], n[0], x[1], n[1], c->gates.confidence, &e) < 0)
		return NULL;
	json_t *row = json_pack("{s:o,s:o,s:I,s:I,s:o,s:o,s:o,s:f,s:b}", "baseline_median",
				nt_bench_real_or_null(sm[0].median), "candidate_median", nt_bench_real_or_null(sm[1].median),
				"baseline_rounds", (json_int_t)n[0], "candidate_rounds", (json_int_t)n[1], "ratio",
				e.defined ? nt_bench_real_or_null(e.ratio) : json_null(), "ratio_lo",
				e.defined && e.bounded ? nt_bench_real_or_null(e.lo) : json_null(), "ratio_hi",
				e.defined && e.bounded ? nt_bench_real_or_null(e.hi) : json_null(), "confidence",
				e.confidence, "exact", e.exact);
	if (!print)
		return row;
	char a[48], b[48];
	if (unit) {
		nt_bench_fmt_value(a, sizeof(a), sm[0].median, unit);
		nt_bench_fmt_value(b, sizeof(b), sm[1].median, unit);
	} else {
		snprintf(a, sizeof(a), "%.3g s", sm[0].median);
		snprintf(b, sizeof(b), "%.3g s", sm[1].median);
	}
	fprintf(stderr, "%s: baseline median %s, candidate %s", label, a, b);
	if (e.defined && e.bounded)
		fprintf(stderr, "; candidate/baseline %.3g, %.0f%% CI [%.3g, %.3g] (%s)\n", e.ratio, 100 * e.confidence,
			e.lo, e.hi, e.exact ? "exact" : "normal approximation");
	else if (e.defined)
		fprintf(stderr, "; candidate/baseline %.3g (too few rounds for an interval)\n", e.ratio);
	else
		fprintf(stderr, "\n");
	return row;
}

/* The rounds' cost (issue 42: a profile that buys 3% for 40% more CPU is
 * no plain win): the busy CPU-seconds each counted round burned
 * (/proc/stat, the whole host, then by class: the CPUs that served NIC
 * interrupts, the application's CPUs), and where the figure is a rate,
 * the figure per busy CPU-second of the whole host; each arm's median and
 * the candidate/baseline effect with its interval, as the figure's.
 * Printed when PRINT. Returns the report's "cost" (null without CPU time
 * in every round; a class without a round in each arm is left out), a new
 * reference. */
static json_t *cost_of(const compare *c, bool print)
{
	size_t rounds = json_array_size(c->rounds), i;
	double *x[2] = { NULL, NULL }, *per[2] = { NULL, NULL };
	json_t *r, *out = NULL;
	bool rate = !c->gates.lower_is_better;

	for (int k = 0; k < 2; k++)
		if (!(x[k] = calloc(rounds + 1, sizeof(double))) || !(per[k] = calloc(rounds + 1, sizeof(double))))
			goto out;
	for (size_t row = 0; row < sizeof(cost_rows) / sizeof(cost_rows[0]); row++) {
		size_t n[2] = { 0, 0 };
		json_array_foreach(c->rounds, i, r) {
			const char *arm = json_string_value(json_object_get(r, "arm"));
			const json_t *b = json_object_get(json_object_get(r, "counters"), cost_rows[row].key);
			const json_t *val = json_object_get(r, "value");
			/* The warm-up round (no block) counts in no arm. */
			if (!arm || !json_is_integer(json_object_get(r, "block")) || !json_is_number(val) ||
			    !json_is_number(b) || !(json_number_value(b) > 0))
				continue;
			int k = !strcmp(arm, arm_name[ARM_CAND]) ? ARM_CAND : ARM_BASE;
			x[k][n[k]] = json_number_value(b);
			per[k][n[k]] = json_number_value(val) / json_number_value(b);
			n[k]++;
		}
		if (row == 0 && (!n[0] || !n[1])) {
			out = json_null();
			goto out;
		}
		if (!out && !(out = json_object()))
			goto out;
		json_t *j = cost_row(c, x, n, cost_rows[row].label, NULL, print);
		if (j)
			json_object_set_new(out, cost_rows[row].key, j);
		if (row == 0 && rate) {
			char unit[48];
			snprintf(unit, sizeof(unit), "%s per CPU-s", *c->unit ? c->unit : "figure");
			if ((j = cost_row(c, per, n, unit, c->unit, print)))
				json_object_set_new(out, "figure_per_cpu_second", j);
		}
	}
out:
	for (int k = 0; k < 2; k++) {
		free(x[k]);
		free(per[k]);
	}
	return out;
}

static void print_table(const compare *c, const nt_summary *s, const nt_mwu *u, const nt_bench_verdict *v,
			const nt_bench_effect *eff, const nt_wsr *w, const nt_bench_effect *peff)
{
	char a[48], b[48], d[48], e[48];
	size_t i;
	json_t *r;
	fprintf(stderr,
		"\nbench-run --compare: %ld rounds per arm in ABBA blocks, seed %llu%s; figure: %s (%s, %s is better)\n\n",
		c->o->compare, (unsigned long long)c->seed, c->o->warmup ? ", a warm-up round first" : "", c->reader,
		*c->unit ? c->unit : "no unit", c->gates.lower_is_better ? "lower" : "higher");
	fprintf(stderr, "%5s  %5s  %-9s  %16s  %8s  %10s  %9s  %10s  %10s  %8s  %s\n", "round", "block", "arm", "value",
		"dropped", "NIC IRQs", "off-node", "NET_RX", "NET_TX", "CPU s", "rollback");
	json_array_foreach(c->rounds, i, r) {
		const json_t *ct = json_object_get(r, "counters");
		const json_t *val = json_object_get(r, "value");
		const json_t *share = json_object_get(ct, "off_node_share");
		const json_t *rb = json_object_get(r, "rollback");
		if (json_is_number(val))
			nt_bench_fmt_value(a, sizeof(a), json_number_value(val), c->unit);
		else
			snprintf(a, sizeof(a), "-");
		if (json_is_number(share))
			snprintf(b, sizeof(b), "%.1f%%", 100 * json_number_value(share));
		else
			snprintf(b, sizeof(b), "-");
		const json_t *blk = json_object_get(r, "block");
		char bb[24];
		if (json_is_integer(blk))
			snprintf(bb, sizeof(bb), "%lld", (long long)json_integer_value(blk));
		else
			snprintf(bb, sizeof(bb), "warm");
		const json_t *busy = json_object_get(ct, "cpu_busy_s");
		char cb[24] = "-";
		if (json_is_number(busy))
			snprintf(cb, sizeof(cb), "%.2f", json_number_value(busy));
		fprintf(stderr, "%5lld  %5s  %-9s  %16s  %8lld  %10lld  %9s  %10lld  %10lld  %8s  %s\n",
			(long long)json_integer_value(json_object_get(r, "round")), bb,
			json_string_value(json_object_get(r, "arm")), a,
			(long long)json_integer_value(json_object_get(ct, "dropped")),
			(long long)json_integer_value(json_object_get(ct, "nic_interrupts")), b,
			(long long)json_integer_value(json_object_get(ct, "net_rx_softirqs")),
			(long long)json_integer_value(json_object_get(ct, "net_tx_softirqs")), cb,
			json_is_object(rb) ? json_string_value(json_object_get(rb, "status")) ?: "?" : "-");
	}
	/* A round where one queue took (nearly) all of a NIC's packets, and
	 * the NICs without per-queue counters, in the agent's words shown as
	 * text (cli/escape.h). */
	json_t *safe = json_deep_copy(c->report);
	if (safe && nt_out_escape_doc(safe) == 0) {
		bool first = true;
		json_array_foreach(json_object_get(safe, "rounds"), i, r) {
			const json_t *ct = json_object_get(r, "counters");
			char what[32];
			if (!json_array_size(json_object_get(ct, "queue_skew")))
				continue;
			if (first)
				fputc('\n', stderr);
			first = false;
			snprintf(what, sizeof(what), "round %lld", (long long)json_integer_value(json_object_get(r, "round")));
			nt_bench_print_queues(ct, what);
		}
		json_t *missing = json_object_get(safe, "queue_stats_missing");
		json_t *only = json_pack("{s:O}", "queue_stats_missing", missing ?: json_null());
		if (only && json_array_size(missing)) {
			fputc('\n', stderr);
			nt_bench_print_queues(only, NULL);
		}
		json_decref(only);
	}
	json_decref(safe);
	if (!s)
		return;
	fprintf(stderr, "\n%-9s  %6s  %16s  %16s  %16s  %16s\n", "arm", "rounds", "median", "IQR", "min", "max");
	for (int k = 0; k < 2; k++) {
		nt_bench_fmt_value(a, sizeof(a), s[k].median, c->unit);
		nt_bench_fmt_value(b, sizeof(b), s[k].iqr, c->unit);
		nt_bench_fmt_value(d, sizeof(d), s[k].min, c->unit);
		nt_bench_fmt_value(e, sizeof(e), s[k].max, c->unit);
		fprintf(stderr, "%-9s  %6zu  %16s  %16s  %16s  %16s\n", arm_name[k], s[k].n, a, b, d, e);
	}
	fprintf(stderr, "\ncandidate/baseline: %.4g (%s %+.1f%%); Mann-Whitney U = %g, two-sided p = %.3g (%s): %s\n",
		v->ratio, "gain", 100 * v->gain, u->u, u->p, u->exact ? "exact" : "normal approximation",
		v->verdict);
	print_effect(c->o->paired ? "effect (arms as samples)" : "effect", eff, &c->gates);
	fprintf(stderr, "paired over %zu blocks: Wilcoxon signed-rank T+ = %g, two-sided p = %.3g (%s%s)\n", w->n + w->zeros,
		w->t_plus, w->p, w->exact ? "exact" : "normal approximation",
		w->zeros ? ", blocks of ratio 1 left out" : "");
	print_effect(c->o->paired ? "effect (paired, judged)" : "effect (paired, --paired judges by it)", peff,
		     &c->gates);
	json_decref(cost_of(c, true));
	nt_bench_metrics_print(json_object_get(c->report, "metrics"),
			       nt_bench_primary_name(c->run.source, c->run.metric_arg), stderr);
	if (v->gate[0])
		fprintf(stderr, "%s\n", v->gate);
}

/* Plan DOC once before any round, so that a profile the agent refuses
 * stops the run before anything is applied. */
/* Plan DOC on the agent: refused, said; planned, its steps' kinds warned
 * about when they reach beyond this network namespace. */
static int check_plan(compare *c, const json_t *doc, const char *which)
{
	char err[2048];
	long status;
	json_t *ans = NULL;
	int cr = nt_bench_call(c->agent, "POST", "/v1/plan", doc, &status, &ans, err, sizeof(err));
	if (cr < 0 || status != 200) {
		json_decref(ans);
		fprintf(stderr, "nettune: bench-run: the %s could not be planned: %s\n", which, err);
		return -1;
	}
	nt_bench_netns_warning(&c->ctx, json_object_get(ans, "steps"), c->report);
	json_decref(ans);
	return 0;
}

static int write_svg(const compare *c, const nt_summary *s, const char *path)
{
	char title[512];
	const char *cand = json_string_value(json_object_get(c->profile[ARM_CAND], "name")) ?: c->o->profile;
	const char *base = !c->profile[ARM_BASE] ? "the host as it is" :
			   json_string_value(json_object_get(c->profile[ARM_BASE], "name")) ?: c->o->baseline;
	snprintf(title, sizeof(title), "%s: %s vs %s, %ld rounds each", c->args[0], cand, base, c->o->compare);
	char na[300], nb[300];
	snprintf(na, sizeof(na), "baseline (%s)", c->o->baseline ? c->o->baseline : "host as it is");
	snprintf(nb, sizeof(nb), "candidate (%s)", c->o->profile);
	nt_plot_arm a = { .name = na, .values = c->values[ARM_BASE], .n = c->n[ARM_BASE], .median = s[ARM_BASE].median };
	nt_plot_arm b = { .name = nb, .values = c->values[ARM_CAND], .n = c->n[ARM_CAND], .median = s[ARM_CAND].median };
	char *svg = nt_bench_svg(title, c->unit, &a, &b);
	if (!svg) {
		fprintf(stderr, "nettune: bench-run: out of memory for the chart\n");
		return -1;
	}
	int rc = nt_bench_write_text("bench-run", "the chart", svg, path);
	free(svg);
	return rc;
}

int nt_bench_compare(const cli_opts *o, int nargs, char **args)
{
	compare c = { .o = o, .args = args };
	int rc = NT_BENCH_FAILED;
	nt_summary s[2];
	nt_mwu u;
	nt_bench_verdict v;
	bool judged = false;

	c.agent = o->agent ? o->agent : getenv("NETTUNE_AGENT") ? getenv("NETTUNE_AGENT") : NT_CLI_DEFAULT_AGENT;
	c.ct = o->confirm_timeout > 0 ? o->confirm_timeout : NT_BENCH_DEFAULT_CONFIRM_S;
	c.run = (nt_bench_rounds){ .o = o, .agent = c.agent, .ct = c.ct, .ctx = &c.ctx, .args = args, .who = "bench-run",
				   .run = "comparison", .restored = true };
	c.unit = c.run.unit;
	c.reader = c.run.reader;
	c.gates.require_gain = -1;
		if (!o->profile || nargs < 1) {
		fprintf(stderr, "nettune: bench-run --compare ROUNDS wants --profile P.json [--baseline B.json] -- COMMAND "
				"[ARGS...]\n");
		return NT_EXIT_USAGE;
	}
	if (o->json && fcntl(STDOUT_FILENO, F_GETFD) < 0) {
		fprintf(stderr, "nettune: bench-run: --json writes the report to standard output, which is closed; give "
				"--report FILE\n");
		return NT_EXIT_USAGE;
	}
	if (nt_bench_metric_setup(o, "bench-run", &c.run) < 0)
		return NT_EXIT_USAGE;
	if (o->require_gain && nt_bench_parse_gain(o->require_gain, &c.gates.require_gain) < 0) {
		fprintf(stderr, "nettune: bench-run: --require-gain wants a percentage from 0%% to 1000%% such as 5%%, "
				"not '%s'\n", o->require_gain);
		return NT_EXIT_USAGE;
	}
	c.gates.lower_is_better = o->lower_is_better;
	c.gates.require_no_loss = o->require_no_loss;
	c.gates.loss_margin = NT_BENCH_LOSS_MARGIN;
	c.gates.confidence = NT_BENCH_CONFIDENCE;
	if (o->loss_margin && (!o->require_no_loss || nt_bench_parse_gain(o->loss_margin, &c.gates.loss_margin) < 0)) {
		fprintf(stderr, "nettune: bench-run: --loss-margin goes with --require-no-loss and wants a percentage from "
				"0%% to 1000%% such as 2%%, not '%s'\n", o->loss_margin);
		return NT_EXIT_USAGE;
	}
	if (o->confidence && nt_bench_parse_confidence(o->confidence, &c.gates.confidence) < 0) {
		fprintf(stderr, "nettune: bench-run: --confidence wants a level from 0.5 to 0.999 (or 50%% to 99.9%%) "
				"such as 0.95, not '%s'\n", o->confidence);
		return NT_EXIT_USAGE;
	}
	/* Rounds that cannot reach the confidence cannot show anything: a
	 * gate on them could only end "not shown", so it is refused before
	 * a round runs; without a gate the table is still worth a warning.
	 * Paired, the blocks are the sample: 2/2^n is the smallest p. */
	{
		size_t need = o->paired ? nt_stats_min_pairs(c.gates.confidence) : nt_stats_min_rounds(c.gates.confidence);
		double minp = o->paired ? nt_stats_signed_rank_min_p((size_t)o->compare) :
					  nt_stats_mwu_min_p((size_t)o->compare, (size_t)o->compare);
		if ((size_t)o->compare < need) {
			bool gated = c.gates.require_no_loss || c.gates.require_gain >= 0;
			char what[64];
			if (o->paired)
				snprintf(what, sizeof(what), "%ld blocks (--paired)", o->compare);
			else
				snprintf(what, sizeof(what), "%ld + %ld rounds", o->compare, o->compare);
			fprintf(stderr,
				"nettune: bench-run: %s%s cannot reach %.4g%% confidence (the smallest "
				"two-sided p they can give is %.3g): %s --compare %zu or more\n",
				gated ? "" : "warning: ", what, 100 * c.gates.confidence, minp,
				gated ? "a gate needs" : "nothing will be shown either way; use", need);
			if (gated)
				return NT_EXIT_USAGE;
		}
	}
	/* The order of the blocks: from --seed, or drawn now and printed,
	 * so that a run can be repeated exactly. */
	if (nt_bench_seed(o, "bench-run", &c.seed) < 0)
		return NT_EXIT_USAGE;
	if (nt_ctx_init(&c.ctx, o->root ? o->root : "/") < 0) {
		fprintf(stderr, "nettune: bench-run: bad --root %s\n", o->root);
		return NT_BENCH_FAILED;
	}
	if (nt_bench_load("bench-run", o->profile, &c.profile[ARM_CAND]) < 0 ||
	    (o->baseline && nt_bench_load("bench-run", o->baseline, &c.profile[ARM_BASE]) < 0))
		goto out;
	c.values[0] = calloc((size_t)o->compare, sizeof(double));
	c.values[1] = calloc((size_t)o->compare, sizeof(double));
	c.arm = calloc(2 * (size_t)o->compare, sizeof(*c.arm));
	c.block = calloc(2 * (size_t)o->compare, sizeof(*c.block));
	if (!c.arm || !c.block)
		goto out;
	nt_bench_design((size_t)o->compare, c.seed, c.arm, c.block);
	c.report = json_pack("{s:s,s:I,s:O,s:O,s:s,s:[],s:[]}", "mode", "compare", "rounds_per_arm",
			     (json_int_t)o->compare, "profile", json_object_get(c.profile[ARM_CAND], "name") ?: json_null(),
			     "baseline",
			     c.profile[ARM_BASE] ? json_object_get(c.profile[ARM_BASE], "name") ?: json_string("") : json_null(),
			     "agent", c.agent, "command", "rounds");
	if (!c.values[0] || !c.values[1] || !c.report)
		goto out;
	c.run.report = c.report;
	json_t *order = json_array();
	for (size_t i = 0; i < 2 * (size_t)o->compare; i++)
		json_array_append_new(order, json_string(c.arm[i] ? "B" : "A"));
	/* The seed as text: a 64-bit number is past JSON's safe integers. */
	char seed_text[32];
	snprintf(seed_text, sizeof(seed_text), "%llu", (unsigned long long)c.seed);
	json_object_set_new(c.report, "design",
			    json_pack("{s:s,s:s,s:o,s:b,s:b}", "blocks", "ABBA", "seed", seed_text, "order", order,
				      "warmup", o->warmup, "paired", o->paired));
	fprintf(stderr, "nettune: bench-run: %ld blocks in ABBA order, seed %llu (--seed %llu repeats it)\n", o->compare,
		(unsigned long long)c.seed, (unsigned long long)c.seed);
	c.rounds = json_object_get(c.report, "rounds");
	for (int i = 0; i < nargs; i++)
		json_array_append_new(json_object_get(c.report, "command"), json_string(args[i]));
	/* Where COMMAND will run, and both profiles, are checked before
	 * anything is applied. */
	if (o->near && nt_cli_bind_near(o, o->near, NULL, 0) != 0)
		goto out;
	if (check_plan(&c, c.profile[ARM_CAND], "profile") < 0 ||
	    (c.profile[ARM_BASE] && check_plan(&c, c.profile[ARM_BASE], "baseline") < 0))
		goto out;

	nt_bench_catch_signals();
	int stop = 0;
	if (o->warmup)
		stop = one_round(&c, ARM_BASE, 0, 0);
	for (long r = 0; r < 2 * o->compare && !stop; r++)
		stop = one_round(&c, c.arm[r], (int)r + 1, c.block[r]);
	json_object_set_new(c.report, "host_restored", json_boolean(c.run.restored));
	json_object_set_new(c.report, "interrupted_by",
			    nt_bench_signal() ? json_string(strsignal(nt_bench_signal())) : json_null());
	json_object_set_new(c.report, "metric",
			    json_pack("{s:s,s:s,s:s}", "reader", c.reader, "unit", c.unit, "better",
				      c.gates.lower_is_better ? "lower" : "higher"));
	if (stop) {
		rc = stop;
		print_table(&c, NULL, NULL, NULL, NULL, NULL, NULL);
		goto out;
	}
	if (nt_stats_summary(c.values[ARM_BASE], c.n[ARM_BASE], &s[ARM_BASE]) < 0 ||
	    nt_stats_summary(c.values[ARM_CAND], c.n[ARM_CAND], &s[ARM_CAND]) < 0 ||
	    nt_stats_mwu(c.values[ARM_CAND], c.n[ARM_CAND], c.values[ARM_BASE], c.n[ARM_BASE], &u) < 0) {
		fprintf(stderr, "nettune: bench-run: the figures cannot be compared\n");
		goto out;
	}
	nt_bench_effect eff;
	if (nt_bench_effect_of(c.values[ARM_BASE], c.n[ARM_BASE], c.values[ARM_CAND], c.n[ARM_CAND], c.gates.confidence,
			       &eff) < 0) {
		fprintf(stderr, "nettune: bench-run: the figures cannot be compared\n");
		goto out;
	}
	/* The blocks: the k-th round of each arm is block k's (every round
	 * before the last counted, or the comparison stopped). */
	nt_bench_effect peff;
	nt_wsr w;
	double *ld = malloc((size_t)o->compare * sizeof(*ld));
	bool logs = ld != NULL;
	for (size_t i = 0; ld && i < c.n[ARM_BASE]; i++) {
		if (!(c.values[ARM_BASE][i] > 0) || !(c.values[ARM_CAND][i] > 0))
			logs = false;
		else
			ld[i] = log(c.values[ARM_CAND][i]) - log(c.values[ARM_BASE][i]);
	}
	/* Without logs (a figure of 0) the signed-rank test is of the
	 * differences: which way the blocks lean still means something. */
	for (size_t i = 0; ld && !logs && i < c.n[ARM_BASE]; i++)
		ld[i] = c.values[ARM_CAND][i] - c.values[ARM_BASE][i];
	int pr = !ld || c.n[ARM_BASE] != c.n[ARM_CAND] ? -EINVAL : nt_stats_signed_rank(ld, c.n[ARM_BASE], &w);
	free(ld);
	if (pr < 0 || nt_bench_effect_paired(c.values[ARM_BASE], c.values[ARM_CAND], c.n[ARM_BASE], c.gates.confidence,
					     &peff) < 0) {
		fprintf(stderr, "nettune: bench-run: the blocks cannot be compared\n");
		goto out;
	}
	if (o->paired)
		nt_bench_judge(s[ARM_BASE].median, s[ARM_CAND].median, w.p, &peff, &c.gates, &v);
	else
		nt_bench_judge(s[ARM_BASE].median, s[ARM_CAND].median, u.p, &eff, &c.gates, &v);
	/* The other analysis' gains, for the report. */
	nt_bench_verdict other;
	if (o->paired)
		nt_bench_judge(s[ARM_BASE].median, s[ARM_CAND].median, u.p, &eff, &c.gates, &other);
	else
		nt_bench_judge(s[ARM_BASE].median, s[ARM_CAND].median, w.p, &peff, &c.gates, &other);
	judged = true;
	json_object_set_new(c.report, "arms",
			    json_pack("{s:o,s:o}", "baseline", arm_json(&s[ARM_BASE], c.profile[ARM_BASE]), "candidate",
				      arm_json(&s[ARM_CAND], c.profile[ARM_CAND])));
	json_object_set_new(c.report, "ratio", isfinite(v.ratio) ? json_real(v.ratio) : json_null());
	json_object_set_new(c.report, "gain", isfinite(v.gain) ? json_real(v.gain) : json_null());
	json_object_set_new(c.report, "test",
			    json_pack("{s:s,s:f,s:f,s:b,s:b,s:f}", "name", "mann-whitney-u", "u", u.u, "p_value", u.p,
				      "exact", u.exact, "ties", u.ties, "alpha", NT_BENCH_ALPHA));
	json_object_set_new(c.report, "verdict", json_string(v.verdict));
	json_object_set_new(c.report, "effect", effect_json(&eff, o->paired ? &other : &v, &c.gates));
	json_t *pj = effect_json(&peff, o->paired ? &v : &other, &c.gates);
	json_object_set_new(pj, "method", json_string("hodges-lehmann-walsh-log-ratio"));
	json_object_set_new(pj, "blocks", json_integer((json_int_t)c.n[ARM_BASE]));
	json_object_set_new(pj, "test", json_pack("{s:s,s:f,s:f,s:b,s:b,s:I,s:s}", "name", "wilcoxon-signed-rank",
						  "t_plus", w.t_plus, "p_value", w.p, "exact", w.exact, "ties", w.ties,
						  "zeros", (json_int_t)w.zeros, "of", logs ? "log-ratios" : "differences"));
	json_object_set_new(pj, "judged", json_boolean(o->paired));
	json_object_set_new(c.report, "paired", pj);
	json_t *gates = json_object();
	if (c.gates.require_gain >= 0)
		json_object_set_new(gates, "require_gain", json_real(c.gates.require_gain));
	if (c.gates.require_no_loss) {
		json_object_set_new(gates, "require_no_loss", json_true());
		json_object_set_new(gates, "loss_margin", json_real(c.gates.loss_margin));
	}
	json_object_set_new(gates, "rounds_needed", v.rounds_needed ? json_integer((json_int_t)v.rounds_needed) : json_null());
	json_object_set_new(gates, "result", json_string(v.gate));
	json_object_set_new(gates, "exit_status", json_integer(v.exit_code));
	json_object_set_new(c.report, "gates", gates);
	json_object_set_new(c.report, "cost", cost_of(&c, false));
	json_object_set_new(c.report, "metrics",
			    nt_bench_metrics_json(c.rounds, nt_bench_primary_name(c.run.source, c.run.metric_arg), c.unit,
						  c.gates.lower_is_better, &c.run.others, c.gates.confidence) ?: json_null());
	print_table(&c, s, &u, &v, &eff, &w, &peff);
	rc = v.exit_code;
	if (o->plot && write_svg(&c, s, o->plot) < 0 && rc == 0)
		rc = NT_BENCH_FAILED;
out:
	if (c.report && !c.run.restored)
		rc = NT_BENCH_FAILED;
	if (c.report && o->report && nt_bench_write_report(c.report, o->report) < 0 && rc == 0)
		rc = NT_BENCH_FAILED;
	if (c.report && o->json && (judged || json_array_size(c.rounds))) {
		if (nt_bench_json_stdout(c.report, "bench-run") < 0)
			rc = NT_BENCH_FAILED;
	}
	json_decref(c.report);
	json_decref(c.profile[0]);
	json_decref(c.profile[1]);
	free(c.values[0]);
	free(c.values[1]);
	free(c.arm);
	free(c.block);
	return rc;
}
