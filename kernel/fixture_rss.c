/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel on a fixture root, RSS: the indirection table and hash
 * fields, written as the kernel would take them (kernel/fixture.h). */
#include "kernel/fixture.h"
#include "kernel/fixture_int.h"
#include "kernel/flows.h"
#include "kernel/rss.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <linux/ethtool.h>

/* ---- RSS: the "rss" object of ROOT/ethtool/IFACE.json ---- */

/* EDIT: for a write, parsed afresh (never the read's memo). */
static int rss_load(const nt_ctx *ctx, const char *ifname, bool edit, json_t **rootp, json_t **rssp)
{
	int r = edit ? nt_fx_load_edit(ctx, "rss", ifname, rootp, rssp) : nt_fx_load(ctx, "rss", ifname, rootp, rssp);
	json_t *indir = r == 0 ? json_object_get(*rssp, "indir") : NULL;
	if (r == 0 && indir && !json_is_array(indir)) {
		json_decref(*rootp);
		return NT_EPARSE;
	}
	return r;
}

static uint32_t rss_rx_rings(json_t *root, json_t *rss)
{
	json_t *x = json_object_get(rss, "rx_rings"), *ch = json_object_get(root, "channels");
	if (json_is_integer(x))
		return (uint32_t)json_integer_value(x);
	return (uint32_t)(json_integer_value(json_object_get(ch, "combined")) +
			  json_integer_value(json_object_get(ch, "rx")));
}

int nt_fixture_rss_get(const nt_ctx *ctx, const char *ifname, nt_rss *out)
{
	json_t *root = NULL, *rss = NULL;
	int r = rss_load(ctx, ifname, false, &root, &rss);
	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	json_t *indir = json_object_get(rss, "indir");
	out->indir_size = (uint32_t)json_array_size(indir);
	out->key_size = (uint32_t)json_integer_value(json_object_get(rss, "key_size"));
	out->hfunc = (uint8_t)json_integer_value(json_object_get(rss, "hfunc"));
	out->input_xfrm = (uint8_t)json_integer_value(json_object_get(rss, "input_xfrm"));
	out->rx_rings = rss_rx_rings(root, rss);
	out->indir = calloc(out->indir_size + 1, sizeof(uint32_t));
	if (!out->indir) {
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < out->indir_size; i++)
		out->indir[i] = (uint32_t)json_integer_value(json_array_get(indir, i));
	for (int f = 0; f < NT_RSS_FLOWS; f++) {
		const char *t = json_string_value(json_object_get(json_object_get(rss, "hash_fields"),
								  nt_rss_flow_names[f]));
		uint64_t bits;
		if (t && nt_rss_fields_parse(t, &bits) == 0)
			nt_rss_fields_format(bits, out->fields[f], sizeof(out->fields[f]));
	}
	r = 0;
out:
	json_decref(root);
	return r;
}

/* INDIR (N entries) as the document's "indir" array in *OUT, checked as
 * ethtool_set_rxfh checks a table, the NIC's or a context's: the device's
 * size (RSS's "indir"), each entry below the RX ring count RINGS
 * (ethtool_copy_validate_indir). 0, -EINVAL (ERR says why) or -ENOMEM. */
static int table_of(json_t *rss, uint32_t rings, const uint32_t *indir, uint32_t n, json_t **out, char *err,
		    size_t errsize)
{
	*out = NULL;
	if (n != json_array_size(json_object_get(rss, "indir"))) {
		nt_fx_set_err(err, errsize, "indirection table size does not match the device's");
		return -EINVAL;
	}
	json_t *arr = json_array();
	if (!arr)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (rings && indir[i] >= rings) {
			nt_fx_set_err(err, errsize, "indirection table entry is beyond the RX rings");
			json_decref(arr);
			return -EINVAL;
		}
		if (json_array_append_new(arr, json_integer(indir[i])) < 0) {
			json_decref(arr);
			return -ENOMEM;
		}
	}
	*out = arr;
	return 0;
}

/* The NIC's own table to INDIR, as ETHTOOL_SRSSH sets it. */
int nt_fixture_rss_set_indir(const nt_ctx *ctx, const char *ifname, const uint32_t *indir, uint32_t n,
			     char *err, size_t errsize)
{
	json_t *root = NULL, *rss = NULL, *arr = NULL;
	int r = rss_load(ctx, ifname, true, &root, &rss);
	if (r < 0)
		return r;
	uint32_t rings = rss_rx_rings(root, rss);
	if ((r = table_of(rss, rings, indir, n, &arr, err, errsize)) < 0)
		goto out;
	/* "configured" is written only while true (absent reads as false),
	 * so a table set and then sent back as the default leaves the
	 * document as it was. */
	bool configured = !nt_rss_indir_is_default(indir, n, rings);
	if (json_object_set(rss, "indir", arr) < 0 ||
	    (configured ? json_object_set_new(rss, "configured", json_true()) < 0
			: (json_object_get(rss, "configured") && json_object_del(rss, "configured") < 0)))
		r = -ENOMEM;
	else
		r = nt_fx_save(ctx, ifname, root);
out:
	json_decref(arr);
	json_decref(root);
	return r;
}

