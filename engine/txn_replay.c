/* SPDX-License-Identifier: Apache-2.0 */
/* Idempotency-Key replays: a retried apply or rollback answered with the
 * transaction its key already stands for. */
#include "engine/txn_int.h"
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The transaction an Idempotency-Key already stands for. KEY is the
 * scoped key the API made ("SCOPE\tKEY\tFINGERPRINT", see nt_txn_request):
 * the same scope and key with another fingerprint is a different request
 * under a used key, refused with NT_EINVALID (the IETF draft's 422) rather
 * than answered with the transaction of the first. Returns 0 (replayed),
 * -ENOENT (not used), NT_EINVALID or NT_ESTORE. */
int nt_txn_replay(nt_txn_engine *e, const char *key, nt_txn_outcome *out)
{
	int64_t id;
	int r = nt_store_idem_get(e->store, key, &id);
	const char *fp = strrchr(key, '\t');
	if (r == -ENOENT && fp) {
		char prefix[512], used[512];
		int n = snprintf(prefix, sizeof(prefix), "%.*s", (int)(fp - key + 1), key);
		if (n > 0 && (size_t)n < sizeof(prefix) &&
		    nt_store_idem_find(e->store, prefix, used, sizeof(used), &id) == 0) {
			snprintf(out->message, sizeof(out->message),
				 "this Idempotency-Key was used for transaction %lld with a different "
				 "request; use a new key for a new request",
				 (long long)id);
			out->key_reused = true;
			return NT_EINVALID;
		}
	}
	if (r < 0)
		return r;
	r = nt_store_txn_get(e->store, id, &out->doc);
	if (r == 0)
		out->replayed = true;
	return r;
}

/* nt_txn_replay() as the apply and rollback paths use it, before and again once
 * the slot is held (a request with the same key and another body may have
 * finished in between). Returns 1 when OUT is answered (replayed), 0 to go
 * on, or a negative error. */
int nt_txn_replay_check(nt_txn_engine *e, const char *key, nt_txn_outcome *out)
{
	if (!key)
		return 0;
	int r = nt_txn_replay(e, key, out);
	if (r == -ENOENT)
		return 0;
	if (r == 0)
		return 1;
	return r == NT_EINVALID ? r : NT_ESTORE;
}
