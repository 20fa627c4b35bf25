/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's NAPI instances, and those of several NICs read at once: see
 * host/napi.h. */
#include "host/napi.h"
#include "kernel/netdev.h"
#include "kernel/task.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Threads of one NIC looked for by name, at most (a NIC has one NAPI a
 * channel; 4096 queues is NT_QUEUES_MAX). */
#define NT_NAPI_THREADS_MAX 4096

/* ---- reading ---- */

/* NIC's part of SRC (one NIC's document, or the host's dumps) into H. */
static int take_nic(nt_host_napi *h, const nt_netdev *src, int ifindex)
{
	for (size_t i = 0; i < src->nqueues; i++)
		if ((int)src->queues[i].ifindex == ifindex && nt_netdev_push_queue(&h->nd, &src->queues[i]) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < src->nnapis; i++)
		if ((int)src->napis[i].ifindex == ifindex && nt_netdev_push_napi(&h->nd, &src->napis[i]) < 0)
			return -ENOMEM;
	return 0;
}

/* No family (before 6.8, or a fixture without its answers): the NAPI
 * threads by name, all the kernel shows of NAPI then. A device not
 * threaded has no NAPI working in a thread: the threads named for it are
 * parked ones (see derive). */
static int by_name(nt_host_napi *h, const nt_topology *t, const nt_nic *n, const nt_nd_dev *dev)
{
	if (dev->threaded == 0)
		return 0;
	nt_napi_thread *th = calloc(NT_NAPI_THREADS_MAX, sizeof(*th));
	if (!th)
		return -ENOMEM;
	int nth = nt_napi_threads_find(&t->ctx, n->name, th, NT_NAPI_THREADS_MAX);
	int r = 0;
	for (int i = 0; i < nth && r == 0; i++) {
		if (th[i].napi_id < 0)
			continue; /* a name cut before its id: no NAPI to show */
		nt_nd_napi a = { .ifindex = (uint32_t)n->ifindex, .id = (uint32_t)th[i].napi_id, .pid = th[i].pid,
				 .threaded = 1, .irq = -1, .defer_hard_irqs = -1, .gro_flush_timeout = -1,
				 .irq_suspend_timeout = -1 };
		r = nt_netdev_push_napi(&h->nd, &a);
	}
	free(th);
	return r;
}

static int nic_of(const nt_topology *t, uint32_t ifindex)
{
	for (int i = 0; i < t->nnics; i++)
		if (t->nics[i].ifindex == (int)ifindex)
			return i;
	return -1;
}

/* What the report shows of each NAPI beyond the family's answer. */
static void derive(nt_host_napi *h, const nt_topology *t, unsigned flags)
{
	for (size_t i = 0; i < h->nd.nnapis; i++) {
		const nt_nd_napi *a = &h->nd.napis[i];
		nt_napi *x = &h->napis[i];
		x->nd = *a;
		x->nic = nic_of(t, a->ifindex);
		x->rx_queue = -1;
		x->last_cpu = -1;
		int dev_threaded = x->nic >= 0 ? h->nics[x->nic].dev.threaded : -1;
		/* Before 6.17 the family has no "threaded", and the device's
		 * word decides: a kernel of that age keeps a NAPI's thread when
		 * threaded is turned off (6.1 does; it sleeps and polls nothing),
		 * so a thread beside a device not threaded is parked, not the
		 * NAPI's worker, and not shown as one. Otherwise a thread means
		 * threaded. */
		bool parked = a->threaded < 0 && dev_threaded == 0;
		x->pid = parked ? -1 : a->pid;
		/* 0 or 1 here: the family's 2 (busy-poll) is threaded too. */
		x->threaded = a->threaded >= 0 ? a->threaded > 0 : parked ? 0 : x->pid > 0 ? 1 : -1;
		nt_task task;
		if (!(flags & NT_NAPI_NO_TASKS) && x->pid > 0 && x->pid <= INT32_MAX &&
		    nt_task_read(&t->ctx, (int)x->pid, &task) == 0) {
			x->has_cpus = task.has_allowed;
			if (task.has_allowed)
				x->thread_cpus = task.allowed;
			x->last_cpu = task.last_cpu;
		}
	}
	/* Each RX queue's NAPI, as the profile's kinds find it
	 * (nt_netdev_rx_napi: by the queue's napi-id, or one NAPI a queue in
	 * id order where the driver names none). */
	for (size_t i = 0; i < h->nd.nqueues; i++) {
		const nt_nd_queue *q = &h->nd.queues[i];
		if (q->type != NT_NETDEV_QUEUE_RX)
			continue;
		const nt_nd_napi *a = nt_netdev_rx_napi(&h->nd, (int)q->ifindex, q->id);
		nt_napi *x = a ? &h->napis[a - h->nd.napis] : NULL;
		if (x && (x->rx_queue < 0 || (uint32_t)x->rx_queue > q->id))
			x->rx_queue = (int)q->id;
	}
}

