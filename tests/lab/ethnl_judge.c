/* SPDX-License-Identifier: Apache-2.0 */
/* A judge of ethtool netlink for the VM lab's guest tests, where Debian
 * 12's ethtool 6.1 (and trixie's 6.14) cannot go: RSS contexts created and
 * deleted over netlink (RSS_CREATE_ACT/RSS_DELETE_ACT, 6.17+), the RSS dump,
 * input_xfrm, and the DIM profiles of coalescing (rx-profile/tx-profile).
 * A raw generic netlink socket, the "ethtool" family resolved by hand and
 * the attribute numbers of 7.3's include/uapi/linux/ethtool_netlink_generated.h
 * written out here: it shares no code with nettune, so a guest test can hold
 * nettune's readings against it.
 *
 * usage: lab_ethnl_judge CMD IF [ARGS]
 *   rss-get IF [CTX]          context, hfunc, input_xfrm, indir, hkey_len,
 *                             flow_tcp4/flow_udp4 (one name=value a line)
 *   rss-dump IF               one line per context: context=N indir=...
 *   rss-create IF [ctx N] [indir "Q Q .."] [xfrm N]   prints context=N
 *   rss-set IF CTX [indir "Q Q .."] [xfrm N] [tcp4 FIELDS]
 *   rss-delete IF CTX
 *   coal-get IF               adaptive_rx, adaptive_tx, rx_profile, tx_profile
 *                             (entries "usec,pkts[,comps]" as sent, space-separated)
 *   coal-set IF [rx-profile "U,P[,C] .."] [tx-profile ..] [adaptive-rx 0|1]
 *                             [adaptive-tx 0|1]
 * A refusal prints "error=-ERRNO STRERROR[: EXTACK]" and exits 1. */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { HDR_DEV_NAME = 2 };
enum { MSG_COALESCE_GET = 19, MSG_COALESCE_SET = 20, MSG_RSS_GET = 38, MSG_RSS_SET = 48,
       MSG_RSS_CREATE_ACT = 49, MSG_RSS_DELETE_ACT = 50 };
enum { RSS_HEADER = 1, RSS_CONTEXT, RSS_HFUNC, RSS_INDIR, RSS_HKEY, RSS_INPUT_XFRM, RSS_START_CONTEXT,
       RSS_FLOW_HASH };
enum { FLOW_TCP4 = 4, FLOW_UDP4 = 6 };
enum { COAL_HEADER = 1, COAL_ADAPTIVE_RX = 11, COAL_ADAPTIVE_TX = 12, COAL_RX_PROFILE = 29,
       COAL_TX_PROFILE = 30 };
enum { PROFILE_IRQ_MODERATION = 1 };
enum { MOD_USEC = 1, MOD_PKTS = 2, MOD_COMPS = 3 };

static char req[16384];
static size_t rlen;
static int seq = 1;

static void put(uint16_t type, const void *v, size_t n)
{
	struct nlattr *a = (struct nlattr *)(req + rlen);
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + n);
	if (n)
		memcpy(req + rlen + NLA_HDRLEN, v, n);
	memset(req + rlen + NLA_HDRLEN + n, 0, NLA_ALIGN(a->nla_len) - a->nla_len);
	rlen += NLA_ALIGN(a->nla_len);
}
static void put_u32(uint16_t type, uint32_t v) { put(type, &v, 4); }
static void put_u8(uint16_t type, uint8_t v) { put(type, &v, 1); }
static size_t nest_start(uint16_t type)
{
	size_t at = rlen;
	put((uint16_t)(type | NLA_F_NESTED), NULL, 0);
	return at;
}
static void nest_end(size_t at) { ((struct nlattr *)(req + at))->nla_len = (uint16_t)(rlen - at); }

typedef void (*on_msg)(const char *attrs, int len);

/* Send the request built in req (attributes from offset NLMSG_HDRLEN +
 * GENL_HDRLEN) and read replies until the ACK, DONE or an error: 0 or
 * -errno, the extack message printed with a refusal. */
