/* SPDX-License-Identifier: Apache-2.0 */
/* NAPI findings, from what the kernel's `netdev` family said of each NIC
 * (host/napi.h; nt_diag_options.napi), one finding per NIC and id, the
 * NAPIs it concerns in its evidence:
 *   napi-thread-unpinned       a threaded NAPI whose thread may run on CPUs
 *                              beyond those serving its IRQ (with no IRQ:
 *                              beyond its NIC's node, or on every CPU);
 *   napi-thread-apart          a thread pinned to CPUs that share none with
 *                              its IRQ's, or none of its NIC's node;
 *   napi-defer-without-timeout defer-hard-irqs above 0 with
 *                              gro-flush-timeout 0: nothing is deferred;
 *   irq-suspend-without-defer  irq-suspend-timeout set without
 *                              defer-hard-irqs and gro-flush-timeout.
 * Documentation/networking/napi.rst is the source of each rule; the
 * messages quote it. A NIC the family did not answer for (a kernel before
 * 6.8, a fixture without the answers) gets none of them: the threads found
 * by name say nothing sure of which IRQ or queue they serve. */
#include "diagnose/diagnose_int.h"
#include "host/napi.h"
#include "placement/irq.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NAPIs named in a message, at most; the evidence lists every one. */
#define NAPI_NAMED_MAX 3

/* Where a thread's fix CPUs come from. */
enum fix_from { FIX_NONE, FIX_IRQ_AFFINITY, FIX_IRQ_EFFECTIVE, FIX_NIC_NODE, FIX_ONLINE };

static const char *const fix_from_names[] = { NULL, "irq-affinity", "irq-effective", "nic-node", "online-cpus" };

/* One threaded NAPI of a NIC, judged. */
typedef struct judged {
	const nt_napi *x;
	int irq; /* index into t->irqs, -1 none */
	const char *irq_source; /* "netlink" or "irq-names", NULL without IRQ */
	nt_cpuset serving; /* the CPUs serving its IRQ; empty without IRQ */
	const char *serving_from; /* "effective" or "affinity" */
	enum fix_from from;
	nt_cpuset fix; /* the CPUs to pin it to (FIX_IRQ_AFFINITY: "irq") */
} judged;

static int cmp_napi(const void *pa, const void *pb)
{
	const nt_napi *a = *(const nt_napi *const *)pa, *b = *(const nt_napi *const *)pb;
	/* By queue, NAPIs serving none last, then by id. */
	unsigned qa = (unsigned)a->rx_queue, qb = (unsigned)b->rx_queue;
	if (qa != qb)
		return qa < qb ? -1 : 1;
	return (a->nd.id > b->nd.id) - (a->nd.id < b->nd.id);
}

/* NIC's NAPIs in H (borrowed pointers), by queue then id; *N how many.
 * Returns a malloc'd array (NULL with *N 0 when there are none). */
static const nt_napi **nic_napis(const nt_host_napi *h, int nic, size_t *n)
{
	const nt_napi **v = NULL;
	*n = 0;
	for (size_t i = 0; i < h->nd.nnapis; i++)
		*n += h->napis[i].nic == nic;
	if (!*n || !(v = calloc(*n, sizeof(*v)))) {
		*n = 0;
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < h->nd.nnapis; i++)
		if (h->napis[i].nic == nic)
			v[k++] = &h->napis[i];
	qsort(v, k, sizeof(*v), cmp_napi);
	return v;
}

static void cpus_text(const nt_cpuset *s, char *buf, size_t size)
{
	if (nt_cpulist_format(s, buf, size) < 0)
		snprintf(buf, size, "?");
}

/* The IRQ serving X and the CPUs serving it: the family's IRQ for the
 * NAPI, else the IRQ named for its RX queue (as napi[] thread_cpus "irq"
 * finds it, settings/napi.c); effective affinity where the kernel shows
 * one (the CPU that services the interrupt, napi.rst's words), else the
 * affinity. */
