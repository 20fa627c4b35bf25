/* SPDX-License-Identifier: Apache-2.0 */
/* Idempotency keys: the transaction each recorded key stands for (keys
 * are written with their transaction, in nt_store_txn_create, and go
 * with it when the history is cut). */
#include "store/store_int.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>

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

/* ---- the public, serialised entry points ---- */

int nt_store_idem_get(nt_store *s, const char *key, int64_t *id)
{
	return STORE_LOCKED(s, idem_get_locked(s, key, id));
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
