/* SPDX-License-Identifier: Apache-2.0 */
/* The SQLite store: migrations on a fresh file and on reopen, refusal of a
 * newer schema and of a file that is not a database, all-or-nothing
 * transaction records (a duplicate idempotency key leaves no row), history
 * filters and paging, the later-conflict query, stored profiles and the
 * migration of a database at the previous schema. */
#include "harness.h"
#include "store/store.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64], path[128];

static json_t *step(const char *kind, const char *target, const char *before, const char *after)
{
	return json_pack("{s:s,s:s,s:s,s:s}", "kind", kind, "target", target, "before", before,
			 "after", after);
}

static int64_t create(nt_store *s, const char *status, json_t *steps, const char *key, int *rc)
{
	int64_t id = 0;
	json_t *txn = json_pack("{s:s,s:{s:s},s:s,s:s}", "status", status, "profile", "name", "p",
				"client", "127.0.0.1", "identity", "");
	*rc = nt_store_txn_create(s, txn, steps, key, &id);
	json_decref(txn);
	json_decref(steps);
	return id;
}

static int user_version(const char *p)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int v = -1;
	if (sqlite3_open(p, &db) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* 1 when the database at P has an index NAME, 0 when not, -1 on error. */
static int has_index(const char *p, const char *name)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int v = -1;
	if (sqlite3_open(p, &db) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
			       " AND name = ?", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* The first two step rows nt_store_txn_steps handed over. */
typedef struct seen_rows {
	int n;
	char kind[2][32], result[2][32], before[2][32];
} seen_rows;

static int collect_row(void *arg, const nt_store_step_row *row)
{
	seen_rows *seen = arg;
	if (seen->n >= 2 || row->idx != seen->n)
		return -ERANGE;
	snprintf(seen->kind[seen->n], sizeof(seen->kind[0]), "%s", row->kind);
	snprintf(seen->result[seen->n], sizeof(seen->result[0]), "%s", row->result);
	snprintf(seen->before[seen->n], sizeof(seen->before[0]), "%s", row->before);
	seen->n++;
	return 0;
}

int main(void)
{
	char err[256] = "";
	nt_store *s = NULL;
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/nt-store-XXXXXX");
	if (!mkdtemp(dir))
		SKIP("mkdtemp failed");
	snprintf(path, sizeof(path), "%s/nettune.db", dir);

	/* Fresh file: created and migrated to the current schema. */
	CHECK_INT(nt_store_open(path, &s, err, sizeof(err)), 0);
	CHECK_INT(nt_store_schema_version(s), NT_STORE_SCHEMA_VERSION);
	CHECK_INT(user_version(path), NT_STORE_SCHEMA_VERSION);

	int64_t a = create(s, "applying", json_pack("[o,o]", step("sysctl", "net.core.rmem_max",
		"212992", "16777216"), step("irq_affinity", "177", "0-15", "4")), "key-1", &rc);
	CHECK_INT(rc, 0);
	CHECK(a > 0);
	/* The same key again: refused, and nothing of it is left behind. */
	int64_t dup = create(s, "applying", json_pack("[o]", step("bond", "bond0", "layer2+3",
		"layer3+4")), "key-1", &rc);
	CHECK_INT(rc, -EEXIST);
	(void)dup;
	json_t *list = NULL;
	int64_t total = 0;
	CHECK_INT(nt_store_txn_list(s, NULL, 50, 0, &list, &total), 0);
	CHECK_INT(total, 1);
	json_decref(list);
	int64_t got = 0;
	CHECK_INT(nt_store_idem_get(s, "key-1", &got), 0);
	CHECK_INT(got, a);
	CHECK_INT(nt_store_idem_get(s, "key-2", &got), -ENOENT);

	/* A stage: its step outcomes and the status in one write, a later
	 * outcome for a step replacing an earlier one; one that names no step
	 * leaves the whole stage unrecorded. */
	nt_store_step_rec recs[] = {
		{ .idx = 0, .result = "applied", .observed = "effective 3" },
		{ .idx = 1, .result = "applied" },
		{ .idx = 1, .result = "failed", .error = "IRQ 177: Input/output error" },
		{ .idx = 5, .result = "applied" },
	};
	CHECK_INT(nt_store_txn_stage(s, a, recs, 4, "applied", NULL, -1, true, 0), -ENOENT);
	json_t *doc = NULL;
	CHECK_INT(nt_store_txn_get(s, a, &doc), 0);
	CHECK_STR(json_string_value(json_object_get(doc, "status")), "applying");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(doc, "steps"), 0),
						    "result")), "pending");
	json_decref(doc);
	CHECK_INT(nt_store_txn_stage(s, a, recs, 3, "rolled_back", "step 1 failed", 1, true, 0), 0);
	CHECK_INT(nt_store_txn_get(s, a, &doc), 0);
	CHECK_STR(json_string_value(json_object_get(doc, "status")), "rolled_back");
	CHECK_INT(json_integer_value(json_object_get(doc, "failed_step")), 1);
	CHECK(json_is_string(json_object_get(doc, "finished")));
	CHECK(json_is_integer(json_object_get(doc, "duration_ms")));
	const char *created = json_string_value(json_object_get(doc, "created"));
	CHECK(created && strlen(created) == 24 && created[10] == 'T' && created[23] == 'Z');
	json_t *steps = json_object_get(doc, "steps");
	CHECK_INT(json_array_size(steps), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(steps, 1), "result")), "failed");
	CHECK_STR(json_string_value(json_object_get(json_array_get(steps, 1), "error")),
		  "IRQ 177: Input/output error");
	CHECK_STR(json_string_value(json_object_get(json_array_get(steps, 0), "before")), "212992");
	CHECK_STR(json_string_value(json_object_get(json_array_get(steps, 0), "observed")),
		  "effective 3");
	json_decref(doc);
	CHECK_INT(nt_store_txn_get(s, 999, &doc), -ENOENT);

	/* The lean document: the same transaction row, only the failed step
	 * (or none), and counts by result and kind that add up to every step. */
	CHECK_INT(nt_store_txn_get_lean(s, a, true, &doc), 0);
	CHECK_STR(json_string_value(json_object_get(doc, "status")), "rolled_back");
	CHECK_INT(json_integer_value(json_object_get(doc, "failed_step")), 1);
	CHECK_INT(json_integer_value(json_object_get(doc, "nsteps")), 2);
	steps = json_object_get(doc, "steps");
	CHECK_INT(json_array_size(steps), 1);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(steps, 0), "index")), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(steps, 0), "error")),
		  "IRQ 177: Input/output error");
	json_t *counts = json_object_get(doc, "step_counts");
	CHECK_INT(json_object_size(counts), 2);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(counts, "applied"), "sysctl")), 1);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(counts, "failed"), "irq_affinity")), 1);
	/* Results in the order of their first step, as a walk over the steps
	 * would make them. */
	CHECK_STR(json_object_iter_key(json_object_iter(counts)), "applied");
	json_decref(doc);
	CHECK_INT(nt_store_txn_get_lean(s, a, false, &doc), 0);
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 0);
	CHECK_INT(json_integer_value(json_object_get(doc, "nsteps")), 2);
	json_decref(doc);
	CHECK_INT(nt_store_txn_get_lean(s, 999, true, &doc), -ENOENT);

	/* The rows an undo reads: the status, then each step in order. */
	char status[32] = "";
	seen_rows seen = { 0 };
	CHECK_INT(nt_store_txn_steps(s, a, status, sizeof(status), collect_row, &seen), 0);
	CHECK_STR(status, "rolled_back");
	CHECK_INT(seen.n, 2);
	CHECK_STR(seen.kind[0], "sysctl");
	CHECK_STR(seen.before[0], "212992");
	CHECK_STR(seen.kind[1], "irq_affinity");
	CHECK_STR(seen.result[1], "failed");
	CHECK_INT(nt_store_txn_steps(s, 999, status, sizeof(status), collect_row, &seen), -ENOENT);
	/* What SQLite's cache holds after those reads is given back on
	 * asking (the agent asks when idle). */
	int64_t cached = nt_store_cache_bytes(s);
	nt_store_release_memory(s);
	int64_t left = nt_store_cache_bytes(s);
	CHECK_MSG(cached > 0 && left >= 0 && left < cached / 2, "cache %lld bytes, %lld after release",
		  (long long)cached, (long long)left);

	/* Later conflicts: b changes rmem_max after a... but a's step there was
	 * applied, b's too. c touches something else. */
	int64_t b = create(s, "applying", json_pack("[o]", step("sysctl", "net.core.rmem_max",
		"16777216", "33554432")), NULL, &rc);
	CHECK_INT(rc, 0);
	int64_t c = create(s, "applying", json_pack("[o]", step("bond", "bond0", "layer2+3",
		"layer3+4")), NULL, &rc);
	CHECK_INT(rc, 0);
	nt_store_step_rec done = { .idx = 0, .result = "applied" };
	CHECK_INT(nt_store_txn_stage(s, b, &done, 1, "applied", NULL, -1, true, 0), 0);
	CHECK_INT(nt_store_txn_stage(s, c, &done, 1, "applied", NULL, -1, true, 0), 0);
	int64_t later = -1;
	CHECK_INT(nt_store_later_conflict(s, a, &later), 0);
	CHECK_INT(later, b);
	CHECK_INT(nt_store_later_conflict(s, c, &later), 0);
	CHECK_INT(later, 0);
	/* A later transaction that was rolled back leaves nothing in place. */
	nt_store_txn_set_status(s, b, "rolled_back", NULL, -1, true, 0);
	CHECK_INT(nt_store_later_conflict(s, a, &later), 0);
	CHECK_INT(later, 0);

	/* History: newest first, filtered, paged. */
	CHECK_INT(nt_store_txn_list(s, NULL, 2, 0, &list, &total), 0);
	CHECK_INT(total, 3);
	CHECK_INT(json_array_size(list), 2);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 0), "id")), c);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 1), "id")), b);
	json_decref(list);
	CHECK_INT(nt_store_txn_list(s, NULL, 2, 2, &list, &total), 0);
	CHECK_INT(json_array_size(list), 1);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 0), "id")), a);
	json_decref(list);
	CHECK_INT(nt_store_txn_list(s, "applied", 50, 0, &list, &total), 0);
	CHECK_INT(total, 1);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 0), "id")), c);
	json_decref(list);
	json_t *ids = NULL;
	CHECK_INT(nt_store_txn_ids(s, "rolled_back", &ids), 0);
	CHECK_INT(json_array_size(ids), 2);
	json_decref(ids);

	/* Profiles. */
	bool was_new = false;
	json_t *p = json_pack("{s:s,s:s}", "name", "fix", "description", "x460 fix");
	CHECK_INT(nt_store_profile_put(s, "fix", p, &was_new), 0);
	CHECK(was_new);
	CHECK_INT(nt_store_profile_put(s, "fix", p, &was_new), 0);
	CHECK(!was_new);
	json_decref(p);
	CHECK_INT(nt_store_profile_get(s, "fix", &doc), 0);
	CHECK_STR(json_string_value(json_object_get(doc, "description")), "x460 fix");
	json_decref(doc);
	CHECK_INT(nt_store_profile_list(s, &list), 0);
	CHECK_INT(json_array_size(list), 1);
	json_decref(list);
	CHECK_INT(nt_store_profile_get(s, "nope", &doc), -ENOENT);

	/* The desired state: one at most, every change an event, newest
	 * first; a transaction's reason and persist flag round-trip; the
	 * last change of a target is the newest applied step's transaction. */
	CHECK_INT(nt_store_desired_get(s, &doc), -ENOENT);
	CHECK_INT(nt_store_desired_clear(s, "c", ""), -ENOENT);
	json_t *d = json_pack("{s:{s:s},s:s,s:s,s:I,s:s,s:s}", "profile", "name", "hold",
			      "profile_name", "hold", "source", "transaction", "txn_id",
			      (json_int_t)a, "client", "10.0.0.1", "identity", "fleet");
	CHECK_INT(nt_store_desired_set(s, d), 0);
	json_object_set_new(d, "source", json_string("api"));
	json_object_del(d, "txn_id");
	CHECK_INT(nt_store_desired_set(s, d), 0);
	json_decref(d);
	CHECK_INT(nt_store_desired_get(s, &doc), 0);
	CHECK_STR(json_string_value(json_object_get(doc, "source")), "api");
	CHECK(json_is_null(json_object_get(doc, "txn_id")));
	CHECK_STR(json_string_value(json_object_get(doc, "identity")), "fleet");
	CHECK(json_integer_value(json_object_get(doc, "set_ms")) > 0);
	json_decref(doc);
	CHECK_INT(nt_store_desired_clear(s, "127.0.0.1", "ops"), 0);
	CHECK_INT(nt_store_desired_get(s, &doc), -ENOENT);
	CHECK_INT(nt_store_desired_events(s, 10, &list), 0);
	CHECK_INT(json_array_size(list), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "action")), "cleared");
	CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "identity")), "ops");
	CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "profile_name")), "hold");
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 2), "txn_id")), a);
	json_decref(list);
	json_t *rtxn = json_pack("{s:s,s:n,s:s,s:s,s:s,s:b}", "status", "applied", "profile", "client",
				 "", "identity", "", "reason", "drift", "persist", 1);
	int64_t rid = 0;
	json_t *rsteps = json_pack("[o]", step("sysctl", "net.core.busy_poll", "1", "2"));
	CHECK_INT(nt_store_txn_create(s, rtxn, rsteps, NULL, &rid), 0);
	json_decref(rtxn);
	json_decref(rsteps);
	CHECK_INT(nt_store_txn_get(s, rid, &doc), 0);
	CHECK_STR(json_string_value(json_object_get(doc, "reason")), "drift");
	CHECK(json_is_true(json_object_get(doc, "persist")));
	json_decref(doc);
	CHECK_INT(nt_store_last_change(s, "sysctl", "net.core.busy_poll", &doc), -ENOENT);
	CHECK_INT(nt_store_txn_stage(s, rid, &done, 1, NULL, NULL, -1, false, 0), 0);
	CHECK_INT(nt_store_last_change(s, "sysctl", "net.core.busy_poll", &doc), 0);
	CHECK_INT(json_integer_value(json_object_get(doc, "txn")), rid);
	CHECK_STR(json_string_value(json_object_get(doc, "reason")), "drift");
	json_decref(doc);
	nt_store_close(s);

	/* Reopen: nothing migrates again, everything is still there. */
	CHECK_INT(nt_store_open(path, &s, err, sizeof(err)), 0);
	CHECK_INT(nt_store_schema_version(s), NT_STORE_SCHEMA_VERSION);
	CHECK_INT(nt_store_txn_get(s, a, &doc), 0);
	json_decref(doc);
	CHECK_INT(nt_store_profile_delete(s, "fix"), 0);
	CHECK_INT(nt_store_profile_delete(s, "fix"), -ENOENT);
	nt_store_close(s);

	/* A database at schema 4 (made here from this one as schema 4 had
	 * it: the index on (kind, target) alone) migrates on open to the
	 * index by target and txn_id, its history kept and still answering. */
	sqlite3 *db;
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, "DROP INDEX steps_target_txn;"
			       "CREATE INDEX steps_target ON steps(kind, target);"
			       "ALTER TABLE transactions DROP COLUMN delivery;"
			       "PRAGMA user_version = 4", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	CHECK_INT(user_version(path), 4);
	CHECK_INT(has_index(path, "steps_target_txn"), 0);
	CHECK_INT(nt_store_open(path, &s, err, sizeof(err)), 0);
	CHECK_INT(nt_store_schema_version(s), NT_STORE_SCHEMA_VERSION);
	CHECK_INT(has_index(path, "steps_target_txn"), 1);
	CHECK_INT(has_index(path, "steps_target"), 0);
	CHECK_INT(nt_store_txn_get(s, a, &doc), 0);
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 2);
	json_decref(doc);
	later = -1;
	CHECK_INT(nt_store_later_conflict(s, a, &later), 0);
	CHECK_INT(later, 0);
	CHECK_INT(nt_store_last_change(s, "sysctl", "net.core.busy_poll", &doc), 0);
	CHECK_INT(json_integer_value(json_object_get(doc, "txn")), rid);
	json_decref(doc);

	/* And schema 6: the delivery column; a transaction from before has
	 * none (null), and a check recorded later shows with its steps'
	 * observed texts. */
	CHECK_INT(nt_store_txn_get(s, a, &doc), 0);
	CHECK(json_is_null(json_object_get(doc, "delivery")));
	json_decref(doc);
	json_t *summary = json_pack("{s:s, s:i}", "verdict", "delivered", "window_ms", 500);
	nt_store_step_rec dr = { .idx = 1, .observed = "1; delivered 1:40" };
	CHECK_INT(nt_store_txn_set_delivery(s, a, summary, &dr, 1), 0);
	CHECK_INT(nt_store_txn_set_delivery(s, 987654, summary, NULL, 0), -ENOENT);
	json_decref(summary);
	CHECK_INT(nt_store_txn_get(s, a, &doc), 0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(doc, "delivery"), "verdict")), "delivered");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(doc, "steps"), 1), "observed")),
		  "1; delivered 1:40");
	json_decref(doc);
	nt_store_close(s);

	/* A database from a newer nettune is refused, not downgraded. */
	sqlite3_open(path, &db);
	sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
	sqlite3_close(db);
	err[0] = '\0';
	CHECK_INT(nt_store_open(path, &s, err, sizeof(err)), NT_ESTORE);
	CHECK_MSG(strstr(err, "newer") != NULL, "err = %s", err);

	/* A file that is not a database. */
	char bad[160];
	snprintf(bad, sizeof(bad), "%s/garbage.db", dir);
	FILE *f = fopen(bad, "w");
	for (int i = 0; f && i < 200; i++)
		fputs("this is not an SQLite database, it is a file of text. ", f);
	if (f)
		fclose(f);
	err[0] = '\0';
	CHECK_INT(nt_store_open(bad, &s, err, sizeof(err)), NT_ESTORE);
	CHECK(err[0] != '\0');

	/* A directory that cannot hold the file. */
	char nodir[160];
	snprintf(nodir, sizeof(nodir), "%s/missing/nettune.db", dir);
	CHECK_INT(nt_store_open(nodir, &s, err, sizeof(err)), NT_ESTORE);

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	TEST_MAIN_END();
}
