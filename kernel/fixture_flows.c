/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel on a fixture root, flow rules: the rule table, inserted
 * into and deleted from as a driver would (kernel/fixture.h). */
#include "kernel/fixture.h"
#include "kernel/fixture_int.h"
#include "kernel/flows.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* ---- flow rules: the "flows" object of ROOT/ethtool/IFACE.json ---- */

/* The whole document and its "flows" object (borrowed from *ROOTP). */
static int flows_load(const nt_ctx *ctx, const char *ifname, json_t **rootp, json_t **flowsp)
{
	char *buf = NULL;
	int r = nt_read_all(ctx, &buf, "/ethtool/%s.json", ifname);
	if (r < 0)
		return r == -ENOENT ? -EOPNOTSUPP : r;
	json_t *root = json_loads(buf, 0, NULL);
	free(buf);
	json_t *flows = json_object_get(root, "flows");
	r = !json_is_object(root) ? NT_EPARSE : !flows ? -EOPNOTSUPP : 0;
	if (r == 0 && (!json_is_object(flows) || !json_is_integer(json_object_get(flows, "size")) ||
		       (json_object_get(flows, "rules") && !json_is_array(json_object_get(flows, "rules")))))
		r = NT_EPARSE;
	if (r < 0) {
		json_decref(root);
		return r;
	}
	*rootp = root;
	*flowsp = flows;
	return 0;
}

/* The RX rings a rule may steer to: "rings", else what the channels
 * object says the NIC has now (rx + combined), as GRXRINGS follows it. */
static uint32_t flows_rings(json_t *root, json_t *flows)
{
	json_t *x = json_object_get(flows, "rings"), *ch = json_object_get(root, "channels");
	if (json_is_integer(x))
		return (uint32_t)json_integer_value(x);
	return (uint32_t)(json_integer_value(json_object_get(ch, "rx")) +
			  json_integer_value(json_object_get(ch, "combined")));
}

int nt_fixture_flows_read(const nt_ctx *ctx, const char *ifname, nt_flow_table *out)
{
	json_t *root = NULL, *flows = NULL, *e;
	size_t i;
	memset(out, 0, sizeof(*out));
	int r = flows_load(ctx, ifname, &root, &flows);
	if (r < 0)
		return r;
	json_t *rules = json_object_get(flows, "rules");
	out->size = (uint32_t)json_integer_value(json_object_get(flows, "size"));
	out->rings = flows_rings(root, flows);
	out->loc_special = true;
	out->rules = calloc(json_array_size(rules) + 1, sizeof(*out->rules));
	if (!out->rules) {
		r = -ENOMEM;
		goto out;
	}
	json_array_foreach(rules, i, e) {
		json_t *loc = json_object_get(e, "location");
		nt_flow_rule *fr = &out->rules[out->n];
		if (!json_is_integer(loc) || json_integer_value(loc) < 0 ||
		    nt_flow_rule_parse(json_string_value(json_object_get(e, "rule")), fr, NULL, 0) < 0 ||
		    fr->type == NT_FLOW_NONE) {
			r = NT_EPARSE;
			goto out;
		}
		fr->location = (uint32_t)json_integer_value(loc);
		out->n++;
	}
out:
	json_decref(root);
	if (r < 0)
		nt_flow_table_free(out);
	return r;
}

static int flows_store(const nt_ctx *ctx, const char *ifname, json_t *root)
{
	return nt_fx_save(ctx, ifname, root);
}

/* The index in RULES of the rule at LOC, or -1. */
static int flows_find(json_t *rules, uint32_t loc)
{
	size_t i;
	json_t *e;
	json_array_foreach(rules, i, e)
		if (json_integer_value(json_object_get(e, "location")) == (json_int_t)loc)
			return (int)i;
	return -1;
}

int nt_fixture_flows_insert(const nt_ctx *ctx, const char *ifname, const nt_flow_rule *fr, char *err,
			    size_t errsize)
{
	json_t *root = NULL, *flows = NULL;
	char text[NT_FLOW_TEXT_MAX], msg[160];
	int r = flows_load(ctx, ifname, &root, &flows);
	if (r < 0)
		return r;
	json_t *rules = json_object_get(flows, "rules");
	if (!rules) {
		rules = json_array();
		json_object_set_new(flows, "rules", rules);
	}
	uint32_t size = (uint32_t)json_integer_value(json_object_get(flows, "size"));
	uint32_t rings = flows_rings(root, flows);
	int at = flows_find(rules, fr->location);
	r = -EINVAL;
	if (fr->location >= size) {
		snprintf(msg, sizeof(msg), "location %u is beyond the table of %u", fr->location, size);
		goto refuse;
	}
	if (!fr->drop && fr->queue >= rings) {
		snprintf(msg, sizeof(msg), "queue %u is beyond the %u RX rings", fr->queue, rings);
		goto refuse;
	}
	if (fr->context) {
		/* 6.11 and later check the context exists (ethtool_set_rxnfc). */
		json_t *cs = json_object_get(json_object_get(root, "rss"), "contexts");
		size_t k;
		json_t *c;
		bool found = false;
		json_array_foreach(cs, k, c)
			found |= json_integer_value(json_object_get(c, "id")) == (json_int_t)fr->context;
		if (!found) {
			snprintf(msg, sizeof(msg), "RSS context %u does not exist", fr->context);
			goto refuse;
		}
	}
	r = -ENOSPC;
	if (at < 0 && json_array_size(rules) >= size) {
		snprintf(msg, sizeof(msg), "the rule table is full");
		goto refuse;
	}
	if ((r = nt_flow_rule_format(fr, text, sizeof(text))) < 0)
		goto out;
	json_t *e = json_pack("{s:I,s:s}", "location", (json_int_t)fr->location, "rule", text);
	r = !e ? -ENOMEM : at >= 0 ? json_array_set_new(rules, (size_t)at, e) : json_array_append_new(rules, e);
	r = r < 0 ? -ENOMEM : flows_store(ctx, ifname, root);
	goto out;
refuse:
	nt_fx_set_err(err, errsize, msg);
out:
	json_decref(root);
	return r;
}

int nt_fixture_flows_delete(const nt_ctx *ctx, const char *ifname, uint32_t loc)
{
	json_t *root = NULL, *flows = NULL;
	int r = flows_load(ctx, ifname, &root, &flows);
	if (r < 0)
		return r;
	json_t *rules = json_object_get(flows, "rules");
	int at = flows_find(rules, loc);
	r = at < 0 ? -ENOENT : json_array_remove(rules, (size_t)at) < 0 ? -ENOMEM : flows_store(ctx, ifname, root);
	json_decref(root);
	return r;
}
