/* SPDX-License-Identifier: Apache-2.0 */
/* A link's MTU: target = interface, value = the MTU in bytes ("9000").
 *
 * Profile section:
 *   "mtu": [{"interface": "enos*", "mtu": 9000}]
 * Within the range the driver allows (IFLA_MIN_MTU..IFLA_MAX_MTU, a
 * maximum of 0 meaning no limit, as loopback's "minmtu 0 maxmtu 0"); a
 * glob leaves out, with a warning, the links whose range does not take the
 * MTU, where a name is refused. Only a plan checks the range: the rollback
 * of a step writes back its before-value, which the kernel held, unchecked
 * (the kernel is the judge of it, not a range read since). A bond
 * is given its own MTU, which the bonding driver passes to its slaves; an
 * entry naming a slave outright is refused unless it asks for the bond's
 * own MTU (which mends a slave that differs), as the bond would set any
 * other back; a glob matching slaves leaves them out. Through kernel/rtlink.h:
 * rtnetlink on the live host, sysfs on a fixture root. */
#include "settings/link_kind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int mtu_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	return nt_lk_read(ctx, target, NT_LK_MTU, out);
}

static int mtu_model_read(const nt_topology *t, const char *target, nt_value *out)
{
	const nt_nic *nic = nt_lk_nic(t, target);
	if (!nic || nic->mtu <= 0)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	nt_value_field_set(out, 0, (uint32_t)nic->mtu);
	return 0;
}

/* The bond NIC is a slave of, or NULL. */
static const char *bond_of(const nt_topology *t, const nt_nic *nic)
{
	for (int i = 0; t && nic && nic->master[0] && i < t->nbonds; i++)
		if (strcmp(t->bonds[i].name, nic->master) == 0)
			return t->bonds[i].name;
	return NULL;
}

/* Whether MTU on NIC, a slave of BOND, is refused: anything but the
 * bond's own. */
static bool slave_refused(const nt_topology *t, const char *bond, uint32_t mtu)
{
	const nt_nic *b = nt_lk_nic(t, bond);
	return !b || b->mtu <= 0 || (uint32_t)b->mtu != mtu;
}

/* "68..9216", or "0..(no limit)" for a maximum of 0. */
static const char *range_str(const nt_link_params *p, char *buf, size_t size)
{
	if (p->max_mtu)
		snprintf(buf, size, "%u..%u", p->min_mtu, p->max_mtu);
	else
		snprintf(buf, size, "%u..(no limit)", p->min_mtu);
	return buf;
}

static int mtu_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		     const nt_value *v, char *why, size_t whysize)
{
	nt_link_params p;
	int r = nt_rtlink_get(ctx, target, &p);
	if (r < 0) {
		snprintf(why, whysize, "%s: MTU cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	if (!nt_mtu_in_range(&p, v->f.v[0])) {
		char range[40];
		snprintf(why, whysize, "MTU %u is outside %s's range %s", v->f.v[0], target,
			 range_str(&p, range, sizeof(range)));
		return NT_EINVALID;
	}
	const char *bond = bond_of(t, nt_lk_nic(t, target));
	if (bond && slave_refused(t, bond, v->f.v[0])) {
		snprintf(why, whysize, "%s is a slave of bond %s: set the bond's MTU, which the kernel gives its slaves",
			 target, bond);
		return NT_EINVALID;
	}
	return 0;
}

static int mtu_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		     size_t errsize)
{
	return nt_lk_apply(ctx, target, NT_LK_MTU, v, err, errsize);
}

static const nt_setting_kind nt_setting_mtu = {
	.name = "mtu",
	/* Over rtnetlink on a socket of this namespace: its own links only. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the link is this namespace's",
	.parse = nt_lk_parse,
	.format = nt_lk_format,
	.equal = nt_lk_equal,
	.read = mtu_read,
	.check = mtu_check,
	.apply = mtu_apply,
	.model_read = mtu_model_read,
	/* Before the NIC's queues and offloads: some drivers re-create their
	 * rings for a new MTU, which would undo what follows. */
	.order = 2,
	/* An MTU change is announced with RTM_NEWLINK, whoever made it. */
	.events = NT_SETTING_EVENT(NT_EVENT_LINK),
};

