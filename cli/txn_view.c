/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/txn_view.h"
#include "cli/warn_group.h"
#include "base/cpuset.h"
#include "settings/setting.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static const char *or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

static long long jint(const json_t *o, const char *key, long long dflt)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

/* A step's target as people name it: IRQs as "irq 100". */
static const char *target_text(const json_t *step, char *buf, size_t size)
{
	const char *kind = or(jstr(step, "kind"), "?"), *target = or(jstr(step, "target"), "?");
	if (!strcmp(kind, "irq_affinity"))
		snprintf(buf, size, "irq %s", target);
	else
		snprintf(buf, size, "%s", target);
	return buf;
}

/* For an irq_affinity step's CPUS (a cpulist): red when some of them are
 * off the local CPUs of the step's NIC as NICS (GET /v1/nics) reports
 * them; NULL (no colour) when they are local, or locality is unknown. */
static const char *locality_sgr(const json_t *step, const char *cpus, const json_t *nics)
{
	const char *iface = jstr(step, "interface"), *kind = jstr(step, "kind");
	nt_cpuset set, local;
	size_t i;
	json_t *n;
	if (!nics || !iface || !cpus || !kind || strcmp(kind, "irq_affinity"))
		return NULL;
	json_array_foreach(json_object_get(nics, "nics"), i, n) {
		const char *name = jstr(n, "name"), *lc = jstr(n, "local_cpus");
		if (!name || strcmp(name, iface) || !lc)
			continue;
		if (nt_cpulist_parse(lc, &local) < 0 || nt_cpuset_empty(&local) || nt_cpulist_parse(cpus, &set) < 0)
			return NULL;
		return nt_cpuset_subset(&set, &local) ? NULL : NT_SGR_RED;
	}
	return NULL;
}

/* The group a step belongs to: its NIC or bond, or "host" for sysctls and
 * irqbalance. */
static const char *group_of(const json_t *step)
{
	return or(jstr(step, "interface"), "host");
}

/* One of the agent's warnings W, in the CLI's words: the advice to apply
 * "with confirm_timeout_s" (the API's member) is --confirm-timeout here,
 * and none at all when WINDOWED, the transaction having a window. */
static void warning_line(nt_out *o, const char *w, bool windowed)
{
	static const char api[] = "apply with confirm_timeout_s so that it rolls back unless confirmed";
	const char *at = strstr(w, api);
	nt_out_paint(o, NT_SGR_YELLOW, "warning:");
	if (!at) {
		fprintf(o->f, " %s\n", w);
		return;
	}
	/* The clause and the "; " before it go when a window is set. */
	int head = (int)(at - w);
	if (windowed) {
		while (head > 0 && (w[head - 1] == ' ' || w[head - 1] == ';'))
			head--;
		fprintf(o->f, " %.*s%s\n", head, w, at + strlen(api));
	} else {
		fprintf(o->f, " %.*sapply with --confirm-timeout S (or use try) so that it rolls back unless confirmed%s\n",
			head, w, at + strlen(api));
	}
}

static void field(nt_out *o, const char *name, const char *value);

/* WARNINGS, alike ones as one line (cli/warn_group.h) unless VERBOSE, each
 * by LINE (warning_line's or a field's); then, when some were grouped, how
 * many there are and how to see each. */
static void warnings_shown(nt_out *o, const json_t *warnings, const json_t *nics, bool verbose, bool windowed,
			   bool as_field)
{
	size_t i, n = json_array_size(warnings);
	json_t *w, *grouped = verbose || n < 2 ? NULL : nt_warn_group(warnings, nics);
	const json_t *shown = grouped ? grouped : warnings;
	json_array_foreach(shown, i, w) {
		const char *s = json_string_value(w);
		if (as_field)
			field(o, "warning", s ? s : "?");
		else
			warning_line(o, s ? s : "?", windowed);
	}
	if (grouped && json_array_size(grouped) < n)
		nt_out_paint(o, NT_SGR_DIM, "%s(%zu warnings as %zu line%s, alike ones together; --verbose lists each)\n",
			     as_field ? "  " : "", n, json_array_size(grouped), json_array_size(grouped) == 1 ? "" : "s");
	json_decref(grouped);
}

