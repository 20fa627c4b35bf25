/* SPDX-License-Identifier: Apache-2.0 */
/* Ring parameters that only ethtool netlink reaches (the SIOCETHTOOL
 * ioctl's struct ethtool_ringparam has no field for them): target =
 * interface, value = the parameters the NIC reports, settable ones only
 * ("tcp_data_split=on,hds_thresh=256,tx_push=off,rx_push=off" as text).
 *
 * Profile keys, in the "rings" section beside rx and tx (settings/rings.c):
 *   "rings": [{"interface": "enp1s0f0", "tcp_data_split": "on", "hds_thresh": 256}]
 * tcp_data_split   header/data split, "on" or "off" (5.18): what TCP
 *                  zero-copy receive, devmem TCP and io_uring zero-copy RX
 *                  need; hds_thresh (6.14): the smallest packet split,
 *                  at most hds_thresh_max;
 * rx_buf_len (5.17), cqe_size (5.18): buffer and completion entry sizes;
 * tx_push (5.19), rx_push (6.3): descriptor push modes; tx_push_buf_len
 *                  (6.4): the push buffer, at most tx_push_buf_len_max.
 * The kernel leaves out of its RINGS_GET reply what the driver does not
 * report (rings_fill_reply), so a field missing there is "not supported":
 * a plan asking a NIC for it is refused, naming the kernel release the
 * field needs when the running kernel is older. Two exceptions: every
 * kernel that has tx-push and rx-push sends them, off, whatever the
 * driver; a driver without them refuses a change at apply time with the
 * kernel's reason ("setting tx push not supported"), and the transaction
 * rolls back.
 *
 * Through ethtool netlink (ETHTOOL_MSG_RINGS_GET/SET, with an ACK and the
 * kernel's extack text in the error), and the "rings" object of
 * ROOT/ethtool/IFACE.json on a fixture root (the same keys). */
#include "settings/ring_params.h"
#include "kernel/ethtool_nlattrs.h"
#include "settings/group_kind.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(name, A, width, ro, max) { name, NT_ETHTOOL_A_RINGS_##A, NT_ETHTOOL_##width, NT_ETHTOOL_NO_IOCTL, ro, max }

/* The settable fields first, in the order values are written; then the
 * maxima the kernel reports beside two of them. */
static const nt_ethtool_field fields[] = {
	F("tcp_data_split", TCP_DATA_SPLIT, U8, false, NULL),
	F("hds_thresh", HDS_THRESH, U32, false, "hds_thresh_max"),
	F("rx_buf_len", RX_BUF_LEN, U32, false, NULL),
	F("cqe_size", CQE_SIZE, U32, false, NULL),
	F("tx_push", TX_PUSH, U8, false, NULL),
	F("rx_push", RX_PUSH, U8, false, NULL),
	F("tx_push_buf_len", TX_PUSH_BUF_LEN, U32, false, "tx_push_buf_len_max"),
	F("hds_thresh_max", HDS_THRESH_MAX, U32, true, NULL),
	F("tx_push_buf_len_max", TX_PUSH_BUF_LEN_MAX, U32, true, NULL),
};
/* The first release of each (kernel/ethtool_nlattrs.h), by index. */
static const char *const since[] = { "5.18", "6.14", "5.17", "5.18", "5.19", "6.3", "6.4", "6.14", "6.4" };
enum {
	TDS, HDS, RX_BUF_LEN, CQE_SIZE, TX_PUSH, RX_PUSH, TX_PUSH_BUF_LEN, HDS_MAX, TX_PUSH_BUF_LEN_MAX,
	NFIELDS = sizeof(fields) / sizeof(fields[0]),
	NSET = HDS_MAX, /* settable: the fields before the maxima */
};
#define SETTABLE ((1u << NSET) - 1)
_Static_assert(NFIELDS <= NT_VALUE_FIELDS, "fields fit a value");
_Static_assert(sizeof(since) / sizeof(since[0]) == NFIELDS, "a release for every field");

