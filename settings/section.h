/* SPDX-License-Identifier: Apache-2.0 */
/* What the kinds share to read their profile sections: errors with JSON
 * paths, fields of an entry, interface names and globs, cpulists, and the
 * list of desired values a plan is built from. */
#ifndef NT_SECTION_H
#define NT_SECTION_H

#include "settings/setting.h"
#include "host/napi.h"

/* Append {"path": PATH, "message": ...} to ERRORS (a JSON array). */
void nt_profile_error(json_t *errors, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define nt_sc_error(c, path, ...) nt_profile_error((c)->errors, (path), __VA_ARGS__)

/* An error for every member of OBJ (at BASE) not in KNOWN (NULL-ended). */
void nt_sc_unknown_fields(nt_section_check *c, const json_t *obj, const char *base,
			  const char *const *known);
/* The string at OBJ.FIELD; NULL (with an error when REQUIRED or mistyped). */
const char *nt_sc_str(nt_section_check *c, const json_t *obj, const char *base, const char *field,
		      bool required);
/* Entries of an array section: an error for each that is not an object.
 * Returns whether ENTRY is one; BASE gets "$.KEY[I]". */
bool nt_sc_entry(nt_section_check *c, const char *key, size_t i, const json_t *entry, char *base,
		 size_t size);

/* Interface names or globs ([A-Za-z0-9...] up to 64, no '/'). */
bool nt_iface_pattern_valid(const char *pattern);
bool nt_iface_is_glob(const char *pattern);
/* Whether NAME matches PATTERN (a name or a glob). */
bool nt_iface_match(const char *pattern, const char *name);

/* A pattern that must name a NIC (or, with BOND, a bond) of the host.
 * Returns the number of matches (0 after an error; 1 without a host). */
int nt_sc_iface(nt_section_check *c, const char *pattern, const char *path, bool bond);
/* An interface (or glob) for a NIC setting: a name must have the setting
 * (HAS says whether a NIC does); a glob may also match NICs without (lo,
 * bridges), which the plan leaves out, but must match one that has it.
 * WHAT names the setting in the message ("ring"). */
void nt_sc_nic_with(nt_section_check *c, const char *iface, const char *path,
		    bool (*has)(const nt_nic *nic), const char *what);
/* A cpulist; with MUST_EXIST it must be non-empty and its CPUs online. */
void nt_sc_cpulist(nt_section_check *c, const char *list, const char *path, bool must_exist);
/* Add (or, for a target already desired, replace) a desired value. The
 * earlier entry for the same target is found through P's index, not by a
 * scan: a profile placing a thousand IRQs puts a thousand values. Returns
 * 0 or -ENOMEM. */
int nt_desire_put(nt_section_plan *p, const nt_setting_kind *k, const char *target,
		  const char *iface, const nt_value *v, const char *path);
/* The value desired so far for (K, TARGET), or NULL: through P's index,
 * for sections of pass 1 that follow what pass 0 desired (XPS follows the
 * IRQ CPUs a profile places). */
const nt_desired *nt_desire_get(const nt_section_plan *p, const nt_setting_kind *k, const char *target);
/* The RX queues (rx + combined) P's channels step for NIC leaves it, -1
 * when P changes none; *LOWERS (when not NULL) whether that is fewer than
 * it has now (settings/channels.c). For the kinds whose steps name queues
 * (RSS tables, flow rules), which may name only those. */
int nt_channels_rx_planned(const nt_section_plan *p, const char *nic, bool *lowers);
/* Free P's index (once the desired values are complete, or reordered). */
void nt_desire_index_free(nt_section_plan *p);
/* What a plan reads of the host beyond its topology, once: today the
 * NAPIs of its NICs (host/napi.h), whose `netdev` family answers are the
 * truth for which IRQ serves which queue where the kernel gives them
 * (6.8+, a driver that tells the kernel its NAPIs' IRQs). A plan asks for
 * them only when a section needs them: XPS or thread_cpus "irq", RSS
 * "placed", flow rules by CPU, napi[], threads following placed IRQs. */
typedef struct nt_plan_reads {
	bool napi_done; /* tried: NAPI_R and NAPI hold the result */
	int napi_r;
	nt_host_napi napi;
} nt_plan_reads;

/* The NAPIs of T's NICs (every NIC but bonds, without their threads'
 * /proc files) through R, read at the first call: on a live root one
 * netlink socket and one dump each of queue-get and napi-get for the
 * host, whatever the number of NICs; on a fixture root each NIC's
 * document. NULL when the read failed (-ENOMEM): the callers then go by
 * the IRQ names (nt_host_napi_queue_irq with NULL). With R NULL, nothing
 * is kept and NULL is returned. */
const nt_host_napi *nt_plan_napi(nt_plan_reads *r, const nt_topology *t);
/* Free what R holds (R itself is the caller's). */
void nt_plan_reads_free(nt_plan_reads *r);
/* The IRQ (index into T->irqs, -1 none) serving queue QUEUE (TX when TX)
 * of NIC as a plan through R sees it: the family's map where it answers,
 * else the IRQ names (host/napi.h, nt_host_napi_queue_irq). */
int nt_plan_queue_irq(nt_plan_reads *r, const nt_topology *t, const nt_nic *nic, int queue, bool tx);

/* Append a warning to P->warnings. */
void nt_desire_warn(nt_section_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
