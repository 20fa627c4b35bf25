/* SPDX-License-Identifier: Apache-2.0 */
/* Profiles, plans and transactions. The engine is engine/txn.c, owned by
 * the agent (agent/agent.h); these handlers only translate between HTTP
 * and it.
 *
 * Every error is an RFC 9457 problem document (application/problem+json).
 *
 * POST /v1/plan
 *   body: a profile (see engine/profile.h), or {"profile_name": "x"}
 *   200 {"profile": {...}, "steps": [{"kind","target","interface"?,"before","after"}],
 *        "warnings": ["..."]}              (steps that change nothing are left out)
 *   422 problem "invalid-profile" with "errors": [{"path": "$.rings[0].rx", "message"}]
 *   404 problem "profile-not-found" (profile_name)
 *
 * POST /v1/transactions
 *   body: {"profile": {...}} or {"profile_name": "x"}, optional "confirm_timeout_s": N (1..86400),
 *     optional "persist": true (the profile becomes the desired state once the transaction
 *     is "applied", or when it is confirmed; see api/routes_desired.c)
 *   header Idempotency-Key (optional, 1..128 printable bytes): a retry with the same key
 *     and the same body returns the original transaction with 200 and applies nothing;
 *     the same key with another body gets 422 "idempotency-key-reused". Keys are scoped
 *     to the method and path (a rollback's key never replays an apply).
 *   201 transaction document, Location: /v1/transactions/ID. The status tells how it went:
 *       "applied", "pending_confirm", "rolled_back", "rollback_failed".
 *   409 problem "transaction-in-flight" with "in_flight": ID (another is applying or
 *       waiting for confirmation) and always "in_flight_detail" (nt_txn_outcome.in_flight:
 *       also when the other is still being planned and has no ID yet)
 *   422 as for plan; 404 profile-not-found; 503 problem "store-unavailable" (nothing applied)
 *
 * Transaction document (statuses and step results: store/status.h):
 *   {"id": 7, "status": "applied",
 *    "profile": {...} | null, "profile_name": "x" | null, "rollback_of": ID | null,
 *    "reason": "boot" | "drift" | "link-up" | null (null: a client's request), "persist": bool,
 *    "client": "127.0.0.1", "identity": "",
 *    "created": "2026-11-30T01:02:03.456Z", "finished": "..." | null, "duration_ms": N | null,
 *    "confirm_timeout_s": N | null, "confirm_deadline": "..." | null, "confirm_deadline_ms": N | null,
 *    "error": "step 3 (irq_affinity 185): ..." | null, "failed_step": 3 | null,
 *    "warnings": ["..."],
 *    "steps": [{"index": 0, "kind": "irq_affinity", "target": "177", "interface": "eth0",
 *               "before": "0-63", "after": "1", "result": "applied", "error": null}]}
 *   A "rollback_failed" step's error says what the target reads now and what it should.
 *
 * GET /v1/transactions?status=S&limit=N&offset=N    (newest first; limit 1..500, default 50)
 *   200 {"transactions": [transaction document without "steps", with "nsteps"],
 *        "total": N, "limit": N, "offset": N}
 * GET /v1/transactions/{id}                          200 transaction document | 404
 * POST /v1/transactions/{id}/confirm                 200 document (now "applied") | 404 |
 *   409 problem "not-pending" (not waiting for confirmation, e.g. already reverted)
 * POST /v1/transactions/{id}/rollback  body optional {"force": true}
 *   201 a NEW transaction document with "rollback_of": id, restoring the before-values
 *   200 the transaction itself, now "reverted", when it was waiting for confirmation: it is
 *       put back at once, as its deadline would (no new transaction)
 *   409 problem "conflict": the transaction is not "applied" or "pending_confirm", or a later transaction changed
 *       the same targets ("later": ID; force overrides), or that later one is its own rollback ("later" and
 *       "rolled_back_by": ID; force changes nothing); 404; 503
 *
 * GET /v1/profiles                 200 {"profiles": [{"name","description","created","updated"}]}
 * GET /v1/profiles/{name}          200 the profile | 404
 * PUT /v1/profiles/{name}          body: a profile ("name" absent or equal to {name})
 *                                  201 created / 200 replaced, body the stored profile;
 *                                  422 invalid-profile; 400 name mismatch
 * DELETE /v1/profiles/{name}       204 | 404
 */
