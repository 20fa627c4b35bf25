/* SPDX-License-Identifier: Apache-2.0 */
/* The nettune command line: cli/main.c parses the options and dispatches
 * to one file per group of commands, each a function of the parsed options
 * and the positional arguments that returns the exit code.
 *
 *   cli/cmd_host.c   read the host directly: topology, irqs, rates,
 *                    placement, run
 *   cli/cmd_diagnose.c diagnose: asks the agent named, else reads the host
 *   cli/cmd_txn.c    talk to a running agent (over cli/client.c): plan,
 *                    apply, try, confirm, rollback, show, history, desired,
 *                    drift
 *   cli/cmd_serve.c  serve: the agent and its HTTP server
 *
 * This is the edge: these files print and choose exit codes (cli/exit.h);
 * the core they call does neither. What they print for people goes through
 * cli/output.h (colour, tables, problem documents) and, for the agent's
 * documents, cli/txn_view.h. */
#ifndef NT_CLI_CLI_H
#define NT_CLI_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define NT_CLI_DEFAULT_AGENT "http://127.0.0.1:8470"
/* Transactions a serving agent keeps in its history unless told. */
#define NT_CLI_HISTORY_KEEP 1000
/* Room for a plan id ("p-" and 32 hex digits) with some to spare. */
#define NT_CLI_PLAN_ID_MAX 64

#define NT_CLI_NOPTS 80 /* rows of nt_cli_options, with room to grow */

/* A repeatable option's values, in the order given (NT_OPT_LIST). */
#define NT_CLI_LIST_MAX 8
typedef struct nt_cli_list {
	const char *v[NT_CLI_LIST_MAX];
	int n;
} nt_cli_list;

/* Every option of every command (each command reads those it has). The
 * fields are filled through nt_cli_options (cli/options.c): a string
 * option is a const char *, a number a long, a flag a bool, a choice the
 * int index of the word chosen, a repeatable option an nt_cli_list. */
typedef struct cli_opts {
	const char *root;
	bool json;
	const char *listen;
	const char *state_dir;
	long rtt_ms;
	const char *agent;
	long confirm_timeout;
	/* bench-run */
	const char *profile, *report;
	/* bench-run --compare ROUNDS: A/B rounds (cli/cmd_bench_compare.c) */
	long compare;
	const char *baseline, *metric_json, *metric_regex, *require_gain, *plot;
	const char *loss_margin, *confidence; /* bench-run --compare's gates */
	int metric; /* --metric: 0 auto, 1 iperf3, 2 netperf, 3 neper */
	bool lower_is_better, higher_is_better, require_no_loss;
	const char *seed; /* the order of the blocks (cli/bench_design.h) */
	const char *neper_samples; /* neper's -A FILE, read after each round */
	/* More figures of COMMAND's output: --also-json DIR:PATH and
	 * --also-regex DIR:NAME:RE, each repeatable (NT_OPT_LIST). */
	nt_cli_list also_json, also_regex;
	bool warmup, paired;
	/* tune (cli/cmd_tune.c) */
	const char *space, *budget;
	bool keep;
	long max_rounds;
	bool force;
	const char *status;
	long limit;
	const char *since;
	int output; /* -o / --output: 0 text, 1 json (sets json) */
	long interval_ms;
	const char *near;
	long cpus;
	const char *cpus_list; /* placement, run, bench-run: the application's CPUs, named */
	bool fix_profile;
	const char *nic; /* irqs --nic */
	const char *name; /* plan, apply, try --name: a stored or shipped profile */
	/* serve */
	const char *config; /* the configuration file (cli/config.c) */
	bool check_config; /* check it and the profiles directory, then exit */
	const char *tokens, *tls_cert, *tls_key, *tls_client_ca;
	long max_body, client_timeout, max_connections, max_per_client;
	int log_format; /* 0 text, 1 json */
	const char *profiles_dir;
	const char *desired_file; /* the desired state as a file */
	int drift_policy; /* 0 repair, 1 report (cli/options.c) */
	long drift_interval; /* seconds, 0: the default 30 */
	long held_files; /* kernel files kept open between reads; unset: 8192 */
	long history_keep; /* transactions kept in the history; unset: 1000, 0 all */
	long plan_ttl; /* seconds a plan is kept for an apply by id; unset: 600 */
	bool allow_machine_wide; /* in another network namespace: plan machine-wide kinds anyway */
	bool metrics_queues; /* GET /metrics: each queue's counters (a series a queue and counter) */
	/* apply */
	bool persist; /* make the profile the desired state once it took effect */
	const char *plan_id; /* apply --plan ID: the plan POST /v1/plan kept */
	const char *window; /* verify --window: a duration (cli/args.c) */
	bool verbose; /* plan, apply, try, rollback, show: every warning, not alike ones as one line */
	/* Which options were given, by row of nt_cli_options: the
	 * command line's override the configuration file's. */
	bool set[NT_CLI_NOPTS];
} cli_opts;

