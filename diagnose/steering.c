/* SPDX-License-Identifier: Apache-2.0 */
/* Packet steering findings (RPS, XPS, RSS), from each NIC's queue files
 * and RSS table:
 *   rps-missing        fewer RX queues than the node has usable CPUs, and
 *                      no RPS: the receive work stays on the CPUs that take
 *                      the few interrupts (a warning for one queue and
 *                      4 CPUs or more: tg3, virtio; information else);
 *   xps-unset          a multi-queue NIC with no XPS: a flow may send on a
 *                      queue whose completions interrupt another CPU;
 *   xps-irq-mismatch   XPS CPUs that are not the CPUs serving the TX
 *                      queue's IRQ;
 *   rps-reserved-cpus  rps_cpus covering CPUs reserved for applications
 *                      (nt_diag_options.reserved);
 *   rss-queues-misplaced  an RSS table sending flows to RX queues whose
 *                      IRQs are served off the NIC's node or on CPUs
 *                      reserved for applications: those flows are
 *                      received far from the NIC or on an application's
 *                      CPU, whatever the placement of the other queues.
 * The queue files and RSS tables are read here for the physical NICs only
 * (two files a queue, one ioctl a NIC), not by the host read. Which IRQ
 * serves a queue is the netdev family's answer where the caller's NAPI
 * read holds it (nt_diag_options.napi), else the IRQs' names; the
 * evidence of xps-irq-mismatch and rss-queues-misplaced says which
 * ("irq_source"). */
#include "diagnose/diagnose_int.h"
#include "host/queues.h"
#include "placement/irq.h"
#include "kernel/rss.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *list_json(const nt_cpuset *s)
{
	return nt_cpuset_json(s);
}

static int check_rps_missing(diag *d, const nt_nic *nic, const nt_nic_queues *q)
{
	nt_cpuset local;
	if (!nt_nic_local_cpus(d->t, nic, &local) || q->nrx == 0)
		return 0;
	int usable = nt_cpuset_count(&local);
	if (q->nrx >= usable)
		return 0;
	for (int i = 0; i < q->nrx; i++)
		if (q->rx[i].rps_err < 0 || !nt_cpuset_empty(&q->rx[i].rps_cpus))
			return 0;
	json_t *ev = json_pack("{s:i, s:i, s:o}", "rx_queues", q->nrx, "node_cpus", usable, "local_cpus",
			       list_json(&local));
	json_t *fix = json_pack("{s:[{s:s, s:s}]}", "rps", "interface", nic->name, "policy", "local");
	if (!ev || !fix) {
		json_decref(ev);
		json_decref(fix);
		return -ENOMEM;
	}
	/* One queue on a node of 4 CPUs or more: all its receive work on one
	 * of them. Several queues spread it already, if thinly; on 2 or 3
	 * CPUs RPS's cross-CPU wakeups cost about what they save. */
	int sev = q->nrx == 1 && usable >= 4 ? SEV_WARNING : SEV_INFO;
	return diag_add_finding(d, "rps-missing", sev, nic->name, ev, fix,
				"%s has %d RX queue%s for %d usable CPUs of its node and no RPS: its receive "
				"work stays on the CPU%s taking its interrupt%s; RPS spreads it over the node.",
				nic->name, q->nrx, q->nrx == 1 ? "" : "s", usable, q->nrx == 1 ? "" : "s",
				q->nrx == 1 ? "" : "s");
}

