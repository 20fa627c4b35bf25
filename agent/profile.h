/* Tuning profiles: the JSON document a user writes, its validation against
 * a host, and the desired values it asks for on that host.
 *
 *   {"name": "x460-fix", "description": "...",
 *    "irq_affinity": [{"interface": "eth*", "policy": "local", "exclude_cpus": "0"},
 *                     {"interface": "enos0", "cpus": "0-7"}],
 *    "rings": [{"interface": "enos*", "rx": 4096, "tx": "max"}],
 *    "bonds": [{"interface": "bond0", "xmit_hash_policy": "layer3+4"}],
 *    "sysctl": {"net.ipv4.tcp_rmem": "4096 87380 16777216"}}
 *
 * Validation touches nothing and reads nothing but the topology: every
 * problem is collected with the JSON path of the offending value. */
#ifndef NT_PROFILE_H
#define NT_PROFILE_H

#include "agent/cpuset.h"
#include "agent/setting.h"
#include "agent/topology.h"

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

/* An IRQ placement policy ("local", ...): choose one CPU for each of the
 * NIC's NIRQS IRQs (in IRQ order) into CPUS. STATE is shared by every call of
 * one plan so that NICs can be spread against each other. Returns 0, or
 * -ENOENT when the NIC cannot be placed (a warning says why). */
typedef struct nt_policy_state nt_policy_state;
typedef int (*nt_irq_policy_fn)(const nt_topology *t, const nt_nic *nic, const nt_cpuset *exclude,
				int nirqs, int *cpus, nt_policy_state *state, json_t *warnings);

/* The function for policy NAME, or NULL. */
nt_irq_policy_fn nt_irq_policy_find(const char *name);

/* Deal the CPUs of SET to N IRQs round-robin, one CPU each, starting with
 * the START-th CPU of the set (set_irq_affinity_cpulist.sh of seed 001 with
 * START 0). Returns 0, or -ENOENT when SET is empty. */
int nt_deal_cpus(const nt_cpuset *set, int start, int n, int *out);

/* The values a VALID profile asks for on host T, in profile order (IRQ
 * affinity, rings, bonds, sysctls). A later entry for the same target
 * replaces an earlier one. *OUT is malloc'd (caller frees). Things left out
 * are explained in WARNINGS. Returns 0 or -errno. */
int nt_profile_desired(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
		       json_t *warnings);

#endif
