/* SPDX-License-Identifier: Apache-2.0 */
/* Where the agent placed each IRQ, for the delivery check: the journal
 * knows, per IRQ, the newest transaction whose step changed its affinity
 * (nt_store_last_change); that step's after-value is the placement, as
 * long as the transaction's changes stand. A drift repair is such a
 * transaction too, so a host held to a desired state is covered. */
#include "agent/agent.h"
#include "base/grow.h"
#include "host/delivery.h"
#include "host/napi.h"
#include "store/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The after-value of TXN's applied KIND step for TARGET, or NULL. */
static const char *step_after(const json_t *txn, const char *kind_want, const char *target)
{
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(txn, "steps"), i, s) {
		const char *kind = json_string_value(json_object_get(s, "kind"));
		const char *tg = json_string_value(json_object_get(s, "target"));
		const char *res = json_string_value(json_object_get(s, "result"));
		if (kind && tg && res && !strcmp(kind, kind_want) && !strcmp(tg, target) &&
		    !strcmp(res, "applied"))
			return json_string_value(json_object_get(s, "after"));
	}
	return NULL;
}

/* Where the newest transaction that changed KIND TARGET put it, while its
 * changes stand: *CPUS and *ID. TXNS caches the transactions read (id ->
 * document or null). Returns 1 when placed, 0 when not, -ENOMEM. */
static int placed_by(nt_store *st, json_t *txns, const char *kind, const char *target, nt_cpuset *cpus,
		     int64_t *id)
{
	json_t *lc = NULL, *txn;
	char key[32];
	if (nt_store_last_change(st, kind, target, &lc) < 0)
		return 0; /* never changed by the agent, or the store failed: not placed */
	*id = json_integer_value(json_object_get(lc, "txn"));
	json_decref(lc);
	snprintf(key, sizeof(key), "%lld", (long long)*id);
	txn = json_object_get(txns, key);
	if (!txn) {
		json_t *doc = NULL;
		if (nt_store_txn_get(st, *id, &doc) < 0)
			doc = json_null();
		if (json_object_set_new(txns, key, doc) < 0)
			return -ENOMEM;
		txn = doc;
	}
	int status = nt_txn_status_parse(json_string_value(json_object_get(txn, "status")));
	if (status < 0 || !nt_txn_status_holds_changes((nt_txn_status)status))
		return 0;
	const char *after = step_after(txn, kind, target);
	/* "none": the thread was left as it was (no thread then). */
	if (!after || nt_cpulist_parse(after, cpus) < 0 || nt_cpuset_empty(cpus))
		return 0;
	return 1;
}

int nt_agent_placed_irqs(nt_agent *a, const nt_topology *t, nt_delivery_placed **out, int *n)
{
	nt_store *st = nt_agent_store(a);
	nt_delivery_placed *p = NULL;
	json_t *txns = json_object(); /* id -> transaction document, or null */
	size_t np = 0, cap = 0;
	int r = 0;

	*out = NULL;
	*n = 0;
	if (!txns)
		return -ENOMEM;
	if (!st)
		goto done;
	for (int i = 0; i < t->nirqs; i++) {
		const nt_irq *q = &t->irqs[i];
		char target[16];
		nt_cpuset cpus;
		int64_t id;
		/* Every IRQ, not only a NIC's: other_irqs places the rest,
		 * and the check judges those it placed too. */
		snprintf(target, sizeof(target), "%d", q->irq);
		int pr = placed_by(st, txns, "irq_affinity", target, &cpus, &id);
		if (pr < 0) {
			r = pr;
			goto done;
		}
		if (!pr)
			continue;
		if ((r = nt_grow((void **)&p, np, &cap, sizeof(*p), 64)) < 0)
			goto done;
		p[np].irq = q->irq;
		p[np].cpus = cpus;
		snprintf(p[np].by, sizeof(p[np].by), "transaction %lld", (long long)id);
		np++;
	}
done:
	json_decref(txns);
	if (r < 0) {
		free(p);
		return r;
	}
	*out = p;
	*n = (int)np;
	return 0;
}

