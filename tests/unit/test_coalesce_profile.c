/* SPDX-License-Identifier: Apache-2.0 */
/* The adaptive-coalescing (DIM) profiles (issue 41): the reply parser fed
 * a COALESCE_GET reply built by hand with RX_PROFILE and TX_PROFILE nests
 * (levels of usec and pkts, a level attribute the table does not name, a
 * sixth level a newer kernel might send, a truncated level); the kinds'
 * text values; and on a copy of the EPYC fixture (enos0's driver keeping
 * the kernel's default EQE profiles with usec and pkts, enos1 coalescing
 * without profiles): the per-NIC report on 7.3 and on 6.1, the profile's
 * validation with JSON paths (wrong length, out of range, unknown key, a
 * field the driver lacks, a NIC without profiles, a kernel before 6.11, a
 * glob leaving NICs out), the plan, a transaction applied and rolled back
 * to the same bytes, and dim-profile-default with its fix. */
#include "diagnose/diagnose.h"
#include "engine/plan.h"
#include "engine/txn.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/ethtool.h"
#include "kernel/ethtool_nlattrs.h"
#include "settings/setting.h"
#include "harness.h"
#include "ethtool_groups.h"
#include "plan_util.h"
#include "setting_util.h"
#include "test_json.h"
#include "tree_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

/* ---- the parser ---- */

typedef struct {
	unsigned char b[2048];
	size_t len;
} buf;

static void put(buf *d, uint16_t type, const void *v, uint16_t n)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type };
	memcpy(d->b + d->len, &a, sizeof(a));
	if (n)
		memcpy(d->b + d->len + NLA_HDRLEN, v, n);
	memset(d->b + d->len + NLA_HDRLEN + n, 0, NLA_ALIGN(a.nla_len) - a.nla_len);
	d->len += NLA_ALIGN(a.nla_len);
}

static void put_u32(buf *d, uint16_t type, uint32_t v)
{
	put(d, type, &v, 4);
}

/* A profile nest of N levels of usec U[k] and pkts P[k] into D. */
static void profile(buf *d, uint16_t type, int n, const uint32_t *u, const uint32_t *p)
{
	buf nest = { .len = 0 };
	for (int k = 0; k < n; k++) {
		buf lv = { .len = 0 };
		put_u32(&lv, NT_ETHTOOL_A_IRQ_MODERATION_USEC, u[k]);
		put_u32(&lv, NT_ETHTOOL_A_IRQ_MODERATION_PKTS, p[k]);
		if (k == 2)
			put_u32(&lv, 9, 1); /* an attribute newer than the table */
		put(&nest, NLA_F_NESTED | NT_ETHTOOL_A_PROFILE_IRQ_MODERATION, lv.b, (uint16_t)lv.len);
	}
	put(d, (uint16_t)(NLA_F_NESTED | type), nest.b, (uint16_t)nest.len);
}

static void msg(buf *d)
{
	struct nlmsghdr h = { .nlmsg_type = 0x15, .nlmsg_seq = 1 };
	struct genlmsghdr g = { .cmd = ETHTOOL_MSG_COALESCE_GET_REPLY, .version = ETHTOOL_GENL_VERSION };
	memcpy(d->b, &h, sizeof(h));
	memcpy(d->b + NLMSG_HDRLEN, &g, sizeof(g));
	d->len = NLMSG_LENGTH(GENL_HDRLEN);
}

static void msg_end(buf *d)
{
	uint32_t len = (uint32_t)d->len;
	memcpy(d->b, &len, 4);
}

