/* SPDX-License-Identifier: Apache-2.0 */
/* Interrupt coalescing: target = interface, value = the coalescing
 * parameters the NIC reports ("rx_usecs=50,tx_usecs=50,rx_frames=0,
 * tx_frames=0,adaptive_rx=on,adaptive_tx=off" as text, each field only
 * when the driver supports it).
 *
 * Profile section:
 *   "coalesce": [{"interface": "enos*", "rx_usecs": 64, "adaptive_rx": false}]
 * How long a NIC waits (microseconds) or how many frames it gathers before
 * it raises an interrupt trades latency for interrupt load; adaptive
 * coalescing lets the driver move both with the traffic. A field the NIC
 * does not support is refused with the list of those it does.
 *
 * Through ethtool netlink (ETHTOOL_MSG_COALESCE_GET/SET; the kernel's reply
 * carries only the parameters the driver supports) with the
 * ETHTOOL_GCOALESCE/SCOALESCE ioctl as fallback, and the "coalesce" object
 * of ROOT/ethtool/IFACE.json on a fixture root. */
#include "settings/group_kind.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD(name, attr, width, ioc) \
	{ name, ETHTOOL_A_COALESCE_##attr, NT_ETHTOOL_##width, offsetof(struct ethtool_coalesce, ioc), false, NULL }

/* The profile's names, in the order values are written. */
static const nt_ethtool_field fields[] = {
	FIELD("rx_usecs", RX_USECS, U32, rx_coalesce_usecs),
	FIELD("tx_usecs", TX_USECS, U32, tx_coalesce_usecs),
	FIELD("rx_frames", RX_MAX_FRAMES, U32, rx_max_coalesced_frames),
	FIELD("tx_frames", TX_MAX_FRAMES, U32, tx_max_coalesced_frames),
	FIELD("adaptive_rx", USE_ADAPTIVE_RX, U8, use_adaptive_rx_coalesce),
	FIELD("adaptive_tx", USE_ADAPTIVE_TX, U8, use_adaptive_tx_coalesce),
};
enum { NFIELDS = sizeof(fields) / sizeof(fields[0]) };
_Static_assert(NFIELDS <= NT_VALUE_FIELDS, "fields fit a value");

static const nt_ethtool_group group = {
	.section = "coalesce",
	.get_cmd = ETHTOOL_MSG_COALESCE_GET,
	.set_cmd = ETHTOOL_MSG_COALESCE_SET,
	.header_attr = ETHTOOL_A_COALESCE_HEADER,
	.ioc_get = ETHTOOL_GCOALESCE,
	.ioc_set = ETHTOOL_SCOALESCE,
	.ioc_size = sizeof(struct ethtool_coalesce),
	.fields = fields,
	.nfields = NFIELDS,
};

static bool is_flag(int i)
{
	return fields[i].width == NT_ETHTOOL_U8;
}

/* "rx_usecs, tx_usecs" for the fields of MASK. */
static void names_of(uint32_t mask, char *out, size_t size)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < NFIELDS; i++) {
		if (!(mask & (1u << i)))
			continue;
		int w = snprintf(out + len, size - len, "%s%s", len ? ", " : "", fields[i].name);
		if (w < 0 || (size_t)w >= size - len)
			break;
		len += (size_t)w;
	}
}

/* ---- values and the system: settings/group_kind.h ---- */

static int coalesce_parse(const char *text, nt_value *out)
{
	return nt_gk_parse(&group, text, out);
}

static int coalesce_format(const nt_value *v, char *out, size_t size)
{
	return nt_gk_format(&group, v, out, size);
}

/* The fields both values carry agree (a read carries what the driver
 * reports, and a plan's value was made from one). */
static bool coalesce_equal(const nt_value *a, const nt_value *b)
{
	return nt_gk_equal(&group, a, b);
}

static int read_values(nt_ethtool *h, const nt_ctx *ctx, const char *ifname, nt_value *out)
{
	return nt_gk_read(h, ctx, &group, ifname, false, out);
}

static int coalesce_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	return read_values(eh, ctx, target, out);
}

