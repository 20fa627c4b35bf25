/* SPDX-License-Identifier: Apache-2.0 */
/* IRQ placement: which CPUs each of a NIC's interrupts goes to.
 *
 * Two ways to ask: named CPUs, dealt to the NIC's IRQs one CPU each,
 * round-robin in IRQ order (as Mellanox's set_irq_affinity_cpulist.sh
 * does, docs/field-reports.md#set-irq-affinity-cpulist), or a strategy working from the NIC's NUMA node:
 *   "local"       one CPU each from the NIC's node, one thread of every core
 *                 before any hyper-thread sibling; NICs sharing a node
 *                 continue where the previous one stopped and never start
 *                 on a CPU another NIC starts on;
 *   "local-node"  every IRQ gets the whole usable node mask.
 * Placement is pure: it reads the host model and writes nothing. One
 * nt_irq_placement carries what the NICs of one plan share. */
#ifndef NT_PLACEMENT_IRQ_H
#define NT_PLACEMENT_IRQ_H

#include "host/topology.h"

#include <jansson.h>

typedef struct nt_irq_placement nt_irq_placement;

/* State for placing the NICs of host T in one plan. Returns 0 or -ENOMEM. */
int nt_irq_placement_new(const nt_topology *t, nt_irq_placement **out);
void nt_irq_placement_free(nt_irq_placement *p);

/* Whether NAME is a strategy ("local", "local-node"). */
bool nt_irq_strategy_known(const char *name);

typedef struct nt_irq_request {
	const nt_cpuset *cpus; /* named CPUs, or NULL for a strategy */
	const char *strategy; /* when CPUS is NULL */
	nt_cpuset exclude; /* CPUs never used */
	int reserve_app_cpus; /* CPUs of the node kept for the application */
} nt_irq_request;

/* The IRQs of NIC (its index in t->nics) the kernel lets us move, and a
 * mask for each. *IRQS (indexes into t->irqs, ascending by IRQ number) and
 * *SETS are malloc'd with *N entries; *N is 0 when the NIC is left out, with
 * a warning in WARNINGS saying why. When RESERVED (a JSON object) is not
 * NULL it gets NIC -> cpulist of the CPUs reserve_app_cpus kept. PATTERN is
 * the interface pattern that named the NIC (a glob matching NICs without
 * IRQs is not worth a warning). Returns 0 or -errno. */
int nt_irq_place(nt_irq_placement *p, int nic, const char *pattern, const nt_irq_request *req,
		 int **irqs, nt_cpuset **sets, int *n, json_t *warnings, json_t *reserved);

/* The CPUs a NIC's IRQs may use by locality: its node's online CPUs, or
 * its device's local_cpus when the node is not known. False when neither
 * is known (numa_node -1, no local_cpulist): nettune does not guess. */
bool nt_nic_local_cpus(const nt_topology *t, const nt_nic *nic, nt_cpuset *out);

/* Deal the CPUs of SET to N IRQs round-robin, one CPU each, starting with
 * the START-th CPU of the set. Returns 0, or -ENOENT when SET is empty. */
int nt_deal_cpus(const nt_cpuset *set, int start, int n, int *out);

/* reserve_app_cpus: N CPUs of ORDER (placement order, M of them) kept for
 * the application, taken whole cores at a time from the end of the node,
 * so that the application does not share a core with the IRQs. A core's
 * place is its lowest CPU on the host, whatever exclude_cpus took out of
 * ORDER; cores with a thread missing from ORDER come only after the whole
 * ones. Into RESERVED. Returns 0, -ENOSPC when N leaves no CPU for the
 * IRQs, or -ENOMEM. */
int nt_reserve_app_cpus(const nt_topology *t, const int *order, int m, int n, nt_cpuset *reserved);

#endif
