#include "placement/app.h"
#include "placement/cpus.h"

#include <stdio.h>
#include <string.h>

int nt_placement_for(const nt_topology *t, const nt_nic *nic, int want, nt_placement *p)
{
	memset(p, 0, sizeof(*p));
	p->node = nic->numa_node;
	if (nic->numa_node < 0 || !nt_topology_node(t, nic->numa_node)) {
		snprintf(p->reason, sizeof(p->reason),
			 "the NUMA node of %s is unknown (numa_node -1 and no local CPU list on one node); "
			 "name the CPUs explicitly", nic->name);
		return NT_ENOTFOUND;
	}
	p->known = true;
	p->node_cpus = nt_topology_node(t, nic->numa_node)->cpus;
	/* The CPUs that actually take the interrupts: the effective affinity
	 * where the kernel reports one, otherwise the requested mask. */
	for (int i = 0; i < nic->nirqs; i++) {
		const nt_irq *q = &t->irqs[nic->irqs[i]];
		if (q->has_effective && !nt_cpuset_empty(&q->effective))
			nt_cpuset_or(&p->irq_cpus, &p->irq_cpus, &q->effective);
		else if (q->has_affinity)
			nt_cpuset_or(&p->irq_cpus, &p->irq_cpus, &q->affinity);
	}
	nt_cpuset free_cpus;
	nt_cpuset_andnot(&free_cpus, &p->node_cpus, &p->irq_cpus);
	if (nt_cpuset_empty(&free_cpus)) {
		/* Every CPU of the node serves the NIC (small hosts): share. */
		free_cpus = p->node_cpus;
		snprintf(p->reason, sizeof(p->reason),
			 "every CPU of node %d serves %s's interrupts; the application shares them", p->node,
			 nic->name);
	} else {
		snprintf(p->reason, sizeof(p->reason),
			 "CPUs of node %d that do not serve %s's interrupts, hyper-thread siblings of those last",
			 p->node, nic->name);
	}
	int limit = want > 0 ? want : NT_MAX_CPUS;
	int n = 0;
	for (int pass = 0; pass < 2 && n < limit; pass++) {
		for (int c = nt_cpuset_next(&free_cpus, 0); c >= 0 && n < limit; c = nt_cpuset_next(&free_cpus, c + 1)) {
			bool sib = nt_cpus_sibling_of_any(t, c, &p->irq_cpus);
			if ((pass == 0) == sib || nt_cpuset_isset(&p->app_cpus, c))
				continue;
			nt_cpuset_set(&p->app_cpus, c);
			n++;
		}
	}
	return 0;
}

json_t *nt_placement_to_json(const nt_topology *t, const nt_nic *nic, const nt_placement *p)
{
	char app[8192] = "";
	json_t *o = json_pack("{s:s, s:b, s:i, s:s}", "nic", nic->name, "known", p->known, "node", p->node, "reason",
			      p->reason);
	if (!p->known) {
		json_object_set_new(o, "node_cpus", json_null());
		json_object_set_new(o, "irq_cpus", json_null());
		json_object_set_new(o, "app_cpus", json_null());
		json_object_set_new(o, "numactl", json_null());
		json_object_set_new(o, "iperf3", json_null());
		json_object_set_new(o, "nettune_run", json_null());
		return o;
	}
	nt_cpulist_format(&p->app_cpus, app, sizeof(app));
	json_object_set_new(o, "node_cpus", nt_cpuset_json(&p->node_cpus));
	json_object_set_new(o, "irq_cpus", nt_cpuset_json(&p->irq_cpus));
	json_object_set_new(o, "app_cpus", json_string(app));
	char buf[8300];
	snprintf(buf, sizeof(buf), "numactl --physcpubind=%s --membind=%d", app, p->node);
	json_object_set_new(o, "numactl", json_string(buf));
	int first = nt_cpuset_next(&p->app_cpus, 0);
	snprintf(buf, sizeof(buf), "iperf3 -A %d", first);
	json_object_set_new(o, "iperf3", first >= 0 ? json_string(buf) : json_null());
	snprintf(buf, sizeof(buf), "nettune run --near %s --", nic->name);
	json_object_set_new(o, "nettune_run", json_string(buf));
	(void)t;
	return o;
}
