/* SPDX-License-Identifier: Apache-2.0 */
/* The CLI's HTTP client of a running agent: one request, its answer
 * whole. It prints nothing; cli/cmd_txn.c decides what people see. Sends
 * `Authorization: Bearer $NETTUNE_TOKEN` when that variable is set. */
#ifndef NT_CLI_CLIENT_H
#define NT_CLI_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The largest answer read (a 200 MB one took 968 MB to hold and parse):
 * the biggest the agent sends, a history page of 500 transactions with
 * their steps, is a few MiB. */
#define NT_CLI_MAX_REPLY ((size_t)64 << 20)
/* How long an answer is waited for unless NETTUNE_TIMEOUT says otherwise
 * (seconds). */
#define NT_CLI_DEFAULT_TIMEOUT_S 120L

typedef struct nt_cli_reply {
	long status; /* the HTTP status */
	char *body; /* the body exactly as received, NUL-terminated (owned) */
	size_t len; /* its length in bytes */
	size_t cap; /* bytes allocated for body, its NUL included */
	json_t *doc; /* the body parsed, or NULL when it is not JSON (owned) */
	char error[256]; /* why no answer came (nt_cli_request < 0) */
	bool too_big; /* the answer passed NT_CLI_MAX_REPLY */
} nt_cli_reply;

/* METHOD AGENT+PATH with BODY (JSON text, or NULL for none) into *R (free
 * with nt_cli_reply_free, also after a failure). WAITING (NULL: none)
 * labels the wait on a terminal's stderr when the answer takes more than a
 * second (nt_progress). Returns 0 when an answer arrived, whatever its
 * status; -EHOSTUNREACH when none did (R->error says why); -ELIBACC when
 * libcurl.so.4, opened on the first request (cli/libcurl.h), is missing
 * (R->error says what to install); -ETIMEDOUT when none came within
 * NETTUNE_TIMEOUT seconds (default NT_CLI_DEFAULT_TIMEOUT_S); -EFBIG when
 * it was larger than NT_CLI_MAX_REPLY; -EINVAL when AGENT is not an
 * http:// or https:// URL or NETTUNE_TIMEOUT is not a number of seconds
 * (1-86400); -ENOMEM. R->error says which. */
int nt_cli_request(const char *agent, const char *method, const char *path, const char *body,
		   const char *waiting, nt_cli_reply *r);
void nt_cli_reply_free(nt_cli_reply *r);

/* NETTUNE_TIMEOUT's value ENV (NULL or "": the default) as seconds into
 * *OUT. Returns 0, or -EINVAL when it is not a whole number 1-86400. */
int nt_cli_timeout_s(const char *env, long *out);

#endif