#include "agent/agent.h"
#include "api/http.h"
#include "api/jsonpath.h"
#include "api/server.h"
#include "engine/plan_ids.h"
#include "engine/profile.h"
#include "engine/txn.h"
#include "host/delivery.h"
#include "store/status.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static nt_txn_engine *engine(const nt_request *req)
{
	return nt_agent_engine(nt_server_agent(req->server));
}

/* ---- helpers ---- */

static int bad_json(nt_response *resp, const json_error_t *je)
{
	return nt_problem(resp, 400, "bad-request", "Bad request", "the body is not valid JSON: %s",
			  je->text);
}

/* Parse the body as a JSON object; NULL after answering 400. */
static json_t *body_object(const nt_request *req, nt_response *resp, bool optional)
{
	json_error_t je;
	if (!req->body || req->body_len == 0) {
		if (optional)
			return json_object();
		nt_problem(resp, 400, "bad-request", "Bad request", "a JSON body is required");
		return NULL;
	}
	/* A key given twice is refused rather than letting the last one win
	 * silently: the client meant one of them, and we cannot tell which. */
	json_t *v = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &je);
	if (!v && json_error_code(&je) == json_error_duplicate_key) {
		char path[256];
		nt_json_path_at(req->body, req->body_len, (size_t)je.position, path, sizeof(path));
		nt_problem(resp, 400, "bad-request", "Bad request",
			   "the key %s is given more than once", path);
		return NULL;
	}
	if (!v) {
		bad_json(resp, &je);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		nt_problem(resp, 400, "bad-request", "Bad request", "the body must be a JSON object");
		return NULL;
	}
	return v;
}

/* At most this many validation errors are listed in a reply: a large
 * body of bad entries would otherwise turn into a reply many times its
 * size. errors_total says how many there were. */
#define NT_MAX_REPLY_ERRORS 100

/* LIST as PROBLEM's KEY, its first NT_MAX_REPLY_ERRORS entries, and how
 * many there were as KEY_total. */
static void set_list(json_t *problem, const char *key, json_t *list)
{
	char total[64];
	size_t n = json_array_size(list);
	snprintf(total, sizeof(total), "%s_total", key);
	json_object_set_new(problem, total, json_integer((json_int_t)n));
	if (n <= NT_MAX_REPLY_ERRORS) {
		json_object_set(problem, key, list);
		return;
	}
	json_t *first = json_array();
	for (size_t i = 0; first && i < NT_MAX_REPLY_ERRORS; i++)
		json_array_append(first, json_array_get(list, i));
	if (first)
		json_object_set_new(problem, key, first);
}

static void set_errors(json_t *problem, json_t *errors)
{
	set_list(problem, "errors", errors);
}

/* Translate an engine error into a problem. */
static int engine_problem(nt_response *resp, int r, nt_txn_outcome *o)
{
	const char *msg = o->message[0] ? o->message : nt_strerror(r);
	switch (r) {
	case NT_EINVALID:
		if (o->key_reused)
			return nt_problem(resp, 422, "idempotency-key-reused",
					  "Idempotency-Key reused", "%s", msg);
		nt_problem(resp, 422, "invalid-profile", "Invalid profile", "%s", msg);
		if (resp->json && o->errors)
			set_errors(resp->json, o->errors);
		return 0;
	case -ENOENT:
	case NT_ENOTFOUND:
		return nt_problem(resp, 404, "not-found", "Not found", "%s", msg);
	case -ESTALE:
		/* A plan id that was good once: gone for good, plan again. */
		return nt_problem(resp, 410,
				  o->plan_gone == NT_PLAN_EXPIRED ? "plan-expired" : "plan-used",
				  o->plan_gone == NT_PLAN_EXPIRED ? "Plan expired" : "Plan used", "%s",
				  msg);
	case NT_ECONFLICT:
		if (o->moved) {
			nt_problem(resp, 409, "plan-moved", "Planned targets moved", "%s", msg);
			if (resp->json)
				set_list(resp->json, "moved", o->moved);
			return 0;
		}
		if (o->changed) {
			/* The same answer for a host that changed under the plan
			 * (a CPU offline, a NIC gone or with other queues): the
			 * plan no longer stands, whatever its targets read. */
			nt_problem(resp, 409, "plan-moved", "Planned host changed", "%s", msg);
			if (resp->json)
				set_list(resp->json, "changed", o->changed);
			return 0;
		}
		nt_problem(resp, 409,
			   o->conflict_id || o->in_flight ? "transaction-in-flight" : "conflict",
			   "Conflict", "%s", msg);
		if (resp->json && o->conflict_id)
			json_object_set_new(resp->json, "in_flight", json_integer(o->conflict_id));
		if (resp->json && o->in_flight)
			json_object_set(resp->json, "in_flight_detail", o->in_flight);
		return 0;
	case NT_ESTORE:
		return nt_problem(resp, 503, "store-unavailable", "Store unavailable", "%s", msg);
	default:
		return nt_problem(resp, r == -ENOMEM ? 503 : 500, "internal", "Internal error", "%s",
				  msg);
	}
}

