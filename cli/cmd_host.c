/* SPDX-License-Identifier: Apache-2.0 */
/* The commands that read the host directly, linking the core: topology,
 * irqs, rates, placement and run (diagnose: cli/cmd_diagnose.c). None of them needs the agent:
 * placement and run ask it only for the CPUs the profile in effect
 * reserved, and do without; run is the only one that changes anything,
 * and only its own process (CPU and memory binding) before it becomes the
 * command. */
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/escape.h"
#include "cli/nic_view.h"
#include "cli/output.h"
#include "host/napi.h"
#include "host/qstats.h"
#include "host/queues.h"
#include "settings/setting.h"
#include "host/rates.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "placement/app.h"
#include "settings/setting.h"

#include <errno.h>
#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int nt_cli_read_host(const cli_opts *o, nt_topology **t)
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

/* A document the host model wrote as text (the same bytes print_json
 * prints for its jansson form, newline included). */
static void print_text(char *s)
{
	if (s)
		fputs(s, stdout);
	free(s);
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
		/* A NIC may be named with a bidi override (Linux allows it):
		 * shown as text (cli/escape.h). */
		char name[128];
		printf("%-16s %-10s %-14s %5d %-14s %-16s", nt_out_clip(name, sizeof(name), n->name, 64),
		       n->driver[0] ? n->driver : "-",
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
		char name[128];
		printf("\nbond %s: mode %s, xmit_hash_policy %s, miimon %ld, slaves",
		       nt_out_clip(name, sizeof(name), b->name, 64), b->mode, b->xmit_hash_policy, b->miimon);
		for (int k = 0; k < b->nslaves; k++)
			printf(" %s", nt_out_clip(name, sizeof(name), b->slaves[k], 64));
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

int nt_cmd_topology(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_topology *t;
	if (nt_cli_read_host(o, &t) < 0)
		return 1;
	if (o->json) {
		print_text(nt_topology_to_text(t, NULL));
	} else {
		print_topology_text(t);
	}
	nt_topology_free(t);
	return 0;
}

/* The per-second rate of each IRQ over MS milliseconds, indexed by IRQ
 * number into a new array of T's largest IRQ + 1 doubles (-1: not
 * sampled); NULL when /proc/interrupts could not be read twice. */
static double *irq_rates(const nt_topology *t, long ms, int *nrates)
{
	nt_irq_sample a, b;
	int max = 0;
	for (int i = 0; i < t->nirqs; i++)
		if (t->irqs[i].irq > max)
			max = t->irqs[i].irq;
	if (nt_rates_sample(&t->ctx, &a) < 0)
		return NULL;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	if (nt_rates_sample(&t->ctx, &b) < 0) {
		nt_rates_sample_free(&a);
		return NULL;
	}
	json_t *doc = nt_rates_compute(t, &a, &b);
	double *rates = malloc(sizeof(double) * (size_t)(max + 1));
	if (rates && doc) {
		size_t i;
		json_t *row;
		for (int k = 0; k <= max; k++)
			rates[k] = -1;
		json_array_foreach(json_object_get(doc, "irqs"), i, row) {
			json_int_t irq = json_integer_value(json_object_get(row, "irq"));
			if (irq >= 0 && irq <= max)
				rates[irq] = json_real_value(json_object_get(row, "per_second"));
		}
	} else {
		free(rates);
		rates = NULL;
	}
	json_decref(doc);
	nt_rates_sample_free(&a);
	nt_rates_sample_free(&b);
	*nrates = max + 1;
	return rates;
}

/* `irqs` for people: one row per IRQ (of NIC only when given), with the
 * rate measured over MS ms; the owner's node marks an affinity off it. */
static void print_irqs_table(const nt_topology *t, const nt_nic *nic, long ms)
{
	static const char *const head[] = { "IRQ", "OWNER", "QUEUE", "AFFINITY", "EFFECTIVE", "NODE", "IRQ/S",
					    "NAME" };
	int nrates = 0;
	double *rates = irq_rates(t, ms, &nrates);
	nt_table *tab = nt_table_new(8, head);
	nt_out out;
	int nic_index = nic ? (int)(nic - t->nics) : -1, shown = 0, off = 0;
	nt_out_init(&out, stdout);
	for (int i = 0; tab && i < t->nirqs; i++) {
		const nt_irq *q = &t->irqs[i];
		if (nic && q->nic != nic_index)
			continue;
		char irq[16], queue[16] = "-", aff[256] = "-", eff[256] = "-", node[64] = "-", rate[32] = "-";
		snprintf(irq, sizeof(irq), "%d", q->irq);
		if (q->queue >= 0)
			snprintf(queue, sizeof(queue), "%d", q->queue);
		if (q->has_affinity)
			nt_cpulist_format(&q->affinity, aff, sizeof(aff));
		if (q->has_effective)
			nt_cpulist_format(&q->effective, eff, sizeof(eff));
		/* The node of the CPUs that take the interrupt: the effective
		 * ones when the kernel tells them, else the affinity's. */
		const nt_cpuset *where = q->has_effective ? &q->effective : q->has_affinity ? &q->affinity : NULL;
		nt_cpuset nodes;
		if (where) {
			bool unknown = nt_topology_node_set(t, where, &nodes);
			if (nt_cpuset_count(&nodes))
				nt_cpulist_format(&nodes, node, sizeof(node));
			else if (unknown)
				snprintf(node, sizeof(node), "?");
		}
		if (rates && q->irq < nrates && rates[q->irq] >= 0)
			snprintf(rate, sizeof(rate), "%.1f", rates[q->irq]);
		const nt_nic *owner = q->nic >= 0 ? &t->nics[q->nic] : NULL;
		bool remote = owner && owner->numa_node >= 0 && where &&
			      !nt_topology_set_on_node(t, where, owner->numa_node);
		const char *cells[] = { irq, owner ? owner->name : "-", queue, aff, eff, node, rate, q->name };
		if (nt_table_add(tab, cells) == 0 && remote) {
			nt_table_sgr(tab, 5, NT_SGR_RED);
			off++;
		}
		shown++;
	}
	if (tab && shown)
		nt_table_print(tab, &out, 0);
	nt_table_free(tab);
	free(rates);
	if (!shown)
		printf(nic ? "no IRQs of %s\n" : "no IRQs%s\n", nic ? nic->name : "");
	if (!t->have_irq_info)
		printf("(/proc/interrupts could not be read: owners and counts are missing)\n");
	printf("\n%d IRQ(s); IRQ/S over %ld ms", shown, ms);
	if (off)
		printf("; %d served off their NIC's node (NODE in red on a terminal)", off);
	printf("\n");
}

/* The irqs document of only NIC's IRQs: the whole one's members, its
 * "irqs" array filtered by owner. */
static json_t *irqs_json_of(const nt_topology *t, const nt_nic *nic)
{
	json_t *doc = nt_irqs_to_json(t), *kept = json_array();
	size_t i;
	json_t *q;
	json_array_foreach(json_object_get(doc, "irqs"), i, q) {
		json_t *own = json_object_get(q, "owner");
		if (json_is_string(own) && !strcmp(json_string_value(own), nic->name))
			json_array_append(kept, q);
	}
	json_object_set_new(doc, "irqs", kept);
	return doc;
}

/* irqs [IFACE | --nic IFACE] [--json] [--interval-ms N]. */
int nt_cmd_irqs(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_topology *t;
	const char *ifname = o->nic;
	if (nargs > 1 || (nargs == 1 && ifname && strcmp(ifname, args[0]))) {
		fprintf(stderr, "nettune: irqs wants at most one interface name\n");
		return 2;
	}
	if (nargs == 1)
		ifname = args[0];
	if (ifname && !nt_ifname_valid(ifname)) {
		fprintf(stderr, "nettune: '%s' is not a valid interface name\n", ifname);
		return 2;
	}
	if (nt_cli_read_host(o, &t) < 0)
		return 1;
	const nt_nic *nic = ifname ? nt_topology_nic(t, ifname) : NULL;
	if (ifname && !nic) {
		fprintf(stderr, "nettune: no NIC named '%s'\n", ifname);
		nt_topology_free(t);
		return 2;
	}
	if (o->json && !nic) {
		print_text(nt_irqs_to_text(t, NULL));
	} else if (o->json) {
		json_t *doc = irqs_json_of(t, nic);
		print_json(doc);
		json_decref(doc);
	} else {
		print_irqs_table(t, nic, o->interval_ms ? o->interval_ms : 250);
	}
	nt_topology_free(t);
	return 0;
}

int nt_cmd_rates(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_topology *t;
	nt_irq_sample a, b;
	if (nt_cli_read_host(o, &t) < 0)
		return 1;
	int r = nt_rates_sample(&t->ctx, &a);
	if (r < 0) {
		fprintf(stderr, "nettune: cannot read /proc/interrupts: %s\n", nt_strerror(r));
		nt_topology_free(t);
		return 1;
	}
	long ms = o->interval_ms ? o->interval_ms : 1000;
	/* The wait in steps of at most 200 ms, so a terminal sees it count. */
	nt_progress prog;
	nt_progress_begin(&prog, "counting interrupts");
	for (long left = ms; left > 0; left -= 200) {
		long step = left < 200 ? left : 200;
		struct timespec ts = { 0, step * 1000000L };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		nt_progress_tick(&prog);
	}
	nt_progress_end(&prog);
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
		nt_out out;
		nt_out_init(&out, stdout);
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
			printf("%6lld %-28s %-10s ", json_integer_value(json_object_get(row, "irq")),
			       json_string_value(json_object_get(row, "name")),
			       json_is_string(own) ? json_string_value(own) : "-");
			nt_out_paint(&out, off > 0 ? NT_SGR_RED : NULL, "%5s", off > 0 ? "OFF" : "");
			printf(" %12.1f\n", ps);
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

/* Whether to ask the agent for the profile in effect: always when one is
 * named; on the live host (no --root) the default agent too, since it
 * tunes this host. A --root fixture with no agent named is read alone. */
static const char *placement_agent(const cli_opts *o)
{
	const char *env = getenv("NETTUNE_AGENT");
	if (o->agent)
		return o->agent;
	if (env && *env)
		return env;
	return o->root ? NULL : NT_CLI_DEFAULT_AGENT;
}

/* The placement document for IFNAME (nt_placement_to_json) into *DOC:
 * the agent's, which knows the CPUs the profile in effect reserved, or,
 * with --cpus-list or when no agent answers, one worked out here. Returns
 * the exit code: 0 with *DOC, whose "known" may still be false. */
static int placement_doc(const cli_opts *o, const char *ifname, json_t **doc)
{
	nt_topology *t = NULL;
	nt_placement p;
	nt_cpuset given;
	char note[256] = "";
	*doc = NULL;
	if (!nt_ifname_valid(ifname)) {
		fprintf(stderr, "nettune: '%s' is not a valid interface name\n", ifname);
		return 2;
	}
	if (o->cpus_list && nt_cpulist_parse(o->cpus_list, &given) < 0) {
		fprintf(stderr, "nettune: --cpus-list '%s' is not a CPU list (such as 2-5,8)\n", o->cpus_list);
		return 2;
	}
	const char *agent = o->cpus_list ? NULL : placement_agent(o);
	if (agent) {
		char path[128];
		nt_cli_reply r = { 0 };
		if (o->cpus > 0)
			snprintf(path, sizeof(path), "/v1/nics/%s/placement?cpus=%ld", ifname, o->cpus);
		else
			snprintf(path, sizeof(path), "/v1/nics/%s/placement", ifname);
		int rc = nt_cli_request(agent, "GET", path, NULL, NULL, &r);
		if (rc == 0 && r.status == 200 && json_is_object(r.doc)) {
			*doc = json_incref(r.doc);
			nt_cli_reply_free(&r);
			return 0;
		}
		if (rc == 0 && r.status == 404) {
			nt_cli_reply_free(&r);
			fprintf(stderr, "nettune: no NIC named '%s'\n", ifname);
			return 2;
		}
		snprintf(note, sizeof(note), " (no answer from the agent at %s: the CPUs a profile reserved are "
			 "not known)", agent);
		nt_cli_reply_free(&r);
	}
	if (nt_cli_read_host(o, &t) < 0)
		return 1;
	const nt_nic *n = nt_topology_nic(t, ifname);
	if (!n) {
		fprintf(stderr, "nettune: no NIC named '%s'\n", ifname);
		nt_topology_free(t);
		return 2;
	}
	nt_placement_hint hint = { .given = o->cpus_list ? &given : NULL };
	nt_host_napi napi;
	if (nt_host_napi_read(t, NULL, 0, &napi) == 0)
		hint.napi = &napi;
	nt_placement_for(t, n, (int)o->cpus, &hint, &p);
	nt_host_napi_free(&napi);
	if (note[0] && p.known && strcmp(p.rule, "given"))
		snprintf(p.reason + strlen(p.reason), sizeof(p.reason) - strlen(p.reason), "%s", note);
	*doc = nt_placement_to_json(t, n, &p, NULL);
	nt_topology_free(t);
	return *doc ? 0 : 1;
}

static const char *jstr(const json_t *doc, const char *key)
{
	const char *s = json_string_value(json_object_get(doc, key));
	return s ? s : "-";
}

int nt_cmd_placement(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	json_t *doc = NULL;
	if (nargs != 1) {
		fprintf(stderr, "nettune: placement wants one interface name\n");
		return 2;
	}
	const char *ifname = args[0];
	int rc = placement_doc(o, ifname, &doc);
	if (rc)
		return rc;
	bool known = json_is_true(json_object_get(doc, "known"));
	if (o->json) {
		print_json(doc);
	} else if (!known) {
		fprintf(stderr, "nettune: %s\n", jstr(doc, "reason"));
	} else {
		const char *napi = json_string_value(json_object_get(doc, "napi_cpus"));
		printf("%s: node %s%s%s\n  irq cpus  %s\n", ifname, jstr(doc, "nodes"),
		       json_is_string(json_object_get(doc, "ports")) ? ", ports " : "",
		       json_is_string(json_object_get(doc, "ports")) ? jstr(doc, "ports") : "", jstr(doc, "irq_cpus"));
		if (napi && *napi)
			printf("  napi cpus %s (pinned NAPI threads, among the irq cpus)\n", napi);
		printf("  app cpus  %s\n  rule      %s: %s\n  %s\n  %s\n", jstr(doc, "app_cpus"), jstr(doc, "rule"),
		       jstr(doc, "reason"), jstr(doc, "numactl"), jstr(doc, "iperf3"));
	}
	json_decref(doc);
	/* Nothing to recommend is a failure a script must see. */
	return known ? 0 : 1;
}

/* "-" for a member that is null or absent. */
int nt_cmd_nics(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	nt_topology *t = NULL;
	nt_nic_queues q;
	if (nargs != 1) {
		fprintf(stderr, "nettune: nics wants one interface name\n");
		return 2;
	}
	if (!nt_ifname_valid(args[0])) {
		fprintf(stderr, "nettune: '%s' is not a valid interface name\n", args[0]);
		return 2;
	}
	if (nt_cli_read_host(o, &t) < 0)
		return 1;
	const nt_nic *n = nt_topology_nic(t, args[0]);
	if (!n) {
		fprintf(stderr, "nettune: no NIC named '%s'\n", args[0]);
		nt_topology_free(t);
		return 2;
	}
	json_t *doc = nt_nic_to_json(t, n);
	int r = nt_nic_queues_read(t, n, &q);
	/* NAPI first: the netdev family may name each queue's IRQ. */
	if (doc && (nt_nic_napi_report(t, n, r == 0 ? &q : NULL, doc) == -ENOMEM ||
		    nt_nic_qstats_report(t, n, r == 0 ? &q : NULL, doc) == -ENOMEM)) {
		json_decref(doc);
		doc = NULL;
	}
	json_t *qs = r == 0 ? nt_nic_queues_json(t, &q) : NULL;
	nt_nic_queues_free(&q);
	if (doc) {
		json_t *rss = nt_nic_rss_json(t, n);
		json_object_set_new(doc, "queues", qs ? qs : json_null());
		json_object_set_new(doc, "rss", rss ? rss : json_null());
		/* Offload features and flow control, as GET /v1/nics/{name}. */
		if (nt_setting_report_detail(&t->ctx, NULL, n, doc) == -ENOMEM) {
			json_decref(doc);
			doc = NULL;
		}
		json_t *flows = nt_nic_flows_json(t, n);
		json_object_set_new(doc, "flows", flows ? flows : json_null());
	}
	if (!doc) {
		fprintf(stderr, "nettune: out of memory\n");
	} else if (o->json) {
		print_json(doc);
	} else {
		nt_cli_nic_view(n, doc, qs, r);
	}
	json_decref(doc);
	nt_topology_free(t);
	return doc ? 0 : 1;
}

int nt_cli_bind_near(const cli_opts *o, const char *ifname, char *where, size_t wsize)
{
	json_t *doc = NULL;
	nt_cpuset cpus, nodes;
	int rc = placement_doc(o, ifname, &doc);
	if (rc)
		return rc;
	if (!json_is_true(json_object_get(doc, "known"))) {
		fprintf(stderr, "nettune: %s\n", jstr(doc, "reason"));
		json_decref(doc);
		return 2;
	}
	nt_cpuset_zero(&nodes);
	if (nt_cpulist_parse(jstr(doc, "app_cpus"), &cpus) < 0 || nt_cpuset_empty(&cpus) ||
	    (json_is_string(json_object_get(doc, "nodes")) && nt_cpulist_parse(jstr(doc, "nodes"), &nodes) < 0)) {
		fprintf(stderr, "nettune: the placement of %s names no CPUs\n", ifname);
		json_decref(doc);
		return 1;
	}
	if (where)
		snprintf(where, wsize, "cpus %s, node %s (%s)", jstr(doc, "app_cpus"), jstr(doc, "nodes"),
			 jstr(doc, "rule"));
	json_decref(doc);
	cpu_set_t *set = CPU_ALLOC(NT_MAX_CPUS);
	size_t sz = CPU_ALLOC_SIZE(NT_MAX_CPUS);
	CPU_ZERO_S(sz, set);
	for (int c = nt_cpuset_next(&cpus, 0); c >= 0; c = nt_cpuset_next(&cpus, c + 1))
		CPU_SET_S((size_t)c, sz, set);
	if (sched_setaffinity(0, sz, set) < 0) {
		int err = errno;
		/* EINVAL: none of them is a CPU this process may run on, most
		 * often a placement worked out on a --root host with more CPUs. */
		cpu_set_t *mine = CPU_ALLOC(NT_MAX_CPUS);
		nt_cpuset here;
		char have[1024], want[1024];
		nt_cpuset_zero(&here);
		nt_cpulist_format(&cpus, want, sizeof(want));
		if (err == EINVAL && mine && sched_getaffinity(0, sz, mine) == 0) {
			for (int c = 0; c < NT_MAX_CPUS; c++)
				if (CPU_ISSET_S((size_t)c, sz, mine))
					nt_cpuset_set(&here, c);
			nt_cpulist_format(&here, have, sizeof(have));
			fprintf(stderr, "nettune: the placement names CPUs %s, which this machine does not have or does "
					"not let this process use (it may use %s)%s\n", want, have,
				o->root ? ": it was worked out on the host of --root" : "");
		} else {
			fprintf(stderr, "nettune: cannot bind to CPUs %s: %s\n", want, strerror(err));
		}
		if (mine)
			CPU_FREE(mine);
		CPU_FREE(set);
		return 1;
	}
	CPU_FREE(set);
	if (!nt_cpuset_empty(&nodes) && numa_available() >= 0) {
		struct bitmask *mask = numa_allocate_nodemask();
		for (int nd = nt_cpuset_next(&nodes, 0); nd >= 0; nd = nt_cpuset_next(&nodes, nd + 1))
			numa_bitmask_setbit(mask, (unsigned)nd);
		numa_set_membind(mask);
		numa_free_nodemask(mask);
	}
	return 0;
}

/* Bind this process to the recommended CPUs and the NIC's memory node,
 * then become COMMAND: the affinity and memory policy are inherited. */
int nt_cmd_run(const char *cmd, const cli_opts *o, int nargs, char **args)
{
	if (!o->near || nargs < 1) {
		fprintf(stderr, "nettune: run wants --near IFACE -- COMMAND [ARGS...]\n");
		return 2;
	}
	int rc = nt_cli_bind_near(o, o->near, NULL, 0);
	if (rc)
		return rc;
	execvp(args[0], args);
	fprintf(stderr, "nettune: cannot run '%s': %s\n", args[0], strerror(errno));
	return 127;
}
