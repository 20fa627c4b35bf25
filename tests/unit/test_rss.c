/* SPDX-License-Identifier: Apache-2.0 */
/* RSS (settings/rss.c, kernel/rss.c) on a copy of the EPYC tree whose
 * ports are given "rss" objects: the table's text both ways (round
 * robin, blocks, a tail, a table with no short text), ethtool's weight
 * fill; the rss[] section's 422s with JSON paths (a NIC with a table of
 * size 0, fields it cannot hash, equal or weights beyond its RX queues);
 * the plan (channels, then IRQ affinity, then RSS, then XPS; "placed"
 * following the IRQ CPUs, said in the warnings); a transaction applied,
 * read back, planned again with no step, and rolled back to the table
 * and fields that were there; fewer channels under a table and a rule
 * that name queues above the new count (the table and the rule go
 * first, the kernel refusing the channels otherwise). */
#include "diagnose/diagnose.h"
#include "engine/plan.h"
#include "engine/txn.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/ethtool.h"
#include "kernel/flows.h"
#include "kernel/rss.h"
#include "settings/setting.h"
#include "setting_util.h"
#include "harness.h"
#include "plan_util.h"
#include "tree_files.h"
#include "test_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char root[64], state[64];

static void test_text(void)
{
	uint32_t t[300], back[300], n;
	char text[NT_VALUE_MAX];
	for (int i = 0; i < 128; i++)
		t[i] = (uint32_t)(i % 4);
	CHECK_INT(nt_rss_indir_format(t, 128, text, sizeof(text)), 0);
	CHECK_STR(text, "0-3*32");
	uint32_t w2[2] = { 1, 1 };
	nt_rss_indir_weights(w2, 2, t, 128);
	CHECK(t[0] == 0 && t[63] == 0 && t[64] == 1 && t[127] == 1);
	CHECK_INT(nt_rss_indir_format(t, 128, text, sizeof(text)), 0);
	CHECK_STR(text, "0*64 1*64");
	/* Weights 1 0 2: queue 1 gets nothing, queue 2 two thirds. */
	uint32_t w3[3] = { 1, 0, 2 };
	nt_rss_indir_weights(w3, 3, t, 12);
	CHECK_INT(nt_rss_indir_format(t, 12, text, sizeof(text)), 0);
	CHECK_STR(text, "0*4 2*8");
	for (int i = 0; i < 128; i++)
		t[i] = (uint32_t)(i % 3);
	CHECK_INT(nt_rss_indir_format(t, 128, text, sizeof(text)), 0);
	CHECK_STR(text, "0-2*42 0-1");
	CHECK_INT(nt_rss_indir_parse(text, back, 300, &n), 0);
	CHECK(n == 128 && memcmp(back, t, sizeof(uint32_t) * 128) == 0);
	CHECK_INT(nt_rss_indir_parse("3,1,7-9*2 5", back, 300, &n), 0);
	CHECK(n == 11 && back[0] == 3 && back[1] == 1 && back[2] == 7 && back[5] == 3 && back[10] == 5);
	/* Malformed, or more entries than the table. */
	CHECK(nt_rss_indir_parse("", back, 300, &n) < 0 && nt_rss_indir_parse("1-", back, 300, &n) < 0 &&
	      nt_rss_indir_parse("3-1", back, 300, &n) < 0 && nt_rss_indir_parse("0*1", back, 300, &n) < 0 &&
	      nt_rss_indir_parse("0 ", back, 300, &n) < 0 && nt_rss_indir_parse("0-3*80", back, 300, &n) < 0 &&
	      nt_rss_indir_parse("01", back, 300, &n) < 0);
	/* A scrambled table of 256 has no text of 256 characters: -E2BIG, so
	 * the plan leaves it (it could not be put back) rather than lose it. */
	uint32_t x = 12345;
	for (int i = 0; i < 256; i++) {
		x = x * 1103515245u + 12345u;
		back[i] = (x >> 16) % 16;
	}
	CHECK_INT(nt_rss_indir_format(back, 256, text, sizeof(text)), -E2BIG);
	/* Every table that fits comes back the same. */
	for (int round = 0; round < 50; round++) {
		uint32_t len = 8 + (uint32_t)round * 5;
		for (uint32_t i = 0; i < len; i++) {
			x = x * 1103515245u + 12345u;
			t[i] = round % 2 ? i % (1 + (uint32_t)round % 7) : (x >> 16) % 4;
		}
		if (nt_rss_indir_format(t, len, text, sizeof(text)) < 0)
			continue;
		CHECK_MSG(nt_rss_indir_parse(text, back, 300, &n) == 0 && n == len &&
				  memcmp(back, t, len * sizeof(uint32_t)) == 0,
			  "round %d: '%s'", round, text);
	}
	const nt_setting_kind *k = nt_setting_find("rss");
	nt_value v;
	CHECK(k != NULL);
	if (!k)
		return;
	CHECK_INT(k->parse("0,1,2,3*2", &v), 0);
	CHECK_STR(nt_t_str(k, &v), "0-3*2");
	CHECK_INT(k->parse("nfds", &v), 0);
	CHECK_STR(nt_t_str(k, &v), "sdfn");
	CHECK(k->parse("", &v) < 0 && k->parse("sx", &v) < 0 && k->parse("0-", &v) < 0);
	CHECK(k->order > nt_setting_channels.order && k->order > nt_setting_irq_affinity.order &&
	      k->order < nt_setting_find("xps_cpus")->order && nt_setting_channels.order < nt_setting_irq_affinity.order);
}

