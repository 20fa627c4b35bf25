/* SPDX-License-Identifier: Apache-2.0 */
/* The transaction engine's operations as engine/txn.h declares them:
 * plan, apply, confirm, rollback, the history, stored profiles and the
 * desired state, each taking the apply slot (engine/txn_engine.c) where
 * it changes the host or what the agent holds it to. */
#include "engine/txn_int.h"
#include "engine/plan.h"
#include "kernel/ethtool.h"
#include "settings/setting.h"
#include "host/topology.h"
#include "store/status.h"
#include "store/store.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- requests ---- */

static int need_store(nt_txn_engine *e, nt_txn_outcome *out)
{
	if (e->store)
		return 0;
	snprintf(out->message, sizeof(out->message), "the state database is unavailable: %s",
		 e->store_err);
	return NT_ESTORE;
}

/* The profile a request names: a new reference in *PROFILE. */
static int resolve_profile(nt_txn_engine *e, const nt_txn_request *req, json_t **profile,
			   nt_txn_outcome *out)
{
	*profile = NULL;
	if (req->profile) {
		*profile = json_incref((json_t *)req->profile);
		return 0;
	}
	if (!req->profile_name) {
		snprintf(out->message, sizeof(out->message), "give a profile or a profile_name");
		out->errors = json_array();
		nt_profile_error(out->errors, "$", "give 'profile' or 'profile_name'");
		return NT_EINVALID;
	}
	int r = need_store(e, out);
	if (r < 0)
		return r;
	r = nt_store_profile_get(e->store, req->profile_name, profile);
	if (r == -ENOENT)
		snprintf(out->message, sizeof(out->message), "no stored profile '%s'",
			 req->profile_name);
	else if (r < 0)
		snprintf(out->message, sizeof(out->message), "reading profile '%s': %s",
			 req->profile_name, nt_store_errmsg(e->store));
	return r;
}

/* Topology + plan of PROFILE. */
int nt_txn_make_plan(nt_txn_engine *e, nt_ethtool *eh, const json_t *profile, bool hold, nt_plan *plan,
		     nt_txn_outcome *out)
{
	nt_topology *t = NULL;
	int r = nt_topology_read(&e->ctx, &t);
	if (r < 0) {
		snprintf(out->message, sizeof(out->message), "cannot read the host: %s",
			 nt_strerror(r));
		return r;
	}
	out->errors = json_array();
	r = nt_plan_build_ex(&e->ctx, eh, t, profile, hold, plan, out->errors);
	nt_topology_free(t);
	if (r == NT_EINVALID)
		snprintf(out->message, sizeof(out->message), "the profile is not valid for this host");
	else if (r < 0)
		snprintf(out->message, sizeof(out->message), "planning failed: %s", nt_strerror(r));
	if (r == 0) {
		json_decref(out->errors);
		out->errors = NULL;
	}
	return r;
}

int nt_txn_plan(nt_txn_engine *e, const nt_txn_request *req, nt_txn_outcome *out)
{
	json_t *profile = NULL;
	nt_plan plan = { 0 };
	nt_ethtool *eh = NULL;
	int r = resolve_profile(e, req, &profile, out);
	if (r < 0)
		goto out;
	eh = nt_txn_stage_ethtool(e);
	if ((r = nt_txn_make_plan(e, eh, profile, req->hold, &plan, out)) < 0)
		goto out;
	out->doc = nt_plan_to_json(&plan, profile);
	r = out->doc ? 0 : -ENOMEM;
	if (r == 0 && req->keep_plan)
		r = nt_txn_keep_plan(e, &plan, profile, req->profile_name, out->doc, out);
out:
	nt_ethtool_close(eh);
	nt_plan_free(&plan);
	json_decref(profile);
	return r;
}

