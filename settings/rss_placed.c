/* SPDX-License-Identifier: Apache-2.0 */
/* RSS "queues": "placed": the RX queues whose IRQs this profile places
 * on a node and off the CPUs it reserves for applications, in turn.
 *
 * The node is the NIC's own, so that no flow is received on a queue
 * served far from the NIC; or, with "node": N, node N's, so that one
 * profile gives each application the queues of its own node: IRQs dealt
 * over two nodes ("cpus": "0-8,32-39" on a 17-IRQ mlx5 port), context 1
 * on node 0's queues and context 2 on node 1's, and flow rules sending
 * each application's ports into its context (issue 41). An IRQ the
 * profile does not place counts where it is now.
 *
 * No queue on the node: the NIC's own table is left as it is, with a
 * warning (its table still reaches every queue, and a glob may match
 * NICs it does not suit); a context is refused, since one not made
 * leaves the flow rules into it nowhere to send (the rule's insert fails
 * at apply) and one kept as it is would go on sending the application's
 * flows where the profile says they must not go. */
#include "settings/rss_placed.h"
#include "host/queues.h"
#include "kernel/queues.h"
#include "placement/irq.h"

#include <stdio.h>
#include <string.h>

int nt_rss_placed_pick(const nt_cpuset *const *cpus, int nq, const nt_cpuset *want, const nt_cpuset *reserved,
		       nt_cpuset *on, nt_cpuset *off)
{
	int n = 0;
	nt_cpuset_zero(on);
	nt_cpuset_zero(off);
	for (int q = 0; q < nq && q < NT_MAX_CPUS; q++) {
		nt_cpuset bad;
		const nt_cpuset *c = cpus[q];
		if (c && reserved)
			nt_cpuset_and(&bad, c, reserved);
		if (!c || nt_cpuset_empty(c) || !nt_cpuset_subset(c, want) || (reserved && !nt_cpuset_empty(&bad))) {
			nt_cpuset_set(off, q);
			continue;
		}
		nt_cpuset_set(on, q);
		n++;
	}
	return n;
}

void nt_rss_irq_list_format(const int *irqs, int n, char *out, size_t size)
{
	if (size == 0)
		return;
	out[0] = '\0';
	if (n <= 0)
		return;
	int step = n > 1 ? irqs[1] - irqs[0] : 0;
	bool run = n > 2 && (step == 1 || step == -1);
	for (int i = 2; run && i < n; i++)
		run = irqs[i] - irqs[i - 1] == step;
	if (run) {
		snprintf(out, size, "%d..%d", irqs[0], irqs[n - 1]);
		return;
	}
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		char one[16];
		int w = snprintf(one, sizeof(one), "%s%d", i ? "," : "", irqs[i]);
		/* Room for this one and a closing ",...". */
		if (w < 0 || at + (size_t)w + 5 > size) {
			snprintf(out + at, size - at, ",...");
			return;
		}
		memcpy(out + at, one, (size_t)w + 1);
		at += (size_t)w;
	}
}

void nt_rss_placed_validate(nt_section_check *c, const json_t *e, const char *base)
{
	json_t *nd = json_object_get(e, "node");
	const char *ql = json_string_value(json_object_get(e, "queues"));
	char path[NT_JSONPATH_MAX], list[256];
	if (!nd)
		return;
	snprintf(path, sizeof(path), "%s.node", base);
	if (!json_is_integer(nd) || json_integer_value(nd) < 0 || json_integer_value(nd) >= NT_MAX_CPUS) {
		nt_sc_error(c, path, "'node' is a NUMA node id, an integer from 0 to %d", NT_MAX_CPUS - 1);
		return;
	}
	if (!ql || strcmp(ql, "placed") != 0) {
		nt_sc_error(c, path, "'node' goes with \"queues\": \"placed\" (the RX queues whose IRQs this profile "
				     "places on that node); 'equal', 'weights' and a list of queues name their queues "
				     "themselves");
		return;
	}
	if (!c->t || nt_topology_node(c->t, (int)json_integer_value(nd)))
		return;
	size_t at = 0;
	list[0] = '\0';
	for (int i = 0; i < c->t->nnodes; i++) {
		int w = snprintf(list + at, sizeof(list) - at, "%s%d", i ? ", " : "", c->t->nodes[i].id);
		if (w < 0 || (size_t)w >= sizeof(list) - at)
			break;
		at += (size_t)w;
	}
	nt_sc_error(c, path, "node %lld is not a NUMA node of this host (its nodes: %s)",
		    (long long)json_integer_value(nd), list[0] ? list : "none known");
}

/* Where the entry's queues must be served, as the plan says it: "its node
 * 1", "node 0 (the NIC's is 1)", "its local CPUs". False when unknown. */
