/* SPDX-License-Identifier: Apache-2.0 */
/* The desired state: the one profile the agent holds the host to, every
 * change of it, and who last changed a target. */
#include "store/store_int.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>

/* ---- the desired state ---- */

/* Binds the six columns from FIRST on that say where a desired state came
 * from, in the order both tables keep them: profile_name, source, txn_id,
 * client, identity, and now as the time. */
static void bind_origin(sqlite3_stmt *st, int first, const json_t *d)
{
	const char *client = json_string_value(json_object_get(d, "client"));
	const char *identity = json_string_value(json_object_get(d, "identity"));
	json_t *x = json_object_get(d, "txn_id");
	bind_text(st, first, json_string_value(json_object_get(d, "profile_name")));
	bind_text(st, first + 1, json_string_value(json_object_get(d, "source")));
	if (json_is_integer(x))
		sqlite3_bind_int64(st, first + 2, json_integer_value(x));
	bind_text(st, first + 3, client ? client : "");
	bind_text(st, first + 4, identity ? identity : "");
	sqlite3_bind_int64(st, first + 5, nt_store_now_ms());
}

static int desired_event(nt_store *s, const char *action, const json_t *d)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;
	if (prep(s, &st, "INSERT INTO desired_events (action, profile_name, source, txn_id, client,"
		 " identity, at_ms) VALUES (?,?,?,?,?,?,?)") < 0)
		goto out;
	bind_text(st, 1, action);
	bind_origin(st, 2, d);
	if (sqlite3_step(st) == SQLITE_DONE)
		r = 0;
out:
	sqlite3_finalize(st);
	return r;
}

static int desired_set_locked(nt_store *s, const json_t *d)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;

	if (exec(s, "BEGIN IMMEDIATE") < 0)
		return NT_ESTORE;
	if (prep(s, &st, "INSERT OR REPLACE INTO desired (id, profile, profile_name, source, txn_id,"
		 " client, identity, set_ms) VALUES (1,?,?,?,?,?,?,?)") < 0)
		goto out;
	bind_json(st, 1, json_object_get(d, "profile"));
	bind_origin(st, 2, d);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto out;
	if (desired_event(s, "set", d) < 0)
		goto out;
	if (exec(s, "COMMIT") == 0)
		r = 0;
out:
	sqlite3_finalize(st);
	if (r < 0)
		rollback(s);
	return r;
}

static int desired_get_locked(nt_store *s, json_t **out)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE, rc;
	*out = NULL;
	if (prep(s, &st, "SELECT profile, profile_name, source, txn_id, client, identity, set_ms"
		 " FROM desired WHERE id = 1") < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		r = -ENOENT;
	} else if (rc == SQLITE_ROW) {
		*out = json_object();
		if (!*out) {
			r = -ENOMEM;
			goto out;
		}
		json_object_set_new(*out, "profile", col_json(st, 0));
		json_object_set_new(*out, "profile_name", text_or_null(st, 1));
		json_object_set_new(*out, "source", text_or_null(st, 2));
		json_object_set_new(*out, "txn_id", int_or_null(st, 3));
		json_object_set_new(*out, "client", text_or_null(st, 4));
		json_object_set_new(*out, "identity", text_or_null(st, 5));
		json_object_set_new(*out, "set", time_json(st, 6));
		json_object_set_new(*out, "set_ms", json_integer(sqlite3_column_int64(st, 6)));
		r = 0;
	}
out:
	sqlite3_finalize(st);
	return r;
}

static int desired_clear_locked(nt_store *s, const char *client, const char *identity)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;
	json_t *prev = NULL;

	if (exec(s, "BEGIN IMMEDIATE") < 0)
		return NT_ESTORE;
	if ((r = desired_get_locked(s, &prev)) < 0)
		goto out;
	r = NT_ESTORE;
	if (prep(s, &st, "DELETE FROM desired WHERE id = 1") < 0 || sqlite3_step(st) != SQLITE_DONE)
		goto out;
	json_t *ev = json_pack("{s:O,s:s,s:s,s:s}", "profile_name",
			       json_object_get(prev, "profile_name"), "source", "api", "client",
			       client ? client : "", "identity", identity ? identity : "");
	int er = ev ? desired_event(s, "cleared", ev) : -ENOMEM;
	json_decref(ev);
	if (er < 0)
		goto out;
	if (exec(s, "COMMIT") == 0)
		r = 0;
out:
	json_decref(prev);
	sqlite3_finalize(st);
	if (r < 0)
		rollback(s);
	return r;
}

static json_t *event_row(sqlite3_stmt *st)
{
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "action", text_or_null(st, 0),
			 "profile_name", text_or_null(st, 1), "source", text_or_null(st, 2), "txn_id",
			 int_or_null(st, 3), "client", text_or_null(st, 4), "identity",
			 text_or_null(st, 5), "at", time_json(st, 6));
}

static int desired_events_locked(nt_store *s, int limit, json_t **out)
{
	sqlite3_stmt *st = NULL;
	if (prep(s, &st, "SELECT action, profile_name, source, txn_id, client, identity, at_ms"
		 " FROM desired_events ORDER BY id DESC LIMIT ?") == 0)
		sqlite3_bind_int(st, 1, limit);
	return rows_array(st, event_row, out);
}

/* Ordered by the step's txn_id, not the joined transaction's id (the same
 * value): SQLite then walks the target's index entries newest first and
 * stops at the first applied one, rather than sorting them all. */
static int last_change_locked(nt_store *s, const char *kind, const char *target, json_t **out)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE, rc;
	*out = NULL;
	if (prep(s, &st, "SELECT t.id, t.reason, t.client, t.identity, t.persist,"
		 " COALESCE(t.finished_ms, t.created_ms)"
		 " FROM steps s JOIN transactions t ON t.id = s.txn_id"
		 " WHERE s.kind = ? AND s.target = ? AND s.result = 'applied'"
		 " ORDER BY s.txn_id DESC LIMIT 1") < 0)
		goto out;
	bind_text(st, 1, kind);
	bind_text(st, 2, target);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		r = -ENOENT;
	} else if (rc == SQLITE_ROW) {
		*out = json_pack("{s:I,s:o,s:o,s:o,s:b,s:I}", "txn",
				 (json_int_t)sqlite3_column_int64(st, 0), "reason", text_or_null(st, 1),
				 "client", text_or_null(st, 2), "identity", text_or_null(st, 3),
				 "persist", sqlite3_column_int(st, 4), "at_ms",
				 (json_int_t)sqlite3_column_int64(st, 5));
		r = *out ? 0 : -ENOMEM;
	}
out:
	sqlite3_finalize(st);
	return r;
}

int nt_store_desired_set(nt_store *s, const json_t *desired)
{
	return STORE_LOCKED(s, desired_set_locked(s, desired));
}

int nt_store_desired_get(nt_store *s, json_t **out)
{
	return STORE_LOCKED(s, desired_get_locked(s, out));
}

int nt_store_desired_clear(nt_store *s, const char *client, const char *identity)
{
	return STORE_LOCKED(s, desired_clear_locked(s, client, identity));
}

int nt_store_desired_events(nt_store *s, int limit, json_t **out)
{
	return STORE_LOCKED(s, desired_events_locked(s, limit, out));
}

int nt_store_last_change(nt_store *s, const char *kind, const char *target, json_t **out)
{
	return STORE_LOCKED(s, last_change_locked(s, kind, target, out));
}
