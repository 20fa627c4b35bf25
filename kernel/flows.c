/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's flow rules: see kernel/flows.h. */
#include "kernel/flows.h"
#include "kernel/ethtool.h"
#include "kernel/fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static const struct {
	nt_flow_type type;
	const char *name;
	uint32_t kernel;
	bool v6;
} flow_types[] = {
	{ NT_FLOW_TCP4, "tcp4", TCP_V4_FLOW, false },
	{ NT_FLOW_UDP4, "udp4", UDP_V4_FLOW, false },
	{ NT_FLOW_TCP6, "tcp6", TCP_V6_FLOW, true },
	{ NT_FLOW_UDP6, "udp6", UDP_V6_FLOW, true },
};
#define NTYPES (sizeof(flow_types) / sizeof(flow_types[0]))

const char *nt_flow_type_name(nt_flow_type t)
{
	for (size_t i = 0; i < NTYPES; i++)
		if (flow_types[i].type == t)
			return flow_types[i].name;
	return NULL;
}

static bool type_v6(nt_flow_type t)
{
	return t == NT_FLOW_TCP6 || t == NT_FLOW_UDP6;
}

/* ---- text ---- */

static int fail(char *why, size_t whysize, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t whysize, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (why && whysize)
		vsnprintf(why, whysize, fmt, ap);
	va_end(ap);
	return NT_EPARSE;
}

/* "/N" as a prefix of LEN bytes. */
static bool prefix_mask(const char *s, uint8_t *mask, int len)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || n < 0 || n > len * 8)
		return false;
	memset(mask, 0, (size_t)len);
	for (int i = 0; i < len; i++) {
		int bits = n > 8 ? 8 : (int)n;
		mask[i] = bits ? (uint8_t)(0xff << (8 - bits)) : 0;
		n -= bits;
	}
	return true;
}

static int parse_ip(const char *tok, bool v6, uint8_t *addr, uint8_t *mask)
{
	char buf[INET6_ADDRSTRLEN * 2 + 2];
	int len = v6 ? 16 : 4;
	if (strlen(tok) >= sizeof(buf))
		return NT_EPARSE;
	snprintf(buf, sizeof(buf), "%s", tok);
	char *slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if (inet_pton(v6 ? AF_INET6 : AF_INET, buf, addr) != 1)
		return NT_EPARSE;
	memset(mask, 0xff, (size_t)len);
	if (slash && !prefix_mask(slash, mask, len) && inet_pton(v6 ? AF_INET6 : AF_INET, slash, mask) != 1)
		return NT_EPARSE;
	return 0;
}

static int parse_port(const char *tok, uint16_t *port, uint16_t *mask)
{
	char *end;
	errno = 0;
	unsigned long p = strtoul(tok, &end, 10);
	if (tok[0] < '0' || tok[0] > '9' || errno || p > 65535 || (*end && *end != '/'))
		return NT_EPARSE;
	*port = (uint16_t)p;
	*mask = 0xffff;
	if (*end == '/') {
		const char *m = end + 1;
		unsigned long x = strtoul(m, &end, 0);
		if (m[0] < '0' || m[0] > '9' || *end || x > 0xffff)
			return NT_EPARSE;
		*mask = (uint16_t)x;
	}
	return 0;
}

