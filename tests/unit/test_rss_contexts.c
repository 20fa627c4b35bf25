/* SPDX-License-Identifier: Apache-2.0 */
/* RSS contexts (settings/rss.c "context", settings/flows.c "context",
 * kernel/rss.c and the fixture's "contexts") on a copy of the EPYC tree
 * whose enos2 has contexts and enos3 none: a rule into a context as text
 * and as the kernel's struct (FLOW_RSS, rss_context); the fixture made,
 * changed and deleted like the kernel (lowest free id, EBUSY while a rule
 * names it); a plan that makes a context before the rule into it; a
 * transaction applied, read back, reported, planned again with no step,
 * and rolled back to the byte (context deleted, rule gone); a context
 * that was there keeps living through a rollback with its table put back;
 * the 422s (no contexts, an unknown context, queues beyond the channels,
 * an id the kernel would not give, a context in use) with nothing
 * applied; a driver that picks another id: the step fails, rolled back;
 * a kernel with ethtool netlink's RSS commands (the fixture's "netlink":
 * true): every context listed ("listed_from": "netlink"), one made with
 * the id the profile gives while a lower one is free, rolled back to the
 * byte; the input transformation ("input_xfrm", kind rss_xfrm) of the
 * NIC's table and of a context made in the same transaction, reported,
 * rolled back to the byte, and refused (422 naming the field, the NIC and
 * the release) on a kernel before 6.8, and sym-or-xor before 6.15. */
#include "agent/drift.h"
#include "engine/plan.h"
#include "engine/txn.h"
#include "host/queues.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/fixture.h"
#include "kernel/flows.h"
#include "kernel/rss.h"
#include "kernel/rss_nl.h"
#include "settings/setting.h"
#include "store/store.h"
#include "setting_util.h"
#include "harness.h"
#include "tree_files.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[64], state[64];
static const char *const DOC = "ethtool/enos2.json";

/* enos2: 16 channels, a table of 256 in turn, contexts up to 7, ntuple
 * on and an empty rule table; enos3: the same without contexts. */
static void set_doc(const char *iface, const char *contexts, const char *rules)
{
	char text[16384], indir[2048];
	int n = 0;
	for (int i = 0; i < 256; i++)
		n += snprintf(indir + n, sizeof(indir) - (size_t)n, "%s%d", i ? ", " : "", i % 16);
	snprintf(text, sizeof(text),
		 "{\"channels\": {\"combined\": 16, \"combined_max\": 63}, "
		 "\"features\": {\"rx-ntuple-filter\": {\"on\": true, \"fixed\": false}}, "
		 "\"flows\": {\"size\": 64, \"rules\": [%s]}, "
		 "\"rss\": {\"indir\": [%s], \"key_size\": 40, \"hfunc\": 1, "
		 "\"hash_fields\": {\"tcp4\": \"sdfn\"}%s%s%s}}",
		 rules, indir, contexts ? ", " : "", contexts ? contexts : "", "");
	char path[64];
	snprintf(path, sizeof(path), "ethtool/%s.json", iface);
	tree_write(root, path, text);
}

static void test_text(void)
{
	nt_flow_rule r, back;
	char text[NT_FLOW_TEXT_MAX], why[128];
	struct ethtool_rx_flow_spec fs;
	CHECK_INT(nt_flow_rule_parse("tcp4 dst-port 5201 context 1 queue 0", &r, NULL, 0), 0);
	CHECK(r.context == 1 && r.queue == 0 && !r.drop);
	CHECK_INT(nt_flow_rule_format(&r, text, sizeof(text)), 0);
	CHECK_STR(text, "tcp4 dst-port 5201 context 1 queue 0");
	CHECK_INT(nt_flow_spec_encode(&r, &fs), 0);
	CHECK_INT(fs.flow_type, TCP_V4_FLOW | FLOW_RSS);
	CHECK_INT(fs.ring_cookie, 0);
	nt_flow_spec_decode(&fs, 1, &back);
	CHECK(back.type == NT_FLOW_TCP4 && back.context == 1 && nt_flow_rule_equal(&r, &back));
	/* FLOW_RSS on context 0 (the NIC's own table) is not modelled. */
	nt_flow_spec_decode(&fs, 0, &back);
	CHECK_INT(back.type, NT_FLOW_OTHER);
	CHECK_INT(nt_flow_rule_parse("tcp4 dst-port 5201 queue 0", &back, NULL, 0), 0);
	CHECK(!nt_flow_rule_equal(&r, &back));
	CHECK_INT(nt_flow_rule_parse("tcp4 context 1 drop", &r, why, sizeof(why)), NT_EPARSE);
	CHECK_STR(why, "a rule to an RSS context cannot drop");
	CHECK_INT(nt_flow_rule_parse("tcp4 context 0 queue 1", &r, why, sizeof(why)), NT_EPARSE);
	/* The rss kind's values: "none" is a context that is not there. */
	const nt_setting_kind *k = nt_setting_find("rss");
	nt_value v;
	CHECK(k && k->parse("none", &v) == 0 && !strcmp(v.text, "none"));
}

