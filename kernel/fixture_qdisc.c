/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel on a fixture root, the root qdisc: the kernel's default for
 * a fresh device, replaced and removed as tc would (kernel/fixture.h). */
#include "kernel/fixture.h"
#include "kernel/fixture_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "kernel/qdisc_kinds.h"

/* ---- the root qdisc: the "qdisc" object of ROOT/ethtool/IFACE.json ---- */

/* The kinds a stock kernel has modules for, that a create may name;
 * anything else is refused as the kernel refuses a kind it cannot load. */
static bool qdisc_kind_known(const char *kind)
{
	static const char *const kinds[] = { "pfifo_fast", "fq", "fq_codel", "mq", "htb", "noqueue", "pfifo",
					     "bfifo", "sfq", "tbf", "prio", "netem", "cake", "multiq", NULL };
	for (int i = 0; kinds[i]; i++)
		if (strcmp(kind, kinds[i]) == 0)
			return true;
	return false;
}

/* net.core.default_qdisc of the fixture, pfifo_fast (the kernel's own
 * default) when it does not say. */
static void default_qdisc(const nt_ctx *ctx, char *buf, size_t size)
{
	if (nt_read_str(ctx, buf, size, "/proc/sys/net/core/default_qdisc") < 0 || !buf[0] ||
	    !qdisc_kind_known(buf))
		snprintf(buf, size, "pfifo_fast");
}

/* Whether IFNAME is a virtual device with IFF_NO_QUEUE: bond, veth, vlan,
 * bridge, dummy, macvlan and lo set it; only a device of a bus has a
 * "device" link; of the virtual ones tun/tap (tun_flags in sysfs) and ifb
 * (its name, sysfs shows nothing of its own) keep a queue. */
static bool no_queue(const nt_ctx *ctx, const char *ifname)
{
	return !nt_exists(ctx, "/sys/class/net/%s/device", ifname) &&
	       !nt_exists(ctx, "/sys/class/net/%s/tun_flags", ifname) && strncmp(ifname, "ifb", 3) != 0;
}

/* What attach_default_qdiscs gives a device brought up: noqueue for one
 * of IFF_NO_QUEUE, mq of the default for a multi-queue one, the default
 * itself for one queue. */
static void qdisc_kernel_default(const nt_ctx *ctx, const char *ifname, uint32_t ntx, nt_qdisc *out)
{
	char dflt[16];
	memset(out, 0, sizeof(*out));
	out->dflt = true;
	default_qdisc(ctx, dflt, sizeof(dflt));
	if (no_queue(ctx, ifname)) {
		snprintf(out->kind, sizeof(out->kind), "noqueue");
	} else if (ntx > 1) {
		snprintf(out->kind, sizeof(out->kind), "mq");
		snprintf(out->child, sizeof(out->child), "%s", dflt);
		out->child_dflt = true;
	} else {
		snprintf(out->kind, sizeof(out->kind), "%s", dflt);
	}
}

static int qdisc_u32(json_t *sec, const char *name, bool *has, uint32_t *v)
{
	json_t *x = json_object_get(sec, name);
	if (!x)
		return 0;
	if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > (json_int_t)UINT32_MAX)
		return NT_EPARSE;
	*has = true;
	*v = (uint32_t)json_integer_value(x);
	return 0;
}

static int qdisc_word(json_t *sec, const char *name, char *buf, size_t size, bool required)
{
	json_t *x = json_object_get(sec, name);
	if (!x)
		return required ? NT_EPARSE : 0;
	if (!json_is_string(x) || !json_string_value(x)[0] || strlen(json_string_value(x)) >= size)
		return NT_EPARSE;
	snprintf(buf, size, "%s", json_string_value(x));
	return 0;
}

