/* SPDX-License-Identifier: Apache-2.0 */
/* Interrupt coalescing as a kind of setting, on a fixture tree whose
 * ethtool files give two NICs coalescing parameters (enos1 without the
 * adaptive ones): its values as text, its profile section's validation,
 * the plan (only the fields the profile names change, a field the NIC
 * lacks is refused, a glob leaves NICs without coalescing out), the
 * topology report, and a transaction through the engine applied and
 * rolled back, with the fixture files saying what they said before. */
#include "engine/plan.h"
#include "engine/profile.h"
#include "engine/txn.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "settings/setting.h"
#include "setting_util.h"
#include "harness.h"
#include "plan_util.h"
#include "tree_files.h"
#include "test_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[64], state[64];

/* ROOT/ethtool/IFACE.json with a "coalesce" object added. */
static void give_coalesce(const char *iface, const char *coalesce)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL);
	CHECK_MSG(doc != NULL, "%s", path);
	if (!doc)
		return;
	json_object_set_new(doc, "coalesce", json_loads(coalesce, 0, NULL));
	CHECK_INT(json_dump_file(doc, path, JSON_COMPACT), 0);
	json_decref(doc);
}

static void test_values(const nt_setting_kind *k)
{
	nt_value v;
	char out[NT_VALUE_MAX];
	CHECK_INT(k->parse("rx_usecs=64,tx_usecs=8,rx_frames=0,tx_frames=32,adaptive_rx=on,adaptive_tx=off", &v), 0);
	CHECK_INT(k->format(&v, out, sizeof(out)), 0);
	CHECK_STR(out, "rx_usecs=64,tx_usecs=8,rx_frames=0,tx_frames=32,adaptive_rx=on,adaptive_tx=off");
	/* Only what the NIC reports is there; order of the text is the kind's. */
	CHECK_INT(k->parse("tx_usecs=3,rx_usecs=4", &v), 0);
	CHECK_INT(k->format(&v, out, sizeof(out)), 0);
	CHECK_STR(out, "rx_usecs=4,tx_usecs=3");
	CHECK_INT(k->parse("", &v), 0);
	CHECK_INT(v.f.present, 0);
	const char *bad[] = { "rx_usecs", "rx_usecs=", "rx_usecs=-1", "rx_usecs=4294967296", "adaptive_rx=1",
			      "bogus=1", "rx_usecs=1,rx_usecs=2", "rx_usecs=1x", NULL };
	for (int i = 0; bad[i]; i++)
		CHECK_MSG(k->parse(bad[i], &v) == NT_EPARSE, "'%s' parsed", bad[i]);
	CHECK(nt_t_equal(k, "rx_usecs=4,tx_usecs=3", "tx_usecs=3,rx_usecs=4"));
	CHECK(!nt_t_equal(k, "rx_usecs=4,tx_usecs=3", "rx_usecs=4,tx_usecs=2"));
	CHECK(!nt_t_equal(k, "rx_usecs=4", "rx_usecs=4,tx_usecs=3"));
}

static void test_validation(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	int r = nt_t_plan(ctx, t,
			"{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos0\",\"rx_usecs\":-1,\"adaptive_rx\":1},"
			"{\"interface\":\"enos0\",\"rx_frames\":\"many\",\"pkt_rate\":5},{\"interface\":\"enos0\"},"
			"{\"interface\":\"nosuch\",\"tx_usecs\":1},{\"rx_usecs\":1},\"enos0\"]}",
			&plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.coalesce[0].rx_usecs", "integer from 0 to 4294967295"));
	CHECK(has_error(errors, "$.coalesce[0].adaptive_rx", "true or false"));
	CHECK(has_error(errors, "$.coalesce[1].rx_frames", "integer from 0"));
	CHECK(has_error(errors, "$.coalesce[1].pkt_rate", "unknown field"));
	CHECK(has_error(errors, "$.coalesce[2]", "at least one of rx_usecs"));
	CHECK(has_error(errors, "$.coalesce[3].interface", "no such interface 'nosuch'"));
	CHECK(has_error(errors, "$.coalesce[4].interface", "'interface' is required"));
	CHECK(has_error(errors, "$.coalesce[5]", "must be an object"));
	json_decref(errors);

	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"coalesce\":{\"interface\":\"enos0\"}}", &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.coalesce", "must be an array"));
	json_decref(errors);

	/* enos1 has no adaptive coalescing; enos2 has no coalescing at all. */
	r = nt_t_plan(ctx, t,
		    "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos1\",\"rx_usecs\":5,\"adaptive_rx\":true},"
		    "{\"interface\":\"enos2\",\"rx_usecs\":5}]}",
		    &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.coalesce[0]", "enos1 does not support coalescing adaptive_rx (its driver "
						  "reports rx_usecs, tx_usecs, rx_frames, tx_frames)"));
	CHECK(has_error(errors, "$.coalesce[1]", "enos2: interrupt coalescing cannot be read"));
	json_decref(errors);
}

static void test_plan(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	/* The glob matches enos0..3: enos2 and enos3 have no coalescing and are
	 * left out with a warning; only the named fields change. */
	int r = nt_t_plan(ctx, t,
			"{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos*\",\"rx_usecs\":64}],"
			"\"rings\":[{\"interface\":\"enos0\",\"rx\":4096}]}",
			&plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, JSON_COMPACT));
	json_decref(errors);
	if (r != 0)
		return;
	CHECK(warned(plan.warnings, "enos2: no interrupt coalescing settings; left out"));
	CHECK(warned(plan.warnings, "enos3: no interrupt coalescing settings; left out"));
	CHECK_INT(plan.nsteps, 3);
	if (plan.nsteps == 3) {
		/* A NIC's queue settings together: enos0's rings, then its coalescing. */
		CHECK_STR(plan.steps[0].kind->name, "rings");
		CHECK_STR(plan.steps[1].kind->name, "coalesce");
		CHECK_STR(plan.steps[1].target, "enos0");
		CHECK_STR(nt_t_str(plan.steps[1].kind, &plan.steps[1].before),
			  "rx_usecs=8,tx_usecs=8,rx_frames=0,tx_frames=0,adaptive_rx=on,adaptive_tx=off");
		CHECK_STR(nt_t_str(plan.steps[1].kind, &plan.steps[1].after),
			  "rx_usecs=64,tx_usecs=8,rx_frames=0,tx_frames=0,adaptive_rx=on,adaptive_tx=off");
		CHECK_STR(plan.steps[2].target, "enos1");
		CHECK_STR(nt_t_str(plan.steps[2].kind, &plan.steps[2].after),
			  "rx_usecs=64,tx_usecs=16,rx_frames=4,tx_frames=4");
	}
	/* Coalescing does not reset the NIC: the one warning is for the rings. */
	CHECK(warned(plan.warnings, "enos0: changing rings or channels may reset the NIC"));
	CHECK(!warned(plan.warnings, "enos1: changing"));
	nt_plan_free(&plan);

	/* Already so: no step. */
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos0\",\"adaptive_rx\":true}]}", &plan,
		    &errors);
	CHECK_INT(r, 0);
	CHECK_INT(plan.nsteps, 0);
	nt_plan_free(&plan);
	json_decref(errors);
}