static void find_irq(const diag *d, const nt_nic *nic, judged *j)
{
	const nt_topology *t = d->t;
	const nt_napi *x = j->x;
	const nt_irq *q = x->nd.irq >= 0 && x->nd.irq <= INT32_MAX ? nt_topology_irq(t, (int)x->nd.irq) : NULL;
	j->irq = -1;
	nt_cpuset_zero(&j->serving);
	if (q) {
		j->irq_source = "netlink";
	} else if (x->rx_queue >= 0) {
		int idx = nt_nic_queue_irq(t, nic, x->rx_queue, false);
		q = idx >= 0 ? &t->irqs[idx] : NULL;
		j->irq_source = q ? "irq-names" : NULL;
	}
	if (!q)
		return;
	j->irq = (int)(q - t->irqs);
	if (q->has_effective && !nt_cpuset_empty(&q->effective)) {
		j->serving = q->effective;
		j->serving_from = "effective";
	} else if (q->has_affinity) {
		j->serving = q->affinity;
		j->serving_from = "affinity";
	}
}

/* Where X's thread should go: with an IRQ, "irq" when its affinity is
 * what serves it (the profile then follows the IRQ wherever the same
 * profile places it), else the CPUs serving it now (an affinity wider than
 * its effective CPU would leave the thread as free as before); without,
 * one CPU of the NIC's node (every online CPU when the node is unknown) a
 * queue, dealt in queue order as irq_affinity's "cpus" deals them. */
static void choose_fix(const diag *d, const nt_cpuset *local, bool has_node, judged *j)
{
	const nt_irq *q = j->irq >= 0 ? &d->t->irqs[j->irq] : NULL;
	j->from = FIX_NONE;
	nt_cpuset_zero(&j->fix);
	if (j->x->rx_queue < 0)
		return; /* napi[] names a NAPI by the RX queue it serves */
	if (q && !nt_cpuset_empty(&j->serving)) {
		if (q->has_affinity && nt_cpuset_equal(&q->affinity, &j->serving)) {
			j->from = FIX_IRQ_AFFINITY;
		} else {
			j->from = FIX_IRQ_EFFECTIVE;
		}
		j->fix = j->serving;
		return;
	}
	int cpu;
	if (nt_deal_cpus(local, j->x->rx_queue, 1, &cpu) < 0)
		return;
	nt_cpuset_set(&j->fix, cpu);
	j->from = has_node ? FIX_NIC_NODE : FIX_ONLINE;
}

static json_t *judged_json(const diag *d, const judged *j)
{
	const nt_napi *x = j->x;
	json_t *o = json_pack("{s:I, s:o, s:I, s:o}", "napi_id", (json_int_t)x->nd.id, "queue",
			      x->rx_queue >= 0 ? json_integer(x->rx_queue) : json_null(), "pid", (json_int_t)x->pid,
			      "thread_cpus", nt_cpuset_json(&x->thread_cpus));
	if (!o)
		return NULL;
	const nt_irq *q = j->irq >= 0 ? &d->t->irqs[j->irq] : NULL;
	json_object_set_new(o, "irq", q ? json_integer(q->irq) : json_null());
	json_object_set_new(o, "irq_source", j->irq_source ? json_string(j->irq_source) : json_null());
	json_object_set_new(o, "irq_cpus", q && !nt_cpuset_empty(&j->serving) ? nt_cpuset_json(&j->serving) : json_null());
	json_object_set_new(o, "irq_cpus_from", q && j->serving_from ? json_string(j->serving_from) : json_null());
	json_object_set_new(o, "fix_cpus", j->from == FIX_NONE ? json_null() :
					    j->from == FIX_IRQ_AFFINITY ? json_string("irq") : nt_cpuset_json(&j->fix));
	json_object_set_new(o, "fix_from", j->from == FIX_NONE ? json_null() : json_string(fix_from_names[j->from]));
	return o;
}

