/* SPDX-License-Identifier: Apache-2.0 */
/* The host model read from fixture trees: the field-report hosts'
 * facts (docs/field-reports.md#host-x460, docs/field-reports.md#host-ceph,
 * docs/field-reports.md#host-epyc7713), the real
 * machines' trees, and damaged trees (missing, truncated, dangling,
 * looping, garbage) that must be reported, not fatal. */
#include "kernel/ctx.h"
#include "host/topology.h"
#include "harness.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static nt_topology *load(const char *root)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	int r = nt_ctx_init(&ctx, root);
	CHECK_MSG(r == 0, "ctx %s: %s", root, nt_strerror(r));
	if (r)
		return NULL;
	r = nt_topology_read(&ctx, &t);
	CHECK_MSG(r == 0, "read %s: %s", root, nt_strerror(r));
	return t;
}

static const char *cpulist(const nt_cpuset *s)
{
	static char buf[4][4096];
	static int k;
	k = (k + 1) % 4;
	nt_cpulist_format(s, buf[k], sizeof(buf[k]));
	return buf[k];
}

static bool has_problem(const nt_topology *t, const char *path_part)
{
	size_t i;
	json_t *p;
	json_array_foreach(t->problems, i, p) {
		const char *s = json_string_value(json_object_get(p, "path"));
		if (s && strstr(s, path_part))
			return true;
	}
	return false;
}

static void test_x460(void)
{
	nt_topology *t = load(NT_FIXTURES "/x460-4node-8nic");
	if (!t)
		return;
	CHECK_INT(t->nnodes, 4);
	CHECK_INT(nt_cpuset_count(&t->cpus_online), 64);
	CHECK_STR(cpulist(&t->nodes[2].cpus), "32-47");
	CHECK(t->irqbalance.running);
	CHECK_INT(t->irqbalance.pid, 1234);
	static const int irqs[] = { 177, 185, 193, 201, 209, 217, 225, 233 };
	for (int i = 0; i < 8; i++) {
		char name[8];
		snprintf(name, sizeof(name), "eth%d", i);
		nt_nic *n = nt_topology_nic(t, name);
		CHECK_MSG(n != NULL, "%s missing", name);
		if (!n)
			continue;
		CHECK_STR(n->driver, "tg3");
		CHECK_INT(n->numa_node, i / 2);
		CHECK_INT(n->numa_node_source, NT_SRC_SYSFS);
		CHECK_INT(n->speed_mbps, 1000);
		CHECK_INT(n->nirqs, 1);
		if (n->nirqs != 1)
			continue;
		nt_irq *q = &t->irqs[n->irqs[0]];
		CHECK_INT(q->irq, irqs[i]);
		CHECK_STR(q->name, name);
		CHECK_STR(cpulist(&q->affinity), "0-15");
		/* Out of the box every NIC is served by node 0
		 * (docs/field-reports.md#irq-remote-node). */
		CHECK(nt_topology_set_on_node(t, &q->affinity, 0));
		CHECK(nt_topology_set_on_node(t, &q->affinity, n->numa_node) == (i < 2));
	}
	nt_topology_free(t);
}

