#include "store/store.h"
#include "store/status.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One connection shared by the HTTP threads and the engine. SQLite's own
 * serialized mode makes single calls safe, but a BEGIN IMMEDIATE .. COMMIT
 * spans many calls, so every public function holds MU for its whole run. */
struct nt_store {
	sqlite3 *db;
	pthread_mutex_t mu;
	char err[256]; /* why the last write was rolled back */
};

/* Migration N takes the schema from version N to N+1. Append, never edit:
 * a database in the field is at some version and runs the rest. */
static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE transactions ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" status TEXT NOT NULL,"
	" profile TEXT,"
	" profile_name TEXT,"
	" client TEXT NOT NULL DEFAULT '',"
	" identity TEXT NOT NULL DEFAULT '',"
	" created_ms INTEGER NOT NULL,"
	" finished_ms INTEGER,"
	" error TEXT,"
	" failed_step INTEGER,"
	" confirm_timeout_s INTEGER,"
	" confirm_deadline_ms INTEGER,"
	" rollback_of INTEGER REFERENCES transactions(id),"
	" warnings TEXT);"
	"CREATE INDEX transactions_status ON transactions(status, id);"
	"CREATE TABLE steps ("
	" txn_id INTEGER NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,"
	" idx INTEGER NOT NULL,"
	" kind TEXT NOT NULL,"
	" target TEXT NOT NULL,"
	" interface TEXT NOT NULL DEFAULT '',"
	" before TEXT NOT NULL,"
	" after TEXT NOT NULL,"
	" result TEXT NOT NULL DEFAULT 'pending',"
	" error TEXT,"
	" PRIMARY KEY (txn_id, idx));"
	"CREATE INDEX steps_target ON steps(kind, target);"
	"CREATE TABLE profiles ("
	" name TEXT PRIMARY KEY,"
	" body TEXT NOT NULL,"
	" created_ms INTEGER NOT NULL,"
	" updated_ms INTEGER NOT NULL);"
	"CREATE TABLE idempotency_keys ("
	" key TEXT PRIMARY KEY,"
	" txn_id INTEGER NOT NULL REFERENCES transactions(id) ON DELETE CASCADE,"
	" created_ms INTEGER NOT NULL);",
	/* 1 -> 2: the CPUs reserve_app_cpus kept for the application, as JSON
	 * {interface: cpulist}. */
	"ALTER TABLE transactions ADD COLUMN reserved TEXT;",
	/* 2 -> 3: what a step's target showed after it was applied, beyond
	 * its value (the effective CPU of an IRQ). */
	"ALTER TABLE steps ADD COLUMN observed TEXT;",
	/* 3 -> 4: the desired state. A transaction's reason ("boot", "drift",
	 * "link-up"; NULL for a client's apply) and whether it makes its
	 * profile the desired one once it took effect (persist). The one
	 * desired profile (row id 1) and every change of it (set, cleared). */
	"ALTER TABLE transactions ADD COLUMN reason TEXT;"
	"ALTER TABLE transactions ADD COLUMN persist INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE desired ("
	" id INTEGER PRIMARY KEY CHECK (id = 1),"
	" profile TEXT NOT NULL,"
	" profile_name TEXT,"
	" source TEXT NOT NULL,"
	" txn_id INTEGER,"
	" client TEXT NOT NULL DEFAULT '',"
	" identity TEXT NOT NULL DEFAULT '',"
	" set_ms INTEGER NOT NULL);"
	"CREATE TABLE desired_events ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" action TEXT NOT NULL,"
	" profile_name TEXT,"
	" source TEXT,"
	" txn_id INTEGER,"
	" client TEXT NOT NULL DEFAULT '',"
	" identity TEXT NOT NULL DEFAULT '',"
	" at_ms INTEGER NOT NULL);",
	/* 4 -> 5: a target's steps in txn_id order: the later-conflict check
	 * of a rollback drives from the rolled-back transaction's own steps
	 * and finds later ones on each target by a range on txn_id, and the
	 * last change of a target reads its newest step first. Its first two
	 * columns serve whatever steps_target did, so that one goes: each
	 * step row keeps one entry in an index by target. */
	"CREATE INDEX steps_target_txn ON steps(kind, target, txn_id);"
	"DROP INDEX steps_target;",
};
#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))
_Static_assert(NMIGRATIONS == NT_STORE_SCHEMA_VERSION, "one migration per schema version");

