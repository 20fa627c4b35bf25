/* SPDX-License-Identifier: Apache-2.0 */
/* Counters of a host over a run, for `nettune bench-run`: a snapshot built
 * from the agent's read documents (GET /v1/topology, /v1/nics, /v1/irqs)
 * and the NET_RX row of /proc/softirqs, and the change between two
 * snapshots. Pure: no I/O, documents are borrowed. */
#ifndef NT_HOST_COUNTERS_H
#define NT_HOST_COUNTERS_H

#include "host/cpustat.h"

#include <jansson.h>
#include <stdint.h>

/* What a snapshot is made of; any part may be NULL (or its count 0): that
 * part is left empty. Documents and arrays are borrowed. */
typedef struct nt_counters_input {
	const json_t *topology; /* GET /v1/topology: numa_nodes[].cpus */
	const json_t *nics; /* GET /v1/nics: nics[].stats, numa_node */
	const json_t *irqs; /* GET /v1/irqs: irqs[].owner, per_cpu */
	/* GET /v1/nics/{name} of each NIC whose queues are looked at, an
	 * array: name, queue_stats_source, queue_stats_reason and
	 * queues.rx[]/tx[] with each queue's "stats" (host/qstats.h). */
	const json_t *nic_queues;
	/* /proc/softirqs: NSOFT columns, CPU numbers SOFT_CPUS, the NET_RX
	 * and NET_TX rows (host/interrupts.h) */
	const int *soft_cpus;
	const uint64_t *net_rx, *net_tx;
	int nsoft;
	/* /proc/stat: NCPU_TIME rows (host/cpustat.h), in ticks of HZ a
	 * second */
	const nt_cpu_time *cpu_time;
	int ncpu_time;
	long hz;
	/* The CPUs COMMAND was bound to (bench-run --near): NAPP of them, or
	 * none when it ran wherever the scheduler put it. */
	const int *app_cpus;
	int napp;
} nt_counters_input;

/* A new snapshot document
 *   {"cpu_node": {CPU: NODE}, "nics": {NAME: {"numa_node": N|null, COUNTER: n, ...}},
 *    "irqs": {IRQ: {"nic": NAME|null, "per_cpu": {CPU: n}}}, "net_rx": {CPU: n},
 *    "net_tx": {CPU: n}, "cpu_time": {CPU: [user, nice, system, idle, iowait, irq,
 *    softirq, steal]}, "hz": HZ, "app_cpus": [CPU...] (only when bound),
 *    "queues": {NAME: {"source": "netlink"|null, "reason": text|null,
 *                      "rx": {QUEUE: {"packets": n, "bytes": n}}, "tx": {...}}}}
 * from IN (a queue's "packets" and "bytes" only where the kernel gave them). Returns NULL only when out of memory. The caller owns it. */
json_t *nt_counters_snapshot(const nt_counters_input *in);

/* The change from snapshot A to snapshot B:
 *   {"nics": [{"name", "numa_node", COUNTER: delta, ...}],
 *    "interrupts": {"cpus": [{"cpu", "node", "all", "nic"}], "nodes": [{"node", "all", "nic"}],
 *                   "nic": n, "nic_off_node": n, "off_node_share": fraction|null},
 *    "softirq_net_rx": {"cpus": [{"cpu", "count"}], "total": n},
 *    "softirq_net_tx": the same of NET_TX,
 *    "cpu_time": {"hz", "seconds", "cpus": [{"cpu", "node", "busy_s", "user_s", "system_s",
 *                 "irq_s", "softirq_s", "idle_s", "steal_s", "busy_share"}],
 *                 "total": {"cpus", "busy_s", "user_s", ...},
 *                 "classes": {"nic_irq": {"cpus": n, "list": [CPU...], "busy_s", ...},
 *                             "app": {..., "with_nic_irq": [CPU...]},
 *                             "other": {...}}} or null,
 *    "queues": [{"nic", "source", "reason", "rx": [{"queue", "packets", "bytes"}], "tx": [...],
 *                "rx_packets", "tx_packets", "rx_top", "tx_top"}],
 *    "queue_skew": ["enos0: RX queue 3 took 98% of 1.2M packets", ...],
 *    "queue_stats_missing": [{"reason", "nics": [NAME...]}]}
 * NICs and IRQs present in both only. A NIC's "queues" row lists each
 * queue the kernel counted in both snapshots (source "netlink" in both;
 * "packets"/"bytes" null where it keeps no such counter), the NIC's totals
 * (null without any) and, per direction, the queue that took most of the
 * packets ("rx_top": {"queue", "packets", "share"}, null without packets).
 * A direction whose busiest queue took NT_COUNTERS_SKEW_SHARE or more of
 * at least NT_COUNTERS_SKEW_MIN packets on a NIC that counted two queues
 * or more says so in "queue_skew", one line each. A NIC without per-queue
 * counters has source null and the agent's reason; "queue_stats_missing"
 * gathers such NICs by reason, so that each is said once. "all" counts every IRQ, "nic" those of
 * a NIC; an interrupt of a NIC with a known node served by a CPU of another
 * node is off-node (its share is of the NIC interrupts of NICs with a known
 * node; null when there were none). A counter that went down (the NIC was
 * re-created, the counter wrapped) counts from zero. CPU time is in
 * seconds: user_s holds nice, busy_s is user, system, irq and softirq
 * (not idle, iowait or steal), busy_share busy_s of the CPU's whole time
 * over the interval ("seconds", the longest CPU's); the classes split the
 * CPUs into those that served NIC interrupts over the interval and the
 * rest, which is what a round burned for the NIC against what it burned
 * elsewhere (the application, mostly). When B names the CPUs COMMAND was
 * bound to ("app_cpus"), those of them that served no NIC interrupt are
 * the class "app" and the rest ("other") is what neither burned; an
 * application CPU that also served NIC interrupts stays in nic_irq (what
 * it burned cannot be split) and is listed in app's "with_nic_irq", a
 * placement gone wrong. Without "app_cpus" there is no "app" class: where
 * an unbound COMMAND ran is not known. cpu_time is null without CPU time
 * in both snapshots. Returns NULL only when out of memory. The caller
 * owns it. */
json_t *nt_counters_delta(const json_t *a, const json_t *b);

/* When one queue "took (nearly) all the packets": 90% of a direction's
 * packets, where an even spread gives each of N queues 1/N; and not on a
 * round of a few stray packets (ARP, neighbour discovery). */
#define NT_COUNTERS_SKEW_SHARE 0.9
#define NT_COUNTERS_SKEW_MIN 1000

#endif