const char *const nt_ring_params_keys[] = { "tcp_data_split", "hds_thresh", "rx_buf_len", "cqe_size",
					    "tx_push", "rx_push", "tx_push_buf_len", NULL };

/* The same RINGS_GET/SET as the ring sizes (kernel/ethtool.c), other
 * attributes. Through the ioctl (a kernel without ethtool netlink) none is
 * reported: the struct has no field for them. */
static const nt_ethtool_group group = {
	.section = "rings",
	.get_cmd = ETHTOOL_MSG_RINGS_GET,
	.set_cmd = ETHTOOL_MSG_RINGS_SET,
	.header_attr = ETHTOOL_A_RINGS_HEADER,
	.ioc_get = ETHTOOL_GRINGPARAM,
	.ioc_set = ETHTOOL_SRINGPARAM,
	.ioc_size = sizeof(struct ethtool_ringparam),
	/* ethnl_set_rings' text for hds-thresh above hds-thresh-max, as for
	 * a ring size above its maximum. */
	.above_max = "requested ring size exceeds maximum",
	.fields = fields,
	.nfields = NFIELDS,
};

/* What one RINGS_GET says of a NIC, with what is needed to say why a
 * field is missing. */
typedef struct rp_read {
	nt_ethtool_values v; /* raw, as the kernel sends them */
	char release[64]; /* /proc/sys/kernel/osrelease, "" when unknown */
	bool netlink; /* false: the handle talks through the ioctl */
} rp_read;

/* IFNAME's ring parameters through EH (NULL: a handle for this call, whose
 * backend then says whether ethtool netlink answered). Returns 0 or what
 * nt_ethtool_get_group returns (-EOPNOTSUPP: no ring settings at all). */
static int rp_get(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, rp_read *out)
{
	nt_ethtool *tmp = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	if (!eh) {
		if ((r = nt_ethtool_open(ctx, &tmp)) < 0)
			return r;
		eh = tmp;
	}
	out->netlink = nt_ethtool_backend_of(eh) != NT_ETHTOOL_IOCTL;
	r = nt_ethtool_get_group(eh, ctx, &group, ifname, &out->v);
	if (nt_read_str(ctx, out->release, sizeof(out->release), "/proc/sys/kernel/osrelease") < 0)
		out->release[0] = '\0';
	nt_ethtool_close(tmp);
	return r;
}

static bool reported(const rp_read *rd, int i)
{
	/* tcp-data-split 0 is "unknown": the kernel leaves it out then. */
	return (rd->v.present & (1u << i)) && (i != TDS || rd->v.v[i] != NT_ETHTOOL_TCP_DATA_SPLIT_UNKNOWN);
}

/* The settable fields of RD as a value: tcp_data_split as a flag (on for
 * enabled), the push modes as flags, the rest as numbers. */
static void to_value(const rp_read *rd, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < NSET; i++) {
		if (!reported(rd, i))
			continue;
		uint32_t x = rd->v.v[i];
		if (i == TDS)
			x = x == NT_ETHTOOL_TCP_DATA_SPLIT_ENABLED;
		else if (fields[i].width == NT_ETHTOOL_U8)
			x = x != 0;
		nt_value_field_set(out, i, x);
	}
}

/* ---- values and the system ---- */

static int rp_parse(const char *text, nt_value *out)
{
	int r = nt_gk_parse(&group, text, out);
	/* The maxima are reported, never part of a value. */
	return r == 0 && (out->f.present & ~SETTABLE) ? NT_EPARSE : r;
}

static int rp_format(const nt_value *v, char *out, size_t size)
{
	return nt_gk_format(&group, v, out, size);
}

static bool rp_equal(const nt_value *a, const nt_value *b)
{
	return nt_gk_equal(&group, a, b);
}

