/* Findings on a host model: what the authors of the field reports in
 * docs/field-reports.md dug out by hand (IRQs off the NIC's node, IRQs of several NICs on one CPU, irqbalance undoing manual
 * affinity, small rings with drops, layer2 bond hashing, small TCP buffers),
 * each with the facts it rests on and the profile fragment that fixes it.
 *
 * Everything here reads only the nt_topology it is given: no file, no
 * kernel call, so a hand-built model in a unit test is a complete host. The
 * output is deterministic (sorted by severity, then subject in natural order,
 * then id) so two reads of the same host give byte-identical documents. */
#include "diagnose/diagnose.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SEV_ERROR = 0, SEV_WARNING = 1, SEV_INFO = 2 };

static const char *const sev_names[] = { "error", "warning", "info" };

#define DIAG_DEFAULT_RTT_MS 10

typedef struct diag_item {
	json_t *finding;
	int sev;
	int seq; /* insertion order: the last tie-breaker, so qsort is stable */
	const char *subject; /* borrowed from finding */
	const char *id;
} diag_item;

typedef struct diag {
	const nt_topology *t;
	int rtt_ms;
	diag_item *items;
	int n, cap;
} diag;

/* ---- small helpers over the model ---- */

static int cpu_node(const nt_topology *t, int cpu)
{
	if (!t->cpu_node || cpu < 0 || cpu >= t->ncpus_possible)
		return -1;
	return t->cpu_node[cpu];
}

static const nt_nic *find_nic(const nt_topology *t, const char *name)
{
	for (int i = 0; i < t->nnics; i++)
		if (strcmp(t->nics[i].name, name) == 0)
			return &t->nics[i];
	return NULL;
}

static const nt_irq *nic_irq(const nt_topology *t, const nt_nic *nic, int k)
{
	int idx = nic->irqs[k];
	if (idx < 0 || idx >= t->nirqs)
		return NULL;
	return &t->irqs[idx];
}

static const char *sysctl_value(const nt_topology *t, const char *key)
{
	for (int i = 0; i < t->nsysctls; i++)
		if (t->sysctls[i].present && t->sysctls[i].key && strcmp(t->sysctls[i].key, key) == 0)
			return t->sysctls[i].value;
	return NULL;
}

static bool nic_is_physical(const nt_nic *n)
{
	return !n->is_virtual && !n->is_bond;
}

static bool nic_is_up(const nt_nic *n)
{
	return strcmp(n->operstate, "up") == 0;
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

/* ---- collecting findings ---- */

/* Adds one finding. EVIDENCE and FIX are stolen in every case (FIX NULL
 * means "no fix", serialized as null). Returns 0 or -ENOMEM. */
static int add_finding(diag *d, const char *id, int sev, const char *subject, json_t *evidence,
	json_t *fix, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static int add_finding(diag *d, const char *id, int sev, const char *subject, json_t *evidence,
	json_t *fix, const char *fmt, ...)
{
	int err = -ENOMEM;
	char *message = NULL;
	json_t *f = NULL;
	va_list ap;

	va_start(ap, fmt);
	int w = vasprintf(&message, fmt, ap);
	va_end(ap);
	if (w < 0) {
		message = NULL;
		goto out;
	}
	if (!evidence)
		goto out;
	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 16;
		diag_item *items = realloc(d->items, (size_t)cap * sizeof(*items));
		if (!items)
			goto out;
		d->items = items;
		d->cap = cap;
	}
	/* json_pack steals "o" references even when it fails. */
	f = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "id", id, "severity", sev_names[sev],
		"subject", subject, "message", message, "evidence", evidence, "fix",
		fix ? fix : json_null());
	evidence = NULL;
	fix = NULL;
	if (!f)
		goto out;
	d->items[d->n] = (diag_item){
		.finding = f,
		.sev = sev,
		.seq = d->n,
		.subject = json_string_value(json_object_get(f, "subject")),
		.id = json_string_value(json_object_get(f, "id")),
	};
	d->n++;
	err = 0;
out:
	json_decref(evidence);
	json_decref(fix);
	free(message);
	return err;
}