static int check_xps(diag *d, const nt_nic *nic, const nt_nic_queues *q, const char *source)
{
	if (q->ntx < 2)
		return 0;
	bool any = false, readable = false;
	json_t *off = json_array();
	if (!off)
		return -ENOMEM;
	for (int i = 0; i < q->ntx; i++) {
		const nt_txq *x = &q->tx[i];
		if (x->xps_err == 0)
			readable = true;
		if ((x->xps_err == 0 && !nt_cpuset_empty(&x->xps_cpus)) ||
		    (x->rxqs_err == 0 && !nt_cpuset_empty(&x->xps_rxqs)))
			any = true;
		if (x->xps_err < 0 || nt_cpuset_empty(&x->xps_cpus) || x->irq < 0)
			continue;
		const nt_irq *irq = &d->t->irqs[x->irq];
		if (!irq->has_affinity || nt_cpuset_equal(&irq->affinity, &x->xps_cpus))
			continue;
		json_array_append_new(off, json_pack("{s:i, s:o, s:i, s:o}", "queue", i, "xps_cpus",
						     list_json(&x->xps_cpus), "irq", irq->irq, "irq_cpus",
						     list_json(&irq->affinity)));
	}
	int r = 0;
	json_t *fix = json_pack("{s:[{s:s, s:s}]}", "xps", "interface", nic->name, "policy", "irq");
	if (!fix) {
		json_decref(off);
		return -ENOMEM;
	}
	if (readable && !any) {
		json_decref(off);
		r = diag_add_finding(d, "xps-unset", SEV_INFO, nic->name, json_pack("{s:i}", "tx_queues", q->ntx),
				     fix,
				     "%s has %d TX queues and no XPS: a flow may send on a queue whose "
				     "completions interrupt another CPU than the sender.",
				     nic->name, q->ntx);
	} else if (json_array_size(off) > 0) {
		size_t n = json_array_size(off);
		r = diag_add_finding(d, "xps-irq-mismatch", SEV_WARNING, nic->name,
				     json_pack("{s:o, s:s}", "queues", off, "irq_source", source),
				     fix,
				     "%s: XPS of %zu TX queue%s names other CPUs than those serving the queue's "
				     "IRQ, so its transmit completions interrupt CPUs that did not send.",
				     nic->name, n, n == 1 ? "" : "s");
	} else {
		json_decref(off);
		json_decref(fix);
	}
	return r;
}

static int check_rps_reserved(diag *d, const nt_nic *nic, const nt_nic_queues *q, const json_t *reserved)
{
	const char *list = json_string_value(json_object_get(reserved, nic->name));
	nt_cpuset res, all, hit, keep;
	if (!list || nt_cpulist_parse(list, &res) < 0 || nt_cpuset_empty(&res))
		return 0;
	nt_cpuset_zero(&all);
	for (int i = 0; i < q->nrx; i++)
		if (q->rx[i].rps_err == 0)
			nt_cpuset_or(&all, &all, &q->rx[i].rps_cpus);
	nt_cpuset_and(&hit, &all, &res);
	if (nt_cpuset_empty(&hit))
		return 0;
	nt_cpuset_andnot(&keep, &all, &res);
	json_t *ev = json_pack("{s:o, s:o, s:o}", "rps_cpus", list_json(&all), "reserved", list_json(&res),
			       "overlap", list_json(&hit));
	json_t *fix = nt_cpuset_empty(&keep) ?
			      json_pack("{s:[{s:s, s:s}]}", "rps", "interface", nic->name, "policy", "local") :
			      json_pack("{s:[{s:s, s:o}]}", "rps", "interface", nic->name, "cpus", list_json(&keep));
	if (!ev || !fix) {
		json_decref(ev);
		json_decref(fix);
		return -ENOMEM;
	}
	char cl[256];
	nt_cpulist_format(&hit, cl, sizeof(cl));
	return diag_add_finding(d, "rps-reserved-cpus", SEV_WARNING, nic->name, ev, fix,
				"%s sends receive work by RPS to CPU %s, reserved for applications.", nic->name, cl);
}