static int rp_read_value(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	rp_read rd;
	int r = rp_get(eh, ctx, target, &rd);
	memset(out, 0, sizeof(*out));
	if (r == 0)
		to_value(&rd, out);
	return r;
}

/* "hds_thresh 2048 is above enos0's maximum 1024", when field I of V is
 * above the maximum RD reports for it. */
static bool above_max(const rp_read *rd, int i, uint32_t v, const char *ifname, char *why, size_t whysize)
{
	int m = fields[i].max ? nt_ethtool_field_index(&group, fields[i].max) : -1;
	if (m < 0 || !(rd->v.present & (1u << m)) || v <= rd->v.v[m])
		return false;
	snprintf(why, whysize, "%s %u is above %s's maximum %u", fields[i].name, v, ifname, rd->v.v[m]);
	return true;
}

/* "enos0 does not support hds_thresh: needs Linux 6.14 or later (this
 * kernel is 6.1.0-27-amd64)". */
static void not_supported(const rp_read *rd, int i, const char *ifname, char *why, size_t whysize)
{
	char reason[160];
	nt_ethtool_absent_why(&fields[i], since[i], rd->release, rd->netlink, reason, sizeof(reason));
	snprintf(why, whysize, "%s does not support %s: %s", ifname, fields[i].name, reason);
}

static int rp_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		    const nt_value *v, char *why, size_t whysize)
{
	rp_read rd;
	(void)t;
	int r = rp_get(eh, ctx, target, &rd);
	if (r < 0) {
		snprintf(why, whysize, "%s: ring parameters cannot be read: %s", target, nt_strerror(r));
		return NT_EINVALID;
	}
	for (int i = 0; i < NSET; i++) {
		if (!(v->f.present & (1u << i)))
			continue;
		if (!reported(&rd, i)) {
			not_supported(&rd, i, target, why, whysize);
			return NT_EINVALID;
		}
		if (above_max(&rd, i, v->f.v[i], target, why, whysize))
			return NT_EINVALID;
	}
	return 0;
}

static int rp_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		    size_t errsize)
{
	nt_ethtool_values want = { .present = v->f.present & SETTABLE };
	char kerr[200] = "";
	int r = NT_EINVALID;

	for (int i = 0; i < NSET; i++) {
		uint32_t x = v->f.v[i];
		if (i == TDS)
			x = x ? NT_ETHTOOL_TCP_DATA_SPLIT_ENABLED : NT_ETHTOOL_TCP_DATA_SPLIT_DISABLED;
		else if (fields[i].width == NT_ETHTOOL_U8)
			x = x != 0;
		want.v[i] = x;
	}
	if (nt_ifname_valid(target))
		r = nt_ethtool_set_group(eh, ctx, &group, target, &want, kerr, sizeof(kerr));
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s ring parameters: %s%s%s", target, nt_strerror(r), kerr[0] ? ": " : "",
			 kerr);
	return r;
}

