/* SPDX-License-Identifier: Apache-2.0 */
/* Tuning profiles: the JSON document a user writes, its validation against
 * a host, and the values it asks for on that host.
 *
 *   {"name": "x460-fix", "description": "...",
 *    "irq_affinity": [{"interface": "eth*", "policy": "local", "exclude_cpus": "0"}],
 *    "irqbalance": "ban",
 *    "rings": [{"interface": "enos*", "rx": 4096, "tx": "max"}],
 *    "sysctl": {"net.ipv4.tcp_rmem": "4096 87380 16777216"}}
 *
 * Besides "name" and "description", every member is a section owned by one
 * file of settings/ (settings/setting.h): this file only dispatches to
 * them and puts what they ask for in apply order. Validation touches
 * nothing and reads nothing but the topology: every problem is collected
 * with the JSON path of the offending value. */
#ifndef NT_PROFILE_H
#define NT_PROFILE_H

#include "host/topology.h"
#include "settings/section.h"

#include <jansson.h>
#include <stdbool.h>

#define NT_PROFILE_NAME_MAX 64

/* [A-Za-z0-9._-]{1,64}, but not "." or ".." */
bool nt_profile_name_valid(const char *name);

/* Check PROFILE's form and, when T is not NULL, that what it names exists on
 * host T (interfaces, online CPUs, ring maxima, hash policies, sysctl
 * shapes). Every problem is appended to ERRORS. Returns 0 or NT_EINVALID. */
int nt_profile_validate(const nt_topology *t, const json_t *profile, json_t *errors);
/* The same through READS (settings/section.h), which keeps what the
 * sections read of the host beyond T for a nt_profile_desired_in of the
 * same plan to use again: one read of the NAPI map a plan, not two. The
 * caller frees READS (nt_plan_reads_free). */
int nt_profile_validate_in(const nt_topology *t, const json_t *profile, json_t *errors, nt_plan_reads *reads);

/* The values a VALID profile asks for on host T, in the order they are to
 * be applied (by each kind's order; one NIC's queue settings together). A
 * later entry for the same target replaces an earlier one. *OUT is
 * malloc'd (caller frees). Things left out are explained in WARNINGS. When
 * RESERVED (a JSON object) is not NULL, it gets interface -> cpulist of
 * the CPUs reserve_app_cpus kept free. Returns 0 or -errno. */
int nt_profile_desired_ex(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
			  json_t *warnings, json_t *reserved);
/* The same through READS, as nt_profile_validate_in. */
int nt_profile_desired_in(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
			  json_t *warnings, json_t *reserved, nt_plan_reads *reads);
/* The same without the reserved CPUs. */
int nt_profile_desired(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
		       json_t *warnings);

#endif