int nt_flow_rule_parse(const char *text, nt_flow_rule *out, char *why, size_t whysize)
{
	char buf[512], *save = NULL;
	bool action = false;

	memset(out, 0, sizeof(*out));
	if (!text || strlen(text) >= sizeof(buf))
		return fail(why, whysize, "%s", "not a flow rule");
	snprintf(buf, sizeof(buf), "%s", text);
	char *tok = strtok_r(buf, " ", &save);
	if (tok && strcmp(tok, "none") == 0)
		return strtok_r(NULL, " ", &save) ? fail(why, whysize, "%s", "'none' takes nothing after it") : 0;
	for (size_t i = 0; tok && i < NTYPES; i++)
		if (strcmp(tok, flow_types[i].name) == 0)
			out->type = flow_types[i].type;
	if (out->type == NT_FLOW_NONE)
		return fail(why, whysize, "'%s' is not a flow type (tcp4, udp4, tcp6, udp6)", tok ? tok : "");
	bool v6 = type_v6(out->type);
	while ((tok = strtok_r(NULL, " ", &save))) {
		char *arg = NULL;
		unsigned bit = 0;
		if (action)
			return fail(why, whysize, "'%s' after the action", tok);
		if (!strcmp(tok, "drop")) {
			out->drop = true;
			action = true;
			continue;
		}
		if (!strcmp(tok, "src-ip"))
			bit = NT_FLOW_SRC_IP;
		else if (!strcmp(tok, "dst-ip"))
			bit = NT_FLOW_DST_IP;
		else if (!strcmp(tok, "src-port"))
			bit = NT_FLOW_SRC_PORT;
		else if (!strcmp(tok, "dst-port"))
			bit = NT_FLOW_DST_PORT;
		else if (!strcmp(tok, "context")) {
			char *end;
			const char *c = strtok_r(NULL, " ", &save);
			unsigned long x = c ? strtoul(c, &end, 10) : 0;
			if (out->context || !c || c[0] < '1' || c[0] > '9' || *end || x >= 0xffffffffUL)
				return fail(why, whysize, "%s", "'context' given twice or without a context number from 1");
			out->context = (uint32_t)x;
			continue;
		} else if (strcmp(tok, "queue") != 0)
			return fail(why, whysize, "'%s' is not a match field or action", tok);
		if ((out->fields & bit) || !(arg = strtok_r(NULL, " ", &save)))
			return bit ? fail(why, whysize, "'%s' given twice or without a value", tok) :
				     fail(why, whysize, "'%s' without a number", tok);
		int r = 0;
		switch (bit) {
		case NT_FLOW_SRC_IP:
			r = parse_ip(arg, v6, out->src_ip, out->src_ip_mask);
			break;
		case NT_FLOW_DST_IP:
			r = parse_ip(arg, v6, out->dst_ip, out->dst_ip_mask);
			break;
		case NT_FLOW_SRC_PORT:
			r = parse_port(arg, &out->src_port, &out->src_port_mask);
			break;
		case NT_FLOW_DST_PORT:
			r = parse_port(arg, &out->dst_port, &out->dst_port_mask);
			break;
		default: {
			char *end;
			errno = 0;
			unsigned long q = strtoul(arg, &end, 10);
			if (arg[0] < '0' || arg[0] > '9' || *end || errno || q > UINT32_MAX)
				return fail(why, whysize, "queue '%s' is not a queue number", arg);
			out->queue = (uint32_t)q;
			action = true;
			continue;
		}
		}
		if (r < 0 && (bit & (NT_FLOW_SRC_IP | NT_FLOW_DST_IP)))
			return fail(why, whysize, "'%s' is not an IPv%d address with an optional mask", arg, v6 ? 6 : 4);
		if (r < 0)
			return fail(why, whysize, "'%s' is not a port (0-65535) with an optional mask", arg);
		out->fields |= bit;
	}
	if (!action)
		return fail(why, whysize, "%s", "no action ('queue N' or 'drop')");
	if (out->context && out->drop)
		return fail(why, whysize, "%s", "a rule to an RSS context cannot drop");
	return 0;
}

static bool all_ones(const uint8_t *m, int len)
{
	for (int i = 0; i < len; i++)
		if (m[i] != 0xff)
			return false;
	return true;
}

/* The prefix length M is, or -1 when it is not a prefix. */
static int prefix_len(const uint8_t *m, int len)
{
	int n = 0, i = 0;
	while (i < len && m[i] == 0xff)
		n += 8, i++;
	if (i < len) {
		uint8_t b = m[i];
		while (b & 0x80)
			n++, b = (uint8_t)(b << 1);
		if (b)
			return -1;
		for (i++; i < len; i++)
			if (m[i])
				return -1;
	}
	return n;
}

static int put(char *out, size_t size, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int put(char *out, size_t size, size_t *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out + *at, size - *at, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size - *at)
		return -ENOSPC;
	*at += (size_t)n;
	return 0;
}

