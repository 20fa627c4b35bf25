/* SPDX-License-Identifier: Apache-2.0 */
/* The host model's JSON documents built with jansson, for callers that
 * edit or embed them. host/topology_json.c writes the same documents
 * straight into text, and tests/unit/test_topology_json.c holds the two
 * to the same bytes: a member added here is added there. */
#include "host/topology.h"

#include <stdio.h>

/* ------------------------------------------------------------------- JSON */

json_t *nt_cpuset_json(const nt_cpuset *s)
{
	char buf[16384];
	if (nt_cpulist_format(s, buf, sizeof(buf)) < 0)
		return json_null();
	return json_string(buf);
}

static const char *source_name(nt_node_source s)
{
	switch (s) {
	case NT_SRC_SYSFS: return "sysfs";
	case NT_SRC_LOCAL_CPULIST: return "local_cpulist";
	default: return "unknown";
	}
}

json_t *nt_irq_to_json(const nt_topology *t, const nt_irq *q, bool with_counts)
{
	json_t *o = json_object();
	json_object_set_new(o, "irq", json_integer(q->irq));
	json_object_set_new(o, "name", json_string(q->name));
	json_object_set_new(o, "chip", json_string(q->chip));
	json_object_set_new(o, "affinity", q->has_affinity ? nt_cpuset_json(&q->affinity) : json_null());
	json_object_set_new(o, "effective_affinity",
			    q->has_effective ? nt_cpuset_json(&q->effective) : json_null());
	json_object_set_new(o, "nodes", q->has_affinity ? nt_topology_nodes_of(t, &q->affinity) : json_array());
	const nt_nic *owner = q->nic >= 0 ? &t->nics[q->nic] : NULL;
	if (owner && owner->numa_node >= 0 && q->has_affinity)
		json_object_set_new(o, "local", json_boolean(nt_topology_set_on_node(t, &q->affinity, owner->numa_node)));
	else
		json_object_set_new(o, "local", json_null());
	json_object_set_new(o, "owner", owner ? json_string(owner->name) : json_null());
	json_object_set_new(o, "queue", q->queue >= 0 ? json_integer(q->queue) : json_null());
	json_object_set_new(o, "managed", q->managed_known ? json_boolean(q->managed) : json_null());
	json_object_set_new(o, "total", json_integer((json_int_t)q->total));
	if (with_counts) {
		json_t *pc = json_object();
		for (int i = 0; i < q->ncounts && i < t->ncolumns; i++) {
			if (!q->counts[i])
				continue;
			char k[16];
			snprintf(k, sizeof(k), "%d", t->irq_cpu_columns[i]);
			json_object_set_new(pc, k, json_integer((json_int_t)q->counts[i]));
		}
		json_object_set_new(o, "per_cpu", pc);
	}
	return o;
}

static json_t *u64(uint64_t v)
{
	return json_integer((json_int_t)v);
}

json_t *nt_nic_to_json(const nt_topology *t, const nt_nic *n)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(n->name));
	json_object_set_new(o, "ifindex", json_integer(n->ifindex));
	json_object_set_new(o, "driver", n->driver[0] ? json_string(n->driver) : json_null());
	json_object_set_new(o, "pci_address", n->pci_address[0] ? json_string(n->pci_address) : json_null());
	json_object_set_new(o, "mac", n->mac[0] ? json_string(n->mac) : json_null());
	json_object_set_new(o, "numa_node", json_integer(n->numa_node));
	json_object_set_new(o, "numa_node_source", json_string(source_name(n->numa_node_source)));
	json_object_set_new(o, "local_cpus", n->has_local_cpus ? nt_cpuset_json(&n->local_cpus) : json_null());
	json_object_set_new(o, "speed_mbps", n->speed_mbps > 0 ? json_integer(n->speed_mbps) : json_null());
	json_object_set_new(o, "mtu", json_integer(n->mtu));
	json_object_set_new(o, "operstate", json_string(n->operstate[0] ? n->operstate : "unknown"));
	json_object_set_new(o, "virtual", json_boolean(n->is_virtual));
	json_object_set_new(o, "bond", json_boolean(n->is_bond));
	json_object_set_new(o, "master", n->master[0] ? json_string(n->master) : json_null());
	if (n->has_rings)
		json_object_set_new(o, "rings", json_pack("{s:I, s:I, s:I, s:I}", "rx", (json_int_t)n->rings.rx,
							   "tx", (json_int_t)n->rings.tx, "rx_max",
							   (json_int_t)n->rings.rx_max, "tx_max",
							   (json_int_t)n->rings.tx_max));
	else
		json_object_set_new(o, "rings", json_null());
	if (n->has_channels) {
		const nt_channels *c = &n->channels;
		json_object_set_new(o, "channels",
				    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "rx", (json_int_t)c->rx,
					      "tx", (json_int_t)c->tx, "other", (json_int_t)c->other, "combined",
					      (json_int_t)c->combined, "rx_max", (json_int_t)c->rx_max, "tx_max",
					      (json_int_t)c->tx_max, "other_max", (json_int_t)c->other_max,
					      "combined_max", (json_int_t)c->combined_max));
	} else {
		json_object_set_new(o, "channels", json_null());
	}
	if (n->has_stats)
		json_object_set_new(o, "stats",
				    json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "rx_packets",
					      u64(n->rx_packets), "tx_packets", u64(n->tx_packets), "rx_bytes",
					      u64(n->rx_bytes), "tx_bytes", u64(n->tx_bytes), "rx_dropped",
					      u64(n->rx_dropped), "rx_missed", u64(n->rx_missed), "rx_fifo_errors",
					      u64(n->rx_fifo_errors), "rx_errors", u64(n->rx_errors)));
	else
		json_object_set_new(o, "stats", json_null());
	json_t *irqs = json_array();
	for (int i = 0; i < n->nirqs; i++)
		json_array_append_new(irqs, nt_irq_to_json(t, &t->irqs[n->irqs[i]], false));
	json_object_set_new(o, "irqs", irqs);
	/* Copies: a caller may edit the document, never the topology. */
	const char *key;
	json_t *v;
	json_object_foreach(n->reported, key, v)
		if (!json_object_get(o, key))
			json_object_set_new(o, key, json_deep_copy(v));
	return o;
}

