/* SPDX-License-Identifier: Apache-2.0 */
/* Kinds of setting a transaction can change.
 *
 * A kind of setting is one file in settings/: it owns its part of a
 * profile (parsing, validation with JSON paths, the values it asks for on
 * a host), its values (typed, with text only at the edges: the journal and
 * the API), and the operations on a target (read, check, apply, observe,
 * verify by reading back). The file exports one nt_setting_module, listed
 * by one line in settings/registry.c; the planner, the engine, the store
 * and the HTTP layer go through this interface and never name a kind.
 *
 * How a kind talks to the system (the kernel on "/", a fixture tree in
 * tests) is kernel/'s business: a kind calls the same functions for both. */
#ifndef NT_SETTING_H
#define NT_SETTING_H

#include "kernel/ctx.h"
#include "kernel/events.h"
#include "base/cpuset.h"
#include "host/topology.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest value as text (journal, API). */
#define NT_VALUE_MAX 256
/* Numeric fields a value can carry (ring sizes, channel counts, coalescing). */
#define NT_VALUE_FIELDS 16
#define NT_TARGET_MAX 64
#define NT_JSONPATH_MAX 128

/* A setting's value. The kind decides which member it uses: a CPU set (IRQ
 * affinity), named numeric fields (rings, channels, coalescing; PRESENT
 * says which are set), or a word or line of text (a bond's hash policy, a
 * sysctl, irqbalance's state). */
typedef struct nt_value {
	union {
		nt_cpuset cpus;
		struct {
			uint32_t v[NT_VALUE_FIELDS];
			uint32_t present; /* bit i: v[i] is set */
		} f;
		char text[NT_VALUE_MAX];
	};
} nt_value;

/* What a change of a kind reaches. A network namespace has its own
 * links (with their queues, rings, offloads, qdisc) and its own copy of
 * most net sysctls, but IRQs, irqbalance and the kernel's host-wide
 * tables are one for the whole machine: an agent in a namespace other
 * than the initial one that changed them would retune every namespace,
 * the host's included. The planner refuses machine-wide targets there
 * unless the operator allows them (nt_ctx.machine_wide_allowed). */
/* Named reach, not scope: a token's scope is api/auth.h's nt_scope. */
typedef enum nt_reach {
	/* A kind that forgot to declare: taken as machine-wide, so what is
	 * not known to stay inside a namespace is refused there. */
	NT_SCOPE_UNDECLARED = 0,
	NT_SCOPE_NETNS, /* a link or a sysctl of the agent's network namespace */
	NT_SCOPE_MACHINE, /* the whole machine, every namespace */
} nt_reach;

/* One value a profile asks for (below). */
struct nt_desired;

