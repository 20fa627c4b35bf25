/* SPDX-License-Identifier: Apache-2.0 */
/* Profiles applied as transactions over HTTP, on throw-away copies of the
 * field-report hosts' fixtures: the x460's fix (each NIC's IRQ on its own
 * node, CPU 0 left out, distinct first CPUs), the EPYC's fix (rings 4096,
 * bond0 layer3+4, TCP buffers), the no-op second apply, real faults part-way
 * (a target turned into a directory, an IRQ that disappears) with every
 * file byte-for-byte as before, Idempotency-Key, history, rollback of a
 * transaction and its 409, stored profiles, an unusable store, and a
 * history cut to its length (--history-keep), and the step lines a big
 * transaction logs. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"
#include "tree_files.h"
#include "base/cpuset.h"
#include "engine/txn.h" /* NT_TXN_LOG_STEPS */

#define X460 NT_FIXTURES "/x460-4node-8nic"
#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

static json_t *apply(nt_agent *a, const char *profile, long want_status)
{
	char body[4096];
	long st = 0;
	json_t *doc = NULL;
	snprintf(body, sizeof(body), "{\"profile\":%s}", profile);
	tu_http("POST", nt_url(a, "/v1/transactions"), body, NULL, &st, &doc);
	CHECK_MSG(st == want_status, "POST /v1/transactions: %ld, wanted %ld: %s", st, want_status,
		  doc ? json_dumps(doc, JSON_COMPACT) : "");
	return doc;
}

