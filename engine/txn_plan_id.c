/* SPDX-License-Identifier: Apache-2.0 */
/* Plans kept by id (engine/plan_ids.h) on the engine's side: a plan kept
 * for an apply as POST /v1/plan answers it, with the facts it rests on
 * (engine/plan_facts.h: the online CPUs, each interface's ifindex, queues
 * and IRQs), and an apply of exactly such a plan, once, without a new read
 * of the whole host: the facts are read again and compared, then each
 * target is read (all at once, as a rollback reads them) and compared with
 * the plan's before-value, and if a fact changed or a target moved nothing
 * is applied. */
#include "engine/plan_facts.h"
#include "engine/txn_int.h"
#include "settings/setting.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nt_txn_keep_plan(nt_txn_engine *e, nt_plan *plan, const json_t *profile, const char *profile_name,
		     json_t *doc, nt_txn_outcome *out)
{
	char id[NT_PLAN_ID_SIZE], ts[40];
	int64_t expires;
	/* The kept plan's own copies: the reply holds the others, and is let
	 * go of on an HTTP thread. */
	json_t *w = json_deep_copy(plan->warnings), *res = json_deep_copy(plan->reserved);
	json_decref(plan->warnings);
	json_decref(plan->reserved);
	plan->warnings = w;
	plan->reserved = res;
	if (!w || !res)
		return -ENOMEM;
	/* Read now, a moment after the host read the plan was made from. */
	json_decref(plan->facts);
	if (!(plan->facts = nt_plan_facts(&e->ctx, plan)))
		return -ENOMEM;
	int r = nt_plan_ids_put(e->plans, plan, (json_t *)profile, profile_name, nt_store_now_ms(), id,
				&expires);
	if (r < 0) {
		snprintf(out->message, sizeof(out->message), "the plan could not be kept: %s",
			 nt_strerror(r));
		return r;
	}
	nt_store_rfc3339(expires, ts, sizeof(ts));
	json_object_set_new(doc, "id", json_string(id));
	json_object_set_new(doc, "expires", json_string(ts));
	return 0;
}

/* The plan kept as ID, taken out for an apply into K; or -ENOENT /
 * -ESTALE with a sentence saying why it cannot be. */
int nt_txn_take_plan(nt_txn_engine *e, const char *id, nt_kept_plan *k, nt_txn_outcome *out)
{
	nt_plan_gone gone;
	int64_t when, txn;
	char ts[40];
	/* K NULL: only whether it could be taken (before waiting for the slot,
	 * so that a used or expired id is told so rather than a conflict). */
	int r = k ? nt_plan_ids_take(e->plans, id, nt_store_now_ms(), k, &gone, &when, &txn)
		  : nt_plan_ids_peek(e->plans, id, nt_store_now_ms(), &gone, &when, &txn);
	if (r == 0)
		return 0;
	out->plan_gone = (int)gone;
	nt_store_rfc3339(when, ts, sizeof(ts));
	switch (gone) {
	case NT_PLAN_EXPIRED:
		snprintf(out->message, sizeof(out->message),
			 "plan %s expired at %s (plans are kept %d s); plan again", id, ts,
			 nt_plan_ids_ttl(e->plans));
		return -ESTALE;
	case NT_PLAN_USED:
		if (txn)
			snprintf(out->message, sizeof(out->message),
				 "plan %s was applied at %s as transaction %lld; a plan is applied "
				 "once: plan again", id, ts, (long long)txn);
		else
			snprintf(out->message, sizeof(out->message),
				 "plan %s was used at %s and nothing was applied (its targets had "
				 "moved, or the apply was refused); a plan is used once: plan again",
				 id, ts);
		return -ESTALE;
	default:
		snprintf(out->message, sizeof(out->message),
			 "no plan %s: this agent did not make it since it started, or it was evicted "
			 "(the newest %d plans are kept); plan again", id, NT_PLAN_IDS_MAX);
		return -ENOENT;
	}
}

/* The steps of PLAN whose target no longer reads as its planned
 * before-value, read all at once (the IRQs through the agent's held
 * files), as [{kind, target, interface?, planned, now, error?}] in *MOVED
 * (NULL when none moved). Returns how many moved, or -ENOMEM. */