/* "NAPI 8193 (rx-0, thread pid 3100) may run on CPUs 0-127 while CPU 48
 * serves its IRQ 123" and the like, one NAPI. */
static void describe(const diag *d, const judged *j, char *buf, size_t size)
{
	char a[256], s[256], qn[24] = "no RX queue";
	const nt_napi *x = j->x;
	cpus_text(&x->thread_cpus, a, sizeof(a));
	if (x->rx_queue >= 0)
		snprintf(qn, sizeof(qn), "rx-%d", x->rx_queue);
	if (j->irq >= 0 && !nt_cpuset_empty(&j->serving)) {
		cpus_text(&j->serving, s, sizeof(s));
		snprintf(buf, size, "NAPI %u (%s, thread pid %lld) on CPUs %s, its IRQ %d on %s (%s)", x->nd.id, qn,
			 x->pid, a, d->t->irqs[j->irq].irq, s, j->serving_from);
	} else {
		snprintf(buf, size, "NAPI %u (%s, thread pid %lld) on CPUs %s, no IRQ", x->nd.id, qn, x->pid, a);
	}
}

/* The message's list: the first NAPI_NAMED_MAX of V, "; "-separated, and
 * how many more. */
static void describe_list(const diag *d, const judged *v, size_t n, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && i < NAPI_NAMED_MAX && len < size; i++) {
		char one[640];
		describe(d, &v[i], one, sizeof(one));
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "; " : "", one);
	}
	if (n > NAPI_NAMED_MAX && len < size)
		snprintf(buf + len, size - len, "; and %zu more", n - NAPI_NAMED_MAX);
}

/* The napi[] entries that pin V's threads: one per distinct fix, each
 * with the queues it pins. NULL when none of V has a fix. */
static json_t *thread_fix(const nt_nic *nic, const judged *v, size_t n)
{
	json_t *arr = json_array();
	bool *done = calloc(n ? n : 1, sizeof(*done));
	if (!arr || !done)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (done[i] || v[i].from == FIX_NONE)
			continue;
		nt_cpuset queues;
		nt_cpuset_zero(&queues);
		for (size_t k = i; k < n; k++) {
			bool same = v[k].from != FIX_NONE && (v[k].from == FIX_IRQ_AFFINITY) == (v[i].from == FIX_IRQ_AFFINITY) &&
				    (v[i].from == FIX_IRQ_AFFINITY || nt_cpuset_equal(&v[k].fix, &v[i].fix));
			if (!done[k] && same) {
				nt_cpuset_set(&queues, v[k].x->rx_queue);
				done[k] = true;
			}
		}
		char ql[1024], cl[1024];
		cpus_text(&queues, ql, sizeof(ql));
		if (v[i].from == FIX_IRQ_AFFINITY)
			snprintf(cl, sizeof(cl), "irq");
		else
			cpus_text(&v[i].fix, cl, sizeof(cl));
		if (json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "interface", nic->name, "queues", ql,
							 "thread_cpus", cl)) < 0)
			goto fail;
	}
	free(done);
	if (json_array_size(arr) == 0) {
		json_decref(arr);
		return NULL;
	}
	return json_pack("{s:o}", "napi", arr);
fail:
	free(done);
	json_decref(arr);
	return NULL;
}

