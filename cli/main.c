/* nettune: the thin main. It parses the options and hands the command to
 * its group's file (see cli/cli.h). Subcommands that read the host link the
 * core directly; those that change it talk to the running agent over HTTP,
 * so every change goes through the agent's journal. */
#include "cli/cli.h"
#include "cli/exit.h"
#include "host/cpuset.h" /* NT_MAX_CPUS */

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
	"  diagnose [--root DIR] [--json] [--rtt-ms N] [--fix-profile]\n"
	"                                     what is misplaced, with the profile fragment that fixes it;\n"
	"                                     --fix-profile prints one profile of all fixes, for apply\n"
	"  irqs [--root DIR]                  every IRQ with owner, affinity and per-CPU counts (JSON)\n"
	"  rates [--root DIR] [--interval-ms N] [--json]\n"
	"                                     interrupts per second per CPU and node over N ms (default\n"
	"                                     1000), flagging those served off their NIC's node\n"
	"  placement IFACE [--cpus N] [--json] where an application using IFACE should run\n"
	"  run --near IFACE [--cpus N] -- COMMAND [ARGS...]\n"
	"                                     run COMMAND bound to the CPUs and memory node that\n"
	"                                     placement recommends (what numactl --cpubind --membind does)\n"
	"\n"
	"The agent:\n"
	"  serve [--listen ADDR:PORT] [--root DIR] [--state-dir DIR] [--rtt-ms N]\n"
	"                                     serve the HTTP/JSON API (default 127.0.0.1:8470,\n"
	"                                     root /, state in /var/lib/nettune)\n"
	"        [--tokens FILE]              bearer tokens, lines 'NAME read|apply SECRET' (mode 600);\n"
	"                                     required to listen on a non-loopback address\n"
	"        [--tls-cert PEM --tls-key PEM] serve HTTPS\n"
	"        [--tls-client-ca PEM]        accept client certificates signed by this CA (scope apply)\n"
	"        [--max-body BYTES]           largest request body (default 1048576)\n"
	"        [--client-timeout S]         close idle or slow connections after S s (default 30)\n"
	"        [--max-connections N]        open connections at once (default 64)\n"
	"        [--log-format text|json]     access and transaction-step log on stderr (default text)\n"
	"\n"
	"Commands that talk to a running agent (--agent URL, or NETTUNE_AGENT, default\n"
	"" NT_CLI_DEFAULT_AGENT "; NETTUNE_TOKEN in the environment is sent as a bearer token).\n"
	"They print for people; --json (or -o json) prints the agent's JSON answer unchanged\n"
	"on stdout instead, error documents included:\n"
	"  plan PROFILE.json                  the steps a profile would take, by interface and kind,\n"
	"                                     with its warnings; changes nothing (plan and apply read\n"
	"                                     the profile from standard input when it is -)\n"

	"  apply PROFILE.json [--confirm-timeout S]\n"
	"                                     apply a profile as one transaction; with a timeout the\n"
	"                                     agent reverts it unless 'nettune confirm ID' comes in time\n"
	"  try PROFILE.json [--confirm-timeout S]\n"
	"                                     apply, then ask at the terminal: ENTER keeps it; unless\n"
	"                                     confirmed within S s (default 120) the agent puts it back\n"
	"  confirm ID                         confirm a transaction applied with --confirm-timeout\n"
	"  rollback ID [--force]              undo a transaction, as a new transaction\n"
	"  show ID                            one transaction with its steps and their results\n"
	"  history [--status S] [--limit N] [--since WHEN]\n"
	"                                     past transactions, newest first (default 20; WHEN is\n"
	"                                     30m, 12h, 7d or a UTC time such as 2026-11-30T16:00)\n"
	"\n"
	"Colour only on a terminal, never with NO_COLOR set; waits of more than a second show\n"
	"on a terminal's stderr.\n"
	"\n"
	"  help, --help                       this text\n"
	"  version, --version                 the version\n";

static int cmd_help(FILE *f)
{
	fputs(usage, f);
	fputs("\nExit status:\n", f);
	for (const nt_exit_code *e = nt_exit_codes; e->meaning; e++)
		fprintf(f, "  %3d  %s\n", e->code, e->meaning);
	return f == stdout ? NT_EXIT_OK : NT_EXIT_USAGE;
}

enum { OPT_ROOT = 1000, OPT_JSON, OPT_LISTEN, OPT_STATE, OPT_RTT, OPT_AGENT, OPT_CONFIRM, OPT_FORCE,
       OPT_STATUS, OPT_LIMIT, OPT_HELP, OPT_INTERVAL, OPT_NEAR, OPT_CPUS, OPT_FIXPROFILE,
       OPT_TOKENS, OPT_TLS_CERT, OPT_TLS_KEY, OPT_TLS_CA, OPT_MAX_BODY, OPT_CLIENT_TIMEOUT,
       OPT_MAX_CONN, OPT_LOG_FORMAT, OPT_SINCE };

static const struct option long_opts[] = {
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "state-dir", required_argument, NULL, OPT_STATE },
	{ "rtt-ms", required_argument, NULL, OPT_RTT },
	{ "agent", required_argument, NULL, OPT_AGENT },
	{ "confirm-timeout", required_argument, NULL, OPT_CONFIRM },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "interval-ms", required_argument, NULL, OPT_INTERVAL },
	{ "near", required_argument, NULL, OPT_NEAR },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "fix-profile", no_argument, NULL, OPT_FIXPROFILE },
	{ "tokens", required_argument, NULL, OPT_TOKENS },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "tls-client-ca", required_argument, NULL, OPT_TLS_CA },
	{ "max-body", required_argument, NULL, OPT_MAX_BODY },
	{ "client-timeout", required_argument, NULL, OPT_CLIENT_TIMEOUT },
	{ "max-connections", required_argument, NULL, OPT_MAX_CONN },
	{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "output", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 },
};

