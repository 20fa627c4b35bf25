/* SPDX-License-Identifier: Apache-2.0 */
/* Packet steering kinds (settings/rps.c, rfs.c, xps.c) on a copy of the
 * EPYC tree (128 CPUs, mlx5 ports with a queue per IRQ) and the x460 one
 * (single-queue tg3): their values as text, the profile sections'
 * validation with JSON paths (a queue beyond the NIC's, a CPU that does
 * not exist, a bad policy or flow count), the plan (IRQ affinity first,
 * XPS "irq" following the IRQ CPUs the same profile places, RPS "local"
 * leaving them out, the dependency said in the warnings), a transaction
 * applied and rolled back leaving every queue file byte for byte as it
 * was, and a step failed with the kernel's reason when it kept fewer RPS
 * CPUs than written (housekeeping CPUs). */
#include "diagnose/diagnose.h"
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

static void test_values(void)
{
	const nt_setting_kind *rps = nt_setting_find("rps_cpus"), *rfs = nt_setting_find("rps_flow_cnt"),
			      *xc = nt_setting_find("xps_cpus"), *xr = nt_setting_find("xps_rxqs");
	CHECK(rps && rfs && xc && xr);
	if (!rps || !rfs || !xc || !xr)
		return;
	nt_value v;
	CHECK_INT(rps->parse("0-3,8", &v), 0);
	CHECK_STR(nt_t_str(rps, &v), "0-3,8");
	CHECK_INT(rps->parse("", &v), 0);
	CHECK_STR(nt_t_str(rps, &v), "");
	CHECK(rps->parse("x", &v) < 0);
	CHECK_INT(rfs->parse("4096", &v), 0);
	CHECK_STR(nt_t_str(rfs, &v), "4096");
	CHECK(rfs->parse("-1", &v) < 0 && rfs->parse("", &v) < 0 && rfs->parse("12x", &v) < 0);
	CHECK(nt_t_equal(xr, "0-1", "0,1"));
	/* No event for these writes, but a channels change rebuilds the queues. */
	CHECK(nt_setting_changed_by_event("xps_cpus", NT_EVENT_ETHTOOL) &&
	      nt_setting_changed_by_event("rps_cpus", NT_EVENT_ETHTOOL) && !(rps->events & NT_SETTING_EVENT(NT_EVENT_LINK)));
	/* After channels and IRQ affinity. */
	CHECK(rps->order > nt_setting_find("channels")->order && rps->order > nt_setting_irq_affinity.order);
}