const nt_setting_kind nt_setting_ring_params = {
	.name = "ring_params",
	/* Per NIC, over ethtool in the caller's namespace. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NIC is a link of this namespace",
	.parse = rp_parse,
	.format = rp_format,
	.equal = rp_equal,
	.read = rp_read_value,
	.check = rp_check,
	.apply = rp_apply,
	/* What is there with the profile's fields put in: a restore sets
	 * every field back (only those that differ are sent). */
	.compose = nt_gk_compose,
	/* After the NIC's ring sizes, before its coalescing. */
	.order = 30,
	.suborder = 1,
	/* Drivers re-create their rings for these too (bnxt, mlx5,
	 * netdevsim); the same words as the ring sizes', said once a NIC. */
	.reset_warning = "changing rings or channels may reset the NIC and briefly drop its link",
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

/* ---- the "rings" section's keys (settings/rings.c) ---- */

bool nt_ring_params_in(const json_t *entry)
{
	for (int i = 0; i < NSET; i++)
		if (json_object_get(entry, fields[i].name))
			return true;
	return false;
}

/* The profile's spelling of field I as the kind's value (a flag for
 * tcp_data_split and the push modes). False when X is not of its form;
 * WHAT then says what it must be. */
static bool entry_value(int i, const json_t *x, uint32_t *out, const char **what)
{
	if (i == TDS) {
		*what = "\"on\" or \"off\"";
		const char *s = json_string_value(x);
		if (!s || (strcmp(s, "on") && strcmp(s, "off")))
			return false;
		*out = strcmp(s, "on") == 0;
		return true;
	}
	if (fields[i].width == NT_ETHTOOL_U8) {
		*what = "true or false";
		if (!json_is_boolean(x))
			return false;
		*out = json_is_true(x);
		return true;
	}
	/* The kernel's policy takes no 0 for rx_buf_len and cqe_size
	 * (NLA_POLICY_MIN(NLA_U32, 1)). */
	json_int_t lo = i == RX_BUF_LEN || i == CQE_SIZE ? 1 : 0;
	*what = lo ? "an integer from 1 to 4294967295" : "an integer from 0 to 4294967295";
	if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > UINT32_MAX)
		return false;
	*out = (uint32_t)json_integer_value(x);
	return true;
}

void nt_ring_params_validate(nt_section_check *c, const json_t *entry, const char *base, const char *iface)
{
	char path[NT_JSONPATH_MAX], why[320];
	uint32_t want[NSET] = { 0 };
	uint32_t asked = 0;
	const char *what;

	for (int i = 0; i < NSET; i++) {
		json_t *x = json_object_get(entry, fields[i].name);
		if (!x)
			continue;
		snprintf(path, sizeof(path), "%s.%s", base, fields[i].name);
		if (!entry_value(i, x, &want[i], &what)) {
			nt_sc_error(c, path, "'%s' must be %s", fields[i].name, what);
			continue;
		}
		asked |= 1u << i;
	}
	if (!asked || !c->t || !iface || !nt_iface_pattern_valid(iface))
		return;
	bool glob = nt_iface_is_glob(iface);
	uint32_t somewhere = 0; /* fields some matched NIC supports */
	int matched = 0;
	for (int k = 0; k < c->t->nnics; k++) {
		const nt_nic *nic = &c->t->nics[k];
		rp_read rd;
		if (!nt_iface_match(iface, nic->name))
			continue;
		matched++;
		/* A NIC without ring settings at all: rings.c's own check
		 * says so for a NIC named outright. */
		if (rp_get(NULL, &c->t->ctx, nic->name, &rd) < 0)
			continue;
		for (int i = 0; i < NSET; i++) {
			if (!(asked & (1u << i)))
				continue;
			snprintf(path, sizeof(path), "%s.%s", base, fields[i].name);
			if (!reported(&rd, i)) {
				if (!glob) {
					not_supported(&rd, i, nic->name, why, sizeof(why));
					nt_sc_error(c, path, "%s", why);
				}
				continue;
			}
			somewhere |= 1u << i;
			if (above_max(&rd, i, want[i], nic->name, why, sizeof(why)))
				nt_sc_error(c, path, "%s", why);
		}
	}
	/* A glob must reach one NIC that has the field; the others are left
	 * out by the plan, with a warning. */
	for (int i = 0; glob && matched && i < NSET; i++)
		if ((asked & ~somewhere) & (1u << i)) {
			snprintf(path, sizeof(path), "%s.%s", base, fields[i].name);
			nt_sc_error(c, path, "no NIC matching '%s' supports %s", iface, fields[i].name);
		}
}

