/* SPDX-License-Identifier: Apache-2.0 */
#include "host/counters.h"
#include "base/cpuset.h"

#include <stdbool.h>
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

/* {CPU: n} of the N softirq columns CPUS, counts V. */
static json_t *softirq_map(const int *cpus, const uint64_t *v, int n)
{
	json_t *map = json_object();
	for (int i = 0; map && v && i < n; i++) {
		char key[16];
		snprintf(key, sizeof(key), "%d", cpus[i]);
		json_object_set_new(map, key, json_integer((json_int_t)v[i]));
	}
	return map;
}

static json_t *cpu_time_map(const nt_cpu_time *t, int n)
{
	json_t *map = json_object();
	for (int i = 0; map && t && i < n; i++) {
		char key[16];
		snprintf(key, sizeof(key), "%d", t[i].cpu);
		json_object_set_new(map, key,
				    json_pack("[I,I,I,I,I,I,I,I]", (json_int_t)t[i].user, (json_int_t)t[i].nice,
					      (json_int_t)t[i].system, (json_int_t)t[i].idle, (json_int_t)t[i].iowait,
					      (json_int_t)t[i].irq, (json_int_t)t[i].softirq, (json_int_t)t[i].steal));
	}
	return map;
}

json_t *nt_counters_snapshot(const nt_counters_input *in)
{
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:I}", "cpu_node", cpu_node_map(in->topology), "nics",
			 nic_map(in->nics), "irqs", irq_map(in->irqs), "net_rx",
			 softirq_map(in->soft_cpus, in->net_rx, in->nsoft), "net_tx",
			 softirq_map(in->soft_cpus, in->net_tx, in->nsoft), "cpu_time",
			 cpu_time_map(in->cpu_time, in->ncpu_time), "hz", (json_int_t)in->hz);
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

/* The change of the softirq row KEY ("net_rx", "net_tx"). */
static json_t *softirq_delta(const json_t *a, const json_t *b, const char *key)
{
	json_t *cpus = json_array();
	json_int_t total = 0;
	const char *cpu;
	json_t *v;
	if (!cpus)
		return NULL;
	json_object_foreach(json_object_get(b, key), cpu, v) {
		json_t *av = json_object_get(json_object_get(a, key), cpu);
		if (!av)
			continue;
		json_int_t d = diff(av, v);
		total += d;
		json_array_append_new(cpus, json_pack("{s:i,s:I}", "cpu", atoi(cpu), "count", d));
	}
	return json_pack("{s:o,s:I}", "cpus", cpus, "total", total);
}

/* The fields of a cpu_time row (nt_counters_snapshot's order). */
enum { CT_USER, CT_NICE, CT_SYSTEM, CT_IDLE, CT_IOWAIT, CT_IRQ, CT_SOFTIRQ, CT_STEAL, CT_N };

/* Seconds by class, summed over CPUs. */
typedef struct cpu_secs {
	double busy, user, system, irq, softirq, idle, steal;
	int cpus;
} cpu_secs;

static void secs_add(cpu_secs *s, const json_int_t *d, double hz)
{
	s->user += (double)(d[CT_USER] + d[CT_NICE]) / hz;
	s->system += (double)d[CT_SYSTEM] / hz;
	s->irq += (double)d[CT_IRQ] / hz;
	s->softirq += (double)d[CT_SOFTIRQ] / hz;
	s->idle += (double)(d[CT_IDLE] + d[CT_IOWAIT]) / hz;
	s->steal += (double)d[CT_STEAL] / hz;
	s->busy += (double)(d[CT_USER] + d[CT_NICE] + d[CT_SYSTEM] + d[CT_IRQ] + d[CT_SOFTIRQ]) / hz;
	s->cpus++;
}

static json_t *secs_json(const cpu_secs *s)
{
	return json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "cpus", s->cpus, "busy_s", s->busy, "user_s", s->user,
			 "system_s", s->system, "irq_s", s->irq, "softirq_s", s->softirq, "idle_s", s->idle, "steal_s",
			 s->steal);
}

