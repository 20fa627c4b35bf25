/* SPDX-License-Identifier: Apache-2.0 */
/* RSS "queues": "placed" (settings/rss.c's "rss" section): the RX queues
 * whose IRQs this profile's irq_affinity places on one NUMA node, the
 * NIC's own or the entry's "node", and off the CPUs it reserves for
 * applications (reserve_app_cpus), for the NIC's table or an RSS
 * context's. Private to settings/. */
#ifndef NT_RSS_PLACED_H
#define NT_RSS_PLACED_H

#include "settings/section.h"

/* Which of NQ RX queues are placed: CPUS[q] (the CPUs serving queue q's
 * IRQ; NULL or empty when no IRQ is known to serve it) within WANT and
 * clear of RESERVED (may be NULL). ON and OFF get the queue numbers.
 * Returns how many are on. Pure. */
int nt_rss_placed_pick(const nt_cpuset *const *cpus, int nq, const nt_cpuset *want, const nt_cpuset *reserved,
		       nt_cpuset *on, nt_cpuset *off);

/* IRQ numbers IRQS (N, in queue order) as the plan's text: "141..148" for
 * a run up or down by one, else "141,150,152" (shortened with ",..." when
 * it does not fit). Pure. */
void nt_rss_irq_list_format(const int *irqs, int n, char *out, size_t size);

/* Check ENTRY's "node" at BASE ("$.rss[0]"): an integer, with "queues":
 * "placed", naming a node C's host has (else the error names the host's
 * nodes). */
void nt_rss_placed_validate(nt_section_check *c, const json_t *entry, const char *base);

/* The placed queues of NIC for ENTRY (entry I of "rss") among its first
 * RINGS RX queues: W[q] 1 for each, 0 else. The plan's warnings say
 * which node and which IRQs it followed. Returns the count; 0 when none
 * is placed, with a warning, or for a context (which flow rules need) a
 * refusal in REFUSAL (a message for the profile's 422, "" otherwise). */
int nt_rss_placed_weights(nt_section_plan *p, const json_t *entry, const nt_nic *nic, int rings, uint32_t *w,
			  char *refusal, size_t rsize);

#endif
