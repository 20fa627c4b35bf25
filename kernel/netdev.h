/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's `netdev` generic-netlink family (Documentation/netlink/
 * specs/netdev.yaml): which NAPI instance serves each queue, and per NAPI
 * its IRQ, its thread and its interrupt-mitigation values.
 *
 * On a live root one socket resolves the family and makes ONE dump of
 * `queue-get` and ONE of `napi-get` for the whole host; the answers are
 * kept in two flat tables the caller looks up by ifindex. On a fixture root
 * the NIC's document (ROOT/ethtool/IF.json, its "netdev" object) plays the
 * same answers (kernel/fixture_napi.c).
 *
 * What kernels have (the report says which source it used):
 *   before 6.3   no family at all                       -> -ENOENT
 *   6.3 .. 6.7   the family without queue-get/napi-get  -> -EOPNOTSUPP
 *   6.8          queue-get, napi-get with irq and pid
 *   6.13         defer-hard-irqs, gro-flush-timeout, irq-suspend-timeout
 *   6.17         threaded per NAPI
 * An attribute the kernel does not send stays -1 ("the kernel does not
 * say"). The device-wide sysfs values and the threads found by name are the
 * fallback (nt_netdev_dev_read, kernel/task.h).
 *
 * The message parsers are pure functions over a received buffer, so the
 * unit test and the fuzz target feed them crafted datagrams. */
#ifndef NT_NETDEV_H
#define NT_NETDEV_H

#include "kernel/ctx.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The numbers of include/uapi/linux/netdev.h (Debian 12's
 * linux-libc-dev has no such header; these are the kernel's ABI and never
 * change). Spelled here under our own names so a newer system header does
 * not clash. */
#define NT_NETDEV_FAMILY_NAME "netdev"
#define NT_NETDEV_CMD_QUEUE_GET 10
#define NT_NETDEV_CMD_NAPI_GET 11
/* 6.13: one NAPI's values by its id (a do, no dump); GENL_ADMIN_PERM.
 * The command list of include/uapi/linux/netdev.h: ... QSTATS_GET 12,
 * BIND_RX 13, NAPI_SET 14, BIND_TX 15. */
#define NT_NETDEV_CMD_NAPI_SET 14

#define NT_NETDEV_A_NAPI_IFINDEX 1
#define NT_NETDEV_A_NAPI_ID 2
#define NT_NETDEV_A_NAPI_IRQ 3
#define NT_NETDEV_A_NAPI_PID 4
#define NT_NETDEV_A_NAPI_DEFER_HARD_IRQS 5 /* 6.13 */
#define NT_NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT 6 /* 6.13, uint (4 or 8 bytes) */
#define NT_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT 7 /* 6.13, uint */
/* 6.17, in napi-get and napi-set: 0 disabled, 1 enabled, and 2 busy-poll
 * (the thread busy-polls its NAPI) on kernels whose enum napi-threaded has
 * the third entry, which 6.18 does not (napi-set of 2: ERANGE; the sysfs
 * file refuses 2 as well). The spec declared it first a "uint" with max 1,
 * then a u32 enum: a u32 is valid for both. */
#define NT_NETDEV_A_NAPI_THREADED 8

#define NT_NETDEV_A_QUEUE_ID 1
#define NT_NETDEV_A_QUEUE_IFINDEX 2
#define NT_NETDEV_A_QUEUE_TYPE 3 /* 0 rx, 1 tx */
#define NT_NETDEV_A_QUEUE_NAPI_ID 4

#define NT_NETDEV_QUEUE_RX 0
#define NT_NETDEV_QUEUE_TX 1

/* qstats-get (6.9): per-queue counters, dumped with scope "queue". The
 * request may name one ifindex, so a read costs the one NIC shown. */
#define NT_NETDEV_CMD_QSTATS_GET 12
#define NT_NETDEV_A_QSTATS_IFINDEX 1
#define NT_NETDEV_A_QSTATS_QUEUE_TYPE 2
#define NT_NETDEV_A_QSTATS_QUEUE_ID 3
#define NT_NETDEV_A_QSTATS_SCOPE 4 /* uint, flags: NT_NETDEV_QSTATS_SCOPE_QUEUE */
#define NT_NETDEV_QSTATS_SCOPE_QUEUE 1
/* The counters are attributes 8 (rx-packets) to 34 (tx-wake), each a
 * "uint"; nt_netdev_qstat_names gives their names in the spec's words. A
 * counter the driver does not keep is left out of the reply, and so is a
 * queue for which it keeps none. Attributes past the last we know (a
 * newer kernel) are skipped, never given a name we would have to guess. */
#define NT_NETDEV_A_QSTATS_FIRST 8
#define NT_NETDEV_A_QSTATS_LAST 34
#define NT_NETDEV_QSTATS_N (NT_NETDEV_A_QSTATS_LAST - NT_NETDEV_A_QSTATS_FIRST + 1)

