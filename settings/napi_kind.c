/* SPDX-License-Identifier: Apache-2.0 */
/* What the kinds of NAPI share: see settings/napi_kind.h. */
#include "settings/napi_kind.h"
#include "kernel/queues.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nt_nk_parse_u64(const char *text, nt_value *out)
{
	char *end;
	memset(out, 0, sizeof(*out));
	if (!text || *text < '0' || *text > '9')
		return NT_EPARSE;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || *end)
		return NT_EPARSE;
	nt_nk_set_u64(out, v);
	return 0;
}

int nt_nk_format_u64(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%llu", (unsigned long long)nt_nk_u64(v));
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

bool nt_nk_equal_u64(const nt_value *a, const nt_value *b)
{
	return nt_nk_u64(a) == nt_nk_u64(b);
}

uint64_t nt_nk_u64(const nt_value *v)
{
	return (uint64_t)v->f.v[1] << 32 | v->f.v[0];
}

void nt_nk_set_u64(nt_value *v, uint64_t x)
{
	nt_value_field_set(v, 0, (uint32_t)x);
	nt_value_field_set(v, 1, (uint32_t)(x >> 32));
}

int nt_nk_target(const char *target, char *ifname, uint32_t *queue, char *rest, size_t restsize)
{
	const char *slash = target ? strchr(target, '/') : NULL;
	if (!slash || (size_t)(slash - target) >= IF_NAMESIZE)
		return NT_EINVALID;
	memcpy(ifname, target, (size_t)(slash - target));
	ifname[slash - target] = '\0';
	const char *d = slash + 1;
	if (!nt_ifname_valid(ifname) || strncmp(d, "rx-", 3) != 0 || d[3] < '0' || d[3] > '9' ||
	    (d[3] == '0' && d[4] >= '0' && d[4] <= '9'))
		return NT_EINVALID;
	char *end;
	errno = 0;
	long n = strtol(d + 3, &end, 10);
	if (errno || n < 0 || n >= NT_QUEUES_MAX || (*end && *end != '/'))
		return NT_EINVALID;
	const char *r = *end ? end + 1 : "";
	if (*end && !*r)
		return NT_EINVALID;
	if (strlen(r) >= restsize)
		return NT_EINVALID;
	snprintf(rest, restsize, "%s", r);
	*queue = (uint32_t)n;
	return 0;
}

int nt_nk_napi(const nt_ctx *ctx, const char *ifname, uint32_t queue, nt_nd_napi *out)
{
	nt_netdev nd;
	long ifindex;
	int r = nt_read_long(ctx, &ifindex, "/sys/class/net/%s/ifindex", ifname);
	if (r < 0)
		return r;
	r = nt_netdev_read(ctx, ifname, (int)ifindex, &nd);
	if (r == 0) {
		const nt_nd_napi *a = nt_netdev_rx_napi(&nd, (int)ifindex, queue);
		if (a)
			*out = *a;
		else
			r = -ENOENT;
	}
	nt_netdev_free(&nd);
	return r;
}

int nt_nk_facts_read(nt_plan_reads *r, const nt_topology *t, const nt_nic *nic, nt_nk_facts *out)
{
	static const nt_netdev none;
	int ntx;
	memset(out, 0, sizeof(*out));
	out->nd = &none;
	out->threaded = -1;
	out->family = -EOPNOTSUPP;
	if (nt_queues_count(&t->ctx, nic->name, &out->nrx, &ntx) < 0)
		out->nrx = -1;
	const nt_host_napi *h = nt_plan_napi(r, t);
	if (!h)
		return -ENOMEM;
	const nt_napi_nic *c = nt_host_napi_nic(h, t, nic);
	if (!c)
		return 0; /* a bond: not read */
	out->threaded = c->dev.threaded;
	out->family = c->family;
	if (out->family < 0)
		return 0;
	out->nd = &h->nd;
	for (size_t i = 0; i < h->nd.nnapis; i++) {
		const nt_nd_napi *a = &h->nd.napis[i];
		if ((int)a->ifindex != nic->ifindex)
			continue;
		out->nnapis++;
		/* napi-set came with the values in napi-get (6.13). */
		out->napi_set |= a->defer_hard_irqs >= 0 && a->gro_flush_timeout >= 0;
		out->napi_threaded |= a->threaded >= 0;
	}
	return 0;
}