static void test_x460(void)
{
	char dir[PATH_MAX], root[PATH_MAX], buf[256], rel[128];
	nt_agent a;
	if (tu_copy(X460, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy %s", X460);
		return;
	}
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	json_t *doc = apply(&a, X460_FIX, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 8);
	json_int_t t1 = json_integer_value(json_object_get(doc, "id"));
	/* Each IRQ step records the effective CPU the target shows after
	 * the writes: on a tree, the first CPU of its list. */
	size_t k;
	json_t *step;
	json_array_foreach(json_object_get(doc, "steps"), k, step) {
		nt_cpuset after;
		char want[32];
		CHECK(nt_cpulist_parse(tu_str(step, "after"), &after) == 0);
		snprintf(want, sizeof(want), "effective %d", nt_cpuset_next(&after, 0));
		CHECK_STR(tu_str(step, "observed"), want);
	}
	json_decref(doc);

	/* Every NIC IRQ on its own node (node k = CPUs 16k..16k+15), never
	 * CPU 0, and no two NICs with the same first CPU
	 * (docs/field-reports.md#first-cpu-serves). */
	int firsts[8];
	for (int i = 0; i < 8; i++) {
		int node = i / 2;
		snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", x460_irqs[i]);
		tu_read(root, rel, buf, sizeof(buf));
		nt_cpuset s;
		CHECK_MSG(nt_cpulist_parse(buf, &s) == 0 && !nt_cpuset_empty(&s), "IRQ %d: '%s'",
			  x460_irqs[i], buf);
		firsts[i] = nt_cpuset_next(&s, 0);
		for (int c = firsts[i]; c >= 0; c = nt_cpuset_next(&s, c + 1))
			CHECK_MSG(c / 16 == node && c != 0, "IRQ %d on CPU %d, NIC on node %d",
				  x460_irqs[i], c, node);
		for (int j = 0; j < i; j++)
			CHECK_MSG(firsts[j] != firsts[i], "IRQs %d and %d share first CPU %d",
				  x460_irqs[j], x460_irqs[i], firsts[i]);
		/* The fixture's mask file says the same, in the kernel's format. */
		snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity", x460_irqs[i]);
		nt_cpuset m;
		tu_read(root, rel, buf, sizeof(buf));
		CHECK_MSG(nt_cpumask_parse(buf, &m) == 0 && nt_cpuset_equal(&m, &s) &&
			  strlen(buf) == 17, "IRQ %d mask '%s'", x460_irqs[i], buf);
	}

	/* The same profile again plans nothing and applies nothing. */
	long st;
	tu_http("POST", nt_url(&a, "/v1/plan"), X460_FIX, NULL, &st, &doc);
	CHECK_INT(st, 200);
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 0);
	json_decref(doc);
	doc = apply(&a, X460_FIX, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 0);
	json_decref(doc);

	/* Rolled back from what the targets hold now: one IRQ moved by hand
	 * since is put back from where it is (its step's before), one moved
	 * back by hand already is left out; the rest from the apply's. */
	snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", x460_irqs[0]);
	tree_write(root, rel, "17\n");
	char orig1[64];
	snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", x460_irqs[1]);
	char url[64];
	snprintf(url, sizeof(url), "/v1/transactions/%lld", (long long)t1);
	tu_http("GET", nt_url(&a, url), NULL, NULL, &st, &doc);
	json_array_foreach(json_object_get(doc, "steps"), k, step)
		if (atoi(tu_str(step, "target")) == x460_irqs[1])
			snprintf(orig1, sizeof(orig1), "%s\n", tu_str(step, "before"));
	json_decref(doc);
	tree_write(root, rel, orig1);
	snprintf(url, sizeof(url), "/v1/transactions/%lld/rollback", (long long)t1);
	tu_http("POST", nt_url(&a, url), "{}", NULL, &st, &doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 7);
	bool seen0 = false;
	json_array_foreach(json_object_get(doc, "steps"), k, step) {
		int irq = atoi(tu_str(step, "target"));
		CHECK_MSG(irq != x460_irqs[1], "IRQ %d, already back, was written again", irq);
		if (irq == x460_irqs[0]) {
			seen0 = true;
			CHECK_STR(tu_str(step, "before"), "17");
		}
	}
	CHECK_MSG(seen0, "IRQ %d, moved by hand, was not rolled back", x460_irqs[0]);
	json_decref(doc);
	for (int i = 0; i < 8; i++) {
		snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", x460_irqs[i]);
		CHECK_MSG(tu_sh("cmp '%s/snap/%s' '%s/%s' >&2", dir, rel, root, rel) == 0,
			  "IRQ %d differs after the rollback", x460_irqs[i]);
	}
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* Run X460_FIX with a delay between steps and do FAULT to the copy while
 * it runs; then everything must read as before. */
static void fault_x460(const char *what, const char *fault, const char *repair,
		       int want_step, const char *want_error)
{
	char dir[PATH_MAX], root[PATH_MAX];
	nt_agent a;
	tu_async t;
	if (tu_copy(X460, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	setenv("NETTUNE_TEST_STEP_DELAY_MS", "250", 1);
	int r = nt_agent_start(&a, root, NULL, NULL);
	unsetenv("NETTUNE_TEST_STEP_DELAY_MS");
	if (r < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	char body[1024];
	snprintf(body, sizeof(body), "{\"profile\":%s}", X460_FIX);
	tu_async_start(&t, nt_url(&a, "/v1/transactions"), body);
	nt_agent_sleep_ms(700); /* steps 0 and 1 are written by now, 7 is 1.3 s away */
	CHECK_MSG(tu_script(root, dir, fault) == 0, "%s: fault could not be made", what);
	tu_async_join(&t);
	CHECK_INT(t.status, 201);
	CHECK_STR(tu_str(t.json, "status"), "rolled_back");
	CHECK_INT(json_integer_value(json_object_get(t.json, "failed_step")), want_step);
	CHECK_MSG(strstr(tu_str(t.json, "error"), want_error) != NULL, "%s: error '%s'", what,
		  tu_str(t.json, "error"));
	json_t *steps = json_object_get(t.json, "steps");
	CHECK_STR(tu_str(json_array_get(steps, 0), "result"), "rolled_back");
	CHECK_STR(tu_str(json_array_get(steps, want_step), "result"), "failed");
	/* The steps after the failed one never ran: not_applied, in the
	 * reply and in the history, never "pending" in a finished one. */
	json_t *stored = NULL;
	long sst = 0;
	char path[64];
	snprintf(path, sizeof(path), "/v1/transactions/%lld", (long long)json_integer_value(json_object_get(t.json, "id")));
	tu_http("GET", nt_url(&a, path), NULL, NULL, &sst, &stored);
	CHECK_INT(sst, 200);
	json_t *stored_steps = json_object_get(stored, "steps");
	CHECK_INT(json_array_size(stored_steps), json_array_size(steps));
	for (size_t i = (size_t)want_step + 1; i < json_array_size(steps); i++) {
		CHECK_STR(tu_str(json_array_get(steps, i), "result"), "not_applied");
		CHECK_STR(tu_str(json_array_get(stored_steps, i), "result"), "not_applied");
	}
	for (size_t i = 0; i < json_array_size(stored_steps); i++)
		CHECK_MSG(strcmp(tu_str(json_array_get(stored_steps, i), "result"), "pending") != 0,
			  "%s: step %zu is still pending", what, i);
	json_decref(stored);
	json_decref(t.json);
	nt_agent_stop(&a);
	/* Put the fault right and compare every file of /proc byte for byte. */
	tu_script(root, dir, repair);
	CHECK_MSG(tu_sh("diff -r '%s/snap/proc' '%s/proc' >&2", dir, root) == 0,
		  "%s: /proc differs from before the transaction", what);
	tu_sh("rm -rf '%s'", dir);
}

static void test_faults(void)
{
	/* A later target that cannot be written (root ignores file modes, so
	 * the file becomes a directory). */
	fault_x460("target is a directory",
		   "rm $R/proc/irq/233/smp_affinity_list && mkdir $R/proc/irq/233/smp_affinity_list",
		   "rmdir $R/proc/irq/233/smp_affinity_list && "
		   "cp -a $D/snap/proc/irq/233/smp_affinity_list $R/proc/irq/233/",
		   7, "Is a directory");
	/* An IRQ that disappears between plan and apply. */
	fault_x460("IRQ disappears", "mv $R/proc/irq/225 $R/irq225.gone",
		   "mv $R/irq225.gone $R/proc/irq/225", 6, "No such file");
}

static void test_epyc(void)
{
	char dir[PATH_MAX], root[PATH_MAX], buf[256];
	nt_agent a;
	long st;
	json_t *doc;
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	/* Plan first: the steps with before-values as the EPYC report found
	 * them. */
	tu_http("POST", nt_url(&a, "/v1/plan"), EPYC_FIX, NULL, &st, &doc);
	CHECK_INT(st, 200);
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 9);
	json_t *s0 = json_array_get(json_object_get(doc, "steps"), 0);
	CHECK_STR(tu_str(s0, "kind"), "rings");
	CHECK_STR(tu_str(s0, "before"), "rx=1024,tx=1024");
	CHECK_STR(tu_str(s0, "after"), "rx=4096,tx=1024");
	json_decref(doc);
	CHECK_STR(tu_read(root, "sys/class/net/bond0/bonding/xmit_hash_policy", buf, sizeof(buf)),
		  "layer2+3 2");

	/* Idempotency-Key: the retry returns the original, applies nothing. */
	char body[4096];
	snprintf(body, sizeof(body), "{\"profile\":%s}", EPYC_FIX);
	tu_http("POST", nt_url(&a, "/v1/transactions"), body, "retry-1", &st, &doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	json_int_t t1 = json_integer_value(json_object_get(doc, "id"));
	CHECK_STR(tu_str(doc, "client"), "127.0.0.1");
	CHECK(json_is_string(json_object_get(doc, "created")));
	CHECK(json_is_string(json_object_get(doc, "finished")));
	CHECK(json_is_integer(json_object_get(doc, "duration_ms")));
	json_decref(doc);
	tu_http("POST", nt_url(&a, "/v1/transactions"), body, "retry-1", &st, &doc);
	CHECK_INT(st, 200);
	CHECK_INT(json_integer_value(json_object_get(doc, "id")), t1);
	json_decref(doc);

	for (int i = 0; i < 4; i++) {
		char iface[16];
		snprintf(iface, sizeof(iface), "enos%d", i);
		CHECK_STR(tu_rings(root, iface, buf, sizeof(buf)), "rx=4096,tx=1024");
	}
	CHECK_STR(tu_read(root, "sys/class/net/bond0/bonding/xmit_hash_policy", buf, sizeof(buf)),
		  "layer3+4 1");
	CHECK_STR(tu_read(root, "proc/sys/net/ipv4/tcp_rmem", buf, sizeof(buf)),
		  "4096 87380 16777216");
	CHECK_STR(tu_read(root, "proc/sys/net/ipv4/tcp_wmem", buf, sizeof(buf)),
		  "4096 65536 16777216");
	CHECK_STR(tu_read(root, "proc/sys/net/core/rmem_max", buf, sizeof(buf)), "16777216");
	CHECK_STR(tu_read(root, "proc/sys/net/core/wmem_max", buf, sizeof(buf)), "16777216");

	/* A later transaction touching rmem_max. */
	doc = apply(&a, "{\"name\":\"more\",\"sysctl\":{\"net.core.rmem_max\":\"33554432\"}}", 201);
	json_int_t t2 = json_integer_value(json_object_get(doc, "id"));
	CHECK_STR(tu_str(doc, "status"), "applied");
	json_decref(doc);

	/* Rolling back t1 would undo t2's change too: 409, unless forced. */
	char url[128];
	snprintf(url, sizeof(url), "/v1/transactions/%lld/rollback", (long long)t1);
	tu_http("POST", nt_url(&a, url), NULL, NULL, &st, &doc);
	CHECK_INT(st, 409);
	CHECK_INT(json_integer_value(json_object_get(doc, "later")), t2);
	json_decref(doc);
	CHECK_STR(tu_read(root, "sys/class/net/bond0/bonding/xmit_hash_policy", buf, sizeof(buf)),
		  "layer3+4 1");
	tu_http("POST", nt_url(&a, url), "{\"force\":true}", NULL, &st, &doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	CHECK_INT(json_integer_value(json_object_get(doc, "rollback_of")), t1);
	/* A rollback applies no profile: `profile` is there, and null. */
	CHECK(json_is_null(json_object_get(doc, "profile")));
	json_int_t t3 = json_integer_value(json_object_get(doc, "id"));
	json_decref(doc);
	/* Every file the EPYC fix touched is as the fixture had it. */
	CHECK_MSG(tu_sh("diff -r '%s/snap/proc' '%s/proc' >&2", dir, root) == 0,
		  "/proc differs after the rollback");
	CHECK_MSG(tu_sh("cmp '%s/snap/sys/class/net/bond0/bonding/xmit_hash_policy' "
			"'%s/sys/class/net/bond0/bonding/xmit_hash_policy'", dir, root) == 0,
		  "bond0 xmit_hash_policy differs after the rollback");
	CHECK_STR(tu_rings(root, "enos2", buf, sizeof(buf)), "rx=1024,tx=1024");
	/* Rolled back already: a second rollback of t1 is refused, naming the
	 * earliest later transaction still in place on its targets. */
	tu_http("POST", nt_url(&a, url), NULL, NULL, &st, &doc);
	CHECK_INT(st, 409);
	CHECK_INT(json_integer_value(json_object_get(doc, "later")), t2);
	json_decref(doc);
	/* And t2's target was changed by t3 since. */
	snprintf(url, sizeof(url), "/v1/transactions/%lld/rollback", (long long)t2);
	tu_http("POST", nt_url(&a, url), NULL, NULL, &st, &doc);
	CHECK_INT(st, 409);
	CHECK_INT(json_integer_value(json_object_get(doc, "later")), t3);
	json_decref(doc);

	/* History: newest first, filters, paging. */
	tu_http("GET", nt_url(&a, "/v1/transactions"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	CHECK_INT(json_integer_value(json_object_get(doc, "total")), 3);
	json_t *list = json_object_get(doc, "transactions");
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 0), "id")), t3);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 2), "id")), t1);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 2), "nsteps")), 9);
	json_decref(doc);
	tu_http("GET", nt_url(&a, "/v1/transactions?status=applied&limit=1&offset=1"), NULL, NULL,
		&st, &doc);
	CHECK_INT(st, 200);
	list = json_object_get(doc, "transactions");
	CHECK_INT(json_array_size(list), 1);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(list, 0), "id")), t2);
	json_decref(doc);
	tu_http("GET", nt_url(&a, "/v1/transactions?status=rolled_back"), NULL, NULL, &st, &doc);
	CHECK_INT(json_integer_value(json_object_get(doc, "total")), 0);
	json_decref(doc);
	tu_http("GET", nt_url(&a, "/v1/transactions?status=bogus"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 400);
	json_decref(doc);
	snprintf(url, sizeof(url), "/v1/transactions/%lld", (long long)t1);
	tu_http("GET", nt_url(&a, url), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	json_t *st8 = json_array_get(json_object_get(doc, "steps"), 8);
	CHECK_STR(tu_str(st8, "target"), "net.core.wmem_max");
	CHECK_STR(tu_str(st8, "before"), "212992");
	CHECK_STR(tu_str(st8, "result"), "applied");
	CHECK_STR(tu_str(json_object_get(doc, "profile"), "name"), "epyc-fix");
	json_decref(doc);
	tu_http("GET", nt_url(&a, "/v1/transactions/9999"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 404);
	json_decref(doc);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* A fault in the middle of the EPYC fix: the last sysctl cannot be
 * written; rings, bond and the other sysctls are put back. */
static void test_epyc_fault(void)
{
	char dir[PATH_MAX], root[PATH_MAX], buf[256], body[4096];
	nt_agent a;
	tu_async t;
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	setenv("NETTUNE_TEST_STEP_DELAY_MS", "200", 1);
	int r = nt_agent_start(&a, root, NULL, NULL);
	unsetenv("NETTUNE_TEST_STEP_DELAY_MS");
	if (r < 0)
		return;
	snprintf(body, sizeof(body), "{\"profile\":%s}", EPYC_FIX);
	tu_async_start(&t, nt_url(&a, "/v1/transactions"), body);
	nt_agent_sleep_ms(600);
	tu_script(root, dir, "rm $R/proc/sys/net/core/wmem_max && mkdir $R/proc/sys/net/core/wmem_max");
	tu_async_join(&t);
	CHECK_STR(tu_str(t.json, "status"), "rolled_back");
	CHECK_INT(json_integer_value(json_object_get(t.json, "failed_step")), 8);
	json_decref(t.json);
	nt_agent_stop(&a);
	tu_script(root, dir, "rmdir $R/proc/sys/net/core/wmem_max && "
		  "cp -a $D/snap/proc/sys/net/core/wmem_max $R/proc/sys/net/core/");
	CHECK_MSG(tu_sh("diff -r '%s/snap/proc' '%s/proc' >&2", dir, root) == 0,
		  "/proc differs after the rolled-back transaction");
	CHECK_MSG(tu_sh("cmp '%s/snap/sys/class/net/bond0/bonding/xmit_hash_policy' "
			"'%s/sys/class/net/bond0/bonding/xmit_hash_policy'", dir, root) == 0,
		  "bond0 differs after the rolled-back transaction");
	for (int i = 0; i < 4; i++) {
		char iface[16];
		snprintf(iface, sizeof(iface), "enos%d", i);
		CHECK_STR(tu_rings(root, iface, buf, sizeof(buf)), "rx=1024,tx=1024");
	}
	tu_sh("rm -rf '%s'", dir);
}

static void test_profiles_and_validation(void)
{
	char dir[PATH_MAX], root[PATH_MAX];
	nt_agent a;
	long st;
	json_t *doc;
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	if (nt_agent_start(&a, root, NULL, NULL) < 0)
		return;
	tu_http("PUT", nt_url(&a, "/v1/profiles/epyc"),
		"{\"description\":\"EPYC fix\",\"bonds\":[{\"interface\":\"bond0\","
		"\"xmit_hash_policy\":\"layer3+4\"}]}", NULL, &st, &doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "name"), "epyc");
	json_decref(doc);
	tu_http("PUT", nt_url(&a, "/v1/profiles/epyc"),
		"{\"name\":\"epyc\",\"bonds\":[{\"interface\":\"bond0\","
		"\"xmit_hash_policy\":\"layer3+4\"}]}", NULL, &st, &doc);
	CHECK_INT(st, 200);
	json_decref(doc);
	/* Read back: the replacement, without the first one's description. */
	tu_http("GET", nt_url(&a, "/v1/profiles/epyc"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	CHECK_STR(tu_str(doc, "name"), "epyc");
	CHECK(json_object_get(doc, "description") == NULL);
	json_decref(doc);
	tu_http("PUT", nt_url(&a, "/v1/profiles/epyc"), "{\"name\":\"other\"}", NULL, &st, &doc);
	CHECK_INT(st, 400);
	json_decref(doc);
	/* Invalid: 422 with every error and its path; nothing stored. */
	nt_http_result res;
	const char *bad = "{\"rings\":[{\"interface\":\"enos0\",\"rx\":9000}],"
			  "\"bonds\":[{\"interface\":\"bond0\",\"xmit_hash_policy\":\"layer9\"}]}";
	nt_http_do("PUT", nt_url(&a, "/v1/profiles/bad"), bad, strlen(bad), "application/json", &res);
	CHECK(nt_is_problem(&res, 422));
	json_t *errs = json_object_get(res.json, "errors");
	CHECK_INT(json_array_size(errs), 2);
	CHECK_STR(tu_str(json_array_get(errs, 0), "path"), "$.rings[0].rx");
	CHECK_STR(tu_str(json_array_get(errs, 1), "path"), "$.bonds[0].xmit_hash_policy");
	nt_http_result_free(&res);
	tu_http("GET", nt_url(&a, "/v1/profiles/bad"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 404);
	json_decref(doc);
	tu_http("GET", nt_url(&a, "/v1/profiles"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	CHECK_INT(json_array_size(json_object_get(doc, "profiles")), 1);
	CHECK_STR(tu_str(json_array_get(json_object_get(doc, "profiles"), 0), "description"),
		  "(none)");
	json_decref(doc);

	/* The same invalid profile, applied inline: 422 and nothing touched. */
	char body[1024];
	snprintf(body, sizeof(body), "{\"profile\":{\"name\":\"bad\",%s}", bad + 1);
	nt_http_do("POST", nt_url(&a, "/v1/transactions"), body, strlen(body), "application/json",
		   &res);
	CHECK(nt_is_problem(&res, 422));
	nt_http_result_free(&res);
	tu_http("GET", nt_url(&a, "/v1/transactions"), NULL, NULL, &st, &doc);
	CHECK_INT(json_integer_value(json_object_get(doc, "total")), 0);
	json_decref(doc);

	/* Plan and apply a stored profile by name. */
	tu_http("POST", nt_url(&a, "/v1/plan"), "{\"profile_name\":\"epyc\"}", NULL, &st, &doc);
	CHECK_INT(st, 200);
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 1);
	json_decref(doc);
	tu_http("POST", nt_url(&a, "/v1/transactions"), "{\"profile_name\":\"epyc\"}", NULL, &st,
		&doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "profile_name"), "epyc");
	CHECK_STR(tu_str(doc, "status"), "applied");
	json_decref(doc);
	tu_http("POST", nt_url(&a, "/v1/transactions"), "{\"profile_name\":\"nope\"}", NULL, &st,
		&doc);
	CHECK_INT(st, 404);
	json_decref(doc);
	tu_http("DELETE", nt_url(&a, "/v1/profiles/epyc"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 204);
	json_decref(doc);
	tu_http("DELETE", nt_url(&a, "/v1/profiles/epyc"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 404);
	json_decref(doc);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* A transaction waiting for confirmation is rolled back at once (it
 * answered 409 and left it tuned until its deadline): 200 with it, now
 * "reverted", its steps "reverted", the host as before; no new
 * transaction; the engine free for the next apply. */
static void test_rollback_pending(void)
{
	char dir[PATH_MAX], root[PATH_MAX], buf[256];
	nt_agent a;
	long st;
	json_t *doc;
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	const char *body = "{\"profile\":{\"name\":\"p\",\"rings\":[{\"interface\":\"enos0\",\"rx\":4096}],"
			   "\"sysctl\":{\"net.core.wmem_max\":\"33554432\"}},\"confirm_timeout_s\":3600}";
	char before[256];
	snprintf(before, sizeof(before), "%s", tu_read(root, "proc/sys/net/core/wmem_max", buf, sizeof(buf)));
	tu_http("POST", nt_url(&a, "/v1/transactions"), body, NULL, &st, &doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "status"), "pending_confirm");
	json_int_t id = json_integer_value(json_object_get(doc, "id"));
	json_decref(doc);
	CHECK_STR(tu_rings(root, "enos0", buf, sizeof(buf)), "rx=4096,tx=1024");
	char path[128];
	snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback", (long long)id);
	tu_http("POST", nt_url(&a, path), "{}", NULL, &st, &doc);
	CHECK_INT(st, 200);
	CHECK_INT(json_integer_value(json_object_get(doc, "id")), id);
	CHECK_STR(tu_str(doc, "status"), "reverted");
	CHECK(strstr(tu_str(doc, "error"), "rolled back before its confirm deadline") != NULL);
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(doc, "steps"), i, s)
		CHECK_STR(tu_str(s, "result"), "reverted");
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 2);
	json_decref(doc);
	CHECK_STR(tu_rings(root, "enos0", buf, sizeof(buf)), "rx=1024,tx=1024");
	CHECK_STR(tu_read(root, "proc/sys/net/core/wmem_max", buf, sizeof(buf)), before);
	/* Nothing more to undo or confirm; one transaction in the history;
	 * the next apply is not held up. */
	tu_http("POST", nt_url(&a, path), "{}", NULL, &st, &doc);
	CHECK_INT(st, 409);
	json_decref(doc);
	snprintf(path, sizeof(path), "/v1/transactions/%lld/confirm", (long long)id);
	tu_http("POST", nt_url(&a, path), "{}", NULL, &st, &doc);
	CHECK_INT(st, 409);
	json_decref(doc);
	tu_http("GET", nt_url(&a, "/v1/transactions"), NULL, NULL, &st, &doc);
	CHECK_INT(json_integer_value(json_object_get(doc, "total")), 1);
	json_decref(doc);
	tu_http("POST", nt_url(&a, "/v1/transactions"), body, NULL, &st, &doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "status"), "pending_confirm");
	json_decref(doc);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* ring-below-max clears once the raised ring stops the drops (the
 * EPYC's enos0 had dropped since boot, so raising it to 4096 of 8192
 * never cleared the finding): the agent judges drops over a recent window
 * or since the ring changed. */
static json_t *ring_finding(nt_agent *a, const char *nic)
{
	long st;
	json_t *doc = NULL, *f, *found = NULL;
	size_t i;
	tu_http("GET", nt_url(a, "/v1/diagnostics"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	json_array_foreach(json_object_get(doc, "findings"), i, f)
		if (!strcmp(tu_str(f, "id"), "ring-below-max") && !strcmp(tu_str(f, "subject"), nic))
			found = json_incref(f);
	json_decref(doc);
	return found;
}

static void test_ring_finding_clears(void)
{
	char dir[PATH_MAX], root[PATH_MAX];
	nt_agent a;
	long st;
	json_t *doc, *f;
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	f = ring_finding(&a, "enos0");
	CHECK_MSG(f && strstr(tu_str(f, "message"), "since boot"), "%s", f ? tu_str(f, "message") : "no finding");
	json_decref(f);
	tu_http("POST", nt_url(&a, "/v1/transactions"),
		"{\"profile\":{\"name\":\"r\",\"rings\":[{\"interface\":\"enos0\",\"rx\":4096}]}}", NULL, &st, &doc);
	CHECK_INT(st, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	json_decref(doc);
	f = ring_finding(&a, "enos0");
	CHECK_MSG(f == NULL, "still found after the ring was raised: %s", f ? tu_str(f, "message") : "");
	json_decref(f);
	/* enos2, untouched, has been watched for less than a whole window:
	 * it is still judged on its counters since boot, and the finding
	 * says so, rather than vanishing at the agent's second look. */
	f = ring_finding(&a, "enos2");
	CHECK_MSG(f && strstr(tu_str(f, "message"), "since boot"), "enos2: %s", f ? tu_str(f, "message") : "no finding");
	json_decref(f);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* Values the kernel would refuse at the write are refused at the plan:
 * a congestion control the host does not have (the EPYC
 * fixture has reno and cubic, no modules), and a sysctl whose file is
 * read-only (as net.core.rmem_max is in a child network namespace). */
static void test_sysctl_host_checks(void)
{
	char dir[PATH_MAX], root[PATH_MAX], file[PATH_MAX + 64];
	nt_agent a;
	nt_http_result res;
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	snprintf(file, sizeof(file), "%s/proc/sys/net/core/rmem_max", root);
	CHECK_INT(chmod(file, 0444), 0);
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	static const struct {
		const char *body, *path, *why;
	} bad[] = {
		{ "{\"name\":\"cc\",\"sysctl\":{\"net.ipv4.tcp_congestion_control\":\"bbrr\"}}",
		  "$.sysctl['net.ipv4.tcp_congestion_control']",
		  "'bbrr' is not an available congestion control (net.ipv4.tcp_available_congestion_control: "
		  "reno cubic) and no module tcp_bbrr is installed" },
		{ "{\"name\":\"cc\",\"sysctl\":{\"net.ipv4.tcp_congestion_control\":\"bbr\"}}",
		  "$.sysctl['net.ipv4.tcp_congestion_control']", "'bbr' is not an available congestion control" },
		{ "{\"name\":\"ro\",\"sysctl\":{\"net.core.rmem_max\":\"16777216\"}}", "$.sysctl['net.core.rmem_max']",
		  "net.core.rmem_max is read-only here (mode 0444" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nt_http_do("POST", nt_url(&a, "/v1/plan"), bad[i].body, strlen(bad[i].body), "application/json", &res);
		CHECK_MSG(nt_is_problem(&res, 422), "%s: %ld", bad[i].body, res.status);
		json_t *e = json_array_get(json_object_get(res.json, "errors"), 0);
		CHECK_STR(tu_str(e, "path"), bad[i].path);
		CHECK_MSG(strstr(tu_str(e, "message"), bad[i].why), "%s", tu_str(e, "message"));
		nt_http_result_free(&res);
	}
	/* What the host has passes: reno, and a writable sysctl. */
	const char *good = "{\"name\":\"ok\",\"sysctl\":{\"net.ipv4.tcp_congestion_control\":\"reno\","
			   "\"net.core.wmem_max\":\"16777216\"}}";
	nt_http_do("POST", nt_url(&a, "/v1/plan"), good, strlen(good), "application/json", &res);
	CHECK_MSG(res.status == 200, "%ld %s", res.status, res.body ? res.body : "");
	nt_http_result_free(&res);
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* A state database that is not a database: apply refuses with 503 and
 * touches nothing; planning still works. */
static void test_store_unavailable(void)
{
	char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8];
	nt_agent a;
	nt_http_result res;
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) < 0)
		return;
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	tu_script(state, dir, "mkdir -p \"$R\" && yes 'not a database' | head -c 65536 > \"$R/nettune.db\"");
	if (nt_agent_start(&a, root, state, NULL) < 0) {
		CHECK_MSG(0, "agent did not start with a corrupt database");
		return;
	}
	char body[4096];
	snprintf(body, sizeof(body), "{\"profile\":%s}", EPYC_FIX);
	nt_http_do("POST", nt_url(&a, "/v1/transactions"), body, strlen(body), "application/json",
		   &res);
	CHECK(nt_is_problem(&res, 503));
	CHECK(strstr(tu_str(res.json, "type"), "store-unavailable") != NULL);
	nt_http_result_free(&res);
	long st;
	json_t *doc;
	tu_http("POST", nt_url(&a, "/v1/plan"), EPYC_FIX, NULL, &st, &doc);
	CHECK_INT(st, 200);
	json_decref(doc);
	CHECK_MSG(tu_sh("diff -r '%1$s/snap/proc' '%2$s/proc' >&2 && diff -r '%1$s/snap/ethtool' "
			"'%2$s/ethtool' >&2 && cmp '%1$s/snap/sys/class/net/bond0/bonding/xmit_hash_policy' "
			"'%2$s/sys/class/net/bond0/bonding/xmit_hash_policy'", dir, root) == 0,
		  "files changed");
	nt_agent_stop(&a);
	tu_sh("rm -rf '%s'", dir);
}

/* Lines of the file at PATH containing NEEDLE. */
static int count_lines(const char *path, const char *needle)
{
	char line[4096];
	int n = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* A transaction of more steps than the log's budget per stage: the
 * first NT_TXN_LOG_STEPS step lines, then one line for the rest; the
 * rollback's stage the same; the history has every step. */
static void test_log_budget(void)
{
	char dir[PATH_MAX], root[PATH_MAX], log[PATH_MAX + 16], want[64], path[96];
	nt_agent a;
	long st = 0;
	json_t *doc = NULL;
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy %s", EPYC);
		return;
	}
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	nt_agent_opts ao = { .stderr_path = log };
	if (nt_agent_start_ext(&a, root, &ao) < 0) {
		CHECK_MSG(0, "agent did not start");
		goto out;
	}
	doc = apply(&a, "{\"name\":\"all5\",\"irq_affinity\":[{\"interface\":\"*\",\"cpus\":\"5\"}]}", 201);
	int n = (int)json_array_size(json_object_get(doc, "steps"));
	json_int_t id = json_integer_value(json_object_get(doc, "id"));
	json_decref(doc);
	CHECK_MSG(n > NT_TXN_LOG_STEPS, "only %d steps: the budget is not reached", n);
	snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback", (long long)id);
	tu_http("POST", nt_url(&a, path), "{}", NULL, &st, &doc);
	CHECK_INT(st, 201);
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), n);
	json_decref(doc);
	nt_agent_stop(&a);
	CHECK_INT(count_lines(log, " txn_step "), 2 * NT_TXN_LOG_STEPS);
	snprintf(want, sizeof(want), "not_logged=%d", n - NT_TXN_LOG_STEPS);
	CHECK_INT(count_lines(log, want), 2);
	snprintf(want, sizeof(want), "history=/v1/transactions/%lld\n", (long long)id);
	CHECK_INT(count_lines(log, want), 1);
out:
	tu_sh("rm -rf '%s'", dir);
}

/* --history-keep: the history holds the newest N transactions, older
 * ones answer 404 (and cannot be rolled back); a restart with a smaller N
 * cuts it at start. */
static void test_history_keep(void)
{
	char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8], body[256];
	const char *keep3[] = { "--history-keep", "3", NULL };
	const char *keep2[] = { "--history-keep", "2", NULL };
	nt_agent a;
	long st = 0;
	json_t *doc = NULL;
	int64_t ids[5] = { 0 };
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy %s", EPYC);
		return;
	}
	snprintf(state, sizeof(state), "%s/state", dir);
	if (nt_agent_start(&a, root, state, keep3) < 0) {
		CHECK_MSG(0, "agent did not start with --history-keep 3");
		goto out;
	}
	for (int i = 0; i < 5; i++) {
		snprintf(body, sizeof(body), "{\"name\":\"k\",\"sysctl\":{\"net.core.rmem_max\":\"%d\"}}",
			 4194304 + i);
		doc = apply(&a, body, 201);
		ids[i] = json_integer_value(json_object_get(doc, "id"));
		json_decref(doc);
	}
	tu_http("GET", nt_url(&a, "/v1/transactions"), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	CHECK_INT(json_integer_value(json_object_get(doc, "total")), 3);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(doc,
		"transactions"), 2), "id")), ids[2]);
	json_decref(doc);
	char path[96];
	snprintf(path, sizeof(path), "/v1/transactions/%lld", (long long)ids[1]);
	tu_http("GET", nt_url(&a, path), NULL, NULL, &st, &doc);
	CHECK_INT(st, 404);
	json_decref(doc);
	snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback", (long long)ids[0]);
	tu_http("POST", nt_url(&a, path), "{}", NULL, &st, &doc);
	CHECK_INT(st, 404);
	json_decref(doc);
	nt_agent_stop(&a);

	if (nt_agent_start(&a, root, state, keep2) < 0) {
		CHECK_MSG(0, "agent did not start with --history-keep 2");
		goto out;
	}
	tu_http("GET", nt_url(&a, "/v1/transactions"), NULL, NULL, &st, &doc);
	CHECK_INT(json_integer_value(json_object_get(doc, "total")), 2);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(doc,
		"transactions"), 0), "id")), ids[4]);
	json_decref(doc);
	nt_agent_stop(&a);
out:
	tu_sh("rm -rf '%s'", dir);
}

int main(void)
{
	if (access(X460, F_OK) != 0 || access(EPYC, F_OK) != 0)
		SKIP("fixtures x460-4node-8nic / epyc7713-2node-bond are missing");
	if (access(NT_BIN, X_OK) != 0)
		SKIP("%s is not built", NT_BIN);
	test_x460();
	test_faults();
	test_epyc();
	test_epyc_fault();
	test_profiles_and_validation();
	test_sysctl_host_checks();
	test_rollback_pending();
	test_ring_finding_clears();
	test_store_unavailable();
	test_history_keep();
	test_log_budget();
	TEST_MAIN_END();
}
