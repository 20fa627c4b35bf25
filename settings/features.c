/* SPDX-License-Identifier: Apache-2.0 */
/* Offload features (`ethtool -k` / `-K`): target = "IFACE/FEATURE" with the
 * kernel's name of the feature ("enos1/rx-gro", "enos1/rx-ntuple-filter"),
 * value = "on" or "off", the feature's active state.
 *
 * Profile section:
 *   "features": [{"interface": "enos*", "features": {"rx-gro": true, "rx-lro": false}}]
 * ethtool's short names for a single feature are taken too ("gro", "lro",
 * "gso", "sg", "ntuple", "rxhash", ...) and planned under the kernel's name.
 * A feature the driver cannot change (fixed) is refused with the list of
 * those it can. GRO and TSO save a CPU most of its per-packet work on a
 * fast link; LRO merges what a forwarding host must pass on unchanged.
 *
 * The kernel keeps a wanted state per feature and derives the active one
 * from it (netdev_fix_features): a change can turn dependent features off
 * (scatter-gather off takes TSO with it) without touching their wanted
 * state. So a step sets only its own feature's wanted state; undoing it
 * gives the dependents back, and the step records, as observed, the
 * features the kernel now holds away from what is wanted. Through
 * kernel/features.h (ethtool netlink; the "features" object of
 * ROOT/ethtool/IFACE.json on a fixture root). */
#include "kernel/features.h"
#include "settings/section.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ethtool's short names that stand for exactly one kernel feature (the
 * others, "tso" and "tx", are several and must be named one by one). */
static const struct {
	const char *alias, *name;
} aliases[] = {
	{ "sg", "tx-scatter-gather" },
	{ "gso", "tx-generic-segmentation" },
	{ "gro", "rx-gro" },
	{ "lro", "rx-lro" },
	{ "ntuple", "rx-ntuple-filter" },
	{ "rxhash", "rx-hashing" },
	{ "rx", "rx-checksum" },
	{ "rxvlan", "rx-vlan-hw-parse" },
	{ "txvlan", "tx-vlan-hw-insert" },
	{ "rx-checksumming", "rx-checksum" },
	{ "scatter-gather", "tx-scatter-gather" },
	{ "generic-segmentation-offload", "tx-generic-segmentation" },
	{ "generic-receive-offload", "rx-gro" },
	{ "large-receive-offload", "rx-lro" },
	{ "ntuple-filters", "rx-ntuple-filter" },
	{ "receive-hashing", "rx-hashing" },
};

/* ethtool's short names that stand for several kernel features, which a
 * profile names one by one: what to name instead. */
static const struct {
	const char *alias, *names;
} groups[] = {
	{ "tso", "tx-tcp-segmentation, tx-tcp-ecn-segmentation, tx-tcp-mangleid-segmentation, tx-tcp6-segmentation" },
	{ "tx", "tx-checksum-ipv4, tx-checksum-ip-generic, tx-checksum-ipv6, tx-checksum-sctp, tx-checksum-fcoe-crc" },
	{ "ufo", "tx-udp-fragmentation" },
	{ "txudpseg", "tx-udp-segmentation" },
};

static const char *group_of(const char *name)
{
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (strcmp(groups[i].alias, name) == 0)
			return groups[i].names;
	return NULL;
}

/* The kernel's name for NAME (itself when it is no alias). */
static const char *canonical(const char *name)
{
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(aliases[i].alias, name) == 0)
			return aliases[i].name;
	return name;
}

/* Feature names as the kernel spells them: lower case, digits, '-'. */
static bool name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n >= NT_FEATURE_NAME)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '-'))
			return false;
	return true;
}

/* "IFACE/FEATURE" into its parts. Returns 0 or NT_EINVALID. */
static int split_target(const char *target, char *ifname, char *feature)
{
	const char *slash = target ? strchr(target, '/') : NULL;
	size_t n = slash ? (size_t)(slash - target) : 0;
	if (!slash || n == 0 || n >= IF_NAMESIZE)
		return NT_EINVALID;
	memcpy(ifname, target, n);
	ifname[n] = '\0';
	if (!nt_ifname_valid(ifname) || !name_valid(slash + 1))
		return NT_EINVALID;
	snprintf(feature, NT_FEATURE_NAME, "%s", canonical(slash + 1));
	return 0;
}

