/* SPDX-License-Identifier: Apache-2.0 */
/* RSS contexts over ethtool netlink: see kernel/rss_nl.h. The requests go
 * over the caller's ethtool handle, with the family's id and commands its
 * open resolved (kernel/ethtool_int.h), through kernel/nlmsg.c's
 * request/ACK exchange; the replies go through the pure parser below. */
#include "kernel/rss_nl.h"
#include "base/grow.h"
#include "kernel/ethtool_int.h"
#include "kernel/ethtool_nlattrs.h"
#include "kernel/fixture.h"
#include "kernel/nlmsg.h"
#include "kernel/nlparse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

void nt_rss_nl_caps_of(uint64_t ops, uint64_t dumps, nt_rss_nl *out)
{
	memset(out, 0, sizeof(*out));
	out->list = (dumps >> NT_ETHTOOL_MSG_RSS_GET) & 1;
	out->create = ((ops >> NT_ETHTOOL_MSG_RSS_CREATE_ACT) & 1) && ((ops >> NT_ETHTOOL_MSG_RSS_DELETE_ACT) & 1);
	out->set = (ops >> NT_ETHTOOL_MSG_RSS_SET) & 1;
}

void nt_rss_nl_list_free(nt_rss_nl_list *l)
{
	if (l) {
		free(l->e);
		memset(l, 0, sizeof(*l));
	}
}

/* ---- the reply parser (pure) ---- */

static bool get_u32(const unsigned char *p, size_t n, uint32_t *out)
{
	if (n < 4)
		return false;
	memcpy(out, p, 4);
	return true;
}

static int header_attr(void *ud, int type, const unsigned char *v, size_t n)
{
	if (type == ETHTOOL_A_HEADER_DEV_INDEX && !get_u32(v, n, &((nt_rss_nl_ctx *)ud)->ifindex))
		return -1;
	return 0;
}

static int ctx_attr(void *ud, int type, const unsigned char *v, size_t n)
{
	nt_rss_nl_ctx *c = ud;
	uint32_t x;
	switch (type) {
	case NT_ETHTOOL_A_RSS_HEADER:
		return nt_nla_walk(v, n, header_attr, c);
	case NT_ETHTOOL_A_RSS_CONTEXT:
		return get_u32(v, n, &c->id) ? 0 : -1;
	case NT_ETHTOOL_A_RSS_HFUNC:
		return get_u32(v, n, &c->hfunc) ? 0 : -1;
	case NT_ETHTOOL_A_RSS_INDIR:
		if (n % 4)
			return -1;
		c->indir_size = (uint32_t)(n / 4);
		return 0;
	case NT_ETHTOOL_A_RSS_INPUT_XFRM:
		if (!get_u32(v, n, &x))
			return -1;
		c->input_xfrm = x;
		return 0;
	default:
		return 0; /* the key, the flow hash nest, newer attributes */
	}
}

static int add(nt_rss_nl_list *l, const nt_rss_nl_ctx *c)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->e[i].id == c->id && l->e[i].ifindex == c->ifindex) {
			l->skipped++;
			return 0;
		}
	if (nt_grow((void **)&l->e, l->n, &l->cap, sizeof(*c), 8) < 0)
		return -ENOMEM;
	l->e[l->n++] = *c;
	return 0;
}

static int on_msg(void *ud, int cmd, const unsigned char *a, size_t n)
{
	nt_rss_nl_list *l = ud;
	if (cmd != NT_ETHTOOL_MSG_RSS_GET_REPLY && cmd != NT_ETHTOOL_MSG_RSS_CREATE_ACT_REPLY)
		return 0;
	nt_rss_nl_ctx c = { .input_xfrm = -1 };
	if (nt_nla_walk(a, n, ctx_attr, &c) < 0)
		l->skipped++;
	else if (add(l, &c) < 0)
		return -ENOMEM;
	return 0;
}

int nt_rss_nl_parse(nt_rss_nl_list *l, int family, const void *buf, size_t len)
{
	return nt_genl_walk(buf, len, family, on_msg, l);
}

/* ---- the live kernel ---- */

typedef struct fam {
	struct nl_sock *sk; /* the handle's */
	int id;
	uint64_t ops, dumps;
	nt_ethtool *own; /* a handle of this call's own, or NULL */
} fam;

/* The ethtool family for a request through EH: its socket, with the id
 * and commands its open resolved; when EH is NULL or talks through the
 * ioctl, a netlink handle of this call's own (fam_done closes it).
 * Returns 0, -EOPNOTSUPP without the family, or -errno. */
static int fam_get(nt_ethtool *eh, const nt_ctx *ctx, fam *f)
{
	memset(f, 0, sizeof(*f));
	if (!eh || !nt_ethtool_genl(eh, &f->id)) {
		int r = nt_ethtool_open_via(ctx, NT_ETHTOOL_NETLINK, &f->own);
		if (r < 0)
			return r == -EPROTONOSUPPORT ? -EOPNOTSUPP : r;
		eh = f->own;
	}
	f->sk = nt_ethtool_genl(eh, &f->id);
	nt_ethtool_genl_ops(eh, &f->ops, &f->dumps);
	return 0;
}

