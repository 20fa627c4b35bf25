/* SPDX-License-Identifier: Apache-2.0 */
/* The transaction engine: apply a profile's plan as one journalled,
 * verified, reversible transaction. Core code: no HTTP here; the
 * routes in api/routes_txn.c only translate.
 *
 * Order of work for an apply: plan against a fresh topology; record the
 * transaction and every step's before-value in the store in one SQL
 * transaction (status "applying"); apply the steps in order, reading each
 * back; then "applied" (or "pending_confirm" with a deadline). A failing
 * step undoes the applied ones in reverse and verifies the undo
 * ("rolled_back"); an undo that fails leaves "rollback_failed" with each
 * target's state in its step. At start, transactions left "applying" or
 * "rolling_back" by a crash are restored from the journal ("recovered"), and
 * expired "pending_confirm" ones are reverted ("reverted"). The statuses and
 * step results are the one list in store/status.h.
 *
 * One transaction at a time: while one is applying, or waiting for its
 * confirmation, another apply gets NT_ECONFLICT naming it; except that a
 * client's apply or rollback waits (up to 30 s) for a repair the agent makes
 * to hold its desired state (a request with a reason) instead of failing.
 *
 * NETTUNE_TEST_STEP_DELAY_MS (environment, read by nt_txn_engine_new): sleep that long
 * before each step, so a test can kill the agent between two steps. */
#ifndef NT_TXN_H
#define NT_TXN_H

#include "kernel/ctx.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct nt_txn_engine nt_txn_engine;

typedef enum { NT_TXN_STEPS_ALL, NT_TXN_STEPS_FAILED, NT_TXN_STEPS_NONE } nt_txn_steps_shown;

typedef struct nt_txn_request {
	const json_t *profile; /* inline profile, or NULL */
	const char *profile_name; /* a stored profile, or NULL */
	int confirm_timeout_s; /* 0: no confirmation needed */
	/* NULL for none. Compared whole; when it has the form
	 * "SCOPE\tKEY\tFINGERPRINT", the same SCOPE and KEY recorded with
	 * another fingerprint is refused (key_reused). */
	const char *idempotency_key;
	const char *client; /* who asked (address), "" unknown */
	const char *identity; /* authenticated identity, "" none */
	/* Why the agent applies it by itself: "boot", "drift", "link-up";
	 * NULL for a client's request. A transaction with a reason that
	 * would have no steps is not recorded (*out doc stays NULL). */
	const char *reason;
	/* Make the profile the desired state (store/store.h) once the
	 * transaction took effect: at once when "applied", at confirmation
	 * when it waits for one. */
	bool persist;
	/* Steps to leave out of the plan: an object whose keys are
	 * "KIND TARGET" (a contested or overridden target), or NULL. */
	const json_t *skip;
	/* The plan holds a desired state that was applied (the drift
	 * watcher's): a target another program has taken since is left out
	 * and listed in the plan's "taken" instead of refusing the profile
	 * (engine/plan.h nt_plan_build_ex). */
	bool hold;
	/* With a reason: the "set_ms" of the desired state this repair is
	 * for. Checked inside the slot, so a repair planned just before the
	 * desired state changed or was cleared is dropped (no doc). 0: none. */
	int64_t desired_set_ms;
	/* Apply the plan kept under this id (engine/plan_ids.h) instead of
	 * planning PROFILE / PROFILE_NAME (both NULL then): exactly its steps,
	 * with no new read of the whole host. The facts the plan rested on
	 * are read again (engine/plan_facts.h: online CPUs, each interface's
	 * ifindex, queues and IRQs); when one changed nothing is applied and
	 * the answer is NT_ECONFLICT with out->changed. Then each step's
	 * target is read (all at once, as a rollback reads them); when one no
	 * longer reads as its planned before-value nothing is applied and the
	 * answer is NT_ECONFLICT with out->moved. The id is used up either
	 * way. */
	const char *plan_id;
	/* With PLAN_ID: when targets moved or the facts changed, plan again
	 * from the plan's profile and apply that instead (its warnings say
	 * what moved). */
	bool replan;
	/* nt_txn_plan: keep the plan under a new id for an apply (the doc
	 * gets "id" and "expires"). */
	bool keep_plan;
	/* Which steps the answer's document carries (a lean reply): every one
	 * (the default), only the failed ones or none, with "nsteps" and
	 * "step_counts" then; counted by the store, so a thousand-step
	 * document is not read back only to be cut. */
	nt_txn_steps_shown steps_shown;
} nt_txn_request;

