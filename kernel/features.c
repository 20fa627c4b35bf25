/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's offload features over ethtool netlink: see kernel/features.h. */
#include "kernel/features.h"
#include "kernel/ethtool_int.h"
#include "kernel/fixture.h"
#include "kernel/nlmsg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

static void set_err(char *err, size_t errsize, const char *text)
{
	if (err && errsize)
		snprintf(err, errsize, "%s", text);
}

const nt_feature *nt_features_find(const nt_features *fs, const char *name)
{
	for (int i = 0; name && i < fs->n; i++)
		if (strcmp(fs->f[i].name, name) == 0)
			return &fs->f[i];
	return NULL;
}

/* ---- pure: bitsets and string sets ---- */

static int names_index(const nt_features *names, const char *name)
{
	const nt_feature *f = names ? nt_features_find(names, name) : NULL;
	return f ? (int)(f - names->f) : -1;
}

static int decode_verbose(const struct nlattr *bits, bool nomask, const nt_features *names,
			  nt_bitmap *value)
{
	const struct nlattr *bit;
	int rem;

	nla_for_each_nested(bit, bits, rem) {
		struct nlattr *tb[ETHTOOL_A_BITSET_BIT_MAX + 1];
		int idx;

		if (nla_type(bit) != ETHTOOL_A_BITSET_BITS_BIT)
			continue;
		if (nla_parse_nested(tb, ETHTOOL_A_BITSET_BIT_MAX, (struct nlattr *)bit, NULL) < 0)
			return NT_EPARSE;
		if (tb[ETHTOOL_A_BITSET_BIT_INDEX]) {
			if (nla_len(tb[ETHTOOL_A_BITSET_BIT_INDEX]) < 4)
				return NT_EPARSE;
			uint32_t u = nla_get_u32(tb[ETHTOOL_A_BITSET_BIT_INDEX]);
			idx = u < NT_FEATURES_MAX ? (int)u : -1;
		} else if (tb[ETHTOOL_A_BITSET_BIT_NAME]) {
			char name[NT_FEATURE_NAME];
			if (nla_strlcpy(name, tb[ETHTOOL_A_BITSET_BIT_NAME], sizeof(name)) >= sizeof(name))
				return NT_EPARSE;
			idx = names_index(names, name);
		} else {
			return NT_EPARSE;
		}
		if (idx < 0)
			return NT_EPARSE;
		nt_bitmap_set(value, idx, nomask || tb[ETHTOOL_A_BITSET_BIT_VALUE] != NULL);
	}
	return 0;
}

int nt_bitset_decode(const struct nlattr *a, const nt_features *names, nt_bitmap *value)
{
	struct nlattr *tb[ETHTOOL_A_BITSET_MAX + 1];

	memset(value, 0, sizeof(*value));
	if (!a || nla_parse_nested(tb, ETHTOOL_A_BITSET_MAX, (struct nlattr *)a, NULL) < 0)
		return NT_EPARSE;
	if (tb[ETHTOOL_A_BITSET_VALUE]) {
		/* Compact: SIZE bits in 32-bit words of host order. */
		if (!tb[ETHTOOL_A_BITSET_SIZE] || nla_len(tb[ETHTOOL_A_BITSET_SIZE]) < 4)
			return NT_EPARSE;
		uint32_t size = nla_get_u32(tb[ETHTOOL_A_BITSET_SIZE]);
		size_t words = (size + 31) / 32;
		if (size > NT_FEATURES_MAX || (size_t)nla_len(tb[ETHTOOL_A_BITSET_VALUE]) < words * 4)
			return NT_EPARSE;
		memcpy(value->w, nla_data(tb[ETHTOOL_A_BITSET_VALUE]), words * 4);
		/* Bits past SIZE in the last word are not the set's. */
		if (size % 32)
			value->w[words - 1] &= (1u << (size % 32)) - 1;
		return 0;
	}
	if (tb[ETHTOOL_A_BITSET_BITS])
		return decode_verbose(tb[ETHTOOL_A_BITSET_BITS], tb[ETHTOOL_A_BITSET_NOMASK] != NULL, names,
				      value);
	return 0; /* an empty list */
}

