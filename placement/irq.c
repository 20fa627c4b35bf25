/* SPDX-License-Identifier: Apache-2.0 */
#include "placement/irq.h"
#include "placement/cpus.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NICs spread over the same CPUs share a group: its count of IRQs dealt so
 * far, and the CPUs already used as some NIC's first CPU. */
typedef struct group {
	nt_cpuset cpus;
	int dealt;
	nt_cpuset firsts;
} group;

struct nt_irq_placement {
	const nt_topology *t;
	group *groups;
	int ngroups;
	int *first_cpu; /* per NIC: the first CPU of its first IRQ's mask, -1 */
};

typedef int (*strategy_fn)(nt_irq_placement *p, const nt_nic *nic, const int *cpus, int m,
			   int nirqs, nt_cpuset *out, json_t *warnings);

static void warn(json_t *warnings, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(json_t *warnings, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_array_append_new(warnings, json_string(msg));
}

int nt_irq_placement_new(const nt_topology *t, nt_irq_placement **out)
{
	nt_irq_placement *p = calloc(1, sizeof(*p));
	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->t = t;
	p->first_cpu = malloc(sizeof(int) * ((size_t)t->nnics + 1));
	if (!p->first_cpu) {
		free(p);
		return -ENOMEM;
	}
	for (int i = 0; i < t->nnics; i++)
		p->first_cpu[i] = -1;
	*out = p;
	return 0;
}

void nt_irq_placement_free(nt_irq_placement *p)
{
	if (!p)
		return;
	free(p->groups);
	free(p->first_cpu);
	free(p);
}

int nt_deal_cpus(const nt_cpuset *set, int start, int n, int *out)
{
	int m = nt_cpuset_count(set);
	if (m == 0)
		return -ENOENT;
	int *cpus = malloc(sizeof(int) * (size_t)m);
	if (!cpus)
		return -ENOMEM;
	int k = 0;
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1))
		cpus[k++] = c;
	for (int i = 0; i < n; i++)
		out[i] = cpus[((start % m) + i) % m];
	free(cpus);
	return 0;
}

/* The lowest online CPU of CPU's core: where the core sits in its node
 * whatever exclude_cpus took out of it. */
static int core_key(const nt_topology *t, int cpu)
{
	for (int c = nt_cpuset_next(&t->cpus_online, 0); c >= 0 && c < cpu;
	     c = nt_cpuset_next(&t->cpus_online, c + 1))
		if (nt_cpus_same_core(t, c, cpu))
			return c;
	return cpu;
}

/* Whether every online thread of CPU's core is in ORDER. */
static bool core_whole(const nt_topology *t, const int *order, int m, int cpu)
{
	for (int c = nt_cpuset_next(&t->cpus_online, 0); c >= 0; c = nt_cpuset_next(&t->cpus_online, c + 1)) {
		if (!nt_cpus_same_core(t, c, cpu))
			continue;
		bool in = false;
		for (int j = 0; j < m && !in; j++)
			in = order[j] == c;
		if (!in)
			return false;
	}
	return true;
}

int nt_reserve_app_cpus(const nt_topology *t, const int *order, int m, int n, nt_cpuset *reserved)
{
	nt_cpuset_zero(reserved);
	if (n <= 0)
		return 0;
	if (n >= m)
		return -ENOSPC;
	/* Cores are ranked by their lowest CPU on the host, not by where
	 * ORDER puts them: with exclude_cpus "0", CPU 64 (CPU 0's sibling) is
	 * the first thread of its core in ORDER and would otherwise look like
	 * the last core of the node. Cores that exclude_cpus left whole come
	 * first, from the end of the node; a core missing a thread is taken
	 * only when the whole ones run out, so the application shares no core
	 * with the IRQs or with an excluded CPU while N allows. */
	int *key = malloc(sizeof(int) * (size_t)m);
	bool *whole = malloc(sizeof(bool) * (size_t)m), *done = calloc((size_t)m, sizeof(bool));
	if (!key || !whole || !done) {
		free(key);
		free(whole);
		free(done);
		return -ENOMEM;
	}
	for (int i = 0; i < m; i++) {
		key[i] = core_key(t, order[i]);
		whole[i] = core_whole(t, order, m, order[i]);
	}
	int got = 0;
	for (int pass = 0; pass < 2 && got < n; pass++) {
		while (got < n) {
			/* The core nearest the end of the node not yet looked at. */
			int best = -1;
			for (int i = 0; i < m; i++)
				if (!done[i] && whole[i] == (pass == 0) && (best < 0 || key[i] > key[best]))
					best = i;
			if (best < 0)
				break;
			/* Its threads, highest first. */
			int k = key[best];
			while (got < n) {
				int hi = -1;
				for (int j = 0; j < m; j++)
					if (key[j] == k && !done[j] && (hi < 0 || order[j] > order[hi]))
						hi = j;
				if (hi < 0)
					break;
				nt_cpuset_set(reserved, order[hi]);
				done[hi] = true;
				got++;
			}
			for (int j = 0; j < m; j++)
				if (key[j] == k)
					done[j] = true;
		}
	}
	free(key);
	free(whole);
	free(done);
	return 0;
}

