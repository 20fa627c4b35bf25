/* SPDX-License-Identifier: Apache-2.0 */
#include "placement/app.h"
#include "placement/cpus.h"

#include <stdio.h>
#include <string.h>

/* Whether SET touches more than one node: such a mask (the kernel's
 * default, every CPU) says where an IRQ may go, not which CPU serves it. */
static bool spans_nodes(const nt_topology *t, const nt_cpuset *set)
{
	int n = 0;
	for (int i = 0; i < t->nnodes; i++)
		n += nt_cpuset_intersects(set, &t->nodes[i].cpus);
	return n > 1;
}

/* The CPUs serving IRQ Q: the effective affinity where the kernel reports
 * one, otherwise the requested mask when it is a placement. */
static void serving(const nt_topology *t, const nt_irq *q, nt_cpuset *out)
{
	if (q->has_effective && !nt_cpuset_empty(&q->effective))
		nt_cpuset_or(out, out, &q->effective);
	else if (q->has_affinity && !spans_nodes(t, &q->affinity))
		nt_cpuset_or(out, out, &q->affinity);
}

/* The CPUs the NAPI threads of the NIC at index NIC (every NIC: -1) are
 * pinned to, into OUT: a thread allowed on more than one node is not
 * placed (the kernel's default is every CPU). */
static void napi_serving(const nt_topology *t, const nt_host_napi *h, int nic, nt_cpuset *out)
{
	for (size_t i = 0; h && i < h->nd.nnapis; i++) {
		const nt_napi *n = &h->napis[i];
		if (n->pid <= 0 || !n->has_cpus || (nic >= 0 && n->nic != nic) || spans_nodes(t, &n->thread_cpus))
			continue;
		nt_cpuset_or(out, out, &n->thread_cpus);
	}
}

/* Up to LIMIT CPUs of FREE into P->app_cpus, those sharing a core with a
 * CPU of BUSY last. */
static void take(const nt_topology *t, const nt_cpuset *free_cpus, const nt_cpuset *busy, int limit,
		 nt_placement *p)
{
	int n = 0;
	for (int pass = 0; pass < 2 && n < limit; pass++) {
		for (int c = nt_cpuset_next(free_cpus, 0); c >= 0 && n < limit; c = nt_cpuset_next(free_cpus, c + 1)) {
			bool sib = nt_cpus_sibling_of_any(t, c, busy);
			if ((pass == 0) == sib || nt_cpuset_isset(&p->app_cpus, c))
				continue;
			nt_cpuset_set(&p->app_cpus, c);
			n++;
		}
	}
}

/* The NICs NIC stands for: a bond's ports, a VLAN's lower link (or that
 * bond's ports), or itself. */
static int members(const nt_topology *t, const nt_nic *nic, const nt_nic **out, int max, char *ports,
		   size_t psize)
{
	const nt_bond *b = nic->is_bond ? nt_topology_bond(t, nic->name) : NULL;
	int n = 0;
	size_t len = 0;
	ports[0] = '\0';
	const nt_nic *low = nic->lower[0] ? nt_topology_nic(t, nic->lower) : NULL;
	if (low && low != nic && low->lower[0] == '\0') {
		/* A VLAN stands for the link it sits on (itself maybe a bond). */
		snprintf(ports, psize, "%s", low->name);
		int n2 = members(t, low, out, max, ports, psize);
		if (!ports[0])
			snprintf(ports, psize, "%s", low->name);
		return n2;
	}
	if (!b || b->nslaves == 0) {
		out[0] = nic;
		return 1;
	}
	for (int i = 0; i < b->nslaves && n < max; i++) {
		const nt_nic *m = nt_topology_nic(t, b->slaves[i]);
		if (!m)
			continue;
		out[n++] = m;
		len += (size_t)snprintf(ports + len, len < psize ? psize - len : 0, "%s%s", len ? "," : "", m->name);
	}
	if (n == 0)
		out[n++] = nic;
	return n;
}

