/* SPDX-License-Identifier: Apache-2.0 */
/* What the kinds of a link's own numbers share (settings/mtu.c,
 * txqueuelen.c): target = interface, value = one unsigned number in field
 * 0 ("9000" as text), read and written over rtnetlink (kernel/rtlink.h),
 * and a profile section of entries {"interface": glob, FIELD: number}.
 * Private to settings/. */
#ifndef NT_LINK_KIND_H
#define NT_LINK_KIND_H

#include "kernel/rtlink.h"
#include "settings/section.h"

int nt_lk_parse(const char *text, nt_value *out);
int nt_lk_format(const nt_value *v, char *out, size_t size);
bool nt_lk_equal(const nt_value *a, const nt_value *b);

/* Which number of a link a kind holds. */
typedef enum { NT_LK_MTU, NT_LK_TXQLEN } nt_lk_field;

/* TARGET's number F into OUT (field 0). Returns 0 or -errno. */
int nt_lk_read(const nt_ctx *ctx, const char *target, nt_lk_field f, nt_value *out);
/* Write V's number as F of TARGET. Returns 0 or the kernel's -errno, with
 * "TARGET NAME N: reason: kernel text" in ERR. */
int nt_lk_apply(const nt_ctx *ctx, const char *target, nt_lk_field f, const nt_value *v, char *err,
		size_t errsize);

/* The NIC called NAME in T, or NULL. */
const nt_nic *nt_lk_nic(const nt_topology *t, const char *name);

/* Entries of section KEY: objects with "interface" (a NIC or bond, or a
 * glob) and FIELD, an integer in [MIN, MAX]. Returns nothing; errors go to
 * C. ENTRY_CHECK (may be NULL) then checks one valid entry against the
 * host (C->t not NULL) with the NIC it names and the number. */
typedef void (*nt_lk_entry_check)(nt_section_check *c, const char *base, const nt_nic *nic, uint32_t v,
				  bool glob);
void nt_lk_validate(nt_section_check *c, const json_t *arr, const char *key, const char *field, long min,
		    long max, nt_lk_entry_check entry_check);

#endif