static void test_epyc(void)
{
	nt_topology *t = load(NT_FIXTURES "/epyc7713-2node-bond");
	if (!t)
		return;
	CHECK_INT(t->nnodes, 2);
	CHECK_STR(cpulist(&t->nodes[0].cpus), "0-31,64-95");
	CHECK_STR(cpulist(&t->nodes[1].cpus), "32-63,96-127");
	CHECK_INT(t->ncpus_possible, 128);
	CHECK_INT(t->nbonds, 1);
	nt_bond *b = nt_topology_bond(t, "bond0");
	CHECK(b != NULL);
	if (b) {
		CHECK_STR(b->xmit_hash_policy, "layer2+3");
		CHECK_STR(b->mode, "802.3ad");
		CHECK_INT(b->mode_num, 4);
		CHECK_INT(b->miimon, 100);
		CHECK_INT(b->nslaves, 4);
		if (b->nslaves == 4)
			CHECK_STR(b->slaves[3], "enos3");
	}
	nt_nic *e0 = nt_topology_nic(t, "enos0"), *e2 = nt_topology_nic(t, "enos2");
	CHECK(e0 && e2);
	if (e0 && e2) {
		CHECK_STR(e0->pci_address, "0000:01:00.0");
		CHECK_INT(e0->numa_node, 0);
		CHECK_INT(e2->numa_node, 1);
		CHECK_STR(e0->master, "bond0");
		CHECK(e0->has_rings);
		CHECK_INT(e0->rings.rx, 1024);
		CHECK_INT(e0->rings.rx_max, 8192);
		CHECK(e0->has_channels);
		CHECK_INT(e0->channels.combined, 16);
		CHECK_INT(e0->channels.combined_max, 63);
		CHECK(e0->rx_dropped > 0);
		CHECK_INT(e2->rx_dropped, 0);
		CHECK_INT(e0->nirqs, 17);
		int comp = 0;
		for (int i = 0; i < e0->nirqs; i++) {
			nt_irq *q = &t->irqs[e0->irqs[i]];
			CHECK_INT(q->nic, nt_topology_nic_index(t, "enos0"));
			if (strncmp(q->name, "mlx5_comp", 9) == 0) {
				CHECK_INT(q->queue, atoi(q->name + 9));
				comp++;
			}
		}
		CHECK_INT(comp, 16);
	}
	nt_nic *bond = nt_topology_nic(t, "bond0");
	CHECK(bond && bond->is_virtual && bond->is_bond && bond->nirqs == 0);
	CHECK(!t->irqbalance.running);
	nt_topology_free(t);
}

static void test_ceph(void)
{
	nt_topology *t = load(NT_FIXTURES "/ceph-2node-ib");
	if (!t)
		return;
	CHECK_STR(cpulist(&t->nodes[0].cpus), "0-13,28-41");
	CHECK_INT(t->nodes[0].ndist, 2);
	if (t->nodes[0].ndist == 2)
		CHECK_INT(t->nodes[0].distances[1], 21);
	/* The Ceph node: every IRQ on CPUs 40,41. */
	int on_40_41 = 0;
	for (int i = 0; i < t->nirqs; i++)
		if (strcmp(cpulist(&t->irqs[i].affinity), "40-41") == 0)
			on_40_41++;
	CHECK_INT(on_40_41, t->nirqs);
	CHECK(t->nirqs > 10);
	nt_nic *ib = nt_topology_nic(t, "ib0");
	CHECK(ib != NULL);
	if (ib) {
		CHECK_INT(ib->numa_node, 0);
		CHECK(!ib->has_rings);
		CHECK_INT(ib->nirqs, 9);
	}
	nt_topology_free(t);
}

static void test_vm_virtio(void)
{
	nt_topology *t = load(NT_FIXTURES "/vm-virtio-2cpu");
	if (!t)
		return;
	nt_nic *e = nt_topology_nic(t, "eth0");
	CHECK(e != NULL);
	if (e) {
		/* eth0 -> virtio2 -> the PCI function one level up. */
		CHECK_STR(e->pci_address, "0000:00:03.0");
		CHECK_STR(e->driver, "virtio_net");
		CHECK(!e->is_virtual);
		/* numa_node is -1; one node owns local_cpulist 0-1. */
		CHECK_INT(e->numa_node, 0);
		CHECK_INT(e->numa_node_source, NT_SRC_LOCAL_CPULIST);
		CHECK_INT(e->nirqs, 3);
		if (e->nirqs == 3) {
			CHECK_INT(t->irqs[e->irqs[0]].irq, 37);
			CHECK_STR(t->irqs[e->irqs[1]].name, "virtio2-input.0");
			CHECK_INT(nt_cpuset_count(&t->irqs[e->irqs[1]].effective), 1);
		}
		CHECK(!e->has_rings); /* no ethtool file in this tree */
	}
	nt_nic *ifb = nt_topology_nic(t, "ifb0");
	CHECK(ifb && ifb->is_virtual && ifb->numa_node == -1);
	/* No /sys/devices/system/node here: one node 0 with every CPU. */
	CHECK_INT(t->nnodes, 1);
	CHECK_STR(cpulist(&t->nodes[0].cpus), "0-1");
	nt_topology_free(t);
}

