/* Rings and channels: one table-driven implementation for both kinds.
 *
 * nt_rings and nt_channels are flat structs of uint32_t, and so are the
 * ioctl's ethtool_ringparam and ethtool_channels; each kind is described by a
 * table of fields (JSON key, netlink attribute, offsets in our struct and in
 * the ioctl struct, each with its maximum). The fixture file, the netlink
 * messages and the ioctl are then three readers and writers of that table.
 *
 * A SET reads the current values first and sends only what differs, as
 * systemd's ethtool_set_nic_buffer_size does: drivers such as virtio_net
 * and mlx5 reset queues on every ring change, so an unneeded SET costs a
 * link flap. Values above the maximum are not clamped here: the caller asked
 * for them, and the kernel's refusal (with its reason) is the answer. */
#include "kernel/ethtool.h"
#include "kernel/nlmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/sockios.h>
#include <net/if.h>

#include <jansson.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#define U32_AT(obj, off) (*(uint32_t *)((char *)(obj) + (off)))

typedef struct eth_field {
	const char *name, *max_name; /* keys in the fixture JSON */
	size_t off, max_off; /* in nt_rings / nt_channels */
	int attr, max_attr; /* ETHTOOL_A_* */
	size_t ioc_off, ioc_max_off; /* in ethtool_ringparam / ethtool_channels */
} eth_field;

typedef struct eth_kind {
	const char *key; /* object in the fixture JSON */
	const char *above_max; /* the kernel's extack text for a value above max */
	size_t size; /* of nt_rings / nt_channels */
	uint8_t get_cmd, set_cmd; /* ETHTOOL_MSG_* */
	int header_attr, maxattr;
	uint32_t ioc_get, ioc_set; /* ETHTOOL_G* / ETHTOOL_S* */
	const eth_field *fields;
	int nfields;
} eth_kind;

