/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's per-queue counters for the per-NIC view (GET /v1/nics/{name},
 * `nettune nics IF`): packets, bytes, drops, allocation failures, hardware
 * GRO, TX stop/wake, whatever the kernel's `qstats-get` gives for each
 * queue (Linux 6.9+, drivers that keep them: virtio_net, mlx5, bnxt, ice,
 * idpf, gve, netdevsim, ...), beside each queue's IRQ and NAPI.
 *
 * Like the queues and NAPIs (host/queues.h, host/napi.h) this is never part
 * of the whole-host read behind GET /v1/topology: it costs one netlink dump
 * for the one NIC shown (a fixture root: its document). */
#ifndef NT_HOST_QSTATS_H
#define NT_HOST_QSTATS_H

#include "host/queues.h"
#include "host/topology.h"

#include <jansson.h>

/* Read N's per-queue counters on T's host into Q (N's queues as
 * nt_nic_queues_read gave them; their "stats" in nt_nic_queues_json) and
 * add to DOC (N's JSON object) "queue_stats_source": "netlink" when the
 * kernel answered with counters for N, else null, and
 * "queue_stats_reason": null, or why there are none (a kernel before 6.9,
 * a driver that keeps none). Returns 0 or -ENOMEM; what cannot be read is
 * reported with its reason. */
int nt_nic_qstats_report(const nt_topology *t, const nt_nic *n, nt_nic_queues *q, json_t *doc);

#endif
