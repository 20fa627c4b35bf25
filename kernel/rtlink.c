/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel/rtlink.h"
#include "kernel/fixture.h"
#include "kernel/nlmsg.h"
#include "kernel/queues.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

/* ---------------------------------------------------------------- links */

static int parse_link(struct nl_msg *msg, void *arg)
{
	nt_link_params *p = arg;
	struct nlattr *tb[IFLA_MAX + 1];
	struct nlmsghdr *h = nlmsg_hdr(msg);

	if (h->nlmsg_type != RTM_NEWLINK)
		return 0;
	if (nlmsg_parse(h, sizeof(struct ifinfomsg), tb, IFLA_MAX, NULL) < 0)
		return -EIO;
	p->ifindex = ((struct ifinfomsg *)nlmsg_data(h))->ifi_index;
	if (tb[IFLA_MTU])
		p->mtu = nla_get_u32(tb[IFLA_MTU]);
	if (tb[IFLA_MIN_MTU])
		p->min_mtu = nla_get_u32(tb[IFLA_MIN_MTU]);
	if (tb[IFLA_MAX_MTU])
		p->max_mtu = nla_get_u32(tb[IFLA_MAX_MTU]);
	p->range_known = tb[IFLA_MIN_MTU] && tb[IFLA_MAX_MTU];
	if (tb[IFLA_TXQLEN])
		p->txqlen = nla_get_u32(tb[IFLA_TXQLEN]);
	if (tb[IFLA_NUM_TX_QUEUES])
		p->num_tx_queues = nla_get_u32(tb[IFLA_NUM_TX_QUEUES]);
	return 0;
}

/* A link message naming IFNAME (by IFLA_IFNAME: the kernel looks it up). */
static struct nl_msg *link_msg(int type, const char *ifname)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nl_msg *msg = nlmsg_alloc_simple(type, 0);
	if (!msg)
		return NULL;
	if (nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 || nla_put_string(msg, IFLA_IFNAME, ifname) < 0) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* IFNAME's parameters from the kernel, on SK. */
static int link_get(struct nl_sock *sk, const char *ifname, nt_link_params *out)
{
	struct nl_msg *msg = link_msg(RTM_GETLINK, ifname);
	if (!msg)
		return -ENOMEM;
	int r = nt_nl_request(sk, msg, parse_link, out, NULL, 0);
	nlmsg_free(msg);
	/* Kernels before 4.18 do not say the range: Ethernet's then. */
	if (r == 0 && !out->range_known) {
		out->min_mtu = 68;
		out->max_mtu = 65535;
	}
	return r;
}

int nt_rtlink_get(const nt_ctx *ctx, const char *ifname, nt_link_params *out)
{
	memset(out, 0, sizeof(*out));
	if (!nt_ifname_valid(ifname))
		return -ENODEV;
	if (!ctx->live) {
		long mtu, qlen;
		int r = nt_read_long(ctx, &mtu, "/sys/class/net/%s/mtu", ifname);
		if (r == 0)
			r = nt_read_long(ctx, &qlen, "/sys/class/net/%s/tx_queue_len", ifname);
		if (r < 0)
			return r == -ENOENT ? -ENODEV : r;
		if (mtu < 0 || mtu > UINT32_MAX || qlen < 0 || qlen > UINT32_MAX)
			return NT_EPARSE;
		out->mtu = (uint32_t)mtu;
		out->txqlen = (uint32_t)qlen;
		out->range_known = nt_fixture_link_limits(ctx, ifname, &out->min_mtu, &out->max_mtu);
		/* The transmit queues sysfs shows: what mq needs more than one of. */
		int nrx, ntx;
		if (nt_queues_count(ctx, ifname, &nrx, &ntx) == 0)
			out->num_tx_queues = (uint32_t)ntx;
		return 0;
	}
	struct nl_sock *sk;
	int r = nt_nl_route_get(ctx, &sk);
	if (r < 0)
		return r;
	r = link_get(sk, ifname, out);
	nt_nl_route_done(ctx, sk, r);
	return r;
}