/* Natural order, so "eth2" sorts before "eth10" and "irq 185" before
 * "irq 1000": runs of digits compare by value. */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			while (*a == '0' && a[1] >= '0' && a[1] <= '9')
				a++;
			while (*b == '0' && b[1] >= '0' && b[1] <= '9')
				b++;
			size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
			if (la != lb)
				return la < lb ? -1 : 1;
			int c = strncmp(a, b, la);
			if (c)
				return c;
			a += la;
			b += lb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int item_cmp(const void *pa, const void *pb)
{
	const diag_item *a = pa, *b = pb;
	if (a->sev != b->sev)
		return a->sev < b->sev ? -1 : 1;
	int c = natural_cmp(a->subject, b->subject);
	if (c)
		return c;
	c = strcmp(a->id, b->id);
	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* ---- the checks ---- */

static int check_irq_info(diag *d)
{
	if (d->t->have_irq_info)
		return 0;
	return add_finding(d, "irq-info-missing", SEV_INFO, "host",
		json_pack("{s:b}", "have_irq_info", 0), NULL,
		"No IRQ information on this host (/proc/interrupts could not be read), so "
		"interrupt placement was not checked.");
}

/* Out of the box, a 4-node server served every NIC's interrupts on node 0,
 * wherever the NIC sat, and its CPU use grew faster than its throughput
 * with every node added (docs/field-reports.md#irq-remote-node). */
static int check_irq_remote_node(diag *d)
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

		json_t *rule = json_pack("{s:s, s:s}", "interface", nic->name, "policy", "local");
		/* CPU 0 is kept out of the NIC masks, as the x460 report did
		 * because that CPU usually carries much of the other work
		 * (docs/field-reports.md#cpu0-kept-free). Only worth saying when
		 * CPU 0 is on this NIC's node and is not its only CPU. */
		const nt_numa_node *node = NULL;
		for (int n = 0; n < t->nnodes; n++)
			if (t->nodes[n].id == nic->numa_node)
				node = &t->nodes[n];
		if (rule && cpu_node(t, 0) == nic->numa_node &&
			(!node || nt_cpuset_count(&node->cpus) > 1))
			json_object_set_new(rule, "exclude_cpus", json_string("0"));
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
		int err = add_finding(d, "irq-remote-node", SEV_WARNING, nic->name, ev, fix,
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
		if (nic->numa_node >= 0 &&
			json_array_append_new(rules, json_pack("{s:s, s:s}", "interface", nic->name,
				"policy", "local")) < 0)
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
	err = add_finding(d, "irq-shared-first-cpu", SEV_WARNING, subject, ev, fix,
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
static int check_irq_shared_first_cpu(diag *d)
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
		/* Managed IRQs cannot be moved (see check_irq_remote_node). */
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

static int check_irqbalance(diag *d)
{
	const nt_topology *t = d->t;
	if (!t->irqbalance.running)
		return 0;
	json_t *ev = json_pack("{s:b, s:i}", "running", 1, "pid", t->irqbalance.pid);
	if (ev && t->irqbalance.socket_path[0])
		json_object_set_new(ev, "socket_path", json_string(t->irqbalance.socket_path));
	/* "ban" keeps irqbalance for the other IRQs but tells it, over its
	 * socket, to leave the tuned ones alone. */
	json_t *fix = json_pack("{s:s}", "irqbalance", "ban");
	if (!fix) {
		json_decref(ev);
		return -ENOMEM;
	}
	return add_finding(d, "irqbalance-active", SEV_WARNING, "irqbalance", ev, fix,
		"irqbalance is running (pid %d) and rewrites IRQ affinity periodically, so "
		"manual affinity will be undone unless it is told to leave those IRQs alone "
		"or stopped (see docs/field-reports.md#irqbalance-rewrites).",
		t->irqbalance.pid);
}

/* RX drops at 40 Gbit/s with a ring of 1024 out of 8192 on a 100G host
 * (docs/field-reports.md#ring-rx-drops). */
static int check_rings(diag *d)
{
	const nt_topology *t = d->t;
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *nic = &t->nics[i];
		if (!nic->has_rings || nic->rings.rx_max == 0 || nic->rings.rx >= nic->rings.rx_max)
			continue;
		uint64_t drops = 0;
		if (nic->has_stats)
			drops = nic->rx_dropped + nic->rx_missed + nic->rx_fifo_errors;
		json_t *ev = json_pack("{s:I, s:I}", "rx", (json_int_t)nic->rings.rx, "rx_max",
			(json_int_t)nic->rings.rx_max);
		if (ev && nic->has_stats) {
			json_object_set_new(ev, "rx_dropped", json_integer((json_int_t)nic->rx_dropped));
			json_object_set_new(ev, "rx_missed", json_integer((json_int_t)nic->rx_missed));
			json_object_set_new(ev, "rx_fifo_errors",
				json_integer((json_int_t)nic->rx_fifo_errors));
			json_object_set_new(ev, "rx_drops_total", json_integer((json_int_t)drops));
		}
		json_t *fix = json_pack("{s:[{s:s, s:s}]}", "rings", "interface", nic->name, "rx", "max");
		if (!fix) {
			json_decref(ev);
			return -ENOMEM;
		}
		int err;
		if (drops > 0)
			err = add_finding(d, "ring-below-max", SEV_ERROR, nic->name, ev, fix,
				"%s drops received packets (%" PRIu64 " dropped, missed or FIFO "
				"errors) with its RX ring at %u of a possible %u; a larger ring "
				"absorbs bursts (see docs/field-reports.md#ring-rx-drops).",
				nic->name, drops, nic->rings.rx, nic->rings.rx_max);
		else
			err = add_finding(d, "ring-below-max", SEV_INFO, nic->name, ev, fix,
				"%s has its RX ring at %u of a possible %u; no drops counted yet.",
				nic->name, nic->rings.rx, nic->rings.rx_max);
		if (err)
			return err;
	}
	return 0;
}

/* Bonding modes that do not use xmit_hash_policy: balance-rr deals packets
 * round-robin, active-backup sends on one slave, broadcast on all. */
static bool bond_mode_hashes(const nt_bond *b)
{
	static const char *const unhashed[] = { "balance-rr", "active-backup", "broadcast" };
	if (b->mode[0]) {
		for (size_t i = 0; i < sizeof(unhashed) / sizeof(unhashed[0]); i++) {
			size_t l = strlen(unhashed[i]);
			/* sysfs spells it "balance-rr 0" */
			if (strncmp(b->mode, unhashed[i], l) == 0 &&
				(b->mode[l] == '\0' || b->mode[l] == ' '))
				return false;
		}
		return true;
	}
	return !(b->mode_num == 0 || b->mode_num == 1 || b->mode_num == 3);
}

/* layer2+3 hashing put one client on one port (~10 Gbit/s); layer3+4
 * spread its connections (18+ Gbit/s)
 * (docs/field-reports.md#bond-hash-layer3-4). */
static int check_bonds(diag *d)
{
	const nt_topology *t = d->t;
	for (int i = 0; i < t->nbonds; i++) {
		const nt_bond *b = &t->bonds[i];
		if (strcmp(b->xmit_hash_policy, "layer2") != 0 &&
			strcmp(b->xmit_hash_policy, "layer2+3") != 0)
			continue;
		if (b->nslaves < 2 || !bond_mode_hashes(b))
			continue;
		json_t *slaves = json_array();
		for (int s = 0; slaves && s < b->nslaves; s++)
			if (json_array_append_new(slaves, json_string(b->slaves[s])) < 0) {
				json_decref(slaves);
				slaves = NULL;
			}
		json_t *ev = json_pack("{s:s, s:s, s:o}", "mode", b->mode, "xmit_hash_policy",
			b->xmit_hash_policy, "slaves", slaves);
		json_t *fix = json_pack("{s:[{s:s, s:s}]}", "bonds", "interface", b->name,
			"xmit_hash_policy", "layer3+4");
		if (!fix) {
			json_decref(ev);
			return -ENOMEM;
		}
		int err = add_finding(d, "bond-hash-layer2", SEV_WARNING, b->name, ev, fix,
			"%s hashes on %s, so all traffic to one peer leaves by one of its %d ports "
			"(one client got ~10 Gbit/s on a 100G bond, 18+ Gbit/s after layer3+4; "
			"see docs/field-reports.md#bond-hash-layer3-4).",
			b->name, b->xmit_hash_policy, b->nslaves);
		if (err)
			return err;
	}
	return 0;
}

/* Speed of a bond: the sum of its slaves that are up, except active-backup
 * and broadcast where one slave's worth is what a flow can use. */
static long bond_speed(const nt_topology *t, const nt_bond *b)
{
	long sum = 0, max = 0;
	for (int s = 0; s < b->nslaves; s++) {
		const nt_nic *n = find_nic(t, b->slaves[s]);
		if (!n || !nic_is_up(n) || n->speed_mbps <= 0)
			continue;
		sum += n->speed_mbps;
		if (n->speed_mbps > max)
			max = n->speed_mbps;
	}
	bool one_at_a_time = strncmp(b->mode, "active-backup", 13) == 0 ||
		strncmp(b->mode, "broadcast", 9) == 0 ||
		(!b->mode[0] && (b->mode_num == 1 || b->mode_num == 3));
	return one_at_a_time ? max : sum;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return NT_EPARSE;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end)
		return NT_EPARSE;
	*out = v;
	return 0;
}

/* "min default max" of tcp_rmem / tcp_wmem */
static int parse_triple(const char *s, uint64_t v[3])
{
	unsigned long long a, b, c;
	char tail;
	if (sscanf(s, "%llu %llu %llu %c", &a, &b, &c, &tail) != 3)
		return NT_EPARSE;
	v[0] = a;
	v[1] = b;
	v[2] = c;
	return 0;
}

static uint64_t pow2_at_least(uint64_t x)
{
	uint64_t p = 1;
	while (p < x && p < (UINT64_C(1) << 62))
		p <<= 1;
	return p;
}

/* A TCP connection cannot have more bytes in flight than its socket buffer,
 * so a buffer maximum below the bandwidth-delay product caps one stream
 * below line rate (the 100G report raised them to 16 MiB:
 * docs/field-reports.md#tcp-buffers-bdp). */
static int check_tcp_buffers(diag *d)
{
	const nt_topology *t = d->t;
	const char *fastest = NULL;
	long speed = 0;
	bool fastest_is_bond = false;

	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *n = &t->nics[i];
		if (nic_is_physical(n) && nic_is_up(n) && n->speed_mbps > speed) {
			speed = n->speed_mbps;
			fastest = n->name;
			fastest_is_bond = false;
		}
	}
	for (int i = 0; i < t->nbonds; i++) {
		const nt_bond *b = &t->bonds[i];
		const nt_nic *bn = find_nic(t, b->name);
		if (bn && !nic_is_up(bn))
			continue;
		long s = bond_speed(t, b);
		if (s > speed) {
			speed = s;
			fastest = b->name;
			fastest_is_bond = true;
		}
	}
	if (!fastest)
		return 0;

	uint64_t bdp = (uint64_t)speed * 125u * (uint64_t)d->rtt_ms; /* Mbit/s*1e6/8 * ms/1000 */
	uint64_t want = pow2_at_least(bdp);

	static const struct {
		const char *key;
		bool triple;
	} keys[] = {
		{ "net.ipv4.tcp_rmem", true },
		{ "net.ipv4.tcp_wmem", true },
		{ "net.core.rmem_max", false },
		{ "net.core.wmem_max", false },
	};
	int err = -ENOMEM;
	json_t *values = json_object(), *small = json_array(), *sysctl = json_object();
	char list[256] = "";
	size_t off = 0;
	if (!values || !small || !sysctl)
		goto out;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *v = sysctl_value(t, keys[k].key);
		if (!v)
			continue;
		uint64_t tri[3] = { 0, 0, 0 }, max = 0;
		if (keys[k].triple ? parse_triple(v, tri) : parse_u64(v, &max))
			continue;
		if (keys[k].triple)
			max = tri[2];
		if (json_object_set_new(values, keys[k].key, json_string(v)) < 0)
			goto out;
		if (max >= bdp)
			continue;
		char fixed[96];
		if (keys[k].triple)
			snprintf(fixed, sizeof(fixed), "%" PRIu64 " %" PRIu64 " %" PRIu64, tri[0], tri[1],
				want);
		else
			snprintf(fixed, sizeof(fixed), "%" PRIu64, want);
		if (json_array_append_new(small, json_string(keys[k].key)) < 0 ||
			json_object_set_new(sysctl, keys[k].key, json_string(fixed)) < 0)
			goto out;
		if (off < sizeof(list)) {
			int w = snprintf(list + off, sizeof(list) - off, "%s%s %" PRIu64,
				off ? ", " : "", keys[k].key, max);
			if (w > 0)
				off += (size_t)w;
		}
	}
	err = 0;
	if (json_array_size(small) == 0)
		goto out;

	json_t *ev = json_pack("{s:s, s:b, s:I, s:i, s:I, s:O, s:O}", "interface", fastest, "bond",
		fastest_is_bond, "speed_mbps", (json_int_t)speed, "rtt_ms", d->rtt_ms, "bdp_bytes",
		(json_int_t)bdp, "values", values, "below_bdp", small);
	json_t *fix = json_pack("{s:O}", "sysctl", sysctl);
	if (!fix) {
		json_decref(ev);
		err = -ENOMEM;
		goto out;
	}
	err = add_finding(d, "tcp-buffers-small", SEV_WARNING, "sysctl", ev, fix,
		"TCP buffer maxima are below the bandwidth-delay product of %s (%ld Mbit/s at "
		"%d ms RTT = %" PRIu64 " bytes): %s; one connection cannot fill the link "
		"(see docs/field-reports.md#tcp-buffers-bdp).",
		fastest, speed, d->rtt_ms, bdp, list);