static void test_parse(void)
{
	static const uint32_t u[6] = { 1, 8, 64, 128, 256, 512 }, p[6] = { 256, 256, 256, 256, 256, 256 };
	static const uint32_t tu[5] = { 5, 8, 16, 32, 64 }, tp[5] = { 128, 64, 32, 32, 32 };
	nt_ethtool_values v;
	buf d;

	/* virtio_net on 7.3: adaptive RX, its EQE profiles (usec and pkts),
	 * TX first in the message; a sixth RX level is skipped. */
	msg(&d);
	put_u32(&d, ETHTOOL_A_COALESCE_RX_USECS, 0);
	profile(&d, NT_ETHTOOL_A_COALESCE_TX_PROFILE, 5, tu, tp);
	profile(&d, NT_ETHTOOL_A_COALESCE_RX_PROFILE, 6, u, p);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_rx_profile, d.b, d.len, &v), 0);
	CHECK_INT(v.present, 0x36db); /* usec and pkts of five levels */
	for (int k = 0; k < 5; k++) {
		CHECK_INT(v.v[3 * k], u[k]);
		CHECK_INT(v.v[3 * k + 1], 256);
	}
	/* A kernel before 6.11 or a driver without DIM profiles: nothing. */
	msg(&d);
	put_u32(&d, ETHTOOL_A_COALESCE_RX_USECS, 8);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_rx_profile, d.b, d.len, &v), 0);
	CHECK_INT(v.present, 0);
	/* A level's usec cut to two bytes: refused, nothing kept. */
	msg(&d);
	buf lv = { .len = 0 }, nest = { .len = 0 };
	uint16_t two = 8;
	put(&lv, NT_ETHTOOL_A_IRQ_MODERATION_USEC, &two, 2);
	put(&nest, NLA_F_NESTED | NT_ETHTOOL_A_PROFILE_IRQ_MODERATION, lv.b, (uint16_t)lv.len);
	put(&d, NLA_F_NESTED | NT_ETHTOOL_A_COALESCE_RX_PROFILE, nest.b, (uint16_t)nest.len);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_rx_profile, d.b, d.len, &v), NT_EPARSE);
	CHECK_INT(v.present, 0);
	/* A nested group's table is checked like any other: a field the
	 * ioctl carries cannot sit in a nest. */
	nt_ethtool_field bad[15];
	memcpy(bad, nt_test_profile_leaves, sizeof(bad));
	bad[0].ioc_off = 4;
	nt_ethtool_group g = nt_test_rx_profile;
	g.fields = bad;
	CHECK_INT(nt_ethtool_parse_reply(&g, d.b, d.len, &v), -EINVAL);
	g = nt_test_rx_profile;
	g.nentries = 4; /* 15 fields do not split into 4 levels */
	CHECK_INT(nt_ethtool_parse_reply(&g, d.b, d.len, &v), -EINVAL);
}

/* ---- the kinds' values ---- */

static void test_values(const nt_setting_kind *k)
{
	nt_value v;
	char out[NT_VALUE_MAX];
	const char *def = "1/256/-,8/256/-,64/256/-,128/256/-,256/256/-";
	CHECK_INT(k->parse(def, &v), 0);
	CHECK_INT(v.f.present, 0x36db);
	CHECK_INT(k->format(&v, out, sizeof(out)), 0);
	CHECK_STR(out, def);
	CHECK_INT(k->parse("-/-/-,-/-/-,-/-/-,-/-/-,65535/0/7", &v), 0);
	CHECK_INT(k->format(&v, out, sizeof(out)), 0);
	CHECK_STR(out, "-/-/-,-/-/-,-/-/-,-/-/-,65535/0/7");
	const char *bad[] = { "", "1/256/-,8/256/-,64/256/-,128/256/-", "1/256/-,8/256/-,64/256/-,128/256/-,256/256/-,",
			      "1/256,8/256/-,64/256/-,128/256/-,256/256/-", "65536/-/-,-/-/-,-/-/-,-/-/-,-/-/-",
			      "x/-/-,-/-/-,-/-/-,-/-/-,-/-/-", "1/256/-,8/256/-,64/256/-,128/256/-,256/256/-/1", NULL };
	for (int i = 0; bad[i]; i++)
		CHECK_MSG(k->parse(bad[i], &v) == NT_EPARSE, "'%s' parsed", bad[i]);
	CHECK(nt_t_equal(k, def, def));
	CHECK(!nt_t_equal(k, def, "1/256/-,8/256/-,8/256/-,128/256/-,256/256/-"));
	CHECK(!nt_t_equal(k, def, "1/256/0,8/256/-,64/256/-,128/256/-,256/256/-"));
}

/* ---- on a fixture ---- */

static char root[64], state[64];

#define EQE_RX "[{\"usec\":1,\"pkts\":256},{\"usec\":8,\"pkts\":256},{\"usec\":64,\"pkts\":256},{\"usec\":128,\"pkts\":256},{\"usec\":256,\"pkts\":256}]"
#define EQE_TX "[{\"usec\":1,\"pkts\":128},{\"usec\":8,\"pkts\":128},{\"usec\":32,\"pkts\":128},{\"usec\":64,\"pkts\":128},{\"usec\":128,\"pkts\":128}]"
#define LATENCY_RX "[{\"usec\":1},{\"usec\":8},{\"usec\":8},{\"usec\":8},{\"usec\":8}]"

/* ROOT/ethtool/IFACE.json's "coalesce" as TEXT, written the way the
 * fixture generator writes (one line, ", " and ": "). */
