/* SPDX-License-Identifier: Apache-2.0 */
#include "host/delivery.h"
#include "host/napi.h"
#include "host/queues.h"
#include "kernel/ctx.h"
#include "kernel/netdev.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Fields of a softnet_stat row, by position (see nt_softnet_parse). */
enum { SN_PROCESSED = 0, SN_DROPPED = 1, SN_SQUEEZE = 2, SN_RPS = 9, SN_CPU = 12, SN_MIN = 10 };
#define SN_MAX 32

int nt_softnet_parse(const char *text, const int *online, int nonline, nt_softnet *out)
{
	int cap = 0;
	const char *p = text;

	memset(out, 0, sizeof(*out));
	if (!text)
		return NT_EPARSE;
	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		uint64_t f[SN_MAX];
		int nf = 0;
		const char *q = p;

		while (q < end) {
			while (q < end && isspace((unsigned char)*q))
				q++;
			if (q >= end)
				break;
			uint64_t v = 0;
			int digits = 0;
			while (q < end && isxdigit((unsigned char)*q)) {
				int d = isdigit((unsigned char)*q) ? *q - '0' : (tolower((unsigned char)*q) - 'a' + 10);
				if (v >> 60)
					return NT_EPARSE;
				v = v * 16 + (uint64_t)d;
				q++;
				digits++;
			}
			if (!digits || (q < end && !isspace((unsigned char)*q)))
				return NT_EPARSE;
			if (nf < SN_MAX)
				f[nf] = v;
			nf++;
		}
		if (nf == 0) { /* an empty line (the trailing newline) */
			p = eol ? eol + 1 : end;
			continue;
		}
		if (nf < SN_MIN)
			return NT_EPARSE;
		if (out->n == cap) {
			int ncap = cap ? cap * 2 : 64;
			nt_softnet_row *rows = realloc(out->rows, sizeof(*rows) * (size_t)ncap);
			if (!rows)
				return -ENOMEM;
			out->rows = rows;
			cap = ncap;
		}
		nt_softnet_row *r = &out->rows[out->n];
		r->processed = f[SN_PROCESSED];
		r->dropped = f[SN_DROPPED];
		r->time_squeeze = f[SN_SQUEEZE];
		r->received_rps = f[SN_RPS];
		/* A CPU a set cannot hold (NT_MAX_CPUS and above) refuses the
		 * text: the rows are looked up by CPU in sets later. */
		if (nf > SN_CPU) {
			if (f[SN_CPU] >= NT_MAX_CPUS)
				return NT_EPARSE;
			r->cpu = (int)f[SN_CPU];
			out->cpu_column = true;
		} else {
			/* Before 5.10 a row is an online CPU's, in order, with no
			 * number: offline CPUs leave no row, so the index alone
			 * would misname every CPU after a hole. */
			r->cpu = online && out->n < nonline ? online[out->n] : out->n;
			if (r->cpu < 0 || r->cpu >= NT_MAX_CPUS)
				return NT_EPARSE;
		}
		out->n++;
		p = eol ? eol + 1 : end;
	}
	return 0;
}

void nt_softnet_free(nt_softnet *s)
{
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

int nt_delivery_sample_read(const nt_ctx *ctx, nt_delivery_sample *s)
{
	char *text = NULL;

	memset(s, 0, sizeof(*s));
	int r = nt_rates_sample(ctx, &s->irq);
	if (r < 0)
		return r;
	/* Like the softirqs, softnet is extra evidence: a host without it
	 * (a fixture root, a container's /proc) still gets the IRQ verdicts. */
	if (nt_read_all(ctx, &text, "/proc/net/softnet_stat") >= 0) {
		r = nt_softnet_parse(text, s->irq.ints.cpus, s->irq.ints.ncols, &s->softnet);
		free(text);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			nt_softnet_free(&s->softnet);
	}
	return 0;
}

void nt_delivery_sample_free(nt_delivery_sample *s)
{
	nt_rates_sample_free(&s->irq);
	nt_softnet_free(&s->softnet);
	free(s->qstats);
	s->qstats = NULL;
	s->nqstats = 0;
}

int nt_delivery_sample_qstats(const nt_topology *t, nt_delivery_sample *s)
{
	nt_netdev nd;
	memset(&nd, 0, sizeof(nd));
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *n = &t->nics[i];
		/* The check judges the IRQs of NICs: one without has no queue
		 * it could tell about. */
		if (!n->nirqs)
			continue;
		if (nt_netdev_qstats_read(&t->ctx, n->name, n->ifindex, &nd) == -ENOMEM) {
			nt_netdev_free(&nd);
			return -ENOMEM;
		}
	}
	free(s->qstats);
	s->qstats = nd.qstats;
	s->nqstats = nd.nqstats;
	nd.qstats = NULL;
	nt_netdev_free(&nd);
	return 0;
}

