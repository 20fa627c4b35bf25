/* SPDX-License-Identifier: Apache-2.0 */
/* nettune: the thin main. It parses the options and hands the command to
 * its group's file (see cli/cli.h). Subcommands that read the host link the
 * core directly; those that change it talk to the running agent over HTTP,
 * so every change goes through the agent's journal. */
#include "cli/cli.h"
#include "cli/exit.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: nettune COMMAND [OPTIONS]\n"
	"\n"
	"Per-host network tuning agent: reports NUMA/NIC/IRQ placement, applies\n"
	"tuning profiles as journalled transactions, and keeps their history.\n"
	"\n"
	"Commands that read the host directly:\n"
	"  topology [--root DIR] [--json]     the host model (NUMA, NICs, IRQs, bonds, sysctls)\n"
	"  diagnose [--root DIR | --agent URL] [--json] [--rtt-ms N] [--fix-profile]\n"
	"                                     what is misplaced, with the profile fragment that fixes it;\n"
	"                                     --fix-profile prints one profile of all fixes, for apply;\n"
	"                                     asks the agent when one is named (--agent URL, or\n"
	"                                     NETTUNE_AGENT without --root), else reads DIR or this host\n"
	"  irqs [IFACE|--nic IFACE] [--root DIR] [--interval-ms N] [--json]\n"
	"                                     a table of every IRQ (of IFACE only when given): owner,\n"
	"                                     queue, affinity, effective CPUs, their node (red: off\n"
	"                                     the NIC's) and interrupts/s over N ms (default 250);\n"
	"                                     --json the document of GET /v1/irqs (per-CPU counts)\n"
	"  nics IFACE [--root DIR] [--json]   one NIC with its MTU and range, queue length and root\n"
	"                                     qdisc, and its queues: each RX queue's IRQ, the CPUs\n"
	"                                     it may run on and the one serving it, its RPS CPUs and\n"
	"                                     RFS flows; each TX queue's XPS CPUs and RX queues; each\n"
	"                                     queue's NAPI and the CPUs its thread may run on; the\n"
	"                                     NAPIs (IRQ, thread, deferral) from the kernel's netdev\n"
	"                                     family, or sysfs and thread names on older kernels; its\n"
	"                                     RSS table and RSS contexts (each context's queues,\n"
	"                                     input transformation and the flow rules into it, or\n"
	"                                     why there are none); its\n"
	"                                     offload features and flow control; the ring and\n"
	"                                     coalescing parameters only ethtool netlink reaches\n"
	"                                     (header/data split, hds-thresh, push modes, CQE mode),\n"
	"                                     each with its value or why it is not supported\n"
	"  rates [--root DIR] [--interval-ms N] [--json]\n"
	"                                     interrupts per second per CPU and node over N ms (default\n"
	"                                     1000), flagging those served off their NIC's node\n"
	"  placement IFACE [--root DIR] [--agent URL] [--cpus N] [--cpus-list LIST] [--json]\n"
	"                                     where an application using IFACE should run, and the\n"
	"                                     rule that chose it: the CPUs the profile in effect reserved\n"
	"                                     for IFACE (asked of the agent: always with --agent or\n"
	"                                     NETTUNE_AGENT, without --root otherwise), else CPUs of its\n"
	"                                     node serving no NIC's interrupts and not excluded; a bond\n"
	"                                     stands for its ports; --cpus-list names the CPUs (needed\n"
	"                                     for a NIC of unknown node, such as a veth)\n"
	"  run --near IFACE [--root DIR] [--agent URL] [--cpus N] [--cpus-list LIST] -- COMMAND [ARGS...]\n"
	"                                     run COMMAND bound to the CPUs and memory node(s) that\n"
	"                                     placement recommends (what numactl --cpubind --membind does)\n"
	"\n"
	"The agent:\n"
	"  serve [--listen ADDR:PORT] [--root DIR] [--state-dir DIR] [--rtt-ms N]\n"
	"                                     serve the HTTP/JSON API (default 127.0.0.1:8470,\n"
	"                                     root /, state in /var/lib/nettune) and the web view at\n"
	"                                     /ui/ (GET / leads there)\n"
	"        [--tokens FILE]              bearer tokens, lines 'NAME read|apply SECRET' (mode 600);\n"
	"                                     required to listen on a non-loopback address\n"
	"        [--tls-cert PEM --tls-key PEM] serve HTTPS\n"
	"        [--tls-client-ca PEM]        accept client certificates signed by this CA (scope apply)\n"
	"        [--max-body BYTES]           largest request body (default 1048576)\n"
	"        [--client-timeout S]         close idle or slow connections after S s (default 30)\n"
	"        [--max-connections N]        open connections at once (default 64; a quarter is\n"
	"                                     kept for connections that sent their request head)\n"
	"        [--max-per-client N]         ... from one client address (default half of those)\n"
	"        [--log-format text|json]     access and transaction-step log on stderr (default text)\n"
	"        [--profiles-dir DIR]         load DIR/NAME.json as stored profile NAME at start and\n"
	"                                     on SIGHUP; an invalid file (or a FIFO, a directory, a\n"
	"                                     dangling link, over 1 MiB) is reported and skipped\n"
	"        [--desired-file FILE]        hold FILE's profile as the desired state (read at start\n"
	"                                     and on SIGHUP; an invalid file, one that is not a\n"
	"                                     regular file or is over 1 MiB, is reported, a missing\n"
	"                                     one changes nothing)\n"
	"        [--drift-policy repair|report] hold the desired state: repair drift as transactions\n"
	"                                     (default), or only report it\n"
	"        [--drift-interval S]         check IRQ affinity and sysctls every S s (default 30);\n"
	"                                     links and ethtool settings are checked on kernel events\n"
	"        [--held-files N]             keep up to N IRQ files open between reads of the host\n"
	"                                     (default 8192: all of up to 2730 IRQs; each costs a\n"
	"                                     descriptor and about 4 KB of kernel memory; 0 opens\n"
	"                                     them on every read)\n"
	"        [--history-keep N]           keep the newest N transactions in the history (default\n"
	"                                     1000; older finished ones are deleted with their\n"
	"                                     steps; 0 keeps all)\n"
	"        [--plan-ttl S]               keep each plan S s for 'apply --plan ID' (default 600;\n"
	"                                     in memory, the newest 64)\n"
	"        [--allow-machine-wide]       in a network namespace other than the initial one,\n"
	"                                     plan IRQ affinity, irqbalance and host-wide sysctls\n"
	"                                     anyway (refused there by default: they change the\n"
	"                                     whole machine)\n"
	"        [--metrics-queues]           GET /metrics also serves each queue's counters\n"
	"                                     (qstats-get: nettune_queue_rx_packets_total{nic,queue}\n"
	"                                     ...); off by default: a series per queue and counter\n"
	"        [--config FILE]              read options from FILE (default /etc/nettune/nettune.conf\n"
	"                                     when it exists): 'key = value' lines, keys the options\n"
	"                                     above with '_' for '-' (listen, max_body, ...), '#'\n"
	"                                     comments; options given here override the file; an\n"
	"                                     unknown key or bad value refuses to start;\n"
	"                                     SIGHUP re-reads FILE, the token file and the profiles\n"
	"                                     directory\n"
	"        [--check-config]             check the configuration, the token and TLS files and\n"
	"                                     every profile file against this host, then exit (0: all\n"
	"                                     valid); nothing is opened, listened on or stored\n"
	"\n"
	"Commands that talk to a running agent (--agent URL, or NETTUNE_AGENT, default\n"
	"" NT_CLI_DEFAULT_AGENT "; NETTUNE_TOKEN in the environment is sent as a bearer token;\n"
	"an answer is waited for NETTUNE_TIMEOUT seconds, default 120, and read up to 64 MiB).\n"
	"They print for people, the agent's strings with control characters and bidi overrides\n"
	"escaped (\\x1b, \\u202e); --json (or -o json) prints the agent's JSON answer unchanged\n"
	"on stdout instead, error documents included:\n"
	"  plan PROFILE.json | --name NAME [--verbose]\n"
	"                                     the steps a profile would take, by interface and kind,\n"
	"                                     with its warnings, and the plan's id; changes nothing;\n"
	"                                     warnings alike but for their interface, queue or\n"
	"                                     numbers are one line (plan, apply, try, rollback, show),\n"
	"                                     --verbose lists each as the agent sent it\n"
	"                                     (plan and apply read the profile from standard input\n"
	"                                     when it is -; --name: the agent's stored profile NAME,\n"
	"                                     else the shipped NAME.json, see below)\n"
	"  apply PROFILE.json | --name NAME [--confirm-timeout S] [--persist] [--verbose]\n"
	"                                     apply a profile as one transaction; with a timeout the\n"
	"                                     agent reverts it unless 'nettune confirm ID' comes in time;\n"
	"                                     --persist makes it the desired state once it took effect\n"
	"  apply --plan ID [--confirm-timeout S] [--persist]\n"
	"                                     apply exactly the plan 'plan' printed the id of, once;\n"
	"                                     nothing is applied if a target moved since, or the host\n"
	"                                     under the plan changed: a CPU offline, a NIC gone or with\n"
	"                                     other queues or IRQs (plan again)\n"
	"  try PROFILE.json | --name NAME [--confirm-timeout S] [--verbose]\n"
	"                                     apply, then ask at the terminal: ENTER keeps it; unless\n"
	"                                     confirmed within S s (default 120) the agent puts it back\n"
	"  confirm ID                         confirm a transaction applied with --confirm-timeout\n"
	"  rollback ID [--force] [--verbose]  undo a transaction, as a new transaction; one still\n"
	"                                     waiting for confirmation is reverted at once\n"
	"  show ID [--verbose]                one transaction with its steps and their results\n"
	"  history [--status S] [--limit N] [--since WHEN]\n"
	"                                     past transactions, newest first (default 20; WHEN is\n"
	"                                     30m, 12h, 7d or a UTC time such as 2026-11-30T16:00)\n"
	"  profiles [list]                    the profiles the agent stores, and the shipped ones\n"
	"  profiles show NAME                 one of them (stored first, else shipped)\n"
	"  profiles put NAME PROFILE.json     store PROFILE as NAME (validated against the host)\n"
	"  profiles delete NAME               remove stored profile NAME\n"
	"  desired [show]                     the desired state, who set it and when, its history\n"
	"  desired set PROFILE.json           make PROFILE the desired state (validated first)\n"
	"  desired clear                      stop holding it (the host is not changed)\n"
	"  drift                              each target that differs from the desired state:\n"
	"                                     desired, current, state, repairs\n"
	"  verify [--window D]                where each NIC IRQ's interrupts landed over D (2s,\n"
	"                                     500ms, 1m; default 2s, 100ms to 60s): delivered (only on\n"
	"                                     CPUs of its placement, else of its affinity), elsewhere\n"
	"                                     (the CPUs and counts), or not observed (it did not fire:\n"
	"                                     inconclusive; its queues' packets, where the kernel\n"
	"                                     counts them, tell no traffic from traffic polled without\n"
	"                                     it); RPS wake-ups outside rps_cpus too; and each NAPI\n"
	"                                     thread the agent pinned: where it ran (its run time and\n"
	"                                     last CPU). Exit status 1 when any IRQ, RPS or NAPI\n"
	"                                     thread was delivered elsewhere\n"
	"  bench-run --profile P.json [--near IFACE] [--cpus N] [--cpus-list LIST] [--report FILE]\n"
	"            [--confirm-timeout S] [--root DIR] -- COMMAND [ARGS...]\n"
	"                                     apply P as one transaction (reverted by the agent after S\n"
	"                                     s, default 3600, if bench-run dies), run COMMAND (bound near\n"
	"                                     IFACE as run --near does; it dies with bench-run), revert P\n"
	"                                     at once, also when COMMAND fails or bench-run gets\n"
	"                                     SIGINT/SIGTERM/SIGHUP; the counters' change (per queue\n"
	"                                     too, from qstats-get, for NICs with a device and IFACE; a\n"
	"                                     queue that took 90%+ of its NIC's packets said; NICs\n"
	"                                     without per-queue counters said once) goes to a\n"
	"                                     table on stderr and, with\n"
	"                                     --report, a JSON report (steps a failed transaction never\n"
	"                                     reached: \"not run\"); in a network namespace of its own it\n"
	"                                     warns that IRQ affinity, other_irqs, rings, channels and\n"
	"                                     coalesce change the whole machine. Exit status:\n"
	"                                     COMMAND's (128+N when signal N ended it); 125 when the\n"
	"                                     run could not start or the host could not be put back.\n"
	"                                     COMMAND's process group ends with it; a signal it\n"
	"                                     ignores is followed by SIGKILL after 5 s, exit 128+N\n"
	"  bench-run --compare ROUNDS --profile P.json [--baseline B.json]\n"
	"            [--metric auto|iperf3|netperf|neper]\n"
	"            [--metric-json PATH | --metric-regex RE] [--higher-is-better | --lower-is-better]\n"
	"            [--require-gain PCT] [--require-no-loss] [--loss-margin PCT] [--confidence C]\n"
	"            [--plot FILE.svg] [--report FILE] [--json] [--seed N] [--warmup] [--paired]\n"
	"            [--near IFACE] [--cpus N] [--confirm-timeout S] [--neper-samples FILE]\n"
	"            [--also-json higher|lower:PATH]... [--also-regex higher|lower:NAME:RE]...\n"
	"            -- COMMAND [ARGS...]\n"
	"                                     A/B rounds: COMMAND ROUNDS times with the host as it is\n"
	"                                     (or B applied) and ROUNDS times with P applied, in blocks\n"
	"                                     of one of each, mirrored in pairs (AB BA or BA AB) from a\n"
	"                                     printed seed (--seed N repeats the order; --warmup runs one\n"
	"                                     discarded baseline round first; --paired judges by the\n"
	"                                     blocks' ratios, Wilcoxon signed-rank), each applied round\n"
	"                                     reverted as it ends; its figure from\n"
	"                                     its stdout (iperf3 --json, netperf, neper, a JSON path,\n"
	"                                     the group of a POSIX ERE); each arm's median, IQR, min/max,\n"
	"                                     the candidate/baseline ratio (Hodges-Lehmann) with its\n"
	"                                     confidence interval (C, default 0.95) and a Mann-Whitney\n"
	"                                     U p-value as a table, --json, --report and an SVG chart;\n"
	"                                     each round's counters as bench-run's, per queue too;\n"
	"                                     the output's other figures the same way, each lower is\n"
	"                                     better (iperf3's retransmits and CPU, netperf's and\n"
	"                                     neper's latency percentiles), shown, never gated;\n"
	"                                     --neper-samples FILE adds the intervals of neper's -A FILE\n"
	"                                     (rate p10/p50/min, higher is better; each latency_pN's\n"
	"                                     worst interval); --also-json and --also-regex (each up to\n"
	"                                     8 times) add a figure of any output, its direction first.\n"
	"                                     A gate judges the primary figure alone and passes only\n"
	"                                     when its interval clears it:\n"
	"                                     --require-gain PCT its lower end above +PCT,\n"
	"                                     --require-no-loss above minus the margin (default 2%);\n"
	"                                     a gate needs rounds that can reach C (4 per arm for\n"
	"                                     0.95). Exit status: 10 gain shown below PCT, 11 a gate\n"
	"                                     not shown either way (with the rounds it would need), 12\n"
	"                                     shown worse than the margin, 125 a round failed (no\n"
	"                                     figure, one below 0, or the agent reverted P before the\n"
	"                                     round ended: void). --metric-json and --metric-regex\n"
	"                                     need --higher-is-better or --lower-is-better\n"
	"  tune [--baseline B.json] [--budget D] [--max-rounds N] [--keep] [--report FILE] [--plot FILE.svg]\n"
	"       [--json] [--seed N] [--confidence C] [--metric ...] [--near IFACE] [--confirm-timeout S]\n"
	"       [--neper-samples FILE] [--also-json ...] [--also-regex ...]\n"
	"       CANDIDATE.json... -- COMMAND [ARGS...]\n"
	"  tune --space SPACE.json [options as above] -- COMMAND [ARGS...]\n"
	"                                     race candidates (the files, or SPACE's parameters expanded:\n"
	"                                     every combination up to its cap, else one factor at a\n"
	"                                     time, then each factor's best level combined and raced\n"
	"                                     against the winner and the baseline as a step of its own)\n"
	"                                     against the baseline (the host as it is, or B), each\n"
	"                                     planned first (a refused one or a budget too small for the\n"
	"                                     rounds a comparison needs: nothing applied; the same plans\n"
	"                                     merged, said), in sweeps of one round each in an order from\n"
	"                                     a printed seed, each applied round reverted as --compare's;\n"
	"                                     a candidate shown worse than the best so far is dropped;\n"
	"                                     within D (default 20m). The winner is the best shown better\n"
	"                                     than the baseline at its Holm-corrected level (each\n"
	"                                     comparison's level printed); the host ends as it started\n"
	"                                     unless --keep applies the winner as the desired state.\n"
	"                                     --json: the result as one JSON document on stdout (the\n"
	"                                     report's: candidates, rounds, each one's ratio, interval,\n"
	"                                     p and Holm level, the dropped and why, winner or null,\n"
	"                                     seed, budget_used_s).\n"
	"                                     Exit status: 0 a winner, 13 none shown better (baseline\n"
	"                                     kept), 4 a profile refused, 2 bad input, 125 a round\n"
	"                                     failed or the host could not be put back, 128+N signal N\n"
	"\n"
	"Shipped profiles (plan, apply, try --name; profiles): in $NETTUNE_SHIPPED_PROFILES when\n"
	"set, else in the source tree's profiles/ for a nettune run from its build tree, else in\n"
	"" NT_SHIPPED_PROFILES_DIR " (where this build installs them).\n"
	"\n"
	"Each command takes only the options shown with it (serve: also every key of its\n"
	"configuration file); any other is refused.\n"
	"Colour only on a terminal, never with NO_COLOR set; waits of more than a second show\n"
	"on a terminal's stderr.\n"
	"\n"
	"  help, --help                       this text\n"
	"  help COMMAND                       the options COMMAND takes, on one line\n"
	"  version, --version                 the version\n";

