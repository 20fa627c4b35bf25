/* SPDX-License-Identifier: Apache-2.0 */
/* RFS: target = "IFACE/rx-N", value = the queue's flow table size
 * (rps_flow_cnt), as a decimal number.
 *
 * Receive Flow Steering sends a flow's packets, once RPS has them, to the
 * CPU where the socket reading them last ran; each RX queue's table
 * remembers that CPU for rps_flow_cnt flows, and
 * net.core.rps_sock_flow_entries (a sysctl kind) sizes the global table
 * of sockets. Asked for through the "flow_cnt" of an "rps" entry
 * (settings/rps.c). The kernel keeps a power of two entries and shows
 * that size; the profile asks for powers of two, so a read back matches. */
#include "settings/queue_kind.h"
#include "kernel/queues.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rfs_parse(const char *text, nt_value *out)
{
	char *end;
	memset(out, 0, sizeof(*out));
	if (!text || text[0] < '0' || text[0] > '9')
		return NT_EPARSE;
	unsigned long long v = strtoull(text, &end, 10);
	if (*end || v > UINT32_MAX)
		return NT_EPARSE;
	nt_value_field_set(out, 0, (uint32_t)v);
	return 0;
}

static int rfs_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%u", v->f.v[0]);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static bool rfs_equal(const nt_value *a, const nt_value *b)
{
	return a->f.v[0] == b->f.v[0];
}

static int rfs_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	char ifname[IF_NAMESIZE], q[16];
	bool tx;
	int num;
	long v = 0;
	memset(out, 0, sizeof(*out));
	int r = nt_qk_target(target, ifname, q, sizeof(q), &tx, &num);
	if (r == 0 && tx)
		r = NT_EINVALID;
	if (r == 0)
		r = nt_queue_read_long(ctx, ifname, q, "rps_flow_cnt", &v);
	if (r == 0)
		nt_value_field_set(out, 0, (uint32_t)v);
	return r;
}

static int rfs_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		     const nt_value *v, char *why, size_t whysize)
{
	return nt_qk_check(ctx, t, target, v, NT_QK_NUMBER, why, whysize);
}

static int rfs_apply_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
			  nt_value *got, int *read_err, char *err, size_t errsize)
{
	char ifname[IF_NAMESIZE], q[16];
	bool tx;
	int num;
	long back = 0;
	*read_err = -EIO;
	memset(got, 0, sizeof(*got));
	int r = nt_qk_target(target, ifname, q, sizeof(q), &tx, &num);
	if (r < 0 || tx) {
		snprintf(err, errsize, "'%s' is not an RX queue", target);
		return NT_EINVALID;
	}
	r = nt_queue_write_long(ctx, ifname, q, "rps_flow_cnt", (long)v->f.v[0], &back, read_err, err, errsize);
	if (r == 0 && *read_err == 0)
		nt_value_field_set(got, 0, (uint32_t)back);
	return r;
}

static int rfs_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		     size_t errsize)
{
	nt_value got;
	int rr;
	return rfs_apply_read(ctx, eh, target, v, &got, &rr, err, errsize);
}

const nt_setting_kind nt_setting_rps_flow_cnt = {
	.name = "rps_flow_cnt",
	/* A queue's own flow table, under the link's /sys/class/net in this
	 * namespace. The global socket table it needs,
	 * net.core.rps_sock_flow_entries, is a sysctl of the initial namespace
	 * only, and machine-wide (settings/sysctl.c). */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the queue is a link's of this namespace",
	.parse = rfs_parse,
	.format = rfs_format,
	.equal = rfs_equal,
	.read = rfs_read,
	.check = rfs_check,
	.apply = rfs_apply,
	.apply_read = rfs_apply_read,
	/* With RPS and XPS: after channels (which make the queues anew) and
	 * IRQ affinity. */
	.order = 34,
	/* No notification for a write to a queue's sysfs files (the periodic
	 * check finds one); but a channels change, which the kernel notifies,
	 * makes the driver build its queues anew with empty flow tables. */
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

const nt_setting_module nt_module_rfs = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_rps_flow_cnt, NULL },
};
