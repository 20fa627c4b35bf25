/* SPDX-License-Identifier: Apache-2.0 */
/* The ring and coalescing parameters only ethtool netlink reaches (issue
 * 41, item 2). The reply parser fed RINGS_GET and COALESCE_GET replies
 * built by hand (attributes the table does not name, the header nest, a
 * u8 padded to four bytes, truncated attributes and messages, an old
 * kernel's NLMSG_ERROR, an ACK without a reply); kernel releases compared
 * as numbers; and on a copy of the EPYC fixture (enos0 given hds-thresh
 * as 7.3's netdevsim has it, enos1 as the generator writes it for 6.12):
 * the ring_params kind's values, the rings section's validation with JSON
 * paths (form, a field the NIC does not report with the release it needs,
 * hds_thresh above its maximum, a glob leaving NICs out), the plan, the
 * per-NIC report, GET /v1/topology's document without any of it, the
 * coalescing fields over the same validation, and a transaction applied
 * and rolled back to the same document. */
#include "engine/plan.h"
#include "diagnose/diagnose.h"
#include "engine/txn.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/ethtool.h"
#include "kernel/ethtool_nlattrs.h"
#include "settings/setting.h"
#include "setting_util.h"
#include "harness.h"
#include "ethtool_groups.h"
#include "plan_util.h"
#include "tree_files.h"
#include "test_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

/* ---- the parser ---- */

/* The ring table is tests/ethtool_groups.h's (the kind's own is private to
 * settings/ring_params.c); a coalescing one of the new fields: */
static const nt_ethtool_field coal_fields[] = {
	NT_TEST_RF("rx_usecs", ETHTOOL_A_COALESCE_RX_USECS, U32, false, NULL),
	NT_TEST_RF("cqe_mode_rx", NT_ETHTOOL_A_COALESCE_USE_CQE_MODE_RX, U8, false, NULL),
	NT_TEST_RF("tx_aggr_max_bytes", NT_ETHTOOL_A_COALESCE_TX_AGGR_MAX_BYTES, U32, false, NULL),
};
static const nt_ethtool_group coal_group = {
	.section = "coalesce",
	.get_cmd = ETHTOOL_MSG_COALESCE_GET,
	.set_cmd = ETHTOOL_MSG_COALESCE_SET,
	.header_attr = ETHTOOL_A_COALESCE_HEADER,
	.ioc_get = ETHTOOL_GCOALESCE,
	.ioc_set = ETHTOOL_SCOALESCE,
	.ioc_size = sizeof(struct ethtool_coalesce),
	.fields = coal_fields,
	.nfields = 3,
};

typedef struct {
	unsigned char b[1024];
	size_t len;
} dgram;

static void msg_begin(dgram *d, uint8_t cmd)
{
	struct nlmsghdr h = { .nlmsg_type = 0x15, .nlmsg_seq = 7 };
	struct genlmsghdr g = { .cmd = cmd, .version = ETHTOOL_GENL_VERSION };
	d->len = 0;
	memcpy(d->b, &h, sizeof(h));
	memcpy(d->b + NLMSG_HDRLEN, &g, sizeof(g));
	d->len = NLMSG_LENGTH(GENL_HDRLEN);
}

static void attr(dgram *d, uint16_t type, const void *v, uint16_t n)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type };
	memcpy(d->b + d->len, &a, sizeof(a));
	memcpy(d->b + d->len + NLA_HDRLEN, v, n);
	memset(d->b + d->len + NLA_HDRLEN + n, 0, NLA_ALIGN(a.nla_len) - a.nla_len);
	d->len += NLA_ALIGN(a.nla_len);
}

static void u32a(dgram *d, uint16_t type, uint32_t v)
{
	attr(d, type, &v, 4);
}

static void u8a(dgram *d, uint16_t type, uint8_t v)
{
	attr(d, type, &v, 1);
}