int nt_fixture_rss_set_fields(const nt_ctx *ctx, const char *ifname, int flow, uint64_t data, char *err,
			      size_t errsize)
{
	json_t *root = NULL, *rss = NULL;
	char text[16];
	int r = rss_load(ctx, ifname, true, &root, &rss);
	if (r < 0)
		return r;
	json_t *hf = json_object_get(rss, "hash_fields");
	const char *cur = json_string_value(json_object_get(hf, nt_rss_flow_names[flow]));
	/* A flow type the NIC reports no fields for it does not hash (a
	 * virtio NIC without RSS answers ETHTOOL_GRXFH with none). */
	if (!cur || !cur[0] || data == 0) {
		nt_fx_set_err(err, errsize, "the device does not hash this flow type");
		r = -EINVAL;
		goto out;
	}
	nt_rss_fields_format(data, text, sizeof(text));
	r = json_object_set_new(hf, nt_rss_flow_names[flow], json_string(text)) < 0 ? -ENOMEM
										      : nt_fx_save(ctx, ifname, root);
out:
	json_decref(root);
	return r;
}

/* ---- RSS contexts: the "contexts" array of the "rss" object ---- */

/* The entry of CONTEXTS with id ID, or -1. */
static int context_find(json_t *contexts, uint32_t id)
{
	size_t i;
	json_t *e;
	json_array_foreach(contexts, i, e)
		if (json_integer_value(json_object_get(e, "id")) == (json_int_t)id)
			return (int)i;
	return -1;
}

int nt_fixture_rss_context_get(const nt_ctx *ctx, const char *ifname, uint32_t id, nt_rss *out)
{
	json_t *root = NULL, *rss = NULL;
	int r = rss_load(ctx, ifname, false, &root, &rss);
	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	json_t *contexts = json_object_get(rss, "contexts");
	int at = context_find(contexts, id);
	json_t *indir = at >= 0 ? json_object_get(json_array_get(contexts, (size_t)at), "indir") : NULL;
	if (!json_is_array(contexts)) {
		r = -EOPNOTSUPP;
		goto out;
	}
	if (at < 0) {
		r = -ENOENT;
		goto out;
	}
	out->indir_size = (uint32_t)json_array_size(indir);
	out->key_size = (uint32_t)json_integer_value(json_object_get(rss, "key_size"));
	out->hfunc = (uint8_t)json_integer_value(json_object_get(rss, "hfunc"));
	out->input_xfrm = (uint8_t)json_integer_value(
		json_object_get(json_array_get(contexts, (size_t)at), "input_xfrm"));
	out->rx_rings = rss_rx_rings(root, rss);
	if (!(out->indir = calloc(out->indir_size + 1, sizeof(uint32_t)))) {
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < out->indir_size; i++)
		out->indir[i] = (uint32_t)json_integer_value(json_array_get(indir, i));
out:
	json_decref(root);
	return r;
}

/* Whether a rule of ROOT's "flows" object sends its flows to context ID. */
static bool context_named_by_rule(json_t *root, uint32_t id)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(json_object_get(root, "flows"), "rules"), i, e) {
		nt_flow_rule fr;
		if (nt_flow_rule_parse(json_string_value(json_object_get(e, "rule")), &fr, NULL, 0) == 0 &&
		    fr.context == id)
			return true;
	}
	return false;
}

/* ---- a channel count the RSS state and the flow rules still need ---- */

/* The highest entry of the table INDIR (a JSON array), 0 for none. */
static uint32_t table_max(json_t *indir)
{
	uint32_t max = 0;
	size_t i;
	json_t *x;
	json_array_foreach(indir, i, x)
		if (json_is_integer(x) && json_integer_value(x) > (json_int_t)max)
			max = (uint32_t)json_integer_value(x);
	return max;
}

/* The highest queue of context ID's table in RSS, 0 when there is none. */
static uint32_t context_max(json_t *rss, uint32_t id)
{
	json_t *contexts = json_object_get(rss, "contexts");
	int at = context_find(contexts, id);
	return at < 0 ? 0 : table_max(json_object_get(json_array_get(contexts, (size_t)at), "indir"));
}

