/* SPDX-License-Identifier: Apache-2.0 */
/* Per-NAPI values: target = "IF/rx-N/ATTR", the NAPI that serves RX queue
 * N, ATTR the netdev family's word ("defer-hard-irqs", "gro-flush-timeout",
 * "irq-suspend-timeout", "threaded"); value = the number (a count,
 * nanoseconds, or the threaded mode: 0 disabled, 1 enabled, 2 busy-poll).
 *
 * Profile section (this file's; it asks for the NAPI kinds of
 * settings/napi_device.c and napi_thread.c as well):
 *   "napi": [{"interface": "enos*", "threaded": true, "thread_cpus": "irq",
 *             "defer_hard_irqs": 10, "gro_flush_timeout_ns": 20000,
 *             "irq_suspend_timeout_ns": 0, "queues": "0-7"}]
 * "threaded" without "queues" is the device's (/sys/class/net/IF/threaded:
 * every NAPI, TX-only ones too); with "queues" it is each chosen queue's
 * NAPI's own, through napi-set (6.17), and on older kernels it is refused
 * unless the queues are all of them (then the device's, said in a
 * warning);
 * "thread_cpus" pins each NAPI thread, to the CPUs its IRQ is placed on
 * ("irq": by this profile's irq_affinity, else as it is now) or to a
 * cpulist; the three numbers go to each NAPI through the family's
 * napi-set (6.13), keyed by (interface, queue), not by NAPI id, which a
 * link reset changes. On kernels without napi-set, defer_hard_irqs and
 * gro_flush_timeout_ns go to the device-wide sysfs files (5.8: every NAPI
 * at once; not with "queues"), and irq_suspend_timeout_ns, which has no
 * such file, is refused. Eric Dumazet's pair: defer 10 with gro 20000.
 *
 * A profile that places a NIC's IRQs (irq_affinity) on a NIC whose NAPI
 * work runs in threads (threaded on now, and no napi[] entry for it saying
 * "threaded" or "thread_cpus") places each NAPI thread with its IRQ as
 * well, as if napi[] said "thread_cpus": "irq": otherwise the interrupt
 * goes where the profile says while the packets are processed wherever the
 * scheduler puts the thread (napi.rst: "pin each kernel thread to a single
 * CPU, the same CPU as the CPU which services the interrupt"). */
#include "settings/napi_kind.h"
#include "settings/queue_kind.h"
#include "host/queues.h"
#include "kernel/queues.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the per-NAPI kind ---- */

static int attr_of(const char *word, nt_napi_attr *a)
{
	for (int i = NT_NAPI_DEFER_HARD_IRQS; i <= NT_NAPI_THREADED; i++)
		if (!strcmp(word, nt_napi_attr_name((nt_napi_attr)i))) {
			*a = (nt_napi_attr)i;
			return 0;
		}
	return NT_EINVALID;
}

static int64_t napi_value(const nt_nd_napi *n, nt_napi_attr a)
{
	return a == NT_NAPI_DEFER_HARD_IRQS   ? n->defer_hard_irqs :
	       a == NT_NAPI_GRO_FLUSH_TIMEOUT ? n->gro_flush_timeout :
	       a == NT_NAPI_THREADED	      ? n->threaded :
						n->irq_suspend_timeout;
}

/* The kernel that brought A to napi-get and napi-set. */
static const char *napi_since(nt_napi_attr a)
{
	return a == NT_NAPI_THREADED ? "6.17" : "6.13";
}

/* TARGET's interface, queue, attribute and NAPI as the kernel says now. */
static int resolve(const nt_ctx *ctx, const char *target, char *ifname, uint32_t *queue, nt_napi_attr *a,
		   nt_nd_napi *n)
{
	char word[32];
	if (nt_nk_target(target, ifname, queue, word, sizeof(word)) < 0 || attr_of(word, a) < 0)
		return NT_EINVALID;
	return nt_nk_napi(ctx, ifname, *queue, n);
}