#define RF(n, A, io) { #n, #n "_max", offsetof(nt_rings, n), offsetof(nt_rings, n##_max), \
	ETHTOOL_A_RINGS_##A, ETHTOOL_A_RINGS_##A##_MAX, \
	offsetof(struct ethtool_ringparam, io##_pending), \
	offsetof(struct ethtool_ringparam, io##_max_pending) }
static const eth_field ring_fields[] = { RF(rx, RX, rx), RF(tx, TX, tx) };

#define CF(n, A) { #n, #n "_max", offsetof(nt_channels, n), offsetof(nt_channels, n##_max), \
	ETHTOOL_A_CHANNELS_##A##_COUNT, ETHTOOL_A_CHANNELS_##A##_MAX, \
	offsetof(struct ethtool_channels, n##_count), offsetof(struct ethtool_channels, max_##n) }
static const eth_field channel_fields[] = {
	CF(rx, RX), CF(tx, TX), CF(other, OTHER), CF(combined, COMBINED),
};

static const eth_kind kind_rings = {
	.key = "rings",
	.above_max = "requested ring size exceeds maximum",
	.size = sizeof(nt_rings),
	.get_cmd = ETHTOOL_MSG_RINGS_GET,
	.set_cmd = ETHTOOL_MSG_RINGS_SET,
	.header_attr = ETHTOOL_A_RINGS_HEADER,
	.maxattr = ETHTOOL_A_RINGS_MAX,
	.ioc_get = ETHTOOL_GRINGPARAM,
	.ioc_set = ETHTOOL_SRINGPARAM,
	.fields = ring_fields,
	.nfields = (int)(sizeof(ring_fields) / sizeof(ring_fields[0])),
};

static const eth_kind kind_channels = {
	.key = "channels",
	.above_max = "requested channel count exceeds maximum",
	.size = sizeof(nt_channels),
	.get_cmd = ETHTOOL_MSG_CHANNELS_GET,
	.set_cmd = ETHTOOL_MSG_CHANNELS_SET,
	.header_attr = ETHTOOL_A_CHANNELS_HEADER,
	.maxattr = ETHTOOL_A_CHANNELS_MAX,
	.ioc_get = ETHTOOL_GCHANNELS,
	.ioc_set = ETHTOOL_SCHANNELS,
	.fields = channel_fields,
	.nfields = (int)(sizeof(channel_fields) / sizeof(channel_fields[0])),
};

/* Big enough for the attributes of either kind as this header knows them;
 * newer kernels' extra attributes are skipped by the parser. */
#define ETH_MAXATTR 32
_Static_assert(ETHTOOL_A_RINGS_MAX <= ETH_MAXATTR && ETHTOOL_A_CHANNELS_MAX <= ETH_MAXATTR,
	       "attribute table too small");

static void set_err(char *err, size_t errsize, const char *text)
{
	if (err && errsize)
		snprintf(err, errsize, "%s", text);
}

/* ---- fixture root: ROOT/ethtool/IFACE.json ---- */

static int fixture_load(const nt_ctx *ctx, const eth_kind *k, const char *ifname,
			json_t **rootp, json_t **objp)
{
	char *buf = NULL;
	json_t *root = NULL;
	int r = nt_read_all(ctx, &buf, "/ethtool/%s.json", ifname);

	if (r < 0) {
		/* No file is how a fixture says the driver has no ethtool ops. */
		r = r == -ENOENT ? -EOPNOTSUPP : r;
		goto out;
	}
	root = json_loads(buf, 0, NULL);
	if (!json_is_object(root)) {
		r = NT_EPARSE;
		goto out;
	}
	json_t *obj = json_object_get(root, k->key);
	if (!obj) {
		r = -EOPNOTSUPP;
		goto out;
	}
	if (!json_is_object(obj)) {
		r = NT_EPARSE;
		goto out;
	}
	*rootp = root;
	*objp = obj;
	root = NULL;
	r = 0;
out:
	json_decref(root);
	free(buf);
	return r;
}

static int json_u32(json_t *obj, const char *key, uint32_t *out)
{
	json_t *v = json_object_get(obj, key);
	*out = 0; /* absent means n/a, as ethtool prints a 0 maximum */
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > (json_int_t)UINT32_MAX)
		return NT_EPARSE;
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

static int fixture_get(const nt_ctx *ctx, const eth_kind *k, const char *ifname, void *out)
{
	json_t *root = NULL, *obj = NULL;
	int r = fixture_load(ctx, k, ifname, &root, &obj);

	if (r < 0)
		return r;
	for (int i = 0; i < k->nfields && r == 0; i++) {
		const eth_field *f = &k->fields[i];
		r = json_u32(obj, f->name, &U32_AT(out, f->off));
		if (r == 0)
			r = json_u32(obj, f->max_name, &U32_AT(out, f->max_off));
	}
	json_decref(root);
	return r;
}

/* Replace the file in one step so a reader (or a crash) never sees half a
 * document: write a temporary file in the same directory, then rename. */
static int write_atomic(const nt_ctx *ctx, const char *ifname, const char *text)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	size_t len = strlen(text), done = 0;
	int fd = -1, r;

	r = nt_path(ctx, path, sizeof(path), "/ethtool/%s.json", ifname);
	if (r == 0)
		r = nt_path(ctx, tmp, sizeof(tmp), "/ethtool/.%s.json.XXXXXX", ifname);
	if (r < 0)
		return r;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto fail;
		}
		done += (size_t)n;
	}
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		r = -errno;
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return r;
}