static int check_rss(diag *d, const nt_nic *nic, const json_t *reserved)
{
	const char *list = json_string_value(json_object_get(reserved, nic->name));
	nt_cpuset local, res, bad;
	nt_rss rss;
	int r = 0;
	nt_cpuset_zero(&res);
	if (list)
		nt_cpulist_parse(list, &res);
	if (!nt_nic_local_cpus(d->t, nic, &local) || nt_rss_read(d->ctx, nic->name, &rss) < 0)
		return 0;
	/* Hash buckets per queue, for the queues the table names. */
	uint32_t top = 0, sent = 0, *w = NULL;
	for (uint32_t i = 0; i < rss.indir_size; i++)
		if (rss.indir[i] + 1 > top)
			top = rss.indir[i] + 1;
	json_t *off = json_array();
	if (!off || !(w = calloc(top + 1, sizeof(*w)))) {
		json_decref(off);
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < rss.indir_size; i++)
		w[rss.indir[i]]++;
	const char *source = "irq-names";
	for (uint32_t q = 0; q < top; q++) {
		int idx = w[q] ? diag_queue_irq(d, nic, (int)q, false, &source) : -1;
		if (idx < 0 || !d->t->irqs[idx].has_affinity)
			continue;
		const nt_irq *irq = &d->t->irqs[idx];
		nt_cpuset_and(&bad, &irq->affinity, &res);
		bool far = !nt_cpuset_subset(&irq->affinity, &local);
		if (!far && nt_cpuset_empty(&bad))
			continue;
		sent += w[q];
		json_array_append_new(off, json_pack("{s:i, s:I, s:i, s:o, s:s}", "queue", (int)q, "entries",
						     (json_int_t)w[q], "irq", irq->irq, "irq_cpus",
						     list_json(&irq->affinity), "why",
						     far ? "off the node" : "reserved CPUs"));
	}
	free(w);
	size_t n = json_array_size(off);
	if (n == 0) {
		json_decref(off);
		goto out;
	}
	json_t *ev = json_pack("{s:o, s:I, s:I, s:o, s:s}", "queues", off, "indir_size", (json_int_t)rss.indir_size,
			       "entries_misplaced", (json_int_t)sent, "local_cpus", list_json(&local), "irq_source",
			       source);
	json_t *fix = json_pack("{s:[{s:s, s:s}]}", "rss", "interface", nic->name, "queues", "placed");
	if (!ev || !fix) {
		json_decref(ev);
		json_decref(fix);
		r = -ENOMEM;
		goto out;
	}
	r = diag_add_finding(d, "rss-queues-misplaced", SEV_WARNING, nic->name, ev, fix,
			     "%s's RSS table sends %u of %u hash buckets to %zu RX queue%s whose IRQs are served off "
			     "its node or on CPUs reserved for applications.",
			     nic->name, sent, rss.indir_size, n, n == 1 ? "" : "s");
out:
	nt_rss_free(&rss);
	return r;
}

int diag_check_steering(diag *d, const json_t *reserved)
{
	for (int i = 0; i < d->t->nnics; i++) {
		const nt_nic *nic = &d->t->nics[i];
		nt_nic_queues q;
		if (!diag_nic_is_physical(nic))
			continue;
		int r = nt_nic_queues_read(d->t, nic, &q);
		const char *source = "irq-names";
		/* The read names each queue's IRQ by name; the family's map,
		 * where the NAPI read holds it, replaces that. */
		for (int k = 0; r == 0 && k < q.ntx; k++)
			q.tx[k].irq = diag_queue_irq(d, nic, k, true, &source);
		for (int k = 0; r == 0 && k < q.nrx; k++)
			q.rx[k].irq = diag_queue_irq(d, nic, k, false, &source);
		if (r == 0)
			r = check_rps_missing(d, nic, &q);
		if (r == 0)
			r = check_xps(d, nic, &q, source);
		if (r == 0 && reserved)
			r = check_rps_reserved(d, nic, &q, reserved);
		if (r == 0)
			r = check_rss(d, nic, reserved);
		nt_nic_queues_free(&q);
		if (r == -ENOMEM)
			return r;
	}
	return 0;
}
