/* SPDX-License-Identifier: Apache-2.0 */
/* RSS: one kind, "rss", with two kinds of target on a NIC:
 *   "IFACE/indir"      the indirection table (which RX queue each hash
 *                      bucket sends its flows to), as the compact text of
 *                      kernel/rss.h ("0-3*32"): a value is always a whole
 *                      table, so a rollback puts back exactly the table
 *                      that was there;
 *   "IFACE/hash-FLOW"  the header fields hashed for flow type FLOW (tcp4,
 *                      udp4, tcp6, udp6), in ethtool's letters ("sdfn");
 *   (the input transformation, "input_xfrm", is kind "rss_xfrm" of
 *   settings/rss_xfrm.c: "IFACE/input-xfrm", "IFACE/context-N/input-xfrm")
 *   "IFACE/context-N"  RSS context N (kernel/rss.h): its table as for
 *                      "indir", or "none" when there is no context N. A
 *                      step from "none" creates it, so that its rollback
 *                      (back to "none") deletes it; a context that was
 *                      there has its table as the before-value, and a
 *                      rollback puts the table back and never deletes it.
 * Written through kernel/rss.c (ETHTOOL_SRSSH with the key and hash
 * function left alone; ETHTOOL_SRXFH), each write read back.
 *
 * Profile section:
 *   "rss": [{"interface": "eth*", "equal": 2,
 *            "hash_fields": {"tcp4": "sdfn", "udp4": "sdfn"}},
 *           {"interface": "enos0", "weights": [1, 1, 0, 2]},
 *           {"interface": "enos*", "queues": "placed"},
 *           {"interface": "enos0", "context": 1, "queues": "4-7"},
 *           {"interface": "enos0", "context": 3, "queues": "placed", "node": 0},
 *           {"interface": "enos0", "context": 2, "equal": 4, "start": 8}]
 * "equal": the first N RX queues in turn (ethtool -X equal N), from queue
 * "start" (ethtool -X start S equal N); "queues": "4-7", the listed RX
 * queues in turn; "weights":
 * queue q a block of the table of its share W[q] (ethtool -X weight);
 * "placed": in turn, the RX queues whose IRQs this profile's irq_affinity puts on
 * the NIC's node (or, with "node": N, node N's) and off the CPUs it
 * reserves for applications (the IRQs the profile does not place: where
 * they are now), so that no flow is received on a queue served far from
 * the NIC or on an application's CPU (settings/rss_placed.c). A NIC
 * whose table size is 0 is never sent a table: Debian 12's virtio_net
 * does not check and wedges the device.
 *
 * "context": N sets RSS context N's table instead of the NIC's own, and
 * creates the context when it is missing (flows[] entries with "context"
 * send flows to it: settings/flows.c). Where the kernel has ethtool
 * netlink's RSS_CREATE_ACT (6.17; kernel/rss_nl.h) the context is made
 * with id N and nothing is predicted. Otherwise the ioctl lets the kernel choose a
 * new context's id (the lowest free one from 1 where the core allocates,
 * 6.11 and later): the plan predicts it, so a profile asks for the ids
 * the kernel will give, and the check refuses any other ("context 3
 * would be created as 1"); should the kernel give another id at apply
 * (a driver that allocates its own, or a context made meanwhile), the
 * step deletes what it got and fails, and the transaction rolls back. A
 * context that exists and that flow rules the profile does not ask for
 * send flows to is another program's: refused unless "replace": true.
 * Plan order: contexts are steps of this kind (order 12), flow rules of
 * "flow" (14): a rule into a context is inserted after the context is
 * made, and a rollback, going backwards, removes it before the context
 * is deleted (6.11 and later refuse to delete a context a rule names). */
#include "settings/section.h"
#include "settings/rss_placed.h"
#include "settings/rss_xfrm.h"
#include "host/queues.h"
#include "placement/irq.h"
#include "kernel/flows.h"
#include "kernel/queues.h"
#include "kernel/rss.h"
#include "kernel/rss_nl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INDIR_MAX 65536

#define FLOW_TABLE -1
#define FLOW_CONTEXT -2

/* A context's desired value the plan cannot make ("placed" with no
 * queue on the node: settings/rss_placed.h) is carried to CHECK, which
 * refuses it with the text after '!' at the profile's JSON path: a
 * section's DESIRE has no error list (as settings/flows.c does). */
#define REFUSAL '!'

/* TARGET split into IFNAME and its flow type (FLOW_TABLE for the table,
 * FLOW_CONTEXT for context *CID's). */
