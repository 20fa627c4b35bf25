/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's RSS state: see kernel/rss.h. */
#include "kernel/rss.h"
#include "kernel/fixture.h"
#include "kernel/rss_nl.h"
#include "kernel/ethtool.h"

#include <errno.h>
#include <stdbool.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

const char *const nt_rss_flow_names[NT_RSS_FLOWS] = { "tcp4", "udp4", "tcp6", "udp6" };
static const uint32_t flow_types[NT_RSS_FLOWS] = { TCP_V4_FLOW, UDP_V4_FLOW, TCP_V6_FLOW, UDP_V6_FLOW };

/* ethtool's letters for the RXH_* bits (ethtool.c, print_rss_hash). */
static const struct {
	char c;
	uint64_t bit;
} letters[] = {
	{ 'm', RXH_L2DA }, { 'v', RXH_VLAN }, { 't', RXH_L3_PROTO }, { 's', RXH_IP_SRC },
	{ 'd', RXH_IP_DST }, { 'f', RXH_L4_B_0_1 }, { 'n', RXH_L4_B_2_3 }, { 'r', RXH_DISCARD },
};
#define NLETTERS (sizeof(letters) / sizeof(letters[0]))

void nt_rss_fields_format(uint64_t data, char *out, size_t size)
{
	size_t n = 0;
	for (size_t i = 0; i < NLETTERS && n + 1 < size; i++)
		if (data & letters[i].bit)
			out[n++] = letters[i].c;
	if (size)
		out[n < size ? n : size - 1] = '\0';
}

int nt_rss_fields_parse(const char *text, uint64_t *out)
{
	*out = 0;
	for (const char *p = text; p && *p; p++) {
		size_t i = 0;
		while (i < NLETTERS && letters[i].c != *p)
			i++;
		if (i == NLETTERS || (*out & letters[i].bit))
			return NT_EPARSE;
		*out |= letters[i].bit;
	}
	return text ? 0 : NT_EPARSE;
}

void nt_rss_free(nt_rss *r)
{
	if (r) {
		free(r->indir);
		memset(r, 0, sizeof(*r));
	}
}

static void werr(char *err, size_t errsize, const char *ifname, const char *what, int r);

static int ioc(int fd, const char *ifname, void *data)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

/* Context ID's table (0: the NIC's own) into OUT through ETHTOOL_GRSSH:
 * first the sizes, then the table (ethtool's do_grxfh does the same); the
 * sizes, hash function and input transformation with it. 0 or -errno
 * (-E2BIG for sizes no device has); OUT->indir allocated either way. */
static int get_table(int fd, const char *ifname, uint32_t id, nt_rss *out)
{
	struct ethtool_rxfh head = { .cmd = ETHTOOL_GRSSH, .rss_context = id };
	int r = ioc(fd, ifname, &head);
	if (r < 0)
		return r;
	if (head.indir_size > 65536 || head.key_size > 1024)
		return -E2BIG;
	struct ethtool_rxfh *full = calloc(1, sizeof(*full) + head.indir_size * sizeof(uint32_t) + head.key_size);
	out->indir = calloc(head.indir_size + 1, sizeof(uint32_t));
	if (!full || !out->indir) {
		free(full);
		return -ENOMEM;
	}
	full->cmd = ETHTOOL_GRSSH;
	full->rss_context = id;
	full->indir_size = head.indir_size;
	full->key_size = head.key_size;
	if ((r = ioc(fd, ifname, full)) == 0) {
		out->indir_size = full->indir_size;
		out->key_size = full->key_size;
		out->hfunc = full->hfunc;
		out->input_xfrm = full->rsvd8[0]; /* input_xfrm since 6.8 */
		memcpy(out->indir, full->rss_config, out->indir_size * sizeof(uint32_t));
	}
	free(full);
	return r;
}

int nt_rss_read(const nt_ctx *ctx, const char *ifname, nt_rss *out)
{
	memset(out, 0, sizeof(*out));
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_rss_get(ctx, ifname, out);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int r = get_table(fd, ifname, 0, out);
	if (r < 0)
		goto out;
	for (int f = 0; f < NT_RSS_FLOWS; f++) {
		struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_GRXFH, .flow_type = flow_types[f] };
		if (ioc(fd, ifname, &nfc) == 0)
			nt_rss_fields_format(nfc.data, out->fields[f], sizeof(out->fields[f]));
	}
	struct ethtool_rxnfc rings = { .cmd = ETHTOOL_GRXRINGS };
	if (ioc(fd, ifname, &rings) == 0)
		out->rx_rings = (uint32_t)rings.data;
