/* SPDX-License-Identifier: Apache-2.0 */
/* The TCP buffer finding (tcp-buffers-small): socket buffer maxima below the
 * bandwidth-delay product of the fastest link that is up, at the RTT of the
 * options. */
#include "diagnose/diagnose_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const nt_nic *diag_nic(const nt_topology *t, const char *name)
{
	for (int i = 0; i < t->nnics; i++)
		if (strcmp(t->nics[i].name, name) == 0)
			return &t->nics[i];
	return NULL;
}

const char *diag_sysctl(const nt_topology *t, const char *key)
{
	for (int i = 0; i < t->nsysctls; i++)
		if (t->sysctls[i].present && t->sysctls[i].key && strcmp(t->sysctls[i].key, key) == 0)
			return t->sysctls[i].value;
	return NULL;
}

static bool nic_is_up(const nt_nic *n)
{
	return strcmp(n->operstate, "up") == 0;
}

/* Speed of a bond: the sum of its slaves that are up, except active-backup
 * and broadcast where one slave's worth is what a flow can use. */
static long bond_speed(const nt_topology *t, const nt_bond *b)
{
	long sum = 0, max = 0;
	for (int s = 0; s < b->nslaves; s++) {
		const nt_nic *n = diag_nic(t, b->slaves[s]);
		if (!n || !nic_is_up(n) || n->speed_mbps <= 0)
			continue;
		sum += n->speed_mbps;
		if (n->speed_mbps > max)
			max = n->speed_mbps;
	}
	bool one_at_a_time = strncmp(b->mode, "active-backup", 13) == 0 ||
		strncmp(b->mode, "broadcast", 9) == 0 ||
		(!b->mode[0] && (b->mode_num == 1 || b->mode_num == 3));
	return one_at_a_time ? max : sum;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return NT_EPARSE;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end)
		return NT_EPARSE;
	*out = v;
	return 0;
}

/* "min default max" of tcp_rmem / tcp_wmem */
static int parse_triple(const char *s, uint64_t v[3])
{
	unsigned long long a, b, c;
	char tail;
	if (sscanf(s, "%llu %llu %llu %c", &a, &b, &c, &tail) != 3)
		return NT_EPARSE;
	v[0] = a;
	v[1] = b;
	v[2] = c;
	return 0;
}

static uint64_t pow2_at_least(uint64_t x)
{
	uint64_t p = 1;
	while (p < x && p < (UINT64_C(1) << 62))
		p <<= 1;
	return p;
}

/* A TCP connection cannot have more bytes in flight than its socket buffer,
 * so a buffer maximum below the bandwidth-delay product caps one stream
 * below line rate (the 100G report raised them to 16 MiB:
 * docs/field-reports.md#tcp-buffers-bdp). */
int diag_check_tcp_buffers(diag *d)
{
	const nt_topology *t = d->t;
	const char *fastest = NULL;
	long speed = 0;
	bool fastest_is_bond = false;

	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *n = &t->nics[i];
		if (diag_nic_is_physical(n) && nic_is_up(n) && n->speed_mbps > speed) {
			speed = n->speed_mbps;
			fastest = n->name;
			fastest_is_bond = false;
		}
	}
	for (int i = 0; i < t->nbonds; i++) {
		const nt_bond *b = &t->bonds[i];
		const nt_nic *bn = diag_nic(t, b->name);
		if (bn && !nic_is_up(bn))
			continue;
		long s = bond_speed(t, b);
		if (s > speed) {
			speed = s;
			fastest = b->name;
			fastest_is_bond = true;
		}
	}
	if (!fastest)
		return 0;

	uint64_t bdp = (uint64_t)speed * 125u * (uint64_t)d->rtt_ms; /* Mbit/s*1e6/8 * ms/1000 */
	uint64_t want = pow2_at_least(bdp);

	static const struct {
		const char *key;
		bool triple;
	} keys[] = {
		{ "net.ipv4.tcp_rmem", true },
		{ "net.ipv4.tcp_wmem", true },
		{ "net.core.rmem_max", false },
		{ "net.core.wmem_max", false },
	};
	int err = -ENOMEM;
	json_t *values = json_object(), *small = json_array(), *sysctl = json_object();
	char list[256] = "";
	size_t off = 0;
	if (!values || !small || !sysctl)
		goto out;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *v = diag_sysctl(t, keys[k].key);
		if (!v)
			continue;
		uint64_t tri[3] = { 0, 0, 0 }, max = 0;
		if (keys[k].triple ? parse_triple(v, tri) : parse_u64(v, &max))
			continue;
		if (keys[k].triple)
			max = tri[2];
		if (json_object_set_new(values, keys[k].key, json_string(v)) < 0)
			goto out;
		if (max >= bdp)
			continue;
		char fixed[96];
		if (keys[k].triple)
			snprintf(fixed, sizeof(fixed), "%" PRIu64 " %" PRIu64 " %" PRIu64, tri[0], tri[1],
				want);
		else
			snprintf(fixed, sizeof(fixed), "%" PRIu64, want);
		if (json_array_append_new(small, json_string(keys[k].key)) < 0 ||
			json_object_set_new(sysctl, keys[k].key, json_string(fixed)) < 0)
			goto out;
		if (off < sizeof(list)) {
			int w = snprintf(list + off, sizeof(list) - off, "%s%s %" PRIu64,
				off ? ", " : "", keys[k].key, max);
			if (w > 0)
				off += (size_t)w;
		}
	}
	err = 0;
	if (json_array_size(small) == 0)
		goto out;

	json_t *ev = json_pack("{s:s, s:b, s:I, s:i, s:I, s:O, s:O}", "interface", fastest, "bond",
		fastest_is_bond, "speed_mbps", (json_int_t)speed, "rtt_ms", d->rtt_ms, "bdp_bytes",
		(json_int_t)bdp, "values", values, "below_bdp", small);
	json_t *fix = json_pack("{s:O}", "sysctl", sysctl);
	if (!fix) {
		json_decref(ev);
		err = -ENOMEM;
		goto out;
	}
	err = diag_add_finding(d, "tcp-buffers-small", SEV_WARNING, "sysctl", ev, fix,
		"TCP buffer maxima are below the bandwidth-delay product of %s (%ld Mbit/s at "
		"%d ms RTT = %" PRIu64 " bytes): %s; one connection cannot fill the link "
		"(see docs/field-reports.md#tcp-buffers-bdp).",
		fastest, speed, d->rtt_ms, bdp, list);
out:
	json_decref(values);
	json_decref(small);
	json_decref(sysctl);
	return err;
}