static int parse_id(const char *s, int64_t *id)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || end == s || v <= 0)
		return -EINVAL;
	*id = v;
	return 0;
}

static int not_found_id(nt_response *resp, const char *id)
{
	return nt_problem(resp, 404, "not-found", "Not found", "no transaction '%s'", id);
}

/* The delivery check an apply asks for: "verify_window_ms" (100 to
 * 60000), and "confirm": "on-delivery", which needs "confirm_timeout_s"
 * longer than the window (a window of 2 s when none is named). Problems
 * go to ERRORS. */
struct verify_ask {
	int window_ms; /* 0: no check */
	bool on_delivery;
};

static void verify_from_body(const json_t *body, json_t *errors, int confirm_timeout_s, struct verify_ask *out)
{
	json_t *w = json_object_get(body, "verify_window_ms");
	json_t *c = json_object_get(body, "confirm");

	if (w && (!json_is_integer(w) || json_integer_value(w) < NT_DELIVERY_WINDOW_MIN_MS ||
		  json_integer_value(w) > NT_DELIVERY_WINDOW_MAX_MS))
		nt_profile_error(errors, "$.verify_window_ms", "must be an integer from %d to %d",
				 NT_DELIVERY_WINDOW_MIN_MS, NT_DELIVERY_WINDOW_MAX_MS);
	else if (w)
		out->window_ms = (int)json_integer_value(w);
	if (!c)
		return;
	if (!json_is_string(c) || strcmp(json_string_value(c), "on-delivery")) {
		nt_profile_error(errors, "$.confirm", "the one value is \"on-delivery\"");
		return;
	}
	if (!out->window_ms)
		out->window_ms = NT_DELIVERY_WINDOW_DEFAULT_MS;
	if (confirm_timeout_s <= 0)
		nt_profile_error(errors, "$.confirm", "\"on-delivery\" needs 'confirm_timeout_s': "
						     "without a deadline there is nothing to confirm");
	else if ((int64_t)confirm_timeout_s * 1000 <= out->window_ms)
		nt_profile_error(errors, "$.confirm", "'confirm_timeout_s' must be longer than the window "
						     "(%d ms)", out->window_ms);
	out->on_delivery = true;
}

/* Fill REQ from a {"profile": ..} / {"profile_name": ..} body; PLAN allows
 * the profile itself as the body. Returns 0 or answers 400/422. */
