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
 *   flow-context-remote rules send flows to an RSS context whose table
 *                       spreads them over queues whose IRQs are served off
 *                       the NIC's node, or off the node the profile in
 *                       effect gives that context ("node" with "queues":
 *                       "placed", settings/rss_placed.c): an application
 *                       placed on one node would be fed from the other;
 *   flow-context-reserved  the same, served on CPUs reserved for
 *                       applications;
 *   flow-rules-overlap  two rules match some of the same packets and send
 *                       them to different places: which one wins is the
 *                       driver's order (the lower location, on most), so
 *                       a rule left by another tool can take the profile's
 *                       traffic.
 * A context is read once a NIC (one ioctl), however many rules name it;
 * its findings are one per context and queue offset, naming every rule
 * into it. */
#include "diagnose/diagnose_int.h"
#include "host/queues.h"
#include "kernel/flows.h"
#include "kernel/rss.h"
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
	/* A rule into a context: its queue is an offset into the context's
	 * table (check_contexts). */
	if (fr->drop || fr->context || !queue_cpus(d, nic, fr->queue, &cpus, &irq))
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
	if (a->drop == b->drop && (a->drop || (a->queue == b->queue && a->context == b->context)))
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

/* The node the profile in effect gives context ID of NIC ("node" with
 * "queues": "placed"), or -1. */
static int profile_node(const diag *d, const nt_nic *nic, uint32_t id)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(d->profile, "rss"), i, e) {
		json_t *nd = json_object_get(e, "node");
		if (json_integer_value(json_object_get(e, "context")) == (json_int_t)id && json_is_integer(nd) &&
		    !strcmp(json_string_value(json_object_get(e, "interface")) ?: "", nic->name))
			return (int)json_integer_value(nd);
	}
	return -1;
}

/* The rules of TAB into context ID with queue offset OFF, as evidence
 * and as text for the message ("locations 0, 1 ('tcp4 dst-port 5201
 * context 1 queue 0', ...)"). */
static json_t *group_rules(const nt_flow_table *tab, uint32_t id, uint32_t off, char *out, size_t size)
{
	json_t *rules = json_array();
	char text[NT_FLOW_TEXT_MAX], first[NT_FLOW_TEXT_MAX] = "", locs[96] = "";
	size_t at = 0;
	int n = 0;
	for (int k = 0; rules && k < tab->n; k++) {
		const nt_flow_rule *fr = &tab->rules[k];
		if (fr->context != id || fr->queue != off)
			continue;
		nt_flow_rule_format(fr, text, sizeof(text));
		json_array_append_new(rules, json_pack("{s:I, s:s}", "location", (json_int_t)fr->location, "rule", text));
		if (!n)
			snprintf(first, sizeof(first), "%s", text);
		int w = n < 8 ? snprintf(locs + at, sizeof(locs) - at, "%s%u", n ? ", " : "", fr->location) :
				n == 8 ? snprintf(locs + at, sizeof(locs) - at, ", ...") : 0;
		if (w > 0 && (size_t)w < sizeof(locs) - at)
			at += (size_t)w;
		n++;
	}
	snprintf(out, size, "location%s %s ('%s'%s)", n == 1 ? "" : "s", locs, first, n > 1 ? ", ..." : "");
	return rules;
}

/* The rules of TAB into context ID (table RSS) with queue offset OFF:
 * the queues the table sends their flows to, each judged by the CPUs
 * serving its IRQ now. */
