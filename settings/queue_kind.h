/* SPDX-License-Identifier: Apache-2.0 */
/* What the kinds of a NIC's queue files share (settings/rps.c, rfs.c,
 * xps.c): targets "IFACE/rx-N" or "IFACE/tx-N", bitmap values as
 * cpulists, the checks a queue target takes, and a profile entry's
 * "queues" list. Private to settings/. */
#ifndef NT_QUEUE_KIND_H
#define NT_QUEUE_KIND_H

#include "settings/section.h"

/* TARGET split: IFNAME, the queue directory Q ("rx-3"), whether it is a
 * TX queue, and its number. Returns 0 or NT_EINVALID. */
int nt_qk_target(const char *target, char *ifname, char *q, size_t qsize, bool *tx, int *num);

/* Bitmap values (CPUs, or RX queues for xps_rxqs) as cpulists. */
int nt_qk_parse_set(const char *text, nt_value *out);
int nt_qk_format_set(const nt_value *v, char *out, size_t size);
bool nt_qk_equal_set(const nt_value *a, const nt_value *b);

/* FILE of TARGET's queue. */
int nt_qk_read_set(const nt_ctx *ctx, const char *target, const char *file, nt_value *out);
/* Write V to FILE and read it back; when the kernel kept another set,
 * NT_ECONFLICT with a sentence in ERR naming both and WHY_DIFFERS (the
 * kernel's reason, or NULL). */
int nt_qk_apply_set(const nt_ctx *ctx, const char *target, const char *file, const nt_value *v,
		    nt_value *got, int *read_err, char *err, size_t errsize, const char *why_differs);

/* What a queue value names, for nt_qk_check. */
typedef enum { NT_QK_NUMBER, NT_QK_CPUS, NT_QK_RXQS } nt_qk_values;
/* The queue of TARGET exists on the host, and V names only online CPUs
 * (NT_QK_CPUS) or only RX queues the NIC has (NT_QK_RXQS). Returns 0 or
 * NT_EINVALID with WHY. */
int nt_qk_check(const nt_ctx *ctx, const nt_topology *t, const char *target, const nt_value *v,
		nt_qk_values what, char *why, size_t whysize);

/* An entry's optional "queues" (a cpulist-style list of queue numbers,
 * "0-3"): form at PATH, and for a NIC named outright each queue below
 * its count of DIR ("rx" or "tx") queues. */
void nt_qk_validate_queues(nt_section_check *c, const json_t *entry, const char *base, const char *iface,
			   bool tx);
/* The queues an entry asks for among N: its "queues", or all. */
void nt_qk_queues(const json_t *entry, int n, nt_cpuset *out);

#endif
