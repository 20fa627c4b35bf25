/* SPDX-License-Identifier: Apache-2.0 */
/* IRQ affinity: target = IRQ number, value = the CPU set it may run on.
 *
 * Profile sections:
 *   "irq_affinity": [{"interface": "eth*", "policy": "local", "exclude_cpus": "0",
 *                     "reserve_app_cpus": 4}, {"interface": "enos0", "cpus": "0-7"}]
 *       a NIC's movable IRQs placed by placement/irq.c;
 *   "other_irqs": {"cpus": "0-1"}
 *       every IRQ of no NIC named above to housekeeping CPUs, as one mask
 *       each (docs/field-reports.md#other-irqs-to-system-node).
 *
 * The write goes to /proc/irq/N/smp_affinity_list through kernel/, which
 * on a fixture root also updates what the kernel would (the mask and the
 * effective affinity). On the live host effective affinity changes only
 * when the IRQ next fires, so verification compares smp_affinity_list
 * alone and the effective CPUs are recorded as an observation. */
#include "placement/irq.h"
#include "settings/section.h"
#include "kernel/kernel.h"
#include "host/hostcache.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_irq(const char *target, long *irq)
{
	char *end;
	if (!target || !isdigit((unsigned char)target[0]))
		return NT_EINVALID;
	errno = 0;
	long v = strtol(target, &end, 10);
	if (errno || *end || v < 0 || v > 1000000)
		return NT_EINVALID;
	*irq = v;
	return 0;
}

/* ---- values ---- */

static int irq_parse(const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	return nt_cpulist_parse(text, &out->cpus) < 0 ? NT_EPARSE : 0;
}

static int irq_format(const nt_value *v, char *out, size_t size)
{
	return nt_cpulist_format(&v->cpus, out, size) < 0 ? -ENOSPC : 0;
}

static bool irq_equal(const nt_value *a, const nt_value *b)
{
	return nt_cpuset_equal(&a->cpus, &b->cpus);
}

/* ---- the system ---- */

static int irq_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	long irq;
	char buf[NT_VALUE_MAX * 4];
	int r = parse_irq(target, &irq);
	if (r < 0)
		return r;
	memset(out, 0, sizeof(*out));
	r = nt_read_str(ctx, buf, sizeof(buf), "/proc/irq/%ld/smp_affinity_list", irq);
	if (r == -ENOENT) {
		/* Old kernels have only the mask. */
		r = nt_read_str(ctx, buf, sizeof(buf), "/proc/irq/%ld/smp_affinity", irq);
		if (r < 0)
			return r;
		r = nt_cpumask_parse(buf, &out->cpus);
	} else if (r >= 0) {
		r = nt_cpulist_parse(buf, &out->cpus);
	}
	return r < 0 ? r : 0;
}

static int irq_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		     const nt_value *v, char *why, size_t whysize)
{
	long irq;
	char list[NT_VALUE_MAX];
	if (parse_irq(target, &irq) < 0) {
		snprintf(why, whysize, "'%s' is not an IRQ number", target);
		return NT_EINVALID;
	}
	if (nt_cpuset_empty(&v->cpus)) {
		snprintf(why, whysize, "IRQ %ld: the CPU set is empty", irq);
		return NT_EINVALID;
	}
	if (t && !nt_cpuset_subset(&v->cpus, &t->cpus_online)) {
		snprintf(why, whysize, "cpulist '%s' names CPUs that are not online",
			 irq_format(v, list, sizeof(list)) == 0 ? list : "?");
		return NT_EINVALID;
	}
	/* An IRQ of the host model exists (T was read for this plan). */
	const nt_irq *q = t ? nt_topology_irq(t, (int)irq) : NULL;
	if (!(q && q->has_affinity) && !nt_exists(ctx, "/proc/irq/%ld", irq)) {
		snprintf(why, whysize, "IRQ %ld does not exist", irq);
		return NT_EINVALID;
	}
	return 0;
}

/* Write V to IRQ TARGET; with BACK, read smp_affinity_list back into it
 * through the same descriptor (nt_kernel_irq_set_affinity_held). */