static int cmd_help(FILE *f)
{
	fputs(usage, f);
	fputs("\nExit status:\n", f);
	for (const nt_exit_code *e = nt_exit_codes; e->meaning; e++)
		fprintf(f, "  %3d  %s\n", e->code, e->meaning);
	return f == stdout ? NT_EXIT_OK : NT_EXIT_USAGE;
}

/* STOP_AT_COMMAND: for "run" and "bench-run", options end at the first
 * non-option so that COMMAND's own options are never taken for ours.
 * getopt's table is made
 * from nt_cli_options (cli/options.c), row for row. */
static int parse_opts(int argc, char **argv, cli_opts *o, bool stop_at_command)
{
	static struct option long_opts[NT_CLI_NOPTS + 1];
	char err[256];
	int c, idx;

	for (int i = 0; nt_cli_options[i].name && i < NT_CLI_NOPTS; i++) {
		const nt_cli_option *opt = &nt_cli_options[i];
		long_opts[i] = (struct option){ opt->name,
						opt->kind == NT_OPT_FLAG || opt->kind == NT_OPT_HELP ?
							no_argument :
							required_argument,
						NULL, 1000 + i };
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, stop_at_command ? "+o:" : "o:", long_opts, &idx)) != -1) {
		if (c != 'o' && c < 1000)
			return -1;
		const nt_cli_option *opt = c == 'o' ? nt_cli_option_find("output") :
						      &nt_cli_options[c - 1000];
		if (opt->kind == NT_OPT_HELP) {
			cmd_help(stdout);
			exit(0);
		}
		if (nt_cli_option_set(opt, optarg, o, err, sizeof(err)) < 0) {
			fprintf(stderr, "nettune: %s%s %s\n", c == 'o' ? "-" : "--", c == 'o' ? "o" : opt->name,
				err);
			return -1;
		}
		/* -o json / --output json is --json; -o text undoes it. */
		if (!strcmp(opt->name, "output"))
			o->json = o->output == 1;
	}
	return 0;
}