/* One option. NAME is its long name (--NAME); KIND says how its value is
 * read and what field type sits at OFF in cli_opts; numbers must lie in
 * [LO, HI]; WHAT names the value in messages; CHOICES lists an enum's
 * words (NULL-terminated). NT_OPT_CONF: also a key of the configuration
 * file, NAME with '_' for '-'. */
enum nt_opt_kind { NT_OPT_STR, NT_OPT_LONG, NT_OPT_FLAG, NT_OPT_ENUM, NT_OPT_HELP, NT_OPT_LIST };
#define NT_OPT_CONF 1u
typedef struct nt_cli_option {
	const char *name;
	enum nt_opt_kind kind;
	size_t off;
	long lo, hi;
	const char *what;
	const char *const *choices;
	unsigned flags;
} nt_cli_option;

/* The table, ended by a row with a NULL name. */
extern const nt_cli_option nt_cli_options[];
const nt_cli_option *nt_cli_option_find(const char *name);
/* The option a configuration key (listen, max_body, ...) stands for, or
 * NULL when KEY is not one. */
const nt_cli_option *nt_cli_option_find_key(const char *key);
/* OPT's configuration key into BUF. */
void nt_cli_option_key(const nt_cli_option *opt, char *buf, size_t size);
/* Set OPT in O from VAL (borrowed: it must outlive O; NULL for a flag given
 * without a value) and mark it given. Returns 0, or -EINVAL with what was
 * wrong in ERR ("wants seconds from 1 to 3600, not 'x'"), for the caller to
 * prefix with where the value came from. */
int nt_cli_option_set(const nt_cli_option *opt, const char *val, cli_opts *o, char *err,
		      size_t errsize);
/* The size of OPT's field in cli_opts (0 for --help, which has none). */
size_t nt_cli_option_size(const nt_cli_option *opt);
/* Copy into DST every option SRC was given and DST was not. */
void nt_cli_options_merge(cli_opts *dst, const cli_opts *src);

/* A command: CMD is its name as typed, ARGS its NARGS positional
 * arguments. Returns the process exit code. */
typedef int (*nt_cli_cmd)(const char *cmd, const cli_opts *o, int nargs, char **args);

/* The host at --root (else /) into *T, saying why on stderr when it cannot
 * be read. Returns 0 or a negative errno. */
struct nt_topology;
int nt_cli_read_host(const cli_opts *o, struct nt_topology **t);