static int napi_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	char ifname[IF_NAMESIZE];
	uint32_t queue;
	nt_napi_attr a;
	nt_nd_napi n;
	memset(out, 0, sizeof(*out));
	int r = resolve(ctx, target, ifname, &queue, &a, &n);
	if (r < 0)
		return r;
	/* napi-get without the value: a kernel before 6.13 (6.17 for
	 * threaded). */
	if (napi_value(&n, a) < 0)
		return -EOPNOTSUPP;
	nt_nk_set_u64(out, (uint64_t)napi_value(&n, a));
	return 0;
}

static int napi_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		      const nt_value *v, char *why, size_t whysize)
{
	char ifname[IF_NAMESIZE];
	uint32_t queue = 0;
	nt_napi_attr a = NT_NAPI_DEFER_HARD_IRQS;
	nt_nd_napi n;
	int r = resolve(ctx, target, ifname, &queue, &a, &n);
	if (r == NT_EINVALID) {
		snprintf(why, whysize, "'%s' is not IFACE/rx-N/defer-hard-irqs, gro-flush-timeout, "
				       "irq-suspend-timeout or threaded", target);
		return NT_EINVALID;
	}
	if (r < 0) {
		snprintf(why, whysize, "%s rx-%u: the kernel names no NAPI for it (%s)", ifname, queue,
			 r == -ENOENT ? "no NAPI serves the queue" : nt_strerror(r));
		return NT_EINVALID;
	}
	if (napi_value(&n, a) < 0) {
		snprintf(why, whysize, "%s rx-%u: %s is set per NAPI through the netdev family's napi-set, "
				       "which this kernel lacks (Linux %s or later)", ifname, queue,
			 nt_napi_attr_name(a), napi_since(a));
		return NT_EINVALID;
	}
	/* 0 disabled, 1 enabled, 2 busy-poll: a rollback writes back a 2 it
	 * found; the kernel's policy refuses what its enum lacks. */
	if (a == NT_NAPI_THREADED && nt_nk_u64(v) > 2) {
		snprintf(why, whysize, "%s rx-%u: threaded %llu is not 0 (disabled), 1 (enabled) or 2 (busy-poll)",
			 ifname, queue, (unsigned long long)nt_nk_u64(v));
		return NT_EINVALID;
	}
	if (a == NT_NAPI_DEFER_HARD_IRQS && nt_nk_u64(v) > INT32_MAX) {
		snprintf(why, whysize, "%s rx-%u: defer-hard-irqs %llu is above %d", ifname, queue,
			 (unsigned long long)nt_nk_u64(v), INT32_MAX);
		return NT_EINVALID;
	}
	return 0;
}

static int napi_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		      size_t errsize)
{
	char ifname[IF_NAMESIZE] = "?", kerr[256] = "";
	uint32_t queue = 0;
	nt_napi_attr a = NT_NAPI_DEFER_HARD_IRQS;
	nt_nd_napi n = { .id = 0 };
	int r = resolve(ctx, target, ifname, &queue, &a, &n);
	/* Read, compare, write only what differs. */
	if (r == 0 && napi_value(&n, a) >= 0 && (uint64_t)napi_value(&n, a) == nt_nk_u64(v))
		return 0;
	if (r == 0)
		r = nt_netdev_napi_set(ctx, ifname, n.id, a, nt_nk_u64(v), kerr, sizeof(kerr));
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s rx-%u (NAPI %u) %s %llu: %s%s%s", ifname, queue, n.id,
			 nt_napi_attr_name(a), (unsigned long long)nt_nk_u64(v), nt_strerror(r), kerr[0] ? ": " : "",
			 kerr);
	return r;
}

