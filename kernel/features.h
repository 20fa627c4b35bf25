/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's offload features (`ethtool -k` / `-K`): the kernel's netdev
 * features by their ethtool names ("rx-gro", "tx-tcp-segmentation",
 * "rx-ntuple-filter"), each with its active state, the state asked for
 * (wanted), and whether the driver lets it change.
 *
 * On the live host this is ethtool netlink: ETHTOOL_MSG_FEATURES_GET with
 * compact bitsets, named through the ETH_SS_FEATURES string set (fetched
 * once per handle), and ETHTOOL_MSG_FEATURES_SET with a named bitset of
 * the wanted bits that change. Kernels without ethtool netlink (before
 * 5.6) get -EOPNOTSUPP. On a fixture root kernel/fixture.c plays the
 * kernel with the "features" object of ROOT/ethtool/IFACE.json:
 *   "features": {"rx-gro": {"on": true, "fixed": false},
 *                "tx-tcp-segmentation": {"on": true, "needs": ["tx-scatter-gather"]}}
 * ("wanted" defaults to "on"; "needs" makes a feature active only while
 * the features it names are, as the kernel's netdev_fix_features does).
 *
 * The kernel keeps a wanted state per feature and derives the active
 * state from it: turning one feature off can turn dependent features off
 * (no scatter-gather, no TSO) while their wanted bit stays on, so putting
 * the first back brings them back. */
#ifndef NT_FEATURES_H
#define NT_FEATURES_H

#include "kernel/ctx.h"
#include "kernel/ethtool.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel has 64 features (NETDEV_FEATURE_COUNT); room for more. */
#define NT_FEATURES_MAX 128
#define NT_FEATURE_NAME 32 /* ETH_GSTRING_LEN */

typedef struct nt_feature {
	char name[NT_FEATURE_NAME];
	bool active; /* on now */
	bool wanted; /* asked for (the kernel may hold it off) */
	bool fixed; /* the driver cannot change it */
} nt_feature;

typedef struct nt_features {
	int n;
	nt_feature f[NT_FEATURES_MAX];
} nt_features;

/* A bitmap of feature indices, as compact bitsets carry it. */
typedef struct nt_bitmap {
	uint32_t w[NT_FEATURES_MAX / 32];
} nt_bitmap;

static inline bool nt_bitmap_test(const nt_bitmap *b, int i)
{
	return i >= 0 && i < NT_FEATURES_MAX && (b->w[i / 32] >> (i % 32)) & 1u;
}

static inline void nt_bitmap_set(nt_bitmap *b, int i, bool on)
{
	if (i < 0 || i >= NT_FEATURES_MAX)
		return;
	if (on)
		b->w[i / 32] |= 1u << (i % 32);
	else
		b->w[i / 32] &= ~(1u << (i % 32));
}

/* All features of IFNAME into OUT, in the kernel's order. H may be NULL (a
 * handle for this call alone). Returns 0, -EOPNOTSUPP (no ethtool netlink,
 * or a fixture without "features"), -ENODEV, NT_EPARSE, or -errno. */
int nt_features_get(nt_ethtool *h, const nt_ctx *ctx, const char *ifname, nt_features *out);

/* Set the wanted state of feature NAME of IFNAME to ON, and read all
 * features back into AFTER (may be NULL). Nothing is sent when the wanted
 * state is already ON and the feature active as asked. The kernel does not
 * refuse a fixed feature (it leaves it as it is): check AFTER. Returns 0,
 * -ENOENT (no feature NAME), or the kernel's -errno with its extack text
 * in ERR ("" when none). */
int nt_features_set(nt_ethtool *h, const nt_ctx *ctx, const char *ifname, const char *name, bool on,
		    nt_features *after, char *err, size_t errsize);

/* The feature called NAME in FS, or NULL. */
const nt_feature *nt_features_find(const nt_features *fs, const char *name);

/* ---- pure: ethtool netlink bitsets (unit-tested) ---- */

struct nlattr;
struct nl_msg;

/* Decode the bitset nest A, compact (ETHTOOL_A_BITSET_VALUE words) or
 * verbose (ETHTOOL_A_BITSET_BITS, bits by index or by a name in NAMES),
 * into VALUE, zeroed first. Without ETHTOOL_A_BITSET_NOMASK a verbose bit
 * is set only when it carries ETHTOOL_A_BITSET_BIT_VALUE. Returns 0 or
 * NT_EPARSE (a bit index beyond NT_FEATURES_MAX, an unknown name, a short
 * attribute). */
int nt_bitset_decode(const struct nlattr *a, const nt_features *names, nt_bitmap *value);

/* Append to MSG a verbose bitset ATTR with the N bits NAMES[i] set to
 * ON[i] and no others touched (no mask flag: the kernel changes only the
 * bits listed). Returns 0 or -EMSGSIZE. */
int nt_bitset_put_named(struct nl_msg *msg, int attr, const char *const *names, const bool *on, int n);

/* The names of the ETH_SS_FEATURES string set in a STRSET_GET reply's
 * attributes (ATTRS, LEN bytes after the genl header) into OUT->f[i].name
 * by index, OUT->n the count; an index without a string (a bit the kernel
 * no longer uses) keeps "". Returns 0 or NT_EPARSE. */
int nt_strset_decode(const struct nlattr *attrs, int len, nt_features *out);

#endif
