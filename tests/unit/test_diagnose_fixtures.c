/* SPDX-License-Identifier: Apache-2.0 */
/* Diagnostics of the field-report hosts (docs/field-reports.md), their
 * fixture trees read by nt_topology_read, the real reader: each finding
 * the report describes is found, with its numbers. Host models built by
 * hand: test_diagnose.c. */
#include "diag_util.h"

/* ---- the field-report hosts' fixture trees, read by the real reader ---- */

static nt_topology *read_fixture(const char *name)
{
	char root[PATH_MAX];
	nt_ctx ctx;
	nt_topology *t = NULL;
	snprintf(root, sizeof(root), "%s/%s", NT_FIXTURES, name);
	CHECK_MSG(nt_ctx_init(&ctx, root) == 0, "context for %s", root);
	int err = nt_topology_read(&ctx, &t);
	CHECK_MSG(err == 0 && t, "nt_topology_read(%s) = %d", root, err);
	return err == 0 ? t : NULL;
}

/* The x460 out of the box (docs/field-reports.md#irq-remote-node):
 * irqbalance running, every NIC's IRQ on node 0. */
static void test_fixture_x460(void)
{
	nt_topology *t = read_fixture("x460-4node-8nic");
	if (!t)
		return;
	json_t *r = diagnose(t, 0);
	check_shape(r);
	CHECK(find(r, "irqbalance-active", "irqbalance") != NULL);
	CHECK(find(r, "irq-remote-node", "eth0") == NULL);
	CHECK(find(r, "irq-remote-node", "eth1") == NULL);
	for (int i = 2; i <= 7; i++) {
		char name[8];
		snprintf(name, sizeof(name), "eth%d", i);
		json_t *f = find(r, "irq-remote-node", name);
		CHECK_MSG(f != NULL, "irq-remote-node for %s", name);
		if (!f)
			continue;
		/* eth0..eth7 sit two a node; their IRQs are 177, 185, ..., 233 */
		CHECK_INT(JI(f, "evidence.nic_node"), i / 2);
		CHECK_INT(JI(f, "evidence.irqs.0.irq"), 177 + 8 * i);
		CHECK_INT(JI(f, "evidence.irqs.0.nodes.0"), 0);
	}
	CHECK(count_id(r, "irq-shared-first-cpu") >= 1);
	json_t *f = NULL;
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(r, "findings"), i, x)
		if (!strcmp(JS(x, "id"), "irq-shared-first-cpu") && !f)
			f = x;
	if (f) {
		CHECK(json_array_size(J(f, "evidence.nics")) >= 2);
		CHECK_INT(JI(f, "evidence.node"), 0);
		/* The fix keeps CPU 0 out for the node-0 NICs, as the
		 * irq-remote-node fix does (seed 000's masks left CPU 0 out):
		 * before, "Fix all" put eth0's IRQ on CPU 0 beside this very
		 * finding (issue 43, item 17). */
		json_t *rule;
		size_t k;
		int node0 = 0;
		json_array_foreach(J(f, "fix.irq_affinity"), k, rule) {
			const char *ifn = JS(rule, "interface");
			if (ifn && (!strcmp(ifn, "eth0") || !strcmp(ifn, "eth1"))) {
				node0++;
				CHECK_STR(JS(rule, "exclude_cpus"), "0");
			}
		}
		CHECK(node0 >= 1);
	}
	/* the same host read twice gives the same document */
	json_t *r2 = diagnose(t, 0);
	char *a = json_dumps(r, JSON_SORT_KEYS), *b = json_dumps(r2, JSON_SORT_KEYS);
	CHECK(a && b && strcmp(a, b) == 0);
	free(a);
	free(b);
	json_decref(r2);
	json_decref(r);
	nt_topology_free(t);
}

/* The EPYC host (docs/field-reports.md#host-epyc7713): bond0 on layer2+3,
 * RX ring 1024 of 8192 with drops on enos0, TCP buffers below a 100G BDP. */