static void give_coalesce(const char *iface, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL), *c = json_loads(text, 0, NULL);
	CHECK_MSG(doc && c, "%s / %s", path, text);
	if (doc && c) {
		json_object_set(doc, "coalesce", c);
		CHECK_INT(json_dump_file(doc, path, 0), 0);
	}
	json_decref(doc);
	json_decref(c);
}

static void set_release(const char *rel)
{
	tree_write(root, "proc/sys/kernel/osrelease", rel);
}

static void test_report(const nt_ctx *ctx, const nt_topology *t)
{
	const nt_nic *n0 = nt_topology_nic(t, "enos0"), *n1 = nt_topology_nic(t, "enos1");
	CHECK(n0 && n1);
	if (!n0 || !n1)
		return;
	json_t *doc = json_object();
	CHECK_INT(nt_setting_report_detail(ctx, NULL, n0, doc), 0);
	json_t *cp = json_object_get(doc, "coalesce_params");
	json_t *rx = json_object_get(cp, "rx_profile"), *tx = json_object_get(cp, "tx_profile");
	CHECK(json_is_true(json_object_get(rx, "supported")));
	json_t *want = json_loads(EQE_RX, 0, NULL);
	CHECK(json_equal(json_object_get(rx, "value"), want));
	json_decref(want);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(tx, "value"), 4), "usec")), 128);
	CHECK_INT(json_object_size(cp), 7);
	json_decref(doc);

	/* enos1 coalesces without profiles; on 6.1 the kernel is named. */
	doc = json_object();
	CHECK_INT(nt_setting_report_detail(ctx, NULL, n1, doc), 0);
	rx = json_object_get(json_object_get(doc, "coalesce_params"), "rx_profile");
	CHECK(json_is_false(json_object_get(rx, "supported")));
	CHECK_STR(json_string_value(json_object_get(rx, "reason")), "the driver does not report it");
	json_decref(doc);
	set_release("6.1.0-27-amd64\n");
	doc = json_object();
	CHECK_INT(nt_setting_report_detail(ctx, NULL, n1, doc), 0);
	rx = json_object_get(json_object_get(doc, "coalesce_params"), "tx_profile");
	CHECK_STR(json_string_value(json_object_get(rx, "reason")),
		  "needs Linux 6.11 or later (this kernel is 6.1.0-27-amd64)");
	json_decref(doc);
	set_release("7.3.4+deb13-amd64\n");

	/* GET /v1/topology's document: no profile there. */
	json_t *top = nt_topology_to_json(t);
	char *text = json_dumps(top, JSON_COMPACT);
	CHECK(text && !strstr(text, "rx_profile") && !strstr(text, "coalesce_params"));
	free(text);
	json_decref(top);
}

static void test_validation(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	int r = nt_t_plan(ctx, t,
			  "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos0\",\"rx_profile\":[{\"usec\":1},{},{}]},"
			  "{\"interface\":\"enos0\",\"tx_profile\":[{\"usec\":70000},{\"usec\":-1},{\"usecs\":8},7,{}]},"
			  "{\"interface\":\"enos0\",\"rx_profile\":{\"usec\":8}},{\"interface\":\"enos0\"}]}",
			  &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.coalesce[0].rx_profile", "must list the 5 levels of an adaptive-coalescing profile"));
	CHECK(has_error(errors, "$.coalesce[0].rx_profile", "not 3"));
	CHECK(has_error(errors, "$.coalesce[1].tx_profile[0].usec", "integer from 0 to 65535"));
	CHECK(has_error(errors, "$.coalesce[1].tx_profile[1].usec", "integer from 0 to 65535"));
	CHECK(has_error(errors, "$.coalesce[1].tx_profile[2].usecs", ""));
	CHECK(has_error(errors, "$.coalesce[1].tx_profile[3]", "must be an object"));
	CHECK(has_error(errors, "$.coalesce[2].rx_profile", "must be an array of 5 levels"));
	CHECK(has_error(errors, "$.coalesce[3]", "rx_profile, tx_profile"));
	json_decref(errors);

	/* A field the driver's levels lack; a NIC whose driver keeps none. */
	r = nt_t_plan(ctx, t,
		      "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos0\",\"rx_profile\":[{\"comps\":4},{},{},{},{}]},"
		      "{\"interface\":\"enos1\",\"rx_profile\":" LATENCY_RX "}]}",
		      &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.coalesce[0].rx_profile",
			"enos0 does not support comps in its rx_profile: the driver's levels have usec, pkts"));
	CHECK(has_error(errors, "$.coalesce[1].rx_profile",
			"enos1 has no adaptive-coalescing profile to set (rx_profile): the driver does not report it"));
	json_decref(errors);

	/* On 6.1: the release named, nothing planned. */
	set_release("6.1.0-27-amd64\n");
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos1\",\"rx_profile\":" LATENCY_RX "}]}",
		      &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.coalesce[0].rx_profile", "needs Linux 6.11 or later (this kernel is 6.1.0-27-amd64)"));
	json_decref(errors);
	set_release("7.3.4+deb13-amd64\n");

	/* A glob: the NICs without profiles left out with a warning. */
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos*\",\"rx_profile\":" LATENCY_RX "}]}",
		      &plan, &errors);
	CHECK_INT(r, 0);
	CHECK_INT(plan.nsteps, 1);
	char *w = json_dumps(plan.warnings, JSON_COMPACT);
	CHECK_MSG(w && strstr(w, "enos1: no adaptive-coalescing profile (rx_profile: the driver does not report it); left out"), "%s", w ? w : "?");
	free(w);
	nt_plan_free(&plan);
	json_decref(errors);
}

