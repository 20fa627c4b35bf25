/* SPDX-License-Identifier: Apache-2.0 */
/* Flow control (`ethtool -a` / `-A`): target = interface, value = the pause
 * parameters ("autoneg=off,rx=on,tx=on" as text; all three in a value read
 * from the NIC, so a restore sets all three).
 *
 * Profile section:
 *   "pause": [{"interface": "enos*", "rx": true, "tx": true, "autoneg": false}]
 * A port whose pause frames the switch ignores (or sends when the host
 * does not honour them) drops where the other could have held a burst:
 * the two ends must agree. A NIC without pause settings is refused.
 *
 * Through ethtool netlink (ETHTOOL_MSG_PAUSE_GET/SET) with the
 * ETHTOOL_GPAUSEPARAM/SPAUSEPARAM ioctl as fallback, and the "pause"
 * object of ROOT/ethtool/IFACE.json on a fixture root. */
#include "settings/group_kind.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD(name, attr, ioc) \
	{ name, ETHTOOL_A_PAUSE_##attr, NT_ETHTOOL_U8, offsetof(struct ethtool_pauseparam, ioc), false, NULL }

/* The profile's names, in the order values are written. */
static const nt_ethtool_field fields[] = {
	FIELD("autoneg", AUTONEG, autoneg),
	FIELD("rx", RX, rx_pause),
	FIELD("tx", TX, tx_pause),
};
enum { NFIELDS = sizeof(fields) / sizeof(fields[0]) };

static const nt_ethtool_group group = {
	.section = "pause",
	.get_cmd = ETHTOOL_MSG_PAUSE_GET,
	.set_cmd = ETHTOOL_MSG_PAUSE_SET,
	.header_attr = ETHTOOL_A_PAUSE_HEADER,
	.ioc_get = ETHTOOL_GPAUSEPARAM,
	.ioc_set = ETHTOOL_SPAUSEPARAM,
	.ioc_size = sizeof(struct ethtool_pauseparam),
	.fields = fields,
	.nfields = NFIELDS,
};

/* ---- values and the system: settings/group_kind.h ---- */

static int pause_parse(const char *text, nt_value *out)
{
	int r = nt_gk_parse(&group, text, out);
	return r == 0 && !out->f.present ? NT_EPARSE : r;
}

static int pause_format(const nt_value *v, char *out, size_t size)
{
	return nt_gk_format(&group, v, out, size);
}

static bool pause_equal(const nt_value *a, const nt_value *b)
{
	return nt_gk_equal(&group, a, b);
}

/* All three: the kernel puts every one in its reply (pause_fill_reply);
 * a fixture may leave one out, read as off as the kernel's 0 is. */
static int read_values(nt_ethtool *h, const nt_ctx *ctx, const char *ifname, nt_value *out)
{
	return nt_gk_read(h, ctx, &group, ifname, true, out);
}

static int pause_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	return read_values(eh, ctx, target, out);
}

static int pause_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		       const nt_value *v, char *why, size_t whysize)
{
	nt_value cur;
	(void)t;
	(void)v;
	int r = read_values(eh, ctx, target, &cur);
	if (r == -EOPNOTSUPP) {
		snprintf(why, whysize, "%s has no flow control (pause) settings", target);
		return NT_EINVALID;
	}
	if (r < 0) {
		snprintf(why, whysize, "%s: flow control cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	return 0;
}

static int pause_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		       size_t errsize)
{
	return nt_gk_apply(eh, ctx, &group, target, v, err, errsize);
}

const nt_setting_kind nt_setting_pause = {
	.name = "pause",
	/* Per NIC, over ethtool in the caller's namespace. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NIC is a link of this namespace",
	.parse = pause_parse,
	.format = pause_format,
	.equal = pause_equal,
	.read = pause_read,
	.check = pause_check,
	.apply = pause_apply,
	.compose = nt_gk_compose,
	/* After the queue kinds: a pause change renegotiates the link on
	 * some drivers, which is better once the queues are settled. */
	.order = 36,
	/* ETHTOOL_MSG_PAUSE_NTF on every change, whoever made it. */
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

/* ---- "pause": [...] ---- */

static void validate_pause(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "autoneg", "rx", "tx", NULL };
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "pause", i, e, base, sizeof(base)))
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
			if (!json_is_boolean(x))
				nt_sc_error(c, path, "'%s' must be true or false", fields[k].name);
		}
		if (!any)
			nt_sc_error(c, base, "give at least one of autoneg, rx, tx");
		if (iface) {
			snprintf(path, sizeof(path), "%s.interface", base);
			nt_sc_iface(c, iface, path, false);
		}
	}
}

static int desire_pause(nt_section_plan *p, const json_t *arr)
{
	char path[NT_JSONPATH_MAX];
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		nt_value v;
		memset(&v, 0, sizeof(v));
		for (int k = 0; k < NFIELDS; k++) {
			json_t *x = json_object_get(e, fields[k].name);
			if (x)
				nt_value_field_set(&v, k, json_is_true(x));
		}
		snprintf(path, sizeof(path), "$.pause[%zu]", i);
		int r = nt_gk_desire(p, &nt_setting_pause, &group, pattern, &v, path, "flow control (pause)");
		if (r < 0)
			return r;
	}
	return 0;
}

static const nt_profile_section section_pause = {
	.key = "pause",
	.type = JSON_ARRAY,
	.validate = validate_pause,
	.desire = desire_pause,
};

/* "pause": {"autoneg": false, "rx": true, "tx": true}, or null when the
 * NIC has no pause settings; for GET /v1/nics/{name} only, so the host
 * read behind GET /v1/topology asks the kernel nothing more per NIC. */
static int report_pause(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	nt_value v;
	int r = read_values(eh, ctx, nic->name, &v);
	if (r < 0)
		return r == -EOPNOTSUPP ? json_object_set_new(out, "pause", json_null()) : r;
	json_t *o = nt_gk_json(&group, &v);
	return o ? json_object_set_new(out, "pause", o) : -ENOMEM;
}

const nt_setting_module nt_module_pause = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_pause, NULL },
	.sections = (const nt_profile_section *const[]){ &section_pause, NULL },
	.report_nic_detail = report_pause,
};
