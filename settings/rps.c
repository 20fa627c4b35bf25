/* SPDX-License-Identifier: Apache-2.0 */
/* RPS: target = "IFACE/rx-N", value = the CPUs that take the queue's
 * receive work from the CPU its interrupt lands on (rps_cpus, a cpulist
 * here, a mask in sysfs; "" is RPS off).
 *
 * Profile section:
 *   "rps": [{"interface": "eth*", "policy": "local", "exclude_cpus": "0",
 *            "flow_cnt": 4096, "queues": "0-3"},
 *           {"interface": "enos0", "cpus": "2-7"}]
 * A NIC with fewer RX queues than its node has CPUs (single-queue tg3,
 * virtio, most 1G/10G NICs) has all its receive work on the CPUs that
 * take its few interrupts; RPS spreads it in software. "local-node": the
 * NIC's node (its local CPUs when the node is unknown), without
 * exclude_cpus and without the CPUs this profile reserves for applications
 * (irq_affinity's reserve_app_cpus); "local": the same without the CPUs
 * the NIC's own IRQs are placed on (by this profile, or as they are),
 * unless that leaves none. "flow_cnt" also sets each queue's RFS flow
 * table (settings/rfs.c); net.core.rps_sock_flow_entries, the global
 * socket table RFS needs, goes in the same profile's "sysctl".
 *
 * The kernel ANDs rps_cpus with its housekeeping CPUs (isolcpus=,
 * nohz_full=): each write is read back, and a step whose CPUs the kernel
 * did not keep fails with that reason. */
#include "settings/queue_kind.h"
#include "placement/irq.h"
#include "kernel/queues.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const nt_setting_kind nt_setting_rps_flow_cnt;

static const char housekeeping[] = "the kernel keeps only its housekeeping CPUs in rps_cpus "
				   "(isolcpus=/nohz_full= CPUs are left out)";

static int rps_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	return nt_qk_read_set(ctx, target, "rps_cpus", out);
}

static int rps_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		     const nt_value *v, char *why, size_t whysize)
{
	return nt_qk_check(ctx, t, target, v, NT_QK_CPUS, why, whysize);
}

static int rps_apply_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
			  nt_value *got, int *read_err, char *err, size_t errsize)
{
	return nt_qk_apply_set(ctx, target, "rps_cpus", v, got, read_err, err, errsize, housekeeping);
}

static int rps_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		     size_t errsize)
{
	nt_value got;
	int rr;
	return rps_apply_read(ctx, eh, target, v, &got, &rr, err, errsize);
}

