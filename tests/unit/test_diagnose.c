/* SPDX-License-Identifier: Apache-2.0 */
/* Diagnostics on host models built by hand: for every finding a host where
 * it must fire (with its evidence numbers checked) and one where it must
 * not. The fixture trees of the field-report hosts: test_diagnose_fixtures.c. */
#include "diag_util.h"

/* ---- irq-remote-node ---- */

static void test_remote_node(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	int e0 = add_nic(t, "eth0", 0, NT_SRC_SYSFS, 1000);
	int e1 = add_nic(t, "eth1", 1, NT_SRC_SYSFS, 1000);
	add_irq(t, e0, 100, "1-3"); /* local */
	add_irq(t, e1, 101, "0-3"); /* remote: node 1 NIC on node 0 CPUs */
	add_irq(t, e1, 102, "4-7"); /* local */
	json_t *r = diagnose(t, 0);
	check_shape(r);
	CHECK_INT(count_id(r, "irq-remote-node"), 1);
	CHECK(find(r, "irq-remote-node", "eth0") == NULL);
	json_t *f = find(r, "irq-remote-node", "eth1");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "severity"), "warning");
		CHECK_INT(JI(f, "evidence.nic_node"), 1);
		CHECK_INT(JI(f, "evidence.remote_irqs"), 1);
		CHECK_INT(JI(f, "evidence.nic_irqs"), 2);
		CHECK_INT(json_array_size(J(f, "evidence.irqs")), 1);
		CHECK_INT(JI(f, "evidence.irqs.0.irq"), 101);
		CHECK_STR(JS(f, "evidence.irqs.0.affinity"), "0-3");
		CHECK_STR(JS(f, "evidence.irqs.0.remote_cpus"), "0-3");
		CHECK_INT(json_array_size(J(f, "evidence.irqs.0.nodes")), 1);
		CHECK_INT(JI(f, "evidence.irqs.0.nodes.0"), 0);
		CHECK_STR(JS(f, "fix.irq_affinity.0.interface"), "eth1");
		CHECK_STR(JS(f, "fix.irq_affinity.0.policy"), "local");
		/* CPU 0 is not on node 1: nothing to exclude */
		CHECK(J(f, "fix.irq_affinity.0.exclude_cpus") == NULL);
		CHECK(strstr(JS(f, "message"), "101") != NULL);
		check_cites(f, "irq-remote-node");
	}
	json_decref(r);

	/* A mask spanning both nodes is remote for its off-node half; CPU 0 is
	 * on the NIC's node, so the fix keeps it out
	 * (docs/field-reports.md#cpu0-kept-free). */
	t->irqs[0].affinity.w[0] = 0xff;
	r = diagnose(t, 0);
	f = find(r, "irq-remote-node", "eth0");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "evidence.irqs.0.remote_cpus"), "4-7");
		CHECK_INT(json_array_size(J(f, "evidence.irqs.0.nodes")), 2);
		CHECK_STR(JS(f, "fix.irq_affinity.0.exclude_cpus"), "0");
	}
	json_decref(r);

	/* Kernel-managed IRQs cannot be moved: no finding for them. */
	t->irqs[0].managed = true;
	t->irqs[1].managed = true;
	r = diagnose(t, 0);
	CHECK_INT(count_id(r, "irq-remote-node"), 0);
	json_decref(r);

	/* A NIC of unknown node is not judged remote. */
	t->irqs[1].managed = false;
	t->nics[e1].numa_node = -1;
	t->nics[e1].numa_node_source = NT_SRC_UNKNOWN;
	r = diagnose(t, 0);
	CHECK_INT(count_id(r, "irq-remote-node"), 0);
	json_decref(r);
	topo_free(t);
}

/* ---- irq-shared-first-cpu ---- */