static int request_from_body(const nt_request *hreq, nt_response *resp, json_t *body, bool plan,
			     nt_txn_request *out, struct verify_ask *va)
{
	const char *key;
	json_t *val;

	memset(out, 0, sizeof(*out));
	out->client = hreq->client ? hreq->client : "";
	out->identity = hreq->identity ? hreq->identity : "";
	json_t *pn = json_object_get(body, "profile_name");
	json_t *pr = json_object_get(body, "profile");
	json_t *pid = plan ? NULL : json_object_get(body, "plan_id");
	json_t *replan = plan ? NULL : json_object_get(body, "replan");
	bool wrapper = pn || pr || json_object_get(body, "confirm_timeout_s") ||
		       json_object_get(body, "persist");
	if (plan && !wrapper) {
		out->profile = body;
		return 0;
	}
	json_t *errors = json_array();
	json_object_foreach(body, key, val) {
		if (strcmp(key, "profile") && strcmp(key, "profile_name") &&
		    (plan || (strcmp(key, "confirm_timeout_s") && strcmp(key, "persist") &&
			      strcmp(key, "plan_id") && strcmp(key, "replan") &&
			      strcmp(key, "verify_window_ms") && strcmp(key, "confirm")))) {
			char path[NT_JSONPATH_MAX];
			snprintf(path, sizeof(path), "$.%s", key);
			nt_profile_error(errors, path, "unknown field '%s'", key);
		}
	}
	if (pid && (pn || pr))
		/* A plan is already of one profile: another beside it would be
		 * one of the two applied and the other silently not. */
		nt_profile_error(errors, "$", "give 'plan_id' or a profile ('profile', 'profile_name'), "
					      "not both: the plan already names its profile");
	else if (!pid && (pn != NULL) == (pr != NULL))
		nt_profile_error(errors, "$", plan ? "give exactly one of 'profile' and 'profile_name'"
						   : "give exactly one of 'profile', 'profile_name' "
						     "and 'plan_id'");
	if (pid && !nt_plan_id_valid(json_string_value(pid)))
		nt_profile_error(errors, "$.plan_id",
				 "not a plan id: one is 'p-' and 32 hex digits, as POST /v1/plan "
				 "returns it in 'id'");
	if (replan && !json_is_boolean(replan))
		nt_profile_error(errors, "$.replan", "must be true or false");
	else if (replan && !pid)
		nt_profile_error(errors, "$.replan", "only with 'plan_id'");
	if (pn && !json_is_string(pn))
		nt_profile_error(errors, "$.profile_name", "must be a string");
	else if (pn && !nt_profile_name_valid(json_string_value(pn)))
		nt_profile_error(errors, "$.profile_name", "not a valid profile name");
	if (pr && !json_is_object(pr))
		nt_profile_error(errors, "$.profile", "must be an object");
	json_t *ct = json_object_get(body, "confirm_timeout_s");
	if (ct && (!json_is_integer(ct) || json_integer_value(ct) < 1 ||
		   json_integer_value(ct) > 86400))
		nt_profile_error(errors, "$.confirm_timeout_s", "must be an integer from 1 to 86400");
	json_t *persist = json_object_get(body, "persist");
	if (!plan && persist && !json_is_boolean(persist))
		nt_profile_error(errors, "$.persist", "must be true or false");
	if (va)
		verify_from_body(body, errors, ct ? (int)json_integer_value(ct) : 0, va);
	if (json_array_size(errors)) {
		nt_problem(resp, 422, "invalid-request", "Invalid request",
			   "the request body is not valid");
		if (resp->json)
			json_object_set(resp->json, "errors", errors);
		json_decref(errors);
		return NT_EINVALID;
	}
	json_decref(errors);
	out->profile = pr;
	out->profile_name = json_string_value(pn);
	out->plan_id = json_string_value(pid);
	out->replan = json_is_true(replan);
	out->confirm_timeout_s = ct ? (int)json_integer_value(ct) : 0;
	out->persist = json_is_true(persist);
	return 0;
}

/* The Idempotency-Key header as the engine records it: scoped to the
 * method and path it was sent to (a rollback never replays an apply), with
 * a fingerprint of the request (SHA-256 of its JSON, keys sorted) so that a
 * reuse with another body is told apart (422) from a retry (the first
 * answer again). "SCOPE\tKEY\tFINGERPRINT" into BUF; *KEY NULL when the
 * header is absent. Returns 0, or -EINVAL after answering 400. */