/* What the fix does, in words, for the kinds of fix V's entries use. */
static void fix_words(const judged *v, size_t n, int dev_threaded, char *buf, size_t size)
{
	bool used[5] = { false };
	size_t len = 0, nofix = 0;
	for (size_t i = 0; i < n; i++) {
		used[v[i].from] = true;
		nofix += v[i].from == FIX_NONE;
	}
	buf[0] = 0;
	if (dev_threaded <= 0) {
		snprintf(buf, size, " No fix: napi[] thread_cpus needs the device's threaded on "
				    "(/sys/class/net/IF/threaded), which would thread every NAPI of it.");
		return;
	}
	static const char *const words[] = {
		NULL,
		"thread_cpus \"irq\" (its IRQ's affinity, as this profile places it, else as it is)",
		"the CPUs serving its IRQ now (its effective affinity: the IRQ's affinity allows more, so "
		"\"irq\" would pin nothing)",
		"one CPU of the NIC's node a queue, in queue order (it has no IRQ to follow)",
		"one online CPU a queue, in queue order (no IRQ to follow, the NIC's node unknown)",
	};
	for (int k = FIX_IRQ_AFFINITY; k <= FIX_ONLINE && len < size; k++)
		if (used[k])
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "; or " : " Fix: napi[] pins it to ",
						words[k]);
	if (len < size && len)
		len += (size_t)snprintf(buf + len, size - len, ".");
	if (nofix && len < size)
		snprintf(buf + len, size - len, " %zu serve%s no RX queue, which napi[] names them by: no fix.", nofix,
			 nofix == 1 ? "s" : "");
}

static int add_thread_finding(diag *d, const nt_nic *nic, const char *id, const judged *v, size_t n,
			      const nt_cpuset *local, bool has_node, int dev_threaded)
{
	if (!n)
		return 0;
	json_t *list = json_array();
	for (size_t i = 0; list && i < n; i++)
		if (json_array_append_new(list, judged_json(d, &v[i])) < 0) {
			json_decref(list);
			list = NULL;
		}
	json_t *ev = list ? json_pack("{s:o, s:o, s:o}", "napis", list, "node_cpus",
				      has_node ? nt_cpuset_json(local) : json_null(), "threaded",
				      dev_threaded < 0 ? json_null() : json_boolean(dev_threaded)) :
			    NULL;
	json_t *fix = dev_threaded > 0 ? thread_fix(nic, v, n) : NULL;
	char named[2048], how[512];
	describe_list(d, v, n, named, sizeof(named));
	fix_words(v, n, dev_threaded, how, sizeof(how));
	if (!strcmp(id, "napi-thread-unpinned"))
		return diag_add_finding(d, id, SEV_WARNING, nic->name, ev, fix,
					"%s: %zu NAPI thread%s may run on CPUs beyond those serving %s IRQ%s (or, "
					"without an IRQ, beyond the NIC's node or on every CPU): %s. napi.rst: \"It is "
					"recommended to pin each kernel thread to a single CPU, the same CPU as the CPU "
					"which services the interrupt\"; the kernel does not.%s",
					nic->name, n, n == 1 ? "" : "s", n == 1 ? "its" : "their", n == 1 ? "" : "s",
					named, how);
	return diag_add_finding(d, id, SEV_WARNING, nic->name, ev, fix,
				"%s: %zu NAPI thread%s pinned to CPUs that share none with those serving %s IRQ%s, or "
				"none of the NIC's node: %s. Each interrupt then wakes a thread on another CPU, and "
				"the packets are processed away from where they arrived (napi.rst advises the CPU "
				"which services the interrupt).%s",
				nic->name, n, n == 1 ? " is" : "s are", n == 1 ? "its" : "their", n == 1 ? "" : "s",
				named, how);
}