const nt_setting_kind nt_setting_napi = {
	.name = "napi",
	/* The family answers for the links of the requester's namespace. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NAPI is a link's of this namespace",
	.parse = nt_nk_parse_u64,
	.format = nt_nk_format_u64,
	.equal = nt_nk_equal_u64,
	.read = napi_read,
	.check = napi_check,
	.apply = napi_apply,
	/* After the device's files (37): where both are given, the device's
	 * napi_defer_hard_irqs would overwrite every NAPI's value. */
	.order = 38,
	.events = 0,
};

/* ---- "napi": [...] ---- */

/* The profile's numbers, their napi-set words and their device-wide files
 * (NULL: none), with their bounds. */
static const struct {
	const char *field, *attr, *file;
	json_int_t max;
} numbers[] = {
	/* The kernel's policy for defer-hard-irqs: 0..S32_MAX. */
	{ "defer_hard_irqs", "defer-hard-irqs", "napi_defer_hard_irqs", INT32_MAX },
	{ "gro_flush_timeout_ns", "gro-flush-timeout", "gro_flush_timeout", INT64_MAX },
	{ "irq_suspend_timeout_ns", "irq-suspend-timeout", NULL, INT64_MAX },
};
#define NNUMBERS (sizeof(numbers) / sizeof(numbers[0]))

/* Whether RX queue's NAPI A (NULL: not known) of NIC has a thread after
 * the plan as far as entry E says: E turns threaded on, or leaves on what
 * is on: the NAPI's own mode where the kernel reports it (6.17), else the
 * device's. */
static bool threaded_after(const json_t *e, const nt_nk_facts *f, const nt_nd_napi *a)
{
	json_t *th = json_object_get(e, "threaded");
	if (th)
		return json_is_true(th);
	return a && a->threaded >= 0 ? a->threaded > 0 : f->threaded > 0;
}

/* Whether QUEUES holds every one of NRX RX queues (NRX -1: unknown, no). */
static bool all_queues(const nt_cpuset *queues, int nrx)
{
	int n = 0;
	for (int q = nt_cpuset_next(queues, 0); q >= 0 && q < nrx; q = nt_cpuset_next(queues, q + 1))
		n++;
	return nrx > 0 && n == nrx;
}