/* The commands, by name. Options are parsed the same way for all of them,
 * except that for "run" and "bench-run" they end at the first non-option, so that
 * COMMAND's own options are never taken for ours. OPTS names the options a
 * command reads (--help is every command's); any other one is refused, so
 * that `topology --tls-cert x` or `plan --persist` does not look as if it
 * did something. SERVE_KEYS: also every key of the configuration file,
 * which are serve's options (a new one is a row of cli/options.c only). */
#define HOST_OPTS "root json output"
#define AGENT_OPTS "agent json output"
static const struct command {
	const char *name;
	nt_cli_cmd fn;
	bool options_end_at_args;
	const char *opts;
	bool serve_keys;
} commands[] = {
	{ "topology", nt_cmd_topology, false, HOST_OPTS, false },
	{ "diagnose", nt_cmd_diagnose, false, HOST_OPTS " agent rtt-ms fix-profile", false },
	{ "irqs", nt_cmd_irqs, false, HOST_OPTS " nic interval-ms", false },
	{ "serve", nt_cmd_serve, false, "config check-config", true },
	{ "nics", nt_cmd_nics, false, HOST_OPTS, false },
	{ "rates", nt_cmd_rates, false, HOST_OPTS " interval-ms", false },
	{ "run", nt_cmd_run, true, "root agent near cpus cpus-list", false },
	{ "bench-run", nt_cmd_bench_run, true,
	  "agent root profile near cpus cpus-list report confirm-timeout compare baseline metric metric-json "
	  "metric-regex higher-is-better lower-is-better require-gain require-no-loss loss-margin confidence plot json seed warmup paired "
	  "output neper-samples also-json also-regex",
	  false },
	{ "tune", nt_cmd_tune, true,
	  "agent root near cpus cpus-list baseline space budget keep max-rounds report plot seed confidence "
	  "confirm-timeout metric metric-json metric-regex higher-is-better lower-is-better json neper-samples also-json also-regex",
	  false },
	{ "placement", nt_cmd_placement, false, HOST_OPTS " agent cpus cpus-list", false },
	{ "plan", nt_cmd_profile, false, AGENT_OPTS " name verbose", false },
	{ "apply", nt_cmd_profile, false, AGENT_OPTS " name confirm-timeout persist plan verbose", false },
	{ "try", nt_cmd_try, false, AGENT_OPTS " name confirm-timeout verbose", false },
	{ "profiles", nt_cmd_profiles, false, AGENT_OPTS, false },
	{ "confirm", nt_cmd_txn_id, false, AGENT_OPTS, false },
	{ "rollback", nt_cmd_txn_id, false, AGENT_OPTS " force verbose", false },
	{ "show", nt_cmd_txn_id, false, AGENT_OPTS " verbose", false },
	{ "history", nt_cmd_history, false, AGENT_OPTS " status limit since", false },
	{ "desired", nt_cmd_desired, false, AGENT_OPTS, false },
	{ "drift", nt_cmd_drift, false, AGENT_OPTS, false },
	{ "verify", nt_cmd_verify, false, AGENT_OPTS " window", false },
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Is NAME one of the space-separated words of LIST? */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, " ");
		if (k == n && !strncmp(p, name, n))
			return true;
		p += k;
		p += strspn(p, " ");
	}
	return false;
}

