/* The transaction engine under stress, on copies of the x460 fixture: the agent
 * killed with SIGKILL between two steps recovers on restart and puts every
 * file back; two applies at once give one 409 naming the one in flight;
 * confirm_timeout_s reverts an unconfirmed transaction (while running, and
 * after a restart past its deadline) and a confirmed one stays.
 *
 * NETTUNE_TEST_STEP_DELAY_MS makes the agent sleep before each step so the
 * test can act between steps. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"

#define X460 NT_FIXTURES "/x460-4node-8nic"

static int start_delayed(nt_agent *a, const char *root, const char *state, const char *delay)
{
	if (delay)
		setenv("NETTUNE_TEST_STEP_DELAY_MS", delay, 1);
	int r = nt_agent_start(a, root, state, NULL);
	unsetenv("NETTUNE_TEST_STEP_DELAY_MS");
	CHECK_MSG(r == 0, "agent did not start on %s", root);
	return r;
}

/* Whether ROOT/proc is byte for byte the snapshot; differences are shown
 * on stderr when SHOW. */
static bool same_proc_show(const char *dir, const char *root, bool show)
{
	return tu_sh("diff -r '%s/snap/proc' '%s/proc' %s", dir, root,
		     show ? ">&2" : ">/dev/null") == 0;
}

static bool same_proc(const char *dir, const char *root)
{
	return same_proc_show(dir, root, true);
}

