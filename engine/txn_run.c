/* SPDX-License-Identifier: Apache-2.0 */
/* A transaction's stages: its steps applied in order and verified, the
 * undo after a failure, a revert or a recovery, each stage's outcomes
 * recorded with its status in one store write and told to the log sink. */
#include "engine/txn_int.h"
#include "engine/plan.h"
#include "kernel/ethtool.h"
#include "settings/setting.h"
#include "store/status.h"
#include "store/store.h"

#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The step outcomes of one stage of a transaction (its apply, the undo
 * after a failure, a revert, a recovery), held until the stage ends and
 * recorded with its status in one store write (nt_store_txn_stage). */
typedef struct nt_txn_stage {
	nt_store_step_rec *recs;
	int n, cap;
	/* Step lines sent to the log sink in this stage, and the ones held
	 * back beyond NT_TXN_LOG_STEPS (said in one line at the stage's end). */
	int logged, quiet;
} stage;

static const char stage_oom[] = "(out of memory for this step's message)";

static char *stage_strdup(const char *text)
{
	char *c = text ? strdup(text) : NULL;
	return text && !c ? (char *)stage_oom : c;
}

static void stage_clear(stage *st)
{
	for (int i = 0; i < st->n; i++) {
		if (st->recs[i].error != stage_oom)
			free((char *)st->recs[i].error);
		if (st->recs[i].observed != stage_oom)
			free((char *)st->recs[i].observed);
	}
	st->n = 0;
}

static void stage_free(stage *st)
{
	stage_clear(st);
	free(st->recs);
	memset(st, 0, sizeof(*st));
}

/* Room for CAP outcomes up front, so that holding one never fails once
 * steps run. Returns 0 or -ENOMEM. */
static int stage_init(stage *st, int cap)
{
	memset(st, 0, sizeof(*st));
	st->recs = calloc((size_t)cap + 1, sizeof(*st->recs));
	if (!st->recs)
		return -ENOMEM;
	st->cap = cap + 1;
	return 0;
}

/* Hold step IDX's RESULT (with ERR and what its target showed, OBSERVED)
 * for the stage's record and tell the log sink. */
static void note_step(nt_txn_engine *e, stage *st, int64_t id, int idx, const nt_step *s,
		      nt_step_result result, const char *err, const char *observed)
{
	const char *name = nt_step_result_label(result, s->kind);
	if (st->n < st->cap) {
		nt_store_step_rec *rec = &st->recs[st->n++];
		rec->idx = idx;
		rec->result = name;
		rec->error = stage_strdup(err);
		rec->observed = stage_strdup(observed);
	}
	/* A step that failed is always told; the others up to a budget per
	 * stage: a transaction placing every IRQ of a big host is a thousand
	 * steps, a few of those within 30 s meet journald's rate limit, and
	 * past it journald drops lines of every kind, failures too. The
	 * history has every step. */
	bool always = result == NT_STEP_FAILED || result == NT_STEP_ROLLBACK_FAILED;
	if (e->log && !always && st->logged >= NT_TXN_LOG_STEPS) {
		st->quiet++;
	} else if (e->log) {
		st->logged += !always;
		char before[NT_VALUE_MAX], after[NT_VALUE_MAX];
		json_t *ev = json_pack("{s:s, s:I, s:i, s:s, s:s, s:s, s:s, s:s}", "event", "txn_step",
				       "txn", (json_int_t)id, "index", idx, "kind",
				       s->kind ? s->kind->name : "unknown", "target", s->target, "before",
				       nt_value_str(s->kind, &s->before, before, sizeof(before)), "after",
				       nt_value_str(s->kind, &s->after, after, sizeof(after)), "result", name);
		if (ev && s->interface[0])
			json_object_set_new(ev, "interface", json_string(s->interface));
		if (ev && err && *err)
			json_object_set_new(ev, "error", json_string(err));
		emit(e, ev);
	}
}

/* ---- outcomes the store refused ---- */

static json_t *unsettled_find(json_t *list, int64_t id, size_t *at)
{
	size_t i;
	json_t *u;
	json_array_foreach(list, i, u) {
		if (json_integer_value(json_object_get(u, "id")) == id) {
			if (at)
				*at = i;
			return u;
		}
	}
	return NULL;
}

/* Transaction ID finished as STATUS. KEEP: the store refused the record,
 * which is kept (with the outcomes ST holds, NULL: none) to be written
 * again; otherwise its record was written, and whatever was kept for it
 * goes. A later outcome of the same transaction replaces an earlier one
 * either way. */