typedef struct nt_setting_kind {
	const char *name; /* the step's "kind" in the API and the journal */

	/* Where a change of this kind reaches, and why, as a clause a
	 * refusal quotes ("/proc/irq is one for the whole machine"). For a
	 * kind whose targets differ (sysctls), TARGET_SCOPE gives a target's
	 * scope and sets *WHY; NULL: SCOPE and SCOPE_WHY for every target.
	 * Ask through nt_setting_scope. */
	nt_reach scope;
	const char *scope_why;
	nt_reach (*target_scope)(const char *target, const char **why);

	/* Text at the edges. PARSE: NT_EPARSE when TEXT is not a value of this
	 * kind. FORMAT: -ENOSPC when it does not fit. Both return 0 otherwise. */
	int (*parse)(const char *text, nt_value *out);
	int (*format)(const nt_value *v, char *out, size_t size);
	/* Whether two values mean the same. */
	bool (*equal)(const nt_value *a, const nt_value *b);

	/* The operations on a target take EH, an ethtool handle opened for
	 * CTX that the caller keeps for a whole plan or stage (the engine
	 * opens one per plan, apply, rollback or recovery), so that a kind
	 * going through ethtool does not open a netlink socket and resolve
	 * the family for every call. NULL: such a kind opens one per call.
	 * Kinds that do not use ethtool ignore it.
	 *
	 * Current value of TARGET. Returns 0 or -errno. */
	int (*read)(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out);
	/* Whether V can be applied to TARGET on this host (T may be NULL).
	 * Returns 0, or NT_EINVALID with a reason in WHY; or NT_ETAKEN when
	 * the only reason is that TARGET holds a value another program put
	 * there, which V would overwrite: a plan refuses it like NT_EINVALID,
	 * and a plan holding the desired state reports the target as taken
	 * instead (engine/plan.h). */
	int (*check)(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		     const nt_value *v, char *why, size_t whysize);
	/* Write V. Returns 0 or the kernel's -errno, with any extended error
	 * text in ERR. */
	int (*apply)(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		     size_t errsize);
	/* Optional: APPLY, then TARGET read back as READ reads it, through
	 * the descriptor the write used where the system allows (an IRQ's
	 * file), so that a step and its check cost one open, not two.
	 * Returns what APPLY returns; when that is 0, *READ_ERR is what READ
	 * returns and GOT holds the value. NULL: APPLY, then READ
	 * (nt_setting_apply_read). */
	int (*apply_read)(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
			  nt_value *got, int *read_err, char *err, size_t errsize);
	/* Optional: TARGET's value as the host model T shows it. The planner
	 * takes it for a step's before-value, T being the host read for the
	 * plan a moment earlier from the same files: on a host with a
	 * thousand IRQs that is a thousand opens saved. Returns 0, or
	 * -ENOENT when T does not show it (the planner calls READ then).
	 * NULL: READ always. */
	int (*model_read)(const nt_topology *t, const char *target, nt_value *out);
	/* What the target shows after an apply beyond its value, for the
	 * record (an IRQ's effective CPUs, which change only when it next
	 * fires); NULL for kinds with nothing more. Returns 0 or -errno. */
	int (*observe)(const nt_ctx *ctx, nt_ethtool *eh, const char *target, char *out, size_t size);
	/* Optional: READ and OBSERVE for N targets at once, for a stage that
	 * reads many (a rollback's current values; an apply's record, after
	 * its steps), through the files the agent keeps open for its reads of
	 * the host (CTX's host cache): one pread a target where READ and
	 * OBSERVE open a file each. They fill OUT[i] (OBSERVE_MANY: the text
	 * at OUT + i * SIZE) and RES[i], what READ (OBSERVE) returns for
	 * TARGETS[i]. Return 0, or -errno when nothing was read (-ENOMEM):
	 * the caller then goes one target at a time. */
	int (*read_many)(const nt_ctx *ctx, const char *const *targets, int n, nt_value *out, int *res);
	int (*observe_many)(const nt_ctx *ctx, const char *const *targets, int n, char *out, size_t size,
			    int *res);
	/* For kinds whose value is a whole list that others share (the
	 * irqbalance ban list): the value to write, made at plan time from what
	 * is there (BEFORE) and what the profile wants added. Returns 0 or
	 * -errno (-E2BIG when it does not fit). NULL: the wanted value as is. */
	int (*compose)(const nt_value *before, const nt_value *wanted, nt_value *out);

	/* Plan order: steps go by ascending ORDER. Kinds of one NIC's
	 * queues share an ORDER and are kept together per interface, by
	 * SUBORDER within it. */
	int order, suborder;
	/* Optional, for a kind that sets how many RX queues a NIC has:
	 * whether D takes RX queues away from its NIC (fewer than host T
	 * shows). The kernel refuses to lower the count to or below a queue
	 * that a user-set RSS table, an RSS context or a flow rule still
	 * names (ethtool_check_max_channel, since Linux 4.6 for the table),
	 * so such a step goes after the NIC's steps of the kinds that name
	 * queues (NAMES_QUEUES), which then take it where it is: their check
	 * refuses a queue the new count leaves out, so what they name is
	 * there both before and after. A rollback, going backwards, grows the
	 * count back first, then puts the old tables back. NULL: never. */
	bool (*lowers_queues)(const nt_topology *t, const struct nt_desired *d);
	/* Steps of this kind name RX queues of their NIC (RSS tables and
	 * contexts, flow rules): when the same plan lowers that NIC's queue
	 * count (LOWERS_QUEUES), they go before that step instead of at
	 * ORDER, in the order of their kinds' ORDER. */
	bool names_queues;
	/* A change may reset the NIC (drivers re-create their queues): the
	 * plan says so once per interface with this text after "IFACE: ". */
	const char *reset_warning;
	/* The apply errors that mean "this target cannot be changed, and that
	 * is not a failure" (a kernel-managed IRQ), ended by a 0; none for
	 * none. The step's result then reads SKIP_REASON. */
	int skip_errno[3];
	const char *skip_reason;
	/* The kernel events (kernel/events.h) that tell of a change to a
	 * target of this kind made by another program, as a bitmask of
	 * NT_SETTING_EVENT(NT_EVENT_*). The drift watcher checks soon after
	 * any event; for a kind that declares ethtool notifications it names
	 * the last one not its own as the likely author of a change. 0: the
	 * kernel sends none (a sysctl, a write to an IRQ's affinity), and
	 * such a change shows at the next periodic check. Ask through
	 * nt_setting_changed_by_event. */
	unsigned events;
	/* Optional: the kernel object that holds TARGET's value now, as a
	 * number that changes when the kernel makes the object anew: a NAPI
	 * thread's pid, which toggling threaded NAPI, a link reset or a
	 * change of channels ends and replaces, the new one with the
	 * kernel's default value. The drift watcher tells by it a target
	 * re-created since its last repair, which it holds again without
	 * counting that toward "contested", from one that another program
	 * keeps changing. The target stays keyed by what the profile names
	 * (a queue); the number is evidence only. Returns 0 with *ID (0:
	 * none now), or -errno. NULL: the kind's targets are not re-created
	 * by the kernel. */
	int (*instance)(const nt_ctx *ctx, const char *target, long long *id);
	/* Who else changes a target of this kind, as a clause the drift
	 * watcher's contested report ends with ("taskset or
	 * sched_setaffinity on the thread, a cgroup's cpuset"); NULL: the
	 * watcher's generic sentence. */
	const char *culprit;
} nt_setting_kind;

