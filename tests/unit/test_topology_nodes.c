/* SPDX-License-Identifier: Apache-2.0 */
/* NUMA layouts no fixture machine here has: sparse node ids (0, 1, 33), a
 * memory-only node without CPUs, offline CPUs inside a node's list, and a
 * NIC on the memory-only node's neighbour. Built as a small tree in /tmp. */
#include "kernel/ctx.h"
#include "host/topology.h"
#include "harness.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>

static char root[64];

static void put(const char *rel, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(const char *rel, const char *fmt, ...)
{
	char path[512], cmd[600];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd) != 0)
		abort();
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static const char *cl(const nt_cpuset *s)
{
	static char b[2][256];
	static int k;
	k ^= 1;
	nt_cpulist_format(s, b[k], sizeof(b[k]));
	return b[k];
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/nt-nodes-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	/* 8 CPUs possible, 6 and 7 offline; node 0: 0-3, node 1: 4-7, node 33:
	 * memory only (CXL-style expander). */
	put("/sys/devices/system/cpu/possible", "0-7\n");
	put("/sys/devices/system/cpu/present", "0-7\n");
	put("/sys/devices/system/cpu/online", "0-5\n");
	put("/sys/devices/system/node/online", "0-1,33\n");
	put("/sys/devices/system/node/possible", "0-63\n");
	put("/sys/devices/system/node/has_cpu", "0-1\n");
	put("/sys/devices/system/node/has_memory", "0-1,33\n");
	put("/sys/devices/system/node/node0/cpulist", "0-3\n");
	put("/sys/devices/system/node/node1/cpulist", "4-7\n");
	put("/sys/devices/system/node/node33/cpulist", "\n");
	put("/sys/devices/system/node/node0/distance", "10 21 40\n");
	put("/sys/devices/system/node/node1/distance", "21 10 40\n");
	put("/sys/devices/system/node/node33/distance", "40 40 10\n");
	put("/sys/devices/system/node/node33/meminfo", "Node 33 MemTotal:       33554432 kB\nNode 33 MemFree:        33000000 kB\n");
	/* Cores: 0 and 2 are siblings; 3 has 0's core id on another package
	 * (not a sibling); 4 has no core id (a core of its own). */
	const int core[] = { 0, 1, 0, 0, -1, 7 }, pkg[] = { 0, 0, 0, 1, 0, 1 };
	for (int c = 0; c < 6; c++) {
		char rel[96];
		if (core[c] < 0)
			continue;
		snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
		put(rel, "%d\n", core[c]);
		snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		put(rel, "%d\n", pkg[c]);
	}
	/* A NIC whose numa_node the firmware left at -1, local CPUs on node 1. */
	put("/sys/devices/pci0000:40/0000:40:00.0/numa_node", "-1\n");
	put("/sys/devices/pci0000:40/0000:40:00.0/local_cpulist", "4-7\n");
	put("/sys/devices/pci0000:40/0000:40:00.0/net/eth0/ifindex", "2\n");
	put("/sys/devices/pci0000:40/0000:40:00.0/net/eth0/mtu", "1500\n");
	put("/sys/devices/pci0000:40/0000:40:00.0/net/eth0/operstate", "up\n");
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/sys/class/net && ln -s ../../devices/pci0000:40/0000:40:00.0/net/eth0 %s/sys/class/net/eth0 && "
		 "ln -s ../../../0000:40:00.0 %s/sys/devices/pci0000:40/0000:40:00.0/net/eth0/device",
		 root, root, root);
	CHECK_INT(system(cmd), 0);

	nt_ctx ctx;
	nt_topology *t = NULL;
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		TEST_MAIN_END();
	CHECK_INT(t->nnodes, 3);
	CHECK_INT(t->ncpus_possible, 8);
	CHECK_STR(cl(&t->cpus_online), "0-5");
	const nt_numa_node *n1 = nt_topology_node(t, 1), *n33 = nt_topology_node(t, 33);
	CHECK(n1 && n33 && !nt_topology_node(t, 2));
	if (n1 && n33) {
		/* Offline CPUs are not offered for placement. */
		CHECK_STR(cl(&n1->cpus), "4-5");
		CHECK(nt_cpuset_empty(&n33->cpus));
		CHECK(n33->has_memory);
		CHECK_INT(n33->mem_total_kb, 33554432);
		CHECK_INT(n33->ndist, 3);
		if (n33->ndist == 3)
			CHECK_INT(n33->distances[0], 40);
	}
	CHECK_INT(nt_topology_cpu_node(t, 5), 1);
	CHECK_INT(nt_topology_cpu_node(t, 6), -1); /* offline */
	nt_nic *e = nt_topology_nic(t, "eth0");
	CHECK(e != NULL);
	if (e) {
		CHECK_STR(e->pci_address, "0000:40:00.0");
		/* numa_node -1, local CPUs 4-7: the online ones (4-5) are all on node 1. */
		CHECK_INT(e->numa_node, 1);
		CHECK_INT(e->numa_node_source, NT_SRC_LOCAL_CPULIST);
	}
	json_t *doc = nt_topology_to_json(t);
	json_t *nodes = json_object_get(doc, "numa_nodes");
	CHECK_INT(json_array_size(nodes), 3);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(nodes, 2), "id")), 33);
	CHECK_STR(json_string_value(json_object_get(json_array_get(nodes, 2), "cpus")), "");
	/* Each node's physical cores, siblings together, offline CPUs left out. */
	char *cores[3];
	for (int i = 0; i < 3; i++)
		cores[i] = json_dumps(json_object_get(json_array_get(nodes, (size_t)i), "cores"), JSON_COMPACT);
	CHECK_STR(cores[0], "[\"0,2\",\"1\",\"3\"]");
	CHECK_STR(cores[1], "[\"4\",\"5\"]");
	CHECK_STR(cores[2], "[]");
	for (int i = 0; i < 3; i++)
		free(cores[i]);
	json_decref(doc);
	nt_topology_free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	system(cmd);
	TEST_MAIN_END();
}
