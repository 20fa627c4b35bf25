/* SPDX-License-Identifier: Apache-2.0 */
/* The exit codes of every nettune command, in one list, so that scripts
 * and CI jobs can branch on what happened. `nettune --help` prints this
 * list (nt_exit_codes), nettune(8) is made with it and docs/cli.md repeats it; a new code is added here
 * and nowhere else in the code. */
#ifndef NT_CLI_EXIT_H
#define NT_CLI_EXIT_H

enum nt_exit {
	NT_EXIT_OK = 0, /* done: applied, pending_confirm, a plan, a listing */
	NT_EXIT_ERROR = 1, /* any other failure (not found, agent error, ...) */
	NT_EXIT_USAGE = 2, /* bad arguments or an unreadable PROFILE.json */
	NT_EXIT_UNREACHABLE = 3, /* no agent answered at the URL */
	NT_EXIT_REFUSED = 4, /* the agent refused the profile (422) */
	NT_EXIT_CONFLICT = 5, /* another transaction in flight, or a state that forbids it (409) */
	NT_EXIT_ROLLED_BACK = 6, /* a step failed and every change was put back */
	NT_EXIT_ROLLBACK_FAILED = 7, /* a step failed and some change could not be put back */
	NT_EXIT_DENIED = 8, /* the agent wants a token, or a stronger one (401, 403) */
	NT_EXIT_REVERTED = 9, /* try: not confirmed in time, put back by the agent */
	/* bench-run --compare's gates (docs/ci.md): */
	NT_EXIT_GAIN_TOO_SMALL = 10, /* --require-gain: the gain is shown below the gain asked */
	NT_EXIT_NOT_SHOWN = 11, /* a gate is neither shown to hold nor to fail: the interval straddles it */
	NT_EXIT_LOSS = 12, /* --require-no-loss: the candidate is shown worse by more than the margin */
	NT_EXIT_NO_WINNER = 13, /* tune: no candidate shown better than the baseline; the baseline kept */
	NT_EXIT_INTERRUPTED = 130, /* try: Ctrl-C at the prompt (128 + SIGINT, as shells say) */
};

typedef struct nt_exit_code {
	int code;
	const char *meaning;
} nt_exit_code;

/* Every code with its meaning, ending with { -1, NULL }. */
extern const nt_exit_code nt_exit_codes[];

/* The exit code for an agent's HTTP STATUS (2xx: NT_EXIT_OK). */
int nt_exit_for_http(long status);
/* The exit code for a transaction that ended in STATUS ("applied", ...). */
int nt_exit_for_txn_status(const char *status);

#endif
