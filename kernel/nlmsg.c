/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel/nlmsg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

int nt_nl_errno(int nlerr)
{
	if (nlerr >= 0)
		return 0;
	switch (-nlerr) {
	case NLE_INTR: return -EINTR;
	case NLE_BAD_SOCK: return -EBADF;
	case NLE_AGAIN: return -EAGAIN;
	case NLE_NOMEM: return -ENOMEM;
	case NLE_EXIST: return -EEXIST;
	case NLE_INVAL: return -EINVAL;
	case NLE_RANGE: return -ERANGE;
	case NLE_MSGSIZE: return -EMSGSIZE;
	case NLE_OPNOTSUPP: return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT: return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND: return -ENOENT;
	case NLE_NOATTR: return -ENOENT;
	case NLE_MISSING_ATTR: return -EINVAL;
	case NLE_MSG_OVERFLOW: return -EOVERFLOW;
	case NLE_MSG_TRUNC: return -EMSGSIZE;
	case NLE_NOADDR: return -EADDRNOTAVAIL;
	case NLE_MSGTYPE_NOSUPPORT: return -EOPNOTSUPP;
	case NLE_BUSY: return -EBUSY;
	case NLE_NOACCESS: return -EACCES;
	case NLE_PERM: return -EPERM;
	case NLE_NODEV: return -ENODEV;
	case NLE_IMMUTABLE: return -EROFS;
	case NLE_DUMP_INTR: return -EAGAIN; /* the dump raced a change: try again */
	case NLE_ATTRSIZE: return -EINVAL;
	default: return -EIO; /* protocol-level surprises: no closer errno */
	}
}

int nt_nl_open(int protocol, struct nl_sock **out)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1, r;

	*out = NULL;
	if (!sk)
		return -ENOMEM;
	r = nl_connect(sk, protocol);
	if (r < 0) {
		r = nt_nl_errno(r);
		goto fail;
	}
	/* Extended ACKs carry the kernel's reason ("requested ring size exceeds
	 * maximum") which is what a user needs to see. Kernels before 4.12 lack
	 * the option; the request still works, only without the text. */
	(void)setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	/* Errors then echo only the request's header, not its whole payload. */
	(void)setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	*out = sk;
	return 0;
fail:
	nl_socket_free(sk);
	return r;
}

typedef struct nl_txn {
	nt_nl_reply_fn reply;
	void *arg;
	int reply_err; /* first failure of REPLY */
	int kernel_err; /* -errno from the NLMSG_ERROR, 0 for an ACK */
	bool done;
	char *err;
	size_t errsize;
} nl_txn;

static int on_valid(struct nl_msg *msg, void *arg)
{
	nl_txn *t = arg;
	if (t->reply && !t->reply_err) {
		int r = t->reply(msg, t->arg);
		if (r < 0)
			t->reply_err = r;
	}
	return NL_OK;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	nl_txn *t = arg;
	t->done = true;
	return NL_STOP;
}

/* The kernel's text (NLMSGERR_ATTR_MSG) among the extended ACK
 * attributes at offset OFF of HDR, into T's ERR. */
static void copy_tlv_msg(nl_txn *t, struct nlmsghdr *hdr, size_t off)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	if (!t->err || !t->errsize || !(hdr->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	off = NLMSG_ALIGN(off);
	if (off >= hdr->nlmsg_len)
		return;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)hdr + off),
		      (int)(hdr->nlmsg_len - off), NULL) < 0)
		return;
	if (!tb[NLMSGERR_ATTR_MSG])
		return;
	/* The string attribute is NUL-terminated by the kernel, but its length
	 * bounds the copy in case it is not. */
	size_t n = (size_t)nla_len(tb[NLMSGERR_ATTR_MSG]);
	const char *s = nla_data(tb[NLMSGERR_ATTR_MSG]);
	n = strnlen(s, n);
	if (n >= t->errsize)
		n = t->errsize - 1;
	memcpy(t->err, s, n);
	t->err[n] = '\0';
}

