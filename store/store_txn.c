/* SPDX-License-Identifier: Apache-2.0 */
/* Transactions and their steps: the journal written before a transaction
 * runs, each stage's outcomes, the documents of the history. */
#include "store/store_int.h"
#include "store/status.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- transactions ---- */

static int txn_create_locked(nt_store *s, const json_t *txn, const nt_store_step_row *steps, int n,
			     const char *idem_key, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;
	int64_t now = nt_store_now_ms();

	if (exec(s, "BEGIN IMMEDIATE") < 0)
		return NT_ESTORE;
	if (prep(s, &st, "INSERT INTO transactions (status, profile, profile_name, client, identity,"
		 " created_ms, confirm_timeout_s, rollback_of, warnings, reserved, reason, persist)"
		 " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)") < 0)
		goto out;
	bind_text(st, 1, json_string_value(json_object_get(txn, "status")));
	bind_json(st, 2, json_object_get(txn, "profile"));
	bind_text(st, 3, json_string_value(json_object_get(txn, "profile_name")));
	const char *client = json_string_value(json_object_get(txn, "client"));
	const char *identity = json_string_value(json_object_get(txn, "identity"));
	bind_text(st, 4, client ? client : "");
	bind_text(st, 5, identity ? identity : "");
	sqlite3_bind_int64(st, 6, now);
	json_t *x = json_object_get(txn, "confirm_timeout_s");
	if (json_is_integer(x))
		sqlite3_bind_int64(st, 7, json_integer_value(x));
	x = json_object_get(txn, "rollback_of");
	if (json_is_integer(x))
		sqlite3_bind_int64(st, 8, json_integer_value(x));
	bind_json(st, 9, json_object_get(txn, "warnings"));
	bind_json(st, 10, json_object_get(txn, "reserved"));
	bind_text(st, 11, json_string_value(json_object_get(txn, "reason")));
	sqlite3_bind_int(st, 12, json_is_true(json_object_get(txn, "persist")));
	if (sqlite3_step(st) != SQLITE_DONE)
		goto out;
	*id = sqlite3_last_insert_rowid(s->db);
	sqlite3_finalize(st);
	st = NULL;

	if (prep(s, &st, "INSERT INTO steps (txn_id, idx, kind, target, interface, before, after,"
		 " result) VALUES (?,?,?,?,?,?,?,?)") < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		const nt_store_step_row *step = &steps[i];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, *id);
		sqlite3_bind_int(st, 2, i);
		bind_static(st, 3, step->kind);
		bind_static(st, 4, step->target);
		bind_static(st, 5, step->interface ? step->interface : "");
		bind_static(st, 6, step->before);
		bind_static(st, 7, step->after);
		bind_static(st, 8, nt_step_result_name(NT_STEP_PENDING));
		if (sqlite3_step(st) != SQLITE_DONE)
			goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (idem_key) {
		if (prep(s, &st, "INSERT INTO idempotency_keys (key, txn_id, created_ms) VALUES (?,?,?)") < 0)
			goto out;
		bind_text(st, 1, idem_key);
		sqlite3_bind_int64(st, 2, *id);
		sqlite3_bind_int64(st, 3, now);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_CONSTRAINT) {
			r = -EEXIST;
			goto out;
		}
		if (rc != SQLITE_DONE)
			goto out;
	}
	if (exec(s, "COMMIT") == 0)
		r = 0;
out:
	sqlite3_finalize(st);
	if (r < 0)
		rollback(s);
	return r;
}

static int txn_set_status_locked(nt_store *s, int64_t id, const char *status, const char *error,
			    int failed_step, bool finished, int64_t deadline_ms)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;
	if (prep(s, &st, "UPDATE transactions SET status = ?,"
		 " error = COALESCE(?, error),"
		 " failed_step = CASE WHEN ? >= 0 THEN ? ELSE failed_step END,"
		 " finished_ms = CASE WHEN ? THEN ? ELSE finished_ms END,"
		 " confirm_deadline_ms = CASE WHEN ? > 0 THEN ? WHEN ? < 0 THEN NULL"
		 "  ELSE confirm_deadline_ms END"
		 " WHERE id = ?") < 0)
		goto out;
	bind_text(st, 1, status);
	bind_text(st, 2, error);
	sqlite3_bind_int(st, 3, failed_step);
	sqlite3_bind_int(st, 4, failed_step);
	sqlite3_bind_int(st, 5, finished);
	sqlite3_bind_int64(st, 6, nt_store_now_ms());
	sqlite3_bind_int64(st, 7, deadline_ms);
	sqlite3_bind_int64(st, 8, deadline_ms);
	sqlite3_bind_int64(st, 9, deadline_ms);
	sqlite3_bind_int64(st, 10, id);
	if (sqlite3_step(st) == SQLITE_DONE)
		r = sqlite3_changes(s->db) ? 0 : -ENOENT;