static int irq_write(const nt_ctx *ctx, const char *target, const nt_value *v, char *back, size_t size,
		     int *read_r, char *err, size_t errsize)
{
	long irq;
	char list[NT_VALUE_MAX * 4];
	int r = parse_irq(target, &irq);

	if (r == 0 && nt_cpuset_empty(&v->cpus))
		r = NT_EINVALID;
	if (r == 0 && nt_cpulist_format(&v->cpus, list, sizeof(list)) < 0)
		r = -ENOSPC;
	if (r == 0)
		return back ? nt_host_cache_irq_set_affinity(ctx->host_cache, ctx, (int)irq, list, back, size,
							     read_r, err, errsize) :
			      nt_kernel_irq_set_affinity(ctx, (int)irq, list, err, errsize);
	if (err && errsize)
		snprintf(err, errsize, "IRQ %s: %s", target, nt_strerror(r));
	return r;
}

static int irq_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target,
		     const nt_value *v, char *err, size_t errsize)
{
	return irq_write(ctx, target, v, NULL, 0, NULL, err, errsize);
}

/* The write and its check through one descriptor (kernel/kernel.h). */
static int irq_apply_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
			  nt_value *got, int *read_err, char *err, size_t errsize)
{
	char back[NT_VALUE_MAX * 4];
	int rr = -EIO;

	*read_err = -EIO;
	memset(got, 0, sizeof(*got));
	int r = irq_write(ctx, target, v, back, sizeof(back), &rr, err, errsize);
	if (r == 0)
		*read_err = rr < 0 ? rr : nt_cpulist_parse(back, &got->cpus) < 0 ? NT_EPARSE : 0;
	return r;
}

/* The IRQ's CPUs as the host model read them from smp_affinity_list (or
 * the mask, as irq_read falls back to). */
static int irq_model_read(const nt_topology *t, const char *target, nt_value *out)
{
	long irq;
	const nt_irq *q = parse_irq(target, &irq) == 0 ? nt_topology_irq(t, (int)irq) : NULL;
	if (!q || !q->has_affinity)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->cpus = q->affinity;
	return 0;
}

/* The observation of effective_affinity_list LIST: "effective N", the
 * CPUs the interrupt is delivered to now. Returns 0 or -ENOSPC. */
static int effective_text(const char *list, char *out, size_t size)
{
	int r = snprintf(out, size, "effective %s", list);
	return r < 0 || (size_t)r >= size ? -ENOSPC : 0;
}

static int irq_observe(const nt_ctx *ctx, nt_ethtool *eh, const char *target, char *out, size_t size)
{
	char buf[NT_VALUE_MAX];
	long irq;
	if (parse_irq(target, &irq) < 0)
		return NT_EINVALID;
	int r = nt_read_str(ctx, buf, sizeof(buf), "/proc/irq/%ld/effective_affinity_list", irq);
	return r < 0 ? r : effective_text(buf, out, size);
}

/* FILE of each IRQ of TARGETS through the host cache's held files:
 * *BUFS (malloc'd, N values of NT_VALUE_MAX * 4 bytes) and RES. Returns 0
 * or -ENOMEM. */
static int read_irq_files(const nt_ctx *ctx, const char *const *targets, int n, const char *file,
			  char **bufs, int *res)
{
	int *irqs = calloc((size_t)n + 1, sizeof(int));
	*bufs = malloc(((size_t)n + 1) * NT_VALUE_MAX * 4);
	if (!irqs || !*bufs) {
		free(irqs);
		free(*bufs);
		*bufs = NULL;
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		long irq;
		irqs[i] = parse_irq(targets[i], &irq) == 0 ? (int)irq : -1;
	}
	int r = nt_host_cache_read_irq_files(ctx->host_cache, ctx, irqs, n, file, *bufs, NT_VALUE_MAX * 4,
					     res);
	for (int i = 0; i < n && r == 0; i++)
		if (irqs[i] < 0)
			res[i] = NT_EINVALID;
	free(irqs);
	if (r < 0) {
		free(*bufs);
		*bufs = NULL;
	}
	return r;
}

