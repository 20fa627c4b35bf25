/* SPDX-License-Identifier: Apache-2.0 */
/* IRQ placement findings: IRQs served off their NIC's NUMA node
 * (irq-remote-node), several NICs' IRQs on one serving CPU
 * (irq-shared-first-cpu), no IRQ information at all (irq-info-missing), and
 * NICs whose node is unknown, so that their IRQs cannot be placed by
 * locality (nic-locality-unknown). */
#include "diagnose/diagnose_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cpu_node(const nt_topology *t, int cpu)
{
	if (!t->cpu_node || cpu < 0 || cpu >= t->ncpus_possible)
		return -1;
	return t->cpu_node[cpu];
}

static const nt_irq *nic_irq(const nt_topology *t, const nt_nic *nic, int k)
{
	int idx = nic->irqs[k];
	if (idx < 0 || idx >= t->nirqs)
		return NULL;
	return &t->irqs[idx];
}

static const char *node_source_name(nt_node_source s)
{
	switch (s) {
	case NT_SRC_SYSFS:
		return "sysfs";
	case NT_SRC_LOCAL_CPULIST:
		return "local_cpulist";
	default:
		return "unknown";
	}
}

/* A cpulist as a JSON string. A 4096-CPU set in its worst spelling
 * ("0,2,4,...") needs about 20 KB, so the buffer grows when needed. */
static json_t *cpulist_json(const nt_cpuset *s)
{
	char small[256];
	int len = nt_cpulist_format(s, small, sizeof(small));
	if (len >= 0)
		return json_string(small);
	size_t size = 32768;
	char *buf = malloc(size);
	if (!buf)
		return NULL;
	json_t *j = NULL;
	if (nt_cpulist_format(s, buf, size) >= 0)
		j = json_string(buf);
	free(buf);
	return j;
}

/* Cpulist into a caller buffer for messages; "..." when it does not fit. */
static const char *cpulist_str(const nt_cpuset *s, char *buf, size_t size)
{
	if (nt_cpulist_format(s, buf, size) < 0)
		snprintf(buf, size, "...");
	return buf;
}

/* The NUMA nodes of the CPUs of SET (unknown CPUs left out), ascending. A
 * cpuset doubles as the bitmap of node ids, which are small integers. */
static void nodes_of(const nt_topology *t, const nt_cpuset *set, nt_cpuset *nodes)
{
	nt_cpuset_zero(nodes);
	for (int cpu = nt_cpuset_next(set, 0); cpu >= 0; cpu = nt_cpuset_next(set, cpu + 1)) {
		int n = cpu_node(t, cpu);
		if (n >= 0)
			nt_cpuset_set(nodes, n);
	}
}

