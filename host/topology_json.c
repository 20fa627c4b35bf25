/* SPDX-License-Identifier: Apache-2.0 */
/* The host model's JSON documents written straight into text (host/jsonw.h),
 * byte for byte what json_dumps(nt_topology_to_json(t), JSON_INDENT(2) |
 * JSON_SORT_KEYS) prints: tests/unit/test_topology_json.c compares the two
 * on every fixture. Members are written in sorted key order by hand; a
 * string jansson would refuse (not UTF-8) drops its member, or the whole
 * json_pack'd object it was in, as the jansson builder does. */
#include "host/jsonw.h"
#include "host/topology.h"

#include <stdlib.h>
#include <string.h>

static void kstr(nt_jw *w, const char *key, const char *s)
{
	if (!nt_jw_utf8(s))
		return;
	nt_jw_key(w, key);
	nt_jw_str(w, s);
}

/* A string member that is null when empty. */
static void kstr_or_null(nt_jw *w, const char *key, const char *s)
{
	if (!s[0]) {
		nt_jw_key(w, key);
		nt_jw_null(w);
		return;
	}
	kstr(w, key, s);
}

static void cpuset(nt_jw *w, const nt_cpuset *s)
{
	char buf[16384];
	if (nt_cpulist_format(s, buf, sizeof(buf)) < 0)
		nt_jw_null(w);
	else
		nt_jw_str(w, buf);
}

static void kcpuset(nt_jw *w, const char *key, const nt_cpuset *s)
{
	nt_jw_key(w, key);
	cpuset(w, s);
}

static void kint(nt_jw *w, const char *key, long long v)
{
	nt_jw_key(w, key);
	nt_jw_int(w, v);
}

static void kbool(nt_jw *w, const char *key, bool v)
{
	nt_jw_key(w, key);
	nt_jw_bool(w, v);
}

static void knull(nt_jw *w, const char *key)
{
	nt_jw_key(w, key);
	nt_jw_null(w);
}

/* nt_topology_nodes_of */
static void nodes_of(nt_jw *w, const nt_topology *t, const nt_cpuset *set)
{
	nt_cpuset seen;
	bool unknown = nt_topology_node_set(t, set, &seen);
	nt_jw_arr(w);
	for (int n = nt_cpuset_next(&seen, 0); n >= 0; n = nt_cpuset_next(&seen, n + 1))
		nt_jw_int(w, n);
	if (unknown)
		nt_jw_int(w, -1);
	nt_jw_arr_end(w);
}

static const char *source_name(nt_node_source s)
{
	switch (s) {
	case NT_SRC_SYSFS: return "sysfs";
	case NT_SRC_LOCAL_CPULIST: return "local_cpulist";
	default: return "unknown";
	}
}