static void msg_end(dgram *d)
{
	uint32_t len = (uint32_t)d->len;
	memcpy(d->b, &len, 4);
}

/* The header nest the kernel puts first: the device's index and name. */
static void header(dgram *d, uint16_t type)
{
	unsigned char nest[32] = { 0 };
	struct nlattr a = { .nla_len = NLA_HDRLEN + 8, .nla_type = ETHTOOL_A_HEADER_DEV_INDEX };
	uint32_t idx = 3;
	memcpy(nest, &a, sizeof(a));
	memcpy(nest + NLA_HDRLEN, &idx, 4);
	struct nlattr b = { .nla_len = NLA_HDRLEN + 5, .nla_type = ETHTOOL_A_HEADER_DEV_NAME };
	memcpy(nest + 8, &b, sizeof(b));
	memcpy(nest + 8 + NLA_HDRLEN, "eth2", 5);
	attr(d, (uint16_t)(type | NLA_F_NESTED), nest, 8 + 12);
}

static void test_parse_rings(void)
{
	dgram d;
	nt_ethtool_values v;

	/* 7.3's netdevsim: sizes, tcp-data-split on, push modes off,
	 * hds-thresh 0 of 1024; a newer attribute (40) is skipped. */
	msg_begin(&d, ETHTOOL_MSG_RINGS_GET_REPLY);
	header(&d, ETHTOOL_A_RINGS_HEADER);
	u32a(&d, ETHTOOL_A_RINGS_RX_MAX, 4096);
	u32a(&d, ETHTOOL_A_RINGS_RX, 512);
	u8a(&d, NT_ETHTOOL_A_RINGS_TCP_DATA_SPLIT, NT_ETHTOOL_TCP_DATA_SPLIT_ENABLED);
	u8a(&d, NT_ETHTOOL_A_RINGS_TX_PUSH, 0);
	u8a(&d, NT_ETHTOOL_A_RINGS_RX_PUSH, 1);
	u32a(&d, NT_ETHTOOL_A_RINGS_HDS_THRESH, 0);
	u32a(&d, NT_ETHTOOL_A_RINGS_HDS_THRESH_MAX, 1024);
	u32a(&d, 40, 77);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, d.len, &v), 0);
	CHECK_INT(v.present, 0x3b); /* all but rx_buf_len (bit 2) */
	CHECK_INT(v.v[0], 2);
	CHECK_INT(v.v[1], 0);
	CHECK_INT(v.v[3], 0);
	CHECK_INT(v.v[4], 1);
	CHECK_INT(v.v[5], 1024);
	/* The same attributes are what the ring sizes' own table reads. */
	CHECK_INT(nt_ethtool_parse_reply(&nt_ethtool_rings_group, d.b, d.len, &v), 0);
	CHECK_INT(v.present, 0x5); /* rx and rx_max; no TX ring attributes */
	CHECK_INT(v.v[0], 512);
	CHECK_INT(v.v[2], 4096);

	/* virtio_net: no tcp-data-split, no hds-thresh; a datagram with a
	 * second message after the reply (only the first is read). */
	msg_begin(&d, ETHTOOL_MSG_RINGS_GET_REPLY);
	header(&d, ETHTOOL_A_RINGS_HEADER);
	u32a(&d, NT_ETHTOOL_A_RINGS_RX_BUF_LEN, 2048);
	u8a(&d, NT_ETHTOOL_A_RINGS_TX_PUSH, 0);
	msg_end(&d);
	size_t one = d.len;
	memset(d.b + d.len, 0xff, 16);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, one + 16, &v), 0);
	CHECK_INT(v.present, 0x0c);
	CHECK_INT(v.v[2], 2048);

	/* A u8 the way a kernel may pad it (four bytes): its first byte. */
	msg_begin(&d, ETHTOOL_MSG_RINGS_GET_REPLY);
	uint32_t padded = 1;
	attr(&d, NT_ETHTOOL_A_RINGS_TCP_DATA_SPLIT, &padded, 4);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, d.len, &v), 0);
	CHECK_INT(v.v[0], 1);

	/* A u32 attribute of two bytes, an empty u8: refused, nothing kept. */
	msg_begin(&d, ETHTOOL_MSG_RINGS_GET_REPLY);
	u8a(&d, NT_ETHTOOL_A_RINGS_TX_PUSH, 1);
	attr(&d, NT_ETHTOOL_A_RINGS_HDS_THRESH, "\1\2", 2);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, d.len, &v), NT_EPARSE);
	CHECK_INT(v.present, 0);
	msg_begin(&d, ETHTOOL_MSG_RINGS_GET_REPLY);
	attr(&d, NT_ETHTOOL_A_RINGS_RX_PUSH, "", 0);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, d.len, &v), NT_EPARSE);

	/* An attribute claiming more than the message holds; a message
	 * claiming more than came; less than a header. */
	msg_begin(&d, ETHTOOL_MSG_RINGS_GET_REPLY);
	u32a(&d, NT_ETHTOOL_A_RINGS_HDS_THRESH, 5);
	msg_end(&d);
	struct nlattr big = { .nla_len = 200, .nla_type = NT_ETHTOOL_A_RINGS_HDS_THRESH };
	memcpy(d.b + NLMSG_LENGTH(GENL_HDRLEN), &big, sizeof(big));
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, d.len, &v), NT_EPARSE);
	msg_begin(&d, ETHTOOL_MSG_RINGS_GET_REPLY);
	u32a(&d, NT_ETHTOOL_A_RINGS_HDS_THRESH, 5);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, d.len - 4, &v), NT_EPARSE);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, 10, &v), NT_EPARSE);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, NLMSG_HDRLEN + 2, &v), NT_EPARSE);
	/* No attributes at all: nothing reported, not an error. */
	msg_begin(&d, ETHTOOL_MSG_RINGS_GET_REPLY);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, d.len, &v), 0);
	CHECK_INT(v.present, 0);

	/* The kernel's refusal (a driver without get_ringparam), and an ACK
	 * where the reply should have been. */
	struct nlmsghdr h = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct nlmsgerr)), .nlmsg_type = NLMSG_ERROR };
	struct nlmsgerr e = { .error = -EOPNOTSUPP };
	memcpy(d.b, &h, sizeof(h));
	memcpy(d.b + NLMSG_HDRLEN, &e, sizeof(e));
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, h.nlmsg_len, &v), -EOPNOTSUPP);
	e.error = 0;
	memcpy(d.b + NLMSG_HDRLEN, &e, sizeof(e));
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, h.nlmsg_len, &v), -EIO);
	CHECK_INT(nt_ethtool_parse_reply(&nt_test_ring_params, d.b, NLMSG_HDRLEN + 2, &v), NT_EPARSE);
	CHECK_INT(nt_ethtool_parse_reply(NULL, d.b, h.nlmsg_len, &v), -EINVAL);
}