/* enos0-3 have 16 RX queues and, in the fixture, mlx5's table of 256 in
 * turn (tests/fixtures/gen/mkhost.py); here enos1 is given no table (size
 * 0, as a virtio NIC without rss=on) and hashes nothing, and enos0 does
 * not hash UDP over IPv6. */
static void add_rss(const char *iface, const char *rss)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL);
	CHECK(doc != NULL);
	json_object_set_new(doc, "rss", json_loads(rss, 0, NULL));
	CHECK_INT(json_dump_file(doc, path, JSON_COMPACT | JSON_SORT_KEYS), 0);
	json_decref(doc);
}

static void setup(void)
{
	char rss[2048];
	int n = snprintf(rss, sizeof(rss), "{\"indir\":[");
	for (int i = 0; i < 256; i++)
		n += snprintf(rss + n, sizeof(rss) - (size_t)n, "%s%d", i ? "," : "", i % 16);
	snprintf(rss + n, sizeof(rss) - (size_t)n,
		 "],\"key_size\":40,\"hfunc\":1,\"hash_fields\":{\"tcp4\":\"sdfn\",\"udp4\":\"sd\",\"tcp6\":\"sdfn\"}}");
	add_rss("enos0", rss);
	add_rss("enos1", "{\"indir\":[],\"key_size\":0,\"hfunc\":0,\"hash_fields\":{}}");
}