static int talk(int fd, uint16_t family, uint8_t cmd, uint16_t flags, on_msg cb)
{
	struct nlmsghdr *h = (struct nlmsghdr *)req;
	struct genlmsghdr *g = NLMSG_DATA(h);
	static char buf[65536];
	h->nlmsg_len = (uint32_t)rlen;
	h->nlmsg_type = family;
	h->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | NLM_F_ACK | flags);
	h->nlmsg_seq = (uint32_t)seq++;
	g->cmd = cmd;
	g->version = 1;
	if (send(fd, req, rlen, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (struct nlmsghdr *m = (struct nlmsghdr *)buf; NLMSG_OK(m, (unsigned)n); m = NLMSG_NEXT(m, n)) {
			if (m->nlmsg_type == NLMSG_DONE)
				return 0;
			if (m->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(m);
				if (e->error && (m->nlmsg_flags & NLM_F_ACK_TLVS)) {
					const char *p = (const char *)(e + 1);
					int left = (int)m->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*e));
					while (left >= NLA_HDRLEN) {
						const struct nlattr *a = (const struct nlattr *)p;
						if (a->nla_len < NLA_HDRLEN || a->nla_len > left)
							break;
						if (a->nla_type == NLMSGERR_ATTR_MSG)
							fprintf(stdout, "extack=%s\n", p + NLA_HDRLEN);
						left -= NLA_ALIGN(a->nla_len);
						p += NLA_ALIGN(a->nla_len);
					}
				}
				return e->error;
			}
			if (cb)
				cb((const char *)NLMSG_DATA(m) + GENL_HDRLEN,
				   (int)m->nlmsg_len - (int)NLMSG_LENGTH(GENL_HDRLEN));
		}
	}
}

#define FOR_ATTR(a, p, len)                                                                     \
	for (const struct nlattr *a = (const struct nlattr *)(p); (len) >= NLA_HDRLEN &&         \
	     a->nla_len >= NLA_HDRLEN && a->nla_len <= (len);                                    \
	     (len) -= NLA_ALIGN(a->nla_len), a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len)))
#define DATA(a) ((const char *)(a) + NLA_HDRLEN)
#define PLEN(a) ((int)(a)->nla_len - NLA_HDRLEN)

static uint64_t uint_of(const struct nlattr *a)
{
	if (PLEN(a) >= 8)
		return *(const uint64_t *)DATA(a);
	if (PLEN(a) >= 4)
		return *(const uint32_t *)DATA(a);
	return *(const uint8_t *)DATA(a);
}