/* The bit of nt_setting_kind.events for kernel events of kind EV. */
#define NT_SETTING_EVENT(ev) (1u << (ev))

/* ---- profile sections ---- */

/* What the sections of one plan read of the host beyond T, once, at the
 * first that needs it (settings/section.h): shared by the plan's check and
 * its desired values. */
struct nt_plan_reads;

/* Checking a section: the host (NULL: form only), where errors go, and the
 * whole profile for sections that depend on others. */
typedef struct nt_section_check {
	const nt_topology *t;
	const json_t *profile;
	json_t *errors; /* [{path, message}] */
	struct nt_plan_reads *reads; /* engine/profile.c gives one to every plan */
} nt_section_check;

/* One value a profile asks for. */
typedef struct nt_desired {
	const nt_setting_kind *kind;
	char target[NT_TARGET_MAX];
	char interface[IF_NAMESIZE]; /* the NIC or bond it belongs to, "" for none */
	nt_value value;
	char path[NT_JSONPATH_MAX]; /* JSON path of the profile value asking for it */
} nt_desired;

/* Turning sections into desired values on one host. */
typedef struct nt_section_plan {
	const nt_topology *t;
	const json_t *profile;
	json_t *warnings; /* array of strings: what was left out and why */
	json_t *reserved; /* object interface -> cpulist kept for applications, or NULL */
	nt_desired *v; /* what is desired so far */
	int n, cap;
	/* Where each (kind, target) is in V, for nt_desire_put: open
	 * addressing, slot = index + 1, 0 empty; NULL until the first put,
	 * freed by nt_desire_index_free. */
	int *index;
	int index_cap; /* slots, a power of two, at least twice N */
	struct nt_plan_reads *reads; /* as in nt_section_check */
} nt_section_plan;