static void test_validation(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	char *before = tree_read(root, "ethtool/enos0.json");
	int r = nt_t_plan(ctx, t,
			"{\"name\":\"x\",\"rss\":[{\"interface\":\"enos1\",\"equal\":2,\"hash_fields\":{\"tcp4\":\"sdfn\"}},"
			"{\"interface\":\"enos0\",\"equal\":17},"
			"{\"interface\":\"enos0\",\"weights\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,3]},"
			"{\"interface\":\"enos0\",\"hash_fields\":{\"udp6\":\"sdfn\",\"tcp5\":\"sd\",\"tcp4\":\"sx\"}},"
			"{\"interface\":\"enos0\",\"queues\":\"all\",\"equal\":1},{\"interface\":\"enos0\"},"
			"{\"interface\":\"enos0\",\"weights\":[0,0]}]}",
			&plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	char *text = json_dumps(errors, 0);
	CHECK_MSG(has_error(errors, "$.rss[0].equal", "no RSS indirection table (size 0)"), "%s", text);
	CHECK(has_error(errors, "$.rss[0].hash_fields.tcp4", "cannot hash tcp4"));
	CHECK(has_error(errors, "$.rss[1].equal", "above enos0's 16 RX queues"));
	CHECK(has_error(errors, "$.rss[2].weights[16]", "beyond them"));
	CHECK(has_error(errors, "$.rss[3].hash_fields.udp6", "cannot hash udp6"));
	CHECK(has_error(errors, "$.rss[3].hash_fields.tcp5", "unknown flow type"));
	CHECK(has_error(errors, "$.rss[3].hash_fields.tcp4", "ethtool's letters"));
	CHECK(has_error(errors, "$.rss[4]", "at most one of"));
	CHECK(has_error(errors, "$.rss[4].queues", "unknown 'queues'"));
	CHECK(has_error(errors, "$.rss[5]", "give one of"));
	CHECK(has_error(errors, "$.rss[6].weights", "above 0"));
	free(text);
	json_decref(errors);
	/* Nothing was sent anywhere. */
	char *after = tree_read(root, "ethtool/enos0.json");
	CHECK(before && after && strcmp(before, after) == 0);
	free(before);
	free(after);
}

#define PROFILE                                                                                        \
	"{\"name\":\"rss\",\"irq_affinity\":[{\"interface\":\"enos0\",\"policy\":\"local\"}],"            \
	"\"channels\":[{\"interface\":\"enos2\",\"combined\":8}],"                                         \
	"\"rss\":[{\"interface\":\"enos0\",\"queues\":\"placed\",\"hash_fields\":{\"udp4\":\"sdfn\"}}," \
	"{\"interface\":\"enos2\",\"equal\":2}],"                                                         \
	"\"xps\":[{\"interface\":\"enos0\",\"policy\":\"irq\"}]}"

static void test_plan(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	int pr = nt_t_plan(ctx, t, PROFILE, &plan, &errors);
	CHECK_MSG(pr == 0, "plan: %d %s", pr, json_dumps(errors, 0));
	json_decref(errors);
	if (pr)
		return;
	json_t *pd = nt_plan_to_json(&plan, NULL), *steps = json_object_get(pd, "steps");
	char *text = json_dumps(pd, 0);
	int ch = -1, irq = -1, tab = -1, hash = -1, xps = -1, tab2 = -1;
	step_find(steps, "channels", "enos2", &ch);
	step_find(steps, "irq_affinity", json_string_value(json_object_get(json_array_get(steps, (size_t)ch + 1), "target")),
		&irq);
	const json_t *s = step_find(steps, "rss", "enos0/indir", &tab);
	step_find(steps, "rss", "enos0/hash-udp4", &hash);
	step_find(steps, "rss", "enos2/indir", &tab2);
	step_find(steps, "xps_cpus", "enos0/tx-0", &xps);
	/* enos2 goes from 16 channels to 8: its table over 2 queues is set
	 * before, as the kernel refuses fewer channels than a user-set table
	 * names; enos0's steps keep their order after the IRQs. */
	CHECK_MSG(ch >= 0 && irq > ch && hash > irq && tab2 >= 0 && tab2 < ch && xps > hash, "order: %s", text);
	/* Every enos0 IRQ is placed on its node: all 16 queues take flows in
	 * turn, which is the table there already. */
	CHECK_MSG(!s, "%s", text);
	s = step_find(steps, "rss", "enos0/hash-udp4", &tab);
	s = step_find(steps, "rss", "enos2/indir", NULL);
	CHECK(s && strcmp(json_string_value(json_object_get(s, "after")), "0-1*128") == 0);
	s = step_find(steps, "rss", "enos0/hash-udp4", NULL);
	CHECK(s && strcmp(json_string_value(json_object_get(s, "before")), "sd") == 0 &&
	      strcmp(json_string_value(json_object_get(s, "after")), "sdfn") == 0);
	CHECK_MSG(warned(json_object_get(pd, "warnings"), "enos0: the RSS table sends flows to RX queues 0-15") &&
			  warned(json_object_get(pd, "warnings"), "as this profile's irq_affinity steps place them"),
		  "%s", text);
	CHECK(warned(json_object_get(pd, "warnings"), "enos2: the RSS table follows the 8 RX queues its channels step makes"));
	free(text);
	json_decref(pd);
	nt_plan_free(&plan);

	/* Without irq_affinity, "placed" goes by where the IRQs are now: on
	 * this host half of them are off the NIC's node. */
	pr = nt_t_plan(ctx, t, "{\"name\":\"p\",\"rss\":[{\"interface\":\"enos0\",\"queues\":\"placed\"}]}", &plan,
		     &errors);
	CHECK_INT(pr, 0);
	json_decref(errors);
	if (pr)
		return;
	pd = nt_plan_to_json(&plan, NULL);
	text = json_dumps(pd, 0);
	s = step_find(json_object_get(pd, "steps"), "rss", "enos0/indir", NULL);
	CHECK_MSG(s && strcmp(json_string_value(json_object_get(s, "after")), "0-15*16") != 0, "%s", text);
	CHECK_MSG(warned(json_object_get(pd, "warnings"), "as they are now") && warned(json_object_get(pd, "warnings"), "not to queues"), "%s", text);
	free(text);
	json_decref(pd);
	nt_plan_free(&plan);
}

/* The "configured" flag the fixture keeps, as the kernel's
 * IFF_RXFH_CONFIGURED: absent is false; -1 when it is not a boolean or the
 * document cannot be read. */
static int configured(const char *iface)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL);
	json_t *c = json_object_get(json_object_get(doc, "rss"), "configured");
	int r = !doc ? -1 : !c ? 0 : json_is_boolean(c) ? json_is_true(c) : -1;
	json_decref(doc);
	return r;
}

