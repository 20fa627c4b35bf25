/* SPDX-License-Identifier: Apache-2.0 */
/* RSS contexts with flow rules into them (issue 41) over HTTP and the
 * CLI, against a real agent on a copy of the EPYC fixture whose enos2
 * plays a driver with RSS contexts (the fixture's "contexts") and enos3
 * one without:
 *  - 422s naming the JSON path, the NIC and what is missing (no contexts
 *    in enos3's driver, a rule into a context nobody makes, queues beyond
 *    the channels, an id the kernel would not give), nothing applied;
 *  - a transaction making context 1 on queues 4-7 and a rule sending
 *    tcp/5201 into it; GET /v1/nics/enos2 and nettune nics enos2 show the
 *    context, its queues and the rule; its rollback deletes both, leaving
 *    enos2's document byte for byte as it was. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"

#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

static char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8];

/* IFACE's document with a table of 256 over 16 queues and ntuple on;
 * CONTEXTS true: a driver with RSS contexts (none made yet). Written as
 * the fixture writes a document after a change (two-space indent and a
 * newline), so that a rollback must give back the very bytes. */
static void give(const char *iface, bool contexts)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL);
	CHECK(doc != NULL);
	if (!doc)
		return;
	json_t *indir = json_array();
	for (int i = 0; i < 256; i++)
		json_array_append_new(indir, json_integer(i % 16));
	json_t *rss = json_pack("{s:o, s:i, s:i, s:{s:s}}", "indir", indir, "key_size", 40, "hfunc", 1, "hash_fields",
				"tcp4", "sdfn");
	if (contexts) {
		json_object_set_new(rss, "contexts", json_array());
		json_object_set_new(rss, "max_contexts", json_integer(9));
	}
	json_object_set_new(doc, "rss", rss);
	json_object_set_new(doc, "features", json_pack("{s:{s:b, s:b}}", "rx-ntuple-filter", "on", 1, "fixed", 0));
	tu_write_doc(path, doc);
	json_decref(doc);
}

static void test_refusals(nt_agent *a)
{
	json_t *p = tu_post(a, "/v1/transactions",
			    "{\"profile\":{\"name\":\"bad\",\"rss\":[{\"interface\":\"enos3\",\"context\":1,\"queues\":\"0-3\"},"
			    "{\"interface\":\"enos2\",\"context\":2,\"queues\":\"14-17\"}],"
			    "\"flows\":[{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_port\":5201,\"context\":4}]}}",
			    422);
	CHECK(tu_error_at(p, "$.rss[0].context", "enos3: its driver has no RSS contexts"));
	CHECK(tu_error_at(p, "$.rss[1].queues", "enos2 has 16 RX queues (0-15): queue 17 is beyond them"));
	CHECK(tu_error_at(p, "$.rss[1].context", "RSS context 2 would be made as 1"));
	CHECK(tu_error_at(p, "$.flows[0].context", "enos2 has no RSS context 4, and this profile's \"rss\" makes none"));
	json_decref(p);
	CHECK_MSG(tu_sh("diff -r '%s/snap/ethtool' '%s/ethtool' >&2", dir, root) == 0,
		  "an ethtool document changed under a refused profile");
	json_t *h = tu_get(a, "/v1/transactions");
	json_t *items = json_is_array(h) ? h : json_object_get(h, "transactions");
	CHECK_INT(json_array_size(items), 0);
	json_decref(h);
}

