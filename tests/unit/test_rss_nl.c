/* SPDX-License-Identifier: Apache-2.0 */
/* RSS contexts over ethtool netlink (kernel/rss_nl.h): the RSS_GET dump
 * parser fed crafted datagrams (context 0 without a CONTEXT attribute,
 * contexts with and without an input transformation, a create's reply,
 * the dump's end and a failed dump, an attribute running past its
 * message, a context given twice, other commands and families), the
 * kernel's capabilities told from the ethtool family's commands and their
 * dump flags (6.2-6.11: RSS_GET without a dump; 6.12: the dump; 6.17: set,
 * create, delete), the GETFAMILY parser's dump flags, and the requests
 * RSS_SET and RSS_CREATE_ACT send (a table of 2048 entries, as mlx5 has
 * with 256 channels, and the most one attribute carries). */
#include "kernel/ethtool_nlattrs.h"
#include "kernel/netdev.h"
#include "kernel/nlparse.h"
#include "kernel/rss_nl.h"
#include "harness.h"
#include "nl_dgram.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <netlink/msg.h>

#define FAM 0x17

/* One RSS_GET_REPLY as rss_fill_reply writes it: the header (the
 * device's index and name), CONTEXT unless 0, the table, HFUNC, the
 * input transformation when not 0, the key. */
static void reply(dgram *d, uint8_t cmd, uint32_t ifindex, uint32_t id, uint32_t entries, uint32_t xfrm)
{
	uint32_t tab[128];
	msg_begin(d, FAM, cmd);
	nest_begin(d);
	u32a(d, ETHTOOL_A_HEADER_DEV_INDEX, ifindex);
	attr(d, ETHTOOL_A_HEADER_DEV_NAME, "eni0", 5);
	nest_end(d, NT_ETHTOOL_A_RSS_HEADER);
	if (id)
		u32a(d, NT_ETHTOOL_A_RSS_CONTEXT, id);
	for (uint32_t i = 0; i < entries && i < 128; i++)
		tab[i] = i % 4;
	attr(d, NT_ETHTOOL_A_RSS_INDIR, tab, (uint16_t)(entries * 4));
	u32a(d, NT_ETHTOOL_A_RSS_HFUNC, 1);
	if (xfrm)
		u32a(d, NT_ETHTOOL_A_RSS_INPUT_XFRM, xfrm);
	attr(d, NT_ETHTOOL_A_RSS_HKEY, "0123456789012345678901234567890123456789", 40);
	msg_end(d);
}

static void test_dump(void)
{
	dgram d = { .len = 0 };
	nt_rss_nl_list l = { 0 };
	/* One datagram: context 0, 3 (no rule names it), 1 with
	 * symmetric-xor; a message of another family and another command
	 * are skipped. */
	reply(&d, NT_ETHTOOL_MSG_RSS_GET_REPLY, 7, 0, 128, 0);
	reply(&d, NT_ETHTOOL_MSG_RSS_GET_REPLY, 7, 3, 128, 0);
	reply(&d, NT_ETHTOOL_MSG_RSS_GET_REPLY, 7, 1, 64, 1);
	reply(&d, FAM + 1, 7, 9, 128, 0);
	reply(&d, ETHTOOL_MSG_RINGS_GET_REPLY, 7, 8, 128, 0);
	CHECK_INT(nt_rss_nl_parse(&l, FAM, d.b, d.len), 0);
	CHECK_INT(l.n, 3);
	if (l.n == 3) {
		CHECK(l.e[0].id == 0 && l.e[0].ifindex == 7 && l.e[0].indir_size == 128 && l.e[0].hfunc == 1 &&
		      l.e[0].input_xfrm == -1);
		CHECK(l.e[1].id == 3 && l.e[1].input_xfrm == -1);
		CHECK(l.e[2].id == 1 && l.e[2].indir_size == 64 && l.e[2].input_xfrm == 1);
	}
	/* The next datagram: the same context again is dropped and counted,
	 * then the dump's end. */
	d.len = 0;
	reply(&d, NT_ETHTOOL_MSG_RSS_GET_REPLY, 7, 3, 128, 0);
	done(&d, 0);
	CHECK_INT(nt_rss_nl_parse(&l, FAM, d.b, d.len), 1);
	CHECK(l.n == 3 && l.skipped == 1);
	nt_rss_nl_list_free(&l);
	CHECK(l.n == 0 && !l.e);

	/* A create's reply carries the new context: parsed the same way. */
	d.len = 0;
	reply(&d, NT_ETHTOOL_MSG_RSS_CREATE_ACT_REPLY, 7, 5, 128, 2);
	CHECK_INT(nt_rss_nl_parse(&l, FAM, d.b, d.len), 0);
	CHECK(l.n == 1 && l.e[0].id == 5 && l.e[0].input_xfrm == 2);
	nt_rss_nl_list_free(&l);

	/* A dump that failed part way: its NLMSG_DONE holds the error. */
	d.len = 0;
	done(&d, -EOPNOTSUPP);
	CHECK_INT(nt_rss_nl_parse(&l, FAM, d.b, d.len), -EOPNOTSUPP);

	/* A table whose length is no multiple of 4, and a context attribute
	 * too short: the message is skipped, the next one kept. */
	d.len = 0;
	msg_begin(&d, FAM, NT_ETHTOOL_MSG_RSS_GET_REPLY);
	u32a(&d, NT_ETHTOOL_A_RSS_CONTEXT, 2);
	attr(&d, NT_ETHTOOL_A_RSS_INDIR, "abcdef", 6);
	msg_end(&d);
	msg_begin(&d, FAM, NT_ETHTOOL_MSG_RSS_GET_REPLY);
	attr(&d, NT_ETHTOOL_A_RSS_CONTEXT, "ab", 2);
	msg_end(&d);
	reply(&d, NT_ETHTOOL_MSG_RSS_GET_REPLY, 7, 4, 8, 0);
	CHECK_INT(nt_rss_nl_parse(&l, FAM, d.b, d.len), 0);
	CHECK(l.n == 1 && l.e[0].id == 4 && l.skipped == 2);
	nt_rss_nl_list_free(&l);

	/* An attribute running past its message: the message is skipped. A
	 * message running past the datagram: the framing is broken. */
	d.len = 0;
	msg_begin(&d, FAM, NT_ETHTOOL_MSG_RSS_GET_REPLY);
	u32a(&d, NT_ETHTOOL_A_RSS_CONTEXT, 6);
	msg_end(&d);
	uint16_t big = 200;
	memcpy(d.b + d.msg + NLMSG_LENGTH(GENL_HDRLEN), &big, 2);
	CHECK_INT(nt_rss_nl_parse(&l, FAM, d.b, d.len), 0);
	CHECK(l.n == 0 && l.skipped == 1);
	CHECK_INT(nt_rss_nl_parse(&l, FAM, d.b, d.len - 4), NT_EPARSE);
	nt_rss_nl_list_free(&l);
}

