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

#endif
