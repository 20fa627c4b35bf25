/* SPDX-License-Identifier: Apache-2.0 */
/* The delivery check of NAPI threads (host/delivery.h): with threaded NAPI
 * the packets of a queue are processed by its thread, not where its IRQ
 * fires, so a thread the agent placed is judged by where it ran in the
 * window. The kernel keeps a task's run time (/proc/PID/schedstat, in
 * nanoseconds; utime + stime of /proc/PID/stat in ticks where schedstat
 * is missing) and the CPU it last ran on (stat field 39), not where each
 * slice ran: a thread that ran and last ran inside its placement, with its
 * allowed CPUs still the placement, cannot have run elsewhere since the
 * placement was written, which is the claim. */
#include "host/delivery.h"
#include "host/napi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nt_delivery_threads_resolve(const nt_topology *t, const struct nt_host_napi *h, nt_delivery_thread *th,
				 int n)
{
	for (int i = 0; i < n; i++) {
		nt_delivery_thread *x = &th[i];
		char ifname[64];
		const char *slash = strchr(x->target, '/');
		x->nic = -1;
		x->queue = -1;
		x->napi_id = -1;
		x->irq = -1;
		x->pid = 0;
		if (!slash || (size_t)(slash - x->target) >= sizeof(ifname) || strncmp(slash + 1, "rx-", 3))
			continue;
		memcpy(ifname, x->target, (size_t)(slash - x->target));
		ifname[slash - x->target] = '\0';
		x->queue = atoi(slash + 4);
		for (int k = 0; k < t->nnics; k++)
			if (!strcmp(t->nics[k].name, ifname))
				x->nic = k;
		if (x->nic < 0 || !h)
			continue;
		for (size_t k = 0; k < h->nd.nnapis; k++) {
			const nt_napi *a = &h->napis[k];
			if (a->nic != x->nic || a->rx_queue != x->queue)
				continue;
			x->napi_id = a->nd.id;
			x->irq = a->nd.irq >= 0 && a->nd.irq <= INT32_MAX ? (int)a->nd.irq : -1;
			x->pid = a->pid > 0 && a->pid <= INT32_MAX ? (int)a->pid : 0;
		}
	}
}

void nt_delivery_threads_sample(const nt_ctx *ctx, nt_delivery_thread *th, int n, bool end)
{
	for (int i = 0; i < n; i++) {
		nt_delivery_thread *x = &th[i];
		bool *has = end ? &x->has_b : &x->has_a;
		nt_task *s = end ? &x->b : &x->a;
		*has = x->pid > 0 && nt_task_read_run(ctx, x->pid, s) == 0;
	}
}

nt_delivery_verdict nt_delivery_thread_judge(const nt_delivery_thread *th, const char **outside, const char **why)
{
	const char *o = NULL, *w = NULL;
	nt_delivery_verdict v = NT_NOT_OBSERVED;
	if (!th->pid || !th->has_a)
		w = "no thread: threaded NAPI is off";
	else if (!th->has_b)
		w = "the thread ended in the window (threaded toggled, the link reset)";
	else if (th->b.has_allowed && !nt_cpuset_equal(&th->b.allowed, &th->cpus))
		/* Moved behind the agent's back: wherever it ran, it may run
		 * off its placement from now on. */
		v = NT_DELIVERED_ELSEWHERE, o = "allowed";
	else if (!th->a.has_run || !th->b.has_run)
		w = "its run time cannot be read";
	else if (th->b.run_ns <= th->a.run_ns)
		w = "it did not run in the window";
	else if (th->b.last_cpu >= 0 && !nt_cpuset_isset(&th->cpus, th->b.last_cpu))
		v = NT_DELIVERED_ELSEWHERE, o = "placement";
	else if (th->b.last_cpu < 0)
		w = "its last CPU cannot be read";
	else
		v = NT_DELIVERED;
	if (outside)
		*outside = o;
	if (why)
		*why = w;
	return v;
}

static json_t *cpus_json(const nt_cpuset *s)
{
	char buf[4096];
	if (nt_cpulist_format(s, buf, sizeof(buf)) < 0)
		return json_null();
	return json_string(buf);
}

static json_t *int_or_null(bool known, long long v)
{
	return known ? json_integer(v) : json_null();
}

/* O's member K, a new reference, or null. */
static json_t *member(const json_t *o, const char *k)
{
	json_t *v = o ? json_object_get(o, k) : NULL;
	return v ? json_incref(v) : json_null();
}

json_t *nt_delivery_thread_json(const nt_topology *t0, const nt_delivery_thread *th, const json_t *irqs,
				nt_delivery_verdict *v)
{
	const char *outside, *why;
	const json_t *ie = NULL, *e;
	size_t i;
	*v = nt_delivery_thread_judge(th, &outside, &why);
	json_array_foreach(irqs, i, e)
		if (th->irq >= 0 && json_integer_value(json_object_get(e, "irq")) == th->irq)
			ie = e;
	bool ran = th->has_a && th->has_b && th->a.has_run && th->b.has_run;
	json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "target", th->target, "nic",
			      th->nic >= 0 ? json_string(t0->nics[th->nic].name) : json_null(), "queue",
			      int_or_null(th->queue >= 0, th->queue), "napi_id", int_or_null(th->napi_id >= 0, th->napi_id),
			      "pid", int_or_null(th->pid > 0, th->pid), "irq", int_or_null(th->irq >= 0, th->irq),
			      "irq_verdict", member(ie, "verdict"), "irq_counts", member(ie, "counts"), "placed",
			      cpus_json(&th->cpus), "placed_by", th->by);
	if (!o)
		return NULL;
	json_object_set_new(o, "allowed",
			    th->has_b && th->b.has_allowed ? cpus_json(&th->b.allowed) :
			    th->has_a && th->a.has_allowed ? cpus_json(&th->a.allowed) : json_null());
	json_object_set_new(o, "run_ns",
			    int_or_null(ran, ran && th->b.run_ns > th->a.run_ns ? (long long)(th->b.run_ns - th->a.run_ns) : 0));
	json_object_set_new(o, "run_source", ran ? json_string(th->b.run_source) : json_null());
	json_object_set_new(o, "last_cpu_start", int_or_null(th->has_a && th->a.last_cpu >= 0, th->a.last_cpu));
	json_object_set_new(o, "last_cpu", int_or_null(th->has_b && th->b.last_cpu >= 0, th->b.last_cpu));
	json_object_set_new(o, "verdict", json_string(nt_delivery_verdict_name(*v)));
	json_object_set_new(o, "outside", outside ? json_string(outside) : json_null());
	json_object_set_new(o, "why", why ? json_string(why) : json_null());
	return o;
}
