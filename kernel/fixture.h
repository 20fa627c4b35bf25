/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel as a fixture root plays it: private to kernel/.
 *
 * A fixture root is a captured host, and nothing reacts to writes into it.
 * Everything the kernel would do in reply to a write (show a trailing
 * newline, update the masks that mirror a cpulist, print a bond option's
 * number, refuse a ring size above its maximum) is imitated here and
 * nowhere else, so the code above kernel/ runs the same on both. The live
 * side of each call is in kernel/kernel.c and kernel/ethtool.c, which call
 * these only when the context is not live.
 *
 * A write to ROOT/ethtool/IFACE.json keeps the file's layout (one line as
 * the generator writes it, compact, or indented) and writes each entry in
 * its shortest spelling (a feature as wanted is a bare boolean; RSS's
 * "configured" only while true), so a rollback that puts every value back
 * leaves the file byte for byte as it was, as the kernel's own state would
 * be. */
#ifndef NT_FIXTURE_H
#define NT_FIXTURE_H

#include "kernel/ctx.h"
#include "kernel/ethtool_group.h"
#include "kernel/rss.h"
#include "kernel/rtlink.h"
#include "base/cpuset.h"

#include <stdarg.h>
#include <stdint.h>

/* Group G of IFNAME from ROOT/ethtool/IFACE.json (see kernel/ethtool.h).
 * Returns 0, -EOPNOTSUPP without the file or section, NT_EPARSE. */
int nt_fixture_ethtool_get(const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname,
			   nt_ethtool_values *out);
/* Write the fields of SEND->present, given CUR as read by the above. A value
 * above its max field, a field the section lacks (the driver does not
 * support it), or channels fewer than a user-set RSS table, an RSS context
 * or a flow rule names (ethtool_check_max_channel), is refused with
 * -EINVAL and the kernel's text in ERR, and the file is left as it was;
 * otherwise it is replaced in one rename. */
int nt_fixture_ethtool_set(const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname,
			   const nt_ethtool_values *cur, const nt_ethtool_values *send, char *err,
			   size_t errsize);

/* The "features" object of ROOT/ethtool/IFACE.json (see kernel/features.h)
 * into OUT, in the file's order. Returns 0, -EOPNOTSUPP without the file
 * or object, NT_EPARSE. */
struct nt_features;
int nt_fixture_features_get(const nt_ctx *ctx, const char *ifname, struct nt_features *out);
/* Feature NAME is wanted ON; every changeable feature is then active when
 * wanted and what it "needs" is active, as netdev_fix_features decides. A
 * fixed feature is left as it is (the kernel says nothing), an unknown one
 * refused with -EINVAL. Returns 0 or -errno. */
int nt_fixture_features_set(const nt_ctx *ctx, const char *ifname, const char *name, bool on, char *err,
			    size_t errsize);

/* The MTU range of IFNAME: the "link" section of ROOT/ethtool/IF.json
 * ({"min_mtu": 68, "max_mtu": 9216}), the members it has; for those it
 * lacks, sysfs showing neither, what the kernel gives the device: 0 and 0
 * for loopback (type 772: no limit), Ethernet's 68..65535 (ether_setup)
 * for the others. A max_mtu of 0 means no limit, as in the kernel.
 * Returns whether the fixture has the section. */
bool nt_fixture_link_limits(const nt_ctx *ctx, const char *ifname, uint32_t *min_mtu, uint32_t *max_mtu);

/* The attribute file REL (already formatted) holds VALUE and a newline. */
int nt_fixture_write_attr(const nt_ctx *ctx, const char *value, const char *rel);
/* Remove the temporary files a write of ethtool/IFACE.json killed before
 * its rename left (ethtool/.IFACE.json.XXXXXX). Returns how many, or
 * -errno. */
int nt_fixture_clean_temps(const nt_ctx *ctx);

/* smp_affinity_list of IRQ holds CPULIST, and the files the kernel derives
 * from it (smp_affinity, effective_affinity, effective_affinity_list) say
 * the same, those that exist in the fixture. With RBUF, smp_affinity_list
 * is read back into it once written, its result in *READ_R (as
 * nt_pread_value). Returns 0, NT_EINVALID for an empty or malformed list,
 * or -errno. */
int nt_fixture_irq_set_affinity(const nt_ctx *ctx, int irq, const char *cpulist, char *rbuf, size_t rsize,
				int *read_r);