static int split_target(const char *target, char *ifname, int *flow, uint32_t *cid)
{
	const char *slash = target ? strchr(target, '/') : NULL;
	if (!slash || (size_t)(slash - target) >= IF_NAMESIZE)
		return NT_EINVALID;
	memcpy(ifname, target, (size_t)(slash - target));
	ifname[slash - target] = '\0';
	if (!nt_ifname_valid(ifname))
		return NT_EINVALID;
	*cid = 0;
	if (strcmp(slash + 1, "indir") == 0) {
		*flow = FLOW_TABLE;
		return 0;
	}
	if (strncmp(slash + 1, "context-", 8) == 0) {
		const char *num = slash + 9;
		char *end;
		errno = 0;
		unsigned long id = strtoul(num, &end, 10);
		if (*num < '1' || *num > '9' || *end || errno || id >= 0xffffffffUL)
			return NT_EINVALID;
		*cid = (uint32_t)id;
		*flow = FLOW_CONTEXT;
		return 0;
	}
	if (strncmp(slash + 1, "hash-", 5) != 0 || (*flow = nt_rss_flow_index(slash + 6)) < 0)
		return NT_EINVALID;
	return 0;
}

/* A value is a table (its text starts with a digit), hash fields (a
 * letter) or "none" (a context that is not there). Each is kept in its
 * one spelling, so equal is strcmp. */
static int rss_parse(const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	if (!text || !text[0] || strlen(text) >= sizeof(out->text))
		return NT_EPARSE;
	if (strcmp(text, "none") == 0) { /* no such context */
		strcpy(out->text, text);
		return 0;
	}
	if (text[0] >= '0' && text[0] <= '9') {
		uint32_t *t = malloc(INDIR_MAX * sizeof(uint32_t)), n;
		int r = !t ? -ENOMEM : nt_rss_indir_parse(text, t, INDIR_MAX, &n);
		if (r == 0 && nt_rss_indir_format(t, n, out->text, sizeof(out->text)) < 0)
			snprintf(out->text, sizeof(out->text), "%s", text);
		free(t);
		return r;
	}
	uint64_t bits;
	if (nt_rss_fields_parse(text, &bits) < 0)
		return NT_EPARSE;
	nt_rss_fields_format(bits, out->text, sizeof(out->text));
	return 0;
}

static int rss_format(const nt_value *v, char *out, size_t size)
{
	int n = snprintf(out, size, "%s", v->text);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

static bool rss_equal(const nt_value *a, const nt_value *b)
{
	return strcmp(a->text, b->text) == 0;
}

/* The value of TARGET in R. -E2BIG: a table with no text short enough. */
static int value_of(const nt_rss *r, int flow, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	if (flow >= 0) {
		snprintf(out->text, sizeof(out->text), "%s", r->fields[flow]);
		return 0;
	}
	return r->indir_size ? nt_rss_indir_format(r->indir, r->indir_size, out->text, sizeof(out->text))
			     : -EOPNOTSUPP;
}

static int rss_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	char ifname[IF_NAMESIZE];
	int flow;
	uint32_t cid;
	nt_rss r;
	memset(out, 0, sizeof(*out));
	int e = split_target(target, ifname, &flow, &cid);
	if (e == 0)
		e = flow == FLOW_CONTEXT ? nt_rss_context_read(ctx, ifname, cid, &r) : nt_rss_read(ctx, ifname, &r);
	if (e == -ENOENT && flow == FLOW_CONTEXT) {
		strcpy(out->text, "none");
		return 0;
	}
	if (e < 0)
		return e;
	e = value_of(&r, flow, out);
	nt_rss_free(&r);
	return e;
}

/* The RX queues IFNAME's table may name: the driver's RX rings, else
 * its RX queues in sysfs. */
static int rx_rings(const nt_ctx *ctx, const char *ifname, const nt_rss *r)
{
	int nrx, ntx;
	if (r->rx_rings)
		return (int)r->rx_rings;
	return nt_queues_count(ctx, ifname, &nrx, &ntx) < 0 ? 0 : nrx;
}

static int rss_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		     const nt_value *v, char *why, size_t whysize)
{
	char ifname[IF_NAMESIZE];
	int flow, e;
	uint32_t cid;
	nt_rss r;
	uint32_t *tab = NULL, n = 0;
	if (v->text[0] == REFUSAL) {
		snprintf(why, whysize, "%s", v->text + 1);
		return NT_EINVALID;
	}
	if (split_target(target, ifname, &flow, &cid) < 0) {
		snprintf(why, whysize, "'%s' is not an RSS target (IFACE/indir, IFACE/hash-tcp4 or IFACE/context-N)",
			 target);
		return NT_EINVALID;
	}
	if (flow == FLOW_CONTEXT) {
		nt_rss c;
		e = nt_rss_context_read(ctx, ifname, cid, &c);
		nt_rss_free(&c);
		if (e == -EOPNOTSUPP) {
			snprintf(why, whysize, "%s: %s", ifname, nt_rss_contexts_unsupported);
			return NT_EINVALID;
		}
		if (e < 0 && e != -ENOENT) {
			snprintf(why, whysize, "%s: RSS context %u cannot be read: %s", ifname, cid, nt_strerror(e));
			return NT_EINVALID;
		}
		if (strcmp(v->text, "none") == 0)
			return 0;
	} else if (strcmp(v->text, "none") == 0) {
		snprintf(why, whysize, "'none' is a value for an RSS context only");
		return NT_EINVALID;
	}
	if ((e = nt_rss_read(ctx, ifname, &r)) < 0) {
		snprintf(why, whysize, "%s: its RSS state cannot be read: %s", ifname, nt_strerror(e));
		return NT_EINVALID;
	}
	e = NT_EINVALID;
	if (flow >= 0) {
		if (!r.fields[flow][0])
			snprintf(why, whysize, "%s does not hash %s flows (it reports no hash fields for them)",
				 ifname, nt_rss_flow_names[flow]);
		else
			e = 0;
		goto out;
	}
	if (r.indir_size == 0) {
		snprintf(why, whysize, "%s has no RSS indirection table (size 0): nettune sends it none", ifname);
		goto out;
	}
	int rings = rx_rings(ctx, ifname, &r);
	if (!(tab = malloc(INDIR_MAX * sizeof(uint32_t)))) {
		e = -ENOMEM;
		goto out;
	}
	if (nt_rss_indir_parse(v->text, tab, INDIR_MAX, &n) < 0 || n != r.indir_size) {
		snprintf(why, whysize, "%s: the table has %u entries, the NIC's %u", ifname, n, r.indir_size);
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (rings > 0 && tab[i] >= (uint32_t)rings) {
			snprintf(why, whysize, "%s has %d RX queues: the table names queue %u", ifname, rings, tab[i]);
			goto out;
		}
	}
	e = 0;
out:
	free(tab);
	nt_rss_free(&r);
	return e;
}

