/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's queues as the host model shows them, for one NIC at a time:
 * each RX queue with its IRQ, the CPUs that IRQ may run on and the one
 * serving it (effective affinity), and its RPS CPUs and RFS flow count;
 * each TX queue with its XPS CPUs and RX-queue pairing.
 *
 * Not part of the whole-host read (nt_topology_read): the 256-CPU tree
 * has 18 NICs of 65 queues, about 2,300 queue files, which would more
 * than double the files GET /v1/topology reads. They are read here, for
 * the one NIC GET /v1/nics/{name} or `nettune nics IF` shows, and by the
 * steering kinds and diagnostics for the NICs they are asked about: a
 * read costs 2 files per RX queue and 2 per TX queue of that NIC. */
#ifndef NT_HOST_QUEUES_H
#define NT_HOST_QUEUES_H

#include "host/topology.h"

#include <jansson.h>

struct nt_nd_qstats;

typedef struct nt_rxq {
	int queue;
	int irq; /* index into topology->irqs, -1 when no IRQ names the queue */
	long long napi_id; /* the NAPI serving it (host/napi.h), -1 unknown */
	int stats; /* index into nt_nic_queues.qstats (host/qstats.h), -1 none */
	nt_cpuset rps_cpus;
	long rps_flow_cnt;
	int rps_err, flow_err; /* 0, or why the file could not be read */
} nt_rxq;

typedef struct nt_txq {
	int queue;
	int irq; /* as for nt_rxq */
	long long napi_id; /* as for nt_rxq */
	int stats; /* as for nt_rxq */
	nt_cpuset xps_cpus, xps_rxqs;
	int xps_err, rxqs_err;
} nt_txq;

typedef struct nt_nic_queues {
	nt_rxq *rx;
	nt_txq *tx;
	int nrx, ntx;
	/* The queues' counters when nt_nic_qstats_report read them (owned,
	 * freed with the rest), NULL otherwise. */
	struct nt_nd_qstats *qstats;
	int nqstats;
} nt_nic_queues;

/* Read N's queues on T's host (T->ctx). A file that cannot be read is
 * noted in its queue's *_err and the read goes on. Returns 0, -errno when
 * the queues cannot be listed, or -ENOMEM; free OUT with
 * nt_nic_queues_free either way. */
int nt_nic_queues_read(const nt_topology *t, const nt_nic *n, nt_nic_queues *out);
void nt_nic_queues_free(nt_nic_queues *q);

/* The IRQ (index into T->irqs) that serves queue QUEUE of N, or -1: of
 * the NIC's IRQs naming that queue number, for RX one named for receive
 * or for both directions ("rx", "TxRx", "input", "comp"), for TX one named
 * for transmit or both ("tx", "TxRx", "output", "comp"), else any; for
 * queue 0 of a NIC with one IRQ that names no queue, that IRQ. */
int nt_nic_queue_irq(const nt_topology *t, const nt_nic *n, int queue, bool tx);

/* {"rx": [{"queue", "irq", "irq_cpus", "effective_cpus", "napi_id",
 * "rps_cpus", "rps_flow_cnt", "stats"}], "tx": [{"queue", "irq",
 * "irq_cpus", "effective_cpus", "napi_id", "xps_cpus", "xps_rxqs",
 * "stats"}]}: cpulists (xps_rxqs a list of RX queues), "stats" the
 * counters the kernel gave for the queue ({"rx_packets": N, ...}, only
 * those it gave; host/qstats.h), null for what could not be read or is
 * not there. New reference, NULL on ENOMEM. */
json_t *nt_nic_queues_json(const nt_topology *t, const nt_nic_queues *q);

/* N's RSS state for the per-NIC view: {"indir_size", "key_size",
 * "hfunc", "weights": [table entries per RX queue, by queue number],
 * "hash_fields": {"tcp4": "sdfn", ...}, "contexts": below} (not the
 * key itself), or null
 * when the NIC has no RSS or it cannot be read (kernel/rss.h). New
 * reference, NULL on ENOMEM. */
json_t *nt_nic_rss_json(const nt_topology *t, const nt_nic *n);
/* The NIC's RSS contexts, the "contexts" member of nt_nic_rss_json:
 * {"supported": true | false | null (not known: no answer either way),
 *  "reason" (when false), "listed_from" (how the ids were found),
 *  "list": [{"id", "table" (kernel/rss.h's text), "indir_size", "hfunc",
 *            "queues" (the RX queues the table names), "rules" (the
 *            locations of the flow rules sending flows to it)}]}.
 * New reference (json null on ENOMEM). */
json_t *nt_nic_rss_contexts_json(const nt_topology *t, const nt_nic *n);

#endif
