/* SPDX-License-Identifier: Apache-2.0 */
/* RSS "placed" with a node (settings/rss_placed.c), the pure parts: which
 * queues a node takes (IRQ CPUs within the node, clear of reserved CPUs,
 * a queue without a known IRQ never), and the IRQs as the plan says them.
 * And the findings about flow rules into RSS contexts (diagnose/flows.c)
 * on a copy of the EPYC tree, whose enos2 (node 1) has queues 0-10 served
 * on node 1 (CPUs 96..126) and 11-15 on node 0 (CPUs 1,4,7,10,13):
 * flow-context-remote, judged against the NIC's node or the node the
 * profile in effect gives the context, flow-context-reserved, one finding
 * a context and offset naming every rule into it, its fix (the context
 * "placed", "replace"), kept once by --fix-profile and planned. */
#include "settings/rss_placed.h"
#include "diagnose/diagnose.h"
#include "engine/plan.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "harness.h"
#include "tree_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_pick(void)
{
	nt_cpuset node0, node1, res, c[6], on, off;
	char text[64];
	nt_cpulist_parse("0-3", &node0);
	nt_cpulist_parse("4-7", &node1);
	nt_cpulist_parse("3", &res);
	nt_cpulist_parse("0", &c[0]);
	nt_cpulist_parse("1-2", &c[1]); /* two CPUs, both of node 0 */
	nt_cpulist_parse("3-4", &c[2]); /* across both nodes: neither */
	nt_cpulist_parse("4", &c[3]);
	nt_cpuset_zero(&c[4]); /* an IRQ with no CPUs known */
	nt_cpulist_parse("3", &c[5]); /* node 0, reserved */
	const nt_cpuset *cpus[7] = { &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], NULL };
	CHECK_INT(nt_rss_placed_pick(cpus, 7, &node0, &res, &on, &off), 2);
	nt_cpulist_format(&on, text, sizeof(text));
	CHECK_STR(text, "0-1");
	nt_cpulist_format(&off, text, sizeof(text));
	CHECK_STR(text, "2-6");
	/* Without reserved CPUs queue 5 is node 0's too. */
	CHECK_INT(nt_rss_placed_pick(cpus, 7, &node0, NULL, &on, &off), 3);
	nt_cpulist_format(&on, text, sizeof(text));
	CHECK_STR(text, "0-1,5");
	CHECK_INT(nt_rss_placed_pick(cpus, 7, &node1, &res, &on, &off), 1);
	nt_cpulist_format(&on, text, sizeof(text));
	CHECK_STR(text, "3");
	/* Only the first NQ queues are looked at. */
	CHECK_INT(nt_rss_placed_pick(cpus, 1, &node1, NULL, &on, &off), 0);
	CHECK(nt_cpuset_empty(&on) && nt_cpuset_count(&off) == 1);
}

static void test_irq_text(void)
{
	char out[32];
	const int up[] = { 141, 142, 143, 144 }, down[] = { 116, 115, 114 }, odd[] = { 141, 150, 152 },
		  two[] = { 141, 142 }, many[] = { 1000, 1002, 1004, 1006, 1008, 1010, 1012, 1014 };
	nt_rss_irq_list_format(up, 4, out, sizeof(out));
	CHECK_STR(out, "141..144");
	nt_rss_irq_list_format(down, 3, out, sizeof(out));
	CHECK_STR(out, "116..114");
	nt_rss_irq_list_format(odd, 3, out, sizeof(out));
	CHECK_STR(out, "141,150,152");
	nt_rss_irq_list_format(two, 2, out, sizeof(out));
	CHECK_STR(out, "141,142");
	nt_rss_irq_list_format(up, 1, out, sizeof(out));
	CHECK_STR(out, "141");
	nt_rss_irq_list_format(up, 0, out, sizeof(out));
	CHECK_STR(out, "");
	/* Too many for OUT: shortened, and still a string. */
	nt_rss_irq_list_format(many, 8, out, sizeof(out));
	CHECK_STR(out, "1000,1002,1004,1006,1008,...");
	CHECK(strlen(out) < sizeof(out));
}

static char root[64];