/* What an engine call produced. Free with nt_txn_outcome_free. */
typedef struct nt_txn_outcome {
	json_t *doc; /* the plan or transaction document */
	json_t *errors; /* [{path, message}] on NT_EINVALID */
	int64_t conflict_id; /* the transaction in flight on NT_ECONFLICT (0 if none) */
	/* On NT_ECONFLICT because the engine is busy: what it is busy with,
	 * {"state": "preparing"|"running"|"pending_confirm", "transaction"?: ID,
	 *  "operation"?: "apply"|"rollback"|"desired"|"revert", "since"?,
	 *  "profile"?, "identity"?, "client"?, "reason"?, "confirm_deadline"?}
	 * ("preparing": the slot is taken but no transaction is recorded yet,
	 * e.g. while a large profile is planned). NULL otherwise. */
	json_t *in_flight;
	int64_t later_id; /* rollback: the later transaction that changed the same targets */
	/* rollback: later_id is this transaction's own rollback, so it is
	 * rolled back already (refused, also with force). 0 otherwise. */
	int64_t rolled_back_by;
	bool replayed; /* an Idempotency-Key retry: doc is the original */
	bool reverted; /* rollback of a pending_confirm one: doc is it, now "reverted" */
	bool key_reused; /* NT_EINVALID: the Idempotency-Key was used for another request */
	/* A plan_id apply whose targets moved (NT_ECONFLICT): the steps whose
	 * target reads otherwise than planned, [{"kind","target","interface"?,
	 * "planned","now"|null,"error"?}]. NULL otherwise. */
	json_t *moved;
	/* A plan_id apply whose host changed under it (NT_ECONFLICT): the
	 * facts the plan rested on that differ now (engine/plan_facts.h),
	 * [{"fact","interface"?,"planned","now"|null}]. NULL otherwise. */
	json_t *changed;
	/* A plan_id that cannot be applied is -ENOENT (unknown: never made
	 * here, or evicted) or -ESTALE, with PLAN_GONE saying why: an
	 * nt_plan_gone of engine/plan_ids.h (expired, used). */
	int plan_gone;
	char message[512]; /* a sentence for the error cases */
} nt_txn_outcome;

void nt_txn_outcome_free(nt_txn_outcome *o);

struct nt_store;

/* A new engine for host CTX journalling in STORE, which it borrows: the
 * caller (the agent, agent/agent.h) closes the store after the engine.
 * STORE may be NULL, with STORE_ERR saying why: the engine then refuses
 * applies with NT_ESTORE (see nt_txn_store_error) and still plans. Nothing
 * runs until nt_txn_engine_start. Returns 0 or -ENOMEM. */
int nt_txn_engine_new(const nt_ctx *ctx, struct nt_store *store, const char *store_err,
		      nt_txn_engine **out);
/* Crash recovery, then the confirmation timer thread: transactions a crash
 * left "applying" or "rolling_back" are restored from the journal
 * ("recovered"), expired "pending_confirm" ones reverted ("reverted"), and
 * a live one waits for its deadline again. Call once, before the engine
 * serves requests. Without a store it does nothing. Returns 0 or -errno
 * (the thread could not be started). */
int nt_txn_engine_start(nt_txn_engine *e);
/* nt_txn_engine_new and nt_txn_engine_start in one, with a store of its
 * own at STATE_DIR/nettune.db (a store that cannot be opened does not fail
 * the open, as above). For tools that need the engine without the agent
 * (bench/bench_txn.c). Returns 0 or -errno. */
int nt_txn_engine_open(const nt_ctx *ctx, const char *state_dir, nt_txn_engine **out);
/* Stop the timer and free the engine (and its store, when it opened it). */
void nt_txn_engine_close(nt_txn_engine *e);

/* A sink for structured events: one JSON object per event, borrowed for
 * the call (the sink copies what it keeps). Called from whichever thread
 * does the work (HTTP workers, the confirmation timer), so it must be
 * thread-safe. The core never prints; the CLI's sink writes the lines. */
typedef void (*nt_log_fn)(void *ud, const json_t *event);
/* Step lines (not failed) told per stage before the rest are summed up. */
#define NT_TXN_LOG_STEPS 64
/* Send an event for each transaction step's outcome
 *   {"event":"txn_step","txn":ID,"index":I,"kind","target","interface"?,
 *    "before","after","result","error"?}
 * (every failed one; of the others the first NT_TXN_LOG_STEPS of each
 * stage, the apply or the undo, and then one
 *   {"event":"txn_steps","txn":ID,"logged":N,"not_logged":M,"history":PATH}
 * for the rest, which the history has), and every status change
 *   {"event":"txn","txn":ID,"status","error"?,"identity","client"}
 * to FN (NULL: none). Set it before
 * nt_txn_engine_start (the timer thread reads it unlocked); the crash
 * recovery done there is not logged. */
