/* SPDX-License-Identifier: Apache-2.0 */
/* Links and their counters through rtnetlink (libnl-route-3) on the live
 * host. A fixture root has no rtnetlink: the dump says -EOPNOTSUPP and the
 * topology reader reads the same facts from sysfs files. nl_* errors are
 * mapped to -errno at this boundary. */
#ifndef NT_LINK_H
#define NT_LINK_H

#include "kernel/ctx.h"
#include <net/if.h>
#include <stdint.h>

typedef struct nt_link_info {
	char name[IF_NAMESIZE];
	int ifindex;
	int mtu;
	char operstate[16]; /* "up", "down", "unknown", ... as sysfs spells it */
	char master[IF_NAMESIZE]; /* "" when none */
	char kind[32]; /* rtnl link kind: "bond", "veth", "" for hardware */
	uint64_t rx_packets, tx_packets, rx_bytes, tx_bytes;
	uint64_t rx_dropped, rx_missed, rx_fifo_errors, rx_errors;
} nt_link_info;

/* Dump every link of the current network namespace in one request.
 * *OUT is malloc'd (caller frees), *N its length. Returns 0, -EOPNOTSUPP
 * on a fixture root, or -errno. */
int nt_link_dump(const nt_ctx *ctx, nt_link_info **out, int *n);

#endif