/* CHANGED: bit i set for each field i to write. CUR holds the maxima. */
static int fixture_set(const nt_ctx *ctx, const eth_kind *k, const char *ifname,
		       const void *want, const void *cur, unsigned changed, char *err,
		       size_t errsize)
{
	json_t *root = NULL, *obj = NULL;
	char *text = NULL;
	int r;

	/* Check every field before touching the file: a refused request leaves
	 * the fixture exactly as it was, as the kernel leaves the NIC. */
	for (int i = 0; i < k->nfields; i++) {
		const eth_field *f = &k->fields[i];
		if ((changed & (1u << i)) && U32_AT(want, f->off) > U32_AT(cur, f->max_off)) {
			set_err(err, errsize, k->above_max);
			return -EINVAL;
		}
	}
	r = fixture_load(ctx, k, ifname, &root, &obj);
	if (r < 0)
		return r;
	for (int i = 0; i < k->nfields; i++) {
		const eth_field *f = &k->fields[i];
		if (!(changed & (1u << i)))
			continue;
		if (json_object_set_new(obj, f->name, json_integer(U32_AT(want, f->off))) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	text = json_dumps(root, JSON_INDENT(2));
	if (!text) {
		r = -ENOMEM;
		goto out;
	}
	size_t n = strlen(text);
	char *nl = realloc(text, n + 2);
	if (!nl) {
		r = -ENOMEM;
		goto out;
	}
	text = nl;
	memcpy(text + n, "\n", 2);
	r = write_atomic(ctx, ifname, text);
out:
	free(text);
	json_decref(root);
	return r;
}

/* ---- live: ethtool generic netlink ---- */

typedef struct eth_nl {
	struct nl_sock *sk;
	int family;
} eth_nl;

/* Returns 0, -EPROTONOSUPPORT when the kernel has no ethtool family (before
 * 5.6, or built without CONFIG_ETHTOOL_NETLINK), or -errno. */
static int eth_nl_open(eth_nl *s)
{
	int r = nt_nl_open(NETLINK_GENERIC, &s->sk);
	if (r < 0)
		return r;
	r = genl_ctrl_resolve(s->sk, ETHTOOL_GENL_NAME);
	if (r < 0) {
		r = r == -NLE_OBJ_NOTFOUND ? -EPROTONOSUPPORT : nt_nl_errno(r);
		nl_socket_free(s->sk);
		s->sk = NULL;
		return r;
	}
	s->family = r;
	return 0;
}

static void eth_nl_close(eth_nl *s)
{
	nl_socket_free(s->sk);
	s->sk = NULL;
}

/* A request message with the device header filled in. */
static int eth_nl_msg(const eth_nl *s, const eth_kind *k, uint8_t cmd, const char *ifname,
		      struct nl_msg **out)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlattr *hdr;

	*out = NULL;
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, s->family, 0, NLM_F_REQUEST, cmd,
			 ETHTOOL_GENL_VERSION))
		goto full;
	hdr = nla_nest_start(msg, k->header_attr);
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
	const eth_kind *k;
	void *out;
	bool seen;
} get_reply;

static int parse_get_reply(struct nl_msg *msg, void *arg)
{
	get_reply *g = arg;
	struct nlattr *tb[ETH_MAXATTR + 1];
	int r = genlmsg_parse(nlmsg_hdr(msg), 0, tb, g->k->maxattr, NULL);

	if (r < 0)
		return nt_nl_errno(r);
	/* An attribute the driver does not report is n/a: left at 0. */
	for (int i = 0; i < g->k->nfields; i++) {
		const eth_field *f = &g->k->fields[i];
		if (tb[f->attr])
			U32_AT(g->out, f->off) = nla_get_u32(tb[f->attr]);
		if (tb[f->max_attr])
			U32_AT(g->out, f->max_off) = nla_get_u32(tb[f->max_attr]);
	}
	g->seen = true;
	return 0;
}

static int nl_get(const eth_nl *s, const eth_kind *k, const char *ifname, void *out)
{
	get_reply g = { .k = k, .out = out };
	struct nl_msg *msg = NULL;
	int r = eth_nl_msg(s, k, k->get_cmd, ifname, &msg);

	if (r < 0)
		return r;
	r = nt_nl_request(s->sk, msg, parse_get_reply, &g, NULL, 0);
	if (r == 0 && !g.seen)
		r = -EIO; /* an ACK without the reply: should not happen */
	nlmsg_free(msg);
	return r;
}

