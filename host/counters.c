/* SPDX-License-Identifier: Apache-2.0 */
#include "host/counters.h"
#include "base/cpuset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *cpu_node_map(const json_t *topology)
{
	json_t *map = json_object();
	size_t i;
	json_t *node;
	if (!map || !topology)
		return map;
	json_array_foreach(json_object_get(topology, "numa_nodes"), i, node) {
		nt_cpuset s;
		const char *list = json_string_value(json_object_get(node, "cpus"));
		if (!list || nt_cpulist_parse(list, &s) < 0)
			continue;
		for (int c = nt_cpuset_next(&s, 0); c >= 0; c = nt_cpuset_next(&s, c + 1)) {
			char key[16];
			snprintf(key, sizeof(key), "%d", c);
			json_object_set(map, key, json_object_get(node, "id"));
		}
	}
	return map;
}

static json_t *nic_map(const json_t *nics)
{
	json_t *map = json_object();
	size_t i;
	json_t *nic;
	if (!map || !nics)
		return map;
	json_array_foreach(json_object_get(nics, "nics"), i, nic) {
		const char *name = json_string_value(json_object_get(nic, "name"));
		json_t *stats = json_object_get(nic, "stats");
		if (!name)
			continue;
		json_t *node = json_object_get(nic, "numa_node");
		json_t *row = json_pack("{s:O}", "numa_node",
					json_is_integer(node) && json_integer_value(node) >= 0 ? node : json_null());
		const char *k;
		json_t *v;
		json_object_foreach(stats, k, v)
			if (json_is_integer(v))
				json_object_set(row, k, v);
		json_object_set_new(map, name, row);
	}
	return map;
}

static json_t *irq_map(const json_t *irqs)
{
	json_t *map = json_object();
	size_t i;
	json_t *irq;
	if (!map || !irqs)
		return map;
	json_array_foreach(json_object_get(irqs, "irqs"), i, irq) {
		json_t *n = json_object_get(irq, "irq");
		if (!json_is_integer(n))
			continue;
		char key[24];
		snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(n));
		json_t *owner = json_object_get(irq, "owner");
		json_t *per_cpu = json_object_get(irq, "per_cpu");
		json_object_set_new(map, key, json_pack("{s:O,s:O}", "nic", json_is_string(owner) ? owner : json_null(),
							 "per_cpu", json_is_object(per_cpu) ? per_cpu : json_object()));
	}
	return map;
}

json_t *nt_counters_snapshot(const json_t *topology, const json_t *nics, const json_t *irqs,
			     const int *soft_cpus, const uint64_t *net_rx, int nsoft)
{
	json_t *rx = json_object();
	for (int i = 0; rx && i < nsoft; i++) {
		char key[16];
		snprintf(key, sizeof(key), "%d", soft_cpus[i]);
		json_object_set_new(rx, key, json_integer((json_int_t)net_rx[i]));
	}
	return json_pack("{s:o,s:o,s:o,s:o}", "cpu_node", cpu_node_map(topology), "nics", nic_map(nics), "irqs",
			 irq_map(irqs), "net_rx", rx);
}

/* B - A of two counters; a counter that went down restarted from zero. */
static json_int_t diff(const json_t *a, const json_t *b)
{
	json_int_t va = json_integer_value(a), vb = json_integer_value(b);
	return vb >= va ? vb - va : vb;
}

/* Sum per CPU of every IRQ and of NIC IRQs, and the off-node count. */
typedef struct irq_sums {
	json_int_t *all, *nic;
	int ncpu;
	json_int_t nic_known, off;
} irq_sums;

static int sums_grow(irq_sums *s, int cpu)
{
	if (cpu < s->ncpu)
		return 0;
	int n = cpu + 1;
	json_int_t *all = realloc(s->all, (size_t)n * sizeof(*all));
	if (!all)
		return -1;
	s->all = all;
	json_int_t *nic = realloc(s->nic, (size_t)n * sizeof(*nic));
	if (!nic)
		return -1;
	s->nic = nic;
	memset(s->all + s->ncpu, 0, (size_t)(n - s->ncpu) * sizeof(*all));
	memset(s->nic + s->ncpu, 0, (size_t)(n - s->ncpu) * sizeof(*nic));
	s->ncpu = n;
	return 0;
}

static long node_of(const json_t *cpu_node, int cpu)
{
	char key[16];
	snprintf(key, sizeof(key), "%d", cpu);
	json_t *n = json_object_get(cpu_node, key);
	return json_is_integer(n) ? (long)json_integer_value(n) : -1;
}