static bool takes(const struct command *c, const nt_cli_option *opt)
{
	return opt->kind == NT_OPT_HELP || in_list(c->opts, opt->name) ||
	       (c->serve_keys && (opt->flags & NT_OPT_CONF));
}

/* C's options, " --root --json ..." (--help left out: every command's). */
static void print_opts(FILE *f, const struct command *c)
{
	for (int j = 0; nt_cli_options[j].name && j < NT_CLI_NOPTS; j++)
		if (nt_cli_options[j].kind != NT_OPT_HELP && takes(c, &nt_cli_options[j]))
			fprintf(f, " --%s", nt_cli_options[j].name);
}

/* 0, or -1 after saying which option given to C is not one of its own and
 * which ones are. */
static int check_opts(const struct command *c, const cli_opts *o)
{
	for (int i = 0; nt_cli_options[i].name && i < NT_CLI_NOPTS; i++) {
		const nt_cli_option *opt = &nt_cli_options[i];
		if (!o->set[i] || takes(c, opt))
			continue;
		fprintf(stderr, "nettune: %s does not take --%s; its options:", c->name, opt->name);
		print_opts(stderr, c);
		fprintf(stderr, " (nettune help %s)\n", c->name);
		return -1;
	}
	return 0;
}

/* `nettune help COMMAND`: the command's options on one line, for people
 * and for the shell completion (deploy/nettune.bash-completion). */
static int cmd_help_of(const char *name)
{
	const struct command *c = find_command(name);
	if (!c) {
		fprintf(stderr, "nettune: unknown command '%s'\n", name);
		return NT_EXIT_USAGE;
	}
	printf("%s options:", c->name);
	print_opts(stdout, c);
	printf("\n");
	return NT_EXIT_OK;
}

int main(int argc, char **argv)
{
	cli_opts o;
	memset(&o, 0, sizeof(o));
	if (argc < 2)
		return cmd_help(stderr);
	const char *cmd = argv[1];
	if (!strcmp(cmd, "help") && argc == 3)
		return cmd_help_of(argv[2]);
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
		return cmd_help(stdout);
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("nettune %s\n", NETTUNE_VERSION);
		return 0;
	}
	const struct command *c = find_command(cmd);
	if (parse_opts(argc - 1, argv + 1, &o, c && c->options_end_at_args) < 0)
		return NT_EXIT_USAGE;
	if (!c) {
		fprintf(stderr, "nettune: unknown command '%s'\n\n", cmd);
		return cmd_help(stderr);
	}
	if (check_opts(c, &o) < 0)
		return NT_EXIT_USAGE;
	return c->fn(cmd, &o, argc - 1 - optind, argv + 1 + optind);
}