static void test_parse_coalesce(void)
{
	dgram d;
	nt_ethtool_values v;

	/* hns3: CQE mode reported; no TX aggregation (rmnet has that). */
	msg_begin(&d, ETHTOOL_MSG_COALESCE_GET_REPLY);
	header(&d, ETHTOOL_A_COALESCE_HEADER);
	u32a(&d, ETHTOOL_A_COALESCE_RX_USECS, 20);
	u8a(&d, ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1);
	u8a(&d, NT_ETHTOOL_A_COALESCE_USE_CQE_MODE_TX, 0);
	u8a(&d, NT_ETHTOOL_A_COALESCE_USE_CQE_MODE_RX, 1);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&coal_group, d.b, d.len, &v), 0);
	CHECK_INT(v.present, 0x3);
	CHECK_INT(v.v[0], 20);
	CHECK_INT(v.v[1], 1);
	msg_begin(&d, ETHTOOL_MSG_COALESCE_GET_REPLY);
	u32a(&d, NT_ETHTOOL_A_COALESCE_TX_AGGR_MAX_BYTES, 65536);
	msg_end(&d);
	CHECK_INT(nt_ethtool_parse_reply(&coal_group, d.b, d.len, &v), 0);
	CHECK_INT(v.present, 0x4);
	CHECK_INT(v.v[2], 65536);
}

