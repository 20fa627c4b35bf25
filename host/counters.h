/* SPDX-License-Identifier: Apache-2.0 */
/* Counters of a host over a run, for `nettune bench-run`: a snapshot built
 * from the agent's read documents (GET /v1/topology, /v1/nics, /v1/irqs)
 * and the NET_RX row of /proc/softirqs, and the change between two
 * snapshots. Pure: no I/O, documents are borrowed. */
#ifndef NT_HOST_COUNTERS_H
#define NT_HOST_COUNTERS_H

#include <jansson.h>
#include <stdint.h>

/* A new snapshot document
 *   {"cpu_node": {CPU: NODE}, "nics": {NAME: {"numa_node": N|null, COUNTER: n, ...}},
 *    "irqs": {IRQ: {"nic": NAME|null, "per_cpu": {CPU: n}}}, "net_rx": {CPU: n}}
 * from TOPOLOGY (numa_nodes[].cpus), NICS (nics[].stats, numa_node), IRQS
 * (irqs[].owner, per_cpu) and NSOFT softirq columns (CPU numbers SOFT_CPUS,
 * counts NET_RX). Any of them may be NULL (or NSOFT 0): that part is left
 * empty. Returns NULL only when out of memory. The caller owns it. */
json_t *nt_counters_snapshot(const json_t *topology, const json_t *nics, const json_t *irqs,
			     const int *soft_cpus, const uint64_t *net_rx, int nsoft);

/* The change from snapshot A to snapshot B:
 *   {"nics": [{"name", "numa_node", COUNTER: delta, ...}],
 *    "interrupts": {"cpus": [{"cpu", "node", "all", "nic"}], "nodes": [{"node", "all", "nic"}],
 *                   "nic": n, "nic_off_node": n, "off_node_share": fraction|null},
 *    "softirq_net_rx": {"cpus": [{"cpu", "count"}], "total": n}}
 * NICs and IRQs present in both only. "all" counts every IRQ, "nic" those of
 * a NIC; an interrupt of a NIC with a known node served by a CPU of another
 * node is off-node (its share is of the NIC interrupts of NICs with a known
 * node; null when there were none). A counter that went down (the NIC was
 * re-created, the counter wrapped) counts from zero. Returns NULL only when
 * out of memory. The caller owns it. */
json_t *nt_counters_delta(const json_t *a, const json_t *b);

#endif
