/* SPDX-License-Identifier: Apache-2.0 */
/* Offload features: the ethtool netlink bitsets and string sets decoded
 * and encoded (compact, verbose by name, by index, with and without a
 * mask, and the malformed ones refused), then the "feature" kind on a
 * fixture tree whose NIC has a feature that needs another: its values,
 * its section's validation with JSON paths, a fixed feature refused with
 * the list of those that can change, a plan, and a transaction through
 * the engine applied (the dependent feature held off, the record saying
 * so) and rolled back to the very file it was. */
#include "diagnose/diagnose.h"
#include "engine/plan.h"
#include "engine/txn.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/features.h"
#include "settings/setting.h"
#include "setting_util.h"
#include "plan_util.h"
#include "harness.h"
#include "tree_files.h"
#include "test_json.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[64], state[64];

/* The first attribute of MSG's payload (no genl header here). */
static struct nlattr *first_attr(struct nl_msg *msg)
{
	return (struct nlattr *)nlmsg_data(nlmsg_hdr(msg));
}

static void names3(nt_features *n)
{
	memset(n, 0, sizeof(*n));
	const char *names[] = { "tx-scatter-gather", "rx-gro", "rx-lro" };
	for (int i = 0; i < 3; i++)
		snprintf(n->f[i].name, sizeof(n->f[i].name), "%s", names[i]);
	n->n = 3;
}

static void test_bitsets(void)
{
	nt_features names;
	nt_bitmap b;
	names3(&names);

	/* Compact: 40 bits, bits 0, 33 set; junk past SIZE ignored. */
	struct nl_msg *m = nlmsg_alloc();
	struct nlattr *s = nla_nest_start(m, ETHTOOL_A_FEATURES_ACTIVE);
	uint32_t words[2] = { 1u, (1u << 1) | (1u << 20) };
	nla_put_u32(m, ETHTOOL_A_BITSET_SIZE, 40);
	nla_put(m, ETHTOOL_A_BITSET_VALUE, sizeof(words), words);
	nla_nest_end(m, s);
	CHECK_INT(nt_bitset_decode(first_attr(m), &names, &b), 0);
	CHECK(nt_bitmap_test(&b, 0));
	CHECK(!nt_bitmap_test(&b, 1));
	CHECK(nt_bitmap_test(&b, 33));
	CHECK(!nt_bitmap_test(&b, 52));
	nlmsg_free(m);

	/* Compact, shorter than SIZE says: refused. */
	m = nlmsg_alloc();
	s = nla_nest_start(m, 1);
	nla_put_u32(m, ETHTOOL_A_BITSET_SIZE, 64);
	nla_put(m, ETHTOOL_A_BITSET_VALUE, 4, words);
	nla_nest_end(m, s);
	CHECK_INT(nt_bitset_decode(first_attr(m), &names, &b), NT_EPARSE);
	nlmsg_free(m);

	/* Verbose list (NOMASK): the bits listed are set, by index or name. */
	m = nlmsg_alloc();
	s = nla_nest_start(m, 1);
	nla_put_flag(m, ETHTOOL_A_BITSET_NOMASK);
	struct nlattr *bits = nla_nest_start(m, ETHTOOL_A_BITSET_BITS), *bit;
	bit = nla_nest_start(m, ETHTOOL_A_BITSET_BITS_BIT);
	nla_put_u32(m, ETHTOOL_A_BITSET_BIT_INDEX, 2);
	nla_put_string(m, ETHTOOL_A_BITSET_BIT_NAME, "rx-lro");
	nla_nest_end(m, bit);
	bit = nla_nest_start(m, ETHTOOL_A_BITSET_BITS_BIT);
	nla_put_string(m, ETHTOOL_A_BITSET_BIT_NAME, "tx-scatter-gather");
	nla_nest_end(m, bit);
	nla_nest_end(m, bits);
	nla_nest_end(m, s);
	CHECK_INT(nt_bitset_decode(first_attr(m), &names, &b), 0);
	CHECK(nt_bitmap_test(&b, 0) && !nt_bitmap_test(&b, 1) && nt_bitmap_test(&b, 2));
	nlmsg_free(m);

	/* Encoded by name for a SET (no mask flag: only these bits change),
	 * then decoded: a bit without VALUE is off. */
	m = nlmsg_alloc();
	const char *set_names[] = { "rx-gro", "rx-lro" };
	const bool set_on[] = { true, false };
	CHECK_INT(nt_bitset_put_named(m, ETHTOOL_A_FEATURES_WANTED, set_names, set_on, 2), 0);
	CHECK_INT(nla_type(first_attr(m)), ETHTOOL_A_FEATURES_WANTED);
	struct nlattr *tb[ETHTOOL_A_BITSET_MAX + 1];
	CHECK_INT(nla_parse_nested(tb, ETHTOOL_A_BITSET_MAX, first_attr(m), NULL), 0);
	CHECK(tb[ETHTOOL_A_BITSET_NOMASK] == NULL);
	memset(&b, 0xff, sizeof(b));
	CHECK_INT(nt_bitset_decode(first_attr(m), &names, &b), 0);
	CHECK(!nt_bitmap_test(&b, 0) && nt_bitmap_test(&b, 1) && !nt_bitmap_test(&b, 2));
	nlmsg_free(m);

	/* An unknown name, and an index beyond the bitmap: refused. */
	const char *bad_name[] = { "rx-nosuch" };
	m = nlmsg_alloc();
	nt_bitset_put_named(m, 1, bad_name, set_on, 1);
	CHECK_INT(nt_bitset_decode(first_attr(m), &names, &b), NT_EPARSE);
	nlmsg_free(m);
	m = nlmsg_alloc();
	s = nla_nest_start(m, 1);
	bits = nla_nest_start(m, ETHTOOL_A_BITSET_BITS);
	bit = nla_nest_start(m, ETHTOOL_A_BITSET_BITS_BIT);
	nla_put_u32(m, ETHTOOL_A_BITSET_BIT_INDEX, NT_FEATURES_MAX);
	nla_nest_end(m, bit);
	nla_nest_end(m, bits);
	nla_nest_end(m, s);
	CHECK_INT(nt_bitset_decode(first_attr(m), &names, &b), NT_EPARSE);
	nlmsg_free(m);
	CHECK_INT(nt_bitset_decode(NULL, &names, &b), NT_EPARSE);
}