static void test_validation(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	int r = nt_t_plan(ctx, t,
			"{\"name\":\"x\",\"rps\":[{\"interface\":\"enos0\",\"cpus\":\"200\"},"
			"{\"interface\":\"enos0\",\"policy\":\"far\",\"flow_cnt\":1000},"
			"{\"interface\":\"enos0\",\"cpus\":\"1\",\"queues\":\"0-999\"},"
			"{\"interface\":\"enos0\",\"cpus\":\"1\",\"policy\":\"local\"},{\"interface\":\"nosuch\",\"cpus\":\"1\"}],"
			"\"xps\":[{\"interface\":\"enos0\",\"policy\":\"all\"},{\"interface\":\"enos0\",\"cpus\":\"0\",\"queues\":\"x\"},"
			"{\"interface\":\"enos0\",\"policy\":\"irq\",\"bogus\":1}]}",
			&plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK_MSG(has_error(errors, "$.rps[0].cpus", "CPU 200 does not exist"), "%s", json_dumps(errors, 0));
	CHECK(has_error(errors, "$.rps[1].policy", "unknown policy 'far'"));
	CHECK(has_error(errors, "$.rps[1].flow_cnt", "power of two"));
	CHECK(has_error(errors, "$.rps[2].queues", "beyond them"));
	CHECK(has_error(errors, "$.rps[3]", "exactly one of"));
	CHECK(has_error(errors, "$.rps[4].interface", "no such interface"));
	CHECK(has_error(errors, "$.xps[0].policy", "unknown policy 'all'"));
	CHECK(has_error(errors, "$.xps[1].queues", "not a list of queue numbers"));
	CHECK(has_error(errors, "$.xps[2].bogus", "unknown field"));
	json_decref(errors);
}

#define PROFILE                                                                                            \
	"{\"name\":\"steer\",\"irq_affinity\":[{\"interface\":\"enos0\",\"policy\":\"local\"}],"              \
	"\"rps\":[{\"interface\":\"enos0\",\"policy\":\"local-node\",\"exclude_cpus\":\"0\",\"flow_cnt\":4096}," \
	"{\"interface\":\"enos1\",\"cpus\":\"4-5\",\"queues\":\"0-1\"}],"                                     \
	"\"xps\":[{\"interface\":\"enos0\",\"policy\":\"irq\"},{\"interface\":\"enos1\",\"policy\":\"rxqs\","  \
	"\"queues\":\"0-2\"}]}"

static void test_plan(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	int pr = nt_t_plan(ctx, t, PROFILE, &plan, &errors);
	CHECK_MSG(pr == 0, "plan: %d %s", pr, json_dumps(errors, 0));
	if (pr) {
		json_decref(errors);
		return;
	}
	json_decref(errors);
	json_t *doc = nt_plan_to_json(&plan, NULL);
	json_t *steps = json_object_get(doc, "steps");
	int irq_pos = -1, xps_pos = -1, pos = -1;
	const json_t *irq = step_find(steps, "irq_affinity", "102", &irq_pos);
	const json_t *xps = step_find(steps, "xps_cpus", "enos0/tx-1", &xps_pos);
	CHECK_MSG(irq && xps, "steps: %s", json_dumps(steps, 0));
	/* tx-1's IRQ is 102: XPS follows where this profile puts it. */
	if (irq && xps) {
		CHECK_STR(json_string_value(json_object_get(xps, "after")),
			  json_string_value(json_object_get(irq, "after")));
		CHECK_MSG(irq_pos < xps_pos, "irq_affinity step %d after xps step %d", irq_pos, xps_pos);
	}
	CHECK(warned(plan.warnings, "enos0: xps_cpus of"));
	CHECK(warned(plan.warnings, "this profile's irq_affinity steps place them"));
	/* local-node: node 0 of the EPYC (0-31,64-95) without CPU 0. */
	const json_t *rps = step_find(steps, "rps_cpus", "enos0/rx-3", &pos);
	CHECK(rps != NULL);
	if (rps)
		CHECK_STR(json_string_value(json_object_get(rps, "after")), "1-31,64-95");
	CHECK(pos > irq_pos);
	const json_t *flow = step_find(steps, "rps_flow_cnt", "enos0/rx-3", NULL);
	CHECK(flow && strcmp(json_string_value(json_object_get(flow, "after")), "4096") == 0);
	/* The host's rps_sock_flow_entries is 0: said, not set. */
	CHECK(warned(plan.warnings, "rps_sock_flow_entries is 0"));
	CHECK(step_find(steps, "rps_cpus", "enos1/rx-1", NULL) && !step_find(steps, "rps_cpus", "enos1/rx-2", NULL));
	const json_t *pair = step_find(steps, "xps_rxqs", "enos1/tx-2", NULL);
	CHECK(pair && strcmp(json_string_value(json_object_get(pair, "after")), "2") == 0);
	json_decref(doc);
	nt_plan_free(&plan);
}

static const char *const files[] = {
	"sys/class/net/enos0/queues/rx-3/rps_cpus", "sys/class/net/enos0/queues/rx-3/rps_flow_cnt",
	"sys/class/net/enos0/queues/tx-1/xps_cpus", "sys/class/net/enos1/queues/tx-2/xps_rxqs",
	"sys/class/net/enos1/queues/rx-0/rps_cpus", NULL
};

static void test_transaction(const nt_ctx *ctx)
{
	char *orig[8] = { 0 };
	nt_txn_engine *e = NULL;
	for (int i = 0; files[i]; i++)
		orig[i] = tree_read(root, files[i]);
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e)
		goto out;
	json_t *profile = json_loads(PROFILE, 0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome o = { 0 };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	int64_t id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	char *now = tree_read(root, "sys/class/net/enos1/queues/rx-0/rps_cpus");
	CHECK_STR(now, "00000000,00000000,00000000,00000030\n");
	free(now);
	now = tree_read(root, "sys/class/net/enos1/queues/tx-2/xps_rxqs");
	CHECK_MSG(now && strstr(now, "4\n"), "xps_rxqs reads '%s'", now ? now : "?");
	free(now);
	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
	for (int i = 0; files[i]; i++) {
		now = tree_read(root, files[i]);
		CHECK_MSG(now && orig[i] && strcmp(now, orig[i]) == 0, "%s after the rollback: '%s', was '%s'",
			  files[i], now ? now : "?", orig[i] ? orig[i] : "?");
		free(now);
	}

	/* The kernel keeps only housekeeping CPUs: the step fails and says why,
	 * and the transaction is undone. */
	tree_write(root, "sys/devices/system/cpu/isolated", "5\n");
	json_decref(profile);
	profile = json_loads("{\"name\":\"iso\",\"rps\":[{\"interface\":\"enos1\",\"cpus\":\"4-5\",\"queues\":\"0\"}]}",
			     0, NULL);
	req.profile = profile;
	int r = nt_txn_apply(e, &req, &o);
	char *text = o.doc ? json_dumps(o.doc, 0) : NULL;
	CHECK_MSG(r != 0 || (text && strstr(text, "rolled_back")), "apply returned %d: %s", r, text ? text : "");
	CHECK_MSG(text && strstr(text, "the kernel kept '4' of '4-5'") && strstr(text, "housekeeping"), "%s",
		  text ? text : o.message);
	free(text);
	nt_txn_outcome_free(&o);
	now = tree_read(root, "sys/class/net/enos1/queues/rx-0/rps_cpus");
	CHECK_MSG(now && orig[4] && strcmp(now, orig[4]) == 0, "rx-0 after the failed step: %s", now ? now : "?");
	free(now);
	json_decref(profile);
out:
	nt_txn_engine_close(e);
	for (int i = 0; files[i]; i++)
		free(orig[i]);
}

/* The steering findings, each with the fix it names; the fix profile of
 * the whole diagnosis plans on the host. */
static void test_diagnose(const nt_ctx *ctx)
{
	nt_topology *t = NULL;
	char path[128];
	snprintf(path, sizeof(path), "%s/x460-4node-8nic", NT_FIXTURES);
	nt_ctx x;
	CHECK_INT(nt_ctx_init(&x, path), 0);
	CHECK_INT(nt_topology_read(&x, &t), 0);
	json_t *doc = t ? nt_diagnose(t, NULL) : NULL;
	const json_t *f = finding(doc, "rps-missing", "eth2");
	CHECK(f && strcmp(json_string_value(json_object_get(f, "severity")), "warning") == 0);
	CHECK(f && json_integer_value(json_object_get(json_object_get(f, "evidence"), "node_cpus")) == 16);
	CHECK(f && strcmp(json_string_value(json_object_get(
			  json_array_get(json_object_get(json_object_get(f, "fix"), "rps"), 0), "policy")),
			  "local") == 0);
	/* Single-queue NICs have no XPS to set. */
	CHECK(!finding(doc, "xps-unset", "eth2"));
	json_t *fixp = doc ? nt_diagnose_fix_profile(doc, "fixes") : NULL;
	nt_plan plan;
	json_t *errors = json_array();
	CHECK_MSG(fixp && json_array_size(json_object_get(fixp, "rps")) == 8, "fix profile: %s",
		  fixp ? json_dumps(fixp, 0) : "?");
	int r = fixp ? nt_plan_build(&x, NULL, t, fixp, &plan, errors) : -1;
	CHECK_MSG(r == 0, "the fix profile does not plan: %s", json_dumps(errors, 0));
	if (r == 0) {
		json_t *pd = nt_plan_to_json(&plan, NULL);
		json_t *s = (json_t *)step_find(json_object_get(pd, "steps"), "rps_cpus", "eth2/rx-0", NULL);
		/* node 1 (16-31) without the CPU its IRQ goes to. */
		CHECK_MSG(s != NULL, "%s", json_dumps(pd, 0));
		json_decref(pd);
		nt_plan_free(&plan);
	}
	json_decref(errors);
	json_decref(fixp);
	json_decref(doc);
	nt_topology_free(t);

	/* EPYC: 16 queues a port, no XPS; then XPS off its IRQ's CPUs, and RPS
	 * on CPUs an application has. */
	t = NULL;
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	doc = t ? nt_diagnose(t, NULL) : NULL;
	CHECK(finding(doc, "xps-unset", "enos1") != NULL);
	f = finding(doc, "rps-missing", "enos1");
	CHECK(f && strcmp(json_string_value(json_object_get(f, "severity")), "info") == 0);
	json_decref(doc);
	nt_topology_free(t);
	tree_write(root, "sys/class/net/enos1/queues/tx-1/xps_cpus", "00000000,00000000,00000000,00000100\n");
	tree_write(root, "sys/class/net/enos1/queues/rx-0/rps_cpus", "00000000,00000000,00000000,000000f0\n");
	json_t *reserved = json_pack("{s:s}", "enos1", "6-9");
	nt_diag_options opt = { .rtt_ms = 10, .reserved = reserved };
	t = NULL;
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	doc = t ? nt_diagnose(t, &opt) : NULL;
	CHECK(!finding(doc, "xps-unset", "enos1"));
	f = finding(doc, "xps-irq-mismatch", "enos1");
	CHECK_MSG(f != NULL, "%s", json_dumps(doc, 0));
	CHECK(f && json_array_size(json_object_get(json_object_get(f, "evidence"), "queues")) == 1);
	f = finding(doc, "rps-reserved-cpus", "enos1");
	CHECK(f && strcmp(json_string_value(json_object_get(json_object_get(f, "evidence"), "overlap")), "6-7") == 0);
	CHECK(f && strcmp(json_string_value(json_object_get(
			  json_array_get(json_object_get(json_object_get(f, "fix"), "rps"), 0), "cpus")),
			  "4-5") == 0);
	CHECK(!finding(doc, "rps-missing", "enos1"));
	json_decref(doc);
	json_decref(reserved);
	nt_topology_free(t);
	tree_write(root, "sys/class/net/enos1/queues/tx-1/xps_cpus", "00000000,00000000,00000000,00000000\n");
	tree_write(root, "sys/class/net/enos1/queues/rx-0/rps_cpus", "00000000,00000000,00000000,00000000\n");
}

int main(void)
{
	char cmd[512];
	nt_ctx ctx;
	nt_topology *t = NULL;

	test_values();
	snprintf(root, sizeof(root), "/tmp/nt-steer-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-steer-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (t) {
		test_validation(&ctx, t);
		test_plan(&ctx, t);
		nt_topology_free(t);
		test_transaction(&ctx);
		test_diagnose(&ctx);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
