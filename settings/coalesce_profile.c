/* SPDX-License-Identifier: Apache-2.0 */
/* Adaptive-coalescing (DIM) profiles: kinds "coalesce_rx_profile" and
 * "coalesce_tx_profile", target = interface, value = the profile's levels
 * as "usec/pkts/comps" joined by commas, '-' for a field the driver does
 * not have (or a profile leaves as it is):
 *   "1/256/-,8/256/-,64/256/-,128/256/-,256/256/-"
 *
 * Profile keys of a "coalesce" entry (settings/coalesce.c owns the
 * section):
 *   "coalesce": [{"interface": "eth0", "rx_profile": [{"usec": 1, "pkts": 256},
 *       {"usec": 8}, {"usec": 8}, {"usec": 8}, {"usec": 8}]}]
 * With adaptive coalescing on (adaptive_rx/adaptive_tx) the driver's DIM
 * moves each queue between NT_DIM_PARAMS_NUM_PROFILES levels, from the
 * least moderation (level 0) to the most, by the traffic it measures; a
 * level is the interrupt moderation the driver then programs: wait USEC
 * microseconds or PKTS packets (COMPS completions) before an interrupt.
 * The profile decides what "adaptive" does: the kernel's defaults
 * (lib/dim/net_dim.c) reach 256 us on RX.
 *
 * Through ethtool netlink only (ETHTOOL_A_COALESCE_RX_PROFILE/TX_PROFILE,
 * Linux 6.11; kernel/ethtool_nlattrs.h), and the "rx_profile" and
 * "tx_profile" arrays of the "coalesce" object of ROOT/ethtool/IFACE.json
 * on a fixture root. The kernel's reply carries a profile only when the
 * driver keeps one (net_dim_init_irq_moder: virtio_net; mlx5 and others
 * keep theirs to themselves), with the fields its coal_flags allow; a SET
 * sends all the levels and only the fields that differ. The kernel keeps
 * each value in a u16, so anything above 65535 is refused here rather
 * than cut short there. */
#include "settings/coalesce_profile.h"
#include "kernel/ethtool_nlattrs.h"
#include "settings/group_kind.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEVELS = NT_DIM_PARAMS_NUM_PROFILES, LEAVES = 3, NFIELDS = LEVELS * LEAVES };
_Static_assert(NFIELDS <= NT_VALUE_FIELDS, "a profile fits a value");

/* struct dim_cq_moder's fields are u16 (include/linux/dim.h). */
#define LEAF_MAX 65535
/* The first release with the profiles (kernel/ethtool_nlattrs.h). */
#define SINCE "6.11"

static const char *const leaf_names[LEAVES] = { "usec", "pkts", "comps" };

#define LEAF(n, A) { n, NT_ETHTOOL_A_IRQ_MODERATION_##A, NT_ETHTOOL_U32, NT_ETHTOOL_NO_IOCTL, false, NULL }
#define LEVEL LEAF("usec", USEC), LEAF("pkts", PKTS), LEAF("comps", COMPS)
/* Level k's usec, pkts, comps are fields 3k, 3k+1, 3k+2. */
static const nt_ethtool_field leaves[NFIELDS] = { LEVEL, LEVEL, LEVEL, LEVEL, LEVEL };

#define PROFILE_GROUP(dir, DIR)                                                                                \
	{                                                                                                      \
		.section = "coalesce", .get_cmd = ETHTOOL_MSG_COALESCE_GET, .set_cmd = ETHTOOL_MSG_COALESCE_SET, \
		.header_attr = ETHTOOL_A_COALESCE_HEADER, .ioc_get = ETHTOOL_GCOALESCE,                        \
		.ioc_set = ETHTOOL_SCOALESCE, .ioc_size = sizeof(struct ethtool_coalesce), .fields = leaves,    \
		.nfields = NFIELDS, .nest = NT_ETHTOOL_A_COALESCE_##DIR##_PROFILE,                              \
		.entry_attr = NT_ETHTOOL_A_PROFILE_IRQ_MODERATION, .nentries = LEVELS, .nest_key = dir "_profile", \
	}
static const nt_ethtool_group groups[2] = { PROFILE_GROUP("rx", RX), PROFILE_GROUP("tx", TX) };

const char *const nt_coalesce_profile_keys[] = { "rx_profile", "tx_profile", NULL };