static void test_releases(void)
{
	CHECK(nt_ethtool_release_lacks("6.1.0-27-amd64", "6.14"));
	CHECK(nt_ethtool_release_lacks("6.9.7", "6.14")); /* numbers, not text */
	CHECK(!nt_ethtool_release_lacks("6.14.2+deb13-amd64", "6.14"));
	CHECK(!nt_ethtool_release_lacks("6.18.44-fc-v1300", "6.14"));
	CHECK(!nt_ethtool_release_lacks("7.3.4+deb13-amd64", "6.14"));
	CHECK(nt_ethtool_release_lacks("5.10.0-32-amd64", "5.15"));
	CHECK(!nt_ethtool_release_lacks("6.1.0", NULL));
	CHECK(!nt_ethtool_release_lacks("", "6.14"));
	CHECK(!nt_ethtool_release_lacks("linux", "6.14"));
	CHECK(!nt_ethtool_release_lacks("6", "6.14"));
	CHECK(!nt_ethtool_release_lacks(NULL, "6.14"));

	char why[160];
	nt_ethtool_absent_why(&nt_test_ring_fields[1], "6.14", "6.1.0-27-amd64", true, why, sizeof(why));
	CHECK_STR(why, "needs Linux 6.14 or later (this kernel is 6.1.0-27-amd64)");
	nt_ethtool_absent_why(&nt_test_ring_fields[1], "6.14", "7.3.4", true, why, sizeof(why));
	CHECK_STR(why, "the driver does not report it");
	nt_ethtool_absent_why(&nt_test_ring_fields[1], "6.14", "7.3.4", false, why, sizeof(why));
	CHECK_STR(why, "only ethtool netlink carries it, and this kernel has none");
}

/* ---- the kind on a fixture ---- */

static char root[64], state[64];

/* ROOT/ethtool/IFACE.json's SECTION with the members of ADD (JSON). */
static void give(const char *iface, const char *section, const char *add)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL);
	json_t *more = json_loads(add, 0, NULL);
	CHECK_MSG(doc && more, "%s / %s", path, add);
	if (doc && more) {
		json_t *sec = json_object_get(doc, section);
		if (!sec)
			json_object_set_new(doc, section, sec = json_object());
		json_object_update(sec, more);
		CHECK_INT(json_dump_file(doc, path, JSON_COMPACT), 0);
	}
	json_decref(doc);
	json_decref(more);
}

static void set_release(const char *rel)
{
	tree_write(root, "proc/sys/kernel/osrelease", rel);
}

static void test_values(const nt_setting_kind *k)
{
	nt_value v;
	char out[NT_VALUE_MAX];
	CHECK_INT(k->parse("hds_thresh=256,tcp_data_split=on,tx_push=off", &v), 0);
	CHECK_INT(k->format(&v, out, sizeof(out)), 0);
	CHECK_STR(out, "tcp_data_split=on,hds_thresh=256,tx_push=off");
	CHECK_INT(k->parse("", &v), 0);
	const char *bad[] = { "tcp_data_split=2", "hds_thresh=-1", "hds_thresh_max=1024", "tx_push=1", "bogus=1",
			      "hds_thresh=1,hds_thresh=2", NULL };
	for (int i = 0; bad[i]; i++)
		CHECK_MSG(k->parse(bad[i], &v) == NT_EPARSE, "'%s' parsed", bad[i]);
	CHECK(nt_t_equal(k, "tcp_data_split=on,hds_thresh=0", "hds_thresh=0,tcp_data_split=on"));
	CHECK(!nt_t_equal(k, "tcp_data_split=on", "tcp_data_split=off"));
}

