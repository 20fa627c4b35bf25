/* SPDX-License-Identifier: Apache-2.0 */
/* The ring and coalescing parameters only ethtool netlink reaches (issue
 * 41, item 2), as `nettune nics IF --json` reports them, against this
 * machine's kernel read by a judge of our own: a raw generic netlink
 * socket, the "ethtool" family resolved by hand, one RINGS_GET and one
 * COALESCE_GET, and the attributes walked here, sharing no code with
 * nettune's reader (the DIM profile nests only as sent or not).
 * READ ONLY: nothing is set (eth0 is this machine's only
 * link). For every field the report says "supported" exactly when the
 * kernel sent the attribute, with its value (and hds-thresh's maximum);
 * a missing one carries a reason.
 *
 * NT_LIVE_IFACE picks the NIC (default eth0; skipped when absent).
 * With "--dump IF" the program is only the judge: it prints the RINGS_GET
 * attributes it knows as name=value lines, in attribute order, for the VM
 * lab's guest test (tests/lab/tests/87-ring-params.sh) to compare the
 * kernel's reading before and after a rollback byte for byte. */
#include "harness.h"
#include "live/live_tool.h"

#include <errno.h>
#include <jansson.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The numbers of include/uapi/linux/ethtool_netlink_generated.h, written
 * out again here on purpose: the judge does not take nettune's. */
static const struct {
	int attr;
	const char *name;
	int u8;
} ring_attrs[] = {
	{ 2, "rx_max", 0 }, { 5, "tx_max", 0 }, { 6, "rx", 0 }, { 9, "tx", 0 },
	{ 10, "rx_buf_len", 0 }, { 11, "tcp_data_split", 1 }, { 12, "cqe_size", 0 }, { 13, "tx_push", 1 },
	{ 14, "rx_push", 1 }, { 15, "tx_push_buf_len", 0 }, { 16, "tx_push_buf_len_max", 0 },
	{ 17, "hds_thresh", 0 }, { 18, "hds_thresh_max", 0 },
};
static const struct {
	int attr;
	const char *name;
	int u8;
} coal_attrs[] = {
	{ 24, "cqe_mode_tx", 1 }, { 25, "cqe_mode_rx", 1 }, { 26, "tx_aggr_max_bytes", 0 },
	{ 27, "tx_aggr_max_frames", 0 }, { 28, "tx_aggr_time_usecs", 0 },
};
#define NRING (sizeof(ring_attrs) / sizeof(ring_attrs[0]))
#define NCOAL (sizeof(coal_attrs) / sizeof(coal_attrs[0]))

typedef struct {
	long long v[32]; /* by attribute number; -1: not sent */
} reading;

static int seq = 1;

/* Send one generic netlink request of CMD to FAMILY with ATTRS (LEN bytes
 * of attributes) and receive the reply into BUF. Returns its length or
 * -errno (an NLMSG_ERROR's). */
static int request(int fd, uint16_t family, uint8_t cmd, const void *attrs, size_t alen, char *buf, size_t size)
{
	char req[512];
	struct nlmsghdr *h = (struct nlmsghdr *)req;
	struct genlmsghdr *g = NLMSG_DATA(h);
	memset(req, 0, sizeof(req));
	h->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + alen);
	h->nlmsg_type = family;
	h->nlmsg_flags = NLM_F_REQUEST;
	h->nlmsg_seq = (uint32_t)seq++;
	g->cmd = cmd;
	g->version = 1;
	memcpy((char *)g + GENL_HDRLEN, attrs, alen);
	if (send(fd, req, h->nlmsg_len, 0) < 0)
		return -errno;
	ssize_t n = recv(fd, buf, size, 0);
	if (n < (ssize_t)NLMSG_HDRLEN)
		return n < 0 ? -errno : -EIO;
	h = (struct nlmsghdr *)buf;
	if (h->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(h))->error ? ((struct nlmsgerr *)NLMSG_DATA(h))->error : -EIO;
	return (int)n;
}

/* An attribute into P: returns its aligned size. */
static size_t put_attr(char *p, uint16_t type, const void *v, size_t n)
{
	struct nlattr *a = (struct nlattr *)p;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + n);
	memcpy(p + NLA_HDRLEN, v, n);
	return NLA_ALIGN(a->nla_len);
}

