/* SPDX-License-Identifier: Apache-2.0 */
/* The desired state and its drift on a throw-away copy of the virtio VM's
 * fixture (no kernel events on a fixture root: periodic checks every
 * second). Drift is made by writing the fixture's files behind the agent's
 * back, as another tool would on a host:
 *   - a profile that does not validate is refused (422, JSON paths), nothing recorded;
 *   - "persist": true on a transaction makes its profile the desired state;
 *   - policy report: a changed sysctl is reported (GET /v1/drift, diagnostics, metrics)
 *     and left alone;
 *   - the agent restarted with policy repair re-applies at boot (reason "boot"); with
 *     policy report it only reports, at start too;
 *   - a later change is repaired (reason "drift"), but never while another transaction
 *     holds the engine (one waiting for confirmation);
 *   - a target changed again and again ends "contested" with a culprit, and is left;
 *     one whose repair always fails is contested with the repair's own error;
 *   - an operator's own transaction wins ("overridden", with who made it);
 *   - a desired profile that stops validating (its interface renamed) is reported
 *     "invalid" with the reason and never applied half-way;
 *   - DELETE stops holding, and every change is in the desired state's history. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"

#define VM NT_FIXTURES "/vm-virtio-2cpu"
#define RMEM "proc/sys/net/core/rmem_max"
#define P_RMEM "{\"name\":\"hold\",\"sysctl\":{\"net.core.rmem_max\":\"16777216\"}}"

static json_t *get(nt_agent *a, const char *path, long *st)
{
	json_t *doc = NULL;
	nt_http("GET", nt_url(a, path), NULL, st, &doc, NULL, 0);
	return doc;
}

static json_t *call(nt_agent *a, const char *method, const char *path, const char *body, long want)
{
	long st = 0;
	json_t *doc = NULL;
	nt_http(method, nt_url(a, path), body, &st, &doc, NULL, 0);
	char *txt = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	CHECK_MSG(st == want, "%s %s: %ld, wanted %ld: %s", method, path, st, want, txt ? txt : "");
	free(txt);
	return doc;
}

static const char *file(const char *root, const char *rel)
{
	static char buf[256];
	return tu_read(root, rel, buf, sizeof(buf));
}

/* The drift target KIND TARGET of GET /v1/drift (new reference), or NULL. */
static json_t *target(nt_agent *a, const char *kind, const char *tgt, json_t **report)
{
	long st = 0;
	json_t *doc = get(a, "/v1/drift", &st), *t;
	size_t i;
	json_t *found = NULL;
	json_array_foreach(json_object_get(doc, "targets"), i, t) {
		if (!strcmp(tu_str(t, "kind"), kind) && !strcmp(tu_str(t, "target"), tgt))
			found = json_incref(t);
	}
	if (report)
		*report = doc;
	else
		json_decref(doc);
	return found;
}

/* Wait up to MS for rmem_max's drift target to be in STATE. */
static json_t *wait_state(nt_agent *a, const char *state, int ms)
{
	for (int waited = 0; waited <= ms; waited += 100) {
		json_t *t = target(a, "sysctl", "net.core.rmem_max", NULL);
		if (t && !strcmp(tu_str(t, "state"), state))
			return t;
		json_decref(t);
		nt_agent_sleep_ms(100);
	}
	return NULL;
}

/* The newest transaction (new reference) and the number of them. */
static json_t *newest(nt_agent *a, long *total)
{
	long st = 0;
	json_t *doc = get(a, "/v1/transactions?limit=1", &st);
	json_t *t = json_incref(json_array_get(json_object_get(doc, "transactions"), 0));
	*total = (long)json_integer_value(json_object_get(doc, "total"));
	json_decref(doc);
	return t;
}

/* The newest transaction once it has settled (its status is no longer
 * applying: a repair writes its target before it records its outcome),
 * waiting up to MS; the last seen when it did not. */
static json_t *newest_settled(nt_agent *a, long *total, int ms)
{
	json_t *t = NULL;
	for (int waited = 0; waited <= ms; waited += 100) {
		json_decref(t);
		t = newest(a, total);
		if (t && strcmp(tu_str(t, "status"), "applying") != 0)
			break;
		nt_agent_sleep_ms(100);
	}
	return t;
}

static bool has_drift_finding(nt_agent *a, const char *subject)
{
	long st = 0;
	json_t *doc = get(a, "/v1/diagnostics", &st), *f;
	size_t i;
	bool found = false;
	json_array_foreach(json_object_get(doc, "findings"), i, f)
		if (!strcmp(tu_str(f, "id"), "drift") && !strcmp(tu_str(f, "subject"), subject))
			found = true;
	json_decref(doc);
	return found;
}