static int family(int fd)
{
	static int id;
	rlen = NLMSG_HDRLEN + GENL_HDRLEN;
	put(CTRL_ATTR_FAMILY_NAME, "ethtool", 8);
	struct nlmsghdr *h = (struct nlmsghdr *)req;
	static char buf[8192];
	h->nlmsg_len = (uint32_t)rlen;
	h->nlmsg_type = GENL_ID_CTRL;
	h->nlmsg_flags = NLM_F_REQUEST;
	h->nlmsg_seq = (uint32_t)seq++;
	((struct genlmsghdr *)NLMSG_DATA(h))->cmd = CTRL_CMD_GETFAMILY;
	((struct genlmsghdr *)NLMSG_DATA(h))->version = 1;
	if (send(fd, req, rlen, 0) < 0)
		return -errno;
	ssize_t n = recv(fd, buf, sizeof(buf), 0);
	if (n < (ssize_t)NLMSG_HDRLEN)
		return -EIO;
	h = (struct nlmsghdr *)buf;
	if (h->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
	int left = (int)h->nlmsg_len - (int)NLMSG_LENGTH(GENL_HDRLEN);
	FOR_ATTR(a, (char *)NLMSG_DATA(h) + GENL_HDRLEN, left)
	if (a->nla_type == CTRL_ATTR_FAMILY_ID)
		id = *(const uint16_t *)DATA(a);
	return id ? id : -ENOENT;
}

/* A new request for IF: the header nest. */
static void begin(uint16_t header, const char *iface)
{
	rlen = NLMSG_HDRLEN + GENL_HDRLEN;
	size_t n = nest_start(header);
	put(HDR_DEV_NAME, iface, strlen(iface) + 1);
	nest_end(n);
}

static void print_indir(const struct nlattr *a)
{
	printf("indir=");
	for (int i = 0; i < PLEN(a) / 4; i++)
		printf("%s%u", i ? " " : "", ((const uint32_t *)DATA(a))[i]);
	printf("\n");
}

static void on_rss(const char *p, int len)
{
	FOR_ATTR(a, p, len)
	{
		switch (a->nla_type & NLA_TYPE_MASK) {
		case RSS_CONTEXT: printf("context=%u\n", *(const uint32_t *)DATA(a)); break;
		case RSS_HFUNC: printf("hfunc=%u\n", *(const uint32_t *)DATA(a)); break;
		case RSS_INPUT_XFRM: printf("input_xfrm=%u\n", *(const uint32_t *)DATA(a)); break;
		case RSS_INDIR: print_indir(a); break;
		case RSS_HKEY: printf("hkey_len=%d\n", PLEN(a)); break;
		case RSS_FLOW_HASH: {
			int l2 = PLEN(a);
			FOR_ATTR(f, DATA(a), l2)
			{
				if ((f->nla_type & NLA_TYPE_MASK) == FLOW_TCP4)
					printf("flow_tcp4=0x%llx\n", (unsigned long long)uint_of(f));
				if ((f->nla_type & NLA_TYPE_MASK) == FLOW_UDP4)
					printf("flow_udp4=0x%llx\n", (unsigned long long)uint_of(f));
			}
			break;
		}
		}
	}
}

/* A dump: one line per context (context 0 has no CONTEXT attribute). */
static void on_rss_line(const char *p, int len)
{
	uint32_t ctx = 0;
	const struct nlattr *indir = NULL;
	FOR_ATTR(a, p, len)
	{
		if ((a->nla_type & NLA_TYPE_MASK) == RSS_CONTEXT)
			ctx = *(const uint32_t *)DATA(a);
		if ((a->nla_type & NLA_TYPE_MASK) == RSS_INDIR)
			indir = a;
	}
	printf("context=%u ", ctx);
	if (indir)
		print_indir(indir);
	else
		printf("indir=\n");
}

static void print_profile(const char *name, const struct nlattr *prof)
{
	int len = PLEN(prof), first = 1;
	printf("%s=", name);
	FOR_ATTR(m, DATA(prof), len)
	{
		int l2 = PLEN(m), f = 1;
		printf("%s", first ? "" : " ");
		first = 0;
		FOR_ATTR(v, DATA(m), l2)
		{
			printf("%s%u", f ? "" : ",", *(const uint32_t *)DATA(v));
			f = 0;
		}
	}
	printf("\n");
}

static void on_coal(const char *p, int len)
{
	FOR_ATTR(a, p, len)
	{
		switch (a->nla_type & NLA_TYPE_MASK) {
		case COAL_ADAPTIVE_RX: printf("adaptive_rx=%u\n", *(const uint8_t *)DATA(a)); break;
		case COAL_ADAPTIVE_TX: printf("adaptive_tx=%u\n", *(const uint8_t *)DATA(a)); break;
		case COAL_RX_PROFILE: print_profile("rx_profile", a); break;
		case COAL_TX_PROFILE: print_profile("tx_profile", a); break;
		}
	}
}

static void put_indir(const char *s)
{
	uint32_t q[4096];
	size_t n = 0;
	char *end;
	while (n < 4096) {
		unsigned long v = strtoul(s, &end, 10);
		if (end == s)
			break;
		q[n++] = (uint32_t)v;
		s = end;
	}
	put(RSS_INDIR, q, n * 4);
}

/* "U,P[,C] ..": one IRQ_MODERATION nest per entry, an empty field left out. */
static void put_profile(uint16_t type, const char *s)
{
	size_t prof = nest_start(type);
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		size_t m = nest_start(PROFILE_IRQ_MODERATION);
		for (uint16_t field = MOD_USEC; field <= MOD_COMPS && *s && *s != ' '; field++) {
			char *end;
			unsigned long v = strtoul(s, &end, 10);
			if (end != s)
				put_u32(field, (uint32_t)v);
			s = *end == ',' ? end + 1 : end;
		}
		nest_end(m);
	}
	nest_end(prof);
}