static void test_shared_first_cpu(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	int e0 = add_nic(t, "eth0", 0, NT_SRC_SYSFS, 1000);
	int e1 = add_nic(t, "eth1", 0, NT_SRC_SYSFS, 1000);
	add_irq(t, e0, 100, "4-7");
	add_irq(t, e0, 101, "4"); /* same NIC, same first CPU: not a finding */
	add_irq(t, e1, 102, "5-7");
	json_t *r = diagnose(t, 0);
	CHECK_INT(count_id(r, "irq-shared-first-cpu"), 0);
	json_decref(r);

	/* Now eth1's mask also starts at CPU 4. */
	t->irqs[2].affinity.w[0] = 0x30; /* CPUs 4,5 */
	r = diagnose(t, 0);
	check_shape(r);
	CHECK_INT(count_id(r, "irq-shared-first-cpu"), 1);
	json_t *f = find(r, "irq-shared-first-cpu", "cpu 4");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "severity"), "warning");
		CHECK_INT(JI(f, "evidence.cpu"), 4);
		CHECK_INT(JI(f, "evidence.node"), 1);
		CHECK_INT(json_array_size(J(f, "evidence.nics")), 2);
		CHECK_STR(JS(f, "evidence.nics.0"), "eth0");
		CHECK_STR(JS(f, "evidence.nics.1"), "eth1");
		CHECK_INT(json_array_size(J(f, "evidence.irqs")), 3);
		CHECK_INT(json_array_size(J(f, "fix.irq_affinity")), 2);
		/* Both NICs are on node 0, CPU 0's, which has more CPUs: the
		 * fix keeps CPU 0 out, as irq-remote-node's does. */
		CHECK_STR(JS(f, "fix.irq_affinity.0.exclude_cpus"), "0");
		CHECK_STR(JS(f, "fix.irq_affinity.1.exclude_cpus"), "0");
		check_cites(f, "first-cpu-serves");
	}
	json_decref(r);

	/* The kernel says each IRQ is served by its own single effective CPU
	 * (x86 spreads multi-CPU masks): no CPU is shared after all. */
	for (int i = 0; i < 3; i++) {
		nt_cpuset_zero(&t->irqs[i].effective);
		nt_cpuset_set(&t->irqs[i].effective, 5 + i);
		t->irqs[i].has_effective = true;
	}
	r = diagnose(t, 0);
	CHECK_INT(count_id(r, "irq-shared-first-cpu"), 0);
	json_decref(r);
	/* ...and when the effective CPUs of both NICs coincide, it is. */
	nt_cpuset_zero(&t->irqs[2].effective);
	nt_cpuset_set(&t->irqs[2].effective, 5);
	r = diagnose(t, 0);
	CHECK(find(r, "irq-shared-first-cpu", "cpu 5") != NULL);
	json_decref(r);
	topo_free(t);
}

/* The Ceph host by hand (docs/field-reports.md#host-ceph): 56 CPUs in two
 * interleaved nodes, every IRQ on 000300,00000000 (CPUs 40,41 of node 0),
 * eno1 on node 1. */
static void test_ceph_by_hand(void)
{
	static const char *const nodes[] = { "0-13,28-41", "14-27,42-55" };
	nt_topology *t = topo_new(56, 2, nodes);
	int eno1 = add_nic(t, "eno1", 1, NT_SRC_SYSFS, 40000);
	int ib0 = add_nic(t, "ib0", 0, NT_SRC_SYSFS, 40000);
	nt_cpuset m;
	CHECK_INT(nt_cpumask_parse("000300,00000000", &m), 0);
	for (int i = 0; i < 4; i++) {
		int q = add_irq(t, i < 2 ? eno1 : ib0, 150 + i, NULL);
		t->irqs[q].affinity = m;
		t->irqs[q].has_affinity = true;
	}
	json_t *r = diagnose(t, 0);
	json_t *f = find(r, "irq-shared-first-cpu", "cpu 40");
	CHECK(f != NULL);
	if (f) {
		CHECK_INT(JI(f, "evidence.node"), 0);
		CHECK_STR(JS(f, "evidence.irqs.0.affinity"), "40-41");
	}
	f = find(r, "irq-remote-node", "eno1");
	CHECK(f != NULL);
	if (f) {
		CHECK_INT(JI(f, "evidence.remote_irqs"), 2);
		CHECK_STR(JS(f, "evidence.irqs.0.remote_cpus"), "40-41");
	}
	CHECK(find(r, "irq-remote-node", "ib0") == NULL);
	json_decref(r);
	topo_free(t);
}