static bool wanted(const nt_section_plan *p, const nt_nic *nic, const json_t *nd, nt_cpuset *want, char *what,
		   size_t size)
{
	if (nd) {
		int id = (int)json_integer_value(nd);
		const nt_numa_node *n = nt_topology_node(p->t, id);
		if (!n)
			return false;
		*want = n->cpus;
		if (id == nic->numa_node)
			snprintf(what, size, "its node %d", id);
		else if (nic->numa_node >= 0)
			snprintf(what, size, "node %d (the NIC's is %d)", id, nic->numa_node);
		else
			snprintf(what, size, "node %d (the NIC's is not known)", id);
		return true;
	}
	if (!nt_nic_local_cpus(p->t, nic, want))
		return false;
	if (nic->numa_node >= 0)
		snprintf(what, size, "its node %d", nic->numa_node);
	else
		snprintf(what, size, "its node (its local CPUs)");
	return true;
}

int nt_rss_placed_weights(nt_section_plan *p, const json_t *e, const nt_nic *nic, int rings, uint32_t *w,
			  char *refusal, size_t rsize)
{
	const char *res = p->reserved ? json_string_value(json_object_get(p->reserved, nic->name)) : NULL;
	json_t *nd = json_object_get(e, "node"), *cx = json_object_get(e, "context");
	const nt_cpuset *cpus[NT_QUEUES_MAX] = { 0 };
	int irqs[NT_QUEUES_MAX], nirq = 0, planned = 0;
	nt_cpuset want, reserved, on, off;
	char target[16], what[64], table[48], ql[NT_VALUE_MAX], ol[NT_VALUE_MAX], il[160];
	refusal[0] = '\0';
	nt_cpuset_zero(&reserved);
	if (res)
		nt_cpulist_parse(res, &reserved);
	if (cx)
		snprintf(table, sizeof(table), "the table of RSS context %lld", (long long)json_integer_value(cx));
	else
		snprintf(table, sizeof(table), "the RSS table");
	if (!wanted(p, nic, nd, &want, what, sizeof(what))) {
		if (cx)
			snprintf(refusal, rsize, "%s: RSS context %lld \"placed\": neither its NUMA node nor its local "
						 "CPUs are known; give its queues (\"4-7\") or a 'node'",
				 nic->name, (long long)json_integer_value(cx));
		else
			nt_desire_warn(p, "%s: neither its NUMA node nor its local CPUs are known; RSS \"placed\" left out",
				       nic->name);
		return 0;
	}
	if (rings > NT_QUEUES_MAX)
		rings = NT_QUEUES_MAX;
	for (int q = 0; q < rings; q++) {
		int idx = nt_plan_queue_irq(p->reads, p->t, nic, q, false);
		cpus[q] = NULL;
		if (idx < 0)
			continue;
		const nt_irq *irq = &p->t->irqs[idx];
		snprintf(target, sizeof(target), "%d", irq->irq);
		const nt_desired *d = nt_desire_get(p, &nt_setting_irq_affinity, target);
		cpus[q] = d ? &d->value.cpus : &irq->affinity;
	}
	int n = nt_rss_placed_pick(cpus, rings, &want, &reserved, &on, &off);
	for (int q = 0; q < rings; q++) {
		w[q] = nt_cpuset_isset(&on, q) ? 1 : 0;
		if (!w[q])
			continue;
		int idx = nt_plan_queue_irq(p->reads, p->t, nic, q, false);
		snprintf(target, sizeof(target), "%d", p->t->irqs[idx].irq);
		planned += nt_desire_get(p, &nt_setting_irq_affinity, target) != NULL;
		irqs[nirq++] = p->t->irqs[idx].irq;
	}
	if (n == 0) {
		if (cx)
			snprintf(refusal, rsize,
				 "%s: RSS context %lld \"placed\": no RX queue's IRQ is on %s off reserved CPUs; the "
				 "flow rules into it would have nowhere to go: place some of its IRQs there "
				 "(irq_affinity \"cpus\")",
				 nic->name, (long long)json_integer_value(cx), what);
		else
			nt_desire_warn(p, "%s: RSS \"placed\": no RX queue's IRQ is on %s off reserved CPUs; left out",
				       nic->name, what);
		return 0;
	}
	nt_cpulist_format(&on, ql, sizeof(ql));
	nt_cpulist_format(&off, ol, sizeof(ol));
	nt_rss_irq_list_format(irqs, nirq, il, sizeof(il));
	nt_desire_warn(p, "%s: %s sends flows to RX queues %s, whose IRQs %s are on %s %s%s%s%s", nic->name, table, ql,
		       il, what,
		       planned ? "as this profile's irq_affinity steps place them (applied first)" :
				 "as they are now (this profile does not place them)",
		       !nt_cpuset_empty(&off) ? "; not to queues " : "", ol[0] ? ol : "",
		       ol[0] ? " (their IRQs are off that node, on reserved CPUs, or unknown)" : "");
	return n;
}