static void unsettled_note(nt_txn_engine *e, int64_t id, bool keep, const stage *st,
			   const char *status, const char *error, int failed_step,
			   int64_t deadline_ms)
{
	json_t *u = NULL, *steps = NULL;
	if (keep) {
		steps = json_array();
		for (int i = 0; st && steps && i < st->n; i++)
			json_array_append_new(
				steps, json_pack("{s:i, s:s?, s:s?, s:s?}", "idx", st->recs[i].idx,
						 "result", st->recs[i].result, "error",
						 st->recs[i].error, "observed", st->recs[i].observed));
		u = json_pack("{s:I, s:s, s:s?, s:i, s:I, s:s, s:o}", "id", (json_int_t)id, "status",
			      status, "error", error, "failed_step", failed_step, "deadline_ms",
			      (json_int_t)deadline_ms, "store_error", nt_store_errmsg(e->store),
			      "steps", steps ? steps : json_array());
	}
	pthread_mutex_lock(&e->lock);
	if (!e->unsettled)
		e->unsettled = json_array();
	size_t at;
	if (unsettled_find(e->unsettled, id, &at))
		json_array_remove(e->unsettled, at);
	if (u && e->unsettled)
		json_array_append(e->unsettled, u);
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	json_decref(u);
}

/* Write U (an unsettled outcome) as its transaction's record. 0, NT_ESTORE
 * (try again later) or -ENOENT (the row is gone: nothing to settle). */
static int unsettled_write(nt_txn_engine *e, const json_t *u)
{
	json_t *steps = json_object_get(u, "steps");
	size_t n = json_array_size(steps), i;
	nt_store_step_rec *recs = calloc(n + 1, sizeof(*recs));
	json_t *s;
	char *error = NULL;
	if (!recs)
		return -ENOMEM;
	json_array_foreach(steps, i, s) {
		recs[i].idx = (int)json_integer_value(json_object_get(s, "idx"));
		recs[i].result = json_string_value(json_object_get(s, "result"));
		recs[i].error = json_string_value(json_object_get(s, "error"));
		recs[i].observed = json_string_value(json_object_get(s, "observed"));
	}
	/* The reason kept is the one of the failed write (a full disk), said
	 * beside the outcome, not whatever the store says now. */
	const char *why = json_string_value(json_object_get(u, "error"));
	if (asprintf(&error, "%s%sthe store could not record this outcome when the transaction "
		     "ended (%s); recorded once it could",
		     why ? why : "", why ? "; " : "",
		     json_string_value(json_object_get(u, "store_error"))) < 0)
		error = NULL;
	int r = nt_store_txn_stage(e->store, json_integer_value(json_object_get(u, "id")), recs,
				   (int)n, json_string_value(json_object_get(u, "status")),
				   error ? error : why,
				   (int)json_integer_value(json_object_get(u, "failed_step")), true,
				   json_integer_value(json_object_get(u, "deadline_ms")));
	free(error);
	free(recs);
	pthread_mutex_lock(&e->lock);
	e->records++;
	pthread_mutex_unlock(&e->lock);
	return r;
}

int nt_txn_settle(nt_txn_engine *e)
{
	json_t *todo = NULL, *u;
	size_t i;
	int left;

	pthread_mutex_lock(&e->lock);
	if (e->unsettled && json_array_size(e->unsettled)) {
		todo = e->unsettled;
		e->unsettled = json_array();
		if (!e->unsettled) {
			e->unsettled = todo;
			todo = NULL;
		}
	}
	pthread_mutex_unlock(&e->lock);
	json_array_foreach(todo, i, u) {
		int64_t id = json_integer_value(json_object_get(u, "id"));
		int r = unsettled_write(e, u);
		pthread_mutex_lock(&e->lock);
		/* Kept for the next try, unless a newer outcome of the same
		 * transaction was noted meanwhile. */
		if (r < 0 && r != -ENOENT && !unsettled_find(e->unsettled, id, NULL))
			json_array_append(e->unsettled, u);
		pthread_mutex_unlock(&e->lock);
		if (r == 0 && e->log)
			emit(e, json_pack("{s:s, s:I, s:s, s:s}", "event", "txn", "txn", (json_int_t)id,
					  "status", json_string_value(json_object_get(u, "status")),
					  "settled", "recorded late, once the store accepted writes again"));
	}
	json_decref(todo);
	pthread_mutex_lock(&e->lock);
	left = e->unsettled ? (int)json_array_size(e->unsettled) : 0;
	pthread_mutex_unlock(&e->lock);
	return left;
}

int nt_txn_unsettled(nt_txn_engine *e, json_t **list)
{
	pthread_mutex_lock(&e->lock);
	int n = e->unsettled ? (int)json_array_size(e->unsettled) : 0;
	if (list) {
		*list = json_array();
		size_t i;
		json_t *u;
		json_array_foreach(e->unsettled, i, u)
			json_array_append_new(*list, json_pack("{s:O, s:O, s:O}", "transaction",
							       json_object_get(u, "id"), "status",
							       json_object_get(u, "status"), "store_error",
							       json_object_get(u, "store_error")));
	}
	pthread_mutex_unlock(&e->lock);
	return n;
}

