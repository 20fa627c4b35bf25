/* The nettune command line: cli/main.c parses the options and dispatches
 * to one file per group of commands, each a function of the parsed options
 * and the positional arguments that returns the exit code.
 *
 *   cli/cmd_host.c   read the host directly: topology, diagnose, irqs,
 *                    rates, placement, run
 *   cli/cmd_txn.c    talk to a running agent (over cli/client.c): plan,
 *                    apply, try, confirm, rollback, show, history
 *   cli/cmd_serve.c  serve: the agent and its HTTP server
 *
 * This is the edge: these files print and choose exit codes (cli/exit.h);
 * the core they call does neither. What they print for people goes through
 * cli/output.h (colour, tables, problem documents) and, for the agent's
 * documents, cli/txn_view.h. */
#ifndef NT_CLI_CLI_H
#define NT_CLI_CLI_H

#include <stdbool.h>

#define NT_CLI_DEFAULT_AGENT "http://127.0.0.1:8470"

/* Every option of every command (each command reads those it has). */
typedef struct cli_opts {
	const char *root;
	bool json;
	const char *listen;
	const char *state_dir;
	int rtt_ms;
	const char *agent;
	long confirm_timeout;
	bool force;
	const char *status;
	long limit;
	const char *since;
	long interval_ms;
	const char *near;
	long cpus;
	bool fix_profile;
	/* serve */
	const char *tokens, *tls_cert, *tls_key, *tls_client_ca;
	long max_body, client_timeout, max_connections;
	bool log_json;
} cli_opts;

/* A command: CMD is its name as typed, ARGS its NARGS positional
 * arguments. Returns the process exit code. */
typedef int (*nt_cli_cmd)(const char *cmd, const cli_opts *o, int nargs, char **args);

int nt_cmd_topology(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_diagnose(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_irqs(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_rates(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_placement(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_run(const char *cmd, const cli_opts *o, int nargs, char **args);

/* plan and apply: one PROFILE.json. */
int nt_cmd_profile(const char *cmd, const cli_opts *o, int nargs, char **args);
/* confirm, rollback and show: one transaction ID. */
int nt_cmd_txn_id(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_history(const char *cmd, const cli_opts *o, int nargs, char **args);
/* try: apply PROFILE.json with a confirm deadline and ask at the terminal. */
int nt_cmd_try(const char *cmd, const cli_opts *o, int nargs, char **args);

int nt_cmd_serve(const char *cmd, const cli_opts *o, int nargs, char **args);

/* S as a decimal in [LO, HI] into *OUT. Returns 0 or -EINVAL. */
int nt_cli_parse_long(const char *s, long lo, long hi, long *out);
/* history --since: S as a time back from NOW_MS ("30m", "12h", "7d",
 * "90s") or a UTC date and time ("2026-11-30", "2026-11-30T16:00",
 * "2026-11-30 16:00:05Z"), into *OUT_MS (ms since the epoch). Returns 0 or
 * -EINVAL. */
int nt_cli_parse_since(const char *s, long long now_ms, long long *out_ms);

#endif