/* A STRSET_GET reply's attributes: one set of COUNT strings, ID ID, the
 * string at index SKIP left out (-1: none). */
static struct nl_msg *strset_msg(uint32_t id, int count, int skip)
{
	struct nl_msg *m = nlmsg_alloc();
	struct nlattr *sets = nla_nest_start(m, ETHTOOL_A_STRSET_STRINGSETS);
	struct nlattr *set = nla_nest_start(m, ETHTOOL_A_STRINGSETS_STRINGSET);
	nla_put_u32(m, ETHTOOL_A_STRINGSET_ID, id);
	nla_put_u32(m, ETHTOOL_A_STRINGSET_COUNT, (uint32_t)count);
	struct nlattr *strs = nla_nest_start(m, ETHTOOL_A_STRINGSET_STRINGS);
	for (int i = count - 1; i >= 0; i--) {
		char name[32];
		if (i == skip)
			continue;
		snprintf(name, sizeof(name), "feature-%d", i);
		struct nlattr *str = nla_nest_start(m, ETHTOOL_A_STRINGS_STRING);
		nla_put_u32(m, ETHTOOL_A_STRING_INDEX, (uint32_t)i);
		nla_put_string(m, ETHTOOL_A_STRING_VALUE, name);
		nla_nest_end(m, str);
	}
	nla_nest_end(m, strs);
	nla_nest_end(m, set);
	nla_nest_end(m, sets);
	return m;
}

