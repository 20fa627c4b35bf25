/* SPDX-License-Identifier: Apache-2.0 */
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

/* A second apply while the first is still being planned (the largest
 * profile allowed on a 256-CPU host: no transaction recorded yet) gets a
 * 409 that says what is in flight all the same: planning an apply of
 * profile "big", since when and from where; once recorded, the id too. */
static void test_conflict_while_planning(void)
{
	char dir[] = "/tmp/nt-plan409-XXXXXX", root[PATH_MAX + 8];
	if (!mkdtemp(dir)) {
		CHECK_MSG(0, "mkdtemp");
		return;
	}
	snprintf(root, sizeof(root), "%s/root", dir);
	if (tu_sh("python3 '%s/gen/mkhost.py' big '%s' >/dev/null", NT_FIXTURES, root) != 0) {
		CHECK_MSG(0, "mkhost.py big failed");
		tu_sh("rm -rf '%s'", dir);
		return;
	}
	nt_agent a;
	if (start_delayed(&a, root, NULL, NULL) < 0) {
		tu_sh("rm -rf '%s'", dir);
		return;
	}
	/* 63 entries matching the 1040 NIC IRQs each: just under the limit of
	 * 65536 matches, so planning is as long as the agent allows. */
	size_t cap = 64 * 48 + 128, len = 0;
	char *body = malloc(cap);
	len += (size_t)snprintf(body + len, cap - len, "{\"profile\":{\"name\":\"big\",\"irq_affinity\":[");
	for (int i = 0; i < 63; i++)
		len += (size_t)snprintf(body + len, cap - len, "%s{\"interface\":\"*\",\"cpus\":\"%d\"}",
					i ? "," : "", 3 + i);
	snprintf(body + len, cap - len, "]}}");

	tu_async t;
	tu_async_start(&t, nt_url(&a, "/v1/transactions"), body);
	/* Until its body is in: a connection the server accepts before then
	 * may share the worker thread that then plans, and wait for it. */
	nt_agent_sleep_ms(50);
	int preparing = 0, running = 0, other = 0;
	/* Until the first apply is answered; a second one that got through
	 * (the first was done) ends the race. */
	for (int i = 0; i < 2000; i++) {
		nt_http_result res;
		nt_http_do("POST", nt_url(&a, "/v1/transactions"), body, strlen(body),
			   "application/json", &res);
		if (res.status != 409) {
			nt_http_result_free(&res);
			break;
		}
		json_t *d = json_object_get(res.json, "in_flight_detail");
		json_t *id = json_object_get(res.json, "in_flight");
		CHECK_STR(tu_str(res.json, "type"), "https://nettune.dev/problems/transaction-in-flight");
		CHECK_MSG(json_is_object(d), "a 409 without in_flight_detail");
		CHECK_STR(tu_str(d, "operation"), "apply");
		CHECK_STR(tu_str(d, "profile"), "big");
		CHECK_STR(tu_str(d, "client"), "127.0.0.1");
		CHECK_MSG(json_is_string(json_object_get(d, "since")), "no since");
		const char *state = tu_str(d, "state");
		if (strcmp(state, "preparing") == 0) {
			preparing++;
			CHECK_MSG(!id && !json_object_get(d, "transaction"),
				  "an id before the transaction is recorded");
			CHECK_MSG(strstr(tu_str(res.json, "detail"), "being prepared (apply of profile big)"),
				  "%s", tu_str(res.json, "detail"));
		} else if (strcmp(state, "running") == 0) {
			running++;
			CHECK_INT(json_integer_value(id), 1);
			CHECK_INT(json_integer_value(json_object_get(d, "transaction")), 1);
		} else {
			other++;
		}
		nt_http_result_free(&res);
		if (running)
			break;
	}
	tu_async_join(&t);
	CHECK_INT(t.status, 201);
	json_decref(t.json);
	CHECK_MSG(preparing > 0, "no 409 came while the first apply was planned");
	CHECK_INT(other, 0);
	free(body);
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
	test_conflict_while_planning();
	test_confirm();
	TEST_MAIN_END();
}
