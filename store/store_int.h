/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the store: the handle and the SQL helpers its files share.
 * Private to store/: everyone else uses store/store.h.
 *
 *   store/store.c          the schema and its migrations, open and close,
 *                          the clock, error messages, memory
 *   store/store_txn.c      transactions and their steps: the journal, the
 *                          history, the later-conflict check, statistics
 *   store/store_idem.c     idempotency keys
 *   store/store_profile.c  stored profiles
 *   store/store_desired.c  the desired state, its events, a target's last
 *                          change
 *   store/store_prune.c    cutting the history to its length
 *
 * A file's public entry points hold the handle's lock (MU) for their
 * whole run, most of them around a static FOO_locked function that does
 * the work. */
#ifndef NT_STORE_INT_H
#define NT_STORE_INT_H

#include "store/store.h"
#include "store/status.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* One connection shared by the HTTP threads and the engine. SQLite's own
 * serialized mode makes single calls safe, but a BEGIN IMMEDIATE .. COMMIT
 * spans many calls, so every public function holds MU for its whole run. */
struct nt_store {
	sqlite3 *db;
	pthread_mutex_t mu;
	char err[256]; /* why the last write was rolled back */
};

/* CALL made holding the store's mutex: what every public entry point of
 * the store is (the _locked function beside it does the work). A GNU
 * statement expression, as the build enables (CMAKE_C_EXTENSIONS). */
#define STORE_LOCKED(s, call)                  \
	({                                     \
		pthread_mutex_lock(&(s)->mu);  \
		int locked_r_ = (call);        \
		pthread_mutex_unlock(&(s)->mu); \
		locked_r_;                     \
	})

/* A failure's message is kept in s->err at once: a statement finalized
 * after it (its own last step went well) sets the connection's error back
 * to "not an error". */
static inline int exec(nt_store *s, const char *sql)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	snprintf(s->err, sizeof(s->err), "%s", sqlite3_errmsg(s->db));
	return NT_ESTORE;
}

/* Roll back a failed write, keeping why it failed for nt_store_errmsg.
 * Only while a transaction is still open: after some errors (a full disk,
 * SQLITE_FULL; an I/O error) SQLite has already rolled it back, and a
 * ROLLBACK then fails with "cannot rollback - no transaction is active",
 * which would replace the real reason. */
static inline void rollback(nt_store *s)
{
	if (sqlite3_errcode(s->db) != SQLITE_OK)
		snprintf(s->err, sizeof(s->err), "%s", sqlite3_errmsg(s->db));
	if (!sqlite3_get_autocommit(s->db)) {
		char why[sizeof(s->err)];
		snprintf(why, sizeof(why), "%s", s->err);
		exec(s, "ROLLBACK");
		snprintf(s->err, sizeof(s->err), "%s", why);
	}
}

/* ---- helpers ---- */

static inline int prep(nt_store *s, sqlite3_stmt **st, const char *sql)
{
	return sqlite3_prepare_v2(s->db, sql, -1, st, NULL) == SQLITE_OK ? 0 : NT_ESTORE;
}

static inline void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Bind V without a copy: for the per-step statements, whose strings (the
 * caller's steps and records) outlive the statement. */
static inline void bind_static(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static inline void bind_json(sqlite3_stmt *st, int i, const json_t *v)
{
	if (!v || json_is_null(v)) {
		sqlite3_bind_null(st, i);
		return;
	}
	char *txt = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (txt)
		sqlite3_bind_text(st, i, txt, -1, free);
	else
		sqlite3_bind_null(st, i);
}

static inline const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static inline json_t *col_json(sqlite3_stmt *st, int i)
{
	const char *t = col_text(st, i);
	json_t *v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
	return v ? v : json_null();
}

static inline json_t *time_json(sqlite3_stmt *st, int i)
{
	char buf[40];
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	nt_store_rfc3339(sqlite3_column_int64(st, i), buf, sizeof(buf));
	return json_string(buf);
}

static inline json_t *int_or_null(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	return json_integer(sqlite3_column_int64(st, i));
}

static inline json_t *text_or_null(sqlite3_stmt *st, int i)
{
	const char *t = col_text(st, i);
	return t ? json_string(t) : json_null();
}

/* One row of a query as a JSON value (a new reference), or NULL when it
 * cannot be made. */
typedef json_t *(*nt_store_row_fn)(sqlite3_stmt *st);

/* Steps ST (prepared and bound; NULL when its prepare failed) to its end
 * and puts the array of ROW's value for each row in *OUT. Finalizes ST.
 * Returns 0, -ENOMEM when the array cannot be made, or NT_ESTORE (a
 * failed prepare or step, or a row ROW could not make). Every listing of
 * the store goes through here, so each keeps only its query and its row. */
static inline int rows_array(sqlite3_stmt *st, nt_store_row_fn row, json_t **out)
{
	json_t *arr = json_array();
	int r = NT_ESTORE, rc;
	*out = NULL;
	if (!arr) {
		r = -ENOMEM;
		goto out;
	}
	if (!st)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = row(st);
		if (!o || json_array_append_new(arr, o) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE)
		goto out;
	*out = arr;
	arr = NULL;
	r = 0;
out:
	json_decref(arr);
	sqlite3_finalize(st);
	return r;
}

/* "('applied','pending_confirm')": the statuses for which WANT holds, as
 * an SQL list, so queries filter on the one table in store/status.c. The
 * names are ours, never a client's, so quoting them inline is safe. */
static inline void status_list(bool (*want)(nt_txn_status), char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "(");
	for (int i = 0; i < NT_TXN_NSTATUS && n < size; i++)
		if (want((nt_txn_status)i))
			n += (size_t)snprintf(buf + n, size - n, "%s'%s'", n > 1 ? "," : "",
					      nt_txn_status_name((nt_txn_status)i));
	if (n < size)
		snprintf(buf + n, size - n, ")");
}

#endif