int nt_fx_channels_fit(json_t *root, uint32_t rx, char *err, size_t errsize)
{
	json_t *rss = json_object_get(root, "rss"), *contexts = json_object_get(rss, "contexts"), *e;
	char msg[128];
	size_t i;
	/* ethtool_get_max_rxfh_channel: every context's table (the core
	 * tracks them since 6.11), and the NIC's own while a user has set it
	 * (IFF_RXFH_CONFIGURED: until then the driver spreads it over the
	 * channels it has). */
	uint32_t tab = json_is_true(json_object_get(rss, "configured")) ? table_max(json_object_get(rss, "indir")) : 0;
	json_array_foreach(contexts, i, e) {
		uint32_t m = table_max(json_object_get(e, "indir"));
		tab = m > tab ? m : tab;
	}
	if (rx <= tab) {
		snprintf(msg, sizeof(msg), "requested channel counts are too low for existing indirection table (%u)",
			 tab);
		nt_fx_set_err(err, errsize, msg);
		return -EINVAL;
	}
	/* ethtool_get_max_rxnfc_channel: each rule's queue, plus for a rule
	 * into a context the highest queue of its table (6.13; earlier
	 * kernels skipped such rules). */
	uint64_t flows = 0;
	json_array_foreach(json_object_get(json_object_get(root, "flows"), "rules"), i, e) {
		nt_flow_rule fr;
		if (nt_flow_rule_parse(json_string_value(json_object_get(e, "rule")), &fr, NULL, 0) < 0 ||
		    fr.type == NT_FLOW_NONE || fr.drop)
			continue;
		uint64_t q = (uint64_t)fr.queue + (fr.context ? context_max(rss, fr.context) : 0);
		flows = q > flows ? q : flows;
	}
	if (rx <= flows) {
		nt_fx_set_err(err, errsize, "requested channel counts are too low for existing ntuple filter settings");
		return -EINVAL;
	}
	return 0;
}

/* ID ETH_RXFH_CONTEXT_ALLOC creates: context WANT (RSS_CREATE_ACT with
 * an id), or with WANT 0 the lowest free one (the ioctl). */
static int context_set(const nt_ctx *ctx, const char *ifname, uint32_t id, uint32_t want, const uint32_t *indir,
		       uint32_t n, uint32_t *newid, char *err, size_t errsize)
{
	json_t *root = NULL, *rss = NULL, *arr = NULL;
	int r = rss_load(ctx, ifname, true, &root, &rss);
	if (r < 0)
		return r;
	if (want && !json_is_true(json_object_get(rss, "netlink"))) {
		r = -EOPNOTSUPP; /* no RSS_CREATE_ACT on this kernel */
		goto out;
	}
	json_t *contexts = json_object_get(rss, "contexts");
	uint32_t rings = rss_rx_rings(root, rss);
	uint32_t max = (uint32_t)json_integer_value(json_object_get(rss, "max_contexts"));
	bool create = id == ETH_RXFH_CONTEXT_ALLOC;
	int at = create ? -1 : context_find(contexts, id);
	if (!json_is_array(contexts)) {
		/* ethtool_set_rxfh: no context support in the driver. */
		r = -EOPNOTSUPP;
		goto out;
	}
	if (!create && at < 0) {
		r = -ENOENT;
		goto out;
	}
	if (n == 0) {
		if (context_named_by_rule(root, id)) {
			nt_fx_set_err(err, errsize, "RSS context is in use by a flow rule");
			r = -EBUSY;
			goto out;
		}
		r = json_array_remove(contexts, (size_t)at) < 0 ? -ENOMEM : nt_fx_save(ctx, ifname, root);
		goto out;
	}
	if ((r = table_of(rss, rings, indir, n, &arr, err, errsize)) < 0)
		goto out;
	if (create) {
		/* The core's xa_alloc over 1 .. max_contexts - 1: the lowest
		 * free id, unless the document plays a driver that picks. */
		json_t *pick = json_object_get(rss, "alloc_id");
		uint32_t nid = 1;
		if (want && ((max && want >= max) || context_find(contexts, want) >= 0)) {
			/* ethnl_rss_create_validate, then xa_insert. */
			nt_fx_set_err(err, errsize, want >= max && max ? "RSS context id beyond the driver's limit"
								       : "error allocating context ID");
			r = want >= max && max ? -ERANGE : -EBUSY;
			goto out;
		}
		if (want)
			nid = want;
		else if (json_is_integer(pick))
			nid = (uint32_t)json_integer_value(pick);
		else
			while (context_find(contexts, nid) >= 0)
				nid++;
		if ((max && nid >= max) || context_find(contexts, nid) >= 0) {
			nt_fx_set_err(err, errsize, "no free RSS context");
			r = -EBUSY;
			goto out;
		}
		json_t *e = json_pack("{s:I, s:O}", "id", (json_int_t)nid, "indir", arr);
		if (!e || json_array_append_new(contexts, e) < 0) {
			r = -ENOMEM;
			goto out;
		}
		if (newid)
			*newid = nid;
	} else if (json_object_set(json_array_get(contexts, (size_t)at), "indir", arr) < 0) {
		r = -ENOMEM;
		goto out;
	}
	r = nt_fx_save(ctx, ifname, root);
out:
	json_decref(arr);
	json_decref(root);
	return r;
}

