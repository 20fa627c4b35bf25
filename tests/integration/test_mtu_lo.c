/* SPDX-License-Identifier: Apache-2.0 */
/* lo's MTU and the "*" glob over HTTP, against a real agent on a copy of
 * the x460 fixture (issue 43, item 2). The kernel gives loopback the range
 * "minmtu 0 maxmtu 0", no limit: lo takes 1500 when named, a "*" entry
 * sets it with the others, leaves out (with a warning) a link whose driver
 * stops below the MTU asked, and the rollback writes lo's 65536 back. A
 * transaction that ends rollback_failed makes GET /v1/health degraded,
 * naming the target, until a later transaction writes it. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"

#define X460 NT_FIXTURES "/x460-4node-8nic"

static char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8];

/* ethtool/IFACE.json of the copy with "link": {min, max}. */
static void give_range(const char *iface, int min, int max)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL);
	if (!doc)
		doc = json_object();
	json_object_set_new(doc, "link", json_pack("{s:i, s:i}", "min_mtu", min, "max_mtu", max));
	CHECK_INT(json_dump_file(doc, path, JSON_COMPACT), 0);
	json_decref(doc);
}

static const char *mtu_of(const char *iface, char *buf, size_t size)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "sys/class/net/%s/mtu", iface);
	return tu_read(root, rel, buf, size);
}

