/* SPDX-License-Identifier: Apache-2.0 */
/* The `netdev` generic-netlink family: see kernel/netdev.h. */
#include "kernel/netdev.h"
#include "kernel/fixture.h"
#include "base/grow.h"
#include "kernel/nlparse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

const char *const nt_netdev_qstat_names[NT_NETDEV_QSTATS_N] = {
	"rx-packets", "rx-bytes", "tx-packets", "tx-bytes", "rx-alloc-fail", "rx-hw-drops",
	"rx-hw-drop-overruns", "rx-csum-complete", "rx-csum-unnecessary", "rx-csum-none", "rx-csum-bad",
	"rx-hw-gro-packets", "rx-hw-gro-bytes", "rx-hw-gro-wire-packets", "rx-hw-gro-wire-bytes",
	"rx-hw-drop-ratelimits", "tx-hw-drops", "tx-hw-drop-errors", "tx-csum-none", "tx-needs-csum",
	"tx-hw-gso-packets", "tx-hw-gso-bytes", "tx-hw-gso-wire-packets", "tx-hw-gso-wire-bytes",
	"tx-hw-drop-ratelimits", "tx-stop", "tx-wake",
};

void nt_netdev_free(nt_netdev *nd)
{
	if (!nd)
		return;
	free(nd->queues);
	free(nd->napis);
	free(nd->qstats);
	memset(nd, 0, sizeof(*nd));
}

/* ---- attributes: bounds checked by hand, as the buffer is untrusted ---- */

/* The attributes are walked by kernel/nlparse.c (nt_nla_walk). */

/* A u32, or a "uint" (4 or 8 bytes, the kernel's nla_put_uint), as
 * unsigned 64 bits; false for any other payload length. */
static bool attr_uint(const unsigned char *v, size_t n, uint64_t *out)
{
	if (n == 4) {
		uint32_t x;
		memcpy(&x, v, 4);
		*out = x;
		return true;
	}
	if (n == 8) {
		memcpy(out, v, 8);
		return true;
	}
	return false;
}

static bool attr_u32(const unsigned char *v, size_t n, uint32_t *out)
{
	uint64_t x;
	if (!attr_uint(v, n, &x) || x > UINT32_MAX)
		return false;
	*out = (uint32_t)x;
	return true;
}

/* ---- the family id ---- */

struct fam_ud {
	int id;
	uint64_t ops; /* bit C: the family has command C (C < 64) */
	uint64_t dumps; /* bit C: command C can dump (GENL_CMD_CAP_DUMP) */
};

/* One operation of CTRL_ATTR_OPS as it is walked. */
struct op_ud {
	uint32_t cmd, flags;
	bool has_id;
};

static int op_attr(void *ud, int type, const unsigned char *v, size_t n)
{
	struct op_ud *o = ud;
	if (type == CTRL_ATTR_OP_ID && attr_u32(v, n, &o->cmd))
		o->has_id = true;
	else if (type == CTRL_ATTR_OP_FLAGS)
		(void)attr_u32(v, n, &o->flags);
	return 0;
}

/* CTRL_ATTR_OPS: a nest of nests, one per operation, each with its
 * CTRL_ATTR_OP_ID and CTRL_ATTR_OP_FLAGS. */
static int ops_attr(void *ud, int type, const unsigned char *v, size_t n)
{
	struct fam_ud *f = ud;
	struct op_ud o = { 0 };
	(void)type;
	(void)nt_nla_walk(v, n, op_attr, &o);
	if (!o.has_id || o.cmd >= 64)
		return 0;
	f->ops |= 1ull << o.cmd;
	if (o.flags & GENL_CMD_CAP_DUMP)
		f->dumps |= 1ull << o.cmd;
	return 0;
}

static int fam_attr(void *ud, int type, const unsigned char *v, size_t n)
{
	struct fam_ud *f = ud;
	if (type == CTRL_ATTR_FAMILY_ID && n >= 2) {
		uint16_t id;
		memcpy(&id, v, 2);
		f->id = id;
	} else if (type == CTRL_ATTR_OPS) {
		(void)nt_nla_walk(v, n, ops_attr, f);
	}
	return 0;
}

