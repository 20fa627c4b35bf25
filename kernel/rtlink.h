/* SPDX-License-Identifier: Apache-2.0 */
/* A link's own settings over rtnetlink: its MTU (with the range the driver
 * allows), its transmit queue length, and its root qdisc.
 *
 * On the live host these are RTM_GETLINK/RTM_NEWLINK and
 * RTM_GETQDISC/RTM_NEWQDISC/RTM_DELQDISC requests, each acknowledged, with
 * the kernel's extended error text carried back ("mtu greater than device
 * maximum", "Specified qdisc kind is unknown"), on the socket
 * nt_nl_route_get gives (kernel/nlmsg.h): the read's one inside a read of
 * the host, else one per call. On a fixture root the MTU
 * and queue length are the sysfs files /sys/class/net/IF/mtu and
 * tx_queue_len; the MTU range, which sysfs does not show, comes from the
 * "link" section of ROOT/ethtool/IF.json ({"min_mtu": 68, "max_mtu": 9216})
 * or, without one, is the Ethernet default 68..65535 (ether_setup's), 0..0
 * (no limit) for loopback, as the kernel's (kernel/fixture.h); the
 * number of transmit queues is that of sysfs's queues/tx-N. The root qdisc
 * of a fixture is the "qdisc" object of ROOT/ethtool/IF.json, the kernel's
 * default without it (kernel/fixture.h says which), written back by a set
 * as the kernel would make it. */
#ifndef NT_RTLINK_H
#define NT_RTLINK_H

#include "kernel/ctx.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nt_link_params {
	int ifindex; /* 0 on a fixture root */
	uint32_t mtu, min_mtu, max_mtu;
	uint32_t txqlen;
	uint32_t num_tx_queues; /* on a fixture root: its queues/tx-N */
	/* The kernel said MIN_MTU and MAX_MTU (a fixture: its "link"
	 * section); otherwise they are Ethernet's. */
	bool range_known;
} nt_link_params;

/* Whether the kernel takes MTU for a link with P's range: at least
 * MIN_MTU, and at most MAX_MTU unless that is 0, which the kernel reads as
 * no limit (loopback reports "minmtu 0 maxmtu 0"; net/core/dev.c
 * dev_validate_mtu). */
static inline bool nt_mtu_in_range(const nt_link_params *p, uint32_t mtu)
{
	return mtu >= p->min_mtu && (p->max_mtu == 0 || mtu <= p->max_mtu);
}

/* IFNAME's parameters. Returns 0, -ENODEV for no such link, or -errno. */
int nt_rtlink_get(const nt_ctx *ctx, const char *ifname, nt_link_params *out);

/* Set IFNAME's MTU (TXQLEN). Returns 0 or the kernel's -errno, with its
 * extended error text in ERR ("" when it gave none). A fixture root refuses
 * an MTU outside the range as the kernel does, with the kernel's text. */
int nt_rtlink_set_mtu(const nt_ctx *ctx, const char *ifname, uint32_t mtu, char *err, size_t errsize);
int nt_rtlink_set_txqlen(const nt_ctx *ctx, const char *ifname, uint32_t txqlen, char *err,
			 size_t errsize);

/* The parameters of fq nettune keeps: the others (quantum, buckets,
 * horizon, ...) are left at the kernel's defaults by a write and not read
 * (docs/profiles.md#qdisc says what that means for a rollback). */
typedef struct nt_fq_params {
	bool has_limit, has_flow_limit, has_maxrate;
	uint32_t limit; /* packets in the whole qdisc (TCA_FQ_PLIMIT) */
	uint32_t flow_limit; /* packets per flow (TCA_FQ_FLOW_PLIMIT) */
	uint32_t maxrate; /* bytes per second per flow (TCA_FQ_FLOW_MAX_RATE) */
} nt_fq_params;

/* fq's defaults (net/sched/sch_fq.c fq_init): what a read leaves out. */
#define NT_FQ_DEFAULT_LIMIT 10000u
#define NT_FQ_DEFAULT_FLOW_LIMIT 100u
#define NT_FQ_UNLIMITED 0xffffffffu

/* A root qdisc as nettune knows it. */
typedef struct nt_qdisc {
	/* The kernel's own (handle 0: nobody set one, or it was deleted): the
	 * kind then says what the default is on this device, for reports. */
	bool dflt;
	char kind[16]; /* "fq", "fq_codel", "mq", "htb", ... */
	/* mq: the kind its children share, "*" when they differ from one
	 * another; CHILD_DFLT: they are the kernel's own (handle 0), which a
	 * write of this value leaves to the kernel. */
	char child[16];
	bool child_dflt;
	nt_fq_params fq; /* of the root fq, or of every fq child of an mq */
} nt_qdisc;

/* IFNAME's root qdisc. Returns 0, -ENODEV, or -errno (NT_EPARSE for a
 * fixture's malformed object). */
int nt_qdisc_get(const nt_ctx *ctx, const char *ifname, nt_qdisc *out);

/* Make Q IFNAME's root qdisc: Q->dflt deletes the root (the kernel then
 * attaches its default); otherwise a new qdisc of Q->kind is created with
 * the parameters given (the rest at the kernel's defaults) and replaces
 * the root in one step; for "mq" with a CHILD, a child of that kind (with
 * Q->fq for fq) on every transmit queue. Returns 0 or -errno with the
 * kernel's text in ERR. */
int nt_qdisc_set(const nt_ctx *ctx, const char *ifname, const nt_qdisc *q, char *err, size_t errsize);

/* For a report of IFNAME: its parameters and its root qdisc, the two
 * requests on one socket: inside a read of the host (nt_kernel_read_begin)
 * the read's, which the reports of every NIC share, else one of their own.
 * Returns nt_rtlink_get's result; *QRES is nt_qdisc_get's, Q filled when
 * it is 0. */
int nt_rtlink_report(const nt_ctx *ctx, const char *ifname, nt_link_params *p, nt_qdisc *q, int *qres);

#endif
