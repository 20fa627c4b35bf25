/* SPDX-License-Identifier: Apache-2.0 */
/* What the profile in effect says about where an application near a NIC
 * may run (placement/app.h): the CPUs its reserve_app_cpus kept for the
 * NIC and its exclude_cpus. The profile in effect is the desired state's
 * when one is set (its reservation planned on the host as it is now: a
 * reservation depends only on the node, the exclusions and the count), or
 * else that of the newest transaction that took effect. */
#include "agent/agent.h"
#include "engine/profile.h"
#include "engine/txn.h"
#include "settings/section.h"
#include "store/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether irq_affinity's PATTERN names NIC or, for a bond, one of its
 * ports, or, for a port, its bond. */
static bool names(const nt_topology *t, const char *pattern, const nt_nic *nic)
{
	if (!pattern || !nic)
		return false;
	if (nt_iface_match(pattern, nic->name) || (nic->master[0] && nt_iface_match(pattern, nic->master)))
		return true;
	const nt_bond *b = nic->is_bond ? nt_topology_bond(t, nic->name) : NULL;
	for (int i = 0; b && i < b->nslaves; i++)
		if (nt_iface_match(pattern, b->slaves[i]))
			return true;
	return false;
}

/* The newest transaction that took effect, when it applied a profile (a
 * rollback's undo has none: nothing is then in effect). */
static json_t *newest_in_effect(nt_txn_engine *e)
{
	json_t *list = NULL, *row, *found = NULL;
	size_t i;
	if (nt_txn_list(e, NULL, 50, 0, &list) < 0)
		return NULL;
	json_array_foreach(json_object_get(list, "transactions"), i, row) {
		int st = nt_txn_status_parse(json_string_value(json_object_get(row, "status")));
		if (st < 0 || !nt_txn_status_took_effect((nt_txn_status)st))
			continue;
		if (json_is_object(json_object_get(row, "profile")) && json_is_null(json_object_get(row, "rollback_of")))
			found = json_incref(row);
		break;
	}
	json_decref(list);
	return found;
}

int nt_agent_placement_hint(nt_agent *a, const nt_topology *t, const nt_nic *nic, json_t **reserved,
			    nt_cpuset *exclude, char *source, size_t ssize)
{
	nt_txn_engine *e = nt_agent_engine(a);
	json_t *doc = NULL, *profile = NULL;
	size_t i;
	json_t *entry;

	*reserved = NULL;
	nt_cpuset_zero(exclude);
	source[0] = '\0';
	if (nt_txn_desired_get(e, &doc) == 0 && json_is_object(json_object_get(doc, "profile"))) {
		profile = json_object_get(doc, "profile");
		nt_desired *want = NULL;
		int nwant = 0;
		json_t *warnings = json_array();
		*reserved = json_object();
		if (!warnings || !*reserved) {
			json_decref(warnings);
			json_decref(doc);
			json_decref(*reserved);
			*reserved = NULL;
			return -ENOMEM;
		}
		/* A desired profile that no longer validates reserves nothing. */
		json_t *errors = json_array();
		nt_plan_reads reads = { .napi_done = false };
		if (errors && nt_profile_validate_in(t, profile, errors, &reads) == 0)
			nt_profile_desired_in(t, profile, &want, &nwant, warnings, *reserved, &reads);
		nt_plan_reads_free(&reads);
		json_decref(errors);
		free(want);
		json_decref(warnings);
		snprintf(source, ssize, "the desired state");
	} else {
		json_decref(doc);
		doc = newest_in_effect(e);
		if (!doc)
			return 0;
		profile = json_object_get(doc, "profile");
		*reserved = json_incref(json_object_get(doc, "reserved"));
		snprintf(source, ssize, "transaction %lld", (long long)json_integer_value(json_object_get(doc, "id")));
	}
	json_array_foreach(json_object_get(profile, "irq_affinity"), i, entry) {
		const char *excl = json_string_value(json_object_get(entry, "exclude_cpus"));
		nt_cpuset x;
		if (excl && names(t, json_string_value(json_object_get(entry, "interface")), nic) &&
		    nt_cpulist_parse(excl, &x) == 0)
			nt_cpuset_or(exclude, exclude, &x);
	}
	json_decref(doc);
	return 0;
}

int nt_agent_profile_in_effect(nt_agent *a, json_t **profile, char *source, size_t ssize)
{
	nt_txn_engine *e = nt_agent_engine(a);
	json_t *doc = NULL;

	*profile = NULL;
	source[0] = '\0';
	if (nt_txn_desired_get(e, &doc) == 0 && json_is_object(json_object_get(doc, "profile"))) {
		*profile = json_incref(json_object_get(doc, "profile"));
		snprintf(source, ssize, "the desired state");
	} else {
		json_decref(doc);
		doc = newest_in_effect(e);
		if (!doc)
			return 0;
		*profile = json_incref(json_object_get(doc, "profile"));
		snprintf(source, ssize, "transaction %lld", (long long)json_integer_value(json_object_get(doc, "id")));
	}
	json_decref(doc);
	return 0;
}
