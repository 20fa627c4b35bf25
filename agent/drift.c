/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/drift.h"
#include "agent/drift_culprit.h"
#include "kernel/events.h"
#include "settings/setting.h"
#include "store/status.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

const char *const nt_drift_reasons[NT_DRIFT_NREASONS] = { "boot", "drift", "link-up" };

struct nt_drift {
	nt_ctx ctx;
	nt_txn_engine *engine;
	nt_store *store;
	nt_drift_config cfg;
	nt_log_fn log;
	void *log_ud;

	nt_events *events; /* NULL on a fixture root or when unavailable */
	char events_error[128]; /* why there are none */
	int wake_fd; /* eventfd: stop, desired state changed */
	pthread_t thread;
	bool started;

	pthread_mutex_t check_lock; /* one check at a time (thread, benchmark) */
	pthread_mutex_t lock; /* guards everything below */
	bool stop;
	bool changed; /* the desired state changed: check now */
	int64_t event_due; /* monotonic ms a debounced event check is due, 0 none */
	int64_t event_first; /* monotonic ms of the first event of that burst */
	bool event_link; /* the burst has a link message: reason "link-up" */
	int64_t retry_due; /* monotonic ms to retry a repair the slot refused, 0 none */
	int64_t self_until; /* realtime ms until which ethtool notifications are ours */

	/* What the last check found. */
	const char *status; /* "none", "in_sync", "drifted", "invalid", "error" */
	char message[512];
	json_t *errors; /* invalid: [{path, message}] */
	json_t *warnings; /* the plan's warnings: entries that match nothing now */
	json_t *targets; /* "KIND TARGET" -> entry (see entry_doc) */
	uint64_t checks;
	int64_t last_check_ms;
	const char *last_reason;
	int64_t last_repair_txn;
	json_t *last_ethtool; /* {"what","interface","at"} not made by the agent, or NULL */
	uint64_t repairs[NT_DRIFT_NREASONS];
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static json_t *time_str(int64_t ms)
{
	char buf[40];
	if (ms <= 0)
		return json_null();
	nt_store_rfc3339(ms, buf, sizeof(buf));
	return json_string(buf);
}

const char *nt_drift_policy_name(nt_drift_policy p)
{
	return p == NT_DRIFT_REPAIR ? "repair" : "report";
}

static int reason_index(const char *reason)
{
	for (int i = 0; i < NT_DRIFT_NREASONS; i++)
		if (!strcmp(nt_drift_reasons[i], reason))
			return i;
	return 1;
}

static void emit(nt_drift *d, json_t *ev)
{
	if (ev && d->log)
		d->log(d->log_ud, ev);
	json_decref(ev);
}

static void wake(nt_drift *d)
{
	uint64_t one = 1;
	if (d->wake_fd >= 0 && write(d->wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is full: the thread is woken anyway. */
	}
}

/* ---- events ---- */

static void on_event(void *ud, const nt_event *ev)
{
	nt_drift *d = ud;
	int64_t now = mono_ms();
	/* Debounced: each event pushes the check back by debounce_ms, so a
	 * driver that brings a NIC up has requested its IRQs before the check
	 * looks; a storm of events is held back at most 10 debounce periods. */
	if (!d->event_due)
		d->event_first = now;
	d->event_due = now + d->cfg.debounce_ms;
	if (d->event_due > d->event_first + 10 * (int64_t)d->cfg.debounce_ms)
		d->event_due = d->event_first + 10 * (int64_t)d->cfg.debounce_ms;
	if (ev->kind == NT_EVENT_LINK) {
		d->event_link = true;
		return;
	}
	/* The kernel notifies every SET, ours too, and names no sender: one
	 * that arrives while or just after the agent applied is taken as the
	 * agent's own. */
	int64_t wall = nt_store_now_ms();
	if (wall <= d->self_until)
		return;
	json_decref(d->last_ethtool);
	d->last_ethtool = json_pack("{s:s, s:s, s:o}", "what", ev->what, "interface", ev->ifname,
				    "at", time_str(wall));
}

/* ---- entries ---- */

/* An entry: {"kind","target","interface","desired","current","state",
 * "first_seen_ms","last_seen_ms","last_repair_ms","last_repair_txn",
 * "repairs":[ms...], "last_held_ms"? (the last repair that applied),
 * "repair_error"? (the last failed repair's), "culprit"?, "changed_by"?,
 * "own_failure"? (true: its own step failed in the last repair, so the
 * next repair leaves it out while others drift), "taken"? (true: contested
 * because the plan found another program's value there, engine/plan.h),
 * "instance"? (for a kind the kernel re-creates, settings/setting.h: the
 * number of the object holding the target when it was last seen
 * drifting, a NAPI thread's pid), "recreated"? (how many times the
 * kernel made that object anew while the entry was kept: each time the
 * repairs so far stop counting toward contested), "drifting": bool}. */

static int repairs_in_window(nt_drift *d, json_t *e, int64_t now)
{
	json_t *arr = json_object_get(e, "repairs");
	int n = 0;
	for (size_t i = json_array_size(arr); i > 0; i--) {
		int64_t t = json_integer_value(json_array_get(arr, i - 1));
		if (now - t <= d->cfg.contest_window_ms)
			n++;
		else
			json_array_remove(arr, i - 1);
	}
	return n;
}

static json_t *entry_doc(const json_t *e)
{
	json_t *o = json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:o, s:o, s:o, s:O, s:i}", "kind",
			      json_object_get(e, "kind"), "target", json_object_get(e, "target"),
			      "interface", json_object_get(e, "interface"), "desired",
			      json_object_get(e, "desired"), "current", json_object_get(e, "current"),
			      "state", json_object_get(e, "state"), "first_seen",
			      time_str(json_integer_value(json_object_get(e, "first_seen_ms"))),
			      "last_seen",
			      time_str(json_integer_value(json_object_get(e, "last_seen_ms"))),
			      "last_repair",
			      time_str(json_integer_value(json_object_get(e, "last_repair_ms"))),
			      "last_repair_txn", json_object_get(e, "last_repair_txn"),
			      "repairs_in_window", (int)json_array_size(json_object_get(e, "repairs")));
	if (!o)
		return NULL;
	json_t *c = json_object_get(e, "culprit");
	json_object_set(o, "culprit", c ? c : json_null());
	json_t *cb = json_object_get(e, "changed_by");
	json_object_set(o, "changed_by", cb ? cb : json_null());
	if (json_is_true(json_object_get(e, "taken")))
		json_object_set_new(o, "taken", json_true());
	json_t *inst = json_object_get(e, "instance");
	if (inst) {
		json_object_set(o, "instance", inst);
		json_object_set_new(o, "recreated",
				    json_integer(json_integer_value(json_object_get(e, "recreated"))));
	}
	return o;
}

