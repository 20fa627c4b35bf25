/* SPDX-License-Identifier: Apache-2.0 */
/* XPS: target = "IFACE/tx-N"; two kinds: xps_cpus (the CPUs that send on
 * the queue, a cpulist) and xps_rxqs (the RX queues whose flows send on
 * it, a list of queue numbers). "" is XPS off.
 *
 * Profile section:
 *   "xps": [{"interface": "eth*", "policy": "irq"},
 *           {"interface": "enos0", "policy": "rxqs", "queues": "0-7"},
 *           {"interface": "enos1", "cpus": "0-3"}]
 * XPS picks the TX queue a CPU sends on, so that a flow's transmit
 * completions come back to the CPU that sent it. "irq": each TX queue to
 * the CPUs its IRQ is placed on by this profile's irq_affinity (or is on
 * now): the queue's completions then interrupt the CPUs that use it.
 * "rxqs": tx-N sends the flows received on rx-N (xps_rxqs, which the
 * kernel prefers over xps_cpus), so a request and its answer share a
 * queue pair. "cpus": every TX queue asked for gets those CPUs. */
#include "settings/queue_kind.h"
#include "host/queues.h"
#include "kernel/queues.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int xps_cpus_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	return nt_qk_read_set(ctx, target, "xps_cpus", out);
}

static int xps_rxqs_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	return nt_qk_read_set(ctx, target, "xps_rxqs", out);
}

static int xps_cpus_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
			  const nt_value *v, char *why, size_t whysize)
{
	return nt_qk_check(ctx, t, target, v, NT_QK_CPUS, why, whysize);
}

static int xps_rxqs_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
			  const nt_value *v, char *why, size_t whysize)
{
	return nt_qk_check(ctx, t, target, v, NT_QK_RXQS, why, whysize);
}

static int xps_cpus_apply_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
			       nt_value *got, int *read_err, char *err, size_t errsize)
{
	return nt_qk_apply_set(ctx, target, "xps_cpus", v, got, read_err, err, errsize, NULL);
}

static int xps_rxqs_apply_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
			       nt_value *got, int *read_err, char *err, size_t errsize)
{
	return nt_qk_apply_set(ctx, target, "xps_rxqs", v, got, read_err, err, errsize, NULL);
}

static int xps_cpus_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
			  char *err, size_t errsize)
{
	nt_value got;
	int rr;
	return xps_cpus_apply_read(ctx, eh, target, v, &got, &rr, err, errsize);
}

static int xps_rxqs_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
			  char *err, size_t errsize)
{
	nt_value got;
	int rr;
	return xps_rxqs_apply_read(ctx, eh, target, v, &got, &rr, err, errsize);
}

/* After channels (30), which make the queues anew (virtio_net's
 * set_channels rewrites XPS itself), and IRQ affinity (10), which "irq"
 * follows. No notification for a write to a queue's sysfs files (the
 * periodic check finds one); but a channels change, which the kernel
 * notifies, makes the driver build its queues anew (virtio_net then
 * writes XPS itself). */
const nt_setting_kind nt_setting_xps_cpus = {
	.name = "xps_cpus",
	/* A queue file of a link of this namespace. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the queue is a link's of this namespace",
	.parse = nt_qk_parse_set,
	.format = nt_qk_format_set,
	.equal = nt_qk_equal_set,
	.read = xps_cpus_read,
	.check = xps_cpus_check,
	.apply = xps_cpus_apply,
	.apply_read = xps_cpus_apply_read,
	.order = 34,
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

const nt_setting_kind nt_setting_xps_rxqs = {
	.name = "xps_rxqs",
	/* A queue file of a link of this namespace. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the queue is a link's of this namespace",
	.parse = nt_qk_parse_set,
	.format = nt_qk_format_set,
	.equal = nt_qk_equal_set,
	.read = xps_rxqs_read,
	.check = xps_rxqs_check,
	.apply = xps_rxqs_apply,
	.apply_read = xps_rxqs_apply_read,
	.order = 34,
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

/* ---- "xps": [...] ---- */

static void validate_xps(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "cpus", "policy", "queues", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];
	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "xps", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		const char *cpus = nt_sc_str(c, e, base, "cpus", false);
		const char *policy = nt_sc_str(c, e, base, "policy", false);
		if ((json_object_get(e, "cpus") != NULL) == (json_object_get(e, "policy") != NULL))
			nt_sc_error(c, base, "give exactly one of 'cpus' and 'policy'");
		if (cpus && cpus[0]) {
			snprintf(path, sizeof(path), "%s.cpus", base);
			nt_sc_cpulist(c, cpus, path, true);
		}
		if (policy && strcmp(policy, "irq") && strcmp(policy, "rxqs")) {
			snprintf(path, sizeof(path), "%s.policy", base);
			nt_sc_error(c, path, "unknown policy '%s' (known: irq, rxqs)", policy);
		}
		if (iface) {
			snprintf(path, sizeof(path), "%s.interface", base);
			nt_sc_iface(c, iface, path, false);
		}
		nt_qk_validate_queues(c, e, base, iface, true);
	}
}

