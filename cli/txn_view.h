/* SPDX-License-Identifier: Apache-2.0 */
/* Plans, transactions and history for people: pure functions from the
 * agent's JSON documents (openapi/openapi.yaml: Plan, Transaction,
 * TransactionList) to lines on an nt_out. They print nothing else and
 * decide no exit code, so unit tests can feed them any document. */
#ifndef NT_CLI_TXN_VIEW_H
#define NT_CLI_TXN_VIEW_H

#include "cli/output.h"

#include <jansson.h>

/* A plan: the steps grouped by interface and kind (target, before → after),
 * then its warnings and reserved CPUs, then "N steps; nothing applied" or
 * "already tuned: nothing to do". NICS (GET /v1/nics, or NULL) lets a
 * colour terminal show IRQ CPUs off their NIC's local CPUs in red, and the
 * warnings name a bond's ports as "every port of bond0".
 *
 * Warnings, in every view here: alike ones as one line (cli/warn_group.h),
 * followed by how many there are, unless VERBOSE, which shows each as the
 * agent sent it. */
void nt_view_plan(nt_out *o, const json_t *plan, const json_t *nics, bool verbose);

/* What a request that ran a transaction (apply, confirm, rollback) did:
 * its id and status, how many steps changed and how long it took; for a
 * failure the failing step with the kernel's error and what was put back
 * (or could not be); for pending_confirm the deadline and the command that
 * confirms it. CONFIRM_HINT is appended to "nettune confirm ID" (the
 * --agent option when not the default, or ""). */
void nt_view_outcome(nt_out *o, const json_t *txn, const char *confirm_hint, const json_t *nics, bool verbose);
/* The same for what a later request did to a transaction already shown
 * (its confirmation, its revert at the deadline): without the plan's
 * warnings, which belong to the plan and were shown with the apply. */
void nt_view_outcome_later(nt_out *o, const json_t *txn, const char *confirm_hint);

/* One transaction: a header (status, profile, who, when, duration, error)
 * and its steps with their results, in the order they ran. NICS and
 * VERBOSE as for nt_view_plan. */
void nt_view_txn(nt_out *o, const json_t *txn, const json_t *nics, bool verbose);

/* A list of transactions, one line each, newest first; TOTAL the number
 * the agent holds (-1: unknown), for the "showing N of TOTAL" line. */
void nt_view_history(nt_out *o, const json_t *transactions, long long total);

/* Whether DOC has the shape the view of its KIND reads: "plan" (Plan:
 * steps an array of objects), "txn" (Transaction: an integer id, a status
 * and steps an array of objects) or "history" (TransactionList:
 * transactions an array of objects), "desired" (Desired: history an
 * array of objects), "drift" (Drift: a status; targets and errors arrays
 * of objects) or "diagnostics" (Diagnostics: findings an array of objects,
 * each with a severity, id, subject and message). NULL when it has; otherwise what is
 * wrong ("steps is not an array"), so a broken answer is an error and
 * never reads as "already tuned". */
const char *nt_view_malformed(const json_t *doc, const char *kind);

#endif