/* For a kind whose targets the kernel re-creates (a NAPI thread: toggling
 * threaded NAPI, a link reset, a change of channels end it and start
 * another, on every CPU again): the object holding drifting entry E's
 * target now. A new one since the entry was last seen drifting is the
 * kernel's doing, not another program's: the repairs so far stop
 * counting toward contested, so a thread re-created any number of times
 * is pinned again each time, while one moved again and again (the same
 * pid) is still found contested. Lock held; one read of the family and
 * of /proc, for drifting targets only. */
static void note_instance(nt_drift *d, json_t *e, const char *kind, const char *target)
{
	const nt_setting_kind *k = nt_setting_find(kind);
	long long id;
	if (!k || !k->instance || k->instance(&d->ctx, target, &id) < 0)
		return;
	json_t *was = json_object_get(e, "instance");
	if (json_is_integer(was) && json_integer_value(was) != id) {
		json_array_clear(json_object_get(e, "repairs"));
		json_object_set_new(e, "recreated",
				    json_integer(json_integer_value(json_object_get(e, "recreated")) + 1));
		/* The failure of a repair of the old object says nothing of
		 * the new one. */
		json_object_del(e, "repair_error");
		json_object_del(e, "own_failure");
	}
	json_object_set_new(e, "instance", json_integer(id));
}

/* ---- the check ---- */

