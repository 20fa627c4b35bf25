/* SPDX-License-Identifier: Apache-2.0 */
/* dim-profile-default: adaptive RX coalescing on with the kernel's default
 * DIM profile, on a host whose profile in effect asked for latency.
 *
 * With adaptive_rx on, the driver's DIM moves each RX queue between the
 * five levels of its RX profile by the traffic it measures; the kernel's
 * defaults (lib/dim/net_dim.c, NET_DIM_RX_EQE_PROFILES: 1, 8, 64, 128 and
 * 256 us, 256 packets each; NET_DIM_RX_CQE_PROFILES: 2/256, 8/128, 16/64,
 * 32/64, 64/64) let it hold an interrupt up to 256 us (64 in CQE mode)
 * once the traffic looks like throughput, which is what a request/response
 * workload does not want. "Asked for latency" is read from what nettune
 * holds, never guessed from the traffic: the profile in effect
 * (nt_diag_options.profile: the desired state's, else the last applied
 * transaction's) is the shipped "latency" profile, by name. A NIC whose
 * driver keeps no profile (every driver but those using
 * net_dim_init_irq_moder, and every kernel before 6.11) has nothing to
 * compare, so no finding. One COALESCE_GET per physical NIC with
 * adaptive RX on, only when that profile is in effect.
 *
 * The fix keeps the kernel's default for levels 0 and 1 (the least
 * moderation, where DIM starts and where light traffic keeps it) and caps
 * the levels above at level 1's time (8 us in either mode), keeping each
 * level's packet count: DIM still adapts the packet threshold but never
 * waits longer than 8 us. That cap is nettune's choice, read off the
 * kernel's own table, not a vendor's recommendation; the message says so. */
#include "diagnose/diagnose_int.h"
#include "settings/setting.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { LEVELS = 5 };
typedef struct level {
	int usec, pkts;
} level;

/* lib/dim/net_dim.c, rx_profile[DIM_CQ_PERIOD_MODE_START_FROM_EQE] and
 * [..._FROM_CQE]. */
static const level rx_eqe[LEVELS] = { { 1, 256 }, { 8, 256 }, { 64, 256 }, { 128, 256 }, { 256, 256 } };
static const level rx_cqe[LEVELS] = { { 2, 256 }, { 8, 128 }, { 16, 64 }, { 32, 64 }, { 64, 64 } };

/* The level that caps the others in the fix. */
#define CAP_LEVEL 1

/* Field NAME of a "coalesce_params" report when the driver reports it,
 * else NULL. */
static const json_t *reported(const json_t *cp, const char *name)
{
	const json_t *f = json_object_get(cp, name);
	return json_is_true(json_object_get(f, "supported")) ? json_object_get(f, "value") : NULL;
}

/* Whether the levels of PROFILE (the report's array) have TABLE's usec
 * and pkts. A level without usec does not match; one without pkts (a
 * driver whose coal_flags have only usec) is judged by usec. */
static bool is_table(const json_t *profile, const level *table)
{
	if (json_array_size(profile) != LEVELS)
		return false;
	for (int k = 0; k < LEVELS; k++) {
		const json_t *lv = json_array_get(profile, (size_t)k);
		const json_t *u = json_object_get(lv, "usec"), *p = json_object_get(lv, "pkts");
		if (!json_is_integer(u) || json_integer_value(u) != table[k].usec ||
		    (p && json_integer_value(p) != table[k].pkts))
			return false;
	}
	return true;
}

static int add_finding(diag *d, const nt_nic *nic, const json_t *profile, const level *table, const char *mode,
		       bool mode_known)
{
	json_t *levels = json_array();
	for (int k = 0; levels && k < LEVELS; k++) {
		const json_t *lv = json_array_get(profile, (size_t)k);
		int usec = k > CAP_LEVEL ? table[CAP_LEVEL].usec : table[k].usec;
		json_t *o = json_pack("{s:i}", "usec", usec);
		if (o && json_object_get(lv, "pkts"))
			json_object_set_new(o, "pkts", json_integer(table[k].pkts));
		if (!o || json_array_append_new(levels, o) < 0) {
			json_decref(o);
			json_decref(levels);
			levels = NULL;
		}
	}
	if (!levels)
		return -ENOMEM;
	json_t *ev = json_pack("{s:s, s:b, s:O, s:s, s:s, s:s}", "interface", nic->name, "adaptive_rx", 1, "rx_profile",
			       profile, "default_of", mode, "profile", "latency", "source", d->profile_source);
	json_t *fix = json_pack("{s:[{s:s, s:o}]}", "coalesce", "interface", nic->name, "rx_profile", levels);
	if (!ev || !fix) {
		json_decref(ev);
		json_decref(fix);
		return -ENOMEM;
	}
	return diag_add_finding(d, "dim-profile-default", SEV_WARNING, nic->name, ev, fix,
				"%s: adaptive RX coalescing is on with the kernel's default DIM profile (%s mode%s: "
				"%d, %d, %d, %d and %d us), so under load the driver may hold an RX interrupt for up "
				"to %d us, while the profile in effect (%s) is \"latency\". Fix: an rx_profile that "
				"keeps the default's levels 0 and 1 and caps the levels above at level 1's %d us "
				"(each level's packet count kept), so DIM still adapts but never waits longer; the "
				"cap is nettune's choice from the kernel's own table (lib/dim/net_dim.c). "
				"adaptive_rx false with a fixed rx_usecs is the other way.",
				nic->name, mode, mode_known ? "" : ", the driver does not report its mode", table[0].usec,
				table[1].usec, table[2].usec, table[3].usec, table[4].usec, table[LEVELS - 1].usec,
				d->profile_source, table[CAP_LEVEL].usec);
}

int diag_check_dim_profile(diag *d)
{
	const char *name = json_string_value(json_object_get(d->profile, "name"));
	const nt_topology *t = d->t;
	int err = 0;

	if (!name || strcmp(name, "latency") != 0)
		return 0;
	for (int i = 0; !err && i < t->nnics; i++) {
		const nt_nic *nic = &t->nics[i];
		json_t *doc = NULL;
		/* adaptive_rx as the host read shows it: no read for a NIC
		 * without adaptive coalescing on. */
		if (!diag_nic_is_physical(nic) ||
		    !json_is_true(json_object_get(json_object_get(nic->reported, "coalesce"), "adaptive_rx")))
			continue;
		if (!(doc = json_object()))
			return -ENOMEM;
		if (nt_setting_report_detail_of("coalesce", d->ctx, d->eh, nic, doc) == -ENOMEM)
			err = -ENOMEM;
		const json_t *cp = json_object_get(doc, "coalesce_params");
		const json_t *prof = reported(cp, "rx_profile"), *cqe = reported(cp, "cqe_mode_rx");
		if (!err && json_is_array(prof)) {
			/* The mode the driver reports decides which default
			 * applies; without it, either. */
			bool eqe_ok = !cqe || json_is_false(cqe), cqe_ok = !cqe || json_is_true(cqe);
			if (eqe_ok && is_table(prof, rx_eqe))
				err = add_finding(d, nic, prof, rx_eqe, "EQE", cqe != NULL);
			else if (cqe_ok && is_table(prof, rx_cqe))
				err = add_finding(d, nic, prof, rx_cqe, "CQE", cqe != NULL);
		}
		json_decref(doc);
	}
	return err;
}