/* V in decimal into KEY (16 bytes). */
static void int_key(char *key, int v)
{
	char d[12];
	int n = 0, k = 0;
	unsigned u = v < 0 ? 0U - (unsigned)v : (unsigned)v;
	do {
		d[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		key[k++] = '-';
	while (n > 0)
		key[k++] = d[--n];
	key[k] = '\0';
}

static int cmp_col(const void *a, const void *b, void *arg)
{
	const nt_topology *t = arg;
	char ka[16], kb[16];
	int_key(ka, t->irq_cpu_columns[*(const int *)a]);
	int_key(kb, t->irq_cpu_columns[*(const int *)b]);
	return strcmp(ka, kb);
}

/* The /proc/interrupts columns in the order of their keys in "per_cpu",
 * malloc'd (NULL when out of memory or without columns). */
static int *column_order(const nt_topology *t)
{
	if (t->ncolumns <= 0)
		return NULL;
	int *o = malloc(sizeof(int) * (size_t)t->ncolumns);
	if (!o)
		return NULL;
	for (int i = 0; i < t->ncolumns; i++)
		o[i] = i;
	qsort_r(o, (size_t)t->ncolumns, sizeof(int), cmp_col, (void *)t);
	return o;
}

/* nt_irq_to_json */
static void irq_json(nt_jw *w, const nt_topology *t, const nt_irq *q, const int *order)
{
	const nt_nic *owner = q->nic >= 0 ? &t->nics[q->nic] : NULL;
	nt_jw_obj(w);
	nt_jw_key(w, "affinity");
	if (q->has_affinity)
		cpuset(w, &q->affinity);
	else
		nt_jw_null(w);
	kstr(w, "chip", q->chip);
	nt_jw_key(w, "effective_affinity");
	if (q->has_effective)
		cpuset(w, &q->effective);
	else
		nt_jw_null(w);
	kint(w, "irq", q->irq);
	nt_jw_key(w, "local");
	if (owner && owner->numa_node >= 0 && q->has_affinity)
		nt_jw_bool(w, nt_topology_set_on_node(t, &q->affinity, owner->numa_node));
	else
		nt_jw_null(w);
	nt_jw_key(w, "managed");
	if (q->managed_known)
		nt_jw_bool(w, q->managed);
	else
		nt_jw_null(w);
	kstr(w, "name", q->name);
	nt_jw_key(w, "nodes");
	if (q->has_affinity) {
		nodes_of(w, t, &q->affinity);
	} else {
		nt_jw_arr(w);
		nt_jw_arr_end(w);
	}
	nt_jw_key(w, "owner");
	if (owner)
		nt_jw_str(w, owner->name);
	else
		nt_jw_null(w);
	if (order) {
		/* ORDER: the columns sorted by their CPU number as a string, as
		 * JSON_SORT_KEYS orders the keys. */
		int cols = q->ncounts < t->ncolumns ? q->ncounts : t->ncolumns;
		nt_jw_key(w, "per_cpu");
		nt_jw_obj(w);
		for (int k = 0; k < t->ncolumns; k++) {
			int i = order[k];
			if (i >= cols || !q->counts[i])
				continue;
			char key[16];
			int_key(key, t->irq_cpu_columns[i]);
			nt_jw_key(w, key);
			nt_jw_int(w, (long long)(json_int_t)q->counts[i]);
		}
		nt_jw_obj_end(w);
	}
	nt_jw_key(w, "queue");
	if (q->queue >= 0)
		nt_jw_int(w, q->queue);
	else
		nt_jw_null(w);
	kint(w, "total", (long long)(json_int_t)q->total);
	nt_jw_obj_end(w);
}

/* NIC members, by the name each has in the document. */
enum {
	M_BOND, M_CHANNELS, M_DRIVER, M_IFINDEX, M_IRQS, M_LOCAL_CPUS, M_MAC, M_MASTER, M_MTU, M_NAME,
	M_NUMA_NODE, M_NUMA_NODE_SOURCE, M_OPERSTATE, M_PCI_ADDRESS, M_RINGS, M_SPEED_MBPS, M_STATS,
	M_VIRTUAL, M_COUNT
};
static const char *const nic_members[M_COUNT] = {
	"bond", "channels", "driver", "ifindex", "irqs", "local_cpus", "mac", "master", "mtu", "name",
	"numa_node", "numa_node_source", "operstate", "pci_address", "rings", "speed_mbps", "stats",
	"virtual",
};

typedef struct {
	const char *key;
	int member; /* M_*, or -1 for a reporter's member */
	const json_t *value;
} nic_entry;

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const nic_entry *)a)->key, ((const nic_entry *)b)->key);
}