int nt_bitset_put_named(struct nl_msg *msg, int attr, const char *const *names, const bool *on, int n)
{
	struct nlattr *set = nla_nest_start(msg, attr), *bits, *bit;

	if (!set || !(bits = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS)))
		return -EMSGSIZE;
	for (int i = 0; i < n; i++) {
		if (!(bit = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS_BIT)) ||
		    nla_put_string(msg, ETHTOOL_A_BITSET_BIT_NAME, names[i]) < 0 ||
		    (on[i] && nla_put_flag(msg, ETHTOOL_A_BITSET_BIT_VALUE) < 0))
			return -EMSGSIZE;
		nla_nest_end(msg, bit);
	}
	nla_nest_end(msg, bits);
	nla_nest_end(msg, set);
	return 0;
}

static int decode_strings(const struct nlattr *strings, nt_features *out)
{
	const struct nlattr *s;
	int rem;

	nla_for_each_nested(s, strings, rem) {
		struct nlattr *tb[ETHTOOL_A_STRING_MAX + 1];
		if (nla_type(s) != ETHTOOL_A_STRINGS_STRING)
			continue;
		if (nla_parse_nested(tb, ETHTOOL_A_STRING_MAX, (struct nlattr *)s, NULL) < 0 ||
		    !tb[ETHTOOL_A_STRING_INDEX] || !tb[ETHTOOL_A_STRING_VALUE] ||
		    nla_len(tb[ETHTOOL_A_STRING_INDEX]) < 4)
			return NT_EPARSE;
		uint32_t i = nla_get_u32(tb[ETHTOOL_A_STRING_INDEX]);
		if (i >= NT_FEATURES_MAX)
			return NT_EPARSE;
		nla_strlcpy(out->f[i].name, tb[ETHTOOL_A_STRING_VALUE], sizeof(out->f[i].name));
		if ((int)i >= out->n)
			out->n = (int)i + 1;
	}
	return 0;
}

int nt_strset_decode(const struct nlattr *attrs, int len, nt_features *out)
{
	const struct nlattr *a, *set;
	int rem, rem2;
	bool seen = false;

	memset(out, 0, sizeof(*out));
	nla_for_each_attr(a, attrs, len, rem) {
		if (nla_type(a) != ETHTOOL_A_STRSET_STRINGSETS)
			continue;
		nla_for_each_nested(set, a, rem2) {
			struct nlattr *tb[ETHTOOL_A_STRINGSET_MAX + 1];
			if (nla_type(set) != ETHTOOL_A_STRINGSETS_STRINGSET)
				continue;
			if (nla_parse_nested(tb, ETHTOOL_A_STRINGSET_MAX, (struct nlattr *)set, NULL) < 0 ||
			    !tb[ETHTOOL_A_STRINGSET_ID] || nla_len(tb[ETHTOOL_A_STRINGSET_ID]) < 4)
				return NT_EPARSE;
			if (nla_get_u32(tb[ETHTOOL_A_STRINGSET_ID]) != ETH_SS_FEATURES)
				continue;
			if (tb[ETHTOOL_A_STRINGSET_COUNT] && nla_len(tb[ETHTOOL_A_STRINGSET_COUNT]) >= 4 &&
			    nla_get_u32(tb[ETHTOOL_A_STRINGSET_COUNT]) > NT_FEATURES_MAX)
				return NT_EPARSE;
			if (tb[ETHTOOL_A_STRINGSET_STRINGS] &&
			    decode_strings(tb[ETHTOOL_A_STRINGSET_STRINGS], out) < 0)
				return NT_EPARSE;
			seen = true;
		}
	}
	/* Some bits have no name (the kernel sends none for bits it no longer
	 * uses): they stay "" and are no feature. */
	return seen && out->n > 0 ? 0 : NT_EPARSE;
}

/* ---- ethtool netlink ---- */

static int msg_new(int family, uint8_t cmd, uint16_t header_attr, const char *ifname, uint32_t flags,
		   struct nl_msg **out)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlattr *hdr;

	*out = NULL;
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST, cmd,
			 ETHTOOL_GENL_VERSION) ||
	    !(hdr = nla_nest_start(msg, header_attr)) ||
	    nla_put_string(msg, ETHTOOL_A_HEADER_DEV_NAME, ifname) < 0 ||
	    (flags && nla_put_u32(msg, ETHTOOL_A_HEADER_FLAGS, flags) < 0)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, hdr);
	*out = msg;
	return 0;
}

