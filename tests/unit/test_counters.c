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

	json_t *a = nt_counters_snapshot(topo, nics1, irqs1, cpus, rx1, 3);
	json_t *b = nt_counters_snapshot(topo, nics2, irqs2, cpus, rx2, 3);
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

	/* No NIC interrupts of a known node: the share is null, not 0. */
	json_t *e1 = nt_counters_snapshot(NULL, NULL, NULL, NULL, NULL, 0);
	json_t *de = nt_counters_delta(e1, e1);
	CHECK(de && json_is_null(json_object_get(json_object_get(de, "interrupts"), "off_node_share")));
	CHECK_INT(json_array_size(json_object_get(de, "nics")), 0);

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