/* ---- "mtu": [...] ---- */

static void check_entry(nt_section_check *c, const char *base, const nt_nic *nic, uint32_t v, bool glob)
{
	char path[NT_JSONPATH_MAX];
	nt_link_params p;
	const char *bond = bond_of(c->t, nic);

	if (bond) {
		if (!glob && slave_refused(c->t, bond, v)) {
			snprintf(path, sizeof(path), "%s.interface", base);
			nt_sc_error(c, path, "%s is a slave of bond %s: set the bond's MTU, which the kernel gives its slaves",
				    nic->name, bond);
		}
		return;
	}
	/* A glob's links that cannot take V are left out by the plan, with a
	 * warning (desire_mtu); a name is refused. */
	if (glob || nt_rtlink_get(&c->t->ctx, nic->name, &p) < 0)
		return; /* the plan's check says why */
	if (!nt_mtu_in_range(&p, v)) {
		char range[40];
		snprintf(path, sizeof(path), "%s.mtu", base);
		nt_sc_error(c, path, "MTU %u is outside %s's range %s", v, nic->name,
			    range_str(&p, range, sizeof(range)));
	}
}

static void validate_mtu(nt_section_check *c, const json_t *arr)
{
	/* 68: the smallest MTU IPv4 allows (ETH_MIN_MTU); 65535 the largest
	 * any device takes (ETH_MAX_MTU), loopback aside (no limit, 65536 by
	 * default: a profile asks no more than Ethernet's largest; a rollback
	 * writes 65536 back, not through a profile). */
	nt_lk_validate(c, arr, "mtu", "mtu", 68, 65535, check_entry);
}

static int desire_mtu(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX];
	int n = 0;
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		nt_value v;
		memset(&v, 0, sizeof(v));
		nt_value_field_set(&v, 0, (uint32_t)json_integer_value(json_object_get(e, "mtu")));
		snprintf(path, sizeof(path), "$.mtu[%zu].mtu", i);
		for (int k = 0; k < p->t->nnics; k++) {
			const nt_nic *nic = &p->t->nics[k];
			if (!nt_iface_match(pattern, nic->name))
				continue;
			const char *bond = bond_of(p->t, nic);
			if (bond && (nt_iface_is_glob(pattern) || slave_refused(p->t, bond, v.f.v[0]))) {
				nt_desire_warn(p, "%s: a slave of bond %s takes the bond's MTU; left out", nic->name, bond);
				continue;
			}
			/* A glob asks for the MTU on the links that take it:
			 * "*" at 9000 is not refused for a link whose driver
			 * stops at 1500; that link is left out and said so. */
			nt_link_params lp;
			if (nt_iface_is_glob(pattern)) {
				char range[40];
				int r = nt_rtlink_get(&p->t->ctx, nic->name, &lp);
				if (r < 0) {
					nt_desire_warn(p, "%s: its MTU cannot be read (%s); left out of %s", nic->name,
						       nt_strerror(r), pattern);
					continue;
				}
				if (!nt_mtu_in_range(&lp, v.f.v[0])) {
					nt_desire_warn(p, "%s: MTU %u is outside its range %s; left out of %s",
						       nic->name, v.f.v[0], range_str(&lp, range, sizeof(range)),
						       pattern);
					continue;
				}
			}
			if (nic->mtu > 0 && (uint32_t)nic->mtu != v.f.v[0])
				n++;
			int r = nt_desire_put(p, &nt_setting_mtu, nic->name, nic->name, &v, path);
			if (r < 0)
				return r;
		}
	}
	if (n > 0)
		nt_desire_warn(p, "mtu: a new MTU can cut this host off when a peer or switch on the path does not "
				  "take it; apply with confirm_timeout_s so that it rolls back unless confirmed");
	return 0;
}

static const nt_profile_section section_mtu = {
	.key = "mtu",
	.type = JSON_ARRAY,
	.validate = validate_mtu,
	.desire = desire_mtu,
};

const nt_setting_module nt_module_mtu = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_mtu, NULL },
	.sections = (const nt_profile_section *const[]){ &section_mtu, NULL },
	/* The MTU range is reported with the root qdisc (settings/qdisc.c),
	 * both asked over one netlink socket. */
};