/* The checks of entry E (BASE, its IFACE pattern) against NIC. */
static void check_nic(nt_section_check *c, const json_t *e, const char *base, const nt_nic *nic, bool named)
{
	char path[NT_JSONPATH_MAX];
	nt_nk_facts f;
	nt_cpuset queues;
	if (nt_nk_facts_read(c->reads, c->t, nic, &f) < 0)
		return;
	bool no_napi = f.family == 0 && f.nnapis == 0;
	/* A glob passes over NICs without NAPI (the plan says so). */
	if (no_napi && !named)
		return;
	if (no_napi) {
		snprintf(path, sizeof(path), "%s.interface", base);
		nt_sc_error(c, path, "%s has no NAPI instance, so it has no NAPI to set or thread to run (veth "
				     "gets one per RX queue with GRO or XDP on)", nic->name);
		return;
	}
	bool per_queue = json_object_get(e, "queues") != NULL;
	for (size_t i = 0; i < NNUMBERS; i++) {
		if (!json_object_get(e, numbers[i].field) || f.napi_set)
			continue;
		snprintf(path, sizeof(path), "%s.%s", base, numbers[i].field);
		if (!numbers[i].file)
			nt_sc_error(c, path, "%s: %s is set per NAPI through the netdev family's napi-set (%s), "
					     "which this kernel lacks (Linux 6.13 or later); it has no device-wide "
					     "file", nic->name, numbers[i].field, numbers[i].attr);
		else if (per_queue)
			nt_sc_error(c, path, "%s: %s for some queues is set per NAPI through the netdev family's "
					     "napi-set, which this kernel lacks (Linux 6.13 or later); without "
					     "'queues' it goes to the device-wide /sys/class/net/%s/%s, for every NAPI",
				    nic->name, numbers[i].field, nic->name, numbers[i].file);
	}
	nt_qk_queues(e, f.nrx < 0 ? 0 : f.nrx, &queues);
	/* Threaded for some queues only: each NAPI's own mode (6.17). Before,
	 * the device's file is all there is, and it threads every NAPI. */
	if (json_object_get(e, "threaded") && per_queue && !f.napi_threaded && !all_queues(&queues, f.nrx)) {
		snprintf(path, sizeof(path), "%s.threaded", base);
		nt_sc_error(c, path, "%s: threaded for some queues is set per NAPI through the netdev family's "
				     "napi-set, which this kernel lacks (Linux 6.17 or later); without 'queues' it "
				     "goes to the device-wide /sys/class/net/%s/threaded, for every NAPI",
			    nic->name, nic->name);
	}
	const char *tc = json_string_value(json_object_get(e, "thread_cpus"));
	if (!tc)
		return;
	snprintf(path, sizeof(path), "%s.thread_cpus", base);
	if (f.family < 0) {
		if (!threaded_after(e, &f, NULL))
			nt_sc_error(c, path, "%s: thread_cpus needs threaded NAPI, and /sys/class/net/%s/threaded "
					     "is %s and this entry does not turn it on (add \"threaded\": true)",
				    nic->name, nic->name, f.threaded < 0 ? "missing" : "0");
		else
			nt_sc_error(c, path, "%s: thread_cpus finds each queue's NAPI thread through the netdev "
					     "family's napi-get, which this kernel lacks (Linux 6.8 or later)",
				    nic->name);
		return;
	}
	for (int q = nt_cpuset_next(&queues, 0); q >= 0 && q < f.nrx; q = nt_cpuset_next(&queues, q + 1)) {
		const nt_nd_napi *a = nt_netdev_rx_napi(f.nd, nic->ifindex, (uint32_t)q);
		if (!a) {
			nt_sc_error(c, path, "%s rx-%d: the kernel names no NAPI for the queue", nic->name, q);
			break;
		}
		if (!threaded_after(e, &f, a)) {
			if (a->threaded < 0)
				nt_sc_error(c, path, "%s: thread_cpus needs threaded NAPI, and /sys/class/net/%s/"
						     "threaded is %s and this entry does not turn it on (add \"threaded\": "
						     "true)", nic->name, nic->name, f.threaded < 0 ? "missing" : "0");
			else
				nt_sc_error(c, path, "%s rx-%d: thread_cpus needs threaded NAPI, and its NAPI (%u) is "
						     "not threaded and this entry does not turn it on (add \"threaded\": "
						     "true)", nic->name, q, a->id);
			break;
		}
		if (!strcmp(tc, "irq") && a->irq < 0 && nt_plan_queue_irq(c->reads, c->t, nic, q, false) < 0) {
			nt_sc_error(c, path, "%s rx-%d: its NAPI (%u) has no IRQ to follow; give a cpulist",
				    nic->name, q, a->id);
			break;
		}
	}
}

