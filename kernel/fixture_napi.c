/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel on a fixture root, the `netdev` family's answers for one NIC
 * (kernel/netdev.h): the "netdev" object of ROOT/ethtool/IFACE.json holds
 * what `queue-get` and `napi-get` would say of it, in the spec's words:
 *
 *   "netdev": {
 *     "queues": [{"id": 0, "type": "rx", "napi-id": 8193}, ...],
 *     "napis": [{"id": 8193, "irq": 102, "pid": 2411, "defer-hard-irqs": 0,
 *                "gro-flush-timeout": 0, "irq-suspend-timeout": 0,
 *                "threaded": "enabled"}, ...]
 *   }
 *
 * A member left out is one the kernel does not send (an older kernel, a
 * NAPI without a thread); a NIC whose document has no such object is on a
 * kernel without the family's commands (-EOPNOTSUPP), and the report falls
 * back to sysfs and the thread names, as it does live.
 *
 * Per-queue counters (`qstats-get`, scope queue) are a "qstats" member of
 * the same object, each entry a queue with the counters its driver keeps:
 *
 *     "qstats": [{"queue-type": "rx", "queue-id": 0, "rx-packets": 81104,
 *                 "rx-bytes": 2002809049}, ...]
 *
 * An empty array is a driver that keeps none (veth), no member a kernel
 * without the command (before 6.9). */
#include "kernel/fixture.h"
#include "kernel/fixture_int.h"
#include "kernel/netdev.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* Member KEY of O as a non-negative integer, or -1 when absent; false
 * when it is there and not one. */
static bool opt_int(json_t *o, const char *key, int64_t max, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	*out = -1;
	if (!v)
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
		return false;
	*out = json_integer_value(v);
	return true;
}

static int queue_entry(json_t *e, int ifindex, nt_nd_queue *q)
{
	const char *type = json_string_value(json_object_get(e, "type"));
	int64_t id;
	if (!json_is_object(e) || !type || !opt_int(e, "id", UINT32_MAX, &id) || id < 0 ||
	    !opt_int(e, "napi-id", UINT32_MAX, &q->napi_id))
		return NT_EPARSE;
	if (!strcmp(type, "rx"))
		q->type = NT_NETDEV_QUEUE_RX;
	else if (!strcmp(type, "tx"))
		q->type = NT_NETDEV_QUEUE_TX;
	else
		return NT_EPARSE;
	q->id = (uint32_t)id;
	q->ifindex = (uint32_t)ifindex;
	return 0;
}

static int napi_entry(json_t *e, int ifindex, nt_nd_napi *n)
{
	int64_t id;
	json_t *th = json_object_get(e, "threaded");
	if (!json_is_object(e) || !opt_int(e, "id", UINT32_MAX, &id) || id < 0 ||
	    !opt_int(e, "irq", UINT32_MAX, &n->irq) || !opt_int(e, "pid", UINT32_MAX, &n->pid) ||
	    !opt_int(e, "defer-hard-irqs", UINT32_MAX, &n->defer_hard_irqs) ||
	    !opt_int(e, "gro-flush-timeout", INT64_MAX, &n->gro_flush_timeout) ||
	    !opt_int(e, "irq-suspend-timeout", INT64_MAX, &n->irq_suspend_timeout))
		return NT_EPARSE;
	if (!th)
		n->threaded = -1;
	else if (json_is_string(th) && !strcmp(json_string_value(th), "enabled"))
		n->threaded = 1;
	else if (json_is_string(th) && !strcmp(json_string_value(th), "disabled"))
		n->threaded = 0;
	else
		return NT_EPARSE;
	n->id = (uint32_t)id;
	n->ifindex = (uint32_t)ifindex;
	return 0;
}

int nt_fixture_netdev_get(const nt_ctx *ctx, const char *ifname, int ifindex, nt_netdev *nd)
{
	json_t *root = NULL, *sec = NULL, *e;
	size_t i;
	int r = nt_fx_load(ctx, "netdev", ifname, &root, &sec);
	if (r < 0)
		return r;
	json_t *qs = json_object_get(sec, "queues"), *ns = json_object_get(sec, "napis");
	if ((qs && !json_is_array(qs)) || (ns && !json_is_array(ns))) {
		r = NT_EPARSE;
		goto out;
	}
	nd->queues = calloc(json_array_size(qs) + 1, sizeof(*nd->queues));
	nd->napis = calloc(json_array_size(ns) + 1, sizeof(*nd->napis));
	if (!nd->queues || !nd->napis) {
		r = -ENOMEM;
		goto out;
	}
	nd->qcap = json_array_size(qs) + 1;
	nd->ncap = json_array_size(ns) + 1;
	json_array_foreach(qs, i, e) {
		if ((r = queue_entry(e, ifindex, &nd->queues[nd->nqueues])) < 0)
			goto out;
		nd->nqueues++;
	}
	json_array_foreach(ns, i, e) {
		if ((r = napi_entry(e, ifindex, &nd->napis[nd->nnapis])) < 0)
			goto out;
		nd->nnapis++;
	}
out:
	json_decref(root);
	return r;
}

static int qstats_entry(json_t *e, int ifindex, nt_nd_qstats *q)
{
	const char *type = json_string_value(json_object_get(e, "queue-type"));
	const char *key;
	json_t *v;
	int64_t id;
	memset(q, 0, sizeof(*q));
	if (!json_is_object(e) || !type || !opt_int(e, "queue-id", UINT32_MAX, &id) || id < 0)
		return NT_EPARSE;
	if (!strcmp(type, "rx"))
		q->type = NT_NETDEV_QUEUE_RX;
	else if (!strcmp(type, "tx"))
		q->type = NT_NETDEV_QUEUE_TX;
	else
		return NT_EPARSE;
	json_object_foreach(e, key, v) {
		int i;
		for (i = 0; i < NT_NETDEV_QSTATS_N; i++)
			if (!strcmp(key, nt_netdev_qstat_names[i]))
				break;
		if (i == NT_NETDEV_QSTATS_N)
			continue; /* queue-type, queue-id */
		/* The kernel's counters are u64; jansson's integers stop at
		 * INT64_MAX, which no fixture needs to pass. */
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return NT_EPARSE;
		q->v[i] = (uint64_t)json_integer_value(v);
		q->present |= 1u << i;
	}
	q->id = (uint32_t)id;
	q->ifindex = (uint32_t)ifindex;
	return 0;
}

int nt_fixture_qstats_get(const nt_ctx *ctx, const char *ifname, int ifindex, nt_netdev *nd)
{
	json_t *root = NULL, *sec = NULL, *e;
	size_t i;
	int r = nt_fx_load(ctx, "netdev", ifname, &root, &sec);
	if (r < 0)
		return r;
	json_t *qs = json_object_get(sec, "qstats");
	if (!qs) {
		r = -EOPNOTSUPP;
		goto out;
	}
	if (!json_is_array(qs)) {
		r = NT_EPARSE;
		goto out;
	}
	nt_nd_qstats *p = realloc(nd->qstats, (nd->nqstats + json_array_size(qs) + 1) * sizeof(*p));
	if (!p) {
		r = -ENOMEM;
		goto out;
	}
	nd->qstats = p;
	nd->scap = nd->nqstats + json_array_size(qs) + 1;
	json_array_foreach(qs, i, e) {
		if ((r = qstats_entry(e, ifindex, &nd->qstats[nd->nqstats])) < 0)
			goto out;
		nd->nqstats++;
	}
out:
	json_decref(root);
	return r;
}
