/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/exit.h"

#include <string.h>

const nt_exit_code nt_exit_codes[] = {
	{ NT_EXIT_OK, "done (a transaction applied or pending_confirm, a plan, a listing)" },
	{ NT_EXIT_ERROR, "failed otherwise (no such transaction, an error of the agent, ...)" },
	{ NT_EXIT_USAGE, "bad usage: wrong arguments, an option the command does not take, or an unreadable PROFILE.json" },
	{ NT_EXIT_UNREACHABLE, "no agent answered at the URL" },
	{ NT_EXIT_REFUSED, "the profile was refused (HTTP 422); nothing was applied" },
	{ NT_EXIT_CONFLICT, "conflict (HTTP 409): another transaction is in flight, or this one is not in a state that allows it" },
	{ NT_EXIT_ROLLED_BACK, "rolled back: a step failed and every change was put back" },
	{ NT_EXIT_ROLLBACK_FAILED, "rollback failed: a step failed and some change could not be put back" },
	{ NT_EXIT_DENIED, "not allowed (HTTP 401/403): set NETTUNE_TOKEN to a token of the right scope" },
	{ NT_EXIT_REVERTED, "reverted: try was not confirmed in time and the agent put everything back" },
	{ NT_EXIT_GAIN_TOO_SMALL, "bench-run --compare --require-gain: the gain's confidence interval lies below the gain asked" },
	{ NT_EXIT_NOT_SHOWN, "bench-run --compare: a gate is not shown either way (the interval straddles it; more rounds may show it)" },
	{ NT_EXIT_LOSS, "bench-run --compare --require-no-loss: the gain's confidence interval lies below minus the margin" },
	{ NT_EXIT_NO_WINNER, "tune: no candidate was shown better than the baseline (Holm-corrected); the baseline is kept" },
	{ NT_EXIT_INTERRUPTED, "interrupted at the try prompt: not confirmed, the agent puts it back at the deadline" },
	{ -1, NULL },
};

int nt_exit_for_http(long status)
{
	if (status >= 200 && status < 300)
		return NT_EXIT_OK;
	switch (status) {
	case 401:
	case 403: return NT_EXIT_DENIED;
	case 409: return NT_EXIT_CONFLICT;
	case 422: return NT_EXIT_REFUSED;
	default: return NT_EXIT_ERROR;
	}
}

int nt_exit_for_txn_status(const char *status)
{
	if (!status)
		return NT_EXIT_ERROR;
	if (!strcmp(status, "rolled_back"))
		return NT_EXIT_ROLLED_BACK;
	if (!strcmp(status, "rollback_failed"))
		return NT_EXIT_ROLLBACK_FAILED;
	if (!strcmp(status, "reverted"))
		return NT_EXIT_REVERTED;
	/* A transaction answered by the agent has finished applying: anything
	 * else that is not a failure (applied, pending_confirm) is success.
	 * reverted is what try waits for when nobody confirms; recovered is
	 * never the outcome of a request this command made. */
	if (!strcmp(status, "applied") || !strcmp(status, "pending_confirm"))
		return NT_EXIT_OK;
	return NT_EXIT_ERROR;
}