out:
	sqlite3_finalize(st);
	return r;
}

#define TXN_COLS "id, status, profile, profile_name, client, identity, created_ms, finished_ms," \
	" error, failed_step, confirm_timeout_s, confirm_deadline_ms, rollback_of, warnings," \
	" reserved, reason, persist, delivery"

static json_t *txn_row(sqlite3_stmt *st)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "id", json_integer(sqlite3_column_int64(st, 0)));
	json_object_set_new(o, "status", text_or_null(st, 1));
	json_object_set_new(o, "profile", col_json(st, 2));
	json_object_set_new(o, "profile_name", text_or_null(st, 3));
	json_object_set_new(o, "client", text_or_null(st, 4));
	json_object_set_new(o, "identity", text_or_null(st, 5));
	json_object_set_new(o, "created", time_json(st, 6));
	json_object_set_new(o, "finished", time_json(st, 7));
	if (sqlite3_column_type(st, 7) != SQLITE_NULL)
		json_object_set_new(o, "duration_ms", json_integer(sqlite3_column_int64(st, 7) -
								   sqlite3_column_int64(st, 6)));
	else
		json_object_set_new(o, "duration_ms", json_null());
	json_object_set_new(o, "error", text_or_null(st, 8));
	json_object_set_new(o, "failed_step", int_or_null(st, 9));
	json_object_set_new(o, "confirm_timeout_s", int_or_null(st, 10));
	json_object_set_new(o, "confirm_deadline", time_json(st, 11));
	json_object_set_new(o, "confirm_deadline_ms", int_or_null(st, 11));
	json_object_set_new(o, "rollback_of", int_or_null(st, 12));
	json_t *w = col_json(st, 13);
	json_object_set_new(o, "warnings", json_is_array(w) ? w : json_array());
	if (!json_is_array(w))
		json_decref(w);
	json_t *rv = col_json(st, 14);
	json_object_set_new(o, "reserved", json_is_object(rv) ? rv : json_object());
	if (!json_is_object(rv))
		json_decref(rv);
	json_object_set_new(o, "reason", text_or_null(st, 15));
	json_object_set_new(o, "persist", json_boolean(sqlite3_column_int(st, 16)));
	json_t *dv = col_json(st, 17);
	json_object_set_new(o, "delivery", json_is_object(dv) ? dv : json_null());
	if (dv && !json_is_object(dv))
		json_decref(dv);
	return o;
}

/* Set KEY of O to column I's text, which must not be NULL. */
static int set_col_text(json_t *o, const char *key, sqlite3_stmt *st, int i)
{
	const char *t = col_text(st, i);
	return t ? json_object_set_new(o, key, json_string(t)) : -1;
}

/* A step's row. Set key by key, not json_pack: a reply reads back a
 * thousand steps, and parsing the format for each one showed in profiles. */