out:
	json_decref(values);
	json_decref(small);
	json_decref(sysctl);
	return err;
}

static int check_locality(diag *d)
{
	const nt_topology *t = d->t;
	/* On a single-node host every CPU and all memory are local to every
	 * NIC, so not knowing a NIC's node changes nothing. */
	if (t->nnodes <= 1)
		return 0;
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *nic = &t->nics[i];
		if (!nic_is_physical(nic) || nic->numa_node_source != NT_SRC_UNKNOWN)
			continue;
		json_t *ev = json_pack("{s:i, s:s, s:s, s:i}", "numa_node", nic->numa_node,
			"numa_node_source", "unknown", "pci_address", nic->pci_address, "host_nodes",
			t->nnodes);
		int err = add_finding(d, "nic-locality-unknown", SEV_INFO, nic->name, ev, NULL,
			"The NUMA node of %s is unknown (the kernel reports %d and gives no local "
			"CPU list) on a host with %d nodes; its IRQs cannot be placed by locality.",
			nic->name, nic->numa_node, t->nnodes);
		if (err)
			return err;
	}
	return 0;
}

json_t *nt_diagnose(const nt_topology *t, const nt_diag_options *opt)
{
	diag d = { .t = t, .rtt_ms = DIAG_DEFAULT_RTT_MS };
	json_t *out = NULL, *findings = NULL;
	int counts[3] = { 0, 0, 0 };

	if (opt && opt->rtt_ms > 0)
		d.rtt_ms = opt->rtt_ms;

	if (check_irq_info(&d) || check_irq_remote_node(&d) || check_irq_shared_first_cpu(&d) ||
		check_irqbalance(&d) || check_rings(&d) || check_bonds(&d) ||
		check_tcp_buffers(&d) || check_locality(&d))
		goto out;

	if (d.n)
		qsort(d.items, (size_t)d.n, sizeof(*d.items), item_cmp);
	findings = json_array();
	if (!findings)
		goto out;
	for (int i = 0; i < d.n; i++) {
		counts[d.items[i].sev]++;
		if (json_array_append(findings, d.items[i].finding) < 0)
			goto out;
	}
	out = json_pack("{s:i, s:O, s:{s:i, s:i, s:i}}", "rtt_ms", d.rtt_ms, "findings", findings,
		"summary", "error", counts[SEV_ERROR], "warning", counts[SEV_WARNING], "info",
		counts[SEV_INFO]);
out:
	json_decref(findings);
	for (int i = 0; i < d.n; i++)
		json_decref(d.items[i].finding);
	free(d.items);
	return out;
}

