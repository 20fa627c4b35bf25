/* SPDX-License-Identifier: Apache-2.0 */
/* The desired state and drift. The state is the store's (store/store.h),
 * validated by the engine (engine/txn.h), held by the agent's drift
 * watcher (agent/drift.h); these handlers only translate.
 *
 * PUT /v1/desired
 *   body: a profile, or {"profile": {...}} or {"profile_name": "x"} (a stored profile,
 *   copied: a later change of the stored profile does not change the desired state)
 *   200 the desired-state document; the watcher checks at once (policy repair: applies
 *       the drifted targets as a transaction with reason "drift")
 *   422 problem "invalid-profile" with "errors": [{"path","message"}] (nothing recorded)
 *   404 profile-not-found; 503 store-unavailable; 409 transaction-in-flight (a transaction
 *   held the engine for 30 s: the desired state never changes under one)
 * GET /v1/desired
 *   200 {"profile", "profile_name", "source": "api"|"transaction", "txn_id", "set",
 *        "client", "identity", "policy", "history": [{"action": "set"|"cleared",
 *        "profile_name", "source", "txn_id", "client", "identity", "at"}]}
 *   404 problem "no-desired-state"
 * DELETE /v1/desired   204 (the host is not changed; the agent stops holding it) | 404
 * GET /v1/drift        200 the drift report (agent/drift.h) */
#include "agent/agent.h"
#include "api/http.h"
#include "api/server.h"
#include "engine/profile.h"
#include "engine/txn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define HISTORY_MAX 20

static nt_agent *agent(const nt_request *req)
{
	return nt_server_agent(req->server);
}

static int store_problem(const nt_request *req, nt_response *resp)
{
	const char *why = nt_txn_store_error(nt_agent_engine(agent(req)));
	return nt_problem(resp, 503, "store-unavailable", "Store unavailable",
			  "the state database is unavailable: %s", why ? why : "error");
}

static int no_desired(nt_response *resp)
{
	return nt_problem(resp, 404, "no-desired-state", "No desired state",
			  "no desired state is set (PUT /v1/desired, or apply with \"persist\": true)");
}

/* The desired-state document: the stored row with the policy and the
 * latest changes. HELD: a row already read (taken over), or NULL to read
 * it now. Returns 0, -ENOENT or another error. */
static int desired_doc(const nt_request *req, json_t *held, json_t **out)
{
	nt_agent *a = agent(req);
	json_t *doc = held, *hist = NULL;
	int r = doc ? 0 : nt_txn_desired_get(nt_agent_engine(a), &doc);
	if (r < 0)
		return r;
	json_object_del(doc, "set_ms");
	nt_drift *d = nt_agent_drift(a);
	json_object_set_new(doc, "policy",
			    json_string(nt_drift_policy_name(d ? nt_drift_get_policy(d) :
							    NT_DRIFT_REPORT)));
	if (nt_store_desired_events(nt_agent_store(a), HISTORY_MAX, &hist) < 0)
		hist = json_array();
	json_object_set_new(doc, "history", hist ? hist : json_array());
	*out = doc;
	return 0;
}

static int h_get(const nt_request *req, nt_response *resp)
{
	json_t *doc = NULL;
	int r = desired_doc(req, NULL, &doc);
	if (r == -ENOENT)
		return no_desired(resp);
	if (r < 0)
		return store_problem(req, resp);
	resp->json = doc;
	return 0;
}

