/* SPDX-License-Identifier: Apache-2.0 */
/* Channel (queue) counts: target = interface, value = the RX, TX, other and
 * combined counts ("rx=N,tx=N,other=N,combined=N" as text; all four always
 * present in a stored value, so a restore sets every count back).
 *
 * Profile section:
 *   "channels": [{"interface": "enos*", "combined": "max"}]
 * Changing channels re-creates the NIC's queues and IRQ vectors: the plan
 * warns, and the channel steps come before IRQ affinity, RSS and the queue
 * files, which the new queues take; one that lowers the RX count comes
 * after the NIC's RSS tables, contexts and flow rules (see the kind). */
#include "kernel/ethtool.h"
#include "settings/section.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { RX, TX, OTHER, COMBINED, NFIELDS };
static const char *const field_names[NFIELDS] = { "rx", "tx", "other", "combined" };

static void from_counts(const nt_channels *c, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	nt_value_field_set(out, RX, c->rx);
	nt_value_field_set(out, TX, c->tx);
	nt_value_field_set(out, OTHER, c->other);
	nt_value_field_set(out, COMBINED, c->combined);
}

static uint32_t max_of(const nt_channels *c, int field)
{
	const uint32_t max[NFIELDS] = { c->rx_max, c->tx_max, c->other_max, c->combined_max };
	return max[field];
}

static uint32_t cur_of(const nt_channels *c, int field)
{
	const uint32_t cur[NFIELDS] = { c->rx, c->tx, c->other, c->combined };
	return cur[field];
}

static int channels_parse(const char *text, nt_value *out)
{
	nt_channels c = { 0 };
	char tail;
	if (!text || sscanf(text, "rx=%u,tx=%u,other=%u,combined=%u%c", &c.rx, &c.tx, &c.other,
			    &c.combined, &tail) != 4)
		return NT_EPARSE;
	from_counts(&c, out);
	return 0;
}

static int channels_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "rx=%u,tx=%u,other=%u,combined=%u", v->f.v[RX], v->f.v[TX],
			 v->f.v[OTHER], v->f.v[COMBINED]);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static bool channels_equal(const nt_value *a, const nt_value *b)
{
	for (int i = 0; i < NFIELDS; i++)
		if (a->f.v[i] != b->f.v[i])
			return false;
	return true;
}

static int channels_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	nt_channels c;
	if (!nt_ifname_valid(target))
		return NT_EINVALID;
	int e = nt_ethtool_read_channels(eh, ctx, target, &c);
	if (e < 0)
		return e;
	from_counts(&c, out);
	return 0;
}

static int channels_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
			  const nt_value *v, char *why, size_t whysize)
{
	nt_channels cur;
	int r;

	if (!nt_ifname_valid(target)) {
		snprintf(why, whysize, "'%s' is not an interface name", target);
		return NT_EINVALID;
	}
	if ((r = nt_ethtool_read_channels(eh, ctx, target, &cur)) < 0) {
		snprintf(why, whysize, "%s: channel counts cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	for (int i = 0; i < NFIELDS; i++) {
		if (v->f.v[i] > max_of(&cur, i)) {
			snprintf(why, whysize, "%s channels %u is above %s's maximum %u", field_names[i],
				 v->f.v[i], target, max_of(&cur, i));
			return NT_EINVALID;
		}
	}
	/* A NIC with no queue at all carries no traffic: the kernel refuses. */
	if (v->f.v[COMBINED] + v->f.v[RX] == 0 || v->f.v[COMBINED] + v->f.v[TX] == 0) {
		snprintf(why, whysize, "%s would be left without RX or TX queues", target);
		return NT_EINVALID;
	}
	return 0;
}

static int channels_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target,
			  const nt_value *v, char *err, size_t errsize)
{
	nt_channels want = { .rx = v->f.v[RX], .tx = v->f.v[TX], .other = v->f.v[OTHER],
			     .combined = v->f.v[COMBINED] };
	char kerr[200] = "";
	int r = nt_ifname_valid(target) ? nt_ethtool_write_channels(eh, ctx, target, &want, true, kerr,
							    sizeof(kerr))
					: NT_EINVALID;
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s channels: %s%s%s", target, nt_strerror(r), kerr[0] ? ": " : "", kerr);
	return r;
}

/* The RX queues a channel value gives its NIC: rx + combined, what an
 * RSS table or a flow rule may name. */
static int rx_queues(const nt_value *v)
{
	return (int)(v->f.v[RX] + v->f.v[COMBINED]);
}

/* Whether D leaves its NIC fewer RX queues than T shows it has now. */
static bool channels_lowers(const nt_topology *t, const struct nt_desired *d)
{
	const nt_nic *nic = t ? nt_topology_nic(t, d->target) : NULL;
	if (!nic || !nic->has_channels)
		return false;
	return rx_queues(&d->value) < (int)(nic->channels.rx + nic->channels.combined);
}

