/* SPDX-License-Identifier: Apache-2.0 */
/* Flow rule findings, from each physical NIC's rule table (kernel/flows.h;
 * a few ioctls a NIC, only for NICs that have a table):
 *   flow-queue-remote   a rule steers to a queue whose IRQ is served by
 *                       CPUs off the NIC's node: the stream it singles out
 *                       pays the cross-node cost the rule was meant to
 *                       avoid (docs/field-reports.md#irq-cpus-apart-from-app);
 *   flow-queue-reserved a rule steers to a queue whose IRQ is served by
 *                       CPUs reserved for applications
 *                       (nt_diag_options.reserved): the interrupts land on
 *                       the application's cores;
 *   flow-rules-overlap  two rules match some of the same packets and send
 *                       them to different places: which one wins is the
 *                       driver's order (the lower location, on most), so
 *                       a rule left by another tool can take the profile's
 *                       traffic. */
#include "diagnose/diagnose_int.h"
#include "host/queues.h"
#include "kernel/flows.h"
#include "placement/irq.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The CPUs serving RX queue Q of NIC now (effective, else allowed), or
 * false when no IRQ serves it (by the netdev family's map, else by the
 * IRQs' names: diag_queue_irq). */
static bool queue_cpus(const diag *d, const nt_nic *nic, uint32_t q, nt_cpuset *out, int *irq)
{
	int idx = diag_queue_irq(d, nic, (int)q, false, NULL);
	if (idx < 0)
		return false;
	const nt_irq *ir = &d->t->irqs[idx];
	*irq = ir->irq;
	*out = ir->has_effective && !nt_cpuset_empty(&ir->effective) ? ir->effective : ir->affinity;
	return !nt_cpuset_empty(out);
}

static int check_queue(diag *d, const nt_nic *nic, const nt_flow_rule *fr, const json_t *reserved)
{
	nt_cpuset cpus, local, res, hit;
	char text[NT_FLOW_TEXT_MAX], cl[256];
	int irq = -1, r = 0;
	if (fr->drop || !queue_cpus(d, nic, fr->queue, &cpus, &irq))
		return 0;
	nt_flow_rule_format(fr, text, sizeof(text));
	nt_cpulist_format(&cpus, cl, sizeof(cl));
	if (nt_nic_local_cpus(d->t, nic, &local) && !nt_cpuset_empty(&local)) {
		nt_cpuset off;
		nt_cpuset_andnot(&off, &cpus, &local);
		if (!nt_cpuset_empty(&off)) {
			json_t *ev = json_pack("{s:I, s:s, s:i, s:i, s:o, s:o}", "location", (json_int_t)fr->location,
					       "rule", text, "queue", (int)fr->queue, "irq", irq, "irq_cpus",
					       nt_cpuset_json(&cpus), "local_cpus", nt_cpuset_json(&local));
			r = diag_add_finding(d, "flow-queue-remote", SEV_WARNING, nic->name, ev, NULL,
					     "%s's flow rule at location %u ('%s') steers to queue %u, whose IRQ %d is "
					     "served by CPU %s, off the NIC's node: place that IRQ on the node "
					     "(irq_affinity) or give the rule a 'cpu' of the node.",
					     nic->name, fr->location, text, fr->queue, irq, cl);
			if (r)
				return r;
		}
	}
	const char *rl = json_string_value(json_object_get(reserved, nic->name));
	if (!rl || nt_cpulist_parse(rl, &res) < 0)
		return 0;
	nt_cpuset_and(&hit, &cpus, &res);
	if (nt_cpuset_empty(&hit))
		return 0;
	json_t *ev = json_pack("{s:I, s:s, s:i, s:i, s:o, s:o}", "location", (json_int_t)fr->location, "rule", text,
			       "queue", (int)fr->queue, "irq", irq, "irq_cpus", nt_cpuset_json(&cpus), "reserved",
			       nt_cpuset_json(&res));
	return diag_add_finding(d, "flow-queue-reserved", SEV_WARNING, nic->name, ev, NULL,
				"%s's flow rule at location %u ('%s') steers to queue %u, whose IRQ %d is served by "
				"CPU %s, reserved for applications: its interrupts land on the application's cores.",
				nic->name, fr->location, text, fr->queue, irq, cl);
}

/* Whether field values A and B (LEN bytes, masks MA, MB) can match one
 * packet: equal wherever both masks compare. */
static bool meet(const uint8_t *a, const uint8_t *ma, const uint8_t *b, const uint8_t *mb, int len)
{
	for (int i = 0; i < len; i++)
		if ((a[i] & ma[i] & mb[i]) != (b[i] & ma[i] & mb[i]))
			return false;
	return true;
}

static bool meet16(uint16_t a, uint16_t ma, uint16_t b, uint16_t mb)
{
	return (a & ma & mb) == (b & ma & mb);
}

static bool overlap(const nt_flow_rule *a, const nt_flow_rule *b)
{
	static const uint8_t none[16];
	int len = a->type == NT_FLOW_TCP6 || a->type == NT_FLOW_UDP6 ? 16 : 4;
	if (a->type != b->type || a->type == NT_FLOW_OTHER || a->type == NT_FLOW_NONE)
		return false;
	if (a->drop == b->drop && (a->drop || a->queue == b->queue))
		return false; /* same destination: no harm */
	/* A field only one rule has matches anything in the other. */
	const uint8_t *sam = a->fields & NT_FLOW_SRC_IP ? a->src_ip_mask : none;
	const uint8_t *sbm = b->fields & NT_FLOW_SRC_IP ? b->src_ip_mask : none;
	const uint8_t *dam = a->fields & NT_FLOW_DST_IP ? a->dst_ip_mask : none;
	const uint8_t *dbm = b->fields & NT_FLOW_DST_IP ? b->dst_ip_mask : none;
	uint16_t spa = a->fields & NT_FLOW_SRC_PORT ? a->src_port_mask : 0;
	uint16_t spb = b->fields & NT_FLOW_SRC_PORT ? b->src_port_mask : 0;
	uint16_t dpa = a->fields & NT_FLOW_DST_PORT ? a->dst_port_mask : 0;
	uint16_t dpb = b->fields & NT_FLOW_DST_PORT ? b->dst_port_mask : 0;
	return meet(a->src_ip, sam, b->src_ip, sbm, len) && meet(a->dst_ip, dam, b->dst_ip, dbm, len) &&
	       meet16(a->src_port, spa, b->src_port, spb) && meet16(a->dst_port, dpa, b->dst_port, dpb);
}

static int check_overlaps(diag *d, const nt_nic *nic, const nt_flow_table *tab)
{
	char ta[NT_FLOW_TEXT_MAX], tb[NT_FLOW_TEXT_MAX];
	for (int i = 0; i < tab->n; i++) {
		for (int j = i + 1; j < tab->n; j++) {
			const nt_flow_rule *a = &tab->rules[i], *b = &tab->rules[j];
			if (!overlap(a, b))
				continue;
			nt_flow_rule_format(a, ta, sizeof(ta));
			nt_flow_rule_format(b, tb, sizeof(tb));
			json_t *ev = json_pack("{s:[{s:I, s:s}, {s:I, s:s}]}", "rules", "location",
					       (json_int_t)a->location, "rule", ta, "location", (json_int_t)b->location,
					       "rule", tb);
			int r = diag_add_finding(d, "flow-rules-overlap", SEV_WARNING, nic->name, ev, NULL,
						 "%s's flow rules at locations %u ('%s') and %u ('%s') match some of "
						 "the same packets and send them to different places; the driver's "
						 "order decides (the lower location, on most drivers).",
						 nic->name, a->location, ta, b->location, tb);
			if (r)
				return r;
		}
	}
	return 0;
}

int diag_check_flows(diag *d, const json_t *reserved)
{
	for (int i = 0; i < d->t->nnics; i++) {
		const nt_nic *nic = &d->t->nics[i];
		nt_flow_table tab;
		if (!diag_nic_is_physical(nic) || nt_flows_read(&d->t->ctx, nic->name, &tab) < 0)
			continue;
		int r = 0;
		for (int k = 0; r == 0 && k < tab.n; k++)
			r = check_queue(d, nic, &tab.rules[k], reserved);
		if (r == 0)
			r = check_overlaps(d, nic, &tab);
		nt_flow_table_free(&tab);
		if (r == -ENOMEM)
			return r;
	}
	return 0;
}