static int set_u32(const nt_ctx *ctx, const char *ifname, int attr, uint32_t v, char *err, size_t errsize)
{
	if (err && errsize)
		err[0] = '\0';
	if (!nt_ifname_valid(ifname))
		return -ENODEV;
	struct nl_sock *sk;
	struct nl_msg *msg = link_msg(RTM_NEWLINK, ifname);
	if (!msg)
		return -ENOMEM;
	int r = nla_put_u32(msg, attr, v) < 0 ? -ENOMEM : nt_nl_route_get(ctx, &sk);
	if (r == 0) {
		r = nt_nl_request(sk, msg, NULL, NULL, err, errsize);
		nt_nl_route_done(ctx, sk, r);
	}
	nlmsg_free(msg);
	return r;
}

int nt_rtlink_set_mtu(const nt_ctx *ctx, const char *ifname, uint32_t mtu, char *err, size_t errsize)
{
	if (ctx->live)
		return set_u32(ctx, ifname, IFLA_MTU, mtu, err, errsize);
	nt_link_params p;
	int r = nt_rtlink_get(ctx, ifname, &p);
	if (r < 0)
		return r;
	/* The kernel's own test and words (net/core/dev.c dev_validate_mtu):
	 * a max_mtu of 0 is no limit (loopback). */
	if (!nt_mtu_in_range(&p, mtu)) {
		if (err && errsize)
			snprintf(err, errsize, "%s", mtu < p.min_mtu ? "mtu less than device minimum"
								    : "mtu greater than device maximum");
		return -EINVAL;
	}
	char v[16], rel[64];
	snprintf(v, sizeof(v), "%u", mtu);
	snprintf(rel, sizeof(rel), "/sys/class/net/%s/mtu", ifname);
	return nt_fixture_write_attr(ctx, v, rel);
}

int nt_rtlink_set_txqlen(const nt_ctx *ctx, const char *ifname, uint32_t txqlen, char *err,
			 size_t errsize)
{
	if (ctx->live)
		return set_u32(ctx, ifname, IFLA_TXQLEN, txqlen, err, errsize);
	if (!nt_ifname_valid(ifname))
		return -ENODEV;
	char v[16], rel[64];
	snprintf(v, sizeof(v), "%u", txqlen);
	snprintf(rel, sizeof(rel), "/sys/class/net/%s/tx_queue_len", ifname);
	if (!nt_exists(ctx, "%s", rel))
		return -ENODEV;
	return nt_fixture_write_attr(ctx, v, rel);
}

/* --------------------------------------------------------------- qdiscs */

#define MAX_QDISCS 256

typedef struct qd_entry {
	uint32_t handle, parent;
	char kind[16];
	nt_fq_params fq;
} qd_entry;

typedef struct qd_dump {
	int ifindex;
	qd_entry *e;
	int n;
} qd_dump;

static void parse_fq(struct nlattr *opts, nt_fq_params *fq)
{
	struct nlattr *tb[TCA_FQ_MAX + 1];
	memset(fq, 0, sizeof(*fq));
	if (!opts || nla_parse_nested(tb, TCA_FQ_MAX, opts, NULL) < 0)
		return;
	/* A read names only what differs from fq's defaults, so that a fresh
	 * "fq" reads as "fq" and compares equal to what a profile asked. */
	if (tb[TCA_FQ_PLIMIT] && nla_get_u32(tb[TCA_FQ_PLIMIT]) != NT_FQ_DEFAULT_LIMIT) {
		fq->has_limit = true;
		fq->limit = nla_get_u32(tb[TCA_FQ_PLIMIT]);
	}
	if (tb[TCA_FQ_FLOW_PLIMIT] && nla_get_u32(tb[TCA_FQ_FLOW_PLIMIT]) != NT_FQ_DEFAULT_FLOW_LIMIT) {
		fq->has_flow_limit = true;
		fq->flow_limit = nla_get_u32(tb[TCA_FQ_FLOW_PLIMIT]);
	}
	if (tb[TCA_FQ_FLOW_MAX_RATE] && nla_get_u32(tb[TCA_FQ_FLOW_MAX_RATE]) != NT_FQ_UNLIMITED) {
		fq->has_maxrate = true;
		fq->maxrate = nla_get_u32(tb[TCA_FQ_FLOW_MAX_RATE]);
	}
}