static int put_ip(char *out, size_t size, size_t *at, const char *name, bool v6, const uint8_t *a,
		  const uint8_t *m)
{
	char as[INET6_ADDRSTRLEN], ms[INET6_ADDRSTRLEN];
	int len = v6 ? 16 : 4;
	inet_ntop(v6 ? AF_INET6 : AF_INET, a, as, sizeof(as));
	if (all_ones(m, len))
		return put(out, size, at, " %s %s", name, as);
	int p = prefix_len(m, len);
	if (p >= 0)
		return put(out, size, at, " %s %s/%d", name, as, p);
	inet_ntop(v6 ? AF_INET6 : AF_INET, m, ms, sizeof(ms));
	return put(out, size, at, " %s %s/%s", name, as, ms);
}

static int put_port(char *out, size_t size, size_t *at, const char *name, uint16_t p, uint16_t m)
{
	if (m == 0xffff)
		return put(out, size, at, " %s %u", name, p);
	return put(out, size, at, " %s %u/0x%04x", name, p, m);
}

int nt_flow_rule_format(const nt_flow_rule *r, char *out, size_t size)
{
	size_t at = 0;
	int e;
	bool v6 = type_v6(r->type);
	if (!size)
		return -ENOSPC;
	out[0] = '\0';
	if (r->type == NT_FLOW_NONE)
		return put(out, size, &at, "none");
	if (r->type == NT_FLOW_OTHER)
		e = put(out, size, &at, "other flow-type %u", r->kernel_flow_type);
	else
		e = put(out, size, &at, "%s", nt_flow_type_name(r->type));
	if (e == 0 && (r->fields & NT_FLOW_SRC_IP))
		e = put_ip(out, size, &at, "src-ip", v6, r->src_ip, r->src_ip_mask);
	if (e == 0 && (r->fields & NT_FLOW_DST_IP))
		e = put_ip(out, size, &at, "dst-ip", v6, r->dst_ip, r->dst_ip_mask);
	if (e == 0 && (r->fields & NT_FLOW_SRC_PORT))
		e = put_port(out, size, &at, "src-port", r->src_port, r->src_port_mask);
	if (e == 0 && (r->fields & NT_FLOW_DST_PORT))
		e = put_port(out, size, &at, "dst-port", r->dst_port, r->dst_port_mask);
	if (e == 0 && r->context && r->type != NT_FLOW_OTHER)
		e = put(out, size, &at, " context %u", r->context);
	if (e == 0)
		e = r->drop ? put(out, size, &at, " drop") : put(out, size, &at, " queue %u", r->queue);
	return e;
}

bool nt_flow_rule_equal(const nt_flow_rule *a, const nt_flow_rule *b)
{
	int len = type_v6(a->type) ? 16 : 4;
	if (a->type != b->type || a->fields != b->fields || a->drop != b->drop ||
	    (!a->drop && a->queue != b->queue) || a->kernel_flow_type != b->kernel_flow_type ||
	    a->context != b->context)
		return false;
	if ((a->fields & NT_FLOW_SRC_IP) &&
	    (memcmp(a->src_ip, b->src_ip, len) || memcmp(a->src_ip_mask, b->src_ip_mask, len)))
		return false;
	if ((a->fields & NT_FLOW_DST_IP) &&
	    (memcmp(a->dst_ip, b->dst_ip, len) || memcmp(a->dst_ip_mask, b->dst_ip_mask, len)))
		return false;
	if ((a->fields & NT_FLOW_SRC_PORT) && (a->src_port != b->src_port || a->src_port_mask != b->src_port_mask))
		return false;
	if ((a->fields & NT_FLOW_DST_PORT) && (a->dst_port != b->dst_port || a->dst_port_mask != b->dst_port_mask))
		return false;
	return true;
}

/* ---- the kernel's struct ---- */

static void spec_ip(const nt_flow_rule *r, unsigned bit, void *val, void *mask, size_t len)
{
	if (!(r->fields & bit))
		return;
	memcpy(val, bit == NT_FLOW_SRC_IP ? r->src_ip : r->dst_ip, len);
	memcpy(mask, bit == NT_FLOW_SRC_IP ? r->src_ip_mask : r->dst_ip_mask, len);
}