int nt_agent_placed_threads(nt_agent *a, const nt_topology *t, const nt_host_napi *h, nt_delivery_thread **out,
			    int *n)
{
	nt_store *st = nt_agent_store(a);
	nt_delivery_thread *p = NULL;
	json_t *txns = json_object();
	size_t np = 0, cap = 0;
	int r = 0;

	*out = NULL;
	*n = 0;
	if (!txns)
		return -ENOMEM;
	if (!st || !h)
		goto done;
	/* Each RX queue with a NAPI, as the kind keys its targets. */
	for (size_t i = 0; i < h->nd.nnapis; i++) {
		const nt_napi *x = &h->napis[i];
		char target[64];
		nt_cpuset cpus;
		int64_t id;
		if (x->nic < 0 || x->nic >= t->nnics || x->rx_queue < 0)
			continue;
		snprintf(target, sizeof(target), "%s/rx-%d", t->nics[x->nic].name, x->rx_queue);
		int pr = placed_by(st, txns, "napi_thread_cpus", target, &cpus, &id);
		if (pr < 0) {
			r = pr;
			goto done;
		}
		if (!pr)
			continue;
		if ((r = nt_grow((void **)&p, np, &cap, sizeof(*p), 16)) < 0)
			goto done;
		memset(&p[np], 0, sizeof(p[np]));
		snprintf(p[np].target, sizeof(p[np].target), "%s", target);
		p[np].cpus = cpus;
		snprintf(p[np].by, sizeof(p[np].by), "transaction %lld", (long long)id);
		np++;
	}
	nt_delivery_threads_resolve(t, h, p, (int)np);
done:
	json_decref(txns);
	if (r < 0) {
		free(p);
		return r;
	}
	*out = p;
	*n = (int)np;
	return 0;
}

/* A placed step of the transaction being checked. */
struct placed_step {
	int idx; /* the step's index */
	const char *observed; /* as recorded, borrowed from the document */
};

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* How many of PLACED still have an effective affinity outside their
 * placement in T: a move the kernel has not made yet. */
static int moves_pending(const nt_topology *t, const nt_delivery_placed *placed, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		const nt_irq *q = nt_topology_irq(t, placed[i].irq);
		if (q && q->has_effective && !nt_cpuset_empty(&q->effective) &&
		    !nt_cpuset_subset(&q->effective, &placed[i].cpus))
			k++;
	}
	return k;
}

/* One window: T0, sample, wait, sample, T1, verdicts against PLACED.
 * Where the kernel moves an IRQ only when it next fires (x86 without
 * interrupt remapping: the first interrupt after the write still comes on
 * the old CPU, and only then does effective_affinity change), a window
 * opened at once would count that interrupt against the placement. So the
 * window opens once every placed IRQ's effective affinity is inside its
 * placement, or after one window of waiting for it; *PENDING gets how
 * many moves were still pending then, *SETTLE_MS the wait. */
static json_t *check_once(const nt_ctx *ctx, const nt_delivery_placed *placed, int n, nt_delivery_thread *th,
			  int nth, int window_ms, int *pending, int *settle_ms)
{
	nt_topology *t0 = NULL, *t1 = NULL;
	nt_delivery_sample a, b;
	nt_host_napi napi;
	json_t *doc = NULL;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&napi, 0, sizeof(napi));
	*settle_ms = 0;
	for (;;) {
		if (nt_topology_read(ctx, &t0) < 0)
			goto out;
		*pending = moves_pending(t0, placed, n);
		if (!*pending || *settle_ms >= window_ms)
			break;
		nt_topology_free(t0);
		t0 = NULL;
		sleep_ms(50);
		*settle_ms += 50;
	}
	/* The family's queue->IRQ map, one read for the host. */
	if (nt_host_napi_read(t0, NULL, 0, &napi) < 0)
		goto out;
	/* The threads serving the placed queues now, by the same read. */
	nt_delivery_threads_resolve(t0, &napi, th, nth);
	nt_delivery_threads_sample(ctx, th, nth, false);
	/* Each queue's packets beside the interrupts: a silent IRQ is then
	 * told apart as no traffic or traffic taken without it. */
	if (nt_delivery_sample_read(ctx, &a) < 0 || nt_delivery_sample_qstats(t0, &a) < 0)
		goto out;
	sleep_ms(window_ms);
	if (nt_delivery_sample_read(ctx, &b) < 0 || nt_delivery_sample_qstats(t0, &b) < 0)
		goto out;
	nt_delivery_threads_sample(ctx, th, nth, true);
	if (nt_topology_read(ctx, &t1) < 0)
		t1 = NULL;
	nt_delivery_in in = { .t0 = t0, .t1 = t1, .a = &a, .b = &b, .placed = placed, .nplaced = n, .napi = &napi,
			      .threads = th, .nthreads = nth };
	doc = nt_delivery_compute(&in);
