/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's per-queue counters: see host/qstats.h. */
#include "host/qstats.h"
#include "base/errors.h"
#include "kernel/netdev.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nt_nic_qstats_report(const nt_topology *t, const nt_nic *n, nt_nic_queues *q, json_t *doc)
{
	nt_netdev nd;
	char why[160];
	int mine = 0, r = 0;

	memset(&nd, 0, sizeof(nd));
	why[0] = '\0';
	int nr = nt_netdev_qstats_read(&t->ctx, n->name, n->ifindex, &nd);
	if (nr == -ENOMEM) {
		r = -ENOMEM;
		goto out;
	}
	if (nr == 0 && q) {
		/* The table moves to Q, which keeps it beside the queues that
		 * point into it. */
		free(q->qstats);
		q->qstats = nd.qstats;
		q->nqstats = (int)nd.nqstats;
		nd.qstats = NULL;
		for (int i = 0; i < q->nqstats; i++) {
			const nt_nd_qstats *s = &q->qstats[i];
			if ((int)s->ifindex != n->ifindex)
				continue;
			if (s->type == NT_NETDEV_QUEUE_RX && s->id < (uint32_t)q->nrx)
				q->rx[s->id].stats = i;
			else if (s->type == NT_NETDEV_QUEUE_TX && s->id < (uint32_t)q->ntx)
				q->tx[s->id].stats = i;
			else
				continue;
			mine++;
		}
	} else if (nr == 0) {
		for (size_t i = 0; i < nd.nqstats; i++)
			mine += (int)nd.qstats[i].ifindex == n->ifindex;
	}
	/* Why there are none, in the words an operator can act on: the kernel
	 * is too old, or the driver keeps no per-queue counters (the kernel
	 * then answers with nothing, as for veth on 6.18). */
	char rel[64] = "";
	if (nr == -ENOSYS && nt_read_str(&t->ctx, rel, sizeof(rel), "/proc/sys/kernel/osrelease") < 0)
		rel[0] = '\0';
	if (nr == -ENOENT)
		snprintf(why, sizeof(why), "the kernel has no netdev netlink family (Linux 6.3+)");
	else if (nr == -ENOSYS)
		snprintf(why, sizeof(why), "the kernel has no per-queue statistics: qstats-get needs Linux 6.9 or "
					   "later%s%s%s", rel[0] ? " (this kernel is " : "", rel, rel[0] ? ")" : "");
	else if (nr == -ENODATA)
		snprintf(why, sizeof(why), "the driver%s%s%s keeps no per-queue statistics", n->driver[0] ? " (" : "",
			 n->driver, n->driver[0] ? ")" : "");
	/* A dump for one ifindex answers EOPNOTSUPP both on a kernel without
	 * qstats-get and for a device without stat ops: kernel/netdev.c tells
	 * them apart by the family's commands; this is when it could not. */
	else if (nr == -EOPNOTSUPP)
		snprintf(why, sizeof(why), "no per-queue statistics: a kernel before 6.9 (qstats-get), or the driver%s%s%s keeps none",
			 n->driver[0] ? " (" : "", n->driver, n->driver[0] ? ")" : "");
	else if (nr < 0)
		snprintf(why, sizeof(why), "the per-queue statistics cannot be read: %s", nt_strerror(nr));
	else if (!mine)
		snprintf(why, sizeof(why), "the driver%s%s%s keeps no per-queue statistics", n->driver[0] ? " (" : "",
			 n->driver, n->driver[0] ? ")" : "");
	if (json_object_set_new(doc, "queue_stats_source", mine ? json_string("netlink") : json_null()) < 0 ||
	    json_object_set_new(doc, "queue_stats_reason", why[0] ? json_string(why) : json_null()) < 0)
		r = -ENOMEM;
out:
	nt_netdev_free(&nd);
	return r;
}