const nt_setting_kind nt_setting_rps_cpus = {
	.name = "rps_cpus",
	/* A queue file of a link under this namespace's /sys/class/net; the
	 * CPUs it names are the machine's, but the steering is the link's. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the queue is a link's of this namespace",
	.parse = nt_qk_parse_set,
	.format = nt_qk_format_set,
	.equal = nt_qk_equal_set,
	.read = rps_read,
	.check = rps_check,
	.apply = rps_apply,
	.apply_read = rps_apply_read,
	/* After channels (30: they make the queues anew) and IRQ affinity
	 * (10: "local" leaves out the CPUs the IRQs are placed on). */
	.order = 34,
	/* No notification for a write to a queue's sysfs files (the periodic
	 * check finds one); but a channels change, which the kernel notifies,
	 * makes the driver build its queues anew with RPS off. */
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

/* ---- "rps": [...] ---- */

static bool is_pow2(json_int_t v)
{
	return v > 0 && (v & (v - 1)) == 0;
}

static void validate_rps(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "cpus", "policy", "exclude_cpus", "flow_cnt", "queues",
					     NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];
	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "rps", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		const char *cpus = nt_sc_str(c, e, base, "cpus", false);
		const char *policy = nt_sc_str(c, e, base, "policy", false);
		const char *excl = nt_sc_str(c, e, base, "exclude_cpus", false);
		bool has_cpus = json_object_get(e, "cpus") != NULL, has_policy = json_object_get(e, "policy") != NULL;
		if (has_cpus == has_policy && !(json_object_get(e, "flow_cnt") && !has_cpus))
			nt_sc_error(c, base, "give exactly one of 'cpus' and 'policy'");
		if (cpus) {
			snprintf(path, sizeof(path), "%s.cpus", base);
			/* "" turns RPS off. */
			if (cpus[0])
				nt_sc_cpulist(c, cpus, path, true);
		}
		if (policy && strcmp(policy, "local") && strcmp(policy, "local-node")) {
			snprintf(path, sizeof(path), "%s.policy", base);
			nt_sc_error(c, path, "unknown policy '%s' (known: local, local-node)", policy);
		}
		if (excl) {
			snprintf(path, sizeof(path), "%s.exclude_cpus", base);
			if (!has_policy)
				nt_sc_error(c, path, "'exclude_cpus' goes with a 'policy'");
			else
				nt_sc_cpulist(c, excl, path, false);
		}
		json_t *fc = json_object_get(e, "flow_cnt");
		if (fc && (!json_is_integer(fc) || (json_integer_value(fc) != 0 && !is_pow2(json_integer_value(fc))) ||
			   json_integer_value(fc) > (1 << 27))) {
			snprintf(path, sizeof(path), "%s.flow_cnt", base);
			nt_sc_error(c, path, "'flow_cnt' must be 0 or a power of two up to 134217728 (the kernel "
					     "rounds a flow table up to one)");
		}
		if (iface) {
			snprintf(path, sizeof(path), "%s.interface", base);
			nt_sc_iface(c, iface, path, false);
		}
		nt_qk_validate_queues(c, e, base, iface, false);
	}
}

/* The CPUs NIC's IRQs are on after this profile's placement: what pass 0
 * desired for them, else what they are. */
static void irq_cpus(const nt_section_plan *p, const nt_nic *nic, nt_cpuset *out, bool *planned)
{
	char target[16];
	nt_cpuset_zero(out);
	*planned = false;
	for (int i = 0; i < nic->nirqs; i++) {
		const nt_irq *q = &p->t->irqs[nic->irqs[i]];
		snprintf(target, sizeof(target), "%d", q->irq);
		const nt_desired *d = nt_desire_get(p, &nt_setting_irq_affinity, target);
		if (d)
			*planned = true;
		nt_cpuset_or(out, out, d ? &d->value.cpus : &q->affinity);
	}
}

/* The CPUs of a policy for NIC: false (with a warning) when its node and
 * local CPUs are unknown. */
static bool policy_cpus(nt_section_plan *p, const json_t *e, const nt_nic *nic, bool named, nt_cpuset *out)
{
	const char *policy = json_string_value(json_object_get(e, "policy"));
	const char *excl = json_string_value(json_object_get(e, "exclude_cpus"));
	const char *res = p->reserved ? json_string_value(json_object_get(p->reserved, nic->name)) : NULL;
	nt_cpuset x;
	char list[NT_VALUE_MAX];
	if (!nt_nic_local_cpus(p->t, nic, out)) {
		if (named)
			nt_desire_warn(p, "%s: neither its NUMA node nor its local CPUs are known; RPS left out",
				       nic->name);
		return false;
	}
	if (excl && nt_cpulist_parse(excl, &x) == 0)
		nt_cpuset_andnot(out, out, &x);
	if (res && nt_cpulist_parse(res, &x) == 0)
		nt_cpuset_andnot(out, out, &x);
	if (strcmp(policy, "local") == 0) {
		bool planned;
		nt_cpuset irq, rest;
		irq_cpus(p, nic, &irq, &planned);
		nt_cpuset_andnot(&rest, out, &irq);
		if (!nt_cpuset_empty(&rest) && !nt_cpuset_empty(&irq)) {
			*out = rest;
			nt_cpulist_format(&irq, list, sizeof(list));
			nt_desire_warn(p, "%s: rps_cpus leave out CPU %s, where its IRQs %s", nic->name, list,
				       planned ? "are placed by this profile's irq_affinity steps (applied first)" :
						 "are now");
		}
	}
	if (nt_cpuset_empty(out)) {
		nt_desire_warn(p, "%s: no CPU of its node is left for RPS; left out", nic->name);
		return false;
	}
	return true;
}