out:
	close(fd);
	if (r < 0)
		nt_rss_free(out);
	return r;
}

const char nt_rss_contexts_unsupported[] =
	"its driver has no RSS contexts (ETHTOOL_GRSSH for a context answers EOPNOTSUPP; drivers that have them "
	"take them through the ioctl on every kernel since 4.17)";

int nt_rss_context_read(const nt_ctx *ctx, const char *ifname, uint32_t id, nt_rss *out)
{
	memset(out, 0, sizeof(*out));
	if (!nt_ifname_valid(ifname) || id == 0 || id == ETH_RXFH_CONTEXT_ALLOC)
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_rss_context_get(ctx, ifname, id, out);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int r = get_table(fd, ifname, id, out);
	if (r < 0)
		goto out;
	struct ethtool_rxnfc rings = { .cmd = ETHTOOL_GRXRINGS };
	if (ioc(fd, ifname, &rings) == 0)
		out->rx_rings = (uint32_t)rings.data;
out:
	close(fd);
	if (r < 0)
		nt_rss_free(out);
	return r;
}

/* The byte a table write through the ioctl's SRSSH carries for context
 * ID's input transformation. Before 6.8 it is reserved and must be 0.
 * Since, ethtool_set_rxfh passes it to the driver and the context, so a
 * 0 would reset a symmetric-xor to none: the write sends back the value
 * there is now (read with GRSSH, which fills it even when asked for the
 * sizes only). Not RXH_XFRM_NO_CHANGE: 6.8 and 6.9 refuse that with
 * EOPNOTSUPP on a driver without symmetric-xor (commit 503757c809281,
 * "net: ethtool: Fix RSS setting", 6.10). */
static uint8_t xfrm_now(const nt_ctx *ctx, const char *ifname, uint32_t id)
{
	char rel[64];
	if (nt_rss_kernel_lacks(ctx, "6.8", rel, sizeof(rel)) || !rel[0])
		return 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	struct ethtool_rxfh head = { .cmd = ETHTOOL_GRSSH, .rss_context = id };
	uint8_t x = ioc(fd, ifname, &head) == 0 ? head.rsvd8[0] : 0;
	close(fd);
	return x;
}

/* One ETHTOOL_SRSSH for context *ID: N entries of INDIR (N 0: delete it),
 * the key and hash function left alone, the input transformation byte
 * XFRM (xfrm_now; 0 to make or delete one). *ID is what the kernel
 * copied back (the new id, for ETH_RXFH_CONTEXT_ALLOC). */
static int srssh_context(const char *ifname, uint32_t *id, const uint32_t *indir, uint32_t n, uint8_t xfrm)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct ethtool_rxfh *req = calloc(1, sizeof(*req) + n * sizeof(uint32_t));
	int r = -ENOMEM;
	if (req) {
		req->cmd = ETHTOOL_SRSSH;
		req->rss_context = *id;
		req->indir_size = n;
		req->hfunc = 0; /* ETH_RSS_HASH_NO_CHANGE */
		req->rsvd8[0] = xfrm; /* input_xfrm */
		if (n)
			memcpy(req->rss_config, indir, n * sizeof(uint32_t));
		r = ioc(fd, ifname, req);
		if (r == 0)
			*id = req->rss_context;
	}
	free(req);
	close(fd);
	return r;
}

int nt_rss_context_create(const nt_ctx *ctx, const char *ifname, const uint32_t *indir, uint32_t n, uint32_t *id,
			  char *err, size_t errsize)
{
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	if (n == 0 || n > 65536)
		return -EOPNOTSUPP;
	if (!ctx->live)
		return nt_fixture_rss_context_set(ctx, ifname, ETH_RXFH_CONTEXT_ALLOC, indir, n, id, err, errsize);
	*id = ETH_RXFH_CONTEXT_ALLOC;
	int r = srssh_context(ifname, id, indir, n, 0);
	if (r < 0)
		werr(err, errsize, ifname, "ETHTOOL_SRSSH (a new RSS context)", r);
	return r;
}

