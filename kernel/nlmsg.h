/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers around libnl shared by the kernel backends (ethtool over
 * generic netlink, links over rtnetlink): one request/ACK exchange that
 * carries the kernel's extended error text back, the mapping of libnl's
 * NLE_* codes to -errno so nothing above this layer sees libnl errors, and
 * the one rtnetlink socket a read of the host asks its link questions on. */
#ifndef NT_NLMSG_H
#define NT_NLMSG_H

#include "kernel/ctx.h"

#include <stddef.h>

struct nl_sock;
struct nl_msg;

/* Map a libnl return code (0 or -NLE_*) to 0 or -errno. */
int nt_nl_errno(int nlerr);

/* Allocate and connect a netlink socket of PROTOCOL (NETLINK_GENERIC,
 * NETLINK_ROUTE) with extended ACKs enabled, so a refused request comes back
 * with the kernel's reason. *OUT is freed with nl_socket_free(). Returns 0 or
 * -errno. */
int nt_nl_open(int protocol, struct nl_sock **out);

/* Called for each reply message of a request; returns 0 or -errno (the first
 * failure is kept and returned by nt_nl_request once the ACK is read). */
typedef int (*nt_nl_reply_fn)(struct nl_msg *msg, void *arg);

/* Send MSG (an NLM_F_ACK is requested; MSG stays the caller's) and read
 * replies until the kernel's ACK or error, or a dump's NLMSG_DONE. Each reply goes to REPLY (may be
 * NULL). On a kernel error (an NLMSG_ERROR, or a DONE saying the dump
 * failed part way) the errno is returned and, when ERR is not NULL,
 * the extended ACK message (NLMSGERR_ATTR_MSG) is copied into it, "" when the
 * kernel gave none. Returns 0 or -errno. */
int nt_nl_request(struct nl_sock *sk, struct nl_msg *msg, nt_nl_reply_fn reply, void *arg,
		  char *err, size_t errsize);

/* The rtnetlink socket for questions about links through CTX (kernel/link.c,
 * kernel/rtlink.c). Inside one read of the live host (nt_kernel_read_begin)
 * it is the read's: opened at the first question and kept until
 * nt_kernel_read_end, so a read of N links opens one socket, not N.
 * Outside a read it is a new socket for this question alone. Give it back
 * with nt_nl_route_done and R, what the question returned: that frees a
 * socket of the question's own, and closes the read's after a failure
 * other than the kernel's -ENODEV (a transport error, a reply cut short),
 * so that a reply left unread never meets the read's next question, which
 * opens a fresh one. The read's socket is one thread's, as the read is.
 * Returns 0 or -errno. */
int nt_nl_route_get(const nt_ctx *ctx, struct nl_sock **sk);
void nt_nl_route_done(const nt_ctx *ctx, struct nl_sock *sk, int r);

/* The read's state behind nt_ctx.rtnl, for nt_kernel_read_begin and _end:
 * new allocates it with no socket yet (0 or -ENOMEM); free closes the
 * socket if one was opened (NULL is fine). */
int nt_rtnl_read_new(struct nt_rtnl_read **out);
void nt_rtnl_read_free(struct nt_rtnl_read *rd);

#endif
