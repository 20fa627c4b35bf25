/* SPDX-License-Identifier: Apache-2.0 */
/* Ring sizes: target = interface, value = RX and TX descriptors ("rx=N,tx=N"
 * as text; both always present in a stored value so a restore sets both).
 *
 * Profile section:
 *   "rings": [{"interface": "enos*", "rx": 4096, "tx": "max"}]
 * An entry may also give the ring parameters only ethtool netlink reaches
 * (tcp_data_split, hds_thresh, ...): those are the kind of
 * settings/ring_params.c, which this section's entries feed.
 * A ring too small for a burst drops packets that a larger one holds
 * (docs/field-reports.md#ring-rx-drops). Through kernel/ethtool.h, which talks
 * to the kernel live and to ROOT/ethtool/IFACE.json in a fixture. */
#include "kernel/ethtool.h"
#include "settings/ring_params.h"
#include "settings/section.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RX, TX };

static int rings_parse(const char *text, nt_value *out)
{
	unsigned rx, tx;
	char tail;
	memset(out, 0, sizeof(*out));
	if (!text || sscanf(text, "rx=%u,tx=%u%c", &rx, &tx, &tail) != 2)
		return NT_EPARSE;
	nt_value_field_set(out, RX, rx);
	nt_value_field_set(out, TX, tx);
	return 0;
}

static int rings_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "rx=%u,tx=%u", v->f.v[RX], v->f.v[TX]);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static bool rings_equal(const nt_value *a, const nt_value *b)
{
	return a->f.v[RX] == b->f.v[RX] && a->f.v[TX] == b->f.v[TX];
}

static int rings_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	nt_rings r;
	if (!nt_ifname_valid(target))
		return NT_EINVALID;
	int e = nt_ethtool_read_rings(eh, ctx, target, &r);
	if (e < 0)
		return e;
	memset(out, 0, sizeof(*out));
	nt_value_field_set(out, RX, r.rx);
	nt_value_field_set(out, TX, r.tx);
	return 0;
}

static int rings_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		       const nt_value *v, char *why, size_t whysize)
{
	nt_rings cur;
	int r;

	if (!nt_ifname_valid(target)) {
		snprintf(why, whysize, "'%s' is not an interface name", target);
		return NT_EINVALID;
	}
	if (v->f.v[RX] == 0 || v->f.v[TX] == 0) {
		snprintf(why, whysize, "%s: ring sizes must be positive", target);
		return NT_EINVALID;
	}
	if ((r = nt_ethtool_read_rings(eh, ctx, target, &cur)) < 0) {
		snprintf(why, whysize, "%s: ring sizes cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	if (v->f.v[RX] > cur.rx_max) {
		snprintf(why, whysize, "rx %u is above %s's maximum %u", v->f.v[RX], target, cur.rx_max);
		return NT_EINVALID;
	}
	if (v->f.v[TX] > cur.tx_max) {
		snprintf(why, whysize, "tx %u is above %s's maximum %u", v->f.v[TX], target, cur.tx_max);
		return NT_EINVALID;
	}
	return 0;
}

static int rings_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target,
		       const nt_value *v, char *err, size_t errsize)
{
	nt_rings want = { .rx = v->f.v[RX], .tx = v->f.v[TX] };
	char kerr[200] = "";
	int r = nt_ifname_valid(target) ? nt_ethtool_write_rings(eh, ctx, target, &want, true, kerr,
							    sizeof(kerr))
					: NT_EINVALID;
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s rings: %s%s%s", target, nt_strerror(r), kerr[0] ? ": " : "", kerr);
	return r;
}

