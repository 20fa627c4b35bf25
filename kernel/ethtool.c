/* SPDX-License-Identifier: Apache-2.0 */
/* ethtool settings groups over one handle: see kernel/ethtool.h.
 *
 * A group is a table of fields (fixture key, netlink attribute and width,
 * offset in the ioctl struct). Three backends read and write that table:
 * ethtool netlink, the SIOCETHTOOL ioctl, and kernel/fixture.c on a fixture
 * root. The backend is chosen once, when the handle is opened.
 *
 * A SET reads the group first and sends only what differs, as systemd's
 * ethtool_set_nic_buffer_size does: drivers such as virtio_net and mlx5
 * reset queues on every ring change, so an unneeded SET costs a link flap.
 * Values above a maximum are not clamped here: the caller asked for them,
 * and the kernel's refusal (with its reason) is the answer. */
#include "kernel/ethtool.h"
#include "kernel/ethtool_int.h"
#include "kernel/fixture.h"
#include "kernel/netdev.h"
#include "kernel/nlmsg.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <net/if.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

struct nt_ethtool {
	bool fixture; /* a fixture root: kernel/fixture.c answers, nothing is open */
	nt_ethtool_backend be; /* NETLINK or IOCTL on the live host */
	struct nl_sock *sk; /* NETLINK: one generic netlink socket */
	int family; /* NETLINK: the "ethtool" family id */
	/* NETLINK: the family's commands, bit C for command C, and those
	 * that dump (nt_genl_parse_family): what the RSS context requests
	 * ask of the running kernel (kernel/rss_nl.c). */
	uint64_t ops, dumps;
	int fd; /* IOCTL: any socket reaches dev_ioctl() */
	void *features; /* kernel/features.c's names, free()d at close */
};

/* Big enough for every ioctl struct of a settings group (ethtool_coalesce
 * is 92 bytes, ethtool_ringparam 36); a table asking for more is refused. */
#define IOC_MAX 512

static void set_err(char *err, size_t errsize, const char *text)
{
	if (err && errsize)
		snprintf(err, errsize, "%s", text);
}

/* ---- the handle ---- */

static int on_family(struct nl_msg *msg, void *arg)
{
	nt_ethtool *h = arg;
	struct nlmsghdr *hdr = nlmsg_hdr(msg);
	return nt_genl_parse_family(hdr, hdr->nlmsg_len, &h->family, &h->ops, &h->dumps);
}

/* The socket and the family's id with its commands, in one GETFAMILY: the
 * one lookup a handle makes, whoever asks after. Returns 0,
 * -EPROTONOSUPPORT when the kernel has no ethtool family (before 5.6, or
 * built without CONFIG_ETHTOOL_NETLINK), or -errno. */
static int nl_open(nt_ethtool *h)
{
	struct nl_msg *msg = NULL;
	int r = nt_nl_open(NETLINK_GENERIC, &h->sk);
	if (r < 0)
		return r;
	if (!(msg = nlmsg_alloc())) {
		r = -ENOMEM;
		goto fail;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0, 0, CTRL_CMD_GETFAMILY, 1) ||
	    nla_put_string(msg, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME) < 0) {
		r = -EMSGSIZE;
		goto fail;
	}
	r = nt_nl_request(h->sk, msg, on_family, h, NULL, 0);
	/* The controller answers ENOENT for a family it does not have. */
	if (r == -ENOENT || (r == 0 && h->family <= 0))
		r = -EPROTONOSUPPORT;
	if (r == 0) {
		nlmsg_free(msg);
		return 0;
	}
fail:
	nlmsg_free(msg);
	nl_socket_free(h->sk);
	h->sk = NULL;
	return r;
}

static int ioc_open(nt_ethtool *h)
{
	/* AF_INET may be compiled out, so an AF_UNIX socket is the second
	 * choice; either reaches dev_ioctl(). */
	h->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (h->fd < 0)
		h->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return h->fd < 0 ? -errno : 0;
}