static void validate_napi(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "queues", "threaded", "thread_cpus", "defer_hard_irqs",
					     "gro_flush_timeout_ns", "irq_suspend_timeout_ns", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];
	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "napi", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		const char *tc = nt_sc_str(c, e, base, "thread_cpus", false);
		json_t *th = json_object_get(e, "threaded");
		bool ok = true, any = th || tc;
		if (th && !json_is_boolean(th)) {
			snprintf(path, sizeof(path), "%s.threaded", base);
			nt_sc_error(c, path, "'threaded' must be true or false");
			ok = false;
		}
		for (size_t k = 0; k < NNUMBERS; k++) {
			json_t *x = json_object_get(e, numbers[k].field);
			if (!x)
				continue;
			any = true;
			snprintf(path, sizeof(path), "%s.%s", base, numbers[k].field);
			if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > numbers[k].max) {
				nt_sc_error(c, path, "'%s' must be an integer from 0 to %lld%s", numbers[k].field,
					    (long long)numbers[k].max,
					    numbers[k].max == INT32_MAX ? "" : " (nanoseconds)");
				ok = false;
			}
		}
		if (!any)
			nt_sc_error(c, base, "give at least one of 'threaded', 'thread_cpus', 'defer_hard_irqs', "
					     "'gro_flush_timeout_ns', 'irq_suspend_timeout_ns'");
		if (tc) {
			snprintf(path, sizeof(path), "%s.thread_cpus", base);
			if (th && json_is_false(th)) {
				nt_sc_error(c, path, "thread_cpus needs threaded NAPI, and this entry turns it off");
				ok = false;
			} else if (strcmp(tc, "irq")) {
				size_t before = json_array_size(c->errors);
				nt_sc_cpulist(c, tc, path, true);
				ok &= json_array_size(c->errors) == before;
			}
		}
		nt_qk_validate_queues(c, e, base, iface, false);
		if (!iface)
			continue;
		snprintf(path, sizeof(path), "%s.interface", base);
		if (nt_sc_iface(c, iface, path, false) <= 0 || !c->t || !ok)
			continue;
		for (int k = 0; k < c->t->nnics; k++)
			if (!c->t->nics[k].is_bond && nt_iface_match(iface, c->t->nics[k].name))
				check_nic(c, e, base, &c->t->nics[k], !nt_iface_is_glob(iface));
	}
}

/* The CPUs of the IRQ serving NAPI A (RX queue Q of NIC) after this
 * profile's placement: what pass 0 desired for it, else what it is.
 * False when the NAPI has no IRQ the host model knows. The NAPI's IRQ as
 * the family names it, else the plan's queue->IRQ map (the names, where
 * the family gives no IRQs). */
static bool irq_cpus(const nt_section_plan *p, const nt_nic *nic, const nt_nd_napi *a, int q, nt_cpuset *out)
{
	char target[16];
	const nt_irq *irq = a->irq >= 0 && a->irq <= INT32_MAX ? nt_topology_irq(p->t, (int)a->irq) : NULL;
	if (!irq) {
		int idx = nt_plan_queue_irq(p->reads, p->t, nic, q, false);
		irq = idx >= 0 ? &p->t->irqs[idx] : NULL;
	}
	if (!irq)
		return false;
	snprintf(target, sizeof(target), "%d", irq->irq);
	const nt_desired *d = nt_desire_get(p, &nt_setting_irq_affinity, target);
	*out = d ? d->value.cpus : irq->affinity;
	return !nt_cpuset_empty(out);
}

/* Whether pass 0 of this profile placed one of NIC's IRQs. */
static bool irqs_placed(const nt_section_plan *p, const nt_nic *nic)
{
	char target[16];
	for (int q = 0; q < nic->nirqs; q++) {
		snprintf(target, sizeof(target), "%d", p->t->irqs[nic->irqs[q]].irq);
		if (nt_desire_get(p, &nt_setting_irq_affinity, target))
			return true;
	}
	return false;
}

