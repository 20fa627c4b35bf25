/* SPDX-License-Identifier: Apache-2.0 */
#include "store/status.h"
#include "kernel/ctx.h"

#include <string.h>

enum {
	HOLDS_CHANGES = 1 << 0,
	TOOK_EFFECT = 1 << 1,
	IN_FLIGHT = 1 << 2,
};

static const struct {
	const char *name;
	unsigned flags;
} statuses[NT_TXN_NSTATUS] = {
	[NT_TXN_APPLYING] = { "applying", HOLDS_CHANGES | IN_FLIGHT },
	[NT_TXN_APPLIED] = { "applied", HOLDS_CHANGES | TOOK_EFFECT },
	[NT_TXN_PENDING_CONFIRM] = { "pending_confirm", HOLDS_CHANGES | TOOK_EFFECT | IN_FLIGHT },
	[NT_TXN_ROLLING_BACK] = { "rolling_back", HOLDS_CHANGES | IN_FLIGHT },
	[NT_TXN_ROLLED_BACK] = { "rolled_back", 0 },
	[NT_TXN_ROLLBACK_FAILED] = { "rollback_failed", HOLDS_CHANGES },
	[NT_TXN_REVERTED] = { "reverted", 0 },
	[NT_TXN_RECOVERED] = { "recovered", 0 },
};

static const char *const results[NT_STEP_NRESULT] = {
	[NT_STEP_PENDING] = "pending",
	[NT_STEP_APPLIED] = "applied",
	[NT_STEP_FAILED] = "failed",
	[NT_STEP_ROLLED_BACK] = "rolled_back",
	[NT_STEP_ROLLBACK_FAILED] = "rollback_failed",
	[NT_STEP_REVERTED] = "reverted",
	[NT_STEP_RESTORED] = "restored",
	[NT_STEP_NOT_APPLIED] = "not_applied",
	[NT_STEP_SKIPPED] = "skipped",
};

const char *nt_txn_status_name(nt_txn_status s)
{
	return (unsigned)s < NT_TXN_NSTATUS ? statuses[s].name : NULL;
}

int nt_txn_status_parse(const char *name)
{
	for (int i = 0; name && i < NT_TXN_NSTATUS; i++)
		if (strcmp(statuses[i].name, name) == 0)
			return i;
	return NT_EINVALID;
}

bool nt_txn_status_holds_changes(nt_txn_status s)
{
	return (unsigned)s < NT_TXN_NSTATUS && (statuses[s].flags & HOLDS_CHANGES);
}

bool nt_txn_status_took_effect(nt_txn_status s)
{
	return (unsigned)s < NT_TXN_NSTATUS && (statuses[s].flags & TOOK_EFFECT);
}

bool nt_txn_status_settled(nt_txn_status s)
{
	return (unsigned)s < NT_TXN_NSTATUS && !(statuses[s].flags & IN_FLIGHT);
}

const char *nt_step_result_name(nt_step_result r)
{
	return (unsigned)r < NT_STEP_NRESULT ? results[r] : NULL;
}

int nt_step_result_parse(const char *name)
{
	if (name && strncmp(name, "skipped", 7) == 0)
		return NT_STEP_SKIPPED;
	for (int i = 0; name && i < NT_STEP_NRESULT; i++)
		if (strcmp(results[i], name) == 0)
			return i;
	return NT_EINVALID;
}
