/* SPDX-License-Identifier: Apache-2.0 */
/* Placement-aware RSS contexts (issue 41) over HTTP, against a real agent
 * on a copy of the EPYC fixture (two nodes: 0-31,64-95 and 32-63,96-127;
 * enos2 on node 1, a driver with RSS contexts, 16 queues, IRQs 140 (async)
 * and 141..156 (queues 0-15)):
 *  - 422s at $.rss[N].node, nothing applied: a node the host lacks (the
 *    message names the host's nodes), 'node' without "placed", and a
 *    context "placed" on a node where no queue's IRQ is;
 *  - two applications, one a node: enos2's IRQs dealt over both nodes
 *    ("cpus": "0-8,32-39": the async IRQ on 0, queues 0-7 on 1-8, queues
 *    8-15 on 32-39), context 1 on node 0's queues, context 2 on node 1's,
 *    the NIC's own table on its node (no 'node'), ports 5201-5204 into
 *    context 1 and 6201-6204 into context 2: each table exactly, in the
 *    transaction's steps and in GET /v1/nics/enos2, and the plan's words
 *    naming the node and the IRQs it followed; GET /v1/diagnostics then
 *    judges each context against the node the profile gives it: no
 *    flow-context-remote. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"

#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

static char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8];

/* enos2 with ntuple on (the fixture's document already has contexts). */
static void give_ntuple(void)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/ethtool/enos2.json", root);
	json_t *doc = json_load_file(path, 0, NULL);
	CHECK(doc != NULL);
	if (!doc)
		return;
	json_object_set_new(doc, "features", json_pack("{s:{s:b, s:b}}", "rx-ntuple-filter", "on", 1, "fixed", 0));
	tu_write_doc(path, doc);
	json_decref(doc);
}

static bool warned(json_t *doc, const char *words)
{
	size_t i;
	json_t *w;
	json_array_foreach(json_object_get(doc, "warnings"), i, w) {
		const char *s = json_is_string(w) ? json_string_value(w) : tu_str(w, "message");
		if (s && strstr(s, words))
			return true;
	}
	char *t = json_dumps(json_object_get(doc, "warnings"), JSON_COMPACT);
	fprintf(stderr, "no warning saying '%s' in %s\n", words, t ? t : "(none)");
	free(t);
	return false;
}

static void unchanged(nt_agent *a)
{
	CHECK_MSG(tu_sh("diff -r '%s/snap/ethtool' '%s/ethtool' >&2 && diff -r '%s/snap/proc/irq' '%s/proc/irq' >&2", dir,
			root, dir, root) == 0,
		  "the tree changed under a refused profile");
	json_t *h = tu_get(a, "/v1/transactions");
	json_t *items = json_is_array(h) ? h : json_object_get(h, "transactions");
	CHECK_INT(json_array_size(items), 0);
	json_decref(h);
}

static void test_refusals(nt_agent *a)
{
	json_t *p = tu_post(a, "/v1/transactions",
			    "{\"profile\":{\"name\":\"bad\",\"rss\":["
			    "{\"interface\":\"enos2\",\"context\":1,\"queues\":\"placed\",\"node\":3},"
			    "{\"interface\":\"enos2\",\"context\":2,\"equal\":4,\"node\":0},"
			    "{\"interface\":\"enos2\",\"queues\":\"placed\",\"node\":\"0\"}]}}",
			    422);
	CHECK(tu_error_at(p, "$.rss[0].node", "node 3 is not a NUMA node of this host (its nodes: 0, 1)"));
	CHECK(tu_error_at(p, "$.rss[1].node", "'node' goes with \"queues\": \"placed\""));
	CHECK(tu_error_at(p, "$.rss[2].node", "'node' is a NUMA node id"));
	json_decref(p);
	unchanged(a);
	/* Every IRQ of enos2 on node 1: context 1 can have none of node 0's
	 * queues, refused; the NIC's own table on node 0 only warns. */
	p = tu_post(a, "/v1/transactions",
		    "{\"profile\":{\"name\":\"none0\",\"irq_affinity\":[{\"interface\":\"enos2\",\"cpus\":\"32-48\"}],"
		    "\"rss\":[{\"interface\":\"enos2\",\"context\":1,\"queues\":\"placed\",\"node\":0}],"
		    "\"flows\":[{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_port\":5201,\"context\":1}]}}",
		    422);
	CHECK(tu_error_at(p, "$.rss[0].node",
		       "enos2: RSS context 1 \"placed\": no RX queue's IRQ is on node 0 (the NIC's is 1) off reserved CPUs"));
	json_decref(p);
	unchanged(a);
	p = tu_post(a, "/v1/plan",
		    "{\"name\":\"none0\",\"irq_affinity\":[{\"interface\":\"enos2\",\"cpus\":\"32-48\"}],"
		    "\"rss\":[{\"interface\":\"enos2\",\"queues\":\"placed\",\"node\":0}]}",
		    200);
	CHECK(warned(p, "enos2: RSS \"placed\": no RX queue's IRQ is on node 0 (the NIC's is 1) off reserved CPUs; "
			"left out"));
	json_decref(p);
}