void nt_view_plan(nt_out *o, const json_t *plan, const json_t *nics, bool verbose)
{
	json_t *steps = json_object_get(plan, "steps");
	size_t n = json_array_size(steps);
	static const char *const head[] = { "INTERFACE", "KIND", "TARGET", "BEFORE", "", "AFTER" };
	char tgt[256], before[512], after[512];

	if (n) {
		nt_table *t = nt_table_new(6, head);
		bool *done = calloc(n, sizeof(*done));
		if (!t || !done) {
			nt_table_free(t);
			free(done);
			return;
		}
		/* Grouped by interface in the order they first appear, and inside
		 * one interface by kind likewise, each group keeping the order the
		 * steps run in. */
		for (size_t i = 0; i < n; i++) {
			if (done[i])
				continue;
			const char *grp = group_of(json_array_get(steps, i));
			bool first_of_group = true;
			for (size_t k = i; k < n; k++) {
				json_t *sk = json_array_get(steps, k);
				if (done[k] || strcmp(group_of(sk), grp))
					continue;
				const char *kind = or(jstr(sk, "kind"), "?");
				bool first_of_kind = true;
				for (size_t j = k; j < n; j++) {
					json_t *s = json_array_get(steps, j);
					if (done[j] || strcmp(group_of(s), grp) || strcmp(or(jstr(s, "kind"), "?"), kind))
						continue;
					done[j] = true;
					const char *cells[6] = {
						first_of_group ? grp : "", first_of_kind ? kind : "",
						target_text(s, tgt, sizeof(tgt)),
						nt_out_oneline(before, sizeof(before), jstr(s, "before")), "→",
						nt_out_oneline(after, sizeof(after), jstr(s, "after")),
					};
					nt_table_add(t, cells);
					nt_table_sgr(t, 0, NT_SGR_BOLD);
					nt_table_sgr(t, 3, locality_sgr(s, before, nics));
					const char *off = locality_sgr(s, after, nics);
					nt_table_sgr(t, 5, off ? off : NT_SGR_GREEN);
					first_of_group = first_of_kind = false;
				}
			}
		}
		nt_table_print(t, o, 0);
		nt_table_free(t);
		free(done);
	}
	if (n && json_array_size(json_object_get(plan, "warnings")))
		fputc('\n', o->f);
	warnings_shown(o, json_object_get(plan, "warnings"), nics, verbose, false, false);
	const char *iface;
	json_t *cpus;
	json_object_foreach(json_object_get(plan, "reserved"), iface, cpus)
		fprintf(o->f, "reserved for the application: %s cpus %s\n", iface, or(json_string_value(cpus), "?"));
	if (n)
		fprintf(o->f, "%zu step%s; nothing applied\n", n, n == 1 ? "" : "s");
	else
		nt_out_paint(o, NT_SGR_GREEN, "already tuned: nothing to do\n");
	const char *id = jstr(plan, "id");
	if (id && n) {
		char when[64];
		fprintf(o->f, "plan %s: apply exactly these steps with\n  ", id);
		nt_out_paint(o, NT_SGR_BOLD, "nettune apply --plan %s", id);
		fprintf(o->f, "\n(once, until %s; nothing is applied if a target moved or the host changed since)\n",
			nt_out_time(when, sizeof(when), jstr(plan, "expires")));
	}
}

/* Kinds in plan order (the registry's), then by name: a lean reply's
 * counts come keyed by name, and a summary must read the same whichever
 * answer it was made from. */
static int kind_rank(const char *k)
{
	const nt_setting_kind *kind = nt_setting_find(k);
	return kind ? kind->order : 1000;
}

static void sort_kinds(const char **kinds, int *counts, int nk)
{
	for (int i = 1; i < nk; i++)
		for (int j = i; j > 0; j--) {
			int a = kind_rank(kinds[j - 1]), b = kind_rank(kinds[j]);
			if (a < b || (a == b && strcmp(kinds[j - 1], kinds[j]) <= 0))
				break;
			const char *tk = kinds[j];
			int tc = counts[j];
			kinds[j] = kinds[j - 1], counts[j] = counts[j - 1];
			kinds[j - 1] = tk, counts[j - 1] = tc;
		}
}

