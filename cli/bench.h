/* SPDX-License-Identifier: Apache-2.0 */
/* What nettune bench-run's two modes share (cli/cmd_bench.c, one run;
 * cli/cmd_bench_compare.c, A/B rounds): requests to the agent, the counter
 * snapshots, applying a profile as a transaction with a confirm window and
 * putting it back, running COMMAND, and the signals that must not end
 * bench-run before the host is back. This is the edge: these print. */
#ifndef NT_CLI_BENCH_H
#define NT_CLI_BENCH_H

#include "cli/cli.h"
#include "cli/metric.h"
#include "kernel/ctx.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* bench-run's own failures, kept apart from COMMAND's statuses as
 * timeout(1) and env(1) do. */
#define NT_BENCH_FAILED 125
#define NT_BENCH_DEFAULT_CONFIRM_S 3600

/* METHOD PATH with BODY (borrowed, may be NULL). Returns 0 when the agent
 * answered, with the status in *STATUS, the JSON answer in *DOC (owned by
 * the caller, NULL when not JSON) and, when the status is not 2xx, the
 * problem's title, detail and JSON paths in ERR; -1 when no answer came. */
int nt_bench_call(const char *agent, const char *method, const char *path, const json_t *body, long *status,
		  json_t **doc, char *err, size_t errsize);

/* A counter snapshot (host/counters.h) of the agent's host and CTX's
 * /proc/softirqs, with the per-queue counters (GET /v1/nics/{name}) of
 * every NIC with a device of its own and of NEAR (may be NULL). Returns
 * NULL with ERR set. */
json_t *nt_bench_snapshot(const char *agent, const nt_ctx *ctx, const char *near, char *err, size_t errsize);

/* The per-queue part of a counter delta C (host/counters.h) on stderr:
 * without ROUND, each queue that moved (packets and bytes), the lines of
 * a queue that took (nearly) all of its NIC's packets, and the NICs
 * without per-queue counters once per reason; with ROUND ("round 3"), only
 * the skew lines, each after ROUND. Strings already escaped for the
 * terminal. */
void nt_bench_print_queues(const json_t *c, const char *round);

/* Plan PROFILE and apply the plan by its id with a confirm window of CT
 * seconds. *ID: the transaction to put back (0 when the host already had
 * every value); *TXN (may be NULL): the report's "transaction" object,
 * owned by the caller. Returns 0, or -1 after saying why on stderr
 * (nothing of it stands then). */
int nt_bench_apply(const char *agent, const json_t *profile, long ct, long long *id, json_t **txn);

/* Put the host back: roll transaction ID back (0: nothing to do), filling
 * REPORT's "rollback" and "reverted_by_agent". Returns 0 when the host
 * holds none of ID's changes, -1 otherwise (said on stderr). */
int nt_bench_undo(const char *agent, long long id, json_t *report);

/* From here a SIGINT, SIGTERM or SIGHUP is noted and passed on to a
 * running COMMAND's process group instead of ending bench-run. */
void nt_bench_catch_signals(void);
/* The signal noted, 0 when none. */
int nt_bench_signal(void);

/* Run ARGS (ARGS[0] looked up in PATH) in a process group of its own that
 * dies with bench-run, and wait for it. With OUT non-NULL its standard
 * output is read into *OUT (NUL-terminated, *OUTLEN bytes, owned by the
 * caller; at most NT_BENCH_MAX_OUTPUT bytes kept, the rest dropped and
 * said); else it inherits ours. When COMMAND exits, what is left of its
 * process group gets SIGTERM, and SIGKILL when it still holds the output
 * NT_BENCH_GROUP_GRACE_S later; a signal passed on that COMMAND outlives
 * by NT_BENCH_KILL_GRACE_S is followed by SIGKILL (said). *EXIT_STATUS:
 * its status, 128+N when signal N ended it; *SIGNALLED: which signal (0
 * none); *DURATION_S: how long COMMAND ran. Returns 0, or -1 when it could
 * not be started (said). */
#define NT_BENCH_MAX_OUTPUT (16u << 20)
#define NT_BENCH_KILL_GRACE_S 5
#define NT_BENCH_GROUP_GRACE_S 2
int nt_bench_exec(char **args, char **out, size_t *outlen, int *exit_status, int *signalled, double *duration_s);

