/* SPDX-License-Identifier: Apache-2.0 */
/* Values of the kinds that are one ethtool settings group: see
 * settings/group_kind.h. */
#include "settings/group_kind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_flag(const nt_ethtool_group *g, int i)
{
	return g->fields[i].width == NT_ETHTOOL_U8;
}

static int field_of(const nt_ethtool_group *g, const char *name, size_t len)
{
	for (int i = 0; i < g->nfields && i < NT_VALUE_FIELDS; i++)
		if (strlen(g->fields[i].name) == len && strncmp(g->fields[i].name, name, len) == 0)
			return i;
	return -1;
}

int nt_gk_parse(const nt_ethtool_group *g, const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	if (!text)
		return NT_EPARSE;
	for (const char *p = text; *p;) {
		const char *eq = strchr(p, '='), *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (!eq || eq > end)
			return NT_EPARSE;
		int i = field_of(g, p, (size_t)(eq - p));
		if (i < 0 || (out->f.present & (1u << i)))
			return NT_EPARSE;
		const char *v = eq + 1;
		size_t vlen = (size_t)(end - v);
		if (is_flag(g, i)) {
			if (vlen == 2 && strncmp(v, "on", 2) == 0)
				nt_value_field_set(out, i, 1);
			else if (vlen == 3 && strncmp(v, "off", 3) == 0)
				nt_value_field_set(out, i, 0);
			else
				return NT_EPARSE;
		} else {
			char *e;
			if (vlen == 0 || v[0] < '0' || v[0] > '9')
				return NT_EPARSE;
			unsigned long long x = strtoull(v, &e, 10);
			if (e != end || x > UINT32_MAX)
				return NT_EPARSE;
			nt_value_field_set(out, i, (uint32_t)x);
		}
		if (*end && !end[1])
			return NT_EPARSE; /* a trailing comma */
		p = *end ? end + 1 : end;
	}
	return 0;
}

int nt_gk_format(const nt_ethtool_group *g, const nt_value *v, char *out, size_t size)
{
	size_t len = 0;
	if (size == 0)
		return -ENOSPC;
	out[0] = '\0';
	for (int i = 0; i < g->nfields && i < NT_VALUE_FIELDS; i++) {
		if (!(v->f.present & (1u << i)))
			continue;
		const char *name = g->fields[i].name, *sep = len ? "," : "";
		int w = is_flag(g, i) ? snprintf(out + len, size - len, "%s%s=%s", sep, name, v->f.v[i] ? "on" : "off")
				      : snprintf(out + len, size - len, "%s%s=%u", sep, name, v->f.v[i]);
		if (w < 0 || (size_t)w >= size - len)
			return -ENOSPC;
		len += (size_t)w;
	}
	return 0;
}

bool nt_gk_equal(const nt_ethtool_group *g, const nt_value *a, const nt_value *b)
{
	if (a->f.present != b->f.present)
		return false;
	for (int i = 0; i < g->nfields && i < NT_VALUE_FIELDS; i++)
		if ((a->f.present & (1u << i)) &&
		    (is_flag(g, i) ? !a->f.v[i] != !b->f.v[i] : a->f.v[i] != b->f.v[i]))
			return false;
	return true;
}

int nt_gk_compose(const nt_value *before, const nt_value *wanted, nt_value *out)
{
	*out = *before;
	for (int i = 0; i < NT_VALUE_FIELDS; i++)
		if (wanted->f.present & (1u << i))
			nt_value_field_set(out, i, wanted->f.v[i]);
	return 0;
}

int nt_gk_read(nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname, bool all,
	       nt_value *out)
{
	nt_ethtool_values got;
	memset(out, 0, sizeof(*out));
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	int r = nt_ethtool_get_group(h, ctx, g, ifname, &got);
	if (r < 0)
		return r;
	for (int i = 0; i < g->nfields && i < NT_VALUE_FIELDS; i++)
		if (all || (got.present & (1u << i)))
			nt_value_field_set(out, i, is_flag(g, i) ? !!got.v[i] : got.v[i]);
	return 0;
}

int nt_gk_apply(nt_ethtool *h, const nt_ctx *ctx, const nt_ethtool_group *g, const char *ifname,
		const nt_value *v, char *err, size_t errsize)
{
	nt_ethtool_values want = { .present = v->f.present };
	char kerr[200] = "";
	int r = NT_EINVALID;

	for (int i = 0; i < g->nfields && i < NT_VALUE_FIELDS; i++)
		want.v[i] = is_flag(g, i) ? !!v->f.v[i] : v->f.v[i];
	if (nt_ifname_valid(ifname))
		r = nt_ethtool_set_group(h, ctx, g, ifname, &want, kerr, sizeof(kerr));
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s %s: %s%s%s", ifname, g->section, nt_strerror(r), kerr[0] ? ": " : "", kerr);
	return r;
}

int nt_gk_desire(nt_section_plan *p, const nt_setting_kind *k, const nt_ethtool_group *g, const char *pattern,
		 const nt_value *v, const char *path, const char *what)
{
	for (int i = 0; i < p->t->nnics; i++) {
		const nt_nic *nic = &p->t->nics[i];
		nt_value cur;
		if (!nt_iface_match(pattern, nic->name))
			continue;
		if (nt_iface_is_glob(pattern) && nt_gk_read(NULL, &p->t->ctx, g, nic->name, false, &cur) == -EOPNOTSUPP) {
			nt_desire_warn(p, "%s: no %s settings; left out", nic->name, what);
			continue;
		}
		int r = nt_desire_put(p, k, nic->name, nic->name, v, path);
		if (r < 0)
			return r;
	}
	return 0;
}

json_t *nt_gk_json(const nt_ethtool_group *g, const nt_value *v)
{
	json_t *o = json_object();
	for (int i = 0; o && i < g->nfields && i < NT_VALUE_FIELDS; i++)
		if ((v->f.present & (1u << i)) &&
		    json_object_set_new(o, g->fields[i].name,
					is_flag(g, i) ? json_boolean(v->f.v[i]) : json_integer(v->f.v[i])) < 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

void nt_gk_kernel_of(const nt_ctx *ctx, nt_ethtool *eh, char *release, size_t size, bool *netlink)
{
	nt_ethtool *tmp = NULL;
	if (nt_read_str(ctx, release, size, "/proc/sys/kernel/osrelease") < 0)
		release[0] = '\0';
	*netlink = true;
	if (!eh && nt_ethtool_open(ctx, &tmp) == 0)
		eh = tmp;
	if (eh)
		*netlink = nt_ethtool_backend_of(eh) != NT_ETHTOOL_IOCTL;
	nt_ethtool_close(tmp);
}
