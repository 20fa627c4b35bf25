/* SPDX-License-Identifier: Apache-2.0 */
/* Where an application using a NIC should run: on the NIC's node, beside
 * but not on top of the CPUs serving interrupts
 * (docs/field-reports.md#irq-cpus-apart-from-app,
 * docs/field-reports.md#app-near-irqs).
 *
 * The first rule that gives CPUs chooses them (nt_placement.rule):
 *   "given"     the CPUs the caller named (--cpus-list), whatever the NIC;
 *   "reserved"  the CPUs the profile in effect reserved for the NIC
 *               (reserve_app_cpus), which its IRQ placement keeps free;
 *   "node-free" CPUs of the NIC's node that serve no NIC's interrupts and
 *               that the profile does not exclude (exclude_cpus);
 *   "node-shared" none is free: CPUs of the node that serve none of this
 *               NIC's interrupts, else the whole node (small hosts).
 * Hyper-thread siblings of CPUs serving interrupts are taken last.
 * A bond stands for its ports: their CPUs and nodes together.
 *
 * With threaded NAPI the receive work runs in the NAPI threads, not in the
 * softirq of the CPU the interrupt fired on: a CPU a NAPI thread is pinned
 * to (allowed on CPUs of one node at most, as an IRQ's placement) counts as
 * serving the NIC, like its IRQs' CPUs. A thread allowed everywhere says
 * nothing about where it runs and keeps no CPU busy. */
#ifndef NT_PLACEMENT_H
#define NT_PLACEMENT_H

#include "host/napi.h"
#include "host/topology.h"

/* What the edge knows beyond the host model: the profile in effect, and
 * CPUs named on the command line. Every member may be NULL. */
typedef struct nt_placement_hint {
	const json_t *reserved; /* interface -> cpulist (a plan's "reserved") */
	const nt_cpuset *exclude; /* the profile's exclude_cpus for the NIC */
	const nt_cpuset *given; /* --cpus-list */
	const char *source; /* where RESERVED and EXCLUDE come from ("transaction 3") */
	const nt_host_napi *napi; /* every NIC's NAPI threads (nt_host_napi_read) */
} nt_placement_hint;

typedef struct nt_placement {
	bool known; /* false: the NIC's node is unknown and no CPUs were given */
	int node; /* the (first) node, -1 unknown */
	nt_cpuset nodes; /* every node of the NIC (a bond's ports may span several) */
	nt_cpuset node_cpus; /* online CPUs of those nodes */
	nt_cpuset irq_cpus; /* CPUs serving the NIC's IRQs and its pinned NAPI threads */
	nt_cpuset napi_cpus; /* of those, the NAPI threads' */
	bool napi_known; /* the hint had the NAPI threads read */
	nt_cpuset app_cpus; /* recommended for the application */
	const char *rule; /* "given", "reserved", "node-free", "node-shared", "unknown" */
	char ports[256]; /* a bond's ports, comma-separated; "" otherwise */
	char reason[384]; /* why app_cpus is what it is */
} nt_placement;

/* Recommend CPUs for an application near NIC. WANT > 0 limits the count.
 * HINT may be NULL. Pure. Returns 0, or NT_ENOTFOUND when the NIC's node
 * is unknown and no CPUs were given (P->known is false and P->reason says
 * why and what to do). */
int nt_placement_for(const nt_topology *t, const nt_nic *nic, int want, const nt_placement_hint *hint,
		     nt_placement *p);

/* {"nic","node","nodes","known","rule","source","ports","irq_cpus","napi_cpus",
 *  "app_cpus","numactl","iperf3",...}; SOURCE as in the hint, or NULL. */
json_t *nt_placement_to_json(const nt_topology *t, const nt_nic *nic, const nt_placement *p,
			     const char *source);

#endif
