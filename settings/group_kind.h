/* SPDX-License-Identifier: Apache-2.0 */
/* What the kinds whose value is one ethtool settings group share
 * (settings/coalesce.c, pause.c): a value is the group's fields by index,
 * written "name=N,flag=on" in table order, a U8 field as on/off; read,
 * composed with what a profile gives, and written through
 * kernel/ethtool.h. Private to settings/. */
#ifndef NT_GROUP_KIND_H
#define NT_GROUP_KIND_H

#include "kernel/ethtool.h"
#include "settings/section.h"

/* TEXT as a value of G's fields: each at most once, names G's, a U8 field
 * "on" or "off", a U32 one a decimal. Returns 0 or NT_EPARSE. */
int nt_gk_parse(const nt_ethtool_group *g, const char *text, nt_value *out);
/* The fields of V->f.present in table order. Returns 0 or -ENOSPC. */
int nt_gk_format(const nt_ethtool_group *g, const nt_value *v, char *out, size_t size);
/* The same fields, with the same values (U8 fields as booleans). */
bool nt_gk_equal(const nt_ethtool_group *g, const nt_value *a, const nt_value *b);
/* BEFORE with the fields of WANTED put in: a restore then sets every field
 * back. Returns 0. */
int nt_gk_compose(const nt_value *before, const nt_value *wanted, nt_value *out);
/* G of IFNAME: the fields the driver reports, or with ALL every field of G
 * (an absent one as 0). Returns 0, NT_EINVALID for a bad name, or what
 * nt_ethtool_get_group returns. */
int nt_gk_read(nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname, bool all,
	       nt_value *out);
/* Write the fields of V->f.present; ERR reads "IFNAME SECTION: reason". */
int nt_gk_apply(nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname,
		const nt_value *v, char *err, size_t errsize);

/* The desired value V (from the profile entry at PATH) for every NIC
 * PATTERN matches; a glob also matches NICs without G (lo, veth, virtio),
 * left out with the warning "IFACE: no WHAT settings; left out", where a
 * NIC named outright is refused by the kind's check. Returns 0 or -ENOMEM. */
int nt_gk_desire(nt_section_plan *p, const nt_setting_kind *k, const nt_ethtool_group *g, const char *pattern,
		 const nt_value *v, const char *path, const char *what);
/* The running kernel's release ("" when unknown) and whether EH (or a
 * handle of CTX's when EH is NULL) speaks ethtool netlink: what says why
 * a netlink-only field is missing (nt_ethtool_absent_why). */
void nt_gk_kernel_of(const nt_ctx *ctx, nt_ethtool *eh, char *release, size_t size, bool *netlink);
/* V's fields as a JSON object (U8 fields as booleans), or NULL. */
json_t *nt_gk_json(const nt_ethtool_group *g, const nt_value *v);

#endif
