/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's queues in sysfs: /sys/class/net/IF/queues/rx-N and tx-N, and
 * the steering files in them (rps_cpus, rps_flow_cnt, xps_cpus,
 * xps_rxqs), live or on a fixture root.
 *
 * The masks are written as the kernel prints them, as wide as the file
 * shows them already, so that a value put back reads byte for byte as it
 * did. On a fixture root the kernel's reply to an rps_cpus write is
 * played as well: it keeps only the housekeeping CPUs (those not in
 * /sys/devices/system/cpu/isolated), and refuses a set left empty. */
#ifndef NT_QUEUES_H
#define NT_QUEUES_H

#include "kernel/ctx.h"
#include "base/cpuset.h"

/* Queues are "rx-N" / "tx-N"; N below this. */
#define NT_QUEUES_MAX 4096

/* The number of rx-N and tx-N directories of IFNAME (the highest N + 1,
 * as the kernel numbers them from 0 without gaps). Returns 0 or -errno
 * (NT_EINVALID for a bad name). */
int nt_queues_count(const nt_ctx *ctx, const char *ifname, int *nrx, int *ntx);

/* FILE ("rps_cpus", "xps_cpus", "xps_rxqs") of queue Q ("rx-3") of
 * IFNAME, a bitmap (of CPUs, or of RX queues for xps_rxqs). NBITS, when
 * not NULL, gets the width the file prints the bitmap with. Returns 0 or
 * -errno / NT_EPARSE. */
int nt_queue_read_mask(const nt_ctx *ctx, const char *ifname, const char *q, const char *file,
		       nt_cpuset *out, int *nbits);
/* A decimal file of queue Q (rps_flow_cnt). Returns 0 or -errno. */
int nt_queue_read_long(const nt_ctx *ctx, const char *ifname, const char *q, const char *file, long *out);

/* Write SET to bitmap FILE of queue Q, at the width the file shows, and
 * read it back into BACK (*READ_R: the read's 0 or -errno). Returns the
 * write's 0 or -errno, with "IF/Q FILE: reason" in ERR. */
int nt_queue_write_mask(const nt_ctx *ctx, const char *ifname, const char *q, const char *file,
			const nt_cpuset *set, nt_cpuset *back, int *read_r, char *err, size_t errsize);
/* Write V to decimal FILE of queue Q and read it back, as above. The
 * kernel rounds rps_flow_cnt up to a power of two (a fixture root does
 * too). */
int nt_queue_write_long(const nt_ctx *ctx, const char *ifname, const char *q, const char *file, long v,
			long *back, int *read_r, char *err, size_t errsize);

#endif
