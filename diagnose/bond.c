/* SPDX-License-Identifier: Apache-2.0 */
/* The bond finding (bond-hash-layer2): a hashing bond that hashes on layer 2
 * sends all traffic to one peer over one port. */
#include "diagnose/diagnose_int.h"

#include <errno.h>
#include <string.h>

/* Bonding modes that do not use xmit_hash_policy: balance-rr deals packets
 * round-robin, active-backup sends on one slave, broadcast on all. */
static bool bond_mode_hashes(const nt_bond *b)
{
	static const char *const unhashed[] = { "balance-rr", "active-backup", "broadcast" };
	if (b->mode[0]) {
		for (size_t i = 0; i < sizeof(unhashed) / sizeof(unhashed[0]); i++) {
			size_t l = strlen(unhashed[i]);
			/* sysfs spells it "balance-rr 0" */
			if (strncmp(b->mode, unhashed[i], l) == 0 &&
				(b->mode[l] == '\0' || b->mode[l] == ' '))
				return false;
		}
		return true;
	}
	return !(b->mode_num == 0 || b->mode_num == 1 || b->mode_num == 3);
}

/* layer2+3 hashing put one client on one port (~10 Gbit/s); layer3+4
 * spread its connections (18+ Gbit/s)
 * (docs/field-reports.md#bond-hash-layer3-4). */
int diag_check_bonds(diag *d)
{
	const nt_topology *t = d->t;
	for (int i = 0; i < t->nbonds; i++) {
		const nt_bond *b = &t->bonds[i];
		if (strcmp(b->xmit_hash_policy, "layer2") != 0 &&
			strcmp(b->xmit_hash_policy, "layer2+3") != 0)
			continue;
		if (b->nslaves < 2 || !bond_mode_hashes(b))
			continue;
		json_t *slaves = json_array();
		for (int s = 0; slaves && s < b->nslaves; s++)
			if (json_array_append_new(slaves, json_string(b->slaves[s])) < 0) {
				json_decref(slaves);
				slaves = NULL;
			}
		json_t *ev = json_pack("{s:s, s:s, s:o}", "mode", b->mode, "xmit_hash_policy",
			b->xmit_hash_policy, "slaves", slaves);
		json_t *fix = json_pack("{s:[{s:s, s:s}]}", "bonds", "interface", b->name,
			"xmit_hash_policy", "layer3+4");
		if (!fix) {
			json_decref(ev);
			return -ENOMEM;
		}
		int err = diag_add_finding(d, "bond-hash-layer2", SEV_WARNING, b->name, ev, fix,
			"%s hashes on %s, so all traffic to one peer leaves by one of its %d ports "
			"(one client got ~10 Gbit/s on a 100G bond, 18+ Gbit/s after layer3+4; "
			"see docs/field-reports.md#bond-hash-layer3-4).",
			b->name, b->xmit_hash_policy, b->nslaves);
		if (err)
			return err;
	}
	return 0;
}