static int moved_targets(nt_txn_engine *e, nt_ethtool *eh, const nt_plan *plan, json_t **moved)
{
	int n = plan->nsteps, count = 0;
	int *idx = malloc(((size_t)n + 1) * sizeof(*idx));
	int *res = malloc(((size_t)n + 1) * sizeof(*res));
	nt_value *cur = malloc(((size_t)n + 1) * sizeof(*cur));
	char a[NT_VALUE_MAX], b[NT_VALUE_MAX];

	*moved = NULL;
	if (!idx || !res || !cur || !(*moved = json_array())) {
		count = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++)
		idx[i] = i;
	nt_txn_read_steps(e, eh, STEPS_READ, plan->steps, idx, n, cur, NULL, 0, res);
	for (int i = 0; i < n; i++) {
		const nt_step *s = &plan->steps[i];
		if (res[i] == 0 && nt_setting_equal(s->kind, &cur[i], &s->before))
			continue;
		json_t *m = json_pack("{s:s,s:s,s:s}", "kind", s->kind->name, "target", s->target,
				      "planned", nt_value_str(s->kind, &s->before, a, sizeof(a)));
		if (!m) {
			count = -ENOMEM;
			goto out;
		}
		if (s->interface[0])
			json_object_set_new(m, "interface", json_string(s->interface));
		if (res[i] == 0) {
			json_object_set_new(m, "now", json_string(nt_value_str(s->kind, &cur[i], b, sizeof(b))));
		} else {
			json_object_set_new(m, "now", json_null());
			json_object_set_new(m, "error", json_string(nt_strerror(res[i])));
		}
		json_array_append_new(*moved, m);
		count++;
	}
out:
	if (count <= 0) {
		json_decref(*moved);
		*moved = NULL;
	}
	free(idx);
	free(res);
	free(cur);
	return count;
}

/* REQ's plan_id as the plan to apply: into *PLAN and *PROFILE (a new
 * reference), *PNAME the stored profile's name it came from (KEPT owns
 * it). With targets moved: NT_ECONFLICT with out->moved, or with
 * REQ->replan a fresh plan of the same profile. */
int nt_txn_plan_from_id(nt_txn_engine *e, nt_ethtool *eh, const nt_txn_request *req,
			nt_kept_plan *kept, nt_plan *plan, json_t **profile, nt_txn_outcome *out)
{
	int r = nt_txn_take_plan(e, req->plan_id, kept, out);
	if (r < 0)
		return r;
	*profile = json_incref(kept->profile);
	/* The facts first: a plan that placed IRQs on a CPU gone offline, or
	 * on the queues of a link made again, is no longer the plan reviewed,
	 * even where every target still reads its before-value. */
	char said[256];
	json_t *now = nt_plan_facts(&e->ctx, &kept->plan);
	json_t *changed = now && kept->plan.facts ? nt_plan_facts_diff(kept->plan.facts, now, said, sizeof(said))
						 : now ? json_array() : NULL;
	json_decref(now);
	if (!changed)
		return -ENOMEM;
	int nc = (int)json_array_size(changed);
	if (nc > 0 && !req->replan) {
		snprintf(out->message, sizeof(out->message),
			 "the host changed since plan %s was made: %s%s; nothing was applied: plan again, "
			 "or give \"replan\": true", req->plan_id, said, nc > 1 ? ", and more" : "");
		out->changed = changed;
		return NT_ECONFLICT;
	}
	if (nc > 0) {
		json_decref(changed);
		if ((r = nt_txn_make_plan(e, eh, *profile, false, plan, out)) < 0)
			return r;
		char w[400];
		snprintf(w, sizeof(w), "planned again: the host changed since plan %s was made (%s%s; "
			 "\"replan\": true)", req->plan_id, said, nc > 1 ? ", and more" : "");
		json_array_append_new(plan->warnings, json_string(w));
		return 0;
	}
	json_decref(changed);
	json_t *moved = NULL;
	int n = moved_targets(e, eh, &kept->plan, &moved);
	if (n < 0)
		return n;
	if (n == 0) {
		*plan = kept->plan;
		memset(&kept->plan, 0, sizeof(kept->plan));
		return 0;
	}
	const json_t *m0 = json_array_get(moved, 0);
	if (!req->replan) {
		snprintf(out->message, sizeof(out->message),
			 "%d target(s) of plan %s no longer read as planned (%s %s was '%s', is '%s'%s); "
			 "nothing was applied: plan again, or give \"replan\": true", n, req->plan_id,
			 json_string_value(json_object_get(m0, "kind")),
			 json_string_value(json_object_get(m0, "target")),
			 json_string_value(json_object_get(m0, "planned")),
			 json_is_string(json_object_get(m0, "now")) ?
				 json_string_value(json_object_get(m0, "now")) : "unreadable",
			 n > 1 ? ", and others" : "");
		out->moved = moved;
		return NT_ECONFLICT;
	}
	json_decref(moved);
	if ((r = nt_txn_make_plan(e, eh, *profile, false, plan, out)) < 0)
		return r;
	char w[256];
	snprintf(w, sizeof(w), "planned again: %d target(s) of plan %s no longer read as planned "
		 "(\"replan\": true)", n, req->plan_id);
	json_array_append_new(plan->warnings, json_string(w));
	return 0;
}