static void test_report(const nt_topology *t)
{
	json_t *doc = nt_topology_to_json(t);
	json_t *nics = json_object_get(doc, "nics");
	size_t i;
	json_t *n;
	int seen = 0;
	json_array_foreach(nics, i, n) {
		const char *name = json_string_value(json_object_get(n, "name"));
		json_t *c = json_object_get(n, "coalesce");
		if (strcmp(name, "enos0") == 0) {
			CHECK_INT(json_integer_value(json_object_get(c, "rx_usecs")), 8);
			CHECK(json_is_true(json_object_get(c, "adaptive_rx")));
			CHECK(json_is_false(json_object_get(c, "adaptive_tx")));
			seen++;
		} else if (strcmp(name, "enos1") == 0) {
			CHECK_INT(json_integer_value(json_object_get(c, "tx_usecs")), 16);
			CHECK(json_object_get(c, "adaptive_rx") == NULL);
			seen++;
		} else {
			CHECK_MSG(c == NULL, "%s reports coalescing", name);
		}
	}
	CHECK_INT(seen, 2);
	json_decref(doc);
}

/* Through the engine: the journal holds the values as text and reads them
 * back for the rollback. */
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
	json_t *profile = json_loads("{\"name\":\"c\",\"coalesce\":[{\"interface\":\"enos0\",\"rx_usecs\":100,"
				     "\"tx_frames\":32,\"adaptive_rx\":false}]}",
				     0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome out = { 0 };
	CHECK_INT(nt_txn_apply(e, &req, &out), 0);
	const char *status = json_string_value(json_object_get(out.doc, "status"));
	CHECK_STR(status, "applied");
	int64_t id = json_integer_value(json_object_get(out.doc, "id"));
	nt_value now;
	CHECK_INT(nt_setting_find("coalesce")->read(ctx, NULL, "enos0", &now), 0);
	CHECK_STR(nt_t_str(nt_setting_find("coalesce"), &now),
		  "rx_usecs=100,tx_usecs=8,rx_frames=0,tx_frames=32,adaptive_rx=off,adaptive_tx=off");
	nt_txn_outcome_free(&out);

	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &out), 0);
	CHECK_STR(json_string_value(json_object_get(out.doc, "status")), "applied");
	CHECK_INT(json_array_size(json_object_get(out.doc, "steps")), 1);
	nt_txn_outcome_free(&out);
	/* The file is rewritten as a whole, so compare what it says. */
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
	char cmd[512];
	nt_ctx ctx;
	nt_topology *t = NULL;
	const nt_setting_kind *k = nt_setting_find("coalesce");

	CHECK(k != NULL);
	if (!k)
		TEST_MAIN_END();
	test_values(k);
	snprintf(root, sizeof(root), "/tmp/nt-coal-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-coal-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	give_coalesce("enos0", "{\"rx_usecs\":8,\"tx_usecs\":8,\"rx_frames\":0,\"tx_frames\":0,"
			       "\"adaptive_rx\":1,\"adaptive_tx\":0}");
	give_coalesce("enos1", "{\"rx_usecs\":16,\"tx_usecs\":16,\"rx_frames\":4,\"tx_frames\":4}");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (t) {
		test_report(t);
		test_validation(&ctx, t);
		test_plan(&ctx, t);
		nt_topology_free(t);
		test_transaction(&ctx);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
