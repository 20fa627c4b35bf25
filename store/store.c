/* SPDX-License-Identifier: Apache-2.0 */
/* The store's handle: the schema and its migrations, open and close, the
 * clock of its timestamps, its error message and its memory. */
#include "store/store_int.h"
#include "store/store.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	/* 5 -> 6: the delivery check a transaction asked for (verify_window_ms),
	 * its summary as JSON; each IRQ step's verdict goes in its observed. */
	"ALTER TABLE transactions ADD COLUMN delivery TEXT;",
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