/* The packets counter of a qstats entry: rx-packets of an RX queue,
 * tx-packets of a TX queue (their bits in nt_nd_qstats.present). */
static bool queue_pkts(const nt_nd_qstats *e, uint64_t *v)
{
	int bit = e->type == NT_NETDEV_QUEUE_TX ? 2 : 0;
	if (!(e->present & (1u << bit)))
		return false;
	*v = e->v[bit];
	return true;
}

/* Per IRQ of IN->t0 (by index): the packets the queues it serves counted
 * between the two samples, -1 where none of its queues was counted in
 * both. A malloc'd array of t0->nirqs entries, NULL when out of memory. */
static int64_t *irq_queue_packets(const nt_delivery_in *in)
{
	const nt_topology *t0 = in->t0;
	int64_t *v = malloc(sizeof(*v) * (size_t)(t0->nirqs ? t0->nirqs : 1));
	if (!v)
		return NULL;
	for (int i = 0; i < t0->nirqs; i++)
		v[i] = -1;
	for (size_t i = 0; i < in->b->nqstats; i++) {
		const nt_nd_qstats *eb = &in->b->qstats[i], *ea = NULL;
		uint64_t pb, pa;
		if (!queue_pkts(eb, &pb))
			continue;
		for (size_t k = 0; k < in->a->nqstats && !ea; k++) {
			const nt_nd_qstats *x = &in->a->qstats[k];
			if (x->ifindex == eb->ifindex && x->type == eb->type && x->id == eb->id)
				ea = x;
		}
		if (!ea || !queue_pkts(ea, &pa))
			continue;
		const nt_nic *nic = NULL;
		for (int n = 0; n < t0->nnics && !nic; n++)
			if (t0->nics[n].ifindex == (int)eb->ifindex)
				nic = &t0->nics[n];
		if (!nic || eb->id > INT32_MAX)
			continue;
		int idx = nt_host_napi_queue_irq(in->napi, t0, nic, (int)eb->id, eb->type == NT_NETDEV_QUEUE_TX, NULL);
		if (idx < 0 || idx >= t0->nirqs)
			continue;
		/* A counter that went down (the queue was re-created) counts
		 * from zero. */
		uint64_t d = pb >= pa ? pb - pa : pb;
		if (v[idx] < 0)
			v[idx] = 0;
		v[idx] += d > INT64_MAX - (uint64_t)v[idx] ? INT64_MAX - v[idx] : (int64_t)d;
	}
	return v;
}

int nt_delivery_rps_queues(const nt_topology *t, nt_delivery_rxq **out, int *n)
{
	nt_delivery_rxq *v = NULL;
	int nv = 0;

	*out = NULL;
	*n = 0;
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *nic = &t->nics[i];
		nt_nic_queues q;
		/* Only NICs with IRQs: RPS on a veth or a bond is steering the
		 * check cannot tie to any interrupt it judges. */
		if (!nic->nirqs)
			continue;
		int r = nt_nic_queues_read(t, nic, &q);
		for (int k = 0; r == 0 && k < q.nrx; k++) {
			if (q.rx[k].rps_err || nt_cpuset_empty(&q.rx[k].rps_cpus))
				continue;
			nt_delivery_rxq *g = realloc(v, sizeof(*v) * (size_t)(nv + 1));
			if (!g) {
				nt_nic_queues_free(&q);
				free(v);
				return -ENOMEM;
			}
			v = g;
			v[nv++] = (nt_delivery_rxq){ .nic = i, .queue = q.rx[k].queue, .rps_cpus = q.rx[k].rps_cpus };
		}
		nt_nic_queues_free(&q);
	}
	*out = v;
	*n = nv;
	return 0;
}

const char *nt_delivery_verdict_name(nt_delivery_verdict v)
{
	switch (v) {
	case NT_DELIVERED:
		return "delivered";
	case NT_DELIVERED_ELSEWHERE:
		return "elsewhere";
	case NT_NOT_OBSERVED:
		return "not observed";
	}
	return NULL;
}

static const nt_softnet_row *softnet_row(const nt_softnet *s, int cpu)
{
	for (int i = 0; i < s->n; i++)
		if (s->rows[i].cpu == cpu)
			return &s->rows[i];
	return NULL;
}

