/* SPDX-License-Identifier: Apache-2.0 */
/* A plan: the concrete steps a profile takes on a host, each with the value
 * it finds (before) and the value it writes (after). Steps that would change
 * nothing are left out, so planning an applied profile again gives none. */
#ifndef NT_PLAN_H
#define NT_PLAN_H

#include "engine/profile.h"
#include "store/status.h"

typedef struct nt_step {
	const nt_setting_kind *kind;
	char target[NT_TARGET_MAX];
	char interface[IF_NAMESIZE];
	nt_value before;
	nt_value after;
} nt_step;

/* The result STEP's record shows for R: the name of store/status.h, or for
 * NT_STEP_SKIPPED the kind's own reason ("skipped: not movable"). */
const char *nt_step_result_label(nt_step_result r, const nt_setting_kind *k);

typedef struct nt_plan {
	nt_step *steps; /* malloc'd, nsteps entries */
	int nsteps;
	json_t *warnings; /* array of strings (owned) */
	json_t *reserved; /* object interface -> cpulist kept for the application
			   * by reserve_app_cpus (owned; {} when none) */
	/* A plan holding the desired state (nt_plan_build_ex HOLD): the
	 * targets whose kind's check answered NT_ETAKEN, left out of the
	 * steps: [{"kind","target","interface"?,"desired","current",
	 * "message"}] (owned; NULL when none). */
	json_t *taken;
	/* A plan kept by id: the facts it rests on beyond its targets, read
	 * when it was kept (engine/plan_facts.h), compared at its apply
	 * (owned; NULL for a plan not kept). */
	json_t *facts;
} nt_plan;

/* Validate PROFILE against host T and build its plan. T is the host read
 * with CTX for this plan, just before: where a kind can tell a target's
 * value from T (model_read), that is the step's before-value. EH is an
 * ethtool handle for CTX kept for the whole plan, or NULL. On
 * NT_EINVALID the problems are appended to ERRORS ({path, message}); a
 * target whose current value cannot be read is such a problem too. On
 * success *PLAN is filled (free with nt_plan_free). Returns 0, NT_EINVALID
 * or -errno. */
int nt_plan_build(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const json_t *profile,
		  nt_plan *plan, json_t *errors);
/* The same; with HOLD (the drift watcher holding a desired state that was
 * applied), a target another program has taken since (its kind's check
 * answers NT_ETAKEN) is not an error but goes to PLAN->taken, and the
 * rest of the profile is planned: the desired state is never written
 * over another program's value, and is still held everywhere else. */
int nt_plan_build_ex(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const json_t *profile,
		     bool hold, nt_plan *plan, json_t *errors);
void nt_plan_free(nt_plan *plan);

/* {"kind","target","interface"?,"before","after"} */
json_t *nt_step_to_json(const nt_step *s);
/* Fill S from a step document as nt_step_to_json writes it (the journal).
 * S->kind is NULL when the kind is unknown to this build. Returns 0, or
 * NT_EPARSE when a value is not one of its kind. */
int nt_step_from_json(const json_t *doc, nt_step *s);
/* The same from the step's words as the store keeps them (any NULL reads
 * as nothing: an unknown kind, or a value that does not parse). */
int nt_step_from_strings(const char *kind, const char *target, const char *iface,
			 const char *before, const char *after, nt_step *s);
/* {"profile": PROFILE, "steps": [...], "warnings": [...], "reserved": {...}},
 * and "taken": [...] when some are; new reference. */
json_t *nt_plan_to_json(const nt_plan *plan, const json_t *profile);

#endif