/* ---- irqbalance-active ---- */

static void test_irqbalance(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	json_t *r = diagnose(t, 0);
	CHECK_INT(count_id(r, "irqbalance-active"), 0);
	json_decref(r);
	t->irqbalance.running = true;
	t->irqbalance.pid = 4321;
	r = diagnose(t, 0);
	json_t *f = find(r, "irqbalance-active", "irqbalance");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "severity"), "warning");
		CHECK_INT(JI(f, "evidence.pid"), 4321);
		CHECK_STR(JS(f, "fix.irqbalance"), "ban");
		CHECK(strstr(JS(f, "message"), "4321") != NULL);
		check_cites(f, "irqbalance-rewrites");
	}
	json_decref(r);
	topo_free(t);
}

/* ---- ring-below-max ---- */

static void test_rings(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	const char *names[] = { "enos0", "enos1", "enos2", "enos3" };
	for (int i = 0; i < 4; i++) {
		int n = add_nic(t, names[i], 0, NT_SRC_SYSFS, 25000);
		t->nics[n].has_rings = true;
		t->nics[n].rings = (nt_rings){ .rx = 1024, .tx = 1024, .rx_max = 8192, .tx_max = 8192 };
		t->nics[n].has_stats = true;
	}
	t->nics[0].rx_missed = 12345; /* drops, as in docs/field-reports.md#ring-rx-drops */
	t->nics[1].rings.rx = 8192; /* at max */
	t->nics[1].rx_dropped = 7; /* drops, but nothing to raise */
	t->nics[3].has_rings = false; /* not supported */
	json_t *r = diagnose(t, 0);
	check_shape(r);
	CHECK_INT(count_id(r, "ring-below-max"), 2);
	json_t *f = find(r, "ring-below-max", "enos0");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "severity"), "error");
		CHECK_INT(JI(f, "evidence.rx"), 1024);
		CHECK_INT(JI(f, "evidence.rx_max"), 8192);
		CHECK_INT(JI(f, "evidence.rx_missed"), 12345);
		CHECK_INT(JI(f, "evidence.rx_drops_total"), 12345);
		CHECK_STR(JS(f, "fix.rings.0.interface"), "enos0");
		CHECK_STR(JS(f, "fix.rings.0.rx"), "max");
		check_cites(f, "ring-rx-drops");
	}
	f = find(r, "ring-below-max", "enos2");
	CHECK(f != NULL);
	if (f)
		CHECK_STR(JS(f, "severity"), "info");
	CHECK(find(r, "ring-below-max", "enos1") == NULL);
	CHECK(find(r, "ring-below-max", "enos3") == NULL);
	/* the error comes first */
	CHECK_STR(JS(r, "findings.0.id"), "ring-below-max");
	CHECK_STR(JS(r, "findings.0.subject"), "enos0");
	CHECK_INT(JI(r, "summary.error"), 1);
	json_decref(r);
	topo_free(t);
}

/* Drops judged over a recent window (once enos0 had dropped, the
 * finding never cleared, even with its ring raised to 4096 of 8192). */
static json_t *diagnose_recent(const nt_topology *t, nt_dropwin *w, int64_t now_ms)
{
	json_t *recent = nt_dropwin_update(w, t, now_ms);
	nt_diag_options o = { .rtt_ms = 10, .recent_drops = recent };
	json_t *r = nt_diagnose(t, &o);
	CHECK(r != NULL);
	json_decref(recent);
	return r;
}

