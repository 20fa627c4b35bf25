/* Tuning profiles: the JSON document a user writes, its validation against
 * a host, and the desired values it asks for on that host.
 *
 *   {"name": "x460-fix", "description": "...",
 *    "irq_affinity": [{"interface": "eth*", "policy": "local", "exclude_cpus": "0"},
 *                     {"interface": "enos0", "cpus": "0-7"},
 *                     {"interface": "ib0", "policy": "local-node", "reserve_app_cpus": 4}],
 *    "other_irqs": {"cpus": "0-1"},
 *    "irqbalance": "ban",
 *    "rings": [{"interface": "enos*", "rx": 4096, "tx": "max"}],
 *    "bonds": [{"interface": "bond0", "xmit_hash_policy": "layer3+4"}],
 *    "sysctl": {"net.ipv4.tcp_rmem": "4096 87380 16777216"}}
 *
 * Validation touches nothing and reads nothing but the topology: every
 * problem is collected with the JSON path of the offending value. */
#ifndef NT_PROFILE_H
#define NT_PROFILE_H

#include "host/cpuset.h"
#include "settings/setting.h"
#include "host/topology.h"

#include <jansson.h>
#include <stdbool.h>

#define NT_PROFILE_NAME_MAX 64
#define NT_TARGET_MAX 64
#define NT_JSONPATH_MAX 128

/* [A-Za-z0-9._-]{1,64} */
bool nt_profile_name_valid(const char *name);

/* Append {"path": PATH, "message": ...} to ERRORS (a JSON array). */
void nt_profile_error(json_t *errors, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Check PROFILE's form and, when T is not NULL, that what it names exists on
 * host T (interfaces, online CPUs, ring maxima, hash policies, sysctl
 * shapes). Every problem is appended to ERRORS. Returns 0 or NT_EINVALID. */
int nt_profile_validate(const nt_topology *t, const json_t *profile, json_t *errors);

/* One value the profile asks for. */
typedef struct nt_desired {
	const nt_setting_kind *kind;
	char target[NT_TARGET_MAX];
	char interface[IF_NAMESIZE]; /* the NIC or bond it belongs to, "" for sysctls */
	char after[NT_VALUE_MAX];
	char path[NT_JSONPATH_MAX]; /* JSON path of the profile value asking for it */
} nt_desired;

/* An IRQ placement policy ("local", "local-node"): give each of the NIC's
 * NIRQS IRQs (in IRQ order) an affinity in OUT, from CPUS, the NIC's usable
 * CPUs (its node minus exclusions and reserved CPUs) in placement order
 * (nt_cpus_siblings_last), M of them. STATE is shared by every call of one
 * plan so that NICs can be spread against each other. Returns 0 or -errno. */
typedef struct nt_policy_state nt_policy_state;
typedef int (*nt_irq_policy_fn)(const nt_nic *nic, const int *cpus, int m, int nirqs,
				nt_cpuset *out, nt_policy_state *state, json_t *warnings);

/* The function for policy NAME, or NULL. */
nt_irq_policy_fn nt_irq_policy_find(const char *name);

/* Deal the CPUs of SET to N IRQs round-robin, one CPU each, starting with
 * the START-th CPU of the set (set_irq_affinity_cpulist.sh of seed 001 with
 * START 0). Returns 0, or -ENOENT when SET is empty. */
int nt_deal_cpus(const nt_cpuset *set, int start, int n, int *out);

/* The CPUs of SET in placement order: one thread of every core (by
 * t->cpu_package/cpu_core; a CPU of unknown core is a core of its own),
 * ascending, before any second thread, so IRQs reach hyper-thread
 * siblings last. OUT has room for nt_cpuset_count(SET). Returns the count. */
int nt_cpus_siblings_last(const nt_topology *t, const nt_cpuset *set, int *out);

/* reserve_app_cpus: N CPUs of ORDER (placement order, M of them) kept for
 * the application, taken whole cores at a time from the end, so that the
 * application does not share a core with the IRQs. Into RESERVED. Returns
 * 0, or -ENOSPC when N leaves no CPU for the IRQs. */
int nt_reserve_app_cpus(const nt_topology *t, const int *order, int m, int n, nt_cpuset *reserved);

/* The values a VALID profile asks for on host T, in the order they are to
 * be applied: irqbalance first (told before affinity changes), IRQ
 * affinity, other_irqs, rings, bonds, sysctls. A later entry for the same
 * target replaces an earlier one. *OUT is malloc'd (caller frees). Things
 * left out are explained in WARNINGS. When RESERVED (a JSON object) is not
 * NULL, it gets interface -> cpulist of the CPUs reserve_app_cpus kept free.
 * Returns 0 or -errno. */
int nt_profile_desired_ex(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
			  json_t *warnings, json_t *reserved);
/* The same without the reserved CPUs. */
int nt_profile_desired(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
		       json_t *warnings);

#endif
