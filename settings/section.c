/* SPDX-License-Identifier: Apache-2.0 */
#include "settings/section.h"
#include "base/suggest.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nt_profile_error(json_t *errors, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_array_append_new(errors, json_pack("{s:s,s:s}", "path", path, "message", msg));
}

void nt_sc_unknown_fields(nt_section_check *c, const json_t *obj, const char *base,
			  const char *const *known)
{
	const char *key;
	json_t *val;
	char path[NT_JSONPATH_MAX];
	json_object_foreach((json_t *)obj, key, val) {
		bool ok = false;
		for (int i = 0; known[i] && !ok; i++)
			ok = strcmp(known[i], key) == 0;
		if (!ok) {
			size_t n = 0;
			while (known[n])
				n++;
			const char *near = nt_suggest(key, known, n);
			snprintf(path, sizeof(path), "%s.%s", base, key);
			if (near)
				nt_sc_error(c, path, "unknown field '%s' (did you mean '%s'?)", key, near);
			else
				nt_sc_error(c, path, "unknown field '%s'", key);
		}
	}
}

const char *nt_sc_str(nt_section_check *c, const json_t *obj, const char *base, const char *field,
		      bool required)
{
	char path[NT_JSONPATH_MAX];
	json_t *x = json_object_get(obj, field);
	snprintf(path, sizeof(path), "%s.%s", base, field);
	if (!x) {
		if (required)
			nt_sc_error(c, path, "'%s' is required", field);
		return NULL;
	}
	if (!json_is_string(x)) {
		nt_sc_error(c, path, "'%s' must be a string", field);
		return NULL;
	}
	return json_string_value(x);
}

bool nt_sc_entry(nt_section_check *c, const char *key, size_t i, const json_t *entry, char *base,
		 size_t size)
{
	snprintf(base, size, "$.%s[%zu]", key, i);
	if (json_is_object(entry))
		return true;
	nt_sc_error(c, base, "must be an object");
	return false;
}

bool nt_iface_is_glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL;
}

bool nt_iface_pattern_valid(const char *p)
{
	size_t n = p ? strlen(p) : 0;
	return n > 0 && n <= 64 && !strchr(p, '/') && (nt_iface_is_glob(p) || nt_ifname_valid(p));
}

bool nt_iface_match(const char *pattern, const char *name)
{
	return fnmatch(pattern, name, 0) == 0;
}

int nt_sc_iface(nt_section_check *c, const char *pattern, const char *path, bool bond)
{
	if (!nt_iface_pattern_valid(pattern)) {
		nt_sc_error(c, path, "'%s' is not an interface name or glob", pattern);
		return 0;
	}
	if (!c->t)
		return 1;
	int n = 0;
	if (bond) {
		for (int i = 0; i < c->t->nbonds; i++)
			n += nt_iface_match(pattern, c->t->bonds[i].name);
	} else {
		for (int i = 0; i < c->t->nnics; i++)
			n += nt_iface_match(pattern, c->t->nics[i].name);
	}
	if (n == 0)
		nt_sc_error(c, path, nt_iface_is_glob(pattern) ? "no %s matches '%s'" : "no such %s '%s'",
			    bond ? "bond" : "interface", pattern);
	return n;
}

void nt_sc_nic_with(nt_section_check *c, const char *iface, const char *path,
		    bool (*has)(const nt_nic *nic), const char *what)
{
	if (nt_sc_iface(c, iface, path, false) <= 0 || !c->t)
		return;
	int with = 0;
	for (int k = 0; k < c->t->nnics; k++)
		with += nt_iface_match(iface, c->t->nics[k].name) && has(&c->t->nics[k]);
	if (with == 0)
		nt_sc_error(c, path, "'%s' has no %s settings", iface, what);
}

void nt_sc_cpulist(nt_section_check *c, const char *list, const char *path, bool must_exist)
{
	nt_cpuset s;
	int r = nt_cpulist_parse(list, &s);
	if (r == 0 && !nt_cpulist_strict(list))
		r = NT_EPARSE;
	if (r < 0) {
		nt_sc_error(c, path, "'%s' is not a cpulist%s", list,
			    r == -ERANGE ? " (CPU number too large)" :
					   " (numbers and ranges like 0-3,8 without spaces or "
					   "leading zeros)");
		return;
	}
	if (!must_exist)
		return;
	if (nt_cpuset_empty(&s)) {
		nt_sc_error(c, path, "the cpulist is empty");
		return;
	}
	if (!c->t)
		return;
	bool have_present = !nt_cpuset_empty(&c->t->cpus_present);
	nt_cpuset off, missing;
	char cl[256];
	nt_cpuset_andnot(&off, &s, &c->t->cpus_online);
	nt_cpuset_zero(&missing);
	if (have_present) {
		nt_cpuset_andnot(&missing, &off, &c->t->cpus_present);
		nt_cpuset_and(&off, &off, &c->t->cpus_present);
	} else {
		missing = off;
		nt_cpuset_zero(&off);
	}
	/* One message per kind of problem, naming the CPUs as a cpulist. */
	char have[256];
	if (!nt_cpuset_empty(&missing) && nt_cpulist_format(&missing, cl, sizeof(cl)) >= 0 &&
	    nt_cpulist_format(have_present ? &c->t->cpus_present : &c->t->cpus_online, have, sizeof(have)) >= 0)
		nt_sc_error(c, path, "CPU %s do%s not exist: this host's CPUs are %s", cl,
			    nt_cpuset_count(&missing) == 1 ? "es" : "", have);
	if (!nt_cpuset_empty(&off) && nt_cpulist_format(&off, cl, sizeof(cl)) >= 0)
		nt_sc_error(c, path, "CPU %s %s offline", cl, nt_cpuset_count(&off) == 1 ? "is" : "are");
}

