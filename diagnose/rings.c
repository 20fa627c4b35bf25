/* SPDX-License-Identifier: Apache-2.0 */
/* NIC queue findings (rings, channels, coalescing): so far one, an RX ring
 * below its maximum (ring-below-max), an error when the NIC counts drops:
 * over a recent window or since the ring last changed when the caller
 * knows them (nt_diag_options.recent_drops), else since boot. */
#include "diagnose/diagnose_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* RX drops at 40 Gbit/s with a ring of 1024 out of 8192 on a 100G host
 * (docs/field-reports.md#ring-rx-drops). */
int diag_check_rings(diag *d)
{
	const nt_topology *t = d->t;
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *nic = &t->nics[i];
		if (!nic->has_rings || nic->rings.rx_max == 0 || nic->rings.rx >= nic->rings.rx_max)
			continue;
		uint64_t drops = 0;
		if (nic->has_stats)
			drops = nic->rx_dropped + nic->rx_missed + nic->rx_fifo_errors;
		json_t *ev = json_pack("{s:I, s:I}", "rx", (json_int_t)nic->rings.rx, "rx_max",
			(json_int_t)nic->rings.rx_max);
		if (ev && nic->has_stats) {
			json_object_set_new(ev, "rx_dropped", json_integer((json_int_t)nic->rx_dropped));
			json_object_set_new(ev, "rx_missed", json_integer((json_int_t)nic->rx_missed));
			json_object_set_new(ev, "rx_fifo_errors",
				json_integer((json_int_t)nic->rx_fifo_errors));
			json_object_set_new(ev, "rx_drops_total", json_integer((json_int_t)drops));
		}
		json_t *fix = json_pack("{s:[{s:s, s:s}]}", "rings", "interface", nic->name, "rx", "max");
		if (!fix) {
			json_decref(ev);
			return -ENOMEM;
		}
		int err;
		/* Drops since boot never fall: judged alone they would keep the
		 * finding after a raised ring stopped them. */
		const json_t *rec = json_object_get(d->recent_drops, nic->name);
		if (rec) {
			uint64_t recent = (uint64_t)json_integer_value(json_object_get(rec, "drops"));
			long long secs = (long long)(json_integer_value(json_object_get(rec, "over_ms")) / 1000);
			bool since_change = !strcmp(json_string_value(json_object_get(rec, "since")) ?: "", "ring-change");
			if (recent == 0) {
				json_decref(ev);
				json_decref(fix);
				continue;
			}
			char when[96];
			snprintf(when, sizeof(when), since_change ? "in the %lld s since its RX ring last changed"
								  : "over the last %lld s", secs);
			if (ev)
				json_object_set_new(ev, "recent", json_deep_copy(rec));
			err = diag_add_finding(d, "ring-below-max", SEV_ERROR, nic->name, ev, fix,
				"%s dropped %" PRIu64 " received packets %s (dropped, missed or "
				"FIFO errors) with its RX ring at %u of a possible %u; a larger ring "
				"absorbs bursts (see docs/field-reports.md#ring-rx-drops).",
				nic->name, recent, when, nic->rings.rx, nic->rings.rx_max);
		} else if (drops > 0)
			err = diag_add_finding(d, "ring-below-max", SEV_ERROR, nic->name, ev, fix,
				"%s drops received packets (%" PRIu64 " dropped, missed or FIFO "
				"errors since boot) with its RX ring at %u of a possible %u; a larger ring "
				"absorbs bursts (see docs/field-reports.md#ring-rx-drops).",
				nic->name, drops, nic->rings.rx, nic->rings.rx_max);
		else
			err = diag_add_finding(d, "ring-below-max", SEV_INFO, nic->name, ev, fix,
				"%s has its RX ring at %u of a possible %u; no drops counted since boot.",
				nic->name, nic->rings.rx, nic->rings.rx_max);
		if (err)
			return err;
	}
	return 0;
}
