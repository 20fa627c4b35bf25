/* SPDX-License-Identifier: Apache-2.0 */
/* The ring parameters only ethtool netlink reaches (settings/ring_params.c)
 * as the "rings" section of settings/rings.c asks for them: the entry's
 * keys, their validation and the values they desire. Private to settings/. */
#ifndef NT_RING_PARAMS_H
#define NT_RING_PARAMS_H

#include "settings/section.h"

/* The profile keys, NULL-ended: "tcp_data_split", "hds_thresh", ... */
extern const char *const nt_ring_params_keys[];
/* Whether ENTRY (a "rings" entry) names one of them. */
bool nt_ring_params_in(const json_t *entry);
/* Check ENTRY's ring parameters at BASE ("$.rings[0]"): their form, and on
 * C's host for the NICs IFACE names whether each is supported (a NIC named
 * outright that lacks one is refused, naming the kernel release the field
 * needs where the running kernel is older) and within its maximum. */
void nt_ring_params_validate(nt_section_check *c, const json_t *entry, const char *base, const char *iface);
/* The ring parameters ENTRY (at PATH) asks of the NICs PATTERN matches; a
 * NIC a glob matches that lacks one of them is left out with a warning.
 * Returns 0 or -ENOMEM. */
int nt_ring_params_desire(nt_section_plan *p, const json_t *entry, const char *pattern, const char *path);

#endif