/* FNV-1a of TARGET, mixed with the kind (one table holds every kind). */
static uint32_t desire_hash(const nt_setting_kind *k, const char *target)
{
	uint32_t h = 2166136261u ^ (uint32_t)((uintptr_t)k >> 4);
	for (const unsigned char *c = (const unsigned char *)target; *c; c++)
		h = (h ^ *c) * 16777619u;
	return h;
}

/* The slot of (K, TARGET) in P's index: its entry's, or the empty one where
 * it would go. */
static int desire_slot(const nt_section_plan *p, const nt_setting_kind *k, const char *target)
{
	int mask = p->index_cap - 1;
	int slot = (int)(desire_hash(k, target) & (uint32_t)mask);
	while (p->index[slot]) {
		const nt_desired *d = &p->v[p->index[slot] - 1];
		if (d->kind == k && strcmp(d->target, target) == 0)
			break;
		slot = (slot + 1) & mask;
	}
	return slot;
}

const nt_desired *nt_desire_get(const nt_section_plan *p, const nt_setting_kind *k, const char *target)
{
	if (!p->index)
		return NULL;
	int slot = desire_slot(p, k, target);
	return p->index[slot] ? &p->v[p->index[slot] - 1] : NULL;
}

/* Room in the index for one more entry, kept at most half full. */
static int desire_index_reserve(nt_section_plan *p)
{
	if (p->index && (p->n + 1) * 2 <= p->index_cap)
		return 0;
	int cap = p->index_cap ? p->index_cap * 2 : 64;
	while ((p->n + 1) * 2 > cap)
		cap *= 2;
	int *old = p->index;
	p->index = calloc((size_t)cap, sizeof(*p->index));
	if (!p->index) {
		p->index = old;
		return -ENOMEM;
	}
	free(old);
	p->index_cap = cap;
	for (int i = 0; i < p->n; i++)
		p->index[desire_slot(p, p->v[i].kind, p->v[i].target)] = i + 1;
	return 0;
}

void nt_desire_index_free(nt_section_plan *p)
{
	free(p->index);
	p->index = NULL;
	p->index_cap = 0;
}

int nt_desire_put(nt_section_plan *p, const nt_setting_kind *k, const char *target,
		  const char *iface, const nt_value *v, const char *path)
{
	nt_desired *x = NULL;
	char key[NT_TARGET_MAX];
	/* Compared as stored: a longer target is cut to the field's size. */
	snprintf(key, sizeof(key), "%s", target);
	if (desire_index_reserve(p) < 0)
		return -ENOMEM;
	int slot = desire_slot(p, k, key);
	/* A later entry for the same target replaces an earlier one. */
	if (p->index[slot])
		x = &p->v[p->index[slot] - 1];
	if (!x) {
		if (p->n == p->cap) {
			int cap = p->cap ? p->cap * 2 : 32;
			nt_desired *nv = realloc(p->v, sizeof(*nv) * (size_t)cap);
			if (!nv)
				return -ENOMEM;
			p->v = nv;
			p->cap = cap;
		}
		x = &p->v[p->n++];
		memset(x, 0, sizeof(*x));
		x->kind = k;
		snprintf(x->target, sizeof(x->target), "%s", key);
		p->index[slot] = p->n;
	}
	x->value = *v;
	snprintf(x->interface, sizeof(x->interface), "%s", iface ? iface : "");
	snprintf(x->path, sizeof(x->path), "%s", path);
	return 0;
}

void nt_desire_warn(nt_section_plan *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_array_append_new(p->warnings, json_string(msg));
}

const nt_host_napi *nt_plan_napi(nt_plan_reads *r, const nt_topology *t)
{
	if (!r || !t)
		return NULL;
	if (!r->napi_done) {
		r->napi_done = true;
		r->napi_r = nt_host_napi_read(t, NULL, NT_NAPI_NO_TASKS, &r->napi);
	}
	return r->napi_r == 0 ? &r->napi : NULL;
}

void nt_plan_reads_free(nt_plan_reads *r)
{
	if (!r)
		return;
	if (r->napi_done)
		nt_host_napi_free(&r->napi);
	memset(r, 0, sizeof(*r));
}

int nt_plan_queue_irq(nt_plan_reads *r, const nt_topology *t, const nt_nic *nic, int queue, bool tx)
{
	return nt_host_napi_queue_irq(nt_plan_napi(r, t), t, nic, queue, tx, NULL);
}