typedef struct nt_profile_section {
	const char *key; /* the profile member: "rings" */
	json_type type; /* JSON_ARRAY, JSON_OBJECT or JSON_STRING */
	/* Check VALUE (of TYPE already), appending to C->errors. */
	void (*validate)(nt_section_check *c, const json_t *value);
	/* Add the values VALID asks for on P->t. Returns 0 or -errno. */
	int (*desire)(nt_section_plan *p, const json_t *value);
	/* Sections of pass 1 see what pass 0 sections desired (irqbalance
	 * handling looks at the IRQs the profile places). */
	int pass;
	/* DESIRE runs also when the profile lacks the member (VALUE NULL):
	 * the section has something to say about every profile. */
	bool always;
} nt_profile_section;

/* Per-NIC state a module reports in the host model (nt_nic_to_json):
 * add members to OUT, reading through EH, the topology read's ethtool
 * handle. Returns 0, or -errno (recorded as a problem of the read). */
typedef int (*nt_setting_report_fn)(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out);

/* What one file of settings/ brings: its kinds, the profile sections it
 * owns, and optionally what it reports per NIC. */
typedef struct nt_setting_module {
	const nt_setting_kind *const *kinds; /* NULL-terminated */
	const nt_profile_section *const *sections; /* NULL-terminated */
	nt_setting_report_fn report_nic;
	/* Per-NIC state that only GET /v1/nics/{name} shows: too much (every
	 * offload feature) or one more kernel request per NIC for every host
	 * read behind GET /v1/topology. NULL for none. */
	nt_setting_report_fn report_nic_detail;
} nt_setting_module;

/* The NULL-terminated list of modules (settings/registry.c). */
extern const nt_setting_module *const nt_setting_modules[];

/* Every module's report_nic_detail for NIC into OUT (its JSON document),
 * through EH (NULL: each opens its own). Returns 0 or the first -errno;
 * members added before a failure are kept. */
int nt_setting_report_detail(const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out);

/* The report_nic_detail of the module holding the kind called KIND alone
 * (what GET /v1/nics/{name} shows of it), for a reader such as the
 * diagnostics that wants one kind's facts in their documented form.
 * Returns its result, or -ENOENT when no module has KIND or it reports
 * no detail. */
int nt_setting_report_detail_of(const char *kind, const nt_ctx *ctx, nt_ethtool *eh, const nt_nic *nic, json_t *out);
/* The kind called NAME, or NULL. */
const nt_setting_kind *nt_setting_find(const char *name);
/* Whether the kernel tells of changes to targets of the kind called NAME
 * by events of kind EV: what the kind declares in its events. False for a
 * kind that is not registered. */
bool nt_setting_changed_by_event(const char *name, nt_event_kind ev);
/* The scope of TARGET of kind K (NT_SCOPE_NETNS or NT_SCOPE_MACHINE: an
 * undeclared scope is machine-wide), with *WHY (may be NULL) set to the
 * kind's reason, never NULL. */
nt_reach nt_setting_scope(const nt_setting_kind *k, const char *target, const char **why);
/* "machine" or "netns", the scope's word in the API. */
const char *nt_reach_name(nt_reach s);
/* The section for profile member KEY, or NULL. */
const nt_profile_section *nt_section_find(const char *key);

/* Value helpers over a kind's operations. */
bool nt_setting_equal(const nt_setting_kind *k, const nt_value *a, const nt_value *b);
/* Write WANT to TARGET and read it back: through K's apply_read when it
 * has one, else APPLY then READ. Returns the write's 0 or -errno (ERR says
 * why); when that is 0, *READ_ERR is the read's 0 or -errno and GOT holds
 * what it read. */
int nt_setting_apply_read(const nt_ctx *ctx, nt_ethtool *eh, const nt_setting_kind *k,
			  const char *target, const nt_value *want, nt_value *got, int *read_err,
			  char *err, size_t errsize);
/* Whether the apply error R (-errno) means K's target cannot be changed
 * and the step is skipped, not failed (K's skip_errno). */