int nt_cmd_topology(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_diagnose(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_irqs(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_nics(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_rates(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_placement(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_run(const char *cmd, const cli_opts *o, int nargs, char **args);
/* bench-run --profile P.json [--near IFACE] [--cpus N] [--report FILE] -- COMMAND;
 * with --compare ROUNDS, A/B rounds against the host as it is or --baseline. */
int nt_cmd_bench_run(const char *cmd, const cli_opts *o, int nargs, char **args);
/* tune [--baseline B.json] CANDIDATE.json... | --space SPACE.json [--budget D]
 * [--keep] -- COMMAND: race candidates against the baseline (cli/cmd_tune.c). */
int nt_cmd_tune(const char *cmd, const cli_opts *o, int nargs, char **args);

/* Bind this process to the CPUs and memory node placement recommends for
 * an application using IFNAME (o->cpus, o->root), as `run --near` does;
 * WHERE (may be NULL) gets "cpus LIST, node N". Prints why on failure.
 * Returns 0, 2 (no such NIC, its node unknown) or 1. */
int nt_cli_bind_near(const cli_opts *o, const char *ifname, char *where, size_t wsize);

/* plan and apply: one PROFILE.json. */
int nt_cmd_profile(const char *cmd, const cli_opts *o, int nargs, char **args);
/* confirm, rollback and show: one transaction ID. */
int nt_cmd_txn_id(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_history(const char *cmd, const cli_opts *o, int nargs, char **args);
/* desired [show|set PROFILE.json|clear], drift. */
int nt_cmd_desired(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_drift(const char *cmd, const cli_opts *o, int nargs, char **args);
int nt_cmd_verify(const char *cmd, const cli_opts *o, int nargs, char **args);
/* try: apply PROFILE.json with a confirm deadline and ask at the terminal. */
int nt_cmd_try(const char *cmd, const cli_opts *o, int nargs, char **args);

/* One request to the agent (cli/cmd_txn.c): with --json the body goes to
 * stdout as it came; otherwise an error answer is said on stderr and
 * *RENDER tells that a 2xx JSON answer (or a 204) waits in R. Returns the
 * exit code. */
struct nt_cli_reply;
/* --agent, else $NETTUNE_AGENT, else the default. */
const char *nt_cli_agent_url(const cli_opts *o);
int nt_cli_exchange(const cli_opts *o, const char *method, const char *path, const char *body,
		    const char *waiting, struct nt_cli_reply *r, bool *render);
/* PATH's profile document ("-": standard input), or NULL after saying why. */
json_t *nt_cli_load_profile(const char *path);

/* profiles [list] | show NAME | put NAME FILE | delete NAME. */
int nt_cmd_profiles(const char *cmd, const cli_opts *o, int nargs, char **args);

#ifndef NT_SHIPPED_PROFILES_DIR /* CMake sets it from the install prefix */
#define NT_SHIPPED_PROFILES_DIR "/usr/share/nettune/profiles"
#endif
/* Where the shipped profiles are: $NETTUNE_SHIPPED_PROFILES when set;
 * else, for a nettune run from the build tree it was built in, the source
 * tree's profiles/; else where they are installed, NT_SHIPPED_PROFILES_DIR
 * (the package's /usr/share/nettune/profiles). */
const char *nt_cli_shipped_dir(void);
/* --name NAME: {"profile_name": NAME} (*NAME set) when the agent stores a
 * profile NAME, else the shipped NAME.json's document (*PROFILE, owned by
 * the caller), saying so on stderr. Returns 0 or the exit code, said. */
int nt_cli_named_profile(const cli_opts *o, const char *name, json_t **profile, const char **stored);

int nt_cmd_serve(const char *cmd, const cli_opts *o, int nargs, char **args);

/* S as a decimal in [LO, HI] into *OUT. Returns 0 or -EINVAL. */
int nt_cli_parse_long(const char *s, long lo, long hi, long *out);
/* history --since: S as a time back from NOW_MS ("30m", "12h", "7d",
 * "90s") or a UTC date and time ("2026-11-30", "2026-11-30T16:00",
 * "2026-11-30 16:00:05Z"), into *OUT_MS (ms since the epoch). Returns 0 or
 * -EINVAL. */
int nt_cli_parse_since(const char *s, long long now_ms, long long *out_ms);
/* verify --window: S as a duration, "2s", "500ms", "1m" or a bare number
 * of seconds, into milliseconds in [LO, HI]. Returns 0 or -EINVAL. */
int nt_cli_parse_window_ms(const char *s, long lo, long hi, long *out_ms);

#endif