/* bonding/OPTION of BOND as the driver shows VALUE. Returns 0, -EINVAL for
 * a value an enumerated option does not have, or -errno. */
int nt_fixture_bond_set(const nt_ctx *ctx, const char *bond, const char *option,
			const char *value);

/* What the kernel keeps of an rps_cpus write SET: its housekeeping CPUs,
 * those not listed in ROOT/sys/devices/system/cpu/isolated (the kernel
 * ANDs the mask with them, net/core/net-sysfs.c). Returns 0, or -EINVAL
 * for a non-empty set that is left empty, as the kernel refuses it. */
int nt_fixture_rps_housekeeping(const nt_ctx *ctx, nt_cpuset *set);

/* RSS from the "rss" object of ROOT/ethtool/IFACE.json (kernel/rss.h).
 * Returns 0, -EOPNOTSUPP without the file or object, NT_EPARSE. */
int nt_fixture_rss_get(const nt_ctx *ctx, const char *ifname, nt_rss *out);
/* Rewrite the object's table, or one flow type's hash fields, refusing
 * what the kernel refuses (-EINVAL with its text in ERR, the file left as
 * it was): a table of another size than the NIC's, an entry at or above
 * its RX rings, fields for a flow type the NIC does not hash. */
int nt_fixture_rss_set_indir(const nt_ctx *ctx, const char *ifname, const uint32_t *indir, uint32_t n,
			     char *err, size_t errsize);
int nt_fixture_rss_set_fields(const nt_ctx *ctx, const char *ifname, int flow, uint64_t data, char *err,
			      size_t errsize);
/* RSS contexts from the "contexts" array of the "rss" object
 * (kernel/rss.h): -EOPNOTSUPP without it, -ENOENT for an id not there. */
int nt_fixture_rss_context_get(const nt_ctx *ctx, const char *ifname, uint32_t id, nt_rss *out);
/* As ETHTOOL_SRSSH on context ID: ETH_RXFH_CONTEXT_ALLOC creates one
 * (the lowest free id, or the object's "alloc_id"; *NEWID set), N 0
 * deletes it (-EBUSY while a flow rule names it, as 6.11 and later
 * refuse), otherwise its table is replaced. Returns 0 or -errno. */
int nt_fixture_rss_context_set(const nt_ctx *ctx, const char *ifname, uint32_t id, const uint32_t *indir, uint32_t n,
			       uint32_t *newid, char *err, size_t errsize);
/* The input transformation of context ID (0: the "rss" object's own
 * "input_xfrm"; else the context's): -ENOENT for a context not there,
 * -EOPNOTSUPP for bits outside the object's "xfrm_supported" (when
 * given), as the kernel checks the driver's supported_input_xfrm. */
int nt_fixture_rss_set_xfrm(const nt_ctx *ctx, const char *ifname, uint32_t id, uint8_t xfrm, char *err,
			    size_t errsize);
/* Whether the "rss" object plays a kernel with ethtool netlink's RSS
 * commands ("netlink": true: the dump, RSS_CREATE_ACT, RSS_SET,
 * RSS_DELETE_ACT; kernel/rss_nl.h). */
bool nt_fixture_rss_netlink(const nt_ctx *ctx, const char *ifname);
/* The ids of the "contexts" array, ascending (at most CAP into IDS, *N):
 * -EOPNOTSUPP without "netlink" (the ioctl lists none). */
int nt_fixture_rss_context_ids(const nt_ctx *ctx, const char *ifname, uint32_t *ids, int cap, int *n);
/* As RSS_CREATE_ACT with context ID: -EBUSY when ID is there, -ERANGE at
 * or above "max_contexts", -EOPNOTSUPP without "netlink" or contexts. */
int nt_fixture_rss_context_create_as(const nt_ctx *ctx, const char *ifname, uint32_t id, const uint32_t *indir,
				     uint32_t n, char *err, size_t errsize);
/* A NIC's flow rules from the "flows" object of ROOT/ethtool/IFACE.json
 * (kernel/flows.h): -EOPNOTSUPP without the file or object, NT_EPARSE.
 * INSERT refuses as drivers do: a location beyond the table or a queue
 * beyond the rings with -EINVAL, a full table with -ENOSPC (text in ERR);
 * a rule at the location is replaced. DELETE: -ENOENT for an empty
 * location. Both replace the file in one rename. */
