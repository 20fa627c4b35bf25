/* SPDX-License-Identifier: Apache-2.0 */
/* A NIC's queues: see host/queues.h. */
#include "host/queues.h"
#include "kernel/flows.h"
#include "kernel/netdev.h"
#include "kernel/queues.h"
#include "kernel/rss.h"
#include "kernel/rss_nl.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void nt_nic_queues_free(nt_nic_queues *q)
{
	if (!q)
		return;
	free(q->rx);
	free(q->tx);
	free(q->qstats);
	memset(q, 0, sizeof(*q));
}

static bool has_word(const char *name, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (strcasestr(name, words[i]))
			return true;
	return false;
}

int nt_nic_queue_irq(const nt_topology *t, const nt_nic *n, int queue, bool tx)
{
	static const char *const both[] = { "txrx", "comp", NULL };
	static const char *const rxw[] = { "rx", "input", NULL };
	static const char *const txw[] = { "tx", "output", NULL };
	int best = -1, best_score = -1;
	for (int i = 0; i < n->nirqs; i++) {
		const nt_irq *q = &t->irqs[n->irqs[i]];
		if (q->queue != queue)
			continue;
		int score = has_word(q->name, both) ? 3 : has_word(q->name, tx ? txw : rxw) ? 2 :
			    has_word(q->name, tx ? rxw : txw) ? 0 : 1;
		if (score > best_score) {
			best = n->irqs[i];
			best_score = score;
		}
	}
	/* A single-queue NIC with one IRQ named for the device alone (tg3's
	 * "eth0"): that IRQ serves queue 0 both ways. */
	if (best < 0 && queue == 0 && n->nirqs == 1 && t->irqs[n->irqs[0]].queue < 0)
		best = n->irqs[0];
	return best;
}

int nt_nic_queues_read(const nt_topology *t, const nt_nic *n, nt_nic_queues *out)
{
	char q[16];
	memset(out, 0, sizeof(*out));
	int nrx, ntx;
	int r = nt_queues_count(&t->ctx, n->name, &nrx, &ntx);
	if (r < 0)
		return r;
	out->rx = calloc((size_t)nrx + 1, sizeof(*out->rx));
	out->tx = calloc((size_t)ntx + 1, sizeof(*out->tx));
	if (!out->rx || !out->tx)
		return -ENOMEM;
	out->nrx = nrx;
	out->ntx = ntx;
	for (int i = 0; i < nrx; i++) {
		nt_rxq *x = &out->rx[i];
		snprintf(q, sizeof(q), "rx-%d", i);
		x->queue = i;
		x->napi_id = -1;
		x->stats = -1;
		x->irq = nt_nic_queue_irq(t, n, i, false);
		x->rps_err = nt_queue_read_mask(&t->ctx, n->name, q, "rps_cpus", &x->rps_cpus, NULL);
		x->flow_err = nt_queue_read_long(&t->ctx, n->name, q, "rps_flow_cnt", &x->rps_flow_cnt);
	}
	for (int i = 0; i < ntx; i++) {
		nt_txq *x = &out->tx[i];
		snprintf(q, sizeof(q), "tx-%d", i);
		x->queue = i;
		x->napi_id = -1;
		x->stats = -1;
		x->irq = nt_nic_queue_irq(t, n, i, true);
		x->xps_err = nt_queue_read_mask(&t->ctx, n->name, q, "xps_cpus", &x->xps_cpus, NULL);
		x->rxqs_err = nt_queue_read_mask(&t->ctx, n->name, q, "xps_rxqs", &x->xps_rxqs, NULL);
	}
	return 0;
}

static json_t *set_or_null(int err, const nt_cpuset *s)
{
	return err < 0 ? json_null() : nt_cpuset_json(s);
}

/* "irq", "irq_cpus" and "effective_cpus" of the IRQ at index IDX. */
static void irq_members(const nt_topology *t, int idx, json_t *o)
{
	const nt_irq *q = idx >= 0 ? &t->irqs[idx] : NULL;
	json_object_set_new(o, "irq", q ? json_integer(q->irq) : json_null());
	json_object_set_new(o, "irq_cpus", q && q->has_affinity ? nt_cpuset_json(&q->affinity) : json_null());
	json_object_set_new(o, "effective_cpus",
			    q && q->has_effective ? nt_cpuset_json(&q->effective) : json_null());
}

/* A queue's counters as the API names them: the spec's words with '_'
 * for '-' ("rx_packets"), only those the kernel gave; null for none. */