int nt_netdev_parse_family(const void *buf, size_t len, int *id)
{
	uint64_t ops;
	return nt_netdev_parse_family_ops(buf, len, id, &ops);
}

int nt_netdev_parse_family_ops(const void *buf, size_t len, int *id, uint64_t *ops)
{
	uint64_t dumps;
	return nt_genl_parse_family(buf, len, id, ops, &dumps);
}

/* One controller message: its family, when it names one, stops the walk. */
static int on_family(void *ud, int cmd, const unsigned char *a, size_t n)
{
	struct fam_ud g = { 0 };
	if (cmd < 0)
		return 0;
	if (nt_nla_walk(a, n, fam_attr, &g) < 0)
		return NT_EPARSE;
	if (g.id <= 0)
		return 0;
	*(struct fam_ud *)ud = g;
	return 1;
}

int nt_genl_parse_family(const void *buf, size_t len, int *id, uint64_t *ops, uint64_t *dumps)
{
	struct fam_ud f = { 0 };
	int r = nt_genl_walk(buf, len, GENL_ID_CTRL, on_family, &f);
	*id = f.id;
	*ops = f.ops;
	*dumps = f.dumps;
	if (r < 0)
		return r;
	return f.id > 0 ? 0 : NT_EPARSE;
}

/* ---- the dumps ---- */

struct ent_ud {
	nt_nd_queue q;
	nt_nd_napi n;
	unsigned have; /* bits: 1 ifindex, 2 id, 4 type */
};

static int queue_attr(void *ud, int type, const unsigned char *v, size_t n)
{
	struct ent_ud *e = ud;
	uint32_t x;
	if (!attr_u32(v, n, &x))
		return 0;
	switch (type) {
	case NT_NETDEV_A_QUEUE_ID: e->q.id = x; e->have |= 2; break;
	case NT_NETDEV_A_QUEUE_IFINDEX: e->q.ifindex = x; e->have |= 1; break;
	case NT_NETDEV_A_QUEUE_TYPE: e->q.type = x; e->have |= 4; break;
	case NT_NETDEV_A_QUEUE_NAPI_ID: e->q.napi_id = x; break;
	default: break; /* dmabuf, io-uring, xsk: not ours */
	}
	return 0;
}

/* *DST = X and BIT into *HAVE when X fits a u32 (the identifying
 * attributes of napi-get and qstats-get, sent as uints). */
static void take_u32(uint32_t *dst, uint64_t x, unsigned *have, unsigned bit)
{
	if (x <= UINT32_MAX) {
		*dst = (uint32_t)x;
		*have |= bit;
	}
}

static int napi_attr(void *ud, int type, const unsigned char *v, size_t n)
{
	struct ent_ud *e = ud;
	uint64_t x;
	if (!attr_uint(v, n, &x))
		return 0;
	switch (type) {
	case NT_NETDEV_A_NAPI_IFINDEX:
		take_u32(&e->n.ifindex, x, &e->have, 1);
		break;
	case NT_NETDEV_A_NAPI_ID:
		take_u32(&e->n.id, x, &e->have, 2);
		break;
	/* The u32s are kept as the kernel sent them; the 64-bit timeouts are
	 * capped where a signed value would wrap (no kernel sends those). */
	case NT_NETDEV_A_NAPI_IRQ: e->n.irq = (int64_t)(x & UINT32_MAX); break;
	case NT_NETDEV_A_NAPI_PID: e->n.pid = (int64_t)(x & UINT32_MAX); break;
	case NT_NETDEV_A_NAPI_DEFER_HARD_IRQS: e->n.defer_hard_irqs = (int64_t)(x & UINT32_MAX); break;
	case NT_NETDEV_A_NAPI_GRO_FLUSH_TIMEOUT: e->n.gro_flush_timeout = x > INT64_MAX ? INT64_MAX : (int64_t)x; break;
	case NT_NETDEV_A_NAPI_IRQ_SUSPEND_TIMEOUT:
		e->n.irq_suspend_timeout = x > INT64_MAX ? INT64_MAX : (int64_t)x;
		break;
	/* Kept as sent (0 disabled, 1 enabled, 2 busy-poll), so that a
	 * rollback writes back the very mode it found. */
	case NT_NETDEV_A_NAPI_THREADED: e->n.threaded = x > 255 ? 1 : (int)x; break;
	default: break;
	}
	return 0;
}