/* Context CID of IFNAME to V: deleted ("none"), its table replaced, or
 * made: with id CID through RSS_CREATE_ACT where the kernel has it
 * (6.17), else through the ioctl, the kernel choosing the id: one other
 * than CID is deleted again and the step fails (the plan predicted CID). */
static int context_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *ifname, uint32_t cid, const nt_value *v,
			 char *err, size_t errsize)
{
	/* Zeroed: a value that is no table is refused before the read that
	 * would fill it, and it is freed either way. */
	nt_rss cur = { 0 };
	if (strcmp(v->text, "none") == 0) {
		int r = nt_rss_context_delete(eh, ctx, ifname, cid, err, errsize);
		return r == -ENOENT ? 0 : r; /* already gone is what was asked */
	}
	uint32_t *tab = malloc(INDIR_MAX * sizeof(uint32_t)), n = 0, got = 0;
	nt_rss_nl nl;
	if (!tab)
		return -ENOMEM;
	/* Made with its id where the kernel takes one (RSS_CREATE_ACT). */
	nt_rss_nl_caps(eh, ctx, ifname, &nl);
	int r = nt_rss_indir_parse(v->text, tab, INDIR_MAX, &n);
	int e = r < 0 ? r : nt_rss_context_read(ctx, ifname, cid, &cur);
	nt_rss_free(&cur);
	if (r < 0)
		goto out;
	if (e == 0) {
		r = nt_rss_context_write(eh, ctx, ifname, cid, tab, n, err, errsize);
	} else if (e != -ENOENT) {
		r = e;
		snprintf(err, errsize, "%s: RSS context %u cannot be read: %s", ifname, cid, nt_strerror(e));
	} else if (nl.create) {
		r = nt_rss_nl_context_create(eh, ctx, ifname, cid, tab, n, err, errsize);
	} else if ((r = nt_rss_context_create(ctx, ifname, tab, n, &got, err, errsize)) == 0 && got != cid) {
		char derr[160] = "";
		int d = nt_rss_context_delete(eh, ctx, ifname, got, derr, sizeof(derr));
		snprintf(err, errsize,
			 "%s: the kernel made the new RSS context %u, not %u as the plan predicted (through the ioctl "
			 "the kernel or the driver picks the id); context %u %s%s",
			 ifname, got, cid, got, d == 0 ? "deleted again" : "could not be deleted again: ", derr);
		r = -EEXIST;
	}
out:
	free(tab);
	return r;
}

static int rss_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		     size_t errsize)
{
	char ifname[IF_NAMESIZE];
	int flow;
	uint32_t cid;
	int r = split_target(target, ifname, &flow, &cid);
	if (r < 0) {
		snprintf(err, errsize, "'%s' is not an RSS target", target);
		return r;
	}
	if (flow == FLOW_CONTEXT)
		return context_apply(ctx, eh, ifname, cid, v, err, errsize);
	if (flow >= 0) {
		uint64_t bits;
		if (nt_rss_fields_parse(v->text, &bits) < 0 || bits == 0)
			return NT_EINVALID;
		return nt_rss_write_fields(ctx, ifname, flow, bits, err, errsize);
	}
	uint32_t *tab = malloc(INDIR_MAX * sizeof(uint32_t)), n = 0;
	if (!tab)
		return -ENOMEM;
	r = nt_rss_indir_parse(v->text, tab, INDIR_MAX, &n);
	if (r == 0)
		r = nt_rss_write_indir(ctx, ifname, tab, n, err, errsize);
	free(tab);
	return r;
}

