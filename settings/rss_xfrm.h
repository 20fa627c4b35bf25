/* SPDX-License-Identifier: Apache-2.0 */
/* The RSS input transformation (settings/rss_xfrm.c): its kind, and what
 * settings/rss.c calls for an rss[] entry's "input_xfrm". */
#ifndef NT_SETTINGS_RSS_XFRM_H
#define NT_SETTINGS_RSS_XFRM_H

#include "settings/section.h"

extern const nt_setting_kind nt_setting_rss_xfrm;

/* The field's own value ("none", "sym-xor", "sym-or-xor"), at BASE. */
void nt_rss_xfrm_check_entry(nt_section_check *c, const json_t *e, const char *base);
/* NIC has a table (INDIR_SIZE entries, not 0) and the running kernel
 * knows the value (6.8; 6.15 for sym-or-xor): an error naming the field,
 * the NIC and the release otherwise. */
void nt_rss_xfrm_check_nic(nt_section_check *c, const json_t *e, const char *base, const nt_nic *nic,
			   uint32_t indir_size);
/* Desire entry I's input_xfrm on NIC (its context's with "context").
 * Returns 0 or -errno. */
int nt_rss_xfrm_desire(nt_section_plan *p, const json_t *e, size_t i, const nt_nic *nic);

#endif