static void test_fixture(const nt_ctx *ctx)
{
	uint32_t tab[256], id = 0;
	char err[160] = "";
	nt_rss c;
	for (int i = 0; i < 256; i++)
		tab[i] = 4 + i % 4;
	set_doc("enos2", "\"contexts\": [], \"max_contexts\": 3", "");
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 1, &c), -ENOENT);
	CHECK_INT(nt_rss_context_create(ctx, "enos2", tab, 256, &id, err, sizeof(err)), 0);
	CHECK_INT(id, 1);
	CHECK_INT(nt_rss_context_create(ctx, "enos2", tab, 256, &id, err, sizeof(err)), 0);
	CHECK_INT(id, 2);
	/* max_contexts 3 counts context 0: ids 1 and 2 only. */
	CHECK_INT(nt_rss_context_create(ctx, "enos2", tab, 256, &id, err, sizeof(err)), -EBUSY);
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 2, &c), 0);
	CHECK(c.indir_size == 256 && c.indir[0] == 4 && c.indir[5] == 5);
	nt_rss_free(&c);
	tab[0] = 16;
	CHECK_INT(nt_rss_context_write(NULL, ctx, "enos2", 2, tab, 256, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "indirection table entry is beyond the RX rings");
	CHECK_INT(nt_rss_context_delete(NULL, ctx, "enos2", 1, err, sizeof(err)), 0);
	CHECK_INT(nt_rss_context_delete(NULL, ctx, "enos2", 1, err, sizeof(err)), -ENOENT);
	/* The lowest free id again. */
	tab[0] = 4;
	CHECK_INT(nt_rss_context_create(ctx, "enos2", tab, 256, &id, err, sizeof(err)), 0);
	CHECK_INT(id, 1);
	/* A rule names context 2: not deleted (6.11 and later). */
	set_doc("enos2", "\"contexts\": [{\"id\": 2, \"indir\": [0]}]",
		"{\"location\": 0, \"rule\": \"tcp4 dst-port 1 context 2 queue 0\"}");
	CHECK_INT(nt_rss_context_delete(NULL, ctx, "enos2", 2, err, sizeof(err)), -EBUSY);
	/* A rule into a context that is not there is refused. */
	nt_flow_rule r;
	CHECK_INT(nt_flow_rule_parse("tcp4 dst-port 2 context 3 queue 0", &r, NULL, 0), 0);
	r.location = 1;
	CHECK_INT(nt_flows_insert(ctx, "enos2", &r, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "RSS context 3 does not exist");
	/* A driver without contexts. */
	set_doc("enos3", NULL, "");
	CHECK_INT(nt_rss_context_read(ctx, "enos3", 1, &c), -EOPNOTSUPP);
	CHECK_INT(nt_rss_context_create(ctx, "enos3", tab, 256, &id, err, sizeof(err)), -EOPNOTSUPP);
}

static int plan_of(const nt_ctx *ctx, const char *text, nt_plan *plan, json_t **errors)
{
	nt_topology *t = NULL;
	json_t *p = json_loads(text, 0, NULL);
	CHECK_MSG(p != NULL, "%s", text);
	*errors = json_array();
	int r = nt_topology_read(ctx, &t);
	if (r == 0)
		r = nt_plan_build(ctx, NULL, t, p, plan, *errors);
	nt_topology_free(t);
	json_decref(p);
	return r;
}

static void check_error(const json_t *errors, const char *path, const char *what)
{
	size_t i;
	json_t *e;
	json_array_foreach(errors, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "path")), path) &&
		    strstr(json_string_value(json_object_get(e, "message")), what))
			return;
	char *s = json_dumps(errors, 0);
	CHECK_MSG(0, "no error at %s with '%s' in %s", path, what, s);
	free(s);
}

static int step_at(const nt_plan *plan, const char *kind, const char *target)
{
	for (int i = 0; i < plan->nsteps; i++)
		if (!strcmp(plan->steps[i].kind->name, kind) && !strcmp(plan->steps[i].target, target))
			return i;
	return -1;
}

