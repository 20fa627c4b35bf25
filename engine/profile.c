/* SPDX-License-Identifier: Apache-2.0 */
#include "engine/profile.h"
#include "base/suggest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool nt_profile_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n > NT_PROFILE_NAME_MAX)
		return false;
	/* A path segment a client normalises away: GET /v1/profiles/.. would
	 * reach /v1/, so such a profile could never be read or deleted. */
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static const char *type_wanted(json_type type)
{
	switch (type) {
	case JSON_ARRAY:
		return "an array";
	case JSON_OBJECT:
		return "an object";
	default:
		return "a string";
	}
}

int nt_profile_validate(const nt_topology *t, const json_t *profile, json_t *errors)
{
	nt_plan_reads reads = { .napi_done = false };
	int r = nt_profile_validate_in(t, profile, errors, &reads);
	nt_plan_reads_free(&reads);
	return r;
}

int nt_profile_validate_in(const nt_topology *t, const json_t *profile, json_t *errors, nt_plan_reads *reads)
{
	nt_section_check c = { .t = t, .profile = profile, .errors = errors, .reads = reads };
	size_t before = json_array_size(errors);
	char path[NT_JSONPATH_MAX];
	const char *key;
	json_t *x;

	if (!json_is_object(profile)) {
		nt_profile_error(errors, "$", "a profile must be a JSON object");
		return NT_EINVALID;
	}
	json_object_foreach((json_t *)profile, key, x) {
		if (strcmp(key, "name") == 0 || strcmp(key, "description") == 0 || nt_section_find(key))
			continue;
		snprintf(path, sizeof(path), "$.%s", key);
		/* The fields a profile has: name, description and every
		 * section of the registry. */
		const char *words[64] = { "name", "description" };
		size_t nw = 2;
		for (int m = 0; nt_setting_modules[m]; m++) {
			const nt_profile_section *const *s = nt_setting_modules[m]->sections;
			for (int i = 0; s && s[i] && nw < sizeof(words) / sizeof(words[0]); i++)
				words[nw++] = s[i]->key;
		}
		const char *near = nt_suggest(key, words, nw);
		if (near)
			nt_profile_error(errors, path, "unknown field '%s' (did you mean '%s'?)", key, near);
		else
			nt_profile_error(errors, path, "unknown field '%s'", key);
	}
	const char *name = nt_sc_str(&c, profile, "$", "name", true);
	if (name && !nt_profile_name_valid(name))
		nt_profile_error(errors, "$.name", "'%s' is not a valid name ([A-Za-z0-9._-], 1 to 64, not . or ..)", name);
	nt_sc_str(&c, profile, "$", "description", false);

	/* Sections in the registry's order, so errors come in a stable order. */
	for (int m = 0; nt_setting_modules[m]; m++) {
		const nt_profile_section *const *s = nt_setting_modules[m]->sections;
		for (int i = 0; s && s[i]; i++) {
			if (!(x = json_object_get(profile, s[i]->key)))
				continue;
			snprintf(path, sizeof(path), "$.%s", s[i]->key);
			if (json_typeof(x) != s[i]->type) {
				if (s[i]->type == JSON_STRING)
					nt_profile_error(errors, path, "'%s' must be a string", s[i]->key);
				else
					nt_profile_error(errors, path, "must be %s", type_wanted(s[i]->type));
				continue;
			}
			s[i]->validate(&c, x);
		}
	}
	return json_array_size(errors) > before ? NT_EINVALID : 0;
}

/* Apply order: by kind; a NIC's queue settings (kinds of one order) stay
 * together, NICs in the order they were first asked for, and within a NIC
 * by suborder. Ties keep the sections' order. A NIC's steps of kinds that
 * name its queues go before a step of the same plan that lowers its queue
 * count (settings/setting.h: lowers_queues, names_queues), in their
 * kinds' order. */
typedef struct sort_item {
	const nt_desired *d;
	int group; /* first position of (order, interface) */
	int pos;
	int order; /* the kind's, or the lowering step's when EARLY */
	bool early; /* before a step that lowers its NIC's queue count */
} sort_item;