int nt_rss_context_write(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, const uint32_t *indir,
			 uint32_t n, char *err, size_t errsize)
{
	if (!nt_ifname_valid(ifname) || id == 0 || id == ETH_RXFH_CONTEXT_ALLOC)
		return NT_EINVALID;
	if (n == 0 || n > 65536)
		return -EOPNOTSUPP;
	if (!ctx->live)
		return nt_fixture_rss_context_set(ctx, ifname, id, indir, n, NULL, err, errsize);
	/* RSS_SET where the kernel has it (6.17), which changes only what
	 * the request holds. */
	nt_rss_nl nl;
	nt_rss_nl_caps(eh, ctx, ifname, &nl);
	if (nl.set)
		return nt_rss_nl_context_write(eh, ctx, ifname, id, indir, n, err, errsize);
	int r = srssh_context(ifname, &id, indir, n, xfrm_now(ctx, ifname, id));
	if (r < 0)
		werr(err, errsize, ifname, "ETHTOOL_SRSSH (an RSS context's table)", r);
	return r;
}

int nt_rss_context_delete(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, char *err,
			  size_t errsize)
{
	if (!nt_ifname_valid(ifname) || id == 0 || id == ETH_RXFH_CONTEXT_ALLOC)
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_rss_context_set(ctx, ifname, id, NULL, 0, NULL, err, errsize);
	nt_rss_nl nl;
	nt_rss_nl_caps(eh, ctx, ifname, &nl);
	if (nl.create)
		return nt_rss_nl_context_delete(eh, ctx, ifname, id, err, errsize);
	/* indir_size 0 on a context other than 0 deletes it. */
	int r = srssh_context(ifname, &id, NULL, 0, 0);
	if (r < 0 && r != -ENOENT)
		werr(err, errsize, ifname, "ETHTOOL_SRSSH (deleting an RSS context)", r);
	return r;
}

int nt_rss_flow_index(const char *name)
{
	for (int f = 0; name && f < NT_RSS_FLOWS; f++)
		if (strcmp(nt_rss_flow_names[f], name) == 0)
			return f;
	return -1;
}

static void werr(char *err, size_t errsize, const char *ifname, const char *what, int r)
{
	if (err && errsize)
		snprintf(err, errsize, "%s: %s: %s", ifname, what, strerror(-r));
}

bool nt_rss_indir_is_default(const uint32_t *indir, uint32_t n, uint32_t rings)
{
	if (!rings)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (indir[i] != i % rings) /* ethtool_rxfh_indir_default */
			return false;
	return true;
}

int nt_rss_write_indir(const nt_ctx *ctx, const char *ifname, const uint32_t *indir, uint32_t n, char *err,
		       size_t errsize)
{
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	if (n == 0 || n > 65536)
		return -EOPNOTSUPP;
	if (!ctx->live)
		return nt_fixture_rss_set_indir(ctx, ifname, indir, n, err, errsize);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct ethtool_rxnfc rings = { .cmd = ETHTOOL_GRXRINGS };
	bool dflt = ioc(fd, ifname, &rings) == 0 && nt_rss_indir_is_default(indir, n, (uint32_t)rings.data);
	/* key_size 0 and hfunc 0 (no change): only the table
	 * changes (ethtool -X's own request for "equal" and "weight"). */
	struct ethtool_rxfh *req = calloc(1, sizeof(*req) + n * sizeof(uint32_t));
	int r = -ENOMEM;
	if (req) {
		req->cmd = ETHTOOL_SRSSH;
		/* indir_size 0: the kernel's default table, not pinned. */
		req->indir_size = dflt ? 0 : n;
		req->hfunc = 0; /* ETH_RSS_HASH_NO_CHANGE, not in the uapi header */
		req->rsvd8[0] = xfrm_now(ctx, ifname, 0); /* input_xfrm */
		memcpy(req->rss_config, indir, n * sizeof(uint32_t));
		r = ioc(fd, ifname, req);
		if (r < 0)
			werr(err, errsize, ifname, "ETHTOOL_SRSSH", r);
	}
	free(req);
	close(fd);
	return r;
}