int64_t nt_store_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void nt_store_rfc3339(int64_t ms, char *buf, size_t size)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&sec, &tm);
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

const char *nt_store_errmsg(nt_store *s)
{
	if (!s || !s->db)
		return "no database";
	/* A failed write is rolled back, and the ROLLBACK's success would
	 * read "not an error": the failure is what the caller asks about. */
	if (sqlite3_errcode(s->db) == SQLITE_OK && s->err[0])
		return s->err;
	return sqlite3_errmsg(s->db);
}

static int exec(nt_store *s, const char *sql)
{
	return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : NT_ESTORE;
}

/* Roll back a failed write, keeping why it failed for nt_store_errmsg. */
static void rollback(nt_store *s)
{
	snprintf(s->err, sizeof(s->err), "%s", sqlite3_errmsg(s->db));
	exec(s, "ROLLBACK");
}

int nt_store_schema_version(nt_store *s)
{
	sqlite3_stmt *st = NULL;
	int v = NT_ESTORE;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int migrate(nt_store *s, char *err, size_t errsize)
{
	char sql[64];
	int v = nt_store_schema_version(s);
	if (v < 0)
		goto fail;
	if (v > NT_STORE_SCHEMA_VERSION) {
		snprintf(err, errsize, "database schema %d is newer than this nettune (%d)", v,
			 NT_STORE_SCHEMA_VERSION);
		return NT_ESTORE;
	}
	for (; v < NMIGRATIONS; v++) {
		if (exec(s, "BEGIN IMMEDIATE") < 0)
			goto fail;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
		if (exec(s, migrations[v]) < 0 || exec(s, sql) < 0) {
			snprintf(err, errsize, "migration to schema %d: %s", v + 1, sqlite3_errmsg(s->db));
			rollback(s);
			return NT_ESTORE;
		}
		if (exec(s, "COMMIT") < 0)
			goto fail;
	}
	return 0;
fail:
	snprintf(err, errsize, "%s", sqlite3_errmsg(s->db));
	return NT_ESTORE;
}

int nt_store_open(const char *path, nt_store **out, char *err, size_t errsize)
{
	nt_store *s = calloc(1, sizeof(*s));
	int r = NT_ESTORE;

	*out = NULL;
	if (!s) {
		snprintf(err, errsize, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&s->mu, NULL);
	if (sqlite3_open_v2(path, &s->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		snprintf(err, errsize, "%s: %s", path, s->db ? sqlite3_errmsg(s->db) : "cannot open");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	/* journal_mode answers with the mode it got; a database that cannot
	 * be read at all (not a database, unreadable) fails here. */
	sqlite3_stmt *st = NULL;
	bool wal = false;
	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		wal = strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0;
	sqlite3_finalize(st);
	if (!wal) {
		snprintf(err, errsize, "%s: cannot use WAL mode: %s", path, sqlite3_errmsg(s->db));
		goto fail;
	}
	if (exec(s, "PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL") < 0) {
		snprintf(err, errsize, "%s: %s", path, sqlite3_errmsg(s->db));
		goto fail;
	}
	if ((r = migrate(s, err, errsize)) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	nt_store_close(s);
	return r < 0 ? r : NT_ESTORE;
}

void nt_store_close(nt_store *s)
{
	if (!s)
		return;
	sqlite3_close_v2(s->db);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* ---- helpers ---- */

static int prep(nt_store *s, sqlite3_stmt **st, const char *sql)
{
	return sqlite3_prepare_v2(s->db, sql, -1, st, NULL) == SQLITE_OK ? 0 : NT_ESTORE;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Bind V without a copy: for the per-step statements, whose strings (the
 * caller's steps and records) outlive the statement. */
static void bind_static(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static void bind_json(sqlite3_stmt *st, int i, const json_t *v)
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

static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static json_t *col_json(sqlite3_stmt *st, int i)
{
	const char *t = col_text(st, i);
	json_t *v = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
	return v ? v : json_null();
}

static json_t *time_json(sqlite3_stmt *st, int i)
{
	char buf[40];
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	nt_store_rfc3339(sqlite3_column_int64(st, i), buf, sizeof(buf));
	return json_string(buf);
}

static json_t *int_or_null(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	return json_integer(sqlite3_column_int64(st, i));
}

static json_t *text_or_null(sqlite3_stmt *st, int i)
{
	const char *t = col_text(st, i);
	return t ? json_string(t) : json_null();
}

/* "('applied','pending_confirm')": the statuses for which WANT holds, as
 * an SQL list, so queries filter on the one table in store/status.c. The
 * names are ours, never a client's, so quoting them inline is safe. */
static void status_list(bool (*want)(nt_txn_status), char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "(");
	for (int i = 0; i < NT_TXN_NSTATUS && n < size; i++)
		if (want((nt_txn_status)i))
			n += (size_t)snprintf(buf + n, size - n, "%s'%s'", n > 1 ? "," : "",
					      nt_txn_status_name((nt_txn_status)i));
	if (n < size)
		snprintf(buf + n, size - n, ")");
}

/* ---- transactions ---- */

static int txn_create_locked(nt_store *s, const json_t *txn, const json_t *steps, const char *idem_key,
			int64_t *id)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;
	int64_t now = nt_store_now_ms();
	size_t i;
	json_t *step;

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
	json_array_foreach(steps, i, step) {
		const char *iface = json_string_value(json_object_get(step, "interface"));
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, *id);
		sqlite3_bind_int(st, 2, (int)i);
		bind_static(st, 3, json_string_value(json_object_get(step, "kind")));
		bind_static(st, 4, json_string_value(json_object_get(step, "target")));
		bind_static(st, 5, iface ? iface : "");
		bind_static(st, 6, json_string_value(json_object_get(step, "before")));
		bind_static(st, 7, json_string_value(json_object_get(step, "after")));
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
	" reserved, reason, persist"

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
	return o;
}

/* Set KEY of O to column I's text, which must not be NULL. */
static int set_col_text(json_t *o, const char *key, sqlite3_stmt *st, int i)
{
	const char *t = col_text(st, i);
	return t ? json_object_set_new(o, key, json_string(t)) : -1;
}

static int load_steps(nt_store *s, int64_t id, json_t *doc)
{
	sqlite3_stmt *st = NULL;
	json_t *steps = json_array();
	int r = NT_ESTORE, rc;
	if (!steps)
		return -ENOMEM;
	if (prep(s, &st, "SELECT idx, kind, target, interface, before, after, result, error, observed"
		 " FROM steps WHERE txn_id = ? ORDER BY idx") < 0)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* Set key by key, not json_pack: a reply reads back a thousand
		 * steps, and parsing the format for each one showed in profiles. */
		json_t *o = json_object();
		const char *iface = col_text(st, 3);
		if (!o || json_array_append_new(steps, o) < 0 ||
		    json_object_set_new(o, "index", json_integer(sqlite3_column_int(st, 0))) < 0 ||
		    set_col_text(o, "kind", st, 1) < 0 || set_col_text(o, "target", st, 2) < 0 ||
		    set_col_text(o, "before", st, 4) < 0 || set_col_text(o, "after", st, 5) < 0 ||
		    set_col_text(o, "result", st, 6) < 0 ||
		    json_object_set_new(o, "error", text_or_null(st, 7)) < 0 ||
		    (iface && iface[0] && set_col_text(o, "interface", st, 3) < 0) ||
		    json_object_set_new(o, "observed", text_or_null(st, 8)) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE)
		goto out;
	json_object_set(doc, "steps", steps);
	r = 0;
out:
	json_decref(steps);
	sqlite3_finalize(st);
	return r;
}

static int txn_get_locked(nt_store *s, int64_t id, json_t **out)
{
	sqlite3_stmt *st = NULL;
	json_t *doc = NULL;
	int r = NT_ESTORE, rc;

	*out = NULL;
	if (prep(s, &st, "SELECT " TXN_COLS " FROM transactions WHERE id = ?") < 0)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		r = -ENOENT;
		goto out;
	}
	if (rc != SQLITE_ROW || !(doc = txn_row(st)))
		goto out;
	if ((r = load_steps(s, id, doc)) < 0)
		goto out;
	*out = doc;
	doc = NULL;
out:
	json_decref(doc);
	sqlite3_finalize(st);
	return r;
}

static int txn_list_locked(nt_store *s, const char *status, int limit, int offset, json_t **out,
		      int64_t *total)
{
	sqlite3_stmt *st = NULL;
	json_t *arr = json_array();
	int r = NT_ESTORE, rc;

	*out = NULL;
	if (!arr)
		return -ENOMEM;
	if (prep(s, &st, "SELECT count(*) FROM transactions WHERE ?1 IS NULL OR status = ?1") < 0)
		goto out;
	bind_text(st, 1, status);
	if (sqlite3_step(st) != SQLITE_ROW)
		goto out;
	*total = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (prep(s, &st, "SELECT " TXN_COLS ", (SELECT count(*) FROM steps WHERE txn_id = id)"
		 " FROM transactions WHERE ?1 IS NULL OR status = ?1"
		 " ORDER BY id DESC LIMIT ?2 OFFSET ?3") < 0)
		goto out;
	bind_text(st, 1, status);
	sqlite3_bind_int(st, 2, limit);
	sqlite3_bind_int(st, 3, offset);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = txn_row(st);
		if (!o)
			goto out;
		json_object_set_new(o, "nsteps", json_integer(sqlite3_column_int(st, 17)));
		json_array_append_new(arr, o);
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

static int txn_ids_locked(nt_store *s, const char *status, json_t **out)
{
	sqlite3_stmt *st = NULL;
	json_t *arr = json_array();
	int r = NT_ESTORE, rc;
	*out = NULL;
	if (!arr)
		return -ENOMEM;
	if (prep(s, &st, "SELECT id FROM transactions WHERE status = ? ORDER BY id") < 0)
		goto out;
	bind_text(st, 1, status);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(arr, json_integer(sqlite3_column_int64(st, 0)));
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

static int idem_get_locked(nt_store *s, const char *key, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE, rc;
	if (prep(s, &st, "SELECT txn_id FROM idempotency_keys WHERE key = ?") < 0)
		goto out;
	bind_text(st, 1, key);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		r = 0;
	} else if (rc == SQLITE_DONE) {
		r = -ENOENT;
	}
out:
	sqlite3_finalize(st);
	return r;
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

static int profile_list_locked(nt_store *s, json_t **out)
{
	sqlite3_stmt *st = NULL;
	json_t *arr = json_array();
	int r = NT_ESTORE, rc;
	*out = NULL;
	if (!arr)
		return -ENOMEM;
	if (prep(s, &st, "SELECT name, body, created_ms, updated_ms FROM profiles ORDER BY name") < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *body = col_json(st, 1);
		json_t *desc = json_object_get(body, "description");
		json_t *o = json_pack("{s:s,s:O,s:o,s:o}", "name", col_text(st, 0), "description",
				      json_is_string(desc) ? desc : json_null(), "created",
				      time_json(st, 2), "updated", time_json(st, 3));
		json_decref(body);
		if (!o)
			goto out;
		json_array_append_new(arr, o);
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

/* ---- the public, serialised entry points ---- */

int nt_store_txn_create(nt_store *s, const json_t *txn, const json_t *steps, const char *idem_key,
			int64_t *id)
{
	pthread_mutex_lock(&s->mu);
	int r = txn_create_locked(s, txn, steps, idem_key, id);
	pthread_mutex_unlock(&s->mu);
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
	pthread_mutex_lock(&s->mu);
	int r = stage_locked(s, id, recs, n, status, error, failed_step, finished, deadline_ms);
	pthread_mutex_unlock(&s->mu);
	return r;
}

void nt_store_release_memory(nt_store *s)
{
	pthread_mutex_lock(&s->mu);
	sqlite3_db_release_memory(s->db);
	pthread_mutex_unlock(&s->mu);
}

int64_t nt_store_cache_bytes(nt_store *s)
{
	int cur = 0, hi = 0;
	pthread_mutex_lock(&s->mu);
	int r = sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_USED, &cur, &hi, 0);
	pthread_mutex_unlock(&s->mu);
	return r == SQLITE_OK ? cur : -1;
}

int nt_store_txn_get(nt_store *s, int64_t id, json_t **out)
{
	pthread_mutex_lock(&s->mu);
	int r = txn_get_locked(s, id, out);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_txn_list(nt_store *s, const char *status, int limit, int offset, json_t **out,
		      int64_t *total)
{
	pthread_mutex_lock(&s->mu);
	int r = txn_list_locked(s, status, limit, offset, out, total);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_txn_ids(nt_store *s, const char *status, json_t **out)
{
	pthread_mutex_lock(&s->mu);
	int r = txn_ids_locked(s, status, out);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_idem_get(nt_store *s, const char *key, int64_t *id)
{
	pthread_mutex_lock(&s->mu);
	int r = idem_get_locked(s, key, id);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_idem_find(nt_store *s, const char *prefix, char *key, size_t keysize, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE, rc;

	pthread_mutex_lock(&s->mu);
	/* substr, not LIKE: keys may hold '%' and '_'. */
	if (prep(s, &st, "SELECT key, txn_id FROM idempotency_keys "
			 "WHERE substr(key, 1, length(?1)) = ?1 ORDER BY created_ms LIMIT 1") < 0)
		goto out;
	bind_text(st, 1, prefix);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		snprintf(key, keysize, "%s", k ? k : "");
		*id = sqlite3_column_int64(st, 1);
		r = 0;
	} else if (rc == SQLITE_DONE) {
		r = -ENOENT;
	}
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_later_conflict(nt_store *s, int64_t id, int64_t *later)
{
	pthread_mutex_lock(&s->mu);
	int r = later_conflict_locked(s, id, later);
	pthread_mutex_unlock(&s->mu);
	return r;
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

/* Ids grow by one per transaction (AUTOINCREMENT never reuses one), so
 * the newest KEEP are those above max(id) - KEEP: a range on the primary
 * key, with no count or sort of the table. */
static int prune_locked(nt_store *s, long keep, int *deleted)
{
	char settled[256], sql[1024];
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE, n = 0;

	status_list(nt_txn_status_settled, settled, sizeof(settled));
	snprintf(sql, sizeof(sql),
		 "DELETE FROM transactions WHERE id <= (SELECT max(id) FROM transactions) - ?1"
		 " AND status IN %s"
		 " AND id NOT IN (SELECT txn_id FROM desired WHERE txn_id IS NOT NULL)"
		 " AND id NOT IN (SELECT rollback_of FROM transactions WHERE rollback_of IS NOT NULL)",
		 settled);
	/* No fsync of its own: a cut lost to a power cut is made again by
	 * the next one, and the next journalled commit makes it durable. */
	exec(s, "PRAGMA synchronous=NORMAL");
	if (exec(s, "BEGIN IMMEDIATE") < 0)
		goto restore;
	if (prep(s, &st, sql) < 0)
		goto out;
	sqlite3_bind_int64(st, 1, keep);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto out;
	n = sqlite3_changes(s->db);
	sqlite3_finalize(st);
	st = NULL;
	if (prep(s, &st, "DELETE FROM desired_events"
		 " WHERE id <= (SELECT max(id) FROM desired_events) - ?1") < 0)
		goto out;
	sqlite3_bind_int64(st, 1, keep);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto out;
	if (exec(s, "COMMIT") == 0)
		r = 0;
out:
	sqlite3_finalize(st);
	if (r < 0) {
		rollback(s);
		n = 0;
	}
restore:
	exec(s, "PRAGMA synchronous=FULL");
	if (deleted)
		*deleted = n;
	return r;
}

int nt_store_prune(nt_store *s, long keep, int *deleted)
{
	if (deleted)
		*deleted = 0;
	if (keep <= 0)
		return 0;
	pthread_mutex_lock(&s->mu);
	int r = prune_locked(s, keep, deleted);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_txn_stats(nt_store *s, json_t **counts, int64_t *last_apply_ms)
{
	pthread_mutex_lock(&s->mu);
	int r = txn_stats_locked(s, counts, last_apply_ms);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_profile_put(nt_store *s, const char *name, const json_t *profile, bool *created)
{
	pthread_mutex_lock(&s->mu);
	int r = profile_put_locked(s, name, profile, created);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_profile_get(nt_store *s, const char *name, json_t **out)
{
	pthread_mutex_lock(&s->mu);
	int r = profile_get_locked(s, name, out);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_profile_delete(nt_store *s, const char *name)
{
	pthread_mutex_lock(&s->mu);
	int r = profile_delete_locked(s, name);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_profile_list(nt_store *s, json_t **out)
{
	pthread_mutex_lock(&s->mu);
	int r = profile_list_locked(s, out);
	pthread_mutex_unlock(&s->mu);
	return r;
}

/* ---- the desired state ---- */

static int desired_event(nt_store *s, const char *action, const json_t *d)
{
	sqlite3_stmt *st = NULL;
	int r = NT_ESTORE;
	if (prep(s, &st, "INSERT INTO desired_events (action, profile_name, source, txn_id, client,"
		 " identity, at_ms) VALUES (?,?,?,?,?,?,?)") < 0)
		goto out;
	const char *client = json_string_value(json_object_get(d, "client"));
	const char *identity = json_string_value(json_object_get(d, "identity"));
	bind_text(st, 1, action);
	bind_text(st, 2, json_string_value(json_object_get(d, "profile_name")));
	bind_text(st, 3, json_string_value(json_object_get(d, "source")));
	json_t *x = json_object_get(d, "txn_id");
	if (json_is_integer(x))
		sqlite3_bind_int64(st, 4, json_integer_value(x));
	bind_text(st, 5, client ? client : "");
	bind_text(st, 6, identity ? identity : "");
	sqlite3_bind_int64(st, 7, nt_store_now_ms());
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
	const char *client = json_string_value(json_object_get(d, "client"));
	const char *identity = json_string_value(json_object_get(d, "identity"));

	if (exec(s, "BEGIN IMMEDIATE") < 0)
		return NT_ESTORE;
	if (prep(s, &st, "INSERT OR REPLACE INTO desired (id, profile, profile_name, source, txn_id,"
		 " client, identity, set_ms) VALUES (1,?,?,?,?,?,?,?)") < 0)
		goto out;
	bind_json(st, 1, json_object_get(d, "profile"));
	bind_text(st, 2, json_string_value(json_object_get(d, "profile_name")));
	bind_text(st, 3, json_string_value(json_object_get(d, "source")));
	json_t *x = json_object_get(d, "txn_id");
	if (json_is_integer(x))
		sqlite3_bind_int64(st, 4, json_integer_value(x));
	bind_text(st, 5, client ? client : "");
	bind_text(st, 6, identity ? identity : "");
	sqlite3_bind_int64(st, 7, nt_store_now_ms());
	if (sqlite3_step(st) != SQLITE_DONE)
		goto out;
	if (desired_event(s, "set", d) < 0)
		goto out;
	if (exec(s, "COMMIT") == 0)
		r = 0;
out:
	sqlite3_finalize(st);
	if (r < 0)
		exec(s, "ROLLBACK");
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
		exec(s, "ROLLBACK");
	return r;
}

static int desired_events_locked(nt_store *s, int limit, json_t **out)
{
	sqlite3_stmt *st = NULL;
	json_t *arr = json_array();
	int r = NT_ESTORE, rc;
	*out = NULL;
	if (!arr)
		return -ENOMEM;
	if (prep(s, &st, "SELECT action, profile_name, source, txn_id, client, identity, at_ms"
		 " FROM desired_events ORDER BY id DESC LIMIT ?") < 0)
		goto out;
	sqlite3_bind_int(st, 1, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "action", text_or_null(st, 0),
				      "profile_name", text_or_null(st, 1), "source",
				      text_or_null(st, 2), "txn_id", int_or_null(st, 3), "client",
				      text_or_null(st, 4), "identity", text_or_null(st, 5), "at",
				      time_json(st, 6));
		if (!o)
			goto out;
		json_array_append_new(arr, o);
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
	pthread_mutex_lock(&s->mu);
	int r = desired_set_locked(s, desired);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_desired_get(nt_store *s, json_t **out)
{
	pthread_mutex_lock(&s->mu);
	int r = desired_get_locked(s, out);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_desired_clear(nt_store *s, const char *client, const char *identity)
{
	pthread_mutex_lock(&s->mu);
	int r = desired_clear_locked(s, client, identity);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_desired_events(nt_store *s, int limit, json_t **out)
{
	pthread_mutex_lock(&s->mu);
	int r = desired_events_locked(s, limit, out);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int nt_store_last_change(nt_store *s, const char *kind, const char *target, json_t **out)
{
	pthread_mutex_lock(&s->mu);
	int r = last_change_locked(s, kind, target, out);
	pthread_mutex_unlock(&s->mu);
	return r;
}