#define PROFILE                                                                                     \
	"{\"name\":\"ctx\",\"rss\":[{\"interface\":\"enos2\",\"context\":1,\"queues\":\"4-7\"}],"    \
	"\"flows\":[{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_port\":5201,\"context\":1}]}"

static void test_plan(const nt_ctx *ctx)
{
	nt_plan plan;
	json_t *errors;
	set_doc("enos2", "\"contexts\": []", "");
	int r = plan_of(ctx, PROFILE, &plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, 0));
	json_decref(errors);
	if (r)
		return;
	const nt_setting_kind *rk = nt_setting_find("rss"), *fk = nt_setting_find("flow");
	int c = step_at(&plan, "rss", "enos2/context-1"), f = step_at(&plan, "flow", "enos2/loc-0");
	CHECK_MSG(c >= 0 && f > c, "context step %d, rule step %d", c, f);
	if (c >= 0 && f >= 0) {
		CHECK_STR(nt_t_str(rk, &plan.steps[c].before), "none");
		CHECK_STR(nt_t_str(rk, &plan.steps[c].after), "4-7*64");
		CHECK_STR(nt_t_str(fk, &plan.steps[f].before), "none");
		CHECK_STR(nt_t_str(fk, &plan.steps[f].after), "tcp4 dst-port 5201 context 1 queue 0");
	}
	nt_plan_free(&plan);
	/* "placed" into a context: the queues whose IRQs this profile puts on
	 * the NIC's node (here CPUs 33-36 of node 1: enos2's first four
	 * queues' IRQs... whichever the placement deals), said in a warning. */
	r = plan_of(ctx,
		    "{\"name\":\"pl\",\"irq_affinity\":[{\"interface\":\"enos2\",\"cpus\":\"33-36\"}],"
		    "\"rss\":[{\"interface\":\"enos2\",\"context\":1,\"queues\":\"placed\"}]}",
		    &plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, 0));
	json_decref(errors);
	if (r == 0) {
		c = step_at(&plan, "rss", "enos2/context-1");
		CHECK(c >= 0 && strcmp(nt_t_str(rk, &plan.steps[c].after), "none") != 0);
		if (c >= 0)
			fprintf(stderr, "placed context table: %s\n", nt_t_str(rk, &plan.steps[c].after));
		CHECK(step_at(&plan, "rss", "enos2/indir") < 0);
		nt_plan_free(&plan);
	}
	/* "equal" from "start", as ethtool -X start 8 equal 4. */
	r = plan_of(ctx, "{\"name\":\"e\",\"rss\":[{\"interface\":\"enos2\",\"context\":1,\"equal\":4,\"start\":8}]}",
		    &plan, &errors);
	CHECK_INT(r, 0);
	json_decref(errors);
	if (r == 0) {
		c = step_at(&plan, "rss", "enos2/context-1");
		CHECK(c >= 0 && !strcmp(nt_t_str(rk, &plan.steps[c].after), "8-11*64"));
		nt_plan_free(&plan);
	}
}

