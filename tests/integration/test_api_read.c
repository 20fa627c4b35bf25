/* SPDX-License-Identifier: Apache-2.0 */
/* The read API over a real socket, on two field-report hosts: what the
 * IBM x460 (4 nodes, eight tg3 ports whose IRQs all sit on node 0) and the
 * EPYC 7713 (bond0 layer2+3, rings 1024 of 8192) show must come out of the
 * HTTP API as their fixtures hold it (docs/field-reports.md#host-x460,
 * docs/field-reports.md#host-epyc7713, tests/fixtures/README.md), and
 * /v1/topology must be the same document as `nettune topology --json`. */
#include "harness.h"
#include "integration/nt_agent.h"

#include <limits.h>
#include <stdio.h>

#define X460 NT_FIXTURES "/x460-4node-8nic"
#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

/* GET PATH; the parsed body when the status is 200 and the type JSON. */
static json_t *get_json(nt_agent *a, const char *path)
{
	long st = 0;
	json_t *doc = NULL;
	char ct[128] = "";
	int rc = nt_http("GET", nt_url(a, path), NULL, &st, &doc, ct, sizeof(ct));
	CHECK_MSG(rc == 0 && st == 200, "GET %s: rc %d status %ld", path, rc, st);
	CHECK_MSG(strncmp(ct, "application/json", 16) == 0, "GET %s: Content-Type '%s'", path, ct);
	CHECK_MSG(doc != NULL, "GET %s: body is not JSON", path);
	if (st != 200) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

static json_t *find_by(json_t *arr, const char *key, const char *value)
{
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e) {
		const char *v = json_string_value(json_object_get(e, key));
		if (v && strcmp(v, value) == 0)
			return e;
	}
	return NULL;
}

static json_t *find_int(json_t *arr, const char *key, json_int_t value)
{
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e) {
		json_t *v = json_object_get(e, key);
		if (json_is_integer(v) && json_integer_value(v) == value)
			return e;
	}
	return NULL;
}

static bool has_finding(json_t *diag, const char *id)
{
	return find_by(json_object_get(diag, "findings"), "id", id) != NULL;
}

/* Run `nettune topology --root ROOT --json`; its stdout, malloc'd. */
static char *cli_topology(const char *root)
{
	char cmd[PATH_MAX * 2 + 64];
	snprintf(cmd, sizeof(cmd), "'%s' topology --root '%s' --json", NT_BIN, root);
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	char *out = NULL;
	size_t len = 0, cap = 0, n;
	char buf[65536];
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			char *nb = realloc(out, cap);
			if (!nb)
				break;
			out = nb;
		}
		memcpy(out + len, buf, n);
		len += n;
		out[len] = '\0';
	}
	int st = pclose(p);
	CHECK_MSG(st == 0, "%s exited with %d", cmd, st);
	return out;
}

/* /v1/topology against the CLI: the same document, parsed and as bytes. */
static void check_topology_matches_cli(nt_agent *a, const char *root)
{
	nt_http_result res;
	char *cli = cli_topology(root);
	CHECK_MSG(cli != NULL, "no output from nettune topology --root %s", root);
	CHECK(nt_http_do("GET", nt_url(a, "/v1/topology"), NULL, 0, NULL, &res) == 0);
	CHECK_INT(res.status, 200);
	json_t *cli_doc = cli ? json_loads(cli, 0, NULL) : NULL;
	CHECK_MSG(cli_doc != NULL, "CLI topology is not JSON");
	CHECK_MSG(res.json && cli_doc && json_equal(res.json, cli_doc),
		  "GET /v1/topology differs from nettune topology --json on %s", root);
	CHECK_MSG(cli && res.body && strcmp(cli, res.body) == 0,
		  "GET /v1/topology is not byte-identical to the CLI output on %s", root);
	json_decref(cli_doc);
	free(cli);
	nt_http_result_free(&res);
}

