/* SPDX-License-Identifier: Apache-2.0 */
/* The irqbalance finding (irqbalance-active): a running irqbalance rewrites
 * the affinity a profile sets. */
#include "diagnose/diagnose_int.h"

#include <errno.h>

int diag_check_irqbalance(diag *d)
{
	const nt_topology *t = d->t;
	if (!t->irqbalance.running)
		return 0;
	json_t *ev = json_pack("{s:b, s:i}", "running", 1, "pid", t->irqbalance.pid);
	if (ev && t->irqbalance.socket_path[0])
		json_object_set_new(ev, "socket_path", json_string(t->irqbalance.socket_path));
	/* "ban" keeps irqbalance for the other IRQs but tells it, over its
	 * socket, to leave the tuned ones alone. */
	json_t *fix = json_pack("{s:s}", "irqbalance", "ban");
	if (!fix) {
		json_decref(ev);
		return -ENOMEM;
	}
	return diag_add_finding(d, "irqbalance-active", SEV_WARNING, "irqbalance", ev, fix,
		"irqbalance is running (pid %d) and rewrites IRQ affinity periodically, so "
		"manual affinity will be undone unless it is told to leave those IRQs alone "
		"or stopped (see docs/field-reports.md#irqbalance-rewrites).",
		t->irqbalance.pid);
}