static void test_plan(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	/* With a classic field too: two steps, the classic one first. */
	int r = nt_t_plan(ctx, t,
			  "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos0\",\"rx_usecs\":4,\"rx_profile\":" LATENCY_RX
			  "}]}",
			  &plan, &errors);
	CHECK_INT(r, 0);
	CHECK_INT(plan.nsteps, 2);
	if (plan.nsteps == 2) {
		CHECK_STR(plan.steps[0].kind->name, "coalesce");
		CHECK_STR(plan.steps[1].kind->name, "coalesce_rx_profile");
		CHECK_STR(plan.steps[1].target, "enos0");
		CHECK_STR(nt_t_str(plan.steps[1].kind, &plan.steps[1].before), "1/256/-,8/256/-,64/256/-,128/256/-,256/256/-");
		CHECK_STR(nt_t_str(plan.steps[1].kind, &plan.steps[1].after), "1/256/-,8/256/-,8/256/-,8/256/-,8/256/-");
	}
	nt_plan_free(&plan);
	json_decref(errors);
	/* Already so: no step. */
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos0\",\"tx_profile\":" EQE_TX "}]}", &plan,
		      &errors);
	CHECK_INT(r, 0);
	CHECK_INT(plan.nsteps, 0);
	nt_plan_free(&plan);
	json_decref(errors);
}

static void test_transaction(const nt_ctx *ctx)
{
	char *orig = tree_read(root, "ethtool/enos0.json");
	const nt_setting_kind *k = nt_setting_find("coalesce_rx_profile");
	nt_txn_engine *e = NULL;
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e || !orig || !k) {
		free(orig);
		nt_txn_engine_close(e);
		return;
	}
	json_t *profile = json_loads("{\"name\":\"dim\",\"coalesce\":[{\"interface\":\"enos0\",\"rx_profile\":" LATENCY_RX
				     ",\"tx_profile\":[{},{},{\"pkts\":64},{},{\"usec\":100}]}]}",
				     0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome out = { 0 };
	CHECK_INT(nt_txn_apply(e, &req, &out), 0);
	CHECK_STR(json_string_value(json_object_get(out.doc, "status")), "applied");
	CHECK_INT(json_array_size(json_object_get(out.doc, "steps")), 2);
	int64_t id = json_integer_value(json_object_get(out.doc, "id"));
	nt_txn_outcome_free(&out);
	nt_value now;
	CHECK_INT(k->read(ctx, NULL, "enos0", &now), 0);
	CHECK_STR(nt_t_str(k, &now), "1/256/-,8/256/-,8/256/-,8/256/-,8/256/-");
	/* The fixture, as the kernel would now say it. */
	char *mid = tree_read(root, "ethtool/enos0.json");
	json_t *m = mid ? json_loads(mid, 0, NULL) : NULL;
	json_t *c = json_object_get(m, "coalesce");
	CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(c, "rx_profile"), 4), "usec")), 8);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(c, "tx_profile"), 2), "pkts")), 64);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(c, "tx_profile"), 4), "usec")), 100);
	CHECK_INT(json_integer_value(json_object_get(c, "rx_usecs")), 8);
	json_decref(m);
	free(mid);
	json_decref(profile);

	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &out), 0);
	CHECK_STR(json_string_value(json_object_get(out.doc, "status")), "applied");
	nt_txn_outcome_free(&out);
	char *after = tree_read(root, "ethtool/enos0.json");
	CHECK_MSG(after && strcmp(after, orig) == 0, "enos0.json after the rollback:\n%s\nbefore:\n%s", after ? after : "?",
		  orig);
	free(after);
	free(orig);
	nt_txn_engine_close(e);
}

