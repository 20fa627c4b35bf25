#include "engine/txn.h"
#include "engine/plan.h"
#include "kernel/ethtool.h"
#include "settings/setting.h"
#include "host/topology.h"
#include "store/status.h"
#include "store/store.h"

#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct nt_txn_engine {
	nt_ctx ctx;
	nt_store *store; /* NULL when the database could not be opened */
	bool own_store; /* opened by nt_txn_engine_open, closed with the engine */
	char store_err[512];
	int step_delay_ms;
	long history_keep; /* transactions kept in the history, 0 all */
	/* Test-only fault points (NETTUNE_TEST_FAULT, see fault_at). */
	char faults[256];

	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t cond; /* busy released, pending changed, stop */
	bool busy; /* a transaction is being applied, reverted or rolled back */
	bool busy_agent; /* ... and it is the agent's own (a reason: boot, drift, link-up) */
	int64_t inflight_id; /* its id once recorded */
	/* Who holds the slot and since when, for the conflict another caller
	 * gets (see in_flight_doc). */
	char holder_op[16], holder_profile[128], holder_identity[256], holder_client[64],
		holder_reason[16];
	int64_t holder_since_ms;
	int64_t pending_id; /* the transaction waiting for confirmation, 0 none */
	int64_t pending_deadline_ms;
	bool stop;
	pthread_t timer;
	bool timer_started;

	/* Set once before requests are served (nt_txn_engine_set_log). */
	nt_log_fn log;
	void *log_ud;

	/* The outcome of the transaction being run (under the slot) that the
	 * store could not record (a full disk): what the reply says instead. */
	bool unrecorded;
	nt_txn_status unrecorded_status;
	char unrecorded_error[1024];
	/* Step results of that transaction the store could not record (a
	 * read-only or full disk, a lock held past the busy timeout):
	 * "INDEX" -> result, and why. */
	json_t *unrecorded_steps;
	char unrecorded_step_error[256];
};

void nt_txn_outcome_free(nt_txn_outcome *o)
{
	json_decref(o->doc);
	json_decref(o->errors);
	json_decref(o->in_flight);
	memset(o, 0, sizeof(*o));
}

const char *nt_txn_store_error(nt_txn_engine *e)
{
	return e->store ? NULL : e->store_err;
}

void nt_txn_engine_set_log(nt_txn_engine *e, nt_log_fn fn, void *ud)
{
	pthread_mutex_lock(&e->lock);
	e->log_ud = ud;
	e->log = fn;
	pthread_mutex_unlock(&e->lock);
}

void nt_txn_engine_set_history(nt_txn_engine *e, long keep)
{
	e->history_keep = keep > 0 ? keep : 0;
}

static void emit(nt_txn_engine *e, json_t *ev)
{
	if (ev && e->log)
		e->log(e->log_ud, ev);
	json_decref(ev);
}

/* The step outcomes of one stage of a transaction (its apply, the undo
 * after a failure, a revert, a recovery), held until the stage ends and
 * recorded with its status in one store write (nt_store_txn_stage). */
