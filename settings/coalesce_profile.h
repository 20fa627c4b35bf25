/* SPDX-License-Identifier: Apache-2.0 */
/* The adaptive-coalescing (DIM) profiles (settings/coalesce_profile.c) as
 * the "coalesce" section of settings/coalesce.c asks for them and as GET
 * /v1/nics/{name} shows them among the "coalesce_params": the entry's
 * keys, their validation, the values they desire and the report. Private
 * to settings/. */
#ifndef NT_COALESCE_PROFILE_H
#define NT_COALESCE_PROFILE_H

#include "settings/section.h"

/* The profile keys, NULL-ended: "rx_profile", "tx_profile". */
extern const char *const nt_coalesce_profile_keys[];
/* Whether ENTRY (a "coalesce" entry) names one of them. */
bool nt_coalesce_profile_in(const json_t *entry);
/* Check the form of ENTRY's profiles at BASE ("$.coalesce[0]"): each an
 * array of NT_DIM_PARAMS_NUM_PROFILES objects with at least one of usec,
 * pkts, comps, each an integer from 0 to 65535. Whether a NIC has them is
 * the kinds' check at plan time. */
void nt_coalesce_profile_validate(nt_section_check *c, const json_t *entry, const char *base);
/* The profiles ENTRY (at PATH) asks of the NICs PATTERN matches; a NIC a
 * glob matches that reports no such profile is left out with a warning,
 * one named outright is refused by the kind's check. Returns 0 or
 * -ENOMEM. */
int nt_coalesce_profile_desire(nt_section_plan *p, const json_t *entry, const char *pattern, const char *path);
/* Add "rx_profile" and "tx_profile" to PARAMS (NIC's "coalesce_params"):
 * {"supported": true, "value": [{"usec": 1, "pkts": 256}, ...]} with the
 * fields the driver reports, or {"supported": false, "reason": ...}.
 * Returns 0 or -ENOMEM. */
int nt_coalesce_profile_report(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *params);

#endif