static json_t *int_set_json(const nt_cpuset *set)
{
	json_t *a = json_array();
	if (!a)
		return NULL;
	for (int i = nt_cpuset_next(set, 0); i >= 0; i = nt_cpuset_next(set, i + 1)) {
		if (json_array_append_new(a, json_integer(i)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* "0" or "0,1" for messages */
static void int_set_str(const nt_cpuset *set, char *buf, size_t size)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int i = nt_cpuset_next(set, 0); i >= 0 && off < size; i = nt_cpuset_next(set, i + 1)) {
		int w = snprintf(buf + off, size - off, "%s%d", off ? "," : "", i);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

int diag_check_irq_info(diag *d)
{
	if (d->t->have_irq_info)
		return 0;
	return diag_add_finding(d, "irq-info-missing", SEV_INFO, "host",
		json_pack("{s:b}", "have_irq_info", 0), NULL,
		"No IRQ information on this host (/proc/interrupts could not be read), so "
		"interrupt placement was not checked.");
}

/* Out of the box, a 4-node server served every NIC's interrupts on node 0,
 * wherever the NIC sat, and its CPU use grew faster than its throughput
 * with every node added (docs/field-reports.md#irq-remote-node). */
/* The fix that puts NIC's IRQs on its own node: {"interface", "policy":
 * "local"}, with CPU 0 kept out of the mask, as the x460 report did because
 * that CPU usually carries much of the other work
 * (docs/field-reports.md#cpu0-kept-free). Only worth saying when CPU 0 is on
 * this NIC's node and is not its only CPU. Every finding whose fix places a
 * NIC's IRQs uses this one rule: the fix profile keeps the first entry for
 * an interface, so two findings with two rules would give whichever came
 * first. New reference, or NULL. */
static json_t *local_rule(const nt_topology *t, const nt_nic *nic)
{
	json_t *rule = json_pack("{s:s, s:s}", "interface", nic->name, "policy", "local");
	const nt_numa_node *node = NULL;

	for (int n = 0; n < t->nnodes; n++)
		if (t->nodes[n].id == nic->numa_node)
			node = &t->nodes[n];
	if (rule && nic->numa_node >= 0 && cpu_node(t, 0) == nic->numa_node &&
		(!node || nt_cpuset_count(&node->cpus) > 1))
		json_object_set_new(rule, "exclude_cpus", json_string("0"));
	return rule;
}

int diag_check_irq_remote_node(diag *d)
{
	const nt_topology *t = d->t;
	if (!t->have_irq_info)
		return 0;
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *nic = &t->nics[i];
		if (nic->numa_node < 0)
			continue;
		json_t *irqs = json_array();
		if (!irqs)
			return -ENOMEM;
		int remote = 0, first_irq = -1;
		nt_cpuset first_aff, first_nodes;
		nt_cpuset_zero(&first_aff);
		nt_cpuset_zero(&first_nodes);
		for (int k = 0; k < nic->nirqs; k++) {
			const nt_irq *irq = nic_irq(t, nic, k);
			/* Kernel-managed IRQs are spread over all nodes by design and
			 * refuse affinity writes (EIO): reporting them would suggest
			 * a fix that cannot be applied. */
			if (!irq || !irq->has_affinity || irq->managed)
				continue;
			nt_cpuset off;
			nt_cpuset_zero(&off);
			for (int cpu = nt_cpuset_next(&irq->affinity, 0); cpu >= 0;
				cpu = nt_cpuset_next(&irq->affinity, cpu + 1)) {
				int n = cpu_node(t, cpu);
				/* A CPU of unknown node is not counted as remote: we
				 * cannot tell. */
				if (n >= 0 && n != nic->numa_node)
					nt_cpuset_set(&off, cpu);
			}
			if (nt_cpuset_empty(&off))
				continue;
			nt_cpuset nodes;
			nodes_of(t, &irq->affinity, &nodes);
			json_t *e = json_pack("{s:i, s:s, s:o, s:o, s:o}", "irq", irq->irq, "name",
				irq->name, "affinity", cpulist_json(&irq->affinity), "nodes",
				int_set_json(&nodes), "remote_cpus", cpulist_json(&off));
			if (e && irq->has_effective)
				json_object_set_new(e, "effective_affinity", cpulist_json(&irq->effective));
			if (json_array_append_new(irqs, e) < 0) {
				json_decref(irqs);
				return -ENOMEM;
			}
			if (remote++ == 0) {
				first_irq = irq->irq;
				first_aff = irq->affinity;
				first_nodes = nodes;
			}
		}
		if (remote == 0) {
			json_decref(irqs);
			continue;
		}

		json_t *rule = local_rule(t, nic);
		json_t *fix = json_pack("{s:[o]}", "irq_affinity", rule);
		if (!fix) {
			json_decref(irqs);
			return -ENOMEM;
		}

		json_t *ev = json_pack("{s:i, s:s, s:i, s:i, s:o}", "nic_node", nic->numa_node,
			"nic_node_source", node_source_name(nic->numa_node_source), "nic_irqs",
			nic->nirqs, "remote_irqs", remote, "irqs", irqs);

		char aff[128], nodes_s[64];
		cpulist_str(&first_aff, aff, sizeof(aff));
		int_set_str(&first_nodes, nodes_s, sizeof(nodes_s));
		char more[64] = "";
		if (remote > 1)
			snprintf(more, sizeof(more), " and %d more", remote - 1);
		bool one_cpu = nt_cpuset_count(&first_aff) == 1;
		bool one_node = nt_cpuset_count(&first_nodes) == 1;
		int err = diag_add_finding(d, "irq-remote-node", SEV_WARNING, nic->name, ev, fix,
			"%s is on NUMA node %d, but %d of its %d IRQs are served by CPUs of "
			"other nodes (IRQ %d on CPU%s %s of node%s %s%s); each interrupt then "
			"crosses the interconnect, costing throughput and CPU (see "
			"docs/field-reports.md#irq-remote-node).",
			nic->name, nic->numa_node, remote, nic->nirqs, first_irq, one_cpu ? "" : "s",
			aff, one_node ? "" : "s", nodes_s, more);
		if (err)
			return err;
	}
	return 0;
}

typedef struct first_cpu_ref {
	int cpu;
	int irq_idx;
} first_cpu_ref;

static int first_cpu_cmp(const void *pa, const void *pb)
{
	const first_cpu_ref *a = pa, *b = pb;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	return a->irq_idx < b->irq_idx ? -1 : a->irq_idx > b->irq_idx;
}

static int shared_first_cpu_finding(diag *d, const first_cpu_ref *g, int ng)
{
	const nt_topology *t = d->t;
	int err = -ENOMEM;
	json_t *nics = json_array(), *irqs = json_array(), *rules = json_array();
	bool *seen = calloc((size_t)t->nnics, sizeof(*seen));
	char names[256] = "";
	size_t off = 0;
	int nnics = 0;
	if (!nics || !irqs || !rules || !seen)
		goto out;

	for (int k = 0; k < ng; k++) {
		const nt_irq *irq = &t->irqs[g[k].irq_idx];
		const nt_nic *nic = &t->nics[irq->nic];
		if (json_array_append_new(irqs,
			    json_pack("{s:i, s:s, s:s, s:o}", "irq", irq->irq, "nic", nic->name,
				    "name", irq->name, "affinity", cpulist_json(&irq->affinity))) < 0)
			goto out;
		if (seen[irq->nic])
			continue;
		seen[irq->nic] = true;
		nnics++;
		if (json_array_append_new(nics, json_string(nic->name)) < 0)
			goto out;
		if (off < sizeof(names)) {
			int w = snprintf(names + off, sizeof(names) - off, "%s%s", off ? ", " : "",
				nic->name);
			if (w > 0)
				off += (size_t)w;
		}
		/* policy "local" gives NICs that share a node different first
		 * CPUs; a NIC of unknown locality is not guessed at. */
		if (nic->numa_node >= 0 && json_array_append_new(rules, local_rule(t, nic)) < 0)
			goto out;
	}

	int cpu = g[0].cpu;
	json_t *ev = json_pack("{s:i, s:i, s:O, s:O}", "cpu", cpu, "node", cpu_node(t, cpu),
		"nics", nics, "irqs", irqs);
	json_t *fix = NULL;
	if (json_array_size(rules) && !(fix = json_pack("{s:O}", "irq_affinity", rules))) {
		json_decref(ev);
		goto out;
	}
	char subject[32];
	snprintf(subject, sizeof(subject), "cpu %d", cpu);
	err = diag_add_finding(d, "irq-shared-first-cpu", SEV_WARNING, subject, ev, fix,
		"CPU %d is the first CPU in the affinity of %d IRQs of %d NICs (%s); where "
		"an interrupt goes to the first CPU of its mask, this one CPU serves them "
		"all (see docs/field-reports.md#first-cpu-serves).",
		cpu, ng, nnics, names);
out:
	json_decref(nics);
	json_decref(irqs);
	json_decref(rules);
	free(seen);
	return err;
}

/* On the x460 a multi-CPU mask was served by its first CPU only, so two
 * NICs whose masks start at the same CPU share one CPU; the Ceph report put
 * every IRQ on 000300,00000000 (CPUs 40,41), by that rule all on CPU 40
 * (docs/field-reports.md#first-cpu-serves). The serving CPU is the single
 * effective CPU where the kernel reports one. */
int diag_check_irq_shared_first_cpu(diag *d)
{
	const nt_topology *t = d->t;
	if (!t->have_irq_info || t->nirqs == 0)
		return 0;
	first_cpu_ref *refs = calloc((size_t)t->nirqs, sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	int n = 0, err = 0;
	for (int i = 0; i < t->nirqs; i++) {
		const nt_irq *irq = &t->irqs[i];
		/* Managed IRQs cannot be moved (see diag_check_irq_remote_node). */
		if (irq->nic < 0 || irq->nic >= t->nnics || !irq->has_affinity || irq->managed)
			continue;
		/* Where the kernel reports a single effective CPU, that is the
		 * CPU serving the IRQ (x86's vector allocator spreads masks that
		 * old hardware served from their first CPU); otherwise, as on
		 * the x460 of docs/field-reports.md#first-cpu-serves, the first
		 * CPU of the mask. */
		int first = irq->has_effective && nt_cpuset_count(&irq->effective) == 1
				    ? nt_cpuset_next(&irq->effective, 0)
				    : nt_cpuset_next(&irq->affinity, 0);
		if (first < 0)
			continue;
		refs[n++] = (first_cpu_ref){ .cpu = first, .irq_idx = i };
	}
	qsort(refs, (size_t)n, sizeof(*refs), first_cpu_cmp);
	for (int s = 0; s < n && !err;) {
		int e = s;
		bool several = false;
		int nic0 = t->irqs[refs[s].irq_idx].nic;
		while (e < n && refs[e].cpu == refs[s].cpu) {
			if (t->irqs[refs[e].irq_idx].nic != nic0)
				several = true;
			e++;
		}
		if (several)
			err = shared_first_cpu_finding(d, refs + s, e - s);
		s = e;
	}
	free(refs);
	return err;
}

int diag_check_locality(diag *d)
{
	const nt_topology *t = d->t;
	/* On a single-node host every CPU and all memory are local to every
	 * NIC, so not knowing a NIC's node changes nothing. */
	if (t->nnodes <= 1)
		return 0;
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *nic = &t->nics[i];
		if (!diag_nic_is_physical(nic) || nic->numa_node_source != NT_SRC_UNKNOWN)
			continue;
		json_t *ev = json_pack("{s:i, s:s, s:s, s:i}", "numa_node", nic->numa_node,
			"numa_node_source", "unknown", "pci_address", nic->pci_address, "host_nodes",
			t->nnodes);
		int err = diag_add_finding(d, "nic-locality-unknown", SEV_INFO, nic->name, ev, NULL,
			"The NUMA node of %s is unknown (the kernel reports %d and gives no local "
			"CPU list) on a host with %d nodes; its IRQs cannot be placed by locality.",
			nic->name, nic->numa_node, t->nnodes);
		if (err)
			return err;
	}
	return 0;
}
