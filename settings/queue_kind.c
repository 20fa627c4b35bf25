/* SPDX-License-Identifier: Apache-2.0 */
/* What the kinds of a NIC's queue files share: see settings/queue_kind.h. */
#include "settings/queue_kind.h"
#include "kernel/queues.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nt_qk_target(const char *target, char *ifname, char *q, size_t qsize, bool *tx, int *num)
{
	const char *slash = target ? strchr(target, '/') : NULL;
	if (!slash || (size_t)(slash - target) >= IF_NAMESIZE)
		return NT_EINVALID;
	memcpy(ifname, target, (size_t)(slash - target));
	ifname[slash - target] = '\0';
	const char *d = slash + 1;
	if (!nt_ifname_valid(ifname) || (strncmp(d, "rx-", 3) != 0 && strncmp(d, "tx-", 3) != 0))
		return NT_EINVALID;
	char *end;
	if (d[3] < '0' || d[3] > '9' || (d[3] == '0' && d[4]))
		return NT_EINVALID;
	long n = strtol(d + 3, &end, 10);
	if (*end || n < 0 || n >= NT_QUEUES_MAX || strlen(d) >= qsize)
		return NT_EINVALID;
	snprintf(q, qsize, "%s", d);
	*tx = d[0] == 't';
	*num = (int)n;
	return 0;
}

int nt_qk_parse_set(const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	return text && nt_cpulist_parse(text, &out->cpus) == 0 ? 0 : NT_EPARSE;
}

int nt_qk_format_set(const nt_value *v, char *out, size_t size)
{
	return nt_cpulist_format(&v->cpus, out, size) < 0 ? -ENOSPC : 0;
}

bool nt_qk_equal_set(const nt_value *a, const nt_value *b)
{
	return nt_cpuset_equal(&a->cpus, &b->cpus);
}

int nt_qk_read_set(const nt_ctx *ctx, const char *target, const char *file, nt_value *out)
{
	char ifname[IF_NAMESIZE], q[16];
	bool tx;
	int num;
	memset(out, 0, sizeof(*out));
	int r = nt_qk_target(target, ifname, q, sizeof(q), &tx, &num);
	return r < 0 ? r : nt_queue_read_mask(ctx, ifname, q, file, &out->cpus, NULL);
}

int nt_qk_apply_set(const nt_ctx *ctx, const char *target, const char *file, const nt_value *v,
		    nt_value *got, int *read_err, char *err, size_t errsize, const char *why_differs)
{
	char ifname[IF_NAMESIZE], q[16], a[NT_VALUE_MAX], b[NT_VALUE_MAX];
	bool tx;
	int num;
	*read_err = -EIO;
	memset(got, 0, sizeof(*got));
	int r = nt_qk_target(target, ifname, q, sizeof(q), &tx, &num);
	if (r < 0) {
		snprintf(err, errsize, "'%s' is not a queue", target);
		return r;
	}
	r = nt_queue_write_mask(ctx, ifname, q, file, &v->cpus, &got->cpus, read_err, err, errsize);
	if (r == -EINVAL && why_differs && !nt_cpuset_empty(&v->cpus)) {
		nt_qk_format_set(v, a, sizeof(a));
		snprintf(err, errsize, "%s %s: the kernel refused '%s': %s", target, file, a, why_differs);
	}
	if (r < 0 || *read_err < 0 || nt_cpuset_equal(&got->cpus, &v->cpus))
		return r;
	/* Read every write back: the kernel may keep part of it. */
	nt_qk_format_set(got, a, sizeof(a));
	nt_qk_format_set(v, b, sizeof(b));
	snprintf(err, errsize, "%s %s: the kernel kept '%s' of '%s'%s%s", target, file, a, b,
		 why_differs ? ": " : "", why_differs ? why_differs : "");
	return NT_ECONFLICT;
}

int nt_qk_check(const nt_ctx *ctx, const nt_topology *t, const char *target, const nt_value *v,
		nt_qk_values what, char *why, size_t whysize)
{
	char ifname[IF_NAMESIZE], q[16], list[NT_VALUE_MAX];
	bool tx;
	int num, nrx, ntx;
	if (nt_qk_target(target, ifname, q, sizeof(q), &tx, &num) < 0) {
		snprintf(why, whysize, "'%s' is not a queue (IFACE/rx-N or IFACE/tx-N)", target);
		return NT_EINVALID;
	}
	int r = nt_queues_count(ctx, ifname, &nrx, &ntx);
	if (r < 0) {
		snprintf(why, whysize, "%s: its queues cannot be read: %s", ifname, nt_strerror(r));
		return NT_EINVALID;
	}
	if (num >= (tx ? ntx : nrx)) {
		snprintf(why, whysize, "%s has %d %s queues: no %s", ifname, tx ? ntx : nrx, tx ? "TX" : "RX", q);
		return NT_EINVALID;
	}
	if (what == NT_QK_CPUS && t && !nt_cpuset_subset(&v->cpus, &t->cpus_online)) {
		nt_cpuset off;
		nt_cpuset_andnot(&off, &v->cpus, &t->cpus_online);
		nt_cpulist_format(&off, list, sizeof(list));
		snprintf(why, whysize, "%s: CPU %s %s not online", target, list,
			 nt_cpuset_count(&off) == 1 ? "is" : "are");
		return NT_EINVALID;
	}
	if (what == NT_QK_RXQS && nt_cpuset_last(&v->cpus) >= nrx) {
		snprintf(why, whysize, "%s: %s has %d RX queues: no rx-%d", target, ifname, nrx,
			 nt_cpuset_last(&v->cpus));
		return NT_EINVALID;
	}
	return 0;
}

void nt_qk_validate_queues(nt_section_check *c, const json_t *entry, const char *base, const char *iface,
			   bool tx)
{
	char path[NT_JSONPATH_MAX];
	const char *list = nt_sc_str(c, entry, base, "queues", false);
	nt_cpuset s;
	int nrx, ntx;
	if (!list)
		return;
	snprintf(path, sizeof(path), "%s.queues", base);
	if (nt_cpulist_parse(list, &s) < 0 || !nt_cpulist_strict(list) || nt_cpuset_empty(&s)) {
		nt_sc_error(c, path, "'%s' is not a list of queue numbers (like 0-3,6)", list);
		return;
	}
	if (!c->t || !iface || nt_iface_is_glob(iface) || !nt_ifname_valid(iface) || !nt_topology_nic(c->t, iface))
		return;
	if (nt_queues_count(&c->t->ctx, iface, &nrx, &ntx) < 0)
		return;
	int n = tx ? ntx : nrx;
	if (nt_cpuset_last(&s) >= n)
		nt_sc_error(c, path, "%s has %d %s queues (0-%d): queue %d is beyond them", iface, n,
			    tx ? "TX" : "RX", n - 1, nt_cpuset_last(&s));
}

void nt_qk_queues(const json_t *entry, int n, nt_cpuset *out)
{
	const char *list = json_string_value(json_object_get(entry, "queues"));
	nt_cpuset_zero(out);
	if (list && nt_cpulist_parse(list, out) == 0)
		return;
	for (int i = 0; i < n; i++)
		nt_cpuset_set(out, i);
}
