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
#include "kernel/ethtool.h"
#include "settings/section.h"

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
enum { NFIELDS = sizeof(fields) / sizeof(fields[0]), ALL = (1u << NFIELDS) - 1 };

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

static int field_of(const char *name, size_t len)
{
	for (int i = 0; i < NFIELDS; i++)
		if (strlen(fields[i].name) == len && strncmp(fields[i].name, name, len) == 0)
			return i;
	return -1;
}

static int pause_parse(const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	if (!text || !*text)
		return NT_EPARSE;
	for (const char *p = text; *p;) {
		const char *eq = strchr(p, '='), *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (!eq || eq > end)
			return NT_EPARSE;
		int i = field_of(p, (size_t)(eq - p));
		size_t vlen = (size_t)(end - eq - 1);
		if (i < 0 || (out->f.present & (1u << i)))
			return NT_EPARSE;
		if (vlen == 2 && strncmp(eq + 1, "on", 2) == 0)
			nt_value_field_set(out, i, 1);
		else if (vlen == 3 && strncmp(eq + 1, "off", 3) == 0)
			nt_value_field_set(out, i, 0);
		else
			return NT_EPARSE;
		if (*end && !end[1])
			return NT_EPARSE; /* a trailing comma */
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int pause_format(const nt_value *v, char *out, size_t size)
{
	size_t len = 0;
	if (size == 0)
		return -ENOSPC;
	out[0] = '\0';
	for (int i = 0; i < NFIELDS; i++) {
		if (!(v->f.present & (1u << i)))
			continue;
		int w = snprintf(out + len, size - len, "%s%s=%s", len ? "," : "", fields[i].name,
				 v->f.v[i] ? "on" : "off");
		if (w < 0 || (size_t)w >= size - len)
			return -ENOSPC;
		len += (size_t)w;
	}
	return 0;
}

static bool pause_equal(const nt_value *a, const nt_value *b)
{
	if (a->f.present != b->f.present)
		return false;
	for (int i = 0; i < NFIELDS; i++)
		if ((a->f.present & (1u << i)) && !a->f.v[i] != !b->f.v[i])
			return false;
	return true;
}

static int read_values(nt_ethtool *h, const nt_ctx *ctx, const char *ifname, nt_value *out)
{
	nt_ethtool_values got;
	memset(out, 0, sizeof(*out));
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	int r = nt_ethtool_get_group(h, ctx, &group, ifname, &got);
	if (r < 0)
		return r;
	/* The kernel puts all three in every reply (pause_fill_reply); a
	 * fixture may leave one out, read as off as the kernel's 0 is. */
	for (int i = 0; i < NFIELDS; i++)
		nt_value_field_set(out, i, !!got.v[i]);
	return 0;
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

/* What is there with the profile's fields put in. */
static int pause_compose(const nt_value *before, const nt_value *wanted, nt_value *out)
{
	*out = *before;
	for (int i = 0; i < NFIELDS; i++)
		if (wanted->f.present & (1u << i))
			nt_value_field_set(out, i, wanted->f.v[i]);
	return 0;
}

static int pause_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		       size_t errsize)
{
	nt_ethtool_values want = { .present = v->f.present & ALL };
	char kerr[200] = "";
	int r = NT_EINVALID;

	for (int i = 0; i < NFIELDS; i++)
		want.v[i] = !!v->f.v[i];
	if (nt_ifname_valid(target))
		r = nt_ethtool_set_group(eh, ctx, &group, target, &want, kerr, sizeof(kerr));
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s pause: %s%s%s", target, nt_strerror(r), kerr[0] ? ": " : "", kerr);
	return r;
}

const nt_setting_kind nt_setting_pause = {
	.name = "pause",
	.parse = pause_parse,
	.format = pause_format,
	.equal = pause_equal,
	.read = pause_read,
	.check = pause_check,
	.apply = pause_apply,
	.compose = pause_compose,
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
		for (int k = 0; k < p->t->nnics; k++) {
			const nt_nic *nic = &p->t->nics[k];
			nt_value cur;
			if (!nt_iface_match(pattern, nic->name))
				continue;
			/* A glob also matches NICs without flow control (veth,
			 * virtio): left out, where a NIC named outright is refused. */
			if (nt_iface_is_glob(pattern) && read_values(NULL, &p->t->ctx, nic->name, &cur) == -EOPNOTSUPP) {
				nt_desire_warn(p, "%s: no flow control (pause) settings; left out", nic->name);
				continue;
			}
			int r = nt_desire_put(p, &nt_setting_pause, nic->name, nic->name, &v, path);
			if (r < 0)
				return r;
		}
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
	json_t *o = json_object();
	for (int i = 0; o && i < NFIELDS; i++)
		json_object_set_new(o, fields[i].name, json_boolean(v.f.v[i]));
	return o ? json_object_set_new(out, "pause", o) : -ENOMEM;
}

const nt_setting_module nt_module_pause = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_pause, NULL },
	.sections = (const nt_profile_section *const[]){ &section_pause, NULL },
	.report_nic_detail = report_pause,
};