json_t *nt_irqs_to_json(const nt_topology *t)
{
	json_t *a = json_array();
	for (int i = 0; i < t->nirqs; i++)
		json_array_append_new(a, nt_irq_to_json(t, &t->irqs[i], true));
	json_t *cols = json_array();
	for (int i = 0; i < t->ncolumns; i++)
		json_array_append_new(cols, json_integer(t->irq_cpu_columns[i]));
	return json_pack("{s:o, s:o, s:b}", "irqs", a, "cpu_columns", cols, "available", t->have_irq_info);
}

static json_t *node_cores_json(const nt_topology *t, const nt_numa_node *n)
{
	json_t *a = json_array();
	nt_cpuset seen, core;
	int from = 0;
	if (!a)
		return NULL;
	nt_cpuset_zero(&seen);
	while (nt_node_next_core(t, n, &seen, &from, &core))
		json_array_append_new(a, nt_cpuset_json(&core));
	return a;
}

static json_t *bond_to_json(const nt_bond *b)
{
	json_t *slaves = json_array();
	for (int i = 0; i < b->nslaves; i++)
		json_array_append_new(slaves, json_string(b->slaves[i]));
	return json_pack("{s:s, s:o, s:o, s:o, s:o}", "name", b->name, "mode",
			 b->mode[0] ? json_string(b->mode) : json_null(), "xmit_hash_policy",
			 b->xmit_hash_policy[0] ? json_string(b->xmit_hash_policy) : json_null(), "miimon",
			 b->miimon >= 0 ? json_integer(b->miimon) : json_null(), "slaves", slaves);
}

json_t *nt_topology_to_json(const nt_topology *t)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "host",
			    json_pack("{s:s, s:s, s:s, s:b, s:o, s:b}", "hostname", t->hostname, "kernel", t->kernel,
				      "root", t->ctx.root[0] ? t->ctx.root : "/", "live", t->ctx.live, "netns",
				      t->netns[0] ? json_string(t->netns) : json_null(), "netns_initial",
				      !t->ctx.netns_other));
	json_object_set_new(doc, "cpus",
			    json_pack("{s:i, s:o, s:o, s:i}", "possible", t->ncpus_possible, "online",
				      nt_cpuset_json(&t->cpus_online), "present", nt_cpuset_json(&t->cpus_present),
				      "online_count", nt_cpuset_count(&t->cpus_online)));
	json_t *nodes = json_array();
	for (int i = 0; i < t->nnodes; i++) {
		const nt_numa_node *n = &t->nodes[i];
		json_t *dist = json_array();
		for (int k = 0; k < n->ndist; k++)
			json_array_append_new(dist, json_integer(n->distances[k]));
		json_array_append_new(nodes, json_pack("{s:i, s:o, s:i, s:o, s:o, s:I, s:I, s:b}", "id", n->id, "cpus",
						       nt_cpuset_json(&n->cpus), "cpu_count",
						       nt_cpuset_count(&n->cpus), "cores", node_cores_json(t, n),
						       "distances", dist,
						       "memory_total_kb", (json_int_t)n->mem_total_kb,
						       "memory_free_kb", (json_int_t)n->mem_free_kb, "has_memory",
						       n->has_memory));
	}
	json_object_set_new(doc, "numa_nodes", nodes);
	json_t *nics = json_array();
	for (int i = 0; i < t->nnics; i++)
		json_array_append_new(nics, nt_nic_to_json(t, &t->nics[i]));
	json_object_set_new(doc, "nics", nics);
	json_t *bonds = json_array();
	for (int i = 0; i < t->nbonds; i++)
		json_array_append_new(bonds, bond_to_json(&t->bonds[i]));
	json_object_set_new(doc, "bonds", bonds);
	json_t *sys = json_object();
	for (int i = 0; i < t->nsysctls; i++)
		json_object_set_new(sys, t->sysctls[i].key,
				    t->sysctls[i].present ? json_string(t->sysctls[i].value) : json_null());
	json_object_set_new(doc, "sysctl", sys);
	json_object_set_new(doc, "irqbalance",
			    json_pack("{s:b, s:o, s:o}", "running", t->irqbalance.running, "pid",
				      t->irqbalance.running ? json_integer(t->irqbalance.pid) : json_null(),
				      "socket",
				      t->irqbalance.socket_path[0] ? json_string(t->irqbalance.socket_path)
								   : json_null()));
	json_object_set_new(doc, "irq_info_available", json_boolean(t->have_irq_info));
	json_object_set_new(doc, "problems", json_deep_copy(t->problems));
	return doc;
}