static void test_rings_window(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	int n = add_nic(t, "enos0", 0, NT_SRC_SYSFS, 100000);
	nt_nic *nic = &t->nics[n];
	nic->has_rings = true;
	nic->rings = (nt_rings){ .rx = 1024, .tx = 1024, .rx_max = 8192, .tx_max = 8192 };
	nic->has_stats = true;
	nic->rx_missed = 12345;
	nt_dropwin *w = nt_dropwin_new(60000);
	/* First sight: only counters since boot, and the finding says so. */
	json_t *r = diagnose_recent(t, w, 0);
	json_t *f = find(r, "ring-below-max", "enos0");
	CHECK(f && strstr(JS(f, "message"), "since boot"));
	json_decref(r);
	/* More drops before a whole window was watched: still judged since
	 * boot, so a second look seconds later does not clear it. */
	nic->rx_missed += 40;
	r = diagnose_recent(t, w, 30000);
	f = find(r, "ring-below-max", "enos0");
	CHECK_MSG(f && strstr(JS(f, "message"), "(12385 dropped, missed or FIFO errors since boot)"), "%s",
		  f ? JS(f, "message") : "no finding");
	json_decref(r);
	/* A whole window watched: an error naming the window. */
	r = diagnose_recent(t, w, 60000);
	f = find(r, "ring-below-max", "enos0");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "severity"), "error");
		CHECK_MSG(strstr(JS(f, "message"), "dropped 40 received packets over the last 60 s"), "%s",
			  JS(f, "message"));
		CHECK_INT(JI(f, "evidence.recent.drops"), 40);
		CHECK_STR(JS(f, "evidence.recent.since"), "window");
	}
	json_decref(r);
	/* The ring raised short of its maximum: judged since the change at
	 * once, and without drops since, the finding is gone. */
	nic->rings.rx = 4096;
	r = diagnose_recent(t, w, 70000);
	CHECK(find(r, "ring-below-max", "enos0") == NULL);
	json_decref(r);
	r = diagnose_recent(t, w, 90000);
	CHECK(find(r, "ring-below-max", "enos0") == NULL);
	json_decref(r);
	/* Drops again: back, saying since when. */
	nic->rx_dropped += 3;
	r = diagnose_recent(t, w, 130000);
	f = find(r, "ring-below-max", "enos0");
	CHECK_MSG(f && strstr(JS(f, "message"), "dropped 3 received packets in the 60 s since its RX ring last changed"),
		  "%s", f ? JS(f, "message") : "no finding");
	json_decref(r);
	/* Judged over this window and the one before: still there one quiet
	 * window later, gone after the second. */
	r = diagnose_recent(t, w, 200000);
	f = find(r, "ring-below-max", "enos0");
	CHECK_MSG(f && strstr(JS(f, "message"), "dropped 3 received packets over the last 130 s"), "%s",
		  f ? JS(f, "message") : "no finding");
	json_decref(r);
	r = diagnose_recent(t, w, 270000);
	CHECK(find(r, "ring-below-max", "enos0") == NULL);
	json_decref(r);
	/* A counter that went backwards (driver reload) starts afresh. */
	nic->rx_missed = 0;
	nic->rx_dropped = 0;
	r = diagnose_recent(t, w, 280000);
	CHECK(find(r, "ring-below-max", "enos0") == NULL);
	json_decref(r);
	nt_dropwin_free(w);
	topo_free(t);
}

/* ---- bond-hash-layer2 ---- */

