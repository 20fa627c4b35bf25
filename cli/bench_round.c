/* SPDX-License-Identifier: Apache-2.0 */
/* One measured round of a benchmark, shared by bench-run --compare
 * (cli/cmd_bench_compare.c) and tune (cli/cmd_tune.c): the profile applied
 * by its plan id with a confirm window, COMMAND run and its figure read,
 * the counters taken around it, and the profile reverted in place however
 * the round ends (cli/bench.h). */
#include "cli/bench.h"
#include "cli/bench_design.h"
#include "cli/escape.h"
#include "cli/metric.h"
#include "host/counters.h"
#include "kernel/regfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What a round's counter delta says in a few numbers: drops and misses
 * summed over the NICs, NIC interrupts and the share served off their
 * NIC's node, NET_RX softirqs. */
static json_t *round_counters(const json_t *delta)
{
	json_int_t dropped = 0, missed = 0;
	size_t i;
	json_t *row;
	json_array_foreach(json_object_get(delta, "nics"), i, row) {
		dropped += json_integer_value(json_object_get(row, "rx_dropped")) +
			   json_integer_value(json_object_get(row, "tx_dropped"));
		missed += json_integer_value(json_object_get(row, "rx_missed"));
	}
	const json_t *in = json_object_get(delta, "interrupts");
	const json_t *ct = json_object_get(delta, "cpu_time");
	const json_t *tot = json_object_get(ct, "total"), *nic = json_object_get(json_object_get(ct, "classes"), "nic_irq");
	const json_t *app = json_object_get(json_object_get(ct, "classes"), "app");
	/* Per queue, as a single run's report has them: which queue carried a
	 * round's packets is what a placement changes. */
	return json_pack("{s:I,s:I,s:O,s:O,s:I,s:I,s:O,s:I,s:I,s:O,s:O,s:O}", "dropped", dropped, "rx_missed", missed,
			 "queues", json_object_get(delta, "queues") ?: json_null(), "queue_skew",
			 json_object_get(delta, "queue_skew") ?: json_null(), "interrupts",
			 json_integer_value(json_object_get(in, "all")), "nic_interrupts",
			 json_integer_value(json_object_get(in, "nic")), "off_node_share",
			 json_object_get(in, "off_node_share") ?: json_null(), "net_rx_softirqs",
			 json_integer_value(json_object_get(json_object_get(delta, "softirq_net_rx"), "total")),
			 "net_tx_softirqs",
			 json_integer_value(json_object_get(json_object_get(delta, "softirq_net_tx"), "total")),
			 "cpu_busy_s", json_object_get(tot, "busy_s") ?: json_null(), "cpu_busy_nic_irq_s",
			 json_object_get(nic, "busy_s") ?: json_null(), "cpu_busy_app_s",
			 json_object_get(app, "busy_s") ?: json_null());
}

/* neper writes a row per flow per interval: 64 MiB holds a minute of
 * thousands of flows. */
#define SAMPLES_MAX (64u << 20)

/* The figures of neper's samples file (--neper-samples) into O, when the
 * round (begun at STARTED, wall clock) wrote it; said otherwise. They never
 * fail a round: the figures are only not shown. */
static void read_samples(const nt_bench_rounds *b, int k, time_t started, nt_metric_others *o)
{
	const char *path = b->o->neper_samples;
	char err[256];
	struct stat st;
	char *text = NULL;
	if (stat(path, &st) < 0 || st.st_mtime < started) {
		fprintf(stderr, "nettune: %s: round %d: COMMAND wrote no %s (neper's -A %s): its interval figures are "
				"left out\n",
			b->who, k, path, path);
		return;
	}
	size_t len;
	if (nt_regfile_read(path, SAMPLES_MAX, &text, &len, err, sizeof(err)) < 0) {
		fprintf(stderr, "nettune: %s: round %d: %s\n", b->who, k, err);
		return;
	}
	if (nt_metric_neper_samples(text, o, err, sizeof(err)) < 0)
		fprintf(stderr, "nettune: %s: round %d: %s: %s\n", b->who, k, path, err);
	free(text);
}

/* The other figures of COMMAND's output (and of neper's samples file)
 * into the round's "metrics" and their names into B's list. They never
 * fail a round: a figure that is not there (netperf without -j has no
 * latencies) is only not shown. */