static void nic_member(nt_jw *w, const nt_topology *t, const nt_nic *n, int m)
{
	switch (m) {
	case M_BOND: kbool(w, "bond", n->is_bond); break;
	case M_CHANNELS:
		nt_jw_key(w, "channels");
		if (!n->has_channels) {
			nt_jw_null(w);
			break;
		}
		nt_jw_obj(w);
		kint(w, "combined", (long long)n->channels.combined);
		kint(w, "combined_max", (long long)n->channels.combined_max);
		kint(w, "other", (long long)n->channels.other);
		kint(w, "other_max", (long long)n->channels.other_max);
		kint(w, "rx", (long long)n->channels.rx);
		kint(w, "rx_max", (long long)n->channels.rx_max);
		kint(w, "tx", (long long)n->channels.tx);
		kint(w, "tx_max", (long long)n->channels.tx_max);
		nt_jw_obj_end(w);
		break;
	case M_DRIVER: kstr_or_null(w, "driver", n->driver); break;
	case M_IFINDEX: kint(w, "ifindex", n->ifindex); break;
	case M_IRQS:
		nt_jw_key(w, "irqs");
		nt_jw_arr(w);
		for (int i = 0; i < n->nirqs; i++)
			irq_json(w, t, &t->irqs[n->irqs[i]], NULL);
		nt_jw_arr_end(w);
		break;
	case M_LOCAL_CPUS:
		if (n->has_local_cpus)
			kcpuset(w, "local_cpus", &n->local_cpus);
		else
			knull(w, "local_cpus");
		break;
	case M_MAC: kstr_or_null(w, "mac", n->mac); break;
	case M_MASTER: kstr_or_null(w, "master", n->master); break;
	case M_MTU: kint(w, "mtu", n->mtu); break;
	case M_NAME: kstr(w, "name", n->name); break;
	case M_NUMA_NODE: kint(w, "numa_node", n->numa_node); break;
	case M_NUMA_NODE_SOURCE: kstr(w, "numa_node_source", source_name(n->numa_node_source)); break;
	case M_OPERSTATE: kstr(w, "operstate", n->operstate[0] ? n->operstate : "unknown"); break;
	case M_PCI_ADDRESS: kstr_or_null(w, "pci_address", n->pci_address); break;
	case M_RINGS:
		nt_jw_key(w, "rings");
		if (!n->has_rings) {
			nt_jw_null(w);
			break;
		}
		nt_jw_obj(w);
		kint(w, "rx", (long long)n->rings.rx);
		kint(w, "rx_max", (long long)n->rings.rx_max);
		kint(w, "tx", (long long)n->rings.tx);
		kint(w, "tx_max", (long long)n->rings.tx_max);
		nt_jw_obj_end(w);
		break;
	case M_SPEED_MBPS:
		if (n->speed_mbps > 0)
			kint(w, "speed_mbps", n->speed_mbps);
		else
			knull(w, "speed_mbps");
		break;
	case M_STATS:
		nt_jw_key(w, "stats");
		if (!n->has_stats) {
			nt_jw_null(w);
			break;
		}
		nt_jw_obj(w);
		kint(w, "rx_bytes", (long long)(json_int_t)n->rx_bytes);
		kint(w, "rx_dropped", (long long)(json_int_t)n->rx_dropped);
		kint(w, "rx_errors", (long long)(json_int_t)n->rx_errors);
		kint(w, "rx_fifo_errors", (long long)(json_int_t)n->rx_fifo_errors);
		kint(w, "rx_missed", (long long)(json_int_t)n->rx_missed);
		kint(w, "rx_packets", (long long)(json_int_t)n->rx_packets);
		kint(w, "tx_bytes", (long long)(json_int_t)n->tx_bytes);
		kint(w, "tx_packets", (long long)(json_int_t)n->tx_packets);
		nt_jw_obj_end(w);
		break;
	case M_VIRTUAL: kbool(w, "virtual", n->is_virtual); break;
	default: break;
	}
}

/* nt_nic_to_json: the reader's members and, among them in key order, the
 * reporters' members that do not reuse one of their names. */
