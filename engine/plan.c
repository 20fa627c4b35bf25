#include "engine/plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void nt_plan_free(nt_plan *plan)
{
	if (!plan)
		return;
	free(plan->steps);
	json_decref(plan->warnings);
	json_decref(plan->reserved);
	memset(plan, 0, sizeof(*plan));
}

int nt_plan_build(const nt_ctx *ctx, const nt_topology *t, const json_t *profile, nt_plan *plan,
		  json_t *errors)
{
	nt_desired *want = NULL;
	int nwant = 0, r;
	char why[512];

	memset(plan, 0, sizeof(*plan));
	plan->warnings = json_array();
	plan->reserved = json_object();
	if (!plan->warnings || !plan->reserved) {
		nt_plan_free(plan);
		return -ENOMEM;
	}
	if ((r = nt_profile_validate(t, profile, errors)) < 0)
		goto fail;
	if ((r = nt_profile_desired_ex(t, profile, &want, &nwant, plan->warnings,
					 plan->reserved)) < 0)
		goto fail;
	plan->steps = calloc((size_t)nwant + 1, sizeof(nt_step));
	if (!plan->steps) {
		r = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < nwant; i++) {
		const nt_desired *d = &want[i];
		nt_step *s = &plan->steps[plan->nsteps];
		if (d->kind->validate(ctx, t, d->target, d->after, why, sizeof(why)) < 0) {
			nt_profile_error(errors, d->path, "%s", why);
			continue;
		}
		int e = d->kind->read(ctx, d->target, s->before, sizeof(s->before));
		if (e < 0) {
			nt_profile_error(errors, d->path, "%s %s cannot be read: %s", d->kind->name,
					 d->target, nt_strerror(e));
			continue;
		}
		/* A shared list (the irqbalance ban) is written whole: what is
		 * there plus what the profile adds. */
		if (d->kind->compose)
			e = d->kind->compose(s->before, d->after, s->after, sizeof(s->after));
		else
			memcpy(s->after, d->after, sizeof(s->after));
		if (e < 0) {
			nt_profile_error(errors, d->path, "%s %s: '%s' and '%s' do not combine: %s",
					 d->kind->name, d->target, s->before, d->after, nt_strerror(e));
			continue;
		}
		if (nt_setting_equal(d->kind, s->before, s->after))
			continue;
		s->kind = d->kind;
		memcpy(s->target, d->target, sizeof(s->target));
		memcpy(s->interface, d->interface, sizeof(s->interface));
		plan->nsteps++;
	}
	if (json_array_size(errors) > 0) {
		r = NT_EINVALID;
		goto fail;
	}
	/* Drivers re-create their queues for a ring or channel change (seed
	 * 003 took the link down around `ethtool -G`): say so once a NIC. */
	for (int i = 0; i < plan->nsteps; i++) {
		const nt_step *s = &plan->steps[i];
		if (s->kind != &nt_setting_rings && s->kind != &nt_setting_channels)
			continue;
		if (i > 0 && strcmp(plan->steps[i - 1].target, s->target) == 0 &&
		    (plan->steps[i - 1].kind == &nt_setting_rings || plan->steps[i - 1].kind == &nt_setting_channels))
			continue;
		char msg[256];
		snprintf(msg, sizeof(msg),
			 "%s: changing rings or channels may reset the NIC and briefly drop its link", s->target);
		json_array_append_new(plan->warnings, json_string(msg));
	}
	free(want);
	return 0;
fail:
	free(want);
	nt_plan_free(plan);
	return r;
}

json_t *nt_step_to_json(const nt_step *s)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "kind", s->kind->name, "target", s->target,
			      "before", s->before, "after", s->after);
	if (o && s->interface[0])
		json_object_set_new(o, "interface", json_string(s->interface));
	return o;
}

json_t *nt_plan_to_json(const nt_plan *plan, const json_t *profile)
{
	json_t *steps = json_array();
	for (int i = 0; steps && i < plan->nsteps; i++)
		json_array_append_new(steps, nt_step_to_json(&plan->steps[i]));
	return json_pack("{s:O,s:o,s:O,s:o}", "profile", profile ? profile : json_null(), "steps",
			 steps, "warnings", plan->warnings, "reserved",
			 plan->reserved ? json_incref(plan->reserved) : json_object());
}
