/* SPDX-License-Identifier: Apache-2.0 */
/* Flow control as a kind of setting, on a fixture tree where one NIC has
 * pause settings and the others none: its values as text, its section's
 * validation with JSON paths, a NIC without pause refused, a glob leaving
 * such NICs out, the per-NIC report, and a transaction applied and rolled
 * back to what the fixture said. */
#include "engine/plan.h"
#include "engine/txn.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "settings/setting.h"
#include "setting_util.h"
#include "plan_util.h"
#include "harness.h"
#include "tree_files.h"
#include "test_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[64], state[64];

static void test_values(const nt_setting_kind *k)
{
	nt_value v;
	CHECK_INT(k->parse("autoneg=off,rx=on,tx=on", &v), 0);
	CHECK_STR(nt_t_str(k, &v), "autoneg=off,rx=on,tx=on");
	CHECK_INT(k->parse("tx=off,rx=on", &v), 0);
	CHECK_STR(nt_t_str(k, &v), "rx=on,tx=off");
	const char *bad[] = { "", "rx", "rx=", "rx=1", "rx=on,rx=off", "rx=on,", "speed=on", NULL };
	for (int i = 0; bad[i]; i++)
		CHECK_MSG(k->parse(bad[i], &v) == NT_EPARSE, "'%s' parsed", bad[i]);
	CHECK(nt_t_equal(k, "rx=on,tx=off", "tx=off,rx=on"));
	CHECK(!nt_t_equal(k, "rx=on,tx=off", "rx=on,tx=on"));
	CHECK(!nt_t_equal(k, "rx=on", "rx=on,tx=on"));
	CHECK_INT(k->order, 36);
	CHECK(nt_setting_changed_by_event("pause", NT_EVENT_ETHTOOL));
}

static void test_plan(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	int r = nt_t_plan(ctx, t,
			"{\"name\":\"x\",\"pause\":[{\"interface\":\"enos0\",\"rx\":1,\"speed\":true},"
			"{\"interface\":\"enos0\"},{\"interface\":\"nosuch\",\"tx\":true}]}",
			&plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.pause[0].rx", "true or false"));
	CHECK(has_error(errors, "$.pause[0].speed", "unknown field"));
	CHECK(has_error(errors, "$.pause[1]", "at least one of autoneg, rx, tx"));
	CHECK(has_error(errors, "$.pause[2].interface", "no such interface 'nosuch'"));
	json_decref(errors);

	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"pause\":[{\"interface\":\"enos1\",\"rx\":true}]}", &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.pause[0]", "enos1 has no flow control (pause) settings"));
	json_decref(errors);

	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"pause\":[{\"interface\":\"enos*\",\"tx\":false}]}", &plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, JSON_COMPACT));
	json_decref(errors);
	if (r != 0)
		return;
	CHECK(warned(plan.warnings, "enos1: no flow control (pause) settings; left out"));
	CHECK_INT(plan.nsteps, 1);
	if (plan.nsteps == 1) {
		CHECK_STR(plan.steps[0].kind->name, "pause");
		CHECK_STR(nt_t_str(plan.steps[0].kind, &plan.steps[0].before), "autoneg=off,rx=on,tx=on");
		CHECK_STR(nt_t_str(plan.steps[0].kind, &plan.steps[0].after), "autoneg=off,rx=on,tx=off");
	}
	nt_plan_free(&plan);
}

static void test_report(const nt_ctx *ctx, const nt_topology *t)
{
	const nt_nic *n0 = nt_topology_nic(t, "enos0"), *n1 = nt_topology_nic(t, "enos1");
	CHECK(n0 && n1);
	if (!n0 || !n1)
		return;
	json_t *doc = json_object();
	CHECK_INT(nt_setting_report_detail(ctx, NULL, n0, doc), 0);
	json_t *p = json_object_get(doc, "pause");
	CHECK(json_is_false(json_object_get(p, "autoneg")));
	CHECK(json_is_true(json_object_get(p, "rx")));
	json_decref(doc);
	doc = json_object();
	CHECK_INT(nt_setting_report_detail(ctx, NULL, n1, doc), 0);
	CHECK(json_is_null(json_object_get(doc, "pause")));
	json_decref(doc);
}

static void test_transaction(const nt_ctx *ctx)
{
	char *orig = tree_read(root, "ethtool/enos0.json");
	nt_txn_engine *e = NULL;
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e || !orig) {
		free(orig);
		nt_txn_engine_close(e);
		return;
	}
	json_t *profile = json_loads("{\"name\":\"p\",\"pause\":[{\"interface\":\"enos0\",\"rx\":false,\"tx\":false}]}",
				     0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome out = { 0 };
	CHECK_INT(nt_txn_apply(e, &req, &out), 0);
	CHECK_STR(json_string_value(json_object_get(out.doc, "status")), "applied");
	int64_t id = json_integer_value(json_object_get(out.doc, "id"));
	nt_txn_outcome_free(&out);
	nt_value now;
	CHECK_INT(nt_setting_pause.read(ctx, NULL, "enos0", &now), 0);
	CHECK_STR(nt_t_str(&nt_setting_pause, &now), "autoneg=off,rx=off,tx=off");
	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &out), 0);
	CHECK_STR(json_string_value(json_object_get(out.doc, "status")), "applied");
	nt_txn_outcome_free(&out);
	char *after = tree_read(root, "ethtool/enos0.json");
	json_t *a = after ? json_loads(after, 0, NULL) : NULL, *o = json_loads(orig, 0, NULL);
	CHECK_MSG(a && o && json_equal(a, o), "enos0.json after the rollback: %s", after ? after : "?");
	json_decref(a);
	json_decref(o);
	free(after);
	free(orig);
	json_decref(profile);
	nt_txn_engine_close(e);
}

int main(void)
{
	char cmd[512], path[256];
	nt_ctx ctx;
	nt_topology *t = NULL;

	test_values(&nt_setting_pause);
	snprintf(root, sizeof(root), "/tmp/nt-pause-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-pause-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/ethtool/enos0.json", root);
	json_t *doc = json_load_file(path, 0, NULL);
	CHECK(doc != NULL);
	json_object_set_new(doc, "pause", json_pack("{s:b,s:b,s:b}", "autoneg", 0, "rx", 1, "tx", 1));
	CHECK_INT(json_dump_file(doc, path, JSON_COMPACT), 0);
	json_decref(doc);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (t) {
		test_plan(&ctx, t);
		test_report(&ctx, t);
		nt_topology_free(t);
		test_transaction(&ctx);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
