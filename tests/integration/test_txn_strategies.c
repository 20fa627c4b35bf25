/* SPDX-License-Identifier: Apache-2.0 */
/* Placement strategies applied through HTTP on a throw-away copy of the
 * Ceph node (docs/field-reports.md#host-ceph): ib0 "local" with
 * reserve_app_cpus, every other IRQ to housekeeping CPUs (other_irqs), the
 * transaction document carrying the reserved CPUs, then its rollback
 * leaving /proc byte-for-byte as before.
 * Also "local-node" on the x460 and the 422 of irqbalance "require-absent"
 * there (its irqbalance runs). */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"
#include "base/cpuset.h"

#define CEPH NT_FIXTURES "/ceph-2node-ib"
#define X460 NT_FIXTURES "/x460-4node-8nic"

#define CEPH_FIX "{\"name\":\"ceph-osd\",\"irq_affinity\":[{\"interface\":\"ib0\"," \
	"\"policy\":\"local\",\"exclude_cpus\":\"0-1\",\"reserve_app_cpus\":4}]," \
	"\"other_irqs\":{\"cpus\":\"0-1\"}}"

static void test_ceph(void)
{
	char dir[PATH_MAX], root[PATH_MAX], buf[256], rel[128], body[2048], path[64];
	nt_agent a;
	long st;
	json_t *doc;

	if (tu_copy(CEPH, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy %s", CEPH);
		return;
	}
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}

	/* The plan says which CPUs are kept for the application. */
	doc = tu_post(&a, "/v1/plan", CEPH_FIX, 200);
	const char *planned = json_string_value(json_object_get(json_object_get(doc, "reserved"), "ib0"));
	CHECK_MSG(planned != NULL, "plan without reserved.ib0: %s",
		  doc ? json_dumps(doc, JSON_COMPACT) : "");
	char reserved[64] = "";
	snprintf(reserved, sizeof(reserved), "%s", planned ? planned : "");
	json_decref(doc);

	snprintf(body, sizeof(body), "{\"profile\":%s}", CEPH_FIX);
	doc = tu_post(&a, "/v1/transactions", body, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	int64_t id = json_integer_value(json_object_get(doc, "id"));
	/* ib0's 9 IRQs and the 15 others. */
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 24);
	CHECK_STR(json_string_value(json_object_get(json_object_get(doc, "reserved"), "ib0")),
		  reserved);
	json_decref(doc);

	/* The stored document says the same. */
	snprintf(path, sizeof(path), "/v1/transactions/%lld", (long long)id);
	tu_http("GET", nt_url(&a, path), NULL, NULL, &st, &doc);
	CHECK_INT(st, 200);
	CHECK_STR(json_string_value(json_object_get(json_object_get(doc, "reserved"), "ib0")),
		  reserved);
	json_decref(doc);

	/* Node 0 = 0-13,28-41: four CPUs kept; ib0's IRQs on node 0, one CPU
	 * each, never 0-1 (excluded) nor a reserved one; the rest on 0-1. */
	nt_cpuset res;
	CHECK(nt_cpulist_parse(reserved, &res) == 0 && nt_cpuset_count(&res) == 4);
	for (int c = nt_cpuset_next(&res, 0); c >= 0; c = nt_cpuset_next(&res, c + 1))
		CHECK_MSG((c <= 13 || (c >= 28 && c <= 41)) && c > 1, "reserved CPU %d", c);
	for (int irq = 60; irq <= 68; irq++) {
		nt_cpuset s;
		snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", irq);
		tu_read(root, rel, buf, sizeof(buf));
		CHECK_MSG(nt_cpulist_parse(buf, &s) == 0 && nt_cpuset_count(&s) == 1, "IRQ %d: %s", irq,
			  buf);
		int c = nt_cpuset_next(&s, 0);
		CHECK_MSG((c <= 13 || (c >= 28 && c <= 41)) && c > 1 && !nt_cpuset_isset(&res, c),
			  "ib0 IRQ %d on CPU %d", irq, c);
	}
	const int others[] = { 0, 4, 8, 9, 35, 70, 71, 72, 73, 74, 80, 81, 82, 83, 84 };
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", others[i]);
		CHECK_STR(tu_read(root, rel, buf, sizeof(buf)), "0-1");
		/* and the mask file in the kernel's format (56 CPUs). */
		snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity", others[i]);
		CHECK_STR(tu_read(root, rel, buf, sizeof(buf)), "000000,00000003");
	}

	/* Roll it back: every file of /proc as it was. */
	snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback", (long long)id);
	doc = tu_post(&a, path, "{}", 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	CHECK_INT(json_integer_value(json_object_get(doc, "rollback_of")), id);
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 24);
	json_decref(doc);
	nt_agent_stop(&a);
	CHECK_MSG(tu_sh("diff -r '%s/snap/proc' '%s/proc' >&2", dir, root) == 0,
		  "/proc differs after the rollback");
	tu_sh("rm -rf '%s'", dir);
}