/* Whether the desired state is still the one REQ repairs toward. */
static bool desired_still(nt_txn_engine *e, const nt_txn_request *req)
{
	json_t *d = NULL;
	bool same = nt_store_desired_get(e->store, &d) == 0 &&
		    json_integer_value(json_object_get(d, "set_ms")) == req->desired_set_ms &&
		    json_equal(json_object_get(d, "profile"), (json_t *)req->profile);
	json_decref(d);
	return same;
}

/* Leave out of PLAN the steps whose "KIND TARGET" is a key of SKIP. */
static void skip_steps(nt_plan *plan, const json_t *skip)
{
	int k = 0;
	for (int i = 0; i < plan->nsteps; i++) {
		char key[NT_TARGET_MAX + 64];
		snprintf(key, sizeof(key), "%s %s", plan->steps[i].kind->name, plan->steps[i].target);
		if (json_object_get(skip, key))
			continue;
		plan->steps[k++] = plan->steps[i];
	}
	plan->nsteps = k;
}

/* A persist transaction that took effect ("applied") makes its profile the
 * desired state. When that cannot be recorded the transaction still
 * stands (its changes are made and journalled); the desired state stays
 * as it was and the log says so. */
static void persist_if_applied(nt_txn_engine *e, const json_t *doc)
{
	if (!json_is_true(json_object_get(doc, "persist")) ||
	    nt_txn_status_parse(json_string_value(json_object_get(doc, "status"))) != NT_TXN_APPLIED)
		return;
	json_t *d = json_pack("{s:O,s:O,s:s,s:O,s:O,s:O}", "profile", json_object_get(doc, "profile"),
			      "profile_name", json_object_get(doc, "profile_name"), "source",
			      "transaction", "txn_id", json_object_get(doc, "id"), "client",
			      json_object_get(doc, "client"), "identity", json_object_get(doc, "identity"));
	int r = d ? nt_store_desired_set(e->store, d) : -ENOMEM;
	json_decref(d);
	if (e->log) {
		json_t *ev = json_pack("{s:s, s:O, s:s}", "event", "desired", "txn",
				       json_object_get(doc, "id"), "action", r == 0 ? "set" : "not_set");
		if (ev && r < 0)
			json_object_set_new(ev, "error", json_string(nt_store_errmsg(e->store)));
		emit(e, ev);
	}
}

int nt_txn_apply(nt_txn_engine *e, const nt_txn_request *req, nt_txn_outcome *out)
{
	json_t *profile = NULL, *txn = NULL;
	nt_plan plan = { 0 };
	nt_kept_plan kept = { 0 };
	nt_ethtool *eh = NULL;
	int r;

	if ((r = need_store(e, out)) < 0)
		return r;
	if ((r = nt_txn_replay_check(e, req->idempotency_key, out)) != 0)
		return r < 0 ? r : 0;
	if (req->plan_id && (r = nt_txn_take_plan(e, req->plan_id, NULL, out)) < 0)
		return r;
	if ((r = nt_txn_slot_take(e, false, req->reason != NULL, "apply", req, out)) < 0)
		return r;
	if ((r = nt_txn_replay_check(e, req->idempotency_key, out)) != 0) {
		nt_txn_slot_release(e);
		return r < 0 ? r : 0;
	}
	if (req->reason && req->desired_set_ms && !desired_still(e, req)) {
		r = 0; /* the desired state changed since the check: not this repair */
		goto out;
	}
	if (req->plan_id) {
		eh = nt_txn_stage_ethtool(e);
		if ((r = nt_txn_plan_from_id(e, eh, req, &kept, &plan, &profile, out)) < 0)
			goto out;
	} else {
		if ((r = resolve_profile(e, req, &profile, out)) < 0)
			goto out;
		/* One handle for the plan and the apply: the slot's thread alone uses it. */
		eh = nt_txn_stage_ethtool(e);
		if ((r = nt_txn_make_plan(e, eh, profile, req->hold, &plan, out)) < 0)
			goto out;
	}
	if (req->skip)
		skip_steps(&plan, req->skip);
	if (req->reason && plan.nsteps == 0) {
		r = 0; /* nothing to hold: no record of an empty repair */
		goto out;
	}
	const char *pname = json_string_value(json_object_get(profile, "name"));
	if (req->plan_id && kept.profile_name)
		pname = kept.profile_name;
	txn = json_pack("{s:s,s:O,s:s?,s:s,s:s,s:O}", "status", nt_txn_status_name(NT_TXN_APPLYING),
			"profile", profile,
			"profile_name", req->profile_name ? req->profile_name : pname, "client",
			req->client ? req->client : "", "identity", req->identity ? req->identity : "",
			"warnings", plan.warnings);
	if (!txn) {
		r = -ENOMEM;
		goto out;
	}
	if (req->confirm_timeout_s > 0)
		json_object_set_new(txn, "confirm_timeout_s", json_integer(req->confirm_timeout_s));
	if (plan.reserved)
		json_object_set(txn, "reserved", plan.reserved);
	if (req->reason)
		json_object_set_new(txn, "reason", json_string(req->reason));
	if (req->persist)
		json_object_set_new(txn, "persist", json_true());
	r = nt_txn_record_and_run(e, eh, txn, plan.steps, plan.nsteps, req, out);
	if (r == 0 && req->plan_id && !out->replayed)
		nt_plan_ids_used(e->plans, req->plan_id,
				 json_integer_value(json_object_get(out->doc, "id")));
	if (r == 0 && req->persist && !out->replayed)
		persist_if_applied(e, out->doc);
out:
	nt_ethtool_close(eh);
	nt_txn_slot_release(e);
	json_decref(txn);
	json_decref(profile);
	nt_plan_free(&plan);
	nt_kept_plan_free(&kept);
	return r;
}