static int idem_key(const nt_request *req, nt_response *resp, const json_t *body, char *buf,
		    size_t size, const char **key)
{
	const char *k = nt_header(req, "Idempotency-Key");
	*key = NULL;
	if (!k)
		return 0;
	size_t n = strlen(k);
	bool ok = n > 0 && n <= 128;
	for (size_t i = 0; ok && i < n; i++)
		ok = k[i] > 0x20 && k[i] < 0x7f;
	if (!ok)
		return nt_problem(resp, 400, "bad-request", "Bad request",
				  "Idempotency-Key must be 1 to 128 printable ASCII characters"),
		       -EINVAL;
	unsigned char d[32];
	char hex[65];
	char *text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	int r = text ? gnutls_hash_fast(GNUTLS_DIG_SHA256, text, strlen(text), d) : -1;
	free(text);
	if (r < 0)
		return nt_problem(resp, 500, "internal", "Internal error",
				  "the request could not be fingerprinted"),
		       -EINVAL;
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	snprintf(buf, size, "%s %s\t%s\t%s", req->method, req->path, k, hex);
	*key = buf;
	return 0;
}

/* Which steps a transaction answer carries (lean replies): every one (the
 * default), only those that failed, or none; the counts stay. */
typedef enum { SHOW_ALL, SHOW_FAILED, SHOW_NONE } steps_shown;

/* Whether the Prefer header (RFC 7240) asks for return=minimal: a list of
 * preferences separated by commas, each maybe with ";" parameters. */
static bool prefers_minimal(const char *prefer)
{
	for (const char *p = prefer; p && *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		size_t n = strcspn(p, ",;");
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == strlen("return=minimal") && strncasecmp(p, "return=minimal", n) == 0)
			return true;
		p += strcspn(p, ",");
	}
	return false;
}

/* ?steps=all|failed|none, else Prefer: return=minimal (as steps=failed,
 * said back in Preference-Applied). Returns 0, or -EINVAL after answering
 * 400. */
static int steps_wanted(const nt_request *req, nt_response *resp, steps_shown *out)
{
	const char *q = nt_query(req, "steps");
	*out = SHOW_ALL;
	if (q) {
		if (!strcmp(q, "all"))
			*out = SHOW_ALL;
		else if (!strcmp(q, "failed"))
			*out = SHOW_FAILED;
		else if (!strcmp(q, "none"))
			*out = SHOW_NONE;
		else
			return nt_problem(resp, 400, "bad-request", "Bad request",
					  "steps must be all, failed or none, not '%s'", q),
			       -EINVAL;
		return 0;
	}
	if (prefers_minimal(nt_header(req, "Prefer"))) {
		*out = SHOW_FAILED;
		resp->preference_applied = "return=minimal";
	}
	return 0;
}

/* The engine's word for SHOWN: it reads a lean answer back as such. */
static nt_txn_steps_shown engine_shown(steps_shown shown)
{
	return shown == SHOW_FAILED ? NT_TXN_STEPS_FAILED :
	       shown == SHOW_NONE   ? NT_TXN_STEPS_NONE :
				      NT_TXN_STEPS_ALL;
}

/* DOC's steps as SHOWN asks: with less than all, "steps" keeps the failed
 * ones (failed, rollback_failed) or none, and "nsteps" and "step_counts"
 * ({result: {kind: how many}}) say what there was. A document the engine
 * already read back lean (it has "nsteps") is left as it is; a replay's
 * or a revert's full one is cut here. */
static void show_steps(json_t *doc, steps_shown shown)
{
	if (shown == SHOW_ALL || !doc || json_object_get(doc, "nsteps"))
		return;
	json_t *steps = json_object_get(doc, "steps"), *kept = json_array(), *counts = json_object();
	size_t i;
	json_t *st;
	if (!kept || !counts) {
		json_decref(kept);
		json_decref(counts);
		return;
	}
	json_array_foreach(steps, i, st) {
		const char *res = json_string_value(json_object_get(st, "result"));
		const char *kind = json_string_value(json_object_get(st, "kind"));
		json_t *by_kind = json_object_get(counts, res ? res : "unknown");
		if (!by_kind)
			json_object_set_new(counts, res ? res : "unknown", by_kind = json_object());
		json_int_t c = json_integer_value(json_object_get(by_kind, kind ? kind : "unknown"));
		json_object_set_new(by_kind, kind ? kind : "unknown", json_integer(c + 1));
		int r = nt_step_result_parse(res);
		if (shown == SHOW_FAILED && (r == NT_STEP_FAILED || r == NT_STEP_ROLLBACK_FAILED))
			json_array_append(kept, st);
	}
	json_object_set_new(doc, "nsteps", json_integer((json_int_t)json_array_size(steps)));
	json_object_set_new(doc, "step_counts", counts);
	json_object_set_new(doc, "steps", kept);
}

