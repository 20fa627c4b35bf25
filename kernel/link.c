/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel/link.h"
#include "kernel/nlmsg.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>

/* A dump that races a link change is flagged NLM_F_DUMP_INTR by the kernel
 * and libnl reports it; a fresh dump normally succeeds at once. */
#define DUMP_TRIES 3

static void copy_name(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* libnl spells operstates as the kernel's IF_OPER_* names in lower case
 * ("up", "lowerlayerdown"), which is also what sysfs prints; lower-case it
 * anyway so a libnl that changes case does not change our output. */
static void fill_operstate(nt_link_info *li, uint8_t op)
{
	rtnl_link_operstate2str(op, li->operstate, sizeof(li->operstate));
	for (char *p = li->operstate; *p; p++)
		*p = (char)tolower((unsigned char)*p);
}

static void fill_link(nt_link_info *li, struct nl_cache *cache, struct rtnl_link *l)
{
	memset(li, 0, sizeof(*li));
	copy_name(li->name, sizeof(li->name), rtnl_link_get_name(l));
	li->ifindex = rtnl_link_get_ifindex(l);
	li->mtu = (int)rtnl_link_get_mtu(l);
	fill_operstate(li, rtnl_link_get_operstate(l));
	int master = rtnl_link_get_master(l);
	if (master > 0 && !rtnl_link_i2name(cache, master, li->master, sizeof(li->master)))
		li->master[0] = '\0';
	copy_name(li->kind, sizeof(li->kind), rtnl_link_get_type(l));
	li->rx_packets = rtnl_link_get_stat(l, RTNL_LINK_RX_PACKETS);
	li->tx_packets = rtnl_link_get_stat(l, RTNL_LINK_TX_PACKETS);
	li->rx_bytes = rtnl_link_get_stat(l, RTNL_LINK_RX_BYTES);
	li->tx_bytes = rtnl_link_get_stat(l, RTNL_LINK_TX_BYTES);
	li->rx_dropped = rtnl_link_get_stat(l, RTNL_LINK_RX_DROPPED);
	li->rx_missed = rtnl_link_get_stat(l, RTNL_LINK_RX_MISSED_ERR);
	li->rx_fifo_errors = rtnl_link_get_stat(l, RTNL_LINK_RX_FIFO_ERR);
	li->rx_errors = rtnl_link_get_stat(l, RTNL_LINK_RX_ERRORS);
}

int nt_link_dump(const nt_ctx *ctx, nt_link_info **out, int *n)
{
	struct nl_sock *sk = NULL;
	struct nl_cache *cache = NULL;
	nt_link_info *links = NULL;
	int r, count = 0, tries = 0;

	*out = NULL;
	*n = 0;
	if (!ctx->live)
		return -EOPNOTSUPP;
	/* Inside a read of the host, the read's socket (nt_nl_route_get),
	 * which its link reports use next. */
	r = nt_nl_route_get(ctx, &sk);
	if (r < 0)
		goto out;
	do {
		r = rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache);
	} while (r == -NLE_DUMP_INTR && ++tries < DUMP_TRIES);
	if (r < 0) {
		r = nt_nl_errno(r);
		goto out;
	}
	int total = nl_cache_nitems(cache);
	links = calloc(total > 0 ? (size_t)total : 1, sizeof(*links));
	if (!links) {
		r = -ENOMEM;
		goto out;
	}
	for (struct nl_object *o = nl_cache_get_first(cache); o && count < total;
	     o = nl_cache_get_next(o))
		fill_link(&links[count++], cache, (struct rtnl_link *)o);
	*out = links;
	*n = count;
	links = NULL;
	r = 0;
out:
	free(links);
	if (cache)
		nl_cache_free(cache);
	nt_nl_route_done(ctx, sk, r);
	return r;
}