static void spec_ports(const nt_flow_rule *r, uint16_t *psrc, uint16_t *pdst, uint16_t *msrc, uint16_t *mdst)
{
	if (r->fields & NT_FLOW_SRC_PORT) {
		*psrc = htons(r->src_port);
		*msrc = htons(r->src_port_mask);
	}
	if (r->fields & NT_FLOW_DST_PORT) {
		*pdst = htons(r->dst_port);
		*mdst = htons(r->dst_port_mask);
	}
}

int nt_flow_spec_encode(const nt_flow_rule *r, struct ethtool_rx_flow_spec *fs)
{
	size_t i = 0;
	while (i < NTYPES && flow_types[i].type != r->type)
		i++;
	memset(fs, 0, sizeof(*fs));
	if (i == NTYPES)
		return -EINVAL;
	fs->flow_type = flow_types[i].kernel | (r->context ? FLOW_RSS : 0);
	fs->location = r->location;
	fs->ring_cookie = r->drop ? RX_CLS_FLOW_DISC : r->queue;
	if (flow_types[i].v6) {
		struct ethtool_tcpip6_spec *h = &fs->h_u.tcp_ip6_spec, *m = &fs->m_u.tcp_ip6_spec;
		spec_ip(r, NT_FLOW_SRC_IP, h->ip6src, m->ip6src, 16);
		spec_ip(r, NT_FLOW_DST_IP, h->ip6dst, m->ip6dst, 16);
		spec_ports(r, &h->psrc, &h->pdst, &m->psrc, &m->pdst);
	} else {
		struct ethtool_tcpip4_spec *h = &fs->h_u.tcp_ip4_spec, *m = &fs->m_u.tcp_ip4_spec;
		spec_ip(r, NT_FLOW_SRC_IP, &h->ip4src, &m->ip4src, 4);
		spec_ip(r, NT_FLOW_DST_IP, &h->ip4dst, &m->ip4dst, 4);
		spec_ports(r, &h->psrc, &h->pdst, &m->psrc, &m->pdst);
	}
	return 0;
}

static bool zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* An address field (BIT) of the kernel's struct, when its mask is set. */
static void take_ip(nt_flow_rule *out, unsigned bit, const void *val, const void *mask, size_t len)
{
	if (zero(mask, len))
		return;
	out->fields |= bit;
	memcpy(bit == NT_FLOW_SRC_IP ? out->src_ip : out->dst_ip, val, len);
	memcpy(bit == NT_FLOW_SRC_IP ? out->src_ip_mask : out->dst_ip_mask, mask, len);
}

/* The ports (network order), each when its mask is set. */
static void take_ports(nt_flow_rule *out, uint16_t psrc, uint16_t pdst, uint16_t msrc, uint16_t mdst)
{
	if (msrc) {
		out->fields |= NT_FLOW_SRC_PORT;
		out->src_port = ntohs(psrc);
		out->src_port_mask = ntohs(msrc);
	}
	if (mdst) {
		out->fields |= NT_FLOW_DST_PORT;
		out->dst_port = ntohs(pdst);
		out->dst_port_mask = ntohs(mdst);
	}
}