static void nic_json(nt_jw *w, const nt_topology *t, const nt_nic *n)
{
	size_t nrep = json_object_size(n->reported);
	nic_entry fixed[M_COUNT + 16], *e = fixed;
	size_t ne = 0;
	if (M_COUNT + nrep > sizeof(fixed) / sizeof(fixed[0])) {
		e = malloc(sizeof(*e) * (M_COUNT + nrep));
		if (!e) {
			w->oom = true;
			return;
		}
	}
	for (int m = 0; m < M_COUNT; m++)
		e[ne++] = (nic_entry){ nic_members[m], m, NULL };
	const char *key;
	json_t *v;
	json_object_foreach(n->reported, key, v) {
		bool taken = false;
		for (int m = 0; m < M_COUNT && !taken; m++)
			taken = strcmp(nic_members[m], key) == 0;
		if (!taken)
			e[ne++] = (nic_entry){ key, -1, v };
	}
	qsort(e, ne, sizeof(*e), cmp_entry);
	nt_jw_obj(w);
	for (size_t i = 0; i < ne; i++) {
		if (e[i].member >= 0) {
			nic_member(w, t, n, e[i].member);
		} else {
			nt_jw_key(w, e[i].key);
			nt_jw_json(w, e[i].value);
		}
	}
	nt_jw_obj_end(w);
	if (e != fixed)
		free(e);
}

static void node_cores(nt_jw *w, const nt_topology *t, const nt_numa_node *n)
{
	nt_cpuset seen, core;
	int from = 0;
	nt_cpuset_zero(&seen);
	nt_jw_arr(w);
	while (nt_node_next_core(t, n, &seen, &from, &core))
		cpuset(w, &core);
	nt_jw_arr_end(w);
}

static int cmp_sysctl(const void *a, const void *b)
{
	return strcmp((*(const nt_sysctl_value *const *)a)->key, (*(const nt_sysctl_value *const *)b)->key);
}

char *nt_topology_to_text(const nt_topology *t, size_t *len)
{
	nt_jw w;
	nt_jw_init(&w);
	nt_jw_obj(&w);

	nt_jw_key(&w, "bonds");
	nt_jw_arr(&w);
	for (int i = 0; i < t->nbonds; i++) {
		const nt_bond *b = &t->bonds[i];
		/* json_pack refuses the whole bond for one bad string. */
		bool ok = nt_jw_utf8(b->name) && nt_jw_utf8(b->mode) && nt_jw_utf8(b->xmit_hash_policy);
		for (int k = 0; ok && k < b->nslaves; k++)
			ok = nt_jw_utf8(b->slaves[k]);
		if (!ok)
			continue;
		nt_jw_obj(&w);
		if (b->miimon >= 0)
			kint(&w, "miimon", b->miimon);
		else
			knull(&w, "miimon");
		kstr_or_null(&w, "mode", b->mode);
		kstr(&w, "name", b->name);
		nt_jw_key(&w, "slaves");
		nt_jw_arr(&w);
		for (int k = 0; k < b->nslaves; k++)
			nt_jw_str(&w, b->slaves[k]);
		nt_jw_arr_end(&w);
		kstr_or_null(&w, "xmit_hash_policy", b->xmit_hash_policy);
		nt_jw_obj_end(&w);
	}
	nt_jw_arr_end(&w);

	nt_jw_key(&w, "cpus");
	nt_jw_obj(&w);
	kcpuset(&w, "online", &t->cpus_online);
	kint(&w, "online_count", nt_cpuset_count(&t->cpus_online));
	kint(&w, "possible", t->ncpus_possible);
	kcpuset(&w, "present", &t->cpus_present);
	nt_jw_obj_end(&w);

	const char *root = t->ctx.root[0] ? t->ctx.root : "/";
	if (nt_jw_utf8(t->hostname) && nt_jw_utf8(t->kernel) && nt_jw_utf8(root) && nt_jw_utf8(t->netns)) {
		nt_jw_key(&w, "host");
		nt_jw_obj(&w);
		kstr(&w, "hostname", t->hostname);
		kstr(&w, "kernel", t->kernel);
		kbool(&w, "live", t->ctx.live);
		kstr_or_null(&w, "netns", t->netns);
		kbool(&w, "netns_initial", !t->ctx.netns_other);
		kstr(&w, "root", root);
		nt_jw_obj_end(&w);
	}

	kbool(&w, "irq_info_available", t->have_irq_info);

	if (nt_jw_utf8(t->irqbalance.socket_path)) {
		nt_jw_key(&w, "irqbalance");
		nt_jw_obj(&w);
		if (t->irqbalance.running)
			kint(&w, "pid", t->irqbalance.pid);
		else
			knull(&w, "pid");
		kbool(&w, "running", t->irqbalance.running);
		kstr_or_null(&w, "socket", t->irqbalance.socket_path);
		nt_jw_obj_end(&w);
	}

	nt_jw_key(&w, "nics");
	nt_jw_arr(&w);
	for (int i = 0; i < t->nnics; i++)
		nic_json(&w, t, &t->nics[i]);
	nt_jw_arr_end(&w);

	nt_jw_key(&w, "numa_nodes");
	nt_jw_arr(&w);
	for (int i = 0; i < t->nnodes; i++) {
		const nt_numa_node *n = &t->nodes[i];
		nt_jw_obj(&w);
		nt_jw_key(&w, "cores");
		node_cores(&w, t, n);
		kint(&w, "cpu_count", nt_cpuset_count(&n->cpus));
		kcpuset(&w, "cpus", &n->cpus);
		nt_jw_key(&w, "distances");
		nt_jw_arr(&w);
		for (int k = 0; k < n->ndist; k++)
			nt_jw_int(&w, n->distances[k]);
		nt_jw_arr_end(&w);
		kbool(&w, "has_memory", n->has_memory);
		kint(&w, "id", n->id);
		kint(&w, "memory_free_kb", (long long)(json_int_t)n->mem_free_kb);
		kint(&w, "memory_total_kb", (long long)(json_int_t)n->mem_total_kb);
		nt_jw_obj_end(&w);
	}
	nt_jw_arr_end(&w);

	nt_jw_key(&w, "problems");
	nt_jw_json(&w, t->problems);

	nt_jw_key(&w, "sysctl");
	nt_jw_obj(&w);
	const nt_sysctl_value *sorted[64], **sv = sorted;
	if (t->nsysctls > 64 && !(sv = malloc(sizeof(*sv) * (size_t)t->nsysctls)))
		w.oom = true;
	if (!w.oom) {
		for (int i = 0; i < t->nsysctls; i++)
			sv[i] = &t->sysctls[i];
		qsort(sv, (size_t)t->nsysctls, sizeof(*sv), cmp_sysctl);
		for (int i = 0; i < t->nsysctls; i++) {
			if (sv[i]->present)
				kstr(&w, sv[i]->key, sv[i]->value);
			else
				knull(&w, sv[i]->key);
		}
	}
	if (sv != sorted)
		free(sv);
	nt_jw_obj_end(&w);

	nt_jw_obj_end(&w);
	return nt_jw_finish(&w, true, len);
}