static void test_strset(void)
{
	nt_features n;
	struct nl_msg *m = strset_msg(ETH_SS_FEATURES, 5, -1);
	int len = (int)nlmsg_datalen(nlmsg_hdr(m));
	CHECK_INT(nt_strset_decode(first_attr(m), len, &n), 0);
	CHECK_INT(n.n, 5);
	CHECK_STR(n.f[0].name, "feature-0");
	CHECK_STR(n.f[4].name, "feature-4");
	nlmsg_free(m);
	/* A bit without a name (the kernel has unused ones) stays ""; another
	 * set, a count beyond the bitmap: refused. */
	m = strset_msg(ETH_SS_FEATURES, 5, 2);
	CHECK_INT(nt_strset_decode(first_attr(m), (int)nlmsg_datalen(nlmsg_hdr(m)), &n), 0);
	CHECK_INT(n.n, 5);
	CHECK_STR(n.f[2].name, "");
	CHECK_STR(n.f[3].name, "feature-3");
	nlmsg_free(m);
	m = strset_msg(ETH_SS_STATS, 5, -1);
	CHECK_INT(nt_strset_decode(first_attr(m), (int)nlmsg_datalen(nlmsg_hdr(m)), &n), NT_EPARSE);
	nlmsg_free(m);
	m = strset_msg(ETH_SS_FEATURES, NT_FEATURES_MAX + 1, -1);
	CHECK_INT(nt_strset_decode(first_attr(m), (int)nlmsg_datalen(nlmsg_hdr(m)), &n), NT_EPARSE);
	nlmsg_free(m);
}

static void test_values(const nt_setting_kind *k)
{
	nt_value v;
	CHECK_INT(k->parse("on", &v), 0);
	CHECK_STR(nt_t_str(k, &v), "on");
	CHECK_INT(k->parse("off", &v), 0);
	CHECK_STR(nt_t_str(k, &v), "off");
	const char *bad[] = { "", "On", "true", "1", "on ", NULL };
	for (int i = 0; bad[i]; i++)
		CHECK_MSG(k->parse(bad[i], &v) == NT_EPARSE, "'%s' parsed", bad[i]);
	CHECK(nt_t_equal(k, "on", "on"));
	CHECK(!nt_t_equal(k, "on", "off"));
	CHECK_INT(k->order, 4);
	CHECK(nt_setting_changed_by_event("feature", NT_EVENT_ETHTOOL));
}

/* ROOT/ethtool/IFACE.json with a "features" object added. */
static void give_features(const char *iface, const char *features)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL);
	CHECK_MSG(doc != NULL, "%s", path);
	if (!doc)
		return;
	json_object_set_new(doc, "features", json_loads(features, 0, NULL));
	CHECK_INT(json_dump_file(doc, path, JSON_COMPACT), 0);
	json_decref(doc);
}

static void test_kernel_fixture(const nt_ctx *ctx)
{
	nt_features fs, after;
	char err[200];
	CHECK_INT(nt_features_get(NULL, ctx, "enos0", &fs), 0);
	CHECK_INT(fs.n, 6);
	const nt_feature *f = nt_features_find(&fs, "rx-lro");
	CHECK(f && f->fixed && !f->active);
	CHECK_INT(nt_features_get(NULL, ctx, "enos2", &fs), -EOPNOTSUPP);
	CHECK_INT(nt_features_set(NULL, ctx, "enos0", "rx-nosuch", true, &after, err, sizeof(err)), -ENOENT);
	/* A fixed feature: the kernel says yes and changes nothing. */
	CHECK_INT(nt_features_set(NULL, ctx, "enos0", "rx-lro", true, &after, err, sizeof(err)), 0);
	f = nt_features_find(&after, "rx-lro");
	CHECK(f && !f->active);
}