/* A qstats message: which queue (ifindex, type, id; bits 1, 4, 2 of
 * HAVE) and its counters. */
struct qs_ud {
	nt_nd_qstats s;
	unsigned have;
};

static int qstats_attr(void *ud, int type, const unsigned char *v, size_t n)
{
	struct qs_ud *e = ud;
	uint64_t x;
	if (!attr_uint(v, n, &x))
		return 0;
	switch (type) {
	case NT_NETDEV_A_QSTATS_IFINDEX:
		take_u32(&e->s.ifindex, x, &e->have, 1);
		break;
	case NT_NETDEV_A_QSTATS_QUEUE_ID:
		take_u32(&e->s.id, x, &e->have, 2);
		break;
	case NT_NETDEV_A_QSTATS_QUEUE_TYPE:
		take_u32(&e->s.type, x, &e->have, 4);
		break;
	default:
		if (type >= NT_NETDEV_A_QSTATS_FIRST && type <= NT_NETDEV_A_QSTATS_LAST) {
			e->s.v[type - NT_NETDEV_A_QSTATS_FIRST] = x;
			e->s.present |= 1u << (type - NT_NETDEV_A_QSTATS_FIRST);
		}
		break; /* the scope, padding, counters newer than our table */
	}
	return 0;
}

static int push_qstats(nt_netdev *nd, const nt_nd_qstats *s)
{
	if (nt_grow((void **)&nd->qstats, nd->nqstats, &nd->scap, sizeof(*s), 16) < 0)
		return -ENOMEM;
	nd->qstats[nd->nqstats++] = *s;
	return 0;
}

int nt_netdev_push_queue(nt_netdev *nd, const nt_nd_queue *q)
{
	if (nt_grow((void **)&nd->queues, nd->nqueues, &nd->qcap, sizeof(*q), 64) < 0)
		return -ENOMEM;
	nd->queues[nd->nqueues++] = *q;
	return 0;
}

int nt_netdev_push_napi(nt_netdev *nd, const nt_nd_napi *n)
{
	if (nt_grow((void **)&nd->napis, nd->nnapis, &nd->ncap, sizeof(*n), 32) < 0)
		return -ENOMEM;
	nd->napis[nd->nnapis++] = *n;
	return 0;
}

/* One message of the family: CMD and its attributes [A, A + N). */
static int add_entry(nt_netdev *nd, int cmd, const unsigned char *a, size_t n)
{
	struct ent_ud e;
	memset(&e, 0, sizeof(e));
	if (cmd == NT_NETDEV_CMD_QUEUE_GET) {
		e.q.napi_id = -1;
		if (nt_nla_walk(a, n, queue_attr, &e) < 0 || e.have != 7 ||
		    (e.q.type != NT_NETDEV_QUEUE_RX && e.q.type != NT_NETDEV_QUEUE_TX)) {
			nd->skipped++;
			return 0;
		}
		return nt_netdev_push_queue(nd, &e.q);
	}
	if (cmd == NT_NETDEV_CMD_NAPI_GET) {
		e.n.irq = e.n.pid = e.n.defer_hard_irqs = e.n.gro_flush_timeout = e.n.irq_suspend_timeout = -1;
		e.n.threaded = -1;
		if (nt_nla_walk(a, n, napi_attr, &e) < 0 || (e.have & 3) != 3) {
			nd->skipped++;
			return 0;
		}
		return nt_netdev_push_napi(nd, &e.n);
	}
	if (cmd == NT_NETDEV_CMD_QSTATS_GET) {
		struct qs_ud q;
		memset(&q, 0, sizeof(q));
		/* A device-scope answer (no queue id) is not a queue's. */
		if (nt_nla_walk(a, n, qstats_attr, &q) < 0 || q.have != 7 ||
		    (q.s.type != NT_NETDEV_QUEUE_RX && q.s.type != NT_NETDEV_QUEUE_TX)) {
			nd->skipped++;
			return 0;
		}
		return push_qstats(nd, &q.s);
	}
	return 0; /* a notification or another command: not ours */
}