int nt_txn_confirm(nt_txn_engine *e, int64_t id, nt_txn_outcome *out)
{
	json_t *doc = NULL;
	int r;
	if ((r = need_store(e, out)) < 0)
		return r;
	pthread_mutex_lock(&e->lock);
	if (e->pending_id != id || e->busy) {
		pthread_mutex_unlock(&e->lock);
		r = nt_store_txn_get(e->store, id, &doc);
		if (r == -ENOENT) {
			snprintf(out->message, sizeof(out->message), "no transaction %lld",
				 (long long)id);
			return r;
		}
		snprintf(out->message, sizeof(out->message),
			 "transaction %lld is %s, not waiting for confirmation", (long long)id,
			 doc ? json_string_value(json_object_get(doc, "status")) : "unknown");
		json_decref(doc);
		return r < 0 ? r : NT_ECONFLICT;
	}
	/* The record is written holding the slot, not the lock: a database
	 * another process has locked can take SQLite's busy timeout (5 s),
	 * and the lock would stall every caller that only looks (a conflict's
	 * answer, health) that long. Holding the slot keeps the timer from
	 * reverting meanwhile; others get the conflict, naming "confirm". */
	e->busy = true;
	e->inflight_id = id;
	nt_txn_slot_hold(e, "confirm", NULL);
	pthread_mutex_unlock(&e->lock);
	r = nt_txn_record_status(e, id, NULL, NT_TXN_APPLIED, NULL, -1, true, -1);
	pthread_mutex_lock(&e->lock);
	if (r == 0)
		e->pending_id = 0;
	pthread_mutex_unlock(&e->lock);
	nt_txn_slot_release(e);
	if (r < 0) {
		snprintf(out->message, sizeof(out->message), "cannot record: %s",
			 nt_store_errmsg(e->store));
		return NT_ESTORE;
	}
	r = nt_store_txn_get(e->store, id, &out->doc);
	if (r == 0)
		persist_if_applied(e, out->doc);
	return r;
}

/* Rollback of the transaction waiting for confirmation: reverted now, as
 * the timer would at its deadline (its steps "reverted", the transaction
 * "reverted"), so a canary whose post-check failed or a bench-run that
 * ends early does not leave the host tuned for the rest of the window.
 * Returns 0 done (out->doc), 1 when ID is not the one waiting (the caller
 * goes on with an ordinary rollback), or an error. */