const nt_setting_kind nt_setting_rss = {
	.name = "rss",
	/* A NIC's indirection table and hash, over ethtool in the caller's
	 * namespace. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NIC is a link of this namespace",
	.parse = rss_parse,
	.format = rss_format,
	.equal = rss_equal,
	.read = rss_read,
	.check = rss_check,
	.apply = rss_apply,
	/* After channels (8: a channel change makes the driver build its
	 * queues and may reset the table) and IRQ affinity (10, which
	 * "placed" follows); before RPS and XPS (34). */
	.order = 12,
	/* Before a channels step that lowers the NIC's RX queues, which
	 * the kernel refuses while a user-set table or a context names one
	 * it takes away (settings/channels.c). */
	.names_queues = true,
	/* Newer kernels notify an RSS change (ETHTOOL_MSG_RSS_NTF); a
	 * channels change, which every kernel notifies, may reset it. */
	.events = NT_SETTING_EVENT(NT_EVENT_ETHTOOL),
};

/* ---- "rss": [...] ---- */

/* The NICs of ENTRY's pattern with a table (or every one, for hash
 * fields only). */
static bool nic_rss(const nt_topology *t, const nt_nic *nic, nt_rss *r)
{
	return !nic->is_bond && nt_rss_read(&t->ctx, nic->name, r) == 0;
}

/* Whether TEXT is a list of RX queues ("4-7", "0,2,4"), not empty. */
static bool queue_list_ok(const char *text)
{
	nt_cpuset s;
	return nt_cpulist_strict(text) && nt_cpulist_parse(text, &s) == 0 && !nt_cpuset_empty(&s);
}

/* Whether the profile's "flows" send flows of NIC to context ID. */
static bool profile_flows_to(const json_t *profile, const char *nic, uint32_t id)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(profile, "flows"), i, f)
		if (json_integer_value(json_object_get(f, "context")) == (json_int_t)id &&
		    nt_iface_match(json_string_value(json_object_get(f, "interface")), nic))
			return true;
	return false;
}

/* Entry E of ARR asks for RSS context ID on NIC: the driver must have
 * contexts; a context there must not be another program's (flow rules
 * the profile does not ask for send flows to it) unless "replace"; one
 * to be made must get ID from the kernel, which through the ioctl takes
 * the lowest free id (6.11 and later, when the core allocates): the
 * contexts this profile makes on NIC, in ascending order, must be the
 * lowest ids free now. */
static void validate_context(nt_section_check *c, const json_t *arr, const json_t *e, const char *base,
			     const nt_nic *nic)
{
	char path[NT_JSONPATH_MAX], list[256];
	uint32_t id = (uint32_t)json_integer_value(json_object_get(e, "context"));
	nt_rss x;
	snprintf(path, sizeof(path), "%s.context", base);
	int r = nt_rss_context_read(&c->t->ctx, nic->name, id, &x);
	nt_rss_free(&x);
	if (r == -EOPNOTSUPP) {
		nt_sc_error(c, path, "%s: %s", nic->name, nt_rss_contexts_unsupported);
		return;
	}
	if (r < 0 && r != -ENOENT) {
		nt_sc_error(c, path, "%s: RSS context %u cannot be read: %s", nic->name, id, nt_strerror(r));
		return;
	}
	if (r == 0) {
		nt_flow_table tab;
		size_t at = 0;
		int n = 0;
		list[0] = '\0';
		if (json_is_true(json_object_get(e, "replace")) || profile_flows_to(c->profile, nic->name, id) ||
		    nt_flows_read(&c->t->ctx, nic->name, &tab) < 0)
			return;
		for (int k = 0; k < tab.n; k++) {
			if (tab.rules[k].context != id)
				continue;
			int w = snprintf(list + at, sizeof(list) - at, "%s%u", n++ ? ", " : "", tab.rules[k].location);
			if (w > 0 && (size_t)w < sizeof(list) - at)
				at += (size_t)w;
		}
		nt_flow_table_free(&tab);
		if (n)
			nt_sc_error(c, path, "%s: RSS context %u is in use: flow rules this profile does not ask for send "
					     "flows to it (location %s); give \"replace\": true to set its table anyway "
					     "(rollback puts it back), or another context",
				    nic->name, id, list);
		return;
	}
	/* To be made. With RSS_CREATE_ACT (6.17) it is made with ID itself. */
	nt_rss_nl nl;
	nt_rss_nl_caps(NULL, &c->t->ctx, nic->name, &nl);
	if (nl.create)
		return;
	/* Through the ioctl: its rank among the contexts this profile makes
	 * on NIC. */
	uint32_t rank = 0;
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		json_t *oc = json_object_get(o, "context");
		const char *oi = json_string_value(json_object_get(o, "interface"));
		if (!json_is_integer(oc) || !oi || strcmp(oi, nic->name) || json_integer_value(oc) >= (json_int_t)id)
			continue;
		if (nt_rss_context_read(&c->t->ctx, nic->name, (uint32_t)json_integer_value(oc), &x) == -ENOENT)
			rank++; /* (the same id twice is caught as a duplicate target) */
		nt_rss_free(&x);
	}
	/* The id the kernel will give: the RANK-th free one from 1. */
	uint32_t cand = 1, seen = 0;
	for (; cand < id; cand++) {
		int e2 = nt_rss_context_read(&c->t->ctx, nic->name, cand, &x);
		nt_rss_free(&x);
		if (e2 == -ENOENT && seen++ == rank)
			break;
	}
	if (cand != id)
		nt_sc_error(c, path, "%s: RSS context %u would be made as %u: through the ioctl the kernel gives a new "
				     "context the lowest free id, and this profile can only ask for the ids it will give "
				     "(its contexts on %s, in ascending order, are made first to last)",
			    nic->name, id, cand, nic->name);
}

