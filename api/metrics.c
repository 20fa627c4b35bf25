/* SPDX-License-Identifier: Apache-2.0 */
/* GET /metrics: Prometheus text exposition format 0.0.4.
 *
 *   nettune_build_info{version}                     gauge, always 1
 *   nettune_irq_interrupts_total{irq,name,nic,cpu}  counter, NIC-owned IRQs only, one
 *       sample per CPU whose count is non-zero (a host with 128 CPUs and 256 queue
 *       vectors would otherwise serve 32768 mostly-zero series; a series appears
 *       with its first interrupt, which rate() handles as a new series)
 *   nettune_nic_rx_dropped_total{nic}               counter (statistics/rx_dropped)
 *   nettune_nic_rx_missed_total{nic}                counter (statistics/rx_missed_errors)
 *   nettune_transactions{status}                    gauge, every status (0 when none)
 *   nettune_last_apply_timestamp_seconds            gauge, 0 when nothing was applied
 *   nettune_http_requests_total{method,code}        counter, since the agent started
 *   nettune_drift_targets                           gauge, targets differing from the
 *       desired state at the last check (drifted, contested or overridden)
 *   nettune_repairs_total{reason}                   counter, transactions the drift
 *       watcher made since the agent started, by reason (boot, drift, link-up)
 *   nettune_nic_interrupts_elsewhere{nic}           gauge, interrupts of the NIC's IRQs
 *       delivered outside their placement (or affinity) in the agent's last delivery
 *       check (GET /v1/verify or a transaction's); one per NIC that check saw
 *   nettune_delivery_check_timestamp_seconds        gauge, when that check ended, 0 none
 *   nettune_cpu_info{cpu,node}                      gauge, 1 per online CPU with its NUMA
 *       node ("-1" unknown): joined on cpu, it groups the interrupts by node
 *   nettune_nic_ring_rx{nic}, nettune_nic_ring_rx_max{nic}   gauges, the RX ring and its
 *       maximum (ethtool -g), for NICs that report rings: the alert on drops rising
 *       below the maximum compares them
 *   nettune_transaction_applying_seconds            gauge, how long the oldest transaction
 *       still "applying" has been at it; 0 when none (a stuck apply)
 *   nettune_drift_contested_targets                 gauge, desired targets another program
 *       keeps changing (or took), which the agent no longer writes over
 *   nettune_drift_repair_failing_targets            gauge, desired targets whose last
 *       repair failed
 *   nettune_queue_<counter>_total{nic,queue}        counters, only with --metrics-queues
 *       (metrics_queues): each queue's counters from the kernel's qstats-get, the spec's
 *       names with '_' ("rx_packets", "tx_wake"), only those the kernel reports; off by
 *       default for their cardinality (a series per queue and counter)
 *
 * The host is read fresh for each scrape, like every read route. The
 * transaction counts and request counters are the agent's: its one store
 * handle and its counters. A scrape during an apply waits at most for the
 * step being recorded (the store serialises single calls), never for the
 * whole transaction: the engine holds no lock across its steps. */
#include "agent/agent.h"
#include "api/http.h"
#include "api/server.h"
#include "host/topology.h"
#include "kernel/netdev.h"
#include "store/status.h"
#include "store/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A label value as the exposition format wants it: backslash, double quote
 * and newline escaped. Names and IRQ actions come from the kernel and may
 * hold anything. */