int nt_channels_rx_planned(const nt_section_plan *p, const char *nic, bool *lowers)
{
	const nt_desired *ch = nt_desire_get(p, &nt_setting_channels, nic);
	if (lowers)
		*lowers = ch && channels_lowers(p->t, ch);
	return ch ? rx_queues(&ch->value) : -1;
}

const nt_setting_kind nt_setting_channels = {
	.name = "channels",
	/* An ethtool request names a link of the caller's namespace: only a
	 * NIC moved into this namespace can be reached, and it is its own. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NIC is a link of this namespace",
	.parse = channels_parse,
	.format = channels_format,
	.equal = channels_equal,
	.read = channels_read,
	.check = channels_check,
	.apply = channels_apply,
	/* First of a NIC's settings: a channel change makes the driver build
	 * its queues anew, and drivers (virtio_net's set_channels) rewrite IRQ
	 * affinity and XPS themselves, so IRQ affinity (10), RSS (12) and the
	 * queue files (34) are set after it. A step that lowers the RX
	 * count goes after the NIC's RSS tables, contexts and flow rules
	 * (lowers_queues), still before IRQ affinity: the kernel refuses it
	 * while one of those names a queue it takes away. */
	.order = 8,
	.suborder = 1,
	.lowers_queues = channels_lowers,
	.reset_warning = "changing rings or channels may reset the NIC and briefly drop its link",
	/* The kernel sends an ethtool netlink notification on every SET,
	 * whoever made it (ethtool -L, another daemon, a driver reset). */
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

/* ---- "channels": [...] ---- */

static bool has_channels(const nt_nic *nic)
{
	return nic->has_channels;
}

/* rx, tx, other, combined: a count >= 0 or "max". */
static void validate_channels(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "rx", "tx", "other", "combined", NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "channels", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		bool any = false;
		for (int k = 0; k < NFIELDS; k++) {
			json_t *x = json_object_get(e, field_names[k]);
			if (!x)
				continue;
			any = true;
			snprintf(path, sizeof(path), "%s.%s", base, field_names[k]);
			if (json_is_string(x) ? strcmp(json_string_value(x), "max") != 0
					      : !json_is_integer(x) || json_integer_value(x) < 0 ||
							json_integer_value(x) > 65535) {
				nt_sc_error(c, path, "'%s' must be a count from 0 to 65535 or \"max\"",
					    field_names[k]);
				continue;
			}
			if (!json_is_integer(x) || !c->t || !iface || !nt_iface_pattern_valid(iface))
				continue;
			for (int n = 0; n < c->t->nnics; n++) {
				const nt_nic *nic = &c->t->nics[n];
				if (!nt_iface_match(iface, nic->name) || !nic->has_channels)
					continue;
				uint32_t max = max_of(&nic->channels, k);
				if (json_integer_value(x) > max)
					nt_sc_error(c, path, "%s %lld is above %s's maximum %u", field_names[k],
						    (long long)json_integer_value(x), nic->name, max);
			}
		}
		if (!any)
			nt_sc_error(c, base, "give at least one of rx, tx, other, combined");
		if (!iface)
			continue;
		snprintf(path, sizeof(path), "%s.interface", base);
		nt_sc_nic_with(c, iface, path, has_channels, "channel");
	}
}

static int desire_channels(nt_section_plan *p, const json_t *arr)
{
	size_t i;
	json_t *e;
	char path[NT_JSONPATH_MAX];
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		snprintf(path, sizeof(path), "$.channels[%zu]", i);
		for (int k = 0; k < p->t->nnics; k++) {
			const nt_nic *nic = &p->t->nics[k];
			nt_value v;
			if (!nt_iface_match(pattern, nic->name))
				continue;
			if (!nic->has_channels) {
				nt_desire_warn(p, "%s: no channel settings; left out", nic->name);
				continue;
			}
			memset(&v, 0, sizeof(v));
			for (int f = 0; f < NFIELDS; f++) {
				json_t *x = json_object_get(e, field_names[f]);
				uint32_t want = !x ? cur_of(&nic->channels, f)
					      : json_is_string(x) ? max_of(&nic->channels, f)
								  : (uint32_t)json_integer_value(x);
				nt_value_field_set(&v, f, want);
			}
			int r = nt_desire_put(p, &nt_setting_channels, nic->name, nic->name, &v, path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static const nt_profile_section section_channels = {
	.key = "channels",
	.type = JSON_ARRAY,
	.validate = validate_channels,
	.desire = desire_channels,
};

const nt_setting_module nt_module_channels = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_channels, NULL },
	.sections = (const nt_profile_section *const[]){ &section_channels, NULL },
};