static void test_validation(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	int r = nt_t_plan(ctx, t,
			"{\"name\":\"x\",\"rings\":[{\"interface\":\"enos0\",\"tcp_data_split\":true,\"hds_thresh\":-1,"
			"\"tx_push\":\"on\",\"rx_buf_len\":0},{\"interface\":\"enos0\",\"hds_thresh\":2048},"
			"{\"interface\":\"enos1\",\"hds_thresh\":64,\"tcp_data_split\":\"on\"},{\"interface\":\"enos0\"}]}",
			&plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.rings[0].tcp_data_split", "'tcp_data_split' must be \"on\" or \"off\""));
	CHECK(has_error(errors, "$.rings[0].hds_thresh", "integer from 0 to 4294967295"));
	CHECK(has_error(errors, "$.rings[0].tx_push", "true or false"));
	CHECK(has_error(errors, "$.rings[0].rx_buf_len", "integer from 1 to"));
	CHECK(has_error(errors, "$.rings[1].hds_thresh", "hds_thresh 2048 is above enos0's maximum 1024"));
	/* enos1 reports tcp-data-split but not hds-thresh, on a kernel that
	 * has it: its driver's lack. */
	CHECK(has_error(errors, "$.rings[2].hds_thresh", "enos1 does not support hds_thresh: the driver does not report it"));
	CHECK(!has_error(errors, "$.rings[2].tcp_data_split", ""));
	CHECK(has_error(errors, "$.rings[3]", "give 'rx', 'tx' or a ring parameter"));
	json_decref(errors);

	/* The same on 6.1: the release hds-thresh needs is named. */
	set_release("6.1.0-27-amd64\n");
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"enos1\",\"hds_thresh\":64}]}", &plan,
		      &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.rings[0].hds_thresh",
			"enos1 does not support hds_thresh: needs Linux 6.14 or later (this kernel is 6.1.0-27-amd64)"));
	json_decref(errors);
	/* A glob none of whose NICs has it. */
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"enos*\",\"cqe_size\":128}]}", &plan,
		      &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.rings[0].cqe_size", "no NIC matching 'enos*' supports cqe_size"));
	json_decref(errors);
	set_release("7.3.4+deb13-amd64\n");
}