static int family_id(int fd)
{
	char attrs[64], buf[8192];
	size_t alen = put_attr(attrs, CTRL_ATTR_FAMILY_NAME, "ethtool", 8);
	int n = request(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, attrs, alen, buf, sizeof(buf));
	if (n < 0)
		return n;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	char *p = (char *)NLMSG_DATA(h) + GENL_HDRLEN;
	int left = (int)h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	while (left >= NLA_HDRLEN) {
		struct nlattr *a = (struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > left)
			break;
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(uint16_t *)(p + NLA_HDRLEN);
		left -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	return -ENOENT;
}

/* CMD (RINGS_GET or COALESCE_GET) of IFACE into R. Returns 0 or -errno. */
static int judge(const char *iface, uint8_t cmd, uint16_t header, reading *r)
{
	char nest[64], attrs[96], buf[8192];
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC), n;
	for (int i = 0; i < 32; i++)
		r->v[i] = -1;
	if (fd < 0)
		return -errno;
	int fam = family_id(fd);
	if (fam < 0) {
		close(fd);
		return fam;
	}
	size_t nlen = put_attr(nest, ETHTOOL_A_HEADER_DEV_NAME, iface, strlen(iface) + 1);
	size_t alen = put_attr(attrs, (uint16_t)(header | NLA_F_NESTED), nest, nlen);
	n = request(fd, (uint16_t)fam, cmd, attrs, alen, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return n;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	char *p = (char *)NLMSG_DATA(h) + GENL_HDRLEN;
	int left = (int)h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	while (left >= NLA_HDRLEN) {
		struct nlattr *a = (struct nlattr *)p;
		int type = a->nla_type & NLA_TYPE_MASK;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > left)
			return -EPROTO;
		if (type < 32 && a->nla_len >= NLA_HDRLEN + 1)
			r->v[type] = a->nla_len >= NLA_HDRLEN + 4 ? *(uint32_t *)(p + NLA_HDRLEN) : *(uint8_t *)(p + NLA_HDRLEN);
		left -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	/* u8 attributes come padded: keep their first byte only. */
	for (size_t i = 0; i < NRING && cmd == ETHTOOL_MSG_RINGS_GET; i++)
		if (ring_attrs[i].u8 && r->v[ring_attrs[i].attr] >= 0)
			r->v[ring_attrs[i].attr] &= 0xff;
	for (size_t i = 0; i < NCOAL && cmd == ETHTOOL_MSG_COALESCE_GET; i++)
		if (coal_attrs[i].u8 && r->v[coal_attrs[i].attr] >= 0)
			r->v[coal_attrs[i].attr] &= 0xff;
	return 0;
}

static int dump(const char *iface)
{
	reading r;
	int e = judge(iface, ETHTOOL_MSG_RINGS_GET, ETHTOOL_A_RINGS_HEADER, &r);
	if (e < 0) {
		fprintf(stderr, "RINGS_GET %s: %s\n", iface, strerror(-e));
		return 1;
	}
	for (size_t i = 0; i < NRING; i++)
		if (r.v[ring_attrs[i].attr] >= 0)
			printf("%s=%lld\n", ring_attrs[i].name, r.v[ring_attrs[i].attr]);
	return 0;
}

/* One field of the report against the judge: supported exactly when the
 * attribute came, with its value; a reason otherwise. */
static void compare(const char *what, const json_t *obj, const char *name, long long got, int is_tds, int is_u8)
{
	json_t *f = json_object_get(obj, name);
	bool sent = got >= 0 && !(is_tds && got == 0);
	CHECK_MSG(json_is_object(f), "%s: no %s in the report", what, name);
	if (!json_is_object(f))
		return;
	bool sup = json_is_true(json_object_get(f, "supported"));
	CHECK_MSG(sup == sent, "%s %s: report says supported %d, the kernel %s it", what, name, sup,
		  sent ? "sent" : "did not send");
	if (!sup || !sent) {
		CHECK_MSG(!sup == !!json_string_value(json_object_get(f, "reason")), "%s %s: reason", what, name);
		printf("  %s %s: not supported (%s)\n", what, name, json_string_value(json_object_get(f, "reason")));
		return;
	}
	json_t *v = json_object_get(f, "value");
	long long rep = is_tds ? (strcmp(json_string_value(v) ? json_string_value(v) : "", "on") == 0 ? 2 : 1)
		      : is_u8 ? json_is_true(v)
			      : json_integer_value(v);
	long long want = is_u8 && !is_tds ? got != 0 : got;
	CHECK_MSG(rep == want, "%s %s: report %lld, kernel %lld", what, name, rep, want);
	printf("  %s %s: %lld, as the kernel says\n", what, name, want);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--dump") == 0)
		return dump(argv[2]);
	const char *iface = getenv("NT_LIVE_IFACE") ? getenv("NT_LIVE_IFACE") : "eth0";
	char cmd[512];
	reading rings, coal;

	if (access(NT_BIN, X_OK) != 0)
		SKIP("%s is not built", NT_BIN);
	snprintf(cmd, sizeof(cmd), "/sys/class/net/%s", iface);
	if (access(cmd, F_OK) != 0)
		SKIP("no %s here", iface);
	int e = judge(iface, ETHTOOL_MSG_RINGS_GET, ETHTOOL_A_RINGS_HEADER, &rings);
	if (e == -ENOENT || e == -EOPNOTSUPP)
		SKIP("%s: RINGS_GET: %s (no ethtool netlink or no ring settings)", iface, strerror(-e));
	CHECK_MSG(e == 0, "RINGS_GET %s: %s", iface, strerror(-e));
	int ec = judge(iface, ETHTOOL_MSG_COALESCE_GET, ETHTOOL_A_COALESCE_HEADER, &coal);

	snprintf(cmd, sizeof(cmd), "'%s' nics '%s' --json", NT_BIN, iface);
	char *out = run(cmd);
	json_t *doc = out ? json_loads(out, 0, NULL) : NULL;
	CHECK_MSG(doc != NULL, "%s gave no JSON", cmd);
	free(out);
	if (!doc)
		TEST_MAIN_END();
	json_t *rp = json_object_get(doc, "ring_params");
	CHECK_MSG(json_is_object(rp), "no ring_params for %s", iface);
	for (size_t i = 0; i < NRING; i++) {
		const char *n = ring_attrs[i].name;
		/* The sizes are the topology's; the maxima are inside their fields. */
		if (ring_attrs[i].attr <= 9 || strstr(n, "_max"))
			continue;
		compare("ring", rp, n, rings.v[ring_attrs[i].attr], ring_attrs[i].attr == 11, ring_attrs[i].u8);
	}
	json_t *hds = json_object_get(rp, "hds_thresh");
	if (rings.v[18] >= 0)
		CHECK_INT(json_integer_value(json_object_get(hds, "max")), rings.v[18]);
	else
		CHECK(json_object_get(hds, "max") == NULL);

	json_t *cp = json_object_get(doc, "coalesce_params");
	if (ec == -EOPNOTSUPP) {
		CHECK_MSG(json_is_null(cp), "%s has no coalescing, yet coalesce_params is there", iface);
	} else {
		CHECK_MSG(ec == 0, "COALESCE_GET %s: %s", iface, strerror(-ec));
		for (size_t i = 0; ec == 0 && i < NCOAL; i++)
			compare("coalesce", cp, coal_attrs[i].name, coal.v[coal_attrs[i].attr], 0, coal_attrs[i].u8);
		/* The DIM profiles (29 RX, 30 TX, nests): supported exactly when
		 * the kernel sent the nest (virtio_net with notification
		 * coalescing on 6.11+; this machine's has none). */
		static const char *const prof[2] = { "rx_profile", "tx_profile" };
		for (int d = 0; ec == 0 && d < 2; d++) {
			json_t *f = json_object_get(cp, prof[d]);
			bool sup = json_is_true(json_object_get(f, "supported")), sent = coal.v[29 + d] >= 0;
			CHECK_MSG(json_is_object(f) && sup == sent, "coalesce %s: report says supported %d, the kernel %s it",
				  prof[d], sup, sent ? "sent" : "did not send");
			printf("  coalesce %s: %s\n", prof[d],
			       sup ? "levels reported" : json_string_value(json_object_get(f, "reason")));
		}
	}
	/* Debian 12's ethtool prints "TCP data split" (5.18's attribute):
	 * the third reader, where it has the line. */
	snprintf(cmd, sizeof(cmd), "ethtool -g '%s' 2>/dev/null | awk -F':[ \t]*' '/^TCP data split/ {print $2}'", iface);
	char *tds = run(cmd);
	if (tds && tds[0]) {
		tds[strcspn(tds, "\n")] = '\0';
		json_t *f = json_object_get(rp, "tcp_data_split");
		const char *mine = json_is_true(json_object_get(f, "supported")) ? json_string_value(json_object_get(f, "value"))
										  : "n/a";
		CHECK_MSG(strcmp(tds, mine) == 0, "ethtool -g says TCP data split '%s', nettune '%s'", tds, mine);
		printf("  ethtool -g: TCP data split %s\n", tds);
	}
	free(tds);
	json_decref(doc);
	TEST_MAIN_END();
}