/* Whether CTX's process runs in a network namespace other than the
 * initial one (kernel/kernel.h) and STEPS (a plan's or a transaction's)
 * change targets that reach the whole machine, as their kinds declare
 * (settings/setting.h, nt_setting_scope; a kind this nettune does not
 * know counts as machine-wide): then a warning on stderr and in REPORT's
 * "warnings". */
void nt_bench_netns_warning(const nt_ctx *ctx, const json_t *steps, json_t *report);

/* Write REPORT to PATH through a temporary file, so a reader never sees
 * half of it. Returns 0 or -1 (said). */
int nt_bench_write_report(const json_t *report, const char *path);

/* REPORT as one JSON document on standard output (--json): a CI job reads
 * its verdict there, so an output that cannot be written (stdout closed,
 * a full disk) is a failure, said as WHO. Returns 0 or -1. */
int nt_bench_json_stdout(const json_t *report, const char *who);

/* What the rounds of bench-run --compare and tune share (cli/bench_round.c). */
/* A figure named on the command line beside the primary one
 * (--also-json, --also-regex), read from every round's output. */
typedef struct nt_bench_also {
	enum nt_metric_source source; /* NT_METRIC_JSON or NT_METRIC_REGEX */
	const char *arg; /* the path or the expression (within the option's value) */
	char name[40]; /* the path, or the regex's NAME */
	bool lower_is_better;
} nt_bench_also;

typedef struct nt_bench_rounds {
	const cli_opts *o; /* --near, --cpus: COMMAND bound again after each apply */
	const char *agent;
	long ct; /* the confirm window of each applied round, seconds */
	const nt_ctx *ctx;
	char **args; /* COMMAND */
	enum nt_metric_source source;
	const char *metric_arg;
	const char *who; /* "bench-run", "tune": the messages' prefix */
	const char *run; /* "comparison", "search": what a failed round stops */
	json_t *report; /* the run's report (borrowed, may be NULL): "queue_stats_missing" once */
	char unit[32], reader[16]; /* the last figure's unit and reader */
	/* The other figures any round printed (cli/metric.h), each named
	 * once with its unit and direction, in the order first seen; each
	 * round's values are in its report object's "metrics". */
	nt_metric_others others;
	nt_bench_also also[2 * NT_CLI_LIST_MAX];
	int nalso;
	double last_duration_s; /* COMMAND's time in the last round that ran it */
	bool restored; /* every round put back so far (start it true) */
} nt_bench_rounds;

/* One round: PROFILE (NULL: the host as it is) applied by its plan id with
 * B's confirm window, COMMAND run, its figure read into *VALUE, the
 * counters around it, the profile reverted in place. WHAT names the
 * profile for people ("candidate"), K the round. RR (borrowed) is the
 * round's report object, filled with value, exit_status, duration_s,
 * transaction, rollback, counters, "metrics" (the other figures of
 * COMMAND's output by name, when it has any), and "void" when the agent reverted the
 * profile before COMMAND ended. Returns 0 (*VALUE set), NT_BENCH_FAILED
 * (no figure, a void round, the host not put back: b->restored false) or
 * 128+N after signal N; the host is put back before either. */
int nt_bench_round(nt_bench_rounds *b, const json_t *profile, const char *what, int k, json_t *rr, double *value);

/* V in UNIT for people: bits/s scaled ("9.41 Gbit/s"). */
void nt_bench_fmt_value(char *buf, size_t size, double v, const char *unit);
/* A number of JSON, null when not finite (an unbounded end). New reference. */
json_t *nt_bench_real_or_null(double x);
/* PATH's JSON into *DOC (the caller's), or -1 after saying why as WHO. */
int nt_bench_load(const char *who, const char *path, json_t **doc);
/* TEXT into PATH through a temporary file; -1 after saying "cannot write
 * WHAT PATH" as WHO. */
int nt_bench_write_text(const char *who, const char *what, const char *text, const char *path);

/* --metric, --metric-json, --metric-regex and the better direction into
 * B's source and metric_arg (a bad path or expression found now). Returns
 * 0, or -1 after saying why as WHO (a usage error). */
int nt_bench_metric_setup(const cli_opts *o, const char *who, nt_bench_rounds *b);
/* --seed into *SEED, or a seed drawn now. Returns 0, or -1 after saying why. */
int nt_bench_seed(const cli_opts *o, const char *who, uint64_t *seed);

/* A/B rounds (cli/cmd_bench_compare.c): bench-run --compare ROUNDS. */
int nt_bench_compare(const cli_opts *o, int nargs, char **args);

#endif
