/* SPDX-License-Identifier: Apache-2.0 */
/* Inside the diagnostics: what the files of diagnose/ share, one file per
 * family of finding. Private to diagnose/; callers use diagnose/diagnose.h.
 *
 *   diagnose/diagnose.c        collecting findings, their order, and
 *                              nt_diagnose, which runs the checks
 *   diagnose/irq.c             IRQ placement: irq-info-missing,
 *                              irq-remote-node, irq-shared-first-cpu,
 *                              nic-locality-unknown
 *   diagnose/irqbalance.c      irqbalance-active
 *   diagnose/rings.c           NIC queues: ring-below-max
 *   diagnose/bond.c            bond-hash-layer2
 *   diagnose/features.c        offloads: lro-forwarding, gro-off,
 *                              bond-offload-mismatch
 *   diagnose/link.c            MTU, queue length, root qdisc: bond-mtu-mismatch,
 *                              txqueuelen-small, qdisc-default-stale
 *   diagnose/tcp.c             sysctls: tcp-buffers-small
 *   diagnose/busy_poll.c       busy-poll-global
 *   diagnose/steering.c        RPS/XPS/RSS: rps-missing, xps-unset,
 *                              xps-irq-mismatch, rps-reserved-cpus,
 *                              rss-queues-misplaced
 *   diagnose/flows.c           flow rules: flow-queue-remote,
 *                              flow-queue-reserved, flow-context-remote,
 *                              flow-context-reserved, flow-rules-overlap
 *   diagnose/napi.c            NAPI threads and interrupt mitigation:
 *                              napi-thread-unpinned, napi-thread-apart,
 *                              napi-defer-without-timeout,
 *                              irq-suspend-without-defer
 *   diagnose/dim_profile.c     adaptive-coalescing profiles: dim-profile-default
 *   diagnose/fix_profile.c     nt_diagnose_fix_profile
 *   diagnose/drift_findings.c  nt_diagnose_add_drift
 *   diagnose/delivery.c        nt_diagnose_add_delivery: irq-delivered-elsewhere,
 *                              napi-thread-elsewhere */
#ifndef NT_DIAGNOSE_INT_H
#define NT_DIAGNOSE_INT_H

#include "diagnose/diagnose.h"

#include <stdbool.h>

enum { SEV_ERROR = 0, SEV_WARNING = 1, SEV_INFO = 2 };

/* "error", "warning", "info", by SEV_*. */
extern const char *const diag_sev_names[];

typedef struct diag_item {
	json_t *finding;
	int sev;
	int seq; /* insertion order: the last tie-breaker, so qsort is stable */
	const char *subject; /* borrowed from finding */
	const char *id;
} diag_item;

typedef struct diag {
	const nt_topology *t;
	/* The reads' context: T's, and on a fixture root each NIC's ethtool
	 * document parsed once for the whole diagnosis (nt_kernel_read_begin)
	 * rather than once a check; EH, one ethtool handle for every check's
	 * questions, NULL when it could not be opened (each read then opens
	 * its own: slower, still right). */
	const nt_ctx *ctx;
	struct nt_ethtool *eh;
	int rtt_ms;
	const json_t *recent_drops; /* nt_diag_options' */
	const struct nt_host_napi *napi; /* nt_diag_options', may be NULL */
	const json_t *profile; /* nt_diag_options', may be NULL */
	const char *profile_source; /* never NULL */
	diag_item *items;
	int n, cap;
} diag;

/* Adds one finding. EVIDENCE and FIX are stolen in every case (FIX NULL
 * means "no fix", serialized as null). Returns 0 or -ENOMEM. */
int diag_add_finding(diag *d, const char *id, int sev, const char *subject, json_t *evidence,
	json_t *fix, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* The NIC called NAME, or NULL. */
const nt_nic *diag_nic(const nt_topology *t, const char *name);
/* The value of sysctl KEY as the host model read it, or NULL. */
const char *diag_sysctl(const nt_topology *t, const char *key);
/* Insert finding F (stolen) into a finished DIAGNOSIS after the last
 * finding of its severity or a graver one, keeping the document's order
 * by severity, and count it in its summary (diagnose/drift_findings.c).
 * Returns 0 or -ENOMEM. */
int diag_insert_finding(json_t *diagnosis, int sev, json_t *f);

/* The IRQ (index into d->t->irqs, -1 none) serving queue QUEUE of NIC:
 * by the netdev family's map where the host NAPI read holds it, else by
 * the IRQs' names (host/napi.h, nt_host_napi_queue_irq); *SOURCE gets
 * "netlink" or "irq-names" when not NULL. */
int diag_queue_irq(const diag *d, const nt_nic *nic, int queue, bool tx, const char **source);

static inline bool diag_nic_is_physical(const nt_nic *n)
{
	return !n->is_virtual && !n->is_bond;
}

/* ---- the checks: each adds its findings to D, returns 0 or -ENOMEM ---- */

int diag_check_irq_info(diag *d);
int diag_check_irq_remote_node(diag *d);
int diag_check_irq_shared_first_cpu(diag *d);
int diag_check_locality(diag *d);
int diag_check_irqbalance(diag *d);
int diag_check_rings(diag *d);
int diag_check_bonds(diag *d);
int diag_check_features(diag *d);
int diag_check_tcp_buffers(diag *d);
int diag_check_busy_poll(diag *d);
int diag_check_link(diag *d);
/* RESERVED: interface -> cpulist kept for applications, or NULL. */
int diag_check_steering(diag *d, const json_t *reserved);
int diag_check_flows(diag *d, const json_t *reserved);
int diag_check_napi(diag *d);
int diag_check_ring_params(diag *d);
int diag_check_dim_profile(diag *d);

#endif
