/* SPDX-License-Identifier: Apache-2.0 */
/* The CPUs a NAPI thread may run on: target = "IF/rx-N", the thread of
 * the NAPI that serves RX queue N; value = its allowed CPUs as a cpulist,
 * or "none" while the NAPI has no thread (threaded NAPI off).
 *
 * The kernel does not pin a NAPI thread (napi.rst advises the CPU that
 * services its interrupt); this kind does, with sched_setaffinity on the
 * thread's pid, which the netdev family names (napi-get's pid, 6.8), and
 * reads it back from /proc/PID/status (Cpus_allowed_list). The queue, not
 * the pid or the NAPI id, is the target: both change when threaded NAPI
 * is toggled or the link is reset.
 *
 * "none" is what a plan records when the thread does not exist yet (the
 * same profile turns threaded on, settings/napi_device.c, ordered before
 * this kind). Writing "none" back in a rollback does nothing: the thread
 * goes when the device's "threaded" step is undone, after this one, and a
 * thread the rollback makes disappear is no error. The profile section is
 * settings/napi.c's. */
#include "settings/napi_kind.h"
#include "kernel/task.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tc_parse(const char *text, nt_value *out)
{
	memset(out, 0, sizeof(*out));
	if (text && !strcmp(text, "none"))
		return 0;
	if (!text || nt_cpulist_parse(text, &out->cpus) < 0 || nt_cpuset_empty(&out->cpus))
		return NT_EPARSE;
	return 0;
}

static int tc_format(const nt_value *v, char *out, size_t size)
{
	if (nt_cpuset_empty(&v->cpus)) {
		int n = snprintf(out, size, "none");
		return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
	}
	return nt_cpulist_format(&v->cpus, out, size) < 0 ? -ENOSPC : 0;
}

static bool tc_equal(const nt_value *a, const nt_value *b)
{
	return nt_cpuset_equal(&a->cpus, &b->cpus);
}

/* The pid of the thread of TARGET's NAPI, 0 when it has none; *ID its
 * NAPI id. Returns 0 or -errno (NT_EINVALID for a bad target). */
static int thread_of(const nt_ctx *ctx, const char *target, int *pid, uint32_t *id)
{
	char ifname[IF_NAMESIZE], rest[8];
	uint32_t queue;
	nt_nd_napi a;
	*pid = 0;
	int r = nt_nk_target(target, ifname, &queue, rest, sizeof(rest));
	if (r < 0 || rest[0])
		return NT_EINVALID;
	if ((r = nt_nk_napi(ctx, ifname, queue, &a)) < 0)
		return r;
	*id = a.id;
	if (a.pid > 0) {
		*pid = (int)a.pid;
		return 0;
	}
	/* The family sends the pid only while a thread exists (and a kernel
	 * may leave it out): the thread napi/IF-ID by name is the check. */
	nt_napi_thread th[64];
	int n = nt_napi_threads_find(ctx, ifname, th, 64);
	for (int i = 0; i < n; i++)
		if (th[i].napi_id == (long)a.id)
			*pid = th[i].pid;
	return 0;
}

static int tc_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, nt_value *out)
{
	int pid;
	uint32_t id;
	nt_task task;
	memset(out, 0, sizeof(*out));
	int r = thread_of(ctx, target, &pid, &id);
	if (r < 0 || pid == 0)
		return r;
	r = nt_task_read(ctx, pid, &task);
	if (r == -ENOENT)
		return 0; /* gone between the two reads: no thread */
	if (r < 0)
		return r;
	if (!task.has_allowed)
		return -ENODATA;
	out->cpus = task.allowed;
	return 0;
}

static int tc_check(const nt_ctx *ctx, nt_ethtool *eh, const nt_topology *t, const char *target,
		    const nt_value *v, char *why, size_t whysize)
{
	char ifname[IF_NAMESIZE], rest[8], list[NT_VALUE_MAX];
	uint32_t queue;
	nt_nd_napi a;
	if (nt_nk_target(target, ifname, &queue, rest, sizeof(rest)) < 0 || rest[0]) {
		snprintf(why, whysize, "'%s' is not IFACE/rx-N", target);
		return NT_EINVALID;
	}
	if (t && !nt_cpuset_empty(&v->cpus) && !nt_cpuset_subset(&v->cpus, &t->cpus_online)) {
		snprintf(why, whysize, "%s rx-%u: thread_cpus '%s' names CPUs that are not online", ifname, queue,
			 tc_format(v, list, sizeof(list)) == 0 ? list : "?");
		return NT_EINVALID;
	}
	int r = nt_nk_napi(ctx, ifname, queue, &a);
	if (r < 0) {
		snprintf(why, whysize, "%s rx-%u: the kernel names no NAPI for it (%s)", ifname, queue,
			 r == -ENOENT ? "no NAPI serves the queue" : nt_strerror(r));
		return NT_EINVALID;
	}
	return 0;
}