static void test_validation(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	int r = nt_t_plan(ctx, t,
			"{\"name\":\"x\",\"features\":[{\"interface\":\"enos0\",\"features\":{\"rx-gro\":1,\"Bad Name\":true}},"
			"{\"interface\":\"nosuch\",\"features\":{\"rx-gro\":true}},{\"interface\":\"enos0\"},"
			"{\"interface\":\"enos0\",\"features\":{}, \"mtu\":9000}]}",
			&plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.features[0].features['rx-gro']", "true or false"));
	CHECK(has_error(errors, "$.features[0].features['Bad Name']", "not a feature name"));
	CHECK(has_error(errors, "$.features[1].interface", "no such interface 'nosuch'"));
	CHECK(has_error(errors, "$.features[2].features", "must be an object"));
	CHECK(has_error(errors, "$.features[3].features", "must be an object"));
	CHECK(has_error(errors, "$.features[3].mtu", "unknown field"));
	json_decref(errors);

	/* Fixed, unknown, and a NIC without features: refused at the plan,
	 * with what can change. */
	r = nt_t_plan(ctx, t,
		    "{\"name\":\"x\",\"features\":[{\"interface\":\"enos0\",\"features\":{\"lro\":true,"
		    "\"rx-nosuch\":false}},{\"interface\":\"enos2\",\"features\":{\"rx-gro\":true}}]}",
		    &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.features[0].features['lro']",
			"enos0: rx-lro is fixed off (the driver cannot change it); it can change: "
			"tx-scatter-gather, tx-tcp-segmentation, rx-gro, tx-generic-segmentation, tx-udp-segmentation"));
	CHECK(has_error(errors, "$.features[0].features['rx-nosuch']", "enos0 has no feature 'rx-nosuch'"));
	CHECK(has_error(errors, "$.features[1].features['rx-gro']", "enos2: features cannot be read"));
	json_decref(errors);
	/* ethtool -K's tso is several features: named, each to name. */
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"features\":[{\"interface\":\"enos0\",\"features\":{\"tso\":false}}]}",
		      &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.features[0].features['tso']",
			"enos0: 'tso' is ethtool's short name for the features tx-tcp-segmentation, "
			"tx-tcp-ecn-segmentation, tx-tcp-mangleid-segmentation, tx-tcp6-segmentation: name each one "
			"(it can change: tx-scatter-gather"));
	json_decref(errors);

	/* A fixed feature asked for as it is: nothing to do, no error. */
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"features\":[{\"interface\":\"enos0\",\"features\":{\"rx-lro\":false,"
			    "\"gro\":true}}]}",
		    &plan, &errors);
	CHECK_INT(r, 0);
	CHECK_INT(plan.nsteps, 0);
	nt_plan_free(&plan);
	json_decref(errors);
}

static void test_plan(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	int r = nt_t_plan(ctx, t,
			"{\"name\":\"x\",\"rings\":[{\"interface\":\"enos0\",\"rx\":4096}],"
			"\"features\":[{\"interface\":\"enos0\",\"features\":{\"gro\":false,\"sg\":false}}]}",
			&plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, JSON_COMPACT));
	json_decref(errors);
	if (r != 0)
		return;
	CHECK_INT(plan.nsteps, 3);
	if (plan.nsteps == 3) {
		/* Features before the rings; their targets by the kernel's names. */
		CHECK_STR(plan.steps[0].kind->name, "feature");
		CHECK_STR(plan.steps[0].target, "enos0/rx-gro");
		CHECK_STR(plan.steps[1].target, "enos0/tx-scatter-gather");
		CHECK_STR(nt_t_str(plan.steps[1].kind, &plan.steps[1].before), "on");
		CHECK_STR(nt_t_str(plan.steps[1].kind, &plan.steps[1].after), "off");
		CHECK_STR(plan.steps[2].kind->name, "rings");
	}
	nt_plan_free(&plan);

	/* A glob leaves out NICs without features and a fixed feature. */
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"features\":[{\"interface\":\"enos*\",\"features\":{\"lro\":true,"
			    "\"gro\":false}}]}",
		    &plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, JSON_COMPACT));
	json_decref(errors);
	if (r != 0)
		return;
	CHECK(warned(plan.warnings, "enos0: rx-lro is fixed off; left out"));
	CHECK(warned(plan.warnings, "enos2: no offload features to change; left out"));
	CHECK_INT(plan.nsteps, 1);
	if (plan.nsteps == 1)
		CHECK_STR(plan.steps[0].target, "enos0/rx-gro");
	nt_plan_free(&plan);
}