int nt_placement_for(const nt_topology *t, const nt_nic *nic, int want, const nt_placement_hint *hint,
		     nt_placement *p)
{
	static const nt_placement_hint none = { 0 };
	const nt_nic *mem[64];
	char unknown[256] = "";
	size_t ulen = 0;
	int limit = want > 0 ? want : NT_MAX_CPUS;

	if (!hint)
		hint = &none;
	memset(p, 0, sizeof(*p));
	p->node = -1;
	p->rule = "unknown";
	int nm = members(t, nic, mem, 64, p->ports, sizeof(p->ports));
	for (int i = 0; i < nm; i++) {
		const nt_numa_node *node = mem[i]->numa_node >= 0 ? nt_topology_node(t, mem[i]->numa_node) : NULL;
		if (!node) {
			ulen += (size_t)snprintf(unknown + ulen, ulen < sizeof(unknown) ? sizeof(unknown) - ulen : 0,
						 "%s%s", ulen ? ", " : "", mem[i]->name);
			continue;
		}
		if (p->node < 0)
			p->node = node->id;
		nt_cpuset_set(&p->nodes, node->id);
		nt_cpuset_or(&p->node_cpus, &p->node_cpus, &node->cpus);
		for (int q = 0; q < mem[i]->nirqs; q++)
			serving(t, &t->irqs[mem[i]->irqs[q]], &p->irq_cpus);
		napi_serving(t, hint->napi, (int)(mem[i] - t->nics), &p->napi_cpus);
		const char *r = json_string_value(json_object_get(hint->reserved, mem[i]->name));
		nt_cpuset res;
		if (r && nt_cpulist_parse(r, &res) == 0) {
			nt_cpuset_and(&res, &res, &node->cpus);
			nt_cpuset_or(&p->app_cpus, &p->app_cpus, &res);
		}
	}

	nt_cpuset_or(&p->irq_cpus, &p->irq_cpus, &p->napi_cpus);
	p->napi_known = hint->napi != NULL;
	if (hint->given) {
		nt_cpuset_and(&p->app_cpus, hint->given, &t->cpus_online);
		nt_cpuset_zero(&p->nodes);
		p->node = -1;
		for (int c = nt_cpuset_next(&p->app_cpus, 0); c >= 0; c = nt_cpuset_next(&p->app_cpus, c + 1)) {
			int nd = nt_topology_cpu_node(t, c);
			if (nd >= 0) {
				nt_cpuset_set(&p->nodes, nd);
				if (p->node < 0)
					p->node = nd;
			}
		}
		p->known = !nt_cpuset_empty(&p->app_cpus);
		p->rule = "given";
		snprintf(p->reason, sizeof(p->reason), p->known ? "the CPUs given (--cpus-list)"
							   : "none of the CPUs given (--cpus-list) is online");
		return p->known ? 0 : NT_ENOTFOUND;
	}
	if (p->node < 0) {
		nt_cpuset_zero(&p->app_cpus);
		snprintf(p->reason, sizeof(p->reason),
			 "the NUMA node of %s is unknown (numa_node -1 and no local CPU list on one node%s%s); "
			 "name the CPUs with --cpus-list", nic->name, ulen && strcmp(unknown, nic->name) ? ": " : "",
			 ulen && strcmp(unknown, nic->name) ? unknown : "");
		return NT_ENOTFOUND;
	}
	p->known = true;

	if (!nt_cpuset_empty(&p->app_cpus)) {
		/* The reservation is the profile's answer to this question: its
		 * IRQ placement keeps these CPUs and their cores free. */
		nt_cpuset res = p->app_cpus;
		nt_cpuset_zero(&p->app_cpus);
		take(t, &res, &p->irq_cpus, limit, p);
		p->rule = "reserved";
		int have = nt_cpuset_count(&res);
		snprintf(p->reason, sizeof(p->reason), "the CPUs %s reserved for %s (reserve_app_cpus)%s",
			 hint->source ? hint->source : "the profile", nic->name,
			 want > have ? "; fewer than asked for: the profile reserved no more" : "");
		return 0;
	}

	/* CPUs serving any NIC's interrupts or running its NAPI threads, and
	 * the excluded ones, are not free: the application would compete with
	 * another NIC's packet processing or with what the operator kept for
	 * housekeeping. */
	nt_cpuset busy, free_cpus;
	nt_cpuset_zero(&busy);
	for (int i = 0; i < t->nirqs; i++)
		if (t->irqs[i].nic >= 0)
			serving(t, &t->irqs[i], &busy);
	nt_cpuset threads;
	nt_cpuset_zero(&threads);
	napi_serving(t, hint->napi, -1, &threads);
	nt_cpuset_or(&busy, &busy, &threads);
	const char *or_threads = nt_cpuset_empty(&threads) ? "" : " or run NAPI threads";
	nt_cpuset_andnot(&free_cpus, &p->node_cpus, &busy);
	if (hint->exclude)
		nt_cpuset_andnot(&free_cpus, &free_cpus, hint->exclude);
	if (!nt_cpuset_empty(&free_cpus)) {
		take(t, &free_cpus, &busy, limit, p);
		p->rule = "node-free";
		snprintf(p->reason, sizeof(p->reason),
			 "CPUs of node %d%s that serve no NIC's interrupts%s%s, hyper-thread siblings of those last",
			 p->node, nt_cpuset_count(&p->nodes) > 1 ? " and the other nodes of its ports" : "", or_threads,
			 hint->exclude && !nt_cpuset_empty(hint->exclude) ? " and are not excluded (exclude_cpus)" : "");
		return 0;
	}
	nt_cpuset_andnot(&free_cpus, &p->node_cpus, &p->irq_cpus);
	if (hint->exclude)
		nt_cpuset_andnot(&free_cpus, &free_cpus, hint->exclude);
	p->rule = "node-shared";
	if (nt_cpuset_empty(&free_cpus)) {
		/* Every CPU of the node serves the NIC (small hosts): share. */
		free_cpus = p->node_cpus;
		snprintf(p->reason, sizeof(p->reason),
			 "every CPU of node %d serves %s's interrupts%s; the application shares them", p->node,
			 nic->name, nt_cpuset_empty(&p->napi_cpus) ? "" : " or NAPI threads");
	} else {
		snprintf(p->reason, sizeof(p->reason),
			 "every CPU of node %d serves some NIC's interrupts%s; these serve none of %s's%s, "
			 "hyper-thread siblings of those last", p->node, or_threads, nic->name,
			 nt_cpuset_empty(&p->napi_cpus) ? "" : " nor run its NAPI threads");
	}
	take(t, &free_cpus, &p->irq_cpus, limit, p);
	return 0;
}