int nt_ethtool_open_via(const nt_ctx *ctx, nt_ethtool_backend be, nt_ethtool **out)
{
	nt_ethtool *h = calloc(1, sizeof(*h));
	int r;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->fd = -1;
	if (!ctx->live) {
		h->fixture = true;
		h->be = NT_ETHTOOL_AUTO;
		goto done;
	}
	if (be != NT_ETHTOOL_IOCTL) {
		r = nl_open(h);
		if (r == 0) {
			h->be = NT_ETHTOOL_NETLINK;
			goto done;
		}
		if (r != -EPROTONOSUPPORT || be == NT_ETHTOOL_NETLINK)
			goto fail;
	}
	r = ioc_open(h);
	if (r < 0)
		goto fail;
	h->be = NT_ETHTOOL_IOCTL;
done:
	*out = h;
	return 0;
fail:
	nt_ethtool_close(h);
	return r;
}

int nt_ethtool_open(const nt_ctx *ctx, nt_ethtool **out)
{
	return nt_ethtool_open_via(ctx, NT_ETHTOOL_AUTO, out);
}

void nt_ethtool_close(nt_ethtool *h)
{
	if (!h)
		return;
	if (h->sk)
		nl_socket_free(h->sk);
	if (h->fd >= 0)
		close(h->fd);
	free(h->features);
	free(h);
}

nt_ethtool_backend nt_ethtool_backend_of(const nt_ethtool *h)
{
	return h->be;
}

bool nt_ethtool_is_fixture(const nt_ethtool *h)
{
	return h->fixture;
}

struct nl_sock *nt_ethtool_genl(nt_ethtool *h, int *family)
{
	if (h->fixture || h->be != NT_ETHTOOL_NETLINK)
		return NULL;
	*family = h->family;
	return h->sk;
}

void nt_ethtool_genl_ops(const nt_ethtool *h, uint64_t *ops, uint64_t *dumps)
{
	bool nl = !h->fixture && h->be == NT_ETHTOOL_NETLINK;
	*ops = nl ? h->ops : 0;
	*dumps = nl ? h->dumps : 0;
}

void **nt_ethtool_features_slot(nt_ethtool *h)
{
	return &h->features;
}

/* ---- tables ---- */

/* A table from a caller: check what would otherwise index out of bounds. */
static int group_valid(const nt_ethtool_group *g)
{
	if (!g || !g->section || !g->fields || g->nfields < 1 ||
	    g->nfields > NT_ETHTOOL_MAX_FIELDS || g->ioc_size < sizeof(uint32_t) ||
	    g->ioc_size > IOC_MAX)
		return -EINVAL;
	if (g->nest && (g->nest == g->header_attr || g->entry_attr == 0 || g->nentries < 1 || !g->nest_key ||
			g->nfields % g->nentries))
		return -EINVAL;
	for (int i = 0; i < g->nfields; i++) {
		const nt_ethtool_field *f = &g->fields[i];
		/* Inside a nest an attribute may have the header's number. */
		if (!f->name || f->attr == 0 || (!g->nest && f->attr == g->header_attr))
			return -EINVAL;
		if (g->nest && f->ioc_off != NT_ETHTOOL_NO_IOCTL)
			return -EINVAL;
		if (f->ioc_off != NT_ETHTOOL_NO_IOCTL &&
		    (f->ioc_off < sizeof(uint32_t) || f->ioc_off % sizeof(uint32_t) ||
		     f->ioc_off + sizeof(uint32_t) > g->ioc_size))
			return -EINVAL;
		if (f->max && nt_ethtool_field_index(g, f->max) < 0)
			return -EINVAL;
	}
	return 0;
}

/* ---- kernel releases ---- */

/* "6.14.2+deb13-amd64" as 6 and 14; -1 when it does not start so. */
static int release_parts(const char *s, long *major, long *minor)
{
	char *e;
	if (!s || s[0] < '0' || s[0] > '9')
		return -1;
	*major = strtol(s, &e, 10);
	if (*e != '.' || e[1] < '0' || e[1] > '9')
		return -1;
	*minor = strtol(e + 1, &e, 10);
	return 0;
}