static void check_health(nt_agent *a, const char *root)
{
	char real[PATH_MAX];
	json_t *h = get_json(a, "/v1/health");
	CHECK_MSG(realpath(root, real) != NULL, "realpath %s", root);
	if (!h)
		return;
	CHECK_STR(json_string_value(json_object_get(h, "status")), "ok");
	CHECK_STR(json_string_value(json_object_get(h, "version")), NETTUNE_VERSION);
	CHECK_STR(json_string_value(json_object_get(h, "root")), real);
	CHECK(json_is_false(json_object_get(h, "live")));
	/* A fixture tree is not this process's namespace. */
	CHECK(json_is_null(json_object_get(h, "netns")));
	json_decref(h);
}

/* The x460: node 0 = CPUs 0-15 ... node 3 = 48-63; eth0..eth7, two a node,
 * IRQs 177, 185, ..., 233, all with affinity 0-15 (irqbalance out of the
 * box put every NIC's interrupts on node 0), so only eth0/eth1 are local. */
static void test_x460(void)
{
	nt_agent a;
	static const int x460_irqs[] = { 177, 185, 193, 201, 209, 217, 225, 233 };

	if (nt_agent_start(&a, X460, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start on %s", X460);
		return;
	}
	check_health(&a, X460);

	json_t *topo = get_json(&a, "/v1/topology");
	if (topo) {
		CHECK_INT(json_array_size(json_object_get(topo, "numa_nodes")), 4);
		CHECK_INT(json_integer_value(json_object_get(json_object_get(topo, "cpus"),
							     "online_count")), 64);
		static const char *node_cpus[] = { "0-15", "16-31", "32-47", "48-63" };
		for (int n = 0; n < 4; n++) {
			json_t *node = find_int(json_object_get(topo, "numa_nodes"), "id", n);
			CHECK_MSG(node != NULL, "x460 node %d missing", n);
			if (node)
				CHECK_STR(json_string_value(json_object_get(node, "cpus")),
					  node_cpus[n]);
		}
		json_decref(topo);
	}

	json_t *nics = get_json(&a, "/v1/nics");
	json_t *irqs = get_json(&a, "/v1/irqs");
	json_t *arr = json_object_get(nics, "nics");
	int eth = 0, seen_irq[8] = { 0 };
	for (int i = 0; i < 8; i++) {
		char name[16], path[64];
		snprintf(name, sizeof(name), "eth%d", i);
		json_t *nic = find_by(arr, "name", name);
		CHECK_MSG(nic != NULL, "x460 %s missing from /v1/nics", name);
		if (!nic)
			continue;
		eth++;
		CHECK_STR(json_string_value(json_object_get(nic, "driver")), "tg3");
		CHECK_INT(json_integer_value(json_object_get(nic, "numa_node")), i / 2);
		json_t *ni = json_object_get(nic, "irqs");
		CHECK_MSG(json_array_size(ni) == 1, "%s has %zu IRQs, want 1", name,
			  json_array_size(ni));
		json_t *q = json_array_get(ni, 0);
		json_int_t irq = json_integer_value(json_object_get(q, "irq"));
		int k;
		for (k = 0; k < 8 && x460_irqs[k] != irq; k++)
			;
		CHECK_MSG(k < 8, "%s IRQ %lld is not one of the x460's", name, (long long)irq);
		if (k < 8)
			seen_irq[k]++;
		CHECK_STR(json_string_value(json_object_get(q, "affinity")), "0-15");
		CHECK_STR(json_string_value(json_object_get(q, "owner")), name);
		json_t *local = json_object_get(q, "local");
		CHECK_MSG(json_is_boolean(local) && json_is_true(local) == (i < 2),
			  "%s IRQ local = %s, want %s", name,
			  json_is_boolean(local) ? (json_is_true(local) ? "true" : "false") : "non-bool",
			  i < 2 ? "true" : "false");

		/* The single-NIC route serves the same object as the list, and
		 * its queues: tg3's one queue is served by its one IRQ. */
		snprintf(path, sizeof(path), "/v1/nics/%s", name);
		json_t *one = get_json(&a, path);
		json_t *queues = one ? json_incref(json_object_get(one, "queues")) : NULL;
		if (one) {
			json_object_del(one, "queues");
			/* tg3's fixture has no RSS to report. */
			CHECK(json_is_null(json_object_get(one, "rss")));
			json_object_del(one, "rss");
			/* Nor offload features or flow control (null: none). */
			CHECK(json_is_null(json_object_get(one, "features")));
			CHECK(json_is_null(json_object_get(one, "pause")));
			json_object_del(one, "features");
			json_object_del(one, "pause");
			/* The ring parameters only ethtool netlink reaches: tg3's
			 * fixture reports none of them (hds-thresh newer than its
			 * 6.12), and it has no coalescing. */
			json_t *rp = json_object_get(one, "ring_params");
			CHECK_INT(json_object_size(rp), 7);
			CHECK(json_is_false(json_object_get(json_object_get(rp, "tcp_data_split"), "supported")));
			CHECK_STR(json_string_value(json_object_get(json_object_get(rp, "hds_thresh"), "reason")),
				  "needs Linux 6.14 or later (this kernel is 6.12.48+deb13-amd64)");
			CHECK(json_is_null(json_object_get(one, "coalesce_params")));
			json_object_del(one, "ring_params");
			json_object_del(one, "coalesce_params");
			/* Nor a flow rule table. */
			CHECK(json_is_null(json_object_get(one, "flows")));
			json_object_del(one, "flows");
			/* tg3 on a kernel whose netdev family says nothing of it
			 * (no answers in its document): sysfs, no threads, the
			 * IRQ names. */
			CHECK_STR(json_string_value(json_object_get(one, "irq_source")), "irq-names");
			CHECK(json_is_false(json_object_get(one, "threaded")));
			CHECK_INT(json_array_size(json_object_get(one, "napi")), 0);
			const char *napi_keys[] = { "irq_source", "threaded", "napi_defer_hard_irqs",
						    "gro_flush_timeout_ns", "napi" };
			for (size_t nk = 0; nk < sizeof(napi_keys) / sizeof(napi_keys[0]); nk++)
				json_object_del(one, napi_keys[nk]);
			/* Nor per-queue counters: that kernel lacks qstats-get. */
			CHECK(json_is_null(json_object_get(one, "queue_stats_source")));
			CHECK(json_is_string(json_object_get(one, "queue_stats_reason")));
			json_object_del(one, "queue_stats_source");
			json_object_del(one, "queue_stats_reason");
		}
		CHECK_MSG(one && json_equal(one, nic), "GET %s differs from its /v1/nics entry", path);
		CHECK_MSG(!json_object_get(nic, "queues"), "/v1/nics lists %s's queues", name);
		json_t *rx0 = json_array_get(json_object_get(queues, "rx"), 0);
		CHECK_INT(json_array_size(json_object_get(queues, "rx")), 1);
		CHECK_INT(json_integer_value(json_object_get(rx0, "irq")), irq);
		CHECK_STR(json_string_value(json_object_get(rx0, "irq_cpus")), "0-15");
		CHECK_STR(json_string_value(json_object_get(rx0, "rps_cpus")), "");
		CHECK_INT(json_integer_value(json_object_get(rx0, "rps_flow_cnt")), 0);
		json_t *tx0 = json_array_get(json_object_get(queues, "tx"), 0);
		CHECK_STR(json_string_value(json_object_get(tx0, "xps_cpus")), "");
		CHECK_STR(json_string_value(json_object_get(tx0, "xps_rxqs")), "");
		json_decref(queues);
		json_decref(one);

		/* /v1/irqs lists the same IRQ with its owner and per-CPU counts. */
		json_t *iq = find_int(json_object_get(irqs, "irqs"), "irq", irq);
		CHECK_MSG(iq != NULL, "IRQ %lld missing from /v1/irqs", (long long)irq);
		if (iq) {
			CHECK_STR(json_string_value(json_object_get(iq, "owner")), name);
			CHECK_STR(json_string_value(json_object_get(iq, "affinity")), "0-15");
			CHECK(json_is_object(json_object_get(iq, "per_cpu")));
		}
	}
	CHECK_INT(eth, 8);
	int physical = 0;
	size_t ni;
	json_t *nic;
	json_array_foreach(arr, ni, nic)
		physical += json_is_false(json_object_get(nic, "virtual"));
	CHECK_INT(physical, 8);
	for (int k = 0; k < 8; k++)
		CHECK_MSG(seen_irq[k] == 1, "x460 IRQ %d owned by %d NICs", x460_irqs[k], seen_irq[k]);
	CHECK(json_is_true(json_object_get(irqs, "available")));
	json_decref(nics);
	json_decref(irqs);

	json_t *diag = get_json(&a, "/v1/diagnostics");
	CHECK_MSG(diag && has_finding(diag, "irqbalance-active"),
		  "x460 diagnostics lack irqbalance-active");
	json_decref(diag);
	diag = get_json(&a, "/v1/diagnostics?rtt_ms=80");
	CHECK_INT(json_integer_value(json_object_get(diag, "rtt_ms")), 80);
	json_decref(diag);

	check_topology_matches_cli(&a, X460);
	CHECK_INT(nt_agent_stop(&a), 0);
}

/* The EPYC 7713: nodes 0-31,64-95 / 32-63,96-127; bond0 layer2+3 over four
 * ports; enos0 rings RX 1024 of 8192; enos0 on node 0, enos2 on node 1. */
static void test_epyc(void)
{
	nt_agent a;

	if (nt_agent_start(&a, EPYC, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start on %s", EPYC);
		return;
	}
	check_health(&a, EPYC);

	json_t *topo = get_json(&a, "/v1/topology");
	if (topo) {
		json_t *nodes = json_object_get(topo, "numa_nodes");
		/* NAPI is read for the one NIC shown, never for the whole host. */
		char *text = json_dumps(topo, JSON_COMPACT);
		CHECK_MSG(text && !strstr(text, "\"napi\"") && !strstr(text, "napi_id") && !strstr(text, "irq_source"),
			  "the topology reports NAPI");
		CHECK_MSG(text && !strstr(text, "queue_stats") && !strstr(text, "rx_alloc_fail"),
			  "the topology reports per-queue counters");
		free(text);
		CHECK_INT(json_array_size(nodes), 2);
		CHECK_STR(json_string_value(json_object_get(find_int(nodes, "id", 0), "cpus")),
			  "0-31,64-95");
		CHECK_STR(json_string_value(json_object_get(find_int(nodes, "id", 1), "cpus")),
			  "32-63,96-127");
		CHECK_INT(json_integer_value(json_object_get(json_object_get(topo, "cpus"),
							     "online_count")), 128);
		json_t *bond = find_by(json_object_get(topo, "bonds"), "name", "bond0");
		CHECK_MSG(bond != NULL, "epyc bond0 missing");
		if (bond) {
			CHECK_STR(json_string_value(json_object_get(bond, "xmit_hash_policy")),
				  "layer2+3");
			CHECK_INT(json_array_size(json_object_get(bond, "slaves")), 4);
		}
		json_decref(topo);
	}

	json_t *enos0 = get_json(&a, "/v1/nics/enos0");
	if (enos0) {
		json_t *rings = json_object_get(enos0, "rings");
		CHECK_MSG(json_is_object(rings), "enos0 has no rings");
		CHECK_INT(json_integer_value(json_object_get(rings, "rx")), 1024);
		CHECK_INT(json_integer_value(json_object_get(rings, "rx_max")), 8192);
		CHECK_INT(json_integer_value(json_object_get(enos0, "numa_node")), 0);
		CHECK_STR(json_string_value(json_object_get(enos0, "master")), "bond0");
		/* Each RX queue with the IRQ that names it and the CPU serving it. */
		json_t *rx = json_object_get(json_object_get(enos0, "queues"), "rx");
		CHECK_MSG(json_array_size(rx) > 4, "enos0 has %zu RX queues", json_array_size(rx));
		json_t *rx1 = json_array_get(rx, 1);
		CHECK_INT(json_integer_value(json_object_get(rx1, "queue")), 1);
		CHECK_INT(json_integer_value(json_object_get(rx1, "irq")), 102);
		CHECK_STR(json_string_value(json_object_get(rx1, "effective_cpus")), "3");
		/* The fixture plays the netdev family: the queue's NAPI, the
		 * IRQ through it, the device-wide values from sysfs. */
		CHECK_STR(json_string_value(json_object_get(enos0, "irq_source")), "netlink");
		CHECK_INT(json_integer_value(json_object_get(rx1, "napi_id")), 8194);
		CHECK(json_is_false(json_object_get(enos0, "threaded")));
		CHECK_INT(json_array_size(json_object_get(enos0, "napi")), 16);
		/* Per-queue counters beside the NAPI (qstats-get, played by the
		 * fixture): queue 3 took most of the traffic. */
		CHECK_STR(json_string_value(json_object_get(enos0, "queue_stats_source")), "netlink");
		CHECK(json_is_null(json_object_get(enos0, "queue_stats_reason")));
		json_t *st3 = json_object_get(json_array_get(rx, 3), "stats");
		CHECK_INT(json_integer_value(json_object_get(st3, "rx_packets")), 9000003);
		json_t *tx = json_object_get(json_object_get(enos0, "queues"), "tx");
		CHECK_INT(json_integer_value(json_object_get(json_object_get(json_array_get(tx, 3), "stats"), "tx_stop")), 12);
		json_decref(enos0);
	}
	json_t *enos1 = get_json(&a, "/v1/nics/enos1");
	if (enos1) {
		/* Threaded NAPI: each thread's pid, allowed CPUs, last CPU. */
		json_t *e = json_array_get(json_object_get(enos1, "napi"), 1);
		CHECK(json_is_true(json_object_get(enos1, "threaded")));
		CHECK_INT(json_integer_value(json_object_get(e, "id")), 8210);
		CHECK_INT(json_integer_value(json_object_get(e, "irq")), 122);
		CHECK_INT(json_integer_value(json_object_get(e, "pid")), 3101);
		CHECK_STR(json_string_value(json_object_get(e, "thread_cpus")), "0-127");
		CHECK_INT(json_integer_value(json_object_get(e, "last_cpu")), 5);
		CHECK(json_is_true(json_object_get(e, "threaded")));
		json_decref(enos1);
	}
	json_t *enos2 = get_json(&a, "/v1/nics/enos2");
	if (enos2) {
		CHECK_INT(json_integer_value(json_object_get(enos2, "numa_node")), 1);
		CHECK_INT(json_integer_value(json_object_get(enos2, "napi_defer_hard_irqs")), 10);
		CHECK_INT(json_integer_value(json_object_get(enos2, "gro_flush_timeout_ns")), 20000);
		json_decref(enos2);
	}
	json_t *b = get_json(&a, "/v1/nics/bond0");
	if (b) {
		CHECK(json_is_true(json_object_get(b, "bond")));
		json_decref(b);
	}

	json_t *diag = get_json(&a, "/v1/diagnostics");
	CHECK_MSG(diag && has_finding(diag, "irq-remote-node"),
		  "epyc diagnostics lack irq-remote-node");
	json_decref(diag);

	check_topology_matches_cli(&a, EPYC);
	CHECK_INT(nt_agent_stop(&a), 0);
}

int main(void)
{
	if (access(X460, F_OK) != 0 || access(EPYC, F_OK) != 0)
		SKIP("fixtures %s and %s are not both present", X460, EPYC);
	test_x460();
	test_epyc();
	TEST_MAIN_END();
}