static void test_bad_input(const nt_ctx *ctx)
{
	nt_plan plan;
	json_t *errors;
	set_doc("enos2", "\"contexts\": [{\"id\": 2, \"indir\": [0]}]",
		"{\"location\": 9, \"rule\": \"udp4 dst-port 53 context 2 queue 0\"}");
	set_doc("enos3", NULL, "");
	char *before2 = tree_read(root, DOC), *before3 = tree_read(root, "ethtool/enos3.json");
	int r = plan_of(ctx,
			"{\"name\":\"bad\",\"rss\":[{\"interface\":\"enos3\",\"context\":1,\"queues\":\"0-1\"},"
			"{\"interface\":\"enos2\",\"context\":3,\"queues\":\"12-17\"},"
			"{\"interface\":\"enos2\",\"context\":2,\"equal\":2},"
			"{\"interface\":\"enos*\",\"context\":4,\"equal\":2,\"hash_fields\":{\"tcp4\":\"sd\"}},"
			"{\"interface\":\"enos2\",\"context\":0,\"start\":1,\"queues\":\"1\"}],"
			"\"flows\":[{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_port\":1,\"context\":5},"
			"{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_port\":2,\"context\":3,\"cpu\":1}]}",
			&plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	check_error(errors, "$.rss[0].context", "enos3: its driver has no RSS contexts");
	check_error(errors, "$.rss[1].queues", "enos2 has 16 RX queues (0-15): queue 17 is beyond them");
	check_error(errors, "$.rss[1].context", "RSS context 3 would be made as 1");
	check_error(errors, "$.rss[2].context", "RSS context 2 is in use: flow rules this profile does not ask for "
						"send flows to it (location 9)");
	check_error(errors, "$.rss[3].hash_fields", "hash fields are set for the NIC");
	check_error(errors, "$.rss[3].interface", "names one NIC, not a pattern");
	check_error(errors, "$.rss[4].context", "from 1 to 65535");
	check_error(errors, "$.rss[4].start", "'start' goes with 'equal'");
	check_error(errors, "$.flows[0].context", "enos2 has no RSS context 5, and this profile's \"rss\" makes none");
	check_error(errors, "$.flows[1]", "with 'context' give at most 'queue'");
	json_decref(errors);
	/* Nothing was sent anywhere. */
	char *after2 = tree_read(root, DOC), *after3 = tree_read(root, "ethtool/enos3.json");
	CHECK(before2 && after2 && !strcmp(before2, after2));
	CHECK(before3 && after3 && !strcmp(before3, after3));
	free(before2);
	free(after2);
	free(before3);
	free(after3);
	/* Context 2 with "replace", and 1 and 3 made in order: accepted. */
	r = plan_of(ctx,
		    "{\"name\":\"ok\",\"rss\":[{\"interface\":\"enos2\",\"context\":3,\"equal\":2},"
		    "{\"interface\":\"enos2\",\"context\":1,\"equal\":2},"
		    "{\"interface\":\"enos2\",\"context\":2,\"equal\":4,\"replace\":true}]}",
		    &plan, &errors);
	CHECK_MSG(r == 0, "%s", json_dumps(errors, 0));
	json_decref(errors);
	if (r == 0)
		nt_plan_free(&plan);
}

static void test_transaction(const nt_ctx *ctx)
{
	nt_txn_engine *e = NULL;
	nt_txn_outcome o = { 0 };
	set_doc("enos2", "\"contexts\": [], \"max_contexts\": 8", "");
	char *orig = tree_read(root, DOC);
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e)
		goto out;
	json_t *profile = json_loads(PROFILE, 0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	int64_t id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	nt_rss c;
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 1, &c), 0);
	CHECK(c.indir_size == 256 && c.indir[0] == 4 && c.indir[3] == 7 && c.indir[4] == 4);
	nt_rss_free(&c);
	nt_flow_rule fr;
	CHECK_INT(nt_flows_get(ctx, "enos2", 0, &fr), 0);
	CHECK(fr.context == 1 && fr.dst_port == 5201 && fr.queue == 0);

	/* The per-NIC view: context 1, its queues, the rule into it. */
	nt_topology *t = NULL;
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	const nt_nic *n = t ? nt_topology_nic(t, "enos2") : NULL;
	json_t *cx = n ? nt_nic_rss_contexts_json(t, n) : NULL;
	char *text = cx ? json_dumps(cx, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	CHECK_MSG(text && strstr(text, "\"list\":[{\"hfunc\":1,\"id\":1,\"indir_size\":256,\"input_xfrm\":\"none\",\"queues\":[4,5,6,7],"
				       "\"rules\":[0],\"table\":\"4-7*64\"}]") &&
			  strstr(text, "\"supported\":true") && strstr(text, "\"listed_from\":\"the ids the NIC's flow rules name"),
		  "%s", text ? text : "(null)");
	free(text);
	json_decref(cx);
	json_t *flows = n ? nt_nic_flows_json(t, n) : NULL;
	json_t *rule = json_array_get(json_object_get(flows, "rules"), 0);
	CHECK(json_integer_value(json_object_get(rule, "context")) == 1 &&
	      json_is_integer(json_object_get(rule, "queue_offset")) && !json_object_get(rule, "irq"));
	json_decref(flows);
	/* Planned again: nothing left to do. */
	nt_plan plan;
	json_t *errors = json_array();
	CHECK_INT(t ? nt_plan_build(ctx, NULL, t, profile, &plan, errors) : -1, 0);
	CHECK_MSG(t && plan.nsteps == 0, "%d steps left", plan.nsteps);
	if (t)
		nt_plan_free(&plan);
	json_decref(errors);
	nt_topology_free(t);

	/* Rolled back: the rule out first, then the context deleted (the
	 * fixture refuses a context a rule names, as the kernel does). */
	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 1, &c), -ENOENT);
	char *now = tree_read(root, DOC);
	CHECK_MSG(orig && now && !strcmp(orig, now), "after the rollback:\n%.400s", now ? now : "(none)");
	free(now);

	/* A context that was there: its table changed, then put back, and it
	 * is never deleted. */
	char two[2048];
	int m = snprintf(two, sizeof(two), "\"contexts\": [{\"id\": 1, \"indir\": [");
	for (int i = 0; i < 256; i++)
		m += snprintf(two + m, sizeof(two) - (size_t)m, "%s%d", i ? ", " : "", i % 2);
	snprintf(two + m, sizeof(two) - (size_t)m, "]}]");
	set_doc("enos2", two, "");
	free(orig);
	orig = tree_read(root, DOC);
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 1, &c), 0);
	nt_rss_free(&c);
	now = tree_read(root, DOC);
	CHECK_MSG(orig && now && !strcmp(orig, now), "after the rollback:\n%.400s", now ? now : "(none)");
	free(now);

	/* A driver that picks its own id (5, where the plan predicts 1): the
	 * step fails, says so, and the transaction rolls back to the byte. */
	set_doc("enos2", "\"contexts\": [], \"alloc_id\": 5", "");
	free(orig);
	orig = tree_read(root, DOC);
	nt_txn_apply(e, &req, &o);
	text = o.doc ? json_dumps(o.doc, 0) : NULL;
	CHECK_MSG(text && strstr(text, "the kernel made the new RSS context 5, not 1 as the plan predicted") &&
			  !strcmp(json_string_value(json_object_get(o.doc, "status")) ?: "", "rolled_back"),
		  "%s", text ? text : "(no document)");
	free(text);
	nt_txn_outcome_free(&o);
	now = tree_read(root, DOC);
	CHECK_MSG(orig && now && !strcmp(orig, now), "after the failed apply:\n%.400s", now ? now : "(none)");
	free(now);
	json_decref(profile);