static uint64_t delta(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : 0;
}

static json_t *cpulist_json(const nt_cpuset *s, bool known)
{
	char buf[4096];
	if (!known || nt_cpulist_format(s, buf, sizeof(buf)) < 0)
		return json_null();
	return json_string(buf);
}

static const nt_delivery_placed *placed_of(const nt_delivery_in *in, int irq)
{
	for (int i = 0; i < in->nplaced; i++)
		if (in->placed[i].irq == irq)
			return &in->placed[i];
	return NULL;
}

/* Per NIC of t0: interrupts seen, those elsewhere, IRQs judged elsewhere. */
struct nic_sum {
	uint64_t interrupts, elsewhere;
	int irqs_elsewhere;
	bool seen;
};

/* One IRQ's entry; adds its interrupts per CPU column of B to CPU_NIC
 * (NULL for an IRQ of no NIC). */
static json_t *irq_entry(const nt_delivery_in *in, const nt_irq *q, const nt_irq_line *la,
			 const nt_irq_line *lb, uint64_t *cpu_nic, struct nic_sum *sum, int64_t qpkts,
			 nt_delivery_verdict *verdict)
{
	const nt_topology *t0 = in->t0;
	const nt_irq *q1 = in->t1 ? nt_topology_irq(in->t1, q->irq) : NULL;
	const nt_delivery_placed *pl = placed_of(in, q->irq);
	const nt_interrupts *ia = &in->a->irq.ints, *ib = &in->b->irq.ints;
	nt_cpuset allowed = q->affinity;
	bool affinity_known = q->has_affinity;
	bool changed = q1 && q1->has_affinity && (!q->has_affinity || !nt_cpuset_equal(&q->affinity, &q1->affinity));
	json_t *counts = json_object(), *elsewhere = json_array(), *o = NULL;
	uint64_t total = 0, outside = 0;

	if (!counts || !elsewhere)
		goto out;
	if (q1 && q1->has_affinity) {
		nt_cpuset_or(&allowed, &allowed, &q1->affinity);
		affinity_known = true;
	}
	for (int c = 0; c < ib->ncols; c++) {
		int cpu = ib->cpus[c];
		int ca = nt_interrupts_column(ia->cpus, ia->ncols, cpu);
		uint64_t d = ca < 0 ? 0 : delta(la->counts[ca], lb->counts[c]);
		char k[16];
		if (!d)
			continue;
		snprintf(k, sizeof(k), "%d", cpu);
		json_object_set_new(counts, k, json_integer((json_int_t)d));
		total += d;
		if (cpu_nic)
			cpu_nic[c] += d;
		const char *why = NULL;
		if (pl) {
			if (!nt_cpuset_isset(&pl->cpus, cpu))
				why = "placement";
		} else if (affinity_known && !nt_cpuset_isset(&allowed, cpu)) {
			why = "affinity";
		}
		if (why) {
			outside += d;
			json_array_append_new(elsewhere, json_pack("{s:i, s:I, s:s}", "cpu", cpu, "count",
								   (json_int_t)d, "outside", why));
		}
	}
	*verdict = !total ? NT_NOT_OBSERVED : outside ? NT_DELIVERED_ELSEWHERE : NT_DELIVERED;
	sum->interrupts += total;
	sum->elsewhere += outside;
	sum->irqs_elsewhere += *verdict == NT_DELIVERED_ELSEWHERE;
	sum->seen = true;
	/* The queue: the netdev family's answer where the NAPI read holds
	 * its map of the NIC, else the number in the IRQ's name. */
	int queue = q->queue, fam = -2;
	if (q->nic >= 0)
		fam = nt_host_napi_irq_queue(in->napi, t0, &t0->nics[q->nic], (int)(q - t0->irqs));
	if (fam != -2)
		queue = fam;
	const char *qsource = q->nic < 0 ? NULL : fam != -2 ? "netlink" : "irq-names";
	o = json_pack("{s:i, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:s, s:o}", "irq", q->irq, "name",
		      lb->name, "nic", q->nic >= 0 ? json_string(t0->nics[q->nic].name) : json_null(), "queue",
		      queue >= 0 ? json_integer(queue) : json_null(), "queue_source",
		      qsource ? json_string(qsource) : json_null(), "affinity",
		      cpulist_json(&q->affinity, q->has_affinity), "effective",
		      cpulist_json(&q->effective, q->has_effective), "placed",
		      pl ? cpulist_json(&pl->cpus, true) : json_null(), "placed_by",
		      pl ? json_string(pl->by) : json_null(), "counts", counts, "total", (json_int_t)total,
		      "verdict", nt_delivery_verdict_name(*verdict), "elsewhere", elsewhere);
	counts = elsewhere = NULL;
	if (o && changed)
		json_object_set_new(o, "affinity_end", cpulist_json(&q1->affinity, true));
	/* A silent IRQ: no traffic, or traffic the kernel took without it.
	 * Neither shows where its interrupts would go. */
	const char *traffic = *verdict != NT_NOT_OBSERVED || qpkts < 0 ? NULL : qpkts ? "without-interrupt" : "none";
	if (o && (json_object_set_new(o, "queue_packets", qpkts < 0 ? json_null() : json_integer(qpkts)) < 0 ||
		  json_object_set_new(o, "traffic", traffic ? json_string(traffic) : json_null()) < 0)) {
		json_decref(o);
		o = NULL;
	}
out:
	json_decref(counts);
	json_decref(elsewhere);
	return o;
}