static json_t *step_row(sqlite3_stmt *st)
{
	json_t *o = json_object();
	const char *iface = col_text(st, 3);
	if (!o || json_object_set_new(o, "index", json_integer(sqlite3_column_int(st, 0))) < 0 ||
	    set_col_text(o, "kind", st, 1) < 0 || set_col_text(o, "target", st, 2) < 0 ||
	    set_col_text(o, "before", st, 4) < 0 || set_col_text(o, "after", st, 5) < 0 ||
	    set_col_text(o, "result", st, 6) < 0 ||
	    json_object_set_new(o, "error", text_or_null(st, 7)) < 0 ||
	    (iface && iface[0] && set_col_text(o, "interface", st, 3) < 0) ||
	    json_object_set_new(o, "observed", text_or_null(st, 8)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int load_steps(nt_store *s, int64_t id, json_t *doc)
{
	sqlite3_stmt *st = NULL;
	json_t *steps;
	if (prep(s, &st, "SELECT idx, kind, target, interface, before, after, result, error, observed"
		 " FROM steps WHERE txn_id = ? ORDER BY idx") == 0)
		sqlite3_bind_int64(st, 1, id);
	int r = rows_array(st, step_row, &steps);
	if (r == 0 && json_object_set_new(doc, "steps", steps) < 0)
		r = -ENOMEM;
	return r;
}

/* One (result, kind) pair of a lean document's counts. */
typedef struct step_count {
	char *result, *kind;
	json_int_t n;
} step_count;

static step_count *count_find(step_count **pairs, int *n, int *cap, const char *res,
			      const char *kind)
{
	for (int i = *n - 1; i >= 0; i--) /* the newest pair first: runs of one kind */
		if (!strcmp((*pairs)[i].result, res) && !strcmp((*pairs)[i].kind, kind))
			return &(*pairs)[i];
	if (*n == *cap) {
		int c = *cap ? 2 * *cap : 16;
		step_count *p = realloc(*pairs, (size_t)c * sizeof(*p));
		if (!p)
			return NULL;
		*pairs = p;
		*cap = c;
	}
	step_count *pc = &(*pairs)[*n];
	pc->result = strdup(res);
	pc->kind = strdup(kind);
	pc->n = 0;
	if (!pc->result || !pc->kind) {
		free(pc->result);
		free(pc->kind);
		return NULL;
	}
	(*n)++;
	return pc;
}

/* The counts of a lean document: {result: {kind: how many}}, each result
 * and each kind in the order of its first step, as a walk over every
 * step would make them (the API's show_steps for a full document).
 * Counted in one pass over the steps' two short columns, not by SQL's
 * GROUP BY, whose sort was most of the read. *FAILED: whether any step
 * failed (or failed to roll back). */
static int step_counts(nt_store *s, int64_t id, json_t *doc, bool *failed)
{
	sqlite3_stmt *st = NULL;
	json_t *counts = NULL;
	step_count *pairs = NULL;
	json_int_t total = 0;
	int r = NT_ESTORE, rc, n = 0, cap = 0;
	const char *f = nt_step_result_name(NT_STEP_FAILED);
	const char *rf = nt_step_result_name(NT_STEP_ROLLBACK_FAILED);

	*failed = false;
	if (prep(s, &st, "SELECT result, kind FROM steps WHERE txn_id = ? ORDER BY idx") < 0)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *res = col_text(st, 0), *kind = col_text(st, 1);
		step_count *pc = count_find(&pairs, &n, &cap, res ? res : "unknown",
					    kind ? kind : "unknown");
		if (!pc) {
			r = -ENOMEM;
			goto out;
		}
		pc->n++;
		total++;
		if (res && (!strcmp(res, f) || !strcmp(res, rf)))
			*failed = true;
	}
	if (rc != SQLITE_DONE)
		goto out;
	r = -ENOMEM;
	if (!(counts = json_object()))
		goto out;
	for (int i = 0; i < n; i++) {
		json_t *by_kind = json_object_get(counts, pairs[i].result);
		if (!by_kind && json_object_set_new(counts, pairs[i].result, by_kind = json_object()) < 0)
			goto out;
		if (json_object_set_new(by_kind, pairs[i].kind, json_integer(pairs[i].n)) < 0)
			goto out;
	}
	if (json_object_set_new(doc, "nsteps", json_integer(total)) < 0)
		goto out;
	/* set_new takes COUNTS whether it succeeds or not. */
	r = json_object_set_new(doc, "step_counts", counts) < 0 ? -ENOMEM : 0;
	counts = NULL;
out:
	for (int i = 0; i < n; i++) {
		free(pairs[i].result);
		free(pairs[i].kind);
	}
	free(pairs);
	json_decref(counts);
	sqlite3_finalize(st);
	return r;
}

/* The one row ST selects: 0 on it, -ENOENT when there is none. */
static int step_one(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : NT_ESTORE;
}

/* The steps of a lean document: the failed ones (FAILED) or none; its
 * counts say what there was. */
static int lean_steps(nt_store *s, int64_t id, bool failed, json_t *doc)
{
	sqlite3_stmt *st = NULL;
	json_t *steps = NULL;
	bool any_failed = false;
	int r = step_counts(s, id, doc, &any_failed);
	if (r < 0)
		return r;
	if (failed && any_failed) {
		if (prep(s, &st, "SELECT idx, kind, target, interface, before, after, result, error,"
			 " observed FROM steps WHERE txn_id = ? AND result IN (?, ?) ORDER BY idx") == 0) {
			sqlite3_bind_int64(st, 1, id);
			bind_static(st, 2, nt_step_result_name(NT_STEP_FAILED));
			bind_static(st, 3, nt_step_result_name(NT_STEP_ROLLBACK_FAILED));
		}
		if ((r = rows_array(st, step_row, &steps)) < 0)
			return r;
	} else if (!(steps = json_array())) {
		return -ENOMEM;
	}
	return json_object_set_new(doc, "steps", steps) < 0 ? -ENOMEM : 0;
}

/* Transaction ID's document with every step, or (LEAN) with the steps
 * lean_steps keeps. */
static int txn_get_locked(nt_store *s, int64_t id, bool lean, bool failed, json_t **out)
{
	sqlite3_stmt *st = NULL;
	json_t *doc = NULL;
	int r = NT_ESTORE;

	*out = NULL;
	if (prep(s, &st, "SELECT " TXN_COLS " FROM transactions WHERE id = ?") < 0)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	if ((r = step_one(st)) < 0)
		goto out;
	r = NT_ESTORE;
	if (!(doc = txn_row(st)))
		goto out;
	if ((r = lean ? lean_steps(s, id, failed, doc) : load_steps(s, id, doc)) < 0)
		goto out;
	*out = doc;
	doc = NULL;
out:
	json_decref(doc);
	sqlite3_finalize(st);
	return r;
}

static int txn_steps_locked(nt_store *s, int64_t id, char *status, size_t statussize,
			    nt_store_step_fn fn, void *arg)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE, rc;

	if (prep(s, &st, "SELECT status FROM transactions WHERE id = ?") < 0)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	if ((r = step_one(st)) < 0)
		goto out;
	snprintf(status, statussize, "%s", col_text(st, 0) ? col_text(st, 0) : "");
	sqlite3_finalize(st);
	st = NULL;
	if (prep(s, &st, "SELECT idx, kind, target, interface, before, after, result"
		 " FROM steps WHERE txn_id = ? ORDER BY idx") < 0)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		nt_store_step_row row = {
			.idx = sqlite3_column_int(st, 0), .kind = col_text(st, 1),
			.target = col_text(st, 2), .interface = col_text(st, 3),
			.before = col_text(st, 4), .after = col_text(st, 5), .result = col_text(st, 6),
		};
		if ((r = fn(arg, &row)) < 0)
			goto out;
	}
	r = rc == SQLITE_DONE ? 0 : NT_ESTORE;
out:
	sqlite3_finalize(st);
	return r;
}

