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
 * of ROOT/ethtool/IFACE.json on a fixture root. CQE mode (cqe_mode_rx/tx,
 * 5.15) and TX aggregation (tx_aggr_max_bytes/_frames/_time_usecs, 6.3)
 * exist only over netlink; GET /v1/nics/{name} shows them as
 * "coalesce_params", and a plan asking a kernel older than one of them
 * names the release it needs. The adaptive-coalescing (DIM) profiles of an
 * entry ("rx_profile", "tx_profile") are kinds of their own, in
 * settings/coalesce_profile.c. */
#include "kernel/ethtool_nlattrs.h"
#include "settings/coalesce_profile.h"
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
/* Only ethtool netlink carries these (kernel/ethtool_nlattrs.h). */
#define NL_FIELD(name, attr, width) \
	{ name, NT_ETHTOOL_A_COALESCE_##attr, NT_ETHTOOL_##width, NT_ETHTOOL_NO_IOCTL, false, NULL }

/* The profile's names, in the order values are written: the six the
 * ioctl has too, then those only ethtool netlink reaches. */
static const nt_ethtool_field fields[] = {
	FIELD("rx_usecs", RX_USECS, U32, rx_coalesce_usecs),
	FIELD("tx_usecs", TX_USECS, U32, tx_coalesce_usecs),
	FIELD("rx_frames", RX_MAX_FRAMES, U32, rx_max_coalesced_frames),
	FIELD("tx_frames", TX_MAX_FRAMES, U32, tx_max_coalesced_frames),
	FIELD("adaptive_rx", USE_ADAPTIVE_RX, U8, use_adaptive_rx_coalesce),
	FIELD("adaptive_tx", USE_ADAPTIVE_TX, U8, use_adaptive_tx_coalesce),
	NL_FIELD("cqe_mode_rx", USE_CQE_MODE_RX, U8),
	NL_FIELD("cqe_mode_tx", USE_CQE_MODE_TX, U8),
	NL_FIELD("tx_aggr_max_bytes", TX_AGGR_MAX_BYTES, U32),
	NL_FIELD("tx_aggr_max_frames", TX_AGGR_MAX_FRAMES, U32),
	NL_FIELD("tx_aggr_time_usecs", TX_AGGR_TIME_USECS, U32),
};
enum { NFIELDS = sizeof(fields) / sizeof(fields[0]), NCLASSIC = 6 };
/* The first release of each netlink-only field (kernel/ethtool_nlattrs.h);
 * NULL for the classic ones, which ethtool netlink has had from 5.6. */
static const char *const since[NFIELDS] = { [6] = "5.15", [7] = "5.15", [8] = "6.3", [9] = "6.3", [10] = "6.3" };
/* The fields GET /v1/topology shows: the classic six, as before the
 * netlink-only ones came; those are in GET /v1/nics/{name} only. */
#define CLASSIC ((1u << NCLASSIC) - 1)
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

/* Every field asked for must be one the NIC reports; for one newer than
 * the running kernel, the release that has it is named. */
static int coalesce_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
			  const nt_value *v, char *why, size_t whysize)
{
	nt_value cur;
	char names[256];
	int r = read_values(eh, ctx, target, &cur);
	(void)t;
	if (r < 0) {
		snprintf(why, whysize, "%s: interrupt coalescing cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	uint32_t missing = v->f.present & ~cur.f.present;
	if (missing) {
		char have[256], release[64], reason[160] = "";
		bool netlink;
		names_of(missing, names, sizeof(names));
		names_of(cur.f.present, have, sizeof(have));
		nt_gk_kernel_of(ctx, eh, release, sizeof(release), &netlink);
		/* One reason, the first missing field's that is more than "the
		 * driver does not report it" (a kernel too old, or no netlink). */
		for (int i = 0; i < NFIELDS && !reason[0]; i++)
			if ((missing & (1u << i)) &&
			    (nt_ethtool_release_lacks(release, since[i]) ||
			     (!netlink && fields[i].ioc_off == NT_ETHTOOL_NO_IOCTL))) {
				char w[128];
				nt_ethtool_absent_why(&fields[i], since[i], release, netlink, w, sizeof(w));
				snprintf(reason, sizeof(reason), "; %s %s", fields[i].name, w);
			}
		snprintf(why, whysize, "%s does not support coalescing %s (its driver reports %s)%s", target, names,
			 have[0] ? have : "none", reason);
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
	const char *known[NFIELDS + 4] = { "interface" };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	for (int k = 0; k < NFIELDS; k++)
		known[k + 1] = fields[k].name;
	for (int k = 0; nt_coalesce_profile_keys[k]; k++)
		known[NFIELDS + 1 + k] = nt_coalesce_profile_keys[k];
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
		nt_coalesce_profile_validate(c, e, base);
		if (!any && !nt_coalesce_profile_in(e)) {
			char names[256];
			names_of((1u << NFIELDS) - 1, names, sizeof(names));
			nt_sc_error(c, base, "give at least one of %s, rx_profile, tx_profile", names);
		}
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
		/* An entry with only a DIM profile asks nothing of the rest. */
		int r = v.f.present ? nt_gk_desire(p, &nt_setting_coalesce, &group, pattern, &v, path,
						   "interrupt coalescing") :
				      0;
		if (r == 0)
			r = nt_coalesce_profile_desire(p, e, pattern, path);
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

/* "coalesce": {"rx_usecs": 50, ..., "adaptive_rx": true} with the classic
 * fields the NIC supports; nothing when it has none. The netlink-only
 * fields come from the same reply but are left to the per-NIC view, so
 * GET /v1/topology stays as it was. */
static int report_coalesce(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	nt_value v;
	int r = read_values(eh, ctx, nic->name, &v);
	if (r < 0)
		return r == -EOPNOTSUPP ? 0 : r;
	v.f.present &= CLASSIC;
	json_t *o = nt_gk_json(&group, &v);
	return o ? json_object_set_new(out, "coalesce", o) : -ENOMEM;
}

/* "coalesce_params": {"cqe_mode_rx": {"supported": true, "value": false},
 * "tx_aggr_max_bytes": {"supported": false, "reason": "needs Linux 6.3 or
 * later (this kernel is 6.1.0-27-amd64)"}, ..., "rx_profile": {"supported":
 * true, "value": [{"usec": 1, "pkts": 256}, ...]}}: the fields only ethtool
 * netlink reaches, or null when the NIC has no coalescing; for GET
 * /v1/nics/{name} and nettune nics IF only. */
static int report_coalesce_params(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	nt_value v;
	char release[64], reason[160];
	bool netlink;
	int r = read_values(eh, ctx, nic->name, &v);
	if (r < 0)
		return r == -EOPNOTSUPP || r == -ENODEV ? json_object_set_new(out, "coalesce_params", json_null()) : r;
	nt_gk_kernel_of(ctx, eh, release, sizeof(release), &netlink);
	json_t *o = json_object();
	for (int i = NCLASSIC; o && i < NFIELDS; i++) {
		json_t *f;
		if (v.f.present & (1u << i)) {
			f = json_pack("{s:b,s:o}", "supported", 1, "value",
				      is_flag(i) ? json_boolean(v.f.v[i]) : json_integer(v.f.v[i]));
		} else {
			nt_ethtool_absent_why(&fields[i], since[i], release, netlink, reason, sizeof(reason));
			f = json_pack("{s:b,s:s}", "supported", 0, "reason", reason);
		}
		if (!f || json_object_set_new(o, fields[i].name, f) < 0) {
			json_decref(o);
			o = NULL;
		}
	}
	if (o && nt_coalesce_profile_report(ctx, eh, nic, o) < 0) {
		json_decref(o);
		o = NULL;
	}
	return o ? json_object_set_new(out, "coalesce_params", o) : -ENOMEM;
}

const nt_setting_module nt_module_coalesce = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_coalesce, NULL },
	.sections = (const nt_profile_section *const[]){ &section_coalesce, NULL },
	.report_nic = report_coalesce,
	.report_nic_detail = report_coalesce_params,
};