/* enos2 with contexts 1 (queues 0-15 in turn), 2 (0-3) and RULES. */
static void set_doc(const char *rules)
{
	char text[16384], c1[2048], c2[2048];
	int n1 = 0, n2 = 0;
	for (int i = 0; i < 256; i++) {
		n1 += snprintf(c1 + n1, sizeof(c1) - (size_t)n1, "%s%d", i ? ", " : "", i % 16);
		n2 += snprintf(c2 + n2, sizeof(c2) - (size_t)n2, "%s%d", i ? ", " : "", i % 4);
	}
	snprintf(text, sizeof(text),
		 "{\"channels\": {\"combined\": 16, \"combined_max\": 63}, "
		 "\"features\": {\"rx-ntuple-filter\": {\"on\": true, \"fixed\": false}}, "
		 "\"flows\": {\"size\": 64, \"rules\": [%s]}, "
		 "\"rss\": {\"indir\": [%s], \"key_size\": 40, \"hfunc\": 1, \"hash_fields\": {\"tcp4\": \"sdfn\"}, "
		 "\"max_contexts\": 8, \"contexts\": [{\"id\": 1, \"indir\": [%s]}, {\"id\": 2, \"indir\": [%s]}]}}",
		 rules, c1, c1, c2);
	tree_write(root, "ethtool/enos2.json", text);
}

static const json_t *finding(const json_t *doc, const char *id, int nth)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(doc, "findings"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "id")), id) && nth-- == 0)
			return f;
	return NULL;
}

static char *compact(const json_t *j)
{
	return j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : strdup("(null)");
}

#define CHECK_JSON(j, want)                                                              \
	do {                                                                             \
		char *got_ = compact(j);                                                 \
		CHECK_MSG(got_ && !strcmp(got_, want), "got %s\nwant %s", got_, want);  \
		free(got_);                                                              \
	} while (0)