/* ---- values ---- */

static int profile_parse(const char *text, nt_value *out)
{
	const char *p = text;
	memset(out, 0, sizeof(*out));
	if (!text)
		return NT_EPARSE;
	for (int i = 0; i < NFIELDS; i++) {
		if (*p == '-') {
			p++;
		} else {
			char *e;
			if (*p < '0' || *p > '9')
				return NT_EPARSE;
			unsigned long x = strtoul(p, &e, 10);
			if (x > LEAF_MAX || e - p > 5)
				return NT_EPARSE;
			nt_value_field_set(out, i, (uint32_t)x);
			p = e;
		}
		char sep = i == NFIELDS - 1 ? '\0' : i % LEAVES == LEAVES - 1 ? ',' : '/';
		if (*p != sep)
			return NT_EPARSE;
		if (sep)
			p++;
	}
	return 0;
}

static int profile_format(const nt_value *v, char *out, size_t size)
{
	size_t len = 0;
	if (size == 0)
		return -ENOSPC;
	out[0] = '\0';
	for (int i = 0; i < NFIELDS; i++) {
		const char *sep = i == 0 ? "" : i % LEAVES == 0 ? "," : "/";
		int w = (v->f.present & (1u << i)) ? snprintf(out + len, size - len, "%s%u", sep, v->f.v[i])
						   : snprintf(out + len, size - len, "%s-", sep);
		if (w < 0 || (size_t)w >= size - len)
			return -ENOSPC;
		len += (size_t)w;
	}
	return 0;
}

static bool profile_equal(const nt_value *a, const nt_value *b)
{
	return nt_gk_equal(&groups[0], a, b);
}

/* ---- the system ---- */

static int read_dir(int dir, const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	return nt_gk_read(eh, ctx, &groups[dir], target, false, out);
}

/* "usec, pkts" for the leaves of level 0 in MASK. */
static void leaf_list(uint32_t mask, char *out, size_t size)
{
	size_t len = 0;
	out[0] = '\0';
	for (int l = 0; l < LEAVES; l++)
		if (mask & (1u << l) && len < size)
			len += (size_t)snprintf(out + len, size - len, "%s%s", len ? ", " : "", leaf_names[l]);
}

/* Why a NIC with coalescing reports no profile: the kernel, its
 * interface or the driver, as a clause ("needs Linux 6.11 or later (this
 * kernel is 6.1.0-27-amd64)", "the driver does not report it"). */
static void absent_why(const nt_ctx *ctx, nt_ethtool *eh, char *out, size_t size)
{
	char release[64];
	bool netlink;
	nt_gk_kernel_of(ctx, eh, release, sizeof(release), &netlink);
	nt_ethtool_absent_why(&leaves[0], SINCE, release, netlink, out, size);
}

/* The NIC must report the profile, and every field asked for: a driver
 * keeps usec, pkts or comps as its coal_flags say. */
static int check_dir(int dir, const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
		     char *why, size_t whysize)
{
	const char *key = nt_coalesce_profile_keys[dir];
	nt_value cur;
	int r = read_dir(dir, ctx, eh, target, &cur);
	if (r < 0 && r != -EOPNOTSUPP) {
		snprintf(why, whysize, "%s: interrupt coalescing cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	if (r == -EOPNOTSUPP || cur.f.present == 0) {
		char reason[160];
		if (r == -EOPNOTSUPP)
			snprintf(reason, sizeof(reason), "the NIC has no interrupt coalescing");
		else
			absent_why(ctx, eh, reason, sizeof(reason));
		snprintf(why, whysize, "%s has no adaptive-coalescing profile to set (%s): %s", target, key, reason);
		return NT_EINVALID;
	}
	uint32_t missing = v->f.present & ~cur.f.present;
	if (missing) {
		uint32_t want = 0, have = 0;
		for (int i = 0; i < NFIELDS; i++) {
			if (missing & (1u << i))
				want |= 1u << (i % LEAVES);
			if (cur.f.present & (1u << i))
				have |= 1u << (i % LEAVES);
		}
		char w[32], h[32];
		leaf_list(want, w, sizeof(w));
		leaf_list(have, h, sizeof(h));
		snprintf(why, whysize, "%s does not support %s in its %s: the driver's levels have %s", target, w, key,
			 h);
		return NT_EINVALID;
	}
	for (int i = 0; i < NFIELDS; i++)
		if ((v->f.present & (1u << i)) && v->f.v[i] > LEAF_MAX) {
			snprintf(why, whysize, "%s %s level %d %s %u is above %d (the kernel keeps a u16)", target, key,
				 i / LEAVES, leaf_names[i % LEAVES], v->f.v[i], LEAF_MAX);
			return NT_EINVALID;
		}
	return 0;
}

static int apply_dir(int dir, const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		     size_t errsize)
{
	return nt_gk_apply(eh, ctx, &groups[dir], target, v, err, errsize);
}

static int rx_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	return read_dir(0, ctx, eh, target, out);
}
static int tx_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	return read_dir(1, ctx, eh, target, out);
}
static int rx_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target, const nt_value *v,
		    char *why, size_t whysize)
{
	(void)t;
	return check_dir(0, ctx, eh, target, v, why, whysize);
}
static int tx_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target, const nt_value *v,
		    char *why, size_t whysize)
{
	(void)t;
	return check_dir(1, ctx, eh, target, v, why, whysize);
}
static int rx_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		    size_t errsize)
{
	return apply_dir(0, ctx, eh, target, v, err, errsize);
}
static int tx_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		    size_t errsize)
{
	return apply_dir(1, ctx, eh, target, v, err, errsize);
}