int nt_ring_params_desire(nt_section_plan *p, const json_t *entry, const char *pattern, const char *path)
{
	nt_value v;
	const char *what;

	memset(&v, 0, sizeof(v));
	for (int i = 0; i < NSET; i++) {
		json_t *x = json_object_get(entry, fields[i].name);
		uint32_t u;
		if (x && entry_value(i, x, &u, &what))
			nt_value_field_set(&v, i, u);
	}
	if (!v.f.present)
		return 0;
	for (int k = 0; k < p->t->nnics; k++) {
		const nt_nic *nic = &p->t->nics[k];
		rp_read rd;
		if (!nt_iface_match(pattern, nic->name))
			continue;
		/* A glob also matches NICs without these (lo, veth, virtio):
		 * left out, where a NIC named outright is refused by the
		 * validation and the kind's check. */
		if (nt_iface_is_glob(pattern)) {
			int r = rp_get(NULL, &p->t->ctx, nic->name, &rd);
			if (r == -EOPNOTSUPP) {
				/* Said once: by the ring sizes, when the entry has them. */
				if (!json_object_get(entry, "rx") && !json_object_get(entry, "tx"))
					nt_desire_warn(p, "%s: no ring settings; left out", nic->name);
				continue;
			}
			uint32_t missing = 0;
			for (int i = 0; r == 0 && i < NSET; i++)
				if ((v.f.present & (1u << i)) && !reported(&rd, i))
					missing |= 1u << i;
			if (missing) {
				char names[160] = "";
				size_t len = 0;
				for (int i = 0; i < NSET; i++)
					if (missing & (1u << i)) {
						int w = snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
								 fields[i].name);
						if (w < 0 || (size_t)w >= sizeof(names) - len)
							break;
						len += (size_t)w;
					}
				nt_desire_warn(p, "%s: does not support %s; its ring parameters left out", nic->name, names);
				continue;
			}
		}
		int r = nt_desire_put(p, &nt_setting_ring_params, nic->name, nic->name, &v, path);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- report: GET /v1/nics/{name} and nettune nics IF ---- */

/* "ring_params": {"tcp_data_split": {"supported": true, "value": "on"},
 * "hds_thresh": {"supported": true, "value": 0, "max": 1024},
 * "rx_buf_len": {"supported": false, "reason": "the driver does not report
 * it"}, ...}, or null when the NIC has no ring settings. One RINGS_GET for
 * the one NIC shown; the host read behind GET /v1/topology asks nothing. */
static json_t *field_json(const rp_read *rd, int i)
{
	char reason[160];
	if (!reported(rd, i)) {
		nt_ethtool_absent_why(&fields[i], since[i], rd->release, rd->netlink, reason, sizeof(reason));
		return json_pack("{s:b,s:s}", "supported", 0, "reason", reason);
	}
	uint32_t x = rd->v.v[i];
	json_t *val = i == TDS ? json_string(x == NT_ETHTOOL_TCP_DATA_SPLIT_ENABLED ? "on" : "off")
		      : fields[i].width == NT_ETHTOOL_U8 ? json_boolean(x)
							 : json_integer(x);
	json_t *o = json_pack("{s:b,s:o}", "supported", 1, "value", val);
	int m = fields[i].max ? nt_ethtool_field_index(&group, fields[i].max) : -1;
	if (o && m >= 0 && (rd->v.present & (1u << m)) &&
	    json_object_set_new(o, "max", json_integer(rd->v.v[m])) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int report_ring_params(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out)
{
	rp_read rd;
	int r = rp_get(eh, ctx, nic->name, &rd);
	if (r < 0)
		return r == -EOPNOTSUPP || r == -ENODEV ? json_object_set_new(out, "ring_params", json_null()) : r;
	json_t *o = json_object();
	for (int i = 0; o && i < NSET; i++) {
		json_t *f = field_json(&rd, i);
		if (!f || json_object_set_new(o, fields[i].name, f) < 0) {
			json_decref(o);
			o = NULL;
		}
	}
	return o ? json_object_set_new(out, "ring_params", o) : -ENOMEM;
}

const nt_setting_module nt_module_ring_params = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_ring_params, NULL },
	/* The keys are the "rings" section's, which settings/rings.c owns. */
	.sections = (const nt_profile_section *const[]){ NULL },
	.report_nic_detail = report_ring_params,
};