/* Every field asked for must be one the NIC reports. */
static int coalesce_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
			  const nt_value *v, char *why, size_t whysize)
{
	nt_value cur;
	char names[128];
	int r = read_values(eh, ctx, target, &cur);
	if (r < 0) {
		snprintf(why, whysize, "%s: interrupt coalescing cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	uint32_t missing = v->f.present & ~cur.f.present;
	if (missing) {
		char have[128];
		names_of(missing, names, sizeof(names));
		names_of(cur.f.present, have, sizeof(have));
		snprintf(why, whysize, "%s does not support coalescing %s (its driver reports %s)", target, names,
			 have[0] ? have : "none");
		return NT_EINVALID;
	}
	return 0;
}

static int coalesce_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target,
			  const nt_value *v, char *err, size_t errsize)
{
	return nt_gk_apply(eh, ctx, &group, target, v, err, errsize);
}

const nt_setting_kind nt_setting_coalesce = {
	.name = "coalesce",
	/* Per NIC, over ethtool, which resolves names in the caller's
	 * namespace: only this namespace's NICs. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NIC is a link of this namespace",
	.parse = coalesce_parse,
	.format = coalesce_format,
	.equal = coalesce_equal,
	.read = coalesce_read,
	.check = coalesce_check,
	.apply = coalesce_apply,
	/* What is there with the profile's fields put in: a restore then
	 * sets every field back. */
	.compose = nt_gk_compose,
	/* With the NIC's other queue settings, after its channels (which
	 * re-create the queues the parameters apply to). */
	.order = 30,
	.suborder = 2,
	/* The kernel sends an ethtool netlink notification on every SET,
	 * whoever made it (ethtool -C, another daemon, a driver reset). */
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

/* ---- "coalesce": [...] ---- */

static void validate_coalesce(nt_section_check *c, const json_t *arr)
{
	static const char *known[NFIELDS + 2] = { "interface" };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	for (int k = 0; k < NFIELDS; k++)
		known[k + 1] = fields[k].name;
	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "coalesce", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		bool any = false;
		for (int k = 0; k < NFIELDS; k++) {
			json_t *x = json_object_get(e, fields[k].name);
			if (!x)
				continue;
			any = true;
			snprintf(path, sizeof(path), "%s.%s", base, fields[k].name);
			if (is_flag(k) ? !json_is_boolean(x)
				       : !json_is_integer(x) || json_integer_value(x) < 0 ||
						 json_integer_value(x) > UINT32_MAX)
				nt_sc_error(c, path, is_flag(k) ? "'%s' must be true or false"
								: "'%s' must be an integer from 0 to 4294967295",
					    fields[k].name);
		}
		if (!any)
			nt_sc_error(c, base, "give at least one of rx_usecs, tx_usecs, rx_frames, tx_frames, "
					     "adaptive_rx, adaptive_tx");
		if (iface) {
			snprintf(path, sizeof(path), "%s.interface", base);
			nt_sc_iface(c, iface, path, false);
		}
	}
}

/* The profile's fields only; the plan checks them against what the NIC
 * supports and composes the full value. */
static int desire_coalesce(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX];
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		nt_value v;
		memset(&v, 0, sizeof(v));
		for (int k = 0; k < NFIELDS; k++) {
			json_t *x = json_object_get(e, fields[k].name);
			if (x)
				nt_value_field_set(&v, k, is_flag(k) ? json_is_true(x) : (uint32_t)json_integer_value(x));
		}
		snprintf(path, sizeof(path), "$.coalesce[%zu]", i);
		int r = nt_gk_desire(p, &nt_setting_coalesce, &group, pattern, &v, path, "interrupt coalescing");
		if (r < 0)
			return r;
	}
	return 0;
}

static const nt_profile_section section_coalesce = {
	.key = "coalesce",
	.type = JSON_ARRAY,
	.validate = validate_coalesce,
	.desire = desire_coalesce,
};

/* "coalesce": {"rx_usecs": 50, ..., "adaptive_rx": true} with the fields
 * the NIC supports; nothing when it has none. */
static int report_coalesce(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	nt_value v;
	int r = read_values(eh, ctx, nic->name, &v);
	if (r < 0)
		return r == -EOPNOTSUPP ? 0 : r;
	json_t *o = nt_gk_json(&group, &v);
	return o ? json_object_set_new(out, "coalesce", o) : -ENOMEM;
}

const nt_setting_module nt_module_coalesce = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_coalesce, NULL },
	.sections = (const nt_profile_section *const[]){ &section_coalesce, NULL },
	.report_nic = report_coalesce,
};