out:
	nt_host_napi_free(&napi);
	nt_delivery_sample_free(&a);
	nt_delivery_sample_free(&b);
	nt_topology_free(t0);
	nt_topology_free(t1);
	return doc;
}

static json_t *thread_entry_of(const json_t *check, const char *target)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(check, "threads"), i, e)
		if (json_is_string(json_object_get(e, "target")) &&
		    !strcmp(json_string_value(json_object_get(e, "target")), target))
			return e;
	return NULL;
}

/* "delivered: ran 3.2 ms, last on CPU 1", "elsewhere: last on CPU 0
 * (placed 1)", "elsewhere: allowed 0-1 (placed 1)", "not observed: it did
 * not run in the window". */
static void thread_verdict_text(const json_t *e, char *buf, size_t size)
{
	const char *v = e ? json_string_value(json_object_get(e, "verdict")) : NULL;
	const char *outside = json_string_value(json_object_get(e, "outside"));
	const char *why = json_string_value(json_object_get(e, "why"));
	long long pid = json_integer_value(json_object_get(e, "pid"));
	long long cpu = json_integer_value(json_object_get(e, "last_cpu"));
	double ms = (double)json_integer_value(json_object_get(e, "run_ns")) / 1e6;
	const char *placed = json_string_value(json_object_get(e, "placed"));
	const char *allowed = json_string_value(json_object_get(e, "allowed"));
	if (!v)
		snprintf(buf, size, "not observed");
	else if (!strcmp(v, "delivered"))
		snprintf(buf, size, "delivered: thread %lld ran %.1f ms, last on CPU %lld", pid, ms, cpu);
	else if (outside && !strcmp(outside, "allowed"))
		snprintf(buf, size, "elsewhere: thread %lld allowed on %s (placed %s)", pid, allowed ? allowed : "?",
			 placed ? placed : "?");
	else if (!strcmp(v, "elsewhere"))
		snprintf(buf, size, "elsewhere: thread %lld ran %.1f ms, last on CPU %lld (placed %s)", pid, ms, cpu,
			 placed ? placed : "?");
	else
		snprintf(buf, size, "%s%s%s", v, why ? ": " : "", why ? why : "");
}

static json_t *irq_entry_of(const json_t *check, int irq)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(check, "irqs"), i, e)
		if (json_integer_value(json_object_get(e, "irq")) == irq)
			return e;
	return NULL;
}

/* "delivered 1:40", "elsewhere 0:7 (placed 1)", "not observed", and of
 * a silent IRQ whose queues were counted "not observed (no traffic)" or
 * "not observed (1200 packets without an interrupt)". */
static void verdict_text(const json_t *e, char *buf, size_t size)
{
	const char *v = e ? json_string_value(json_object_get(e, "verdict")) : NULL;
	const char *traffic = e ? json_string_value(json_object_get(e, "traffic")) : NULL;
	size_t len;
	const char *k;
	json_t *c;

	snprintf(buf, size, "%s", v ? v : "not observed");
	if (traffic && !strcmp(traffic, "none"))
		snprintf(buf, size, "not observed (no traffic)");
	else if (traffic)
		snprintf(buf, size, "not observed (%lld packets without an interrupt)",
			 (long long)json_integer_value(json_object_get(e, "queue_packets")));
	if (!e || !v || !strcmp(v, "not observed"))
		return;
	json_object_foreach(json_object_get(e, "counts"), k, c) {
		len = strlen(buf);
		snprintf(buf + len, size - len, " %s:%lld", k, (long long)json_integer_value(c));
	}
	if (!strcmp(v, "elsewhere")) {
		len = strlen(buf);
		snprintf(buf + len, size - len, " (placed %s)", json_string_value(json_object_get(e, "placed")));
	}
}