static void set_status(nt_drift *d, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_status(nt_drift *d, const char *status, const char *fmt, ...)
{
	d->status = status;
	d->message[0] = '\0';
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->message, sizeof(d->message), fmt, ap);
		va_end(ap);
	}
}

/* The entry of "KIND TARGET" as the plan shows it now (lock held). */
static json_t *entry_seen(nt_drift *d, const char *kind, const char *target, const json_t *iface,
			  const json_t *desired, const json_t *current, int64_t now)
{
	char k[512];
	snprintf(k, sizeof(k), "%s %s", kind, target);
	json_t *e = json_object_get(d->targets, k);
	if (!e) {
		e = json_pack("{s:s, s:s, s:I, s:[], s:I, s:n, s:s}", "kind", kind, "target", target,
			      "first_seen_ms", (json_int_t)now, "repairs", "last_repair_ms",
			      (json_int_t)0, "last_repair_txn", "state", "drifted");
		if (!e || json_object_set_new(d->targets, k, e) < 0)
			return NULL;
	}
	if (json_integer_value(json_object_get(e, "first_seen_ms")) == 0)
		json_object_set_new(e, "first_seen_ms", json_integer(now));
	json_object_set(e, "interface", iface ? (json_t *)iface : json_null());
	json_object_set(e, "desired", (json_t *)desired);
	json_object_set(e, "current", (json_t *)current);
	json_object_set_new(e, "last_seen_ms", json_integer(now));
	json_object_set_new(e, "drifting", json_true());
	return e;
}

/* Update the entries from the plan's STEPS and TAKEN (lock held). Entries
 * of targets no longer drifting keep only their repair times (for
 * contested). A taken target is contested at once, by the same path as one
 * that keeps being undone (it is left out of repairs, and named with its
 * culprit); once the plan shows it as an ordinary step again (the other
 * program's value is gone) it is repaired. */
static void merge_steps(nt_drift *d, const json_t *steps, const json_t *taken, int64_t now)
{
	const char *key;
	json_t *e, *s;
	void *tmp;
	size_t i;

	json_object_foreach(d->targets, key, e)
		json_object_set_new(e, "drifting", json_false());
	json_array_foreach(steps, i, s) {
		const char *kind = json_string_value(json_object_get(s, "kind"));
		const char *target = json_string_value(json_object_get(s, "target"));
		if (!kind || !target)
			continue;
		e = entry_seen(d, kind, target, json_object_get(s, "interface"),
			       json_object_get(s, "after"), json_object_get(s, "before"), now);
		if (e && json_is_true(json_object_get(e, "taken"))) {
			/* The other program's value is gone: ours again. */
			json_object_del(e, "taken");
			json_object_del(e, "taken_current");
			json_object_del(e, "culprit");
			json_object_set_new(e, "state", json_string("drifted"));
		}
	}
	json_array_foreach(taken, i, s) {
		const char *kind = json_string_value(json_object_get(s, "kind"));
		const char *target = json_string_value(json_object_get(s, "target"));
		if (!kind || !target)
			continue;
		e = entry_seen(d, kind, target, json_object_get(s, "interface"),
			       json_object_get(s, "desired"), json_object_get(s, "current"), now);
		if (!e)
			continue;
		bool was = json_is_true(json_object_get(e, "taken"));
		const json_t *old = json_object_get(e, "culprit");
		if (was && old && json_equal((json_t *)json_object_get(e, "taken_current"),
					     json_object_get(s, "current")))
			continue;
		json_object_set_new(e, "taken", json_true());
		json_object_set(e, "taken_current", json_object_get(s, "current"));
		json_object_set_new(e, "state", json_string("contested"));
		json_object_set_new(e, "culprit", nt_drift_taken_culprit(d->store, s));
		emit(d, json_pack("{s:s, s:s, s:s, s:i, s:O}", "event", "drift_contested", "kind",
				  kind, "target", target, "repairs", 0, "culprit",
				  json_object_get(e, "culprit")));
	}
	json_object_foreach_safe(d->targets, tmp, key, e) {
		if (json_is_true(json_object_get(e, "drifting")))
			continue;
		/* In place again: not contested or overridden any more. */
		json_object_set_new(e, "state", json_string("in_sync"));
		json_object_del(e, "taken");
		json_object_del(e, "taken_current");
		json_object_del(e, "culprit");
		json_object_del(e, "changed_by");
		json_object_del(e, "own_failure");
		json_object_set_new(e, "first_seen_ms", json_integer(0));
		if (repairs_in_window(d, e, now) == 0)
			json_object_del(d->targets, key);
	}
}