static void test_bonds(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	const char *slaves[] = { "enos0", "enos1" };
	for (int i = 0; i < 2; i++)
		add_nic(t, slaves[i], 0, NT_SRC_SYSFS, 25000);
	add_bond(t, "bond0", "802.3ad", 4, "layer2+3", 2, slaves);
	add_bond(t, "bond1", "802.3ad", 4, "layer3+4", 2, slaves);
	add_bond(t, "bond2", "balance-rr", 0, "layer2", 2, slaves);
	add_bond(t, "bond3", "balance-xor", 2, "layer2", 1, slaves);
	add_bond(t, "bond4", "active-backup", 1, "layer2", 2, slaves);
	add_bond(t, "bond5", "balance-xor", 2, "layer2", 2, slaves);
	json_t *r = diagnose(t, 0);
	check_shape(r);
	CHECK_INT(count_id(r, "bond-hash-layer2"), 2);
	json_t *f = find(r, "bond-hash-layer2", "bond0");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "severity"), "warning");
		CHECK_STR(JS(f, "evidence.xmit_hash_policy"), "layer2+3");
		CHECK_INT(json_array_size(J(f, "evidence.slaves")), 2);
		CHECK_STR(JS(f, "fix.bonds.0.interface"), "bond0");
		CHECK_STR(JS(f, "fix.bonds.0.xmit_hash_policy"), "layer3+4");
		check_cites(f, "bond-hash-layer3-4");
	}
	CHECK(find(r, "bond-hash-layer2", "bond5") != NULL);
	CHECK(find(r, "bond-hash-layer2", "bond1") == NULL); /* layer3+4 */
	CHECK(find(r, "bond-hash-layer2", "bond2") == NULL); /* balance-rr */
	CHECK(find(r, "bond-hash-layer2", "bond3") == NULL); /* one slave */
	CHECK(find(r, "bond-hash-layer2", "bond4") == NULL); /* active-backup */
	json_decref(r);
	topo_free(t);
}

/* ---- tcp-buffers-small ---- */

static void test_tcp_buffers(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	add_nic(t, "enos0", 0, NT_SRC_SYSFS, 25000);
	int slow = add_nic(t, "eth9", 0, NT_SRC_SYSFS, 1000);
	int down = add_nic(t, "eth8", 0, NT_SRC_SYSFS, 100000);
	snprintf(t->nics[down].operstate, sizeof(t->nics[down].operstate), "down");
	int virt = add_nic(t, "veth0", -1, NT_SRC_UNKNOWN, 400000);
	t->nics[virt].is_virtual = true;
	(void)slow;
	set_sysctl(t, "net.ipv4.tcp_rmem", "4096 131072 6291456");
	set_sysctl(t, "net.ipv4.tcp_wmem", "4096 16384 4194304");
	set_sysctl(t, "net.core.rmem_max", "212992");
	set_sysctl(t, "net.core.wmem_max", "67108864");

	json_t *r = diagnose(t, 10);
	check_shape(r);
	CHECK_INT(JI(r, "rtt_ms"), 10);
	json_t *f = find(r, "tcp-buffers-small", "sysctl");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "severity"), "warning");
		CHECK_STR(JS(f, "evidence.interface"), "enos0");
		CHECK_INT(JI(f, "evidence.speed_mbps"), 25000);
		CHECK_INT(JI(f, "evidence.rtt_ms"), 10);
		CHECK_INT(JI(f, "evidence.bdp_bytes"), 31250000);
		/* sysctl keys hold dots, so they are looked up directly */
		CHECK_STR(json_string_value(json_object_get(J(f, "evidence.values"),
				  "net.ipv4.tcp_rmem")),
			"4096 131072 6291456");
		const json_t *sc = J(f, "fix.sysctl");
		CHECK_STR(json_string_value(json_object_get(sc, "net.ipv4.tcp_rmem")),
			"4096 131072 33554432");
		CHECK_STR(json_string_value(json_object_get(sc, "net.ipv4.tcp_wmem")),
			"4096 16384 33554432");
		CHECK_STR(json_string_value(json_object_get(sc, "net.core.rmem_max")), "33554432");
		/* already big enough: left alone */
		CHECK(json_object_get(sc, "net.core.wmem_max") == NULL);
		CHECK_INT(json_object_size(sc), 3);
		CHECK(strstr(JS(f, "message"), "31250000") != NULL);
		check_cites(f, "tcp-buffers-bdp");
	}
	json_decref(r);

	/* Default RTT is 10 ms. */
	r = diagnose(t, 0);
	CHECK_INT(JI(r, "rtt_ms"), 10);
	f = find(r, "tcp-buffers-small", "sysctl");
	CHECK(f && JI(f, "evidence.bdp_bytes") == 31250000);
	json_decref(r);

	/* At 1 ms the BDP is 3125000 bytes: only rmem_max (212992) is short. */
	r = diagnose(t, 1);
	f = find(r, "tcp-buffers-small", "sysctl");
	CHECK(f != NULL);
	if (f) {
		CHECK_INT(JI(f, "evidence.bdp_bytes"), 3125000);
		CHECK_INT(json_object_size(J(f, "fix.sysctl")), 1);
		CHECK_STR(json_string_value(json_object_get(J(f, "fix.sysctl"), "net.core.rmem_max")),
			"4194304");
	}
	json_decref(r);

	/* A bond of four 25G ports counts as 100 Gbit/s. */
	const char *slaves[] = { "enos0", "enos1", "enos2", "enos3" };
	for (int i = 1; i < 4; i++)
		add_nic(t, slaves[i], 0, NT_SRC_SYSFS, 25000);
	int b = add_nic(t, "bond0", -1, NT_SRC_UNKNOWN, 100000);
	t->nics[b].is_virtual = true;
	t->nics[b].is_bond = true;
	add_bond(t, "bond0", "802.3ad", 4, "layer3+4", 4, slaves);
	r = diagnose(t, 10);
	f = find(r, "tcp-buffers-small", "sysctl");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "evidence.interface"), "bond0");
		CHECK_INT(JI(f, "evidence.speed_mbps"), 100000);
		CHECK_INT(JI(f, "evidence.bdp_bytes"), 125000000);
		CHECK_STR(json_string_value(json_object_get(J(f, "fix.sysctl"), "net.core.rmem_max")),
			"134217728");
	}
	json_decref(r);

	/* Big buffers: no finding. */
	for (int i = 0; i < t->nsysctls; i++)
		snprintf(t->sysctls[i].value, sizeof(t->sysctls[i].value), "%s",
			strstr(t->sysctls[i].key, "tcp_") ? "4096 87380 134217728" : "134217728");
	r = diagnose(t, 10);
	CHECK_INT(count_id(r, "tcp-buffers-small"), 0);
	json_decref(r);
	topo_free(t);
}