char *nt_nics_to_text(const nt_topology *t, size_t *len)
{
	nt_jw w;
	nt_jw_init(&w);
	nt_jw_obj(&w);
	nt_jw_key(&w, "nics");
	nt_jw_arr(&w);
	for (int i = 0; i < t->nnics; i++)
		nic_json(&w, t, &t->nics[i]);
	nt_jw_arr_end(&w);
	nt_jw_obj_end(&w);
	return nt_jw_finish(&w, true, len);
}

char *nt_irqs_to_text(const nt_topology *t, size_t *len)
{
	nt_jw w;
	int *order = column_order(t);
	static const int none[1] = { 0 };
	nt_jw_init(&w);
	if (t->ncolumns > 0 && !order)
		return NULL;
	nt_jw_obj(&w);
	kbool(&w, "available", t->have_irq_info);
	nt_jw_key(&w, "cpu_columns");
	nt_jw_arr(&w);
	for (int i = 0; i < t->ncolumns; i++)
		nt_jw_int(&w, t->irq_cpu_columns[i]);
	nt_jw_arr_end(&w);
	nt_jw_key(&w, "irqs");
	nt_jw_arr(&w);
	for (int i = 0; i < t->nirqs; i++)
		irq_json(&w, t, &t->irqs[i], order ? order : none);
	nt_jw_arr_end(&w);
	nt_jw_obj_end(&w);
	free(order);
	return nt_jw_finish(&w, true, len);
}