static void test_transaction(const nt_ctx *ctx)
{
	nt_txn_engine *e = NULL;
	nt_rss before, now;
	const char *prof = "{\"name\":\"t\",\"rss\":[{\"interface\":\"enos0\",\"equal\":2,"
			   "\"hash_fields\":{\"tcp4\":\"sd\",\"udp4\":\"sdfn\"}}]}";
	CHECK_INT(nt_rss_read(ctx, "enos0", &before), 0);
	char *text_before = tree_read(root, "ethtool/enos0.json");
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e)
		goto out;
	json_t *profile = json_loads(prof, 0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome o = { 0 };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	int64_t id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	CHECK_INT(nt_rss_read(ctx, "enos0", &now), 0);
	CHECK(now.indir_size == 256 && now.indir[0] == 0 && now.indir[1] == 1 && now.indir[2] == 0 &&
	      now.indir[255] == 1);
	CHECK_STR(now.fields[0], "sd");
	CHECK_STR(now.fields[1], "sdfn");
	CHECK(now.key_size == before.key_size && now.hfunc == before.hfunc);
	nt_rss_free(&now);
	CHECK_INT(configured("enos0"), 1);

	/* Planned again: nothing left to do. */
	nt_topology *t = NULL;
	nt_plan plan;
	json_t *errors = json_array();
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	CHECK_INT(t ? nt_plan_build(ctx, NULL, t, profile, &plan, errors) : -1, 0);
	CHECK_MSG(t && plan.nsteps == 0, "%d steps left", plan.nsteps);
	if (t)
		nt_plan_free(&plan);
	nt_topology_free(t);
	json_decref(errors);

	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
	CHECK_INT(nt_rss_read(ctx, "enos0", &now), 0);
	CHECK(now.indir_size == before.indir_size &&
	      memcmp(now.indir, before.indir, before.indir_size * sizeof(uint32_t)) == 0);
	for (int f = 0; f < NT_RSS_FLOWS; f++)
		CHECK_STR(now.fields[f], before.fields[f]);
	nt_rss_free(&now);
	/* The table put back is the driver's default: sent as default, not
	 * pinned, so a later channel change is not refused. */
	CHECK_INT(configured("enos0"), 0);
	/* ...and the document is the one that was there, byte for byte, not
	 * an equal one re-indented with "configured" added (issue 43, item
	 * 22). */
	char *text_after = tree_read(root, "ethtool/enos0.json");
	CHECK(text_before && text_after);
	CHECK_MSG(text_before && text_after && !strcmp(text_before, text_after), "after the rollback:\n%.300s",
		  text_after ? text_after : "(none)");
	free(text_after);
	uint32_t rr[8] = { 0, 1, 2, 0, 1, 2, 0, 1 };
	CHECK(nt_rss_indir_is_default(rr, 8, 3) && !nt_rss_indir_is_default(rr, 8, 4) &&
	      !nt_rss_indir_is_default(rr, 8, 0));
	json_decref(profile);
out:
	free(text_before);
	nt_rss_free(&before);
	nt_txn_engine_close(e);
}