int nt_txn_unmended(nt_txn_engine *e, int limit, json_t **list)
{
	*list = NULL;
	if (!e->store)
		return 0;
	pthread_mutex_lock(&e->lock);
	unsigned long at = e->records;
	if (e->unmended_known && e->unmended_at == at) {
		*list = e->unmended ? json_deep_copy(e->unmended) : NULL;
		int n = (int)json_array_size(e->unmended);
		pthread_mutex_unlock(&e->lock);
		return n > 0 && !*list ? -ENOMEM : n;
	}
	pthread_mutex_unlock(&e->lock);
	json_t *got = NULL;
	int r = nt_store_unmended(e->store, limit, &got);
	if (r < 0)
		return r;
	if (json_array_size(got) == 0) {
		json_decref(got);
		got = NULL;
	}
	pthread_mutex_lock(&e->lock);
	/* Kept unless a record came in meanwhile (the next probe asks again). */
	if (e->records == at) {
		json_decref(e->unmended);
		e->unmended = got ? json_deep_copy(got) : NULL;
		e->unmended_known = !got || e->unmended;
		e->unmended_at = at;
	}
	pthread_mutex_unlock(&e->lock);
	*list = got;
	return (int)json_array_size(got);
}

/* Record transaction ID's status, with the step outcomes ST holds (NULL:
 * none) in the same store write, and tell the log sink. The outcomes are
 * dropped once recorded; when the write fails they are kept, for the
 * stage's next record to carry. */
int nt_txn_record_status(nt_txn_engine *e, int64_t id, stage *st, nt_txn_status status,
			 const char *error, int failed_step, bool finished, int64_t deadline_ms)
{
	const char *name = nt_txn_status_name(status);
	int r = nt_store_txn_stage(e->store, id, st ? st->recs : NULL, st ? st->n : 0, name, error,
				   failed_step, finished, deadline_ms);
	pthread_mutex_lock(&e->lock);
	e->records++; /* what health knows of failed rollbacks is to be asked again */
	pthread_mutex_unlock(&e->lock);
	if (r == 0 && st) {
		/* Held outcomes of earlier stages were written with this one. */
		stage_clear(st);
		if (e->unrecorded_steps)
			json_object_clear(e->unrecorded_steps);
	} else if (r < 0 && st && e->unrecorded_steps) {
		/* Still held for the next stage's write; until one succeeds the
		 * reply shows each step as it ended (nt_txn_settle_unrecorded), later
		 * outcomes of a step over earlier ones. */
		for (int i = 0; i < st->n; i++) {
			char k[24];
			snprintf(k, sizeof(k), "%d", st->recs[i].idx);
			json_object_set_new(e->unrecorded_steps, k, json_string(st->recs[i].result));
		}
		snprintf(e->unrecorded_step_error, sizeof(e->unrecorded_step_error), "%s",
			 nt_store_errmsg(e->store));
	}
	if (finished)
		unsettled_note(e, id, r < 0, st, name, error, failed_step, deadline_ms);
	if (r == 0)
		nt_txn_settle(e);
	if (r < 0 && finished) {
		/* The host is already as this status says; only the record
		 * is missing. Kept so the reply can say it (see
		 * nt_txn_settle_unrecorded), and the next start settles the journal. */
		e->unrecorded = true;
		e->unrecorded_status = status;
		snprintf(e->unrecorded_error, sizeof(e->unrecorded_error),
			 "%s%sthe store could not record this outcome (%s): history shows "
			 "the transaction as applying until the agent can write again, and "
			 "records it then (or its next start settles it from the journal)",
			 error ? error : "", error ? "; " : "", nt_store_errmsg(e->store));
	}
	if (e->log && st && st->quiet) {
		char where[48];
		snprintf(where, sizeof(where), "/v1/transactions/%lld", (long long)id);
		emit(e, json_pack("{s:s, s:I, s:i, s:i, s:s}", "event", "txn_steps", "txn",
				  (json_int_t)id, "logged", st->logged, "not_logged", st->quiet,
				  "history", where));
	}
	if (st)
		st->logged = st->quiet = 0;
	if (e->log) {
		json_t *ev = json_pack("{s:s, s:I, s:s}", "event", "txn", "txn", (json_int_t)id,
				       "status", name);
		if (ev && error && *error)
			json_object_set_new(ev, "error", json_string(error));
		if (ev && failed_step >= 0)
			json_object_set_new(ev, "failed_step", json_integer(failed_step));
		if (ev && r < 0)
			json_object_set_new(ev, "store_error", json_string(nt_store_errmsg(e->store)));
		emit(e, ev);
	}
	return r;
}

