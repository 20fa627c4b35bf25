/* SPDX-License-Identifier: Apache-2.0 */
/* A link's MTU, queue length and root qdisc as kinds of setting, on a
 * fixture tree of a host whose four ports are slaves of bond0: the qdisc's
 * text form; the MTU given to the bond and refused on a slave named
 * outright (a glob leaves the slaves out), and refused outside the range
 * the fixture gives (with the kernel's own words when an apply slips
 * past); the per-NIC report; a transaction applied and rolled back with
 * the sysfs files byte for byte what they were; the root qdisc a fixture
 * emulates (the kernel's default, mq refused on one queue, a foreign root
 * kept unless replaced, plan -> apply -> re-plan empty -> rollback to the
 * exact before-value); the link findings of diagnose/link.c and their
 * fixes. */
#include "diagnose/diagnose.h"
#include "engine/plan.h"
#include "engine/txn.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "settings/setting.h"
#include "plan_util.h"
#include "setting_util.h"
#include "harness.h"
#include "tree_files.h"
#include "test_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[64], state[64];

/* ROOT/ethtool/IFACE.json with a "link" section added: the MTU range. */
static void give_link(const char *iface, int max_mtu)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL);
	if (!doc)
		doc = json_object();
	json_object_set_new(doc, "link", json_pack("{s:i, s:i}", "min_mtu", 68, "max_mtu", max_mtu));
	CHECK_INT(json_dump_file(doc, path, JSON_COMPACT), 0);
	json_decref(doc);
}

static void test_qdisc_values(void)
{
	const nt_setting_kind *k = nt_setting_find("qdisc");
	nt_value v;
	CHECK(k != NULL);
	if (!k)
		return;
	static const char *const same[][2] = {
		{ "default", "default" },
		{ "fq", "fq" },
		{ "fq maxrate=23000000000 flow_limit=50", "fq flow_limit=50 maxrate=23000000000" },
		{ "fq limit=20000", "fq limit=20000" },
		{ "fq_codel", "fq_codel" },
		{ "mq", "mq" },
		{ "mq fq maxrate=8000", "mq fq maxrate=8000" },
		{ "mq *", "mq *" },
		{ "htb", "htb" },
	};
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		CHECK_MSG(k->parse(same[i][0], &v) == 0, "'%s' did not parse", same[i][0]);
		CHECK_STR(nt_t_str(k, &v), same[i][1]);
	}
	CHECK(nt_t_equal(k, "fq maxrate=8000 flow_limit=5", "fq flow_limit=5 maxrate=8000"));
	CHECK(!nt_t_equal(k, "fq maxrate=8000", "fq"));
	CHECK(!nt_t_equal(k, "mq fq", "mq"));
	/* maxrate is kept in bytes per second in 32 bits by the kernel. */
	const char *bad[] = { "", "default fq", "fq maxrate=7", "fq maxrate=34359738360", "fq maxrate=x",
			      "fq quantum=3000", "fq_codel limit=5", "fq limit=1 limit=2", "mq fq bogus",
			      "h/tb", "fq  flow_limit=-1", NULL };
	for (int i = 0; bad[i]; i++)
		CHECK_MSG(k->parse(bad[i], &v) == NT_EPARSE, "'%s' parsed", bad[i]);
}

