/* nettune: the thin main. Subcommands that read the host link the core
 * directly; those that change it talk to the running agent over HTTP, so
 * every change goes through the agent's journal. */
#include "kernel/ctx.h"
#include "diagnose/diagnose.h"
#include "placement/app.h"
#include "host/rates.h"
#include "host/topology.h"
#include "api/server.h"
#include "cli/client.h"

#include <errno.h>
#include <getopt.h>
#include <numa.h>
#include <sched.h>
#include <time.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_AGENT "http://127.0.0.1:8470"

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
	"Commands that talk to a running agent (--agent URL, default " DEFAULT_AGENT ";\n"
	"NETTUNE_TOKEN in the environment is sent as a bearer token):\n"
	"  plan PROFILE.json                  the steps a profile would take, changing nothing\n"
	"  apply PROFILE.json [--confirm-timeout S]\n"
	"                                     apply a profile as one transaction\n"
	"  confirm ID                         confirm a transaction applied with --confirm-timeout\n"
	"  rollback ID [--force]              undo a transaction, as a new transaction\n"
	"  history [--status S] [--limit N]   past transactions, newest first\n"
	"  show ID                            one transaction with its steps\n"
	"\n"
	"  help, --help                       this text\n"
	"  version, --version                 the version\n";

static int cmd_help(FILE *f)
{
	fputs(usage, f);
	return f == stdout ? 0 : 2;
}

enum { OPT_ROOT = 1000, OPT_JSON, OPT_LISTEN, OPT_STATE, OPT_RTT, OPT_AGENT, OPT_CONFIRM, OPT_FORCE,
       OPT_STATUS, OPT_LIMIT, OPT_HELP, OPT_INTERVAL, OPT_NEAR, OPT_CPUS, OPT_FIXPROFILE,
       OPT_TOKENS, OPT_TLS_CERT, OPT_TLS_KEY, OPT_TLS_CA, OPT_MAX_BODY, OPT_CLIENT_TIMEOUT,
       OPT_MAX_CONN, OPT_LOG_FORMAT };

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
	{ NULL, 0, NULL, 0 },
};

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
	/* serve */
	const char *tokens, *tls_cert, *tls_key, *tls_client_ca;
	long max_body, client_timeout, max_connections;
	bool log_json;
} cli_opts;

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A numeric option's value in [LO, HI] into *OUT, or a message naming the
 * option, what it counts (WHAT) and the range. Returns 0 or -1. */