const nt_setting_kind nt_setting_rings = {
	.name = "rings",
	/* Per NIC, over ethtool in the caller's namespace: a change reaches
	 * only a NIC moved into it. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NIC is a link of this namespace",
	.parse = rings_parse,
	.format = rings_format,
	.equal = rings_equal,
	.read = rings_read,
	.check = rings_check,
	.apply = rings_apply,
	.order = 30,
	.suborder = 0,
	.reset_warning = "changing rings or channels may reset the NIC and briefly drop its link",
	/* The kernel sends an ethtool netlink notification on every SET,
	 * whoever made it (ethtool -G, another daemon, a driver reset). */
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

/* ---- "rings": [...] ---- */

static bool has_rings(const nt_nic *nic)
{
	return nic->has_rings;
}

/* rx/tx: a positive integer or "max". */
static void check_ring_value(nt_section_check *c, const json_t *e, const char *base, const char *field,
			     const char *pattern)
{
	char path[NT_JSONPATH_MAX];
	json_t *x = json_object_get(e, field);
	snprintf(path, sizeof(path), "%s.%s", base, field);
	if (!x)
		return;
	if (json_is_string(x)) {
		if (strcmp(json_string_value(x), "max") != 0)
			nt_sc_error(c, path, "'%s' must be an integer or \"max\"", field);
		return;
	}
	if (!json_is_integer(x)) {
		nt_sc_error(c, path, "'%s' must be an integer or \"max\"", field);
		return;
	}
	json_int_t n = json_integer_value(x);
	if (n <= 0 || n > UINT32_MAX) {
		nt_sc_error(c, path, "%s %lld is not a positive ring size", field, (long long)n);
		return;
	}
	if (!c->t || !nt_iface_pattern_valid(pattern))
		return;
	for (int k = 0; k < c->t->nnics; k++) {
		const nt_nic *nic = &c->t->nics[k];
		if (!nt_iface_match(pattern, nic->name) || !nic->has_rings)
			continue;
		uint32_t max = strcmp(field, "rx") == 0 ? nic->rings.rx_max : nic->rings.tx_max;
		if (n > max)
			nt_sc_error(c, path, "%s %lld is above %s's maximum %u", field, (long long)n, nic->name,
				    max);
	}
}

static void validate_rings(nt_section_check *c, const json_t *arr)
{
	const char *known[16] = { "interface", "rx", "tx" };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	for (int k = 0; nt_ring_params_keys[k] && k + 4 < 16; k++)
		known[k + 3] = nt_ring_params_keys[k];
	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "rings", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		if (!json_object_get(e, "rx") && !json_object_get(e, "tx") && !nt_ring_params_in(e))
			nt_sc_error(c, base, "give 'rx', 'tx' or a ring parameter (%s, ...)", nt_ring_params_keys[0]);
		nt_ring_params_validate(c, e, base, iface);
		if (!iface)
			continue;
		snprintf(path, sizeof(path), "%s.interface", base);
		nt_sc_nic_with(c, iface, path, has_rings, "ring");
		check_ring_value(c, e, base, "rx", iface);
		check_ring_value(c, e, base, "tx", iface);
	}
}

/* A size the profile gives: absent keeps CUR, "max" is MAX. */
static uint32_t ring_value(const json_t *x, uint32_t cur, uint32_t max)
{
	if (!x)
		return cur;
	if (json_is_string(x))
		return max;
	return (uint32_t)json_integer_value(x);
}

static int desire_rings(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX];
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		snprintf(path, sizeof(path), "$.rings[%zu]", i);
		int r = nt_ring_params_desire(p, e, pattern, path);
		if (r < 0)
			return r;
		/* Only ring parameters: no ring size step. */
		if (!json_object_get(e, "rx") && !json_object_get(e, "tx"))
			continue;
		for (int k = 0; k < p->t->nnics; k++) {
			const nt_nic *nic = &p->t->nics[k];
			nt_value v;
			if (!nt_iface_match(pattern, nic->name))
				continue;
			if (!nic->has_rings) {
				nt_desire_warn(p, "%s: no ring settings; left out", nic->name);
				continue;
			}
			memset(&v, 0, sizeof(v));
			nt_value_field_set(&v, RX, ring_value(json_object_get(e, "rx"), nic->rings.rx, nic->rings.rx_max));
			nt_value_field_set(&v, TX, ring_value(json_object_get(e, "tx"), nic->rings.tx, nic->rings.tx_max));
			r = nt_desire_put(p, &nt_setting_rings, nic->name, nic->name, &v, path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static const nt_profile_section section_rings = {
	.key = "rings",
	.type = JSON_ARRAY,
	.validate = validate_rings,
	.desire = desire_rings,
};

const nt_setting_module nt_module_rings = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_rings, NULL },
	.sections = (const nt_profile_section *const[]){ &section_rings, NULL },
};