static void test_validation(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	int r = nt_t_plan(ctx, t,
			"{\"name\":\"x\",\"mtu\":[{\"interface\":\"enos0\",\"mtu\":4000},{\"interface\":\"bond0\",\"mtu\":9216},"
			"{\"interface\":\"bond0\",\"mtu\":\"big\"},{\"interface\":\"bond0\",\"mtu\":67},{\"interface\":\"bond0\"},"
			"{\"interface\":\"bond0\",\"mtu\":1500,\"speed\":1}],"
			"\"txqueuelen\":[{\"interface\":\"nosuch\",\"txqueuelen\":1},{\"interface\":\"enos0\",\"txqueuelen\":-1}],"
			"\"qdisc\":[{\"interface\":\"enos0\",\"qdisc\":\"htb\"},{\"interface\":\"enos0\",\"qdisc\":\"fq\",\"maxrate\":\"40gbit\"},"
			"{\"interface\":\"enos0\",\"qdisc\":\"fq_codel\",\"flow_limit\":5},{\"interface\":\"enos0\",\"qdisc\":\"fq\",\"child\":\"fq\"},"
			"{\"interface\":\"enos0\",\"qdisc\":\"fq\",\"replace\":1}]}",
			&plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.mtu[0].interface", "slave of bond bond0"));
	CHECK(has_error(errors, "$.mtu[1].mtu", "range 68..9000"));
	CHECK(has_error(errors, "$.mtu[2].mtu", "integer"));
	CHECK(has_error(errors, "$.mtu[3].mtu", "outside 68..65535"));
	CHECK(has_error(errors, "$.mtu[4]", "'mtu' is required"));
	CHECK(has_error(errors, "$.mtu[5].speed", ""));
	CHECK(has_error(errors, "$.txqueuelen[0].interface", "nosuch"));
	CHECK(has_error(errors, "$.txqueuelen[1].txqueuelen", "outside"));
	CHECK(has_error(errors, "$.qdisc[0].qdisc", "\"fq\", \"fq_codel\", \"mq\" or \"default\""));
	CHECK(has_error(errors, "$.qdisc[1].maxrate", "34gbit"));
	CHECK(has_error(errors, "$.qdisc[2].flow_limit", "fq parameter"));
	CHECK(has_error(errors, "$.qdisc[3].child", "\"mq\" only"));
	CHECK(has_error(errors, "$.qdisc[4].replace", "true or false"));
	CHECK_MSG(json_array_size(errors) == 13, "%s", json_dumps(errors, JSON_COMPACT));
	json_decref(errors);

	/* The fixture's lo has one transmit queue, as the kernel's: no mq. */
	r = nt_t_plan(ctx, t, "{\"name\":\"q\",\"qdisc\":[{\"interface\":\"lo\",\"qdisc\":\"mq\"}]}", &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK_MSG(has_error(errors, "$.qdisc[0]", "1 transmit queue: mq needs a multi-queue device"), "%s",
		  json_dumps(errors, JSON_COMPACT));
	json_decref(errors);
}

static void test_plan(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	/* A glob over the bond and its slaves: the bond alone. */
	int r = nt_t_plan(ctx, t, "{\"name\":\"m\",\"mtu\":[{\"interface\":\"*\",\"mtu\":4000}]}", &plan, &errors);
	CHECK_MSG(r == 0, "%s", json_dumps(errors, JSON_COMPACT));
	json_decref(errors);
	if (r < 0)
		return;
	int bond = 0, others = 0;
	for (int i = 0; i < plan.nsteps; i++) {
		CHECK_STR(plan.steps[i].kind->name, "mtu");
		if (strcmp(plan.steps[i].target, "bond0") == 0) {
			bond++;
			CHECK_STR(nt_t_str(plan.steps[i].kind, &plan.steps[i].before), "9000");
			CHECK_STR(nt_t_str(plan.steps[i].kind, &plan.steps[i].after), "4000");
		} else if (strncmp(plan.steps[i].target, "enos", 4) == 0) {
			others++;
		}
	}
	CHECK_INT(bond, 1);
	CHECK_INT(others, 0);
	char *w = json_dumps(plan.warnings, JSON_COMPACT);
	CHECK_MSG(w && strstr(w, "enos0: a slave of bond bond0") && strstr(w, "confirm_timeout_s"), "%s", w);
	free(w);
	nt_plan_free(&plan);
}

static void test_report(const nt_topology *t)
{
	json_t *doc = nt_topology_to_json(t);
	size_t i;
	json_t *n;
	int seen = 0;
	json_array_foreach(json_object_get(doc, "nics"), i, n) {
		if (strcmp(json_string_value(json_object_get(n, "name")), "bond0") != 0)
			continue;
		seen++;
		CHECK_INT(json_integer_value(json_object_get(n, "mtu_min")), 68);
		CHECK_INT(json_integer_value(json_object_get(n, "mtu_max")), 9000);
		CHECK_INT(json_integer_value(json_object_get(n, "txqueuelen")), 1000);
		/* A bond is IFF_NO_QUEUE: the kernel gives it noqueue. */
		CHECK_STR(json_string_value(json_object_get(n, "qdisc")), "default");
		CHECK_STR(json_string_value(json_object_get(n, "qdisc_kinds")), "noqueue");
	}
	CHECK_INT(seen, 1);
	/* A NIC of 32 transmit queues: mq of net.core.default_qdisc (fq here). */
	json_array_foreach(json_object_get(doc, "nics"), i, n) {
		if (strcmp(json_string_value(json_object_get(n, "name")), "enos0") != 0)
			continue;
		seen++;
		CHECK_STR(json_string_value(json_object_get(n, "qdisc")), "default");
		CHECK_STR(json_string_value(json_object_get(n, "qdisc_kinds")), "mq fq");
	}
	CHECK_INT(seen, 2);
	json_decref(doc);
}

static void test_fixture_refusal(const nt_ctx *ctx)
{
	const nt_setting_kind *k = nt_setting_find("mtu");
	nt_value v = nt_t_val(k, "9216");
	char err[256] = "";
	/* Past validation, the kernel (here its fixture) refuses with its words. */
	CHECK_INT(k->apply(ctx, NULL, "bond0", &v, err, sizeof(err)), -EINVAL);
	CHECK_MSG(strstr(err, "mtu greater than device maximum") != NULL, "%s", err);
	char *mtu = tree_read(root, "sys/class/net/bond0/mtu");
	CHECK_STR(mtu, "9000\n");
	free(mtu);
}

/* PROFILE applied by E, which must say "applied". Returns its id. */
static int64_t txn_apply(nt_txn_engine *e, json_t *profile)
{
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome o = { 0 };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	int64_t id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	return id;
}

/* Transaction ID rolled back by E, which must say "applied". */
static void txn_rollback(nt_txn_engine *e, int64_t id)
{
	nt_txn_request back = { .client = "test", .identity = "" };
	nt_txn_outcome o = { 0 };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
}

static void test_transaction(const nt_ctx *ctx)
{
	char *mtu0 = tree_read(root, "sys/class/net/bond0/mtu");
	char *q0 = tree_read(root, "sys/class/net/enos1/tx_queue_len");
	nt_txn_engine *e = NULL;
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	json_t *profile = json_loads("{\"name\":\"l\",\"mtu\":[{\"interface\":\"bond0\",\"mtu\":4000}],"
				     "\"txqueuelen\":[{\"interface\":\"enos1\",\"txqueuelen\":10000}]}",
				     0, NULL);
	if (!e || !mtu0 || !q0 || !profile)
		goto out;
	int64_t id = txn_apply(e, profile);
	char *now = tree_read(root, "sys/class/net/bond0/mtu");
	CHECK_STR(now, "4000\n");
	free(now);
	now = tree_read(root, "sys/class/net/enos1/tx_queue_len");
	CHECK_STR(now, "10000\n");
	free(now);
	txn_rollback(e, id);
	now = tree_read(root, "sys/class/net/bond0/mtu");
	CHECK_STR(now, mtu0);
	free(now);
	now = tree_read(root, "sys/class/net/enos1/tx_queue_len");
	CHECK_STR(now, q0);
	free(now);
out:
	json_decref(profile);
	free(mtu0);
	free(q0);
	nt_txn_engine_close(e);
}

static json_t *ethtool_doc(const char *iface)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	return json_load_file(path, 0, NULL);
}

static const char *root_qdisc(const nt_ctx *ctx, const char *iface, char *buf, size_t size)
{
	const nt_setting_kind *k = nt_setting_find("qdisc");
	nt_value v;
	if (k->read(ctx, NULL, iface, &v) < 0 || k->format(&v, buf, size) < 0)
		snprintf(buf, size, "(unreadable)");
	return buf;
}

/* The qdisc on a fixture as on a live host: enos2 starts with a root of
 * its own (fq_codel), enos0 with the kernel's default; a profile makes
 * them mq of fq paced at 23gbit and fq; the plan again is empty; the
 * rollback puts back fq_codel and the default, the files as they were. */
static void test_qdisc_transaction(const nt_ctx *ctx)
{
	char buf[NT_VALUE_MAX];
	json_t *e2 = ethtool_doc("enos2");
	json_object_set_new(e2, "qdisc", json_pack("{s:s}", "kind", "fq_codel"));
	char path[256];
	snprintf(path, sizeof(path), "%s/ethtool/enos2.json", root);
	CHECK_INT(json_dump_file(e2, path, JSON_COMPACT), 0);
	json_t *e0 = ethtool_doc("enos0");
	CHECK(e0 != NULL && json_object_get(e0, "qdisc") == NULL);
	CHECK_STR(root_qdisc(ctx, "enos2", buf, sizeof(buf)), "fq_codel");
	CHECK_STR(root_qdisc(ctx, "enos0", buf, sizeof(buf)), "default");

	/* What the kernel refuses, the fixture refuses, the file unchanged. */
	const nt_setting_kind *k = nt_setting_find("qdisc");
	nt_value bad = nt_t_val(k, "mq sfb");
	char err[256] = "";
	CHECK_INT(k->apply(ctx, NULL, "enos0", &bad, err, sizeof(err)), -ENOENT);
	CHECK_MSG(strstr(err, "Specified qdisc kind is unknown") != NULL, "%s", err);
	json_t *same = ethtool_doc("enos0");
	CHECK(json_equal(same, e0));
	json_decref(same);

	nt_txn_engine *e = NULL;
	nt_topology *t = NULL;
	nt_plan plan;
	json_t *errors = NULL;
	const char *text = "{\"name\":\"q\",\"qdisc\":[{\"interface\":\"enos0\",\"qdisc\":\"mq\",\"child\":\"fq\","
			   "\"maxrate\":\"23gbit\"},{\"interface\":\"enos2\",\"qdisc\":\"fq\",\"flow_limit\":200}]}";
	json_t *profile = json_loads(text, 0, NULL);
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e || !profile)
		goto out;
	int64_t id = txn_apply(e, profile);
	CHECK_STR(root_qdisc(ctx, "enos0", buf, sizeof(buf)), "mq fq maxrate=23000000000");
	CHECK_STR(root_qdisc(ctx, "enos2", buf, sizeof(buf)), "fq flow_limit=200");
	json_t *now = ethtool_doc("enos0");
	char *q = json_dumps(json_object_get(now, "qdisc"), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(q, "{\"children\":\"fq\",\"children_default\":false,\"kind\":\"mq\",\"maxrate\":2875000000}");
	free(q);
	json_decref(now);

	/* Applied: planned again, nothing is left to do. */
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	if (t) {
		int r = nt_t_plan(ctx, t, text, &plan, &errors);
		CHECK_MSG(r == 0, "%s", json_dumps(errors, JSON_COMPACT));
		if (r == 0) {
			CHECK_INT(plan.nsteps, 0);
			nt_plan_free(&plan);
		}
		json_decref(errors);
		nt_topology_free(t);
	}

	txn_rollback(e, id);
	CHECK_STR(root_qdisc(ctx, "enos2", buf, sizeof(buf)), "fq_codel");
	CHECK_STR(root_qdisc(ctx, "enos0", buf, sizeof(buf)), "default");
	now = ethtool_doc("enos0");
	CHECK(json_equal(now, e0));
	json_decref(now);
	now = ethtool_doc("enos2");
	CHECK(json_equal(now, e2));
	json_decref(now);
out:
	json_decref(profile);
	json_decref(e0);
	json_decref(e2);
	nt_txn_engine_close(e);
}

/* enos2's MTU (1500) is not its bond's (9000); the ports run at 25G with
 * a queue length of 1000; default_qdisc is fq and enos1 is made to report
 * an mq of pfifo_fast children, as a live NIC up before the sysctl was set
 * would. */
static void test_diagnose(const nt_ctx *ctx, nt_topology *t)
{
	for (int i = 0; i < t->nnics; i++)
		if (strcmp(t->nics[i].name, "enos1") == 0)
			json_object_set_new(t->nics[i].reported, "qdisc_kinds", json_string("mq pfifo_fast"));
	json_t *doc = nt_diagnose(t, NULL);
	CHECK(doc != NULL);
	if (!doc)
		return;
	json_t *f = nt_t_finding(doc, "bond-mtu-mismatch", "bond0");
	char *fix = f ? json_dumps(json_object_get(f, "fix"), JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	CHECK_STR(fix, "{\"mtu\":[{\"interface\":\"enos2\",\"mtu\":9000}]}");
	free(fix);
	f = nt_t_finding(doc, "txqueuelen-small", "enos3");
	fix = f ? json_dumps(json_object_get(f, "fix"), JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	CHECK_STR(fix, "{\"txqueuelen\":[{\"interface\":\"enos3\",\"txqueuelen\":10000}]}");
	free(fix);
	CHECK(finding(doc, "txqueuelen-small", "bond0") == NULL);
	f = nt_t_finding(doc, "qdisc-default-stale", "enos1");
	fix = f ? json_dumps(json_object_get(f, "fix"), JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	CHECK_STR(fix, "{\"qdisc\":[{\"child\":\"fq\",\"interface\":\"enos1\",\"qdisc\":\"mq\"}]}");
	free(fix);
	CHECK(finding(doc, "qdisc-default-stale", "enos0") == NULL);
	/* The bond's fix is a valid profile: the slave may take its bond's MTU. */
	nt_plan plan;
	json_t *errors;
	int r = nt_t_plan(ctx, t, "{\"name\":\"f\",\"mtu\":[{\"interface\":\"enos2\",\"mtu\":9000}]}", &plan, &errors);
	CHECK_MSG(r == 0, "%s", json_dumps(errors, JSON_COMPACT));
	json_decref(errors);
	if (r == 0) {
		CHECK_INT(plan.nsteps, 1);
		CHECK_STR(nt_t_str(plan.steps[0].kind, &plan.steps[0].before), "1500");
		nt_plan_free(&plan);
	}
	json_decref(doc);
}

int main(void)
{
	char cmd[512];
	nt_ctx ctx;
	nt_topology *t = NULL;

	test_qdisc_values();
	snprintf(root, sizeof(root), "/tmp/nt-link-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-link-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	tree_write(root, "sys/class/net/enos2/mtu", "1500\n");
	tree_write(root, "proc/sys/net/core/default_qdisc", "fq\n");
	give_link("bond0", 9000);
	give_link("enos3", 9216);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (t) {
		test_report(t);
		test_validation(&ctx, t);
		test_plan(&ctx, t);
		test_diagnose(&ctx, t);
		nt_topology_free(t);
		test_fixture_refusal(&ctx);
		test_transaction(&ctx);
		test_qdisc_transaction(&ctx);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