/* A GETFAMILY reply of the ethtool family with the commands CMDS, each
 * with FLAGS. */
static void family(dgram *d, const uint32_t *cmds, const uint32_t *flags, int n)
{
	uint16_t fid = FAM;
	d->len = 0;
	msg_begin(d, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
	attr(d, CTRL_ATTR_FAMILY_NAME, "ethtool", 8);
	attr(d, CTRL_ATTR_FAMILY_ID, &fid, 2);
	size_t outer = d->len;
	d->len += NLA_HDRLEN;
	for (int i = 0; i < n; i++) {
		size_t inner = d->len;
		d->len += NLA_HDRLEN;
		u32a(d, CTRL_ATTR_OP_ID, cmds[i]);
		u32a(d, CTRL_ATTR_OP_FLAGS, flags[i]);
		struct nlattr in = { .nla_len = (uint16_t)(d->len - inner), .nla_type = (uint16_t)(i + 1) };
		memcpy(d->b + inner, &in, sizeof(in));
	}
	struct nlattr out = { .nla_len = (uint16_t)(d->len - outer), .nla_type = CTRL_ATTR_OPS };
	memcpy(d->b + outer, &out, sizeof(out));
	msg_end(d);
}

static void test_caps(void)
{
	dgram d;
	int id;
	uint64_t ops, dumps;
	nt_rss_nl c;
	const uint32_t doit = GENL_CMD_CAP_DO | GENL_CMD_CAP_HASPOL, both = doit | GENL_CMD_CAP_DUMP;
	/* 6.8: RSS_GET a do only (ETHTOOL_MSG_RSS_GET is 38 there too). */
	uint32_t c68[] = { ETHTOOL_MSG_RINGS_GET, NT_ETHTOOL_MSG_RSS_GET }, f68[] = { both, doit };
	family(&d, c68, f68, 2);
	CHECK_INT(nt_genl_parse_family(d.b, d.len, &id, &ops, &dumps), 0);
	CHECK(id == FAM && (ops >> NT_ETHTOOL_MSG_RSS_GET & 1) && !(dumps >> NT_ETHTOOL_MSG_RSS_GET & 1) &&
	      (dumps >> ETHTOOL_MSG_RINGS_GET & 1));
	nt_rss_nl_caps_of(ops, dumps, &c);
	CHECK(!c.list && !c.create && !c.set);
	/* 6.12: the dump. */
	uint32_t f612[] = { both, both };
	family(&d, c68, f612, 2);
	CHECK_INT(nt_genl_parse_family(d.b, d.len, &id, &ops, &dumps), 0);
	nt_rss_nl_caps_of(ops, dumps, &c);
	CHECK(c.list && !c.create && !c.set);
	/* 6.17: RSS_SET, RSS_CREATE_ACT, RSS_DELETE_ACT. */
	uint32_t c617[] = { NT_ETHTOOL_MSG_RSS_GET, NT_ETHTOOL_MSG_RSS_SET, NT_ETHTOOL_MSG_RSS_CREATE_ACT,
			    NT_ETHTOOL_MSG_RSS_DELETE_ACT },
		 f617[] = { both, doit, doit, doit };
	family(&d, c617, f617, 4);
	CHECK_INT(nt_genl_parse_family(d.b, d.len, &id, &ops, &dumps), 0);
	nt_rss_nl_caps_of(ops, dumps, &c);
	CHECK(c.list && c.create && c.set);
	/* A create without a delete is not taken: a context made could not be
	 * deleted the same way by its rollback. */
	nt_rss_nl_caps_of(1ull << NT_ETHTOOL_MSG_RSS_CREATE_ACT, 0, &c);
	CHECK(!c.create);
	/* The netdev family's older entry point gives the same commands. */
	CHECK_INT(nt_netdev_parse_family_ops(d.b, d.len, &id, &ops), 0);
	CHECK(ops >> NT_ETHTOOL_MSG_RSS_DELETE_ACT & 1);
}

/* What a request holds, walked back. */
typedef struct sent {
	int cmd;
	uint32_t id;
	size_t indir_bytes;
	const unsigned char *indir;
	int64_t xfrm;
	char ifname[16];
} sent;

static int sent_header(void *ud, int type, const unsigned char *v, size_t n)
{
	sent *s = ud;
	if (type == ETHTOOL_A_HEADER_DEV_NAME && n < sizeof(s->ifname))
		memcpy(s->ifname, v, n);
	return 0;
}

static int sent_attr(void *ud, int type, const unsigned char *v, size_t n)
{
	sent *s = ud;
	uint32_t x = 0;
	if (n >= 4)
		memcpy(&x, v, 4);
	if (type == NT_ETHTOOL_A_RSS_HEADER)
		return nt_nla_walk(v, n, sent_header, s);
	if (type == NT_ETHTOOL_A_RSS_CONTEXT)
		s->id = x;
	else if (type == NT_ETHTOOL_A_RSS_INDIR) {
		s->indir = v;
		s->indir_bytes = n;
	} else if (type == NT_ETHTOOL_A_RSS_INPUT_XFRM)
		s->xfrm = x;
	return 0;
}

static int sent_msg(void *ud, int cmd, const unsigned char *a, size_t n)
{
	sent *s = ud;
	s->cmd = cmd;
	return nt_nla_walk(a, n, sent_attr, s);
}

static int walk_sent(struct nl_msg *msg, sent *s)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	memset(s, 0, sizeof(*s));
	s->xfrm = -1;
	s->cmd = -2;
	return nt_genl_walk(h, h->nlmsg_len, FAM, sent_msg, s);
}

