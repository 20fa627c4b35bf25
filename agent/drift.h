/* SPDX-License-Identifier: Apache-2.0 */
/* The drift watcher: holds the host to its desired state (one profile,
 * kept in the store, store/store.h).
 *
 * Each check re-plans the desired profile against the host as it is now
 * (engine/plan.c through the engine), so new IRQ numbers, a NIC that
 * appeared later or CPUs gone offline are handled by the same placement
 * rules; a plan with no steps means no drift. Every step of the plan is a
 * drifted target: desired value (the step's after), current value (its
 * before), when it was first seen, its last repair.
 *
 * When it checks: once at start ("boot"), after kernel events debounced
 * (kernel/events.h: link messages -> "link-up", ethtool notifications ->
 * "drift"), when the desired state changes, and every interval for what
 * has no event (IRQ affinity, sysctls). On a fixture root there are no
 * events: periodic checks only.
 *
 * Policy "report" records and exposes drift and changes nothing. Policy
 * "repair" applies the drifted targets as one transaction through the
 * engine with the check's reason; the engine's slot makes a repair wait
 * for (never run beside) another transaction: a check that finds the slot
 * taken tries again a second later. A target changed since the desired
 * state was set by a client's own transaction (no reason, no persist) is
 * reported "overridden" with who made it and is never repaired: an
 * operator's transaction wins. A target repaired CONTEST_REPAIRS times
 * within CONTEST_WINDOW_MS drifts again: it is "contested" (another tool
 * fights the agent), no longer repaired, and reported with its likely
 * culprit until it stops drifting or the desired state changes. A repair
 * that fails at one target's step counts as that target's attempt only:
 * the targets it rolled back are repaired again a second later without
 * the failing one, which is tried alone at later checks, so one target
 * that cannot be repaired never takes the others with it. A target the
 * plan finds taken by another program (a flow rule location holding a
 * rule nettune did not ask for: the plan is made with .hold, engine/txn.h)
 * is contested at once, "taken", never written over, while the rest of
 * the desired state is held; it is repaired again once it is free.
 *
 * Thread-safety: every function may be called from any thread. */
#ifndef NT_AGENT_DRIFT_H
#define NT_AGENT_DRIFT_H

#include "engine/txn.h"
#include "kernel/ctx.h"
#include "store/store.h"

#include <jansson.h>
#include <stdint.h>

typedef enum nt_drift_policy { NT_DRIFT_REPORT, NT_DRIFT_REPAIR } nt_drift_policy;

/* "report" / "repair" (the words `--drift-policy` takes, cli/options.c). */
const char *nt_drift_policy_name(nt_drift_policy p);

typedef struct nt_drift_config {
	nt_drift_policy policy;
	int interval_ms; /* periodic check; default 30000 */
	int debounce_ms; /* quiet time after an event before checking; default 500 */
	int contest_repairs; /* default 3 */
	int contest_window_ms; /* default 300000 */
} nt_drift_config;

/* The reasons a transaction of the watcher carries, in the order of
 * nt_drift_repairs' counts. */
#define NT_DRIFT_NREASONS 3
extern const char *const nt_drift_reasons[NT_DRIFT_NREASONS]; /* boot, drift, link-up */

typedef struct nt_drift nt_drift;

/* Watch host CTX for ENGINE's desired state in STORE (both borrowed; both
 * outlive the watcher). LOG (thread-safe, may be NULL) gets drift events.
 * START: run the thread (boot check first, then events and interval);
 * without it nothing runs until nt_drift_check (the benchmark). Returns 0
 * or -errno. */
int nt_drift_new(const nt_ctx *ctx, nt_txn_engine *engine, nt_store *store,
		 const nt_drift_config *cfg, nt_log_fn log, void *log_ud, bool start,
		 nt_drift **out);
/* Stop and join the thread, free. NULL allowed. */
void nt_drift_free(nt_drift *d);

/* Check now, in the calling thread (REASON as above). Returns 0 or -errno. */
int nt_drift_check(nt_drift *d, const char *reason);
/* The desired state changed (set or cleared): forget contested and
 * overridden marks and check soon. */
void nt_drift_desired_changed(nt_drift *d);

/* GET /v1/drift: {"policy","interval_s","events","status","message"?,
 *  "errors"?, "warnings", "checks", "last_check", "last_reason",
 *  "last_repair_txn", "targets":[...], "last_ethtool_event"}. New reference. */
json_t *nt_drift_report(nt_drift *d);
/* For metrics: targets drifting now (any state), and repair transactions
 * made per reason since start. */
void nt_drift_counts(nt_drift *d, int *targets, uint64_t repairs[NT_DRIFT_NREASONS]);
/* For metrics: the targets contested now, and those whose last repair
 * failed (a "repair_error" kept). */
void nt_drift_state_counts(nt_drift *d, int *contested, int *repair_failing);
nt_drift_policy nt_drift_get_policy(const nt_drift *d);

#endif