/* Append the entries of FIX[KEY] to OUT[KEY], skipping interfaces already
 * present: two findings about one NIC must not ask for two placements. */
static int merge_entries(json_t *out, const json_t *fix, const char *key)
{
	json_t *src = json_object_get(fix, key), *dst = json_object_get(out, key);
	size_t i, k;
	json_t *e, *d;

	if (!json_is_array(src))
		return 0;
	json_array_foreach(src, i, e) {
		const char *ifname = json_string_value(json_object_get(e, "interface"));
		bool dup = false;
		json_array_foreach(dst, k, d)
			if (ifname && json_equal(json_object_get(d, "interface"), json_object_get(e, "interface")))
				dup = true;
		if (!dup && json_array_append(dst, e) < 0)
			return -ENOMEM;
	}
	return 0;
}

json_t *nt_diagnose_fix_profile(const json_t *diagnosis, const char *name)
{
	json_t *p = json_pack("{s:s, s:s, s:[], s:[], s:[], s:{}}", "name", name, "description",
			      "fixes for the findings of nettune diagnose", "irq_affinity", "rings", "bonds",
			      "sysctl");
	size_t i;
	json_t *f;

	if (!p)
		return NULL;
	json_array_foreach(json_object_get(diagnosis, "findings"), i, f) {
		json_t *fix = json_object_get(f, "fix");
		if (!json_is_object(fix))
			continue;
		if (merge_entries(p, fix, "irq_affinity") < 0 || merge_entries(p, fix, "rings") < 0 ||
		    merge_entries(p, fix, "bonds") < 0)
			goto fail;
		json_t *sys = json_object_get(fix, "sysctl");
		if (json_is_object(sys) && json_object_update_missing(json_object_get(p, "sysctl"), sys) < 0)
			goto fail;
		json_t *ib = json_object_get(fix, "irqbalance");
		if (json_is_string(ib) && !json_object_get(p, "irqbalance"))
			json_object_set(p, "irqbalance", ib);
	}
	/* A profile lists only what it changes. */
	static const char *const keys[] = { "irq_affinity", "rings", "bonds" };
	for (size_t k = 0; k < 3; k++)
		if (json_array_size(json_object_get(p, keys[k])) == 0)
			json_object_del(p, keys[k]);
	if (json_object_size(json_object_get(p, "sysctl")) == 0)
		json_object_del(p, "sysctl");
	return p;
fail:
	json_decref(p);
	return NULL;
}

