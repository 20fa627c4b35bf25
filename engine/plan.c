/* SPDX-License-Identifier: Apache-2.0 */
#include "engine/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *nt_step_result_label(nt_step_result r, const nt_setting_kind *k)
{
	if (r == NT_STEP_SKIPPED && k && k->skip_reason)
		return k->skip_reason;
	const char *name = nt_step_result_name(r);
	return name ? name : "unknown";
}

void nt_plan_free(nt_plan *plan)
{
	if (!plan)
		return;
	free(plan->steps);
	json_decref(plan->warnings);
	json_decref(plan->reserved);
	json_decref(plan->taken);
	json_decref(plan->facts);
	memset(plan, 0, sizeof(*plan));
}

/* A change that may reset a NIC: say so once per NIC. Its steps that may
 * need not stand together (channels go before IRQ affinity, rings after
 * it), so each looks back over the earlier ones that may: a few per NIC. */
static void warn_resets(nt_plan *plan)
{
	for (int i = 0; i < plan->nsteps; i++) {
		const nt_step *s = &plan->steps[i];
		bool said = false;
		if (!s->kind->reset_warning)
			continue;
		for (int j = 0; j < i && !said; j++)
			said = plan->steps[j].kind->reset_warning &&
			       strcmp(plan->steps[j].interface, s->interface) == 0 &&
			       strcmp(plan->steps[j].kind->reset_warning, s->kind->reset_warning) == 0;
		if (said)
			continue;
		char msg[256];
		snprintf(msg, sizeof(msg), "%s: %s", s->interface[0] ? s->interface : s->target,
			 s->kind->reset_warning);
		json_array_append_new(plan->warnings, json_string(msg));
	}
}

/* Record in PLAN->taken that D's target holds CUR, another program's. */
static int note_taken(nt_plan *plan, const nt_desired *d, const nt_value *cur, const char *why)
{
	char a[NT_VALUE_MAX], b[NT_VALUE_MAX];
	if (!plan->taken && !(plan->taken = json_array()))
		return -ENOMEM;
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "kind", d->kind->name, "target", d->target,
			      "desired", nt_value_str(d->kind, &d->value, a, sizeof(a)), "current",
			      nt_value_str(d->kind, cur, b, sizeof(b)), "message", why);
	if (o && d->interface[0])
		json_object_set_new(o, "interface", json_string(d->interface));
	return o ? json_array_append_new(plan->taken, o) == 0 ? 0 : -ENOMEM : -ENOMEM;
}

/* Whether D is refused for its scope: the agent runs in a network
 * namespace other than the initial one (CTX), where a machine-wide target
 * would change every namespace, the host's included, and the operator did
 * not allow it. Allowed, it is said once per kind among PLAN's warnings;
 * refused, once per JSON path among ERRORS. */
static bool refuse_scope(const nt_ctx *ctx, const nt_desired *want, int i, nt_plan *plan, json_t *errors)
{
	const nt_desired *d = &want[i];
	const char *why;
	if (!ctx->netns_other || nt_setting_scope(d->kind, d->target, &why) != NT_SCOPE_MACHINE)
		return false;
	/* Said already for an earlier value of the same path (refused) or
	 * kind (allowed)? */
	for (int j = 0; j < i; j++) {
		if (nt_setting_scope(want[j].kind, want[j].target, NULL) != NT_SCOPE_MACHINE)
			continue;
		if (ctx->machine_wide_allowed ? want[j].kind == d->kind : strcmp(want[j].path, d->path) == 0)
			return !ctx->machine_wide_allowed;
	}
	if (ctx->machine_wide_allowed) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s changes the whole machine, not only this network namespace (%s): "
			 "planned because allow_machine_wide is set", d->kind->name, why);
		json_array_append_new(plan->warnings, json_string(msg));
		return false;
	}
	nt_profile_error(errors, d->path, "%s %s is machine-wide (%s), and the agent runs in a network namespace "
			 "other than the initial one, where this change would reach every namespace, the host's "
			 "included: refused unless the agent runs with allow_machine_wide = yes (nettune.conf) or "
			 "--allow-machine-wide", d->kind->name, d->target, why);
	return true;
}

int nt_plan_build(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const json_t *profile,
		  nt_plan *plan, json_t *errors)
{
	return nt_plan_build_ex(ctx, eh, t, profile, false, plan, errors);
}