static int add_irqs(irq_sums *s, const json_t *a, const json_t *b)
{
	const json_t *cpu_node = json_object_get(b, "cpu_node"), *bnics = json_object_get(b, "nics");
	const char *irq;
	json_t *bi;
	json_object_foreach(json_object_get(b, "irqs"), irq, bi) {
		json_t *ai = json_object_get(json_object_get(a, "irqs"), irq);
		if (!ai)
			continue;
		const char *nic = json_string_value(json_object_get(bi, "nic"));
		json_t *nn = nic ? json_object_get(json_object_get(bnics, nic), "numa_node") : NULL;
		long nic_node = json_is_integer(nn) ? (long)json_integer_value(nn) : -1;
		const char *cpu;
		json_t *cnt;
		json_object_foreach(json_object_get(bi, "per_cpu"), cpu, cnt) {
			int c = atoi(cpu);
			if (c < 0 || c >= NT_MAX_CPUS)
				continue;
			json_int_t d = diff(json_object_get(json_object_get(ai, "per_cpu"), cpu), cnt);
			if (sums_grow(s, c) < 0)
				return -1;
			s->all[c] += d;
			if (!nic)
				continue;
			s->nic[c] += d;
			if (nic_node < 0)
				continue;
			s->nic_known += d;
			long cn = node_of(cpu_node, c);
			if (cn >= 0 && cn != nic_node)
				s->off += d;
		}
	}
	return 0;
}

static json_t *interrupts_delta(const json_t *a, const json_t *b)
{
	irq_sums s = { NULL, NULL, 0, 0, 0 };
	json_t *cpus = NULL, *nodes = NULL, *out = NULL;
	json_int_t nic_total = 0;
	if (add_irqs(&s, a, b) < 0)
		goto out;
	cpus = json_array();
	nodes = json_array();
	if (!cpus || !nodes)
		goto out;
	const json_t *cpu_node = json_object_get(b, "cpu_node");
	for (int c = 0; c < s.ncpu; c++) {
		long node = node_of(cpu_node, c);
		nic_total += s.nic[c];
		if (!s.all[c] && !s.nic[c])
			continue;
		json_array_append_new(cpus, json_pack("{s:i,s:o,s:I,s:I}", "cpu", c, "node",
						      node >= 0 ? json_integer(node) : json_null(), "all",
						      s.all[c], "nic", s.nic[c]));
		if (node < 0)
			continue;
		size_t i;
		json_t *row, *found = NULL;
		json_array_foreach(nodes, i, row)
			if (json_integer_value(json_object_get(row, "node")) == node)
				found = row;
		if (!found) {
			found = json_pack("{s:I,s:I,s:I}", "node", (json_int_t)node, "all", (json_int_t)0, "nic",
					  (json_int_t)0);
			json_array_append_new(nodes, found);
		}
		json_object_set_new(found, "all",
				    json_integer(json_integer_value(json_object_get(found, "all")) + s.all[c]));
		json_object_set_new(found, "nic",
				    json_integer(json_integer_value(json_object_get(found, "nic")) + s.nic[c]));
	}
	out = json_pack("{s:O,s:O,s:I,s:I,s:o}", "cpus", cpus, "nodes", nodes, "nic", nic_total, "nic_off_node",
			s.off, "off_node_share", s.nic_known ? json_real((double)s.off / (double)s.nic_known) : json_null());
out:
	json_decref(cpus);
	json_decref(nodes);
	free(s.all);
	free(s.nic);
	return out;
}

static json_t *nics_delta(const json_t *a, const json_t *b)
{
	json_t *out = json_array();
	const char *name;
	json_t *bn;
	if (!out)
		return NULL;
	json_object_foreach(json_object_get(b, "nics"), name, bn) {
		json_t *an = json_object_get(json_object_get(a, "nics"), name);
		if (!an)
			continue;
		json_t *row = json_pack("{s:s,s:O}", "name", name, "numa_node", json_object_get(bn, "numa_node"));
		const char *k;
		json_t *v;
		json_object_foreach(bn, k, v)
			if (strcmp(k, "numa_node") && json_is_integer(v) && json_is_integer(json_object_get(an, k)))
				json_object_set_new(row, k, json_integer(diff(json_object_get(an, k), v)));
		json_array_append_new(out, row);
	}
	return out;
}

static json_t *net_rx_delta(const json_t *a, const json_t *b)
{
	json_t *cpus = json_array();
	json_int_t total = 0;
	const char *cpu;
	json_t *v;
	if (!cpus)
		return NULL;
	json_object_foreach(json_object_get(b, "net_rx"), cpu, v) {
		json_t *av = json_object_get(json_object_get(a, "net_rx"), cpu);
		if (!av)
			continue;
		json_int_t d = diff(av, v);
		total += d;
		json_array_append_new(cpus, json_pack("{s:i,s:I}", "cpu", atoi(cpu), "count", d));
	}
	return json_pack("{s:o,s:I}", "cpus", cpus, "total", total);
}

json_t *nt_counters_delta(const json_t *a, const json_t *b)
{
	return json_pack("{s:o*,s:o*,s:o*}", "nics", nics_delta(a, b), "interrupts", interrupts_delta(a, b),
			 "softirq_net_rx", net_rx_delta(a, b));
}