static void created(nt_response *resp, json_t *doc, bool replayed)
{
	resp->status = replayed ? 200 : 201;
	snprintf(resp->location, sizeof(resp->location), "/v1/transactions/%lld",
		 (long long)json_integer_value(json_object_get(doc, "id")));
	resp->json = doc;
}

/* ---- handlers ---- */

static int h_plan(const nt_request *req, nt_response *resp)
{
	nt_txn_outcome o = { 0 };
	nt_txn_request tr;
	json_t *body = body_object(req, resp, false);
	if (!body)
		return 0;
	if (request_from_body(req, resp, body, true, &tr, NULL) == 0) {
		tr.keep_plan = true;
		int r = nt_txn_plan(engine(req), &tr, &o);
		if (r < 0)
			engine_problem(resp, r, &o);
		else {
			resp->json = o.doc;
			o.doc = NULL;
		}
	}
	nt_txn_outcome_free(&o);
	json_decref(body);
	return 0;
}

static int h_apply(const nt_request *req, nt_response *resp)
{
	nt_txn_outcome o = { 0 };
	nt_txn_request tr;
	char keybuf[512];
	const char *key;
	json_t *body;
	steps_shown shown;
	struct verify_ask va = { 0, false };

	if (steps_wanted(req, resp, &shown) < 0)
		return 0;
	if (!(body = body_object(req, resp, false)))
		return 0;
	if (idem_key(req, resp, body, keybuf, sizeof(keybuf), &key) < 0) {
		json_decref(body);
		return 0;
	}
	if (request_from_body(req, resp, body, false, &tr, &va) == 0) {
		tr.idempotency_key = key;
		tr.steps_shown = engine_shown(shown);
		int r = nt_txn_apply(engine(req), &tr, &o);
		if (r == -ENOENT && tr.plan_id) {
			nt_problem(resp, 404, "plan-not-found", "Plan not found", "%s", o.message);
		} else if (r < 0) {
			engine_problem(resp, r, &o);
		} else {
			nt_drift *d = nt_agent_drift(nt_server_agent(req->server));
			if (tr.persist && d && !o.replayed)
				nt_drift_desired_changed(d);
			/* The check waits its windows here, on the transaction
			 * route's own thread (NT_ROUTE_LONG): no worker is held. */
			json_t *checked = NULL;
			int64_t id = json_integer_value(json_object_get(o.doc, "id"));
			if (va.window_ms && !o.replayed && id > 0 &&
			    nt_agent_txn_verify(nt_server_agent(req->server), id, va.window_ms, va.on_delivery,
						&checked) == 0) {
				json_decref(o.doc);
				o.doc = checked;
			}
			show_steps(o.doc, shown);
			created(resp, o.doc, o.replayed);
			o.doc = NULL;
		}
	}
	if (resp->status >= 300)
		resp->preference_applied = NULL; /* a problem has no steps to leave out */
	nt_txn_outcome_free(&o);
	json_decref(body);
	return 0;
}

static int h_list(const nt_request *req, nt_response *resp)
{
	const char *status = nt_query(req, "status");
	int limit = 50, offset = 0;

	if (status && nt_txn_status_parse(status) < 0)
		return nt_problem(resp, 400, "bad-request", "Bad request",
				  "unknown status '%s'", status);
	if (nt_query_int(req, "limit", 1, 500, 50, &limit) < 0)
		return nt_problem(resp, 400, "bad-request", "Bad request",
				  "limit must be an integer from 1 to 500");
	if (nt_query_int(req, "offset", 0, 1000000000, 0, &offset) < 0)
		return nt_problem(resp, 400, "bad-request", "Bad request",
				  "offset must be a non-negative integer");
	json_t *doc = NULL;
	int r = nt_txn_list(engine(req), status, limit, offset, &doc);
	if (r < 0) {
		nt_txn_outcome o = { 0 };
		snprintf(o.message, sizeof(o.message), "the state database is unavailable: %s",
			 nt_txn_store_error(engine(req)) ? nt_txn_store_error(engine(req)) : "error");
		return engine_problem(resp, r == -ENOMEM ? r : NT_ESTORE, &o);
	}
	resp->json = doc;
	return 0;
}