/* A listed transaction: its row and how many steps it has. */
static json_t *listed_row(sqlite3_stmt *st)
{
	json_t *o = txn_row(st);
	if (o && json_object_set_new(o, "nsteps", json_integer(sqlite3_column_int(st, 18))) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int txn_list_locked(nt_store *s, const char *status, int limit, int offset, json_t **out,
		      int64_t *total)
{
	sqlite3_stmt *st = NULL;

	*out = NULL;
	if (prep(s, &st, "SELECT count(*) FROM transactions WHERE ?1 IS NULL OR status = ?1") < 0)
		return NT_ESTORE;
	bind_text(st, 1, status);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*total = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_ROW)
		return NT_ESTORE;
	if (prep(s, &st, "SELECT " TXN_COLS ", (SELECT count(*) FROM steps WHERE txn_id = id)"
		 " FROM transactions WHERE ?1 IS NULL OR status = ?1"
		 " ORDER BY id DESC LIMIT ?2 OFFSET ?3") == 0) {
		bind_text(st, 1, status);
		sqlite3_bind_int(st, 2, limit);
		sqlite3_bind_int(st, 3, offset);
	}
	return rows_array(st, listed_row, out);
}

static json_t *id_row(sqlite3_stmt *st)
{
	return json_integer(sqlite3_column_int64(st, 0));
}

static int txn_ids_locked(nt_store *s, const char *status, json_t **out)
{
	sqlite3_stmt *st = NULL;
	if (prep(s, &st, "SELECT id FROM transactions WHERE status = ? ORDER BY id") == 0)
		bind_text(st, 1, status);
	return rows_array(st, id_row, out);
}

/* Driven from transaction ID's own applied steps (its primary key), each
 * looks up only later steps of the same kind and target by a range on
 * txn_id (index steps_target_txn) and stops at the first one that was
 * applied in a transaction that may still hold its changes: the work
 * grows with this transaction's steps and the later ones on its targets,
 * not with all history. */
static int later_conflict_locked(nt_store *s, int64_t id, int64_t *later)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE, rc;
	char in_place[256], sql[1024];
	*later = 0;
	/* Later transactions whose changes may still be on the host. */
	status_list(nt_txn_status_holds_changes, in_place, sizeof(in_place));
	/* None at all (the rollback of the newest change, the usual case): a
	 * range on the primary key answers without a look at any step. */
	snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM transactions"
		 " WHERE id > ?1 AND status IN %s)", in_place);
	if (prep(s, &st, sql) < 0)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		goto out;
	if (!sqlite3_column_int(st, 0)) {
		r = 0;
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	snprintf(sql, sizeof(sql),
		 "SELECT min((SELECT b.txn_id FROM steps b CROSS JOIN transactions t"
		 "  WHERE b.kind = a.kind AND b.target = a.target AND b.txn_id > ?1"
		 "  AND b.result = ?2 AND t.id = b.txn_id AND t.status IN %s"
		 "  ORDER BY b.txn_id LIMIT 1))"
		 " FROM steps a WHERE a.txn_id = ?1 AND a.result = ?2", in_place);
	if (prep(s, &st, sql) < 0)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, nt_step_result_name(NT_STEP_APPLIED));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_NULL)
			*later = sqlite3_column_int64(st, 0);
		r = 0;
	}