static int parse_qdisc(struct nl_msg *msg, void *arg)
{
	qd_dump *d = arg;
	struct nlattr *tb[TCA_MAX + 1];
	struct nlmsghdr *h = nlmsg_hdr(msg);

	if (h->nlmsg_type != RTM_NEWQDISC)
		return 0;
	if (nlmsg_parse(h, sizeof(struct tcmsg), tb, TCA_MAX, NULL) < 0)
		return -EIO;
	struct tcmsg *tcm = nlmsg_data(h);
	if (tcm->tcm_ifindex != d->ifindex || d->n >= MAX_QDISCS)
		return 0;
	qd_entry *e = &d->e[d->n++];
	memset(e, 0, sizeof(*e));
	e->handle = tcm->tcm_handle;
	e->parent = tcm->tcm_parent;
	if (tb[TCA_KIND])
		snprintf(e->kind, sizeof(e->kind), "%s", nla_get_string(tb[TCA_KIND]));
	if (strcmp(e->kind, "fq") == 0)
		parse_fq(tb[TCA_OPTIONS], &e->fq);
	return 0;
}

static bool fq_equal(const nt_fq_params *a, const nt_fq_params *b)
{
	return a->has_limit == b->has_limit && (!a->has_limit || a->limit == b->limit) &&
	       a->has_flow_limit == b->has_flow_limit && (!a->has_flow_limit || a->flow_limit == b->flow_limit) &&
	       a->has_maxrate == b->has_maxrate && (!a->has_maxrate || a->maxrate == b->maxrate);
}

/* The root of D's qdiscs and, for an mq, what its children share. */
static int compose_root(const qd_dump *d, nt_qdisc *out)
{
	const qd_entry *root = NULL;
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < d->n && !root; i++)
		if (d->e[i].parent == TC_H_ROOT)
			root = &d->e[i];
	/* A link never brought up has the noop qdisc, which the dump leaves
	 * out: the kernel's own, until it attaches the default at first up. */
	if (!root) {
		out->dflt = true;
		snprintf(out->kind, sizeof(out->kind), "noop");
		return 0;
	}
	out->dflt = TC_H_MAJ(root->handle) == 0;
	snprintf(out->kind, sizeof(out->kind), "%s", root->kind);
	out->fq = root->fq;
	if (strcmp(root->kind, "mq") != 0)
		return 0;
	bool first = true, all_default = true;
	for (int i = 0; i < d->n; i++) {
		const qd_entry *c = &d->e[i];
		if (c == root || TC_H_MAJ(c->parent) != TC_H_MAJ(root->handle))
			continue;
		/* The children mq_init attaches have handle 0 (qdisc_create_dflt). */
		if (TC_H_MAJ(c->handle) != 0)
			all_default = false;
		if (first) {
			snprintf(out->child, sizeof(out->child), "%s", c->kind);
			out->fq = c->fq;
			first = false;
		} else if (strcmp(out->child, c->kind) != 0 || !fq_equal(&out->fq, &c->fq)) {
			snprintf(out->child, sizeof(out->child), "*");
		}
	}
	if (all_default && !first) {
		out->child_dflt = true;
		memset(&out->fq, 0, sizeof(out->fq));
	}
	return 0;
}

/* The qdiscs of IFINDEX, on SK. */
static int dump_qdiscs(struct nl_sock *sk, int ifindex, qd_dump *d)
{
	struct tcmsg tcm = { .tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex };
	struct nl_msg *msg = NULL;
	int r;

	d->ifindex = ifindex;
	d->n = 0;
	if (!(d->e = calloc(MAX_QDISCS, sizeof(*d->e))))
		return -ENOMEM;
	if (!(msg = nlmsg_alloc_simple(RTM_GETQDISC, NLM_F_DUMP)) ||
	    nlmsg_append(msg, &tcm, sizeof(tcm), NLMSG_ALIGNTO) < 0) {
		r = -ENOMEM;
		goto out;
	}
	/* Older kernels dump every link's qdiscs whatever the ifindex:
	 * parse_qdisc keeps IFINDEX's. */
	r = nt_nl_request(sk, msg, parse_qdisc, d, NULL, 0);
out:
	nlmsg_free(msg);
	if (r < 0) {
		free(d->e);
		d->e = NULL;
	}
	return r;
}