static void test_findings(const nt_ctx *ctx)
{
	nt_topology *t = NULL;
	set_doc("{\"location\": 0, \"rule\": \"tcp4 dst-port 5201 context 1 queue 0\"}, "
		"{\"location\": 1, \"rule\": \"tcp4 dst-port 5202 context 1 queue 0\"}, "
		"{\"location\": 2, \"rule\": \"tcp4 dst-port 6201 context 2 queue 0\"}, "
		"{\"location\": 3, \"rule\": \"tcp4 dst-port 7201 context 2 queue 11\"}");
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	if (!t)
		return;
	json_t *reserved = json_pack("{s:s}", "enos2", "96,99");
	nt_diag_options o = { .rtt_ms = 10, .reserved = reserved };
	json_t *doc = nt_diagnose(t, &o);
	const json_t *f = finding(doc, "flow-context-remote", 0);
	CHECK_MSG(f && strstr(json_string_value(json_object_get(f, "message")),
			      "enos2's flow rules at locations 0, 1 ('tcp4 dst-port 5201 context 1 queue 0', ...) send "
			      "flows to RSS context 1, whose table spreads them over queues 0-15; the IRQs of queues "
			      "11-15 are served by CPU 1,4,7,10,13, off the NIC's node 1"),
		  "%s", f ? json_string_value(json_object_get(f, "message")) : "no flow-context-remote");
	json_t *ev = json_object_get(f, "evidence");
	CHECK_JSON(json_object_get(ev, "rules"), "[{\"location\":0,\"rule\":\"tcp4 dst-port 5201 context 1 queue 0\"},"
						 "{\"location\":1,\"rule\":\"tcp4 dst-port 5202 context 1 queue 0\"}]");
	CHECK_JSON(json_array_get(json_object_get(ev, "remote_queues"), 0), "{\"irq\":152,\"irq_cpus\":\"1\",\"queue\":11}");
	CHECK_INT(json_array_size(json_object_get(ev, "remote_queues")), 5);
	CHECK(json_is_null(json_object_get(ev, "node")));
	CHECK_JSON(json_object_get(f, "fix"),
		   "{\"rss\":[{\"context\":1,\"interface\":\"enos2\",\"queues\":\"placed\",\"replace\":true}]}");
	/* Context 2 at offset 11: queues 11-14, remote, no fix (a placed
	 * table would be shifted); no flow-queue-remote for a context rule. */
	f = finding(doc, "flow-context-remote", 1);
	ev = json_object_get(f, "evidence");
	CHECK_INT(json_integer_value(json_object_get(ev, "context")), 2);
	CHECK_INT(json_integer_value(json_object_get(ev, "queue_offset")), 11);
	CHECK_STR(json_string_value(json_object_get(ev, "queues")), "11-14");
	CHECK(f && json_is_null(json_object_get(f, "fix")));
	CHECK(!finding(doc, "flow-context-remote", 2));
	CHECK(!finding(doc, "flow-queue-remote", 0));
	/* Context 2 at offset 0: queues 0-3, on the node; queues 0 and 1 on
	 * the reserved CPUs 96 and 99. Context 1 too (queues 0-15). */
	int ctx2 = 0;
	for (int k = 0; k < 3; k++) {
		f = finding(doc, "flow-context-reserved", k);
		ev = json_object_get(f, "evidence");
		if (!f || json_integer_value(json_object_get(ev, "context")) != 2)
			continue;
		ctx2++;
		CHECK_JSON(json_object_get(ev, "reserved_queues"), "[{\"irq\":141,\"irq_cpus\":\"96\",\"queue\":0},"
								  "{\"irq\":142,\"irq_cpus\":\"99\",\"queue\":1}]");
		CHECK_MSG(strstr(json_string_value(json_object_get(f, "message")),
				 "location 2 ('tcp4 dst-port 6201 context 2 queue 0') send flows to RSS context 2, whose "
				 "table spreads them over queues 0-3; the IRQs of queues 0-1 are served on CPU 96,99, "
				 "reserved for applications"),
			  "%s", json_string_value(json_object_get(f, "message")));
	}
	CHECK_INT(ctx2, 1);
	CHECK(finding(doc, "flow-context-reserved", 1) && !finding(doc, "flow-context-reserved", 2));

	/* --fix-profile: context 1's entry once (remote and reserved give the
	 * same), context 2's, beside each NIC's own table (rss-queues-misplaced:
	 * an entry a NIC and context); planned on the host, context 1 on the
	 * queues its node 1 serves (none is reserved in a fix profile): 0-10. */
	json_t *fp = nt_diagnose_fix_profile(doc, "fixes");
	json_t *rss = json_object_get(fp, "rss");
	CHECK_JSON(rss, "[{\"interface\":\"enos0\",\"queues\":\"placed\"},{\"interface\":\"enos1\",\"queues\":\"placed\"},"
			"{\"context\":1,\"interface\":\"enos2\",\"queues\":\"placed\",\"replace\":true},"
			"{\"context\":2,\"interface\":\"enos2\",\"queues\":\"placed\",\"replace\":true},"
			"{\"interface\":\"enos2\",\"queues\":\"placed\"},{\"interface\":\"enos3\",\"queues\":\"placed\"}]");
	json_t *only = json_pack("{s:s, s:O}", "name", "fixes", "rss", rss);
	nt_plan plan;
	json_t *errors = json_array();
	int r = nt_plan_build(ctx, NULL, t, only, &plan, errors);
	char *e = compact(errors);
	CHECK_MSG(r == 0, "%s", e);
	free(e);
	if (r == 0) {
		bool seen = false;
		for (int k = 0; k < plan.nsteps; k++) {
			if (strcmp(plan.steps[k].target, "enos2/context-1"))
				continue;
			json_t *st = nt_step_to_json(&plan.steps[k]);
			CHECK_STR(json_string_value(json_object_get(st, "after")), "0-10*23 0-2");
			json_decref(st);
			seen = true;
		}
		CHECK(seen);
		nt_plan_free(&plan);
	}
	json_decref(errors);
	json_decref(only);
	json_decref(fp);
	json_decref(doc);

	/* The profile in effect gives context 1 node 0: judged against node 0
	 * (queues 0-10 are then the remote ones), and the fix keeps the node. */
	json_t *prof = json_loads("{\"name\":\"p\",\"rss\":[{\"interface\":\"enos2\",\"context\":1,"
				  "\"queues\":\"placed\",\"node\":0}]}",
				  0, NULL);
	o.profile = prof;
	o.profile_source = "transaction 1";
	o.reserved = NULL;
	doc = nt_diagnose(t, &o);
	f = finding(doc, "flow-context-remote", 0);
	ev = json_object_get(f, "evidence");
	CHECK_INT(json_integer_value(json_object_get(ev, "node")), 0);
	CHECK_INT(json_array_size(json_object_get(ev, "remote_queues")), 11);
	CHECK_MSG(f && strstr(json_string_value(json_object_get(f, "message")),
			      "the IRQs of queues 0-10 are served by CPU 96,99,102,105,108,111,114,117,120,123,126, off "
			      "node 0, which the profile in effect gives the context"),
		  "%s", f ? json_string_value(json_object_get(f, "message")) : "none");
	CHECK_JSON(json_object_get(f, "fix"), "{\"rss\":[{\"context\":1,\"interface\":\"enos2\",\"node\":0,"
					      "\"queues\":\"placed\",\"replace\":true}]}");
	json_decref(doc);
	json_decref(prof);
	json_decref(reserved);
	nt_topology_free(t);
}

int main(void)
{
	char cmd[256];
	nt_ctx ctx;
	test_pick();
	test_irq_text();
	snprintf(root, sizeof(root), "/tmp/nt-rssplaced-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	test_findings(&ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
	TEST_MAIN_END();
}
