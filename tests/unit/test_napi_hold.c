/* SPDX-License-Identifier: Apache-2.0 */
/* The desired state holding the NAPI kinds (issue 39, "held"): agent/drift.c
 * with settings/napi.c and napi_thread.c on a copy of the EPYC tree, whose
 * enos1 has threaded NAPI with a thread a NAPI in the fixture
 * (kernel/fixture_napi.c plays the kernel: "threaded" ends and starts the
 * threads, each start with a new pid), the watcher checked by hand:
 *   - a thread moved behind the agent's back (taskset) is pinned again;
 *     the repair's step says which thread (its pid and NAPI) it pinned,
 *     the target being the queue;
 *   - threaded toggled off and on: the new threads (new pids) are pinned
 *     again, every time: a re-created thread is not a fight, so three
 *     toggles after a taskset never make the target "contested" (the
 *     watcher counted every repair before and stopped at the third);
 *   - the same thread moved again and again is contested, with a culprit
 *     naming taskset; re-created once more, it is held again;
 *   - per-NAPI values overwritten (the device-wide sysfs file, as a NAPI
 *     re-created takes them) are set again. */
#include "agent/drift.h"
#include "engine/txn.h"
#include "kernel/ctx.h"
#include "kernel/netdev.h"
#include "kernel/task.h"
#include "store/store.h"
#include "harness.h"
#include "engine_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROFILE                                                                                     \
	"{\"name\":\"hold\",\"napi\":[{\"interface\":\"enos1\",\"queues\":\"0-1\",\"threaded\":true,"  \
	"\"thread_cpus\":\"8-9\",\"defer_hard_irqs\":10,\"gro_flush_timeout_ns\":20000}]}"

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "(none)";
}

/* The thread serving enos1's RX queue Q now: its pid (0 none) and CPUs. */
static int thread_of(const nt_ctx *ctx, int q, char *cpus, size_t size)
{
	nt_netdev nd;
	nt_task task;
	int pid = 0;
	long ifindex = 0;
	snprintf(cpus, size, "?");
	nt_read_long(ctx, &ifindex, "/sys/class/net/enos1/ifindex");
	if (nt_netdev_read(ctx, "enos1", (int)ifindex, &nd) == 0) {
		const nt_nd_napi *a = nt_netdev_rx_napi(&nd, (int)ifindex, (uint32_t)q);
		pid = a && a->pid > 0 ? (int)a->pid : 0;
	}
	nt_netdev_free(&nd);
	if (pid && nt_task_read(ctx, pid, &task) == 0 && task.has_allowed)
		nt_cpulist_format(&task.allowed, cpus, size);
	return pid;
}

static void move_thread(const nt_ctx *ctx, int pid, int cpu)
{
	nt_cpuset s;
	nt_cpuset_zero(&s);
	nt_cpuset_set(&s, cpu);
	CHECK_INT(nt_task_set_allowed(ctx, pid, &s), 0);
}

/* The state of drift target napi_thread_cpus enos1/rx-Q in D's report
 * ("(none)" when not drifting), its culprit into CULPRIT. */
static const char *target_state(nt_drift *d, int q, char *culprit, size_t size)
{
	static char state[32];
	char tgt[32];
	size_t i;
	json_t *t, *rep = nt_drift_report(d);
	snprintf(tgt, sizeof(tgt), "enos1/rx-%d", q);
	snprintf(state, sizeof(state), "(none)");
	if (culprit)
		snprintf(culprit, size, "(none)");
	json_array_foreach(json_object_get(rep, "targets"), i, t)
		if (!strcmp(str(t, "kind"), "napi_thread_cpus") && !strcmp(str(t, "target"), tgt)) {
			snprintf(state, sizeof(state), "%s", str(t, "state"));
			if (culprit)
				snprintf(culprit, size, "%s", str(t, "culprit"));
		}
	json_decref(rep);
	return state;
}

/* The newest transaction's step of KIND TARGET (a new reference into *TXN). */
static json_t *newest_step(nt_store *st, const char *kind, const char *target, json_t **txn)
{
	json_t *list = NULL, *s;
	size_t i;
	*txn = NULL;
	int64_t total = 0;
	if (nt_store_txn_list(st, NULL, 1, 0, &list, &total) < 0)
		return NULL;
	int64_t id = json_integer_value(json_object_get(json_array_get(list, 0), "id"));
	json_decref(list);
	if (nt_store_txn_get(st, id, txn) < 0)
		return NULL;
	json_array_foreach(json_object_get(*txn, "steps"), i, s)
		if (!strcmp(str(s, "kind"), kind) && !strcmp(str(s, "target"), target))
			return s;
	return NULL;
}

static void toggle_threaded(const nt_ctx *ctx)
{
	CHECK_INT(nt_netdev_dev_write(ctx, "enos1", "threaded", 0), 0);
	CHECK_INT(nt_netdev_dev_write(ctx, "enos1", "threaded", 1), 0);
}