bool nt_ethtool_release_lacks(const char *release, const char *since)
{
	long rmaj, rmin, smaj, smin;
	if (!since || release_parts(release, &rmaj, &rmin) < 0 || release_parts(since, &smaj, &smin) < 0)
		return false;
	return rmaj < smaj || (rmaj == smaj && rmin < smin);
}

void nt_ethtool_absent_why(const nt_ethtool_field *f, const char *since, const char *release, bool netlink,
			   char *out, size_t size)
{
	if (nt_ethtool_release_lacks(release, since))
		snprintf(out, size, "needs Linux %s or later (this kernel is %s)", since, release);
	else if (!netlink && f->ioc_off == NT_ETHTOOL_NO_IOCTL)
		snprintf(out, size, "only ethtool netlink carries it, and this kernel has none");
	else
		snprintf(out, size, "the driver does not report it");
}

/* ---- ethtool netlink ---- */

/* A request message with the device header filled in. */
static int nl_msg(const nt_ethtool *h, const nt_ethtool_group *g, uint8_t cmd,
		  const char *ifname, struct nl_msg **out)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlattr *hdr;

	*out = NULL;
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, h->family, 0, NLM_F_REQUEST, cmd,
			 ETHTOOL_GENL_VERSION))
		goto full;
	hdr = nla_nest_start(msg, g->header_attr);
	if (!hdr || nla_put_string(msg, ETHTOOL_A_HEADER_DEV_NAME, ifname) < 0)
		goto full;
	nla_nest_end(msg, hdr);
	*out = msg;
	return 0;
full:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

typedef struct get_reply {
	const nt_ethtool_group *g;
	nt_ethtool_values *out;
	bool seen;
} get_reply;

/* One attribute's value into field I of OUT. */
static int parse_value(const nt_ethtool_field *f, int i, const unsigned char *payload, size_t plen,
		       nt_ethtool_values *out)
{
	if (f->width == NT_ETHTOOL_U8) {
		if (plen < 1)
			return NT_EPARSE;
		out->v[i] = payload[0];
	} else {
		uint32_t v;
		if (plen < sizeof(v))
			return NT_EPARSE;
		memcpy(&v, payload, sizeof(v));
		out->v[i] = v;
	}
	out->present |= 1u << i;
	return 0;
}

/* Calls FN for each attribute of the LEN bytes at P (a message's or a
 * nest's payload) with its type and payload; stops at the first error. */
typedef int (*attr_fn)(const nt_ethtool_group *g, uint16_t type, const unsigned char *payload, size_t plen,
		       int *index, nt_ethtool_values *out);

static int each_attr(const nt_ethtool_group *g, const unsigned char *p, size_t len, attr_fn fn, int *index,
		     nt_ethtool_values *out)
{
	while (len >= NLA_HDRLEN) {
		struct nlattr a;
		memcpy(&a, p, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len)
			return NT_EPARSE;
		int r = fn(g, a.nla_type & NLA_TYPE_MASK, p + NLA_HDRLEN, a.nla_len - NLA_HDRLEN, index, out);
		if (r < 0)
			return r;
		size_t step = NLA_ALIGN(a.nla_len);
		if (step >= len)
			break;
		p += step;
		len -= step;
	}
	return 0;
}

/* A top-level attribute of a group without a nest. */
static int flat_attr(const nt_ethtool_group *g, uint16_t type, const unsigned char *payload, size_t plen,
		     int *index, nt_ethtool_values *out)
{
	(void)index;
	for (int i = 0; i < g->nfields; i++)
		if (type == g->fields[i].attr) {
			int r = parse_value(&g->fields[i], i, payload, plen, out);
			if (r < 0)
				return r;
		}
	return 0;
}