static void test_plan(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	/* enos0 has hds-thresh; the glob leaves the other three out. */
	int r = nt_t_plan(ctx, t,
			"{\"name\":\"x\",\"rings\":[{\"interface\":\"enos*\",\"tcp_data_split\":\"on\",\"hds_thresh\":256}]}",
			&plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, JSON_COMPACT));
	json_decref(errors);
	if (r != 0)
		return;
	CHECK(warned(plan.warnings, "enos1: does not support hds_thresh; its ring parameters left out"));
	CHECK(warned(plan.warnings, "enos0: changing rings or channels may reset the NIC"));
	CHECK_INT(plan.nsteps, 1);
	if (plan.nsteps == 1) {
		CHECK_STR(plan.steps[0].kind->name, "ring_params");
		CHECK_STR(plan.steps[0].target, "enos0");
		CHECK_STR(nt_t_str(plan.steps[0].kind, &plan.steps[0].before),
			  "tcp_data_split=off,hds_thresh=0,tx_push=off,rx_push=off");
		CHECK_STR(nt_t_str(plan.steps[0].kind, &plan.steps[0].after),
			  "tcp_data_split=on,hds_thresh=256,tx_push=off,rx_push=off");
	}
	nt_plan_free(&plan);

	/* Sizes and parameters in one entry: two steps, sizes first. */
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"enos1\",\"rx\":4096,\"tcp_data_split\":\"on\"}]}",
		      &plan, &errors);
	CHECK_INT(r, 0);
	CHECK_INT(plan.nsteps, 2);
	if (plan.nsteps == 2) {
		CHECK_STR(plan.steps[0].kind->name, "rings");
		CHECK_STR(plan.steps[1].kind->name, "ring_params");
	}
	nt_plan_free(&plan);
	json_decref(errors);
	/* Already so: no step. */
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"rings\":[{\"interface\":\"enos0\",\"tcp_data_split\":\"off\"}]}", &plan,
		      &errors);
	CHECK_INT(r, 0);
	CHECK_INT(plan.nsteps, 0);
	nt_plan_free(&plan);
	json_decref(errors);

	/* Coalescing: cqe_mode_rx where the NIC has it; the TX aggregation
	 * fields it lacks, on 6.1, refused with the release they need. */
	set_release("6.1.0-27-amd64\n");
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos0\",\"cqe_mode_tx\":1}]}", &plan,
		      &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.coalesce[0].cqe_mode_tx", "true or false"));
	json_decref(errors);
	r = nt_t_plan(ctx, t,
		      "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos0\",\"cqe_mode_rx\":true,"
		      "\"tx_aggr_max_bytes\":4096}]}",
		      &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.coalesce[0]", "enos0 does not support coalescing tx_aggr_max_bytes"));
	CHECK(has_error(errors, "$.coalesce[0]", "tx_aggr_max_bytes needs Linux 6.3 or later (this kernel is 6.1.0-27-amd64)"));
	json_decref(errors);
	set_release("7.3.4+deb13-amd64\n");
	r = nt_t_plan(ctx, t, "{\"name\":\"x\",\"coalesce\":[{\"interface\":\"enos0\",\"cqe_mode_rx\":true}]}", &plan,
		      &errors);
	CHECK_INT(r, 0);
	CHECK_INT(plan.nsteps, 1);
	if (plan.nsteps == 1)
		CHECK_STR(nt_t_str(plan.steps[0].kind, &plan.steps[0].after),
			  "rx_usecs=8,tx_usecs=8,rx_frames=0,tx_frames=0,adaptive_rx=on,adaptive_tx=off,cqe_mode_rx=on,"
			  "cqe_mode_tx=off");
	nt_plan_free(&plan);
	json_decref(errors);
}

static void test_report(const nt_ctx *ctx, const nt_topology *t)
{
	const nt_nic *n0 = nt_topology_nic(t, "enos0"), *n1 = nt_topology_nic(t, "enos1");
	json_t *doc = json_object();
	CHECK(n0 && n1);
	if (!n0 || !n1) {
		json_decref(doc);
		return;
	}
	CHECK_INT(nt_setting_report_detail(ctx, NULL, n0, doc), 0);
	json_t *rp = json_object_get(doc, "ring_params"), *cp = json_object_get(doc, "coalesce_params");
	json_t *tds = json_object_get(rp, "tcp_data_split"), *hds = json_object_get(rp, "hds_thresh");
	CHECK(json_is_true(json_object_get(tds, "supported")));
	CHECK_STR(json_string_value(json_object_get(tds, "value")), "off");
	CHECK_INT(json_integer_value(json_object_get(hds, "value")), 0);
	CHECK_INT(json_integer_value(json_object_get(hds, "max")), 1024);
	CHECK(json_is_false(json_object_get(json_object_get(rp, "tx_push"), "value")));
	json_t *rbl = json_object_get(rp, "rx_buf_len");
	CHECK(json_is_false(json_object_get(rbl, "supported")));
	CHECK_STR(json_string_value(json_object_get(rbl, "reason")), "the driver does not report it");
	CHECK_INT(json_object_size(rp), 7);
	CHECK(json_is_false(json_object_get(json_object_get(cp, "cqe_mode_rx"), "value")));
	CHECK(json_is_false(json_object_get(json_object_get(cp, "tx_aggr_max_frames"), "supported")));
	/* And the DIM profiles (tests/unit/test_coalesce_profile.c). */
	CHECK(json_is_false(json_object_get(json_object_get(cp, "rx_profile"), "supported")));
	CHECK_INT(json_object_size(cp), 7);
	json_decref(doc);

	/* enos1 on 6.12, as the generator writes it: hds-thresh not there yet. */
	set_release("6.12.48+deb13-amd64\n");
	doc = json_object();
	CHECK_INT(nt_setting_report_detail(ctx, NULL, n1, doc), 0);
	rp = json_object_get(doc, "ring_params");
	CHECK_STR(json_string_value(json_object_get(json_object_get(rp, "hds_thresh"), "reason")),
		  "needs Linux 6.14 or later (this kernel is 6.12.48+deb13-amd64)");
	CHECK(json_is_null(json_object_get(doc, "coalesce_params")));
	json_decref(doc);
	set_release("7.3.4+deb13-amd64\n");

	/* GET /v1/topology's document: none of it, coalescing as before. */
	json_t *top = nt_topology_to_json(t);
	char *text = json_dumps(top, JSON_COMPACT);
	CHECK(text && !strstr(text, "ring_params") && !strstr(text, "tcp_data_split") && !strstr(text, "cqe_mode"));
	free(text);
	json_decref(top);
}

