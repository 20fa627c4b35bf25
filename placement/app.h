/* Where an application using a NIC should run: on the NIC's node, beside
 * but not on top of the CPUs serving its interrupts
 * (docs/field-reports.md#irq-cpus-apart-from-app,
 * docs/field-reports.md#app-near-irqs). */
#ifndef NT_PLACEMENT_H
#define NT_PLACEMENT_H

#include "host/topology.h"

typedef struct nt_placement {
	bool known; /* false: the NIC's node is unknown, nothing is guessed */
	int node;
	nt_cpuset node_cpus; /* online CPUs of the node */
	nt_cpuset irq_cpus; /* CPUs serving the NIC's IRQs */
	nt_cpuset app_cpus; /* recommended for the application */
	char reason[256]; /* why app_cpus is what it is */
} nt_placement;

/* Recommend CPUs for an application near NIC. WANT > 0 limits the count
 * (hyper-thread siblings of IRQ CPUs are taken last). Pure. Returns 0, or
 * NT_ENOTFOUND when the NIC's node is unknown (P->known is false and
 * P->reason says why). */
int nt_placement_for(const nt_topology *t, const nt_nic *nic, int want, nt_placement *p);

/* {"nic","node","known","irq_cpus","app_cpus","numactl","iperf3",...} */
json_t *nt_placement_to_json(const nt_topology *t, const nt_nic *nic, const nt_placement *p);

#endif
