/* SPDX-License-Identifier: Apache-2.0 */
/* The transaction engine object: made, started (recovery, then the
 * confirmation timer) and closed; the one apply slot every transaction
 * holds while it runs; the timer that reverts a transaction not confirmed
 * in time. */
#include "engine/txn_int.h"
#include "store/status.h"
#include "store/store.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void nt_txn_outcome_free(nt_txn_outcome *o)
{
	json_decref(o->doc);
	json_decref(o->errors);
	json_decref(o->in_flight);
	json_decref(o->moved);
	json_decref(o->changed);
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

void nt_txn_engine_set_plan_ttl(nt_txn_engine *e, int ttl_s)
{
	nt_plan_ids_set_ttl(e->plans, ttl_s);
}

void nt_txn_engine_set_history(nt_txn_engine *e, long keep)
{
	e->history_keep = keep > 0 ? keep : 0;
}

/* ---- the apply slot ---- */

/* Under e->lock: remember who takes the slot for OP (REQ may be NULL). */
void nt_txn_slot_hold(nt_txn_engine *e, const char *op, const nt_txn_request *req)
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
int nt_txn_slot_take(nt_txn_engine *e, bool allow_pending, bool agent, const char *op,
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
		nt_txn_slot_hold(e, op, req);
	}
	pthread_mutex_unlock(&e->lock);
	return r;
}

/* Take the slot, waiting up to TIMEOUT_MS for a transaction in flight
 * (not for one waiting for confirmation). */
int nt_txn_slot_wait(nt_txn_engine *e, int timeout_ms, const char *op,
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
	nt_txn_slot_hold(e, op, req);
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

void nt_txn_slot_release(nt_txn_engine *e)
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

void nt_txn_set_inflight(nt_txn_engine *e, int64_t id)
{
	pthread_mutex_lock(&e->lock);
	e->inflight_id = id;
	pthread_mutex_unlock(&e->lock);
}

/* ---- confirmation timer ---- */

/* Revert transaction ID, the one waiting for confirmation, now: called
 * under e->lock with the slot free, which it holds as "revert" (for REQ,
 * or the timer's NULL) while the lock is dropped for the undo, and frees
 * again; returns with the lock held. The timer calls it at the deadline,
 * a rollback of a waiting transaction before it. Returns undo's result. */
int nt_txn_revert_locked(nt_txn_engine *e, int64_t id, const nt_txn_request *req, const char *why)
{
	e->busy = true;
	e->inflight_id = id;
	nt_txn_slot_hold(e, "revert", req);
	pthread_mutex_unlock(&e->lock);
	int r = nt_txn_undo_stored(e, id, NT_STEP_REVERTED, NT_TXN_REVERTED, why);
	prune_history(e);
	pthread_mutex_lock(&e->lock);
	if (e->pending_id == id)
		e->pending_id = 0;
	e->busy = false;
	e->inflight_id = 0;
	e->holder_op[0] = '\0';
	pthread_cond_broadcast(&e->cond);
	return r;
}

static void *timer_main(void *arg)
{
	nt_txn_engine *e = arg;
	int64_t settle_at = 0, retry_ms = NT_TXN_SETTLE_RETRY_MS;
	pthread_mutex_lock(&e->lock);
	while (!e->stop) {
		int64_t now = nt_store_now_ms();
		/* Outcomes the store refused are tried again after
		 * NT_TXN_SETTLE_RETRY_MS, then twice as long each time up to
		 * a minute: a try against a database another process locks
		 * holds the store for SQLite's 5 s busy timeout, which readers
		 * wait out too. */
		if (e->unsettled && json_array_size(e->unsettled)) {
			if (!settle_at) {
				settle_at = now + retry_ms;
			} else if (now >= settle_at) {
				pthread_mutex_unlock(&e->lock);
				int left = nt_txn_settle(e);
				pthread_mutex_lock(&e->lock);
				retry_ms = left ? (retry_ms * 2 > 60000 ? 60000 : retry_ms * 2) :
						  NT_TXN_SETTLE_RETRY_MS;
				settle_at = left ? nt_store_now_ms() + retry_ms : 0;
				continue;
			}
		} else {
			settle_at = 0;
			retry_ms = NT_TXN_SETTLE_RETRY_MS;
		}
		int64_t wake = e->pending_id && !e->busy ? e->pending_deadline_ms : INT64_MAX;
		if (settle_at && settle_at < wake)
			wake = settle_at;
		if (now < wake || e->busy) {
			if (wake == INT64_MAX) {
				pthread_cond_wait(&e->cond, &e->lock);
			} else {
				struct timespec ts = { .tv_sec = (time_t)(wake / 1000),
						       .tv_nsec = (long)(wake % 1000) * 1000000L };
				pthread_cond_timedwait(&e->cond, &e->lock, &ts);
			}
			continue;
		}
		if (!e->pending_id || now < e->pending_deadline_ms)
			continue;
		nt_txn_revert_locked(e, e->pending_id, NULL, "not confirmed within confirm_timeout_s; reverted");
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

/* ---- open / close ---- */

int nt_txn_engine_new(const nt_ctx *ctx, nt_store *store, const char *store_err,
		      nt_txn_engine **out)
{
	nt_txn_engine *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (!e)
		return -ENOMEM;
	if (nt_plan_ids_new(&e->plans) < 0) {
		free(e);
		return -ENOMEM;
	}
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
	nt_txn_recover(e);
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
	json_decref(e->unsettled);
	json_decref(e->unmended);
	nt_plan_ids_free(e->plans);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}
