/* SPDX-License-Identifier: Apache-2.0 */
/* The live host (--root /) cross-checked against libnuma, sysconf and the
 * kernel's own files read independently here; and one read of the host
 * asking about every link on one rtnetlink socket. */
#include "kernel/ctx.h"
#include "kernel/kernel.h"
#include "kernel/link.h"
#include "kernel/rtlink.h"
#include "host/topology.h"
#include "harness.h"
#include "live/live_fds.h"

#include <dirent.h>
#include <errno.h>
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

/* Within one read (nt_kernel_read_begin) the link dump and the link
 * report of every NIC go over one socket, opened at the first question
 * and closed by the read's end; each answers as it does outside a read,
 * on a socket of its own. A link that is not there (-ENODEV, the kernel's
 * whole answer) leaves the read's socket open for the next question. */
static void one_socket_a_read(const nt_ctx *live, const nt_topology *t)
{
	nt_ctx rd = *live;
	nt_link_info *links = NULL;
	int nlinks = 0, fds = open_fds();

	CHECK_INT(nt_kernel_read_begin(&rd), 0);
	CHECK_INT(open_fds(), fds); /* nothing opened before a question */
	CHECK_INT(nt_link_dump(&rd, &links, &nlinks), 0);
	CHECK_INT(nlinks, t->nnics);
	free(links);
	for (int i = 0; i < t->nnics; i++) {
		const char *name = t->nics[i].name;
		nt_link_params p, p0;
		nt_qdisc q, q0;
		int qres, qres0;
		CHECK_INT(nt_rtlink_report(&rd, name, &p, &q, &qres), 0);
		CHECK_INT(nt_rtlink_report(live, name, &p0, &q0, &qres0), 0);
		CHECK_INT(p.ifindex, t->nics[i].ifindex);
		CHECK_INT(p.ifindex, p0.ifindex);
		CHECK_INT(p.mtu, p0.mtu);
		CHECK_INT(p.min_mtu, p0.min_mtu);
		CHECK_INT(p.max_mtu, p0.max_mtu);
		CHECK_INT(p.txqlen, p0.txqlen);
		CHECK_INT(p.num_tx_queues, p0.num_tx_queues);
		CHECK_INT(qres, qres0);
		CHECK_STR(q.kind, q0.kind);
		CHECK_STR(q.child, q0.child);
		CHECK_INT(q.dflt, q0.dflt);
	}
	nt_link_params gone;
	CHECK_INT(nt_rtlink_get(&rd, "nt-nosuch0", &gone), -ENODEV);
	CHECK_INT(open_fds(), fds + 1);
	nt_kernel_read_end(&rd);
	CHECK(rd.rtnl == NULL);
	CHECK_INT(open_fds(), fds);
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
	one_socket_a_read(&ctx, t);
	nt_topology_free(t);
	TEST_MAIN_END();
}