#define PROFILE_KIND(dir, sub)                                                                       \
	{                                                                                            \
		.name = "coalesce_" #dir "_profile", .scope = NT_SCOPE_NETNS,                         \
		.scope_why = "the NIC is a link of this namespace", .parse = profile_parse,          \
		.format = profile_format, .equal = profile_equal, .read = dir##_read,                \
		.check = dir##_check, .apply = dir##_apply,                                          \
		/* What is there with the profile's fields put in: a restore then sets every       \
		 * level back. */                                                                    \
		.compose = nt_gk_compose,                                                            \
		/* After the NIC's other coalescing parameters, adaptive_rx among them. */           \
		.order = 30, .suborder = sub,                                                        \
		/* A SET of either sends COALESCE_NTF, whoever made it. */                           \
		.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),                                        \
	}

const nt_setting_kind nt_setting_coalesce_rx_profile = PROFILE_KIND(rx, 3);
const nt_setting_kind nt_setting_coalesce_tx_profile = PROFILE_KIND(tx, 4);
static const nt_setting_kind *const kinds[2] = { &nt_setting_coalesce_rx_profile, &nt_setting_coalesce_tx_profile };

/* ---- the "coalesce" entry's keys ---- */

bool nt_coalesce_profile_in(const json_t *entry)
{
	for (int d = 0; nt_coalesce_profile_keys[d]; d++)
		if (json_object_get(entry, nt_coalesce_profile_keys[d]))
			return true;
	return false;
}

void nt_coalesce_profile_validate(nt_section_check *c, const json_t *entry, const char *base)
{
	char path[NT_JSONPATH_MAX], lpath[NT_JSONPATH_MAX];
	for (int d = 0; nt_coalesce_profile_keys[d]; d++) {
		const char *key = nt_coalesce_profile_keys[d];
		const json_t *arr = json_object_get(entry, key);
		size_t i;
		json_t *lv;
		if (!arr)
			continue;
		snprintf(path, sizeof(path), "%s.%s", base, key);
		if (!json_is_array(arr) || json_array_size(arr) != LEVELS) {
			if (json_is_array(arr))
				nt_sc_error(c, path,
					    "'%s' must list the %d levels of an adaptive-coalescing profile (the kernel's "
					    "NET_DIM_PARAMS_NUM_PROFILES), each {\"usec\": N, \"pkts\": N, \"comps\": N} "
					    "with the fields to set ({} keeps a level), not %zu",
					    key, LEVELS, json_array_size(arr));
			else
				nt_sc_error(c, path, "'%s' must be an array of %d levels", key, LEVELS);
			continue;
		}
		json_array_foreach(arr, i, lv) {
			snprintf(lpath, sizeof(lpath), "%s[%zu]", path, i);
			if (!json_is_object(lv)) {
				nt_sc_error(c, lpath, "a level of '%s' must be an object with usec, pkts or comps", key);
				continue;
			}
			static const char *const known[] = { "usec", "pkts", "comps", NULL };
			nt_sc_unknown_fields(c, lv, lpath, known);
			/* An empty level keeps what the NIC has there. */
			for (int l = 0; l < LEAVES; l++) {
				json_t *x = json_object_get(lv, leaf_names[l]);
				char fpath[NT_JSONPATH_MAX + 8];
				if (!x)
					continue;
				snprintf(fpath, sizeof(fpath), "%s.%s", lpath, leaf_names[l]);
				if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > LEAF_MAX)
					nt_profile_error(c->errors, fpath,
							 "'%s' must be an integer from 0 to %d (the kernel keeps a u16)",
							 leaf_names[l], LEAF_MAX);
			}
		}
	}
}