static int revert_pending_now(nt_txn_engine *e, int64_t id, const nt_txn_request *req, nt_txn_outcome *out)
{
	char why[256];
	snprintf(why, sizeof(why), "rolled back before its confirm deadline%s%s; reverted",
		 req && req->identity && req->identity[0] ? " by " : "",
		 req && req->identity && req->identity[0] ? req->identity : "");
	pthread_mutex_lock(&e->lock);
	if (e->pending_id != id || e->busy) {
		pthread_mutex_unlock(&e->lock);
		return 1;
	}
	int r = nt_txn_revert_locked(e, id, req, why);
	pthread_mutex_unlock(&e->lock);
	if (r < 0) {
		snprintf(out->message, sizeof(out->message), "cannot record: %s", nt_store_errmsg(e->store));
		return NT_ESTORE;
	}
	if ((r = nt_store_txn_get(e->store, id, &out->doc)) < 0)
		return r;
	out->reverted = true;
	return 0;
}

int nt_txn_rollback(nt_txn_engine *e, int64_t id, bool force, const nt_txn_request *req,
		    nt_txn_outcome *out)
{
	json_t *txn = NULL;
	nt_step *ostep = NULL, *steps = NULL;
	nt_step_result *results = NULL;
	nt_value *cur = NULL;
	nt_ethtool *eh = NULL;
	int n = 0, r, k = 0, *idx = NULL, *res = NULL;

	if ((r = need_store(e, out)) < 0)
		return r;
	if ((r = nt_txn_replay_check(e, req->idempotency_key, out)) != 0)
		return r < 0 ? r : 0;
	if ((r = revert_pending_now(e, id, req, out)) != 1)
		return r;
	if ((r = nt_txn_slot_take(e, false, false, "rollback", req, out)) < 0)
		return r;
	if ((r = nt_txn_replay_check(e, req->idempotency_key, out)) != 0) {
		nt_txn_slot_release(e);
		return r < 0 ? r : 0;
	}
	/* The undone transaction's status and steps, straight from the
	 * store's rows (no document of them is made). */
	char status[32];
	if ((r = nt_txn_steps_stored(e, id, status, sizeof(status), &ostep, &results, &n)) < 0) {
		if (r == -ENOENT)
			snprintf(out->message, sizeof(out->message), "no transaction %lld", (long long)id);
		else
			snprintf(out->message, sizeof(out->message), "cannot read transaction %lld: %s",
				 (long long)id, nt_store_errmsg(e->store));
		goto out;
	}
	if (nt_txn_status_parse(status) != NT_TXN_APPLIED) {
		snprintf(out->message, sizeof(out->message),
			 "transaction %lld is %s: only an applied transaction can be rolled back",
			 (long long)id, status);
		r = NT_ECONFLICT;
		goto out;
	}
	int64_t later = 0;
	if ((r = nt_store_later_conflict(e->store, id, &later)) < 0) {
		snprintf(out->message, sizeof(out->message), "%s", nt_store_errmsg(e->store));
		r = NT_ESTORE;
		goto out;
	}
	/* The later one may be this transaction's own rollback: then it is
	 * rolled back already, which is the one thing to say, and force would
	 * only make an empty transaction of targets already back. */
	json_t *ldoc = NULL;
	if (later && nt_store_txn_get(e->store, later, &ldoc) == 0 &&
	    json_integer_value(json_object_get(ldoc, "rollback_of")) == id) {
		out->later_id = later;
		out->rolled_back_by = later;
		snprintf(out->message, sizeof(out->message), "transaction %lld is already rolled back, by transaction %lld",
			 (long long)id, (long long)later);
		json_decref(ldoc);
		r = NT_ECONFLICT;
		goto out;
	}
	json_decref(ldoc);
	if (later && !force) {
		out->later_id = later;
		snprintf(out->message, sizeof(out->message),
			 "transaction %lld changed targets of transaction %lld since; give "
			 "{\"force\":true} to roll back anyway", (long long)later, (long long)id);
		r = NT_ECONFLICT;
		goto out;
	}
	steps = calloc((size_t)n + 1, sizeof(*steps));
	if (!steps) {
		r = -ENOMEM;
		goto out;
	}
	idx = calloc((size_t)n + 1, sizeof(*idx));
	res = malloc(((size_t)n + 1) * sizeof(*res));
	cur = malloc(((size_t)n + 1) * sizeof(*cur));
	if (!idx || !res || !cur) {
		r = -ENOMEM;
		goto out;
	}
	eh = nt_txn_stage_ethtool(e);
	/* The new transaction's steps: every applied step of the original, in
	 * reverse order, back to its before-value, from what its target holds
	 * now (read for all of them at once; the original's after-value when
	 * it cannot be read). Targets already back are left out like any
	 * no-op step. */
	int m = 0;
	for (int i = n - 1; i >= 0; i--) {
		if (results[i] != NT_STEP_APPLIED || !ostep[i].kind)
			continue;
		steps[m] = ostep[i];
		steps[m].before = ostep[i].after;
		steps[m].after = ostep[i].before;
		idx[m] = m;
		m++;
	}
	nt_txn_read_steps(e, eh, STEPS_READ, steps, idx, m, cur, NULL, 0, res);
	for (int j = 0; j < m; j++) {
		nt_step *s = &steps[j];
		if (res[j] == 0)
			s->before = cur[j];
		if (nt_setting_equal(s->kind, &s->before, &s->after))
			continue;
		if (k != j)
			steps[k] = *s;
		k++;
	}
	txn = json_pack("{s:s,s:n,s:s,s:s,s:I,s:[]}", "status", nt_txn_status_name(NT_TXN_APPLYING),
			"profile", "client",
			req->client ? req->client : "", "identity", req->identity ? req->identity : "",
			"rollback_of", (json_int_t)id, "warnings");
	if (!txn) {
		r = -ENOMEM;
		goto out;
	}
	nt_txn_request plain = *req;
	plain.confirm_timeout_s = 0;
	r = nt_txn_record_and_run(e, eh, txn, steps, k, &plain, out);
out:
	nt_ethtool_close(eh);
	nt_txn_slot_release(e);
	json_decref(txn);
	free(ostep);
	free(steps);
	free(results);
	free(idx);
	free(res);
	free(cur);
	return r;
}