static int check_context(diag *d, const nt_nic *nic, const nt_flow_table *tab, uint32_t id, uint32_t off,
			 const nt_rss *rss, const json_t *reserved)
{
	nt_cpuset queues, want, res, far_q, far_cpus, res_q, res_cpus, cpus, hit;
	char what[64], rules_text[NT_FLOW_TEXT_MAX + 160], ql[256], fq[256], fc[256];
	int node = profile_node(d, nic, id), r = 0;
	bool judge_node = true;
	nt_cpuset_zero(&queues);
	nt_cpuset_zero(&res);
	nt_cpuset_zero(&far_q);
	nt_cpuset_zero(&far_cpus);
	nt_cpuset_zero(&res_q);
	nt_cpuset_zero(&res_cpus);
	for (uint32_t i = 0; i < rss->indir_size; i++)
		if (rss->indir[i] + off < NT_MAX_CPUS)
			nt_cpuset_set(&queues, (int)(rss->indir[i] + off));
	const nt_numa_node *nn = node >= 0 ? nt_topology_node(d->t, node) : NULL;
	if (!nn)
		node = -1; /* none given, or one the host lacks: the NIC's */
	if (nn) {
		want = nn->cpus;
		snprintf(what, sizeof(what), "node %d, which the profile in effect gives the context", node);
	} else if (nt_nic_local_cpus(d->t, nic, &want) && !nt_cpuset_empty(&want)) {
		if (nic->numa_node >= 0)
			snprintf(what, sizeof(what), "the NIC's node %d", nic->numa_node);
		else
			snprintf(what, sizeof(what), "the NIC's local CPUs");
	} else {
		judge_node = false;
	}
	const char *rl = json_string_value(json_object_get(reserved, nic->name));
	if (rl)
		nt_cpulist_parse(rl, &res);
	json_t *remote = json_array(), *onres = json_array();
	for (int q = nt_cpuset_next(&queues, 0); q >= 0 && remote && onres; q = nt_cpuset_next(&queues, q + 1)) {
		int irq = -1;
		if (!queue_cpus(d, nic, (uint32_t)q, &cpus, &irq))
			continue;
		nt_cpuset_and(&hit, &cpus, &res);
		if (judge_node && !nt_cpuset_subset(&cpus, &want)) {
			nt_cpuset_set(&far_q, q);
			nt_cpuset_or(&far_cpus, &far_cpus, &cpus);
			json_array_append_new(remote, json_pack("{s:i, s:i, s:o}", "queue", q, "irq", irq, "irq_cpus",
								 nt_cpuset_json(&cpus)));
		}
		if (!nt_cpuset_empty(&hit)) {
			nt_cpuset_set(&res_q, q);
			nt_cpuset_or(&res_cpus, &res_cpus, &hit);
			json_array_append_new(onres, json_pack("{s:i, s:i, s:o}", "queue", q, "irq", irq, "irq_cpus",
								nt_cpuset_json(&cpus)));
		}
	}
	if (!remote || !onres) {
		r = -ENOMEM;
		goto out;
	}
	nt_cpulist_format(&queues, ql, sizeof(ql));
	for (int pass = 0; pass < 2 && r == 0; pass++) {
		json_t *list = pass ? onres : remote;
		if (json_array_size(list) == 0)
			continue;
		json_t *rules = group_rules(tab, id, off, rules_text, sizeof(rules_text));
		json_t *ev = json_pack("{s:I, s:I, s:o, s:o, s:O}", "context", (json_int_t)id, "queue_offset",
				       (json_int_t)off, "rules", rules, "queues", nt_cpuset_json(&queues),
				       pass ? "reserved_queues" : "remote_queues", list);
		if (ev && !pass) {
			json_object_set_new(ev, "node_cpus", nt_cpuset_json(&want));
			json_object_set_new(ev, "node", node >= 0 ? json_integer(node) : json_null());
		}
		if (ev && pass)
			json_object_set_new(ev, "reserved", nt_cpuset_json(&res));
		/* The fix: the context's table on the queues placed on the
		 * node (its node, when the profile gave one); "replace", as the
		 * rules into it are there and the fix profile has none. With an
		 * offset the placed queues would be shifted: no fix. */
		json_t *fix = NULL;
		if (off == 0) {
			fix = json_pack("{s:[{s:s, s:I, s:s, s:b}]}", "rss", "interface", nic->name, "context",
					(json_int_t)id, "queues", "placed", "replace", 1);
			if (fix && node >= 0)
				json_object_set_new(json_array_get(json_object_get(fix, "rss"), 0), "node",
						    json_integer(node));
		}
		if (!ev || (off == 0 && !fix)) {
			json_decref(ev);
			json_decref(fix);
			r = -ENOMEM;
			break;
		}
		nt_cpulist_format(pass ? &res_q : &far_q, fq, sizeof(fq));
		nt_cpulist_format(pass ? &res_cpus : &far_cpus, fc, sizeof(fc));
		if (pass)
			r = diag_add_finding(d, "flow-context-reserved", SEV_WARNING, nic->name, ev, fix,
					     "%s's flow rules at %s send flows to RSS context %u, whose table spreads them "
					     "over queues %s; the IRQs of queues %s are served on CPU %s, reserved for "
					     "applications: give the context \"queues\": \"placed\" (rss).",
					     nic->name, rules_text, id, ql, fq, fc);
		else
			r = diag_add_finding(d, "flow-context-remote", SEV_WARNING, nic->name, ev, fix,
					     "%s's flow rules at %s send flows to RSS context %u, whose table spreads them "
					     "over queues %s; the IRQs of queues %s are served by CPU %s, off %s: give the "
					     "context \"queues\": \"placed\" (rss).",
					     nic->name, rules_text, id, ql, fq, fc, what);
	}
out:
	json_decref(remote);
	json_decref(onres);
	return r;
}

/* Each context the rules of TAB name, read once, judged per queue
 * offset. A context that cannot be read (gone, or a driver that answers
 * nothing) is not judged. */
static int check_contexts(diag *d, const nt_nic *nic, const nt_flow_table *tab, const json_t *reserved)
{
	int r = 0;
	for (int k = 0; r == 0 && k < tab->n; k++) {
		uint32_t id = tab->rules[k].context;
		bool seen = false;
		for (int j = 0; j < k && !seen; j++)
			seen = tab->rules[j].context == id;
		nt_rss rss;
		if (!id || seen || nt_rss_context_read(d->ctx, nic->name, id, &rss) < 0)
			continue;
		for (int m = k; r == 0 && m < tab->n; m++) {
			uint32_t off = tab->rules[m].queue;
			bool done = false;
			if (tab->rules[m].context != id)
				continue;
			for (int j = k; j < m && !done; j++)
				done = tab->rules[j].context == id && tab->rules[j].queue == off;
			if (!done)
				r = check_context(d, nic, tab, id, off, &rss, reserved);
		}
		nt_rss_free(&rss);
	}
	return r;
}

int diag_check_flows(diag *d, const json_t *reserved)
{
	for (int i = 0; i < d->t->nnics; i++) {
		const nt_nic *nic = &d->t->nics[i];
		nt_flow_table tab;
		if (!diag_nic_is_physical(nic) || nt_flows_read(d->ctx, nic->name, &tab) < 0)
			continue;
		int r = 0;
		for (int k = 0; r == 0 && k < tab.n; k++)
			r = check_queue(d, nic, &tab.rules[k], reserved);
		if (r == 0)
			r = check_contexts(d, nic, &tab, reserved);
		if (r == 0)
			r = check_overlaps(d, nic, &tab);
		nt_flow_table_free(&tab);
		if (r == -ENOMEM)
			return r;
	}
	return 0;
}
