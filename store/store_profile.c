/* SPDX-License-Identifier: Apache-2.0 */
/* Stored profiles, by name. */
#include "store/store_int.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>

/* ---- profiles ---- */

static int profile_put_locked(nt_store *s, const char *name, const json_t *profile, bool *created)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;
	int64_t now = nt_store_now_ms();

	if (exec(s, "BEGIN IMMEDIATE") < 0)
		return NT_ESTORE;
	if (prep(s, &st, "SELECT 1 FROM profiles WHERE name = ?") < 0)
		goto out;
	bind_text(st, 1, name);
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		goto out;
	*created = rc == SQLITE_DONE;
	sqlite3_finalize(st);
	st = NULL;
	if (prep(s, &st, "INSERT INTO profiles (name, body, created_ms, updated_ms) VALUES (?,?,?,?)"
		 " ON CONFLICT(name) DO UPDATE SET body = excluded.body,"
		 " updated_ms = excluded.updated_ms") < 0)
		goto out;
	bind_text(st, 1, name);
	bind_json(st, 2, profile);
	sqlite3_bind_int64(st, 3, now);
	sqlite3_bind_int64(st, 4, now);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto out;
	if (exec(s, "COMMIT") == 0)
		r = 0;
out:
	sqlite3_finalize(st);
	if (r < 0)
		rollback(s);
	return r;
}

static int profile_get_locked(nt_store *s, const char *name, json_t **out)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE, rc;
	*out = NULL;
	if (prep(s, &st, "SELECT body FROM profiles WHERE name = ?") < 0)
		goto out;
	bind_text(st, 1, name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		r = -ENOENT;
	} else if (rc == SQLITE_ROW) {
		json_t *v = col_json(st, 0);
		if (json_is_object(v)) {
			*out = v;
			r = 0;
		} else {
			json_decref(v);
		}
	}
out:
	sqlite3_finalize(st);
	return r;
}

static int profile_delete_locked(nt_store *s, const char *name)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;
	if (prep(s, &st, "DELETE FROM profiles WHERE name = ?") < 0)
		goto out;
	bind_text(st, 1, name);
	if (sqlite3_step(st) == SQLITE_DONE)
		r = sqlite3_changes(s->db) ? 0 : -ENOENT;
out:
	sqlite3_finalize(st);
	return r;
}

static json_t *profile_row(sqlite3_stmt *st)
{
	json_t *body = col_json(st, 1);
	json_t *desc = json_object_get(body, "description");
	json_t *o = json_pack("{s:s,s:O,s:o,s:o}", "name", col_text(st, 0), "description",
			      json_is_string(desc) ? desc : json_null(), "created", time_json(st, 2),
			      "updated", time_json(st, 3));
	json_decref(body);
	return o;
}

static int profile_list_locked(nt_store *s, json_t **out)
{
	sqlite3_stmt *st = NULL;
	prep(s, &st, "SELECT name, body, created_ms, updated_ms FROM profiles ORDER BY name");
	return rows_array(st, profile_row, out);
}

/* ---- the public, serialised entry points ---- */

int nt_store_profile_put(nt_store *s, const char *name, const json_t *profile, bool *created)
{
	return STORE_LOCKED(s, profile_put_locked(s, name, profile, created));
}

int nt_store_profile_get(nt_store *s, const char *name, json_t **out)
{
	return STORE_LOCKED(s, profile_get_locked(s, name, out));
}

int nt_store_profile_delete(nt_store *s, const char *name)
{
	return STORE_LOCKED(s, profile_delete_locked(s, name));
}

int nt_store_profile_list(nt_store *s, json_t **out)
{
	return STORE_LOCKED(s, profile_list_locked(s, out));
}
