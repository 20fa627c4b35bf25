/* SPDX-License-Identifier: Apache-2.0 */
/* The journal and record of nettune: transactions, their steps, stored
 * profiles and idempotency keys, in SQLite at STATE_DIR/nettune.db.
 *
 * WAL mode, busy_timeout 5000 ms, foreign keys on, schema versioned with
 * PRAGMA user_version and an array of migrations; every write of more than
 * one row runs in one BEGIN IMMEDIATE .. COMMIT so a crash leaves either all
 * of it or none. A handle is used under the caller's lock (the transaction
 * engine serialises writers); SQLite itself is opened in serialized mode so
 * concurrent readers from HTTP threads are safe.
 *
 * Documents cross this interface as JSON (jansson), the same shape the API
 * serves, so the store knows nothing of setting kinds; a transaction's
 * steps may also cross as rows of strings (nt_store_step_row), the
 * engine's way for a thousand of them. Statuses and step results are the
 * words of store/status.h. */
#ifndef NT_STORE_H
#define NT_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nt_store nt_store;

/* The schema version this build writes. */
#define NT_STORE_SCHEMA_VERSION 6

/* Open (creating and migrating) the database at PATH. Returns 0 or
 * NT_ESTORE with a message in ERR; *OUT is owned by the caller. */
int nt_store_open(const char *path, nt_store **out, char *err, size_t errsize);
void nt_store_close(nt_store *s);
/* PRAGMA user_version of the open database. */
int nt_store_schema_version(nt_store *s);
/* The last SQLite error message of this handle. */
const char *nt_store_errmsg(nt_store *s);

/* Milliseconds since the epoch (the store's clock for timestamps). */
int64_t nt_store_now_ms(void);
/* RFC 3339 UTC ("2026-11-30T01:02:03.456Z") of MS into BUF. */
void nt_store_rfc3339(int64_t ms, char *buf, size_t size);

/* Record a new transaction and all of its steps in one SQL transaction.
 * TXN: {"status","profile"(object|null),"profile_name"?,"client","identity",
 *       "rollback_of"?(int),"confirm_timeout_s"?(int),"warnings"?}
 * STEPS: [{"kind","target","interface"?,"before","after"}]; each gets
 * result "pending". IDEM_KEY, when not NULL, is recorded with it (a
 * duplicate key fails with -EEXIST). *ID receives the new id. */
int nt_store_txn_create(nt_store *s, const json_t *txn, const json_t *steps, const char *idem_key,
			int64_t *id);
/* A step as the store keeps it, its values in their kind's words; the
 * strings belong to the caller (create) or to the store for the length
 * of one call of the function given them (nt_store_txn_steps). */
typedef struct nt_store_step_row {
	int idx;
	const char *kind, *target;
	const char *interface; /* NULL or "" when none */
	const char *before, *after;
	const char *result; /* read only */
} nt_store_step_row;
/* nt_store_txn_create with the N steps as rows (their idx ignored: in
 * order), the engine's way: no JSON made of a thousand steps only to be
 * taken apart again here. */
int nt_store_txn_create_rows(nt_store *s, const json_t *txn, const nt_store_step_row *steps, int n,
			     const char *idem_key, int64_t *id);
/* Set status (and, when not NULL, error / failed_step >= 0). FINISHED sets
 * finished time and duration. DEADLINE_MS > 0 sets the confirm deadline,
 * < 0 clears it. */
int nt_store_txn_set_status(nt_store *s, int64_t id, const char *status, const char *error,
			    int failed_step, bool finished, int64_t deadline_ms);
/* One step's outcome as a stage of a transaction records it. */
typedef struct nt_store_step_rec {
	int idx;
	const char *result;
	const char *error; /* NULL clears it */
	const char *observed; /* NULL leaves it as it is */
} nt_store_step_rec;

/* Give back the memory SQLite's page cache holds and no statement uses
 * (the file stays in the OS's cache): after a transaction of a thousand
 * steps and its read-back it is megabytes, resident in an agent that then
 * idles. For the agent's idle moments. */
void nt_store_release_memory(nt_store *s);
/* Bytes SQLite's page cache holds now, or -1 (tests and metrics). */
int64_t nt_store_cache_bytes(nt_store *s);

/* Cut the history to the newest KEEP transactions (by id; 0 keeps all):
 * older settled ones (nt_txn_status_settled) go with their steps and
 * idempotency keys, in one SQL transaction, and desired-state events
 * beyond the newest KEEP too. Never a transaction in flight, the one the
 * desired state came from, nor one a kept rollback names (it goes with
 * that rollback). *DELETED (may be NULL) gets how many transactions went.
 * Cheap when there is nothing to cut (a range on the primary key).
 * Returns 0 or NT_ESTORE. */
int nt_store_prune(nt_store *s, long keep, int *deleted);

/* Record a stage of transaction ID (an apply, a rollback, an undo) in one
 * SQL transaction: the N step outcomes of RECS in order (a later one for
 * the same step wins), then the status as nt_store_txn_set_status sets it
 * (STATUS NULL: the status stays). One commit for the whole stage, not one
 * per step: the journal was made durable before the first write, and
 * recovery reads every target back rather than trusting step results.
 * Returns 0, -ENOENT (no such transaction or step) or NT_ESTORE; on an
 * error nothing of the stage is recorded. */