out:
	free(orig);
	nt_txn_engine_close(e);
}

/* A 6.17 kernel (RSS_GET dump, RSS_CREATE_ACT): context 2 is there and
 * no rule names it; context 3 is made as 3 although 1 is free. */
static void test_netlink(const nt_ctx *ctx)
{
	char ctxs[2048], err[256];
	int m = snprintf(ctxs, sizeof(ctxs), "\"netlink\": true, \"max_contexts\": 8, \"contexts\": [{\"id\": 2, \"indir\": [");
	for (int i = 0; i < 256; i++)
		m += snprintf(ctxs + m, sizeof(ctxs) - (size_t)m, "%s%d", i ? ", " : "", 8 + i % 2);
	snprintf(ctxs + m, sizeof(ctxs) - (size_t)m, "]}]");
	set_doc("enos2", ctxs, "");
	char *orig = tree_read(root, DOC);
	nt_rss_nl nl;
	nt_rss_nl_caps(NULL, ctx, "enos2", &nl);
	CHECK(nl.list && nl.create && nl.set);
	uint32_t ids[8];
	int n = 0;
	CHECK_INT(nt_rss_nl_context_ids(NULL, ctx, "enos2", ids, 8, &n), 0);
	CHECK(n == 1 && ids[0] == 2);
	CHECK_INT(nt_rss_nl_context_ids(NULL, ctx, "enos3", ids, 8, &n), -EOPNOTSUPP);
	/* Listed although no rule names it. */
	nt_topology *t = NULL;
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	const nt_nic *nic = t ? nt_topology_nic(t, "enos2") : NULL;
	json_t *cx = nic ? nt_nic_rss_contexts_json(t, nic) : NULL;
	char *text = cx ? json_dumps(cx, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	CHECK_MSG(text && strstr(text, "\"listed_from\":\"netlink\"") && strstr(text, "\"id\":2,") &&
			  strstr(text, "\"table\":\"8-9*128\"") && strstr(text, "\"supported\":true"),
		  "%s", text ? text : "(null)");
	free(text);
	json_decref(cx);
	nt_topology_free(t);
	/* The kernel's refusals of a chosen id: taken, beyond the driver's. */
	uint32_t tab[256];
	for (int i = 0; i < 256; i++)
		tab[i] = (uint32_t)(i % 2);
	CHECK_INT(nt_rss_nl_context_create(NULL, ctx, "enos2", 2, tab, 256, err, sizeof(err)), -EBUSY);
	CHECK_INT(nt_rss_nl_context_create(NULL, ctx, "enos2", 8, tab, 256, err, sizeof(err)), -ERANGE);
	CHECK_INT(nt_rss_nl_context_create(NULL, ctx, "enos3", 1, tab, 256, err, sizeof(err)), -EOPNOTSUPP);
	/* No prediction: context 3 while 1 is free is planned and made as 3. */
	const char *prof = "{\"name\":\"nl\",\"rss\":[{\"interface\":\"enos2\",\"context\":3,\"equal\":2}]}";
	nt_plan plan;
	json_t *errors;
	int r = plan_of(ctx, prof, &plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, 0));
	json_decref(errors);
	if (r == 0) {
		int c = step_at(&plan, "rss", "enos2/context-3");
		CHECK(c >= 0 && !strcmp(nt_t_str(nt_setting_find("rss"), &plan.steps[c].before), "none"));
		nt_plan_free(&plan);
	}
	nt_txn_engine *e = NULL;
	nt_txn_outcome o = { 0 };
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e)
		goto out;
	json_t *profile = json_loads(prof, 0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	int64_t id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	json_decref(profile);
	nt_rss c;
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 3, &c), 0);
	CHECK(c.indir_size == 256 && c.indir[0] == 0 && c.indir[1] == 1);
	nt_rss_free(&c);
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 1, &c), -ENOENT);
	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
	char *now = tree_read(root, DOC);
	CHECK_MSG(orig && now && !strcmp(orig, now), "after the rollback:\n%.400s", now ? now : "(none)");
	free(now);
