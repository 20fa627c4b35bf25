/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel events the agent watches to hold a desired state: rtnetlink link
 * messages (a NIC appearing, going up or down, renamed: its driver may have
 * requested its IRQs anew) and ethtool netlink notifications (rings,
 * channels, coalescing, offload features, flow control changed by someone
 * else). Both arrive on sockets this module opens; the caller polls
 * nt_events_fds and calls nt_events_read when one is readable.
 *
 * On a fixture root there is no kernel to listen to: nt_events_open
 * returns -EOPNOTSUPP and the caller checks periodically instead. */
#ifndef NT_KERNEL_EVENTS_H
#define NT_KERNEL_EVENTS_H

#include "kernel/ctx.h"

#include <net/if.h>
#include <stddef.h>

typedef enum nt_event_kind {
	NT_EVENT_LINK, /* RTM_NEWLINK / RTM_DELLINK */
	NT_EVENT_ETHTOOL, /* an ethtool *_NTF notification */
} nt_event_kind;

typedef struct nt_event {
	nt_event_kind kind;
	char ifname[IF_NAMESIZE]; /* "" when the message did not say */
	int ifindex; /* 0 when unknown */
	/* LINK: "new", "del"; ETHTOOL: what changed ("rings", "channels",
	 * "coalesce", "linkinfo", ..., or "ethtool-cmd-N"). */
	char what[32];
	unsigned flags; /* LINK: ifi_flags (IFF_UP, IFF_RUNNING) */
} nt_event;

typedef void (*nt_event_fn)(void *ud, const nt_event *ev);

typedef struct nt_events nt_events;

/* Subscribe to link messages and, when the kernel has the ethtool genl
 * family, its "monitor" group. Returns 0, -EOPNOTSUPP on a fixture root,
 * or -errno. *OUT is the caller's (nt_events_close). */
int nt_events_open(const nt_ctx *ctx, nt_events **out);
void nt_events_close(nt_events *ev);
/* What EV listens to, in words for a report: "link messages and ethtool
 * notifications", or "link messages only (...)" on a kernel without
 * ethtool netlink. Static storage. */
const char *nt_events_describe(const nt_events *ev);
/* The sockets to poll for POLLIN, into FDS (at most 2); returns how many. */
int nt_events_fds(const nt_events *ev, int *fds);
/* Read whatever is queued on FD without blocking, calling FN for every
 * event. Returns 0 or -errno (-ENOBUFS: the kernel dropped messages, the
 * caller should check everything). */
int nt_events_read(nt_events *ev, int fd, nt_event_fn fn, void *ud);

/* Pure: the events in a buffer of netlink messages as received. FAMILY is
 * the socket's protocol (NETLINK_ROUTE or NETLINK_GENERIC); ETHTOOL_ID the
 * ethtool genl family id (messages of other families are ignored). Returns
 * how many events FN got, or NT_EPARSE for a truncated message. */
int nt_events_parse(const void *buf, size_t len, int family, int ethtool_id, nt_event_fn fn,
		    void *ud);

#endif