static int irq_read_many(const nt_ctx *ctx, const char *const *targets, int n, nt_value *out, int *res)
{
	char *bufs;
	int r = read_irq_files(ctx, targets, n, "smp_affinity_list", &bufs, res);
	if (r < 0)
		return r;
	for (int i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		if (res[i] == -ENOENT) /* old kernels have only the mask */
			res[i] = irq_read(ctx, NULL, targets[i], &out[i]);
		else if (res[i] >= 0)
			res[i] = nt_cpulist_parse(bufs + (size_t)i * NT_VALUE_MAX * 4, &out[i].cpus) < 0 ?
					 NT_EPARSE :
					 0;
	}
	free(bufs);
	return 0;
}

static int irq_observe_many(const nt_ctx *ctx, const char *const *targets, int n, char *out, size_t size,
			    int *res)
{
	char *bufs;
	int r = read_irq_files(ctx, targets, n, "effective_affinity_list", &bufs, res);
	if (r < 0)
		return r;
	for (int i = 0; i < n; i++) {
		char *o = out + (size_t)i * size;
		o[0] = '\0';
		if (res[i] < 0)
			continue;
		res[i] = effective_text(bufs + (size_t)i * NT_VALUE_MAX * 4, o, size);
	}
	free(bufs);
	return 0;
}

const nt_setting_kind nt_setting_irq_affinity = {
	.name = "irq_affinity",
	/* /proc/irq is not namespaced: from any namespace a write moves the
	 * IRQ for the whole machine (the host's virtio and disk IRQs with
	 * other_irqs). */
	.scope = NT_SCOPE_MACHINE,
	.scope_why = "/proc/irq is one for the whole machine: an IRQ's CPUs are not per network namespace",
	.parse = irq_parse,
	.format = irq_format,
	.equal = irq_equal,
	.read = irq_read,
	.check = irq_check,
	.apply = irq_apply,
	.apply_read = irq_apply_read,
	.model_read = irq_model_read,
	.observe = irq_observe,
	.read_many = irq_read_many,
	.observe_many = irq_observe_many,
	.order = 10,
	/* The kernel refuses affinity changes to managed IRQs: with EIO up to
	 * 6.11, with EPERM since 6.12 ("genirq/proc: Change the return value
	 * for set affinity permission error"), its smp_affinity files then
	 * read-only. As root nothing else answers a write with EPERM (a
	 * missing permission fails the open, with EACCES). */
	.skip_errno = { EIO, EPERM, 0 },
	.skip_reason = "skipped: not movable",
	/* A write to /proc/irq/N/smp_affinity sends no event. (A link message
	 * may come with IRQs requested anew, and the watcher checks after any
	 * event, but it does not tell of the writes of another program.) */
	.events = 0,
};

/* ---- "irq_affinity": [...] ---- */

/* Whether an irq_affinity entry's PATTERN names NIC K: by its own name,
 * for a port of a bond by the bond's, or by a VLAN's on it (or on its
 * bond). A bond has no IRQs of its own:
 * it stands for its ports, each placed from its own node (a bond's ports
 * may sit on different nodes), and is itself never a NIC to place. */
static bool entry_names(const nt_topology *t, const char *pattern, int k)
{
	const nt_nic *n = &t->nics[k];
	if (!pattern)
		return false;
	if (n->is_bond) {
		const nt_bond *b = nt_topology_bond(t, n->name);
		if (b && b->nslaves > 0)
			return false;
	}
	/* A VLAN has no IRQs either: the link it sits on is placed. */
	if (n->lower[0] && nt_topology_nic(t, n->lower))
		return false;
	if (nt_iface_match(pattern, n->name))
		return true;
	if (n->master[0] && nt_topology_bond(t, n->master) && nt_iface_match(pattern, n->master))
		return true;
	for (int v = 0; v < t->nnics; v++) {
		const char *low = t->nics[v].lower;
		if (low[0] && (!strcmp(low, n->name) || (n->master[0] && !strcmp(low, n->master))) &&
		    nt_iface_match(pattern, t->nics[v].name))
			return true;
	}
	return false;
}

/* reserve_app_cpus: a count, with a policy, that leaves every matching
 * NIC at least one CPU for its IRQs. */