out:
	nt_txn_engine_close(e);
	free(orig);
}

/* Apply PROFILE, check the document has WANT, roll back to ORIG. */
static void apply_and_back(const nt_ctx *ctx, const char *profile_text, const char *want)
{
	nt_txn_engine *e = NULL;
	nt_txn_outcome o = { 0 };
	char *orig = tree_read(root, DOC);
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e)
		goto out;
	json_t *profile = json_loads(profile_text, 0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	char *text = o.doc ? json_dumps(o.doc, 0) : NULL;
	CHECK_MSG(!strcmp(json_string_value(json_object_get(o.doc, "status")) ?: "", "applied"), "%s", text ?: "");
	free(text);
	int64_t id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	json_decref(profile);
	char *now = tree_read(root, DOC);
	CHECK_MSG(now && strstr(now, want), "after the apply, no %s in:\n%.600s", want, now ? now : "(none)");
	free(now);
	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
	now = tree_read(root, DOC);
	CHECK_MSG(orig && now && !strcmp(orig, now), "after the rollback:\n%.600s", now ? now : "(none)");
	free(now);
out:
	nt_txn_engine_close(e);
	free(orig);
}

static void test_xfrm(const nt_ctx *ctx)
{
	nt_plan plan;
	json_t *errors;
	const nt_setting_kind *xk = nt_setting_find("rss_xfrm");
	CHECK(xk != NULL);
	/* The EPYC tree's kernel is 6.12: symmetric-xor, not or-xor. */
	set_doc("enos2", "\"netlink\": true, \"contexts\": []", "");
	int r = plan_of(ctx, "{\"name\":\"x\",\"rss\":[{\"interface\":\"enos2\",\"input_xfrm\":\"sym-xor\"}]}",
			&plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, 0));
	json_decref(errors);
	if (r == 0 && xk) {
		int c = step_at(&plan, "rss_xfrm", "enos2/input-xfrm");
		CHECK(c >= 0 && plan.nsteps == 1);
		if (c >= 0) {
			CHECK_STR(nt_t_str(xk, &plan.steps[c].before), "none");
			CHECK_STR(nt_t_str(xk, &plan.steps[c].after), "sym-xor");
		}
		nt_plan_free(&plan);
	}
	apply_and_back(ctx, "{\"name\":\"x\",\"rss\":[{\"interface\":\"enos2\",\"input_xfrm\":\"sym-xor\"}]}",
		       "\"input_xfrm\": 1");
	/* A context made and given symmetric-xor in one transaction; the
	 * rollback sets it back, then deletes the context. */
	apply_and_back(ctx,
		       "{\"name\":\"xc\",\"rss\":[{\"interface\":\"enos2\",\"context\":2,\"equal\":2,"
		       "\"input_xfrm\":\"sym-xor\"}]}",
		       "\"id\": 2, \"indir\": [0, 1,");
	/* Reported. */
	char err[128];
	CHECK_INT(nt_rss_write_xfrm(NULL, ctx, "enos2", 0, 1, err, sizeof(err)), 0);
	nt_topology *t = NULL;
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	const nt_nic *nic = t ? nt_topology_nic(t, "enos2") : NULL;
	json_t *rj = nic ? nt_nic_rss_json(t, nic) : NULL;
	CHECK_STR(json_string_value(json_object_get(rj, "input_xfrm")), "sym-xor");
	json_decref(rj);
	nt_topology_free(t);
	CHECK_INT(nt_rss_write_xfrm(NULL, ctx, "enos2", 0, 0, err, sizeof(err)), 0);
	CHECK_INT(nt_rss_write_xfrm(NULL, ctx, "enos2", 4, 1, err, sizeof(err)), -ENOENT);
	/* Refused with nothing applied: or-xor on 6.12, anything on 6.1. */
	char *before = tree_read(root, DOC);
	r = plan_of(ctx, "{\"name\":\"x\",\"rss\":[{\"interface\":\"enos2\",\"input_xfrm\":\"sym-or-xor\"},"
			 "{\"interface\":\"enos2\",\"input_xfrm\":\"xor\"}]}",
		    &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	check_error(errors, "$.rss[0].input_xfrm",
		    "enos2: input_xfrm \"sym-or-xor\" needs Linux 6.15 or later (this kernel is 6.12.48+deb13-amd64");
	check_error(errors, "$.rss[1].input_xfrm", "'input_xfrm' is \"none\", \"sym-xor\" or \"sym-or-xor\"");
	json_decref(errors);
	/* A NIC without a table is sent no input_xfrm either. */
	char *before3 = tree_read(root, "ethtool/enos3.json");
	tree_write(root, "ethtool/enos3.json", "{\"channels\": {\"combined\": 4}, \"rss\": {\"indir\": [], \"hfunc\": 1}}");
	r = plan_of(ctx, "{\"name\":\"x\",\"rss\":[{\"interface\":\"enos3\",\"input_xfrm\":\"sym-xor\"}]}", &plan,
		    &errors);
	CHECK_INT(r, NT_EINVALID);
	check_error(errors, "$.rss[0].input_xfrm", "enos3 has no RSS indirection table (size 0): nettune sends it no input_xfrm");
	json_decref(errors);
	if (before3)
		tree_write(root, "ethtool/enos3.json", before3);
	free(before3);
	char *rel = tree_read(root, "proc/sys/kernel/osrelease");
	tree_write(root, "proc/sys/kernel/osrelease", "6.1.0-57-amd64\n");
	r = plan_of(ctx, "{\"name\":\"x\",\"rss\":[{\"interface\":\"enos2\",\"input_xfrm\":\"none\"}]}", &plan,
		    &errors);
	CHECK_INT(r, NT_EINVALID);
	check_error(errors, "$.rss[0].input_xfrm",
		    "enos2: input_xfrm \"none\" needs Linux 6.8 or later (this kernel is 6.1.0-57-amd64");
	json_decref(errors);
	if (rel)
		tree_write(root, "proc/sys/kernel/osrelease", rel);
	free(rel);
	char *after = tree_read(root, DOC);
	CHECK(before && after && !strcmp(before, after));
	free(before);
	free(after);
}