int nt_rss_write_fields(const nt_ctx *ctx, const char *ifname, int flow, uint64_t data, char *err,
			size_t errsize)
{
	if (!nt_ifname_valid(ifname) || flow < 0 || flow >= NT_RSS_FLOWS)
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_rss_set_fields(ctx, ifname, flow, data, err, errsize);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_SRXFH, .flow_type = flow_types[flow], .data = data };
	int r = ioc(fd, ifname, &nfc);
	if (r < 0)
		werr(err, errsize, ifname, "ETHTOOL_SRXFH", r);
	close(fd);
	return r;
}

/* ---- the table as text ---- */

typedef struct tbuf {
	char *out;
	size_t size, len;
	bool full;
} tbuf;

static void tput(tbuf *b, const char *sep, uint32_t x, char mid, uint32_t y)
{
	char t[32];
	int n = mid ? snprintf(t, sizeof(t), "%s%u%c%u", sep, x, mid, y) : snprintf(t, sizeof(t), "%s%u", sep, x);
	if (n < 0 || (size_t)n >= b->size - b->len) {
		b->full = true;
		return;
	}
	memcpy(b->out + b->len, t, (size_t)n + 1);
	b->len += (size_t)n;
}

/* SEP, then E as a list: ascending runs of 2 or more as ranges. */
static void tlist(tbuf *b, const char *sep, const uint32_t *e, uint32_t n)
{
	for (uint32_t i = 0; i < n && !b->full;) {
		uint32_t j = i;
		while (j + 1 < n && e[j + 1] == e[j] + 1)
			j++;
		tput(b, i ? "," : sep, e[i], j > i ? '-' : 0, e[j]);
		i = j + 1;
	}
}

int nt_rss_indir_format(const uint32_t *indir, uint32_t n, char *out, size_t size)
{
	tbuf b = { .out = out, .size = size };
	uint32_t lit = 0, nlit = 0; /* pending entries with no repetition */
	if (!size)
		return -E2BIG;
	out[0] = '\0';
	for (uint32_t i = 0; i < n && !b.full;) {
		uint32_t best_p = 0, best_r = 0;
		for (uint32_t p = 1; p <= 128 && i + 2 * p <= n; p++) {
			uint32_t r = 1;
			while (i + (r + 1) * p <= n && memcmp(indir + i + r * p, indir + i, p * sizeof(*indir)) == 0)
				r++;
			if (r >= 2 && p * r > best_p * best_r) {
				best_p = p;
				best_r = r;
			}
		}
		if (!best_p) {
			if (!nlit)
				lit = i;
			nlit++;
			i++;
			continue;
		}
		if (nlit) {
			tlist(&b, b.len ? " " : "", indir + lit, nlit);
			nlit = 0;
		}
		tlist(&b, b.len ? " " : "", indir + i, best_p);
		tput(&b, "*", best_r, 0, 0);
		i += best_p * best_r;
	}
	if (nlit && !b.full)
		tlist(&b, b.len ? " " : "", indir + lit, nlit);
	return b.full ? -E2BIG : 0;
}

static bool num(const char **p, uint32_t *out)
{
	char *end;
	if (**p < '0' || **p > '9' || (**p == '0' && (*p)[1] >= '0' && (*p)[1] <= '9'))
		return false;
	unsigned long v = strtoul(*p, &end, 10);
	if (v > 65535)
		return false;
	*out = (uint32_t)v;
	*p = end;
	return true;
}

int nt_rss_indir_parse(const char *text, uint32_t *indir, uint32_t cap, uint32_t *n)
{
	const char *p = text;
	*n = 0;
	if (!p || !*p)
		return NT_EPARSE;
	while (*p) {
		uint32_t start = *n, a, b, rep = 1;
		for (;;) {
			if (!num(&p, &a))
				return NT_EPARSE;
			b = a;
			if (*p == '-') {
				p++;
				if (!num(&p, &b) || b <= a)
					return NT_EPARSE;
			}
			for (uint32_t q = a; q <= b; q++) {
				if (*n >= cap)
					return NT_EPARSE;
				indir[(*n)++] = q;
			}
			if (*p != ',')
				break;
			p++;
		}
		if (*p == '*') {
			p++;
			if (!num(&p, &rep) || rep < 2)
				return NT_EPARSE;
		}
		uint32_t len = *n - start;
		if ((uint64_t)len * rep > cap - start)
			return NT_EPARSE;
		for (uint32_t r = 1; r < rep; r++) {
			memcpy(indir + *n, indir + start, len * sizeof(*indir));
			*n += len;
		}
		if (*p == ' ' && p[1])
			p++;
		else if (*p)
			return NT_EPARSE;
	}
	return 0;
}

