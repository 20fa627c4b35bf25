/* SPDX-License-Identifier: Apache-2.0 */
/* The culprit sentences of the drift report (agent/drift_culprit.h). */
#include "agent/drift_culprit.h"
#include "host/topology.h"
#include "kernel/events.h"
#include "kernel/irqbalance_client.h"
#include "settings/setting.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Who probably undoes KIND TARGET, in a sentence; read when a target turns
 * contested (rarely), so the host read here costs nothing in the steady
 * state. */
json_t *nt_drift_culprit(const nt_ctx *ctx, const json_t *last_ethtool, const char *kind, const char *target,
			 const char *iface)
{
	char buf[512];
	if (!strcmp(kind, "irq_affinity")) {
		nt_topology *t = NULL;
		bool running = false;
		int pid = 0;
		if (nt_topology_read(ctx, &t) == 0) {
			running = t->irqbalance.running;
			pid = t->irqbalance.pid;
		}
		nt_topology_free(t);
		if (!running) {
			snprintf(buf, sizeof(buf),
				 "another program writes /proc/irq/%s/smp_affinity (irqbalance is not "
				 "running)", target);
			return json_string(buf);
		}
		/* irqbalance leaves banned IRQs alone: ask it whether this one is,
		 * where it can be asked (the live host). */
		nt_irqbalance_proc p;
		char reply[4096], banned[2048] = "", padded[2056], needle[32];
		int known = 0;
		if (nt_irqbalance_controllable(ctx, NULL, 0) == 0 &&
		    nt_irqbalance_find(ctx, &p) == 0 && p.pid &&
		    nt_irqbalance_command(&p, "setup", reply, sizeof(reply)) > 0 &&
		    nt_irqbalance_parse_banned(reply, banned, sizeof(banned)) == 0) {
			snprintf(padded, sizeof(padded), " %s ", banned);
			snprintf(needle, sizeof(needle), " %s ", target);
			known = strstr(padded, needle) ? 1 : -1;
		}
		if (known > 0)
			snprintf(buf, sizeof(buf),
				 "another program writes /proc/irq/%s/smp_affinity (irqbalance, pid %d, "
				 "has it banned)", target, pid);
		else
			snprintf(buf, sizeof(buf),
				 "irqbalance (pid %d) is running and IRQ %s is %s from it: give the "
				 "profile \"irqbalance\": \"ban\" (or \"stop\")", pid, target,
				 known < 0 ? "not banned" : "probably not banned");
		return json_string(buf);
	}
	if (nt_setting_changed_by_event(kind, NT_EVENT_ETHTOOL)) {
		const char *what = json_string_value(json_object_get(last_ethtool, "what"));
		const char *on = json_string_value(json_object_get(last_ethtool, "interface"));
		const char *at = json_string_value(json_object_get(last_ethtool, "at"));
		if (what)
			snprintf(buf, sizeof(buf),
				 "another ethtool netlink client (the last notification not from "
				 "nettune: %s of %s at %s; the kernel does not say who sent it)",
				 what, on && *on ? on : "?", at ? at : "?");
		else
			snprintf(buf, sizeof(buf),
				 "another program changes %s of %s (ethtool -G/-L/-C, a driver "
				 "reset); no ethtool notification was seen", kind, iface);
		return json_string(buf);
	}
	if (!strcmp(kind, "sysctl")) {
		snprintf(buf, sizeof(buf),
			 "another program writes %s (sysctl -w, a sysctl.d file applied again, a "
			 "tuning daemon); the kernel sends no event for sysctls", target);
		return json_string(buf);
	}
	const nt_setting_kind *k = nt_setting_find(kind);
	if (k && k->culprit)
		snprintf(buf, sizeof(buf), "another program changes %s %s (%s)", kind, target, k->culprit);
	else
		snprintf(buf, sizeof(buf), "another program changes %s %s", kind, target);
	return json_string(buf);
}

/* Who holds KIND TARGET now that the plan found CURRENT there, not the
 * desired value, and the transaction of ours that wrote the target last
 * (the journal), so a rule of ours changed in place reads as what it is.
 * Read once, when the target turns taken. */
json_t *nt_drift_taken_culprit(nt_store *store, const json_t *t)
{
	const char *kind = json_string_value(json_object_get(t, "kind"));
	const char *target = json_string_value(json_object_get(t, "target"));
	const char *cur = json_string_value(json_object_get(t, "current"));
	json_t *lc = NULL;
	char ours[96] = "", buf[768];
	if (store && nt_store_last_change(store, kind, target, &lc) == 0)
		snprintf(ours, sizeof(ours), " after nettune's transaction %lld wrote it last",
			 (long long)json_integer_value(json_object_get(lc, "txn")));
	json_decref(lc);
	snprintf(buf, sizeof(buf),
		 "another program put '%s' at %s %s%s; nettune does not write over it (it is held "
		 "again once that is removed)", cur ? cur : "?", kind, target, ours);
	return json_string(buf);
}