int nt_txn_get(nt_txn_engine *e, int64_t id, json_t **doc)
{
	*doc = NULL;
	if (!e->store)
		return NT_ESTORE;
	return nt_store_txn_get(e->store, id, doc);
}

int nt_txn_list(nt_txn_engine *e, const char *status, int limit, int offset, json_t **doc)
{
	json_t *arr = NULL;
	int64_t total = 0;
	*doc = NULL;
	if (!e->store)
		return NT_ESTORE;
	int r = nt_store_txn_list(e->store, status, limit, offset, &arr, &total);
	if (r < 0)
		return r;
	*doc = json_pack("{s:o,s:I,s:i,s:i}", "transactions", arr, "total", (json_int_t)total,
			 "limit", limit, "offset", offset);
	return *doc ? 0 : -ENOMEM;
}

int nt_txn_profile_put(nt_txn_engine *e, const char *name, const json_t *profile, bool *created,
		       nt_txn_outcome *out)
{
	nt_topology *t = NULL;
	int r;
	if ((r = need_store(e, out)) < 0)
		return r;
	if ((r = nt_topology_read(&e->ctx, &t)) < 0) {
		snprintf(out->message, sizeof(out->message), "cannot read the host: %s",
			 nt_strerror(r));
		return r;
	}
	out->errors = json_array();
	r = nt_profile_validate(t, profile, out->errors);
	nt_topology_free(t);
	if (r < 0) {
		snprintf(out->message, sizeof(out->message), "the profile is not valid for this host");
		return r;
	}
	json_decref(out->errors);
	out->errors = NULL;
	if ((r = nt_store_profile_put(e->store, name, profile, created)) < 0) {
		snprintf(out->message, sizeof(out->message), "cannot store: %s",
			 nt_store_errmsg(e->store));
		return NT_ESTORE;
	}
	return nt_store_profile_get(e->store, name, &out->doc);
}