int nt_agent_txn_verify(nt_agent *a, int64_t id, int window_ms, bool on_delivery, json_t **doc)
{
	nt_store *st = nt_agent_store(a);
	nt_txn_engine *e = nt_agent_engine(a);
	json_t *txn = NULL, *check = NULL, *summary = NULL, *irqs = NULL, *threads = NULL;
	nt_delivery_placed *placed = NULL;
	nt_delivery_thread *th = NULL;
	int *th_idx = NULL, nth = 0;
	struct placed_step *steps = NULL;
	nt_store_step_rec *recs = NULL;
	char (*texts)[512] = NULL;
	int n = 0, checks = 0, moves = 0, settle_ms = 0, r;
	size_t i;
	json_t *s;

	*doc = NULL;
	if (!st)
		return NT_ESTORE;
	if ((r = nt_store_txn_get(st, id, &txn)) < 0)
		return r;
	const char *status = json_string_value(json_object_get(txn, "status"));
	bool pending = status && !strcmp(status, "pending_confirm");
	/* A transaction that failed, or was put back, placed nothing. */
	if (!pending && !(status && !strcmp(status, "applied"))) {
		*doc = txn;
		return 0;
	}
	size_t nsteps = json_array_size(json_object_get(txn, "steps"));
	placed = calloc(nsteps + 1, sizeof(*placed));
	steps = calloc(nsteps + 1, sizeof(*steps));
	recs = calloc(nsteps + 1, sizeof(*recs));
	texts = calloc(nsteps + 1, sizeof(*texts));
	th = calloc(nsteps + 1, sizeof(*th));
	th_idx = calloc(nsteps + 1, sizeof(*th_idx));
	if (!placed || !steps || !recs || !texts || !th || !th_idx) {
		r = -ENOMEM;
		goto out;
	}
	json_array_foreach(json_object_get(txn, "steps"), i, s) {
		const char *kind = json_string_value(json_object_get(s, "kind"));
		const char *res = json_string_value(json_object_get(s, "result"));
		const char *target = json_string_value(json_object_get(s, "target"));
		const char *after = json_string_value(json_object_get(s, "after"));
		if (!kind || !res || !target || !after || strcmp(res, "applied"))
			continue;
		int idx = json_is_integer(json_object_get(s, "index")) ? (int)json_integer_value(json_object_get(s, "index"))
									: (int)i;
		if (!strcmp(kind, "napi_thread_cpus")) {
			/* A thread placed: judged by where it ran. "none" (no
			 * thread then) placed nothing. */
			if (nt_cpulist_parse(after, &th[nth].cpus) < 0 || nt_cpuset_empty(&th[nth].cpus))
				continue;
			snprintf(th[nth].target, sizeof(th[nth].target), "%s", target);
			snprintf(th[nth].by, sizeof(th[nth].by), "transaction %lld", (long long)id);
			th_idx[nth] = (int)i;
			nth++;
			continue;
		}
		if (strcmp(kind, "irq_affinity"))
			continue;
		if (nt_cpulist_parse(after, &placed[n].cpus) < 0)
			continue;
		placed[n].irq = atoi(target);
		snprintf(placed[n].by, sizeof(placed[n].by), "transaction %lld", (long long)id);
		steps[n].idx = idx;
		steps[n].observed = json_string_value(json_object_get(s, "observed"));
		n++;
	}
	int64_t deadline = json_integer_value(json_object_get(txn, "confirm_deadline_ms"));
	const char *verdict = "not observed";
	int nd = 0, ne = 0, nn = 0;
	int64_t started = nt_store_now_ms();
	/* Nothing placed: nothing to look at, and nothing proven. */
	while (n + nth > 0) {
		json_decref(check);
		check = check_once(nt_agent_ctx(a), placed, n, th, nth, window_ms, &moves, &settle_ms);
		checks++;
		if (!check) {
			r = -ENOMEM;
			goto out;
		}
		nt_agent_note_delivery(a, check, nt_store_now_ms());
		nd = ne = nn = 0;
		for (int k = 0; k < n; k++) {
			const char *v = json_string_value(json_object_get(irq_entry_of(check, placed[k].irq), "verdict"));
			if (v && !strcmp(v, "delivered"))
				nd++;
			else if (v && !strcmp(v, "elsewhere"))
				ne++;
			else
				nn++;
		}
		/* A placed thread counts as a placed IRQ does. */
		for (int k = 0; k < nth; k++) {
			const char *v = json_string_value(json_object_get(thread_entry_of(check, th[k].target), "verdict"));
			if (v && !strcmp(v, "delivered"))
				nd++;
			else if (v && !strcmp(v, "elsewhere"))
				ne++;
			else
				nn++;
		}
		verdict = ne ? "elsewhere" : nd ? "delivered" : "not observed";
		/* Look again while the deadline leaves room for another
		 * window, for at most a minute in all, so the request (and the
		 * agent's stop, which waits for it) is never held for the
		 * whole of a long deadline: when a quiet NIC showed nothing,
		 * and, a few times at most, when the window opened with moves
		 * still pending (the IRQ did not fire while the agent waited)
		 * and saw an interrupt elsewhere, which may be the very one
		 * that makes the move, served by the kernel on the old CPU. */
		bool look_again = (!nd && !ne) || (moves > 0 && ne > 0 && checks < 3);
		int64_t now = nt_store_now_ms();
		if (!on_delivery || !pending || !look_again || now + 2 * (int64_t)window_ms + 500 >= deadline ||
		    now + 2 * (int64_t)window_ms - started > NT_DELIVERY_WINDOW_MAX_MS)
			break;
	}
	irqs = json_array();
	if (!irqs) {
		r = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < n; k++) {
		json_t *ent = irq_entry_of(check, placed[k].irq);
		char v[400];
		verdict_text(ent, v, sizeof(v));
		snprintf(texts[k], sizeof(texts[k]), "%s%s%s", steps[k].observed ? steps[k].observed : "",
			 steps[k].observed ? "; " : "", v);
		recs[k].idx = steps[k].idx;
		recs[k].observed = texts[k];
		if (ent && json_array_size(json_object_get(ent, "elsewhere")))
			json_array_append_new(irqs, json_pack("{s:i, s:O}", "irq", placed[k].irq, "elsewhere",
							      json_object_get(ent, "elsewhere")));
	}
	threads = json_array();
	if (!threads) {
		r = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < nth; k++) {
		json_t *ent = thread_entry_of(check, th[k].target);
		const json_t *s0 = json_array_get(json_object_get(txn, "steps"), (size_t)th_idx[k]);
		const char *obs = json_string_value(json_object_get(s0, "observed"));
		char v[400];
		thread_verdict_text(ent, v, sizeof(v));
		snprintf(texts[n + k], sizeof(texts[n + k]), "%s%s%s", obs ? obs : "", obs ? "; " : "", v);
		recs[n + k].idx = json_is_integer(json_object_get(s0, "index")) ?
					  (int)json_integer_value(json_object_get(s0, "index")) : th_idx[k];
		recs[n + k].observed = texts[n + k];
		if (ent && json_array_append(threads, ent) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	bool confirm = on_delivery && pending && !strcmp(verdict, "delivered");
	summary = json_pack("{s:i, s:i, s:s, s:i, s:i, s:i, s:o, s:o, s:s?, s:b, s:i, s:i}", "window_ms", window_ms,
			    "checks", checks, "verdict", verdict, "delivered", nd, "elsewhere", ne, "not_observed", nn,
			    "irqs_elsewhere", irqs, "threads", threads, "confirm", on_delivery ? "on-delivery" : NULL,
			    "confirmed", confirm, "settle_ms", settle_ms, "moves_pending", moves);
	irqs = threads = NULL;
	if (!summary) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = nt_store_txn_set_delivery(st, id, summary, recs, n + nth)) < 0)
		goto out;
	if (confirm) {
		nt_txn_outcome o = { 0 };
		/* The timer may have reverted it meanwhile: then the
		 * record says reverted, and so does the answer. */
		if (nt_txn_confirm(e, id, &o) < 0) {
			json_object_set_new(summary, "confirmed", json_false());
			nt_store_txn_set_delivery(st, id, summary, NULL, 0);
		}
		nt_txn_outcome_free(&o);
	}
	r = nt_store_txn_get(st, id, doc);
out:
	json_decref(txn);
	json_decref(check);
	json_decref(summary);
	json_decref(irqs);
	json_decref(threads);
	free(th);
	free(th_idx);
	free(placed);
	free(steps);
	free(recs);
	free(texts);
	return r;
}
