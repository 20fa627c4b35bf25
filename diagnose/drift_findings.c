/* SPDX-License-Identifier: Apache-2.0 */
/* Drift findings: the drift watcher's report (agent/drift.h) added to a
 * diagnosis (nt_diagnose_add_drift). */
#include "diagnose/diagnose_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int diag_insert_finding(json_t *diagnosis, int sev, json_t *f)
{
	json_t *arr = json_object_get(diagnosis, "findings"), *x;
	size_t i, pos = 0;
	if (!f || !json_is_array(arr)) {
		json_decref(f);
		return -ENOMEM;
	}
	json_array_foreach(arr, i, x) {
		const char *s = json_string_value(json_object_get(x, "severity"));
		for (int k = 0; k <= (int)sev; k++)
			if (s && !strcmp(s, diag_sev_names[k]))
				pos = i + 1;
	}
	if (json_array_insert_new(arr, pos, f) < 0)
		return -ENOMEM;
	json_t *sum = json_object_get(diagnosis, "summary");
	json_t *n = json_object_get(sum, diag_sev_names[sev]);
	if (json_is_integer(n))
		json_integer_set(n, json_integer_value(n) + 1);
	return 0;
}

int nt_diagnose_add_drift(json_t *diagnosis, const json_t *drift)
{
	const char *status = json_string_value(json_object_get(drift, "status"));
	const char *policy = json_string_value(json_object_get(drift, "policy"));
	size_t i;
	json_t *t;
	char msg[768];

	if (status && !strcmp(status, "invalid")) {
		snprintf(msg, sizeof(msg), "%s",
			 json_string_value(json_object_get(drift, "message")) ?
				 json_string_value(json_object_get(drift, "message")) :
				 "the desired profile does not validate on this host");
		json_t *f = json_pack("{s:s, s:s, s:s, s:s, s:{s:O}, s:n}", "id", "drift", "severity",
				      diag_sev_names[SEV_WARNING], "subject", "host", "message", msg,
				      "evidence", "errors", json_object_get(drift, "errors"), "fix");
		if (diag_insert_finding(diagnosis, SEV_WARNING, f) < 0)
			return -ENOMEM;
	}
	json_array_foreach(json_object_get(drift, "targets"), i, t) {
		const char *state = json_string_value(json_object_get(t, "state"));
		const char *kind = json_string_value(json_object_get(t, "kind"));
		const char *target = json_string_value(json_object_get(t, "target"));
		int sev;
		if (!state || !kind || !target)
			continue;
		if (!strcmp(state, "contested")) {
			sev = SEV_WARNING;
			/* Taken: another program's value found there, never
			 * written over (agent/drift.c), not a fight. */
			snprintf(msg, sizeof(msg),
				 json_is_true(json_object_get(t, "taken")) ?
					 "%s %s holds another program's value (desired '%s', now '%s'), "
					 "which the desired state does not write over: %s" :
					 "%s %s keeps drifting from the desired state (%s, now %s) and is "
					 "no longer repaired: %s", kind, target,
				 json_string_value(json_object_get(t, "desired")),
				 json_string_value(json_object_get(t, "current")),
				 json_string_value(json_object_get(t, "culprit")) ?
					 json_string_value(json_object_get(t, "culprit")) : "");
		} else if (!strcmp(state, "drifted") && policy && !strcmp(policy, "report")) {
			/* Under "repair" a drifted target is repaired within
			 * moments; under "report" it stays so. */
			sev = SEV_WARNING;
			snprintf(msg, sizeof(msg),
				 "%s %s differs from the desired state (%s, now %s); the drift "
				 "policy is report, so it stays so", kind, target,
				 json_string_value(json_object_get(t, "desired")),
				 json_string_value(json_object_get(t, "current")));
		} else if (!strcmp(state, "overridden")) {
			sev = SEV_INFO;
			snprintf(msg, sizeof(msg),
				 "%s %s was changed by transaction %lld after the desired state was "
				 "set; the desired state is not enforced on it", kind, target,
				 (long long)json_integer_value(
					 json_object_get(json_object_get(t, "changed_by"), "txn")));
		} else {
			continue;
		}
		json_t *f = json_pack("{s:s, s:s, s:s, s:s, s:O, s:n}", "id", "drift", "severity",
				      diag_sev_names[sev], "subject", target, "message", msg, "evidence", t,
				      "fix");
		if (diag_insert_finding(diagnosis, sev, f) < 0)
			return -ENOMEM;
	}
	return 0;
}