out:
	sqlite3_finalize(st);
	return r;
}

/* Rollback_failed steps of rollback_failed transactions, newest first,
 * whose kind and target no later step wrote with success (applied, or put
 * back by a rollback, a revert or recovery): transactions of that status
 * through their index, each step's later ones by a range on txn_id (index
 * steps_target_txn), so health stays cheap when none failed (the usual
 * case: one index probe). */
static int unmended_locked(nt_store *s, int limit, json_t **out)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE, rc;
	json_t *arr = json_array();

	*out = NULL;
	if (!arr)
		return -ENOMEM;
	if (prep(s, &st,
		 "SELECT a.txn_id, a.kind, a.target, a.interface FROM transactions t"
		 " CROSS JOIN steps a WHERE t.status = ?1 AND a.txn_id = t.id AND a.result = ?1"
		 " AND NOT EXISTS (SELECT 1 FROM steps b WHERE b.kind = a.kind AND b.target = a.target"
		 "  AND b.txn_id > a.txn_id AND b.result IN (?2, ?3, ?4, ?5))"
		 " ORDER BY a.txn_id DESC, a.idx LIMIT ?6") < 0)
		goto out;
	bind_text(st, 1, nt_txn_status_name(NT_TXN_ROLLBACK_FAILED));
	bind_text(st, 2, nt_step_result_name(NT_STEP_APPLIED));
	bind_text(st, 3, nt_step_result_name(NT_STEP_ROLLED_BACK));
	bind_text(st, 4, nt_step_result_name(NT_STEP_REVERTED));
	bind_text(st, 5, nt_step_result_name(NT_STEP_RESTORED));
	sqlite3_bind_int(st, 6, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *iface = (const char *)sqlite3_column_text(st, 3);
		json_t *o = json_pack("{s:I, s:s, s:s}", "transaction", (json_int_t)sqlite3_column_int64(st, 0),
				      "kind", (const char *)sqlite3_column_text(st, 1), "target",
				      (const char *)sqlite3_column_text(st, 2));
		if (o && iface && iface[0])
			json_object_set_new(o, "interface", json_string(iface));
		if (!o || json_array_append_new(arr, o) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (rc == SQLITE_DONE) {
		*out = arr;
		arr = NULL;
		r = 0;
	}
out:
	sqlite3_finalize(st);
	json_decref(arr);
	return r;
}

/* ---- the public, serialised entry points ---- */

int nt_store_txn_create_rows(nt_store *s, const json_t *txn, const nt_store_step_row *steps, int n,
			     const char *idem_key, int64_t *id)
{
	return STORE_LOCKED(s, txn_create_locked(s, txn, steps, n, idem_key, id));
}

int nt_store_txn_create(nt_store *s, const json_t *txn, const json_t *steps, const char *idem_key,
			int64_t *id)
{
	size_t n = json_array_size(steps), i;
	nt_store_step_row *rows = calloc(n + 1, sizeof(*rows));
	json_t *step;
	if (!rows)
		return -ENOMEM;
	/* Pointers into STEPS, which outlives the call. */
	json_array_foreach(steps, i, step) {
		rows[i].idx = (int)i;
		rows[i].kind = json_string_value(json_object_get(step, "kind"));
		rows[i].target = json_string_value(json_object_get(step, "target"));
		rows[i].interface = json_string_value(json_object_get(step, "interface"));
		rows[i].before = json_string_value(json_object_get(step, "before"));
		rows[i].after = json_string_value(json_object_get(step, "after"));
	}
	int r = nt_store_txn_create_rows(s, txn, rows, (int)n, idem_key, id);
	free(rows);
	return r;
}

int nt_store_txn_set_status(nt_store *s, int64_t id, const char *status, const char *error,
			    int failed_step, bool finished, int64_t deadline_ms)
{
	pthread_mutex_lock(&s->mu);
	int r = txn_set_status_locked(s, id, status, error, failed_step, finished, deadline_ms);
	if (r < 0)
		snprintf(s->err, sizeof(s->err), "%s", sqlite3_errmsg(s->db));
	pthread_mutex_unlock(&s->mu);
	return r;
}

static int stage_locked(nt_store *s, int64_t id, const nt_store_step_rec *recs, int n,
			const char *status, const char *error, int failed_step, bool finished,
			int64_t deadline_ms)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;

	if (exec(s, "BEGIN IMMEDIATE") < 0)
		return NT_ESTORE;
	if (n > 0 && prep(s, &st, "UPDATE steps SET result = ?, error = ?,"
			  " observed = COALESCE(?, observed) WHERE txn_id = ? AND idx = ?") < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		sqlite3_reset(st);
		bind_static(st, 1, recs[i].result);
		bind_static(st, 2, recs[i].error);
		bind_static(st, 3, recs[i].observed);
		sqlite3_bind_int64(st, 4, id);
		sqlite3_bind_int(st, 5, recs[i].idx);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto out;
		if (!sqlite3_changes(s->db)) {
			r = -ENOENT;
			goto out;
		}
	}
	if (status &&
	    (r = txn_set_status_locked(s, id, status, error, failed_step, finished, deadline_ms)) < 0)
		goto out;
	r = exec(s, "COMMIT");
out:
	sqlite3_finalize(st);
	if (r < 0)
		rollback(s);
	return r;
}

