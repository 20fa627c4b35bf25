/* SPDX-License-Identifier: Apache-2.0 */
/* CPU order for placement: which CPUs are threads of one core, and the
 * order that reaches a core's second thread only after every core's first.
 * Shared by IRQ placement (placement/irq.c) and application placement
 * (placement/app.c), so both agree on what a sibling is. */
#ifndef NT_PLACEMENT_CPUS_H
#define NT_PLACEMENT_CPUS_H

#include "host/topology.h"

/* Whether CPUs A and B are threads of one core (package and core id
 * agree). A CPU the topology could not place is a core of its own. */
bool nt_cpus_same_core(const nt_topology *t, int a, int b);

/* Whether CPU shares a core with some other CPU of SET. */
bool nt_cpus_sibling_of_any(const nt_topology *t, int cpu, const nt_cpuset *set);

/* The CPUs of SET in placement order: one thread of every core,
 * ascending, before any second thread, so work reaches hyper-thread
 * siblings last. OUT has room for nt_cpuset_count(SET). Returns the count. */
int nt_cpus_siblings_last(const nt_topology *t, const nt_cpuset *set, int *out);

#endif