struct nt_flow_table;
struct nt_flow_rule;
int nt_fixture_flows_read(const nt_ctx *ctx, const char *ifname, struct nt_flow_table *out);
int nt_fixture_flows_insert(const nt_ctx *ctx, const char *ifname, const struct nt_flow_rule *r, char *err,
			    size_t errsize);
int nt_fixture_flows_delete(const nt_ctx *ctx, const char *ifname, uint32_t loc);

/* The root qdisc of IFNAME, of NTX transmit queues, from the "qdisc"
 * object of ROOT/ethtool/IFACE.json:
 *   {"kind": "mq", "children": "fq", "children_default": false,
 *    "limit": N, "flow_limit": N, "maxrate": BYTES_PER_SECOND}
 * (children for an mq only, true when they are the ones mq_init attached;
 * the fq parameters only where they are not fq's defaults). Without the
 * object the root is the kernel's own (dflt), as a device brought up gets
 * it: noqueue for a virtual device (no /sys/class/net/IF/device; not a
 * tun/tap, with its tun_flags, nor an ifb, which keep a queue), mq of
 * net.core.default_qdisc (ROOT/proc/sys/net/core/default_qdisc,
 * pfifo_fast without it) for a multi-queue one, the default itself for
 * one queue. Returns 0, NT_EPARSE or -errno. */
int nt_fixture_qdisc_get(const nt_ctx *ctx, const char *ifname, uint32_t ntx, nt_qdisc *out);
/* Make Q the root: Q->dflt removes the object (and the file when nothing
 * else is left in it), otherwise it is written as above. Refused as the
 * kernel refuses, the file then left as it was: a kind it has no module
 * for (-ENOENT with its text in ERR), mq on one queue or below an mq
 * (-EOPNOTSUPP). */
int nt_fixture_qdisc_set(const nt_ctx *ctx, const char *ifname, uint32_t ntx, const nt_qdisc *q, char *err,
			 size_t errsize);

/* The `netdev` family's answers for IFNAME (ifindex IFINDEX) from the
 * "netdev" object of ROOT/ethtool/IFACE.json (kernel/fixture_napi.c says
 * its form) into ND, which the caller frees. Returns 0, -EOPNOTSUPP
 * without the file or object (a kernel without the family's commands),
 * NT_EPARSE. */
struct nt_netdev;
int nt_fixture_netdev_get(const nt_ctx *ctx, const char *ifname, int ifindex, struct nt_netdev *nd);
/* qstats-get's answer for IFNAME from the "qstats" member of the same
 * object, appended to ND->qstats. Returns 0, -EOPNOTSUPP without the file,
 * the object or the member (a kernel before 6.9), NT_EPARSE. */
int nt_fixture_qstats_get(const nt_ctx *ctx, const char *ifname, int ifindex, struct nt_netdev *nd);
/* napi-set on the same object: member ATTR (the spec's word) of the NAPI
 * ID becomes V; "threaded" becomes the spec's word for V ("enabled") and
 * starts or ends the NAPI's thread as the device's file does (6.17: one
 * NAPI's). A NAPI the object lacks is -ENOENT ("no such NAPI"), a
 * member it lacks -EOPNOTSUPP (a kernel without it), text in ERR; a
 * document without the object is a kernel without the family's commands
 * (-EOPNOTSUPP). */
int nt_fixture_netdev_napi_set(const nt_ctx *ctx, const char *ifname, uint32_t id, const char *attr,
			       uint64_t v, char *err, size_t errsize);
/* sysfs FILE of IFNAME ("threaded", "napi_defer_hard_irqs",
 * "gro_flush_timeout") holds V, and the "netdev" object, when there is
 * one, says what the kernel then says: "threaded" on gives each NAPI a
 * thread napi/IF-ID (a "pid", and ROOT/proc/PID with comm, status and
 * stat, allowed on the online CPUs as a new kernel thread is), off takes
 * them away; the other two become every NAPI's value. "threaded" on a
 * NIC whose object lists no NAPI is refused with -EOPNOTSUPP, as the
 * kernel refuses it. */
int nt_fixture_netdev_dev_write(const nt_ctx *ctx, const char *ifname, const char *file, uint64_t v);
/* ROOT/proc/PID/status shows SET as Cpus_allowed_list (and
 * Cpus_allowed), as sched_setaffinity leaves it. -ESRCH without the task. */
int nt_fixture_task_set_allowed(const nt_ctx *ctx, int pid, const nt_cpuset *set);

#endif