typedef struct strset_reply {
	nt_features *names;
	int r;
	bool seen;
} strset_reply;

static int on_strset(struct nl_msg *msg, void *arg)
{
	strset_reply *sr = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	if (!genlmsg_valid_hdr(nlh, 0))
		return NT_EPARSE;
	sr->r = nt_strset_decode(genlmsg_attrdata(nlmsg_data(nlh), 0), genlmsg_attrlen(nlmsg_data(nlh), 0),
				 sr->names);
	sr->seen = true;
	return sr->r;
}

/* The feature names, fetched once per handle: they are the kernel's, the
 * same for every device. */
static int feature_names(nt_ethtool *h, struct nl_sock *sk, int family, const char *ifname,
			 const nt_features **out)
{
	void **slot = nt_ethtool_features_slot(h);
	struct nl_msg *msg = NULL;
	struct nlattr *sets, *set;
	int r;

	if (*slot) {
		*out = *slot;
		return 0;
	}
	strset_reply sr = { .names = malloc(sizeof(nt_features)) };
	if (!sr.names)
		return -ENOMEM;
	if ((r = msg_new(family, ETHTOOL_MSG_STRSET_GET, ETHTOOL_A_STRSET_HEADER, ifname, 0, &msg)) < 0)
		goto out;
	if (!(sets = nla_nest_start(msg, ETHTOOL_A_STRSET_STRINGSETS)) ||
	    !(set = nla_nest_start(msg, ETHTOOL_A_STRINGSETS_STRINGSET)) ||
	    nla_put_u32(msg, ETHTOOL_A_STRINGSET_ID, ETH_SS_FEATURES) < 0) {
		r = -EMSGSIZE;
		goto out;
	}
	nla_nest_end(msg, set);
	nla_nest_end(msg, sets);
	r = nt_nl_request(sk, msg, on_strset, &sr, NULL, 0);
	if (r == 0 && !sr.seen)
		r = -EIO;
	if (r == 0)
		r = sr.r;
	if (r == 0) {
		*slot = sr.names;
		*out = sr.names;
		sr.names = NULL;
	}
out:
	nlmsg_free(msg);
	free(sr.names);
	return r;
}

typedef struct features_reply {
	const nt_features *names;
	nt_features *out;
	int r;
	bool seen;
} features_reply;

static int on_features(struct nl_msg *msg, void *arg)
{
	features_reply *fr = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[ETHTOOL_A_FEATURES_MAX + 1];
	nt_bitmap hw, wanted, active, nochange;

	if (!genlmsg_valid_hdr(nlh, 0) ||
	    nla_parse(tb, ETHTOOL_A_FEATURES_MAX, genlmsg_attrdata(nlmsg_data(nlh), 0),
		      genlmsg_attrlen(nlmsg_data(nlh), 0), NULL) < 0)
		return fr->r = NT_EPARSE;
	memset(&nochange, 0, sizeof(nochange));
	if (nt_bitset_decode(tb[ETHTOOL_A_FEATURES_HW], fr->names, &hw) < 0 ||
	    nt_bitset_decode(tb[ETHTOOL_A_FEATURES_WANTED], fr->names, &wanted) < 0 ||
	    nt_bitset_decode(tb[ETHTOOL_A_FEATURES_ACTIVE], fr->names, &active) < 0 ||
	    (tb[ETHTOOL_A_FEATURES_NOCHANGE] &&
	     nt_bitset_decode(tb[ETHTOOL_A_FEATURES_NOCHANGE], fr->names, &nochange) < 0))
		return fr->r = NT_EPARSE;
	int n = fr->names->n < NT_FEATURES_MAX ? fr->names->n : NT_FEATURES_MAX;
	fr->out->n = 0;
	for (int i = 0; i < n; i++) {
		if (!fr->names->f[i].name[0])
			continue; /* an unused bit */
		nt_feature *f = &fr->out->f[fr->out->n++];
		memcpy(f->name, fr->names->f[i].name, sizeof(f->name));
		f->active = nt_bitmap_test(&active, i);
		f->wanted = nt_bitmap_test(&wanted, i);
		/* As ethtool -k prints "[fixed]": not in the changeable set,
		 * or one the kernel never lets change. */
		f->fixed = !nt_bitmap_test(&hw, i) || nt_bitmap_test(&nochange, i);
	}
	fr->seen = true;
	return 0;
}