/* Test-only fault injection for the fault matrix
 * (tests/integration/test_fault_matrix.c): NETTUNE_TEST_FAULT holds
 * comma-separated POINT:STEP items. "fail:N" makes step N's write fail
 * (returns true here, and the caller fails the step); "kill-before-apply:N",
 * "kill-after-apply:N" (written, not yet verified), "kill-after-step:N"
 * (verified and observed; its outcome is recorded only with the stage's)
 * and "kill-in-undo:N" (undoing step N, in a rollback or in recovery) kill
 * the agent there with SIGKILL, as a crash would. "pause-in-undo:N" and
 * "pause-before-status:0" (all steps applied, the outcome not yet
 * recorded) sleep NETTUNE_TEST_STEP_DELAY_MS there, so that a test can
 * break the store at that stage (tests/integration/test_store_faults.c).
 * Unset in production: one string compare per step. */
static bool fault_at(const nt_txn_engine *e, const char *point, int step)
{
	char item[64];
	if (!e->faults[0])
		return false;
	snprintf(item, sizeof(item), "%s:%d", point, step);
	size_t n = strlen(item);
	for (const char *p = e->faults; (p = strstr(p, item)); p += n) {
		if ((p == e->faults || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) {
			if (strncmp(point, "kill", 4) == 0)
				raise(SIGKILL);
			return true;
		}
	}
	return false;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* ---- steps ---- */

/* The steps of a stored transaction, growing as the store hands them. */
typedef struct stored_steps {
	nt_step *steps;
	nt_step_result *results;
	int n, cap;
} stored_steps;

static int stored_step(void *arg, const nt_store_step_row *row)
{
	stored_steps *ss = arg;
	if (ss->n == ss->cap) {
		int cap = ss->cap ? 2 * ss->cap : 64;
		nt_step *st = realloc(ss->steps, (size_t)cap * sizeof(*st));
		if (st)
			ss->steps = st;
		nt_step_result *res = st ? realloc(ss->results, (size_t)cap * sizeof(*res)) : NULL;
		if (!st || !res)
			return -ENOMEM;
		ss->results = res;
		ss->cap = cap;
	}
	nt_step *s = &ss->steps[ss->n];
	if (nt_step_from_strings(row->kind, row->target, row->interface, row->before, row->after, s) < 0)
		s->kind = NULL;
	int r = nt_step_result_parse(row->result);
	ss->results[ss->n++] = r < 0 ? NT_STEP_PENDING : (nt_step_result)r;
	return 0;
}

/* Steps of stored transaction ID, in index order, with their recorded
 * results, and its status (into STATUS), read from the store's rows
 * without the document a reply would make of them. A step whose kind
 * this build does not know, or whose values do not read as its kind's,
 * gets kind NULL: it cannot be undone, and undo says so. The arrays are
 * the caller's (free). Returns 0, -ENOENT, -ENOMEM or NT_ESTORE. */
int nt_txn_steps_stored(nt_txn_engine *e, int64_t id, char *status, size_t statussize,
			nt_step **out, nt_step_result **results, int *n)
{
	stored_steps ss = { 0 };
	int r = nt_store_txn_steps(e->store, id, status, statussize, stored_step, &ss);
	if (r == 0 && !ss.steps) {
		ss.steps = calloc(1, sizeof(*ss.steps));
		ss.results = calloc(1, sizeof(*ss.results));
		if (!ss.steps || !ss.results)
			r = -ENOMEM;
	}
	if (r < 0) {
		free(ss.steps);
		free(ss.results);
		return r;
	}
	*out = ss.steps;
	*results = ss.results;
	*n = ss.n;
	return 0;
}

/* STEPS[0..N) as the store's rows, their values in their kinds' words in
 * TEXT (2 * NT_VALUE_MAX a step, the caller's). */
static void steps_rows(const nt_step *steps, int n, nt_store_step_row *rows, char *text)
{
	for (int i = 0; i < n; i++) {
		const nt_step *s = &steps[i];
		char *b = text + (size_t)i * 2 * NT_VALUE_MAX, *a = b + NT_VALUE_MAX;
		rows[i] = (nt_store_step_row){
			.idx = i, .kind = s->kind->name, .target = s->target, .interface = s->interface,
			.before = nt_value_str(s->kind, &s->before, b, NT_VALUE_MAX),
			.after = nt_value_str(s->kind, &s->after, a, NT_VALUE_MAX),
		};
	}
}

/* An ethtool handle for one plan or stage (see nt_setting_kind), or NULL
 * when none can be opened: the kinds then open one per call. */
nt_ethtool *nt_txn_stage_ethtool(nt_txn_engine *e)
{
	nt_ethtool *eh = NULL;
	return nt_ethtool_open(&e->ctx, &eh) == 0 ? eh : NULL;
}

/* Check what S's target read back (READ_ERR, GOT) after writing WANT.
 * Returns 0, NT_ECONFLICT or the read error, with a sentence in ERR that
 * starts with PREFIX and says what was being done (DOING "writing"). */
static int verify(const nt_step *s, int read_err, const nt_value *got, const nt_value *want,
		  const char *prefix, const char *doing, char *err, size_t errsize)
{
	char a[NT_VALUE_MAX], b[NT_VALUE_MAX];
	if (read_err < 0) {
		snprintf(err, errsize, "%scannot read back: %s", prefix, nt_strerror(read_err));
		return read_err;
	}
	if (nt_setting_equal(s->kind, got, want))
		return 0;
	snprintf(err, errsize, "%sreads '%s' after %s '%s'", prefix, nt_value_str(s->kind, got, a, sizeof(a)),
		 doing, nt_value_str(s->kind, want, b, sizeof(b)));
	return NT_ECONFLICT;
}

/* OP for the targets of STEPS[IDX[0..M)], each a step with a kind (for
 * STEPS_OBSERVE, one with an observe operation). A kind with read_many
 * (observe_many) takes all its steps in one call, through the files the
 * agent keeps open for its reads of the host: one pread a target where
 * READ (OBSERVE) opens a file. Other kinds, and a batch that could not be
 * made, go one target at a time. Values go to VALS[j] (STEPS_READ) or to
 * OBS + j * OBSSIZE (STEPS_OBSERVE), and what READ (OBSERVE) returns to
 * RES[j]. */
void nt_txn_read_steps(nt_txn_engine *e, nt_ethtool *eh, steps_op op, const nt_step *steps,
		       const int *idx, int m, nt_value *vals, char *obs, size_t obssize, int *res)
{
	const char **targets = malloc(((size_t)m + 1) * sizeof(*targets));
	int *pos = malloc(((size_t)m + 1) * sizeof(*pos));
	int *got = malloc(((size_t)m + 1) * sizeof(*got));
	bool *done = calloc((size_t)m + 1, sizeof(*done));
	nt_value *v = op == STEPS_READ ? malloc(((size_t)m + 1) * sizeof(*v)) : NULL;
	char *o = op == STEPS_OBSERVE ? malloc(((size_t)m + 1) * obssize) : NULL;
	bool batch = targets && pos && got && done && (v || o);

	for (int j = 0; j < m; j++) {
		const nt_setting_kind *k = steps[idx[j]].kind;
		bool grouped = batch && (op == STEPS_READ ? k->read_many != NULL : k->observe_many != NULL);
		int c = 1;
		if (batch && done[j])
			continue;
		if (grouped) {
			c = 0;
			for (int q = j; q < m; q++) {
				if (done[q] || steps[idx[q]].kind != k)
					continue;
				done[q] = true;
				pos[c] = q;
				targets[c++] = steps[idx[q]].target;
			}
			int r = op == STEPS_READ ? k->read_many(&e->ctx, targets, c, v, got) :
						   k->observe_many(&e->ctx, targets, c, o, obssize, got);
			for (int q = 0; r == 0 && q < c; q++) {
				res[pos[q]] = got[q];
				if (op == STEPS_READ)
					vals[pos[q]] = v[q];
				else
					snprintf(obs + (size_t)pos[q] * obssize, obssize, "%s", o + (size_t)q * obssize);
			}
			if (r == 0)
				continue;
		}
		for (int q = 0; q < c; q++) {
			int at = grouped ? pos[q] : j;
			const char *target = steps[idx[at]].target;
			if (op == STEPS_READ) {
				memset(&vals[at], 0, sizeof(vals[at]));
				res[at] = k->read(&e->ctx, eh, target, &vals[at]);
			} else {
				res[at] = k->observe(&e->ctx, eh, target, obs + (size_t)at * obssize, obssize);
			}
		}
	}
	free(targets);
	free(pos);
	free(got);
	free(done);
	free(v);
	free(o);
}

/* Put targets 0..LAST back to their before-values, in reverse, verifying
 * each, holding each outcome in ST. RESULTS holds each step's recorded
 * result and is updated. Steps that were skipped, or already read as their
 * before-value, are left alone. DONE is the result for a step put back
 * (rolled back, reverted, restored). Returns the number of targets that
 * could not be put back. */
static int undo(nt_txn_engine *e, nt_ethtool *eh, stage *st, int64_t id, const nt_step *steps,
		nt_step_result *results, int last, nt_step_result done)
{
	int failures = 0, m = 0;
	char err[512], a[NT_VALUE_MAX], b[NT_VALUE_MAX];
	nt_value cur, got;
	/* The current values of the targets whose kind reads many at once
	 * (IRQs: independent files) are read first, in one pass; the others
	 * just before their undo, which may follow another's (a NIC's). */
	int *idx = malloc(((size_t)last + 2) * sizeof(*idx)), *pre_res = NULL, *at = NULL;
	nt_value *pre = NULL;
	for (int i = last; idx && i >= 0; i--)
		if (results[i] != NT_STEP_SKIPPED && steps[i].kind && steps[i].kind->read_many)
			idx[m++] = i;
	if (m) {
		pre = malloc((size_t)m * sizeof(*pre));
		pre_res = malloc((size_t)m * sizeof(*pre_res));
		at = malloc(((size_t)last + 1) * sizeof(*at));
	}
	if (pre && pre_res && at) {
		nt_txn_read_steps(e, eh, STEPS_READ, steps, idx, m, pre, NULL, 0, pre_res);
		for (int i = 0; i <= last; i++)
			at[i] = -1;
		for (int j = 0; j < m; j++)
			at[idx[j]] = j;
	} else {
		free(at);
		at = NULL;
	}

	for (int i = last; i >= 0; i--) {
		const nt_step *s = &steps[i];
		if (results[i] == NT_STEP_SKIPPED)
			continue;
		if (!s->kind) {
			note_step(e, st, id, i, s, NT_STEP_ROLLBACK_FAILED,
				  "unknown setting kind, or a value that is not of its kind", NULL);
			failures++;
			continue;
		}
		int r;
		if (at && at[i] >= 0) {
			cur = pre[at[i]];
			r = pre_res[at[i]];
		} else {
			memset(&cur, 0, sizeof(cur));
			r = s->kind->read(&e->ctx, eh, s->target, &cur);
		}
		if (r < 0 && results[i] != NT_STEP_APPLIED) {
			/* A step whose write failed (or never ran) on a target that
			 * cannot even be read now: nothing of ours is there to undo. */
			continue;
		}
		if (r == 0 && nt_setting_equal(s->kind, &cur, &s->before)) {
			/* Already as it was: a step that never ran, or one the
			 * crash interrupted before its write. */
			if (results[i] == NT_STEP_APPLIED) {
				note_step(e, st, id, i, s, done, NULL, NULL);
				results[i] = done;
			} else if (results[i] == NT_STEP_PENDING) {
				note_step(e, st, id, i, s, NT_STEP_NOT_APPLIED, NULL, NULL);
				results[i] = NT_STEP_NOT_APPLIED;
			}
			continue;
		}
		err[0] = '\0';
		if (fault_at(e, "pause-in-undo", i))
			sleep_ms(e->step_delay_ms);
		fault_at(e, "kill-in-undo", i);
		int back;
		r = nt_setting_apply_read(&e->ctx, eh, s->kind, s->target, &s->before, &got, &back, err,
					  sizeof(err));
		if (r == 0)
			r = verify(s, back, &got, &s->before, "", "restoring", err, sizeof(err));
		if (r < 0) {
			char msg[1024];
			/* What the target holds now, after the failed undo (which
			 * may have changed it), not what was read before it. */
			nt_value now;
			int rr = 0;
			if (r == NT_ECONFLICT)
				now = got;
			else
				rr = s->kind->read(&e->ctx, eh, s->target, &now);
			snprintf(msg, sizeof(msg), "%s %s is '%s', wanted '%s': %s", s->kind->name, s->target,
				 rr == 0 ? nt_value_str(s->kind, &now, a, sizeof(a)) : "(unreadable)",
				 nt_value_str(s->kind, &s->before, b, sizeof(b)), err);
			note_step(e, st, id, i, s, NT_STEP_ROLLBACK_FAILED, msg, NULL);
			results[i] = NT_STEP_ROLLBACK_FAILED;
			failures++;
			continue;
		}
		if (results[i] != NT_STEP_FAILED) {
			note_step(e, st, id, i, s, done, NULL, NULL);
			results[i] = done;
		}
	}
	free(idx);
	free(pre);
	free(pre_res);
	free(at);
	return failures;
}

/* What each step of STEPS[0..N) applied (RESULTS) shows beyond its value,
 * an IRQ's effective CPUs for one, into its outcome held in ST (at index
 * REC[i]) for the record. Read once the writes are done, in one pass. */
static void observe_applied(nt_txn_engine *e, nt_ethtool *eh, const nt_step *steps, int n,
			    const nt_step_result *results, stage *st, const int *rec)
{
	int *idx = malloc(((size_t)n + 1) * sizeof(*idx)), m = 0;
	for (int i = 0; idx && i < n; i++)
		if (results[i] == NT_STEP_APPLIED && steps[i].kind->observe && rec[i] >= 0)
			idx[m++] = i;
	char *obs = m ? malloc((size_t)m * NT_VALUE_MAX) : NULL;
	int *res = m ? malloc((size_t)m * sizeof(*res)) : NULL;
	if (obs && res) {
		nt_txn_read_steps(e, eh, STEPS_OBSERVE, steps, idx, m, NULL, obs, NT_VALUE_MAX, res);
		for (int j = 0; j < m; j++)
			if (res[j] == 0)
				st->recs[rec[idx[j]]].observed = stage_strdup(obs + (size_t)j * NT_VALUE_MAX);
	}
	free(idx);
	free(obs);
	free(res);
}

/* Apply steps 0..N-1 of transaction ID in order, verifying each, and
 * record the outcome. Nothing is written to the store between the journal
 * (made durable before this runs) and the end of the stage: the steps'
 * outcomes go in with the status, in one write. A crash in between leaves
 * the transaction "applying" with every step pending, and recovery puts
 * back every target that no longer reads as its before-value. On a failed
 * step, or when the outcome cannot be recorded, every step done is undone
 * and that is recorded. */
static void run_steps(nt_txn_engine *e, nt_ethtool *eh, int64_t id, const nt_step *steps, int n,
		      int confirm_timeout_s)
{
	char err[512], msg[1024];
	nt_step_result *results = calloc((size_t)n + 1, sizeof(*results));
	int *rec = malloc(((size_t)n + 1) * sizeof(*rec));
	nt_value got;
	stage st;
	int failed = -1, last = n - 1;

	/* Each step is held at most twice: its apply and its undo. */
	if (stage_init(&st, 2 * n) < 0 || !results || !rec) {
		free(results);
		results = NULL;
		failed = 0;
		snprintf(msg, sizeof(msg), "out of memory");
	}
	for (int i = 0; failed < 0 && i < n; i++) {
		const nt_step *s = &steps[i];
		if (e->step_delay_ms > 0)
			sleep_ms(e->step_delay_ms);
		err[0] = '\0';
		fault_at(e, "kill-before-apply", i);
		int rr = -EIO;
		int r = fault_at(e, "fail", i) ?
				(snprintf(err, sizeof(err), "injected fault"), -EROFS) :
				nt_setting_apply_read(&e->ctx, eh, s->kind, s->target, &s->after, &got, &rr,
						      err, sizeof(err));
		if (r == 0)
			fault_at(e, "kill-after-apply", i);
		if (r < 0 && nt_setting_skips(s->kind, r)) {
			results[i] = NT_STEP_SKIPPED;
			note_step(e, &st, id, i, s, NT_STEP_SKIPPED, err, NULL);
			continue;
		}
		if (r == 0)
			r = verify(s, rr, &got, &s->after, "verify: ", "writing", err, sizeof(err));
		if (r < 0) {
			failed = last = i;
			results[i] = NT_STEP_FAILED;
			note_step(e, &st, id, i, s, NT_STEP_FAILED, err, NULL);
			snprintf(msg, sizeof(msg), "step %d (%s %s): %s", i, s->kind->name, s->target,
				 err[0] ? err : nt_strerror(r));
			break;
		}
		results[i] = NT_STEP_APPLIED;
		int held = st.n;
		note_step(e, &st, id, i, s, NT_STEP_APPLIED, NULL, NULL);
		rec[i] = st.n > held ? st.n - 1 : -1;
		fault_at(e, "kill-after-step", i);
	}
	/* Verification compared the requested value; what the targets show
	 * beyond it (an IRQ's effective CPUs, which move only when it next
	 * fires) is kept for the record, read once every write is done. */
	if (results)
		observe_applied(e, eh, steps, failed < 0 ? n : failed, results, &st, rec);
	if (failed < 0) {
		int r;
		int64_t deadline = 0;
		if (fault_at(e, "pause-before-status", 0))
			sleep_ms(e->step_delay_ms);
		if (confirm_timeout_s > 0 && n > 0) {
			deadline = nt_store_now_ms() + (int64_t)confirm_timeout_s * 1000;
			r = nt_txn_record_status(e, id, &st, NT_TXN_PENDING_CONFIRM, NULL, -1, false, deadline);
		} else {
			r = nt_txn_record_status(e, id, &st, NT_TXN_APPLIED, NULL, -1, true, 0);
		}
		if (r == 0) {
			if (deadline) {
				pthread_mutex_lock(&e->lock);
				e->pending_id = id;
				e->pending_deadline_ms = deadline;
				pthread_cond_broadcast(&e->cond);
				pthread_mutex_unlock(&e->lock);
			}
			goto out;
		}
		/* The journal still says "applying", so the next start would
		 * put everything back behind the reply's "applied" (and no
		 * timer could revert an unrecorded pending_confirm). Put it
		 * back now, and say so. */
		e->unrecorded = false;
		snprintf(msg, sizeof(msg), "the store could not record the outcome: %s",
			 nt_store_errmsg(e->store));
	}
	/* The steps after the failed one never ran: said so, as recovery
	 * does, rather than left "pending" in a finished transaction. */
	for (int i = failed + 1; results && failed >= 0 && i < n; i++)
		if (results[i] == NT_STEP_PENDING) {
			results[i] = NT_STEP_NOT_APPLIED;
			note_step(e, &st, id, i, &steps[i], NT_STEP_NOT_APPLIED, NULL, NULL);
		}
	nt_txn_record_status(e, id, &st, NT_TXN_ROLLING_BACK, msg, failed, false, 0);
	int bad = results ? undo(e, eh, &st, id, steps, results, last, NT_STEP_ROLLED_BACK) : 1;
	if (bad) {
		char full[1200];
		snprintf(full, sizeof(full), "%s; undo failed for %d target(s), see steps", msg, bad);
		nt_txn_record_status(e, id, &st, NT_TXN_ROLLBACK_FAILED, full, failed, true, 0);
	} else {
		nt_txn_record_status(e, id, &st, NT_TXN_ROLLED_BACK, msg, failed, true, 0);
	}
out:
	stage_free(&st);
	free(results);
	free(rec);
}

/* Undo every step of a stored transaction and give it STATUS (or
 * rollback_failed), with the steps' outcomes, in one store write. Used for
 * revert and crash recovery. */
int nt_txn_undo_stored(nt_txn_engine *e, int64_t id, nt_step_result done, nt_txn_status status,
		       const char *why)
{
	nt_step *steps = NULL;
	nt_step_result *results = NULL;
	stage st = { 0 };
	nt_ethtool *eh = nt_txn_stage_ethtool(e);
	char status_now[32];
	int n = 0, r;

	if ((r = nt_txn_steps_stored(e, id, status_now, sizeof(status_now), &steps, &results, &n)) < 0)
		goto out;
	if ((r = stage_init(&st, n)) < 0)
		goto out;
	int bad = n ? undo(e, eh, &st, id, steps, results, n - 1, done) : 0;
	if (bad) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s; undo failed for %d target(s), see steps", why, bad);
		r = nt_txn_record_status(e, id, &st, NT_TXN_ROLLBACK_FAILED, msg, -1, true, -1);
	} else {
		r = nt_txn_record_status(e, id, &st, status, why, -1, true, -1);
	}
out:
	nt_ethtool_close(eh);
	stage_free(&st);
	free(steps);
	free(results);
	return r;
}

/* Record and run STEPS as a new transaction; the slot is held. */
int nt_txn_record_and_run(nt_txn_engine *e, nt_ethtool *eh, json_t *txn, const nt_step *steps,
			  int n, const nt_txn_request *req, nt_txn_outcome *out)
{
	int64_t id = 0;
	nt_store_step_row *rows = malloc(((size_t)n + 1) * sizeof(*rows));
	char *text = malloc(((size_t)n + 1) * 2 * NT_VALUE_MAX);
	int r = rows && text ? 0 : -ENOMEM;

	if (r == 0) {
		steps_rows(steps, n, rows, text);
		r = nt_store_txn_create_rows(e->store, txn, rows, n, req->idempotency_key, &id);
	}
	free(rows);
	free(text);
	if (r == -EEXIST && req->idempotency_key) {
		/* The key was used by a request that raced this one. */
		return nt_txn_replay(e, req->idempotency_key, out);
	}
	if (r < 0) {
		snprintf(out->message, sizeof(out->message),
			 "the transaction could not be recorded, nothing was applied: %s",
			 nt_store_errmsg(e->store));
		return NT_ESTORE;
	}
	nt_txn_set_inflight(e, id);
	if (e->log) {
		json_t *ev = json_pack("{s:s, s:I, s:s, s:i, s:s, s:s}", "event", "txn", "txn",
				       (json_int_t)id, "status", nt_txn_status_name(NT_TXN_APPLYING),
				       "steps", n, "client",
				       req->client ? req->client : "", "identity",
				       req->identity ? req->identity : "");
		emit(e, ev);
	}
	e->unrecorded = false;
	e->unrecorded_steps = json_object();
	run_steps(e, eh, id, steps, n, req->confirm_timeout_s);
	/* A lean answer is counted by the store, unless the record misses
	 * outcomes the reply must patch in step by step. */
	if (req->steps_shown != NT_TXN_STEPS_ALL && !e->unrecorded &&
	    !json_object_size(e->unrecorded_steps))
		r = nt_store_txn_get_lean(e->store, id, req->steps_shown == NT_TXN_STEPS_FAILED,
					  &out->doc);
	else
		r = nt_store_txn_get(e->store, id, &out->doc);
	if (r == 0)
		nt_txn_settle_unrecorded(e, out->doc);
	e->unrecorded = false;
	json_decref(e->unrecorded_steps);
	e->unrecorded_steps = NULL;
	return r;
}