typedef struct stage {
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

/* Record transaction ID's status, with the step outcomes ST holds (NULL:
 * none) in the same store write, and tell the log sink. The outcomes are
 * dropped once recorded; when the write fails they are kept, for the
 * stage's next record to carry. */
static int record_status(nt_txn_engine *e, int64_t id, stage *st, nt_txn_status status,
			 const char *error, int failed_step, bool finished, int64_t deadline_ms)
{
	const char *name = nt_txn_status_name(status);
	int r = nt_store_txn_stage(e->store, id, st ? st->recs : NULL, st ? st->n : 0, name, error,
				   failed_step, finished, deadline_ms);
	if (r == 0 && st) {
		/* Held outcomes of earlier stages were written with this one. */
		stage_clear(st);
		if (e->unrecorded_steps)
			json_object_clear(e->unrecorded_steps);
	} else if (r < 0 && st && e->unrecorded_steps) {
		/* Still held for the next stage's write; until one succeeds the
		 * reply shows each step as it ended (settle_unrecorded), later
		 * outcomes of a step over earlier ones. */
		for (int i = 0; i < st->n; i++) {
			char k[24];
			snprintf(k, sizeof(k), "%d", st->recs[i].idx);
			json_object_set_new(e->unrecorded_steps, k, json_string(st->recs[i].result));
		}
		snprintf(e->unrecorded_step_error, sizeof(e->unrecorded_step_error), "%s",
			 nt_store_errmsg(e->store));
	}
	if (r < 0 && finished) {
		/* The host is already as this status says; only the record
		 * is missing. Kept so the reply can say it (see
		 * settle_unrecorded), and the next start settles the journal. */
		e->unrecorded = true;
		e->unrecorded_status = status;
		snprintf(e->unrecorded_error, sizeof(e->unrecorded_error),
			 "%s%sthe store could not record this outcome (%s): history shows "
			 "the transaction as applying until the agent can write again, and its "
			 "next start settles it from the journal",
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

/* ---- the apply slot ---- */

/* Under e->lock: remember who takes the slot for OP (REQ may be NULL). */
static void slot_hold(nt_txn_engine *e, const char *op, const nt_txn_request *req)
{
	const char *pname = NULL;
	if (req && req->profile_name)
		pname = req->profile_name;
	else if (req && req->profile)
		pname = json_string_value(json_object_get(req->profile, "name"));
	snprintf(e->holder_op, sizeof(e->holder_op), "%s", op);
	snprintf(e->holder_profile, sizeof(e->holder_profile), "%s", pname ? pname : "");
	snprintf(e->holder_identity, sizeof(e->holder_identity), "%s",
		 req && req->identity ? req->identity : "");
	snprintf(e->holder_client, sizeof(e->holder_client), "%s",
		 req && req->client ? req->client : "");
	snprintf(e->holder_reason, sizeof(e->holder_reason), "%s",
		 req && req->reason ? req->reason : "");
	e->holder_since_ms = nt_store_now_ms();
}

/* Under e->lock: what keeps the slot from a caller, for its conflict: the
 * holder when busy (before its transaction is recorded there is no id to
 * name, so the rest says what it is), else the transaction waiting for
 * confirmation. */
static json_t *in_flight_doc(const nt_txn_engine *e)
{
	char ts[40];
	json_t *d = json_object();
	if (!d)
		return NULL;
	if (!e->busy) {
		nt_store_rfc3339(e->pending_deadline_ms, ts, sizeof(ts));
		json_object_set_new(d, "state", json_string("pending_confirm"));
		json_object_set_new(d, "transaction", json_integer(e->pending_id));
		json_object_set_new(d, "confirm_deadline", json_string(ts));
		return d;
	}
	json_object_set_new(d, "state", json_string(e->inflight_id ? "running" : "preparing"));
	if (e->inflight_id)
		json_object_set_new(d, "transaction", json_integer(e->inflight_id));
	if (!e->holder_op[0])
		return d;
	nt_store_rfc3339(e->holder_since_ms, ts, sizeof(ts));
	json_object_set_new(d, "operation", json_string(e->holder_op));
	json_object_set_new(d, "since", json_string(ts));
	const struct {
		const char *key, *val;
	} opt[] = { { "profile", e->holder_profile },
		    { "identity", e->holder_identity },
		    { "client", e->holder_client },
		    { "reason", e->holder_reason } };
	/* A value cut inside a UTF-8 sequence is not a JSON string: left out. */
	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		if (opt[i].val[0])
			json_object_set_new(d, opt[i].key, json_string(opt[i].val));
	return d;
}

/* Take the slot for OP on behalf of REQ, or NT_ECONFLICT with what is in
 * the way. AGENT: the taker is the agent holding its desired state. A
 * client never gets a conflict for the agent's own repair (short, and the
 * client's request wins): it waits for it to end, up to 30 s. */
static int slot_take(nt_txn_engine *e, bool allow_pending, bool agent, const char *op,
		     const nt_txn_request *req, nt_txn_outcome *out)
{
	int r = 0;
	pthread_mutex_lock(&e->lock);
	if (!agent && e->busy && e->busy_agent) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 30;
		while (e->busy && e->busy_agent &&
		       pthread_cond_timedwait(&e->cond, &e->lock, &dl) == 0)
			;
	}
	if (e->busy) {
		out->conflict_id = e->inflight_id;
		if (e->inflight_id)
			snprintf(out->message, sizeof(out->message),
				 "transaction %lld is in flight", (long long)e->inflight_id);
		else
			snprintf(out->message, sizeof(out->message),
				 "another transaction is being prepared (%s%s%s)",
				 e->holder_op[0] ? e->holder_op : "in progress",
				 e->holder_profile[0] ? " of profile " : "", e->holder_profile);
		out->in_flight = in_flight_doc(e);
		r = NT_ECONFLICT;
	} else if (e->pending_id && !allow_pending) {
		out->conflict_id = e->pending_id;
		snprintf(out->message, sizeof(out->message),
			 "transaction %lld is waiting for confirmation", (long long)e->pending_id);
		out->in_flight = in_flight_doc(e);
		r = NT_ECONFLICT;
	} else {
		e->busy = true;
		e->busy_agent = agent;
		e->inflight_id = 0;
		slot_hold(e, op, req);
	}
	pthread_mutex_unlock(&e->lock);
	return r;
}

/* Take the slot, waiting up to TIMEOUT_MS for a transaction in flight
 * (not for one waiting for confirmation). */
static int slot_wait(nt_txn_engine *e, int timeout_ms, const char *op,
		     const nt_txn_request *req, nt_txn_outcome *out)
{
	struct timespec dl;
	int r = 0;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	pthread_mutex_lock(&e->lock);
	while (e->busy && r == 0)
		r = pthread_cond_timedwait(&e->cond, &e->lock, &dl);
	if (e->busy) {
		out->conflict_id = e->inflight_id;
		snprintf(out->message, sizeof(out->message), "transaction %lld is in flight",
			 (long long)e->inflight_id);
		out->in_flight = in_flight_doc(e);
		pthread_mutex_unlock(&e->lock);
		return NT_ECONFLICT;
	}
	e->busy = true;
	e->inflight_id = 0;
	slot_hold(e, op, req);
	pthread_mutex_unlock(&e->lock);
	return 0;
}

/* Cut the history to its length: under the slot, so no rollback reads a
 * transaction being deleted. Best effort (a full disk fails it; the next
 * transaction tries again). */
static void prune_history(nt_txn_engine *e)
{
	if (e->store && e->history_keep > 0)
		nt_store_prune(e->store, e->history_keep, NULL);
}

static void slot_release(nt_txn_engine *e)
{
	prune_history(e);
	pthread_mutex_lock(&e->lock);
	e->busy = false;
	e->busy_agent = false;
	e->inflight_id = 0;
	e->holder_op[0] = '\0';
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static void set_inflight(nt_txn_engine *e, int64_t id)
{
	pthread_mutex_lock(&e->lock);
	e->inflight_id = id;
	pthread_mutex_unlock(&e->lock);
}

/* ---- steps ---- */

/* Steps of a stored transaction document, in index order, with their
 * recorded results. A step whose kind this build does not know, or whose
 * values do not read as its kind's, gets kind NULL: it cannot be undone,
 * and undo says so. */
static int steps_from_doc(const json_t *doc, nt_step **out, nt_step_result **results, int *n)
{
	json_t *arr = json_object_get(doc, "steps");
	size_t count = json_array_size(arr), i;
	json_t *s;
	nt_step *steps = calloc(count + 1, sizeof(*steps));
	nt_step_result *res = calloc(count + 1, sizeof(*res));
	if (!steps || !res) {
		free(steps);
		free(res);
		return -ENOMEM;
	}
	json_array_foreach(arr, i, s) {
		if (nt_step_from_json(s, &steps[i]) < 0)
			steps[i].kind = NULL;
		int r = nt_step_result_parse(json_string_value(json_object_get(s, "result")));
		res[i] = r < 0 ? NT_STEP_PENDING : (nt_step_result)r;
	}
	*out = steps;
	*results = res;
	*n = (int)count;
	return 0;
}

static json_t *steps_json(const nt_step *steps, int n)
{
	json_t *arr = json_array();
	for (int i = 0; arr && i < n; i++)
		json_array_append_new(arr, nt_step_to_json(&steps[i]));
	return arr;
}

/* An ethtool handle for one plan or stage (see nt_setting_kind), or NULL
 * when none can be opened: the kinds then open one per call. */
static nt_ethtool *stage_ethtool(nt_txn_engine *e)
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

/* What a stage reads of many steps at once: the current value (READ), or
 * what the target shows beyond it (OBSERVE). */
typedef enum { STEPS_READ, STEPS_OBSERVE } steps_op;

/* OP for the targets of STEPS[IDX[0..M)], each a step with a kind (for
 * STEPS_OBSERVE, one with an observe operation). A kind with read_many
 * (observe_many) takes all its steps in one call, through the files the
 * agent keeps open for its reads of the host: one pread a target where
 * READ (OBSERVE) opens a file. Other kinds, and a batch that could not be
 * made, go one target at a time. Values go to VALS[j] (STEPS_READ) or to
 * OBS + j * OBSSIZE (STEPS_OBSERVE), and what READ (OBSERVE) returns to
 * RES[j]. */
static void read_steps(nt_txn_engine *e, nt_ethtool *eh, steps_op op, const nt_step *steps, const int *idx,
		       int m, nt_value *vals, char *obs, size_t obssize, int *res)
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
		read_steps(e, eh, STEPS_READ, steps, idx, m, pre, NULL, 0, pre_res);
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
		read_steps(e, eh, STEPS_OBSERVE, steps, idx, m, NULL, obs, NT_VALUE_MAX, res);
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
		if (r < 0 && s->kind->skip_errno && r == -s->kind->skip_errno) {
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
			r = record_status(e, id, &st, NT_TXN_PENDING_CONFIRM, NULL, -1, false, deadline);
		} else {
			r = record_status(e, id, &st, NT_TXN_APPLIED, NULL, -1, true, 0);
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
	record_status(e, id, &st, NT_TXN_ROLLING_BACK, msg, failed, false, 0);
	int bad = results ? undo(e, eh, &st, id, steps, results, last, NT_STEP_ROLLED_BACK) : 1;
	if (bad) {
		char full[1200];
		snprintf(full, sizeof(full), "%s; undo failed for %d target(s), see steps", msg, bad);
		record_status(e, id, &st, NT_TXN_ROLLBACK_FAILED, full, failed, true, 0);
	} else {
		record_status(e, id, &st, NT_TXN_ROLLED_BACK, msg, failed, true, 0);
	}
out:
	stage_free(&st);
	free(results);
	free(rec);
}

/* Undo every step of a stored transaction and give it STATUS (or
 * rollback_failed), with the steps' outcomes, in one store write. Used for
 * revert and crash recovery. */
static int undo_stored(nt_txn_engine *e, int64_t id, nt_step_result done, nt_txn_status status,
		       const char *why)
{
	json_t *doc = NULL;
	nt_step *steps = NULL;
	nt_step_result *results = NULL;
	stage st = { 0 };
	nt_ethtool *eh = stage_ethtool(e);
	int n = 0, r;

	if ((r = nt_store_txn_get(e->store, id, &doc)) < 0)
		goto out;
	if ((r = steps_from_doc(doc, &steps, &results, &n)) < 0)
		goto out;
	if ((r = stage_init(&st, n)) < 0)
		goto out;
	int bad = n ? undo(e, eh, &st, id, steps, results, n - 1, done) : 0;
	if (bad) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s; undo failed for %d target(s), see steps", why, bad);
		r = record_status(e, id, &st, NT_TXN_ROLLBACK_FAILED, msg, -1, true, -1);
	} else {
		r = record_status(e, id, &st, status, why, -1, true, -1);
	}
out:
	nt_ethtool_close(eh);
	stage_free(&st);
	json_decref(doc);
	free(steps);
	free(results);
	return r;
}

/* ---- confirmation timer ---- */

static void *timer_main(void *arg)
{
	nt_txn_engine *e = arg;
	pthread_mutex_lock(&e->lock);
	while (!e->stop) {
		if (!e->pending_id) {
			pthread_cond_wait(&e->cond, &e->lock);
			continue;
		}
		int64_t now = nt_store_now_ms();
		if (now < e->pending_deadline_ms) {
			struct timespec ts = { .tv_sec = (time_t)(e->pending_deadline_ms / 1000),
					       .tv_nsec = (long)(e->pending_deadline_ms % 1000) * 1000000L };
			pthread_cond_timedwait(&e->cond, &e->lock, &ts);
			continue;
		}
		if (e->busy) {
			pthread_cond_wait(&e->cond, &e->lock);
			continue;
		}
		int64_t id = e->pending_id;
		e->busy = true;
		e->inflight_id = id;
		slot_hold(e, "revert", NULL);
		pthread_mutex_unlock(&e->lock);
		undo_stored(e, id, NT_STEP_REVERTED, NT_TXN_REVERTED,
			    "not confirmed within confirm_timeout_s; reverted");
		prune_history(e);
		pthread_mutex_lock(&e->lock);
		if (e->pending_id == id)
			e->pending_id = 0;
		e->busy = false;
		e->inflight_id = 0;
		e->holder_op[0] = '\0';
		pthread_cond_broadcast(&e->cond);
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

/* ---- open / close, recovery ---- */

static void recover(nt_txn_engine *e)
{
	static const nt_txn_status crashed[] = { NT_TXN_APPLYING, NT_TXN_ROLLING_BACK };
	json_t *ids = NULL;
	size_t i;
	json_t *v;

	for (size_t k = 0; k < sizeof(crashed) / sizeof(crashed[0]); k++) {
		if (nt_store_txn_ids(e->store, nt_txn_status_name(crashed[k]), &ids) < 0)
			continue;
		json_array_foreach(ids, i, v)
			undo_stored(e, json_integer_value(v), NT_STEP_RESTORED, NT_TXN_RECOVERED,
				    "the agent stopped during this transaction; restored from the journal");
		json_decref(ids);
	}
	if (nt_store_txn_ids(e->store, nt_txn_status_name(NT_TXN_PENDING_CONFIRM), &ids) < 0)
		return;
	json_array_foreach(ids, i, v) {
		json_t *doc = NULL;
		int64_t id = json_integer_value(v);
		if (nt_store_txn_get(e->store, id, &doc) < 0)
			continue;
		int64_t deadline = json_integer_value(json_object_get(doc, "confirm_deadline_ms"));
		json_decref(doc);
		if (deadline <= nt_store_now_ms() || e->pending_id) {
			undo_stored(e, id, NT_STEP_REVERTED, NT_TXN_REVERTED,
				    "not confirmed within confirm_timeout_s; reverted");
		} else {
			e->pending_id = id;
			e->pending_deadline_ms = deadline;
		}
	}
	json_decref(ids);
}

int nt_txn_engine_new(const nt_ctx *ctx, nt_store *store, const char *store_err,
		      nt_txn_engine **out)
{
	nt_txn_engine *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (!e)
		return -ENOMEM;
	e->ctx = *ctx;
	e->store = store;
	if (!store)
		snprintf(e->store_err, sizeof(e->store_err), "%s",
			 store_err && *store_err ? store_err : "no database");
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_cond_init(&e->cond, &ca);
	pthread_condattr_destroy(&ca);
	const char *delay = getenv("NETTUNE_TEST_STEP_DELAY_MS");
	if (delay)
		e->step_delay_ms = atoi(delay);
	const char *faults = getenv("NETTUNE_TEST_FAULT");
	if (faults)
		snprintf(e->faults, sizeof(e->faults), "%s", faults);
	*out = e;
	return 0;
}

int nt_txn_engine_start(nt_txn_engine *e)
{
	if (!e->store || e->timer_started)
		return 0;
	/* Recovery changes the host: it is logged like any transaction (each
	 * status change and restored step), with the journal's own record. */
	recover(e);
	prune_history(e);
	int r = pthread_create(&e->timer, NULL, timer_main, e);
	if (r != 0)
		return -r;
	e->timer_started = true;
	return 0;
}

int nt_txn_engine_open(const nt_ctx *ctx, const char *state_dir, nt_txn_engine **out)
{
	nt_store *store = NULL;
	char path[PATH_MAX], err[512] = "";
	int r;

	*out = NULL;
	if (!state_dir || !*state_dir)
		snprintf(err, sizeof(err), "no state directory configured");
	else if (snprintf(path, sizeof(path), "%s/nettune.db", state_dir) >= (int)sizeof(path))
		snprintf(err, sizeof(err), "state directory path too long");
	else if (nt_store_open(path, &store, err, sizeof(err)) < 0)
		store = NULL;
	if ((r = nt_txn_engine_new(ctx, store, err, out)) < 0) {
		nt_store_close(store);
		return r;
	}
	(*out)->own_store = store != NULL;
	if ((r = nt_txn_engine_start(*out)) < 0) {
		nt_txn_engine_close(*out);
		*out = NULL;
	}
	return r;
}

void nt_txn_engine_close(nt_txn_engine *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->stop = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	if (e->timer_started)
		pthread_join(e->timer, NULL);
	if (e->own_store)
		nt_store_close(e->store);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* ---- requests ---- */

static int need_store(nt_txn_engine *e, nt_txn_outcome *out)
{
	if (e->store)
		return 0;
	snprintf(out->message, sizeof(out->message), "the state database is unavailable: %s",
		 e->store_err);
	return NT_ESTORE;
}

/* The profile a request names: a new reference in *PROFILE. */
static int resolve_profile(nt_txn_engine *e, const nt_txn_request *req, json_t **profile,
			   nt_txn_outcome *out)
{
	*profile = NULL;
	if (req->profile) {
		*profile = json_incref((json_t *)req->profile);
		return 0;
	}
	if (!req->profile_name) {
		snprintf(out->message, sizeof(out->message), "give a profile or a profile_name");
		out->errors = json_array();
		nt_profile_error(out->errors, "$", "give 'profile' or 'profile_name'");
		return NT_EINVALID;
	}
	int r = need_store(e, out);
	if (r < 0)
		return r;
	r = nt_store_profile_get(e->store, req->profile_name, profile);
	if (r == -ENOENT)
		snprintf(out->message, sizeof(out->message), "no stored profile '%s'",
			 req->profile_name);
	else if (r < 0)
		snprintf(out->message, sizeof(out->message), "reading profile '%s': %s",
			 req->profile_name, nt_store_errmsg(e->store));
	return r;
}

/* Topology + plan of PROFILE. */
static int make_plan(nt_txn_engine *e, nt_ethtool *eh, const json_t *profile, nt_plan *plan,
		     nt_txn_outcome *out)
{
	nt_topology *t = NULL;
	int r = nt_topology_read(&e->ctx, &t);
	if (r < 0) {
		snprintf(out->message, sizeof(out->message), "cannot read the host: %s",
			 nt_strerror(r));
		return r;
	}
	out->errors = json_array();
	r = nt_plan_build(&e->ctx, eh, t, profile, plan, out->errors);
	nt_topology_free(t);
	if (r == NT_EINVALID)
		snprintf(out->message, sizeof(out->message), "the profile is not valid for this host");
	else if (r < 0)
		snprintf(out->message, sizeof(out->message), "planning failed: %s", nt_strerror(r));
	if (r == 0) {
		json_decref(out->errors);
		out->errors = NULL;
	}
	return r;
}

int nt_txn_plan(nt_txn_engine *e, const nt_txn_request *req, nt_txn_outcome *out)
{
	json_t *profile = NULL;
	nt_plan plan = { 0 };
	nt_ethtool *eh = NULL;
	int r = resolve_profile(e, req, &profile, out);
	if (r < 0)
		goto out;
	eh = stage_ethtool(e);
	if ((r = make_plan(e, eh, profile, &plan, out)) < 0)
		goto out;
	out->doc = nt_plan_to_json(&plan, profile);
	r = out->doc ? 0 : -ENOMEM;
out:
	nt_ethtool_close(eh);
	nt_plan_free(&plan);
	json_decref(profile);
	return r;
}

/* The transaction an Idempotency-Key already stands for. KEY is the
 * scoped key the API made ("SCOPE\tKEY\tFINGERPRINT", see nt_txn_request):
 * the same scope and key with another fingerprint is a different request
 * under a used key, refused with NT_EINVALID (the IETF draft's 422) rather
 * than answered with the transaction of the first. Returns 0 (replayed),
 * -ENOENT (not used), NT_EINVALID or NT_ESTORE. */
static int replay(nt_txn_engine *e, const char *key, nt_txn_outcome *out)
{
	int64_t id;
	int r = nt_store_idem_get(e->store, key, &id);
	const char *fp = strrchr(key, '\t');
	if (r == -ENOENT && fp) {
		char prefix[512], used[512];
		int n = snprintf(prefix, sizeof(prefix), "%.*s", (int)(fp - key + 1), key);
		if (n > 0 && (size_t)n < sizeof(prefix) &&
		    nt_store_idem_find(e->store, prefix, used, sizeof(used), &id) == 0) {
			snprintf(out->message, sizeof(out->message),
				 "this Idempotency-Key was used for transaction %lld with a different "
				 "request; use a new key for a new request",
				 (long long)id);
			out->key_reused = true;
			return NT_EINVALID;
		}
	}
	if (r < 0)
		return r;
	r = nt_store_txn_get(e->store, id, &out->doc);
	if (r == 0)
		out->replayed = true;
	return r;
}

/* replay() as the apply and rollback paths use it, before and again once
 * the slot is held (a request with the same key and another body may have
 * finished in between). Returns 1 when OUT is answered (replayed), 0 to go
 * on, or a negative error. */
static int replay_check(nt_txn_engine *e, const char *key, nt_txn_outcome *out)
{
	if (!key)
		return 0;
	int r = replay(e, key, out);
	if (r == -ENOENT)
		return 0;
	if (r == 0)
		return 1;
	return r == NT_EINVALID ? r : NT_ESTORE;
}

/* The reply for a transaction whose outcome the store could not record:
 * what happened on the host, not the stale record. */
static void settle_unrecorded(nt_txn_engine *e, json_t *doc)
{
	if (!doc)
		return;
	if (e->unrecorded) {
		json_object_set_new(doc, "status",
				    json_string(nt_txn_status_name(e->unrecorded_status)));
		json_object_set_new(doc, "error", json_string(e->unrecorded_error));
	}
	size_t n = json_object_size(e->unrecorded_steps);
	if (!n)
		return;
	/* The reply shows each step as it ended, and says that history
	 * does not (the record of a step stays as it was before). */
	const char *k;
	json_t *v, *steps = json_object_get(doc, "steps");
	json_object_foreach(e->unrecorded_steps, k, v)
		json_object_set(json_array_get(steps, (size_t)atoi(k)), "result", v);
	const char *prev = json_string_value(json_object_get(doc, "error"));
	char *msg = NULL;
	if (asprintf(&msg, "%s%sthe store could not record the result of %zu step(s) (%s): "
		     "history shows them as they were before", prev ? prev : "",
		     prev ? "; " : "", n, e->unrecorded_step_error) >= 0) {
		json_object_set_new(doc, "error", json_string(msg));
		free(msg);
	}
}

/* Whether the desired state is still the one REQ repairs toward. */
static bool desired_still(nt_txn_engine *e, const nt_txn_request *req)
{
	json_t *d = NULL;
	bool same = nt_store_desired_get(e->store, &d) == 0 &&
		    json_integer_value(json_object_get(d, "set_ms")) == req->desired_set_ms &&
		    json_equal(json_object_get(d, "profile"), (json_t *)req->profile);
	json_decref(d);
	return same;
}

/* Leave out of PLAN the steps whose "KIND TARGET" is a key of SKIP. */
static void skip_steps(nt_plan *plan, const json_t *skip)
{
	int k = 0;
	for (int i = 0; i < plan->nsteps; i++) {
		char key[NT_TARGET_MAX + 64];
		snprintf(key, sizeof(key), "%s %s", plan->steps[i].kind->name, plan->steps[i].target);
		if (json_object_get(skip, key))
			continue;
		plan->steps[k++] = plan->steps[i];
	}
	plan->nsteps = k;
}

/* A persist transaction that took effect ("applied") makes its profile the
 * desired state. When that cannot be recorded the transaction still
 * stands (its changes are made and journalled); the desired state stays
 * as it was and the log says so. */
static void persist_if_applied(nt_txn_engine *e, const json_t *doc)
{
	if (!json_is_true(json_object_get(doc, "persist")) ||
	    nt_txn_status_parse(json_string_value(json_object_get(doc, "status"))) != NT_TXN_APPLIED)
		return;
	json_t *d = json_pack("{s:O,s:O,s:s,s:O,s:O,s:O}", "profile", json_object_get(doc, "profile"),
			      "profile_name", json_object_get(doc, "profile_name"), "source",
			      "transaction", "txn_id", json_object_get(doc, "id"), "client",
			      json_object_get(doc, "client"), "identity", json_object_get(doc, "identity"));
	int r = d ? nt_store_desired_set(e->store, d) : -ENOMEM;
	json_decref(d);
	if (e->log) {
		json_t *ev = json_pack("{s:s, s:O, s:s}", "event", "desired", "txn",
				       json_object_get(doc, "id"), "action", r == 0 ? "set" : "not_set");
		if (ev && r < 0)
			json_object_set_new(ev, "error", json_string(nt_store_errmsg(e->store)));
		emit(e, ev);
	}
}

/* Record and run STEPS as a new transaction; the slot is held. */
static int record_and_run(nt_txn_engine *e, nt_ethtool *eh, json_t *txn, const nt_step *steps, int n,
			  const nt_txn_request *req, nt_txn_outcome *out)
{
	int64_t id = 0;
	json_t *sj = steps_json(steps, n);
	int r = sj ? 0 : -ENOMEM;

	if (r == 0)
		r = nt_store_txn_create(e->store, txn, sj, req->idempotency_key, &id);
	json_decref(sj);
	if (r == -EEXIST && req->idempotency_key) {
		/* The key was used by a request that raced this one. */
		return replay(e, req->idempotency_key, out);
	}
	if (r < 0) {
		snprintf(out->message, sizeof(out->message),
			 "the transaction could not be recorded, nothing was applied: %s",
			 nt_store_errmsg(e->store));
		return NT_ESTORE;
	}
	set_inflight(e, id);
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
	r = nt_store_txn_get(e->store, id, &out->doc);
	if (r == 0)
		settle_unrecorded(e, out->doc);
	e->unrecorded = false;
	json_decref(e->unrecorded_steps);
	e->unrecorded_steps = NULL;
	return r;
}

int nt_txn_apply(nt_txn_engine *e, const nt_txn_request *req, nt_txn_outcome *out)
{
	json_t *profile = NULL, *txn = NULL;
	nt_plan plan = { 0 };
	nt_ethtool *eh = NULL;
	int r;

	if ((r = need_store(e, out)) < 0)
		return r;
	if ((r = replay_check(e, req->idempotency_key, out)) != 0)
		return r < 0 ? r : 0;
	if ((r = slot_take(e, false, req->reason != NULL, "apply", req, out)) < 0)
		return r;
	if ((r = replay_check(e, req->idempotency_key, out)) != 0) {
		slot_release(e);
		return r < 0 ? r : 0;
	}
	if (req->reason && req->desired_set_ms && !desired_still(e, req)) {
		r = 0; /* the desired state changed since the check: not this repair */
		goto out;
	}
	if ((r = resolve_profile(e, req, &profile, out)) < 0)
		goto out;
	/* One handle for the plan and the apply: the slot's thread alone uses it. */
	eh = stage_ethtool(e);
	if ((r = make_plan(e, eh, profile, &plan, out)) < 0)
		goto out;
	if (req->skip)
		skip_steps(&plan, req->skip);
	if (req->reason && plan.nsteps == 0) {
		r = 0; /* nothing to hold: no record of an empty repair */
		goto out;
	}
	const char *pname = json_string_value(json_object_get(profile, "name"));
	txn = json_pack("{s:s,s:O,s:s?,s:s,s:s,s:O}", "status", nt_txn_status_name(NT_TXN_APPLYING),
			"profile", profile,
			"profile_name", req->profile_name ? req->profile_name : pname, "client",
			req->client ? req->client : "", "identity", req->identity ? req->identity : "",
			"warnings", plan.warnings);
	if (!txn) {
		r = -ENOMEM;
		goto out;
	}
	if (req->confirm_timeout_s > 0)
		json_object_set_new(txn, "confirm_timeout_s", json_integer(req->confirm_timeout_s));
	if (plan.reserved)
		json_object_set(txn, "reserved", plan.reserved);
	if (req->reason)
		json_object_set_new(txn, "reason", json_string(req->reason));
	if (req->persist)
		json_object_set_new(txn, "persist", json_true());
	r = record_and_run(e, eh, txn, plan.steps, plan.nsteps, req, out);
	if (r == 0 && req->persist && !out->replayed)
		persist_if_applied(e, out->doc);
out:
	nt_ethtool_close(eh);
	slot_release(e);
	json_decref(txn);
	json_decref(profile);
	nt_plan_free(&plan);
	return r;
}

int nt_txn_confirm(nt_txn_engine *e, int64_t id, nt_txn_outcome *out)
{
	json_t *doc = NULL;
	int r;
	if ((r = need_store(e, out)) < 0)
		return r;
	pthread_mutex_lock(&e->lock);
	if (e->pending_id != id || e->busy) {
		pthread_mutex_unlock(&e->lock);
		r = nt_store_txn_get(e->store, id, &doc);
		if (r == -ENOENT) {
			snprintf(out->message, sizeof(out->message), "no transaction %lld",
				 (long long)id);
			return r;
		}
		snprintf(out->message, sizeof(out->message),
			 "transaction %lld is %s, not waiting for confirmation", (long long)id,
			 doc ? json_string_value(json_object_get(doc, "status")) : "unknown");
		json_decref(doc);
		return r < 0 ? r : NT_ECONFLICT;
	}
	/* The record is written holding the slot, not the lock: a database
	 * another process has locked can take SQLite's busy timeout (5 s),
	 * and the lock would stall every caller that only looks (a conflict's
	 * answer, health) that long. Holding the slot keeps the timer from
	 * reverting meanwhile; others get the conflict, naming "confirm". */
	e->busy = true;
	e->inflight_id = id;
	slot_hold(e, "confirm", NULL);
	pthread_mutex_unlock(&e->lock);
	r = record_status(e, id, NULL, NT_TXN_APPLIED, NULL, -1, true, -1);
	pthread_mutex_lock(&e->lock);
	if (r == 0)
		e->pending_id = 0;
	pthread_mutex_unlock(&e->lock);
	slot_release(e);
	if (r < 0) {
		snprintf(out->message, sizeof(out->message), "cannot record: %s",
			 nt_store_errmsg(e->store));
		return NT_ESTORE;
	}
	r = nt_store_txn_get(e->store, id, &out->doc);
	if (r == 0)
		persist_if_applied(e, out->doc);
	return r;
}

int nt_txn_rollback(nt_txn_engine *e, int64_t id, bool force, const nt_txn_request *req,
		    nt_txn_outcome *out)
{
	json_t *orig = NULL, *txn = NULL;
	nt_step *ostep = NULL, *steps = NULL;
	nt_step_result *results = NULL;
	nt_value *cur = NULL;
	nt_ethtool *eh = NULL;
	int n = 0, r, k = 0, *idx = NULL, *res = NULL;

	if ((r = need_store(e, out)) < 0)
		return r;
	if ((r = replay_check(e, req->idempotency_key, out)) != 0)
		return r < 0 ? r : 0;
	if ((r = slot_take(e, false, false, "rollback", req, out)) < 0)
		return r;
	if ((r = replay_check(e, req->idempotency_key, out)) != 0) {
		slot_release(e);
		return r < 0 ? r : 0;
	}
	if ((r = nt_store_txn_get(e->store, id, &orig)) < 0) {
		snprintf(out->message, sizeof(out->message), "no transaction %lld", (long long)id);
		goto out;
	}
	const char *status = json_string_value(json_object_get(orig, "status"));
	if (nt_txn_status_parse(status) != NT_TXN_APPLIED) {
		snprintf(out->message, sizeof(out->message),
			 "transaction %lld is %s: only an applied transaction can be rolled back",
			 (long long)id, status);
		r = NT_ECONFLICT;
		goto out;
	}
	int64_t later = 0;
	if ((r = nt_store_later_conflict(e->store, id, &later)) < 0) {
		snprintf(out->message, sizeof(out->message), "%s", nt_store_errmsg(e->store));
		r = NT_ESTORE;
		goto out;
	}
	if (later && !force) {
		out->later_id = later;
		snprintf(out->message, sizeof(out->message),
			 "transaction %lld changed targets of transaction %lld since; give "
			 "{\"force\":true} to roll back anyway", (long long)later, (long long)id);
		r = NT_ECONFLICT;
		goto out;
	}
	if ((r = steps_from_doc(orig, &ostep, &results, &n)) < 0)
		goto out;
	steps = calloc((size_t)n + 1, sizeof(*steps));
	if (!steps) {
		r = -ENOMEM;
		goto out;
	}
	idx = calloc((size_t)n + 1, sizeof(*idx));
	res = malloc(((size_t)n + 1) * sizeof(*res));
	cur = malloc(((size_t)n + 1) * sizeof(*cur));
	if (!idx || !res || !cur) {
		r = -ENOMEM;
		goto out;
	}
	eh = stage_ethtool(e);
	/* The new transaction's steps: every applied step of the original, in
	 * reverse order, back to its before-value, from what its target holds
	 * now (read for all of them at once; the original's after-value when
	 * it cannot be read). Targets already back are left out like any
	 * no-op step. */
	int m = 0;
	for (int i = n - 1; i >= 0; i--) {
		if (results[i] != NT_STEP_APPLIED || !ostep[i].kind)
			continue;
		steps[m] = ostep[i];
		steps[m].before = ostep[i].after;
		steps[m].after = ostep[i].before;
		idx[m] = m;
		m++;
	}
	read_steps(e, eh, STEPS_READ, steps, idx, m, cur, NULL, 0, res);
	for (int j = 0; j < m; j++) {
		nt_step *s = &steps[j];
		if (res[j] == 0)
			s->before = cur[j];
		if (nt_setting_equal(s->kind, &s->before, &s->after))
			continue;
		if (k != j)
			steps[k] = *s;
		k++;
	}
	txn = json_pack("{s:s,s:n,s:s,s:s,s:I,s:[]}", "status", nt_txn_status_name(NT_TXN_APPLYING),
			"profile", "client",
			req->client ? req->client : "", "identity", req->identity ? req->identity : "",
			"rollback_of", (json_int_t)id, "warnings");
	if (!txn) {
		r = -ENOMEM;
		goto out;
	}
	nt_txn_request plain = *req;
	plain.confirm_timeout_s = 0;
	r = record_and_run(e, eh, txn, steps, k, &plain, out);
out:
	nt_ethtool_close(eh);
	slot_release(e);
	json_decref(orig);
	json_decref(txn);
	free(ostep);
	free(steps);
	free(results);
	free(idx);
	free(res);
	free(cur);
	return r;
}

int nt_txn_get(nt_txn_engine *e, int64_t id, json_t **doc)
{
	*doc = NULL;
	if (!e->store)
		return NT_ESTORE;
	return nt_store_txn_get(e->store, id, doc);
}

int nt_txn_list(nt_txn_engine *e, const char *status, int limit, int offset, json_t **doc)
{
	json_t *arr = NULL;
	int64_t total = 0;
	*doc = NULL;
	if (!e->store)
		return NT_ESTORE;
	int r = nt_store_txn_list(e->store, status, limit, offset, &arr, &total);
	if (r < 0)
		return r;
	*doc = json_pack("{s:o,s:I,s:i,s:i}", "transactions", arr, "total", (json_int_t)total,
			 "limit", limit, "offset", offset);
	return *doc ? 0 : -ENOMEM;
}

int nt_txn_profile_put(nt_txn_engine *e, const char *name, const json_t *profile, bool *created,
		       nt_txn_outcome *out)
{
	nt_topology *t = NULL;
	int r;
	if ((r = need_store(e, out)) < 0)
		return r;
	if ((r = nt_topology_read(&e->ctx, &t)) < 0) {
		snprintf(out->message, sizeof(out->message), "cannot read the host: %s",
			 nt_strerror(r));
		return r;
	}
	out->errors = json_array();
	r = nt_profile_validate(t, profile, out->errors);
	nt_topology_free(t);
	if (r < 0) {
		snprintf(out->message, sizeof(out->message), "the profile is not valid for this host");
		return r;
	}
	json_decref(out->errors);
	out->errors = NULL;
	if ((r = nt_store_profile_put(e->store, name, profile, created)) < 0) {
		snprintf(out->message, sizeof(out->message), "cannot store: %s",
			 nt_store_errmsg(e->store));
		return NT_ESTORE;
	}
	return nt_store_profile_get(e->store, name, &out->doc);
}

int nt_txn_profile_get(nt_txn_engine *e, const char *name, json_t **doc)
{
	*doc = NULL;
	return e->store ? nt_store_profile_get(e->store, name, doc) : NT_ESTORE;
}

int nt_txn_profile_delete(nt_txn_engine *e, const char *name)
{
	return e->store ? nt_store_profile_delete(e->store, name) : NT_ESTORE;
}

int nt_txn_profile_list(nt_txn_engine *e, json_t **doc)
{
	json_t *arr = NULL;
	*doc = NULL;
	if (!e->store)
		return NT_ESTORE;
	int r = nt_store_profile_list(e->store, &arr);
	if (r < 0)
		return r;
	*doc = json_pack("{s:o}", "profiles", arr);
	return *doc ? 0 : -ENOMEM;
}

int nt_txn_desired_set(nt_txn_engine *e, const nt_txn_request *req, nt_txn_outcome *out)
{
	json_t *profile = NULL, *d = NULL;
	nt_plan plan = { 0 };
	int r;

	if ((r = need_store(e, out)) < 0)
		return r;
	if ((r = slot_wait(e, 30000, "desired", req, out)) < 0)
		return r;
	if ((r = resolve_profile(e, req, &profile, out)) < 0)
		goto out;
	/* Validated (and planned) against the host as it is now, so a profile
	 * that could never apply here is refused with its JSON paths. */
	nt_ethtool *eh = stage_ethtool(e);
	r = make_plan(e, eh, profile, &plan, out);
	nt_ethtool_close(eh);
	if (r < 0)
		goto out;
	const char *pname = json_string_value(json_object_get(profile, "name"));
	d = json_pack("{s:O,s:s?,s:s,s:s,s:s}", "profile", profile, "profile_name",
		      req->profile_name ? req->profile_name : pname, "source", "api", "client",
		      req->client ? req->client : "", "identity", req->identity ? req->identity : "");
	if (!d) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = nt_store_desired_set(e->store, d)) < 0) {
		snprintf(out->message, sizeof(out->message), "cannot record the desired state: %s",
			 nt_store_errmsg(e->store));
		r = NT_ESTORE;
		goto out;
	}
	if (e->log) {
		json_t *ev = json_pack("{s:s, s:s, s:s, s:s}", "event", "desired", "action", "set",
				       "client", req->client ? req->client : "", "identity",
				       req->identity ? req->identity : "");
		emit(e, ev);
	}
	r = nt_store_desired_get(e->store, &out->doc);
out:
	slot_release(e);
	nt_plan_free(&plan);
	json_decref(d);
	json_decref(profile);
	return r;
}

int nt_txn_desired_clear(nt_txn_engine *e, const char *client, const char *identity)
{
	nt_txn_outcome o = { 0 };
	if (!e->store)
		return NT_ESTORE;
	if (slot_wait(e, 30000, "desired", NULL, &o) < 0) {
		nt_txn_outcome_free(&o);
		return NT_ECONFLICT;
	}
	int r = nt_store_desired_clear(e->store, client, identity);
	slot_release(e);
	if (r == 0 && e->log) {
		json_t *ev = json_pack("{s:s, s:s, s:s, s:s}", "event", "desired", "action", "cleared",
				       "client", client ? client : "", "identity",
				       identity ? identity : "");
		emit(e, ev);
	}
	return r;
}

int nt_txn_desired_get(nt_txn_engine *e, json_t **doc)
{
	*doc = NULL;
	return e->store ? nt_store_desired_get(e->store, doc) : NT_ESTORE;
}