static inline bool nt_setting_skips(const nt_setting_kind *k, int r)
{
	for (size_t i = 0; i < sizeof(k->skip_errno) / sizeof(k->skip_errno[0]) && k->skip_errno[i]; i++)
		if (r == -k->skip_errno[i])
			return true;
	return false;
}
/* V as text; "?" when it cannot be formatted. Returns BUF. */
const char *nt_value_str(const nt_setting_kind *k, const nt_value *v, char *buf, size_t size);

/* Numeric-field values: set field I. */
static inline void nt_value_field_set(nt_value *v, int i, uint32_t x)
{
	v->f.v[i] = x;
	v->f.present |= 1u << i;
}

/* ---- what some kinds export beside their module ---- */

/* Kinds other code refers to (tests; irqbalance handling bans the IRQs
 * the profile places). */
extern const nt_setting_kind nt_setting_irq_affinity, nt_setting_rings, nt_setting_channels,
	nt_setting_bond, nt_setting_sysctl, nt_setting_irqbalance_ban,
	nt_setting_irqbalance_service;
/* Offload features (settings/features.c): target "IFACE/FEATURE" with the
 * kernel's feature name ("enos1/rx-ntuple-filter"), value "on" or "off".
 * Other sections that need a feature on (flow rules need ntuple) desire it
 * through this kind. */
extern const nt_setting_kind nt_setting_feature, nt_setting_pause;

/* IRQ lists as the irqbalance_ban kind writes them: ascending, ranges for
 * runs, space-separated ("60-68 80-84", "" for none), so a host's worth of
 * queue vectors fits one value. FORMAT sorts and de-duplicates IRQS in
 * place. Returns 0 or -E2BIG / NT_EINVALID. PARSE gives a malloc'd array
 * (caller frees; NULL when empty). */
int nt_irqlist_format(int *irqs, int n, char *out, size_t size);
int nt_irqlist_parse(const char *list, int **irqs, int *n);

/* A NIC's flow rules for the per-NIC view (settings/flows.c): {"size",
 * "rx_queues", "driver_picks_location", "ntuple": {"on", "changeable"} |
 * null, "rules": [{"location",
 * "flow_type", "rule", "queue" | "action": "drop" | "context" and
 * "queue_offset", "irq", "irq_cpus"}]}
 * with the IRQ serving each rule's queue and the CPUs it runs on now, or
 * null when the NIC has no rule table. New reference, NULL on ENOMEM. */
json_t *nt_nic_flows_json(const nt_topology *t, const nt_nic *n);

/* Whether the bonding driver knows xmit_hash_policy NAME. */
bool nt_bond_policy_known(const char *name);

/* Sysctl keys nettune may change, and the shape of their values. */
typedef enum {
	NT_SYSCTL_INT, /* one integer in [min, max] */
	NT_SYSCTL_TRIPLE, /* three ascending positive integers */
	NT_SYSCTL_PORTS, /* two ascending integers in 1..65535 */
	NT_SYSCTL_WORD, /* one token of [A-Za-z0-9_-] */
} nt_sysctl_shape;

typedef struct nt_sysctl_key {
	const char *key;
	nt_sysctl_shape shape;
	long min, max; /* for NT_SYSCTL_INT */
	/* NT_SCOPE_MACHINE for a key the kernel keeps once for the whole
	 * machine (registered for the initial namespace only, or shown
	 * read-only in the others), NT_SCOPE_NETNS for one each namespace
	 * has its own copy of. */
	nt_reach scope;
} nt_sysctl_key;

/* The allowlist entry for KEY, or NULL when KEY may not be changed. */
const nt_sysctl_key *nt_sysctl_allowed(const char *key);
/* NULL-terminated (key == NULL) allowlist. */
extern const nt_sysctl_key nt_sysctl_allowlist[];
/* Check VALUE against KEY's shape. Returns 0 or NT_EINVALID with WHY. */
int nt_sysctl_check_shape(const char *key, const char *value, char *why, size_t whysize);
/* VALUE (already shape-checked) as it is written: integers in plain
 * decimal joined by single spaces, words as given. Returns 0, NT_EINVALID
 * or -ENOSPC. */
int nt_sysctl_normalize(const char *key, const char *value, char *out, size_t size);

#endif