bool nt_nic_local_cpus(const nt_topology *t, const nt_nic *nic, nt_cpuset *out)
{
	const nt_numa_node *node = nic->numa_node >= 0 ? nt_topology_node(t, nic->numa_node) : NULL;
	if (node) {
		*out = node->cpus;
		return true;
	}
	if (nic->has_local_cpus) {
		nt_cpuset_and(out, &nic->local_cpus, &t->cpus_online);
		return true;
	}
	nt_cpuset_zero(out);
	return false;
}

static group *group_for(nt_irq_placement *p, const int *cpus, int m)
{
	nt_cpuset set;
	nt_cpuset_zero(&set);
	for (int i = 0; i < m; i++)
		nt_cpuset_set(&set, cpus[i]);
	for (int i = 0; i < p->ngroups; i++)
		if (nt_cpuset_equal(&p->groups[i].cpus, &set))
			return &p->groups[i];
	group *g = realloc(p->groups, sizeof(*g) * (size_t)(p->ngroups + 1));
	if (!g)
		return NULL;
	p->groups = g;
	g = &p->groups[p->ngroups++];
	memset(g, 0, sizeof(*g));
	g->cpus = set;
	return g;
}

/* "local": one CPU per IRQ from the NIC's own node, siblings last. NICs on
 * one node continue the round-robin where the previous one stopped, and
 * never start on a CPU another NIC starts on: hardware that hands a
 * multi-CPU mask's interrupt to its first CPU would otherwise serve two
 * NICs from one CPU (docs/field-reports.md#first-cpu-serves). */
static int strategy_local(nt_irq_placement *p, const nt_nic *nic, const int *cpus, int m,
			  int nirqs, nt_cpuset *out, json_t *warnings)
{
	group *g = group_for(p, cpus, m);
	if (!g)
		return -ENOMEM;
	int start = g->dealt % m, tries = 0;
	while (nt_cpuset_isset(&g->firsts, cpus[start]) && tries < m) {
		start = (start + 1) % m;
		tries++;
	}
	if (tries == m)
		warn(warnings, "%s: more NICs than CPUs on its node; it shares a first CPU with another NIC",
		     nic->name);
	for (int i = 0; i < nirqs; i++) {
		nt_cpuset_zero(&out[i]);
		nt_cpuset_set(&out[i], cpus[(start + i) % m]);
	}
	nt_cpuset_set(&g->firsts, cpus[start]);
	g->dealt = start + nirqs;
	return 0;
}

/* "local-node": every IRQ gets the whole usable node mask, for operators
 * who let the kernel pick inside it. */
static int strategy_local_node(nt_irq_placement *p, const nt_nic *nic, const int *cpus, int m,
			       int nirqs, nt_cpuset *out, json_t *warnings)
{
	for (int i = 0; i < nirqs; i++) {
		nt_cpuset_zero(&out[i]);
		for (int k = 0; k < m; k++)
			nt_cpuset_set(&out[i], cpus[k]);
	}
	return 0;
}

static const struct {
	const char *name;
	strategy_fn fn;
} strategies[] = {
	{ "local", strategy_local },
	{ "local-node", strategy_local_node },
	{ NULL, NULL },
};

static strategy_fn strategy_find(const char *name)
{
	for (int i = 0; name && strategies[i].name; i++)
		if (strcmp(strategies[i].name, name) == 0)
			return strategies[i].fn;
	return NULL;
}