static void put_label(FILE *f, const char *name, const char *value, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	for (const char *p = value; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

struct http_ctx {
	FILE *f;
};

static void http_sample(void *ud, const char *method, int code, uint64_t n)
{
	struct http_ctx *h = ud;
	char cs[8];
	snprintf(cs, sizeof(cs), "%d", code);
	fputs("nettune_http_requests_total{", h->f);
	put_label(h->f, "method", method, true);
	put_label(h->f, "code", cs, false);
	fprintf(h->f, "} %" PRIu64 "\n", n);
}

/* One sample per NIC that reports rings: its RX ring, or its maximum. */
static void ring_family(FILE *f, const nt_topology *t, const char *name, const char *help, bool max)
{
	family(f, name, "gauge", help);
	for (int i = 0; i < t->nnics; i++) {
		if (!t->nics[i].has_rings)
			continue;
		fprintf(f, "%s{", name);
		put_label(f, "nic", t->nics[i].name, true);
		fprintf(f, "} %u\n", (unsigned)(max ? t->nics[i].rings.rx_max : t->nics[i].rings.rx));
	}
}

static void host_metrics(FILE *f, const nt_topology *t)
{
	char num[32];

	family(f, "nettune_irq_interrupts_total", "counter",
	       "Interrupts served per CPU for IRQs owned by a NIC (/proc/interrupts).");
	for (int i = 0; i < t->nirqs; i++) {
		const nt_irq *q = &t->irqs[i];
		if (q->nic < 0 || q->nic >= t->nnics)
			continue;
		for (int c = 0; c < q->ncounts && c < t->ncolumns; c++) {
			if (!q->counts[c])
				continue;
			fputs("nettune_irq_interrupts_total{", f);
			snprintf(num, sizeof(num), "%d", q->irq);
			put_label(f, "irq", num, true);
			put_label(f, "name", q->name, false);
			put_label(f, "nic", t->nics[q->nic].name, false);
			snprintf(num, sizeof(num), "%d", t->irq_cpu_columns[c]);
			put_label(f, "cpu", num, false);
			fprintf(f, "} %" PRIu64 "\n", q->counts[c]);
		}
	}
	family(f, "nettune_cpu_info", "gauge", "1 for each online CPU, with its NUMA node (-1: unknown).");
	for (int c = nt_cpuset_next(&t->cpus_online, 0); c >= 0; c = nt_cpuset_next(&t->cpus_online, c + 1)) {
		fputs("nettune_cpu_info{", f);
		snprintf(num, sizeof(num), "%d", c);
		put_label(f, "cpu", num, true);
		snprintf(num, sizeof(num), "%d", nt_topology_cpu_node(t, c));
		put_label(f, "node", num, false);
		fputs("} 1\n", f);
	}
	family(f, "nettune_nic_rx_dropped_total", "counter",
	       "Received packets dropped by the kernel (statistics/rx_dropped).");
	for (int i = 0; i < t->nnics; i++) {
		if (!t->nics[i].has_stats)
			continue;
		fputs("nettune_nic_rx_dropped_total{", f);
		put_label(f, "nic", t->nics[i].name, true);
		fprintf(f, "} %" PRIu64 "\n", t->nics[i].rx_dropped);
	}
	ring_family(f, t, "nettune_nic_ring_rx", "The NIC's RX ring size (ethtool -g), where it reports rings.", false);
	ring_family(f, t, "nettune_nic_ring_rx_max", "The largest RX ring the NIC takes (ethtool -g).", true);
	family(f, "nettune_nic_rx_missed_total", "counter",
	       "Received packets the NIC missed for want of ring space "
	       "(statistics/rx_missed_errors).");
	for (int i = 0; i < t->nnics; i++) {
		if (!t->nics[i].has_stats)
			continue;
		fputs("nettune_nic_rx_missed_total{", f);
		put_label(f, "nic", t->nics[i].name, true);
		fprintf(f, "} %" PRIu64 "\n", t->nics[i].rx_missed);
	}
}

/* Each queue's counters (qstats-get), one family a counter the kernel
 * reports for some queue of a NIC of T, one sample a queue: read once for
 * the namespace (kernel/netdev.h). Nothing when the kernel or driver keeps
 * none, or the read fails: the families are absent, never zero. */
static void queue_metrics(FILE *f, const nt_topology *t)
{
	const char **names = calloc((size_t)(t->nnics ? t->nnics : 1), sizeof(*names));
	int *ifindexes = calloc((size_t)(t->nnics ? t->nnics : 1), sizeof(*ifindexes));
	nt_netdev nd;
	memset(&nd, 0, sizeof(nd));
	if (!names || !ifindexes)
		goto out;
	for (int i = 0; i < t->nnics; i++) {
		names[i] = t->nics[i].name;
		ifindexes[i] = t->nics[i].ifindex;
	}
	if (nt_netdev_qstats_read_all(&t->ctx, names, ifindexes, t->nnics, &nd) < 0)
		goto out;
	for (int c = 0; c < NT_NETDEV_QSTATS_N; c++) {
		char name[96], help[256], num[16];
		bool head = false;
		snprintf(name, sizeof(name), "nettune_queue_%s_total", nt_netdev_qstat_names[c]);
		for (char *p = name; *p; p++)
			if (*p == '-')
				*p = '_';
		for (size_t k = 0; k < nd.nqstats; k++) {
			const nt_nd_qstats *q = &nd.qstats[k];
			const nt_nic *nic = NULL;
			if (!(q->present & (1u << c)))
				continue;
			for (int i = 0; i < t->nnics && !nic; i++)
				if (t->nics[i].ifindex == (int)q->ifindex)
					nic = &t->nics[i];
			if (!nic)
				continue; /* a device the host read does not show */
			if (!head) {
				snprintf(help, sizeof(help),
					 "The queue's %s counter (the kernel's qstats-get, netdev family), where its "
					 "driver keeps it.", nt_netdev_qstat_names[c]);
				family(f, name, "counter", help);
				head = true;
			}
			fprintf(f, "%s{", name);
			put_label(f, "nic", nic->name, true);
			snprintf(num, sizeof(num), "%u", q->id);
			put_label(f, "queue", num, false);
			fprintf(f, "} %" PRIu64 "\n", q->v[c]);
		}
	}
out:
	nt_netdev_free(&nd);
	free(names);
	free(ifindexes);
}

/* Without a database (none configured, or it could not be opened: the
 * agent reported that at start) or when it cannot be read now, the
 * transaction families are left out; nettune_store_up says which, so an
 * alert has a series to fire on rather than an absence. */
static void txn_metrics(FILE *f, nt_store *st)
{
	json_t *counts = NULL;
	int64_t last_ms = 0;

	bool up = st && nt_store_txn_stats(st, &counts, &last_ms) == 0;
	family(f, "nettune_store_up", "gauge",
	       "1 when the state database answers, 0 when it cannot be opened or read "
	       "(the transaction, drift and repair series are then left out; GET /v1/health says why).");
	fprintf(f, "nettune_store_up %d\n", up ? 1 : 0);
	if (!up)
		return;
	family(f, "nettune_transactions", "gauge", "Recorded transactions by status.");
	for (int i = 0; i < NT_TXN_NSTATUS; i++) {
		const char *status = nt_txn_status_name((nt_txn_status)i);
		fputs("nettune_transactions{", f);
		put_label(f, "status", status, true);
		fprintf(f, "} %" JSON_INTEGER_FORMAT "\n",
			json_integer_value(json_object_get(counts, status)));
	}
	family(f, "nettune_last_apply_timestamp_seconds", "gauge",
	       "When the newest transaction that left changes in place finished "
	       "(Unix time; 0 when none).");
	fprintf(f, "nettune_last_apply_timestamp_seconds %" PRId64 ".%03d\n", last_ms / 1000,
		(int)(last_ms % 1000));
	/* Only looked up when some transaction is applying: rare, and then
	 * the one question an alert has. */
	double applying_s = 0;
	int64_t created = 0, now = nt_store_now_ms();
	if (json_integer_value(json_object_get(counts, "applying")) > 0 &&
	    nt_store_txn_oldest_created(st, "applying", &created) == 0 && created > 0 && now > created)
		applying_s = (double)(now - created) / 1000.0;
	family(f, "nettune_transaction_applying_seconds", "gauge",
	       "How long the oldest transaction still applying has been at it (seconds; 0 when none).");
	fprintf(f, "nettune_transaction_applying_seconds %.3f\n", applying_s);
	json_decref(counts);
}

/* Without a database there is no desired state and no watcher: left out. */
static void drift_metrics(FILE *f, nt_drift *d)
{
	uint64_t repairs[NT_DRIFT_NREASONS];
	int targets = 0;

	if (!d)
		return;
	nt_drift_counts(d, &targets, repairs);
	family(f, "nettune_drift_targets", "gauge",
	       "Targets that differ from the desired state at the last check.");
	fprintf(f, "nettune_drift_targets %d\n", targets);
	int contested = 0, failing = 0;
	nt_drift_state_counts(d, &contested, &failing);
	family(f, "nettune_drift_contested_targets", "gauge",
	       "Desired targets another program keeps changing or took, which the agent no longer writes over.");
	fprintf(f, "nettune_drift_contested_targets %d\n", contested);
	family(f, "nettune_drift_repair_failing_targets", "gauge", "Desired targets whose last repair failed.");
	fprintf(f, "nettune_drift_repair_failing_targets %d\n", failing);
	family(f, "nettune_repairs_total", "counter",
	       "Transactions the agent made to hold the desired state, by reason.");
	for (int i = 0; i < NT_DRIFT_NREASONS; i++) {
		fputs("nettune_repairs_total{", f);
		put_label(f, "reason", nt_drift_reasons[i], true);
		fprintf(f, "} %" PRIu64 "\n", repairs[i]);
	}
}

static void delivery_metrics(FILE *f, nt_agent *agent)
{
	json_t *last = nt_agent_last_delivery(agent);
	size_t i;
	json_t *n;

	family(f, "nettune_nic_interrupts_elsewhere", "gauge",
	       "Interrupts of the NIC's IRQs delivered outside their placement (or affinity) "
	       "in the last delivery check.");
	json_array_foreach(json_object_get(last, "nics"), i, n) {
		fputs("nettune_nic_interrupts_elsewhere{", f);
		put_label(f, "nic", json_string_value(json_object_get(n, "nic")), true);
		fprintf(f, "} %lld\n", (long long)json_integer_value(json_object_get(n, "elsewhere")));
	}
	family(f, "nettune_delivery_check_timestamp_seconds", "gauge",
	       "When the last delivery check ended (seconds since the epoch); 0 when none was made.");
	fprintf(f, "nettune_delivery_check_timestamp_seconds %.3f\n",
		(double)json_integer_value(json_object_get(last, "at_ms")) / 1000.0);
	json_decref(last);
}

static int get_metrics(const nt_request *req, nt_response *resp)
{
	nt_topology *t = NULL;
	char *text = NULL;
	size_t len = 0;
	int r = nt_route_read_host(req, resp, &t);
	if (r < 0 || !t)
		return r;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		nt_topology_free(t);
		return -ENOMEM;
	}
	family(f, "nettune_build_info", "gauge", "The nettune version serving; always 1.");
	fputs("nettune_build_info{", f);
	put_label(f, "version", NETTUNE_VERSION, true);
	fputs("} 1\n", f);
	host_metrics(f, t);
	/* Opt-in for their cardinality (nettune.conf(5) metrics_queues). */
	if (nt_server_cfg(req->server)->metrics_queues)
		queue_metrics(f, t);
	nt_topology_free(t);
	nt_agent *agent = nt_server_agent(req->server);
	txn_metrics(f, nt_agent_store(agent));
	drift_metrics(f, nt_agent_drift(agent));
	delivery_metrics(f, agent);
	family(f, "nettune_held_files", "gauge",
	       "Kernel files (IRQ affinities) held open between reads of the host.");
	fprintf(f, "nettune_held_files %d\n", nt_agent_held_files(agent));
	family(f, "nettune_http_requests_total", "counter",
	       "HTTP requests answered since the agent started, by method and status code.");
	struct http_ctx h = { f };
	nt_agent_http_counts(agent, http_sample, &h);
	if (fclose(f) != 0 || !text) {
		free(text);
		return -ENOMEM;
	}
	resp->text = text;
	/* The content type Prometheus asks for and expects back. */
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	return 0;
}

static const nt_route metrics_routes[] = {
	{ "GET", "/metrics", get_metrics, NULL, 0 },
	{ NULL, NULL, NULL, NULL, 0 },
};

const nt_area nt_area_metrics = {
	.name = "metrics",
	.routes = metrics_routes,
};
