/* SPDX-License-Identifier: Apache-2.0 */
/* What the agent's last delivery check (host/delivery.h) saw land
 * elsewhere.
 *
 * irq-delivered-elsewhere: a NIC IRQ's interrupts on CPUs outside where it
 * was placed (or, never placed, outside its affinity), or another IRQ's the
 * agent placed (other_irqs), which is then named by its /proc/interrupts
 * name. The affinity files may read right all the while: a driver or
 * interrupt controller that ignores the mask, another tool moving it in
 * between, a kernel-managed vector (docs/api.md). No fix is offered:
 * writing the same mask again is what did not work.
 *
 * napi-thread-elsewhere: a NAPI thread the agent pinned (napi[]
 * thread_cpus) that the check judged elsewhere: with threaded NAPI its
 * queue's packets are processed where the thread runs, whatever its IRQ's
 * placement. Either its allowed CPUs were no longer the placement
 * ("outside": "allowed": a taskset or another tool behind the agent's
 * back, or a cpuset narrowing it), and then pinning it again is the fix
 * (a napi[] entry for its queue), or it last ran outside a placement its
 * allowed CPUs still read as (moved and moved back in the window, its
 * CPUs taken offline), and then, as for an IRQ, there is nothing to
 * write. */
#include "diagnose/diagnose_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* O's member K, or null: json_pack's "O" refuses NULL. */
static json_t *or_null(const json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return v ? v : json_null();
}

/* One napi-thread-elsewhere finding for thread entry E of CHECK. */
static int add_thread(json_t *diagnosis, const json_t *check, const json_t *e, long long ago_s)
{
	const char *nic = json_string_value(json_object_get(e, "nic"));
	const char *target = json_string_value(json_object_get(e, "target"));
	const char *outside = json_string_value(json_object_get(e, "outside"));
	const char *placed = json_string_value(json_object_get(e, "placed"));
	const char *allowed = json_string_value(json_object_get(e, "allowed"));
	const json_t *queue = json_object_get(e, "queue");
	long long pid = (long long)json_integer_value(json_object_get(e, "pid"));
	bool moved = outside && !strcmp(outside, "allowed");
	char who[160], msg[1024], last[64] = "";
	if (!nic || !target || !placed)
		return 0;
	if (json_is_integer(json_object_get(e, "last_cpu")))
		snprintf(last, sizeof(last), ", last on CPU %lld", (long long)json_integer_value(json_object_get(e, "last_cpu")));
	if (json_is_integer(json_object_get(e, "napi_id")))
		snprintf(who, sizeof(who), "NAPI thread pid %lld of %s (NAPI %lld)", pid, target,
			 (long long)json_integer_value(json_object_get(e, "napi_id")));
	else
		snprintf(who, sizeof(who), "NAPI thread pid %lld of %s", pid, target);
	double window = json_real_value(json_object_get(check, "window_ms"));
	if (moved)
		snprintf(msg, sizeof(msg),
			 "%s is placed on CPU(s) %s, but in the delivery check of %.0f ms %llds ago it was allowed on "
			 "CPU(s) %s%s: something changed its affinity behind the agent's back (a taskset, another tuning "
			 "tool) or a cpuset narrowed it (/proc/%lld/cpuset), and its queue's packets are processed "
			 "there, whatever its IRQ's placement. Fix: napi[] thread_cpus pins it again (held as the "
			 "desired state, the agent repairs it); where a cpuset or isolated partition keeps it off "
			 "CPU(s) %s the step fails at read-back, and the placement needs CPUs it may use.",
			 who, placed, window, ago_s, allowed ? allowed : "?", last, pid, placed);
	else
		snprintf(msg, sizeof(msg),
			 "%s is placed on CPU(s) %s and its affinity reads so, but in the delivery check of %.0f ms "
			 "%llds ago it ran %.1f ms%s, outside it: its affinity changed and changed back in the window, "
			 "or CPUs of the placement went offline (the kernel then moves a task it cannot keep). No "
			 "fix: the affinity already reads right; nettune verify again shows whether it lasts.",
			 who, placed, window, ago_s, (double)json_integer_value(json_object_get(e, "run_ns")) / 1e6, last);
	json_t *fix = NULL;
	if (moved && json_is_integer(queue)) {
		char q[24];
		snprintf(q, sizeof(q), "%lld", (long long)json_integer_value(queue));
		fix = json_pack("{s:[{s:s, s:s, s:s}]}", "napi", "interface", nic, "queues", q, "thread_cpus", placed);
		if (!fix)
			return -ENOMEM;
	}
	json_t *ev = json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O}",
			       "target", or_null(e, "target"), "queue", or_null(e, "queue"), "napi_id",
			       or_null(e, "napi_id"), "pid", or_null(e, "pid"), "irq", or_null(e, "irq"), "irq_verdict",
			       or_null(e, "irq_verdict"), "placed", or_null(e, "placed"), "placed_by",
			       or_null(e, "placed_by"), "allowed", or_null(e, "allowed"), "outside",
			       or_null(e, "outside"), "last_cpu_start", or_null(e, "last_cpu_start"), "last_cpu",
			       or_null(e, "last_cpu"), "run_ns", or_null(e, "run_ns"), "run_source",
			       or_null(e, "run_source"), "window_ms", or_null(check, "window_ms"), "at_ms",
			       or_null(check, "at_ms"));
	if (!ev) {
		json_decref(fix);
		return -ENOMEM;
	}
	json_t *f = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "id", "napi-thread-elsewhere", "severity",
			      diag_sev_names[SEV_WARNING], "subject", nic, "message", msg, "evidence", ev, "fix",
			      fix ? fix : json_null());
	return diag_insert_finding(diagnosis, SEV_WARNING, f);
}