/* Insert finding F (stolen) after the last finding of its severity or a
 * graver one, keeping the document's order by severity, and count it. */
static int insert_finding(json_t *diagnosis, int sev, json_t *f)
{
	json_t *arr = json_object_get(diagnosis, "findings"), *x;
	size_t i, pos = 0;
	if (!f || !json_is_array(arr)) {
		json_decref(f);
		return -ENOMEM;
	}
	json_array_foreach(arr, i, x) {
		const char *s = json_string_value(json_object_get(x, "severity"));
		for (int k = 0; k <= (int)sev; k++)
			if (s && !strcmp(s, sev_names[k]))
				pos = i + 1;
	}
	if (json_array_insert_new(arr, pos, f) < 0)
		return -ENOMEM;
	json_t *sum = json_object_get(diagnosis, "summary");
	json_t *n = json_object_get(sum, sev_names[sev]);
	if (json_is_integer(n))
		json_integer_set(n, json_integer_value(n) + 1);
	return 0;
}

int nt_diagnose_add_drift(json_t *diagnosis, const json_t *drift)
{
	const char *status = json_string_value(json_object_get(drift, "status"));
	const char *policy = json_string_value(json_object_get(drift, "policy"));
	size_t i;
	json_t *t;
	char msg[768];

	if (status && !strcmp(status, "invalid")) {
		snprintf(msg, sizeof(msg), "%s",
			 json_string_value(json_object_get(drift, "message")) ?
				 json_string_value(json_object_get(drift, "message")) :
				 "the desired profile does not validate on this host");
		json_t *f = json_pack("{s:s, s:s, s:s, s:s, s:{s:O}, s:n}", "id", "drift", "severity",
				      sev_names[SEV_WARNING], "subject", "host", "message", msg,
				      "evidence", "errors", json_object_get(drift, "errors"), "fix");
		if (insert_finding(diagnosis, SEV_WARNING, f) < 0)
			return -ENOMEM;
	}
	json_array_foreach(json_object_get(drift, "targets"), i, t) {
		const char *state = json_string_value(json_object_get(t, "state"));
		const char *kind = json_string_value(json_object_get(t, "kind"));
		const char *target = json_string_value(json_object_get(t, "target"));
		int sev;
		if (!state || !kind || !target)
			continue;
		if (!strcmp(state, "contested")) {
			sev = SEV_WARNING;
			snprintf(msg, sizeof(msg),
				 "%s %s keeps drifting from the desired state (%s, now %s) and is no "
				 "longer repaired: %s", kind, target,
				 json_string_value(json_object_get(t, "desired")),
				 json_string_value(json_object_get(t, "current")),
				 json_string_value(json_object_get(t, "culprit")) ?
					 json_string_value(json_object_get(t, "culprit")) : "");
		} else if (!strcmp(state, "drifted") && policy && !strcmp(policy, "report")) {
			/* Under "repair" a drifted target is repaired within
			 * moments; under "report" it stays so. */
			sev = SEV_WARNING;
			snprintf(msg, sizeof(msg),
				 "%s %s differs from the desired state (%s, now %s); the drift "
				 "policy is report, so it stays so", kind, target,
				 json_string_value(json_object_get(t, "desired")),
				 json_string_value(json_object_get(t, "current")));
		} else if (!strcmp(state, "overridden")) {
			sev = SEV_INFO;
			snprintf(msg, sizeof(msg),
				 "%s %s was changed by transaction %lld after the desired state was "
				 "set; the desired state is not enforced on it", kind, target,
				 (long long)json_integer_value(
					 json_object_get(json_object_get(t, "changed_by"), "txn")));
		} else {
			continue;
		}
		json_t *f = json_pack("{s:s, s:s, s:s, s:s, s:O, s:n}", "id", "drift", "severity",
				      sev_names[sev], "subject", target, "message", msg, "evidence", t,
				      "fix");
		if (insert_finding(diagnosis, sev, f) < 0)
			return -ENOMEM;
	}
	return 0;
}
