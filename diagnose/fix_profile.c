/* SPDX-License-Identifier: Apache-2.0 */
/* One profile made of the fixes of a diagnosis (nt_diagnose_fix_profile). */
#include "diagnose/diagnose_int.h"

#include <errno.h>

/* Append the entries of FIX[KEY] to OUT[KEY], skipping interfaces already
 * present: two findings about one NIC must not ask for two placements.
 * MERGE: an entry for an interface already present adds its keys to that
 * entry instead (rings: one finding's ring size, another's buffer length). */
static int merge_entries(json_t *out, const json_t *fix, const char *key, bool merge)
{
	json_t *src = json_object_get(fix, key), *dst = json_object_get(out, key);
	size_t i, k;
	json_t *e, *d;

	if (!json_is_array(src))
		return 0;
	json_array_foreach(src, i, e) {
		const char *ifname = json_string_value(json_object_get(e, "interface"));
		json_t *dup = NULL;
		json_array_foreach(dst, k, d)
			if (ifname && json_equal(json_object_get(d, "interface"), json_object_get(e, "interface")))
				dup = d;
		if (dup && merge && json_object_update_missing(dup, e) < 0)
			return -ENOMEM;
		if (!dup && json_array_append(dst, e) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Append the entries of FIX["napi"] to OUT["napi"], skipping one already
 * there for the same interface and queues: napi[] fixes pin the threads
 * of different queues of one NIC, each its own entry. */
static int merge_napi(json_t *out, const json_t *fix)
{
	json_t *src = json_object_get(fix, "napi"), *dst = json_object_get(out, "napi");
	size_t i, k;
	json_t *e, *d;

	if (!json_is_array(src))
		return 0;
	json_array_foreach(src, i, e) {
		bool dup = false;
		json_array_foreach(dst, k, d)
			if (json_equal(json_object_get(d, "interface"), json_object_get(e, "interface")) &&
			    json_equal(json_object_get(d, "queues"), json_object_get(e, "queues")))
				dup = true;
		if (!dup && json_array_append(dst, e) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Append the entries of FIX["rss"] to OUT["rss"], skipping one already
 * there for the same interface and context (absent: the NIC's own
 * table): a NIC's table and each of its contexts are entries of their
 * own, and two findings about one must not ask for two tables. */
static int merge_rss(json_t *out, const json_t *fix)
{
	json_t *src = json_object_get(fix, "rss"), *dst = json_object_get(out, "rss");
	size_t i, k;
	json_t *e, *d;

	if (!json_is_array(src))
		return 0;
	json_array_foreach(src, i, e) {
		bool dup = false;
		json_int_t cx = json_integer_value(json_object_get(e, "context"));
		json_array_foreach(dst, k, d)
			if (json_equal(json_object_get(d, "interface"), json_object_get(e, "interface")) &&
			    json_integer_value(json_object_get(d, "context")) == cx)
				dup = true;
		if (!dup && json_array_append(dst, e) < 0)
			return -ENOMEM;
	}
	return 0;
}

json_t *nt_diagnose_fix_profile(const json_t *diagnosis, const char *name)
{
	json_t *p = json_pack("{s:s, s:s, s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:[], s:{}}", "name", name,
			      "description", "fixes for the findings of nettune diagnose", "irq_affinity", "rings",
			      "coalesce", "bonds", "rps", "xps", "rss", "napi", "sysctl");
	size_t i;
	json_t *f;

	if (!p)
		return NULL;
	json_array_foreach(json_object_get(diagnosis, "findings"), i, f) {
		json_t *fix = json_object_get(f, "fix");
		if (!json_is_object(fix))
			continue;
		if (merge_entries(p, fix, "irq_affinity", false) < 0 || merge_entries(p, fix, "rings", true) < 0 ||
		    merge_entries(p, fix, "coalesce", true) < 0 ||
		    merge_entries(p, fix, "bonds", false) < 0 || merge_entries(p, fix, "rps", false) < 0 ||
		    merge_entries(p, fix, "xps", false) < 0 || merge_rss(p, fix) < 0 || merge_napi(p, fix) < 0)
			goto fail;
		json_t *sys = json_object_get(fix, "sysctl");
		if (json_is_object(sys) && json_object_update_missing(json_object_get(p, "sysctl"), sys) < 0)
			goto fail;
		json_t *ib = json_object_get(fix, "irqbalance");
		if (json_is_string(ib) && !json_object_get(p, "irqbalance"))
			json_object_set(p, "irqbalance", ib);
	}
	/* A profile lists only what it changes. */
	static const char *const keys[] = { "irq_affinity", "rings", "coalesce", "bonds", "rps", "xps", "rss", "napi" };
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (json_array_size(json_object_get(p, keys[k])) == 0)
			json_object_del(p, keys[k]);
	if (json_object_size(json_object_get(p, "sysctl")) == 0)
		json_object_del(p, "sysctl");
	return p;
fail:
	json_decref(p);
	return NULL;
}