int nt_store_txn_stage(nt_store *s, int64_t id, const nt_store_step_rec *recs, int n,
		       const char *status, const char *error, int failed_step, bool finished,
		       int64_t deadline_ms);

/* Record transaction ID's delivery check in one SQL transaction: SUMMARY
 * as its "delivery" member, and the N observed texts of RECS (their
 * result and error are not touched). Returns 0, -ENOENT or NT_ESTORE. */
int nt_store_txn_set_delivery(nt_store *s, int64_t id, const json_t *summary,
			      const nt_store_step_rec *recs, int n);
/* The transaction document (see api/routes_txn.c) or -ENOENT. */
int nt_store_txn_get(nt_store *s, int64_t id, json_t **out);
/* The transaction document as a lean reply shows it: its "steps" only
 * the failed ones (result failed or rollback_failed; FAILED false: none),
 * with "nsteps" and "step_counts" ({result: {kind: how many}}) saying
 * what there was. Counted in SQL: the document of a thousand steps is
 * never made. Or -ENOENT. */
int nt_store_txn_get_lean(nt_store *s, int64_t id, bool failed, json_t **out);
/* Called with each step row of one transaction, in index order, under
 * the store's lock; a negative return stops the walk and is returned. */
typedef int (*nt_store_step_fn)(void *arg, const nt_store_step_row *row);
/* Transaction ID's status into STATUS, then FN(ARG, row) for each of its
 * steps: what an undo needs, without its document. 0, -ENOENT, NT_ESTORE
 * or FN's error. */
int nt_store_txn_steps(nt_store *s, int64_t id, char *status, size_t statussize,
		       nt_store_step_fn fn, void *arg);
/* Newest first; STATUS NULL for any. */
int nt_store_txn_list(nt_store *s, const char *status, int limit, int offset, json_t **out,
		      int64_t *total);
/* Ids of transactions in STATUS, oldest first (a JSON array of integers). */
int nt_store_txn_ids(nt_store *s, const char *status, json_t **out);
/* The transaction an idempotency key was used for, or -ENOENT. */
int nt_store_idem_get(nt_store *s, const char *key, int64_t *id);
/* The first recorded key that starts with PREFIX (into KEY) and its
 * transaction, or -ENOENT: finds a key used before with another request. */
int nt_store_idem_find(nt_store *s, const char *prefix, char *key, size_t keysize, int64_t *id);
/* The earliest transaction after ID, in a status that may leave changes
 * in place (nt_txn_status_holds_changes), that changed (step result
 * "applied") a kind+target that ID changed too; *LATER = 0 when none. */
int nt_store_later_conflict(nt_store *s, int64_t id, int64_t *later);

/* Targets a failed rollback left in neither state: the steps whose
 * result is rollback_failed, in transactions that ended rollback_failed,
 * of a kind and target no later transaction has written since (a later
 * step applied, rolled back, reverted or restored), newest first, at most
 * LIMIT: [{"transaction", "kind", "target", "interface"?}] in *OUT (the
 * caller's). Returns 0, -ENOMEM or NT_ESTORE. */
int nt_store_unmended(nt_store *s, int limit, json_t **out);

/* For metrics: {"status": count, ...} of every status present in *COUNTS,
 * and in *LAST_APPLY_MS when the newest transaction that took effect
 * (nt_txn_status_took_effect: "applied" or "pending_confirm") finished (or
 * started, while pending); 0 when there is none. */
int nt_store_txn_stats(nt_store *s, json_t **counts, int64_t *last_apply_ms);
/* For metrics: when the oldest transaction in STATUS was created (ms since
 * the epoch), 0 when none is. Returns 0 or NT_ESTORE. */
int nt_store_txn_oldest_created(nt_store *s, const char *status, int64_t *ms);

/* Stored profiles. PUT replaces; *CREATED tells whether it was new. */
int nt_store_profile_put(nt_store *s, const char *name, const json_t *profile, bool *created);
int nt_store_profile_get(nt_store *s, const char *name, json_t **out);
int nt_store_profile_delete(nt_store *s, const char *name);
/* [{"name","description","updated"}], by name. */
int nt_store_profile_list(nt_store *s, json_t **out);

/* The desired state: at most one profile the agent holds the host to.
 * SET replaces it, DESIRED: {"profile", "profile_name"?, "source" ("api" |
 * "transaction"), "txn_id"?, "client", "identity"}; each set and clear is
 * recorded as an event in the same SQL transaction. */
int nt_store_desired_set(nt_store *s, const json_t *desired);
/* {"profile","profile_name","source","txn_id","client","identity","set",
 *  "set_ms"} or -ENOENT when there is none. */
int nt_store_desired_get(nt_store *s, json_t **out);
/* Forget it (-ENOENT when there was none), recording who did. */
int nt_store_desired_clear(nt_store *s, const char *client, const char *identity);
/* The newest LIMIT changes: [{"action": "set"|"cleared", "profile_name",
 * "source", "txn_id", "client", "identity", "at"}]. */
int nt_store_desired_events(nt_store *s, int limit, json_t **out);
/* The newest transaction whose step changed KIND TARGET (result "applied"):
 * {"txn","reason","client","identity","persist","at_ms"}, or -ENOENT. */
int nt_store_last_change(nt_store *s, const char *kind, const char *target, json_t **out);

#endif