static int on_entry(void *ud, int cmd, const unsigned char *a, size_t n)
{
	nt_netdev *nd = ud;
	if (cmd < 0) {
		nd->skipped++;
		return 0;
	}
	return add_entry(nd, cmd, a, n);
}

int nt_netdev_parse_dump(nt_netdev *nd, int family, const void *buf, size_t len)
{
	return nt_genl_walk(buf, len, family, on_entry, nd);
}

/* ---- the live exchange: one socket, three requests ---- */

/* Large enough for the biggest datagram a dump sends (the kernel sizes
 * them at most 32 KiB for a reader that offers more). */
#define NT_NL_BUF 65536

static int nl_send(int fd, uint16_t type, uint16_t flags, uint32_t seq, uint8_t cmd, const void *attrs,
		   size_t alen)
{
	unsigned char msg[NLMSG_LENGTH(GENL_HDRLEN) + 64];
	struct nlmsghdr h = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + (uint32_t)alen,
			      .nlmsg_type = type,
			      .nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags),
			      .nlmsg_seq = seq };
	struct genlmsghdr g = { .cmd = cmd, .version = 1 };
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (alen > 64)
		return -EINVAL;
	memset(msg, 0, sizeof(msg));
	memcpy(msg, &h, sizeof(h));
	memcpy(msg + NLMSG_HDRLEN, &g, sizeof(g));
	if (alen)
		memcpy(msg + NLMSG_LENGTH(GENL_HDRLEN), attrs, alen);
	if (sendto(fd, msg, h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	return 0;
}

static ssize_t nl_recv(int fd, unsigned char *buf)
{
	for (;;) {
		ssize_t n = recv(fd, buf, NT_NL_BUF, MSG_TRUNC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
		if (n > NT_NL_BUF)
			return -EMSGSIZE;
		return n;
	}
}

/* The family's id, and in *OPS (may be NULL) its commands as
 * nt_netdev_parse_family_ops gives them. */
static int resolve_family(int fd, unsigned char *buf, int *id, uint64_t *ops)
{
	uint64_t none;
	/* CTRL_ATTR_FAMILY_NAME "netdev\0", padded to 4 bytes. */
	unsigned char attr[NLA_HDRLEN + 8];
	struct nlattr a = { .nla_len = NLA_HDRLEN + sizeof(NT_NETDEV_FAMILY_NAME), .nla_type = CTRL_ATTR_FAMILY_NAME };
	memset(attr, 0, sizeof(attr));
	memcpy(attr, &a, sizeof(a));
	memcpy(attr + NLA_HDRLEN, NT_NETDEV_FAMILY_NAME, sizeof(NT_NETDEV_FAMILY_NAME));
	int r = nl_send(fd, GENL_ID_CTRL, 0, 1, CTRL_CMD_GETFAMILY, attr, NLA_ALIGN(a.nla_len));
	if (r < 0)
		return r;
	ssize_t n = nl_recv(fd, buf);
	if (n < 0)
		return (int)n;
	return nt_netdev_parse_family_ops(buf, (size_t)n, id, ops ? ops : &none);
}

static int dump(int fd, unsigned char *buf, int family, uint8_t cmd, uint32_t seq, nt_netdev *nd)
{
	int r = nl_send(fd, (uint16_t)family, NLM_F_DUMP, seq, cmd, NULL, 0);
	if (r < 0)
		return r;
	for (;;) {
		ssize_t n = nl_recv(fd, buf);
		if (n < 0)
			return (int)n;
		r = nt_netdev_parse_dump(nd, family, buf, (size_t)n);
		if (r != 0)
			return r < 0 ? r : 0;
	}
}

static int read_live(nt_netdev *nd)
{
	unsigned char *buf = malloc(NT_NL_BUF);
	int fd = -1, family = 0, r;
	/* Never let a kernel that does not answer hang a request. */
	struct timeval tv = { .tv_sec = 5 };
	if (!buf)
		return -ENOMEM;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = resolve_family(fd, buf, &family, NULL);
	if (r < 0)
		goto out;
	r = dump(fd, buf, family, NT_NETDEV_CMD_QUEUE_GET, 2, nd);
	if (r < 0)
		goto out;
	r = dump(fd, buf, family, NT_NETDEV_CMD_NAPI_GET, 3, nd);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

/* The qstats-get dump for IFINDEX alone, scope queue; every device of the
 * namespace for IFINDEX 0. */
static int read_qstats_live(int ifindex, nt_netdev *nd)
{
	unsigned char *buf = malloc(NT_NL_BUF);
	unsigned char attrs[2 * (NLA_HDRLEN + 4)];
	struct nlattr a = { .nla_len = NLA_HDRLEN + 4, .nla_type = NT_NETDEV_A_QSTATS_SCOPE };
	uint32_t v = NT_NETDEV_QSTATS_SCOPE_QUEUE;
	size_t alen = NLA_HDRLEN + 4;
	int fd = -1, family = 0, r;
	struct timeval tv = { .tv_sec = 5 };
	if (!buf)
		return -ENOMEM;
	memcpy(attrs, &a, sizeof(a));
	memcpy(attrs + NLA_HDRLEN, &v, 4);
	if (ifindex > 0) {
		a.nla_type = NT_NETDEV_A_QSTATS_IFINDEX;
		v = (uint32_t)ifindex;
		memcpy(attrs + alen, &a, sizeof(a));
		memcpy(attrs + alen + NLA_HDRLEN, &v, 4);
		alen += NLA_HDRLEN + 4;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	uint64_t ops = 0;
	r = resolve_family(fd, buf, &family, &ops);
	if (r < 0)
		goto out;
	/* The family lists its commands: one without qstats-get is a kernel
	 * before 6.9. Told apart here, because the dump's EOPNOTSUPP would
	 * say the same of a kernel without the command and of a device
	 * without the counters (netdev_nl_qstats_get_dumpit). */
	if (ops && !(ops & (1ull << NT_NETDEV_CMD_QSTATS_GET))) {
		r = -ENOSYS;
		goto out;
	}
	r = nl_send(fd, (uint16_t)family, NLM_F_DUMP, 4, NT_NETDEV_CMD_QSTATS_GET, attrs, alen);
	while (r == 0) {
		ssize_t n = nl_recv(fd, buf);
		if (n < 0) {
			r = (int)n;
			break;
		}
		r = nt_netdev_parse_dump(nd, family, buf, (size_t)n);
	}
	if (r > 0)
		r = 0;
	/* The command is there: the device keeps no counters. */
	if (r == -EOPNOTSUPP && ops)
		r = -ENODATA;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

int nt_netdev_qstats_read(const nt_ctx *ctx, const char *ifname, int ifindex, nt_netdev *nd)
{
	if (!ctx->live)
		return nt_fixture_qstats_get(ctx, ifname, ifindex, nd);
	if (ifindex <= 0)
		return -ENODEV;
	return read_qstats_live(ifindex, nd);
}

int nt_netdev_qstats_read_all(const nt_ctx *ctx, const char *const *ifnames, const int *ifindexes, int n,
			      nt_netdev *nd)
{
	if (ctx->live)
		return read_qstats_live(0, nd);
	for (int i = 0; i < n; i++)
		if (nt_fixture_qstats_get(ctx, ifnames[i], ifindexes[i], nd) == -ENOMEM)
			return -ENOMEM;
	return 0;
}

int nt_netdev_read(const nt_ctx *ctx, const char *ifname, int ifindex, nt_netdev *nd)
{
	memset(nd, 0, sizeof(*nd));
	if (!ctx->live)
		return nt_fixture_netdev_get(ctx, ifname, ifindex, nd);
	return read_live(nd);
}

void nt_netdev_dev_read(const nt_ctx *ctx, const char *ifname, nt_nd_dev *out)
{
	long v;
	out->threaded = -1;
	out->defer_hard_irqs = out->gro_flush_timeout = -1;
	if (!nt_ifname_valid(ifname))
		return;
	/* "threaded" reads 0 or 1 (and 2, "busy-poll", on kernels after 6.18,
	 * whose file refuses 2: still on). */
	if (nt_read_long(ctx, &v, "/sys/class/net/%s/threaded", ifname) == 0)
		out->threaded = v != 0;
	if (nt_read_long(ctx, &v, "/sys/class/net/%s/napi_defer_hard_irqs", ifname) == 0)
		out->defer_hard_irqs = v;
	if (nt_read_long(ctx, &v, "/sys/class/net/%s/gro_flush_timeout", ifname) == 0)
		out->gro_flush_timeout = v;
}

/* ---- lookups ---- */

size_t nt_netdev_napi_count(const nt_netdev *nd, int ifindex)
{
	size_t n = 0;
	for (size_t i = 0; i < nd->nnapis; i++)
		n += (int)nd->napis[i].ifindex == ifindex;
	return n;
}

const nt_nd_napi *nt_netdev_rx_napi(const nt_netdev *nd, int ifindex, uint32_t queue)
{
	size_t nrx = 0;
	bool linked = false;
	for (size_t i = 0; i < nd->nqueues; i++) {
		const nt_nd_queue *q = &nd->queues[i];
		if ((int)q->ifindex != ifindex || q->type != NT_NETDEV_QUEUE_RX)
			continue;
		nrx++;
		linked |= q->napi_id >= 0;
		if (q->id != queue || q->napi_id < 0)
			continue;
		for (size_t k = 0; k < nd->nnapis; k++)
			if ((int)nd->napis[k].ifindex == ifindex && nd->napis[k].id == q->napi_id)
				return &nd->napis[k];
		return NULL;
	}
	/* The queues name no NAPI: one a queue, in id order (see the header). */
	if (linked || nrx == 0 || queue >= nrx || nt_netdev_napi_count(nd, ifindex) != nrx)
		return NULL;
	const nt_nd_napi *best = NULL;
	for (size_t k = 0; k < nd->nnapis; k++) {
		const nt_nd_napi *a = &nd->napis[k];
		if ((int)a->ifindex != ifindex)
			continue;
		/* A's rank among the device's NAPIs by id. */
		size_t below = 0;
		for (size_t j = 0; j < nd->nnapis; j++)
			below += (int)nd->napis[j].ifindex == ifindex && nd->napis[j].id < a->id;
		if (below == queue)
			best = a;
	}
	return best;
}

/* ---- writes ---- */

const char *nt_napi_attr_name(nt_napi_attr a)
{
	switch (a) {
	case NT_NAPI_DEFER_HARD_IRQS: return "defer-hard-irqs";
	case NT_NAPI_GRO_FLUSH_TIMEOUT: return "gro-flush-timeout";
	case NT_NAPI_IRQ_SUSPEND_TIMEOUT: return "irq-suspend-timeout";
	case NT_NAPI_THREADED: return "threaded";
	}
	return "?";
}

int nt_netdev_dev_write(const nt_ctx *ctx, const char *ifname, const char *file, uint64_t v)
{
	char text[24];
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	if (!ctx->live)
		return nt_fixture_netdev_dev_write(ctx, ifname, file, v);
	snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
	return nt_write_str(ctx, text, "/sys/class/net/%s/%s", ifname, file);
}