static void check_reserve(nt_section_check *c, const json_t *e, const char *base, const char *iface,
			  const char *excl)
{
	char path[NT_JSONPATH_MAX];
	json_t *x = json_object_get(e, "reserve_app_cpus");
	if (!x)
		return;
	snprintf(path, sizeof(path), "%s.reserve_app_cpus", base);
	if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > NT_MAX_CPUS) {
		nt_sc_error(c, path, "'reserve_app_cpus' must be an integer from 0 to %d", NT_MAX_CPUS);
		return;
	}
	if (json_object_get(e, "cpus")) {
		nt_sc_error(c, path,
			    "'reserve_app_cpus' goes with a 'policy'; with 'cpus' the IRQ CPUs "
			    "are named, so leave the application's out of them");
		return;
	}
	int n = (int)json_integer_value(x);
	if (!c->t || !iface || !nt_iface_pattern_valid(iface) || n == 0)
		return;
	nt_cpuset exclude, cand;
	nt_cpuset_zero(&exclude);
	if (excl && nt_cpulist_parse(excl, &exclude) < 0)
		return;
	for (int k = 0; k < c->t->nnics; k++) {
		const nt_nic *nic = &c->t->nics[k];
		if (!entry_names(c->t, iface, k) || !nt_nic_local_cpus(c->t, nic, &cand))
			continue;
		nt_cpuset_andnot(&cand, &cand, &exclude);
		int m = nt_cpuset_count(&cand);
		if (n >= m)
			nt_sc_error(c, path,
				    "%s has %d usable CPU(s) on its node; reserving %d leaves none "
				    "for its IRQs", nic->name, m, n);
	}
}

/* Limits of one irq_affinity section: the entries, and the IRQ placements
 * they make (each entry's matched IRQs, summed). A 256-CPU host with 1244
 * IRQs plans 65536 placements in well under a second; unbounded, 5000
 * entries of "*" took 21 s holding the transaction slot. */
#define NT_MAX_IRQ_ENTRIES 1024
#define NT_MAX_IRQ_PLACEMENTS 65536

static void validate_irq(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "cpus", "policy", "exclude_cpus",
					     "reserve_app_cpus", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	/* Planning costs entries x matched IRQs placements, each while the
	 * transaction slot is held: bound it before any is made. */
	if (json_array_size(arr) > NT_MAX_IRQ_ENTRIES) {
		nt_sc_error(c, "$.irq_affinity", "%zu entries; at most %d are accepted",
			    json_array_size(arr), NT_MAX_IRQ_ENTRIES);
		return;
	}
	long long work = 0;
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		for (int k = 0; c->t && pattern && k < c->t->nnics; k++)
			if (entry_names(c->t, pattern, k))
				work += c->t->nics[k].nirqs;
	}
	if (work > NT_MAX_IRQ_PLACEMENTS) {
		nt_sc_error(c, "$.irq_affinity",
			    "the entries match %lld IRQs in all (an IRQ counts once per entry that "
			    "matches it); at most %d are accepted",
			    work, NT_MAX_IRQ_PLACEMENTS);
		return;
	}
	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "irq_affinity", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		const char *cpus = nt_sc_str(c, e, base, "cpus", false);
		const char *policy = nt_sc_str(c, e, base, "policy", false);
		const char *excl = nt_sc_str(c, e, base, "exclude_cpus", false);
		if (iface) {
			snprintf(path, sizeof(path), "%s.interface", base);
			nt_sc_iface(c, iface, path, false);
		}
		bool has_cpus = json_object_get(e, "cpus") != NULL;
		bool has_policy = json_object_get(e, "policy") != NULL;
		if (has_cpus == has_policy)
			nt_sc_error(c, base, "give exactly one of 'cpus' and 'policy'");
		if (cpus) {
			snprintf(path, sizeof(path), "%s.cpus", base);
			nt_sc_cpulist(c, cpus, path, true);
		}
		if (policy && !nt_irq_strategy_known(policy)) {
			snprintf(path, sizeof(path), "%s.policy", base);
			nt_sc_error(c, path, "unknown policy '%s' (known: local, local-node)", policy);
		}
		if (excl) {
			snprintf(path, sizeof(path), "%s.exclude_cpus", base);
			nt_sc_cpulist(c, excl, path, false);
		}
		check_reserve(c, e, base, iface, excl);
	}
}