static json_t *get_txn(nt_agent *a, json_int_t id)
{
	char url[64];
	long st;
	json_t *doc = NULL;
	snprintf(url, sizeof(url), "/v1/transactions/%lld", (long long)id);
	tu_http("GET", nt_url(a, url), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	return doc;
}

static void test_kill9(void)
{
	char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8], buf[64], body[1024];
	nt_agent a;
	tu_async t;
	if (tu_copy(X460, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	if (start_delayed(&a, root, state, "400") < 0)
		return;
	snprintf(body, sizeof(body), "{\"profile\":%s}", X460_FIX);
	tu_async_start(&t, nt_url(&a, "/v1/transactions"), body);
	/* Steps 0 and 1 are written at ~0.4 s and ~0.8 s; step 2 at ~1.2 s. */
	nt_agent_sleep_ms(1000);
	kill(a.pid, SIGKILL);
	waitpid(a.pid, NULL, 0);
	a.pid = 0;
	tu_async_join(&t);
	json_decref(t.json);
	CHECK_STR(tu_read(root, "proc/irq/177/smp_affinity_list", buf, sizeof(buf)), "1");
	CHECK_STR(tu_read(root, "proc/irq/233/smp_affinity_list", buf, sizeof(buf)), "0-15");
	CHECK_MSG(!same_proc_show(dir, root, false), "the kill came before any step was written");

	/* Restart: the journal has it "applying"; recovery restores. */
	if (start_delayed(&a, root, state, NULL) < 0)
		return;
	json_t *doc = get_txn(&a, 1);
	CHECK_STR(tu_str(doc, "status"), "recovered");
	json_t *steps = json_object_get(doc, "steps");
	CHECK_INT(json_array_size(steps), 8);
	CHECK_STR(tu_str(json_array_get(steps, 0), "result"), "restored");
	CHECK_STR(tu_str(json_array_get(steps, 7), "result"), "not_applied");
	json_decref(doc);
	CHECK_MSG(same_proc(dir, root), "/proc differs after recovery");
	/* And the engine works again after recovery. */
	long st;
	tu_http("POST", nt_url(&a, "/v1/transactions"), body, NULL, &st, &doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	json_decref(doc);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

static void test_concurrent(void)
{
	char dir[PATH_MAX], root[PATH_MAX], body[1024];
	nt_agent a;
	tu_async t;
	nt_http_result res;
	if (tu_copy(X460, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	if (start_delayed(&a, root, NULL, "150") < 0)
		return;
	snprintf(body, sizeof(body), "{\"profile\":%s}", X460_FIX);
	tu_async_start(&t, nt_url(&a, "/v1/transactions"), body);
	nt_agent_sleep_ms(500);
	nt_http_do("POST", nt_url(&a, "/v1/transactions"), body, strlen(body), "application/json",
		   &res);
	CHECK(nt_is_problem(&res, 409));
	CHECK_INT(json_integer_value(json_object_get(res.json, "in_flight")), 1);
	CHECK(strstr(tu_str(res.json, "detail"), "transaction 1") != NULL);
	nt_http_result_free(&res);
	tu_async_join(&t);
	CHECK_INT(t.status, 201);
	CHECK_STR(tu_str(t.json, "status"), "applied");
	json_decref(t.json);
	/* Only one transaction was recorded. */
	long st;
	json_t *doc;
	tu_http("GET", nt_url(&a, "/v1/transactions"), NULL, NULL, &st, &doc);
	CHECK_INT(json_integer_value(json_object_get(doc, "total")), 1);
	json_decref(doc);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

static void test_confirm(void)
{
	char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8], buf[64], body[1024];
	nt_agent a;
	long st;
	json_t *doc;
	if (tu_copy(X460, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	if (start_delayed(&a, root, state, NULL) < 0)
		return;

	/* Not confirmed within 1 s: reverted by the agent. */
	snprintf(body, sizeof(body), "{\"profile\":%s,\"confirm_timeout_s\":1}", X460_FIX);
	tu_http("POST", nt_url(&a, "/v1/transactions"), body, NULL, &st, &doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "status"), "pending_confirm");
	CHECK(json_is_string(json_object_get(doc, "confirm_deadline")));
	json_int_t t1 = json_integer_value(json_object_get(doc, "id"));
	json_decref(doc);
	CHECK_STR(tu_read(root, "proc/irq/177/smp_affinity_list", buf, sizeof(buf)), "1");
	/* While it waits, another apply is refused. */
	tu_http("POST", nt_url(&a, "/v1/transactions"), body, NULL, &st, &doc);
	CHECK_INT(st, 409);
	CHECK_INT(json_integer_value(json_object_get(doc, "in_flight")), t1);
	json_decref(doc);
	nt_agent_sleep_ms(2500);
	doc = get_txn(&a, t1);
	CHECK_STR(tu_str(doc, "status"), "reverted");
	CHECK_STR(tu_str(json_array_get(json_object_get(doc, "steps"), 0), "result"), "reverted");
	json_decref(doc);
	CHECK_MSG(same_proc(dir, root), "/proc differs after the revert");
	char url[96];
	snprintf(url, sizeof(url), "/v1/transactions/%lld/confirm", (long long)t1);
	tu_http("POST", nt_url(&a, url), NULL, NULL, &st, &doc);
	CHECK_INT(st, 409);
	json_decref(doc);

	/* Confirmed in time: stays applied. */
	snprintf(body, sizeof(body), "{\"profile\":%s,\"confirm_timeout_s\":30}", X460_FIX);
	tu_http("POST", nt_url(&a, "/v1/transactions"), body, NULL, &st, &doc);
	json_int_t t2 = json_integer_value(json_object_get(doc, "id"));
	CHECK_STR(tu_str(doc, "status"), "pending_confirm");
	json_decref(doc);
	snprintf(url, sizeof(url), "/v1/transactions/%lld/confirm", (long long)t2);
	tu_http("POST", nt_url(&a, url), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	CHECK_STR(tu_str(doc, "status"), "applied");
	json_decref(doc);
	CHECK_STR(tu_read(root, "proc/irq/233/smp_affinity_list", buf, sizeof(buf)), "49");

	/* Roll it back (a new transaction) to start clean, then leave one
	 * pending across a restart that comes after its deadline. */
	snprintf(url, sizeof(url), "/v1/transactions/%lld/rollback", (long long)t2);
	tu_http("POST", nt_url(&a, url), NULL, NULL, &st, &doc);
	CHECK_INT(st, 201);
	json_decref(doc);
	CHECK_MSG(same_proc(dir, root), "/proc differs after the rollback");
	snprintf(body, sizeof(body), "{\"profile\":%s,\"confirm_timeout_s\":2}", X460_FIX);
	tu_http("POST", nt_url(&a, "/v1/transactions"), body, NULL, &st, &doc);
	json_int_t t4 = json_integer_value(json_object_get(doc, "id"));
	CHECK_STR(tu_str(doc, "status"), "pending_confirm");
	json_decref(doc);
	kill(a.pid, SIGKILL);
	waitpid(a.pid, NULL, 0);
	a.pid = 0;
	CHECK_STR(tu_read(root, "proc/irq/177/smp_affinity_list", buf, sizeof(buf)), "1");
	nt_agent_sleep_ms(2500);
	if (start_delayed(&a, root, state, NULL) < 0)
		return;
	doc = get_txn(&a, t4);
	CHECK_STR(tu_str(doc, "status"), "reverted");
	json_decref(doc);
	CHECK_MSG(same_proc(dir, root), "/proc differs after the revert at start");
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

int main(void)
{
	if (access(X460, F_OK) != 0)
		SKIP("fixture x460-4node-8nic is missing");
	if (access(NT_BIN, X_OK) != 0)
		SKIP("%s is not built", NT_BIN);
	test_kill9();
	test_concurrent();
	test_confirm();
	TEST_MAIN_END();
}