static int nl_set(const eth_nl *s, const eth_kind *k, const char *ifname, const void *want,
		  unsigned changed, char *err, size_t errsize)
{
	struct nl_msg *msg = NULL;
	int r = eth_nl_msg(s, k, k->set_cmd, ifname, &msg);

	if (r < 0)
		return r;
	for (int i = 0; i < k->nfields; i++) {
		const eth_field *f = &k->fields[i];
		if ((changed & (1u << i)) && nla_put_u32(msg, f->attr, U32_AT(want, f->off)) < 0) {
			r = -EMSGSIZE;
			goto out;
		}
	}
	r = nt_nl_request(s->sk, msg, NULL, NULL, err, errsize);
out:
	nlmsg_free(msg);
	return r;
}

/* ---- live: SIOCETHTOOL ioctl, for kernels without ethtool netlink ---- */

typedef union eth_ioc {
	uint32_t cmd;
	struct ethtool_ringparam rings;
	struct ethtool_channels channels;
} eth_ioc;

static int ioc_call(const char *ifname, eth_ioc *buf)
{
	struct ifreq ifr;
	int fd, r = 0;

	/* Any socket reaches dev_ioctl(); AF_INET may be compiled out, so an
	 * AF_UNIX one is the second choice. */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)buf;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int ioc_get(const eth_kind *k, const char *ifname, void *out, eth_ioc *raw)
{
	int r;

	memset(raw, 0, sizeof(*raw));
	raw->cmd = k->ioc_get;
	r = ioc_call(ifname, raw);
	if (r < 0)
		return r;
	for (int i = 0; i < k->nfields; i++) {
		const eth_field *f = &k->fields[i];
		U32_AT(out, f->off) = U32_AT(raw, f->ioc_off);
		U32_AT(out, f->max_off) = U32_AT(raw, f->ioc_max_off);
	}
	return 0;
}

/* The ioctl sets every field at once, so start from what the driver reports
 * (including fields nettune does not model, such as rx_mini) and change only
 * the requested ones. */
static int ioc_set(const eth_kind *k, const char *ifname, const void *want, unsigned changed)
{
	eth_ioc raw;
	nt_channels scratch; /* large enough for either kind */
	int r = ioc_get(k, ifname, &scratch, &raw);

	if (r < 0)
		return r;
	for (int i = 0; i < k->nfields; i++) {
		const eth_field *f = &k->fields[i];
		if (changed & (1u << i))
			U32_AT(&raw, f->ioc_off) = U32_AT(want, f->off);
	}
	raw.cmd = k->ioc_set;
	return ioc_call(ifname, &raw);
}

/* ---- the operations ---- */

static int do_get(const nt_ctx *ctx, nt_ethtool_backend be, const eth_kind *k,
		  const char *ifname, void *out)
{
	eth_nl s = { 0 };
	eth_ioc raw;
	int r;

	memset(out, 0, k->size);
	if (!nt_ifname_valid(ifname))
		return -EINVAL;
	if (!ctx->live)
		return fixture_get(ctx, k, ifname, out);
	if (be != NT_ETHTOOL_IOCTL) {
		r = eth_nl_open(&s);
		if (r == 0) {
			r = nl_get(&s, k, ifname, out);
			eth_nl_close(&s);
			return r;
		}
		if (r != -EPROTONOSUPPORT || be == NT_ETHTOOL_NETLINK)
			return r;
	}
	return ioc_get(k, ifname, out, &raw);
}

/* EXACT: bit i set means field i is set to its value even when that is 0
 * (netdevsim starts with rings of 0, and a rollback must restore them);
 * fields outside EXACT are set only when non-zero. */