/* GET /v1/nics/{name}'s extra members, and none in the host read. */
static void test_report(const nt_ctx *ctx, const nt_topology *t)
{
	const nt_nic *n0 = nt_topology_nic(t, "enos0"), *n2 = nt_topology_nic(t, "enos2");
	CHECK(n0 && n2);
	if (!n0 || !n2)
		return;
	json_t *doc = nt_nic_to_json(t, n0);
	CHECK(json_object_get(doc, "features") == NULL);
	CHECK_INT(nt_setting_report_detail(ctx, NULL, n0, doc), 0);
	json_t *f = json_object_get(doc, "features");
	CHECK_INT(json_object_size(f), 6);
	CHECK(json_is_true(json_object_get(json_object_get(f, "rx-lro"), "fixed")));
	CHECK(json_is_false(json_object_get(json_object_get(f, "rx-lro"), "on")));
	CHECK(json_is_true(json_object_get(json_object_get(f, "rx-gro"), "on")));
	CHECK(json_object_get(json_object_get(f, "rx-gro"), "wanted") == NULL);
	json_decref(doc);
	doc = json_object();
	CHECK_INT(nt_setting_report_detail(ctx, NULL, n2, doc), 0);
	CHECK(json_is_null(json_object_get(doc, "features")));
	json_decref(doc);
}

/* The step of kind "feature" for TARGET in a transaction document. */
static json_t *step_of(json_t *doc, const char *target)
{
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(doc, "steps"), i, s)
		if (strcmp(json_string_value(json_object_get(s, "target")), target) == 0)
			return s;
	return NULL;
}

/* Through the engine: scatter-gather off takes TSO with it (its wanted
 * state stays on), the record says so, and the rollback gives both back. */
static void test_transaction(const nt_ctx *ctx)
{
	const nt_setting_kind *k = &nt_setting_feature;
	char *orig = tree_read(root, "ethtool/enos0.json");
	nt_txn_engine *e = NULL;
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e || !orig) {
		free(orig);
		nt_txn_engine_close(e);
		return;
	}
	json_t *profile = json_loads("{\"name\":\"f\",\"features\":[{\"interface\":\"enos0\",\"features\":"
				     "{\"tx-scatter-gather\":false,\"rx-gro\":false}}]}",
				     0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome out = { 0 };
	CHECK_INT(nt_txn_apply(e, &req, &out), 0);
	CHECK_STR(json_string_value(json_object_get(out.doc, "status")), "applied");
	int64_t id = json_integer_value(json_object_get(out.doc, "id"));
	nt_value now;
	CHECK_INT(k->read(ctx, NULL, "enos0/tx-tcp-segmentation", &now), 0);
	CHECK_STR(nt_t_str(k, &now), "off");
	CHECK_INT(k->read(ctx, NULL, "enos0/rx-gro", &now), 0);
	CHECK_STR(nt_t_str(k, &now), "off");
	json_t *s = step_of(out.doc, "enos0/tx-scatter-gather");
	const char *obs = json_string_value(json_object_get(s, "observed"));
	CHECK_MSG(obs && strstr(obs, "tx-tcp-segmentation off (wanted on)"), "observed: %s", obs ? obs : "(none)");
	nt_txn_outcome_free(&out);

	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &out), 0);
	CHECK_STR(json_string_value(json_object_get(out.doc, "status")), "applied");
	nt_txn_outcome_free(&out);
	CHECK_INT(k->read(ctx, NULL, "enos0/tx-tcp-segmentation", &now), 0);
	CHECK_STR(nt_t_str(k, &now), "on");
	/* The document is the one that was there, byte for byte: each entry
	 * back in the spelling it had, in the file's layout (issue 43, item
	 * 22: it came back re-indented, with "wanted" spelled out). */
	char *after = tree_read(root, "ethtool/enos0.json");
	CHECK_MSG(after && !strcmp(after, orig), "after the rollback:\n%s\nbefore:\n%s", after ? after : "?", orig);
	free(after);
	free(orig);
	json_decref(profile);

	/* A change the kernel does not make (what the feature needs is not
	 * there): the step fails saying so, and GRO, changed before it, comes
	 * back. */
	profile = json_loads("{\"name\":\"f2\",\"features\":[{\"interface\":\"enos0\",\"features\":"
			     "{\"rx-gro\":false,\"tx-udp-segmentation\":true}}]}",
			     0, NULL);
	req.profile = profile;
	CHECK_INT(nt_txn_apply(e, &req, &out), 0);
	CHECK_STR(json_string_value(json_object_get(out.doc, "status")), "rolled_back");
	const char *err = json_string_value(json_object_get(out.doc, "error"));
	CHECK_MSG(err && strstr(err, "the kernel kept tx-udp-segmentation off"), "error: %s", err ? err : "(none)");
	nt_txn_outcome_free(&out);
	CHECK_INT(k->read(ctx, NULL, "enos0/rx-gro", &now), 0);
	CHECK_STR(nt_t_str(k, &now), "on");
	json_decref(profile);
	nt_txn_engine_close(e);
}