static int usage(void)
{
	fprintf(stderr, "usage: lab_ethnl_judge rss-get|rss-dump|rss-create|rss-set|rss-delete|coal-get|coal-set IF [ARGS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	const char *cmd = argv[1], *iface = argv[2];
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC), one = 1, e;
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	int fam = family(fd);
	if (fam < 0) {
		printf("error=%d %s (no ethtool family)\n", fam, strerror(-fam));
		return 1;
	}
	if (!strcmp(cmd, "rss-get")) {
		begin(RSS_HEADER, iface);
		if (argc > 3)
			put_u32(RSS_CONTEXT, (uint32_t)atoi(argv[3]));
		e = talk(fd, (uint16_t)fam, MSG_RSS_GET, 0, on_rss);
	} else if (!strcmp(cmd, "rss-dump")) {
		begin(RSS_HEADER, iface);
		e = talk(fd, (uint16_t)fam, MSG_RSS_GET, NLM_F_DUMP, on_rss_line);
	} else if (!strcmp(cmd, "rss-create") || !strcmp(cmd, "rss-set")) {
		int create = !strcmp(cmd, "rss-create"), i = 3;
		begin(RSS_HEADER, iface);
		if (!create) {
			if (argc < 4)
				return usage();
			put_u32(RSS_CONTEXT, (uint32_t)atoi(argv[3]));
			i = 4;
		}
		size_t flows = 0;
		for (; i + 1 < argc; i += 2) {
			if (!strcmp(argv[i], "ctx"))
				put_u32(RSS_CONTEXT, (uint32_t)atoi(argv[i + 1]));
			else if (!strcmp(argv[i], "indir"))
				put_indir(argv[i + 1]);
			else if (!strcmp(argv[i], "xfrm"))
				put_u32(RSS_INPUT_XFRM, (uint32_t)atoi(argv[i + 1]));
			else if (!strcmp(argv[i], "tcp4")) {
				flows = nest_start(RSS_FLOW_HASH);
				put_u32(FLOW_TCP4, (uint32_t)strtoul(argv[i + 1], NULL, 0));
				nest_end(flows);
			} else
				return usage();
		}
		e = talk(fd, (uint16_t)fam, create ? MSG_RSS_CREATE_ACT : MSG_RSS_SET, 0, create ? on_rss : NULL);
	} else if (!strcmp(cmd, "rss-delete")) {
		if (argc < 4)
			return usage();
		begin(RSS_HEADER, iface);
		put_u32(RSS_CONTEXT, (uint32_t)atoi(argv[3]));
		e = talk(fd, (uint16_t)fam, MSG_RSS_DELETE_ACT, 0, NULL);
	} else if (!strcmp(cmd, "coal-get")) {
		begin(COAL_HEADER, iface);
		e = talk(fd, (uint16_t)fam, MSG_COALESCE_GET, 0, on_coal);
	} else if (!strcmp(cmd, "coal-set")) {
		begin(COAL_HEADER, iface);
		for (int i = 3; i + 1 < argc; i += 2) {
			if (!strcmp(argv[i], "rx-profile"))
				put_profile(COAL_RX_PROFILE, argv[i + 1]);
			else if (!strcmp(argv[i], "tx-profile"))
				put_profile(COAL_TX_PROFILE, argv[i + 1]);
			else if (!strcmp(argv[i], "adaptive-rx"))
				put_u8(COAL_ADAPTIVE_RX, (uint8_t)atoi(argv[i + 1]));
			else if (!strcmp(argv[i], "adaptive-tx"))
				put_u8(COAL_ADAPTIVE_TX, (uint8_t)atoi(argv[i + 1]));
			else
				return usage();
		}
		e = talk(fd, (uint16_t)fam, MSG_COALESCE_SET, 0, NULL);
	} else {
		return usage();
	}
	close(fd);
	if (e) {
		printf("error=%d %s\n", e, strerror(-e));
		return 1;
	}
	return 0;
}