/* TEXT applied as a transaction on ENGINE: its id, its status in STATUS. */
static int64_t apply(nt_txn_engine *e, const char *text, char *status, size_t size)
{
	json_t *profile = json_loads(text, 0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome o = { 0 };
	int r = nt_txn_apply(e, &req, &o);
	snprintf(status, size, "%s", r == 0 ? json_string_value(json_object_get(o.doc, "status")) : "refused");
	int64_t id = r == 0 ? json_integer_value(json_object_get(o.doc, "id")) : -1;
	if (r == 0 && strcmp(status, "applied") != 0) {
		char *doc = json_dumps(o.doc, 0);
		fprintf(stderr, "%.2000s\n", doc);
		free(doc);
	}
	nt_txn_outcome_free(&o);
	json_decref(profile);
	return id;
}

/* FORCE: B and its rollback changed A's targets since A. */
static void rollback(nt_txn_engine *e, int64_t id, bool force)
{
	nt_txn_request back = { .client = "test", .identity = "" };
	nt_txn_outcome o = { 0 };
	CHECK_INT(nt_txn_rollback(e, id, force, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
}

/* enos3's table, channels and the queue of its rule at location 0 as
 * they read now: "16 8-15*32 12". */
static void enos3_state(const nt_ctx *ctx, char *out, size_t size)
{
	nt_channels c;
	nt_rss r;
	nt_flow_table tab;
	char text[NT_VALUE_MAX] = "?";
	long q = -1;
	memset(&c, 0, sizeof(c));
	nt_ethtool_get_channels(ctx, "enos3", &c);
	if (nt_rss_read(ctx, "enos3", &r) == 0) {
		nt_rss_indir_format(r.indir, r.indir_size, text, sizeof(text));
		nt_rss_free(&r);
	}
	if (nt_flows_read(ctx, "enos3", &tab) == 0) {
		for (int i = 0; i < tab.n; i++)
			if (tab.rules[i].location == 0)
				q = tab.rules[i].queue;
		nt_flow_table_free(&tab);
	}
	snprintf(out, size, "%u %s %ld", c.combined + c.rx, text, q);
}

/* Profile A sends enos3's flows to queues 8-15 and a port to queue 12;
 * profile B, applied over it, halves enos3's channels to 8 with a table
 * and the rule on the queues that stay. The kernel refuses to lower the
 * channels while a user-set table or a rule names a queue they take away
 * (ethtool_check_max_channel; the fixture does as it does), so B sets
 * the table and the rule first, then the channels; its rollback, going
 * backwards, grows the channels back before it puts A's table back. */
static void test_lower_channels(const nt_ctx *ctx)
{
	nt_txn_engine *e = NULL;
	char status[32], got[NT_VALUE_MAX + 32], err[200] = "";
	const char *a = "{\"name\":\"a\",\"rss\":[{\"interface\":\"enos3\",\"queues\":\"8-15\"}],"
			"\"flows\":[{\"interface\":\"enos3\",\"flow_type\":\"tcp4\",\"dst_port\":5002,\"queue\":12}]}";
	const char *b = "{\"name\":\"b\",\"channels\":[{\"interface\":\"enos3\",\"combined\":8}],"
			"\"rss\":[{\"interface\":\"enos3\",\"equal\":8}],"
			"\"flows\":[{\"interface\":\"enos3\",\"flow_type\":\"tcp4\",\"dst_port\":5002,\"queue\":4,"
			"\"replace\":true}]}";
	char *text_before = tree_read(root, "ethtool/enos3.json");
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e)
		goto out;
	int64_t ida = apply(e, a, status, sizeof(status));
	CHECK_STR(status, "applied");
	enos3_state(ctx, got, sizeof(got));
	CHECK_STR(got, "16 8-15*32 12");
	CHECK_INT(configured("enos3"), 1);

	/* The fixture refuses 8 channels under that table, with the
	 * kernel's words, and leaves the NIC as it was. */
	nt_channels eight = { .combined = 8 };
	CHECK_INT(nt_ethtool_set_channels(ctx, "enos3", &eight, err, sizeof(err)), -EINVAL);
	CHECK_MSG(strstr(err, "requested channel counts are too low for existing indirection table (15)"), "%s", err);

	/* B's plan: table and rule, then channels. */
	nt_topology *t = NULL;
	nt_plan plan;
	json_t *errors = json_array(), *profile = json_loads(b, 0, NULL);
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	int pr = t ? nt_plan_build(ctx, NULL, t, profile, &plan, errors) : -1;
	CHECK_INT(pr, 0);
	if (pr == 0) {
		json_t *pd = nt_plan_to_json(&plan, NULL), *steps = json_object_get(pd, "steps");
		int ch = -1, tab = -1, rule = -1;
		step_find(steps, "channels", "enos3", &ch);
		step_find(steps, "rss", "enos3/indir", &tab);
		step_find(steps, "flow", "enos3/loc-0", &rule);
		char *ptext = json_dumps(steps, 0);
		CHECK_MSG(tab >= 0 && rule > tab && ch > rule, "order: %s", ptext);
		free(ptext);
		json_decref(pd);
		nt_plan_free(&plan);
	}
	json_decref(profile);

	/* A table or a rule on a queue the channels step takes away is
	 * refused at plan time, not left for the kernel to refuse. */
	profile = json_loads("{\"name\":\"c\",\"channels\":[{\"interface\":\"enos3\",\"combined\":8}],"
			     "\"rss\":[{\"interface\":\"enos3\",\"queues\":\"4-11\"}],"
			     "\"flows\":[{\"interface\":\"enos3\",\"flow_type\":\"tcp4\",\"dst_port\":5003,"
			     "\"queue\":9,\"location\":5}]}",
			     0, NULL);
	json_array_clear(errors);
	CHECK_INT(t ? nt_plan_build(ctx, NULL, t, profile, &plan, errors) : -1, NT_EINVALID);
	char *etext = json_dumps(errors, 0);
	CHECK_MSG(has_error(errors, "$.rss[0].queues", "names RX queue 8, and this profile's channels step leaves 8"),
		  "%s", etext);
	CHECK_MSG(has_error(errors, "$.flows[0]", "RX queue 9, and this profile's channels step leaves 8"), "%s",
		  etext);
	free(etext);
	json_decref(profile);
	json_decref(errors);
	nt_topology_free(t);

	int64_t idb = apply(e, b, status, sizeof(status));
	CHECK_STR(status, "applied");
	enos3_state(ctx, got, sizeof(got));
	CHECK_STR(got, "8 0-7*32 4");
	rollback(e, idb, false);
	enos3_state(ctx, got, sizeof(got));
	CHECK_STR(got, "16 8-15*32 12");
	rollback(e, ida, true);
	char *text_after = tree_read(root, "ethtool/enos3.json");
	CHECK_MSG(text_before && text_after && !strcmp(text_before, text_after), "after the rollbacks:\n%.300s",
		  text_after ? text_after : "(none)");
	free(text_after);
out:
	free(text_before);
	nt_txn_engine_close(e);
}

/* enos0's table sends flows to every queue, and half its IRQs are off
 * its node: a finding, whose fix ("placed") plans a table of the other
 * half; with the IRQs placed, a CPU reserved for applications under one
 * of them is found the same way. */
static void test_diagnose(const nt_ctx *ctx)
{
	nt_topology *t = NULL;
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	json_t *doc = t ? nt_diagnose(t, NULL) : NULL;
	const json_t *f = finding(doc, "rss-queues-misplaced", "enos0");
	char *text = doc ? json_dumps(doc, 0) : NULL;
	CHECK_MSG(f != NULL, "%s", text ? text : "?");
	free(text);
	const json_t *ev = json_object_get(f, "evidence");
	size_t nq = json_array_size(json_object_get(ev, "queues"));
	CHECK(f && nq > 0 && nq < 16 && json_integer_value(json_object_get(ev, "entries_misplaced")) == (json_int_t)nq * 16);
	CHECK(f && strcmp(json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(f, "fix"),
											       "rss"),
									     0),
							   "queues")),
			  "placed") == 0);
	/* enos1 has no table: nothing to say about it. */
	CHECK(!finding(doc, "rss-queues-misplaced", "enos1"));
	json_t *fixp = doc ? nt_diagnose_fix_profile(doc, "fixes") : NULL;
	nt_plan plan;
	json_t *errors = json_array();
	int r = fixp && t ? nt_plan_build(ctx, NULL, t, fixp, &plan, errors) : -1;
	CHECK_MSG(r == 0, "the fix profile does not plan: %s", json_dumps(errors, 0));
	/* The whole fix also places the IRQs on the node (irq-remote-node),
	 * and then the table in place is right; the fragment alone changes
	 * the table. */
	if (r == 0)
		nt_plan_free(&plan);
	json_t *frag = json_pack("{s:s, s:O}", "name", "frag", "rss", json_object_get(json_object_get(f, "fix"), "rss"));
	r = frag && t ? nt_plan_build(ctx, NULL, t, frag, &plan, errors) : -1;
	json_decref(frag);
	CHECK_MSG(r == 0, "the fragment does not plan: %s", json_dumps(errors, 0));
	if (r == 0) {
		bool found = false;
		for (int i = 0; i < plan.nsteps; i++)
			found |= strcmp(plan.steps[i].target, "enos0/indir") == 0;
		CHECK(found);
		nt_plan_free(&plan);
	}
	json_decref(errors);
	json_decref(fixp);
	json_decref(doc);

	/* CPUs reserved for applications: any queue whose IRQ is on one. */
	json_t *reserved = json_pack("{s:s}", "enos2", "0-127");
	nt_diag_options opt = { .rtt_ms = 10, .reserved = reserved };
	doc = t ? nt_diagnose(t, &opt) : NULL;
	f = finding(doc, "rss-queues-misplaced", "enos2");
	CHECK(f && json_array_size(json_object_get(json_object_get(f, "evidence"), "queues")) == 16);
	json_decref(doc);
	json_decref(reserved);
	nt_topology_free(t);
}