static int drifting_count(nt_drift *d)
{
	const char *key;
	json_t *e;
	int n = 0;
	json_object_foreach(d->targets, key, e)
		n += json_is_true(json_object_get(e, "drifting"));
	return n;
}

int nt_drift_check(nt_drift *d, const char *reason)
{
	json_t *desired = NULL, *skip = NULL;
	nt_txn_outcome o = { 0 }, ao = { 0 };
	int candidates = 0, failing = 0, r;

	pthread_mutex_lock(&d->check_lock);
	r = d->store ? nt_store_desired_get(d->store, &desired) : -ENOENT;
	int64_t now = nt_store_now_ms();
	pthread_mutex_lock(&d->lock);
	d->checks++;
	d->last_check_ms = now;
	d->last_reason = reason;
	json_decref(d->errors);
	d->errors = NULL;
	pthread_mutex_unlock(&d->lock);
	if (r == -ENOENT) {
		pthread_mutex_lock(&d->lock);
		json_object_clear(d->targets);
		json_array_clear(d->warnings);
		set_status(d, "none", NULL);
		pthread_mutex_unlock(&d->lock);
		r = 0;
		goto out;
	}
	if (r < 0) {
		pthread_mutex_lock(&d->lock);
		set_status(d, "error", "cannot read the desired state: %s",
			   nt_store_errmsg(d->store));
		pthread_mutex_unlock(&d->lock);
		goto out;
	}
	int64_t set_ms = json_integer_value(json_object_get(desired, "set_ms"));
	/* HOLD: a target another program took is contested, not a reason to
	 * drop the whole desired state as invalid. */
	nt_txn_request req = { .profile = json_object_get(desired, "profile"), .client = "",
			       .identity = "", .hold = true };
	r = nt_txn_plan(d->engine, &req, &o);
	pthread_mutex_lock(&d->lock);
	if (r == NT_EINVALID) {
		/* Never applied half-way: the whole desired profile waits until
		 * it validates on this host again (an interface renamed back). */
		json_object_clear(d->targets);
		d->errors = o.errors;
		o.errors = NULL;
		set_status(d, "invalid",
			   "the desired profile is not valid on this host now; nothing is applied "
			   "until it is: %s", o.message);
		pthread_mutex_unlock(&d->lock);
		r = 0;
		goto out;
	}
	if (r < 0) {
		set_status(d, "error", "planning the desired profile failed: %s",
			   o.message[0] ? o.message : nt_strerror(r));
		pthread_mutex_unlock(&d->lock);
		goto out;
	}
	json_decref(d->warnings);
	d->warnings = json_incref(json_object_get(o.doc, "warnings"));
	merge_steps(d, json_object_get(o.doc, "steps"), json_object_get(o.doc, "taken"), now);

	const char *key;
	json_t *e;
	skip = json_object();
	json_object_foreach(d->targets, key, e) {
		if (!json_is_true(json_object_get(e, "drifting")))
			continue;
		const char *state = json_string_value(json_object_get(e, "state"));
		const char *kind = json_string_value(json_object_get(e, "kind"));
		const char *target = json_string_value(json_object_get(e, "target"));
		note_instance(d, e, kind, target);
		if (state && !strcmp(state, "contested") && !json_is_true(json_object_get(e, "taken")) &&
		    json_array_size(json_object_get(e, "repairs")) == 0) {
			/* Re-created by the kernel since it was found
			 * contested: the fight was with the object gone. */
			json_object_del(e, "culprit");
			state = "drifted";
		}
		if (state && !strcmp(state, "contested")) {
			json_object_set_new(skip, key, json_true());
			continue;
		}
		/* A client's own transaction (not persist, no reason) that
		 * changed this target after the desired state was set wins. */
		json_t *lc = NULL;
		if (d->store && nt_store_last_change(d->store, kind, target, &lc) == 0 &&
		    json_is_null(json_object_get(lc, "reason")) &&
		    !json_is_true(json_object_get(lc, "persist")) &&
		    json_integer_value(json_object_get(lc, "at_ms")) >= set_ms) {
			json_object_del(lc, "at_ms");
			json_object_del(lc, "reason");
			json_object_del(lc, "persist");
			json_object_set_new(e, "state", json_string("overridden"));
			json_object_set_new(e, "changed_by", lc);
			json_object_set_new(skip, key, json_true());
			continue;
		}
		json_decref(lc);
		json_object_del(e, "changed_by");
		json_object_set_new(e, "state", json_string("drifted"));
		if (d->cfg.policy != NT_DRIFT_REPAIR) {
			json_object_set_new(skip, key, json_true());
			continue;
		}
		if (repairs_in_window(d, e, now) >= d->cfg.contest_repairs) {
			json_t *iface = json_object_get(e, "interface");
			json_object_set_new(e, "state", json_string("contested"));
			/* A repair that failed is the repair's fault only when
			 * none held in the window: once the kernel has taken
			 * the value, a later verify that reads another one
			 * met the other writer between its write and read. */
			json_t *rerr = json_object_get(e, "repair_error");
			int64_t held = json_integer_value(json_object_get(e, "last_held_ms"));
			bool fails = json_is_string(rerr) &&
				     !(held && now - held <= d->cfg.contest_window_ms);
			char why[600];
			if (fails)
				snprintf(why, sizeof(why), "the repair itself fails: %s",
					 json_string_value(rerr));
			json_object_set_new(e, "culprit",
					    fails ? json_string(why) :
						    nt_drift_culprit(&d->ctx, d->last_ethtool, kind, target,
								     json_is_string(iface) ? json_string_value(iface) : ""));
			json_object_set_new(skip, key, json_true());
			emit(d, json_pack("{s:s, s:s, s:s, s:i, s:O}", "event", "drift_contested",
					  "kind", kind, "target", target, "repairs",
					  d->cfg.contest_repairs, "culprit",
					  json_object_get(e, "culprit")));
			continue;
		}
		candidates++;
		failing += json_is_true(json_object_get(e, "own_failure"));
	}
	/* A target whose own step failed in the last repair would roll the
	 * others back with it again: while others drift, they are repaired
	 * without it, and it is tried alone at a later check (until it is
	 * contested with its own error). */
	if (failing && failing < candidates) {
		json_object_foreach(d->targets, key, e) {
			if (!json_is_true(json_object_get(e, "drifting")) ||
			    !json_is_true(json_object_get(e, "own_failure")) ||
			    json_object_get(skip, key))
				continue;
			json_object_set_new(skip, key, json_true());
			candidates--;
		}
	}
	int ndrift = drifting_count(d);
	set_status(d, ndrift ? "drifted" : "in_sync", NULL);
	pthread_mutex_unlock(&d->lock);
	if (ndrift)
		emit(d, json_pack("{s:s, s:s, s:i, s:s, s:i}", "event", "drift", "reason", reason,
				  "targets", ndrift, "policy", nt_drift_policy_name(d->cfg.policy),
				  "repairing", candidates));
	if (!candidates) {
		r = 0;
		goto out;
	}

	/* The repair: one transaction of the drifted targets, re-planned
	 * inside the engine's slot against the host as it is then. */
	req.reason = reason;
	req.skip = skip;
	req.desired_set_ms = set_ms;
	req.client = "nettune-drift";
	req.identity = "";
	pthread_mutex_lock(&d->lock);
	d->self_until = INT64_MAX;
	pthread_mutex_unlock(&d->lock);
	r = nt_txn_apply(d->engine, &req, &ao);
	int64_t done = nt_store_now_ms();
	pthread_mutex_lock(&d->lock);
	d->self_until = done + 1000;
	if (r == NT_ECONFLICT) {
		/* Another transaction holds the slot: never beside it. */
		d->retry_due = mono_ms() + 1000;
		set_status(d, "drifted", "repair waits: %s", ao.message);
		pthread_mutex_unlock(&d->lock);
		r = 0;
		goto out;
	}
	if (r < 0) {
		set_status(d, "drifted", "repair not made: %s",
			   ao.message[0] ? ao.message : nt_strerror(r));
		pthread_mutex_unlock(&d->lock);
		goto out;
	}
	if (ao.doc) {
		int64_t id = json_integer_value(json_object_get(ao.doc, "id"));
		const char *st = json_string_value(json_object_get(ao.doc, "status"));
		size_t i;
		json_t *s;
		bool applied = st && !strcmp(st, nt_txn_status_name(NT_TXN_APPLIED));
		d->last_repair_txn = id;
		d->repairs[reason_index(reason)]++;
		json_array_foreach(json_object_get(ao.doc, "steps"), i, s) {
			char k[512];
			snprintf(k, sizeof(k), "%s %s",
				 json_string_value(json_object_get(s, "kind")),
				 json_string_value(json_object_get(s, "target")));
			e = json_object_get(d->targets, k);
			if (!e)
				continue;
			const char *res = json_string_value(json_object_get(s, "result"));
			bool own = res && (!strcmp(res, nt_step_result_name(NT_STEP_FAILED)) ||
					   !strcmp(res, nt_step_result_name(NT_STEP_ROLLBACK_FAILED)));
			json_object_set_new(e, "last_repair_ms", json_integer(done));
			json_object_set_new(e, "last_repair_txn", json_integer(id));
			if (!applied && !own) {
				/* Undone or never run because another step
				 * failed: not this target's failure, so it
				 * neither counts toward contested nor takes
				 * the other's error; it is repaired again
				 * soon, without the failing one. */
				d->retry_due = mono_ms() + 1000;
				continue;
			}
			/* Every attempt counts toward contested, a failed one
			 * too, so a repair that cannot hold never loops. */
			json_array_append_new(json_object_get(e, "repairs"), json_integer(done));
			if (own)
				json_object_set_new(e, "own_failure", json_true());
			else
				json_object_del(e, "own_failure");
			if (res && !strcmp(res, nt_step_result_name(NT_STEP_APPLIED))) {
				json_object_set_new(e, "drifting", json_false());
				json_object_set_new(e, "state", json_string("in_sync"));
				json_object_set(e, "current", json_object_get(e, "desired"));
				json_object_set_new(e, "last_held_ms", json_integer(done));
				json_object_del(e, "repair_error");
			} else {
				/* Kept for the contested report: a repair that
				 * cannot hold is not another tool's doing. */
				json_t *err = json_object_get(s, "error");
				if (!json_is_string(err))
					err = json_object_get(ao.doc, "error");
				json_object_set_new(e, "repair_error",
						    json_string(json_is_string(err) ?
								json_string_value(err) :
								res ? res : "not applied"));
			}
		}
		ndrift = drifting_count(d);
		if (applied)
			set_status(d, ndrift ? "drifted" : "in_sync", NULL);
		else
			set_status(d, "drifted", "repair transaction %lld ended %s: %s", (long long)id,
				   st ? st : "?",
				   json_string_value(json_object_get(ao.doc, "error")) ?
					   json_string_value(json_object_get(ao.doc, "error")) : "");
		emit(d, json_pack("{s:s, s:I, s:s, s:s}", "event", "drift_repair", "txn",
				  (json_int_t)id, "reason", reason, "status", st ? st : "?"));
	}
	pthread_mutex_unlock(&d->lock);
	r = 0;
out:
	nt_txn_outcome_free(&o);
	nt_txn_outcome_free(&ao);
	json_decref(desired);
	json_decref(skip);
	pthread_mutex_unlock(&d->check_lock);
	return r;
}

