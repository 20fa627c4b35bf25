/* The nettune command line: cli/main.c parses the options and dispatches
 * to one file per group of commands, each a function of the parsed options
 * and the positional arguments that returns the exit code.
 *
 *   cli/cmd_host.c   read the host directly: topology, diagnose, irqs,
 *                    rates, placement, run
 *   cli/cmd_txn.c    talk to a running agent (over cli/client.c): plan,
 *                    apply, confirm, rollback, show, history, desired, drift
 *   cli/cmd_serve.c  serve: the agent and its HTTP server
 *
 * This is the edge: these files print and choose exit codes (2 for a usage
 * error); the core they call does neither. */
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
	long interval_ms;
	const char *near;
	long cpus;
	bool fix_profile;
	bool persist; /* apply --persist */
	/* serve */
	const char *tokens, *tls_cert, *tls_key, *tls_client_ca;
	long max_body, client_timeout, max_connections;
	bool log_json;
	const char *drift_policy; /* "report" | "repair", NULL: the default */
	long drift_interval; /* seconds, 0: the default */
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
/* desired [show|set PROFILE.json|clear], drift. */
int nt_cmd_desired(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_drift(const char *cmd, const cli_opts *o, int nargs, char **args);

int nt_cmd_serve(const char *cmd, const cli_opts *o, int nargs, char **args);

/* S as a decimal in [LO, HI] into *OUT. Returns 0 or -EINVAL. */
int nt_cli_parse_long(const char *s, long lo, long hi, long *out);

#endif