/* ---- busy-poll-global ---- */

/* Busy polling host-wide: busy_poll above 0 (every epoll_wait spins),
 * busy_read above 0 (every socket's SO_BUSY_POLL default), each alone and
 * both, info with the values and a fix setting only those set to 0; none
 * at 0, absent, or unreadable. */
static void test_busy_poll(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	set_sysctl(t, "net.core.busy_poll", "0");
	set_sysctl(t, "net.core.busy_read", "0");
	json_t *r = diagnose(t, 10);
	CHECK_INT(count_id(r, "busy-poll-global"), 0);
	json_decref(r);

	snprintf(t->sysctls[0].value, sizeof(t->sysctls[0].value), "50");
	r = diagnose(t, 10);
	check_shape(r);
	json_t *f = find(r, "busy-poll-global", "sysctl");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "severity"), "info");
		CHECK_STR(json_string_value(json_object_get(J(f, "evidence.values"), "net.core.busy_poll")), "50");
		CHECK_STR(json_string_value(json_object_get(J(f, "evidence.values"), "net.core.busy_read")), "0");
		CHECK_INT(json_array_size(J(f, "evidence.set")), 1);
		CHECK_STR(json_string_value(json_array_get(J(f, "evidence.set"), 0)), "net.core.busy_poll");
		/* No fix: --fix-profile must not undo a profile that chose it. */
		CHECK(json_is_null(json_object_get(f, "fix")));
		const char *m = JS(f, "message");
		CHECK(m && strstr(m, "{\"sysctl\":{\"net.core.busy_poll\":\"0\"}}"));
		CHECK_MSG(m && strstr(m, "net.core.busy_poll is 50 us host-wide") &&
				  strstr(m, "will cause all epoll-based applications to busy poll") &&
				  strstr(m, "EPIOCSPARAMS") && strstr(m, "SO_BUSY_POLL") && !strstr(m, "busy_read \""),
			  "message: %s", m ? m : "?");
	}
	CHECK_INT(JI(r, "summary.info"), 1);
	json_decref(r);

	/* busy_read alone: its own words, SO_BUSY_POLL's default. */
	snprintf(t->sysctls[0].value, sizeof(t->sysctls[0].value), "0");
	snprintf(t->sysctls[1].value, sizeof(t->sysctls[1].value), "50");
	r = diagnose(t, 10);
	f = find(r, "busy-poll-global", "sysctl");
	CHECK(f && JS(f, "message") && strstr(JS(f, "message"), "net.core.busy_read is 50 us host-wide") &&
	      strstr(JS(f, "message"), "sets the default value of the SO_BUSY_POLL socket option") &&
	      !strstr(JS(f, "message"), "epoll_wait. This"));
	CHECK(f && JS(f, "message") && strstr(JS(f, "message"), "{\"sysctl\":{\"net.core.busy_read\":\"0\"}}"));
	json_decref(r);

	/* Both: one finding naming both, and nothing in the fix profile. */
	snprintf(t->sysctls[0].value, sizeof(t->sysctls[0].value), "100");
	r = diagnose(t, 10);
	CHECK_INT(count_id(r, "busy-poll-global"), 1);
	f = find(r, "busy-poll-global", "sysctl");
	CHECK(f && json_array_size(J(f, "evidence.set")) == 2 && JS(f, "message") &&
	      strstr(JS(f, "message"), "{\"sysctl\":{\"net.core.busy_poll\":\"0\",\"net.core.busy_read\":\"0\"}}"));
	json_t *p = nt_diagnose_fix_profile(r, "fixes");
	CHECK(p && !json_object_get(json_object_get(p, "sysctl"), "net.core.busy_poll") &&
	      !json_object_get(json_object_get(p, "sysctl"), "net.core.busy_read"));
	json_decref(p);
	json_decref(r);

	/* Not a number: no evidence either way. */
	snprintf(t->sysctls[0].value, sizeof(t->sysctls[0].value), "x");
	snprintf(t->sysctls[1].value, sizeof(t->sysctls[1].value), "-1");
	r = diagnose(t, 10);
	CHECK_INT(count_id(r, "busy-poll-global"), 0);
	json_decref(r);
	topo_free(t);
}