static void test_transaction(const nt_ctx *ctx)
{
	char *orig = tree_read(root, "ethtool/enos0.json");
	const nt_setting_kind *k = nt_setting_find("ring_params");
	nt_txn_engine *e = NULL;
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e || !orig || !k) {
		free(orig);
		nt_txn_engine_close(e);
		return;
	}
	json_t *profile = json_loads("{\"name\":\"hds\",\"rings\":[{\"interface\":\"enos0\",\"tcp_data_split\":\"on\","
				     "\"hds_thresh\":512}],\"coalesce\":[{\"interface\":\"enos0\",\"cqe_mode_rx\":true}]}",
				     0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome out = { 0 };
	CHECK_INT(nt_txn_apply(e, &req, &out), 0);
	CHECK_STR(json_string_value(json_object_get(out.doc, "status")), "applied");
	int64_t id = json_integer_value(json_object_get(out.doc, "id"));
	nt_txn_outcome_free(&out);
	nt_value now;
	CHECK_INT(k->read(ctx, NULL, "enos0", &now), 0);
	CHECK_STR(nt_t_str(k, &now), "tcp_data_split=on,hds_thresh=512,tx_push=off,rx_push=off");
	/* What the kernel would now say, in the fixture's own words. */
	char *mid = tree_read(root, "ethtool/enos0.json");
	json_t *m = mid ? json_loads(mid, 0, NULL) : NULL;
	json_t *rings = json_object_get(m, "rings");
	CHECK_INT(json_integer_value(json_object_get(rings, "tcp_data_split")), 2);
	CHECK_INT(json_integer_value(json_object_get(rings, "hds_thresh")), 512);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(m, "coalesce"), "cqe_mode_rx")), 1);
	json_decref(m);
	free(mid);

	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &out), 0);
	CHECK_STR(json_string_value(json_object_get(out.doc, "status")), "applied");
	CHECK_INT(json_array_size(json_object_get(out.doc, "steps")), 2);
	nt_txn_outcome_free(&out);
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


/* ---- the findings (diagnose/ring_params.c) ---- */

static long long ev_int(const json_t *f, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(f, "evidence"), key));
}

static const char *str_of(const json_t *f, const char *key)
{
	const char *v = json_string_value(json_object_get(f, key));
	return v ? v : "";
}

/* enos0 with RX buffers of 2048 bytes on its 9000-byte MTU, enos1 with
 * header/data split on, enos2 with 1024-byte buffers and MTU 1500. */
