/* SPDX-License-Identifier: Apache-2.0 */
/* Offload feature findings, each with the profile fragment that mends it:
 *   lro-forwarding     LRO on while the host forwards or the port is in a
 *                      bridge: merged segments cannot be forwarded as they
 *                      came (the kernel warns and drops them);
 *   gro-off            GRO off on a NIC of 10 Gbit/s or more, which then
 *                      hands the stack every segment alone;
 *   bond-offload-mismatch  ports of one bond that differ in GRO or TSO:
 *                      the bond offers only what all its ports have.
 * The host model does not carry features (only GET /v1/nics/{name} shows
 * them), so they are read here, once per NIC judged, through one ethtool
 * handle: physical NICs and bond ports only. */
#include "diagnose/diagnose_int.h"
#include "kernel/features.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool feature_on(const nt_features *fs, const char *name, bool *fixed)
{
	const nt_feature *f = nt_features_find(fs, name);
	if (fixed)
		*fixed = f ? f->fixed : true;
	return f && f->active;
}

/* {"features": [{"interface": IF, "features": {NAME: ON}}]} */
static json_t *fix_one(const char *ifname, const char *name, bool on)
{
	return json_pack("{s:[{s:s, s:{s:b}}]}", "features", "interface", ifname, "features", name, on);
}

static int check_nic(diag *d, const nt_nic *nic, const nt_features *fs, long forwarding)
{
	bool fixed;
	int err = 0;

	bool bridged = nt_exists(d->ctx, "/sys/class/net/%s/brport", nic->name);
	if (feature_on(fs, "rx-lro", &fixed) && !fixed && (forwarding == 1 || bridged)) {
		json_t *ev = json_pack("{s:b, s:b, s:b}", "rx-lro", 1, "ip_forward", forwarding == 1, "bridge_port",
				       bridged);
		err = diag_add_finding(d, "lro-forwarding", SEV_WARNING, nic->name, ev, fix_one(nic->name, "rx-lro", false),
				       "%s has LRO on while %s: LRO merges received segments into one, which "
				       "cannot be forwarded as it came; turn it off (GRO keeps the saving and "
				       "forwards correctly).",
				       nic->name, bridged ? "it is a bridge port" : "the host forwards (net.ipv4.ip_forward = 1)");
		if (err)
			return err;
	}
	if (diag_nic_is_physical(nic) && nic->speed_mbps >= 10000 && !feature_on(fs, "rx-gro", &fixed) && !fixed) {
		json_t *ev = json_pack("{s:b, s:I}", "rx-gro", 0, "speed_mbps", (json_int_t)nic->speed_mbps);
		err = diag_add_finding(d, "gro-off", SEV_WARNING, nic->name, ev, fix_one(nic->name, "rx-gro", true),
				       "%s (%ld Mbit/s) has GRO off: the stack handles every received segment "
				       "alone, which costs a CPU most of its time at these rates.",
				       nic->name, nic->speed_mbps);
	}
	return err;
}

/* The ports of bond B that have NAME on and those that have it off; a
 * finding when both are there, whose fix turns it on on the others. */
static int check_bond(diag *d, const nt_bond *b, const nt_features *fss, const bool *have, const char *name)
{
	int on = 0, off = 0;
	for (int s = 0; s < b->nslaves; s++) {
		if (!have[s])
			continue;
		bool fixed;
		feature_on(&fss[s], name, &fixed) ? on++ : off++;
	}
	if (!on || !off)
		return 0;
	json_t *ev = json_object(), *fix = json_pack("{s:[]}", "features");
	json_t *list = json_object_get(fix, "features");
	for (int s = 0; ev && list && s < b->nslaves; s++) {
		if (!have[s])
			continue;
		bool fixed, is_on = feature_on(&fss[s], name, &fixed);
		json_object_set_new(ev, b->slaves[s], json_boolean(is_on));
		if (!is_on && !fixed)
			json_array_append_new(list, json_pack("{s:s, s:{s:b}}", "interface", b->slaves[s], "features",
							      name, 1));
	}
	if (!ev || !list) {
		json_decref(ev);
		json_decref(fix);
		return -ENOMEM;
	}
	if (json_array_size(list) == 0) {
		json_decref(fix);
		fix = NULL; /* the ports that lack it cannot change it */
	}
	json_t *evidence = json_pack("{s:s, s:o}", "feature", name, "ports", ev);
	return diag_add_finding(d, "bond-offload-mismatch", SEV_WARNING, b->name, evidence, fix,
				"%s: %d of its %d ports have %s on and %d off; the bond offers only what "
				"all its ports do, and traffic hashed to the others goes without it.",
				b->name, on, on + off, name, off);
}

int diag_check_features(diag *d)
{
	const nt_topology *t = d->t;
	nt_features *fs = malloc(sizeof(*fs));
	long forwarding = -1;
	int err = 0;

	if (!fs)
		return -ENOMEM;
	if (nt_read_long(d->ctx, &forwarding, "/proc/sys/net/ipv4/ip_forward") < 0)
		forwarding = -1;
	for (int i = 0; !err && i < t->nnics; i++) {
		const nt_nic *nic = &t->nics[i];
		if (!diag_nic_is_physical(nic) && !nt_exists(d->ctx, "/sys/class/net/%s/brport", nic->name))
			continue;
		if (nt_features_get(d->eh, d->ctx, nic->name, fs) == 0)
			err = check_nic(d, nic, fs, forwarding);
	}
	for (int i = 0; !err && i < t->nbonds; i++) {
		const nt_bond *b = &t->bonds[i];
		if (b->nslaves < 2)
			continue;
		nt_features *fss = calloc((size_t)b->nslaves, sizeof(*fss));
		bool *have = calloc((size_t)b->nslaves, sizeof(*have));
		if (!fss || !have) {
			err = -ENOMEM;
		} else {
			for (int s = 0; s < b->nslaves; s++)
				have[s] = nt_features_get(d->eh, d->ctx, b->slaves[s], &fss[s]) == 0;
			err = check_bond(d, b, fss, have, "rx-gro");
			if (!err)
				err = check_bond(d, b, fss, have, "tx-tcp-segmentation");
		}
		free(fss);
		free(have);
	}
	free(fs);
	return err;
}