static int check_threads(diag *d, int i, const nt_napi_nic *c)
{
	const nt_topology *t = d->t;
	const nt_nic *nic = &t->nics[i];
	nt_cpuset local;
	bool has_node = nt_nic_local_cpus(t, nic, &local) && !nt_cpuset_empty(&local);
	if (!has_node)
		local = t->cpus_online;
	size_t n = 0, nun = 0, nap = 0;
	const nt_napi **v = nic_napis(d->napi, i, &n);
	judged *un = calloc(n ? n : 1, sizeof(*un)), *ap = calloc(n ? n : 1, sizeof(*ap));
	int r = -ENOMEM;
	if ((n && !v) || !un || !ap)
		goto out;
	for (size_t k = 0; k < n; k++) {
		judged j = { .x = v[k] };
		const nt_cpuset *a = &v[k]->thread_cpus;
		if (v[k]->threaded != 1 || v[k]->pid <= 0 || !v[k]->has_cpus || nt_cpuset_empty(a))
			continue;
		find_irq(d, nic, &j);
		bool irq_known = j.irq >= 0 && !nt_cpuset_empty(&j.serving);
		bool apart = (irq_known && !nt_cpuset_intersects(a, &j.serving)) ||
			     (has_node && !nt_cpuset_intersects(a, &local));
		bool unpinned = irq_known ? !nt_cpuset_subset(a, &j.serving) :
					    !nt_cpuset_subset(a, &local) ||
						    (nt_cpuset_count(&local) > 1 && nt_cpuset_subset(&local, a));
		if (!apart && !unpinned)
			continue;
		choose_fix(d, &local, has_node, &j);
		if (apart)
			ap[nap++] = j;
		else
			un[nun++] = j;
	}
	r = add_thread_finding(d, nic, "napi-thread-unpinned", un, nun, &local, has_node, c->dev.threaded);
	if (r == 0)
		r = add_thread_finding(d, nic, "napi-thread-apart", ap, nap, &local, has_node, c->dev.threaded);
out:
	free(v);
	free(un);
	free(ap);
	return r;
}

/* "8193 (rx-0), 8194 (rx-1), ... and 14 more". */
static void ids_text(const nt_napi *const *v, size_t n, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && i < NAPI_NAMED_MAX && len < size; i++) {
		if (v[i]->rx_queue >= 0)
			len += (size_t)snprintf(buf + len, size - len, "%s%u (rx-%d)", i ? ", " : "", v[i]->nd.id,
						v[i]->rx_queue);
		else
			len += (size_t)snprintf(buf + len, size - len, "%s%u", i ? ", " : "", v[i]->nd.id);
	}
	if (n > NAPI_NAMED_MAX && len < size)
		snprintf(buf + len, size - len, " and %zu more", n - NAPI_NAMED_MAX);
}