int nt_diagnose_add_delivery(json_t *diagnosis, const json_t *check, int64_t now_ms)
{
	size_t i;
	json_t *e;
	int64_t at = json_integer_value(json_object_get(check, "at_ms"));
	long long ago_s = at && now_ms >= at ? (long long)((now_ms - at) / 1000) : 0;

	json_array_foreach(json_object_get(check, "irqs"), i, e) {
		const char *v = json_string_value(json_object_get(e, "verdict"));
		const char *nic = json_string_value(json_object_get(e, "nic"));
		if (!nic)
			nic = json_string_value(json_object_get(e, "name"));
		if (!v || strcmp(v, "elsewhere") || !nic)
			continue;
		const json_t *placed = json_object_get(e, "placed");
		const char *where = json_is_string(placed) ? json_string_value(placed)
							    : json_string_value(json_object_get(e, "affinity"));
		char cpus[256] = "";
		size_t k, len = 0;
		json_t *x;
		long long outside = 0;
		json_array_foreach(json_object_get(e, "elsewhere"), k, x) {
			long long n = (long long)json_integer_value(json_object_get(x, "count"));
			int w = snprintf(cpus + len, sizeof(cpus) - len, "%s%lld (%lld)", len ? ", " : "",
					 (long long)json_integer_value(json_object_get(x, "cpu")), n);
			if (w > 0 && (size_t)w < sizeof(cpus) - len)
				len += (size_t)w;
			outside += n;
		}
		char msg[768];
		snprintf(msg, sizeof(msg),
			 "IRQ %lld (%s) is %s CPU(s) %s, but %lld of its %lld interrupts in the delivery check "
			 "of %.0f ms %llds ago came on CPU %s: something moved it, or the kernel does not honour "
			 "the mask",
			 (long long)json_integer_value(json_object_get(e, "irq")), nic,
			 json_is_string(placed) ? "placed on" : "allowed", where ? where : "?", outside,
			 (long long)json_integer_value(json_object_get(e, "total")),
			 json_real_value(json_object_get(check, "window_ms")), ago_s, cpus);
		/* The packets its queues carried (qstats-get), null where the
		 * kernel keeps none: interrupts elsewhere with traffic moving. */
		json_t *f = json_pack("{s:s, s:s, s:s, s:s, s:{s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O}, s:n}", "id",
				      "irq-delivered-elsewhere", "severity", diag_sev_names[SEV_WARNING], "subject",
				      nic, "message", msg, "evidence", "irq", json_object_get(e, "irq"), "placed",
				      placed ? placed : json_null(), "affinity", json_object_get(e, "affinity"),
				      "counts", json_object_get(e, "counts"), "elsewhere", json_object_get(e, "elsewhere"),
				      "window_ms", json_object_get(check, "window_ms"), "at_ms",
				      json_object_get(check, "at_ms") ? json_object_get(check, "at_ms") : json_null(),
				      "queue_packets", json_object_get(e, "queue_packets") ?: json_null(), "fix");
		if (diag_insert_finding(diagnosis, SEV_WARNING, f) < 0)
			return -ENOMEM;
	}
	json_array_foreach(json_object_get(check, "threads"), i, e) {
		const char *v = json_string_value(json_object_get(e, "verdict"));
		if (v && !strcmp(v, "elsewhere") && add_thread(diagnosis, check, e, ago_s) < 0)
			return -ENOMEM;
	}
	return 0;
}