static int opt_number(const char *opt, const char *what, long lo, long hi, long *out)
{
	if (parse_long(optarg, lo, hi, out) == 0)
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
	while ((c = getopt_long(argc, argv, stop_at_command ? "+" : "", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_ROOT: o->root = optarg; break;
		case OPT_JSON: o->json = true; break;
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
			if (opt_number("limit", "a number", 1, 1000, &v) < 0)
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

static int read_host(const cli_opts *o, nt_topology **t)
{
	nt_ctx ctx;
	int r = nt_ctx_init(&ctx, o->root ? o->root : "/");
	if (r < 0) {
		fprintf(stderr, "nettune: cannot use root '%s': %s\n", o->root ? o->root : "/", nt_strerror(r));
		return r;
	}
	r = nt_topology_read(&ctx, t);
	if (r < 0)
		fprintf(stderr, "nettune: reading the host failed: %s\n", nt_strerror(r));
	return r;
}

static void print_json(json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (s) {
		puts(s);
		free(s);
	}
}

static void print_topology_text(const nt_topology *t)
{
	char buf[16384];
	printf("host %s  kernel %s  root %s\n", t->hostname[0] ? t->hostname : "?", t->kernel[0] ? t->kernel : "?",
	       t->ctx.root[0] ? t->ctx.root : "/");
	nt_cpulist_format(&t->cpus_online, buf, sizeof(buf));
	printf("cpus online %s (%d)\n", buf, nt_cpuset_count(&t->cpus_online));
	for (int i = 0; i < t->nnodes; i++) {
		nt_cpulist_format(&t->nodes[i].cpus, buf, sizeof(buf));
		printf("node %d: cpus %s, memory %llu MiB\n", t->nodes[i].id, buf[0] ? buf : "(none)",
		       (unsigned long long)t->nodes[i].mem_total_kb / 1024);
	}
	printf("irqbalance: %s", t->irqbalance.running ? "running" : "not running");
	if (t->irqbalance.running)
		printf(" (pid %d)", t->irqbalance.pid);
	printf("\n\n%-16s %-10s %-14s %5s %-14s %-16s %s\n", "NIC", "DRIVER", "PCI", "NODE", "LOCAL CPUS",
	       "RX RING", "IRQS (cpus, L=local)");
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *n = &t->nics[i];
		char ring[32] = "-", local[64] = "-";
		if (n->has_rings)
			snprintf(ring, sizeof(ring), "%u/%u", n->rings.rx, n->rings.rx_max);
		if (n->has_local_cpus)
			nt_cpulist_format(&n->local_cpus, local, sizeof(local));
		printf("%-16s %-10s %-14s %5d %-14s %-16s", n->name, n->driver[0] ? n->driver : "-",
		       n->pci_address[0] ? n->pci_address : (n->is_virtual ? "(virtual)" : "-"), n->numa_node,
		       local, ring);
		for (int k = 0; k < n->nirqs && k < 8; k++) {
			const nt_irq *q = &t->irqs[n->irqs[k]];
			nt_cpulist_format(&q->affinity, buf, sizeof(buf));
			bool loc = n->numa_node >= 0 && nt_topology_set_on_node(t, &q->affinity, n->numa_node);
			printf(" %d:%s%s", q->irq, buf, loc ? "L" : "");
		}
		if (n->nirqs > 8)
			printf(" ...(+%d)", n->nirqs - 8);
		printf("\n");
	}
	for (int i = 0; i < t->nbonds; i++) {
		const nt_bond *b = &t->bonds[i];
		printf("\nbond %s: mode %s, xmit_hash_policy %s, miimon %ld, slaves", b->name, b->mode,
		       b->xmit_hash_policy, b->miimon);
		for (int k = 0; k < b->nslaves; k++)
			printf(" %s", b->slaves[k]);
		printf("\n");
	}
	printf("\n");
	for (int i = 0; i < t->nsysctls; i++)
		if (t->sysctls[i].present)
			printf("%s = %s\n", t->sysctls[i].key, t->sysctls[i].value);
	size_t np = json_array_size(t->problems);
	if (np)
		printf("\n%zu part(s) could not be read (see --json \"problems\")\n", np);
}

static int cmd_topology(const cli_opts *o)
{
	nt_topology *t;
	if (read_host(o, &t) < 0)
		return 1;
	if (o->json) {
		json_t *doc = nt_topology_to_json(t);
		print_json(doc);
		json_decref(doc);
	} else {
		print_topology_text(t);
	}
	nt_topology_free(t);
	return 0;
}

static int cmd_irqs(const cli_opts *o)
{
	nt_topology *t;
	if (read_host(o, &t) < 0)
		return 1;
	json_t *doc = nt_irqs_to_json(t);
	print_json(doc);
	json_decref(doc);
	nt_topology_free(t);
	return 0;
}

static int cmd_diagnose(const cli_opts *o)
{
	nt_topology *t;
	if (read_host(o, &t) < 0)
		return 1;
	nt_diag_options dopt = { .rtt_ms = o->rtt_ms ? o->rtt_ms : 10 };
	json_t *doc = nt_diagnose(t, &dopt);
	nt_topology_free(t);
	if (!doc) {
		fprintf(stderr, "nettune: out of memory\n");
		return 1;
	}
	if (o->fix_profile) {
		json_t *p = nt_diagnose_fix_profile(doc, "diagnose-fixes");
		if (p)
			print_json(p);
		json_decref(p);
	} else if (o->json) {
		print_json(doc);
	} else {
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(doc, "findings"), i, f) {
			printf("%-7s %-22s %-10s %s\n", json_string_value(json_object_get(f, "severity")),
			       json_string_value(json_object_get(f, "id")),
			       json_string_value(json_object_get(f, "subject")),
			       json_string_value(json_object_get(f, "message")));
		}
		if (json_array_size(json_object_get(doc, "findings")) == 0)
			printf("no findings\n");
	}
	json_decref(doc);
	return 0;
}

static int cmd_rates(const cli_opts *o)
{
	nt_topology *t;
	nt_irq_sample a, b;
	if (read_host(o, &t) < 0)
		return 1;
	int r = nt_rates_sample(&t->ctx, &a);
	if (r < 0) {
		fprintf(stderr, "nettune: cannot read /proc/interrupts: %s\n", nt_strerror(r));
		nt_topology_free(t);
		return 1;
	}
	long ms = o->interval_ms ? o->interval_ms : 1000;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	r = nt_rates_sample(&t->ctx, &b);
	if (r < 0) {
		fprintf(stderr, "nettune: cannot read /proc/interrupts: %s\n", nt_strerror(r));
		nt_rates_sample_free(&a);
		nt_topology_free(t);
		return 1;
	}
	json_t *doc = nt_rates_compute(t, &a, &b);
	if (o->json) {
		print_json(doc);
	} else {
		size_t i;
		json_t *row;
		printf("interrupts per second over %.0f ms\n\n%5s %5s %12s %12s %12s\n",
		       json_real_value(json_object_get(doc, "interval_ms")), "CPU", "NODE", "IRQ/s", "NET_RX/s", "NET_TX/s");
		json_array_foreach(json_object_get(doc, "cpus"), i, row) {
			printf("%5lld %5lld %12.1f %12.1f %12.1f\n", json_integer_value(json_object_get(row, "cpu")),
			       json_integer_value(json_object_get(row, "node")),
			       json_real_value(json_object_get(row, "irq_per_second")),
			       json_real_value(json_object_get(row, "net_rx_per_second")),
			       json_real_value(json_object_get(row, "net_tx_per_second")));
		}
		printf("\n%5s %12s\n", "NODE", "IRQ/s");
		json_array_foreach(json_object_get(doc, "nodes"), i, row)
			printf("%5lld %12.1f\n", json_integer_value(json_object_get(row, "node")),
			       json_real_value(json_object_get(row, "irq_per_second")));
		printf("\n%6s %-28s %-10s %5s %12s\n", "IRQ", "NAME", "OWNER", "", "IRQ/s");
		json_array_foreach(json_object_get(doc, "irqs"), i, row) {
			double ps = json_real_value(json_object_get(row, "per_second"));
			if (ps <= 0)
				continue;
			json_t *own = json_object_get(row, "owner");
			double off = json_real_value(json_object_get(row, "off_node_per_second"));
			printf("%6lld %-28s %-10s %5s %12.1f\n", json_integer_value(json_object_get(row, "irq")),
			       json_string_value(json_object_get(row, "name")),
			       json_is_string(own) ? json_string_value(own) : "-", off > 0 ? "OFF" : "", ps);
		}
		size_t noff = json_array_size(json_object_get(doc, "off_node"));
		if (noff)
			printf("\n%zu IRQ/CPU pair(s) served off their NIC's node (OFF)\n", noff);
	}
	json_decref(doc);
	nt_rates_sample_free(&a);
	nt_rates_sample_free(&b);
	nt_topology_free(t);
	return 0;
}

static int placement_of(const cli_opts *o, const char *ifname, nt_topology **t, nt_placement *p)
{
	if (!nt_ifname_valid(ifname)) {
		fprintf(stderr, "nettune: '%s' is not a valid interface name\n", ifname);
		return 2;
	}
	if (read_host(o, t) < 0)
		return 1;
	const nt_nic *n = nt_topology_nic(*t, ifname);
	if (!n) {
		fprintf(stderr, "nettune: no NIC named '%s'\n", ifname);
		return 2;
	}
	nt_placement_for(*t, n, (int)o->cpus, p);
	return 0;
}

static int cmd_placement(const cli_opts *o, const char *ifname)
{
	nt_topology *t = NULL;
	nt_placement p;
	int rc = placement_of(o, ifname, &t, &p);
	if (rc == 0) {
		json_t *doc = nt_placement_to_json(t, nt_topology_nic(t, ifname), &p);
		if (o->json) {
			print_json(doc);
		} else if (!p.known) {
			printf("%s\n", p.reason);
		} else {
			printf("%s: node %d\n  irq cpus  %s\n  app cpus  %s\n  %s\n  %s\n", ifname, p.node,
			       json_string_value(json_object_get(doc, "irq_cpus")),
			       json_string_value(json_object_get(doc, "app_cpus")),
			       json_string_value(json_object_get(doc, "numactl")),
			       json_string_value(json_object_get(doc, "iperf3")));
		}
		json_decref(doc);
	}
	nt_topology_free(t);
	return rc;
}

/* Bind this process to the recommended CPUs and the NIC's memory node,
 * then become COMMAND: the affinity and memory policy are inherited. */
static int cmd_run(const cli_opts *o, int nargs, char **args)
{
	nt_topology *t = NULL;
	nt_placement p;
	if (!o->near || nargs < 1) {
		fprintf(stderr, "nettune: run wants --near IFACE -- COMMAND [ARGS...]\n");
		return 2;
	}
	int rc = placement_of(o, o->near, &t, &p);
	if (rc) {
		nt_topology_free(t);
		return rc;
	}
	if (!p.known) {
		fprintf(stderr, "nettune: %s\n", p.reason);
		nt_topology_free(t);
		return 2;
	}
	cpu_set_t *set = CPU_ALLOC(NT_MAX_CPUS);
	size_t sz = CPU_ALLOC_SIZE(NT_MAX_CPUS);
	CPU_ZERO_S(sz, set);
	for (int c = nt_cpuset_next(&p.app_cpus, 0); c >= 0; c = nt_cpuset_next(&p.app_cpus, c + 1))
		CPU_SET_S((size_t)c, sz, set);
	int node = p.node;
	nt_topology_free(t);
	if (sched_setaffinity(0, sz, set) < 0) {
		fprintf(stderr, "nettune: cannot bind to the CPUs: %s\n", strerror(errno));
		CPU_FREE(set);
		return 1;
	}
	CPU_FREE(set);
	if (numa_available() >= 0) {
		struct bitmask *nodes = numa_allocate_nodemask();
		numa_bitmask_setbit(nodes, (unsigned)node);
		numa_set_membind(nodes);
		numa_free_nodemask(nodes);
	}
	execvp(args[0], args);
	fprintf(stderr, "nettune: cannot run '%s': %s\n", args[0], strerror(errno));
	return 127;
}

static int split_listen(const char *listen, nt_server_config *cfg)
{
	/* "ADDR:PORT", "[v6]:PORT" or ":PORT". */
	const char *colon = strrchr(listen, ':');
	long port;
	if (!colon || parse_long(colon + 1, 0, 65535, &port) < 0)
		return -EINVAL;
	const char *a = listen;
	size_t al = (size_t)(colon - listen);
	if (al >= 2 && a[0] == '[' && a[al - 1] == ']') {
		a++;
		al -= 2;
	}
	if (al == 0) {
		a = "127.0.0.1";
		al = strlen(a);
	}
	if (al >= sizeof(cfg->listen_addr))
		return -EINVAL;
	memcpy(cfg->listen_addr, a, al);
	cfg->listen_addr[al] = '\0';
	cfg->port = (int)port;
	return 0;
}

/* The serve log sink: one line per event on stderr, each written with one
 * stdio call so lines from concurrent requests never interleave. JSON: the
 * event with a "ts" added. Text: "TS EVENT key=value ...", strings quoted
 * when they hold spaces or quotes. */
static void log_event(void *ud, const json_t *ev)
{
	bool as_json = *(const bool *)ud;
	struct timespec ts;
	struct tm tm;
	char when[40];
	char *line = NULL;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
	if (as_json) {
		json_t *copy = json_copy((json_t *)ev);
		if (!copy)
			return;
		json_object_set_new(copy, "ts", json_string(when));
		line = json_dumps(copy, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9));
		json_decref(copy);
		if (line)
			fprintf(stderr, "%s\n", line);
		free(line);
		return;
	}
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	if (!f)
		return;
	fprintf(f, "%s %s", when, json_string_value(json_object_get(ev, "event")));
	const char *key;
	json_t *val;
	json_object_foreach((json_t *)ev, key, val) {
		if (!strcmp(key, "event"))
			continue;
		if (json_is_string(val)) {
			const char *v = json_string_value(val);
			bool quote = !*v || strpbrk(v, " \"\\=\t\n") != NULL;
			for (const char *p = v; !quote && *p; p++)
				quote = (unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f;
			if (quote) {
				char *enc = json_dumps(val, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
				fprintf(f, " %s=%s", key, enc ? enc : "\"?\"");
				free(enc);
			} else {
				fprintf(f, " %s=%s", key, v);
			}
		} else if (json_is_real(val)) {
			fprintf(f, " %s=%.3f", key, json_real_value(val));
		} else {
			char *enc = json_dumps(val, JSON_ENCODE_ANY | JSON_COMPACT);
			fprintf(f, " %s=%s", key, enc ? enc : "?");
			free(enc);
		}
	}
	if (fclose(f) == 0 && line)
		fprintf(stderr, "%s\n", line);
	free(line);
}

static int copy_path(char *dst, size_t size, const char *src, const char *opt)
{
	if (!src)
		return 0;
	if (snprintf(dst, size, "%s", src) >= (int)size) {
		fprintf(stderr, "nettune: %s: path too long\n", opt);
		return -1;
	}
	return 0;
}

static int cmd_serve(const cli_opts *o)
{
	nt_server_config cfg;
	struct nt_server *srv = NULL;
	char err[512] = "";

	memset(&cfg, 0, sizeof(cfg));
	if (split_listen(o->listen ? o->listen : "127.0.0.1:8470", &cfg) < 0) {
		fprintf(stderr, "nettune: --listen wants ADDR:PORT (e.g. 127.0.0.1:8470), not '%s'\n", o->listen);
		return 2;
	}
	snprintf(cfg.root, sizeof(cfg.root), "%s", o->root ? o->root : "/");
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s", o->state_dir ? o->state_dir : "/var/lib/nettune");
	cfg.rtt_ms = o->rtt_ms ? o->rtt_ms : 10;
	if (copy_path(cfg.tokens_path, sizeof(cfg.tokens_path), o->tokens, "--tokens") < 0 ||
	    copy_path(cfg.tls_cert, sizeof(cfg.tls_cert), o->tls_cert, "--tls-cert") < 0 ||
	    copy_path(cfg.tls_key, sizeof(cfg.tls_key), o->tls_key, "--tls-key") < 0 ||
	    copy_path(cfg.tls_client_ca, sizeof(cfg.tls_client_ca), o->tls_client_ca,
		      "--tls-client-ca") < 0)
		return 2;
	cfg.max_body = (size_t)o->max_body;
	cfg.client_timeout_s = (unsigned)o->client_timeout;
	cfg.max_connections = (unsigned)o->max_connections;
	static bool log_json;
	log_json = o->log_json;
	cfg.log = log_event;
	cfg.log_ud = &log_json;

	/* SIGTERM and SIGINT are blocked before the server's threads exist, so
	 * every thread inherits the mask and only sigwait below takes them: a
	 * signal handled by a worker thread would leave pause() in the main
	 * thread waiting forever. */
	sigset_t stop_set;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	signal(SIGPIPE, SIG_IGN);

	int r = nt_server_start(&cfg, &srv, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "nettune: cannot start: %s\n", err[0] ? err : nt_strerror(r));
		return 1;
	}
	bool v6 = strchr(cfg.listen_addr, ':') != NULL;
	printf("listening on %s://%s%s%s:%d\n", cfg.tls_cert[0] ? "https" : "http", v6 ? "[" : "",
	       cfg.listen_addr, v6 ? "]" : "", nt_server_port(srv));
	fflush(stdout);
	int sig = 0;
	while (sigwait(&stop_set, &sig) != 0)
		;
	nt_server_stop(srv);
	return 0;
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
	if (parse_opts(argc - 1, argv + 1, &o, !strcmp(cmd, "run")) < 0)
		return 2;
	int nargs = argc - 1 - optind;
	char **args = argv + 1 + optind;
	const char *agent = o.agent ? o.agent : DEFAULT_AGENT;

	if (!strcmp(cmd, "topology"))
		return cmd_topology(&o);
	if (!strcmp(cmd, "diagnose"))
		return cmd_diagnose(&o);
	if (!strcmp(cmd, "irqs"))
		return cmd_irqs(&o);
	if (!strcmp(cmd, "serve"))
		return cmd_serve(&o);
	if (!strcmp(cmd, "rates"))
		return cmd_rates(&o);
	if (!strcmp(cmd, "run"))
		return cmd_run(&o, nargs, args);
	if (!strcmp(cmd, "placement")) {
		if (nargs != 1) {
			fprintf(stderr, "nettune: placement wants one interface name\n");
			return 2;
		}
		return cmd_placement(&o, args[0]);
	}
	if (!strcmp(cmd, "plan") || !strcmp(cmd, "apply")) {
		if (nargs != 1) {
			fprintf(stderr, "nettune: %s wants one PROFILE.json\n", cmd);
			return 2;
		}
		return !strcmp(cmd, "plan") ? nt_cli_plan(agent, args[0])
					    : nt_cli_apply(agent, args[0], o.confirm_timeout);
	}
	if (!strcmp(cmd, "confirm") || !strcmp(cmd, "rollback") || !strcmp(cmd, "show")) {
		if (nargs != 1) {
			fprintf(stderr, "nettune: %s wants one transaction ID\n", cmd);
			return 2;
		}
		if (!strcmp(cmd, "confirm"))
			return nt_cli_confirm(agent, args[0]);
		if (!strcmp(cmd, "rollback"))
			return nt_cli_rollback(agent, args[0], o.force);
		return nt_cli_show(agent, args[0]);
	}
	if (!strcmp(cmd, "history"))
		return nt_cli_history(agent, o.status, o.limit);
	fprintf(stderr, "nettune: unknown command '%s'\n\n", cmd);
	return cmd_help(stderr);
}