static int desire_irq(nt_section_plan *p, const json_t *arr)
{
	const nt_topology *t = p->t;
	nt_irq_placement *pl = NULL;
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX], target[32];
	int r;

	if ((r = nt_irq_placement_new(t, &pl)) < 0)
		return r;
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		const char *cpulist = json_string_value(json_object_get(e, "cpus"));
		const char *excl = json_string_value(json_object_get(e, "exclude_cpus"));
		nt_cpuset named;
		nt_irq_request req = {
			.strategy = json_string_value(json_object_get(e, "policy")),
			.reserve_app_cpus = (int)json_integer_value(json_object_get(e, "reserve_app_cpus")),
		};
		nt_cpuset_zero(&req.exclude);
		if (excl)
			nt_cpulist_parse(excl, &req.exclude);
		if (cpulist && nt_cpulist_parse(cpulist, &named) == 0)
			req.cpus = &named;
		snprintf(path, sizeof(path), "$.irq_affinity[%zu]", i);
		for (int k = 0; k < t->nnics; k++) {
			int *irqs = NULL, n = 0;
			nt_cpuset *sets = NULL;
			if (!entry_names(t, pattern, k))
				continue;
			if ((r = nt_irq_place(pl, k, pattern, &req, &irqs, &sets, &n, p->warnings,
					      p->reserved)) < 0)
				goto out;
			for (int q = 0; q < n && r == 0; q++) {
				nt_value v = { .cpus = sets[q] };
				snprintf(target, sizeof(target), "%d", t->irqs[irqs[q]].irq);
				r = nt_desire_put(p, &nt_setting_irq_affinity, target, t->nics[k].name, &v, path);
			}
			free(irqs);
			free(sets);
			if (r < 0)
				goto out;
		}
	}
	r = 0;
out:
	nt_irq_placement_free(pl);
	return r;
}

static const nt_profile_section section_irq = {
	.key = "irq_affinity",
	.type = JSON_ARRAY,
	.validate = validate_irq,
	.desire = desire_irq,
};

/* ---- "other_irqs": {"cpus": ...} ---- */

static void validate_other(nt_section_check *c, const json_t *obj)
{
	static const char *const known[] = { "cpus", NULL };
	nt_sc_unknown_fields(c, obj, "$.other_irqs", known);
	const char *cpus = nt_sc_str(c, obj, "$.other_irqs", "cpus", true);
	if (cpus)
		nt_sc_cpulist(c, cpus, "$.other_irqs.cpus", true);
}

/* Whether an irq_affinity entry of the profile names NIC. */
static bool nic_tuned(const nt_topology *t, const json_t *profile, int nic)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(profile, "irq_affinity"), i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		if (entry_names(t, pattern, nic))
			return true;
	}
	return false;
}

/* Managed IRQs and IRQs without an affinity file stay as they are. */
static int desire_other(nt_section_plan *p, const json_t *obj)
{
	const nt_topology *t = p->t;
	nt_value v;
	char target[32];
	int managed = 0, r;

	memset(&v, 0, sizeof(v));
	if (nt_cpulist_parse(json_string_value(json_object_get(obj, "cpus")), &v.cpus) < 0)
		return 0;
	bool *tuned = calloc((size_t)t->nnics + 1, sizeof(bool));
	if (!tuned)
		return -ENOMEM;
	for (int k = 0; k < t->nnics; k++)
		tuned[k] = nic_tuned(t, p->profile, k);
	for (int i = 0; i < t->nirqs; i++) {
		const nt_irq *irq = &t->irqs[i];
		if ((irq->nic >= 0 && tuned[irq->nic]) || !irq->has_affinity)
			continue;
		if (irq->managed) {
			managed++;
			continue;
		}
		snprintf(target, sizeof(target), "%d", irq->irq);
		r = nt_desire_put(p, &nt_setting_irq_affinity, target,
				  irq->nic >= 0 ? t->nics[irq->nic].name : "", &v, "$.other_irqs.cpus");
		if (r < 0)
			goto out;
	}
	if (managed)
		nt_desire_warn(p, "other_irqs: %d kernel-managed IRQ(s) left as they are", managed);
	r = 0;
out:
	free(tuned);
	return r;
}

static const nt_profile_section section_other = {
	.key = "other_irqs",
	.type = JSON_OBJECT,
	.validate = validate_other,
	.desire = desire_other,
};

const nt_setting_module nt_module_irq_affinity = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_irq_affinity, NULL },
	.sections = (const nt_profile_section *const[]){ &section_irq, &section_other, NULL },
};