static void validate_one_nic(nt_section_check *c, const json_t *e, const char *base, const nt_nic *nic,
			     const nt_rss *r, bool named)
{
	char path[NT_JSONPATH_MAX];
	json_t *eq = json_object_get(e, "equal"), *w = json_object_get(e, "weights"),
	       *hf = json_object_get(e, "hash_fields");
	int rings = rx_rings(&c->t->ctx, nic->name, r);
	const char *field = eq ? "equal" : w ? "weights" : json_object_get(e, "queues") ? "queues" : NULL;
	if (field && r->indir_size == 0) {
		snprintf(path, sizeof(path), "%s.%s", base, field);
		if (named)
			nt_sc_error(c, path, "%s has no RSS indirection table (size 0): nettune sends it none "
					     "(a virtio NIC needs rss=on)", nic->name);
		eq = w = NULL;
	}
	json_int_t start = json_integer_value(json_object_get(e, "start"));
	if (json_is_integer(eq) && rings > 0 && json_integer_value(eq) + start > rings) {
		snprintf(path, sizeof(path), "%s.equal", base);
		if (start)
			nt_sc_error(c, path, "start %lld and equal %lld name queues up to %lld, beyond %s's %d RX queues "
					     "(0-%d)", (long long)start, (long long)json_integer_value(eq),
				    (long long)(start + json_integer_value(eq) - 1), nic->name, rings, rings - 1);
		else
			nt_sc_error(c, path, "equal %lld is above %s's %d RX queues", (long long)json_integer_value(eq),
				    nic->name, rings);
	}
	const char *ql = json_string_value(json_object_get(e, "queues"));
	nt_cpuset qs;
	if (ql && strcmp(ql, "placed") && rings > 0 && nt_cpulist_parse(ql, &qs) == 0 && nt_cpuset_last(&qs) >= rings) {
		snprintf(path, sizeof(path), "%s.queues", base);
		nt_sc_error(c, path, "%s has %d RX queues (0-%d): queue %d is beyond them", nic->name, rings, rings - 1,
			    nt_cpuset_last(&qs));
	}
	size_t k;
	json_t *x;
	json_int_t sum = 0;
	json_array_foreach(w, k, x) {
		sum += json_integer_value(x);
		if (rings > 0 && (int)k >= rings && json_integer_value(x) > 0) {
			snprintf(path, sizeof(path), "%s.weights[%zu]", base, k);
			nt_sc_error(c, path, "%s has %d RX queues (0-%d): queue %zu is beyond them", nic->name, rings,
				    rings - 1, k);
			break;
		}
	}
	if (w && sum > (json_int_t)r->indir_size && r->indir_size) {
		snprintf(path, sizeof(path), "%s.weights", base);
		nt_sc_error(c, path, "the weights add up to %lld, more than %s's table of %u entries",
			    (long long)sum, nic->name, r->indir_size);
	}
	const char *key;
	json_object_foreach(hf, key, x) {
		int f = nt_rss_flow_index(key);
		if (f >= 0 && !r->fields[f][0] && named) {
			snprintf(path, sizeof(path), "%s.hash_fields.%s", base, key);
			nt_sc_error(c, path, "%s cannot hash %s flows (it reports no hash fields for them; a virtio "
					     "NIC needs rss=on)", nic->name, key);
		}
	}
}