/* RPS: the CPUs any queue steers to, and RPS wake-ups seen outside them. */
static json_t *rps_entry(const nt_delivery_in *in)
{
	const nt_softnet *sa = &in->a->softnet, *sb = &in->b->softnet;
	nt_cpuset all;
	uint64_t seen = 0, outside = 0;
	json_t *elsewhere, *queues, *o;
	nt_delivery_verdict v;

	if (!in->nrxq)
		return json_null();
	nt_cpuset_zero(&all);
	for (int i = 0; i < in->nrxq; i++)
		nt_cpuset_or(&all, &all, &in->rxq[i].rps_cpus);
	elsewhere = json_array();
	queues = json_array();
	if (!elsewhere || !queues)
		goto fail;
	for (int i = 0; i < sb->n; i++) {
		const nt_softnet_row *rb = &sb->rows[i], *ra = softnet_row(sa, rb->cpu);
		if (!ra)
			continue;
		uint64_t d = nt_softnet_delta(ra->received_rps, rb->received_rps);
		seen += d;
		if (d && !nt_cpuset_isset(&all, rb->cpu)) {
			outside += d;
			json_array_append_new(elsewhere, json_pack("{s:i, s:I}", "cpu", rb->cpu, "count", (json_int_t)d));
		}
	}
	/* softnet counts per CPU, not per queue: a wake-up outside every
	 * queue's CPUs is wrong for all of them, one inside some queue's
	 * CPUs cannot be told from right. So each queue gets the host's
	 * verdict; no RPS wake-up at all (or no softnet_stat) shows nothing. */
	v = !seen || !sb->n ? NT_NOT_OBSERVED : outside ? NT_DELIVERED_ELSEWHERE : NT_DELIVERED;
	for (int i = 0; i < in->nrxq; i++) {
		const nt_delivery_rxq *x = &in->rxq[i];
		json_array_append_new(queues, json_pack("{s:s, s:i, s:o, s:s}", "nic", in->t0->nics[x->nic].name,
							"queue", x->queue, "rps_cpus",
							cpulist_json(&x->rps_cpus, true), "verdict",
							nt_delivery_verdict_name(v)));
	}
	o = json_pack("{s:s, s:o, s:I, s:o, s:o}", "verdict", nt_delivery_verdict_name(v), "cpus",
		      cpulist_json(&all, true), "received_rps", (json_int_t)seen, "elsewhere", elsewhere, "queues",
		      queues);
	return o;
fail:
	json_decref(elsewhere);
	json_decref(queues);
	return NULL;
}