/* The family is the truth for which IRQ serves which queue when it names
 * the queues' NAPIs and IRQs for those NAPIs, or the NIC has no IRQ at all.
 * A driver that does not tell the kernel its NAPIs' IRQs
 * (netif_napi_set_irq) leaves the names of /proc/interrupts as the better
 * answer; one that does not link its queues to NAPIs
 * (netif_queue_set_napi; veth on 6.18) lists them without, which answers
 * nothing of the map. */
static bool netlink_map(const nt_host_napi *h, const nt_nic *n)
{
	bool answered = false, irqs = false;
	for (size_t i = 0; i < h->nd.nqueues; i++)
		answered |= (int)h->nd.queues[i].ifindex == n->ifindex && h->nd.queues[i].napi_id >= 0;
	for (size_t i = 0; i < h->nd.nnapis; i++)
		irqs |= (int)h->nd.napis[i].ifindex == n->ifindex && h->nd.napis[i].irq >= 0;
	return answered && (irqs || n->nirqs == 0);
}

int nt_host_napi_read(const nt_topology *t, const nt_nic *only, unsigned flags, nt_host_napi *out)
{
	nt_netdev host, own;
	int host_r = 1; /* 1: the live dumps not made yet */
	int r = -ENOMEM;

	memset(out, 0, sizeof(*out));
	memset(&host, 0, sizeof(host));
	out->nics = calloc(t->nnics ? (size_t)t->nnics : 1, sizeof(*out->nics));
	if (!out->nics)
		goto out;
	out->nnics = t->nnics;
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *n = &t->nics[i];
		nt_napi_nic *c = &out->nics[i];
		if (only ? n != only : n->is_bond)
			continue;
		c->read = true;
		nt_netdev_dev_read(&t->ctx, n->name, &c->dev);
		const nt_netdev *src = &own;
		if (t->ctx.live) {
			/* One socket and the two dumps for the whole host, whatever
			 * the number of NICs asked about. */
			if (host_r == 1)
				host_r = nt_netdev_read(&t->ctx, n->name, n->ifindex, &host);
			c->family = host_r;
			src = &host;
		} else {
			c->family = nt_netdev_read(&t->ctx, n->name, n->ifindex, &own);
		}
		int e = c->family == -ENOMEM ? -ENOMEM :
			c->family == 0	     ? take_nic(out, src, n->ifindex) :
			(flags & NT_NAPI_BY_NAME) ? by_name(out, t, n, &c->dev) :
						    0;
		if (!t->ctx.live)
			nt_netdev_free(&own);
		if (e < 0)
			goto out;
	}
	out->napis = calloc(out->nd.nnapis ? out->nd.nnapis : 1, sizeof(*out->napis));
	if (!out->napis)
		goto out;
	derive(out, t, flags);
	for (int i = 0; i < t->nnics; i++)
		if (out->nics[i].read && out->nics[i].family == 0)
			out->nics[i].netlink_map = netlink_map(out, &t->nics[i]);
	r = 0;
out:
	nt_netdev_free(&host);
	return r;
}

void nt_host_napi_free(nt_host_napi *h)
{
	if (!h)
		return;
	nt_netdev_free(&h->nd);
	free(h->napis);
	free(h->nics);
	memset(h, 0, sizeof(*h));
}

const nt_napi_nic *nt_host_napi_nic(const nt_host_napi *h, const nt_topology *t, const nt_nic *n)
{
	if (!h || !h->nics || n < t->nics || n >= t->nics + t->nnics)
		return NULL;
	const nt_napi_nic *c = &h->nics[n - t->nics];
	return n - t->nics < h->nnics && c->read ? c : NULL;
}

/* The topology's index of IRQ number IRQ, -1 when it has none. */
static int irq_index(const nt_topology *t, long long irq)
{
	const nt_irq *q = irq >= 0 && irq <= 0x7fffffff ? nt_topology_irq(t, (int)irq) : NULL;
	return q ? (int)(q - t->irqs) : -1;
}

static const nt_nd_napi *napi_by_id(const nt_netdev *nd, int ifindex, long long id)
{
	for (size_t i = 0; i < nd->nnapis; i++)
		if ((int)nd->napis[i].ifindex == ifindex && nd->napis[i].id == id)
			return &nd->napis[i];
	return NULL;
}

/* The NAPI id the family names for queue QUEUE of IFINDEX, -1 none. */
static long long queue_napi(const nt_netdev *nd, int ifindex, int queue, bool tx)
{
	uint32_t type = tx ? NT_NETDEV_QUEUE_TX : NT_NETDEV_QUEUE_RX;
	for (size_t i = 0; i < nd->nqueues; i++) {
		const nt_nd_queue *e = &nd->queues[i];
		if ((int)e->ifindex == ifindex && e->type == type && queue >= 0 && e->id == (uint32_t)queue)
			return e->napi_id;
	}
	return -1;
}

int nt_host_napi_queue_irq(const nt_host_napi *h, const nt_topology *t, const nt_nic *n, int queue, bool tx,
			   const char **source)
{
	const nt_napi_nic *c = nt_host_napi_nic(h, t, n);
	if (c && c->netlink_map) {
		if (source)
			*source = "netlink";
		const nt_nd_napi *a = napi_by_id(&h->nd, n->ifindex, queue_napi(&h->nd, n->ifindex, queue, tx));
		return a ? irq_index(t, a->irq) : -1;
	}
	if (source)
		*source = "irq-names";
	return nt_nic_queue_irq(t, n, queue, tx);
}