/* Queue Q's CPUs for "irq": the CPUs its IRQ is placed on by this
 * profile, else those it is on. False when no IRQ serves the queue. Its
 * IRQ: the netdev family's answer where the kernel gives one (the NAPI of
 * the queue and that NAPI's IRQ), else by the IRQs' names. */
static bool irq_cpus_of(nt_section_plan *p, const nt_nic *nic, int q, nt_cpuset *out, int *irq, bool *planned)
{
	char target[16];
	int idx = nt_plan_queue_irq(p->reads, p->t, nic, q, true);
	*planned = false;
	if (idx < 0)
		return false;
	const nt_irq *ir = &p->t->irqs[idx];
	*irq = ir->irq;
	snprintf(target, sizeof(target), "%d", ir->irq);
	const nt_desired *d = nt_desire_get(p, &nt_setting_irq_affinity, target);
	*planned = d != NULL;
	*out = d ? d->value.cpus : ir->affinity;
	return !nt_cpuset_empty(out);
}

static int desire_xps(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX], target[NT_TARGET_MAX];
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		const char *cpus = json_string_value(json_object_get(e, "cpus"));
		const char *policy = json_string_value(json_object_get(e, "policy"));
		snprintf(path, sizeof(path), "$.xps[%zu].%s", i, cpus ? "cpus" : "policy");
		for (int k = 0; k < p->t->nnics; k++) {
			const nt_nic *nic = &p->t->nics[k];
			int nrx, ntx, nplanned = 0, nirq = 0, first = -1, last = -1;
			nt_cpuset queues;
			if (!nt_iface_match(pattern, nic->name) || nic->is_bond)
				continue;
			bool named = !nt_iface_is_glob(pattern);
			if (nt_queues_count(&p->t->ctx, nic->name, &nrx, &ntx) < 0 || ntx == 0) {
				if (named)
					nt_desire_warn(p, "%s: no TX queues in sysfs; XPS left out", nic->name);
				continue;
			}
			nt_qk_queues(e, ntx, &queues);
			for (int q = nt_cpuset_next(&queues, 0); q >= 0 && q < ntx; q = nt_cpuset_next(&queues, q + 1)) {
				nt_value v;
				const nt_setting_kind *kind = &nt_setting_xps_cpus;
				memset(&v, 0, sizeof(v));
				snprintf(target, sizeof(target), "%s/tx-%d", nic->name, q);
				if (cpus) {
					nt_cpulist_parse(cpus, &v.cpus);
				} else if (strcmp(policy, "rxqs") == 0) {
					if (q >= nrx) {
						nt_desire_warn(p, "%s: tx-%d has no rx-%d to pair with; left out",
							       nic->name, q, q);
						continue;
					}
					kind = &nt_setting_xps_rxqs;
					nt_cpuset_set(&v.cpus, q);
				} else {
					bool planned;
					int irq = -1;
					if (!irq_cpus_of(p, nic, q, &v.cpus, &irq, &planned)) {
						if (named || nic->nirqs > 0)
							nt_desire_warn(p, "%s: no IRQ serves tx-%d; XPS left out for it",
								       nic->name, q);
						continue;
					}
					nirq++;
					nplanned += planned;
					if (first < 0)
						first = irq;
					last = irq;
				}
				int r = nt_desire_put(p, kind, target, nic->name, &v, path);
				if (r < 0)
					return r;
			}
			/* The plan says what it resolved: XPS follows the placement. */
			if (nirq > 0) {
				char irqs[48];
				if (first == last)
					snprintf(irqs, sizeof(irqs), "IRQ %d", first);
				else
					snprintf(irqs, sizeof(irqs), "IRQs %d..%d", first, last);
				nt_desire_warn(p, "%s: xps_cpus of %d TX queue%s follow the CPUs of %s %s", nic->name,
					       nirq, nirq == 1 ? "" : "s", irqs,
					       nplanned ? "as this profile's irq_affinity steps place them (applied first)" :
							  "as they are now (this profile does not place them)");
			}
		}
	}
	return 0;
}

static const nt_profile_section section_xps = {
	.key = "xps",
	.type = JSON_ARRAY,
	.validate = validate_xps,
	.desire = desire_xps,
	/* After irq_affinity's placement (pass 0), which "irq" follows. */
	.pass = 1,
};

const nt_setting_module nt_module_xps = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_xps_cpus, &nt_setting_xps_rxqs, NULL },
	.sections = (const nt_profile_section *const[]){ &section_xps, NULL },
};