void nt_flow_spec_decode(const struct ethtool_rx_flow_spec *fs, uint32_t rss_context, nt_flow_rule *out)
{
	uint32_t ft = fs->flow_type & ~(uint32_t)(FLOW_EXT | FLOW_MAC_EXT | FLOW_RSS);
	size_t i = 0;
	memset(out, 0, sizeof(*out));
	out->location = fs->location;
	out->drop = fs->ring_cookie == RX_CLS_FLOW_DISC;
	out->queue = out->drop ? 0 : (uint32_t)ethtool_get_flow_spec_ring(fs->ring_cookie);
	while (i < NTYPES && flow_types[i].kernel != ft)
		i++;
	/* Extension fields (VLAN, MAC, a VF in the ring cookie) and FLOW_RSS
	 * on context 0 are not modelled: such a rule is reported, never
	 * rewritten, so nothing of it is lost. FLOW_RSS with a context is. */
	bool ext = (fs->flow_type & (FLOW_EXT | FLOW_MAC_EXT)) && !zero(&fs->m_ext, sizeof(fs->m_ext));
	bool vf = !out->drop && ethtool_get_flow_spec_ring_vf(fs->ring_cookie);
	bool rss = fs->flow_type & FLOW_RSS;
	if (rss && !out->drop)
		out->context = rss_context;
	if (i == NTYPES || ext || vf || (rss && (out->drop || !rss_context))) {
		out->context = 0;
		out->type = NT_FLOW_OTHER;
		out->kernel_flow_type = fs->flow_type;
		return;
	}
	out->type = flow_types[i].type;
	if (flow_types[i].v6) {
		const struct ethtool_tcpip6_spec *h = &fs->h_u.tcp_ip6_spec, *m = &fs->m_u.tcp_ip6_spec;
		if (m->tclass) {
			out->type = NT_FLOW_OTHER;
			out->kernel_flow_type = fs->flow_type;
			return;
		}
		take_ip(out, NT_FLOW_SRC_IP, h->ip6src, m->ip6src, 16);
		take_ip(out, NT_FLOW_DST_IP, h->ip6dst, m->ip6dst, 16);
		take_ports(out, h->psrc, h->pdst, m->psrc, m->pdst);
	} else {
		const struct ethtool_tcpip4_spec *h = &fs->h_u.tcp_ip4_spec, *m = &fs->m_u.tcp_ip4_spec;
		if (m->tos) {
			out->type = NT_FLOW_OTHER;
			out->kernel_flow_type = fs->flow_type;
			return;
		}
		take_ip(out, NT_FLOW_SRC_IP, &h->ip4src, &m->ip4src, 4);
		take_ip(out, NT_FLOW_DST_IP, &h->ip4dst, &m->ip4dst, 4);
		take_ports(out, h->psrc, h->pdst, m->psrc, m->pdst);
	}
	/* A masked value keeps only its compared bits, as drivers store it. */
	for (int b = 0; b < 16; b++) {
		out->src_ip[b] &= out->src_ip_mask[b];
		out->dst_ip[b] &= out->dst_ip_mask[b];
	}
	out->src_port &= out->src_port_mask;
	out->dst_port &= out->dst_port_mask;
}

/* ---- the live host ---- */

static int ioc_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

void nt_flow_table_free(nt_flow_table *t)
{
	if (t) {
		free(t->rules);
		memset(t, 0, sizeof(*t));
	}
}

/* A driver without rules answers GRXCLSRLCNT with EOPNOTSUPP (no
 * get_rxnfc, or no rule table), some with EINVAL. */
static int no_table(int r)
{
	return r == -EOPNOTSUPP || r == -EINVAL ? -EOPNOTSUPP : r;
}

static int live_read(int fd, const char *ifname, nt_flow_table *out)
{
	struct ethtool_rxnfc rings = { .cmd = ETHTOOL_GRXRINGS };
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT };
	struct ethtool_rxnfc *all = NULL;
	int r = nt_ethtool_ioctl(fd, ifname, &cnt);
	if (r < 0)
		return no_table(r);
	if ((r = nt_ethtool_ioctl(fd, ifname, &rings)) < 0)
		return r;
	out->size = (uint32_t)(cnt.data & ~(uint64_t)RX_CLS_LOC_SPECIAL);
	out->loc_special = cnt.data & RX_CLS_LOC_SPECIAL;
	out->rings = (uint32_t)rings.data;
	if (cnt.rule_cnt > 65536 || out->size > 65536)
		return -E2BIG;
	all = calloc(1, sizeof(*all) + (cnt.rule_cnt + 1) * sizeof(uint32_t));
	out->rules = calloc(cnt.rule_cnt + 1, sizeof(*out->rules));
	if (!all || !out->rules) {
		r = -ENOMEM;
		goto out;
	}
	all->cmd = ETHTOOL_GRXCLSRLALL;
	all->rule_cnt = cnt.rule_cnt;
	if (cnt.rule_cnt && (r = nt_ethtool_ioctl(fd, ifname, all)) < 0)
		goto out;
	for (uint32_t i = 0; i < cnt.rule_cnt && i < all->rule_cnt; i++) {
		struct ethtool_rxnfc one = { .cmd = ETHTOOL_GRXCLSRULE };
		one.fs.location = all->rule_locs[i];
		if ((r = nt_ethtool_ioctl(fd, ifname, &one)) < 0) {
			/* Deleted between the list and the read. */
			if (r == -ENOENT)
				continue;
			goto out;
		}
		nt_flow_spec_decode(&one.fs, one.rss_context, &out->rules[out->n++]);
	}
	r = 0;