static void on_log(void *ud, const json_t *ev)
{
	(void)ud;
	(void)ev;
}

/* Held as the desired state (agent/drift.c, the watcher checked by hand):
 * the context and the rule deleted behind the agent's back are made again
 * (the context first, getting its id back), a table changed by hand is
 * put back. */
static void test_hold(const nt_ctx *ctx)
{
	char db[128], err[256];
	nt_store *store = NULL;
	nt_txn_engine *e = NULL;
	nt_drift *d = NULL;
	nt_txn_outcome o = { 0 };
	json_t *profile = json_loads(PROFILE, 0, NULL), *rep;
	nt_rss c;
	snprintf(db, sizeof(db), "%s/hold.db", state);
	set_doc("enos2", "\"contexts\": []", "");
	CHECK_INT(nt_store_open(db, &store, err, sizeof(err)), 0);
	CHECK_INT(store ? nt_txn_engine_new(ctx, store, NULL, &e) : -1, 0);
	CHECK_INT(e ? nt_txn_engine_start(e) : -1, 0);
	if (!e)
		goto out;
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "", .persist = true };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
	nt_drift_config cfg = { .policy = NT_DRIFT_REPAIR };
	CHECK_INT(nt_drift_new(ctx, e, store, &cfg, on_log, NULL, false, &d), 0);
	if (!d)
		goto out;
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	rep = nt_drift_report(d);
	CHECK_STR(json_string_value(json_object_get(rep, "status")), "in_sync");
	json_decref(rep);
	/* ethtool -U enos2 delete 0; ethtool -X enos2 context 1 delete. */
	set_doc("enos2", "\"contexts\": []", "");
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 1, &c), 0);
	CHECK(c.indir_size == 256 && c.indir[0] == 4 && c.indir[3] == 7);
	nt_rss_free(&c);
	nt_flow_rule fr;
	CHECK_INT(nt_flows_get(ctx, "enos2", 0, &fr), 0);
	CHECK(fr.context == 1 && fr.dst_port == 5201);
	/* The context's table changed by hand: put back. */
	uint32_t tab[256];
	for (int i = 0; i < 256; i++)
		tab[i] = i % 2;
	CHECK_INT(nt_rss_context_write(NULL, ctx, "enos2", 1, tab, 256, err, sizeof(err)), 0);
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 1, &c), 0);
	CHECK(c.indir_size == 256 && c.indir[0] == 4);
	nt_rss_free(&c);
	rep = nt_drift_report(d);
	CHECK_STR(json_string_value(json_object_get(rep, "status")), "in_sync");
	json_decref(rep);
