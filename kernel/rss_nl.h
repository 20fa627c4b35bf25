/* SPDX-License-Identifier: Apache-2.0 */
/* RSS contexts over ethtool netlink, where the kernel has it: the list of
 * a NIC's contexts (RSS_GET as a dump, 6.12), a context made with the id
 * the caller chooses (RSS_CREATE_ACT, 6.17), deleted (RSS_DELETE_ACT,
 * 6.17) and its table changed (RSS_SET, 6.17). kernel/rss.h's ioctl
 * functions stay the path of older kernels; nettune asks the running
 * kernel which it has by the ethtool family's list of commands
 * (CTRL_ATTR_OPS, with each command's dump flag), never by its version.
 *
 * Every call on a live root goes through EH, an ethtool handle opened for
 * CTX (kernel/ethtool.h): its socket, and the family's id and commands
 * that its open resolved in its one GETFAMILY, so that a transaction step
 * asking which commands the kernel has and then sending one makes no
 * lookup of its own. EH NULL, or a handle on the ioctl, and the call
 * opens a netlink handle for itself (one socket, one lookup).
 *
 * On a fixture root the NIC's "rss" object says whether it plays such a
 * kernel: "netlink": true (everything above; kernel/fixture_rss.c lists
 * its "contexts" and makes a context with the id asked for). */
#ifndef NT_RSS_NL_H
#define NT_RSS_NL_H

#include "kernel/ctx.h"
#include "kernel/ethtool.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the running kernel's ethtool netlink offers for RSS contexts. */
typedef struct nt_rss_nl {
	bool list; /* RSS_GET dumps every context of a device (6.12) */
	bool create; /* RSS_CREATE_ACT with a chosen id, RSS_DELETE_ACT (6.17) */
	bool set; /* RSS_SET (6.17) */
} nt_rss_nl;

/* Which of the above IFNAME's kernel has: on a live root the ethtool
 * family's commands as EH's open read them; all false without the family.
 * On a fixture root IFNAME's "rss" object ("netlink": true: all three). */
void nt_rss_nl_caps(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, nt_rss_nl *out);
/* The same from the commands of a GETFAMILY reply: bit C of OPS for
 * command C, of DUMPS for one that dumps (nt_genl_parse_family). Pure. */
void nt_rss_nl_caps_of(uint64_t ops, uint64_t dumps, nt_rss_nl *out);

/* One context of an RSS_GET reply or dump. */
typedef struct nt_rss_nl_ctx {
	uint32_t ifindex; /* the reply header's device, 0 when it says none */
	uint32_t id; /* 0: the NIC's own table (the reply has no CONTEXT) */
	uint32_t hfunc; /* 0 when the reply has none */
	uint32_t indir_size; /* entries of its table, 0 when none was sent */
	int64_t input_xfrm; /* -1 when the reply has none (0 is left out) */
} nt_rss_nl_ctx;

typedef struct nt_rss_nl_list {
	nt_rss_nl_ctx *e;
	size_t n, cap;
	unsigned skipped; /* messages dropped: a context id given twice, a bad attribute */
} nt_rss_nl_list;

void nt_rss_nl_list_free(nt_rss_nl_list *l);

/* The netlink messages in BUF (LEN bytes, one datagram as received): each
 * message of FAMILY with command RSS_GET_REPLY (or RSS_CREATE_ACT_REPLY)
 * adds an entry to L; others are skipped. Pure, for the unit test and the
 * fuzz target. Returns 0 when more may follow, 1 once NLMSG_DONE is seen,
 * the kernel's -errno from an NLMSG_ERROR (or a failed dump's
 * NLMSG_DONE), NT_EPARSE for broken framing, or -ENOMEM. */
int nt_rss_nl_parse(nt_rss_nl_list *l, int family, const void *buf, size_t len);

/* IFNAME's context ids, ascending, 0 (the NIC's own table) left out, into
 * IDS (at most CAP; more are dropped), *N of them: one RSS_GET dump for
 * the device, or the fixture's "contexts". Returns 0, -EOPNOTSUPP when
 * the kernel cannot list them (before 6.12; a fixture without
 * "netlink"), or -errno. */
int nt_rss_nl_context_ids(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t *ids, int cap, int *n);

/* Make context ID with table INDIR (N entries) through RSS_CREATE_ACT.
 * Returns 0, -EBUSY when ID is taken (the core's xa_insert), -ERANGE for
 * an id at or above the driver's limit, -EOPNOTSUPP without the command
 * or contexts, or the kernel's -errno, with its text in ERR. */
int nt_rss_nl_context_create(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, const uint32_t *indir,
			     uint32_t n, char *err, size_t errsize);
/* Replace context ID's table (RSS_SET with CONTEXT and INDIR). */
int nt_rss_nl_context_write(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, const uint32_t *indir,
			    uint32_t n, char *err, size_t errsize);
/* Set context ID's input transformation (ID 0: the NIC's own table):
 * RSS_SET with INPUT_XFRM alone. */
int nt_rss_nl_write_xfrm(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, uint8_t xfrm,
			 char *err, size_t errsize);
/* Delete context ID (RSS_DELETE_ACT): 0, -ENOENT when there is none,
 * -EBUSY while a flow rule names it, or -errno with ERR. */
int nt_rss_nl_context_delete(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, char *err,
			     size_t errsize);

struct nl_msg;
/* The request of command CMD (RSS_CREATE_ACT, RSS_SET, RSS_DELETE_ACT) of
 * ethtool FAMILY for IFNAME into *OUT (the caller's, nlmsg_free): context
 * ID unless 0, table INDIR (N entries) when N > 0, the input
 * transformation XFRM when not -1. Returns 0, -E2BIG for a table one
 * netlink attribute cannot carry (its length is 16 bits: more than 16382
 * entries), or -ENOMEM. No socket: for the unit test. */
int nt_rss_nl_act_msg(int family, uint8_t cmd, const char *ifname, uint32_t id, const uint32_t *indir, uint32_t n,
		      int xfrm, struct nl_msg **out);

#endif