/* nettune nics enos2 on the same root, after the apply. */
static void test_cli(void)
{
	char cmd[PATH_MAX * 2], out[32768];
	snprintf(cmd, sizeof(cmd), "'%s' nics enos2 --root '%s'", NT_BIN, root);
	FILE *f = popen(cmd, "r");
	size_t n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = '\0';
	CHECK_MSG(f && pclose(f) == 0, "%s failed", cmd);
	CHECK_MSG(strstr(out, "\nRSS contexts: 1 found (the ids the NIC's flow rules name, and id 1") != NULL,
		  "nics output:\n%s", out);
	CHECK_MSG(strstr(out, "  context 1    queues [4,5,6,7], table \"4-7*64\", hfunc 1, rules at locations [0], input_xfrm none\n") !=
			  NULL,
		  "nics output:\n%s", out);
	CHECK_MSG(strstr(out, "  loc 0    tcp4 dst-port 5201 context 1 queue 0\n") != NULL, "nics output:\n%s", out);
	snprintf(cmd, sizeof(cmd), "'%s' nics enos3 --root '%s'", NT_BIN, root);
	f = popen(cmd, "r");
	n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = '\0';
	CHECK_MSG(f && pclose(f) == 0, "%s failed", cmd);
	CHECK_MSG(strstr(out, "RSS contexts: not supported: its driver has no RSS contexts") != NULL, "nics output:\n%s",
		  out);
}

static void test_apply_rollback(nt_agent *a)
{
	json_t *t = tu_post(a, "/v1/transactions",
			    "{\"profile\":{\"name\":\"ctx\",\"rss\":[{\"interface\":\"enos2\",\"context\":1,\"queues\":\"4-7\"}],"
			    "\"flows\":[{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_port\":5201,\"context\":1}]}}",
			    201);
	CHECK_STR(tu_str(t, "status"), "applied");
	json_int_t id = json_integer_value(json_object_get(t, "id"));
	size_t i;
	json_t *s;
	int ctx_at = -1, rule_at = -1;
	json_array_foreach(json_object_get(t, "steps"), i, s) {
		if (!strcmp(tu_str(s, "kind"), "rss") && !strcmp(tu_str(s, "target"), "enos2/context-1")) {
			CHECK_STR(tu_str(s, "before"), "none");
			CHECK_STR(tu_str(s, "after"), "4-7*64");
			ctx_at = (int)i;
		} else if (!strcmp(tu_str(s, "kind"), "flow")) {
			CHECK_STR(tu_str(s, "after"), "tcp4 dst-port 5201 context 1 queue 0");
			rule_at = (int)i;
		}
	}
	CHECK_MSG(ctx_at >= 0 && rule_at > ctx_at, "context step %d, rule step %d", ctx_at, rule_at);
	json_decref(t);
	json_t *n = tu_get(a, "/v1/nics/enos2");
	json_t *cx = json_object_get(json_object_get(n, "rss"), "contexts");
	json_t *c1 = json_array_get(json_object_get(cx, "list"), 0);
	CHECK(json_is_true(json_object_get(cx, "supported")));
	CHECK_INT(json_integer_value(json_object_get(c1, "id")), 1);
	CHECK_STR(tu_str(c1, "table"), "4-7*64");
	CHECK_INT(json_array_size(json_object_get(c1, "queues")), 4);
	CHECK_INT(json_integer_value(json_array_get(json_object_get(c1, "rules"), 0)), 0);
	json_t *r0 = json_array_get(json_object_get(json_object_get(n, "flows"), "rules"), 0);
	CHECK_INT(json_integer_value(json_object_get(r0, "context")), 1);
	CHECK_INT(json_integer_value(json_object_get(r0, "queue_offset")), 0);
	json_decref(n);
	n = tu_get(a, "/v1/nics/enos3");
	cx = json_object_get(json_object_get(n, "rss"), "contexts");
	CHECK(json_is_false(json_object_get(cx, "supported")));
	json_decref(n);
	test_cli();

	tu_rollback_restores(a, (long long)id, dir, root, "ethtool/enos2.json");
}

int main(void)
{
	nt_agent a;
	if (!tu_fixture_copy(EPYC, dir, sizeof(dir), root, sizeof(root), state, sizeof(state)))
		TEST_MAIN_END();
	give("enos2", true);
	give("enos3", false);
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	if (nt_agent_start(&a, root, state, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
	} else {
		test_refusals(&a);
		test_apply_rollback(&a);
		nt_agent_stop(&a);
	}
	tu_sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