static void test_hwloc_trees(void)
{
	nt_topology *t = load(NT_FIXTURES "/hwloc-32intel64-2p8co2t-8ve");
	if (t) {
		CHECK_STR(cpulist(&t->nodes[1].cpus), "8-15,24-31");
		CHECK_INT(t->ncpus_possible, 112);
		nt_nic *n = nt_topology_nic(t, "enp96s0f0");
		CHECK(n && n->numa_node == 0);
		CHECK(!t->have_irq_info); /* no /proc/interrupts: said, not failed */
		CHECK(has_problem(t, "/proc/interrupts"));
		nt_topology_free(t);
	}
	t = load(NT_FIXTURES "/hwloc-16em64t-4s2c2t-offlines");
	if (t) {
		CHECK_STR(cpulist(&t->cpus_online), "0-1,3-4,6-12,15");
		CHECK_STR(cpulist(&t->nodes[0].cpus), "0-1,3-4,6-12,15");
		nt_topology_free(t);
	}
	t = load(NT_FIXTURES "/hwloc-2pa-pcidomain32bits");
	if (t) {
		nt_nic *n = nt_topology_nic(t, "ens3");
		CHECK(n != NULL);
		if (n)
			CHECK_STR(n->pci_address, "0000:00:03.0");
		nt_topology_free(t);
	}
}

static char tmp_root[256];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* Damaged copies of the x460 tree: everything that could not be read is
 * named in problems, and the rest is still reported. */