static void validate_rss(nt_section_check *c, const json_t *arr)
{
	static const char *const known[] = { "interface", "equal", "weights", "queues", "hash_fields", "context",
					     "start", "replace", "node", "input_xfrm", NULL };
	size_t i, k;
	json_t *e, *x;
	char base[NT_JSONPATH_MAX], path[NT_JSONPATH_MAX];
	json_array_foreach(arr, i, e) {
		if (!nt_sc_entry(c, "rss", i, e, base, sizeof(base)))
			continue;
		nt_sc_unknown_fields(c, e, base, known);
		const char *iface = nt_sc_str(c, e, base, "interface", true);
		const char *queues = nt_sc_str(c, e, base, "queues", false);
		json_t *eq = json_object_get(e, "equal"), *w = json_object_get(e, "weights"),
		       *hf = json_object_get(e, "hash_fields");
		int tables = !!eq + !!w + !!json_object_get(e, "queues");
		if (tables > 1)
			nt_sc_error(c, base, "give at most one of 'equal', 'weights' and 'queues'");
		if (!tables && !hf && !json_object_get(e, "input_xfrm"))
			nt_sc_error(c, base, "give one of 'equal', 'weights', 'queues', 'hash_fields' or 'input_xfrm'");
		nt_rss_xfrm_check_entry(c, e, base);
		if (eq && (!json_is_integer(eq) || json_integer_value(eq) < 1 || json_integer_value(eq) > 65535)) {
			snprintf(path, sizeof(path), "%s.equal", base);
			nt_sc_error(c, path, "'equal' must be a count of RX queues from 1 to 65535");
		}
		if (w) {
			json_int_t sum = 0;
			snprintf(path, sizeof(path), "%s.weights", base);
			if (!json_is_array(w) || json_array_size(w) == 0 || json_array_size(w) > NT_QUEUES_MAX)
				nt_sc_error(c, path, "'weights' must be a list of 1 to %d weights, one per RX queue",
					    NT_QUEUES_MAX);
			json_array_foreach(w, k, x) {
				if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > 65535) {
					snprintf(path, sizeof(path), "%s.weights[%zu]", base, k);
					nt_sc_error(c, path, "a weight is a count from 0 to 65535");
				} else {
					sum += json_integer_value(x);
				}
			}
			if (json_is_array(w) && json_array_size(w) && sum == 0)
				nt_sc_error(c, path, "at least one weight must be above 0");
		}
		if (queues && strcmp(queues, "placed") != 0 && !queue_list_ok(queues)) {
			snprintf(path, sizeof(path), "%s.queues", base);
			nt_sc_error(c, path, "unknown 'queues' '%s' (\"placed\", or a list of RX queues as \"4-7\")",
				    queues);
		}
		json_t *cx = json_object_get(e, "context"), *st = json_object_get(e, "start"),
		       *rep = json_object_get(e, "replace");
		if (cx && (!json_is_integer(cx) || json_integer_value(cx) < 1 || json_integer_value(cx) > 65535)) {
			snprintf(path, sizeof(path), "%s.context", base);
			nt_sc_error(c, path, "'context' is an RSS context id from 1 to 65535 (0 is the NIC's own table: "
					     "leave 'context' out)");
		}
		if (st && (!json_is_integer(st) || json_integer_value(st) < 0 || json_integer_value(st) > 65535)) {
			snprintf(path, sizeof(path), "%s.start", base);
			nt_sc_error(c, path, "'start' is the first RX queue, from 0 to 65535");
		} else if (st && !eq) {
			snprintf(path, sizeof(path), "%s.start", base);
			nt_sc_error(c, path, "'start' goes with 'equal' (ethtool -X start S equal N)");
		}
		if (rep && (!json_is_boolean(rep) || !cx)) {
			snprintf(path, sizeof(path), "%s.replace", base);
			nt_sc_error(c, path, "'replace' is true or false, in an entry with 'context'");
		}
		if (cx && hf) {
			snprintf(path, sizeof(path), "%s.hash_fields", base);
			nt_sc_error(c, path, "hash fields are set for the NIC, not for one context: give them in an entry "
					     "without 'context'");
		}
		nt_rss_placed_validate(c, e, base);
		if (cx && !tables)
			nt_sc_error(c, base, "an entry with 'context' gives the context's table: 'equal', 'weights' or "
					     "'queues'");
		if (cx && iface && nt_iface_is_glob(iface)) {
			snprintf(path, sizeof(path), "%s.interface", base);
			nt_sc_error(c, path, "an entry with 'context' names one NIC, not a pattern ('%s')", iface);
		}
		if (hf && !json_is_object(hf)) {
			snprintf(path, sizeof(path), "%s.hash_fields", base);
			nt_sc_error(c, path, "'hash_fields' must be an object of flow type -> fields (\"tcp4\": "
					     "\"sdfn\")");
		}
		const char *key;
		json_object_foreach(json_is_object(hf) ? hf : NULL, key, x) {
			uint64_t bits;
			snprintf(path, sizeof(path), "%s.hash_fields.%s", base, key);
			if (nt_rss_flow_index(key) < 0)
				nt_sc_error(c, path, "unknown flow type '%s' (known: tcp4, udp4, tcp6, udp6)", key);
			else if (!json_is_string(x) || nt_rss_fields_parse(json_string_value(x), &bits) < 0 || !bits)
				nt_sc_error(c, path, "hash fields are ethtool's letters (m v t s d f n r), as \"sdfn\"");
		}
		if (!iface)
			continue;
		snprintf(path, sizeof(path), "%s.interface", base);
		if (!nt_sc_iface(c, iface, path, false) || !c->t)
			continue;
		/* On the host: the NICs the pattern names, with what each has. */
		bool named = !nt_iface_is_glob(iface), any = false;
		for (int n = 0; n < c->t->nnics; n++) {
			const nt_nic *nic = &c->t->nics[n];
			nt_rss r;
			if (!nt_iface_match(iface, nic->name))
				continue;
			if (!nic_rss(c->t, nic, &r)) {
				char cpath[NT_JSONPATH_MAX];
				snprintf(cpath, sizeof(cpath), "%s.context", base);
				if (named)
					nt_sc_error(c, path, "%s reports no RSS state", nic->name);
				/* No RSS at all: no contexts either (6.1's netdevsim). */
				if (named && json_object_get(e, "context"))
					nt_sc_error(c, cpath, "%s: %s", nic->name, nt_rss_contexts_unsupported);
				continue;
			}
			any |= r.indir_size > 0 || !tables;
			validate_one_nic(c, e, base, nic, &r, named);
			nt_rss_xfrm_check_nic(c, e, base, nic, r.indir_size);
			if (json_is_integer(json_object_get(e, "context")) && named && r.indir_size > 0)
				validate_context(c, arr, e, base, nic);
			nt_rss_free(&r);
		}
		if (!named && !any)
			nt_sc_error(c, path, "'%s' matches no NIC with an RSS indirection table", iface);
	}
}