static int h_put(const nt_request *req, nt_response *resp)
{
	nt_txn_outcome o = { 0 };
	nt_txn_request tr = { 0 };
	json_error_t je;
	json_t *body = NULL, *errors = NULL;

	if (!req->body || !req->body_len)
		return nt_problem(resp, 400, "bad-request", "Bad request", "a JSON body is required");
	body = json_loadb(req->body, req->body_len, 0, &je);
	if (!body)
		return nt_problem(resp, 400, "bad-request", "Bad request",
				  "the body is not valid JSON: %s", je.text);
	if (!json_is_object(body)) {
		json_decref(body);
		return nt_problem(resp, 400, "bad-request", "Bad request",
				  "the body must be a JSON object");
	}
	json_t *pn = json_object_get(body, "profile_name");
	json_t *pr = json_object_get(body, "profile");
	tr.client = req->client ? req->client : "";
	tr.identity = req->identity ? req->identity : "";
	if (!pn && !pr) {
		tr.profile = body; /* the profile itself */
	} else {
		const char *key;
		json_t *v;
		errors = json_array();
		json_object_foreach(body, key, v) {
			if (strcmp(key, "profile") && strcmp(key, "profile_name")) {
				char path[NT_JSONPATH_MAX];
				snprintf(path, sizeof(path), "$.%s", key);
				nt_profile_error(errors, path, "unknown field '%s'", key);
			}
		}
		if (pn && pr)
			nt_profile_error(errors, "$", "give exactly one of 'profile' and 'profile_name'");
		if (pn && (!json_is_string(pn) || !nt_profile_name_valid(json_string_value(pn))))
			nt_profile_error(errors, "$.profile_name", "not a valid profile name");
		if (pr && !json_is_object(pr))
			nt_profile_error(errors, "$.profile", "must be an object");
		if (json_array_size(errors)) {
			nt_problem(resp, 422, "invalid-request", "Invalid request",
				   "the request body is not valid");
			if (resp->json)
				json_object_set(resp->json, "errors", errors);
			goto out;
		}
		tr.profile = pr;
		tr.profile_name = json_string_value(pn);
	}
	int r = nt_txn_desired_set(nt_agent_engine(agent(req)), &tr, &o);
	if (r == NT_EINVALID) {
		nt_problem(resp, 422, "invalid-profile", "Invalid profile", "%s", o.message);
		if (resp->json && o.errors)
			json_object_set(resp->json, "errors", o.errors);
	} else if (r == -ENOENT) {
		nt_problem(resp, 404, "profile-not-found", "Not found", "%s", o.message);
	} else if (r == NT_ECONFLICT) {
		nt_problem(resp, 409, "transaction-in-flight", "Conflict", "%s", o.message);
		if (resp->json && o.conflict_id)
			json_object_set_new(resp->json, "in_flight", json_integer(o.conflict_id));
		if (resp->json && o.in_flight)
			json_object_set(resp->json, "in_flight_detail", o.in_flight);
	} else if (r == NT_ESTORE) {
		nt_problem(resp, 503, "store-unavailable", "Store unavailable", "%s", o.message);
	} else if (r < 0) {
		nt_problem(resp, 500, "internal", "Internal error", "%s",
			   o.message[0] ? o.message : nt_strerror(r));
	} else {
		nt_drift *d = nt_agent_drift(agent(req));
		if (d)
			nt_drift_desired_changed(d);
		/* The row the engine read back while this request held its slot:
		 * read again here, a concurrent PUT would answer with the other
		 * client's profile and a concurrent DELETE with a 404 or 503
		 * although this one was recorded. The history is read now (it is
		 * the log up to the answer, other clients' changes included). */
		json_t *doc = NULL;
		desired_doc(req, o.doc, &doc);
		o.doc = NULL;
		resp->json = doc;
	}
out:
	nt_txn_outcome_free(&o);
	json_decref(errors);
	json_decref(body);
	return 0;
}

static int h_delete(const nt_request *req, nt_response *resp)
{
	int r = nt_txn_desired_clear(nt_agent_engine(agent(req)), req->client ? req->client : "",
				     req->identity ? req->identity : "");
	if (r == -ENOENT)
		return no_desired(resp);
	if (r == NT_ECONFLICT)
		return nt_problem(resp, 409, "transaction-in-flight", "Conflict",
				  "a transaction has been in flight for 30 s; try again");
	if (r < 0)
		return store_problem(req, resp);
	nt_drift *d = nt_agent_drift(agent(req));
	if (d)
		nt_drift_desired_changed(d);
	resp->status = 204;
	return 0;
}

static int h_drift(const nt_request *req, nt_response *resp)
{
	nt_drift *d = nt_agent_drift(agent(req));
	if (!d)
		return store_problem(req, resp);
	resp->json = nt_drift_report(d);
	return resp->json ? 0 : -ENOMEM;
}

static const nt_route desired_routes[] = {
	{ "GET", "/v1/desired", h_get, NULL, 0 },
	{ "PUT", "/v1/desired", h_put, NULL, NT_ROUTE_LONG },
	{ "DELETE", "/v1/desired", h_delete, NULL, 0 },
	{ "GET", "/v1/drift", h_drift, NULL, 0 },
	{ NULL, NULL, NULL, NULL, 0 },
};

const nt_area nt_area_desired = {
	.name = "desired",
	.routes = desired_routes,
};
