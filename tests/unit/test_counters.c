/* SPDX-License-Identifier: Apache-2.0 */
/* host/counters.c: snapshots from the agent's documents and their deltas. */
#include "host/counters.h"
#include "harness.h"

#include <math.h>

static json_t *doc(const char *text)
{
	json_error_t e;
	json_t *d = json_loads(text, 0, &e);
	CHECK_MSG(d != NULL, "bad test JSON: %s", e.text);
	return d;
}

static json_t *find(json_t *arr, const char *key, long long value)
{
	size_t i;
	json_t *row;
	json_array_foreach(arr, i, row)
		if (json_integer_value(json_object_get(row, key)) == value)
			return row;
	return NULL;
}

static long long geti(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* Per-queue counters (GET /v1/nics/{name} documents): eth0 4 RX queues,
 * queue 2 taking 980 of 1000... too few for a skew line; enos0 RX queue 3
 * 98% of 1.2M, TX spread evenly; mlx1 at 89% (under the share); one0 a
 * single queue with all (no skew: one queue); veth0 and bond0 keep none
 * for one reason, old0 from an agent that reports none; a counter that
 * went down counts from zero; a queue only in B is left out; bytes the
 * kernel does not give are null. */
static void test_queues(void)
{
	json_t *d1 = doc("[{\"name\":\"eth0\",\"queue_stats_source\":\"netlink\",\"queue_stats_reason\":null,"
			 "\"queues\":{\"rx\":[{\"queue\":0,\"stats\":{\"rx_packets\":10,\"rx_bytes\":100}},"
			 "{\"queue\":1,\"stats\":{\"rx_packets\":10}},{\"queue\":2,\"stats\":{\"rx_packets\":10}},"
			 "{\"queue\":3,\"stats\":null}],\"tx\":[]}},"
			 "{\"name\":\"enos0\",\"queue_stats_source\":\"netlink\",\"queues\":{\"rx\":["
			 "{\"queue\":0,\"stats\":{\"rx_packets\":0}},{\"queue\":3,\"stats\":{\"rx_packets\":5}}],"
			 "\"tx\":[{\"queue\":0,\"stats\":{\"tx_packets\":0}},{\"queue\":1,\"stats\":{\"tx_packets\":0}}]}},"
			 "{\"name\":\"mlx1\",\"queue_stats_source\":\"netlink\",\"queues\":{\"rx\":["
			 "{\"queue\":0,\"stats\":{\"rx_packets\":0}},{\"queue\":1,\"stats\":{\"rx_packets\":0}}]}},"
			 "{\"name\":\"one0\",\"queue_stats_source\":\"netlink\",\"queues\":{\"rx\":["
			 "{\"queue\":0,\"stats\":{\"rx_packets\":0}}]}},"
			 "{\"name\":\"veth0\",\"queue_stats_source\":null,\"queue_stats_reason\":\"keeps none\"},"
			 "{\"name\":\"bond0\",\"queue_stats_source\":null,\"queue_stats_reason\":\"keeps none\"},"
			 "{\"name\":\"old0\"}]");
	json_t *d2 = doc("[{\"name\":\"eth0\",\"queue_stats_source\":\"netlink\",\"queue_stats_reason\":null,"
			 "\"queues\":{\"rx\":[{\"queue\":0,\"stats\":{\"rx_packets\":4,\"rx_bytes\":160}},"
			 "{\"queue\":1,\"stats\":{\"rx_packets\":20}},{\"queue\":2,\"stats\":{\"rx_packets\":990}},"
			 "{\"queue\":3,\"stats\":null},{\"queue\":4,\"stats\":{\"rx_packets\":7}}],\"tx\":[]}},"
			 "{\"name\":\"enos0\",\"queue_stats_source\":\"netlink\",\"queues\":{\"rx\":["
			 "{\"queue\":0,\"stats\":{\"rx_packets\":24000}},{\"queue\":3,\"stats\":{\"rx_packets\":1176005}}],"
			 "\"tx\":[{\"queue\":0,\"stats\":{\"tx_packets\":5000}},{\"queue\":1,\"stats\":{\"tx_packets\":5000}}]}},"
			 "{\"name\":\"mlx1\",\"queue_stats_source\":\"netlink\",\"queues\":{\"rx\":["
			 "{\"queue\":0,\"stats\":{\"rx_packets\":110}},{\"queue\":1,\"stats\":{\"rx_packets\":890}}]}},"
			 "{\"name\":\"one0\",\"queue_stats_source\":\"netlink\",\"queues\":{\"rx\":["
			 "{\"queue\":0,\"stats\":{\"rx_packets\":50000}}]}},"
			 "{\"name\":\"veth0\",\"queue_stats_source\":null,\"queue_stats_reason\":\"keeps none\"},"
			 "{\"name\":\"bond0\",\"queue_stats_source\":null,\"queue_stats_reason\":\"keeps none\"},"
			 "{\"name\":\"old0\"}]");
	nt_counters_input i1 = { .nic_queues = d1 }, i2 = { .nic_queues = d2 };
	json_t *a = nt_counters_snapshot(&i1), *b = nt_counters_snapshot(&i2);
	json_t *d = a && b ? nt_counters_delta(a, b) : NULL;
	CHECK(d != NULL);
	json_t *rows = json_object_get(d, "queues");
	CHECK_INT(json_array_size(rows), 7);
	json_t *eth0 = json_array_get(rows, 0);
	CHECK_STR(json_string_value(json_object_get(eth0, "nic")), "eth0");
	CHECK_STR(json_string_value(json_object_get(eth0, "source")), "netlink");
	json_t *rx = json_object_get(eth0, "rx");
	CHECK_INT(json_array_size(rx), 3); /* queue 3 counted nothing, queue 4 only in B */
	CHECK_INT(geti(json_array_get(rx, 0), "packets"), 4); /* went down: from zero */
	CHECK_INT(geti(json_array_get(rx, 0), "bytes"), 60);
	CHECK(json_is_null(json_object_get(json_array_get(rx, 1), "bytes")));
	CHECK_INT(geti(eth0, "rx_packets"), 4 + 10 + 980);
	CHECK(json_is_null(json_object_get(eth0, "tx_packets")));
	CHECK_INT(geti(json_object_get(eth0, "rx_top"), "queue"), 2);
	json_t *enos0 = json_array_get(rows, 1);
	CHECK_INT(geti(enos0, "rx_packets"), 1200000);
	CHECK_INT(geti(enos0, "tx_packets"), 10000);
	double sh = json_number_value(json_object_get(json_object_get(enos0, "rx_top"), "share"));
	CHECK_MSG(fabs(sh - 0.98) < 1e-9, "share %f", sh);
	json_t *skew = json_object_get(d, "queue_skew");
	CHECK_INT(json_array_size(skew), 1);
	CHECK_STR(json_string_value(json_array_get(skew, 0)), "enos0: RX queue 3 took 98% of 1.2M packets");
	json_t *missing = json_object_get(d, "queue_stats_missing");
	CHECK_INT(json_array_size(missing), 2);
	json_t *g0 = json_array_get(missing, 0), *g1 = json_array_get(missing, 1);
	CHECK_STR(json_string_value(json_object_get(g0, "reason")), "keeps none");
	CHECK_INT(json_array_size(json_object_get(g0, "nics")), 2);
	CHECK_STR(json_string_value(json_array_get(json_object_get(g0, "nics"), 1)), "bond0");
	CHECK_STR(json_string_value(json_array_get(json_object_get(g1, "nics"), 0)), "old0");
	CHECK(strstr(json_string_value(json_object_get(g1, "reason")) ?: "", "older nettune") != NULL);
	CHECK(json_is_null(json_object_get(json_array_get(rows, 4), "source")));
	json_decref(d);
	json_decref(a);
	json_decref(b);
	json_decref(d1);
	json_decref(d2);
}

int main(void)
{
	/* Two nodes: CPUs 0-1 on node 0, 2-3 on node 1. eth0 on node 1,
	 * veth0 of unknown node, gone0 only in the first snapshot. */
	json_t *topo = doc("{\"numa_nodes\":[{\"id\":0,\"cpus\":\"0-1\"},{\"id\":1,\"cpus\":\"2-3\"}]}");
	json_t *nics1 = doc("{\"nics\":["
			    "{\"name\":\"eth0\",\"numa_node\":1,\"stats\":{\"rx_dropped\":10,\"rx_packets\":1000}},"
			    "{\"name\":\"veth0\",\"numa_node\":-1,\"stats\":{\"rx_dropped\":5,\"rx_packets\":50}},"
			    "{\"name\":\"gone0\",\"numa_node\":0,\"stats\":{\"rx_packets\":7}}]}");
	json_t *nics2 = doc("{\"nics\":["
			    "{\"name\":\"eth0\",\"numa_node\":1,\"stats\":{\"rx_dropped\":13,\"rx_packets\":5000}},"
			    "{\"name\":\"veth0\",\"numa_node\":-1,\"stats\":{\"rx_dropped\":2,\"rx_packets\":90}},"
			    "{\"name\":\"new0\",\"numa_node\":0,\"stats\":{\"rx_packets\":9}}]}");
	/* IRQ 30 of eth0: 100 more on CPU 0 (node 0: off-node), 300 more on
	 * CPU 2 (on-node). IRQ 31 of veth0 (node unknown): 40 on CPU 1.
	 * IRQ 0 (timer, no NIC): 5 on CPU 3. IRQ 99 only in the second. */
	json_t *irqs1 = doc("{\"irqs\":["
			    "{\"irq\":30,\"owner\":\"eth0\",\"per_cpu\":{\"0\":1000,\"2\":2000}},"
			    "{\"irq\":31,\"owner\":\"veth0\",\"per_cpu\":{\"1\":10}},"
			    "{\"irq\":0,\"owner\":null,\"per_cpu\":{\"3\":1}}]}");
	json_t *irqs2 = doc("{\"irqs\":["
			    "{\"irq\":30,\"owner\":\"eth0\",\"per_cpu\":{\"0\":1100,\"2\":2300}},"
			    "{\"irq\":31,\"owner\":\"veth0\",\"per_cpu\":{\"1\":50}},"
			    "{\"irq\":0,\"owner\":null,\"per_cpu\":{\"3\":6}},"
			    "{\"irq\":99,\"owner\":\"eth0\",\"per_cpu\":{\"3\":100000}}]}");
	int cpus[] = { 0, 1, 3 };
	uint64_t rx1[] = { 100, 200, 300 }, rx2[] = { 150, 200, 1300 };
	uint64_t tx1[] = { 7, 8, 9 }, tx2[] = { 17, 8, 10 };
	/* CPU time at HZ 100 over one second: CPU 0 (which serves eth0's
	 * IRQ 30) 60 ticks busy of 100, 30 of them softirq; CPU 2 (the other
	 * one that serves it) 10 user, 10 irq, 2 steal; CPU 1 and 3 idle but
	 * for 4 system (CPU 1) and 20 user + 5 nice (CPU 3). */
	nt_cpu_time ct1[] = { { 0, 1000, 0, 500, 9000, 10, 0, 200, 0 },
			      { 1, 100, 0, 100, 9000, 0, 0, 0, 0 },
			      { 2, 100, 0, 100, 9000, 0, 0, 0, 5 },
			      { 3, 100, 50, 100, 9000, 0, 0, 0, 0 } };
	nt_cpu_time ct2[] = { { 0, 1020, 0, 510, 9040, 10, 0, 230, 0 },
			      { 1, 100, 0, 104, 9096, 0, 0, 0, 0 },
			      { 2, 110, 0, 100, 9078, 0, 10, 0, 7 },
			      { 3, 120, 55, 100, 9075, 0, 0, 0, 0 } };

	nt_counters_input i1 = { .topology = topo, .nics = nics1, .irqs = irqs1, .soft_cpus = cpus, .net_rx = rx1,
				 .net_tx = tx1, .nsoft = 3, .cpu_time = ct1, .ncpu_time = 4, .hz = 100 };
	nt_counters_input i2 = { .topology = topo, .nics = nics2, .irqs = irqs2, .soft_cpus = cpus, .net_rx = rx2,
				 .net_tx = tx2, .nsoft = 3, .cpu_time = ct2, .ncpu_time = 4, .hz = 100 };
	json_t *a = nt_counters_snapshot(&i1);
	json_t *b = nt_counters_snapshot(&i2);
	CHECK(a && b);
	CHECK_INT(geti(json_object_get(a, "cpu_node"), "3"), 1);
	CHECK(json_is_null(json_object_get(json_object_get(json_object_get(a, "nics"), "veth0"), "numa_node")));

	json_t *d = nt_counters_delta(a, b);
	CHECK(d != NULL);
	json_t *nics = json_object_get(d, "nics");
	CHECK_INT(json_array_size(nics), 2); /* gone0 and new0 left out */
	json_t *eth0 = json_array_get(nics, 0);
	CHECK_STR(json_string_value(json_object_get(eth0, "name")), "eth0");
	CHECK_INT(geti(eth0, "rx_dropped"), 3);
	CHECK_INT(geti(eth0, "rx_packets"), 4000);
	CHECK_INT(geti(eth0, "numa_node"), 1);
	json_t *veth = json_array_get(nics, 1);
	CHECK_INT(geti(veth, "rx_dropped"), 2); /* went down: counted from zero */
	CHECK(json_is_null(json_object_get(veth, "numa_node")));

	json_t *in = json_object_get(d, "interrupts");
	CHECK_INT(geti(in, "nic"), 100 + 300 + 40);
	CHECK_INT(geti(in, "nic_off_node"), 100);
	double share = json_real_value(json_object_get(in, "off_node_share"));
	CHECK_MSG(fabs(share - 0.25) < 1e-9, "off-node share %f, want 0.25 (100 of eth0's 400)", share);
	json_t *c0 = find(json_object_get(in, "cpus"), "cpu", 0);
	CHECK(c0 && geti(c0, "all") == 100 && geti(c0, "nic") == 100 && geti(c0, "node") == 0);
	json_t *c3 = find(json_object_get(in, "cpus"), "cpu", 3);
	CHECK(c3 && geti(c3, "all") == 5 && geti(c3, "nic") == 0);
	json_t *n0 = find(json_object_get(in, "nodes"), "node", 0);
	json_t *n1 = find(json_object_get(in, "nodes"), "node", 1);
	CHECK(n0 && geti(n0, "all") == 140 && geti(n0, "nic") == 140);
	CHECK(n1 && geti(n1, "all") == 305 && geti(n1, "nic") == 300);

	json_t *sr = json_object_get(d, "softirq_net_rx");
	CHECK_INT(geti(sr, "total"), 50 + 0 + 1000);
	json_t *s3 = find(json_object_get(sr, "cpus"), "cpu", 3);
	CHECK(s3 && geti(s3, "count") == 1000);

	json_t *st = json_object_get(d, "softirq_net_tx");
	CHECK_INT(geti(st, "total"), 10 + 0 + 1);
	json_t *t0 = find(json_object_get(st, "cpus"), "cpu", 0);
	CHECK(t0 && geti(t0, "count") == 10);

	/* CPU time in seconds: busy is user + nice + system + irq + softirq,
	 * not idle, iowait or steal. */
	json_t *ct = json_object_get(d, "cpu_time");
	CHECK_INT(geti(ct, "hz"), 100);
	json_t *tc0 = find(json_object_get(ct, "cpus"), "cpu", 0);
	json_t *tc2 = find(json_object_get(ct, "cpus"), "cpu", 2);
	json_t *tc3 = find(json_object_get(ct, "cpus"), "cpu", 3);
#define NEAR(x, want) (fabs((x) - (want)) < 1e-9)
#define NUM(o, k) json_number_value(json_object_get((o), (k)))
	CHECK(tc0 && NEAR(NUM(tc0, "busy_s"), 0.60) && NEAR(NUM(tc0, "softirq_s"), 0.30) && NEAR(NUM(tc0, "user_s"), 0.20) &&
	      NEAR(NUM(tc0, "idle_s"), 0.40) && NEAR(NUM(tc0, "busy_share"), 0.60) && geti(tc0, "node") == 0);
	CHECK(tc2 && NEAR(NUM(tc2, "busy_s"), 0.20) && NEAR(NUM(tc2, "irq_s"), 0.10) && NEAR(NUM(tc2, "steal_s"), 0.02) &&
	      NEAR(NUM(tc2, "busy_share"), 0.20));
	CHECK(tc3 && NEAR(NUM(tc3, "user_s"), 0.25) && NEAR(NUM(tc3, "busy_s"), 0.25)); /* nice counts as user */
	json_t *tot = json_object_get(ct, "total");
	CHECK_INT(geti(tot, "cpus"), 4);
	CHECK_MSG(NEAR(NUM(tot, "busy_s"), 0.60 + 0.04 + 0.20 + 0.25), "busy %f", NUM(tot, "busy_s"));
	CHECK(NEAR(NUM(ct, "seconds"), 1.0));
	/* CPUs 0 and 2 served eth0's interrupts; CPU 1 served veth0's (a NIC
	 * too), CPU 3 only the timer. */
	json_t *nic = json_object_get(json_object_get(ct, "classes"), "nic_irq");
	json_t *other = json_object_get(json_object_get(ct, "classes"), "other");
	CHECK_INT(geti(nic, "cpus"), 3);
	CHECK_MSG(NEAR(NUM(nic, "busy_s"), 0.60 + 0.04 + 0.20), "nic_irq busy %f", NUM(nic, "busy_s"));
	CHECK_INT(geti(other, "cpus"), 1);
	CHECK_INT(json_integer_value(json_array_get(json_object_get(other, "list"), 0)), 3);
	CHECK(NEAR(NUM(other, "busy_s"), 0.25));
	/* Not bound (no app_cpus): no application class. */
	CHECK(json_object_get(json_object_get(ct, "classes"), "app") == NULL);

	/* COMMAND bound to CPUs 2 and 3 (bench-run --near): CPU 3 served no
	 * NIC interrupt and is the application class; CPU 2 served eth0's, so
	 * it stays in nic_irq and is named in with_nic_irq; nothing is left
	 * for "other". */
	int app[] = { 2, 3 };
	i2.app_cpus = app;
	i2.napp = 2;
	json_t *b2 = nt_counters_snapshot(&i2);
	CHECK(b2 && json_array_size(json_object_get(b2, "app_cpus")) == 2);
	json_t *d2 = b2 ? nt_counters_delta(a, b2) : NULL;
	json_t *cls = json_object_get(json_object_get(d2, "cpu_time"), "classes");
	json_t *capp = json_object_get(cls, "app");
	CHECK(json_is_object(capp));
	CHECK_INT(geti(capp, "cpus"), 1);
	CHECK_MSG(NEAR(NUM(capp, "busy_s"), 0.25), "app busy %f", NUM(capp, "busy_s"));
	CHECK_INT(json_integer_value(json_array_get(json_object_get(capp, "list"), 0)), 3);
	CHECK_INT(json_array_size(json_object_get(capp, "with_nic_irq")), 1);
	CHECK_INT(json_integer_value(json_array_get(json_object_get(capp, "with_nic_irq"), 0)), 2);
	CHECK_INT(geti(json_object_get(cls, "nic_irq"), "cpus"), 3);
	CHECK_INT(geti(json_object_get(cls, "other"), "cpus"), 0);
	CHECK(NEAR(NUM(json_object_get(cls, "other"), "busy_s"), 0));
	json_decref(d2);
	json_decref(b2);

	/* No NIC interrupts of a known node: the share is null, not 0; no
	 * CPU time: null. */
	nt_counters_input none = { 0 };
	json_t *e1 = nt_counters_snapshot(&none);
	json_t *de = nt_counters_delta(e1, e1);
	CHECK(de && json_is_null(json_object_get(json_object_get(de, "interrupts"), "off_node_share")));
	CHECK_INT(json_array_size(json_object_get(de, "nics")), 0);
	CHECK(json_is_null(json_object_get(de, "cpu_time")));

	CHECK_INT(json_array_size(json_object_get(de, "queues")), 0);
	CHECK_INT(json_array_size(json_object_get(de, "queue_skew")), 0);

	test_queues();
	json_decref(de);
	json_decref(e1);
	json_decref(d);
	json_decref(a);
	json_decref(b);
	json_decref(topo);
	json_decref(nics1);
	json_decref(nics2);
	json_decref(irqs1);
	json_decref(irqs2);
	TEST_MAIN_END();
}