int nt_fixture_qdisc_get(const nt_ctx *ctx, const char *ifname, uint32_t ntx, nt_qdisc *out)
{
	json_t *root = NULL, *sec = NULL;
	char *buf = NULL;
	bool named;
	int r;

	if (ctx->fx_memo && nt_fx_memo_doc(ctx, ifname, &root) == 0) {
		/* The read's memo has the document parsed already. */
		named = json_object_get(root, "qdisc") != NULL;
		json_decref(root);
		root = NULL;
	} else {
		/* Every read of the host asks each NIC: a file that never names
		 * a qdisc (most, with an RSS table of hundreds of entries) is
		 * not parsed to find that out. */
		r = nt_read_all(ctx, &buf, "/ethtool/%s.json", ifname);
		named = r >= 0 && strstr(buf, "\"qdisc\"");
		free(buf);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	r = named ? nt_fx_load(ctx, "qdisc", ifname, &root, &sec) : -EOPNOTSUPP;

	if (r == -EOPNOTSUPP) {
		qdisc_kernel_default(ctx, ifname, ntx, out);
		return 0;
	}
	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	json_t *cd = json_object_get(sec, "children_default");
	if ((r = qdisc_word(sec, "kind", out->kind, sizeof(out->kind), true)) < 0 ||
	    (r = qdisc_word(sec, "children", out->child, sizeof(out->child), false)) < 0 ||
	    (r = qdisc_u32(sec, "limit", &out->fq.has_limit, &out->fq.limit)) < 0 ||
	    (r = qdisc_u32(sec, "flow_limit", &out->fq.has_flow_limit, &out->fq.flow_limit)) < 0 ||
	    (r = qdisc_u32(sec, "maxrate", &out->fq.has_maxrate, &out->fq.maxrate)) < 0)
		goto out;
	if (cd && !json_is_boolean(cd)) {
		r = NT_EPARSE;
		goto out;
	}
	out->child_dflt = out->child[0] && json_is_true(cd);
	/* As the live reader: parameters at fq's defaults are not named. */
	if (out->fq.has_limit && out->fq.limit == NT_FQ_DEFAULT_LIMIT)
		out->fq.has_limit = false;
	if (out->fq.has_flow_limit && out->fq.flow_limit == NT_FQ_DEFAULT_FLOW_LIMIT)
		out->fq.has_flow_limit = false;
	if (out->fq.has_maxrate && out->fq.maxrate == NT_FQ_UNLIMITED)
		out->fq.has_maxrate = false;
	if (out->child_dflt)
		memset(&out->fq, 0, sizeof(out->fq));
out:
	json_decref(root);
	return r;
}

/* ROOT/ethtool/IFACE.json as an object, an empty one when there is no
 * file (a NIC without ethtool ops still has a qdisc). */
static int doc_load_or_new(const nt_ctx *ctx, const char *ifname, json_t **rootp)
{
	char *buf = NULL;
	int r = nt_read_all(ctx, &buf, "/ethtool/%s.json", ifname);
	if (r == -ENOENT) {
		*rootp = json_object();
		return *rootp ? 0 : -ENOMEM;
	}
	if (r < 0)
		return r;
	*rootp = json_loads(buf, 0, NULL);
	free(buf);
	if (!json_is_object(*rootp)) {
		json_decref(*rootp);
		*rootp = NULL;
		return NT_EPARSE;
	}
	return 0;
}

/* Save ROOT, or remove the file when nothing is left in it: no file is how
 * a fixture says the driver has no ethtool ops, which a qdisc written and
 * put back must not change. */
static int doc_save_or_remove(const nt_ctx *ctx, const char *ifname, json_t *root)
{
	char path[PATH_MAX];
	if (json_object_size(root) > 0) {
		int r = nt_path(ctx, path, sizeof(path), "/ethtool");
		if (r < 0)
			return r;
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		return nt_fx_save(ctx, ifname, root);
	}
	int r = nt_path(ctx, path, sizeof(path), "/ethtool/%s.json", ifname);
	if (r == 0 && unlink(path) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

static int qdisc_put_fq(json_t *sec, const nt_fq_params *fq)
{
	if ((fq->has_limit && json_object_set_new(sec, "limit", json_integer(fq->limit)) < 0) ||
	    (fq->has_flow_limit && json_object_set_new(sec, "flow_limit", json_integer(fq->flow_limit)) < 0) ||
	    (fq->has_maxrate && json_object_set_new(sec, "maxrate", json_integer(fq->maxrate)) < 0))
		return -ENOMEM;
	return 0;
}

/* Whether the fixture's kernel has KIND: a stock kernel's kinds, less
 * those the root's own configuration or module lists say it lacks
 * (kernel/qdisc_kinds.h), so that a tree captured from a kernel without
 * fq refuses it at the apply as that kernel did. */
static bool fixture_has_kind(const nt_ctx *ctx, const char *kind)
{
	char how[200];
	return qdisc_kind_known(kind) && nt_qdisc_kind_available(ctx, kind, how, sizeof(how)) != 0;
}

/* The kernel's checks of a create (net/sched/sch_api.c qdisc_create,
 * sch_mq.c mq_init), with its words. */
static int qdisc_refused(const nt_ctx *ctx, uint32_t ntx, const nt_qdisc *q, char *err, size_t errsize)
{
	bool mq_child = strcmp(q->kind, "mq") == 0 && q->child[0] && !q->child_dflt;
	if (!fixture_has_kind(ctx, q->kind) || (mq_child && !fixture_has_kind(ctx, q->child))) {
		nt_fx_set_err(err, errsize, "Specified qdisc kind is unknown");
		return -ENOENT;
	}
	if (strcmp(q->kind, "mq") == 0 && ntx < 2)
		return -EOPNOTSUPP; /* mq_init says nothing */
	if (mq_child && strcmp(q->child, "mq") == 0)
		return -EOPNOTSUPP; /* mq only at the root */
	return 0;
}

int nt_fixture_qdisc_set(const nt_ctx *ctx, const char *ifname, uint32_t ntx, const nt_qdisc *q, char *err,
			 size_t errsize)
{
	json_t *root = NULL, *sec = NULL;
	char dflt[16];
	int r = q->dflt ? 0 : qdisc_refused(ctx, ntx, q, err, errsize);

	if (r < 0 || (r = doc_load_or_new(ctx, ifname, &root)) < 0)
		return r;
	/* Deleting the root gives the kernel's default back: no object. */
	json_object_del(root, "qdisc");
	if (!q->dflt) {
		bool mq = strcmp(q->kind, "mq") == 0;
		bool child = mq && q->child[0] && !q->child_dflt;
		default_qdisc(ctx, dflt, sizeof(dflt));
		if (!(sec = json_object()) || json_object_set_new(root, "qdisc", sec) < 0 ||
		    json_object_set_new(sec, "kind", json_string(q->kind)) < 0) {
			r = -ENOMEM;
			goto out;
		}
		/* mq_init gives every queue a default child (handle 0), which
		 * a create of children then replaces. */
		if (mq && (json_object_set_new(sec, "children", json_string(child ? q->child : dflt)) < 0 ||
			   json_object_set_new(sec, "children_default", json_boolean(!child)) < 0)) {
			r = -ENOMEM;
			goto out;
		}
		if (strcmp(child ? q->child : q->kind, "fq") == 0 && (r = qdisc_put_fq(sec, &q->fq)) < 0)
			goto out;
	}
	r = doc_save_or_remove(ctx, ifname, root);
out:
	json_decref(root);
	return r;
}