static void test_hold(const nt_ctx *ctx, nt_txn_engine *e, nt_store *store)
{
	nt_txn_outcome o = { 0 };
	nt_drift *d = NULL;
	json_t *profile = json_loads(PROFILE, 0, NULL), *txn = NULL, *s;
	char cpus[64], cpus1[64], culprit[768], want[96];

	nt_txn_request req = { .profile = profile, .client = "test", .identity = "", .persist = true };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(str(o.doc, "status"), "applied");
	nt_txn_outcome_free(&o);
	int pid0 = thread_of(ctx, 0, cpus, sizeof(cpus));
	CHECK_INT(pid0, 3100);
	CHECK_STR(cpus, "8-9");

	nt_drift_config cfg = { .policy = NT_DRIFT_REPAIR };
	CHECK_INT(nt_drift_new(ctx, e, store, &cfg, NULL, NULL, false, &d), 0);
	if (!d)
		goto out;
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	json_t *rep = nt_drift_report(d);
	CHECK_STR(str(rep, "status"), "in_sync");
	json_decref(rep);

	/* taskset -pc 0 3100: pinned again, the record names the thread. */
	move_thread(ctx, pid0, 0);
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	CHECK_INT(thread_of(ctx, 0, cpus, sizeof(cpus)), pid0);
	CHECK_STR(cpus, "8-9");
	s = newest_step(store, "napi_thread_cpus", "enos1/rx-0", &txn);
	CHECK_MSG(s != NULL, "no repair step for enos1/rx-0");
	CHECK_STR(str(txn, "reason"), "drift");
	CHECK_STR(str(s, "before"), "0");
	CHECK_STR(str(s, "after"), "8-9");
	CHECK_STR(str(s, "observed"), "thread 3100 of NAPI 8209");
	json_decref(txn);

	/* Threaded off and on, three times: new threads each time, pinned
	 * again each time, never contested. */
	int last = pid0;
	for (int round = 0; round < 3; round++) {
		toggle_threaded(ctx);
		int pid = thread_of(ctx, 0, cpus, sizeof(cpus));
		CHECK_MSG(pid > 0 && pid != last, "round %d: no new thread (pid %d, was %d)", round, pid, last);
		CHECK_MSG(strcmp(cpus, "8-9") != 0, "round %d: a new thread starts pinned (%s)", round, cpus);
		CHECK_INT(nt_drift_check(d, "drift"), 0);
		CHECK_INT(thread_of(ctx, 0, cpus, sizeof(cpus)), pid);
		CHECK_MSG(!strcmp(cpus, "8-9"), "round %d: rx-0's new thread %d on %s", round, pid, cpus);
		thread_of(ctx, 1, cpus1, sizeof(cpus1));
		CHECK_MSG(!strcmp(cpus1, "8-9"), "round %d: rx-1's new thread on %s", round, cpus1);
		CHECK_STR(target_state(d, 0, NULL, 0), "(none)");
		last = pid;
	}
	s = newest_step(store, "napi_thread_cpus", "enos1/rx-0", &txn);
	snprintf(want, sizeof(want), "thread %d of NAPI 8209", last);
	CHECK_STR(s ? str(s, "observed") : NULL, want);
	json_decref(txn);

	/* The same thread moved again and again: contested at the third
	 * move (two repairs held, the count started at the last toggle's),
	 * named for what moves threads, and left where it was put. */
	for (int k = 0; k < 3; k++) {
		move_thread(ctx, last, 0);
		CHECK_INT(nt_drift_check(d, "drift"), 0);
	}
	CHECK_STR(target_state(d, 0, culprit, sizeof(culprit)), "contested");
	CHECK_MSG(strstr(culprit, "taskset") != NULL, "culprit: %s", culprit);
	thread_of(ctx, 0, cpus, sizeof(cpus));
	CHECK_STR(cpus, "0");

	/* Re-created once more: no longer the thread that was fought over. */
	toggle_threaded(ctx);
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	int pid = thread_of(ctx, 0, cpus, sizeof(cpus));
	CHECK_MSG(pid != last, "no new thread after the toggle");
	CHECK_STR(cpus, "8-9");
	CHECK_STR(target_state(d, 0, NULL, 0), "(none)");

	/* Threaded left off: the repair turns it on and pins the threads. */
	CHECK_INT(nt_netdev_dev_write(ctx, "enos1", "threaded", 0), 0);
	CHECK_INT(thread_of(ctx, 0, cpus, sizeof(cpus)), 0);
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	pid = thread_of(ctx, 0, cpus, sizeof(cpus));
	CHECK_MSG(pid > 0, "threaded not turned on again");
	CHECK_STR(cpus, "8-9");

	/* Per-NAPI values overwritten for every NAPI (the device's file, as a
	 * NAPI made anew takes them): set again, per queue. */
	CHECK_INT(nt_netdev_dev_write(ctx, "enos1", "napi_defer_hard_irqs", 0), 0);
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	nt_netdev nd;
	long ifindex = 0;
	nt_read_long(ctx, &ifindex, "/sys/class/net/enos1/ifindex");
	CHECK_INT(nt_netdev_read(ctx, "enos1", (int)ifindex, &nd), 0);
	for (int q = 0; q < 3; q++) {
		const nt_nd_napi *a = nt_netdev_rx_napi(&nd, (int)ifindex, (uint32_t)q);
		CHECK_MSG(a && a->defer_hard_irqs == (q < 2 ? 10 : 0), "rx-%d defer-hard-irqs %lld", q,
			  a ? (long long)a->defer_hard_irqs : -1LL);
	}
	nt_netdev_free(&nd);
	rep = nt_drift_report(d);
	CHECK_STR(str(rep, "status"), "in_sync");
	json_decref(rep);
out:
	nt_drift_free(d);
	json_decref(profile);
}

int main(void)
{
	nt_t_engine h;
	if (nt_t_engine_open(&h, "epyc7713-2node-bond", "napihold"))
		test_hold(&h.ctx, h.e, h.store);
	nt_t_engine_close(&h);
	TEST_MAIN_END();
}