static void test_damaged(void)
{
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/nt-topo-XXXXXX");
	if (!mkdtemp(tmp_root)) {
		CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	CHECK_INT(sh("cp -a %s/x460-4node-8nic/. %s/", NT_FIXTURES, tmp_root), 0);
	/* missing affinity files of one IRQ */
	sh("rm -f %s/proc/irq/185/smp_affinity %s/proc/irq/185/smp_affinity_list", tmp_root, tmp_root);
	/* a garbage line and a truncated last line in /proc/interrupts */
	sh("sed -i '3a\\ 999:  zzz garbage' %s/proc/interrupts", tmp_root);
	sh("printf ' 998: 12 1' >> %s/proc/interrupts", tmp_root);
	/* a dangling link and a looping link in /sys/class/net */
	sh("ln -s ../../devices/pci0000:99/0000:99:00.0/net/gone %s/sys/class/net/gone", tmp_root);
	sh("ln -s loopy %s/sys/class/net/loopy", tmp_root);
	/* a NIC whose device vanished while being read */
	sh("rm -rf %s/sys/devices/pci0000:61/0000:61:00.1", tmp_root);
	sh("mkdir -p %s/sys/devices/pci0000:61/0000:61:00.1/net/eth7 && cp -a %s/x460-4node-8nic/sys/devices/pci0000:61/0000:61:00.1/net/eth7/. %s/sys/devices/pci0000:61/0000:61:00.1/net/eth7/ 2>/dev/null; rm -f %s/sys/devices/pci0000:61/0000:61:00.1/net/eth7/device",
	   tmp_root, NT_FIXTURES, tmp_root, tmp_root);
	/* a truncated numa_node file */
	sh(": > %s/sys/devices/pci0000:41/0000:41:00.0/numa_node", tmp_root);

	nt_topology *t = load(tmp_root);
	if (!t)
		return;
	CHECK(has_problem(t, "/proc/irq/185/smp_affinity_list"));
	CHECK(has_problem(t, "unparsable line"));
	CHECK(has_problem(t, "/sys/class/net/gone"));
	CHECK(has_problem(t, "/sys/class/net/loopy"));
	CHECK(nt_topology_nic(t, "gone") == NULL);
	CHECK(nt_topology_nic(t, "loopy") == NULL);
	nt_irq *q185 = nt_topology_irq(t, 185);
	CHECK(q185 && !q185->has_affinity);
	CHECK(nt_topology_irq(t, 999) == NULL);
	CHECK(nt_topology_irq(t, 177) && nt_topology_irq(t, 233));
	nt_nic *e4 = nt_topology_nic(t, "eth4");
	/* numa_node empty: local_cpulist still places it on node 2. */
	CHECK(e4 && e4->numa_node == 2 && e4->numa_node_source == NT_SRC_LOCAL_CPULIST);
	nt_nic *e7 = nt_topology_nic(t, "eth7");
	CHECK(e7 != NULL);
	if (e7) {
		CHECK_INT(e7->numa_node, -1);
		CHECK_INT(e7->numa_node_source, NT_SRC_UNKNOWN);
		/* Its IRQ is still found by name in /proc/interrupts. */
		CHECK_INT(e7->nirqs, 1);
	}
	CHECK_INT(t->nnics, 9);
	json_t *doc = nt_topology_to_json(t);
	CHECK(doc != NULL && json_array_size(json_object_get(doc, "problems")) >= 4);
	json_decref(doc);
	nt_topology_free(t);
	sh("rm -rf %s", tmp_root);
}

/* Which NIC owns an IRQ: the PCI function's own list (msi_irqs) comes
 * before any name. eth1's only vector renamed to look like one of eth0's
 * ("eth0-TxRx-9") still belongs to eth1; eth0 keeps its own only. */
static void test_msi_before_names(void)
{
	char root[] = "/tmp/nt-topo-msi-XXXXXX";
	if (!mkdtemp(root)) {
		CHECK_MSG(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	CHECK_INT(sh("cp -a %s/x460-4node-8nic/. %s/", NT_FIXTURES, root), 0);
	CHECK_INT(sh("test -e %s/sys/class/net/eth1/device/msi_irqs/185", root), 0);
	CHECK_INT(sh("sed -i 's/^\\( *185:.*\\) eth1$/\\1 eth0-TxRx-9/' %s/proc/interrupts && "
		     "grep -q ' eth0-TxRx-9$' %s/proc/interrupts", root, root), 0);
	nt_topology *t = load(root);
	nt_nic *e0 = t ? nt_topology_nic(t, "eth0") : NULL, *e1 = t ? nt_topology_nic(t, "eth1") : NULL;
	CHECK(e0 && e1);
	if (e0 && e1) {
		CHECK_INT(e1->nirqs, 1);
		CHECK(e1->nirqs == 1 && t->irqs[e1->irqs[0]].irq == 185);
		CHECK_INT(e0->nirqs, 1);
		CHECK(e0->nirqs == 1 && t->irqs[e0->irqs[0]].irq == 177);
	}
	nt_topology_free(t);
	sh("rm -rf %s", root);
}

static void test_root_errors(void)
{
	nt_ctx ctx;
	CHECK_INT(nt_ctx_init(&ctx, "/nonexistent/root"), -ENOENT);
	CHECK_INT(nt_ctx_init(&ctx, "/etc/hostname"), -ENOTDIR);
	CHECK_INT(nt_ctx_init(&ctx, "/"), 0);
	CHECK(ctx.live);
	CHECK(!nt_ifname_valid("../../etc"));
	CHECK(!nt_ifname_valid("eth0/../x"));
	CHECK(!nt_ifname_valid("averyveryverylongname"));
	CHECK(!nt_ifname_valid("eth\x01"));
	CHECK(!nt_ifname_valid(".."));
	CHECK(!nt_ifname_valid(""));
	CHECK(nt_ifname_valid("enp96s0f0"));
	/* Bytes from 0x7f up are names the kernel allows (a bidi override, not
	 * UTF-8 at all); a caller that writes JSON checks UTF-8 itself. */
	CHECK(nt_ifname_valid("\xe2\x80\xae" "eth1"));
	CHECK(nt_ifname_valid("eth\xff"));
	CHECK(!nt_ifname_valid("eth:1"));
	CHECK(nt_ifname_valid("bond0.100"));
}

int main(void)
{
	test_x460();
	test_epyc();
	test_ceph();
	test_vm_virtio();
	test_hwloc_trees();
	test_damaged();
	test_msi_before_names();
	test_root_errors();
	TEST_MAIN_END();
}