static int desire_table(nt_section_plan *p, const json_t *e, size_t i, const nt_nic *nic, const nt_rss *r,
			bool named)
{
	json_t *eq = json_object_get(e, "equal"), *w = json_object_get(e, "weights");
	char path[NT_JSONPATH_MAX], target[NT_TARGET_MAX];
	nt_value before, v;
	int rings = rx_rings(&p->t->ctx, nic->name, r);
	/* A channel change planned for the NIC sets how many RX queues the
	 * table may name (applied before the table when it adds queues, after
	 * it when it takes some away). */
	bool lowers;
	int planned = nt_channels_rx_planned(p, nic->name, &lowers);
	if (planned >= 0) {
		rings = planned;
		nt_desire_warn(p, "%s: the RSS table follows the %d RX queues its channels step makes (%s)", nic->name,
			       rings,
			       lowers ? "set before it: the kernel refuses fewer channels while a table names a queue "
					"they take away"
				      : "applied first");
	}
	if (r->indir_size == 0) {
		if (named)
			nt_desire_warn(p, "%s: no RSS indirection table; left out", nic->name);
		return 0;
	}
	if (value_of(r, -1, &before) < 0) {
		nt_desire_warn(p, "%s: its RSS table has no text short enough to be put back by a rollback; left out",
			       nic->name);
		return 0;
	}
	uint32_t *tab = malloc(r->indir_size * sizeof(uint32_t)), wt[NT_QUEUES_MAX];
	int nw = 0, ret = 0;
	if (!tab)
		return -ENOMEM;
	const char *ql = json_string_value(json_object_get(e, "queues"));
	json_t *cx = json_object_get(e, "context");
	if (eq) {
		uint32_t n = (uint32_t)json_integer_value(eq);
		uint32_t start = (uint32_t)json_integer_value(json_object_get(e, "start"));
		for (uint32_t k = 0; k < r->indir_size; k++)
			tab[k] = start + k % n;
		snprintf(path, sizeof(path), "$.rss[%zu].equal", i);
	} else if (ql && strcmp(ql, "placed") != 0) {
		nt_cpuset qs;
		int nq = 0;
		if (nt_cpulist_parse(ql, &qs) < 0)
			goto out;
		for (int q = nt_cpuset_next(&qs, 0); q >= 0 && nq < NT_QUEUES_MAX; q = nt_cpuset_next(&qs, q + 1))
			wt[nq++] = (uint32_t)q;
		if (!nq)
			goto out;
		for (uint32_t k = 0; k < r->indir_size; k++)
			tab[k] = wt[k % (uint32_t)nq];
		snprintf(path, sizeof(path), "$.rss[%zu].queues", i);
	} else if (w) {
		size_t k;
		json_t *x;
		json_array_foreach(w, k, x) {
			if (k < NT_QUEUES_MAX)
				wt[nw++] = (uint32_t)json_integer_value(x);
		}
		nt_rss_indir_weights(wt, nw, tab, r->indir_size);
		snprintf(path, sizeof(path), "$.rss[%zu].weights", i);
	} else {
		char refusal[NT_VALUE_MAX - 1];
		nw = rings < NT_QUEUES_MAX ? rings : NT_QUEUES_MAX;
		int np = nt_rss_placed_weights(p, e, nic, nw, wt, refusal, sizeof(refusal));
		if (np == 0 && refusal[0]) {
			/* Carried to rss_check, which refuses it at the path. */
			memset(&v, 0, sizeof(v));
			snprintf(v.text, sizeof(v.text), "%c%s", REFUSAL, refusal);
			snprintf(path, sizeof(path), "$.rss[%zu].%s", i, json_object_get(e, "node") ? "node" : "queues");
			snprintf(target, sizeof(target), "%s/context-%lld", nic->name, (long long)json_integer_value(cx));
			ret = nt_desire_put(p, &nt_setting_rss, target, nic->name, &v, path);
			goto out;
		}
		if (np == 0)
			goto out;
		/* The placed queues in turn, as the kernel's default table
		 * takes all of them: with every queue placed, the table the
		 * driver made is already right and the plan has no step. */
		for (int q = 0, k = 0; q < nw; q++)
			if (wt[q])
				wt[k++] = (uint32_t)q;
		for (uint32_t k = 0; k < r->indir_size; k++)
			tab[k] = wt[k % (uint32_t)np];
		snprintf(path, sizeof(path), "$.rss[%zu].queues", i);
	}
	memset(&v, 0, sizeof(v));
	if (cx)
		snprintf(target, sizeof(target), "%s/context-%lld", nic->name, (long long)json_integer_value(cx));
	else
		snprintf(target, sizeof(target), "%s/indir", nic->name);
	/* A table must name only queues the channels step leaves: the check
	 * measures it against the queues there now, and with fewer to come
	 * the channels step, which goes after it, would be refused. */
	for (uint32_t k = 0; planned >= 0 && rings > 0 && k < r->indir_size; k++) {
		if (tab[k] < (uint32_t)rings)
			continue;
		snprintf(v.text, sizeof(v.text), "%c%s: the table names RX queue %u, and this profile's channels step "
			 "leaves %d RX queues (0-%d)", REFUSAL, nic->name, tab[k], rings, rings - 1);
		ret = nt_desire_put(p, &nt_setting_rss, target, nic->name, &v, path);
		goto out;
	}
	if (nt_rss_indir_format(tab, r->indir_size, v.text, sizeof(v.text)) < 0) {
		nt_desire_warn(p, "%s: the RSS table asked for does not fit a value; left out", nic->name);
		goto out;
	}
	ret = nt_desire_put(p, &nt_setting_rss, target, nic->name, &v, path);
out:
	free(tab);
	return ret;
}