out:
	free(all);
	return r;
}

static int cmp_loc(const void *a, const void *b)
{
	const nt_flow_rule *x = a, *y = b;
	return (x->location > y->location) - (x->location < y->location);
}

int nt_flows_read(const nt_ctx *ctx, const char *ifname, nt_flow_table *out)
{
	int r;
	memset(out, 0, sizeof(*out));
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	if (!ctx->live) {
		r = nt_fixture_flows_read(ctx, ifname, out);
	} else {
		int fd = ioc_socket();
		if (fd < 0)
			return fd;
		r = live_read(fd, ifname, out);
		close(fd);
	}
	if (r == 0 && out->n > 1)
		qsort(out->rules, (size_t)out->n, sizeof(*out->rules), cmp_loc);
	return r;
}

int nt_flows_get(const nt_ctx *ctx, const char *ifname, uint32_t loc, nt_flow_rule *out)
{
	memset(out, 0, sizeof(*out));
	out->location = loc;
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	if (!ctx->live) {
		nt_flow_table t;
		int r = nt_fixture_flows_read(ctx, ifname, &t);
		if (r == 0 && loc >= t.size)
			r = -EINVAL;
		for (int i = 0; r == 0 && i < t.n; i++)
			if (t.rules[i].location == loc)
				*out = t.rules[i];
		nt_flow_table_free(&t);
		return r;
	}
	int fd = ioc_socket();
	if (fd < 0)
		return fd;
	struct ethtool_rxnfc cnt = { .cmd = ETHTOOL_GRXCLSRLCNT };
	struct ethtool_rxnfc one = { .cmd = ETHTOOL_GRXCLSRULE };
	one.fs.location = loc;
	int r = nt_ethtool_ioctl(fd, ifname, &cnt);
	if (r < 0) {
		r = no_table(r);
		goto out;
	}
	if (loc >= (uint32_t)(cnt.data & ~(uint64_t)RX_CLS_LOC_SPECIAL)) {
		r = -EINVAL;
		goto out;
	}
	r = nt_ethtool_ioctl(fd, ifname, &one);
	/* An empty location reads as ENOENT (mlx5, ixgbe, the lab's
	 * netdevsim); some drivers say EINVAL for it. */
	if (r == -ENOENT || r == -EINVAL) {
		r = 0;
		goto out;
	}
	if (r == 0)
		nt_flow_spec_decode(&one.fs, one.rss_context, out);
out:
	close(fd);
	return r;
}

int nt_flows_insert(const nt_ctx *ctx, const char *ifname, const nt_flow_rule *rule, char *err,
		    size_t errsize)
{
	struct ethtool_rxnfc ins = { .cmd = ETHTOOL_SRXCLSRLINS };
	char text[NT_FLOW_TEXT_MAX];
	int r = nt_ifname_valid(ifname) ? nt_flow_spec_encode(rule, &ins.fs) : NT_EINVALID;
	ins.rss_context = rule->context;
	if (r == 0 && !ctx->live) {
		r = nt_fixture_flows_insert(ctx, ifname, rule, err, errsize);
	} else if (r == 0) {
		int fd = ioc_socket();
		if (fd < 0)
			return fd;
		r = nt_ethtool_ioctl(fd, ifname, &ins);
		close(fd);
		if (r < 0 && err && errsize) {
			nt_flow_rule_format(rule, text, sizeof(text));
			snprintf(err, errsize, "the driver refused '%s' at location %u: %s", text, rule->location,
				 nt_strerror(r));
		}
	}
	return r;
}

int nt_flows_delete(const nt_ctx *ctx, const char *ifname, uint32_t loc)
{
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_flows_delete(ctx, ifname, loc);
	struct ethtool_rxnfc del = { .cmd = ETHTOOL_SRXCLSRLDEL };
	del.fs.location = loc;
	int fd = ioc_socket();
	if (fd < 0)
		return fd;
	int r = nt_ethtool_ioctl(fd, ifname, &del);
	close(fd);
	return r;
}