static void fam_done(fam *f)
{
	nt_ethtool_close(f->own);
	f->own = NULL;
}

void nt_rss_nl_caps(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, nt_rss_nl *out)
{
	fam f;
	memset(out, 0, sizeof(*out));
	if (!ctx->live) {
		bool nl = nt_ifname_valid(ifname) && nt_fixture_rss_netlink(ctx, ifname);
		out->list = out->create = out->set = nl;
		return;
	}
	if (fam_get(eh, ctx, &f) < 0)
		return;
	nt_rss_nl_caps_of(f.ops, f.dumps, out);
	fam_done(&f);
}

/* A request of CMD for IFNAME (its header nest), with room for EXTRA
 * bytes of attributes more: libnl's default message is a page, which a
 * table of 1024 entries already overflows. */
static struct nl_msg *rss_msg(int family, uint8_t cmd, int flags, const char *ifname, size_t extra)
{
	struct nl_msg *msg = nlmsg_alloc_size(NLMSG_HDRLEN + GENL_HDRLEN + 256 + extra);
	struct nlattr *hdr;
	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd, ETHTOOL_GENL_VERSION) ||
	    !(hdr = nla_nest_start(msg, NT_ETHTOOL_A_RSS_HEADER)) ||
	    nla_put_string(msg, ETHTOOL_A_HEADER_DEV_NAME, ifname) < 0) {
		nlmsg_free(msg);
		return NULL;
	}
	nla_nest_end(msg, hdr);
	return msg;
}

typedef struct got {
	nt_rss_nl_list *l;
	int family;
} got;

static int on_rss(struct nl_msg *msg, void *arg)
{
	got *g = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	int r = nt_rss_nl_parse(g->l, g->family, h, h->nlmsg_len);
	return r < 0 ? r : 0;
}

int nt_rss_nl_context_ids(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t *ids, int cap, int *n)
{
	*n = 0;
	if (!nt_ifname_valid(ifname) || cap < 0)
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_rss_context_ids(ctx, ifname, ids, cap, n);
	struct nl_msg *msg = NULL;
	nt_rss_nl_list l = { 0 };
	fam f;
	int r = fam_get(eh, ctx, &f);
	if (r < 0)
		return r;
	nt_rss_nl caps;
	nt_rss_nl_caps_of(f.ops, f.dumps, &caps);
	if (!caps.list) {
		r = -EOPNOTSUPP;
		goto out;
	}
	/* A dump whose header names the device: the kernel lists its
	 * contexts alone (ethnl_rss_dump_start's match_ifindex). */
	if (!(msg = rss_msg(f.id, NT_ETHTOOL_MSG_RSS_GET, NLM_F_DUMP, ifname, 0))) {
		r = -ENOMEM;
		goto out;
	}
	got g = { .l = &l, .family = f.id };
	if ((r = nt_nl_request(f.sk, msg, on_rss, &g, NULL, 0)) < 0)
		goto out;
	for (size_t i = 0; i < l.n; i++) {
		uint32_t id = l.e[i].id;
		int at = 0;
		if (!id)
			continue;
		while (at < *n && ids[at] < id)
			at++;
		if ((at < *n && ids[at] == id) || at >= cap)
			continue;
		if (*n == cap)
			(*n)--;
		memmove(ids + at + 1, ids + at, (size_t)(*n - at) * sizeof(*ids));
		ids[at] = id;
		(*n)++;
	}
out:
	nlmsg_free(msg);
	nt_rss_nl_list_free(&l);
	fam_done(&f);
	return r;
}