/* enos0..3 are bond0's 25G ports: enos0 with GRO off and LRO on, on a
 * host that forwards; enos1 with GRO on. */
static void test_diagnostics(const nt_ctx *ctx)
{
	nt_topology *t = NULL;
	give_features("enos0", "{\"rx-gro\":false,\"rx-lro\":true,\"tx-tcp-segmentation\":true}");
	give_features("enos1", "{\"rx-gro\":true,\"rx-lro\":false,\"tx-tcp-segmentation\":true}");
	tree_write(root, "proc/sys/net/ipv4/ip_forward", "1\n");
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	if (!t)
		return;
	json_t *r = nt_diagnose(t, NULL);
	json_t *f = nt_t_finding(r, "gro-off", "enos0");
	CHECK_MSG(f != NULL, "%s", json_dumps(r, JSON_COMPACT));
	json_t *fix = json_object_get(f, "fix");
	CHECK(json_is_true(json_object_get(json_object_get(json_array_get(json_object_get(fix, "features"), 0), "features"),
					   "rx-gro")));
	CHECK(nt_t_finding(r, "gro-off", "enos1") == NULL);
	f = nt_t_finding(r, "lro-forwarding", "enos0");
	CHECK(f != NULL);
	fix = json_object_get(f, "fix");
	CHECK(json_is_false(json_object_get(json_object_get(json_array_get(json_object_get(fix, "features"), 0), "features"),
					    "rx-lro")));
	CHECK(nt_t_finding(r, "lro-forwarding", "enos1") == NULL);
	f = nt_t_finding(r, "bond-offload-mismatch", "bond0");
	CHECK_MSG(f != NULL, "no bond-offload-mismatch");
	fix = json_object_get(f, "fix");
	CHECK_INT(json_array_size(json_object_get(fix, "features")), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(fix, "features"), 0), "interface")), "enos0");
	CHECK_STR(json_string_value(json_object_get(json_object_get(f, "evidence"), "feature")), "rx-gro");
	json_decref(r);
	nt_topology_free(t);

	/* Not forwarding, GRO on everywhere: none of the three. */
	give_features("enos0", "{\"rx-gro\":true,\"rx-lro\":true,\"tx-tcp-segmentation\":true}");
	tree_write(root, "proc/sys/net/ipv4/ip_forward", "0\n");
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	if (!t)
		return;
	r = nt_diagnose(t, NULL);
	CHECK(nt_t_finding(r, "gro-off", "enos0") == NULL);
	CHECK(nt_t_finding(r, "lro-forwarding", "enos0") == NULL);
	CHECK(nt_t_finding(r, "bond-offload-mismatch", "bond0") == NULL);
	json_decref(r);
	nt_topology_free(t);
}

int main(void)
{
	char cmd[512];
	nt_ctx ctx;
	nt_topology *t = NULL;

	test_bitsets();
	test_strset();
	CHECK(nt_setting_find("feature") == &nt_setting_feature);
	test_values(&nt_setting_feature);
	snprintf(root, sizeof(root), "/tmp/nt-feat-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-feat-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	give_features("enos0", "{\"tx-scatter-gather\":{\"on\":true,\"fixed\":false},"
			       "\"tx-tcp-segmentation\":{\"on\":true,\"needs\":[\"tx-scatter-gather\"]},"
			       "\"rx-gro\":true,\"rx-lro\":{\"on\":false,\"fixed\":true},"
			       "\"tx-generic-segmentation\":{\"on\":true},"
			       "\"tx-udp-segmentation\":{\"on\":false,\"needs\":[\"tx-gso-robust\"]}}");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	test_kernel_fixture(&ctx);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (t) {
		test_validation(&ctx, t);
		test_plan(&ctx, t);
		test_report(&ctx, t);
		nt_topology_free(t);
		test_transaction(&ctx);
		test_diagnostics(&ctx);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
