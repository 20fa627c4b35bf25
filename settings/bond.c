/* SPDX-License-Identifier: Apache-2.0 */
/* Bond transmit hash policy: target = bond name, value = the policy word.
 * sysfs shows "layer2+3 2" (name and number); the first word is the value.
 *
 * Profile section:
 *   "bonds": [{"interface": "bond0", "xmit_hash_policy": "layer3+4"}]
 * A layer2+3 hash puts every flow between two hosts on one slave; layer3+4
 * spreads them by port (docs/field-reports.md#bond-hash-layer3-4). */
#include "kernel/kernel.h"
#include "settings/section.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The policies the bonding driver knows, indexed by the number sysfs prints
 * after the name (BOND_XMIT_POLICY_* in include/uapi/linux/if_bonding.h). */
static const char *const policies[] = {
	"layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4", "vlan+srcmac", NULL,
};

bool nt_bond_policy_known(const char *name)
{
	for (int i = 0; name && policies[i]; i++)
		if (strcmp(policies[i], name) == 0)
			return true;
	return false;
}

static int bond_parse(const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	size_t n = text ? strcspn(text, " \t\n") : 0;
	if (n == 0 || n >= sizeof(out->text))
		return NT_EPARSE;
	memcpy(out->text, text, n);
	return 0;
}

static int bond_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%s", v->text);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static bool bond_equal(const nt_value *a, const nt_value *b)
{
	return strcmp(a->text, b->text) == 0;
}

static int bond_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	char buf[NT_VALUE_MAX];
	if (!nt_ifname_valid(target))
		return NT_EINVALID;
	int r = nt_read_str(ctx, buf, sizeof(buf), "/sys/class/net/%s/bonding/xmit_hash_policy", target);
	if (r < 0)
		return r;
	return bond_parse(buf, out);
}

static int bond_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		      const nt_value *v, char *why, size_t whysize)
{
	if (!nt_ifname_valid(target) || !nt_exists(ctx, "/sys/class/net/%s/bonding/xmit_hash_policy", target)) {
		snprintf(why, whysize, "'%s' is not a bond", target);
		return NT_EINVALID;
	}
	if (!nt_bond_policy_known(v->text)) {
		snprintf(why, whysize,
			 "unknown xmit_hash_policy '%s' (known: layer2, layer2+3, layer3+4, "
			 "encap2+3, encap3+4, vlan+srcmac)", v->text);
		return NT_EINVALID;
	}
	return 0;
}

static int bond_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target,
		      const nt_value *v, char *err, size_t errsize)
{
	int r = NT_EINVALID;
	if (nt_ifname_valid(target) && nt_bond_policy_known(v->text))
		r = nt_kernel_bond_set(ctx, target, "xmit_hash_policy", v->text);
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s xmit_hash_policy: %s", target, nt_strerror(r));
	return r;
}

const nt_setting_kind nt_setting_bond = {
	.name = "bond",
	/* A bond is a link: it and its sysfs options belong to the namespace
	 * it lives in (ip netns exec mounts that namespace's /sys). */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "a bond is a link of this namespace, its options under its own /sys/class/net",
	.parse = bond_parse,
	.format = bond_format,
	.equal = bond_equal,
	.read = bond_read,
	.check = bond_check,
	.apply = bond_apply,
	.order = 40,
	/* The bonding driver announces a changed option with a link message
	 * (NETDEV_CHANGEINFODATA, sent as RTM_NEWLINK). */
	.events = NT_SETTING_EVENT(NT_EVENT_LINK),
};

/* ---- "bonds": [...] ---- */

/* Bond options the kernel changes only on a bond that is down and has no
 * slaves: changing them would mean taking the bond apart, which a tuning
 * transaction does not do. */
static const char *const bond_down_only[] = { "mode", "fail_over_mac", "tlb_dynamic_lb", NULL };

static void validate_bonds(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "xmit_hash_policy", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "bonds", i, e, base, sizeof(base)))
			continue;
		for (int k = 0; bond_down_only[k]; k++) {
			if (!json_object_get(e, bond_down_only[k]))
				continue;
			snprintf(path, sizeof(path), "%s.%s", base, bond_down_only[k]);
			nt_sc_error(c, path,
				    "the kernel changes a bond's %s only while the bond is down and "
				    "has no slaves; nettune does not take bonds apart",
				    bond_down_only[k]);
		}
		json_t *rest = json_copy((json_t *)e);
		for (int k = 0; rest && bond_down_only[k]; k++)
			json_object_del(rest, bond_down_only[k]);
		nt_sc_unknown_fields(c, rest ? rest : e, base, known);
		json_decref(rest);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		const char *pol = nt_sc_str(c, e, base, "xmit_hash_policy", true);
		if (iface) {
			snprintf(path, sizeof(path), "%s.interface", base);
			nt_sc_iface(c, iface, path, true);
		}
		if (pol && !nt_bond_policy_known(pol)) {
			snprintf(path, sizeof(path), "%s.xmit_hash_policy", base);
			nt_sc_error(c, path,
				    "unknown xmit_hash_policy '%s' (known: layer2, layer2+3, "
				    "layer3+4, encap2+3, encap3+4, vlan+srcmac)", pol);
		}
	}
}

static int desire_bonds(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX];
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		nt_value v;
		if (bond_parse(json_string_value(json_object_get(e, "xmit_hash_policy")), &v) < 0)
			continue;
		snprintf(path, sizeof(path), "$.bonds[%zu].xmit_hash_policy", i);
		for (int k = 0; k < p->t->nbonds; k++) {
			if (!nt_iface_match(pattern, p->t->bonds[k].name))
				continue;
			int r = nt_desire_put(p, &nt_setting_bond, p->t->bonds[k].name, p->t->bonds[k].name, &v,
					      path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static const nt_profile_section section_bonds = {
	.key = "bonds",
	.type = JSON_ARRAY,
	.validate = validate_bonds,
	.desire = desire_bonds,
};

const nt_setting_module nt_module_bond = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_bond, NULL },
	.sections = (const nt_profile_section *const[]){ &section_bonds, NULL },
};