static void test_fixture_epyc(void)
{
	nt_topology *t = read_fixture("epyc7713-2node-bond");
	if (!t)
		return;
	json_t *r = diagnose(t, 10);
	check_shape(r);
	json_t *f = find(r, "bond-hash-layer2", "bond0");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "evidence.xmit_hash_policy"), "layer2+3");
		CHECK_STR(JS(f, "fix.bonds.0.xmit_hash_policy"), "layer3+4");
	}
	f = find(r, "ring-below-max", "enos0");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(JS(f, "severity"), "error");
		CHECK_INT(JI(f, "evidence.rx"), 1024);
		CHECK_INT(JI(f, "evidence.rx_max"), 8192);
		CHECK(JI(f, "evidence.rx_drops_total") > 0);
	}
	f = find(r, "ring-below-max", "enos2");
	CHECK(f != NULL);
	if (f)
		CHECK_STR(JS(f, "severity"), "info");
	f = find(r, "tcp-buffers-small", "sysctl");
	CHECK(f != NULL);
	if (f) {
		/* the fastest link is bond0: the sum of its slaves' speeds */
		const nt_bond *b = nt_topology_bond(t, "bond0");
		long sum = 0;
		for (int k = 0; b && k < b->nslaves; k++) {
			const nt_nic *n = nt_topology_nic(t, b->slaves[k]);
			if (n && n->speed_mbps > 0 && !strcmp(n->operstate, "up"))
				sum += n->speed_mbps;
		}
		CHECK_STR(JS(f, "evidence.interface"), "bond0");
		CHECK_INT(JI(f, "evidence.speed_mbps"), sum);
		long long bdp = (long long)sum * 1000000 / 8 * 10 / 1000;
		CHECK_INT(JI(f, "evidence.bdp_bytes"), bdp);
		const char *rmem = json_string_value(json_object_get(J(f, "fix.sysctl"),
			"net.ipv4.tcp_rmem"));
		unsigned long long lo, def, max;
		CHECK(rmem && sscanf(rmem, "%llu %llu %llu", &lo, &def, &max) == 3);
		if (rmem) {
			CHECK(max >= (unsigned long long)bdp && max / 2 < (unsigned long long)bdp);
			CHECK((max & (max - 1)) == 0);
		}
	}
	json_decref(r);
	nt_topology_free(t);
}

/* The Ceph host (docs/field-reports.md#host-ceph): every IRQ on
 * 000300,00000000 (CPUs 40,41 of node 0); eno1 on node 1. */
static void test_fixture_ceph(void)
{
	nt_topology *t = read_fixture("ceph-2node-ib");
	if (!t)
		return;
	json_t *r = diagnose(t, 0);
	check_shape(r);
	json_t *f = find(r, "irq-shared-first-cpu", "cpu 40");
	CHECK(f != NULL);
	if (f) {
		CHECK_INT(JI(f, "evidence.node"), 0);
		CHECK(json_array_size(J(f, "evidence.nics")) >= 2);
	}
	f = find(r, "irq-remote-node", "eno1");
	CHECK(f != NULL);
	if (f) {
		CHECK_INT(JI(f, "evidence.nic_node"), 1);
		CHECK(JI(f, "evidence.remote_irqs") >= 1);
		CHECK_STR(JS(f, "evidence.irqs.0.remote_cpus"), "40-41");
	}
	json_decref(r);
	nt_topology_free(t);
}

/* Real-machine trees: a tree without /proc/interrupts says so; the tidy
 * single-node VM has nothing above info. */
static void test_fixture_real(void)
{
	nt_topology *t = read_fixture("hwloc-32intel64-2p8co2t-8ve");
	if (t) {
		json_t *r = diagnose(t, 0);
		CHECK_INT(count_id(r, "irq-info-missing"), 1);
		CHECK_INT(count_id(r, "irq-remote-node"), 0);
		json_decref(r);
		nt_topology_free(t);
	}
	t = read_fixture("vm-virtio-2cpu");
	if (t) {
		json_t *r = diagnose(t, 0);
		check_shape(r);
		CHECK_INT(count_id(r, "nic-locality-unknown"), 0);
		CHECK_INT(JI(r, "summary.error"), 0);
		CHECK_INT(JI(r, "summary.warning"), 0);
		json_decref(r);
		nt_topology_free(t);
	}
}

int main(void)
{
	test_fixture_x460();
	test_fixture_epyc();
	test_fixture_ceph();
	test_fixture_real();
	TEST_MAIN_END();
}