int nt_coalesce_profile_desire(nt_section_plan *p, const json_t *entry, const char *pattern, const char *path)
{
	char kpath[NT_JSONPATH_MAX];
	for (int d = 0; nt_coalesce_profile_keys[d]; d++) {
		const json_t *arr = json_object_get(entry, nt_coalesce_profile_keys[d]);
		nt_value v;
		if (!arr)
			continue;
		memset(&v, 0, sizeof(v));
		for (int k = 0; k < LEVELS; k++)
			for (int l = 0; l < LEAVES; l++) {
				json_t *x = json_object_get(json_array_get(arr, (size_t)k), leaf_names[l]);
				if (x)
					nt_value_field_set(&v, k * LEAVES + l, (uint32_t)json_integer_value(x));
			}
		snprintf(kpath, sizeof(kpath), "%s.%s", path, nt_coalesce_profile_keys[d]);
		for (int i = 0; i < p->t->nnics; i++) {
			const nt_nic *nic = &p->t->nics[i];
			nt_value cur;
			if (!nt_iface_match(pattern, nic->name))
				continue;
			/* A glob also matches NICs whose driver keeps no profile
			 * (or a kernel before 6.11): left out, as NICs without
			 * coalescing are; a NIC named outright is refused by the
			 * check, with the reason. */
			int r = nt_iface_is_glob(pattern) ? read_dir(d, &p->t->ctx, NULL, nic->name, &cur) : 0;
			if (nt_iface_is_glob(pattern) && (r < 0 || cur.f.present == 0)) {
				char why[160] = "the NIC has no interrupt coalescing";
				if (r == 0)
					absent_why(&p->t->ctx, NULL, why, sizeof(why));
				nt_desire_warn(p, "%s: no adaptive-coalescing profile (%s: %s); left out", nic->name,
					       nt_coalesce_profile_keys[d], why);
				continue;
			}
			r = nt_desire_put(p, kinds[d], nic->name, nic->name, &v, kpath);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* ---- the report ---- */

int nt_coalesce_profile_report(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *params)
{
	for (int d = 0; nt_coalesce_profile_keys[d]; d++) {
		nt_value v;
		json_t *f;
		int r = read_dir(d, ctx, eh, nic->name, &v);
		if (r == -ENOMEM)
			return r;
		if (r == 0 && v.f.present) {
			json_t *levels = json_array();
			for (int k = 0; levels && k < LEVELS; k++) {
				json_t *lv = json_object();
				for (int l = 0; lv && l < LEAVES; l++)
					if ((v.f.present & (1u << (k * LEAVES + l))) &&
					    json_object_set_new(lv, leaf_names[l], json_integer(v.f.v[k * LEAVES + l])) < 0) {
						json_decref(lv);
						lv = NULL;
					}
				if (!lv || json_array_append_new(levels, lv) < 0) {
					json_decref(levels);
					levels = NULL;
				}
			}
			f = levels ? json_pack("{s:b,s:o}", "supported", 1, "value", levels) : NULL;
		} else {
			char reason[160];
			if (r < 0 && r != -EOPNOTSUPP)
				snprintf(reason, sizeof(reason), "cannot be read: %s", nt_strerror(r));
			else
				absent_why(ctx, eh, reason, sizeof(reason));
			f = json_pack("{s:b,s:s}", "supported", 0, "reason", reason);
		}
		if (!f || json_object_set_new(params, nt_coalesce_profile_keys[d], f) < 0)
			return -ENOMEM;
	}
	return 0;
}

const nt_setting_module nt_module_coalesce_profile = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_coalesce_rx_profile, &nt_setting_coalesce_tx_profile,
						   NULL },
};