/* "irq_affinity ×7, rings ×2" for the steps of TXN whose result is RESULT:
 * from its "step_counts" in a lean reply (?steps=failed|none), else from
 * its steps; kinds in plan order. */
static int count_by_kind(const json_t *txn, const char *result, char *buf, size_t size)
{
	const char *kinds[16];
	int counts[16], nk = 0, total = 0;
	size_t i;
	json_t *s, *steps = json_object_get(txn, "steps");
	const json_t *sc = json_object_get(txn, "step_counts");
	if (sc) {
		const char *k;
		json_t *c;
		json_object_foreach(json_object_get(sc, result), k, c) {
			total += (int)json_integer_value(c);
			if (nk < 16) {
				kinds[nk] = k;
				counts[nk++] = (int)json_integer_value(c);
			}
		}
		steps = NULL;
	}
	json_array_foreach(steps, i, s) {
		if (strcmp(or(jstr(s, "result"), ""), result))
			continue;
		total++;
		const char *k = or(jstr(s, "kind"), "?");
		int j;
		for (j = 0; j < nk && strcmp(kinds[j], k); j++)
			;
		if (j == nk && nk < 16) {
			kinds[nk] = k;
			counts[nk++] = 0;
		}
		if (j < nk)
			counts[j]++;
	}
	sort_kinds(kinds, counts, nk);
	size_t len = 0;
	buf[0] = '\0';
	for (int j = 0; j < nk && len < size; j++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s ×%d", j ? ", " : "", kinds[j], counts[j]);
	return total;
}

static void step_line(nt_out *o, const json_t *s, const char *label, const char *sgr)
{
	char tgt[256], before[512], after[512], err[1024];
	fprintf(o->f, "  ");
	nt_out_paint(o, sgr, "%s", label);
	fprintf(o->f, " step %lld, %s %s (%s → %s)", jint(s, "index", -1), or(jstr(s, "kind"), "?"),
		target_text(s, tgt, sizeof(tgt)), nt_out_oneline(before, sizeof(before), jstr(s, "before")),
		nt_out_oneline(after, sizeof(after), jstr(s, "after")));
	if (jstr(s, "error"))
		fprintf(o->f, ": %s", nt_out_oneline(err, sizeof(err), jstr(s, "error")));
	fputc('\n', o->f);
}

/* WARNINGS: the plan's warnings too (shown once, with the apply). */
static void outcome(nt_out *o, const json_t *txn, const char *confirm_hint, bool warnings, const json_t *nics,
		    bool verbose)
{
	const char *status = or(jstr(txn, "status"), "?");
	json_t *steps = json_object_get(txn, "steps");
	long long id = jint(txn, "id", 0), dur = jint(txn, "duration_ms", -1);
	long long rb_of = jint(txn, "rollback_of", -1);
	char kinds[256], d[64], when[64], err[1024];
	int applied = count_by_kind(txn, "applied", kinds, sizeof(kinds));

	nt_out_paint(o, NT_SGR_BOLD, "transaction %lld", id);
	if (rb_of > 0)
		fprintf(o->f, " (rollback of %lld)", rb_of);
	fprintf(o->f, ": ");
	nt_out_paint(o, nt_out_status_sgr(status), "%s", status);
	if (!strcmp(status, "applied") || !strcmp(status, "pending_confirm")) {
		if (applied)
			fprintf(o->f, ", %d step%s changed (%s)", applied, applied == 1 ? "" : "s", kinds);
		else
			fprintf(o->f, ", nothing to change: already tuned");
		/* A confirmed transaction's duration runs to its confirmation: the
		 * wait is not the apply's time, so it is said as the wait. */
		bool confirmed = !strcmp(status, "applied") && jint(txn, "confirm_timeout_s", -1) > 0;
		if (dur >= 0 && confirmed)
			fprintf(o->f, "; confirmed %s after it was applied", nt_out_duration(d, sizeof(d), dur));
		else if (dur >= 0)
			fprintf(o->f, " in %s", nt_out_duration(d, sizeof(d), dur));
		fputc('\n', o->f);
		if (!strcmp(status, "pending_confirm")) {
			long long dl = jint(txn, "confirm_deadline_ms", -1);
			struct timespec now;
			clock_gettime(CLOCK_REALTIME, &now);
			long long left = dl - ((long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
			fprintf(o->f, "reverts at %s", nt_out_time(when, sizeof(when), jstr(txn, "confirm_deadline")));
			if (dl > 0 && left > 0)
				fprintf(o->f, " (in %s)", nt_out_duration(d, sizeof(d), left));
			fprintf(o->f, " unless confirmed:\n  ");
			nt_out_paint(o, NT_SGR_BOLD, "nettune confirm %lld%s", id, confirm_hint ? confirm_hint : "");
			fputc('\n', o->f);
		}
	} else {
		if (dur >= 0)
			fprintf(o->f, " after %s", nt_out_duration(d, sizeof(d), dur));
		fputc('\n', o->f);
		long long fs = jint(txn, "failed_step", -1);
		json_t *failed = NULL, *s;
		size_t i;
		json_array_foreach(steps, i, s)
			if (jint(s, "index", -1) == fs)
				failed = s;
		if (failed)
			step_line(o, failed, "failed:", NT_SGR_RED);
		else if (jstr(txn, "error"))
			/* A revert (not confirmed in time, or rolled back early on
			 * purpose) is no failure: its "error" is why. */
			fprintf(o->f, "  %s: %s\n", !strcmp(status, "reverted") ? "reason" : "error",
				nt_out_oneline(err, sizeof(err), jstr(txn, "error")));
		const char *put_back[] = { "rolled_back", "reverted", "restored" };
		for (size_t k = 0; k < 3; k++) {
			int nb = count_by_kind(txn, put_back[k], kinds, sizeof(kinds));
			if (nb)
				fprintf(o->f, "  put back: %d step%s (%s)\n", nb, nb == 1 ? "" : "s", kinds);
		}
		int nf = count_by_kind(txn, "rollback_failed", kinds, sizeof(kinds));
		if (nf) {
			nt_out_paint(o, NT_SGR_BOLD_RED, "  NOT put back: %d step%s", nf, nf == 1 ? "" : "s");
			fprintf(o->f, " (each error says what its target reads now):\n");
			json_array_foreach(steps, i, s)
				if (!strcmp(or(jstr(s, "result"), ""), "rollback_failed"))
					step_line(o, s, "  not put back:", NT_SGR_BOLD_RED);
		} else if (!strcmp(status, "rolled_back")) {
			fprintf(o->f, "the host is as it was before\n");
		}
	}
	bool windowed = jint(txn, "confirm_timeout_s", 0) > 0;
	if (warnings)
		warnings_shown(o, json_object_get(txn, "warnings"), nics, verbose, windowed, false);
}

void nt_view_outcome(nt_out *o, const json_t *txn, const char *confirm_hint, const json_t *nics, bool verbose)
{
	outcome(o, txn, confirm_hint, true, nics, verbose);
}

void nt_view_outcome_later(nt_out *o, const json_t *txn, const char *confirm_hint)
{
	outcome(o, txn, confirm_hint, false, NULL, false);
}

static void field(nt_out *o, const char *name, const char *value)
{
	nt_out_paint(o, NT_SGR_DIM, "  %-12s", name);
	fprintf(o->f, "%s\n", value);
}

static const char *who(const json_t *txn, char *buf, size_t size)
{
	const char *identity = jstr(txn, "identity"), *client = jstr(txn, "client");
	if (identity && *identity)
		snprintf(buf, size, "%s (%s)", identity, or(client, "?"));
	else
		snprintf(buf, size, "%s", or(client, "?"));
	return buf;
}

static const char *profile_name(const json_t *txn)
{
	const char *n = jstr(txn, "profile_name");
	if (!n)
		n = jstr(json_object_get(txn, "profile"), "name");
	return n;
}

void nt_view_txn(nt_out *o, const json_t *txn, const json_t *nics, bool verbose)
{
	const char *status = or(jstr(txn, "status"), "?");
	char buf[1024], t1[64], d[64];
	long long rb_of = jint(txn, "rollback_of", -1), dur = jint(txn, "duration_ms", -1);

	nt_out_paint(o, NT_SGR_BOLD, "transaction %lld", jint(txn, "id", 0));
	fprintf(o->f, "  ");
	nt_out_paint(o, nt_out_status_sgr(status), "%s", status);
	fputc('\n', o->f);
	if (rb_of > 0) {
		snprintf(buf, sizeof(buf), "rollback of transaction %lld", rb_of);
		field(o, "profile", buf);
	} else {
		field(o, "profile", or(profile_name(txn), "(unnamed)"));
	}
	field(o, "by", who(txn, buf, sizeof(buf)));
	field(o, "created", nt_out_time(t1, sizeof(t1), jstr(txn, "created")));
	if (jstr(txn, "finished")) {
		snprintf(buf, sizeof(buf), "%s", nt_out_time(t1, sizeof(t1), jstr(txn, "finished")));
		if (dur >= 0)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ", took %s",
				 nt_out_duration(d, sizeof(d), dur));
		field(o, "finished", buf);
	}
	if (jstr(txn, "confirm_deadline")) {
		snprintf(buf, sizeof(buf), "%s", nt_out_time(t1, sizeof(t1), jstr(txn, "confirm_deadline")));
		if (!strcmp(status, "pending_confirm"))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
				 " (waiting: nettune confirm %lld keeps it)", jint(txn, "id", 0));
		field(o, "confirm by", buf);
	}
	if (jstr(txn, "error"))
		field(o, !strcmp(status, "reverted") ? "reason" : "error", nt_out_oneline(buf, sizeof(buf), jstr(txn, "error")));
	size_t i;
	warnings_shown(o, json_object_get(txn, "warnings"), nics, verbose, false, true);
	const char *iface;
	json_t *cpus;
	json_object_foreach(json_object_get(txn, "reserved"), iface, cpus) {
		snprintf(buf, sizeof(buf), "%s cpus %s (for the application)", iface, or(json_string_value(cpus), "?"));
		field(o, "reserved", buf);
	}

	json_t *steps = json_object_get(txn, "steps");
	if (!json_array_size(steps)) {
		fprintf(o->f, "\nno steps (nothing needed changing)\n");
		return;
	}
	static const char *const head[] = { "#", "INTERFACE", "KIND", "TARGET", "BEFORE", "", "AFTER", "RESULT",
					    "NOTE" };
	nt_table *t = nt_table_new(9, head);
	if (!t)
		return;
	json_t *s;
	json_array_foreach(steps, i, s) {
		char idx[32], tgt[256], before[512], after[512], note[1024];
		snprintf(idx, sizeof(idx), "%lld", jint(s, "index", (long long)i));
		const char *res = or(jstr(s, "result"), "?");
		nt_out_oneline(note, sizeof(note), jstr(s, "error") ? jstr(s, "error") : jstr(s, "observed"));
		const char *cells[9] = { idx, or(jstr(s, "interface"), "-"), or(jstr(s, "kind"), "?"),
					 target_text(s, tgt, sizeof(tgt)),
					 nt_out_oneline(before, sizeof(before), jstr(s, "before")), "→",
					 nt_out_oneline(after, sizeof(after), jstr(s, "after")), res, note };
		nt_table_add(t, cells);
		nt_table_sgr(t, 4, locality_sgr(s, before, nics));
		nt_table_sgr(t, 6, locality_sgr(s, after, nics));
		nt_table_sgr(t, 7, nt_out_status_sgr(res));
		if (jstr(s, "error"))
			nt_table_sgr(t, 8, NT_SGR_RED);
	}
	fputc('\n', o->f);
	nt_table_print(t, o, 0);
	nt_table_free(t);
}

void nt_view_history(nt_out *o, const json_t *list, long long total)
{
	size_t n = json_array_size(list);
	if (!n) {
		fprintf(o->f, "no transactions\n");
		return;
	}
	static const char *const head[] = { "ID", "CREATED", "STATUS", "STEPS", "WHO", "PROFILE", "REASON" };
	nt_table *t = nt_table_new(7, head);
	if (!t)
		return;
	size_t i;
	json_t *x;
	json_array_foreach(list, i, x) {
		char id[32], created[64], nsteps[32], by[256], reason[512], when[64];
		const char *status = or(jstr(x, "status"), "?");
		snprintf(id, sizeof(id), "%lld", jint(x, "id", 0));
		snprintf(nsteps, sizeof(nsteps), "%lld", jint(x, "nsteps", (long long)json_array_size(json_object_get(x, "steps"))));
		reason[0] = '\0';
		if (jstr(x, "error"))
			nt_out_oneline(reason, sizeof(reason), jstr(x, "error"));
		else if (jint(x, "rollback_of", -1) > 0)
			snprintf(reason, sizeof(reason), "rollback of %lld", jint(x, "rollback_of", -1));
		else if (!strcmp(status, "pending_confirm"))
			snprintf(reason, sizeof(reason), "confirm by %s", nt_out_time(when, sizeof(when), jstr(x, "confirm_deadline")));
		else if (jstr(x, "reason")) /* the agent's own: "drift", "boot", "link-up" */
			snprintf(reason, sizeof(reason), "%s", !strcmp(jstr(x, "reason"), "drift") ? "drift repair"
							      : !strcmp(jstr(x, "reason"), "boot") ? "re-applied at boot"
							      : !strcmp(jstr(x, "reason"), "link-up") ? "re-applied at link up"
												     : jstr(x, "reason"));
		const char *cells[7] = { id, nt_out_time(created, sizeof(created), jstr(x, "created")), status, nsteps,
					 who(x, by, sizeof(by)), or(profile_name(x), "-"), reason };
		nt_table_add(t, cells);
		nt_table_sgr(t, 2, nt_out_status_sgr(status));
	}
	nt_table_print(t, o, 0);
	nt_table_free(t);
	if (total > (long long)n)
		fprintf(o->f, "showing the newest %zu of %lld (--limit N for more)\n", n, total);
}

/* Whether member KEY of O, when present or REQUIRED, is an array whose
 * items are all of TYPE. */
static bool array_of(const json_t *o, const char *key, bool required, json_type type)
{
	json_t *a = json_object_get(o, key), *x;
	size_t i;
	if (!a)
		return !required;
	if (!json_is_array(a))
		return false;
	json_array_foreach(a, i, x)
		if (json_typeof(x) != type)
			return false;
	return true;
}

static bool array_of_objects(const json_t *o, const char *key, bool required)
{
	return array_of(o, key, required, JSON_OBJECT);
}

const char *nt_view_malformed(const json_t *doc, const char *kind)
{
	if (!json_is_object(doc))
		return "the answer is not a JSON object";
	if (!strcmp(kind, "history")) {
		if (!array_of_objects(doc, "transactions", true))
			return "transactions is not an array of objects";
		json_t *x;
		size_t i;
		json_array_foreach(json_object_get(doc, "transactions"), i, x)
			if (nt_view_malformed(x, "txn-summary"))
				return nt_view_malformed(x, "txn-summary");
		return NULL;
	}
	if (!strcmp(kind, "desired"))
		return array_of_objects(doc, "history", false) ? NULL : "history is not an array of objects";
	if (!strcmp(kind, "diagnostics")) {
		if (!array_of_objects(doc, "findings", true))
			return "findings is not an array of objects";
		json_t *f;
		size_t i;
		json_array_foreach(json_object_get(doc, "findings"), i, f)
			if (!json_is_string(json_object_get(f, "severity")) || !json_is_string(json_object_get(f, "id")) ||
			    !json_is_string(json_object_get(f, "subject")) || !json_is_string(json_object_get(f, "message")))
				return "a finding lacks its severity, id, subject or message";
		return NULL;
	}
	if (!strcmp(kind, "drift")) {
		if (!json_is_string(json_object_get(doc, "status")))
			return "status is not a string";
		if (!array_of_objects(doc, "targets", false))
			return "targets is not an array of objects";
		return array_of_objects(doc, "errors", false) ? NULL : "errors is not an array of objects";
	}
	bool txn = strcmp(kind, "plan") != 0;
	if (txn && !json_is_integer(json_object_get(doc, "id")))
		return "id is not an integer";
	if (txn && !json_is_string(json_object_get(doc, "status")))
		return "status is not a string";
	/* A history entry may leave its steps out (it counts them). */
	if (!array_of_objects(doc, "steps", strcmp(kind, "txn-summary") != 0))
		return "steps is not an array of objects";
	if (!array_of(doc, "warnings", false, JSON_STRING))
		return "warnings is not an array of strings";
	json_t *r = json_object_get(doc, "reserved");
	if (r && !json_is_object(r))
		return "reserved is not an object";
	return NULL;
}