json_t *nt_placement_to_json(const nt_topology *t, const nt_nic *nic, const nt_placement *p, const char *source)
{
	char app[8192] = "", nodes[256] = "";
	json_t *o = json_pack("{s:s, s:b, s:i, s:s, s:s}", "nic", nic->name, "known", p->known, "node", p->node,
			      "rule", p->rule, "reason", p->reason);
	json_object_set_new(o, "source", source && !strcmp(p->rule, "reserved") ? json_string(source) : json_null());
	json_object_set_new(o, "ports", p->ports[0] ? json_string(p->ports) : json_null());
	if (!p->known) {
		json_object_set_new(o, "nodes", json_null());
		json_object_set_new(o, "node_cpus", json_null());
		json_object_set_new(o, "irq_cpus", json_null());
		json_object_set_new(o, "napi_cpus", json_null());
		json_object_set_new(o, "app_cpus", json_null());
		json_object_set_new(o, "numactl", json_null());
		json_object_set_new(o, "iperf3", json_null());
		json_object_set_new(o, "nettune_run", json_null());
		return o;
	}
	nt_cpulist_format(&p->app_cpus, app, sizeof(app));
	nt_cpulist_format(&p->nodes, nodes, sizeof(nodes));
	json_object_set_new(o, "nodes", json_string(nodes));
	json_object_set_new(o, "node_cpus", nt_cpuset_json(&p->node_cpus));
	json_object_set_new(o, "irq_cpus", nt_cpuset_json(&p->irq_cpus));
	json_object_set_new(o, "napi_cpus", p->napi_known ? nt_cpuset_json(&p->napi_cpus) : json_null());
	json_object_set_new(o, "app_cpus", json_string(app));
	char buf[8400];
	if (nodes[0])
		snprintf(buf, sizeof(buf), "numactl --physcpubind=%s --membind=%s", app, nodes);
	else
		snprintf(buf, sizeof(buf), "numactl --physcpubind=%s", app);
	json_object_set_new(o, "numactl", json_string(buf));
	int first = nt_cpuset_next(&p->app_cpus, 0);
	snprintf(buf, sizeof(buf), "iperf3 -A %d", first);
	json_object_set_new(o, "iperf3", first >= 0 ? json_string(buf) : json_null());
	snprintf(buf, sizeof(buf), "nettune run --near %s --", nic->name);
	json_object_set_new(o, "nettune_run", json_string(buf));
	(void)t;
	return o;
}