/* An attribute inside entry *INDEX of a nested group. */
static int leaf_attr(const nt_ethtool_group *g, uint16_t type, const unsigned char *payload, size_t plen,
		     int *index, nt_ethtool_values *out)
{
	int per = g->nfields / g->nentries;
	for (int i = *index * per; i < (*index + 1) * per; i++)
		if (type == g->fields[i].attr) {
			int r = parse_value(&g->fields[i], i, payload, plen, out);
			if (r < 0)
				return r;
		}
	return 0;
}

/* An entry of the nest: entries beyond NENTRIES (a kernel with more
 * profile levels than ours) are skipped. */
static int entry_attr(const nt_ethtool_group *g, uint16_t type, const unsigned char *payload, size_t plen,
		      int *index, nt_ethtool_values *out)
{
	if (type != g->entry_attr)
		return 0;
	int k = (*index)++;
	return k < g->nentries ? each_attr(g, payload, plen, leaf_attr, &k, out) : 0;
}

/* The group's nest among the top-level attributes. */
static int nest_attr(const nt_ethtool_group *g, uint16_t type, const unsigned char *payload, size_t plen,
		     int *index, nt_ethtool_values *out)
{
	int k = 0;
	(void)index;
	return type == g->nest ? each_attr(g, payload, plen, entry_attr, &k, out) : 0;
}

/* The attributes of one GET reply into OUT. The kernel puts in the reply
 * only what the driver reports (see rings_fill_reply, coalesce_fill_reply,
 * coalesce_put_profile); attributes newer than our table, and the header,
 * are skipped. */
static int parse_attrs(const nt_ethtool_group *g, const unsigned char *p, size_t len, nt_ethtool_values *out)
{
	return each_attr(g, p, len, g->nest ? nest_attr : flat_attr, NULL, out);
}

int nt_ethtool_parse_reply(const nt_ethtool_group *g, const void *buf, size_t len, nt_ethtool_values *out)
{
	const unsigned char *p = buf;
	struct nlmsghdr h;

	memset(out, 0, sizeof(*out));
	if (!g || !buf || group_valid(g) < 0)
		return -EINVAL;
	if (len < NLMSG_HDRLEN)
		return NT_EPARSE;
	memcpy(&h, p, sizeof(h));
	if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
		return NT_EPARSE;
	if (h.nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr e;
		if (h.nlmsg_len < NLMSG_LENGTH(sizeof(e)))
			return NT_EPARSE;
		memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
		/* An ACK where the reply should be: no reply at all. */
		return e.error < 0 ? e.error : -EIO;
	}
	if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type < NLMSG_MIN_TYPE ||
	    h.nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return NT_EPARSE;
	int r = parse_attrs(g, p + NLMSG_LENGTH(GENL_HDRLEN), h.nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), out);
	if (r < 0)
		memset(out, 0, sizeof(*out));
	return r;
}

/* libnl's callback for the reply: the pure parser above over its bytes. */
static int parse_get_reply(struct nl_msg *msg, void *arg)
{
	get_reply *gr = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int r = nt_ethtool_parse_reply(gr->g, nlh, nlh->nlmsg_len, gr->out);

	if (r < 0)
		return r;
	gr->seen = true;
	return 0;
}

static int nl_get(const nt_ethtool *h, const nt_ethtool_group *g, const char *ifname,
		  nt_ethtool_values *out)
{
	get_reply gr = { .g = g, .out = out };
	struct nl_msg *msg = NULL;
	int r = nl_msg(h, g, g->get_cmd, ifname, &msg);

	if (r < 0)
		return r;
	r = nt_nl_request(h->sk, msg, parse_get_reply, &gr, NULL, 0);
	if (r == 0 && !gr.seen)
		r = -EIO; /* an ACK without the reply: should not happen */
	nlmsg_free(msg);
	return r;
}