void nt_txn_engine_set_log(nt_txn_engine *e, nt_log_fn fn, void *ud);
/* Keep the newest KEEP transactions in the history (0, the default: all):
 * older settled ones are deleted as each transaction ends and at
 * nt_txn_engine_start (nt_store_prune). Set it before nt_txn_engine_start. */
void nt_txn_engine_set_history(nt_txn_engine *e, long keep);
/* Why the store is unavailable, or NULL when it is fine. */
const char *nt_txn_store_error(nt_txn_engine *e);
/* Finished transactions whose outcome the store refused (a full disk, a
 * lock held past SQLite's busy timeout; crash recovery's too): their rows
 * still say "applying" or "rolling_back" until the engine writes them
 * again, which it does after its next write that succeeds and from the
 * timer thread (after 2 s, then twice as long each time, up to a minute),
 * keeping the failed write's reason in the record's error. Returns how many wait; with LIST, *LIST (the caller's) is
 * [{"transaction", "status", "store_error"}]. */
int nt_txn_unsettled(nt_txn_engine *e, json_t **list);
/* Try to write them now; returns how many still wait. */
int nt_txn_settle(nt_txn_engine *e);
/* Targets that a transaction ending rollback_failed left in neither its
 * old state nor its new and that nothing has written since
 * (nt_store_unmended), at most LIMIT, into *LIST (the caller's; NULL when
 * none or without a store). Returns how many, or NT_ESTORE / -ENOMEM. */
int nt_txn_unmended(nt_txn_engine *e, int limit, json_t **list);

/* Plans kept by id are kept TTL_S seconds (1..86400; default 600). */
void nt_txn_engine_set_plan_ttl(nt_txn_engine *e, int ttl_s);

/* Plan REQ's profile: 0 with doc {profile, steps, warnings} (with
 * REQ->keep_plan also "id" and "expires", the plan kept for an apply);
 * NT_EINVALID with errors; -ENOENT for an unknown profile_name; NT_ESTORE. */
int nt_txn_plan(nt_txn_engine *e, const nt_txn_request *req, nt_txn_outcome *out);
/* Apply. 0 with the transaction document (whatever its final status);
 * NT_EINVALID, -ENOENT (profile_name, or an unknown plan_id), -ESTALE (a
 * plan_id expired or used, see out->plan_gone), NT_ECONFLICT (another in
 * flight, or a plan_id's targets moved: out->moved), NT_ESTORE (nothing
 * applied without a record). */
int nt_txn_apply(nt_txn_engine *e, const nt_txn_request *req, nt_txn_outcome *out);
/* Confirm a pending_confirm transaction: 0, -ENOENT, NT_ECONFLICT (not
 * pending). */
int nt_txn_confirm(nt_txn_engine *e, int64_t id, nt_txn_outcome *out);

/* The desired state (see agent/drift.h for what holds it). SET and CLEAR
 * take the slot (waiting up to 30 s for a transaction in flight, then
 * NT_ECONFLICT), so they never change under a repair. SET validates
 * REQ's profile (or profile_name) against this host like a plan
 * (NT_EINVALID with out->errors, -ENOENT) and records it, with REQ's
 * client and identity, as set by SOURCE ("api"); out->doc is
 * nt_txn_desired_get's document. CLEAR: 0 or -ENOENT. GET: 0 or -ENOENT. */
int nt_txn_desired_set(nt_txn_engine *e, const nt_txn_request *req, nt_txn_outcome *out);
int nt_txn_desired_clear(nt_txn_engine *e, const char *client, const char *identity);
int nt_txn_desired_get(nt_txn_engine *e, json_t **doc);
/* Undo transaction ID's changes as a new transaction. NT_ECONFLICT when it
 * is not in a state to undo, or a later transaction changed the same
 * targets (unless FORCE). REQ gives client/identity/idempotency key. A
 * transaction still waiting for confirmation is reverted at once, as its
 * deadline would (no new transaction: out->reverted, out->doc is it, now
 * "reverted"), so a failed canary need not stay tuned for its window. */
int nt_txn_rollback(nt_txn_engine *e, int64_t id, bool force, const nt_txn_request *req,
		    nt_txn_outcome *out);

int nt_txn_get(nt_txn_engine *e, int64_t id, json_t **doc);
/* {"transactions":[...], "total", "limit", "offset"} */
int nt_txn_list(nt_txn_engine *e, const char *status, int limit, int offset, json_t **doc);

/* Stored profiles. PUT validates against this host (NT_EINVALID with
 * out->errors). */
int nt_txn_profile_put(nt_txn_engine *e, const char *name, const json_t *profile, bool *created,
		       nt_txn_outcome *out);
int nt_txn_profile_get(nt_txn_engine *e, const char *name, json_t **doc);
int nt_txn_profile_delete(nt_txn_engine *e, const char *name);
int nt_txn_profile_list(nt_txn_engine *e, json_t **doc);

#endif
