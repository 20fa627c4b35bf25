/* The CLI's HTTP client of a running agent. Each function prints the
 * agent's JSON answer (or its problem document on stderr) and returns the
 * process exit code: 0 on 2xx, 1 on an error answer, 3 when the agent
 * cannot be reached. */
#ifndef NT_CLI_CLIENT_H
#define NT_CLI_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

int nt_cli_plan(const char *agent, const char *profile_path);
int nt_cli_apply(const char *agent, const char *profile_path, long confirm_timeout_s);
int nt_cli_confirm(const char *agent, const char *id);
int nt_cli_rollback(const char *agent, const char *id, bool force);
int nt_cli_show(const char *agent, const char *id);
int nt_cli_history(const char *agent, const char *status, long limit);

/* One request without printing: BODY (borrowed, may be NULL) as JSON, the
 * Idempotency-Key header when IDEMPOTENCY_KEY is not NULL. Returns 0 when
 * the agent answered, with the HTTP status in *STATUS and the answer in
 * *DOC (the caller owns it; NULL when it was not JSON), and ERR holding the
 * problem document's title, detail and JSON paths in one line when the
 * status is not 2xx; -1 when it could not be reached (ERR says why). */
int nt_cli_call(const char *agent, const char *method, const char *path, const json_t *body,
		const char *idempotency_key, long *status, json_t **doc, char *err, size_t errsize);

#endif