bool nt_irq_strategy_known(const char *name)
{
	return strategy_find(name) != NULL;
}

/* The usable CPUs of NIC for a strategy, in placement order, into *ORDER
 * (malloc'd) and *M. Returns 0, -ENOENT when the NIC is left out (a
 * warning says why) or -ENOMEM. */
static int strategy_cpus(nt_irq_placement *p, const nt_nic *nic, const nt_irq_request *req,
			 int **order, int *m, json_t *warnings, json_t *reserved_json)
{
	const nt_topology *t = p->t;
	nt_cpuset cand, reserved;
	char cl[256];

	*order = NULL;
	if (!nt_nic_local_cpus(t, nic, &cand)) {
		warn(warnings, "%s: NUMA locality unknown (numa_node -1, no local_cpulist); left "
		     "out (name its 'cpus' to place it)", nic->name);
		return -ENOENT;
	}
	nt_cpuset_andnot(&cand, &cand, &req->exclude);
	int n = nt_cpuset_count(&cand);
	if (n == 0) {
		warn(warnings, "%s: no CPU left on its node after exclude_cpus; left out", nic->name);
		return -ENOENT;
	}
	int *o = malloc(sizeof(int) * (size_t)n);
	if (!o)
		return -ENOMEM;
	n = nt_cpus_siblings_last(t, &cand, o);
	int rr = nt_reserve_app_cpus(t, o, n, req->reserve_app_cpus, &reserved);
	if (rr == -ENOMEM) {
		free(o);
		return rr;
	}
	if (rr < 0) {
		warn(warnings, "%s: reserving %d CPU(s) leaves none of its %d for its IRQs; left out",
		     nic->name, req->reserve_app_cpus, n);
		free(o);
		return -ENOENT;
	}
	if (req->reserve_app_cpus > 0) {
		int k = 0;
		for (int i = 0; i < n; i++)
			if (!nt_cpuset_isset(&reserved, o[i]))
				o[k++] = o[i];
		n = k;
		if (reserved_json && nt_cpulist_format(&reserved, cl, sizeof(cl)) >= 0)
			json_object_set_new(reserved_json, nic->name, json_string(cl));
	}
	*order = o;
	*m = n;
	return 0;
}

/* Named CPUs off the NIC's node cost every interrupt a trip across the
 * interconnect; allowed (the operator may know better) but said, with the
 * node of each CPU so the plan reader sees where they are. */
static void warn_off_node(const nt_topology *t, const nt_nic *nic, const nt_cpuset *cpus, json_t *warnings)
{
	if (nic->numa_node < 0 || !nt_topology_node(t, nic->numa_node))
		return;
	nt_cpuset off;
	nt_cpuset_andnot(&off, cpus, &nt_topology_node(t, nic->numa_node)->cpus);
	if (nt_cpuset_empty(&off))
		return;
	char where[384] = "", cl[128];
	size_t len = 0;
	for (int i = 0; i < t->nnodes; i++) {
		nt_cpuset on;
		nt_cpuset_and(&on, &off, &t->nodes[i].cpus);
		if (nt_cpuset_empty(&on) || nt_cpulist_format(&on, cl, sizeof(cl)) < 0)
			continue;
		len += (size_t)snprintf(where + len, len < sizeof(where) ? sizeof(where) - len : 0, "%sCPU %s on node %d",
					len ? ", " : "", cl, t->nodes[i].id);
		nt_cpuset_andnot(&off, &off, &on);
	}
	if (!nt_cpuset_empty(&off) && nt_cpulist_format(&off, cl, sizeof(cl)) >= 0)
		len += (size_t)snprintf(where + len, len < sizeof(where) ? sizeof(where) - len : 0,
					"%sCPU %s on no known node", len ? ", " : "", cl);
	warn(warnings, "%s: its 'cpus' are off its node %d (%s); its interrupts would cross to another node "
	     "(use \"policy\": \"local\" to keep them on node %d)", nic->name, nic->numa_node, where,
	     nic->numa_node);
}

static int cmp_irq_idx(const void *a, const void *b, void *arg)
{
	const nt_topology *t = arg;
	int x = t->irqs[*(const int *)a].irq, y = t->irqs[*(const int *)b].irq;
	return (x > y) - (x < y);
}