static void test_findings(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	give("enos0", "rings", "{\"rx_buf_len\":2048}");
	give("enos1", "rings", "{\"tcp_data_split\":2}");
	give("enos2", "rings", "{\"rx_buf_len\":1024}");
	tree_write(root, "sys/class/net/enos2/mtu", "1500\n");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		return;
	json_t *r = nt_diagnose(t, NULL);
	CHECK(r != NULL);
	const json_t *f = finding(r, "rx-buf-len-below-mtu", "enos0");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(str_of(f, "severity"), "warning");
		CHECK_INT(ev_int(f, "mtu"), 9000);
		CHECK_INT(ev_int(f, "rx_buf_len"), 2048);
		CHECK_INT(ev_int(f, "frame_bytes"), 9022);
		CHECK_INT(ev_int(f, "buffers_per_frame"), 5);
		const json_t *fe = json_array_get(json_object_get(json_object_get(f, "fix"), "rings"), 0);
		CHECK_INT(json_integer_value(json_object_get(fe, "rx_buf_len")), 16384);
		CHECK_STR(str_of(fe, "interface"), "enos0");
		CHECK(strstr(str_of(f, "message"), "spans 5 buffers") != NULL);
	}
	/* Not jumbo, or buffers the driver does not report: nothing. */
	CHECK(finding(r, "rx-buf-len-below-mtu", "enos2") == NULL);
	CHECK(finding(r, "rx-buf-len-below-mtu", "enos1") == NULL);
	f = finding(r, "hds-off", "host");
	CHECK(f != NULL);
	if (f) {
		CHECK_STR(str_of(f, "severity"), "info");
		CHECK(json_is_null(json_object_get(f, "fix")));
		const json_t *nics = json_object_get(json_object_get(f, "evidence"), "interfaces");
		CHECK_INT((long long)json_array_size(nics), 3);
		CHECK_STR(str_of(json_array_get(nics, 0), "interface"), "enos0");
		CHECK_STR(str_of(json_array_get(nics, 1), "interface"), "enos2");
		CHECK(strstr(str_of(f, "message"), "3 NICs report header/data split off") != NULL);
		CHECK(strstr(str_of(f, "message"), "enos1") == NULL);
	}
	/* One rings entry for enos0 in the profile of all fixes: its ring
	 * size (ring-below-max) and its buffer length together. */
	json_t *p = nt_diagnose_fix_profile(r, "fix");
	CHECK(p != NULL);
	size_t i, n0 = 0;
	const json_t *e, *e0 = NULL;
	json_array_foreach(json_object_get(p, "rings"), i, e)
		if (!strcmp(json_string_value(json_object_get(e, "interface")), "enos0")) {
			n0++;
			e0 = e;
		}
	CHECK_INT((long long)n0, 1);
	CHECK_INT(json_integer_value(json_object_get(e0, "rx_buf_len")), 16384);
	CHECK(json_object_get(e0, "rx") != NULL);
	json_decref(p);
	json_decref(r);
	nt_topology_free(t);
}

int main(void)
{
	char cmd[512];
	nt_ctx ctx;
	nt_topology *t = NULL;
	const nt_setting_kind *k = nt_setting_find("ring_params");

	test_parse_rings();
	test_parse_coalesce();
	test_releases();
	CHECK(k != NULL);
	if (!k)
		TEST_MAIN_END();
	test_values(k);
	snprintf(root, sizeof(root), "/tmp/nt-ringp-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-ringp-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	/* enos0 as 7.3's netdevsim reports it; its coalescing with CQE mode. */
	give("enos0", "rings", "{\"hds_thresh\":0,\"hds_thresh_max\":1024}");
	give("enos0", "coalesce", "{\"rx_usecs\":8,\"tx_usecs\":8,\"rx_frames\":0,\"tx_frames\":0,\"adaptive_rx\":1,"
				  "\"adaptive_tx\":0,\"cqe_mode_rx\":0,\"cqe_mode_tx\":0}");
	set_release("7.3.4+deb13-amd64\n");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (t) {
		test_validation(&ctx, t);
		test_plan(&ctx, t);
		test_report(&ctx, t);
		nt_topology_free(t);
		test_transaction(&ctx);
	}
	test_findings();
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
