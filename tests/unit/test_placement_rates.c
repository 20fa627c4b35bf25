/* SPDX-License-Identifier: Apache-2.0 */
/* Placement recommendations and rate computation, on fixtures and on
 * hand-made /proc/interrupts samples. */
#include "kernel/ctx.h"
#include "placement/app.h"
#include "host/rates.h"
#include "host/topology.h"
#include "harness.h"

#include <string.h>

static nt_topology *load(const char *root)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	return t;
}

static const char *cl(const nt_cpuset *s)
{
	static char buf[2][1024];
	static int k;
	k ^= 1;
	nt_cpulist_format(s, buf[k], sizeof(buf[k]));
	return buf[k];
}

/* Issue 39: with threaded NAPI the receive work runs in the NAPI threads;
 * a CPU a thread is pinned to is kept from the application like an IRQ's
 * CPU. T is the x460 copy (eth2 on node 1, CPUs 16-31, its IRQ on CPU 0). */
static void napi_threads(const nt_topology *t)
{
	const nt_nic *eth2 = nt_topology_nic(t, "eth2"), *eth0 = nt_topology_nic(t, "eth0");
	nt_napi nap[4];
	nt_host_napi h;
	nt_placement p;
	memset(nap, 0, sizeof(nap));
	memset(&h, 0, sizeof(h));
	h.napis = nap;
	h.nd.nnapis = 4;
	const char *cpus[4] = { "16", "17", "0-63", "20" }; /* the last is eth0's */
	for (int i = 0; i < 4; i++) {
		nap[i].nic = (int)((i == 3 ? eth0 : eth2) - t->nics);
		nap[i].pid = 3100 + i;
		nap[i].has_cpus = true;
		nap[i].rx_queue = nap[i].last_cpu = -1;
		nt_cpulist_parse(cpus[i], &nap[i].thread_cpus);
	}
	nt_placement_hint hint = { .napi = &h };
	CHECK_INT(nt_placement_for(t, eth2, 0, &hint, &p), 0);
	CHECK_STR(p.rule, "node-free");
	/* Its threads on 16 and 17 (the one allowed everywhere pins nothing),
	 * eth0's on 20: none of them for the application. */
	CHECK_STR(cl(&p.napi_cpus), "16-17");
	CHECK(nt_cpuset_isset(&p.irq_cpus, 16) && nt_cpuset_isset(&p.irq_cpus, 17));
	CHECK_MSG(!nt_cpuset_isset(&p.app_cpus, 16) && !nt_cpuset_isset(&p.app_cpus, 17) &&
			  !nt_cpuset_isset(&p.app_cpus, 20),
		  "app %s", cl(&p.app_cpus));
	CHECK_INT(nt_cpuset_count(&p.app_cpus), nt_cpuset_count(&p.node_cpus) - 3);
	CHECK(strstr(p.reason, "or run NAPI threads") != NULL);
	json_t *j = nt_placement_to_json(t, eth2, &p, NULL);
	CHECK_STR(json_string_value(json_object_get(j, "napi_cpus")), "16-17");
	json_decref(j);
	/* Every CPU of node 1 runs a thread of eth2: the application shares
	 * the node, off nothing but what it must share. */
	nt_cpulist_parse("16-31", &nap[0].thread_cpus);
	CHECK_INT(nt_placement_for(t, eth2, 0, &hint, &p), 0);
	CHECK_STR(p.rule, "node-shared");
	CHECK(strstr(p.reason, "or NAPI threads") != NULL);
	/* A thread that is no NAPI's worker (pid -1) or unread pins nothing. */
	for (int i = 0; i < 4; i++)
		nap[i].pid = -1;
	CHECK_INT(nt_placement_for(t, eth2, 0, &hint, &p), 0);
	CHECK_STR(cl(&p.app_cpus), "16-31");
	CHECK_STR(cl(&p.napi_cpus), "");
}