static int feature_parse(const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	if (!text || (strcmp(text, "on") != 0 && strcmp(text, "off") != 0))
		return NT_EPARSE;
	nt_value_field_set(out, 0, strcmp(text, "on") == 0);
	return 0;
}

static int feature_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%s", v->f.v[0] ? "on" : "off");
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static bool feature_equal(const nt_value *a, const nt_value *b)
{
	return !a->f.v[0] == !b->f.v[0];
}

static void value_of(const nt_feature *f, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	nt_value_field_set(out, 0, f->active);
}

/* The features of TARGET's interface into FS (malloc'd by the caller), the
 * one TARGET names in *F. */
static int read_feature(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_features *fs,
			const nt_feature **f, char *ifname, char *feature)
{
	int r = split_target(target, ifname, feature);
	if (r < 0)
		return r;
	if ((r = nt_features_get(eh, ctx, ifname, fs)) < 0)
		return r;
	*f = nt_features_find(fs, feature);
	return *f ? 0 : -ENOENT;
}

static int feature_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	char ifname[IF_NAMESIZE], feature[NT_FEATURE_NAME];
	const nt_feature *f = NULL;
	nt_features *fs = malloc(sizeof(*fs));
	int r = fs ? read_feature(ctx, eh, target, fs, &f, ifname, feature) : -ENOMEM;
	if (r == 0)
		value_of(f, out);
	free(fs);
	return r;
}

/* "a, b, c" for the changeable features of FS, cut with "..." to SIZE. */
static void changeable_list(const nt_features *fs, char *out, size_t size)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < fs->n; i++) {
		if (fs->f[i].fixed)
			continue;
		int w = snprintf(out + len, size - len, "%s%s", len ? ", " : "", fs->f[i].name);
		if (w < 0 || (size_t)w >= size - len) {
			if (size > 4)
				memcpy(out + (len + 4 < size ? len : size - 4), "...", 4);
			return;
		}
		len += (size_t)w;
	}
	if (!len)
		snprintf(out, size, "none");
}

static int feature_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
			 const nt_value *v, char *why, size_t whysize)
{
	char ifname[IF_NAMESIZE], feature[NT_FEATURE_NAME], list[384];
	const nt_feature *f = NULL;
	nt_features *fs = malloc(sizeof(*fs));
	int r;

	(void)t;
	if (!fs)
		return -ENOMEM;
	r = read_feature(ctx, eh, target, fs, &f, ifname, feature);
	if (r == NT_EINVALID) {
		snprintf(why, whysize, "'%s' is not INTERFACE/FEATURE", target);
	} else if (r == -ENOENT && fs->n > 0 && group_of(feature)) {
		changeable_list(fs, list, sizeof(list));
		snprintf(why, whysize, "%s: '%s' is ethtool's short name for the features %s: name each one "
			 "(it can change: %s)", ifname, feature, group_of(feature), list);
	} else if (r == -ENOENT && fs->n > 0) {
		changeable_list(fs, list, sizeof(list));
		snprintf(why, whysize, "%s has no feature '%s'; it can change: %s", ifname, feature, list);
	} else if (r < 0) {
		snprintf(why, whysize, "%s: features cannot be read: %s", ifname, nt_strerror(r));
	} else if (f->fixed && !f->active != !v->f.v[0]) {
		changeable_list(fs, list, sizeof(list));
		snprintf(why, whysize, "%s: %s is fixed %s (the driver cannot change it); it can change: %s",
			 ifname, feature, f->active ? "on" : "off", list);
		r = NT_EINVALID;
	}
	if (r < 0 && r != -ENOMEM)
		r = NT_EINVALID;
	free(fs);
	return r;
}