/* ---- the thread ---- */

static void drain(int fd)
{
	uint64_t v;
	while (read(fd, &v, sizeof(v)) > 0)
		;
}

static void *drift_main(void *arg)
{
	nt_drift *d = arg;
	int64_t next = 0; /* monotonic ms of the next periodic check */
	const char *reason = "boot";

	for (;;) {
		if (reason) {
			nt_drift_check(d, reason);
			/* A check reads the whole host: megabytes on a big one,
			 * which the agent's malloc settings keep for reuse
			 * (cli/cmd_serve.c), and a repair fills SQLite's cache.
			 * Checks are seconds apart: give them back now. */
			if (d->store)
				nt_store_release_memory(d->store);
			malloc_trim(0);
			next = mono_ms() + d->cfg.interval_ms;
		}
		reason = NULL;

		struct pollfd pfd[3];
		int n = 0, fds[2];
		pfd[n++] = (struct pollfd){ .fd = d->wake_fd, .events = POLLIN };
		int ne = nt_events_fds(d->events, fds);
		for (int i = 0; i < ne; i++)
			pfd[n++] = (struct pollfd){ .fd = fds[i], .events = POLLIN };

		pthread_mutex_lock(&d->lock);
		int64_t now = mono_ms(), due = next;
		if (d->event_due && d->event_due < due)
			due = d->event_due;
		if (d->retry_due && d->retry_due < due)
			due = d->retry_due;
		bool stop = d->stop, changed = d->changed;
		pthread_mutex_unlock(&d->lock);
		if (stop)
			break;
		if (!changed && due > now)
			poll(pfd, (nfds_t)n, (int)(due - now));

		pthread_mutex_lock(&d->lock);
		if (pfd[0].revents & POLLIN)
			drain(d->wake_fd);
		for (int i = 1; i < n; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			/* Messages lost to a full socket buffer may have been
			 * link messages: check as after one. */
			if (nt_events_read(d->events, pfd[i].fd, on_event, d) == -ENOBUFS) {
				nt_event lost = { .kind = NT_EVENT_LINK };
				on_event(d, &lost);
			}
		}
		now = mono_ms();
		if (d->stop) {
			pthread_mutex_unlock(&d->lock);
			break;
		}
		if (d->changed) {
			d->changed = false;
			reason = "drift";
		} else if (d->event_due && now >= d->event_due) {
			reason = d->event_link ? "link-up" : "drift";
			d->event_due = 0;
			d->event_link = false;
		} else if (d->retry_due && now >= d->retry_due) {
			reason = d->last_reason ? d->last_reason : "drift";
		} else if (now >= next) {
			reason = "drift";
		}
		if (reason)
			d->retry_due = 0;
		pthread_mutex_unlock(&d->lock);
	}
	return NULL;
}