typedef struct nt_nd_queue {
	uint32_t ifindex, id;
	uint32_t type; /* NT_NETDEV_QUEUE_RX or _TX; others are skipped */
	int64_t napi_id; /* -1 when the kernel names none (XDP, no NAPI) */
} nt_nd_queue;

typedef struct nt_nd_napi {
	uint32_t ifindex, id;
	/* -1 where the kernel does not say (an older kernel, no IRQ, not
	 * threaded: the pid is sent only while a thread exists). */
	int64_t irq, pid, defer_hard_irqs, gro_flush_timeout, irq_suspend_timeout;
	int threaded; /* -1 unknown (before 6.17), 0, 1, 2 (busy-poll): as sent */
} nt_nd_napi;

/* One queue's counters from qstats-get: v[i] is attribute
 * NT_NETDEV_A_QSTATS_FIRST + i, reported when bit i of PRESENT is set. */
typedef struct nt_nd_qstats {
	uint32_t ifindex, id;
	uint32_t type; /* NT_NETDEV_QUEUE_RX or _TX */
	uint32_t present;
	uint64_t v[NT_NETDEV_QSTATS_N];
} nt_nd_qstats;

/* "rx-packets", ..., "tx-wake": the spec's names of the counters, by
 * index (attribute - NT_NETDEV_A_QSTATS_FIRST). */
extern const char *const nt_netdev_qstat_names[NT_NETDEV_QSTATS_N];

/* The answers of one read: both dumps, in the kernel's order. */
typedef struct nt_netdev {
	nt_nd_queue *queues;
	size_t nqueues, qcap;
	nt_nd_napi *napis;
	size_t nnapis, ncap;
	/* qstats-get's answers, only after nt_netdev_qstats_read. */
	nt_nd_qstats *qstats;
	size_t nqstats, scap;
	/* Messages of the family that were dropped: attributes running past
	 * their message, or an entry without the attributes that identify
	 * it. Counted for the tests; the read goes on. */
	unsigned skipped;
} nt_netdev;

void nt_netdev_free(nt_netdev *nd);
/* Append a copy of Q (or N) to ND's list: 0 or -ENOMEM. For the readers
 * that put one NIC's part of an answer into an nt_netdev of its own. */
int nt_netdev_push_queue(nt_netdev *nd, const nt_nd_queue *q);
int nt_netdev_push_napi(nt_netdev *nd, const nt_nd_napi *n);

/* The family id in a CTRL_CMD_GETFAMILY reply datagram BUF of LEN bytes
 * (CTRL_ATTR_FAMILY_ID), into *ID. Returns 0, the kernel's -errno from an
 * NLMSG_ERROR (-ENOENT: no such family), or NT_EPARSE. */
int nt_netdev_parse_family(const void *buf, size_t len, int *id);
/* The same, with the family's commands (CTRL_ATTR_OPS, each operation's
 * CTRL_ATTR_OP_ID) into *OPS: bit C for command C below 64; 0 when the
 * reply lists none. */
int nt_netdev_parse_family_ops(const void *buf, size_t len, int *id, uint64_t *ops);
/* The same for any generic netlink family's GETFAMILY reply, with the
 * commands that can dump (their CTRL_ATTR_OP_FLAGS has GENL_CMD_CAP_DUMP)
 * into *DUMPS: the ethtool family's RSS_GET is a do before 6.12 and a
 * do and a dump since (kernel/rss_nl.c). */
int nt_genl_parse_family(const void *buf, size_t len, int *id, uint64_t *ops, uint64_t *dumps);

/* One datagram of a `queue-get`, `napi-get` or `qstats-get` dump of
 * family FAMILY: each message of that family and of one of those commands
 * adds an entry to ND (by its command, whichever dump it arrived in);
 * unknown attributes are ignored.
 * Returns 0 when more datagrams follow, 1 once NLMSG_DONE is seen, the
 * kernel's -errno from an NLMSG_ERROR or from the NLMSG_DONE of a dump
 * that failed part way (-EOPNOTSUPP: a kernel without the command),
 * NT_EPARSE when the framing itself is broken, -ENOMEM. */
int nt_netdev_parse_dump(nt_netdev *nd, int family, const void *buf, size_t len);

/* Read the answers: on a live root one netlink socket, the family resolved
 * and the two dumps for the whole host (IFNAME ignored); on a fixture root
 * the "netdev" object of IFNAME's document, with IFINDEX as its ifindex.
 * Returns 0, -ENOENT without the family, -EOPNOTSUPP without the commands
 * (or the fixture without the object), or -errno; ND is the caller's to
 * free either way. */
int nt_netdev_read(const nt_ctx *ctx, const char *ifname, int ifindex, nt_netdev *nd);