static int feature_apply_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
			      nt_value *got, int *read_err, char *err, size_t errsize)
{
	char ifname[IF_NAMESIZE], feature[NT_FEATURE_NAME], kerr[200] = "";
	nt_features *after = malloc(sizeof(*after));
	const nt_feature *f;
	bool on = v->f.v[0] != 0;
	int r = split_target(target, ifname, feature);

	*read_err = -EIO;
	if (!after)
		r = -ENOMEM;
	if (r < 0) {
		snprintf(err, errsize, "%s: %s", target, nt_strerror(r));
		goto out;
	}
	r = nt_features_set(eh, ctx, ifname, feature, on, after, kerr, sizeof(kerr));
	if (r < 0) {
		snprintf(err, errsize, "%s %s: %s%s%s", ifname, feature, nt_strerror(r), kerr[0] ? ": " : "",
			 kerr);
		goto out;
	}
	if (!(f = nt_features_find(after, feature))) {
		*read_err = -ENOENT;
		goto out;
	}
	/* The kernel answers a change it will not make (a fixed feature, one
	 * held by another that is off) with success and the old state. */
	if (f->active != on) {
		snprintf(err, errsize, "%s: the kernel kept %s %s%s", ifname, feature, f->active ? "on" : "off",
			 f->fixed ? " (fixed)" : " (a feature it depends on is off, or the driver refused)");
		r = -EOPNOTSUPP;
		goto out;
	}
	value_of(f, got);
	*read_err = 0;
out:
	free(after);
	return r;
}

static int feature_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
			 size_t errsize)
{
	nt_value got;
	int rr;
	return feature_apply_read(ctx, eh, target, v, &got, &rr, err, errsize);
}

/* The features of the interface the kernel holds away from their wanted
 * state: those a change took with it ("held: tx-tcp-segmentation off
 * (wanted on)"), which come back when it is undone. */
static int feature_observe(const nt_ctx *ctx, nt_ethtool *eh, const char *target, char *out, size_t size)
{
	char ifname[IF_NAMESIZE], feature[NT_FEATURE_NAME];
	nt_features *fs = malloc(sizeof(*fs));
	size_t len = 0;
	int r = split_target(target, ifname, feature);

	if (!fs)
		return -ENOMEM;
	if (r == 0)
		r = nt_features_get(eh, ctx, ifname, fs);
	for (int i = 0; r == 0 && i < fs->n; i++) {
		const nt_feature *f = &fs->f[i];
		if (f->fixed || f->active == f->wanted)
			continue;
		int w = snprintf(out + len, size - len, "%s%s %s (wanted %s)", len ? ", " : "held: ", f->name,
				 f->active ? "on" : "off", f->wanted ? "on" : "off");
		if (w < 0 || (size_t)w >= size - len)
			break; /* cut: the record is a note, not a value */
		len += (size_t)w;
	}
	if (r == 0 && len == 0)
		snprintf(out, size, "every feature as wanted");
	free(fs);
	return r;
}

const nt_setting_kind nt_setting_feature = {
	.name = "feature",
	/* Offloads are a link's, set over ethtool in the caller's namespace. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NIC is a link of this namespace",
	.parse = feature_parse,
	.format = feature_format,
	.equal = feature_equal,
	.read = feature_read,
	.check = feature_check,
	.apply = feature_apply,
	.apply_read = feature_apply_read,
	.observe = feature_observe,
	/* Before the queue kinds: some drivers rebuild their rings when an
	 * offload changes (LRO, GRO-HW), which would undo rings set earlier. */
	.order = 4,
	/* The kernel sends ETHTOOL_MSG_FEATURES_NTF on every change, whoever
	 * made it (ethtool -K, a bond syncing its ports' LRO). */
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

/* ---- "features": [...] ---- */

static void validate_features(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "features", NULL };
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];
	const char *name;
	json_t *e, *x;
	size_t i;

	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "features", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		if (iface) {
			snprintf(path, sizeof(path), "%s.interface", base);
			nt_sc_iface(c, iface, path, false);
		}
		json_t *map = json_object_get(e, "features");
		snprintf(path, sizeof(path), "%s.features", base);
		if (!json_is_object(map) || json_object_size(map) == 0) {
			nt_sc_error(c, path, "'features' must be an object of feature names to true or false");
			continue;
		}
		json_object_foreach(map, name, x) {
			snprintf(path, sizeof(path), "%s.features['%s']", base, name);
			if (!name_valid(name))
				nt_sc_error(c, path, "'%.40s' is not a feature name (as ethtool -k prints them: rx-gro)",
					    name);
			else if (!json_is_boolean(x))
				nt_sc_error(c, path, "'%s' must be true or false", name);
		}
	}
}