/* A numeric option's value in [LO, HI] into *OUT, or a message naming the
 * option, what it counts (WHAT) and the range. Returns 0 or -1. */
static int opt_number(const char *opt, const char *what, long lo, long hi, long *out)
{
	if (nt_cli_parse_long(optarg, lo, hi, out) == 0)
		return 0;
	fprintf(stderr, "nettune: --%s wants %s from %ld to %ld, not '%s'\n", opt, what, lo, hi, optarg);
	return -1;
}

/* STOP_AT_COMMAND: for "run", options end at the first non-option so that
 * COMMAND's own options are never taken for ours. */
static int parse_opts(int argc, char **argv, cli_opts *o, bool stop_at_command)
{
	int c;
	long v;
	optind = 1;
	while ((c = getopt_long(argc, argv, stop_at_command ? "+o:" : "o:", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_ROOT: o->root = optarg; break;
		case OPT_JSON: o->json = true; break;
		case 'o':
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				fprintf(stderr, "nettune: -o wants 'json' or 'text', not '%s'\n", optarg);
				return -1;
			}
			o->json = !strcmp(optarg, "json");
			break;
		case OPT_SINCE: o->since = optarg; break;
		case OPT_LISTEN: o->listen = optarg; break;
		case OPT_STATE: o->state_dir = optarg; break;
		case OPT_RTT:
			if (opt_number("rtt-ms", "a number of milliseconds", 1, 10000, &v) < 0)
				return -1;
			o->rtt_ms = (int)v;
			break;
		case OPT_AGENT: o->agent = optarg; break;
		case OPT_CONFIRM:
			if (opt_number("confirm-timeout", "seconds", 1, 86400, &v) < 0)
				return -1;
			o->confirm_timeout = v;
			break;
		case OPT_FORCE: o->force = true; break;
		case OPT_STATUS: o->status = optarg; break;
		case OPT_LIMIT:
			if (opt_number("limit", "a number", 1, 500, &v) < 0)
				return -1;
			o->limit = v;
			break;
		case OPT_HELP: cmd_help(stdout); exit(0);
		case OPT_INTERVAL:
			if (opt_number("interval-ms", "milliseconds", 10, 60000, &v) < 0)
				return -1;
			o->interval_ms = v;
			break;
		case OPT_NEAR: o->near = optarg; break;
		case OPT_FIXPROFILE: o->fix_profile = true; break;
		case OPT_CPUS:
			if (opt_number("cpus", "a number of CPUs", 1, NT_MAX_CPUS, &v) < 0)
				return -1;
			o->cpus = v;
			break;
		case OPT_TOKENS: o->tokens = optarg; break;
		case OPT_TLS_CERT: o->tls_cert = optarg; break;
		case OPT_TLS_KEY: o->tls_key = optarg; break;
		case OPT_TLS_CA: o->tls_client_ca = optarg; break;
		case OPT_MAX_BODY:
			if (opt_number("max-body", "bytes", 1024, 64L * 1024 * 1024, &v) < 0)
				return -1;
			o->max_body = v;
			break;
		case OPT_CLIENT_TIMEOUT:
			if (opt_number("client-timeout", "seconds", 1, 3600, &v) < 0)
				return -1;
			o->client_timeout = v;
			break;
		case OPT_MAX_CONN:
			if (opt_number("max-connections", "a number", 1, 65536, &v) < 0)
				return -1;
			o->max_connections = v;
			break;
		case OPT_LOG_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				fprintf(stderr, "nettune: --log-format wants 'text' or 'json', not '%s'\n", optarg);
				return -1;
			}
			o->log_json = !strcmp(optarg, "json");
			break;
		default: return -1;
		}
	}
	return 0;
}

/* The commands, by name. Options are parsed the same way for all of them,
 * except that for "run" they end at the first non-option, so that
 * COMMAND's own options are never taken for ours. */
static const struct command {
	const char *name;
	nt_cli_cmd fn;
	bool options_end_at_args;
} commands[] = {
	{ "topology", nt_cmd_topology, false },
	{ "diagnose", nt_cmd_diagnose, false },
	{ "irqs", nt_cmd_irqs, false },
	{ "serve", nt_cmd_serve, false },
	{ "rates", nt_cmd_rates, false },
	{ "run", nt_cmd_run, true },
	{ "placement", nt_cmd_placement, false },
	{ "plan", nt_cmd_profile, false },
	{ "apply", nt_cmd_profile, false },
	{ "try", nt_cmd_try, false },
	{ "confirm", nt_cmd_txn_id, false },
	{ "rollback", nt_cmd_txn_id, false },
	{ "show", nt_cmd_txn_id, false },
	{ "history", nt_cmd_history, false },
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	cli_opts o;
	memset(&o, 0, sizeof(o));
	if (argc < 2)
		return cmd_help(stderr);
	const char *cmd = argv[1];
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
	return c->fn(cmd, &o, argc - 1 - optind, argv + 1 + optind);
}
