/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's NAPI instances for the per-NIC view (GET /v1/nics/{name},
 * `nettune nics IF`): which NAPI serves each queue and through it which
 * IRQ, each NAPI's thread (pid, allowed CPUs, last CPU) and its
 * interrupt-mitigation values, and the device-wide sysfs values.
 *
 * Like the queues (host/queues.h) this is not part of the whole-host read
 * that GET /v1/topology serves: it costs a netlink exchange (two dumps for
 * the host) and two /proc files a NAPI thread, for the one NIC shown.
 *
 * Sources, in order: the kernel's `netdev` family (kernel/netdev.h; a
 * fixture root plays it from the NIC's document), then sysfs and the
 * threads found by name (kernel/task.h) on kernels without it. */
#ifndef NT_HOST_NAPI_H
#define NT_HOST_NAPI_H

#include "host/queues.h"
#include "host/topology.h"
#include "kernel/netdev.h"

#include <jansson.h>

/* Read N's NAPI state on T's host and add it to DOC (N's JSON object):
 * "irq_source", "threaded", "napi_defer_hard_irqs", "gro_flush_timeout_ns"
 * and "napi": [{"id", "irq", "threaded", "pid", "thread_cpus", "last_cpu",
 * "defer_hard_irqs", "gro_flush_timeout_ns", "irq_suspend_timeout_ns"}],
 * null where the kernel does not say. Q, N's queues as nt_nic_queues_read
 * gave them (may be NULL), gets each queue's NAPI id; when the family
 * answers the queue->IRQ map ("irq_source": "netlink"), each queue's IRQ
 * is the one of its NAPI and the IRQ-name heuristic is not used. Returns
 * 0 or -ENOMEM; what cannot be read is reported as unknown. */
int nt_nic_napi_report(const nt_topology *t, const nt_nic *n, nt_nic_queues *q, json_t *doc);

/* ---- the NAPIs of several NICs, read once ----
 *
 * What the report above shows of one NIC, for callers that look at every
 * NIC (the diagnostics, the delivery check): one read of the family for
 * the host (one socket, one dump of queue-get and one of napi-get on a
 * live root; each NIC's document on a fixture root), the device-wide
 * sysfs values, and each NAPI thread's allowed and last CPU from /proc.
 * nt_nic_napi_report reads through the same function, for its one NIC, so
 * the queue->IRQ map is the same wherever it is shown. Never part of the
 * whole-host read (GET /v1/topology). */

/* One NAPI as read: the family's answer and what the report derives. */
typedef struct nt_napi {
	int nic; /* index into the topology's nics */
	nt_nd_napi nd; /* the family's answer; nd.irq the IRQ number, -1 none */
	int rx_queue; /* the first RX queue it serves, -1 none known */
	/* As the report shows it: -1 unknown, 0, 1. Before 6.17 the family
	 * has no per-NAPI word and a thread beside a device not threaded is
	 * a parked one (6.1 keeps it), not the NAPI's worker: then threaded
	 * 0 and pid -1. */
	int threaded;
	long long pid; /* the NAPI's worker thread, -1 none */
	bool has_cpus; /* thread_cpus read from /proc/PID/status */
	nt_cpuset thread_cpus;
	int last_cpu; /* -1 unknown */
} nt_napi;

typedef struct nt_napi_nic {
	/* 0: the family answered for the NIC (6.8+, or a fixture document
	 * with its "netdev" object); else why not (-ENOENT no family,
	 * -EOPNOTSUPP no napi-get, -errno), and its NAPIs, if any, are the
	 * threads found by name (only with NT_NAPI_BY_NAME). */
	int family;
	/* irq_source "netlink": the family names the queues' NAPIs and the
	 * IRQs of those NAPIs (or the NIC has no IRQ), and is then the
	 * truth for which IRQ serves which queue. */
	bool netlink_map;
	bool read; /* the NIC was asked about */
	nt_nd_dev dev; /* /sys/class/net/IF/threaded, ... */
} nt_napi_nic;

typedef struct nt_host_napi {
	nt_netdev nd; /* the family's answers for the NICs read, merged */
	nt_napi *napis; /* one per nd.napis entry, same index */
	nt_napi_nic *nics; /* one per topology NIC, same index */
	int nnics;
} nt_host_napi;

/* With NT_NAPI_BY_NAME, a NIC without the family gets the threads named
 * napi/IF-ID as its NAPIs (what the report shows on older kernels); without
 * it such a NIC has none: the diagnostics judge only what the kernel said. */
#define NT_NAPI_BY_NAME 1u
/* With NT_NAPI_NO_TASKS the threads' /proc files are not read (no
 * thread_cpus, no last_cpu): a plan needs the family's map and values, not
 * where each thread runs, and a host with threaded NAPI has a thread a
 * queue. */
#define NT_NAPI_NO_TASKS 2u

/* Read the NAPIs of ONLY (a NIC of T), or of every NIC of T but bonds
 * when ONLY is NULL. Returns 0 or -ENOMEM; what cannot be read is left
 * unknown. Free OUT with nt_host_napi_free in every case. */
int nt_host_napi_read(const nt_topology *t, const nt_nic *only, unsigned flags, nt_host_napi *out);
void nt_host_napi_free(nt_host_napi *h);

/* H's record of N (a NIC of T), NULL when H is NULL or did not read it. */
const nt_napi_nic *nt_host_napi_nic(const nt_host_napi *h, const nt_topology *t, const nt_nic *n);

/* The IRQ (index into T->irqs, -1 none) serving queue QUEUE (TX when TX)
 * of N: the IRQ of the queue's NAPI where H's map of N is the family's
 * (netlink_map), else the IRQ-name heuristic (nt_nic_queue_irq). *SOURCE,
 * when not NULL, gets "netlink" or "irq-names". H may be NULL. */
int nt_host_napi_queue_irq(const nt_host_napi *h, const nt_topology *t, const nt_nic *n, int queue, bool tx,
			   const char **source);

/* The RX queue (first) whose IRQ is IRQ (an index into T->irqs) by H's
 * map of N when that is the family's: the queue number, or -1 when the
 * family names no queue for it. -2 when H has no family map of N (the
 * caller keeps the queue number parsed from the IRQ's name). */
int nt_host_napi_irq_queue(const nt_host_napi *h, const nt_topology *t, const nt_nic *n, int irq);

#endif