void nt_rss_indir_weights(const uint32_t *w, int nw, uint32_t *indir, uint32_t n)
{
	uint64_t sum = 0, partial = 0;
	int j = -1;
	for (int q = 0; q < nw; q++)
		sum += w[q];
	for (uint32_t i = 0; i < n; i++) {
		/* ethtool.c's fill_indir_table, "weight". */
		while (sum && j + 1 < nw && i >= n * partial / sum)
			partial += w[++j];
		indir[i] = j < 0 ? 0 : (uint32_t)j;
	}
}

/* ---- the input transformation ---- */

const char *nt_rss_xfrm_since(uint8_t xfrm)
{
	return xfrm & ~NT_RSS_XFRM_SYM_XOR ? "6.15" : "6.8";
}

void nt_rss_xfrm_format(uint8_t xfrm, char *out, size_t size)
{
	if (xfrm == 0)
		snprintf(out, size, "none");
	else if (xfrm == NT_RSS_XFRM_SYM_XOR)
		snprintf(out, size, "sym-xor");
	else if (xfrm == NT_RSS_XFRM_SYM_OR_XOR)
		snprintf(out, size, "sym-or-xor");
	else
		snprintf(out, size, "0x%02x", xfrm);
}

int nt_rss_xfrm_parse(const char *text, uint8_t *out)
{
	char *end;
	*out = 0;
	if (!text)
		return NT_EPARSE;
	if (!strcmp(text, "none"))
		return 0;
	if (!strcmp(text, "sym-xor")) {
		*out = NT_RSS_XFRM_SYM_XOR;
		return 0;
	}
	if (!strcmp(text, "sym-or-xor")) {
		*out = NT_RSS_XFRM_SYM_OR_XOR;
		return 0;
	}
	if (strncmp(text, "0x", 2) || !text[2])
		return NT_EPARSE;
	errno = 0;
	unsigned long v = strtoul(text + 2, &end, 16);
	if (*end || errno || v == 0 || v >= NT_RSS_XFRM_NO_CHANGE)
		return NT_EPARSE;
	*out = (uint8_t)v;
	return 0;
}

bool nt_rss_kernel_lacks(const nt_ctx *ctx, const char *since, char *release, size_t size)
{
	if (nt_read_str(ctx, release, size, "/proc/sys/kernel/osrelease") < 0)
		release[0] = '\0';
	return release[0] && nt_ethtool_release_lacks(release, since);
}

int nt_rss_write_xfrm(nt_ethtool *eh, const nt_ctx *ctx, const char *ifname, uint32_t id, uint8_t xfrm, char *err,
		      size_t errsize)
{
	if (!nt_ifname_valid(ifname) || id == ETH_RXFH_CONTEXT_ALLOC || xfrm == NT_RSS_XFRM_NO_CHANGE)
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_rss_set_xfrm(ctx, ifname, id, xfrm, err, errsize);
	nt_rss_nl nl;
	nt_rss_nl_caps(eh, ctx, ifname, &nl);
	if (nl.set)
		return nt_rss_nl_write_xfrm(eh, ctx, ifname, id, xfrm, err, errsize);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Only the transformation: the table, key and function unchanged. */
	struct ethtool_rxfh req = { .cmd = ETHTOOL_SRSSH, .rss_context = id,
				    .indir_size = ETH_RXFH_INDIR_NO_CHANGE };
	req.rsvd8[0] = xfrm; /* input_xfrm */
	int r = ioc(fd, ifname, &req);
	if (r < 0)
		werr(err, errsize, ifname, "ETHTOOL_SRSSH (the input transformation)", r);
	close(fd);
	return r;
}