static void placement(void)
{
	nt_topology *t = load(NT_FIXTURES "/x460-4node-8nic");
	nt_placement p;
	if (!t)
		return;
	/* eth2 sits on node 1; its IRQ is served by CPU 0 (effective), so
	 * the whole of node 1 is free for the application. */
	CHECK_INT(nt_placement_for(t, nt_topology_nic(t, "eth2"), 0, NULL, &p), 0);
	CHECK(p.known);
	CHECK_INT(p.node, 1);
	CHECK_STR(p.rule, "node-free");
	CHECK_STR(cl(&p.app_cpus), "16-31");
	/* eth0 on node 0 with its IRQ on CPU 0: the app avoids CPU 0 and, at
	 * first, CPU 0's hyper-thread sibling. */
	CHECK_INT(nt_placement_for(t, nt_topology_nic(t, "eth0"), 4, NULL, &p), 0);
	CHECK(!nt_cpuset_isset(&p.app_cpus, 0));
	CHECK_INT(nt_cpuset_count(&p.app_cpus), 4);
	for (int c = nt_cpuset_next(&p.app_cpus, 0); c >= 0; c = nt_cpuset_next(&p.app_cpus, c + 1)) {
		CHECK_INT(t->cpu_node[c], 0);
		CHECK(!(t->cpu_core[c] == t->cpu_core[0] && t->cpu_package[c] == t->cpu_package[0]));
	}
	json_t *j = nt_placement_to_json(t, nt_topology_nic(t, "eth0"), &p, NULL);
	CHECK(strstr(json_string_value(json_object_get(j, "numactl")), "--membind=0") != NULL);
	CHECK_STR(json_string_value(json_object_get(j, "rule")), "node-free");
	CHECK(json_is_null(json_object_get(j, "napi_cpus"))); /* not read */
	json_decref(j);
	napi_threads(t);
	nt_topology_free(t);

	t = load(NT_FIXTURES "/epyc7713-2node-bond");
	if (!t)
		return;
	/* A bond stands for its ports, two on each node. */
	const nt_nic *bond = nt_topology_nic(t, "bond0");
	CHECK_INT(nt_placement_for(t, bond, 0, NULL, &p), 0);
	CHECK(p.known);
	CHECK_STR(p.ports, "enos0,enos1,enos2,enos3");
	CHECK_STR(cl(&p.nodes), "0-1");
	CHECK(!nt_cpuset_intersects(&p.app_cpus, &p.irq_cpus));
	j = nt_placement_to_json(t, bond, &p, NULL);
	CHECK(strstr(json_string_value(json_object_get(j, "numactl")), "--membind=0-1") != NULL);
	json_decref(j);
	/* The EPYC host: enos2 on node 1, application on node 1 CPUs only. */
	CHECK_INT(nt_placement_for(t, nt_topology_nic(t, "enos2"), 0, NULL, &p), 0);
	CHECK(nt_topology_set_on_node(t, &p.app_cpus, 1));
	CHECK(!nt_cpuset_intersects(&p.app_cpus, &p.irq_cpus));

	/* Issue 29: with enos0's CPUs 30-31,94-95 reserved by the profile in
	 * effect, those are the answer (it gave 0,18-20: the excluded CPU 0
	 * and CPUs serving enos1). */
	json_t *res = json_pack("{s:s}", "enos0", "30-31,94-95");
	nt_cpuset excl, busy;
	nt_cpulist_parse("0", &excl);
	nt_placement_hint hint = { .reserved = res, .exclude = &excl, .source = "transaction 1" };
	const nt_nic *enos0 = nt_topology_nic(t, "enos0");
	CHECK_INT(nt_placement_for(t, enos0, 4, &hint, &p), 0);
	CHECK_STR(p.rule, "reserved");
	CHECK_STR(cl(&p.app_cpus), "30-31,94-95");
	CHECK(strstr(p.reason, "transaction 1 reserved for enos0") != NULL);
	j = nt_placement_to_json(t, enos0, &p, "transaction 1");
	CHECK_STR(json_string_value(json_object_get(j, "source")), "transaction 1");
	json_decref(j);
	CHECK_INT(nt_placement_for(t, enos0, 2, &hint, &p), 0);
	CHECK_INT(nt_cpuset_count(&p.app_cpus), 2);
	CHECK(nt_cpuset_isset(&p.app_cpus, 30) || nt_cpuset_isset(&p.app_cpus, 31));
	/* Nothing reserved: node 0's CPUs that serve no NIC's interrupts
	 * (enos1's are on node 0 too) and are not excluded. */
	json_object_clear(res);
	CHECK_INT(nt_placement_for(t, enos0, 4, &hint, &p), 0);
	CHECK_STR(p.rule, "node-free");
	CHECK(!nt_cpuset_isset(&p.app_cpus, 0));
	CHECK(strstr(p.reason, "not excluded") != NULL);
	nt_cpuset_zero(&busy);
	for (int i = 0; i < t->nirqs; i++)
		if (t->irqs[i].nic >= 0 && t->irqs[i].has_effective)
			nt_cpuset_or(&busy, &busy, &t->irqs[i].effective);
	CHECK_MSG(!nt_cpuset_intersects(&p.app_cpus, &busy), "app %s, NIC IRQs on %s", cl(&p.app_cpus), cl(&busy));
	CHECK(nt_topology_set_on_node(t, &p.app_cpus, 0));
	json_decref(res);
	/* CPUs given: taken as they are, their nodes for memory. */
	nt_cpuset given;
	nt_cpulist_parse("2-3,40", &given);
	nt_placement_hint gh = { .given = &given };
	CHECK_INT(nt_placement_for(t, enos0, 0, &gh, &p), 0);
	CHECK_STR(p.rule, "given");
	CHECK_STR(cl(&p.app_cpus), "2-3,40");
	CHECK_STR(cl(&p.nodes), "0-1");
	nt_topology_free(t);

	/* Unknown locality is not guessed at: CPUs must be given. */
	t = load(NT_FIXTURES "/vm-virtio-2cpu");
	if (!t)
		return;
	bool seen = false;
	for (int k = 0; k < t->nnics && !seen; k++) {
		const nt_nic *n = &t->nics[k];
		if (n->numa_node >= 0 || n->has_local_cpus)
			continue;
		seen = true;
		CHECK_INT(nt_placement_for(t, n, 0, NULL, &p), NT_ENOTFOUND);
		CHECK(!p.known);
		CHECK(strstr(p.reason, "--cpus-list") != NULL);
		nt_cpulist_parse("1", &given);
		CHECK_INT(nt_placement_for(t, n, 0, &gh, &p), 0);
		CHECK_STR(cl(&p.app_cpus), "1");
	}
	CHECK_MSG(seen, "the VM fixture has a NIC of unknown node");
	nt_topology_free(t);
}

