/* SPDX-License-Identifier: Apache-2.0 */
/* napi-set, the netdev family's one write (kernel/netdev.h): a request
 * with an ACK through libnl, so the kernel's extended-ack text comes back
 * (kernel/nlmsg.h). Apart from netdev.c, whose raw-socket dumps use names
 * libnl has too. */
#include "kernel/netdev.h"
#include "kernel/fixture.h"
#include "kernel/nlmsg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

static int napi_set_live(uint32_t id, nt_napi_attr a, uint64_t v, char *err, size_t errsize)
{
	struct nl_sock *sk = NULL;
	struct nl_msg *msg = NULL;
	int r = nt_nl_open(NETLINK_GENERIC, &sk);
	if (r < 0)
		return r;
	int family = genl_ctrl_resolve(sk, NT_NETDEV_FAMILY_NAME);
	if (family < 0) {
		r = family == -NLE_OBJ_NOTFOUND ? -ENOENT : nt_nl_errno(family);
		goto out;
	}
	msg = nlmsg_alloc();
	if (!msg) {
		r = -ENOMEM;
		goto out;
	}
	/* defer-hard-irqs and threaded are u32s in the policy (threaded was
	 * a "uint" at first, which takes a u32 too); the timeouts are "uint",
	 * which takes 4 or 8 bytes: 8, so a timeout above 4.29 s fits. */
	int attr = a == NT_NAPI_DEFER_HARD_IRQS ? NT_NETDEV_A_NAPI_DEFER_HARD_IRQS :
		   a == NT_NAPI_GRO_FLUSH_TIMEOUT ? NT_NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT :
		   a == NT_NAPI_THREADED	  ? NT_NETDEV_A_NAPI_THREADED :
						    NT_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT;
	bool u32 = a == NT_NAPI_DEFER_HARD_IRQS || a == NT_NAPI_THREADED;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST, NT_NETDEV_CMD_NAPI_SET, 1) ||
	    nla_put_u32(msg, NT_NETDEV_A_NAPI_ID, id) < 0 ||
	    (u32 ? nla_put_u32(msg, attr, (uint32_t)v) : nla_put_u64(msg, attr, v)) < 0) {
		r = -EMSGSIZE;
		goto out;
	}
	r = nt_nl_request(sk, msg, NULL, NULL, err, errsize);
out:
	nlmsg_free(msg);
	nl_socket_free(sk);
	return r;
}

int nt_netdev_napi_set(const nt_ctx *ctx, const char *ifname, uint32_t id, nt_napi_attr a, uint64_t v,
		       char *err, size_t errsize)
{
	if (err && errsize)
		err[0] = '\0';
	if (a == NT_NAPI_DEFER_HARD_IRQS && v > INT32_MAX)
		return -ERANGE;
	if (a == NT_NAPI_THREADED && v > UINT32_MAX)
		return -ERANGE;
	if (!ctx->live)
		return nt_fixture_netdev_napi_set(ctx, ifname, id, nt_napi_attr_name(a), v, err, errsize);
	return napi_set_live(id, a, v, err, errsize);
}