int nt_drift_new(const nt_ctx *ctx, nt_txn_engine *engine, nt_store *store,
		 const nt_drift_config *cfg, nt_log_fn log, void *log_ud, bool start,
		 nt_drift **out)
{
	nt_drift *d = calloc(1, sizeof(*d));
	int r;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->ctx = *ctx;
	d->engine = engine;
	d->store = store;
	d->cfg = *cfg;
	if (d->cfg.interval_ms <= 0)
		d->cfg.interval_ms = 30000;
	if (d->cfg.debounce_ms <= 0)
		d->cfg.debounce_ms = 500;
	if (d->cfg.contest_repairs <= 0)
		d->cfg.contest_repairs = 3;
	if (d->cfg.contest_window_ms <= 0)
		d->cfg.contest_window_ms = 300000;
	d->log = log;
	d->log_ud = log_ud;
	d->wake_fd = -1;
	d->status = "none";
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->check_lock, NULL);
	d->targets = json_object();
	d->warnings = json_array();
	if (!d->targets || !d->warnings) {
		r = -ENOMEM;
		goto fail;
	}
	if (!start) {
		*out = d;
		return 0;
	}
	d->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->wake_fd < 0) {
		r = -errno;
		goto fail;
	}
	r = nt_events_open(ctx, &d->events);
	if (r == -EOPNOTSUPP)
		snprintf(d->events_error, sizeof(d->events_error),
			 "none on a host root other than /: periodic checks only");
	else if (r < 0)
		snprintf(d->events_error, sizeof(d->events_error),
			 "cannot subscribe to kernel events (%s): periodic checks only",
			 nt_strerror(r));
	r = pthread_create(&d->thread, NULL, drift_main, d);
	if (r != 0) {
		r = -r;
		goto fail;
	}
	d->started = true;
	*out = d;
	return 0;