/* The 256-CPU tree (gen/mkhost.py big): 16 ports of 64 queues, their IRQs
 * scattered over every node. "placed" with the IRQs placed local: every
 * queue takes flows and the table is the driver's (no step); without the
 * placement, a table per port of the queues on its node, applied and
 * rolled back to the default. */
static void test_big(void)
{
	char big[64], cmd[512];
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_plan plan;
	json_t *errors;
	snprintf(big, sizeof(big), "/tmp/nt-rss-big-XXXXXX");
	CHECK(mkdtemp(big) != NULL);
	snprintf(cmd, sizeof(cmd), "python3 '%s/gen/mkhost.py' big '%s/root' >/dev/null", NT_FIXTURES, big);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/root", big);
	CHECK_INT(nt_ctx_init(&ctx, cmd), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		goto out;
	int r = nt_t_plan(&ctx, t,
			"{\"name\":\"b\",\"irq_affinity\":[{\"interface\":\"enp*\",\"policy\":\"local\"}],"
			"\"rss\":[{\"interface\":\"enp*\",\"queues\":\"placed\",\"hash_fields\":{\"udp4\":\"sdfn\"}}]}",
			&plan, &errors);
	CHECK_MSG(r == 0, "big plan: %s", json_dumps(errors, 0));
	json_decref(errors);
	if (r == 0) {
		int tables = 0, hashes = 0;
		for (int i = 0; i < plan.nsteps; i++) {
			tables += plan.steps[i].kind == nt_setting_find("rss") && strstr(plan.steps[i].target, "/indir");
			hashes += plan.steps[i].kind == nt_setting_find("rss") && strstr(plan.steps[i].target, "/hash-udp4");
		}
		CHECK_INT(tables, 0);
		CHECK_INT(hashes, 16);
		nt_plan_free(&plan);
	}
	r = nt_t_plan(&ctx, t, "{\"name\":\"b\",\"rss\":[{\"interface\":\"enp*\",\"queues\":\"placed\"}]}", &plan,
		    &errors);
	CHECK_INT(r, 0);
	json_decref(errors);
	int tables = 0;
	for (int i = 0; r == 0 && i < plan.nsteps; i++)
		tables += strstr(plan.steps[i].target, "/indir") != NULL;
	CHECK_MSG(tables == 16, "%d tables planned", tables);
	if (r == 0)
		nt_plan_free(&plan);
	nt_topology_free(t);

	nt_txn_engine *e = NULL;
	char st[96];
	snprintf(st, sizeof(st), "%s/state", big);
	mkdir(st, 0700);
	CHECK_INT(nt_txn_engine_open(&ctx, st, &e), 0);
	if (!e)
		goto out;
	json_t *profile = json_loads("{\"name\":\"b\",\"rss\":[{\"interface\":\"enp*\",\"queues\":\"placed\"}]}", 0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome o = { 0 };
	nt_rss before, now;
	CHECK_INT(nt_rss_read(&ctx, "enp1s0f0", &before), 0);
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	int64_t id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	CHECK_INT(nt_rss_read(&ctx, "enp1s0f0", &now), 0);
	CHECK(now.indir_size == 256 && memcmp(now.indir, before.indir, 256 * sizeof(uint32_t)) != 0);
	nt_rss_free(&now);
	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
	CHECK_INT(nt_rss_read(&ctx, "enp1s0f0", &now), 0);
	CHECK(now.indir_size == 256 && memcmp(now.indir, before.indir, 256 * sizeof(uint32_t)) == 0);
	nt_rss_free(&now);
	nt_rss_free(&before);
	json_decref(profile);
	nt_txn_engine_close(e);
out:
	snprintf(cmd, sizeof(cmd), "rm -rf %s", big);
	system(cmd);
}

int main(void)
{
	char cmd[512];
	nt_ctx ctx;
	nt_topology *t = NULL;

	test_text();
	snprintf(root, sizeof(root), "/tmp/nt-rss-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-rss-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	setup();
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (t) {
		test_validation(&ctx, t);
		test_plan(&ctx, t);
		nt_topology_free(t);
		test_transaction(&ctx);
		test_lower_channels(&ctx);
		test_diagnose(&ctx);
	}
	test_big();
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
