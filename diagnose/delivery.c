/* SPDX-License-Identifier: Apache-2.0 */
/* irq-delivered-elsewhere: the agent's last delivery check (host/delivery.h)
 * saw a NIC IRQ's interrupts on CPUs outside where it was placed (or, never
 * placed, outside its affinity), or another IRQ's the agent placed
 * (other_irqs), which is then named by its /proc/interrupts name. The affinity files may read right all the
 * while: a driver or interrupt controller that ignores the mask, another
 * tool moving it in between, a kernel-managed vector (docs/api.md). No fix
 * is offered: writing the same mask again is what did not work. */
#include "diagnose/diagnose_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int nt_diagnose_add_delivery(json_t *diagnosis, const json_t *check, int64_t now_ms)
{
	size_t i;
	json_t *e;
	int64_t at = json_integer_value(json_object_get(check, "at_ms"));
	long long ago_s = at && now_ms >= at ? (long long)((now_ms - at) / 1000) : 0;

	json_array_foreach(json_object_get(check, "irqs"), i, e) {
		const char *v = json_string_value(json_object_get(e, "verdict"));
		const char *nic = json_string_value(json_object_get(e, "nic"));
		if (!nic)
			nic = json_string_value(json_object_get(e, "name"));
		if (!v || strcmp(v, "elsewhere") || !nic)
			continue;
		const json_t *placed = json_object_get(e, "placed");
		const char *where = json_is_string(placed) ? json_string_value(placed)
							    : json_string_value(json_object_get(e, "affinity"));
		char cpus[256] = "";
		size_t k, len = 0;
		json_t *x;
		long long outside = 0;
		json_array_foreach(json_object_get(e, "elsewhere"), k, x) {
			long long n = (long long)json_integer_value(json_object_get(x, "count"));
			int w = snprintf(cpus + len, sizeof(cpus) - len, "%s%lld (%lld)", len ? ", " : "",
					 (long long)json_integer_value(json_object_get(x, "cpu")), n);
			if (w > 0 && (size_t)w < sizeof(cpus) - len)
				len += (size_t)w;
			outside += n;
		}
		char msg[768];
		snprintf(msg, sizeof(msg),
			 "IRQ %lld (%s) is %s CPU(s) %s, but %lld of its %lld interrupts in the delivery check "
			 "of %.0f ms %llds ago came on CPU %s: something moved it, or the kernel does not honour "
			 "the mask",
			 (long long)json_integer_value(json_object_get(e, "irq")), nic,
			 json_is_string(placed) ? "placed on" : "allowed", where ? where : "?", outside,
			 (long long)json_integer_value(json_object_get(e, "total")),
			 json_real_value(json_object_get(check, "window_ms")), ago_s, cpus);
		/* The packets its queues carried (qstats-get), null where the
		 * kernel keeps none: interrupts elsewhere with traffic moving. */
		json_t *f = json_pack("{s:s, s:s, s:s, s:s, s:{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O}, s:n}", "id",
				      "irq-delivered-elsewhere", "severity", diag_sev_names[SEV_WARNING], "subject",
				      nic, "message", msg, "evidence", "irq", json_object_get(e, "irq"), "placed",
				      placed ? placed : json_null(), "affinity", json_object_get(e, "affinity"),
				      "counts", json_object_get(e, "counts"), "elsewhere", json_object_get(e, "elsewhere"),
				      "window_ms", json_object_get(check, "window_ms"), "at_ms",
				      json_object_get(check, "at_ms") ? json_object_get(check, "at_ms") : json_null(),
				      "queue_packets", json_object_get(e, "queue_packets") ?: json_null(), "fix");
		if (diag_insert_finding(diagnosis, SEV_WARNING, f) < 0)
			return -ENOMEM;
	}
	return 0;
}