#define TWO_APPS                                                                                                    \
	"{\"name\":\"two-apps\","                                                                                     \
	"\"irq_affinity\":[{\"interface\":\"enos2\",\"cpus\":\"0-8,32-39\"}],"                                        \
	"\"rss\":[{\"interface\":\"enos2\",\"context\":1,\"queues\":\"placed\",\"node\":0},"                          \
	"{\"interface\":\"enos2\",\"context\":2,\"queues\":\"placed\",\"node\":1},"                                    \
	"{\"interface\":\"enos2\",\"queues\":\"placed\"}],"                                                             \
	"\"flows\":[{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_ports\":\"5201-5204\",\"context\":1},"      \
	"{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_ports\":\"6201-6204\",\"context\":2}]}"

static const char *after_of(json_t *t, const char *kind, const char *target)
{
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(t, "steps"), i, s)
		if (!strcmp(tu_str(s, "kind"), kind) && !strcmp(tu_str(s, "target"), target))
			return tu_str(s, "after");
	return "(no step)";
}

static void test_two_apps(nt_agent *a)
{
	json_t *p = tu_post(a, "/v1/plan", TWO_APPS, 200);
	CHECK(warned(p, "enos2: the table of RSS context 1 sends flows to RX queues 0-7, whose IRQs 141..148 are on "
			"node 0 (the NIC's is 1) as this profile's irq_affinity steps place them (applied first); "
			"not to queues 8-15"));
	CHECK(warned(p, "enos2: the table of RSS context 2 sends flows to RX queues 8-15, whose IRQs 149..156 are on "
			"its node 1 as this profile's irq_affinity steps place them"));
	CHECK(warned(p, "enos2: the RSS table sends flows to RX queues 8-15, whose IRQs 149..156 are on its node 1"));
	json_decref(p);

	json_t *t = tu_post(a, "/v1/transactions", "{\"profile\":" TWO_APPS "}", 201);
	CHECK_STR(tu_str(t, "status"), "applied");
	/* 256 entries over 8 queues: each queue 32 times, in turn. */
	CHECK_STR(after_of(t, "rss", "enos2/context-1"), "0-7*32");
	CHECK_STR(after_of(t, "rss", "enos2/context-2"), "8-15*32");
	CHECK_STR(after_of(t, "rss", "enos2/indir"), "8-15*32");
	CHECK_STR(after_of(t, "flow", "enos2/loc-0"), "tcp4 dst-port 5201 context 1 queue 0");
	CHECK_STR(after_of(t, "flow", "enos2/loc-7"), "tcp4 dst-port 6204 context 2 queue 0");
	CHECK_STR(after_of(t, "irq_affinity", "148"), "8");
	CHECK_STR(after_of(t, "irq_affinity", "149"), "32");
	json_decref(t);

	json_t *n = tu_get(a, "/v1/nics/enos2");
	json_t *list = json_object_get(json_object_get(json_object_get(n, "rss"), "contexts"), "list");
	CHECK_INT(json_array_size(list), 2);
	size_t i;
	json_t *c;
	json_array_foreach(list, i, c) {
		char *q = json_dumps(json_object_get(c, "queues"), JSON_COMPACT);
		json_int_t id = json_integer_value(json_object_get(c, "id"));
		CHECK_MSG(q && !strcmp(q, id == 1 ? "[0,1,2,3,4,5,6,7]" : "[8,9,10,11,12,13,14,15]"), "context %lld: %s",
			  (long long)id, q ? q : "(none)");
		free(q);
	}
	json_decref(n);

	/* Each context judged against the node the profile in effect gives
	 * it: context 1 on node 0's queues is what was asked, not remote. */
	json_t *dg = tu_get(a, "/v1/diagnostics");
	json_array_foreach(json_object_get(dg, "findings"), i, c) {
		const char *id = tu_str(c, "id");
		CHECK_MSG(strcmp(id, "flow-context-remote") && strcmp(id, "flow-context-reserved") &&
				  strcmp(id, "flow-queue-remote"),
			  "%s: %s", id, tu_str(c, "message"));
	}
	json_decref(dg);
}

int main(void)
{
	nt_agent a;
	if (!tu_fixture_copy(EPYC, dir, sizeof(dir), root, sizeof(root), state, sizeof(state)))
		TEST_MAIN_END();
	give_ntuple();
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	if (nt_agent_start(&a, root, state, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
	} else {
		test_refusals(&a);
		test_two_apps(&a);
		nt_agent_stop(&a);
	}
	tu_sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
