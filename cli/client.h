/* The CLI's HTTP client of a running agent. Each function prints the
 * agent's JSON answer (or its problem document on stderr) and returns the
 * process exit code: 0 on 2xx, 1 on an error answer, 3 when the agent
 * cannot be reached. */
#ifndef NT_CLI_CLIENT_H
#define NT_CLI_CLIENT_H

#include <stdbool.h>

int nt_cli_plan(const char *agent, const char *profile_path);
int nt_cli_apply(const char *agent, const char *profile_path, long confirm_timeout_s,
		 bool persist);
int nt_cli_confirm(const char *agent, const char *id);
int nt_cli_rollback(const char *agent, const char *id, bool force);
int nt_cli_show(const char *agent, const char *id);
int nt_cli_history(const char *agent, const char *status, long limit);

int nt_cli_desired_show(const char *agent);
int nt_cli_desired_set(const char *agent, const char *profile_path);
int nt_cli_desired_clear(const char *agent);
int nt_cli_drift(const char *agent);

#endif
