/* SPDX-License-Identifier: Apache-2.0 */
/* Cutting the history to its length (nt_store_prune). */
#include "store/store_int.h"
#include "store/status.h"
#include "kernel/ctx.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>

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
	return STORE_LOCKED(s, prune_locked(s, keep, deleted));
}
