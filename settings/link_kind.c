/* SPDX-License-Identifier: Apache-2.0 */
#include "settings/link_kind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nt_lk_parse(const char *text, nt_value *out)
{
	char *end;
	memset(out, 0, sizeof(*out));
	if (!text || *text < '0' || *text > '9')
		return NT_EPARSE;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return NT_EPARSE;
	nt_value_field_set(out, 0, (uint32_t)v);
	return 0;
}

int nt_lk_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%u", v->f.v[0]);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

bool nt_lk_equal(const nt_value *a, const nt_value *b)
{
	return a->f.v[0] == b->f.v[0];
}

int nt_lk_read(const nt_ctx *ctx, const char *target, nt_lk_field f, nt_value *out)
{
	nt_link_params p;
	int r = nt_rtlink_get(ctx, target, &p);
	if (r < 0)
		return r;
	memset(out, 0, sizeof(*out));
	nt_value_field_set(out, 0, f == NT_LK_MTU ? p.mtu : p.txqlen);
	return 0;
}

int nt_lk_apply(const nt_ctx *ctx, const char *target, nt_lk_field f, const nt_value *v, char *err,
		size_t errsize)
{
	char kerr[200] = "";
	int r = f == NT_LK_MTU ? nt_rtlink_set_mtu(ctx, target, v->f.v[0], kerr, sizeof(kerr))
			       : nt_rtlink_set_txqlen(ctx, target, v->f.v[0], kerr, sizeof(kerr));
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s %s %u: %s%s%s", target, f == NT_LK_MTU ? "mtu" : "txqueuelen", v->f.v[0],
			 nt_strerror(r), kerr[0] ? ": " : "", kerr);
	return r;
}

const nt_nic *nt_lk_nic(const nt_topology *t, const char *name)
{
	for (int i = 0; t && i < t->nnics; i++)
		if (strcmp(t->nics[i].name, name) == 0)
			return &t->nics[i];
	return NULL;
}

void nt_lk_validate(nt_section_check *c, const json_t *arr, const char *key, const char *field, long min,
		    long max, nt_lk_entry_check entry_check)
{
	const char *known[] = { "interface", field, NULL };
	size_t i;
	json_t *e;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];

	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, key, i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		json_t *x = json_object_get(e, field);
		snprintf(path, sizeof(path), "%s.%s", base, field);
		bool ok = false;
		if (!x)
			nt_sc_error(c, base, "'%s' is required", field);
		else if (!json_is_integer(x))
			nt_sc_error(c, path, "'%s' must be an integer", field);
		else if (json_integer_value(x) < min || json_integer_value(x) > max)
			nt_sc_error(c, path, "%s %lld is outside %ld..%ld", field, (long long)json_integer_value(x),
				    min, max);
		else
			ok = true;
		if (!iface)
			continue;
		snprintf(path, sizeof(path), "%s.interface", base);
		if (nt_sc_iface(c, iface, path, false) <= 0 || !c->t || !ok || !entry_check)
			continue;
		for (int k = 0; k < c->t->nnics; k++)
			if (nt_iface_match(iface, c->t->nics[k].name))
				entry_check(c, base, &c->t->nics[k], (uint32_t)json_integer_value(x),
					    nt_iface_is_glob(iface));
	}
}