static int nl_set(const nt_ethtool *h, const nt_ethtool_group *g, const char *ifname,
		  const nt_ethtool_values *send, char *err, size_t errsize)
{
	struct nl_msg *msg = NULL;
	int r = nl_msg(h, g, g->set_cmd, ifname, &msg);

	if (r < 0)
		return r;
	struct nlattr *nest = NULL, *entry = NULL;
	int per = g->nest ? g->nfields / g->nentries : g->nfields;
	if (g->nest && !(nest = nla_nest_start(msg, g->nest)))
		goto full;
	for (int i = 0; i < g->nfields; i++) {
		const nt_ethtool_field *f = &g->fields[i];
		/* Every entry of a nest, in order: the kernel counts them. */
		if (g->nest && i % per == 0 && !(entry = nla_nest_start(msg, g->entry_attr)))
			goto full;
		if (send->present & (1u << i)) {
			r = f->width == NT_ETHTOOL_U8 ? nla_put_u8(msg, f->attr, (uint8_t)send->v[i])
						       : nla_put_u32(msg, f->attr, send->v[i]);
			if (r < 0)
				goto full;
		}
		if (g->nest && i % per == per - 1)
			nla_nest_end(msg, entry);
	}
	if (nest)
		nla_nest_end(msg, nest);
	r = nt_nl_request(h->sk, msg, NULL, NULL, err, errsize);
	nlmsg_free(msg);
	return r;
full:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* ---- SIOCETHTOOL ioctl, for kernels without ethtool netlink ---- */

typedef union ioc_buf {
	uint32_t cmd;
	uint32_t words[IOC_MAX / sizeof(uint32_t)];
} ioc_buf;

#define IOC_U32(buf, off) (*(uint32_t *)((char *)(buf) + (off)))

int nt_ethtool_ioctl(int fd, const char *ifname, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

static int ioc_call(const nt_ethtool *h, const char *ifname, ioc_buf *buf)
{
	return nt_ethtool_ioctl(h->fd, ifname, buf);
}

/* The ioctl has no "not supported" per field: every field it carries is
 * reported. RAW keeps the whole struct for a SET. */
static int ioc_get(const nt_ethtool *h, const nt_ethtool_group *g, const char *ifname,
		   nt_ethtool_values *out, ioc_buf *raw)
{
	int r;

	memset(raw, 0, sizeof(*raw));
	raw->cmd = g->ioc_get;
	r = ioc_call(h, ifname, raw);
	if (r < 0)
		return r;
	for (int i = 0; i < g->nfields; i++) {
		const nt_ethtool_field *f = &g->fields[i];
		if (f->ioc_off == NT_ETHTOOL_NO_IOCTL)
			continue;
		out->v[i] = IOC_U32(raw, f->ioc_off);
		out->present |= 1u << i;
	}
	return 0;
}

/* The ioctl sets every field at once, so start from what the driver
 * reported (RAW, including fields the group does not name, such as
 * rx_mini) and change only the requested ones. */
static int ioc_set(const nt_ethtool *h, const nt_ethtool_group *g, const char *ifname,
		   const nt_ethtool_values *send, ioc_buf *raw)
{
	for (int i = 0; i < g->nfields; i++) {
		const nt_ethtool_field *f = &g->fields[i];
		if (!(send->present & (1u << i)))
			continue;
		if (f->ioc_off == NT_ETHTOOL_NO_IOCTL)
			return -EOPNOTSUPP; /* only netlink carries it */
		IOC_U32(raw, f->ioc_off) = send->v[i];
	}
	raw->cmd = g->ioc_set;
	return ioc_call(h, ifname, raw);
}

/* ---- the operations ---- */

static int be_get(const nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g,
		  const char *ifname, nt_ethtool_values *out, ioc_buf *raw)
{
	memset(out, 0, sizeof(*out));
	if (h->fixture)
		return nt_fixture_ethtool_get(ctx, g, ifname, out);
	if (h->be == NT_ETHTOOL_NETLINK)
		return nl_get(h, g, ifname, out);
	return ioc_get(h, g, ifname, out, raw);
}

int nt_ethtool_get_group(nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g,
			 const char *ifname, nt_ethtool_values *out)
{
	nt_ethtool *tmp = NULL;
	ioc_buf raw;
	int r;

	memset(out, 0, sizeof(*out));
	if (!nt_ifname_valid(ifname) || group_valid(g) < 0)
		return -EINVAL;
	if (!h) {
		if ((r = nt_ethtool_open(ctx, &tmp)) < 0)
			return r;
		h = tmp;
	}
	r = be_get(h, ctx, g, ifname, out, &raw);
	if (r < 0)
		memset(out, 0, sizeof(*out));
	nt_ethtool_close(tmp);
	return r;
}

/* What a caller may ask for, whatever the backend. */
static int want_valid(const nt_ethtool_group *g, const nt_ethtool_values *want, char *err,
		      size_t errsize)
{
	char text[160];

	if (want->present >> (g->nfields - 1) >> 1)
		return -EINVAL; /* bits beyond the table */
	for (int i = 0; i < g->nfields; i++) {
		const nt_ethtool_field *f = &g->fields[i];
		if (!(want->present & (1u << i)))
			continue;
		if (f->read_only) {
			snprintf(text, sizeof(text), "%s %s is read-only", g->section, f->name);
			set_err(err, errsize, text);
			return -EINVAL;
		}
		if (f->width == NT_ETHTOOL_U8 && want->v[i] > UINT8_MAX) {
			snprintf(text, sizeof(text), "%s %s %u does not fit in 8 bits", g->section,
				 f->name, want->v[i]);
			set_err(err, errsize, text);
			return -EINVAL;
		}
	}
	return 0;
}

int nt_ethtool_set_group(nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g,
			 const char *ifname, const nt_ethtool_values *want, char *err,
			 size_t errsize)
{
	nt_ethtool *tmp = NULL;
	nt_ethtool_values cur, send = { 0 };
	ioc_buf raw;
	int r;

	set_err(err, errsize, "");
	if (!nt_ifname_valid(ifname) || group_valid(g) < 0)
		return -EINVAL;
	if ((r = want_valid(g, want, err, errsize)) < 0)
		return r;
	if (!h) {
		if ((r = nt_ethtool_open(ctx, &tmp)) < 0)
			return r;
		h = tmp;
	}
	if ((r = be_get(h, ctx, g, ifname, &cur, &raw)) < 0)
		goto out;
	/* A field the driver does not report reads as 0; asking for 0 is then
	 * already true, and sending it would be refused as unsupported. */
	for (int i = 0; i < g->nfields; i++) {
		if ((want->present & (1u << i)) && want->v[i] != cur.v[i]) {
			send.v[i] = want->v[i];
			send.present |= 1u << i;
		}
	}
	if (!send.present) {
		r = 0; /* already as asked: no SET, no queue reset */
		goto out;
	}
	if (h->fixture)
		r = nt_fixture_ethtool_set(ctx, g, ifname, &cur, &send, err, errsize);
	else if (h->be == NT_ETHTOOL_NETLINK)
		r = nl_set(h, g, ifname, &send, err, errsize);
	else
		r = ioc_set(h, g, ifname, &send, &raw);
out:
	nt_ethtool_close(tmp);
	return r;
}

/* ---- rings and channels ---- */

#define RING(n, A, io, max_name) { #n, ETHTOOL_A_RINGS_##A, NT_ETHTOOL_U32, \
	offsetof(struct ethtool_ringparam, io), false, max_name }
#define RING_MAX(n, A, io) { #n, ETHTOOL_A_RINGS_##A, NT_ETHTOOL_U32, \
	offsetof(struct ethtool_ringparam, io), true, NULL }
