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

/* One direction's queues of a NIC document ("rx" or "tx" of its
 * "queues"): [{"queue", "packets", "bytes"}] of the queues the kernel
 * counted, each counter only where it gave it (PK and BK, "rx_packets"
 * and "rx_bytes" for RX). */
static json_t *queue_dir_map(const json_t *list, const char *pk, const char *bk)
{
	json_t *out = json_array();
	size_t i;
	json_t *q;
	json_array_foreach(list, i, q) {
		const json_t *st = json_object_get(q, "stats"), *num = json_object_get(q, "queue");
		if (!out || !json_is_object(st) || !json_is_integer(num))
			continue;
		json_t *row = json_pack("{s:O}", "queue", num);
		if (json_is_integer(json_object_get(st, pk)))
			json_object_set(row, "packets", json_object_get(st, pk));
		if (json_is_integer(json_object_get(st, bk)))
			json_object_set(row, "bytes", json_object_get(st, bk));
		json_array_append_new(out, row);
	}
	return out;
}

static json_t *queues_map(const json_t *docs)
{
	json_t *map = json_object();
	size_t i;
	json_t *d;
	json_array_foreach(docs, i, d) {
		const char *name = json_string_value(json_object_get(d, "name"));
		if (!map || !name)
			continue;
		json_t *src = json_object_get(d, "queue_stats_source"), *why = json_object_get(d, "queue_stats_reason");
		const json_t *qs = json_object_get(d, "queues");
		json_t *row;
		if (!src)
			/* An agent from before the per-queue counters: never
			 * guessed at, said. */
			row = json_pack("{s:n,s:s}", "source", "reason",
					"the agent does not report per-queue statistics (an older nettune)");
		else
			row = json_pack("{s:O,s:O,s:o,s:o}", "source", json_is_string(src) ? src : json_null(),
					"reason", json_is_string(why) ? why : json_null(), "rx",
					queue_dir_map(json_object_get(qs, "rx"), "rx_packets", "rx_bytes"), "tx",
					queue_dir_map(json_object_get(qs, "tx"), "tx_packets", "tx_bytes"));
		json_object_set_new(map, name, row);
	}
	return map;
}