int nt_txn_profile_get(nt_txn_engine *e, const char *name, json_t **doc)
{
	*doc = NULL;
	return e->store ? nt_store_profile_get(e->store, name, doc) : NT_ESTORE;
}

int nt_txn_profile_delete(nt_txn_engine *e, const char *name)
{
	return e->store ? nt_store_profile_delete(e->store, name) : NT_ESTORE;
}

int nt_txn_profile_list(nt_txn_engine *e, json_t **doc)
{
	json_t *arr = NULL;
	*doc = NULL;
	if (!e->store)
		return NT_ESTORE;
	int r = nt_store_profile_list(e->store, &arr);
	if (r < 0)
		return r;
	*doc = json_pack("{s:o}", "profiles", arr);
	return *doc ? 0 : -ENOMEM;
}

int nt_txn_desired_set(nt_txn_engine *e, const nt_txn_request *req, nt_txn_outcome *out)
{
	json_t *profile = NULL, *d = NULL;
	nt_plan plan = { 0 };
	int r;

	if ((r = need_store(e, out)) < 0)
		return r;
	if ((r = nt_txn_slot_wait(e, 30000, "desired", req, out)) < 0)
		return r;
	if ((r = resolve_profile(e, req, &profile, out)) < 0)
		goto out;
	/* Validated (and planned) against the host as it is now, so a profile
	 * that could never apply here is refused with its JSON paths. */
	nt_ethtool *eh = nt_txn_stage_ethtool(e);
	r = nt_txn_make_plan(e, eh, profile, false, &plan, out);
	nt_ethtool_close(eh);
	if (r < 0)
		goto out;
	const char *pname = json_string_value(json_object_get(profile, "name"));
	d = json_pack("{s:O,s:s?,s:s,s:s,s:s}", "profile", profile, "profile_name",
		      req->profile_name ? req->profile_name : pname, "source", "api", "client",
		      req->client ? req->client : "", "identity", req->identity ? req->identity : "");
	if (!d) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = nt_store_desired_set(e->store, d)) < 0) {
		snprintf(out->message, sizeof(out->message), "cannot record the desired state: %s",
			 nt_store_errmsg(e->store));
		r = NT_ESTORE;
		goto out;
	}
	if (e->log) {
		json_t *ev = json_pack("{s:s, s:s, s:s, s:s}", "event", "desired", "action", "set",
				       "client", req->client ? req->client : "", "identity",
				       req->identity ? req->identity : "");
		emit(e, ev);
	}
	r = nt_store_desired_get(e->store, &out->doc);
out:
	nt_txn_slot_release(e);
	nt_plan_free(&plan);
	json_decref(d);
	json_decref(profile);
	return r;
}

int nt_txn_desired_clear(nt_txn_engine *e, const char *client, const char *identity)
{
	nt_txn_outcome o = { 0 };
	if (!e->store)
		return NT_ESTORE;
	if (nt_txn_slot_wait(e, 30000, "desired", NULL, &o) < 0) {
		nt_txn_outcome_free(&o);
		return NT_ECONFLICT;
	}
	int r = nt_store_desired_clear(e->store, client, identity);
	nt_txn_slot_release(e);
	if (r == 0 && e->log) {
		json_t *ev = json_pack("{s:s, s:s, s:s, s:s}", "event", "desired", "action", "cleared",
				       "client", client ? client : "", "identity",
				       identity ? identity : "");
		emit(e, ev);
	}
	return r;
}

int nt_txn_desired_get(nt_txn_engine *e, json_t **doc)
{
	*doc = NULL;
	return e->store ? nt_store_desired_get(e->store, doc) : NT_ESTORE;
}