int nt_rss_nl_act_msg(int family, uint8_t cmd, const char *ifname, uint32_t id, const uint32_t *indir, uint32_t n,
		      int xfrm, struct nl_msg **out)
{
	struct nl_msg *msg;
	*out = NULL;
	/* An attribute's length is 16 bits: a longer table would wrap it. */
	if (n > (UINT16_MAX - NLA_HDRLEN) / sizeof(uint32_t))
		return -E2BIG;
	msg = rss_msg(family, cmd, 0, ifname, 3 * NLA_HDRLEN + 8 + (size_t)n * sizeof(uint32_t));
	if (!msg)
		return -ENOMEM;
	if ((id && nla_put_u32(msg, NT_ETHTOOL_A_RSS_CONTEXT, id) < 0) ||
	    (n && nla_put(msg, NT_ETHTOOL_A_RSS_INDIR, (int)(n * sizeof(uint32_t)), indir) < 0) ||
	    (xfrm >= 0 && nla_put_u32(msg, NT_ETHTOOL_A_RSS_INPUT_XFRM, (uint32_t)xfrm) < 0)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	*out = msg;
	return 0;
}

/* One RSS_CREATE_ACT, RSS_SET or RSS_DELETE_ACT for context ID (none
 * for a set of context 0; INDIR, N entries, when N > 0; the input
 * transformation XFRM when not -1), through EH. For a create, the reply's
 * id must be ID. */
static int rss_act(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint8_t cmd, uint32_t id,
		   const uint32_t *indir, uint32_t n, int xfrm, char *err, size_t errsize)
{
	struct nl_msg *msg = NULL;
	nt_rss_nl_list l = { 0 };
	fam f;
	nt_rss_nl caps;
	int r = fam_get(eh, ctx, &f);
	if (r < 0)
		return r;
	nt_rss_nl_caps_of(f.ops, f.dumps, &caps);
	if ((cmd == NT_ETHTOOL_MSG_RSS_SET && !caps.set) || (cmd != NT_ETHTOOL_MSG_RSS_SET && !caps.create)) {
		r = -EOPNOTSUPP;
		goto out;
	}
	if ((r = nt_rss_nl_act_msg(f.id, cmd, ifname, id, indir, n, xfrm, &msg)) < 0)
		goto out;
	/* The kernel refuses a request longer than the socket's send buffer
	 * less 32 bytes (netlink_sendmsg: EMSGSIZE); libnl asks for 32 KiB,
	 * which the kernel doubles, and the longest table one attribute
	 * carries is more. Raised for any request above 32 KiB (on a
	 * caller's handle it stays raised, which costs nothing until used).
	 * The receive side takes one reply of any size. */
	size_t len = nlmsg_hdr(msg)->nlmsg_len;
	if (len > 32768 && (r = nt_nl_errno(nl_socket_set_buffer_size(f.sk, 32768, (int)len + 4096))) < 0)
		goto out;
	got g = { .l = &l, .family = f.id };
	r = nt_nl_request(f.sk, msg, on_rss, &g, err, errsize);
	if (r == 0 && cmd == NT_ETHTOOL_MSG_RSS_CREATE_ACT && (l.n != 1 || l.e[0].id != id)) {
		/* The core inserts the id asked for or fails (xa_insert). */
		snprintf(err, errsize, "RSS_CREATE_ACT answered with context %u, not %u", l.n ? l.e[0].id : 0, id);
		r = -EIO;
	}
out:
	nlmsg_free(msg);
	nt_rss_nl_list_free(&l);
	fam_done(&f);
	return r;
}

/* ERR as "IFNAME: WHAT: strerror: the kernel's text". */
static void werr(char *err, size_t errsize, const char *ifname, const char *what, int r)
{
	char ext[160];
	if (!err || !errsize)
		return;
	snprintf(ext, sizeof(ext), "%s", err);
	snprintf(err, errsize, "%s: %s: %s%s%s", ifname, what, strerror(-r), ext[0] ? ": " : "", ext);
}

int nt_rss_nl_context_create(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, const uint32_t *indir,
			     uint32_t n, char *err, size_t errsize)
{
	if (err && errsize)
		err[0] = '\0';
	if (!nt_ifname_valid(ifname) || id == 0 || id == UINT32_MAX || n == 0 || n > 65536)
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_rss_context_create_as(ctx, ifname, id, indir, n, err, errsize);
	int r = rss_act(eh, ctx, ifname, NT_ETHTOOL_MSG_RSS_CREATE_ACT, id, indir, n, -1, err, errsize);
	if (r < 0)
		werr(err, errsize, ifname, "RSS_CREATE_ACT (a new RSS context with its id)", r);
	return r;
}

int nt_rss_nl_context_write(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, const uint32_t *indir,
			    uint32_t n, char *err, size_t errsize)
{
	if (err && errsize)
		err[0] = '\0';
	if (!nt_ifname_valid(ifname) || id == 0 || id == UINT32_MAX || n == 0 || n > 65536)
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_rss_context_set(ctx, ifname, id, indir, n, NULL, err, errsize);
	int r = rss_act(eh, ctx, ifname, NT_ETHTOOL_MSG_RSS_SET, id, indir, n, -1, err, errsize);
	if (r < 0)
		werr(err, errsize, ifname, "RSS_SET (an RSS context's table)", r);
	return r;
}

int nt_rss_nl_context_delete(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, char *err,
			     size_t errsize)
{
	if (err && errsize)
		err[0] = '\0';
	if (!nt_ifname_valid(ifname) || id == 0 || id == UINT32_MAX)
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_rss_context_set(ctx, ifname, id, NULL, 0, NULL, err, errsize);
	int r = rss_act(eh, ctx, ifname, NT_ETHTOOL_MSG_RSS_DELETE_ACT, id, NULL, 0, -1, err, errsize);
	if (r < 0 && r != -ENOENT)
		werr(err, errsize, ifname, "RSS_DELETE_ACT (deleting an RSS context)", r);
	return r;
}

int nt_rss_nl_write_xfrm(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, uint8_t xfrm,
			 char *err, size_t errsize)
{
	if (err && errsize)
		err[0] = '\0';
	if (!nt_ifname_valid(ifname) || id == UINT32_MAX)
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_rss_set_xfrm(ctx, ifname, id, xfrm, err, errsize);
	int r = rss_act(eh, ctx, ifname, NT_ETHTOOL_MSG_RSS_SET, id, NULL, 0, xfrm, err, errsize);
	if (r < 0)
		werr(err, errsize, ifname, "RSS_SET (the input transformation)", r);
	return r;
}