/* Entry I of "rss" (E), on every NIC it names. */
static int desire_entry(nt_section_plan *p, const json_t *e, size_t i)
{
	char path[NT_JSONPATH_MAX], target[NT_TARGET_MAX];
	const char *pattern = json_string_value(json_object_get(e, "interface"));
	json_t *hf = json_object_get(e, "hash_fields");
	bool table = json_object_get(e, "equal") || json_object_get(e, "weights") ||
		     json_object_get(e, "queues");
	for (int k = 0; k < p->t->nnics; k++) {
		const nt_nic *nic = &p->t->nics[k];
		bool named = !nt_iface_is_glob(pattern);
		nt_rss r;
		int ret = 0;
		if (!nt_iface_match(pattern, nic->name))
			continue;
		if (!nic_rss(p->t, nic, &r)) {
			if (named)
				nt_desire_warn(p, "%s: no RSS state; left out", nic->name);
			continue;
		}
		if (table)
			ret = desire_table(p, e, i, nic, &r, named);
		const char *key;
		json_t *x;
		json_object_foreach(ret == 0 ? hf : NULL, key, x) {
			int f = nt_rss_flow_index(key);
			nt_value v;
			if (f < 0 || !r.fields[f][0]) {
				nt_desire_warn(p, "%s: does not hash %s flows; left out", nic->name, key);
				continue;
			}
			if ((ret = rss_parse(json_string_value(x), &v)) < 0)
				break;
			snprintf(target, sizeof(target), "%s/hash-%s", nic->name, key);
			snprintf(path, sizeof(path), "$.rss[%zu].hash_fields.%s", i, key);
			if ((ret = nt_desire_put(p, &nt_setting_rss, target, nic->name, &v, path)) < 0)
				break;
		}
		if (ret == 0)
			ret = nt_rss_xfrm_desire(p, e, i, nic);
		nt_rss_free(&r);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The NICs' own tables and hash fields first, in the profile's order;
 * then the contexts, by ascending id whatever order the profile lists
 * them in: through the ioctl the kernel gives a new context the lowest
 * free id, and validate_context predicts the ids of contexts made in
 * that order (a profile listing context 3 before 1, both missing, would
 * otherwise have 3's step given id 1, and fail). Steps of one kind keep
 * the order they are desired in (engine/profile.c). */
static int desire_rss(nt_section_plan *p, const json_t *arr)
{
	size_t n = json_array_size(arr), nc = 0, *cx = malloc((n + 1) * sizeof(*cx));
	int ret = 0;
	if (!cx)
		return -ENOMEM;
	for (size_t i = 0; i < n && ret == 0; i++) {
		const json_t *e = json_array_get(arr, i);
		if (!json_is_integer(json_object_get(e, "context"))) {
			ret = desire_entry(p, e, i);
			continue;
		}
		/* Insertion by id, stable for equal ids. */
		json_int_t id = json_integer_value(json_object_get(e, "context"));
		size_t at = nc;
		while (at > 0 && json_integer_value(json_object_get(json_array_get(arr, cx[at - 1]), "context")) > id) {
			cx[at] = cx[at - 1];
			at--;
		}
		cx[at] = i;
		nc++;
	}
	for (size_t k = 0; k < nc && ret == 0; k++)
		ret = desire_entry(p, json_array_get(arr, cx[k]), cx[k]);
	free(cx);
	return ret;
}

static const nt_profile_section section_rss = {
	.key = "rss",
	.type = JSON_ARRAY,
	.validate = validate_rss,
	.desire = desire_rss,
	/* After irq_affinity's placement and channels (pass 0), which
	 * "placed" and the table's queue count follow. */
	.pass = 1,
};

const nt_setting_module nt_module_rss = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_rss, NULL },
	.sections = (const nt_profile_section *const[]){ &section_rss, NULL },
};
