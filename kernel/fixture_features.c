/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel on a fixture root, offload features: what the kernel's
 * wanted/active split would do (kernel/fixture.h). */
#include "kernel/fixture.h"
#include "kernel/fixture_int.h"
#include "kernel/features.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* ---- features: the "features" object of ROOT/ethtool/IFACE.json ---- */

/* One feature's entry: {"on": B, "fixed": B, "wanted": B, "needs": [...]},
 * or a bare boolean for a changeable feature that is as wanted. */
static int feature_entry(json_t *e, nt_feature *f)
{
	if (json_is_boolean(e)) {
		f->active = f->wanted = json_is_true(e);
		return 0;
	}
	json_t *on = json_object_get(e, "on"), *fixed = json_object_get(e, "fixed"),
	       *wanted = json_object_get(e, "wanted");
	if (!json_is_object(e) || !json_is_boolean(on) || (fixed && !json_is_boolean(fixed)) ||
	    (wanted && !json_is_boolean(wanted)))
		return NT_EPARSE;
	f->active = json_is_true(on);
	f->wanted = wanted ? json_is_true(wanted) : f->active;
	f->fixed = json_is_true(fixed);
	return 0;
}

int nt_fixture_features_get(const nt_ctx *ctx, const char *ifname, nt_features *out)
{
	json_t *root = NULL, *sec = NULL, *e;
	const char *name;
	int r = nt_fx_load(ctx, "features", ifname, &root, &sec);

	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	json_object_foreach(sec, name, e) {
		if (out->n >= NT_FEATURES_MAX) {
			r = NT_EPARSE;
			goto out;
		}
		nt_feature *f = &out->f[out->n];
		if (strlen(name) >= sizeof(f->name) || feature_entry(e, f) < 0) {
			r = NT_EPARSE;
			goto out;
		}
		memcpy(f->name, name, strlen(name) + 1);
		out->n++;
	}
out:
	json_decref(root);
	return r;
}

static bool needs_met(json_t *sec, json_t *e)
{
	json_t *needs = json_is_object(e) ? json_object_get(e, "needs") : NULL, *n;
	size_t i;
	json_array_foreach(needs, i, n) {
		json_t *dep = json_object_get(sec, json_string_value(n));
		if (!dep || !(json_is_boolean(dep) ? json_is_true(dep) : json_is_true(json_object_get(dep, "on"))))
			return false;
	}
	return true;
}

/* Entry E of a changeable feature now shows ON, its wanted state kept. */
static int feature_show(json_t *sec, const char *name, json_t *e, bool on)
{
	if (json_is_boolean(e)) {
		json_t *o = json_pack("{s:b,s:b}", "on", on, "wanted", json_is_true(e));
		return o && json_object_set_new(sec, name, o) == 0 ? 0 : -ENOMEM;
	}
	/* "wanted" defaults to "on": spell it out before "on" moves. */
	if (!json_object_get(e, "wanted") &&
	    json_object_set_new(e, "wanted", json_boolean(json_is_true(json_object_get(e, "on")))) < 0)
		return -ENOMEM;
	return json_object_set_new(e, "on", json_boolean(on)) == 0 ? 0 : -ENOMEM;
}

/* Entry E of NAME in its shortest spelling: "wanted" left out when it is
 * "on" (its default), and an entry that was a bare boolean when the write
 * read the document (WAS_BARE) and is left with "on" alone a bare boolean
 * again. An entry written {"on": B} stays so. */
static int feature_shorten(json_t *sec, const char *name, json_t *e, bool was_bare)
{
	json_t *wanted = json_object_get(e, "wanted");

	if (!json_is_object(e))
		return 0;
	if (wanted && json_equal(wanted, json_object_get(e, "on")) && json_object_del(e, "wanted") < 0)
		return -ENOMEM;
	if (was_bare && json_object_size(e) == 1 && json_is_boolean(json_object_get(e, "on")))
		return json_object_set(sec, name, json_object_get(e, "on")) == 0 ? 0 : -ENOMEM;
	return 0;
}

int nt_fixture_features_set(const nt_ctx *ctx, const char *ifname, const char *name, bool on, char *err,
			    size_t errsize)
{
	json_t *root = NULL, *sec = NULL, *e, *bare = NULL;
	const char *key;
	nt_feature f = { 0 };
	int r = nt_fx_load_edit(ctx, "features", ifname, &root, &sec);

	if (r < 0)
		return r;
	/* The entries spelled as bare booleans, to spell them so again. */
	if (!(bare = json_object())) {
		r = -ENOMEM;
		goto out;
	}
	json_object_foreach(sec, key, e)
		if (json_is_boolean(e) && json_object_set(bare, key, json_true()) < 0) {
			r = -ENOMEM;
			goto out;
		}
	e = json_object_get(sec, name);
	if (!e) {
		nt_fx_set_err(err, errsize, "unrecognized bit name");
		r = -EINVAL;
		goto out;
	}
	if ((r = feature_entry(e, &f)) < 0)
		goto out;
	/* The kernel keeps a fixed feature as it is, and says nothing. */
	if (f.fixed) {
		r = 0;
		goto out;
	}
	if (json_is_boolean(e)) {
		e = json_pack("{s:b,s:b}", "on", on, "wanted", on);
		if (!e || json_object_set_new(sec, name, e) < 0) {
			r = -ENOMEM;
			goto out;
		}
	} else if (json_object_set_new(e, "wanted", json_boolean(on)) < 0) {
		r = -ENOMEM;
		goto out;
	}
	/* netdev_fix_features: a changeable feature is active when wanted and
	 * what it needs is active; a change may ripple, so go round until
	 * nothing moves (at most once per feature). */
	for (size_t pass = 0, moved = 1; moved && pass <= json_object_size(sec); pass++) {
		moved = 0;
		json_object_foreach(sec, key, e) {
			nt_feature g = { 0 };
			if ((r = feature_entry(e, &g)) < 0)
				goto out;
			bool now = g.wanted && needs_met(sec, e);
			if (g.fixed || now == g.active)
				continue;
			if ((r = feature_show(sec, key, json_object_get(sec, key), now)) < 0)
				goto out;
			moved = 1;
		}
	}
	/* Each entry back in its shortest spelling, so that a feature turned
	 * off and on again leaves the document as it was, byte for byte
	 * (a rollback on a fixture root ends with the file it started from). */
	json_object_foreach(sec, key, e) {
		if ((r = feature_shorten(sec, key, e, json_object_get(bare, key) != NULL)) < 0)
			goto out;
	}
	r = nt_fx_save(ctx, ifname, root);
out:
	json_decref(bare);
	json_decref(root);
	return r;
}