static json_t *stats_json(const nt_nic_queues *q, int idx)
{
	if (idx < 0 || idx >= q->nqstats)
		return json_null();
	const nt_nd_qstats *s = &q->qstats[idx];
	json_t *o = json_object();
	for (int i = 0; o && i < NT_NETDEV_QSTATS_N; i++) {
		char key[40];
		if (!(s->present & (1u << i)))
			continue;
		snprintf(key, sizeof(key), "%s", nt_netdev_qstat_names[i]);
		for (char *c = key; *c; c++)
			if (*c == '-')
				*c = '_';
		/* JSON integers here are signed 64-bit; a counter past that has
		 * wrapped in all but name, and is shown at the cap. */
		json_object_set_new(o, key, json_integer(s->v[i] > INT64_MAX ? INT64_MAX : (json_int_t)s->v[i]));
	}
	return o ? o : json_null();
}

json_t *nt_nic_queues_json(const nt_topology *t, const nt_nic_queues *q)
{
	json_t *rx = json_array(), *tx = json_array();
	json_t *o = json_pack("{s:o,s:o}", "rx", rx, "tx", tx);
	if (!o)
		return NULL;
	for (int i = 0; i < q->nrx; i++) {
		const nt_rxq *x = &q->rx[i];
		json_t *e = json_pack("{s:i}", "queue", x->queue);
		if (!e)
			goto fail;
		irq_members(t, x->irq, e);
		json_object_set_new(e, "napi_id", x->napi_id < 0 ? json_null() : json_integer(x->napi_id));
		json_object_set_new(e, "rps_cpus", set_or_null(x->rps_err, &x->rps_cpus));
		json_object_set_new(e, "rps_flow_cnt",
				    x->flow_err < 0 ? json_null() : json_integer(x->rps_flow_cnt));
		json_object_set_new(e, "stats", stats_json(q, x->stats));
		json_array_append_new(rx, e);
	}
	for (int i = 0; i < q->ntx; i++) {
		const nt_txq *x = &q->tx[i];
		json_t *e = json_pack("{s:i}", "queue", x->queue);
		if (!e)
			goto fail;
		irq_members(t, x->irq, e);
		json_object_set_new(e, "napi_id", x->napi_id < 0 ? json_null() : json_integer(x->napi_id));
		json_object_set_new(e, "xps_cpus", set_or_null(x->xps_err, &x->xps_cpus));
		json_object_set_new(e, "xps_rxqs", set_or_null(x->rxqs_err, &x->xps_rxqs));
		json_object_set_new(e, "stats", stats_json(q, x->stats));
		json_array_append_new(tx, e);
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *xfrm_json(const nt_ctx *ctx, uint8_t x);

json_t *nt_nic_rss_json(const nt_topology *t, const nt_nic *n)
{
	nt_rss rss;
	if (nt_rss_read(&t->ctx, n->name, &rss) < 0)
		return json_null();
	json_t *weights = json_array(), *fields = json_object();
	json_t *o = json_pack("{s:I, s:I, s:i, s:o, s:o, s:o}", "indir_size", (json_int_t)rss.indir_size, "key_size",
			      (json_int_t)rss.key_size, "hfunc", rss.hfunc, "weights", weights, "hash_fields", fields,
			      "input_xfrm", xfrm_json(&t->ctx, rss.input_xfrm));
	uint32_t top = 0;
	for (uint32_t i = 0; i < rss.indir_size; i++)
		if (rss.indir[i] + 1 > top && rss.indir[i] < NT_QUEUES_MAX)
			top = rss.indir[i] + 1;
	for (uint32_t q = 0; o && q < top; q++) {
		json_int_t c = 0;
		for (uint32_t i = 0; i < rss.indir_size; i++)
			c += rss.indir[i] == q;
		json_array_append_new(weights, json_integer(c));
	}
	for (int f = 0; o && f < NT_RSS_FLOWS; f++)
		if (rss.fields[f][0])
			json_object_set_new(fields, nt_rss_flow_names[f], json_string(rss.fields[f]));
	nt_rss_free(&rss);
	if (o)
		json_object_set_new(o, "contexts", nt_nic_rss_contexts_json(t, n));
	return o;
}

/* The input transformation as its word ("none", "sym-xor", ...), null on
 * a kernel before 6.8, which has none to read. */
static json_t *xfrm_json(const nt_ctx *ctx, uint8_t x)
{
	char rel[64], text[16];
	if (nt_rss_kernel_lacks(ctx, "6.8", rel, sizeof(rel)) || !rel[0])
		return json_null();
	nt_rss_xfrm_format(x, text, sizeof(text));
	return json_string(text);
}

/* One context: its table (as text and as the queues it names), its hash
 * function and input transformation, the locations of the rules sending
 * flows to it. */
static json_t *context_json(const nt_ctx *ctx, uint32_t id, const nt_rss *c, const nt_flow_table *ft)
{
	char text[256];
	json_t *queues = json_array(), *rules = json_array();
	if (nt_rss_indir_format(c->indir, c->indir_size, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "?");
	json_t *o = json_pack("{s:I, s:s, s:I, s:i, s:o, s:o}", "id", (json_int_t)id, "table", text, "indir_size",
			      (json_int_t)c->indir_size, "hfunc", c->hfunc, "queues", queues, "rules", rules);
	if (o)
		json_object_set_new(o, "input_xfrm", xfrm_json(ctx, c->input_xfrm));
	uint32_t top = 0;
	for (uint32_t i = 0; i < c->indir_size; i++)
		if (c->indir[i] + 1 > top && c->indir[i] < NT_QUEUES_MAX)
			top = c->indir[i] + 1;
	for (uint32_t q = 0; o && q < top; q++)
		for (uint32_t i = 0; i < c->indir_size; i++)
			if (c->indir[i] == q) {
				json_array_append_new(queues, json_integer(q));
				break;
			}
	for (int k = 0; o && ft && k < ft->n; k++)
		if (ft->rules[k].context == id)
			json_array_append_new(rules, json_integer(ft->rules[k].location));
	return o;
}

json_t *nt_nic_rss_contexts_json(const nt_topology *t, const nt_nic *n)
{
	nt_flow_table ft;
	bool have_ft = nt_flows_read(&t->ctx, n->name, &ft) == 0;
	uint32_t ids[65];
	int nids = 0;
	/* A kernel with the RSS dump (6.12) lists every context; before, the
	 * ids to read are those the rules name, ascending, then 1. */
	bool listed = nt_rss_nl_context_ids(NULL, &t->ctx, n->name, ids, 64, &nids) == 0;
	if (!listed)
		nids = 0;
	for (int k = 0; !listed && have_ft && k < ft.n && nids < 64; k++) {
		uint32_t id = ft.rules[k].context;
		int at = 0;
		while (at < nids && ids[at] < id)
			at++;
		if (!id || (at < nids && ids[at] == id))
			continue;
		memmove(ids + at + 1, ids + at, (size_t)(nids - at) * sizeof(*ids));
		ids[at] = id;
		nids++;
	}
	/* Id 1 is read either way: whether the driver has contexts at all is
	 * told by its answer (EOPNOTSUPP or ENOENT) when none is listed. */
	if (!nids || ids[0] != 1) {
		memmove(ids + 1, ids, (size_t)nids * sizeof(*ids));
		ids[0] = 1;
		nids++;
	}
	json_t *list = json_array();
	json_t *o = json_pack("{s:o, s:o, s:s}", "supported", json_null(), "list", list, "listed_from",
			      listed ? "netlink"
				     : "the ids the NIC's flow rules name, and id 1: the ioctl reads a context by its id "
				       "and cannot list them, so a context no rule names is shown only when it is context 1");
	int unsupported = 0, found = 0;
	for (int i = 0; o && i < nids; i++) {
		nt_rss c;
		int r = nt_rss_context_read(&t->ctx, n->name, ids[i], &c);
		if (r == -EOPNOTSUPP) {
			unsupported = 1;
			break;
		}
		if (r == 0) {
			json_array_append_new(list, context_json(&t->ctx, ids[i], &c, have_ft ? &ft : NULL));
			found = 1;
		} else if (r == -ENOENT) {
			found = 1; /* the driver knows contexts: this one is not there */
		}
		nt_rss_free(&c);
	}
	if (o && unsupported) {
		json_object_set_new(o, "supported", json_false());
		json_object_set_new(o, "reason", json_string(nt_rss_contexts_unsupported));
		json_object_del(o, "listed_from");
		json_object_del(o, "list");
	} else if (o && found) {
		json_object_set_new(o, "supported", json_true());
	}
	if (have_ft)
		nt_flow_table_free(&ft);
	return o ? o : json_null();
}