int nt_plan_build_ex(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const json_t *profile,
		     bool hold, nt_plan *plan, json_t *errors)
{
	nt_desired *want = NULL;
	int nwant = 0, r;
	char why[512], a[NT_VALUE_MAX], b[NT_VALUE_MAX];
	nt_plan_reads reads = { .napi_done = false };

	memset(plan, 0, sizeof(*plan));
	plan->warnings = json_array();
	plan->reserved = json_object();
	if (!plan->warnings || !plan->reserved) {
		nt_plan_free(plan);
		return -ENOMEM;
	}
	/* The NAPI map is read once for both (settings/section.h). */
	r = nt_profile_validate_in(t, profile, errors, &reads);
	if (r == 0)
		r = nt_profile_desired_in(t, profile, &want, &nwant, plan->warnings, plan->reserved, &reads);
	nt_plan_reads_free(&reads);
	if (r < 0)
		goto fail;
	plan->steps = calloc((size_t)nwant + 1, sizeof(nt_step));
	if (!plan->steps) {
		r = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < nwant; i++) {
		const nt_desired *d = &want[i];
		const nt_setting_kind *k = d->kind;
		nt_step *s = &plan->steps[plan->nsteps];
		if (refuse_scope(ctx, want, i, plan, errors))
			continue;
		int c = k->check(ctx, eh, t, d->target, &d->value, why, sizeof(why));
		if (c == NT_ETAKEN && hold) {
			/* Reported, not written over and not an error: the
			 * other targets are still held. */
			nt_value cur;
			if (k->read(ctx, eh, d->target, &cur) < 0)
				memset(&cur, 0, sizeof(cur));
			if ((r = note_taken(plan, d, &cur, why)) < 0)
				goto fail;
			continue;
		}
		if (c < 0) {
			nt_profile_error(errors, d->path, "%s", why);
			continue;
		}
		/* T was read for this plan: where it shows the value, that is
		 * the before-value, and the target is not read again. */
		int e = k->model_read ? k->model_read(t, d->target, &s->before) : -ENOENT;
		if (e == -ENOENT)
			e = k->read(ctx, eh, d->target, &s->before);
		if (e < 0) {
			nt_profile_error(errors, d->path, "%s %s cannot be read: %s", k->name, d->target,
					 nt_strerror(e));
			continue;
		}
		/* A shared list (the irqbalance ban) is written whole: what is
		 * there plus what the profile adds. */
		if (k->compose)
			e = k->compose(&s->before, &d->value, &s->after);
		else
			s->after = d->value;
		if (e < 0) {
			nt_profile_error(errors, d->path, "%s %s: '%s' and '%s' do not combine: %s", k->name,
					 d->target, nt_value_str(k, &s->before, a, sizeof(a)),
					 nt_value_str(k, &d->value, b, sizeof(b)), nt_strerror(e));
			continue;
		}
		if (nt_setting_equal(k, &s->before, &s->after))
			continue;
		s->kind = k;
		memcpy(s->target, d->target, sizeof(s->target));
		memcpy(s->interface, d->interface, sizeof(s->interface));
		plan->nsteps++;
	}
	if (json_array_size(errors) > 0) {
		r = NT_EINVALID;
		goto fail;
	}
	warn_resets(plan);
	free(want);
	return 0;
fail:
	free(want);
	nt_plan_free(plan);
	return r;
}

json_t *nt_step_to_json(const nt_step *s)
{
	char before[NT_VALUE_MAX], after[NT_VALUE_MAX];
	json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "kind", s->kind->name, "target", s->target, "before",
			      nt_value_str(s->kind, &s->before, before, sizeof(before)), "after",
			      nt_value_str(s->kind, &s->after, after, sizeof(after)));
	if (o && s->interface[0])
		json_object_set_new(o, "interface", json_string(s->interface));
	return o;
}

int nt_step_from_strings(const char *kind, const char *target, const char *iface,
			 const char *before, const char *after, nt_step *s)
{
	memset(s, 0, sizeof(*s));
	s->kind = nt_setting_find(kind);
	snprintf(s->target, sizeof(s->target), "%s", target ? target : "");
	snprintf(s->interface, sizeof(s->interface), "%s", iface ? iface : "");
	if (!s->kind)
		return 0;
	if (s->kind->parse(before, &s->before) < 0 || s->kind->parse(after, &s->after) < 0)
		return NT_EPARSE;
	return 0;
}

int nt_step_from_json(const json_t *doc, nt_step *s)
{
	return nt_step_from_strings(json_string_value(json_object_get(doc, "kind")),
				    json_string_value(json_object_get(doc, "target")),
				    json_string_value(json_object_get(doc, "interface")),
				    json_string_value(json_object_get(doc, "before")),
				    json_string_value(json_object_get(doc, "after")), s);
}

json_t *nt_plan_to_json(const nt_plan *plan, const json_t *profile)
{
	json_t *steps = json_array();
	for (int i = 0; steps && i < plan->nsteps; i++)
		json_array_append_new(steps, nt_step_to_json(&plan->steps[i]));
	json_t *o = json_pack("{s:O,s:o,s:O,s:o}", "profile", profile ? profile : json_null(), "steps", steps,
			      "warnings", plan->warnings, "reserved",
			      plan->reserved ? json_incref(plan->reserved) : json_object());
	if (o && json_array_size(plan->taken))
		json_object_set(o, "taken", plan->taken);
	return o;
}
