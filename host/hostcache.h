/* SPDX-License-Identifier: Apache-2.0 */
/* The host model cache: the static part of a host's model (CPUs, cores,
 * NUMA nodes, NICs with their device, driver and locality; see
 * nt_topology_read_static), kept by the agent between requests so a read
 * of the host costs only its dynamic part.
 *
 * Before each read the cache checks a key that changes whenever the static
 * part may have: the content of /sys/devices/system/cpu/online and
 * /sys/devices/system/node/online and the entries of /sys/class/net (a CPU
 * taken offline or back, a node, a NIC added, removed or renamed). It is
 * read under the root, so it works the same on the live host and on a
 * fixture tree, where no kernel sends events; it costs two small reads and
 * one directory listing. A link deleted and made again under the same name
 * keeps the key but not its ifindex: a read that finds a NIC's ifindex
 * changed drops the static part and reads once more on a new one.
 * nt_host_cache_invalidate drops the static part for anything else a
 * caller knows of. On a fixture root the cache also keeps each NIC's
 * ethtool document parsed while its file is unchanged
 * (kernel/fixture_docs.c). */
#ifndef NT_HOSTCACHE_H
#define NT_HOSTCACHE_H

#include "host/topology.h"
#include "kernel/ctx.h"

typedef struct nt_host_cache nt_host_cache;

/* A cache for CTX's root; empty until the first read. Returns 0 or -ENOMEM. */
int nt_host_cache_new(const nt_ctx *ctx, nt_host_cache **out);
void nt_host_cache_free(nt_host_cache *c);

/* A fresh host model: the static part from the cache (read again first
 * when its key changed or it was invalidated), the dynamic part read now.
 * Safe from several threads at once. Same results as nt_topology_read. */
int nt_host_cache_read(nt_host_cache *c, nt_topology **out);

/* Keep up to BUDGET files of /proc/irq (and of debugfs's irq/irqs, within
 * the same budget) open between reads (kernel/heldfiles.h); 0, the
 * default, keeps none. Set once, before the first read. Returns 0 or
 * -ENOMEM. */
int nt_host_cache_hold_files(nt_host_cache *c, int budget);

/* Descriptors held now by the sets above (metrics, tests). */
int nt_host_cache_held(nt_host_cache *c);

/* nt_irq_files_read through the sets C holds (a transaction reading one
 * file of many IRQs reads it through the descriptors the host reads keep);
 * C NULL: under CTX, nothing held. */
int nt_host_cache_read_irq_files(nt_host_cache *c, const nt_ctx *ctx, const int *irqs, int n,
				 const char *name, char *bufs, size_t size, int *res);

/* nt_irq_files_write through the set C holds for IRQ: a transaction's
 * write and check of an IRQ go through the descriptor the host reads keep.
 * C NULL: under CTX, nothing held. */
int nt_host_cache_irq_set_affinity(nt_host_cache *c, const nt_ctx *ctx, int irq, const char *cpulist,
				   char *buf, size_t size, int *read_r, char *err, size_t errsize);

/* The last search for irqbalance its reads keep (kernel/irqbalance_client.h),
 * or NULL when C is NULL. */
struct nt_irqbalance_memo *nt_host_cache_irqbalance(nt_host_cache *c);

/* Forget the static part: the next read builds it again. */
void nt_host_cache_invalidate(nt_host_cache *c);

/* How many times the static part was built (tests and metrics). */
unsigned long nt_host_cache_builds(nt_host_cache *c);

/* The key described above, malloc'd, for CTX's root. Returns 0, -ENOMEM. */
int nt_host_cache_key(const nt_ctx *ctx, char **out);

#endif
