/* SPDX-License-Identifier: Apache-2.0 */
/* Live interrupt rates: two samples of /proc/interrupts and /proc/softirqs
 * a known interval apart, turned into per-second rates per IRQ per CPU,
 * totals per CPU and per NUMA node, and the interrupts that landed off
 * their NIC's node (the `sar -I` tables of
 * docs/field-reports.md#irq-remote-node, live). */
#ifndef NT_RATES_H
#define NT_RATES_H

#include "host/interrupts.h"
#include "host/topology.h"

typedef struct nt_irq_sample {
	nt_interrupts ints;
	int *soft_cpus; /* columns of /proc/softirqs */
	uint64_t *net_rx, *net_tx;
	int nsoft; /* 0 when /proc/softirqs was not readable */
	double t_ms; /* CLOCK_MONOTONIC when taken */
} nt_irq_sample;

/* Read both files once. Returns 0 or -errno / NT_EPARSE. */
int nt_rates_sample(const nt_ctx *ctx, nt_irq_sample *s);
void nt_rates_sample_free(nt_irq_sample *s);

/* Rates between A and B (B later). Pure: T supplies IRQ ownership and the
 * node of each CPU. IRQs that appear in only one sample are left out.
 * Returns a new JSON object or NULL when out of memory. */
json_t *nt_rates_compute(const nt_topology *t, const nt_irq_sample *a, const nt_irq_sample *b);

#endif