int nt_store_txn_stage(nt_store *s, int64_t id, const nt_store_step_rec *recs, int n,
		       const char *status, const char *error, int failed_step, bool finished,
		       int64_t deadline_ms)
{
	return STORE_LOCKED(s, stage_locked(s, id, recs, n, status, error, failed_step, finished, deadline_ms));
}

int nt_store_txn_get(nt_store *s, int64_t id, json_t **out)
{
	return STORE_LOCKED(s, txn_get_locked(s, id, false, false, out));
}

int nt_store_txn_get_lean(nt_store *s, int64_t id, bool failed, json_t **out)
{
	return STORE_LOCKED(s, txn_get_locked(s, id, true, failed, out));
}

int nt_store_txn_steps(nt_store *s, int64_t id, char *status, size_t statussize,
		       nt_store_step_fn fn, void *arg)
{
	return STORE_LOCKED(s, txn_steps_locked(s, id, status, statussize, fn, arg));
}

int nt_store_txn_list(nt_store *s, const char *status, int limit, int offset, json_t **out,
		      int64_t *total)
{
	return STORE_LOCKED(s, txn_list_locked(s, status, limit, offset, out, total));
}

int nt_store_txn_ids(nt_store *s, const char *status, json_t **out)
{
	return STORE_LOCKED(s, txn_ids_locked(s, status, out));
}