static json_t *cpu_list(const int *cpus, int n)
{
	json_t *a = json_array();
	for (int i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_integer(cpus[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

json_t *nt_counters_snapshot(const nt_counters_input *in)
{
	json_t *s = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:o}", "cpu_node", cpu_node_map(in->topology), "nics",
			      nic_map(in->nics), "irqs", irq_map(in->irqs), "net_rx",
			      softirq_map(in->soft_cpus, in->net_rx, in->nsoft), "net_tx",
			      softirq_map(in->soft_cpus, in->net_tx, in->nsoft), "cpu_time",
			      cpu_time_map(in->cpu_time, in->ncpu_time), "hz", (json_int_t)in->hz, "queues",
			      queues_map(in->nic_queues));
	if (s && in->napp > 0 && json_object_set_new(s, "app_cpus", cpu_list(in->app_cpus, in->napp)) < 0) {
		json_decref(s);
		return NULL;
	}
	return s;
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

/* Whether CPU is in LIST (an array of CPU numbers, or not an array). */
static bool listed(const json_t *list, int cpu)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
		if (json_integer_value(v) == cpu)
			return true;
	return false;
}

static json_t *cpu_time_delta(const json_t *a, const json_t *b, const json_t *interrupts)
{
	json_int_t hz = json_integer_value(json_object_get(b, "hz"));
	const json_t *ta = json_object_get(a, "cpu_time"), *tb = json_object_get(b, "cpu_time");
	const json_t *app_cpus = json_object_get(b, "app_cpus");
	json_t *cpus = NULL, *out = NULL, *irq_list = json_array(), *other_list = json_array();
	json_t *app_list = json_array(), *app_shared = json_array();
	cpu_secs total = { 0 }, nic = { 0 }, other = { 0 }, app = { 0 };
	double longest = 0;
	const char *cpu;
	json_t *vb;

	if (hz <= 0 || json_object_size(ta) == 0 || json_object_size(tb) == 0) {
		out = json_null();
		goto out;
	}
	if (!(cpus = json_array()) || !irq_list || !other_list || !app_list || !app_shared)
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
		bool in_irq = served_nic(interrupts, c), in_app = listed(app_cpus, c);
		secs_add(in_irq ? &nic : in_app ? &app : &other, d, (double)hz);
		if (json_array_append_new(in_irq ? irq_list : in_app ? app_list : other_list, json_integer(c)) < 0 ||
		    (in_irq && in_app && json_array_append_new(app_shared, json_integer(c)) < 0))
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
	json_t *aj = json_is_array(app_cpus) ? secs_json(&app) : NULL;
	if (nj)
		json_object_set(nj, "list", irq_list);
	if (oj)
		json_object_set(oj, "list", other_list);
	if (aj) {
		json_object_set(aj, "list", app_list);
		json_object_set(aj, "with_nic_irq", app_shared);
	}
	out = json_pack("{s:I,s:f,s:O,s:o*,s:{s:o*,s:o*}}", "hz", hz, "seconds", longest, "cpus", cpus, "total", tj,
			"classes", "nic_irq", nj, "other", oj);
	if (out && aj && json_object_set_new(json_object_get(out, "classes"), "app", aj) < 0) {
		json_decref(out);
		out = NULL;
	} else if (!out) {
		json_decref(aj);
	}
out:
	json_decref(cpus);
	json_decref(irq_list);
	json_decref(other_list);
	json_decref(app_list);
	json_decref(app_shared);
	return out;
}

/* N packets for people: "870", "12.5k", "1.2M", "3.4G". */
static void fmt_count(char *buf, size_t size, json_int_t n)
{
	if (n < 1000)
		snprintf(buf, size, "%lld", (long long)n);
	else if (n < 1000000)
		snprintf(buf, size, "%.1fk", (double)n / 1e3);
	else if (n < 1000000000)
		snprintf(buf, size, "%.1fM", (double)n / 1e6);
	else
		snprintf(buf, size, "%.1fG", (double)n / 1e9);
}

/* One direction's change: the queues of B also in A, with their deltas,
 * into ROW's DIR ("rx"), its total ("rx_packets", null without any
 * packet counter) and its busiest queue ("rx_top"); a skewed round's line
 * into SKEW. */
static int queue_dir_delta(json_t *row, const char *nic, const char *dir, const json_t *qa, const json_t *qb,
			   json_t *skew)
{
	json_t *list = json_array();
	json_int_t total = 0, top = -1;
	long long top_q = -1;
	int counted = 0;
	size_t i, k;
	json_t *eb, *ea;
	if (!list)
		return -1;
	json_array_foreach(qb, i, eb) {
		json_int_t q = json_integer_value(json_object_get(eb, "queue"));
		const json_t *found = NULL;
		json_array_foreach(qa, k, ea)
			if (json_integer_value(json_object_get(ea, "queue")) == q)
				found = ea;
		if (!found)
			continue;
		json_t *e = json_pack("{s:I}", "queue", q);
		const char *keys[] = { "packets", "bytes" };
		for (int j = 0; e && j < 2; j++) {
			const json_t *va = json_object_get(found, keys[j]), *vb = json_object_get(eb, keys[j]);
			json_object_set_new(e, keys[j], json_is_integer(va) && json_is_integer(vb) ?
							json_integer(diff(va, vb)) : json_null());
		}
		if (!e || json_array_append_new(list, e) < 0) {
			json_decref(list);
			return -1;
		}
		if (!json_is_integer(json_object_get(e, "packets")))
			continue;
		json_int_t d = json_integer_value(json_object_get(e, "packets"));
		counted++;
		total += d;
		if (d > top) {
			top = d;
			top_q = (long long)q;
		}
	}
	char key[32];
	json_object_set_new(row, dir, list);
	snprintf(key, sizeof(key), "%s_packets", dir);
	json_object_set_new(row, key, counted ? json_integer(total) : json_null());
	snprintf(key, sizeof(key), "%s_top", dir);
	if (!counted || total <= 0) {
		json_object_set_new(row, key, json_null());
		return 0;
	}
	double share = (double)top / (double)total;
	json_object_set_new(row, key, json_pack("{s:I,s:I,s:f}", "queue", (json_int_t)top_q, "packets", top, "share",
						share));
	if (counted >= 2 && total >= NT_COUNTERS_SKEW_MIN && share >= NT_COUNTERS_SKEW_SHARE) {
		char line[320], n[32];
		fmt_count(n, sizeof(n), total);
		/* Rounded down: "100%" only when no other queue took any. */
		snprintf(line, sizeof(line), "%s: %s queue %lld took %d%% of %s packets", nic, strcmp(dir, "rx") ? "TX" : "RX",
			 top_q, (int)(share * 100), n);
		json_array_append_new(skew, json_string(line));
	}
	return 0;
}

/* "queues", "queue_skew" and "queue_stats_missing" of the delta into OUT. */
static int queues_delta(json_t *out, const json_t *a, const json_t *b)
{
	json_t *rows = json_array(), *skew = json_array(), *missing = json_array();
	const char *name;
	json_t *qb;
	int r = -1;
	if (!rows || !skew || !missing)
		goto out;
	json_object_foreach(json_object_get(b, "queues"), name, qb) {
		const json_t *qa = json_object_get(json_object_get(a, "queues"), name);
		if (!qa)
			continue;
		const json_t *src = json_object_get(qb, "source"), *why = json_object_get(qb, "reason");
		bool counted = json_is_string(src) && json_is_string(json_object_get(qa, "source"));
		json_t *row = json_pack("{s:s,s:O,s:O}", "nic", name, "source", counted ? src : json_null(), "reason",
					json_is_string(why) ? why : json_null());
		if (!row || json_array_append_new(rows, row) < 0)
			goto out;
		if (counted) {
			if (queue_dir_delta(row, name, "rx", json_object_get(qa, "rx"), json_object_get(qb, "rx"), skew) < 0 ||
			    queue_dir_delta(row, name, "tx", json_object_get(qa, "tx"), json_object_get(qb, "tx"), skew) < 0)
				goto out;
			continue;
		}
		/* Gathered by reason: each said once, with the NICs it is of. */
		const char *text = json_is_string(why) ? json_string_value(why) : "no per-queue statistics";
		json_t *group = NULL, *g;
		size_t i;
		json_array_foreach(missing, i, g)
			if (!strcmp(json_string_value(json_object_get(g, "reason")), text))
				group = g;
		if (!group) {
			group = json_pack("{s:s,s:[]}", "reason", text, "nics");
			if (!group || json_array_append_new(missing, group) < 0)
				goto out;
		}
		json_array_append_new(json_object_get(group, "nics"), json_string(name));
	}
	if (json_object_set(out, "queues", rows) < 0 || json_object_set(out, "queue_skew", skew) < 0 ||
	    json_object_set(out, "queue_stats_missing", missing) < 0)
		goto out;
	r = 0;
out:
	json_decref(rows);
	json_decref(skew);
	json_decref(missing);
	return r;
}

json_t *nt_counters_delta(const json_t *a, const json_t *b)
{
	json_t *in = interrupts_delta(a, b);
	json_t *out = json_pack("{s:o*,s:O*,s:o*,s:o*}", "nics", nics_delta(a, b), "interrupts", in, "softirq_net_rx",
				softirq_delta(a, b, "net_rx"), "softirq_net_tx", softirq_delta(a, b, "net_tx"));
	if (out && (json_object_set_new(out, "cpu_time", in ? cpu_time_delta(a, b, in) : json_null()) < 0 ||
		    queues_delta(out, a, b) < 0)) {
		json_decref(out);
		out = NULL;
	}
	json_decref(in);
	return out;
}