static int cmp_item(const void *a, const void *b)
{
	const sort_item *x = a, *y = b;
	const nt_setting_kind *kx = x->d->kind, *ky = y->d->kind;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if (x->early != y->early)
		return x->early ? -1 : 1;
	if (kx->order != ky->order)
		return kx->order < ky->order ? -1 : 1;
	if (kx->reset_warning && ky->reset_warning) {
		if (x->group != y->group)
			return x->group < y->group ? -1 : 1;
		if (kx->suborder != ky->suborder)
			return kx->suborder < ky->suborder ? -1 : 1;
	}
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The steps of P that name a NIC's queues, moved before a step that
 * lowers that NIC's queue count: a few per NIC, looked up per lowering
 * step, of which a plan has at most one per NIC. */
static void place_early(const nt_section_plan *p, sort_item *items)
{
	for (int i = 0; i < p->n; i++) {
		const nt_desired *low = &p->v[i];
		if (!low->kind->lowers_queues || !low->interface[0] || !low->kind->lowers_queues(p->t, low))
			continue;
		for (int j = 0; j < p->n; j++) {
			const nt_desired *d = &p->v[j];
			if (!d->kind->names_queues || d->kind->order <= low->kind->order ||
			    strcmp(d->interface, low->interface) != 0)
				continue;
			items[j].order = low->kind->order;
			items[j].early = true;
		}
	}
}

static int sort_desired(nt_section_plan *p)
{
	sort_item *items = calloc((size_t)p->n + 1, sizeof(*items));
	nt_desired *sorted = malloc(sizeof(nt_desired) * ((size_t)p->n + 1));
	if (!items || !sorted) {
		free(items);
		free(sorted);
		return -ENOMEM;
	}
	for (int i = 0; i < p->n; i++) {
		items[i].d = &p->v[i];
		items[i].pos = i;
		items[i].group = i;
		items[i].order = p->v[i].kind->order;
		/* Only NIC queue kinds are grouped; a few per NIC, so a look back
		 * over the list costs little next to the IRQs. */
		if (!p->v[i].kind->reset_warning)
			continue;
		for (int j = 0; j < i; j++) {
			if (p->v[j].kind->reset_warning && p->v[j].kind->order == p->v[i].kind->order &&
			    strcmp(p->v[j].interface, p->v[i].interface) == 0) {
				items[i].group = items[j].group;
				break;
			}
		}
	}
	place_early(p, items);
	qsort(items, (size_t)p->n, sizeof(*items), cmp_item);
	for (int i = 0; i < p->n; i++)
		sorted[i] = *items[i].d;
	free(p->v);
	free(items);
	p->v = sorted;
	p->cap = p->n + 1;
	return 0;
}

int nt_profile_desired_ex(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
			  json_t *warnings, json_t *reserved)
{
	nt_plan_reads reads = { .napi_done = false };
	int r = nt_profile_desired_in(t, profile, out, n, warnings, reserved, &reads);
	nt_plan_reads_free(&reads);
	return r;
}

int nt_profile_desired_in(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
			  json_t *warnings, json_t *reserved, nt_plan_reads *reads)
{
	nt_section_plan p = { .t = t, .profile = profile, .warnings = warnings, .reserved = reserved,
			      .reads = reads };
	int r = 0;

	*out = NULL;
	*n = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int m = 0; nt_setting_modules[m]; m++) {
			const nt_profile_section *const *s = nt_setting_modules[m]->sections;
			for (int i = 0; s && s[i]; i++) {
				json_t *x = json_object_get(profile, s[i]->key);
				if (s[i]->pass != pass || (!x && !s[i]->always))
					continue;
				if ((r = s[i]->desire(&p, x)) < 0)
					goto fail;
			}
		}
	}
	/* The index points into V by position: of no use once it is sorted. */
	nt_desire_index_free(&p);
	if ((r = sort_desired(&p)) < 0)
		goto fail;
	*out = p.v;
	*n = p.n;
	return 0;
fail:
	nt_desire_index_free(&p);
	free(p.v);
	return r;
}

int nt_profile_desired(const nt_topology *t, const json_t *profile, nt_desired **out, int *n,
		       json_t *warnings)
{
	return nt_profile_desired_ex(t, profile, out, n, warnings, NULL);
}