out:
	nt_drift_free(d);
	nt_txn_engine_close(e);
	nt_store_close(store);
	json_decref(profile);
}

/* Through the ioctl the kernel gives a new context the lowest free id,
 * and the plan predicts ids for contexts made in ascending order: a
 * profile that lists context 3 before context 1 (both missing, 2 there)
 * is accepted, so it must be made 1 then 3, and applies; listed 1 then
 * 3 it plans the same steps. */
static void test_made_in_id_order(const nt_ctx *ctx)
{
	nt_txn_engine *e = NULL;
	nt_txn_outcome o = { 0 };
	nt_plan plan;
	json_t *errors;
	const char *prof = "{\"name\":\"order\",\"rss\":[{\"interface\":\"enos2\",\"context\":3,\"equal\":2},"
			   "{\"interface\":\"enos2\",\"context\":1,\"equal\":4}]}";
	set_doc("enos2", "\"max_contexts\": 8, \"contexts\": [{\"id\": 2, \"indir\": [0]}]", "");
	char *orig = tree_read(root, DOC);
	int r = plan_of(ctx, prof, &plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, 0));
	json_decref(errors);
	if (r == 0) {
		int c1 = step_at(&plan, "rss", "enos2/context-1"), c3 = step_at(&plan, "rss", "enos2/context-3");
		CHECK_MSG(c1 >= 0 && c3 > c1, "context 1 at step %d, 3 at %d", c1, c3);
		nt_plan_free(&plan);
	}
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e)
		goto out;
	json_t *profile = json_loads(prof, 0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_MSG(!strcmp(json_string_value(json_object_get(o.doc, "status")) ?: "", "applied"), "%s",
		  json_string_value(json_object_get(o.doc, "error")) ?: "?");
	int64_t id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	nt_rss c;
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 1, &c), 0);
	CHECK(c.indir_size == 256 && c.indir[0] == 0 && c.indir[3] == 3);
	nt_rss_free(&c);
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 3, &c), 0);
	CHECK(c.indir_size == 256 && c.indir[0] == 0 && c.indir[2] == 0);
	nt_rss_free(&c);
	/* And back to the byte. */
	if (id > 0) {
		CHECK_INT(nt_txn_rollback(e, id, false, &req, &o), 0);
		nt_txn_outcome_free(&o);
		char *now = tree_read(root, DOC);
		CHECK(orig && now && !strcmp(orig, now));
		free(now);
	}
	json_decref(profile);
out:
	nt_txn_engine_close(e);
	free(orig);
}

/* Stack garbage where the next call's locals will be, so a local read
 * before it is set reads this and not a lucky zero. */
__attribute__((noinline)) static void dirty_stack(void)
{
	volatile unsigned char junk[16384];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

/* A context's value that is no table (hash letters, which the check
 * refuses for a context) reaching apply: refused, the context left
 * alone, nothing freed that was never allocated. */
static void test_apply_not_a_table(const nt_ctx *ctx)
{
	nt_value v;
	char err[256] = "";
	set_doc("enos2", "\"contexts\": [], \"max_contexts\": 8", "");
	memset(&v, 0, sizeof(v));
	snprintf(v.text, sizeof(v.text), "sdfn");
	const nt_setting_kind *k = nt_setting_find("rss");
	CHECK(k != NULL);
	if (!k)
		return;
	dirty_stack();
	CHECK(k->apply(ctx, NULL, "enos2/context-1", &v, err, sizeof(err)) < 0);
	nt_rss c;
	CHECK_INT(nt_rss_context_read(ctx, "enos2", 1, &c), -ENOENT);
	nt_rss_free(&c);
}

int main(void)
{
	char cmd[512];
	nt_ctx ctx;
	snprintf(root, sizeof(root), "/tmp/nt-rssctx-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-rssctx-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	test_text();
	test_fixture(&ctx);
	test_plan(&ctx);
	test_bad_input(&ctx);
	test_transaction(&ctx);
	test_hold(&ctx);
	test_netlink(&ctx);
	test_xfrm(&ctx);
	test_apply_not_a_table(&ctx);
	test_made_in_id_order(&ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