int nt_store_unmended(nt_store *s, int limit, json_t **out)
{
	return STORE_LOCKED(s, unmended_locked(s, limit, out));
}

int nt_store_later_conflict(nt_store *s, int64_t id, int64_t *later)
{
	return STORE_LOCKED(s, later_conflict_locked(s, id, later));
}

static int txn_stats_locked(nt_store *s, json_t **counts, int64_t *last_apply_ms)
{
	sqlite3_stmt *st = NULL;
	json_t *obj = json_object();
	int r = NT_ESTORE, rc;
	char took_effect[256], sql[256];

	*counts = NULL;
	*last_apply_ms = 0;
	if (!obj)
		return -ENOMEM;
	if (prep(s, &st, "SELECT status, count(*) FROM transactions GROUP BY status") < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *status = (const char *)sqlite3_column_text(st, 0);
		if (status)
			json_object_set_new(obj, status, json_integer(sqlite3_column_int64(st, 1)));
	}
	if (rc != SQLITE_DONE)
		goto out;
	sqlite3_finalize(st);
	st = NULL;
	status_list(nt_txn_status_took_effect, took_effect, sizeof(took_effect));
	snprintf(sql, sizeof(sql), "SELECT max(coalesce(finished_ms, created_ms)) FROM transactions"
		 " WHERE status IN %s", took_effect);
	if (prep(s, &st, sql) < 0)
		goto out;
	if (sqlite3_step(st) != SQLITE_ROW)
		goto out;
	*last_apply_ms = sqlite3_column_int64(st, 0); /* NULL reads as 0 */
	*counts = obj;
	obj = NULL;
	r = 0;
out:
	json_decref(obj);
	sqlite3_finalize(st);
	return r;
}

int nt_store_txn_stats(nt_store *s, json_t **counts, int64_t *last_apply_ms)
{
	return STORE_LOCKED(s, txn_stats_locked(s, counts, last_apply_ms));
}

static int oldest_created_locked(nt_store *s, const char *status, int64_t *ms)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;
	*ms = 0;
	if (prep(s, &st, "SELECT min(created_ms) FROM transactions WHERE status = ?") < 0)
		goto out;
	bind_text(st, 1, status);
	if (sqlite3_step(st) != SQLITE_ROW)
		goto out;
	*ms = sqlite3_column_int64(st, 0); /* NULL (none) reads as 0 */
	r = 0;
out:
	sqlite3_finalize(st);
	return r;
}

int nt_store_txn_oldest_created(nt_store *s, const char *status, int64_t *ms)
{
	return STORE_LOCKED(s, oldest_created_locked(s, status, ms));
}

static int set_delivery_locked(nt_store *s, int64_t id, const json_t *summary, const nt_store_step_rec *recs,
			       int n)
{
	sqlite3_stmt *st = NULL;
	char *text = json_dumps(summary, JSON_COMPACT);
	int r = NT_ESTORE;

	if (!text)
		return -ENOMEM;
	if (exec(s, "BEGIN IMMEDIATE") < 0) {
		free(text);
		return NT_ESTORE;
	}
	if (prep(s, &st, "UPDATE transactions SET delivery = ? WHERE id = ?") < 0)
		goto out;
	bind_static(st, 1, text);
	sqlite3_bind_int64(st, 2, id);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto out;
	if (!sqlite3_changes(s->db)) {
		r = -ENOENT;
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (n > 0 && prep(s, &st, "UPDATE steps SET observed = ? WHERE txn_id = ? AND idx = ?") < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		sqlite3_reset(st);
		bind_static(st, 1, recs[i].observed);
		sqlite3_bind_int64(st, 2, id);
		sqlite3_bind_int(st, 3, recs[i].idx);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto out;
	}
	r = exec(s, "COMMIT");
out:
	sqlite3_finalize(st);
	free(text);
	if (r < 0)
		rollback(s);
	return r;
}

int nt_store_txn_set_delivery(nt_store *s, int64_t id, const json_t *summary, const nt_store_step_rec *recs,
			      int n)
{
	return STORE_LOCKED(s, set_delivery_locked(s, id, summary, recs, n));
}
