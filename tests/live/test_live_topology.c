/* SPDX-License-Identifier: Apache-2.0 */
/* The live host (--root /) cross-checked against libnuma, sysconf and the
 * kernel's own files read independently here. */
#include "kernel/ctx.h"
#include "host/topology.h"
#include "harness.h"

#include <dirent.h>
#include <numa.h>
#include <unistd.h>

static const char *cpulist(const nt_cpuset *s)
{
	static char buf[2][8192];
	static int k;
	k ^= 1;
	nt_cpulist_format(s, buf[k], sizeof(buf[k]));
	return buf[k];
}

int main(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;

	CHECK_INT(nt_ctx_init(&ctx, "/"), 0);
	CHECK(ctx.live);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		TEST_MAIN_END();

	/* CPUs: sysconf and libnuma. */
	CHECK_INT(nt_cpuset_count(&t->cpus_online), sysconf(_SC_NPROCESSORS_ONLN));
	if (numa_available() >= 0) {
		CHECK_INT(t->nnodes, numa_num_configured_nodes());
		for (int i = 0; i < t->nnodes; i++) {
			struct bitmask *bm = numa_allocate_cpumask();
			CHECK_INT(numa_node_to_cpus(t->nodes[i].id, bm), 0);
			nt_cpuset want;
			nt_cpuset_zero(&want);
			for (unsigned c = 0; c < bm->size; c++)
				if (numa_bitmask_isbitset(bm, c) && nt_cpuset_isset(&t->cpus_online, (int)c))
					nt_cpuset_set(&want, (int)c);
			CHECK_STR(cpulist(&t->nodes[i].cpus), cpulist(&want));
			numa_free_cpumask(bm);
			long long free_b = 0;
			long long total = numa_node_size64(t->nodes[i].id, &free_b);
			/* meminfo and libnuma read the same counters a moment apart. */
			CHECK_MSG(total / 1024 == (long long)t->nodes[i].mem_total_kb || t->nodes[i].mem_total_kb == 0 ||
					  llabs(total / 1024 - (long long)t->nodes[i].mem_total_kb) < 4096,
				  "node %d total %lld kB vs %llu kB", t->nodes[i].id, total / 1024,
				  (unsigned long long)t->nodes[i].mem_total_kb);
		}
	} else {
		CHECK_INT(t->nnodes, 1);
	}

	/* Every link in /sys/class/net is reported, with its ifindex. */
	DIR *d = opendir("/sys/class/net");
	CHECK(d != NULL);
	struct dirent *de;
	int links = 0;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "bonding_masters"))
			continue;
		links++;
		nt_nic *n = nt_topology_nic(t, de->d_name);
		CHECK_MSG(n != NULL, "%s missing", de->d_name);
		if (!n)
			continue;
		char path[512];
		snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", de->d_name);
		FILE *f = fopen(path, "r");
		int ifi = -1;
		if (f) {
			if (fscanf(f, "%d", &ifi) != 1)
				ifi = -1;
			fclose(f);
		}
		CHECK_INT(n->ifindex, ifi);
		/* IRQs attributed to a NIC exist in /proc/irq. */
		for (int k = 0; k < n->nirqs; k++) {
			snprintf(path, sizeof(path), "/proc/irq/%d", t->irqs[n->irqs[k]].irq);
			CHECK_MSG(access(path, F_OK) == 0, "%s", path);
		}
	}
	if (d)
		closedir(d);
	CHECK_INT(t->nnics, links);

	/* Every numbered line of /proc/interrupts is an IRQ of the model, with
	 * an affinity equal to the kernel's smp_affinity_list. */
	FILE *pi = fopen("/proc/interrupts", "r");
	char line[4096];
	int numbered = 0;
	while (pi && fgets(line, sizeof(line), pi)) {
		int irq;
		if (sscanf(line, " %d:", &irq) != 1)
			continue;
		numbered++;
		nt_irq *q = nt_topology_irq(t, irq);
		CHECK_MSG(q != NULL, "irq %d", irq);
		char p[128], want[4096] = "";
		snprintf(p, sizeof(p), "/proc/irq/%d/smp_affinity_list", irq);
		FILE *f = fopen(p, "r");
		if (f && q) {
			if (fgets(want, sizeof(want), f))
				want[strcspn(want, "\n")] = '\0';
			nt_cpuset ws;
			nt_cpulist_parse(want, &ws);
			CHECK_STR(cpulist(&q->affinity), cpulist(&ws));
		}
		if (f)
			fclose(f);
	}
	if (pi)
		fclose(pi);
	CHECK_INT(t->nirqs, numbered);

	/* This project's machines: eth0 is virtio under a PCI function. */
	nt_nic *e = nt_topology_nic(t, "eth0");
	if (e && !e->is_virtual && e->nirqs > 0) {
		CHECK(e->pci_address[0] != '\0');
		CHECK(e->has_rings);
	}
	json_t *doc = nt_topology_to_json(t);
	CHECK(json_object_get(doc, "host") && json_is_true(json_object_get(json_object_get(doc, "host"), "live")));
	json_decref(doc);
	nt_topology_free(t);
	TEST_MAIN_END();
}