static json_t *values_json(const nt_napi *const *v, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++) {
		const nt_napi *x = v[i];
		if (json_array_append_new(arr, json_pack("{s:I, s:o, s:I, s:I, s:I}", "napi_id", (json_int_t)x->nd.id,
							 "queue", x->rx_queue >= 0 ? json_integer(x->rx_queue) : json_null(),
							 "defer_hard_irqs", (json_int_t)x->nd.defer_hard_irqs,
							 "gro_flush_timeout_ns", (json_int_t)x->nd.gro_flush_timeout,
							 "irq_suspend_timeout_ns", (json_int_t)x->nd.irq_suspend_timeout)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

#define DEFER_RULE                                                                                             \
	"napi.rst: gro_flush_timeout \"is reused to control the delay of the timer, while "                    \
	"napi_defer_hard_irqs controls the number of consecutive empty polls before NAPI gives up and goes "   \
	"back to using hardware IRQs\". With the timeout 0 no timer is armed: napi_complete_done "             \
	"(net/core/dev.c) re-enables the interrupt at once, as with defer-hard-irqs 0, so nothing is deferred. " \
	"Set gro_flush_timeout_ns with it (napi[]; the upstream example is defer 10 with 20000 ns; a large "    \
	"timeout adds latency when the host is not loaded), or defer_hard_irqs 0."

#define SUSPEND_RULE                                                                                           \
	"napi.rst (IRQ suspension): \"If gro_flush_timeout and napi_defer_hard_irqs are not set, Loop 3 "       \
	"cannot take control from Loop 1\" (epoll busy polling from interrupt delivery), \"therefore, setting " \
	"gro_flush_timeout and napi_defer_hard_irqs is the recommended usage, because otherwise setting "      \
	"irq-suspend-timeout might not have any discernible effect\". It also takes the application's "         \
	"prefer_busy_poll (EPIOCSPARAMS), which is not visible here."

static int check_values(diag *d, int i, const nt_napi_nic *c)
{
	const nt_nic *nic = &d->t->nics[i];
	size_t n = 0, ndefer = 0, nsusp = 0, nvalues = 0;
	const nt_napi **v = nic_napis(d->napi, i, &n);
	const nt_napi **defer = calloc(n ? n : 1, sizeof(*defer)), **susp = calloc(n ? n : 1, sizeof(*susp));
	char ids[256];
	int r = -ENOMEM;
	if ((n && !v) || !defer || !susp)
		goto out;
	for (size_t k = 0; k < n; k++) {
		const nt_nd_napi *a = &v[k]->nd;
		/* The three came together in napi-get (6.13). */
		if (a->defer_hard_irqs < 0 || a->gro_flush_timeout < 0)
			continue;
		nvalues++;
		if (a->defer_hard_irqs > 0 && a->gro_flush_timeout == 0)
			defer[ndefer++] = v[k];
		if (a->irq_suspend_timeout > 0 && (a->defer_hard_irqs == 0 || a->gro_flush_timeout == 0))
			susp[nsusp++] = v[k];
	}
	r = 0;
	if (ndefer) {
		ids_text(defer, ndefer, ids, sizeof(ids));
		r = diag_add_finding(d, "napi-defer-without-timeout", SEV_WARNING, nic->name,
				     json_pack("{s:s, s:o}", "scope", "napi", "napis", values_json(defer, ndefer)), NULL,
				     "%s: %zu NAPI%s (%s) %s defer-hard-irqs %lld with gro-flush-timeout 0. " DEFER_RULE,
				     nic->name, ndefer, ndefer == 1 ? "" : "s", ids, ndefer == 1 ? "has" : "have",
				     (long long)defer[0]->nd.defer_hard_irqs);
	} else if (n && !nvalues && c->dev.defer_hard_irqs > 0 && c->dev.gro_flush_timeout == 0) {
		/* A kernel before 6.13 keeps the pair per device only. */
		r = diag_add_finding(d, "napi-defer-without-timeout", SEV_WARNING, nic->name,
				     json_pack("{s:s, s:I, s:I}", "scope", "device", "napi_defer_hard_irqs",
					       (json_int_t)c->dev.defer_hard_irqs, "gro_flush_timeout_ns",
					       (json_int_t)c->dev.gro_flush_timeout),
				     NULL,
				     "%s: /sys/class/net/%s/napi_defer_hard_irqs is %lld with gro_flush_timeout 0, "
				     "for each of its %zu NAPIs. " DEFER_RULE,
				     nic->name, nic->name, (long long)c->dev.defer_hard_irqs, n);
	}
	if (r == 0 && nsusp) {
		ids_text(susp, nsusp, ids, sizeof(ids));
		r = diag_add_finding(d, "irq-suspend-without-defer", SEV_INFO, nic->name,
				     json_pack("{s:o}", "napis", values_json(susp, nsusp)), NULL,
				     "%s: %zu NAPI%s (%s) %s irq-suspend-timeout %lld ns with defer-hard-irqs %lld and "
				     "gro-flush-timeout %lld ns. " SUSPEND_RULE,
				     nic->name, nsusp, nsusp == 1 ? "" : "s", ids, nsusp == 1 ? "has" : "have",
				     (long long)susp[0]->nd.irq_suspend_timeout, (long long)susp[0]->nd.defer_hard_irqs,
				     (long long)susp[0]->nd.gro_flush_timeout);
	}
out:
	free(v);
	free(defer);
	free(susp);
	return r;
}

int diag_check_napi(diag *d)
{
	if (!d->napi)
		return 0;
	for (int i = 0; i < d->t->nnics; i++) {
		const nt_napi_nic *c = nt_host_napi_nic(d->napi, d->t, &d->t->nics[i]);
		if (!c || c->family != 0)
			continue;
		int r = check_threads(d, i, c);
		if (r == 0)
			r = check_values(d, i, c);
		if (r < 0)
			return r;
	}
	return 0;
}
