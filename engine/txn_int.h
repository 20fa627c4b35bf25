/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the transaction engine: the engine object and what its files
 * share. Private to engine/: everyone else uses engine/txn.h.
 *
 *   engine/txn.c          the operations: plan, apply, confirm, rollback,
 *                         history, stored profiles, the desired state
 *   engine/txn_engine.c   the engine object (new, start, open, close), the
 *                         apply slot and the confirmation timer
 *   engine/txn_run.c      a transaction's stages: its steps applied,
 *                         verified, undone and recorded
 *   engine/txn_recover.c  crash recovery at start, and the reply for an
 *                         outcome the store could not record
 *   engine/txn_replay.c   Idempotency-Key replays
 *   engine/txn_plan_id.c  plans kept by id, and the apply of one
 *
 * What each function below does is said where it is defined. */
#ifndef NT_ENGINE_TXN_INT_H
#define NT_ENGINE_TXN_INT_H

#include "engine/plan.h"
#include "engine/plan_ids.h"
#include "engine/txn.h"
#include "kernel/ethtool.h"
#include "store/status.h"
#include "store/store.h"

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct nt_txn_engine {
	nt_ctx ctx;
	nt_store *store; /* NULL when the database could not be opened */
	bool own_store; /* opened by nt_txn_engine_open, closed with the engine */
	char store_err[512];
	int step_delay_ms;
	long history_keep; /* transactions kept in the history, 0 all */
	/* Test-only fault points (NETTUNE_TEST_FAULT, see fault_at). */
	char faults[256];
	nt_plan_ids *plans; /* plans kept by id for an apply (own lock) */

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
	/* Finished transactions whose outcome the store refused (a full disk,
	 * a lock held past the busy timeout, recovery included), written again
	 * as soon as the store accepts writes: after the next write that
	 * succeeds, and by the timer thread after NT_TXN_SETTLE_RETRY_MS, then
	 * less and less often (up to a minute); txn_run.c.
	 * [{"id","status","error","failed_step","deadline_ms","store_error",
	 *   "steps": [{"idx","result","error","observed"}]}], under lock. */
	json_t *unsettled;
	/* What nt_txn_unmended answered (GET /v1/health asks it for every
	 * probe), asked of the store again only once RECORDS has moved past
	 * UNMENDED_AT: every status a transaction records bumps RECORDS, so
	 * health costs one store query per change of the history, not one per
	 * probe, and never waits on a store busy with a long write. Under
	 * lock; UNMENDED NULL for none. */
	unsigned long records, unmended_at;
	bool unmended_known;
	json_t *unmended;
};

#define NT_TXN_SETTLE_RETRY_MS 2000

/* Send EV (consumed; NULL is nothing) to the log sink, if one is set. */
static inline void emit(nt_txn_engine *e, json_t *ev)
{
	if (ev && e->log)
		e->log(e->log_ud, ev);
	json_decref(ev);
}

/* ---- the apply slot and the confirmation timer (engine/txn_engine.c) ---- */

void nt_txn_slot_hold(nt_txn_engine *e, const char *op, const nt_txn_request *req);
int nt_txn_slot_take(nt_txn_engine *e, bool allow_pending, bool agent, const char *op,
		     const nt_txn_request *req, nt_txn_outcome *out);
int nt_txn_slot_wait(nt_txn_engine *e, int timeout_ms, const char *op,
		     const nt_txn_request *req, nt_txn_outcome *out);
void nt_txn_slot_release(nt_txn_engine *e);
void nt_txn_set_inflight(nt_txn_engine *e, int64_t id);
int nt_txn_revert_locked(nt_txn_engine *e, int64_t id, const nt_txn_request *req, const char *why);

/* ---- stages (engine/txn_run.c) ---- */

struct nt_txn_stage;

/* What a stage reads of many steps at once: the current value (READ), or
 * what the target shows beyond it (OBSERVE). */
typedef enum { STEPS_READ, STEPS_OBSERVE } steps_op;

int nt_txn_record_status(nt_txn_engine *e, int64_t id, struct nt_txn_stage *st,
			 nt_txn_status status, const char *error, int failed_step, bool finished,
			 int64_t deadline_ms);
int nt_txn_steps_stored(nt_txn_engine *e, int64_t id, char *status, size_t statussize,
			nt_step **out, nt_step_result **results, int *n);
nt_ethtool *nt_txn_stage_ethtool(nt_txn_engine *e);
void nt_txn_read_steps(nt_txn_engine *e, nt_ethtool *eh, steps_op op, const nt_step *steps,
		       const int *idx, int m, nt_value *vals, char *obs, size_t obssize, int *res);
int nt_txn_undo_stored(nt_txn_engine *e, int64_t id, nt_step_result done, nt_txn_status status,
		       const char *why);
int nt_txn_record_and_run(nt_txn_engine *e, nt_ethtool *eh, json_t *txn, const nt_step *steps,
			  int n, const nt_txn_request *req, nt_txn_outcome *out);

/* ---- recovery (engine/txn_recover.c) ---- */

void nt_txn_recover(nt_txn_engine *e);
void nt_txn_settle_unrecorded(nt_txn_engine *e, json_t *doc);

/* ---- plans kept by id (engine/txn_plan_id.c) ---- */

/* engine/txn.c's plan of PROFILE from a fresh read of the host; HOLD as
 * nt_plan_build_ex's. */
int nt_txn_make_plan(nt_txn_engine *e, nt_ethtool *eh, const json_t *profile, bool hold, nt_plan *plan,
		     nt_txn_outcome *out);
int nt_txn_keep_plan(nt_txn_engine *e, nt_plan *plan, const json_t *profile, const char *profile_name,
		     json_t *doc, nt_txn_outcome *out);
int nt_txn_take_plan(nt_txn_engine *e, const char *id, nt_kept_plan *k, nt_txn_outcome *out);
int nt_txn_plan_from_id(nt_txn_engine *e, nt_ethtool *eh, const nt_txn_request *req,
			nt_kept_plan *kept, nt_plan *plan, json_t **profile, nt_txn_outcome *out);

/* ---- idempotency (engine/txn_replay.c) ---- */

int nt_txn_replay(nt_txn_engine *e, const char *key, nt_txn_outcome *out);
int nt_txn_replay_check(nt_txn_engine *e, const char *key, nt_txn_outcome *out);

#endif