static json_t *health(nt_agent *a)
{
	long st = 0;
	json_t *doc = NULL;
	tu_http("GET", nt_url(a, "/v1/health"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	return doc;
}

/* The step of DOC (a plan or a transaction) for TARGET, or NULL. */
static json_t *step_for(json_t *doc, const char *target)
{
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(doc, "steps"), i, s)
		if (!strcmp(tu_str(s, "target"), target))
			return s;
	return NULL;
}

static bool warned(json_t *doc, const char *words)
{
	char *w = json_dumps(json_object_get(doc, "warnings"), JSON_COMPACT);
	bool yes = w && strstr(w, words);
	if (!yes)
		fprintf(stderr, "warnings %s do not say '%s'\n", w ? w : "(none)", words);
	free(w);
	return yes;
}

/* lo named, and "*" with lo and a link that stops at 1500; the rollback. */
static void test_glob_and_rollback(void)
{
	nt_agent a;
	char buf[64];
	if (nt_agent_start(&a, root, state, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	/* lo named: planned (its range is 0..no limit), not refused. */
	json_t *p = tu_post(&a, "/v1/plan",
			    "{\"profile\":{\"name\":\"lo\",\"mtu\":[{\"interface\":\"lo\",\"mtu\":1500}]}}", 200);
	CHECK_INT(json_array_size(json_object_get(p, "steps")), 1);
	CHECK_STR(tu_str(step_for(p, "lo"), "before"), "65536");
	CHECK_STR(tu_str(step_for(p, "lo"), "after"), "1500");
	json_decref(p);
	/* eth7 named at 9000, past its driver's 1500: refused, with the range. */
	p = tu_post(&a, "/v1/plan", "{\"profile\":{\"name\":\"e7\",\"mtu\":[{\"interface\":\"eth7\",\"mtu\":9000}]}}",
		    422);
	char *e = json_dumps(json_object_get(p, "errors"), JSON_COMPACT);
	CHECK_MSG(e && strstr(e, "outside eth7's range 68..1500"), "errors %s", e ? e : "(none)");
	free(e);
	json_decref(p);

	/* "*" at 9000: every link but eth7, which is left out and said so. */
	const char *star = "{\"profile\":{\"name\":\"star\",\"mtu\":[{\"interface\":\"*\",\"mtu\":9000}]}}";
	p = tu_post(&a, "/v1/plan", star, 200);
	CHECK_INT(json_array_size(json_object_get(p, "steps")), 8);
	CHECK(step_for(p, "lo") != NULL);
	CHECK(step_for(p, "eth7") == NULL);
	CHECK(warned(p, "eth7: MTU 9000 is outside its range 68..1500; left out of *"));
	json_decref(p);

	json_t *t = tu_post(&a, "/v1/transactions", star, 201);
	CHECK_STR(tu_str(t, "status"), "applied");
	CHECK_INT(json_array_size(json_object_get(t, "steps")), 8);
	json_int_t id = json_integer_value(json_object_get(t, "id"));
	json_decref(t);
	CHECK_STR(mtu_of("lo", buf, sizeof(buf)), "9000");
	CHECK_STR(mtu_of("eth0", buf, sizeof(buf)), "9000");
	CHECK_STR(mtu_of("eth7", buf, sizeof(buf)), "1500");

	/* The rollback writes lo's 65536 back: a value it held. */
	char url[96];
	snprintf(url, sizeof(url), "/v1/transactions/%lld/rollback", (long long)id);
	t = tu_post(&a, url, "{}", 201);
	CHECK_STR(tu_str(t, "status"), "applied");
	CHECK_STR(tu_str(step_for(t, "lo"), "result"), "applied");
	json_decref(t);
	CHECK_STR(mtu_of("lo", buf, sizeof(buf)), "65536");
	for (int i = 0; i < 8; i++) {
		char iface[8];
		snprintf(iface, sizeof(iface), "eth%d", i);
		CHECK_STR(mtu_of(iface, buf, sizeof(buf)), "1500");
	}
	json_t *h = health(&a);
	CHECK_STR(tu_str(h, "status"), "ok");
	CHECK(json_object_get(h, "rollback_failed") == NULL);
	json_decref(h);
	nt_agent_stop(&a);
}

/* A rollback that cannot write eth0's MTU back: rollback_failed, and
 * health degraded naming it, across a restart, until a later transaction
 * writes eth0's MTU. */
static void test_health_after_rollback_failed(void)
{
	nt_agent a;
	char buf[64], mtu[PATH_MAX + 32];
	/* Step 1 (eth1) fails; the undo of step 0 (eth0) waits 1 s first. */
	setenv("NETTUNE_TEST_FAULT", "fail:1,pause-in-undo:0", 1);
	setenv("NETTUNE_TEST_STEP_DELAY_MS", "1000", 1);
	int r = nt_agent_start(&a, root, state, NULL);
	unsetenv("NETTUNE_TEST_FAULT");
	unsetenv("NETTUNE_TEST_STEP_DELAY_MS");
	if (r < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	tu_async ap;
	tu_async_start(&ap, nt_url(&a, "/v1/transactions"),
		       "{\"profile\":{\"name\":\"two\",\"mtu\":[{\"interface\":\"eth0\",\"mtu\":9000},"
		       "{\"interface\":\"eth1\",\"mtu\":9000}]}}");
	bool seen = tu_wait_file(root, "sys/class/net/eth0/mtu", "9000", 5000);
	CHECK_MSG(seen, "step 0 was not applied");
	/* eth0's MTU can no longer be written: a directory in its place. */
	snprintf(mtu, sizeof(mtu), "%s/sys/class/net/eth0/mtu", root);
	tu_sh("rm -f '%1$s' && mkdir '%1$s'", mtu);
	tu_async_join(&ap);
	CHECK_INT(ap.status, 201);
	CHECK_STR(tu_str(ap.json, "status"), "rollback_failed");
	json_int_t id = json_integer_value(json_object_get(ap.json, "id"));
	json_decref(ap.json);

	json_t *h = health(&a);
	CHECK_STR(tu_str(h, "status"), "degraded");
	json_t *u = json_object_get(h, "rollback_failed");
	CHECK_INT(json_array_size(u), 1);
	CHECK_STR(tu_str(json_array_get(u, 0), "kind"), "mtu");
	CHECK_STR(tu_str(json_array_get(u, 0), "target"), "eth0");
	CHECK_INT(json_integer_value(json_object_get(json_array_get(u, 0), "transaction")), id);
	char *w = json_dumps(json_object_get(h, "warnings"), JSON_COMPACT);
	snprintf(buf, sizeof(buf), "mtu eth0 of transaction %lld", (long long)id);
	CHECK_MSG(w && strstr(w, buf) && strstr(w, "could not be put back"), "warnings %s", w ? w : "(none)");
	free(w);
	json_decref(h);
	nt_agent_stop(&a);

	/* The file back as the failed undo left it; still degraded after a
	 * restart: the record says so, not the agent's memory. */
	tu_sh("rmdir '%1$s' && echo 9000 > '%1$s'", mtu);
	if (nt_agent_start(&a, root, state, NULL) < 0) {
		CHECK_MSG(0, "agent did not restart");
		return;
	}
	h = health(&a);
	CHECK_STR(tu_str(h, "status"), "degraded");
	CHECK_INT(json_array_size(json_object_get(h, "rollback_failed")), 1);
	json_decref(h);
	/* A later transaction writes eth0's MTU: healthy again. */
	json_t *t = tu_post(&a, "/v1/transactions",
			    "{\"profile\":{\"name\":\"one\",\"mtu\":[{\"interface\":\"eth0\",\"mtu\":1500}]}}", 201);
	CHECK_STR(tu_str(t, "status"), "applied");
	json_decref(t);
	CHECK_STR(mtu_of("eth0", buf, sizeof(buf)), "1500");
	h = health(&a);
	CHECK_STR(tu_str(h, "status"), "ok");
	CHECK(json_object_get(h, "rollback_failed") == NULL);
	json_decref(h);
	nt_agent_stop(&a);
}

int main(void)
{
	if (access(X460, F_OK) != 0)
		SKIP("fixture x460-4node-8nic is missing");
	if (access(NT_BIN, X_OK) != 0)
		SKIP("%s is not built", NT_BIN);
	if (tu_copy(X460, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy %s", X460);
		TEST_MAIN_END();
	}
	snprintf(state, sizeof(state), "%s/state", dir);
	/* eth7's driver stops at 1500 (as e1000's does without jumbo frames). */
	give_range("eth7", 68, 1500);
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	test_glob_and_rollback();
	test_health_after_rollback_failed();
	tu_sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