static void record_others(nt_bench_rounds *b, const char *out, size_t outlen, json_t *rr, int k, time_t started)
{
	nt_metric_others o;
	nt_metric_others_read(b->source, out, outlen, &o);
	if (b->o->neper_samples)
		read_samples(b, k, started, &o);
	for (int i = 0; i < b->nalso && o.n < NT_METRIC_MAX_OTHERS; i++) {
		const nt_bench_also *a = &b->also[i];
		nt_metric m;
		char err[256];
		/* Not there in this round: only not shown, as the others. */
		if (nt_metric_read(a->source, a->arg, out, outlen, &m, err, sizeof(err)) < 0 || !(m.value >= 0) ||
		    !isfinite(m.value))
			continue;
		nt_metric_other *x = &o.m[o.n++];
		snprintf(x->name, sizeof(x->name), "%s", a->name);
		snprintf(x->unit, sizeof(x->unit), "%s", m.unit);
		x->value = m.value;
		x->lower_is_better = a->lower_is_better;
	}
	if (!o.n)
		return;
	json_t *m = json_object();
	for (size_t i = 0; i < o.n; i++) {
		json_object_set_new(m, o.m[i].name, json_real(o.m[i].value));
		size_t j;
		for (j = 0; j < b->others.n; j++)
			if (!strcmp(b->others.m[j].name, o.m[i].name))
				break;
		if (j == b->others.n && j < NT_METRIC_MAX_OTHERS)
			b->others.m[b->others.n++] = o.m[i];
	}
	json_object_set_new(rr, "metrics", m);
}

int nt_bench_round(nt_bench_rounds *b, const json_t *profile, const char *what, int k, json_t *rr, double *value)
{
	char err[2048];
	long long id = 0;
	json_t *txn = NULL, *before = NULL, *after = NULL;
	char *out = NULL;
	size_t outlen = 0;
	int rc = NT_BENCH_FAILED, status = 0, sig = 0;
	double dur = 0;
	const char *who = b->who;

	if (profile) {
		int ar = nt_bench_apply(b->agent, profile, b->ct, &id, &txn);
		if (txn)
			json_object_set_new(rr, "transaction",
					    json_pack("{s:O,s:O}", "id", json_object_get(txn, "id"), "status",
						      json_object_get(txn, "status")));
		json_decref(txn);
		if (ar < 0)
			goto out;
	}
	/* Placement again: this round's profile may have moved the NIC's IRQs. */
	if (b->o->near && nt_cli_bind_near(b->o, b->o->near, NULL, 0) != 0)
		goto undo;
	if (!(before = nt_bench_snapshot(b->agent, b->ctx, b->o->near, err, sizeof(err)))) {
		fprintf(stderr, "nettune: %s: cannot read the counters: %s\n", who, err);
		goto undo;
	}
	if (nt_bench_signal())
		goto undo;
	/* A samples file older than this round is another round's. */
	time_t started = time(NULL) - 1;
	if (nt_bench_exec(b->args, &out, &outlen, &status, &sig, &dur) < 0)
		goto undo;
	b->last_duration_s = dur;
	json_object_set_new(rr, "exit_status", json_integer(status));
	json_object_set_new(rr, "duration_s", json_real(dur));
	if ((after = nt_bench_snapshot(b->agent, b->ctx, b->o->near, err, sizeof(err)))) {
		json_t *delta = nt_counters_delta(before, after);
		json_object_set_new(rr, "counters", delta ? round_counters(delta) : json_null());
		/* The NICs without per-queue counters are said once for the
		 * run, not in every round. */
		if (delta && b->report && !json_object_get(b->report, "queue_stats_missing"))
			json_object_set(b->report, "queue_stats_missing",
					json_object_get(delta, "queue_stats_missing") ?: json_null());
		json_decref(delta);
	} else {
		fprintf(stderr, "nettune: %s: cannot read the counters after COMMAND: %s\n", who, err);
	}
	if (nt_bench_signal())
		goto undo;
	if (status != 0) {
		fprintf(stderr, "nettune: %s: round %d: COMMAND %s %d; the %s stops\n", who, k,
			sig ? "was ended by signal" : "exited with", sig ? sig : status, b->run);
		goto undo;
	}
	/* A NUL byte would end the text for every reader: the figure after
	 * it would be lost without a word. Read as a space, and said. */
	const char *nul = memchr(out, '\0', outlen);
	if (nul) {
		size_t count = 0;
		for (size_t i = (size_t)(nul - out); i < outlen; i++)
			if (!out[i]) {
				out[i] = ' ';
				count++;
			}
		fprintf(stderr, "nettune: %s: round %d: COMMAND's output holds %zu NUL byte%s (the first at byte "
				"%zu), read as spaces\n",
			who, k, count, count == 1 ? "" : "s", (size_t)(nul - out));
	}
	nt_metric m;
	if (nt_metric_read(b->source, b->metric_arg, out, outlen, &m, err, sizeof(err)) < 0) {
		char *safe = nt_out_escape(err, strlen(err));
		fprintf(stderr, "nettune: %s: round %d: %s; the %s stops\n", who, k, safe ? safe : err, b->run);
		free(safe);
		json_object_set_new(rr, "error", json_pack("{s:s}", "what", "no figure"));
		goto undo;
	}
	/* The comparison is of ratios of figures (rates, times, counts): a
	 * negative one is no measurement (and would turn "more" into "less"). */
	if (!(m.value >= 0) || !isfinite(m.value)) {
		fprintf(stderr, "nettune: %s: round %d: the figure read is %g%s%s, which no benchmark measures (a "
				"figure is a number of 0 or more); the %s stops\n",
			who, k, m.value, *m.unit ? " " : "", m.unit, b->run);
		json_object_set_new(rr, "error", json_pack("{s:s,s:o}", "what", "figure out of range", "value",
							   isfinite(m.value) ? json_real(m.value) : json_null()));
		goto undo;
	}
	*value = m.value;
	record_others(b, out, outlen, rr, k, started);
	snprintf(b->unit, sizeof(b->unit), "%s", m.unit);
	snprintf(b->reader, sizeof(b->reader), "%s", m.source);
	json_object_set_new(rr, "value", json_real(m.value));
	rc = 0;
undo:
	/* The round's "rollback" (and "reverted_by_agent" when its confirm
	 * window closed before COMMAND ended), as a single run's report has. */
	if (nt_bench_undo(b->agent, id, rr) < 0) {
		b->restored = false;
		rc = NT_BENCH_FAILED;
	}
	/* The agent put the host back before COMMAND ended (the confirm
	 * window was shorter than the round): part of the round ran on the
	 * profile and part on the host as it was, so its figure is neither
	 * arm's. Void, and the rounds after it would be too. */
	if (json_is_true(json_object_get(rr, "reverted_by_agent"))) {
		json_object_set_new(rr, "value", json_null());
		json_object_set_new(rr, "void", json_true());
		fprintf(stderr, "nettune: %s: round %d is void: the agent reverted the %s before COMMAND ended "
				"(--confirm-timeout %ld s, the round %.1f s); the %s stops: give a confirm "
				"timeout longer than a round\n",
			who, k, what, b->ct, dur, b->run);
		rc = NT_BENCH_FAILED;
	}
out:
	if (nt_bench_signal())
		rc = 128 + nt_bench_signal();
	free(out);
	json_decref(before);
	json_decref(after);
	return rc;
}

