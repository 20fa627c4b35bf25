/* SPDX-License-Identifier: Apache-2.0 */
/* The facts a plan rests on beyond its steps' targets, so that a plan
 * kept by id (engine/plan_ids.h) and applied later is refused when the
 * host under it changed (409 plan-moved), not only when a target moved:
 * the online CPUs (a plan places IRQs and RPS on CPUs that were online),
 * and for each interface its steps name, that it is still there as the
 * same link (its ifindex: a link deleted and made again gets a new one),
 * with as many RX and TX queues and the same MSI IRQs (device/msi_irqs),
 * which a plan of IRQ affinity, RPS, XPS or RSS was made for.
 *
 * Read the same way when the plan is made and when it is applied, from a
 * handful of sysfs files and directories per interface: never the whole
 * host model (the read an apply by id saves). */
#ifndef NT_PLAN_FACTS_H
#define NT_PLAN_FACTS_H

#include "engine/plan.h"

#include <jansson.h>

/* The facts PLAN rests on, read now through CTX: {"cpus_online":
 * "0-63", "interfaces": {"eth0": {"ifindex": 2, "rx_queues": 8,
 * "tx_queues": 8, "irqs": "177-184"}, "eth9": null (absent)}}. A fact
 * that cannot be read is left out, and so never compared. New reference,
 * NULL on ENOMEM. */
json_t *nt_plan_facts(const nt_ctx *ctx, const nt_plan *plan);

/* What differs between PLANNED (nt_plan_facts when the plan was made)
 * and NOW, each as {"fact": "cpus_online" | "present" | "ifindex" |
 * "rx_queues" | "tx_queues" | "irqs", "interface"?, "planned", "now"}
 * (strings; "now" null for an interface gone), with a sentence for the
 * first in SAY ("" when none). Returns the array (empty when nothing
 * changed; new reference) or NULL on ENOMEM. */
json_t *nt_plan_facts_diff(const json_t *planned, const json_t *now, char *say, size_t saysize);

#endif