json_t *nt_delivery_compute(const nt_delivery_in *in)
{
	const nt_topology *t0 = in->t0;
	const nt_delivery_sample *a = in->a, *b = in->b;
	int ncol = b->irq.ints.ncols;
	uint64_t *cpu_nic = calloc((size_t)(ncol ? ncol : 1), sizeof(*cpu_nic));
	struct nic_sum *sums = calloc((size_t)(t0->nnics ? t0->nnics : 1), sizeof(*sums));
	int nv[3] = { 0, 0, 0 };
	json_t *irqs = json_array(), *nics = json_array(), *cpus = json_array(), *rps = NULL, *out = NULL,
	       *threads = NULL;
	int64_t *qpkts = irq_queue_packets(in);

	if (!cpu_nic || !sums || !irqs || !nics || !cpus || !qpkts)
		goto done;
	for (int i = 0; i < t0->nirqs; i++) {
		const nt_irq *q = &t0->irqs[i];
		/* Every NIC IRQ, and any other IRQ the agent placed (other_irqs:
		 * a disk's, a random number generator's), judged alike; the
		 * latter count in no NIC's sums. */
		struct nic_sum other = { 0 };
		if (q->nic < 0 && !placed_of(in, q->irq))
			continue;
		const nt_irq_line *la = nt_interrupts_line(&a->irq.ints, q->irq), *lb = nt_interrupts_line(&b->irq.ints, q->irq);
		if (!la || !lb)
			continue;
		nt_delivery_verdict v;
		json_t *e = irq_entry(in, q, la, lb, q->nic >= 0 ? cpu_nic : NULL,
				     q->nic >= 0 ? &sums[q->nic] : &other, q->nic >= 0 ? qpkts[i] : -1, &v);
		if (!e || json_array_append_new(irqs, e) < 0)
			goto done;
		nv[v]++;
	}
	for (int n = 0; n < t0->nnics; n++)
		if (sums[n].seen)
			json_array_append_new(nics, json_pack("{s:s, s:I, s:I, s:i}", "nic", t0->nics[n].name,
							      "interrupts", (json_int_t)sums[n].interrupts,
							      "elsewhere", (json_int_t)sums[n].elsewhere,
							      "irqs_elsewhere", sums[n].irqs_elsewhere));
	for (int c = 0; c < ncol; c++) {
		int cpu = b->irq.ints.cpus[c];
		json_t *o = json_pack("{s:i, s:i, s:I}", "cpu", cpu, "node", nt_topology_cpu_node(t0, cpu),
				      "nic_interrupts", (json_int_t)cpu_nic[c]);
		if (!o)
			goto done;
		int sa = nt_interrupts_column(a->irq.soft_cpus, a->irq.nsoft, cpu);
		int sb = nt_interrupts_column(b->irq.soft_cpus, b->irq.nsoft, cpu);
		json_object_set_new(o, "net_rx",
				    sa >= 0 && sb >= 0 ? json_integer((json_int_t)delta(a->irq.net_rx[sa], b->irq.net_rx[sb]))
						       : json_null());
		const nt_softnet_row *ra = softnet_row(&a->softnet, cpu), *rb = softnet_row(&b->softnet, cpu);
		json_object_set_new(o, "processed", ra && rb ? json_integer((json_int_t)nt_softnet_delta(ra->processed, rb->processed)) : json_null());
		json_object_set_new(o, "dropped", ra && rb ? json_integer((json_int_t)nt_softnet_delta(ra->dropped, rb->dropped)) : json_null());
		json_object_set_new(o, "time_squeeze", ra && rb ? json_integer((json_int_t)nt_softnet_delta(ra->time_squeeze, rb->time_squeeze)) : json_null());
		json_object_set_new(o, "received_rps", ra && rb ? json_integer((json_int_t)nt_softnet_delta(ra->received_rps, rb->received_rps)) : json_null());
		json_array_append_new(cpus, o);
	}
	rps = rps_entry(in);
	if (!rps)
		goto done;
	/* Placed NAPI threads, beside their IRQs' entries (host/delivery_threads.c). */
	int tv[3] = { 0, 0, 0 };
	threads = json_array();
	if (!threads)
		goto done;
	for (int i = 0; i < in->nthreads; i++) {
		nt_delivery_verdict v;
		json_t *e = nt_delivery_thread_json(t0, &in->threads[i], irqs, &v);
		if (!e || json_array_append_new(threads, e) < 0)
			goto done;
		tv[v]++;
	}
	out = json_pack("{s:f, s:{s:i, s:i, s:i}, s:O, s:O, s:O, s:O, s:O, s:{s:i, s:i, s:i}}", "window_ms",
			b->irq.t_ms - a->irq.t_ms, "verdicts", "delivered", nv[NT_DELIVERED], "elsewhere",
			nv[NT_DELIVERED_ELSEWHERE], "not_observed", nv[NT_NOT_OBSERVED], "irqs", irqs, "nics", nics,
			"rps", rps, "cpus", cpus, "threads", threads, "thread_verdicts", "delivered", tv[NT_DELIVERED],
			"elsewhere", tv[NT_DELIVERED_ELSEWHERE], "not_observed", tv[NT_NOT_OBSERVED]);
done:
	json_decref(threads);
	json_decref(irqs);
	json_decref(nics);
	json_decref(cpus);
	json_decref(rps);
	free(cpu_nic);
	free(sums);
	free(qpkts);
	return out;
}