fail:
	nt_drift_free(d);
	return r;
}

void nt_drift_free(nt_drift *d)
{
	if (!d)
		return;
	if (d->started) {
		pthread_mutex_lock(&d->lock);
		d->stop = true;
		pthread_mutex_unlock(&d->lock);
		wake(d);
		pthread_join(d->thread, NULL);
	}
	nt_events_close(d->events);
	if (d->wake_fd >= 0)
		close(d->wake_fd);
	json_decref(d->targets);
	json_decref(d->warnings);
	json_decref(d->errors);
	json_decref(d->last_ethtool);
	pthread_mutex_destroy(&d->lock);
	pthread_mutex_destroy(&d->check_lock);
	free(d);
}

void nt_drift_desired_changed(nt_drift *d)
{
	pthread_mutex_lock(&d->lock);
	/* A new intent: earlier fights and overrides were about the old one. */
	json_object_clear(d->targets);
	d->changed = true;
	pthread_mutex_unlock(&d->lock);
	wake(d);
}

nt_drift_policy nt_drift_get_policy(const nt_drift *d)
{
	return d->cfg.policy;
}

json_t *nt_drift_report(nt_drift *d)
{
	const char *key;
	json_t *e;

	pthread_mutex_lock(&d->lock);
	json_t *targets = json_array();
	json_object_foreach(d->targets, key, e) {
		if (json_is_true(json_object_get(e, "drifting")))
			json_array_append_new(targets, entry_doc(e));
	}
	json_t *doc = json_pack("{s:s, s:i, s:s, s:o, s:o, s:I, s:o, s:o, s:O, s:o}", "policy",
				nt_drift_policy_name(d->cfg.policy), "interval_s",
				d->cfg.interval_ms / 1000, "status", d->status, "message",
				d->message[0] ? json_string(d->message) : json_null(), "errors",
				d->errors ? json_incref(d->errors) : json_array(), "checks",
				(json_int_t)d->checks, "last_check", time_str(d->last_check_ms),
				"last_reason",
				d->last_reason ? json_string(d->last_reason) : json_null(),
				"warnings", d->warnings, "targets", targets);
	if (doc) {
		json_object_set_new(doc, "last_repair_txn",
				    d->last_repair_txn ? json_integer(d->last_repair_txn) : json_null());
		json_object_set_new(doc, "events",
				    json_string(d->events ? nt_events_describe(d->events) :
						d->events_error[0] ? d->events_error :
								     "none: periodic checks only"));
		json_object_set(doc, "last_ethtool_event",
				d->last_ethtool ? d->last_ethtool : json_null());
	}
	/* The document leaves the lock as a copy sharing nothing with the
	 * entries: the caller reads and frees it on another thread while the
	 * watcher goes on replacing and freeing those (jansson values are not
	 * safe to share across threads beyond their reference counts). */
	json_t *copy = doc ? json_deep_copy(doc) : NULL;
	json_decref(doc);
	pthread_mutex_unlock(&d->lock);
	return copy;
}

void nt_drift_state_counts(nt_drift *d, int *contested, int *repair_failing)
{
	const char *key;
	json_t *e;
	*contested = *repair_failing = 0;
	pthread_mutex_lock(&d->lock);
	json_object_foreach(d->targets, key, e) {
		const char *state = json_string_value(json_object_get(e, "state"));
		*contested += state && !strcmp(state, "contested");
		*repair_failing += json_object_get(e, "repair_error") != NULL;
	}
	pthread_mutex_unlock(&d->lock);
}

void nt_drift_counts(nt_drift *d, int *targets, uint64_t repairs[NT_DRIFT_NREASONS])
{
	pthread_mutex_lock(&d->lock);
	*targets = drifting_count(d);
	for (int i = 0; i < NT_DRIFT_NREASONS; i++)
		repairs[i] = d->repairs[i];
	pthread_mutex_unlock(&d->lock);
}
