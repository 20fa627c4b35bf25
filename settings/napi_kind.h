/* SPDX-License-Identifier: Apache-2.0 */
/* What the kinds of NAPI share (settings/napi.c, napi_device.c,
 * napi_thread.c): targets keyed by a NIC's RX queue, not by NAPI id (ids
 * change on a link reset unless the driver keeps its NAPI config), the
 * queue's NAPI found through the kernel's `netdev` family
 * (kernel/netdev.h) at each read and write; numbers of 64 bits; and what
 * a profile check needs to know of a NIC's NAPIs. Private to settings/. */
#ifndef NT_NAPI_KIND_H
#define NT_NAPI_KIND_H

#include "kernel/netdev.h"
#include "settings/section.h"

/* The kinds, for the profile section (settings/napi.c) that asks for all
 * three: device-wide sysfs files (target "IF/FILE"), per-NAPI values
 * (target "IF/rx-N/ATTR"), a NAPI thread's CPUs (target "IF/rx-N"). */
extern const nt_setting_kind nt_setting_napi_device, nt_setting_napi, nt_setting_napi_thread_cpus;

/* Values of one unsigned 64-bit number (fields 0 and 1, low and high), as
 * decimal text. */
int nt_nk_parse_u64(const char *text, nt_value *out);
int nt_nk_format_u64(const nt_value *v, char *out, size_t size);
bool nt_nk_equal_u64(const nt_value *a, const nt_value *b);
uint64_t nt_nk_u64(const nt_value *v);
void nt_nk_set_u64(nt_value *v, uint64_t x);

/* TARGET "IF/rx-N" or "IF/rx-N/REST": IFNAME, N and REST ("" for none).
 * Returns 0 or NT_EINVALID. */
int nt_nk_target(const char *target, char *ifname, uint32_t *queue, char *rest, size_t restsize);

/* The NAPI serving RX queue QUEUE of IFNAME as the kernel says it now
 * (one read of the family, kernel/netdev.h) into *OUT. Returns 0, -ENOENT
 * when the family names none for the queue, or what nt_netdev_read
 * returns (-EOPNOTSUPP: a kernel without napi-get, before 6.8). */
int nt_nk_napi(const nt_ctx *ctx, const char *ifname, uint32_t queue, nt_nd_napi *out);

/* What a profile needs to know of one NIC's NAPIs. */
typedef struct nt_nk_facts {
	int family; /* the family's answer for the NIC: 0 when it answered */
	size_t nnapis; /* the NIC's NAPIs (family answered) */
	int nrx; /* RX queues in sysfs, -1 unknown */
	/* napi-set is there (6.13): a NAPI of the NIC reports the values
	 * it sets. Unknown for a NIC without NAPI. */
	bool napi_set;
	/* threaded per NAPI (6.17): a NAPI of the NIC reports its mode. */
	bool napi_threaded;
	int threaded; /* /sys/class/net/IF/threaded: -1 missing, 0 off, else on */
	/* The answers, for nt_netdev_rx_napi: the plan's read of the host
	 * (settings/section.h), which owns them. */
	const nt_netdev *nd;
} nt_nk_facts;
/* Read them for NIC of T through R, the plan's reads (one read of the
 * family for the whole plan). Returns 0 or -ENOMEM; what cannot be read is
 * left unknown. */
int nt_nk_facts_read(nt_plan_reads *r, const nt_topology *t, const nt_nic *nic, nt_nk_facts *out);

#endif
