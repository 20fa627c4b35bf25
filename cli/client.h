/* The CLI's HTTP client of a running agent: one request, its answer
 * whole. It prints nothing; cli/cmd_txn.c decides what people see. Sends
 * `Authorization: Bearer $NETTUNE_TOKEN` when that variable is set. */
#ifndef NT_CLI_CLIENT_H
#define NT_CLI_CLIENT_H

#include <jansson.h>
#include <stddef.h>

typedef struct nt_cli_reply {
	long status; /* the HTTP status */
	char *body; /* the body exactly as received, NUL-terminated (owned) */
	size_t len; /* its length in bytes */
	json_t *doc; /* the body parsed, or NULL when it is not JSON (owned) */
	char error[256]; /* why no answer came (nt_cli_request < 0) */
} nt_cli_reply;

/* METHOD AGENT+PATH with BODY (JSON text, or NULL for none) into *R (free
 * with nt_cli_reply_free, also after a failure). WAITING (NULL: none)
 * labels the wait on a terminal's stderr when the answer takes more than a
 * second (nt_progress). Returns 0 when an answer arrived, whatever its
 * status; -EHOSTUNREACH when none did (R->error says why); -ELIBACC when
 * libcurl.so.4, opened on the first request (cli/libcurl.h), is missing
 * (R->error says what to install); -ENOMEM. */
int nt_cli_request(const char *agent, const char *method, const char *path, const char *body,
		   const char *waiting, nt_cli_reply *r);
void nt_cli_reply_free(nt_cli_reply *r);

#endif