/* The movable IRQs of NIC (indexes into t->irqs), ascending by number. */
static int movable_irqs(const nt_topology *t, const nt_nic *nic, const char *pattern, int *idx,
			json_t *warnings)
{
	int n = 0;
	for (int q = 0; q < nic->nirqs; q++) {
		/* The kernel refuses to move managed IRQs; planning them would make
		 * every plan show steps that cannot happen. */
		if (t->irqs[nic->irqs[q]].managed)
			continue;
		idx[n++] = nic->irqs[q];
	}
	if (n < nic->nirqs)
		warn(warnings, "%s: %d kernel-managed IRQ(s) left as they are", nic->name, nic->nirqs - n);
	if (n == 0 && (!pattern || !strpbrk(pattern, "*?[") || nic->nirqs > 0))
		warn(warnings, "%s: no movable IRQs", nic->name);
	qsort_r(idx, (size_t)n, sizeof(int), cmp_irq_idx, (void *)t);
	return n;
}

int nt_irq_place(nt_irq_placement *p, int k, const char *pattern, const nt_irq_request *req,
		 int **irqs, nt_cpuset **sets_out, int *nout, json_t *warnings, json_t *reserved)
{
	const nt_topology *t = p->t;
	const nt_nic *nic = &t->nics[k];
	int *idx = malloc(sizeof(int) * (size_t)(nic->nirqs + 1));
	int *order = NULL, m = 0, r = 0, n = 0;
	nt_cpuset *sets = calloc((size_t)nic->nirqs + 1, sizeof(nt_cpuset));
	char list[256];

	*irqs = NULL;
	*sets_out = NULL;
	*nout = 0;
	if (!idx || !sets) {
		r = -ENOMEM;
		goto fail;
	}
	n = movable_irqs(t, nic, pattern, idx, warnings);
	if (n == 0)
		goto fail;
	if (req->cpus) {
		/* Named CPUs need no locality: a NIC whose node is unknown is
		 * placed this way. */
		int *one = malloc(sizeof(int) * (size_t)n);
		nt_cpuset set;
		if (!one) {
			r = -ENOMEM;
			goto fail;
		}
		nt_cpuset_andnot(&set, req->cpus, &req->exclude);
		r = nt_deal_cpus(&set, 0, n, one);
		nt_cpuset used;
		nt_cpuset_zero(&used);
		for (int q = 0; r == 0 && q < n; q++) {
			nt_cpuset_zero(&sets[q]);
			nt_cpuset_set(&sets[q], one[q]);
			nt_cpuset_set(&used, one[q]);
		}
		if (r == 0)
			warn_off_node(t, nic, &used, warnings);
		free(one);
		if (r == -ENOENT) {
			warn(warnings, "%s: no CPU left after exclude_cpus", nic->name);
			r = 0;
			goto fail;
		}
	} else {
		strategy_fn fn = strategy_find(req->strategy);
		if (!fn) {
			r = NT_EINVALID;
			goto fail;
		}
		r = strategy_cpus(p, nic, req, &order, &m, warnings, reserved);
		if (r == 0)
			r = fn(p, nic, order, m, n, sets, warnings);
		if (r == -ENOENT) {
			r = 0;
			goto fail;
		}
	}
	if (r < 0)
		goto fail;
	/* The first CPU of a mask serves the interrupt on some hardware
	 * (docs/field-reports.md#first-cpu-serves), so two NICs whose first
	 * IRQs' masks start at one CPU share it. */
	int first = nt_cpuset_next(&sets[0], 0);
	for (int j = 0; j < t->nnics; j++) {
		if (j != k && p->first_cpu[j] == first) {
			nt_cpulist_format(&sets[0], list, sizeof(list));
			warn(warnings, "%s: its IRQ mask %s starts at CPU %d, as %s's does; the first "
			     "CPU of a mask serves the interrupt (docs/field-reports.md#first-cpu-serves), "
			     "so both NICs would be served by CPU %d", nic->name, list, first,
			     t->nics[j].name, first);
			break;
		}
	}
	p->first_cpu[k] = first;
	free(order);
	*irqs = idx;
	*sets_out = sets;
	*nout = n;
	return 0;
fail:
	free(idx);
	free(sets);
	free(order);
	return r;
}