/* Whether CPU served NIC interrupts in the interrupts delta IN. */
static bool served_nic(const json_t *in, int cpu)
{
	size_t i;
	json_t *row;
	json_array_foreach(json_object_get(in, "cpus"), i, row)
		if (json_integer_value(json_object_get(row, "cpu")) == cpu)
			return json_integer_value(json_object_get(row, "nic")) > 0;
	return false;
}

static json_t *cpu_time_delta(const json_t *a, const json_t *b, const json_t *interrupts)
{
	json_int_t hz = json_integer_value(json_object_get(b, "hz"));
	const json_t *ta = json_object_get(a, "cpu_time"), *tb = json_object_get(b, "cpu_time");
	json_t *cpus = NULL, *out = NULL, *irq_list = json_array(), *other_list = json_array();
	cpu_secs total = { 0 }, nic = { 0 }, other = { 0 };
	double longest = 0;
	const char *cpu;
	json_t *vb;

	if (hz <= 0 || json_object_size(ta) == 0 || json_object_size(tb) == 0) {
		out = json_null();
		goto out;
	}
	if (!(cpus = json_array()) || !irq_list || !other_list)
		goto out;
	json_object_foreach((json_t *)tb, cpu, vb) {
		json_t *va = json_object_get(ta, cpu);
		json_int_t d[CT_N], all = 0;
		if (json_array_size(va) != CT_N || json_array_size(vb) != CT_N)
			continue;
		for (int k = 0; k < CT_N; k++) {
			d[k] = diff(json_array_get(va, k), json_array_get(vb, k));
			all += d[k];
		}
		int c = atoi(cpu);
		cpu_secs one = { 0 };
		secs_add(&one, d, (double)hz);
		secs_add(&total, d, (double)hz);
		if ((double)all / (double)hz > longest)
			longest = (double)all / (double)hz;
		bool in_irq = served_nic(interrupts, c);
		secs_add(in_irq ? &nic : &other, d, (double)hz);
		if (json_array_append_new(in_irq ? irq_list : other_list, json_integer(c)) < 0)
			goto out;
		long node = node_of(json_object_get(b, "cpu_node"), c);
		json_t *row = json_pack("{s:i,s:o,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:o}", "cpu", c, "node",
					node >= 0 ? json_integer(node) : json_null(), "busy_s", one.busy, "user_s",
					one.user, "system_s", one.system, "irq_s", one.irq, "softirq_s", one.softirq,
					"idle_s", one.idle, "steal_s", one.steal, "busy_share",
					all > 0 ? json_real(one.busy * (double)hz / (double)all) : json_null());
		if (json_array_append_new(cpus, row) < 0)
			goto out;
	}
	json_t *tj = secs_json(&total), *nj = secs_json(&nic), *oj = secs_json(&other);
	if (nj)
		json_object_set(nj, "list", irq_list);
	if (oj)
		json_object_set(oj, "list", other_list);
	out = json_pack("{s:I,s:f,s:O,s:o*,s:{s:o*,s:o*}}", "hz", hz, "seconds", longest, "cpus", cpus, "total", tj,
			"classes", "nic_irq", nj, "other", oj);
out:
	json_decref(cpus);
	json_decref(irq_list);
	json_decref(other_list);
	return out;
}

json_t *nt_counters_delta(const json_t *a, const json_t *b)
{
	json_t *in = interrupts_delta(a, b);
	json_t *out = json_pack("{s:o*,s:O*,s:o*,s:o*}", "nics", nics_delta(a, b), "interrupts", in, "softirq_net_rx",
				softirq_delta(a, b, "net_rx"), "softirq_net_tx", softirq_delta(a, b, "net_tx"));
	if (out && json_object_set_new(out, "cpu_time", in ? cpu_time_delta(a, b, in) : json_null()) < 0) {
		json_decref(out);
		out = NULL;
	}
	json_decref(in);
	return out;
}