static int do_set(const nt_ctx *ctx, nt_ethtool_backend be, const eth_kind *k,
		  const char *ifname, const void *want, unsigned exact, char *err, size_t errsize)
{
	nt_channels cur_buf; /* large enough for either kind */
	void *cur = &cur_buf;
	eth_nl s = { 0 };
	eth_ioc raw;
	unsigned changed = 0;
	bool use_nl = false;
	int r;

	set_err(err, errsize, "");
	memset(cur, 0, sizeof(cur_buf));
	if (!nt_ifname_valid(ifname))
		return -EINVAL;
	if (!ctx->live) {
		r = fixture_get(ctx, k, ifname, cur);
	} else {
		r = -EPROTONOSUPPORT;
		if (be != NT_ETHTOOL_IOCTL) {
			r = eth_nl_open(&s);
			if (r == 0) {
				use_nl = true;
				r = nl_get(&s, k, ifname, cur);
			} else if (r != -EPROTONOSUPPORT || be == NT_ETHTOOL_NETLINK) {
				goto out;
			}
		}
		if (!use_nl)
			r = ioc_get(k, ifname, cur, &raw);
	}
	if (r < 0)
		goto out;

	for (int i = 0; i < k->nfields; i++) {
		uint32_t w = U32_AT(want, k->fields[i].off);
		if ((w || (exact & (1u << i))) && w != U32_AT(cur, k->fields[i].off))
			changed |= 1u << i;
	}
	if (!changed) {
		r = 0; /* already as asked: no SET, no queue reset */
		goto out;
	}
	if (!ctx->live)
		r = fixture_set(ctx, k, ifname, want, cur, changed, err, errsize);
	else if (use_nl)
		r = nl_set(&s, k, ifname, want, changed, err, errsize);
	else
		r = ioc_set(k, ifname, want, changed);
out:
	if (s.sk)
		eth_nl_close(&s);
	return r;
}

int nt_ethtool_get_rings_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
			     nt_rings *out)
{
	return do_get(ctx, be, &kind_rings, ifname, out);
}

int nt_ethtool_get_channels_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
				nt_channels *out)
{
	return do_get(ctx, be, &kind_channels, ifname, out);
}

int nt_ethtool_set_rings_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
			     const nt_rings *want, char *err, size_t errsize)
{
	return do_set(ctx, be, &kind_rings, ifname, want, 0, err, errsize);
}

int nt_ethtool_set_channels_via(const nt_ctx *ctx, nt_ethtool_backend be, const char *ifname,
				const nt_channels *want, char *err, size_t errsize)
{
	return do_set(ctx, be, &kind_channels, ifname, want, 0, err, errsize);
}

int nt_ethtool_get_rings(const nt_ctx *ctx, const char *ifname, nt_rings *out)
{
	return do_get(ctx, NT_ETHTOOL_AUTO, &kind_rings, ifname, out);
}

int nt_ethtool_get_channels(const nt_ctx *ctx, const char *ifname, nt_channels *out)
{
	return do_get(ctx, NT_ETHTOOL_AUTO, &kind_channels, ifname, out);
}

int nt_ethtool_set_rings(const nt_ctx *ctx, const char *ifname, const nt_rings *want,
			 char *err, size_t errsize)
{
	return do_set(ctx, NT_ETHTOOL_AUTO, &kind_rings, ifname, want, 0, err, errsize);
}

int nt_ethtool_set_channels(const nt_ctx *ctx, const char *ifname, const nt_channels *want,
			    char *err, size_t errsize)
{
	return do_set(ctx, NT_ETHTOOL_AUTO, &kind_channels, ifname, want, 0, err, errsize);
}

int nt_ethtool_set_rings_exact(const nt_ctx *ctx, const char *ifname, const nt_rings *want, char *err,
			       size_t errsize)
{
	/* Both rx and tx, zeros included. */
	return do_set(ctx, NT_ETHTOOL_AUTO, &kind_rings, ifname, want, 0x3, err, errsize);
}

int nt_ethtool_set_channels_exact(const nt_ctx *ctx, const char *ifname, const nt_channels *want,
				  char *err, size_t errsize)
{
	/* All four counts, zeros included: other=0 is a real request. */
	return do_set(ctx, NT_ETHTOOL_AUTO, &kind_channels, ifname, want, 0xf, err, errsize);
}