static bool metrics_have(nt_agent *a, const char *line)
{
	nt_http_result r;
	nt_http_do("GET", nt_url(a, "/metrics"), NULL, 0, NULL, &r);
	bool ok = r.body && strstr(r.body, line);
	CHECK_MSG(ok, "metrics lack '%s'", line);
	nt_http_result_free(&r);
	return ok;
}

int main(void)
{
	char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8];
	nt_agent a;
	long st = 0, total = 0, before = 0;
	json_t *doc, *t;

	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0)
		SKIP("cannot copy %s", VM);
	snprintf(state, sizeof(state), "%s/state", dir);
	const char *report[] = { "--drift-policy", "report", "--drift-interval", "1", NULL };
	const char *repair[] = { "--drift-policy", "repair", "--drift-interval", "1", NULL };
	if (nt_agent_start(&a, root, state, report) < 0) {
		CHECK_MSG(0, "agent did not start");
		goto out;
	}

	/* Bad input: validated like any profile, nothing recorded. */
	doc = call(&a, "PUT", "/v1/desired",
		   "{\"profile\":{\"name\":\"x\",\"sysctl\":{\"net.core.no_such_key\":\"1\"}}}", 422);
	CHECK_STR(tu_str(json_array_get(json_object_get(doc, "errors"), 0), "path"),
		  "$.sysctl['net.core.no_such_key']");
	json_decref(doc);
	json_decref(call(&a, "GET", "/v1/desired", NULL, 404));
	json_decref(call(&a, "PUT", "/v1/desired", "{\"profile\":{},\"persist\":1}", 422));

	/* persist: the applied profile becomes the desired state. */
	doc = call(&a, "POST", "/v1/transactions", "{\"persist\":true,\"profile\":" P_RMEM "}", 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	CHECK(json_is_true(json_object_get(doc, "persist")));
	CHECK(json_is_null(json_object_get(doc, "reason")));
	json_int_t first = json_integer_value(json_object_get(doc, "id"));
	json_decref(doc);
	CHECK_STR(file(root, RMEM), "16777216");
	doc = call(&a, "GET", "/v1/desired", NULL, 200);
	CHECK_STR(tu_str(doc, "source"), "transaction");
	CHECK_INT(json_integer_value(json_object_get(doc, "txn_id")), first);
	CHECK_STR(tu_str(doc, "policy"), "report");
	CHECK_STR(tu_str(json_object_get(doc, "profile"), "name"), "hold");
	json_decref(doc);

	/* Policy report: seen within the interval, left alone. */
	tu_put(root, RMEM, "1234");
	t = wait_state(&a, "drifted", 4000);
	CHECK_MSG(t, "rmem_max's drift was not reported");
	CHECK_STR(tu_str(t, "current"), "1234");
	CHECK_STR(tu_str(t, "desired"), "16777216");
	CHECK(json_is_string(json_object_get(t, "first_seen")));
	json_decref(t);
	nt_agent_sleep_ms(1500);
	CHECK_STR(file(root, RMEM), "1234");
	json_decref(newest(&a, &total));
	CHECK_INT(total, 1);
	CHECK(has_drift_finding(&a, "net.core.rmem_max"));
	metrics_have(&a, "nettune_drift_targets 1\n");
	nt_agent_stop(&a);

	/* Restarted with policy repair: re-applied at boot. */
	if (nt_agent_start(&a, root, state, repair) < 0) {
		CHECK_MSG(0, "agent did not start again");
		goto out;
	}
	CHECK_MSG(tu_wait_file(root, RMEM, "16777216", 4000), "not re-applied at boot: %s",
		  file(root, RMEM));
	t = newest_settled(&a, &total, 4000);
	CHECK_STR(tu_str(t, "reason"), "boot");
	CHECK_STR(tu_str(t, "status"), "applied");
	json_decref(t);
	metrics_have(&a, "nettune_repairs_total{reason=\"boot\"} 1\n");

	/* A later change is repaired as a transaction of its own. */
	tu_put(root, RMEM, "1234");
	CHECK_MSG(tu_wait_file(root, RMEM, "16777216", 4000), "drift not repaired: %s",
		  file(root, RMEM));
	t = newest_settled(&a, &before, 4000);
	CHECK_STR(tu_str(t, "reason"), "drift");
	char path[64];
	snprintf(path, sizeof(path), "/v1/transactions/%lld",
		 (long long)json_integer_value(json_object_get(t, "id")));
	json_decref(t);
	doc = call(&a, "GET", path, NULL, 200);
	t = json_array_get(json_object_get(doc, "steps"), 0);
	CHECK_STR(tu_str(t, "result"), "applied");
	CHECK_STR(tu_str(t, "before"), "1234");
	CHECK_STR(tu_str(t, "after"), "16777216");
	json_decref(doc);

	/* Never beside another transaction: one waiting for confirmation
	 * holds the engine, and the repair waits for it. */
	doc = call(&a, "POST", "/v1/transactions",
		   "{\"confirm_timeout_s\":60,\"profile\":{\"name\":\"pend\",\"sysctl\":"
		   "{\"net.core.wmem_max\":\"8388608\"}}}", 201);
	CHECK_STR(tu_str(doc, "status"), "pending_confirm");
	snprintf(path, sizeof(path), "/v1/transactions/%lld/confirm",
		 (long long)json_integer_value(json_object_get(doc, "id")));
	json_decref(doc);
	tu_put(root, RMEM, "1234");
	nt_agent_sleep_ms(2500);
	CHECK_STR(file(root, RMEM), "1234");
	doc = get(&a, "/v1/drift", &st);
	CHECK_MSG(strstr(tu_str(doc, "message"), "waiting for confirmation") != NULL, "message: %s",
		  tu_str(doc, "message"));
	json_decref(doc);
	json_decref(call(&a, "POST", path, "{}", 200));
	CHECK_MSG(tu_wait_file(root, RMEM, "16777216", 4000), "not repaired after the confirm: %s",
		  file(root, RMEM));
	json_decref(newest_settled(&a, &before, 4000));

	/* Fought over: contested after a few repairs, then left alone. */
	json_t *c = NULL;
	for (int i = 0; i < 10 && !c; i++) {
		tu_put(root, RMEM, "1234");
		nt_agent_sleep_ms(1500);
		t = target(&a, "sysctl", "net.core.rmem_max", NULL);
		if (t && !strcmp(tu_str(t, "state"), "contested"))
			c = t;
		else
			json_decref(t);
	}
	CHECK_MSG(c, "never contested");
	CHECK(strstr(tu_str(c, "culprit"), "net.core.rmem_max") != NULL);
	json_decref(c);
	json_decref(newest(&a, &before));
	nt_agent_sleep_ms(2500);
	json_decref(newest(&a, &total));
	CHECK_INT(total, before);
	CHECK_STR(file(root, RMEM), "1234");
	CHECK(has_drift_finding(&a, "net.core.rmem_max"));
	metrics_have(&a, "nettune_drift_targets 1\n");

	/* Setting the desired state again starts afresh: repaired. */
	doc = call(&a, "PUT", "/v1/desired", "{\"profile_name\":\"nope\"}", 404);
	json_decref(doc);
	doc = call(&a, "PUT", "/v1/desired", P_RMEM, 200);
	CHECK_STR(tu_str(doc, "source"), "api");
	CHECK_STR(tu_str(doc, "policy"), "repair");
	json_decref(doc);
	CHECK_MSG(tu_wait_file(root, RMEM, "16777216", 4000), "not repaired after PUT: %s",
		  file(root, RMEM));

	/* An operator's own transaction wins, and is reported. */
	doc = call(&a, "POST", "/v1/transactions",
		   "{\"profile\":{\"name\":\"op\",\"sysctl\":{\"net.core.rmem_max\":\"8388608\"}}}", 201);
	json_int_t op = json_integer_value(json_object_get(doc, "id"));
	json_decref(doc);
	t = wait_state(&a, "overridden", 4000);
	CHECK_MSG(t, "the operator's change was not reported as overridden");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(t, "changed_by"), "txn")), op);
	json_decref(t);
	nt_agent_sleep_ms(1500);
	CHECK_STR(file(root, RMEM), "8388608");

	/* A desired profile that stops validating: reported, never applied. */
	doc = call(&a, "PUT", "/v1/desired",
		   "{\"profile\":{\"name\":\"eth0\",\"irq_affinity\":[{\"interface\":\"eth0\",\"cpus\":\"1\"}],"
		   "\"sysctl\":{\"net.core.rmem_max\":\"16777216\"}}}", 200);
	json_decref(doc);
	CHECK_MSG(tu_wait_file(root, RMEM, "16777216", 4000), "not applied: %s", file(root, RMEM));
	json_decref(newest_settled(&a, &before, 4000));
	tu_put(root, RMEM, "1234");
	tu_sh("mv '%s/sys/class/net/eth0' '%s/sys/class/net/eth9'", root, root);
	json_t *rep = NULL;
	for (int i = 0; i < 40; i++) {
		json_decref(rep);
		rep = get(&a, "/v1/drift", &st);
		if (!strcmp(tu_str(rep, "status"), "invalid"))
			break;
		nt_agent_sleep_ms(100);
	}
	CHECK_STR(tu_str(rep, "status"), "invalid");
	CHECK(json_array_size(json_object_get(rep, "errors")) > 0);
	CHECK(strstr(tu_str(rep, "message"), "not valid") != NULL);
	json_decref(rep);
	nt_agent_sleep_ms(1500);
	CHECK_STR(file(root, RMEM), "1234"); /* not half-way: the sysctl waits too */
	json_decref(newest(&a, &total));
	CHECK_INT(total, before);
	CHECK(has_drift_finding(&a, "host"));
	tu_sh("mv '%s/sys/class/net/eth9' '%s/sys/class/net/eth0'", root, root);
	CHECK_MSG(tu_wait_file(root, RMEM, "16777216", 4000), "not repaired once valid: %s",
		  file(root, RMEM));

	/* Policy report changes nothing, not even at start: restarted with
	 * the host changed, it reports the drift and leaves it. */
	nt_agent_stop(&a);
	tu_put(root, RMEM, "1234");
	if (nt_agent_start(&a, root, state, report) < 0) {
		CHECK_MSG(0, "agent did not start with policy report");
		goto out;
	}
	t = wait_state(&a, "drifted", 4000);
	CHECK_MSG(t, "drift at start not reported under policy report");
	json_decref(t);
	json_decref(newest(&a, &before));
	nt_agent_sleep_ms(1500);
	CHECK_STR(file(root, RMEM), "1234");
	json_decref(newest(&a, &total));
	CHECK_INT(total, before);
	nt_agent_stop(&a);
	if (nt_agent_start(&a, root, state, repair) < 0) {
		CHECK_MSG(0, "agent did not start with policy repair");
		goto out;
	}
	CHECK_MSG(tu_wait_file(root, RMEM, "16777216", 4000), "not repaired at start: %s",
		  file(root, RMEM));

	/* Stop holding: nothing changes on the host; the history has it all. */
	json_decref(call(&a, "DELETE", "/v1/desired", NULL, 204));
	json_decref(call(&a, "DELETE", "/v1/desired", NULL, 404));
	json_decref(call(&a, "GET", "/v1/desired", NULL, 404));
	tu_put(root, RMEM, "1234");
	nt_agent_sleep_ms(1500);
	CHECK_STR(file(root, RMEM), "1234");
	doc = get(&a, "/v1/drift", &st);
	CHECK_STR(tu_str(doc, "status"), "none");
	json_decref(doc);
	doc = call(&a, "PUT", "/v1/desired", P_RMEM, 200);
	json_t *h = json_object_get(doc, "history");
	CHECK(json_array_size(h) >= 5);
	CHECK_STR(tu_str(json_array_get(h, 0), "action"), "set");
	CHECK_STR(tu_str(json_array_get(h, 1), "action"), "cleared");
	CHECK_STR(tu_str(json_array_get(h, json_array_size(h) - 1), "source"), "transaction");
	json_decref(doc);
	json_decref(call(&a, "DELETE", "/v1/desired", NULL, 204));
	nt_agent_stop(&a);

	/* A repair that never holds (every write refused) is contested with
	 * the repair's own error, not blamed on another program. */
	setenv("NETTUNE_TEST_FAULT", "fail:0", 1);
	int started = nt_agent_start(&a, root, state, repair);
	unsetenv("NETTUNE_TEST_FAULT");
	if (started < 0) {
		CHECK_MSG(0, "agent did not start with a failing write");
		goto out;
	}
	tu_put(root, RMEM, "1234");
	json_decref(call(&a, "PUT", "/v1/desired", P_RMEM, 200));
	t = wait_state(&a, "contested", 8000);
	CHECK_MSG(t, "a repair that always fails was never contested");
	CHECK_MSG(t && strstr(tu_str(t, "culprit"), "the repair itself fails") &&
			  strstr(tu_str(t, "culprit"), "injected fault"),
		  "culprit: %s", t ? tu_str(t, "culprit") : "(none)");
	json_decref(t);
	CHECK_STR(file(root, RMEM), "1234");
	json_decref(call(&a, "DELETE", "/v1/desired", NULL, 204));
	nt_agent_stop(&a);
out:
	tu_sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
