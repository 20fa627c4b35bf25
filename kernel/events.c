/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel/events.h"
#include "kernel/ethtool_nlattrs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

struct nt_events {
	struct nl_sock *rt; /* NETLINK_ROUTE, RTNLGRP_LINK */
	struct nl_sock *et; /* NETLINK_GENERIC, ethtool "monitor"; NULL without it */
	int ethtool_id;
};

/* What an ethtool notification says changed. The kernel sends *_NTF for
 * every successful SET, whoever made it (the notification carries no
 * sender), so this is all the culprit report can name. */
static const char *ethtool_what(int cmd)
{
	switch (cmd) {
	case ETHTOOL_MSG_RINGS_NTF: return "rings";
	case ETHTOOL_MSG_CHANNELS_NTF: return "channels";
	case ETHTOOL_MSG_COALESCE_NTF: return "coalesce";
	case ETHTOOL_MSG_LINKINFO_NTF: return "linkinfo";
	case ETHTOOL_MSG_LINKMODES_NTF: return "linkmodes";
	case ETHTOOL_MSG_FEATURES_NTF: return "features";
	case ETHTOOL_MSG_PAUSE_NTF: return "pause";
	case ETHTOOL_MSG_WOL_NTF: return "wol";
	case ETHTOOL_MSG_DEBUG_NTF: return "debug";
	/* 6.17: an RSS table, hash or input transformation set, a context
	 * made or deleted (by either interface: the ioctl notifies too). */
	case NT_ETHTOOL_MSG_RSS_NTF: return "rss";
	case NT_ETHTOOL_MSG_RSS_CREATE_NTF: return "rss-create";
	case NT_ETHTOOL_MSG_RSS_DELETE_NTF: return "rss-delete";
	default: return NULL;
	}
}

/* The first attribute of every ethtool message is its request header
 * (ETHTOOL_A_*_HEADER == 1), holding the device's name and index. */
static void ethtool_dev(const struct nlattr *attrs, size_t len, nt_event *ev)
{
	const struct nlattr *a = attrs;
	int rem = (int)len;
	while (rem >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= (unsigned)rem) {
		if ((a->nla_type & NLA_TYPE_MASK) == ETHTOOL_A_HEADER_DEV_INDEX &&
		    a->nla_len >= NLA_HDRLEN + 4) {
			uint32_t v;
			memcpy(&v, (const char *)a + NLA_HDRLEN, 4);
			ev->ifindex = (int)v;
		} else if ((a->nla_type & NLA_TYPE_MASK) == ETHTOOL_A_HEADER_DEV_NAME) {
			size_t n = a->nla_len - NLA_HDRLEN;
			if (n >= sizeof(ev->ifname))
				n = sizeof(ev->ifname) - 1;
			memcpy(ev->ifname, (const char *)a + NLA_HDRLEN, n);
			ev->ifname[n] = '\0';
		}
		int step = NLA_ALIGN(a->nla_len);
		rem -= step;
		a = (const struct nlattr *)((const char *)a + step);
	}
}

int nt_events_parse(const void *buf, size_t len, int family, int ethtool_id, nt_event_fn fn,
		    void *ud)
{
	const struct nlmsghdr *h = buf;
	int n = 0, rem = (int)len;

	for (; NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
		nt_event ev;
		memset(&ev, 0, sizeof(ev));
		if (family == NETLINK_ROUTE &&
		    (h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK)) {
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
				return NT_EPARSE;
			const struct ifinfomsg *ifi = NLMSG_DATA(h);
			ev.kind = NT_EVENT_LINK;
			ev.ifindex = ifi->ifi_index;
			ev.flags = ifi->ifi_flags;
			snprintf(ev.what, sizeof(ev.what), "%s",
				 h->nlmsg_type == RTM_NEWLINK ? "new" : "del");
			int arem = (int)IFLA_PAYLOAD(h);
			for (const struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, arem);
			     a = RTA_NEXT(a, arem)) {
				if (a->rta_type != IFLA_IFNAME)
					continue;
				size_t l = RTA_PAYLOAD(a);
				if (l >= sizeof(ev.ifname))
					l = sizeof(ev.ifname) - 1;
				memcpy(ev.ifname, RTA_DATA(a), l);
				ev.ifname[l] = '\0';
			}
			fn(ud, &ev);
			n++;
		} else if (family == NETLINK_GENERIC && ethtool_id > 0 &&
			   h->nlmsg_type == ethtool_id) {
			if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
				return NT_EPARSE;
			const struct genlmsghdr *g = NLMSG_DATA(h);
			const char *what = ethtool_what(g->cmd);
			ev.kind = NT_EVENT_ETHTOOL;
			if (what)
				snprintf(ev.what, sizeof(ev.what), "%s", what);
			else
				snprintf(ev.what, sizeof(ev.what), "ethtool-cmd-%d", g->cmd);
			const struct nlattr *a = (const void *)((const char *)g + GENL_HDRLEN);
			int arem = (int)h->nlmsg_len - (int)NLMSG_LENGTH(GENL_HDRLEN);
			if (arem >= (int)sizeof(*a) && a->nla_len >= NLA_HDRLEN &&
			    a->nla_len <= (unsigned)arem)
				ethtool_dev((const struct nlattr *)((const char *)a + NLA_HDRLEN),
					    a->nla_len - NLA_HDRLEN, &ev);
			fn(ud, &ev);
			n++;
		}
	}
	return n;
}