/* In the order of nt_rings' members. */
static const nt_ethtool_field ring_fields[] = {
	RING(rx, RX, rx_pending, "rx_max"),
	RING(tx, TX, tx_pending, "tx_max"),
	RING_MAX(rx_max, RX_MAX, rx_max_pending),
	RING_MAX(tx_max, TX_MAX, tx_max_pending),
};

const nt_ethtool_group nt_ethtool_rings_group = {
	.section = "rings",
	.get_cmd = ETHTOOL_MSG_RINGS_GET,
	.set_cmd = ETHTOOL_MSG_RINGS_SET,
	.header_attr = ETHTOOL_A_RINGS_HEADER,
	.ioc_get = ETHTOOL_GRINGPARAM,
	.ioc_set = ETHTOOL_SRINGPARAM,
	.ioc_size = sizeof(struct ethtool_ringparam),
	.above_max = "requested ring size exceeds maximum",
	.fields = ring_fields,
	.nfields = (int)(sizeof(ring_fields) / sizeof(ring_fields[0])),
};

#define CHAN(n, A) { #n, ETHTOOL_A_CHANNELS_##A##_COUNT, NT_ETHTOOL_U32, \
	offsetof(struct ethtool_channels, n##_count), false, #n "_max" }
#define CHAN_MAX(n, A) { #n "_max", ETHTOOL_A_CHANNELS_##A##_MAX, NT_ETHTOOL_U32, \
	offsetof(struct ethtool_channels, max_##n), true, NULL }
/* In the order of nt_channels' members. */
static const nt_ethtool_field channel_fields[] = {
	CHAN(rx, RX), CHAN(tx, TX), CHAN(other, OTHER), CHAN(combined, COMBINED),
	CHAN_MAX(rx, RX), CHAN_MAX(tx, TX), CHAN_MAX(other, OTHER), CHAN_MAX(combined, COMBINED),
};

const nt_ethtool_group nt_ethtool_channels_group = {
	.section = "channels",
	.get_cmd = ETHTOOL_MSG_CHANNELS_GET,
	.set_cmd = ETHTOOL_MSG_CHANNELS_SET,
	.header_attr = ETHTOOL_A_CHANNELS_HEADER,
	.ioc_get = ETHTOOL_GCHANNELS,
	.ioc_set = ETHTOOL_SCHANNELS,
	.ioc_size = sizeof(struct ethtool_channels),
	.above_max = "requested channel count exceeds maximum",
	.fields = channel_fields,
	.nfields = (int)(sizeof(channel_fields) / sizeof(channel_fields[0])),
};

/* nt_rings and nt_channels are their group's fields in table order, so a
 * struct is that many uint32_t. */
_Static_assert(sizeof(nt_rings) == sizeof(ring_fields) / sizeof(ring_fields[0]) * sizeof(uint32_t),
	       "nt_rings follows ring_fields");
_Static_assert(offsetof(nt_rings, tx_max) == 3 * sizeof(uint32_t), "nt_rings order");
_Static_assert(sizeof(nt_channels) ==
		       sizeof(channel_fields) / sizeof(channel_fields[0]) * sizeof(uint32_t),
	       "nt_channels follows channel_fields");
_Static_assert(offsetof(nt_channels, combined_max) == 7 * sizeof(uint32_t), "nt_channels order");

static int read_struct(nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g,
		       const char *ifname, uint32_t *out)
{
	nt_ethtool_values v;
	int r = nt_ethtool_get_group(h, ctx, g, ifname, &v);

	memcpy(out, v.v, sizeof(uint32_t) * (size_t)g->nfields);
	return r;
}

/* The settable fields come first in both tables: NSET of them. */
static int write_struct(nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g,
			const char *ifname, const uint32_t *want, int nset, bool exact, char *err,
			size_t errsize)
{
	nt_ethtool_values v = { 0 };

	for (int i = 0; i < nset; i++) {
		v.v[i] = want[i];
		if (exact || want[i])
			v.present |= 1u << i;
	}
	return nt_ethtool_set_group(h, ctx, g, ifname, &v, err, errsize);
}

int nt_ethtool_read_rings(nt_ethtool *h, const nt_ctx *ctx, const char *ifname, nt_rings *out)
{
	return read_struct(h, ctx, &nt_ethtool_rings_group, ifname, (uint32_t *)out);
}

int nt_ethtool_read_channels(nt_ethtool *h, const nt_ctx *ctx, const char *ifname,
			     nt_channels *out)
{
	return read_struct(h, ctx, &nt_ethtool_channels_group, ifname, (uint32_t *)out);
}

int nt_ethtool_write_rings(nt_ethtool *h, const nt_ctx *ctx, const char *ifname,
			   const nt_rings *want, bool exact, char *err, size_t errsize)
{
	const uint32_t w[] = { want->rx, want->tx };
	return write_struct(h, ctx, &nt_ethtool_rings_group, ifname, w, 2, exact, err, errsize);
}

int nt_ethtool_write_channels(nt_ethtool *h, const nt_ctx *ctx, const char *ifname,
			      const nt_channels *want, bool exact, char *err, size_t errsize)
{
	const uint32_t w[] = { want->rx, want->tx, want->other, want->combined };
	return write_struct(h, ctx, &nt_ethtool_channels_group, ifname, w, 4, exact, err,
			    errsize);
}

int nt_ethtool_get_rings(const nt_ctx *ctx, const char *ifname, nt_rings *out)
{
	return nt_ethtool_read_rings(NULL, ctx, ifname, out);
}

int nt_ethtool_get_channels(const nt_ctx *ctx, const char *ifname, nt_channels *out)
{
	return nt_ethtool_read_channels(NULL, ctx, ifname, out);
}

int nt_ethtool_set_rings(const nt_ctx *ctx, const char *ifname, const nt_rings *want,
			 char *err, size_t errsize)
{
	return nt_ethtool_write_rings(NULL, ctx, ifname, want, false, err, errsize);
}

int nt_ethtool_set_rings_exact(const nt_ctx *ctx, const char *ifname, const nt_rings *want,
			       char *err, size_t errsize)
{
	return nt_ethtool_write_rings(NULL, ctx, ifname, want, true, err, errsize);
}

int nt_ethtool_set_channels(const nt_ctx *ctx, const char *ifname, const nt_channels *want,
			    char *err, size_t errsize)
{
	return nt_ethtool_write_channels(NULL, ctx, ifname, want, false, err, errsize);
}

int nt_ethtool_set_channels_exact(const nt_ctx *ctx, const char *ifname, const nt_channels *want,
				  char *err, size_t errsize)
{
	/* All four counts, zeros included: other=0 is a real request. */
	return nt_ethtool_write_channels(NULL, ctx, ifname, want, true, err, errsize);
}

/* ---- pinned to one interface ---- */

/* The name is checked before anything is opened, as without a pin. */
static int open_pinned(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
		       nt_ethtool **h)
{
	*h = NULL;
	if (!nt_ifname_valid(ifname))
		return -EINVAL;
	return nt_ethtool_open_via(ctx, be, h);
}

int nt_ethtool_get_rings_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
			     nt_rings *out)
{
	nt_ethtool *h;
	int r = open_pinned(ctx, be, ifname, &h);

	memset(out, 0, sizeof(*out));
	if (r == 0)
		r = nt_ethtool_read_rings(h, ctx, ifname, out);
	nt_ethtool_close(h);
	return r;
}

int nt_ethtool_get_channels_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
				nt_channels *out)
{
	nt_ethtool *h;
	int r = open_pinned(ctx, be, ifname, &h);

	memset(out, 0, sizeof(*out));
	if (r == 0)
		r = nt_ethtool_read_channels(h, ctx, ifname, out);
	nt_ethtool_close(h);
	return r;
}

int nt_ethtool_set_rings_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
			     const nt_rings *want, char *err, size_t errsize)
{
	nt_ethtool *h;
	int r = open_pinned(ctx, be, ifname, &h);

	set_err(err, errsize, "");
	if (r == 0)
		r = nt_ethtool_write_rings(h, ctx, ifname, want, false, err, errsize);
	nt_ethtool_close(h);
	return r;
}

int nt_ethtool_set_channels_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
				const nt_channels *want, char *err, size_t errsize)
{
	nt_ethtool *h;
	int r = open_pinned(ctx, be, ifname, &h);

	set_err(err, errsize, "");
	if (r == 0)
		r = nt_ethtool_write_channels(h, ctx, ifname, want, false, err, errsize);
	nt_ethtool_close(h);
	return r;
}
