/* SPDX-License-Identifier: Apache-2.0 */
/* Finding things in a host model: a NIC, an IRQ, a bond or a node by name
 * or number, the nodes of a CPU set, the cores of a node. */
#include "host/topology.h"

#include <string.h>

/* ---------------------------------------------------------------- lookups */

nt_nic *nt_topology_nic(const nt_topology *t, const char *name)
{
	int i = nt_topology_nic_index(t, name);
	return i >= 0 ? &t->nics[i] : NULL;
}

int nt_topology_nic_index(const nt_topology *t, const char *name)
{
	for (int i = 0; i < t->nnics; i++)
		if (strcmp(t->nics[i].name, name) == 0)
			return i;
	return -1;
}

nt_irq *nt_topology_irq(const nt_topology *t, int irq)
{
	int lo = 0, hi = t->nirqs - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (t->irqs[mid].irq == irq)
			return &t->irqs[mid];
		if (t->irqs[mid].irq < irq)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

nt_bond *nt_topology_bond(const nt_topology *t, const char *name)
{
	for (int i = 0; i < t->nbonds; i++)
		if (strcmp(t->bonds[i].name, name) == 0)
			return &t->bonds[i];
	return NULL;
}

const nt_numa_node *nt_topology_node(const nt_topology *t, int id)
{
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].id == id)
			return &t->nodes[i];
	return NULL;
}

int nt_topology_cpu_node(const nt_topology *t, int cpu)
{
	if (cpu < 0 || cpu >= t->ncpus_possible)
		return -1;
	return t->cpu_node[cpu];
}

bool nt_topology_node_set(const nt_topology *t, const nt_cpuset *set, nt_cpuset *nodes)
{
	bool unknown = false;
	nt_cpuset_zero(nodes);
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1)) {
		int n = nt_topology_cpu_node(t, c);
		if (n < 0)
			unknown = true;
		else
			nt_cpuset_set(nodes, n);
	}
	return unknown;
}

json_t *nt_topology_nodes_of(const nt_topology *t, const nt_cpuset *set)
{
	json_t *a = json_array();
	nt_cpuset seen;
	bool unknown = nt_topology_node_set(t, set, &seen);
	for (int n = nt_cpuset_next(&seen, 0); n >= 0; n = nt_cpuset_next(&seen, n + 1))
		json_array_append_new(a, json_integer(n));
	if (unknown)
		json_array_append_new(a, json_integer(-1));
	return a;
}

bool nt_topology_set_on_node(const nt_topology *t, const nt_cpuset *set, int node)
{
	if (nt_cpuset_empty(set))
		return false;
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1))
		if (nt_topology_cpu_node(t, c) != node)
			return false;
	return true;
}

bool nt_node_next_core(const nt_topology *t, const nt_numa_node *n, nt_cpuset *seen, int *from,
		       nt_cpuset *core)
{
	for (int c = nt_cpuset_next(&n->cpus, *from); c >= 0; c = nt_cpuset_next(&n->cpus, c + 1)) {
		if (nt_cpuset_isset(seen, c) || !nt_cpuset_isset(&t->cpus_online, c))
			continue;
		nt_cpuset_zero(core);
		nt_cpuset_set(core, c);
		nt_cpuset_set(seen, c);
		bool known = t->cpu_core && c < t->ncpus_possible && t->cpu_core[c] >= 0;
		for (int d = nt_cpuset_next(&n->cpus, c + 1); d >= 0 && known;
		     d = nt_cpuset_next(&n->cpus, d + 1)) {
			if (d < t->ncpus_possible && !nt_cpuset_isset(seen, d) &&
			    nt_cpuset_isset(&t->cpus_online, d) && t->cpu_core[d] == t->cpu_core[c] &&
			    t->cpu_package[d] == t->cpu_package[c]) {
				nt_cpuset_set(core, d);
				nt_cpuset_set(seen, d);
			}
		}
		*from = c + 1;
		return true;
	}
	return false;
}