static int nl_err(int e)
{
	/* libnl's own codes at the boundary: what matters to the caller is
	 * "the family is not there" versus anything else. */
	switch (-e) {
	case NLE_OBJ_NOTFOUND: return -ENOENT;
	case NLE_NOMEM: return -ENOMEM;
	case NLE_PERM: return -EPERM;
	case NLE_NOACCESS: return -EACCES;
	default: return -EIO;
	}
}

int nt_events_open(const nt_ctx *ctx, nt_events **out)
{
	nt_events *ev;
	int r;

	*out = NULL;
	if (!ctx->live)
		return -EOPNOTSUPP;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->rt = nl_socket_alloc();
	if (!ev->rt) {
		r = -ENOMEM;
		goto fail;
	}
	nl_socket_disable_seq_check(ev->rt);
	nl_socket_disable_auto_ack(ev->rt);
	if ((r = nl_connect(ev->rt, NETLINK_ROUTE)) < 0 ||
	    (r = nl_socket_add_membership(ev->rt, RTNLGRP_LINK)) < 0 ||
	    (r = nl_socket_set_nonblocking(ev->rt)) < 0) {
		r = nl_err(r);
		goto fail;
	}
	/* Kernels before 5.6 have no ethtool netlink: link events only, and
	 * rings, channels and coalescing are then checked periodically. */
	ev->et = nl_socket_alloc();
	if (ev->et) {
		nl_socket_disable_seq_check(ev->et);
		int grp = -1;
		if (genl_connect(ev->et) == 0 &&
		    (ev->ethtool_id = genl_ctrl_resolve(ev->et, ETHTOOL_GENL_NAME)) > 0 &&
		    (grp = genl_ctrl_resolve_grp(ev->et, ETHTOOL_GENL_NAME,
						 ETHTOOL_MCGRP_MONITOR_NAME)) >= 0 &&
		    nl_socket_add_membership(ev->et, grp) == 0 &&
		    nl_socket_set_nonblocking(ev->et) == 0) {
			/* subscribed */
		} else {
			nl_socket_free(ev->et);
			ev->et = NULL;
			ev->ethtool_id = 0;
		}
	}
	*out = ev;
	return 0;
fail:
	nt_events_close(ev);
	return r;
}

void nt_events_close(nt_events *ev)
{
	if (!ev)
		return;
	if (ev->rt)
		nl_socket_free(ev->rt);
	if (ev->et)
		nl_socket_free(ev->et);
	free(ev);
}

const char *nt_events_describe(const nt_events *ev)
{
	if (ev && ev->et)
		return "link messages and ethtool notifications";
	return "link messages only (no ethtool netlink monitor in this kernel: rings, channels "
	       "and coalescing are checked every interval)";
}

int nt_events_fds(const nt_events *ev, int *fds)
{
	int n = 0;
	if (ev && ev->rt)
		fds[n++] = nl_socket_get_fd(ev->rt);
	if (ev && ev->et)
		fds[n++] = nl_socket_get_fd(ev->et);
	return n;
}

int nt_events_read(nt_events *ev, int fd, nt_event_fn fn, void *ud)
{
	bool rt = ev->rt && fd == nl_socket_get_fd(ev->rt);
	char buf[32768];
	int overrun = 0;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS) {
				overrun = -ENOBUFS; /* messages were lost; keep reading */
				continue;
			}
			return -errno;
		}
		if (n == 0)
			break;
		nt_events_parse(buf, (size_t)n, rt ? NETLINK_ROUTE : NETLINK_GENERIC,
				ev->ethtool_id, fn, ud);
	}
	return overrun;
}