/* ---- nic-locality-unknown ---- */

static void test_locality(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	add_nic(t, "eth0", -1, NT_SRC_UNKNOWN, 1000);
	int v = add_nic(t, "veth0", -1, NT_SRC_UNKNOWN, 10000);
	t->nics[v].is_virtual = true;
	add_nic(t, "eth1", 1, NT_SRC_LOCAL_CPULIST, 1000);
	json_t *r = diagnose(t, 0);
	check_shape(r);
	CHECK_INT(count_id(r, "nic-locality-unknown"), 1);
	json_t *f = find(r, "nic-locality-unknown", "eth0");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "severity"), "info");
		CHECK(json_is_null(json_object_get(f, "fix")));
		CHECK_INT(JI(f, "evidence.host_nodes"), 2);
	}
	json_decref(r);
	topo_free(t);

	static const char *const one[] = { "0-7" };
	t = topo_new(8, 1, one);
	add_nic(t, "eth0", -1, NT_SRC_UNKNOWN, 1000);
	r = diagnose(t, 0);
	CHECK_INT(count_id(r, "nic-locality-unknown"), 0);
	json_decref(r);
	topo_free(t);
}

/* ---- irq-info-missing ---- */

static void test_irq_info_missing(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	int e1 = add_nic(t, "eth1", 1, NT_SRC_SYSFS, 1000);
	add_irq(t, e1, 101, "0-3");
	json_t *r = diagnose(t, 0);
	CHECK_INT(count_id(r, "irq-info-missing"), 0);
	CHECK_INT(count_id(r, "irq-remote-node"), 1);
	json_decref(r);
	t->have_irq_info = false;
	r = diagnose(t, 0);
	CHECK_INT(count_id(r, "irq-info-missing"), 1);
	CHECK_INT(count_id(r, "irq-remote-node"), 0);
	json_decref(r);
	topo_free(t);
}