static int ifindex_of(const char *ifname)
{
	int i = (int)if_nametoindex(ifname);
	return i > 0 ? i : -ENODEV;
}

int nt_qdisc_get(const nt_ctx *ctx, const char *ifname, nt_qdisc *out)
{
	qd_dump d = { 0 };
	memset(out, 0, sizeof(*out));
	if (!ctx->live) {
		nt_link_params p;
		int r = nt_rtlink_get(ctx, ifname, &p);
		return r < 0 ? r : nt_fixture_qdisc_get(ctx, ifname, p.num_tx_queues, out);
	}
	if (!nt_ifname_valid(ifname))
		return -ENODEV;
	struct nl_sock *sk;
	int ifindex = ifindex_of(ifname);
	if (ifindex < 0)
		return ifindex;
	int r = nt_nl_route_get(ctx, &sk);
	if (r < 0)
		return r;
	r = dump_qdiscs(sk, ifindex, &d);
	nt_nl_route_done(ctx, sk, r);
	if (r < 0)
		return r;
	r = compose_root(&d, out);
	free(d.e);
	return r;
}

int nt_rtlink_report(const nt_ctx *ctx, const char *ifname, nt_link_params *p, nt_qdisc *q, int *qres)
{
	struct nl_sock *sk = NULL;
	qd_dump d = { 0 };
	*qres = -EOPNOTSUPP;
	memset(q, 0, sizeof(*q));
	if (!ctx->live) {
		int r = nt_rtlink_get(ctx, ifname, p);
		if (r == 0)
			*qres = nt_fixture_qdisc_get(ctx, ifname, p->num_tx_queues, q);
		return r;
	}
	memset(p, 0, sizeof(*p));
	if (!nt_ifname_valid(ifname))
		return -ENODEV;
	int r = nt_nl_route_get(ctx, &sk);
	if (r < 0)
		return r;
	if ((r = link_get(sk, ifname, p)) == 0) {
		*qres = dump_qdiscs(sk, p->ifindex, &d);
		if (*qres == 0)
			*qres = compose_root(&d, q);
		free(d.e);
	}
	nt_nl_route_done(ctx, sk, r < 0 ? r : *qres);
	return r;
}

static int put_fq(struct nl_msg *msg, const nt_fq_params *fq)
{
	struct nlattr *o = nla_nest_start(msg, TCA_OPTIONS);
	if (!o)
		return -ENOMEM;
	if ((fq->has_limit && nla_put_u32(msg, TCA_FQ_PLIMIT, fq->limit) < 0) ||
	    (fq->has_flow_limit && nla_put_u32(msg, TCA_FQ_FLOW_PLIMIT, fq->flow_limit) < 0) ||
	    (fq->has_maxrate && nla_put_u32(msg, TCA_FQ_FLOW_MAX_RATE, fq->maxrate) < 0))
		return -ENOMEM;
	nla_nest_end(msg, o);
	return 0;
}

/* htb refuses to start without its global parameters: those tc sends
 * for a bare "htb" (version 3, r2q 10, default class 0), so that a foreign
 * htb root put back by a rollback is the one `tc qdisc add ... htb` makes. */
static int put_htb(struct nl_msg *msg)
{
	struct tc_htb_glob g = { .version = 3, .rate2quantum = 10 };
	struct nlattr *o = nla_nest_start(msg, TCA_OPTIONS);
	if (!o || nla_put(msg, TCA_HTB_INIT, sizeof(g), &g) < 0)
		return -ENOMEM;
	nla_nest_end(msg, o);
	return 0;
}