static int h_get(const nt_request *req, nt_response *resp)
{
	int64_t id;
	json_t *doc = NULL;
	if (parse_id(req->params[0], &id) < 0)
		return not_found_id(resp, req->params[0]);
	int r = nt_txn_get(engine(req), id, &doc);
	if (r == -ENOENT)
		return not_found_id(resp, req->params[0]);
	if (r < 0) {
		nt_txn_outcome o = { 0 };
		return engine_problem(resp, r, &o);
	}
	resp->json = doc;
	return 0;
}

static int h_confirm(const nt_request *req, nt_response *resp)
{
	int64_t id;
	nt_txn_outcome o = { 0 };
	if (parse_id(req->params[0], &id) < 0)
		return not_found_id(resp, req->params[0]);
	int r = nt_txn_confirm(engine(req), id, &o);
	if (r == NT_ECONFLICT)
		nt_problem(resp, 409, "not-pending", "Not pending confirmation", "%s", o.message);
	else if (r < 0)
		engine_problem(resp, r, &o);
	else {
		nt_drift *d = nt_agent_drift(nt_server_agent(req->server));
		if (d && json_is_true(json_object_get(o.doc, "persist")))
			nt_drift_desired_changed(d);
		resp->json = o.doc;
		o.doc = NULL;
	}
	nt_txn_outcome_free(&o);
	return 0;
}

static int h_rollback(const nt_request *req, nt_response *resp)
{
	int64_t id;
	nt_txn_outcome o = { 0 };
	nt_txn_request tr = { 0 };
	char keybuf[512];
	const char *key;
	json_t *body;
	steps_shown shown;

	if (parse_id(req->params[0], &id) < 0)
		return not_found_id(resp, req->params[0]);
	if (steps_wanted(req, resp, &shown) < 0)
		return 0;
	if (!(body = body_object(req, resp, true)))
		return 0;
	if (idem_key(req, resp, body, keybuf, sizeof(keybuf), &key) < 0) {
		json_decref(body);
		return 0;
	}
	const char *k;
	json_t *v;
	json_object_foreach(body, k, v) {
		if (strcmp(k, "force") != 0 || !json_is_boolean(v)) {
			nt_problem(resp, 400, "bad-request", "Bad request",
				   "the body may only be {\"force\": true|false}");
			json_decref(body);
			return 0;
		}
	}
	bool force = json_is_true(json_object_get(body, "force"));
	json_decref(body);
	tr.client = req->client ? req->client : "";
	tr.identity = req->identity ? req->identity : "";
	tr.idempotency_key = key;
	tr.steps_shown = engine_shown(shown);
	int r = nt_txn_rollback(engine(req), id, force, &tr, &o);
	if (r == NT_ECONFLICT && !o.conflict_id && !o.in_flight) {
		/* Not another transaction in flight: this one cannot be undone
		 * (not applied, or a later transaction changed its targets). */
		nt_problem(resp, 409, "conflict", "Conflict", "%s", o.message);
		if (resp->json && o.later_id)
			json_object_set_new(resp->json, "later", json_integer(o.later_id));
		if (resp->json && o.rolled_back_by)
			json_object_set_new(resp->json, "rolled_back_by", json_integer(o.rolled_back_by));
	} else if (r < 0) {
		engine_problem(resp, r, &o);
	} else {
		/* A pending transaction reverted in place: no new one. */
		show_steps(o.doc, shown);
		created(resp, o.doc, o.replayed || o.reverted);
		o.doc = NULL;
	}
	if (resp->status >= 300)
		resp->preference_applied = NULL;
	nt_txn_outcome_free(&o);
	return 0;
}

