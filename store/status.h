/* SPDX-License-Identifier: Apache-2.0 */
/* The words a transaction's record is made of: its status and each step's
 * result. This is the one list of each. The engine sets them, the store
 * records them and filters on them, the API validates filters against them
 * and GET /metrics reports every status (0 when none), so a status added
 * here is counted and accepted everywhere at once. The API contract
 * (openapi/openapi.yaml) spells the same words out for clients. */
#ifndef NT_STORE_STATUS_H
#define NT_STORE_STATUS_H

#include <stdbool.h>

typedef enum nt_txn_status {
	NT_TXN_APPLYING, /* recorded, steps being applied */
	NT_TXN_APPLIED, /* every step applied and verified (or confirmed) */
	NT_TXN_PENDING_CONFIRM, /* applied, reverted unless confirmed in time */
	NT_TXN_ROLLING_BACK, /* a step failed, the applied ones are being undone */
	NT_TXN_ROLLED_BACK, /* a step failed and everything was put back */
	NT_TXN_ROLLBACK_FAILED, /* some target could not be put back */
	NT_TXN_REVERTED, /* not confirmed in time, put back */
	NT_TXN_RECOVERED, /* the agent died during it, put back at the next start */
	NT_TXN_NSTATUS
} nt_txn_status;

/* "applying", "pending_confirm", ...; NULL out of range. Static storage. */
const char *nt_txn_status_name(nt_txn_status s);
/* The status called NAME, or NT_EINVALID. */
int nt_txn_status_parse(const char *name);
/* Whether the host may still hold the changes of a transaction in status
 * S: it finished with them in place, or was interrupted with some of them
 * made. Rolling back an earlier transaction over such a one would undo its
 * changes behind its back. */
bool nt_txn_status_holds_changes(nt_txn_status s);
/* Whether S means the transaction did what it was asked and its changes
 * stand (what the last-apply time of GET /metrics counts). */
bool nt_txn_status_took_effect(nt_txn_status s);
/* Whether S is final: nothing more happens to the transaction (not being
 * applied or rolled back, not waiting for confirmation, so not something
 * crash recovery or the confirmation timer still needs). Only these leave
 * the history when it is cut to its length (nt_store_prune). */
bool nt_txn_status_settled(nt_txn_status s);

typedef enum nt_step_result {
	NT_STEP_PENDING, /* recorded, not run yet */
	NT_STEP_APPLIED, /* written and read back */
	NT_STEP_FAILED, /* the write or its read-back failed */
	NT_STEP_ROLLED_BACK, /* put back after a later step failed */
	NT_STEP_ROLLBACK_FAILED, /* could not be put back: the error says what it reads */
	NT_STEP_REVERTED, /* put back because the transaction was not confirmed */
	NT_STEP_RESTORED, /* put back by crash recovery */
	NT_STEP_NOT_APPLIED, /* the crash came before its write */
	NT_STEP_SKIPPED, /* the kind declined to make it; recorded as its reason */
	NT_STEP_NRESULT
} nt_step_result;

/* "pending", "applied", ...; NULL out of range. Static storage. */
const char *nt_step_result_name(nt_step_result r);
/* The result recorded as NAME, or NT_EINVALID. A step a setting kind
 * declined to make (an IRQ the kernel manages) records the kind's own
 * reason, always starting "skipped" ("skipped: not movable"): that is
 * NT_STEP_SKIPPED. */
int nt_step_result_parse(const char *name);

#endif
