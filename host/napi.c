/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's NAPI instances: see host/napi.h. */
#include "host/napi.h"
#include "kernel/netdev.h"
#include "kernel/task.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Threads of one NIC looked for by name, at most (a NIC has one NAPI a
 * channel; 4096 queues is NT_QUEUES_MAX). */
#define NT_NAPI_THREADS_MAX 4096

static json_t *int_or_null(long long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *bool_or_null(int v)
{
	return v < 0 ? json_null() : json_boolean(v);
}

/* The NAPI entry of the view; its thread read from /proc when it has one. */
static json_t *napi_json(const nt_topology *t, const nt_nd_napi *a, int dev_threaded)
{
	nt_task task;
	/* Before 6.17 the family has no "threaded", and the device's word
	 * decides: a kernel of that age keeps a NAPI's thread when threaded
	 * is turned off (6.1 does; it sleeps and polls nothing), so a thread
	 * beside a device not threaded is parked, not the NAPI's worker, and
	 * not shown as one. Otherwise a thread means threaded. */
	bool parked = a->threaded < 0 && dev_threaded == 0;
	long long pid = parked ? -1 : a->pid;
	bool have_task = pid > 0 && nt_task_read(&t->ctx, (int)pid, &task) == 0;
	int threaded = a->threaded >= 0 ? a->threaded : parked ? 0 : pid > 0 ? 1 : -1;
	json_t *cpus = json_null();
	if (have_task && task.has_allowed) {
		char list[NT_MAX_CPUS * 4];
		if (nt_cpulist_format(&task.allowed, list, sizeof(list)) >= 0)
			cpus = json_string(list);
	}
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)a->id, "irq",
			 int_or_null(a->irq), "threaded", bool_or_null(threaded), "pid", int_or_null(pid),
			 "thread_cpus", cpus, "last_cpu", int_or_null(have_task ? task.last_cpu : -1),
			 "defer_hard_irqs", int_or_null(a->defer_hard_irqs), "gro_flush_timeout_ns",
			 int_or_null(a->gro_flush_timeout), "irq_suspend_timeout_ns",
			 int_or_null(a->irq_suspend_timeout));
}

static int by_id(const void *x, const void *y)
{
	const nt_nd_napi *a = x, *b = y;
	return (a->id > b->id) - (a->id < b->id);
}

/* The topology's index of IRQ number IRQ, -1 when it has none. */
static int irq_index(const nt_topology *t, long long irq)
{
	const nt_irq *q = irq >= 0 && irq <= 0x7fffffff ? nt_topology_irq(t, (int)irq) : NULL;
	return q ? (int)(q - t->irqs) : -1;
}

static const nt_nd_napi *napi_by_id(const nt_nd_napi *v, size_t n, long long id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return &v[i];
	return NULL;
}

int nt_nic_napi_report(const nt_topology *t, const nt_nic *n, nt_nic_queues *q, json_t *doc)
{
	nt_netdev nd;
	nt_nd_dev dev;
	nt_nd_napi *mine = NULL;
	size_t nmine = 0;
	bool answered = false, netlink_irqs = false;
	int r = 0;

	nt_netdev_dev_read(&t->ctx, n->name, &dev);
	int nr = nt_netdev_read(&t->ctx, n->name, n->ifindex, &nd);
	if (nr == -ENOMEM) {
		r = -ENOMEM;
		goto out;
	}
	if (nr == 0) {
		/* The host's answers, this NIC's part. */
		mine = calloc(nd.nnapis + 1, sizeof(*mine));
		if (!mine) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < nd.nnapis; i++)
			if ((int)nd.napis[i].ifindex == n->ifindex) {
				mine[nmine++] = nd.napis[i];
				netlink_irqs |= nd.napis[i].irq >= 0;
			}
		for (size_t i = 0; i < nd.nqueues; i++) {
			const nt_nd_queue *e = &nd.queues[i];
			if ((int)e->ifindex != n->ifindex)
				continue;
			/* A driver that does not link its queues to NAPIs
			 * (netif_queue_set_napi; veth on 6.18) lists them
			 * without: that answers nothing of the map. */
			answered |= e->napi_id >= 0;
			if (!q)
				continue;
			if (e->type == NT_NETDEV_QUEUE_RX && e->id < (uint32_t)q->nrx)
				q->rx[e->id].napi_id = e->napi_id;
			else if (e->type == NT_NETDEV_QUEUE_TX && e->id < (uint32_t)q->ntx)
				q->tx[e->id].napi_id = e->napi_id;
		}
	} else {
		/* No family (before 6.8, or a fixture without its answers): the
		 * NAPI threads by name, all the kernel shows of NAPI then. */
		nt_napi_thread *th = calloc(NT_NAPI_THREADS_MAX, sizeof(*th));
		int nth = th ? nt_napi_threads_find(&t->ctx, n->name, th, NT_NAPI_THREADS_MAX) : -ENOMEM;
		mine = calloc(nth > 0 ? (size_t)nth : 1, sizeof(*mine));
		if (!th || !mine) {
			free(th);
			r = -ENOMEM;
			goto out;
		}
		/* A device not threaded has no NAPI working in a thread: the
		 * threads named for it are parked ones (see napi_json). */
		for (int i = 0; i < nth && dev.threaded != 0; i++) {
			if (th[i].napi_id < 0)
				continue; /* a name cut before its id: no NAPI to show */
			nt_nd_napi *a = &mine[nmine++];
			a->ifindex = (uint32_t)n->ifindex;
			a->id = (uint32_t)th[i].napi_id;
			a->pid = th[i].pid;
			a->threaded = 1;
			a->irq = a->defer_hard_irqs = a->gro_flush_timeout = a->irq_suspend_timeout = -1;
		}
		free(th);
	}
	/* The family is the truth for which IRQ serves which queue when it
	 * names the queues' NAPIs and IRQs for those NAPIs, or the NIC has no
	 * IRQ at all. A driver that does not tell the kernel its NAPIs' IRQs
	 * (netif_napi_set_irq) leaves the names of /proc/interrupts as the
	 * better answer. */
	bool netlink = answered && (netlink_irqs || n->nirqs == 0);
	if (netlink && q) {
		for (int i = 0; i < q->nrx; i++) {
			const nt_nd_napi *a = napi_by_id(mine, nmine, q->rx[i].napi_id);
			q->rx[i].irq = a ? irq_index(t, a->irq) : -1;
		}
		for (int i = 0; i < q->ntx; i++) {
			const nt_nd_napi *a = napi_by_id(mine, nmine, q->tx[i].napi_id);
			q->tx[i].irq = a ? irq_index(t, a->irq) : -1;
		}
	}
	qsort(mine, nmine, sizeof(*mine), by_id);
	json_t *arr = json_array();
	if (!arr || json_object_set_new(doc, "napi", arr) < 0) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nmine; i++) {
		json_t *e = napi_json(t, &mine[i], dev.threaded);
		if (!e || json_array_append_new(arr, e) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (json_object_set_new(doc, "irq_source", json_string(netlink ? "netlink" : "irq-names")) < 0 ||
	    json_object_set_new(doc, "threaded", bool_or_null(dev.threaded)) < 0 ||
	    json_object_set_new(doc, "napi_defer_hard_irqs", int_or_null(dev.defer_hard_irqs)) < 0 ||
	    json_object_set_new(doc, "gro_flush_timeout_ns", int_or_null(dev.gro_flush_timeout)) < 0)
		r = -ENOMEM;
out:
	free(mine);
	nt_netdev_free(&nd);
	return r;
}