static const nt_sysctl_value *host_sysctl(const nt_topology *t, const char *key)
{
	for (int i = 0; i < t->nsysctls; i++)
		if (t->sysctls[i].present && strcmp(t->sysctls[i].key, key) == 0)
			return &t->sysctls[i];
	return NULL;
}

static int desire_rps(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX], target[NT_TARGET_MAX];
	bool flows = false;
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		const char *cpus = json_string_value(json_object_get(e, "cpus"));
		json_t *fc = json_object_get(e, "flow_cnt");
		bool has_set = cpus || json_object_get(e, "policy");
		for (int k = 0; k < p->t->nnics; k++) {
			const nt_nic *nic = &p->t->nics[k];
			int nrx, ntx;
			nt_value v;
			nt_cpuset queues;
			if (!nt_iface_match(pattern, nic->name) || nic->is_bond)
				continue;
			bool named = !nt_iface_is_glob(pattern);
			if (nt_queues_count(&p->t->ctx, nic->name, &nrx, &ntx) < 0 || nrx == 0) {
				if (named)
					nt_desire_warn(p, "%s: no RX queues in sysfs; RPS left out", nic->name);
				continue;
			}
			memset(&v, 0, sizeof(v));
			if (cpus)
				nt_cpulist_parse(cpus, &v.cpus);
			else if (has_set && !policy_cpus(p, e, nic, named, &v.cpus))
				continue;
			nt_qk_queues(e, nrx, &queues);
			for (int q = nt_cpuset_next(&queues, 0); q >= 0 && q < nrx; q = nt_cpuset_next(&queues, q + 1)) {
				snprintf(target, sizeof(target), "%s/rx-%d", nic->name, q);
				int r = 0;
				if (has_set) {
					snprintf(path, sizeof(path), "$.rps[%zu].%s", i, cpus ? "cpus" : "policy");
					r = nt_desire_put(p, &nt_setting_rps_cpus, target, nic->name, &v, path);
				}
				if (r == 0 && fc) {
					nt_value f;
					memset(&f, 0, sizeof(f));
					nt_value_field_set(&f, 0, (uint32_t)json_integer_value(fc));
					snprintf(path, sizeof(path), "$.rps[%zu].flow_cnt", i);
					r = nt_desire_put(p, &nt_setting_rps_flow_cnt, target, nic->name, &f, path);
					flows |= json_integer_value(fc) > 0;
				}
				if (r < 0)
					return r;
			}
		}
	}
	/* RFS needs the global socket table as well. */
	const char *key = "net.core.rps_sock_flow_entries";
	const nt_sysctl_value *cur = host_sysctl(p->t, key);
	if (!flows || json_object_get(json_object_get(p->profile, "sysctl"), key))
		return 0;
	if (p->t->ctx.netns_other)
		/* The table is machine-wide and its sysctl exists only in the
		 * initial namespace: from here it can be neither read nor set,
		 * and the flow tables alone steer nothing. */
		nt_desire_warn(p, "flow_cnt: RFS steers nothing while %s is 0, and that sysctl is machine-wide: this "
				  "agent runs in a network namespace other than the initial one and can neither read "
				  "nor set it; set it on the host (for example 32768)", key);
	else if (cur && atol(cur->value) == 0)
		nt_desire_warn(p, "flow_cnt: RFS steers nothing while %s is 0; give it in \"sysctl\" (for example "
				  "32768)", key);
	return 0;
}

static const nt_profile_section section_rps = {
	.key = "rps",
	.type = JSON_ARRAY,
	.validate = validate_rps,
	.desire = desire_rps,
	/* After irq_affinity's placement (pass 0): "local" follows it and
	 * leaves out the CPUs it reserves for applications. */
	.pass = 1,
};

const nt_setting_module nt_module_rps = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_rps_cpus, NULL },
	.sections = (const nt_profile_section *const[]){ &section_rps, NULL },
};