/* The extended ACK attributes follow the echoed request: only its header
 * when the kernel capped it (NLM_F_CAPPED), the whole request otherwise. */
static void copy_ext_msg(nl_txn *t, struct nlmsgerr *e)
{
	struct nlmsghdr *hdr = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	size_t off = NLMSG_HDRLEN + sizeof(*e);
	if (!(hdr->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	copy_tlv_msg(t, hdr, off);
}

/* A dump's end. Its NLMSG_DONE carries the dump's result
 * (netlink_dump_done): an errno when the kernel could not finish it (a
 * driver failing for one device part way), the kernel's text after it
 * then; the messages before were a part, not the whole. */
static int on_finish(struct nl_msg *msg, void *arg)
{
	nl_txn *t = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	int e = 0;
	t->done = true;
	if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(e)))
		memcpy(&e, nlmsg_data(h), sizeof(e));
	if (e < 0) {
		t->kernel_err = e;
		copy_tlv_msg(t, h, NLMSG_LENGTH(sizeof(e)));
	}
	return NL_STOP;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	nl_txn *t = arg;
	t->kernel_err = e->error < 0 ? e->error : -e->error;
	t->done = true;
	copy_ext_msg(t, e);
	return NL_STOP;
}

int nt_nl_request(struct nl_sock *sk, struct nl_msg *msg, nt_nl_reply_fn reply, void *arg,
		  char *err, size_t errsize)
{
	nl_txn t = { .reply = reply, .arg = arg, .err = err, .errsize = errsize };
	struct nl_cb *cb = NULL;
	int r;

	if (err && errsize)
		err[0] = '\0';
	/* nl_socket_get_cb() takes a reference; the clone is ours alone. */
	struct nl_cb *sock_cb = nl_socket_get_cb(sk);
	cb = nl_cb_clone(sock_cb);
	nl_cb_put(sock_cb);
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &t);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &t);
	/* A dump ends with NLMSG_DONE and no ACK of its own. */
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &t);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &t);

	nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
	r = nl_send_auto(sk, msg);
	if (r < 0) {
		r = nt_nl_errno(r);
		goto out;
	}
	/* A reply and its ACK arrive as separate datagrams; nl_recvmsgs returns
	 * after each, so read until the ACK (or error) has been seen. */
	while (!t.done) {
		r = nl_recvmsgs(sk, cb);
		if (t.done)
			break;
		if (r < 0) {
			r = nt_nl_errno(r);
			goto out;
		}
	}
	r = t.kernel_err ? t.kernel_err : t.reply_err;
out:
	nl_cb_put(cb);
	return r;
}

/* ---- the read's rtnetlink socket ---- */

struct nt_rtnl_read {
	struct nl_sock *sk; /* NULL until the read's first question */
};

int nt_rtnl_read_new(struct nt_rtnl_read **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void nt_rtnl_read_free(struct nt_rtnl_read *rd)
{
	if (!rd)
		return;
	if (rd->sk)
		nl_socket_free(rd->sk);
	free(rd);
}

int nt_nl_route_get(const nt_ctx *ctx, struct nl_sock **sk)
{
	struct nt_rtnl_read *rd = ctx->rtnl;
	*sk = NULL;
	if (!rd)
		return nt_nl_open(NETLINK_ROUTE, sk);
	if (!rd->sk) {
		int r = nt_nl_open(NETLINK_ROUTE, &rd->sk);
		if (r < 0)
			return r;
	}
	*sk = rd->sk;
	return 0;
}

void nt_nl_route_done(const nt_ctx *ctx, struct nl_sock *sk, int r)
{
	struct nt_rtnl_read *rd = ctx->rtnl;
	if (!sk)
		return;
	if (!rd || sk != rd->sk) {
		nl_socket_free(sk);
		return;
	}
	/* -ENODEV is the kernel's whole answer (an NLMSG_ERROR read to its
	 * end); after anything else the socket may hold part of a reply. */
	if (r < 0 && r != -ENODEV) {
		nl_socket_free(rd->sk);
		rd->sk = NULL;
	}
}