/* The values entry E (index I) asks of NIC. */
static int desire_nic(nt_section_plan *p, const json_t *e, size_t i, const nt_nic *nic, bool named)
{
	char path[NT_JSONPATH_MAX], target[NT_TARGET_MAX];
	nt_nk_facts f;
	nt_cpuset queues;
	nt_value v;
	int r = nt_nk_facts_read(p->reads, p->t, nic, &f);
	if (r < 0)
		return r;
	if (f.family == 0 && f.nnapis == 0) {
		if (!named)
			nt_desire_warn(p, "%s: no NAPI instance; left out of napi[%zu]", nic->name, i);
		return 0;
	}
	nt_qk_queues(e, f.nrx < 0 ? 0 : f.nrx, &queues);
	json_t *th = json_object_get(e, "threaded");
	/* With "queues", each chosen queue's NAPI on its own where the kernel
	 * has it (6.17); else the device's file (validated: all queues). */
	bool per_napi = th && json_object_get(e, "queues") && f.napi_threaded;
	snprintf(path, sizeof(path), "$.napi[%zu].threaded", i);
	if (th && !per_napi) {
		memset(&v, 0, sizeof(v));
		/* A device already threaded keeps its own word: a newer
		 * kernel's 2 (busy-poll; 6.18 has no such mode) is on as well. */
		nt_nk_set_u64(&v, json_is_true(th) ? (f.threaded > 0 ? (uint64_t)f.threaded : 1) : 0);
		snprintf(target, sizeof(target), "%s/threaded", nic->name);
		if (json_object_get(e, "queues"))
			nt_desire_warn(p, "%s: threaded goes to /sys/class/net/%s/threaded, for every NAPI of the "
					  "device: the kernel has no per-NAPI threaded (Linux 6.17)", nic->name, nic->name);
		if ((r = nt_desire_put(p, &nt_setting_napi_device, target, nic->name, &v, path)) < 0)
			return r;
	}
	for (int q = nt_cpuset_next(&queues, 0); per_napi && q >= 0 && q < f.nrx; q = nt_cpuset_next(&queues, q + 1)) {
		const nt_nd_napi *a = nt_netdev_rx_napi(f.nd, nic->ifindex, (uint32_t)q);
		if (!a)
			continue; /* the kind's check says so */
		memset(&v, 0, sizeof(v));
		/* A NAPI threaded already keeps its mode (2, busy-poll, is on). */
		nt_nk_set_u64(&v, json_is_true(th) ? (a->threaded > 0 ? (uint64_t)a->threaded : 1) : 0);
		snprintf(target, sizeof(target), "%s/rx-%d/threaded", nic->name, q);
		if ((r = nt_desire_put(p, &nt_setting_napi, target, nic->name, &v, path)) < 0)
			return r;
	}
	for (size_t k = 0; k < NNUMBERS; k++) {
		json_t *x = json_object_get(e, numbers[k].field);
		if (!x)
			continue;
		memset(&v, 0, sizeof(v));
		nt_nk_set_u64(&v, (uint64_t)json_integer_value(x));
		snprintf(path, sizeof(path), "$.napi[%zu].%s", i, numbers[k].field);
		if (!f.napi_set) {
			/* Validated: only the two with a device-wide file. */
			snprintf(target, sizeof(target), "%s/%s", nic->name, numbers[k].file);
			nt_desire_warn(p, "%s: %s goes to /sys/class/net/%s/%s, for every NAPI of the device: the "
					  "kernel has no per-NAPI napi-set (Linux 6.13)",
				       nic->name, numbers[k].field, nic->name, numbers[k].file);
			if ((r = nt_desire_put(p, &nt_setting_napi_device, target, nic->name, &v, path)) < 0)
				return r;
			continue;
		}
		for (int q = nt_cpuset_next(&queues, 0); q >= 0 && q < f.nrx; q = nt_cpuset_next(&queues, q + 1)) {
			snprintf(target, sizeof(target), "%s/rx-%d/%s", nic->name, q, numbers[k].attr);
			if ((r = nt_desire_put(p, &nt_setting_napi, target, nic->name, &v, path)) < 0)
				return r;
		}
	}
	const char *tc = json_string_value(json_object_get(e, "thread_cpus"));
	snprintf(path, sizeof(path), "$.napi[%zu].thread_cpus", i);
	/* "threaded": true without "thread_cpus" in a profile that places the
	 * NIC's IRQs: the threads go with them ("irq"), as for a NIC threaded
	 * already (follow_irqs). */
	if (!tc && json_is_true(th) && irqs_placed(p, nic)) {
		tc = "irq";
		snprintf(path, sizeof(path), "$.napi[%zu].threaded", i);
	}
	for (int q = nt_cpuset_next(&queues, 0); tc && q >= 0 && q < f.nrx; q = nt_cpuset_next(&queues, q + 1)) {
		const nt_nd_napi *a = nt_netdev_rx_napi(f.nd, nic->ifindex, (uint32_t)q);
		memset(&v, 0, sizeof(v));
		if (!a)
			continue; /* refused by the check (named) */
		if (strcmp(tc, "irq"))
			nt_cpulist_parse(tc, &v.cpus);
		else if (!irq_cpus(p, nic, a, q, &v.cpus)) {
			nt_desire_warn(p, "%s rx-%d: its NAPI has no IRQ to follow; thread left as it is", nic->name, q);
			continue;
		}
		snprintf(target, sizeof(target), "%s/rx-%d", nic->name, q);
		if ((r = nt_desire_put(p, &nt_setting_napi_thread_cpus, target, nic->name, &v, path)) < 0)
			return r;
	}
	return 0;
}