int nt_fixture_rss_context_set(const nt_ctx *ctx, const char *ifname, uint32_t id, const uint32_t *indir, uint32_t n,
			       uint32_t *newid, char *err, size_t errsize)
{
	return context_set(ctx, ifname, id, 0, indir, n, newid, err, errsize);
}

int nt_fixture_rss_context_create_as(const nt_ctx *ctx, const char *ifname, uint32_t id, const uint32_t *indir,
				     uint32_t n, char *err, size_t errsize)
{
	if (id == 0 || id == ETH_RXFH_CONTEXT_ALLOC)
		return -EINVAL;
	return context_set(ctx, ifname, ETH_RXFH_CONTEXT_ALLOC, id, indir, n, NULL, err, errsize);
}

bool nt_fixture_rss_netlink(const nt_ctx *ctx, const char *ifname)
{
	json_t *root = NULL, *rss = NULL;
	if (rss_load(ctx, ifname, false, &root, &rss) < 0)
		return false;
	bool nl = json_is_true(json_object_get(rss, "netlink"));
	json_decref(root);
	return nl;
}

int nt_fixture_rss_context_ids(const nt_ctx *ctx, const char *ifname, uint32_t *ids, int cap, int *n)
{
	json_t *root = NULL, *rss = NULL;
	int r = rss_load(ctx, ifname, false, &root, &rss);
	*n = 0;
	if (r < 0)
		return r;
	json_t *contexts = json_object_get(rss, "contexts");
	if (!json_is_true(json_object_get(rss, "netlink"))) {
		r = -EOPNOTSUPP;
		goto out;
	}
	size_t i;
	json_t *e;
	/* The core's xarray walks ids in order: so does the dump. */
	json_array_foreach(contexts, i, e) {
		json_int_t v = json_integer_value(json_object_get(e, "id"));
		if (v <= 0 || v > UINT32_MAX)
			continue;
		int at = 0;
		while (at < *n && ids[at] < (uint32_t)v)
			at++;
		if ((at < *n && ids[at] == (uint32_t)v) || at >= cap)
			continue;
		if (*n == cap)
			(*n)--;
		memmove(ids + at + 1, ids + at, (size_t)(*n - at) * sizeof(*ids));
		ids[at] = (uint32_t)v;
		(*n)++;
	}
out:
	json_decref(root);
	return r;
}

int nt_fixture_rss_set_xfrm(const nt_ctx *ctx, const char *ifname, uint32_t id, uint8_t xfrm, char *err,
			    size_t errsize)
{
	json_t *root = NULL, *rss = NULL, *obj;
	int r = rss_load(ctx, ifname, true, &root, &rss);
	if (r < 0)
		return r;
	json_t *sup = json_object_get(rss, "xfrm_supported");
	if (json_is_integer(sup) && (xfrm & ~json_integer_value(sup))) {
		nt_fx_set_err(err, errsize, "the driver has no such input transformation");
		r = -EOPNOTSUPP;
		goto out;
	}
	if (id == 0) {
		obj = rss;
	} else {
		int at = context_find(json_object_get(rss, "contexts"), id);
		if (at < 0) {
			r = -ENOENT;
			goto out;
		}
		obj = json_array_get(json_object_get(rss, "contexts"), (size_t)at);
	}
	/* Written only while not 0, so that setting it back leaves the
	 * document as it was. */
	if (xfrm ? json_object_set_new(obj, "input_xfrm", json_integer(xfrm)) < 0
		 : (json_object_get(obj, "input_xfrm") && json_object_del(obj, "input_xfrm") < 0))
		r = -ENOMEM;
	else
		r = nt_fx_save(ctx, ifname, root);
out:
	json_decref(root);
	return r;
}