static void test_requests(void)
{
	static uint32_t tab[16383];
	struct nl_msg *msg = NULL;
	sent s;
	for (uint32_t i = 0; i < 16383; i++)
		tab[i] = i % 256;
	/* A context's table of 2048 entries (mlx5 with 256 channels; ice's
	 * own table): 8 KiB, more than a default libnl message (a page). */
	CHECK_INT(nt_rss_nl_act_msg(FAM, NT_ETHTOOL_MSG_RSS_SET, "eni0", 3, tab, 2048, -1, &msg), 0);
	if (msg) {
		CHECK_INT(walk_sent(msg, &s), 0);
		CHECK(s.cmd == NT_ETHTOOL_MSG_RSS_SET && s.id == 3 && !strcmp(s.ifname, "eni0") && s.xfrm == -1);
		CHECK(s.indir_bytes == 2048 * 4 && s.indir && !memcmp(s.indir, tab, 2048 * 4));
		nlmsg_free(msg);
	}
	/* A create of a table as long as one attribute holds (its length is
	 * 16 bits): 16382 entries. */
	msg = NULL;
	CHECK_INT(nt_rss_nl_act_msg(FAM, NT_ETHTOOL_MSG_RSS_CREATE_ACT, "eni0", 9, tab, 16382, -1, &msg), 0);
	if (msg) {
		CHECK_INT(walk_sent(msg, &s), 0);
		CHECK(s.cmd == NT_ETHTOOL_MSG_RSS_CREATE_ACT && s.id == 9 && s.indir_bytes == 16382 * 4 &&
		      !memcmp(s.indir, tab, 16382 * 4));
		nlmsg_free(msg);
	}
	/* One more cannot be sent: refused, never a length wrapped. */
	msg = NULL;
	CHECK_INT(nt_rss_nl_act_msg(FAM, NT_ETHTOOL_MSG_RSS_SET, "eni0", 3, tab, 16383, -1, &msg), -E2BIG);
	CHECK(msg == NULL);
	/* The input transformation alone, for context 0: no CONTEXT. */
	CHECK_INT(nt_rss_nl_act_msg(FAM, NT_ETHTOOL_MSG_RSS_SET, "eni0", 0, NULL, 0, 1, &msg), 0);
	if (msg) {
		CHECK_INT(walk_sent(msg, &s), 0);
		CHECK(s.id == 0 && !s.indir && s.xfrm == 1);
		nlmsg_free(msg);
	}
}

int main(void)
{
	test_dump();
	test_caps();
	test_requests();
	TEST_MAIN_END();
}