/* ---- order, summary, determinism ---- */

static int sev_rank(const char *s)
{
	return !strcmp(s, "error") ? 0 : !strcmp(s, "warning") ? 1 : 2;
}

static void test_order(void)
{
	nt_topology *t = topo_new(8, 2, two_nodes);
	const char *names[] = { "eth10", "eth2", "eth1" };
	for (int i = 0; i < 3; i++) {
		int n = add_nic(t, names[i], 1, NT_SRC_SYSFS, 1000);
		add_irq(t, n, 200 + i, "0-3");
		t->nics[n].has_rings = true;
		t->nics[n].rings = (nt_rings){ .rx = 256, .rx_max = 4096 };
		t->nics[n].has_stats = true;
		t->nics[n].rx_dropped = (uint64_t)i;
	}
	t->irqbalance.running = true;
	add_nic(t, "eth3", -1, NT_SRC_UNKNOWN, 1000);
	json_t *r = diagnose(t, 0);
	check_shape(r);
	const json_t *fs = json_object_get(r, "findings");
	int counts[3] = { 0, 0, 0 };
	for (size_t i = 0; i < json_array_size(fs); i++) {
		int s = sev_rank(JS(json_array_get(fs, i), "severity"));
		counts[s]++;
		if (i > 0)
			CHECK(sev_rank(JS(json_array_get(fs, i - 1), "severity")) <= s);
	}
	CHECK_INT(JI(r, "summary.error"), counts[0]);
	CHECK_INT(JI(r, "summary.warning"), counts[1]);
	CHECK_INT(JI(r, "summary.info"), counts[2]);
	CHECK_INT(counts[0], 2); /* eth1, eth2: rings with drops */
	CHECK_INT(counts[2], 2); /* eth10 ring without drops, eth3 locality */
	CHECK_STR(JS(r, "findings.0.subject"), "eth1");
	CHECK_STR(JS(r, "findings.1.subject"), "eth2");
	CHECK_STR(JS(r, "findings.7.subject"), "eth3");
	CHECK_STR(JS(r, "findings.8.subject"), "eth10");
	/* warnings: cpu 0 (shared), eth1, eth2, eth10 (remote), irqbalance */
	CHECK_STR(JS(r, "findings.2.subject"), "cpu 0");
	CHECK_STR(JS(r, "findings.3.subject"), "eth1");
	CHECK_STR(JS(r, "findings.4.subject"), "eth2");
	CHECK_STR(JS(r, "findings.5.subject"), "eth10");
	CHECK_STR(JS(r, "findings.6.subject"), "irqbalance");

	json_t *r2 = diagnose(t, 0);
	char *a = json_dumps(r, JSON_SORT_KEYS), *b = json_dumps(r2, JSON_SORT_KEYS);
	CHECK(a && b && strcmp(a, b) == 0);
	free(a);
	free(b);
	json_decref(r2);
	json_decref(r);
	topo_free(t);

	/* An empty host: no findings, zero counts. */
	static const char *const one[] = { "0" };
	t = topo_new(1, 1, one);
	r = diagnose(t, 0);
	CHECK_INT(json_array_size(json_object_get(r, "findings")), 0);
	CHECK_INT(JI(r, "summary.warning"), 0);
	json_decref(r);
	topo_free(t);
}

int main(void)
{
	test_remote_node();
	test_shared_first_cpu();
	test_ceph_by_hand();
	test_irqbalance();
	test_rings();
	test_rings_window();
	test_bonds();
	test_tcp_buffers();
	test_busy_poll();
	test_locality();
	test_irq_info_missing();
	test_order();
	TEST_MAIN_END();
}
