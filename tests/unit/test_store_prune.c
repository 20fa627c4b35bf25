/* SPDX-License-Identifier: Apache-2.0 */
/* Cutting the history to its length (nt_store_prune) on a real SQLite
 * file: the newest KEEP transactions stay, older finished ones go with
 * their steps and idempotency keys; one in flight, the desired state's own
 * and one a kept rollback names stay whatever their age; desired-state
 * events are cut to the same length; KEEP 0 keeps everything. */
#include "harness.h"
#include "store/store.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64], path[128];

/* A transaction in STATUS with two steps; ROLLBACK_OF 0 for none. */
static int64_t create(nt_store *s, const char *status, int64_t rollback_of, const char *key)
{
	int64_t id = 0;
	json_t *txn = json_pack("{s:s,s:{s:s},s:s,s:s}", "status", status, "profile", "name", "p",
				"client", "127.0.0.1", "identity", "");
	if (rollback_of)
		json_object_set_new(txn, "rollback_of", json_integer(rollback_of));
	json_t *steps = json_pack("[{s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s}]", "kind", "sysctl",
				  "target", "net.core.rmem_max", "before", "1", "after", "2",
				  "kind", "irq_affinity", "target", "177", "before", "0-3", "after",
				  "2");
	int rc = nt_store_txn_create(s, txn, steps, key, &id);
	CHECK_INT(rc, 0);
	json_decref(txn);
	json_decref(steps);
	return id;
}

static bool exists(nt_store *s, int64_t id)
{
	json_t *doc = NULL;
	int r = nt_store_txn_get(s, id, &doc);
	json_decref(doc);
	return r == 0;
}

/* Rows of TABLE in the file, read beside the store's own connection. */
static long rows(const char *table)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	char sql[128];
	long n = -1;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static int64_t total(nt_store *s)
{
	json_t *list = NULL;
	int64_t n = -1;
	if (nt_store_txn_list(s, NULL, 1, 0, &list, &n) < 0)
		n = -1;
	json_decref(list);
	return n;
}

int main(void)
{
	char err[256] = "";
	nt_store *s = NULL;
	int deleted = -1;

	snprintf(dir, sizeof(dir), "/tmp/nt-prune-XXXXXX");
	if (!mkdtemp(dir))
		SKIP("mkdtemp failed");
	snprintf(path, sizeof(path), "%s/nettune.db", dir);
	CHECK_INT(nt_store_open(path, &s, err, sizeof(err)), 0);
	if (!s)
		goto out;

	/* t1..t10: t2 waits for confirmation, t3 has an idempotency key, t4
	 * is rolled back by t8, t5 is where the desired state came from. */
	int64_t t[11] = { 0 };
	for (int i = 1; i <= 10; i++)
		t[i] = create(s, i == 2 ? "pending_confirm" : "applied", i == 8 ? t[4] : 0,
			      i == 3 ? "key-3" : NULL);
	json_t *d = json_pack("{s:{s:s},s:s,s:s,s:I,s:s,s:s}", "profile", "name", "hold",
			      "profile_name", "hold", "source", "transaction", "txn_id",
			      (json_int_t)t[5], "client", "", "identity", "");
	for (int i = 0; i < 5; i++)
		CHECK_INT(nt_store_desired_set(s, d), 0);
	json_decref(d);
	CHECK_INT(rows("steps"), 20);
	CHECK_INT(rows("desired_events"), 5);

	/* 0 keeps everything. */
	CHECK_INT(nt_store_prune(s, 0, &deleted), 0);
	CHECK_INT(deleted, 0);
	CHECK_INT(total(s), 10);

	/* Keep 3: t8..t10, and t2 (in flight), t4 (t8 names it), t5 (the
	 * desired state's). t1, t3, t6, t7 go, with steps and key. */
	CHECK_INT(nt_store_prune(s, 3, &deleted), 0);
	CHECK_INT(deleted, 4);
	CHECK_INT(total(s), 6);
	bool kept[11] = { false, false, true, false, true, true, false, false, true, true, true };
	for (int i = 1; i <= 10; i++)
		CHECK_MSG(exists(s, t[i]) == kept[i], "t%d %s", i, kept[i] ? "deleted" : "kept");
	CHECK_INT(rows("steps"), 12);
	int64_t got = 0;
	CHECK_INT(nt_store_idem_get(s, "key-3", &got), -ENOENT);
	CHECK_INT(rows("idempotency_keys"), 0);
	CHECK_INT(rows("desired_events"), 3);
	json_t *doc = NULL;
	CHECK_INT(nt_store_txn_get(s, t[8], &doc), 0);
	CHECK_INT(json_integer_value(json_object_get(doc, "rollback_of")), t[4]);
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 2);
	json_decref(doc);

	/* Nothing more to cut: a second pass deletes nothing. */
	CHECK_INT(nt_store_prune(s, 3, &deleted), 0);
	CHECK_INT(deleted, 0);

	/* Once settled, t2 goes; once t8 is gone too, so does t4. */
	CHECK_INT(nt_store_txn_set_status(s, t[2], "reverted", NULL, -1, true, -1), 0);
	CHECK_INT(nt_store_prune(s, 3, &deleted), 0);
	CHECK_INT(deleted, 1);
	CHECK(!exists(s, t[2]));
	for (int i = 0; i < 3; i++)
		create(s, "rolled_back", 0, NULL);
	CHECK_INT(nt_store_prune(s, 3, &deleted), 0);
	CHECK(!exists(s, t[8]) && !exists(s, t[9]) && !exists(s, t[10]));
	CHECK(exists(s, t[4])); /* named by t8 when this pass began */
	CHECK_INT(nt_store_prune(s, 3, &deleted), 0);
	CHECK_INT(deleted, 1);
	CHECK(!exists(s, t[4]));
	CHECK(exists(s, t[5]));
	CHECK_INT(total(s), 4);

	/* A long history is cut in one pass to exactly its length (plus the
	 * desired state's transaction), and survives a reopen. */
	for (int i = 0; i < 1500; i++)
		create(s, "applied", 0, NULL);
	CHECK_INT(nt_store_prune(s, 1000, &deleted), 0);
	CHECK_INT(deleted, 503);
	nt_store_close(s);
	CHECK_INT(nt_store_open(path, &s, err, sizeof(err)), 0);
	CHECK_INT(total(s), 1001);
	CHECK_INT(rows("steps"), 2002);
	nt_store_close(s);
out:;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	TEST_MAIN_END();
}
