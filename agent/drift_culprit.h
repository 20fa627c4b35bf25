/* SPDX-License-Identifier: Apache-2.0 */
#ifndef NT_AGENT_DRIFT_CULPRIT_H
#define NT_AGENT_DRIFT_CULPRIT_H
/* Who undoes a held target, in a sentence for the drift report: asked
 * when a target turns contested, so that the steady state reads nothing
 * for it. */
#include "kernel/ctx.h"
#include "store/store.h"

#include <jansson.h>

/* Who probably keeps undoing KIND TARGET (of interface IFACE, "" none):
 * irqbalance and whether it has the IRQ banned, another ethtool netlink
 * client (LAST_ETHTOOL: the last notification not from nettune, or NULL),
 * a sysctl writer, or what the kind's file names. A new string. */
json_t *nt_drift_culprit(const nt_ctx *ctx, const json_t *last_ethtool, const char *kind, const char *target,
			 const char *iface);

/* The sentence for a target another program's value holds (T: the plan's
 * taken entry, with kind, target and current), naming nettune's last
 * transaction that wrote it when STORE has one. A new string. */
json_t *nt_drift_taken_culprit(nt_store *store, const json_t *t);

#endif
