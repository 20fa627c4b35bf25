/* Placement recommendations and rate computation, on fixtures and on
 * hand-made /proc/interrupts samples. */
#include "kernel/ctx.h"
#include "placement/app.h"
#include "host/rates.h"
#include "host/topology.h"
#include "harness.h"

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

static void placement(void)
{
	nt_topology *t = load(NT_FIXTURES "/x460-4node-8nic");
	nt_placement p;
	if (!t)
		return;
	/* eth2 sits on node 1; its IRQ is served by CPU 0 (effective), so
	 * the whole of node 1 is free for the application. */
	CHECK_INT(nt_placement_for(t, nt_topology_nic(t, "eth2"), 0, &p), 0);
	CHECK(p.known);
	CHECK_INT(p.node, 1);
	CHECK_STR(cl(&p.app_cpus), "16-31");
	/* eth0 on node 0 with its IRQ on CPU 0: the app avoids CPU 0 and, at
	 * first, CPU 0's hyper-thread sibling. */
	CHECK_INT(nt_placement_for(t, nt_topology_nic(t, "eth0"), 4, &p), 0);
	CHECK(!nt_cpuset_isset(&p.app_cpus, 0));
	CHECK_INT(nt_cpuset_count(&p.app_cpus), 4);
	for (int c = nt_cpuset_next(&p.app_cpus, 0); c >= 0; c = nt_cpuset_next(&p.app_cpus, c + 1)) {
		CHECK_INT(t->cpu_node[c], 0);
		CHECK(!(t->cpu_core[c] == t->cpu_core[0] && t->cpu_package[c] == t->cpu_package[0]));
	}
	json_t *j = nt_placement_to_json(t, nt_topology_nic(t, "eth0"), &p);
	CHECK(strstr(json_string_value(json_object_get(j, "numactl")), "--membind=0") != NULL);
	json_decref(j);
	nt_topology_free(t);

	/* Unknown locality is not guessed at. */
	t = load(NT_FIXTURES "/epyc7713-2node-bond");
	if (!t)
		return;
	nt_nic *bond = nt_topology_nic(t, "bond0");
	CHECK_INT(nt_placement_for(t, bond, 0, &p), NT_ENOTFOUND);
	CHECK(!p.known);
	CHECK(strstr(p.reason, "unknown") != NULL);
	/* The EPYC host: enos2 on node 1, application on node 1 CPUs only. */
	CHECK_INT(nt_placement_for(t, nt_topology_nic(t, "enos2"), 0, &p), 0);
	CHECK(nt_topology_set_on_node(t, &p.app_cpus, 1));
	CHECK(!nt_cpuset_intersects(&p.app_cpus, &p.irq_cpus));
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