static int tc_apply(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v, char *err,
		    size_t errsize)
{
	int pid;
	uint32_t id = 0;
	char list[NT_VALUE_MAX];
	if (nt_cpuset_empty(&v->cpus))
		return 0; /* "none": see the top of the file */
	int r = thread_of(ctx, target, &pid, &id);
	if (r == 0 && pid == 0)
		r = -ESRCH;
	nt_value cur;
	/* Read, compare, write only what differs. */
	if (r == 0 && tc_read(ctx, eh, target, &cur) == 0 && tc_equal(&cur, v))
		return 0;
	if (r == 0)
		r = nt_task_set_allowed(ctx, pid, &v->cpus);
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "%s: thread of NAPI %u (pid %d) on CPUs %s: %s%s", target, id, pid,
			 tc_format(v, list, sizeof(list)) == 0 ? list : "?", nt_strerror(r),
			 r == -ESRCH ? " (no thread: threaded NAPI is off)" : "");
	return r;
}

static int tc_apply_read(const nt_ctx *ctx, nt_ethtool *eh, const char *target, const nt_value *v,
			 nt_value *got, int *read_err, char *err, size_t errsize)
{
	int r = tc_apply(ctx, eh, target, v, err, errsize);
	memset(got, 0, sizeof(*got));
	if (r < 0)
		return r;
	/* "none" is given back by the undo of "threaded" that follows (see
	 * the top of the file): the thread still there now is not read. */
	if (nt_cpuset_empty(&v->cpus)) {
		*read_err = 0;
		return 0;
	}
	*read_err = tc_read(ctx, eh, target, got);
	return 0;
}

/* The thread's pid: a new one after threaded NAPI is toggled, the link
 * is reset or the channels change (the kernel ends the thread and starts
 * another on every CPU). 0 while the NAPI has none. */
static int tc_instance(const nt_ctx *ctx, const char *target, long long *id)
{
	int pid;
	uint32_t napi;
	*id = 0;
	int r = thread_of(ctx, target, &pid, &napi);
	if (r == 0)
		*id = pid;
	return r;
}

/* For the record: which thread the step pinned, and of which NAPI, as
 * the target names neither. */
static int tc_observe(const nt_ctx *ctx, nt_ethtool *eh, const char *target, char *out, size_t size)
{
	int pid;
	uint32_t id = 0;
	int r = thread_of(ctx, target, &pid, &id);
	if (r < 0)
		return r;
	int n = pid ? snprintf(out, size, "thread %d of NAPI %u", pid, id) :
		      snprintf(out, size, "no thread (NAPI %u)", id);
	return n < 0 || (size_t)n >= size ? -ENOSPC : 0;
}

const nt_setting_kind nt_setting_napi_thread_cpus = {
	.name = "napi_thread_cpus",
	/* The thread serves a link of this namespace; its CPUs are the
	 * machine's, as an RPS map's are. */
	.scope = NT_SCOPE_NETNS,
	.scope_why = "the NAPI thread serves a link of this namespace",
	.parse = tc_parse,
	.format = tc_format,
	.equal = tc_equal,
	.read = tc_read,
	.check = tc_check,
	.apply = tc_apply,
	.apply_read = tc_apply_read,
	/* After the device's "threaded" (37), which starts the threads. */
	.order = 39,
	.observe = tc_observe,
	/* No notification for a task's affinity: the periodic check. */
	.events = 0,
	.instance = tc_instance,
	.culprit = "taskset or sched_setaffinity on the thread, a tuning daemon or a cgroup's cpuset "
		   "moving kernel threads",
};

const nt_setting_module nt_module_napi_thread = {
	.kinds = (const nt_setting_kind *const[]){ &nt_setting_napi_thread_cpus, NULL },
};