/* IFNAME's per-queue counters (qstats-get, scope queue) into ND->qstats:
 * on a live root one dump for IFINDEX alone, on a fixture root the
 * "qstats" member of the document's "netdev" object. Not part of
 * nt_netdev_read: the counters are read for the one NIC a caller shows,
 * never for a whole-host read. Returns 0 (no entries: the driver keeps no
 * per-queue counters), -ENOENT without the family, -ENOSYS on a kernel
 * whose family lists no qstats-get (before 6.9), -ENODATA for a device
 * that keeps none (the kernel answers a dump for one such device with
 * EOPNOTSUPP, which the family's list of commands tells apart),
 * -EOPNOTSUPP when it cannot be told which (a family that lists no
 * commands; a fixture without the member), -ENODEV, or -errno. ND is the
 * caller's (zeroed or from nt_netdev_read) to free either way. */
int nt_netdev_qstats_read(const nt_ctx *ctx, const char *ifname, int ifindex, nt_netdev *nd);

/* The per-queue counters of every device of the namespace at once, for a
 * reader that wants them all (GET /metrics with --metrics-queues): on a
 * live root ONE qstats-get dump without an ifindex (IFNAMES and IFINDEXES
 * ignored), on a fixture root the document of each of the N names, with
 * its ifindex (a document without counters adds nothing). Returns 0,
 * -ENOENT without the family, -ENOSYS on a kernel without the command
 * (live), -ENOMEM, or -errno; ND is the caller's to free either way. */
int nt_netdev_qstats_read_all(const nt_ctx *ctx, const char *const *ifnames, const int *ifindexes, int n,
			      nt_netdev *nd);

/* Device-wide NAPI values in sysfs (/sys/class/net/IF/threaded,
 * napi_defer_hard_irqs, gro_flush_timeout; 5.12 and 5.8+): -1 each where
 * the file is missing or unreadable. */
typedef struct nt_nd_dev {
	int threaded; /* 0, 1 */
	int64_t defer_hard_irqs, gro_flush_timeout;
} nt_nd_dev;
void nt_netdev_dev_read(const nt_ctx *ctx, const char *ifname, nt_nd_dev *out);

/* ---- lookups over one read (pure) ---- */

/* The NAPI that serves RX queue QUEUE of the device IFINDEX in ND, or
 * NULL. The family names it in the queue's `napi-id`; a driver that does
 * not link its queues to NAPIs (netif_queue_set_napi; veth on 6.18) lists
 * the queues without, and then, when the device has exactly as many NAPIs
 * as RX queues, the N-th NAPI by id serves queue N: drivers add one NAPI a
 * queue in queue order (veth_napi_add_range), and the kernel hands out
 * NAPI ids in increasing order. */
const nt_nd_napi *nt_netdev_rx_napi(const nt_netdev *nd, int ifindex, uint32_t queue);
/* How many NAPIs ND lists for the device IFINDEX. */
size_t nt_netdev_napi_count(const nt_netdev *nd, int ifindex);

/* ---- writes ---- */

/* The per-NAPI values napi-set writes, in the spec's words. */
typedef enum {
	NT_NAPI_DEFER_HARD_IRQS, /* "defer-hard-irqs", u32 up to S32_MAX */
	NT_NAPI_GRO_FLUSH_TIMEOUT, /* "gro-flush-timeout", uint, ns */
	NT_NAPI_IRQ_SUSPEND_TIMEOUT, /* "irq-suspend-timeout", uint, ns */
	NT_NAPI_THREADED, /* "threaded", 0, 1 (2 busy-poll, after 6.18): 6.17 */
} nt_napi_attr;
/* The spec's word for A ("defer-hard-irqs"). */
const char *nt_napi_attr_name(nt_napi_attr a);

/* napi-set of NAPI ID (a NAPI of IFNAME): A to V. On a live root a request
 * with an ACK on a socket of its own; the kernel's refusal comes back as
 * its -errno with the extended-ack text in ERR (-EOPNOTSUPP: a kernel
 * without the command, before 6.13). On a fixture root the NAPI's member
 * of IFNAME's "netdev" object is changed (kernel/fixture_napi.c). Returns
 * 0 or -errno. */
int nt_netdev_napi_set(const nt_ctx *ctx, const char *ifname, uint32_t id, nt_napi_attr a, uint64_t v,
		       char *err, size_t errsize);

/* Write V to the device-wide sysfs file FILE of IFNAME ("threaded",
 * "napi_defer_hard_irqs", "gro_flush_timeout"). A fixture root also does
 * what the kernel does then: "threaded" starts (or stops) a thread
 * napi/IF-ID for each NAPI, and the other two overwrite every NAPI's
 * value. Returns 0 or the kernel's -errno (-EOPNOTSUPP: "threaded" on a
 * device without NAPI). */
int nt_netdev_dev_write(const nt_ctx *ctx, const char *ifname, const char *file, uint64_t v);

#endif