/* Whether a napi[] entry of ARR (NULL: none) names NIC and says where its
 * threads go or whether it has any ("thread_cpus", "threaded"). */
static bool threads_chosen(const json_t *arr, const nt_nic *nic)
{
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e) {
		if (nt_iface_match(json_string_value(json_object_get(e, "interface")), nic->name) &&
		    (json_object_get(e, "thread_cpus") || json_object_get(e, "threaded")))
			return true;
	}
	return false;
}

/* The threads of NIC placed with the IRQs this profile places (the file's
 * comment says why), for each NAPI threaded now: by its own mode where the
 * kernel reports it (6.17: one NAPI may be threaded on a device that is
 * not), else by the device's. */
static int follow_irqs(nt_section_plan *p, const nt_nic *nic)
{
	char target[NT_TARGET_MAX];
	nt_nk_facts f;
	nt_value v;
	int n = 0, r = nt_nk_facts_read(p->reads, p->t, nic, &f);
	if (r < 0)
		return r;
	for (int q = 0; f.family == 0 && q < f.nrx; q++) {
		const nt_nd_napi *a = nt_netdev_rx_napi(f.nd, nic->ifindex, (uint32_t)q);
		memset(&v, 0, sizeof(v));
		if (!a || !(a->threaded >= 0 ? a->threaded > 0 : f.threaded > 0) || !irq_cpus(p, nic, a, q, &v.cpus))
			continue;
		snprintf(target, sizeof(target), "%s/rx-%d", nic->name, q);
		if ((r = nt_desire_put(p, &nt_setting_napi_thread_cpus, target, nic->name, &v, "$.irq_affinity")) < 0)
			return r;
		n++;
	}
	if (n)
		nt_desire_warn(p, "%s: threaded NAPI is on: its %d NAPI thread%s placed with %s IRQs (napi[] "
				  "thread_cpus or threaded chooses otherwise)",
			       nic->name, n, n == 1 ? "" : "s", n == 1 ? "its" : "their");
	return 0;
}

static int desire_napi(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	/* First the threads that follow the IRQs this profile places; an entry
	 * for the same queue below would replace them, but none is made for a
	 * NIC an entry speaks of. */
	for (int k = 0; k < p->t->nnics; k++) {
		const nt_nic *nic = &p->t->nics[k];
		if (nic->is_bond || nic->nirqs == 0 || threads_chosen(arr, nic) || !irqs_placed(p, nic))
			continue;
		int r = follow_irqs(p, nic);
		if (r < 0)
			return r;
	}
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		for (int k = 0; k < p->t->nnics; k++) {
			const nt_nic *nic = &p->t->nics[k];
			if (nic->is_bond || !nt_iface_match(pattern, nic->name))
				continue;
			int r = desire_nic(p, e, i, nic, !nt_iface_is_glob(pattern));
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static const nt_profile_section section_napi = {
	.key = "napi",
	.type = JSON_ARRAY,
	.validate = validate_napi,
	.desire = desire_napi,
	/* After irq_affinity's placement (pass 0): "irq" follows it. */
	.pass = 1,
	/* Also without napi[]: threads follow the IRQs a profile places. */
	.always = true,
};

const nt_setting_module nt_module_napi = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_napi, NULL },
	.sections = (const nt_profile_section *const[]){ &section_napi, NULL },
};