/* Create a KIND qdisc at PARENT of IFINDEX replacing what is there. With
 * NLM_F_EXCL beside CREATE|REPLACE and no handle, the kernel always makes a
 * new qdisc and grafts it (tc_modify_qdisc), where CREATE|REPLACE alone
 * would change the one there in place and keep parameters not sent. */
static int new_qdisc(struct nl_sock *sk, int ifindex, uint32_t parent, const char *kind, const nt_fq_params *fq,
		     char *err, size_t errsize)
{
	struct tcmsg tcm = { .tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex, .tcm_parent = parent };
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE | NLM_F_EXCL);
	int r = -ENOMEM;
	if (!msg)
		return r;
	if (nlmsg_append(msg, &tcm, sizeof(tcm), NLMSG_ALIGNTO) < 0 || nla_put_string(msg, TCA_KIND, kind) < 0)
		goto out;
	if (strcmp(kind, "fq") == 0 && put_fq(msg, fq) < 0)
		goto out;
	if (strcmp(kind, "htb") == 0 && put_htb(msg) < 0)
		goto out;
	r = nt_nl_request(sk, msg, NULL, NULL, err, errsize);
out:
	nlmsg_free(msg);
	return r;
}

static int del_root(struct nl_sock *sk, int ifindex, char *err, size_t errsize)
{
	struct tcmsg tcm = { .tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex, .tcm_parent = TC_H_ROOT };
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_DELQDISC, 0);
	int r = -ENOMEM;
	if (msg && nlmsg_append(msg, &tcm, sizeof(tcm), NLMSG_ALIGNTO) == 0)
		r = nt_nl_request(sk, msg, NULL, NULL, err, errsize);
	nlmsg_free(msg);
	return r;
}

int nt_qdisc_set(const nt_ctx *ctx, const char *ifname, const nt_qdisc *q, char *err, size_t errsize)
{
	qd_dump d = { 0 };
	struct nl_sock *sk = NULL;
	int r;

	if (err && errsize)
		err[0] = '\0';
	if (!ctx->live) {
		nt_link_params p;
		r = nt_rtlink_get(ctx, ifname, &p);
		return r < 0 ? r : nt_fixture_qdisc_set(ctx, ifname, p.num_tx_queues, q, err, errsize);
	}
	if (!nt_ifname_valid(ifname))
		return -ENODEV;
	int ifindex = ifindex_of(ifname);
	if (ifindex < 0)
		return ifindex;
	/* The dumps and the writes of one change on one socket. */
	if ((r = nt_nl_route_get(ctx, &sk)) < 0)
		return r;
	if ((r = dump_qdiscs(sk, ifindex, &d)) < 0)
		goto out;
	nt_qdisc cur;
	if ((r = compose_root(&d, &cur)) < 0)
		goto out;
	if (q->dflt) {
		/* The kernel's default is there already, and it refuses to
		 * delete a qdisc of handle 0. */
		r = cur.dflt ? 0 : del_root(sk, d.ifindex, err, errsize);
		goto out;
	}
	if ((r = new_qdisc(sk, d.ifindex, TC_H_ROOT, q->kind, &q->fq, err, errsize)) < 0)
		goto out;
	if (strcmp(q->kind, "mq") != 0 || !q->child[0] || q->child_dflt)
		goto out;
	/* The new mq's handle, which the kernel chose, is the major of its
	 * children's parents: one per transmit queue, minors 1..N. */
	free(d.e);
	d.e = NULL;
	if ((r = dump_qdiscs(sk, ifindex, &d)) < 0)
		goto out;
	uint32_t major = 0;
	for (int i = 0; i < d.n; i++)
		if (d.e[i].parent == TC_H_ROOT)
			major = TC_H_MAJ(d.e[i].handle);
	for (int i = 0; i < d.n && r == 0; i++)
		if (d.e[i].parent != TC_H_ROOT && TC_H_MAJ(d.e[i].parent) == major && major)
			r = new_qdisc(sk, d.ifindex, d.e[i].parent, q->child, &q->fq, err, errsize);
out:
	free(d.e);
	nt_nl_route_done(ctx, sk, r);
	return r;
}