static void test_finding(const nt_ctx *ctx)
{
	nt_topology *t = NULL;
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	if (!t)
		return;
	json_t *latency = json_pack("{s:s}", "name", "latency"), *other = json_pack("{s:s}", "name", "throughput");
	nt_diag_options opt = { .rtt_ms = 10, .profile = latency, .profile_source = "the desired state" };
	json_t *r = nt_diagnose(t, &opt);
	const json_t *f = finding(r, "dim-profile-default", "enos0");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(json_string_value(json_object_get(f, "severity")), "warning");
		const json_t *ev = json_object_get(f, "evidence");
		CHECK_STR(json_string_value(json_object_get(ev, "default_of")), "EQE");
		CHECK_STR(json_string_value(json_object_get(ev, "source")), "the desired state");
		const json_t *fe = json_array_get(json_object_get(json_object_get(f, "fix"), "coalesce"), 0);
		CHECK_STR(json_string_value(json_object_get(fe, "interface")), "enos0");
		json_t *want = json_loads("[{\"usec\":1,\"pkts\":256},{\"usec\":8,\"pkts\":256},{\"usec\":8,\"pkts\":256},"
					  "{\"usec\":8,\"pkts\":256},{\"usec\":8,\"pkts\":256}]",
					  0, NULL);
		CHECK(json_equal(json_object_get(fe, "rx_profile"), want));
		json_decref(want);
		const char *msg = json_string_value(json_object_get(f, "message"));
		CHECK(msg && strstr(msg, "up to 256 us") && strstr(msg, "lib/dim/net_dim.c"));
		/* The fix is a profile that plans. */
		json_t *p = nt_diagnose_fix_profile(r, "fix");
		json_t *errors = json_array();
		nt_plan plan;
		CHECK(json_array_size(json_object_get(p, "coalesce")) == 1);
		CHECK_INT(nt_plan_build(ctx, NULL, t, p, &plan, errors), 0);
		nt_plan_free(&plan);
		json_decref(errors);
		json_decref(p);
	}
	/* enos1 keeps no profile: nothing to judge. */
	CHECK(finding(r, "dim-profile-default", "enos1") == NULL);
	json_decref(r);
	/* Another profile in effect, or none: no finding. */
	opt.profile = other;
	r = nt_diagnose(t, &opt);
	CHECK(finding(r, "dim-profile-default", "enos0") == NULL);
	json_decref(r);
	r = nt_diagnose(t, NULL);
	CHECK(finding(r, "dim-profile-default", "enos0") == NULL);
	json_decref(r);
	nt_topology_free(t);
	/* Adaptive RX off: DIM is not running, so no finding. */
	give_coalesce("enos0", "{\"rx_usecs\": 8, \"tx_usecs\": 8, \"adaptive_rx\": 0, \"adaptive_tx\": 0, "
			       "\"rx_profile\": " EQE_RX "}");
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	opt.profile = latency;
	r = t ? nt_diagnose(t, &opt) : NULL;
	CHECK(r && finding(r, "dim-profile-default", "enos0") == NULL);
	json_decref(r);
	nt_topology_free(t);
	json_decref(latency);
	json_decref(other);
}

int main(void)
{
	char cmd[512];
	nt_ctx ctx;
	nt_topology *t = NULL;
	const nt_setting_kind *k = nt_setting_find("coalesce_rx_profile");

	test_parse();
	CHECK(k != NULL && nt_setting_find("coalesce_tx_profile") != NULL);
	if (!k)
		TEST_MAIN_END();
	test_values(k);
	snprintf(root, sizeof(root), "/tmp/nt-dim-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-dim-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	/* enos0 as a driver using net_dim_init_irq_moder in EQE mode with
	 * usec and pkts (virtio_net's coal_flags); enos1 without profiles. */
	give_coalesce("enos0", "{\"rx_usecs\": 8, \"tx_usecs\": 8, \"adaptive_rx\": 1, \"adaptive_tx\": 0, "
			       "\"rx_profile\": " EQE_RX ", \"tx_profile\": " EQE_TX "}");
	give_coalesce("enos1", "{\"rx_usecs\": 8, \"tx_usecs\": 8, \"adaptive_rx\": 1, \"adaptive_tx\": 0}");
	set_release("7.3.4+deb13-amd64\n");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (t) {
		test_report(&ctx, t);
		test_validation(&ctx, t);
		test_plan(&ctx, t);
		nt_topology_free(t);
		test_transaction(&ctx);
		test_finding(&ctx);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