static int nl_get(nt_ethtool *h, const char *ifname, nt_features *out)
{
	int family = 0;
	struct nl_sock *sk = nt_ethtool_genl(h, &family);
	struct nl_msg *msg = NULL;
	features_reply fr = { .out = out };
	int r;

	if (!sk)
		return -EOPNOTSUPP; /* the ioctl backend: a kernel before 5.6 */
	if ((r = feature_names(h, sk, family, ifname, &fr.names)) < 0)
		return r;
	if ((r = msg_new(family, ETHTOOL_MSG_FEATURES_GET, ETHTOOL_A_FEATURES_HEADER, ifname,
			 ETHTOOL_FLAG_COMPACT_BITSETS, &msg)) < 0)
		return r;
	r = nt_nl_request(sk, msg, on_features, &fr, NULL, 0);
	if (r == 0 && !fr.seen)
		r = -EIO;
	if (r == 0)
		r = fr.r;
	nlmsg_free(msg);
	return r;
}

static int nl_set(nt_ethtool *h, const char *ifname, const char *name, bool on, char *err,
		  size_t errsize)
{
	int family = 0;
	struct nl_sock *sk = nt_ethtool_genl(h, &family);
	struct nl_msg *msg = NULL;
	int r;

	if (!sk)
		return -EOPNOTSUPP;
	/* The reply would say which active bits moved; the caller reads
	 * all of them back anyway, so it is left out. */
	if ((r = msg_new(family, ETHTOOL_MSG_FEATURES_SET, ETHTOOL_A_FEATURES_HEADER, ifname,
			 ETHTOOL_FLAG_OMIT_REPLY, &msg)) < 0)
		return r;
	if ((r = nt_bitset_put_named(msg, ETHTOOL_A_FEATURES_WANTED, &name, &on, 1)) == 0)
		r = nt_nl_request(sk, msg, NULL, NULL, err, errsize);
	nlmsg_free(msg);
	return r;
}

/* ---- the operations ---- */

static int get_with(nt_ethtool *h, const nt_ctx *ctx, const char *ifname, nt_features *out)
{
	memset(out, 0, sizeof(*out));
	if (nt_ethtool_is_fixture(h))
		return nt_fixture_features_get(ctx, ifname, out);
	return nl_get(h, ifname, out);
}

int nt_features_get(nt_ethtool *h, const nt_ctx *ctx, const char *ifname, nt_features *out)
{
	nt_ethtool *tmp = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if (!nt_ifname_valid(ifname))
		return -EINVAL;
	if (!h) {
		if ((r = nt_ethtool_open(ctx, &tmp)) < 0)
			return r;
		h = tmp;
	}
	r = get_with(h, ctx, ifname, out);
	if (r < 0)
		memset(out, 0, sizeof(*out));
	nt_ethtool_close(tmp);
	return r;
}

int nt_features_set(nt_ethtool *h, const nt_ctx *ctx, const char *ifname, const char *name, bool on,
		    nt_features *after, char *err, size_t errsize)
{
	nt_ethtool *tmp = NULL;
	nt_features *cur = malloc(sizeof(*cur));
	const nt_feature *f;
	int r;

	set_err(err, errsize, "");
	if (!cur)
		return -ENOMEM;
	if (!nt_ifname_valid(ifname) || !name) {
		r = -EINVAL;
		goto out;
	}
	if (!h) {
		if ((r = nt_ethtool_open(ctx, &tmp)) < 0)
			goto out;
		h = tmp;
	}
	if ((r = get_with(h, ctx, ifname, cur)) < 0)
		goto out;
	if (!(f = nt_features_find(cur, name))) {
		r = -ENOENT;
		goto out;
	}
	/* Already asked for and in effect: a SET would change nothing. */
	if (f->wanted == on && f->active == on) {
		if (after)
			memcpy(after, cur, sizeof(*cur));
		r = 0;
		goto out;
	}
	r = nt_ethtool_is_fixture(h) ? nt_fixture_features_set(ctx, ifname, name, on, err, errsize)
				     : nl_set(h, ifname, name, on, err, errsize);
	if (r == 0 && after)
		r = get_with(h, ctx, ifname, after);
out:
	nt_ethtool_close(tmp);
	free(cur);
	return r;
}