static int h_profiles(const nt_request *req, nt_response *resp)
{
	json_t *doc = NULL;
	int r = nt_txn_profile_list(engine(req), &doc);
	if (r < 0) {
		nt_txn_outcome o = { 0 };
		return engine_problem(resp, r == -ENOMEM ? r : NT_ESTORE, &o);
	}
	resp->json = doc;
	return 0;
}

static int bad_name(nt_response *resp, const char *name)
{
	return nt_problem(resp, 404, "not-found", "Not found", "no profile '%s'", name);
}

static int h_profile_get(const nt_request *req, nt_response *resp)
{
	const char *name = req->params[0];
	json_t *doc = NULL;
	if (!nt_profile_name_valid(name))
		return bad_name(resp, name);
	int r = nt_txn_profile_get(engine(req), name, &doc);
	if (r == -ENOENT)
		return bad_name(resp, name);
	if (r < 0) {
		nt_txn_outcome o = { 0 };
		return engine_problem(resp, NT_ESTORE, &o);
	}
	resp->json = doc;
	return 0;
}

static int h_profile_put(const nt_request *req, nt_response *resp)
{
	const char *name = req->params[0];
	nt_txn_outcome o = { 0 };
	bool was_created = false;
	json_t *body;

	if (!nt_profile_name_valid(name))
		return nt_problem(resp, 400, "bad-request", "Bad request",
				  "'%s' is not a valid profile name ([A-Za-z0-9._-], 1 to 64, not . or ..)", name);
	if (!(body = body_object(req, resp, false)))
		return 0;
	json_t *bn = json_object_get(body, "name");
	if (bn && (!json_is_string(bn) || strcmp(json_string_value(bn), name) != 0)) {
		nt_problem(resp, 400, "bad-request", "Bad request",
			   "the body's name does not match the name in the path ('%s')", name);
		json_decref(body);
		return 0;
	}
	if (!bn)
		json_object_set_new(body, "name", json_string(name));
	int r = nt_txn_profile_put(engine(req), name, body, &was_created, &o);
	if (r < 0) {
		engine_problem(resp, r, &o);
	} else {
		resp->status = was_created ? 201 : 200;
		snprintf(resp->location, sizeof(resp->location), "/v1/profiles/%s", name);
		resp->json = o.doc;
		o.doc = NULL;
	}
	nt_txn_outcome_free(&o);
	json_decref(body);
	return 0;
}

static int h_profile_delete(const nt_request *req, nt_response *resp)
{
	const char *name = req->params[0];
	if (!nt_profile_name_valid(name))
		return bad_name(resp, name);
	int r = nt_txn_profile_delete(engine(req), name);
	if (r == -ENOENT)
		return bad_name(resp, name);
	if (r < 0) {
		nt_txn_outcome o = { 0 };
		return engine_problem(resp, NT_ESTORE, &o);
	}
	resp->status = 204;
	return 0;
}

static const char *const list_query[] = { "status", "limit", "offset", NULL };
static const char *const txn_query[] = { "steps", NULL };

static const nt_route txn_routes[] = {
	{ "POST", "/v1/plan", h_plan, NULL, NT_ROUTE_READ },
	{ "POST", "/v1/transactions", h_apply, txn_query, NT_ROUTE_LONG },
	{ "GET", "/v1/transactions", h_list, list_query, 0 },
	{ "GET", "/v1/transactions/{id}", h_get, NULL, 0 },
	{ "POST", "/v1/transactions/{id}/confirm", h_confirm, NULL, NT_ROUTE_LONG },
	{ "POST", "/v1/transactions/{id}/rollback", h_rollback, txn_query, NT_ROUTE_LONG },
	{ "GET", "/v1/profiles", h_profiles, NULL, 0 },
	{ "GET", "/v1/profiles/{name}", h_profile_get, NULL, 0 },
	{ "PUT", "/v1/profiles/{name}", h_profile_put, NULL, 0 },
	{ "DELETE", "/v1/profiles/{name}", h_profile_delete, NULL, 0 },
	{ NULL, NULL, NULL, NULL, 0 },
};

const nt_area nt_area_txn = {
	.name = "txn",
	.routes = txn_routes,
};
