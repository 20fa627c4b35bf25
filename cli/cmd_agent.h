/* SPDX-License-Identifier: Apache-2.0 */
/* What the commands that talk to a running agent share (cli/cmd_txn.c,
 * cli/cmd_state.c). */
#ifndef NT_CLI_CMD_AGENT_H
#define NT_CLI_CMD_AGENT_H

#include "cli/cli.h"
#include "cli/client.h"

#include <jansson.h>
#include <stdbool.h>

/* One request to the agent, METHOD PATH with BODY (may be NULL), saying
 * WAITING while it takes long; the answer in R, its strings made safe to
 * print (cli/escape.h) when *RENDER says it is to be shown for people.
 * KIND names the answer in messages (nt_cli_exchange of cli/cli.h is
 * this without one). Returns an exit code (cli/exit.h). */
int nt_cli_exchange_as(const cli_opts *o, const char *method, const char *path, const char *body,
		       const char *waiting, const char *kind, nt_cli_reply *r, bool *render);
/* The same, the answer's strings as the agent sent them (not escaped):
 * with --json the body goes to stdout as it came; otherwise an error
 * answer is shown on stderr (its strings escaped), and *RENDER says a 2xx
 * JSON answer of KIND's shape (nt_view_malformed; NULL: any object) waits
 * in R for the caller, who escapes what it prints. */
int nt_cli_exchange_raw(const cli_opts *o, const char *method, const char *path, const char *body,
			const char *waiting, const char *kind, nt_cli_reply *r, bool *render);
/* BODY (taken, may be NULL after a failed pack) as request text, or NULL
 * with the message said. The caller frees the text. */
char *nt_cli_body_text(json_t *body);

#endif