static void test_x460(void)
{
	char dir[PATH_MAX], root[PATH_MAX], buf[256], body[1024];
	nt_agent a;
	json_t *doc;

	if (tu_copy(X460, dir, sizeof(dir), root, sizeof(root)) < 0) {
		CHECK_MSG(0, "cannot copy %s", X460);
		return;
	}
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	/* irqbalance runs on the x460: require-absent refuses, 422 at $.irqbalance. */
	snprintf(body, sizeof(body), "{\"profile\":{\"name\":\"x\",\"irqbalance\":\"require-absent\","
		 "\"irq_affinity\":[{\"interface\":\"eth*\",\"policy\":\"local-node\"}]}}");
	doc = tu_post(&a, "/v1/transactions", body, 422);
	json_t *errs = json_object_get(doc, "errors");
	CHECK_MSG(json_array_size(errs) >= 1 &&
		  strcmp(tu_str(json_array_get(errs, 0), "path"), "$.irqbalance") == 0,
		  "errors: %s", doc ? json_dumps(doc, JSON_COMPACT) : "");
	json_decref(doc);
	CHECK_MSG(tu_sh("diff -r '%s/snap/proc' '%s/proc' >&2", dir, root) == 0,
		  "/proc changed by a refused transaction");

	/* local-node, irqbalance "ban": whole-node masks minus CPU 0 (the x460's
	 * own were 4-CPU masks, docs/field-reports.md#smp-affinity-mask), the
	 * ban left out with a warning (a fixture has no daemon). */
	snprintf(body, sizeof(body), "{\"profile\":{\"name\":\"x\",\"irqbalance\":\"ban\","
		 "\"irq_affinity\":[{\"interface\":\"eth*\",\"policy\":\"local-node\","
		 "\"exclude_cpus\":\"0\"}]}}");
	doc = tu_post(&a, "/v1/transactions", body, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	int64_t id = json_integer_value(json_object_get(doc, "id"));
	CHECK_INT(json_array_size(json_object_get(doc, "steps")), 8);
	char *warn = json_dumps(json_object_get(doc, "warnings"), 0);
	CHECK_MSG(warn && strstr(warn, "live host") != NULL, "warnings: %s", warn ? warn : "");
	free(warn);
	CHECK_INT(json_object_size(json_object_get(doc, "reserved")), 0);
	json_decref(doc);
	CHECK_STR(tu_read(root, "proc/irq/177/smp_affinity_list", buf, sizeof(buf)), "1-15");
	CHECK_STR(tu_read(root, "proc/irq/177/smp_affinity", buf, sizeof(buf)), "00000000,0000fffe");
	CHECK_STR(tu_read(root, "proc/irq/233/smp_affinity_list", buf, sizeof(buf)), "48-63");
	CHECK_STR(tu_read(root, "proc/irq/233/smp_affinity", buf, sizeof(buf)), "ffff0000,00000000");

	char path[64];
	snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback", (long long)id);
	doc = tu_post(&a, path, "{}", 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	json_decref(doc);
	nt_agent_stop(&a);
	CHECK_MSG(tu_sh("diff -r '%s/snap/proc' '%s/proc' >&2", dir, root) == 0,
		  "/proc differs after the rollback");
	tu_sh("rm -rf '%s'", dir);
}

int main(void)
{
	/* Shared helpers this test has no use for. */
	(void)tu_async_start;
	(void)tu_async_join;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	test_ceph();
	test_x460();
	curl_global_cleanup();
	TEST_MAIN_END();
}