void nt_bench_fmt_value(char *buf, size_t size, double v, const char *unit)
{
	if (!strcmp(unit, "bits/s")) {
		static const struct { double f; const char *name; } s[] = {
			{ 1e12, "Tbit/s" }, { 1e9, "Gbit/s" }, { 1e6, "Mbit/s" }, { 1e3, "kbit/s" }, { 1, "bit/s" },
		};
		for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
			if (fabs(v) >= s[i].f || i + 1 == sizeof(s) / sizeof(s[0])) {
				snprintf(buf, size, "%.4g %s", v / s[i].f, s[i].name);
				return;
			}
	}
	snprintf(buf, size, "%.6g%s%s", v, *unit ? " " : "", unit);
}

json_t *nt_bench_real_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

int nt_bench_json_stdout(const json_t *report, const char *who)
{
	errno = 0;
	if (json_dumpf(report, stdout, JSON_INDENT(2) | JSON_SORT_KEYS) < 0 || fputc('\n', stdout) == EOF ||
	    fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "nettune: %s: cannot write the --json report to standard output: %s\n", who,
			strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

int nt_bench_load(const char *who, const char *path, json_t **doc)
{
	json_error_t jerr;
	*doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!*doc) {
		fprintf(stderr, "nettune: %s: %s: line %d: %s\n", who, path, jerr.line, jerr.text);
		return -1;
	}
	return 0;
}

int nt_bench_write_text(const char *who, const char *what, const char *text, const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	int rc = -1;
	if (f && fputs(text, f) >= 0 && fclose(f) == 0) {
		f = NULL;
		if (rename(tmp, path) == 0)
			rc = 0;
	}
	if (rc < 0) {
		fprintf(stderr, "nettune: %s: cannot write %s %s: %s\n", who, what, path, strerror(errno));
		if (f)
			fclose(f);
		unlink(tmp);
	}
	return rc;
}

/* --also-json DIR:PATH and --also-regex DIR:NAME:RE into B's also[]:
 * the direction said, the name a plain word not given twice, the path or
 * expression one that can be used. Returns 0 or -1 after saying why. */
static int also_setup(const nt_cli_list *l, enum nt_metric_source src, const char *who, nt_bench_rounds *b)
{
	const char *opt = src == NT_METRIC_JSON ? "--also-json" : "--also-regex";
	for (int i = 0; i < l->n; i++) {
		const char *v = l->v[i], *rest;
		nt_bench_also *a = &b->also[b->nalso];
		if (!strncmp(v, "higher:", 7))
			a->lower_is_better = false, rest = v + 7;
		else if (!strncmp(v, "lower:", 6))
			a->lower_is_better = true, rest = v + 6;
		else {
			fprintf(stderr, "nettune: %s: %s '%s' does not start with its better direction, higher: (a rate) "
					"or lower: (a time, a loss)\n",
				who, opt, v);
			return -1;
		}
		size_t nl = src == NT_METRIC_JSON ? strlen(rest) : strcspn(rest, ":");
		if (src == NT_METRIC_REGEX && (!rest[nl] || !nl || nl >= sizeof(a->name) ||
					       strspn(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") < nl)) {
			fprintf(stderr, "nettune: %s: --also-regex '%s' wants DIRECTION:NAME:RE, NAME a word of up to %zu "
					"letters, digits, '_', '.' or '-' that the table and report show\n",
				who, v, sizeof(a->name) - 1);
			return -1;
		}
		if (src == NT_METRIC_JSON && (!nl || nl >= sizeof(a->name))) {
			fprintf(stderr, "nettune: %s: --also-json '%s': the path names the figure in the table and report, "
					"and wants 1 to %zu characters\n",
				who, v, sizeof(a->name) - 1);
			return -1;
		}
		snprintf(a->name, sizeof(a->name), "%.*s", (int)nl, rest);
		a->arg = src == NT_METRIC_JSON ? rest : rest + nl + 1;
		a->source = src;
		for (int j = 0; j < b->nalso; j++)
			if (!strcmp(b->also[j].name, a->name)) {
				fprintf(stderr, "nettune: %s: two figures named '%s'\n", who, a->name);
				return -1;
			}
		nt_metric m;
		char err[512];
		if (nt_metric_read(src, a->arg, "{}", 2, &m, err, sizeof(err)) == -EINVAL) {
			fprintf(stderr, "nettune: %s: %s '%s': %s\n", who, opt, v, err);
			return -1;
		}
		b->nalso++;
	}
	return 0;
}

int nt_bench_metric_setup(const cli_opts *o, const char *who, nt_bench_rounds *b)
{
	b->nalso = 0;
	if (also_setup(&o->also_json, NT_METRIC_JSON, who, b) < 0 ||
	    also_setup(&o->also_regex, NT_METRIC_REGEX, who, b) < 0)
		return -1;
	if (o->lower_is_better && o->higher_is_better) {
		fprintf(stderr, "nettune: %s: --lower-is-better and --higher-is-better exclude each other\n", who);
		return -1;
	}
	if ((o->metric_json != NULL) + (o->metric_regex != NULL) + (o->metric != 0) > 1) {
		fprintf(stderr, "nettune: %s: one of --metric, --metric-json and --metric-regex, not more\n", who);
		return -1;
	}
	/* iperf3's and netperf's figures are rates: higher is better unless
	 * said otherwise. A figure named by a path or an expression could be
	 * a rate or a latency; which way is better must be said. */
	if ((o->metric_json || o->metric_regex) && !o->lower_is_better && !o->higher_is_better) {
		fprintf(stderr, "nettune: %s: %s names a figure whose better direction nettune cannot know: add "
				"--higher-is-better (a rate) or --lower-is-better (a time, a loss)\n",
			who, o->metric_json ? "--metric-json" : "--metric-regex");
		return -1;
	}
	b->source = o->metric_json ? NT_METRIC_JSON : o->metric_regex ? NT_METRIC_REGEX :
		    o->metric == 1 ? NT_METRIC_IPERF3 : o->metric == 2 ? NT_METRIC_NETPERF :
		    o->metric == 3 ? NT_METRIC_NEPER : NT_METRIC_AUTO;
	b->metric_arg = o->metric_json ? o->metric_json : o->metric_regex;
	/* A bad expression or path is found now, not after the first round. */
	if (b->source == NT_METRIC_JSON || b->source == NT_METRIC_REGEX) {
		nt_metric m;
		char err[512];
		if (nt_metric_read(b->source, b->metric_arg, "{}", 2, &m, err, sizeof(err)) == -EINVAL) {
			fprintf(stderr, "nettune: %s: %s\n", who, err);
			return -1;
		}
	}
	return 0;
}

int nt_bench_seed(const cli_opts *o, const char *who, uint64_t *seed)
{
	if (o->seed) {
		if (nt_bench_parse_seed(o->seed, seed) < 0) {
			fprintf(stderr, "nettune: %s: --seed wants a number from 0 to 18446744073709551615, not '%s'\n", who,
				o->seed);
			return -1;
		}
	} else if (getrandom(seed, sizeof(*seed), GRND_NONBLOCK) != (ssize_t)sizeof(*seed)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t st = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
		*seed = nt_bench_splitmix64(&st);
	}
	return 0;
}