static int desire_features(nt_section_plan *p, const json_t *arr)
{
	char path[NT_JSONPATH_MAX], target[NT_TARGET_MAX];
	const char *name;
	json_t *e, *x;
	size_t i;

	nt_features *fs = malloc(sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	json_array_foreach(arr, i, e) {
		const char *pattern = json_string_value(json_object_get(e, "interface"));
		bool glob = nt_iface_is_glob(pattern);
		for (int k = 0; k < p->t->nnics; k++) {
			const nt_nic *nic = &p->t->nics[k];
			if (!nt_iface_match(pattern, nic->name))
				continue;
			/* A glob also matches NICs that lack a feature or cannot
			 * change it (lo, veth, bridges): those are left out, where a
			 * NIC named outright is refused by the plan's check. */
			if (glob && nt_features_get(NULL, &p->t->ctx, nic->name, fs) < 0) {
				nt_desire_warn(p, "%s: no offload features to change; left out", nic->name);
				continue;
			}
			json_object_foreach(json_object_get(e, "features"), name, x) {
				const nt_feature *f = glob ? nt_features_find(fs, canonical(name)) : NULL;
				if (glob && (!f || (f->fixed && f->active != json_is_true(x)))) {
					nt_desire_warn(p, "%s: %s %s; left out", nic->name, canonical(name),
						       f ? (f->active ? "is fixed on" : "is fixed off") : "is not a feature of it");
					continue;
				}
				nt_value v;
				memset(&v, 0, sizeof(v));
				nt_value_field_set(&v, 0, json_is_true(x));
				snprintf(path, sizeof(path), "$.features[%zu].features['%s']", i, name);
				snprintf(target, sizeof(target), "%s/%s", nic->name, canonical(name));
				int r = nt_desire_put(p, &nt_setting_feature, target, nic->name, &v, path);
				if (r < 0) {
					free(fs);
					return r;
				}
			}
		}
	}
	free(fs);
	return 0;
}

static const nt_profile_section section_features = {
	.key = "features",
	.type = JSON_ARRAY,
	.validate = validate_features,
	.desire = desire_features,
};

/* "features": {"rx-gro": {"on": true, "fixed": false}, ...} by the
 * kernel's names, "wanted" added where the kernel holds a changeable
 * feature away from it; null when the NIC has none. For GET
 * /v1/nics/{name} only: sixty-odd members a NIC, and a kernel request. */
static int report_features(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	nt_features *fs = malloc(sizeof(*fs));
	json_t *o = NULL;
	int r = fs ? nt_features_get(eh, ctx, nic->name, fs) : -ENOMEM;

	if (r == -EOPNOTSUPP) {
		r = json_object_set_new(out, "features", json_null());
		goto out;
	}
	if (r < 0)
		goto out;
	if (!(o = json_object())) {
		r = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < fs->n; i++) {
		const nt_feature *f = &fs->f[i];
		json_t *e = json_pack("{s:b,s:b}", "on", f->active, "fixed", f->fixed);
		if (e && !f->fixed && f->wanted != f->active)
			json_object_set_new(e, "wanted", json_boolean(f->wanted));
		if (!e || json_object_set_new(o, f->name, e) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = json_object_set_new(out, "features", o);
	o = NULL;
out:
	json_decref(o);
	free(fs);
	return r < 0 ? r : 0;
}

const nt_setting_module nt_module_features = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_feature, NULL },
	.sections = (const nt_profile_section *const[]){ &section_features, NULL },
	.report_nic_detail = report_features,
};