int nt_host_napi_irq_queue(const nt_host_napi *h, const nt_topology *t, const nt_nic *n, int irq)
{
	const nt_napi_nic *c = nt_host_napi_nic(h, t, n);
	if (!c || !c->netlink_map)
		return -2;
	/* RX queues first: a channel's NAPI serves RX and TX queue K alike. */
	for (int pass = 0; pass < 2; pass++) {
		int best = -1;
		uint32_t type = pass ? NT_NETDEV_QUEUE_TX : NT_NETDEV_QUEUE_RX;
		for (size_t i = 0; i < h->nd.nqueues; i++) {
			const nt_nd_queue *e = &h->nd.queues[i];
			if ((int)e->ifindex != n->ifindex || e->type != type || e->napi_id < 0)
				continue;
			const nt_nd_napi *a = napi_by_id(&h->nd, n->ifindex, e->napi_id);
			if (a && irq_index(t, a->irq) == irq && (best < 0 || e->id < (uint32_t)best))
				best = (int)e->id;
		}
		if (best >= 0)
			return best;
	}
	return -1;
}

/* ---- the per-NIC view ---- */

static json_t *int_or_null(long long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *bool_or_null(int v)
{
	return v < 0 ? json_null() : json_boolean(v);
}

/* The NAPI entry of the view. */
static json_t *napi_json(const nt_napi *x)
{
	json_t *cpus = json_null();
	if (x->has_cpus) {
		char list[NT_MAX_CPUS * 4];
		if (nt_cpulist_format(&x->thread_cpus, list, sizeof(list)) >= 0)
			cpus = json_string(list);
	}
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)x->nd.id, "irq",
			 int_or_null(x->nd.irq), "threaded", bool_or_null(x->threaded), "pid", int_or_null(x->pid),
			 "thread_cpus", cpus, "last_cpu", int_or_null(x->last_cpu), "defer_hard_irqs",
			 int_or_null(x->nd.defer_hard_irqs), "gro_flush_timeout_ns",
			 int_or_null(x->nd.gro_flush_timeout), "irq_suspend_timeout_ns",
			 int_or_null(x->nd.irq_suspend_timeout));
}

static int by_id(const void *x, const void *y)
{
	const nt_napi *a = *(const nt_napi *const *)x, *b = *(const nt_napi *const *)y;
	return (a->nd.id > b->nd.id) - (a->nd.id < b->nd.id);
}

int nt_nic_napi_report(const nt_topology *t, const nt_nic *n, nt_nic_queues *q, json_t *doc)
{
	nt_host_napi h;
	const nt_napi **mine = NULL;
	size_t nmine = 0;
	int r = nt_host_napi_read(t, n, NT_NAPI_BY_NAME, &h);
	const nt_napi_nic *c = r == 0 ? nt_host_napi_nic(&h, t, n) : NULL;
	if (!c) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; q && c->family == 0 && i < h.nd.nqueues; i++) {
		const nt_nd_queue *e = &h.nd.queues[i];
		if ((int)e->ifindex != n->ifindex)
			continue;
		if (e->type == NT_NETDEV_QUEUE_RX && e->id < (uint32_t)q->nrx)
			q->rx[e->id].napi_id = e->napi_id;
		else if (e->type == NT_NETDEV_QUEUE_TX && e->id < (uint32_t)q->ntx)
			q->tx[e->id].napi_id = e->napi_id;
	}
	if (c->netlink_map && q) {
		for (int i = 0; i < q->nrx; i++)
			q->rx[i].irq = nt_host_napi_queue_irq(&h, t, n, i, false, NULL);
		for (int i = 0; i < q->ntx; i++)
			q->tx[i].irq = nt_host_napi_queue_irq(&h, t, n, i, true, NULL);
	}
	mine = calloc(h.nd.nnapis + 1, sizeof(*mine));
	if (!mine) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < h.nd.nnapis; i++)
		if ((int)h.nd.napis[i].ifindex == n->ifindex)
			mine[nmine++] = &h.napis[i];
	qsort(mine, nmine, sizeof(*mine), by_id);
	json_t *arr = json_array();
	if (!arr || json_object_set_new(doc, "napi", arr) < 0) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nmine; i++) {
		json_t *e = napi_json(mine[i]);
		if (!e || json_array_append_new(arr, e) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (json_object_set_new(doc, "irq_source", json_string(c->netlink_map ? "netlink" : "irq-names")) < 0 ||
	    json_object_set_new(doc, "threaded", bool_or_null(c->dev.threaded)) < 0 ||
	    json_object_set_new(doc, "napi_defer_hard_irqs", int_or_null(c->dev.defer_hard_irqs)) < 0 ||
	    json_object_set_new(doc, "gro_flush_timeout_ns", int_or_null(c->dev.gro_flush_timeout)) < 0)
		r = -ENOMEM;
out:
	free(mine);
	nt_host_napi_free(&h);
	return r;
}
