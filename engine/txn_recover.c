/* SPDX-License-Identifier: Apache-2.0 */
/* What the store did not record: at start, transactions a crash left
 * unfinished are restored from the journal and expired confirmations
 * reverted; while running, the reply for an outcome the store could not
 * write says what happened on the host. */
#include "engine/txn_int.h"
#include "store/status.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nt_txn_recover(nt_txn_engine *e)
{
	static const nt_txn_status crashed[] = { NT_TXN_APPLYING, NT_TXN_ROLLING_BACK };
	json_t *ids = NULL;
	size_t i;
	json_t *v;

	for (size_t k = 0; k < sizeof(crashed) / sizeof(crashed[0]); k++) {
		if (nt_store_txn_ids(e->store, nt_txn_status_name(crashed[k]), &ids) < 0)
			continue;
		json_array_foreach(ids, i, v)
			nt_txn_undo_stored(e, json_integer_value(v), NT_STEP_RESTORED, NT_TXN_RECOVERED,
					   "the agent stopped during this transaction; restored from the journal");
		json_decref(ids);
	}
	if (nt_store_txn_ids(e->store, nt_txn_status_name(NT_TXN_PENDING_CONFIRM), &ids) < 0)
		return;
	json_array_foreach(ids, i, v) {
		json_t *doc = NULL;
		int64_t id = json_integer_value(v);
		if (nt_store_txn_get(e->store, id, &doc) < 0)
			continue;
		int64_t deadline = json_integer_value(json_object_get(doc, "confirm_deadline_ms"));
		json_decref(doc);
		if (deadline <= nt_store_now_ms() || e->pending_id) {
			nt_txn_undo_stored(e, id, NT_STEP_REVERTED, NT_TXN_REVERTED,
					   "not confirmed within confirm_timeout_s; reverted");
		} else {
			e->pending_id = id;
			e->pending_deadline_ms = deadline;
		}
	}
	json_decref(ids);
}

/* The reply for a transaction whose outcome the store could not record:
 * what happened on the host, not the stale record. */
void nt_txn_settle_unrecorded(nt_txn_engine *e, json_t *doc)
{
	if (!doc)
		return;
	if (e->unrecorded) {
		json_object_set_new(doc, "status",
				    json_string(nt_txn_status_name(e->unrecorded_status)));
		json_object_set_new(doc, "error", json_string(e->unrecorded_error));
	}
	size_t n = json_object_size(e->unrecorded_steps);
	if (!n)
		return;
	/* The reply shows each step as it ended, and says that history
	 * does not (the record of a step stays as it was before). */
	const char *k;
	json_t *v, *steps = json_object_get(doc, "steps");
	json_object_foreach(e->unrecorded_steps, k, v)
		json_object_set(json_array_get(steps, (size_t)atoi(k)), "result", v);
	const char *prev = json_string_value(json_object_get(doc, "error"));
	char *msg = NULL;
	if (asprintf(&msg, "%s%sthe store could not record the result of %zu step(s) (%s): "
		     "history shows them as they were before", prev ? prev : "",
		     prev ? "; " : "", n, e->unrecorded_step_error) >= 0) {
		json_object_set_new(doc, "error", json_string(msg));
		free(msg);
	}
}