static void rates(void)
{
	nt_topology *t = load(NT_FIXTURES "/x460-4node-8nic");
	if (!t)
		return;
	nt_irq_sample a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	/* Two samples one second apart: eth2's IRQ 193 fired 16000 times on
	 * CPU 0 (node 0, off eth2's node 1) and 100 times on CPU 20. */
	char hdr[2048] = "", l1[4096] = "", l2[4096] = "";
	size_t n = 0;
	for (int c = 0; c < 64; c++)
		n += (size_t)snprintf(hdr + n, sizeof(hdr) - n, " CPU%d", c);
	snprintf(l1, sizeof(l1), "%s\n193:", hdr);
	snprintf(l2, sizeof(l2), "%s\n193:", hdr);
	for (int c = 0; c < 64; c++) {
		char v[32];
		snprintf(v, sizeof(v), " %d", c == 0 ? 1000 : 5);
		strcat(l1, v);
		snprintf(v, sizeof(v), " %d", c == 0 ? 17000 : c == 20 ? 105 : 5);
		strcat(l2, v);
	}
	strcat(l1, " PCI-MSI 1-edge eth2\n");
	strcat(l2, " PCI-MSI 1-edge eth2\n");
	CHECK_INT(nt_interrupts_parse(l1, &a.ints), 0);
	CHECK_INT(nt_interrupts_parse(l2, &b.ints), 0);
	a.t_ms = 1000;
	b.t_ms = 2000;
	json_t *r = nt_rates_compute(t, &a, &b);
	CHECK(r != NULL);
	json_t *irq = json_array_get(json_object_get(r, "irqs"), 0);
	CHECK_INT(json_integer_value(json_object_get(irq, "irq")), 193);
	CHECK_STR(json_string_value(json_object_get(irq, "owner")), "eth2");
	CHECK(json_real_value(json_object_get(irq, "per_second")) == 16100.0);
	CHECK(json_real_value(json_object_get(irq, "off_node_per_second")) == 16000.0);
	json_t *cpu0 = json_array_get(json_object_get(r, "cpus"), 0);
	CHECK(json_real_value(json_object_get(cpu0, "irq_per_second")) == 16000.0);
	json_t *node1 = json_array_get(json_object_get(r, "nodes"), 1);
	CHECK_INT(json_integer_value(json_object_get(node1, "node")), 1);
	CHECK(json_real_value(json_object_get(node1, "irq_per_second")) == 100.0);
	CHECK_INT(json_array_size(json_object_get(r, "off_node")), 1);
	json_decref(r);
	/* A counter that went backwards counts as zero, not as 2^64. */
	b.ints.lines[0].counts[0] = 10;
	r = nt_rates_compute(t, &a, &b);
	irq = json_array_get(json_object_get(r, "irqs"), 0);
	CHECK(json_real_value(json_object_get(irq, "per_second")) == 100.0);
	json_decref(r);
	nt_rates_sample_free(&a);
	nt_rates_sample_free(&b);
	nt_topology_free(t);
}

int main(void)
{
	placement();
	rates();
	TEST_MAIN_END();
}
