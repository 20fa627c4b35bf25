/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel on a fixture root, the `netdev` family's answers for one NIC
 * (kernel/netdev.h): the "netdev" object of ROOT/ethtool/IFACE.json holds
 * what `queue-get` and `napi-get` would say of it, in the spec's words:
 *
 *   "netdev": {
 *     "queues": [{"id": 0, "type": "rx", "napi-id": 8193}, ...],
 *     "napis": [{"id": 8193, "irq": 102, "pid": 2411, "defer-hard-irqs": 0,
 *                "gro-flush-timeout": 0, "irq-suspend-timeout": 0,
 *                "threaded": "enabled"}, ...]
 *   }
 *
 * A member left out is one the kernel does not send (an older kernel, a
 * NAPI without a thread); a NIC whose document has no such object is on a
 * kernel without the family's commands (-EOPNOTSUPP), and the report falls
 * back to sysfs and the thread names, as it does live.
 *
 * Per-queue counters (`qstats-get`, scope queue) are a "qstats" member of
 * the same object, each entry a queue with the counters its driver keeps:
 *
 *     "qstats": [{"queue-type": "rx", "queue-id": 0, "rx-packets": 81104,
 *                 "rx-bytes": 2002809049}, ...]
 *
 * An empty array is a driver that keeps none (veth), no member a kernel
 * without the command (before 6.9).
 *
 * Writes do what the kernel does: napi-set changes the NAPI's member
 * ("threaded" also starts or ends that NAPI's thread, 6.17); the
 * device's sysfs "threaded" gives each NAPI a thread (ROOT/proc/PID, with
 * a new pid from NT_FX_NAPI_PID0 up each time, as a fixture's pids must not
 * meet the captured ones) or takes it away; napi_defer_hard_irqs and
 * gro_flush_timeout become every NAPI's value, as they do since 6.13; a
 * thread's affinity is its status file's Cpus_allowed_list, its run time
 * its schedstat's first field (0 at the start: a test writes more to make
 * it run) and its last CPU its stat's field 39. */
#include "kernel/fixture.h"
#include "kernel/fixture_int.h"
#include "kernel/netdev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

/* Member KEY of O as a non-negative integer, or -1 when absent; false
 * when it is there and not one. */
static bool opt_int(json_t *o, const char *key, int64_t max, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	*out = -1;
	if (!v)
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
		return false;
	*out = json_integer_value(v);
	return true;
}

static int queue_entry(json_t *e, int ifindex, nt_nd_queue *q)
{
	const char *type = json_string_value(json_object_get(e, "type"));
	int64_t id;
	if (!json_is_object(e) || !type || !opt_int(e, "id", UINT32_MAX, &id) || id < 0 ||
	    !opt_int(e, "napi-id", UINT32_MAX, &q->napi_id))
		return NT_EPARSE;
	if (!strcmp(type, "rx"))
		q->type = NT_NETDEV_QUEUE_RX;
	else if (!strcmp(type, "tx"))
		q->type = NT_NETDEV_QUEUE_TX;
	else
		return NT_EPARSE;
	q->id = (uint32_t)id;
	q->ifindex = (uint32_t)ifindex;
	return 0;
}

/* The spec's words of enum napi-threaded, by value. */
static const char *const threaded_words[] = { "disabled", "enabled", "busy-poll", NULL };

static int threaded_mode(const char *word)
{
	for (int i = 0; word && threaded_words[i]; i++)
		if (!strcmp(word, threaded_words[i]))
			return i;
	return -1;
}

static int napi_entry(json_t *e, int ifindex, nt_nd_napi *n)
{
	int64_t id;
	json_t *th = json_object_get(e, "threaded");
	if (!json_is_object(e) || !opt_int(e, "id", UINT32_MAX, &id) || id < 0 ||
	    !opt_int(e, "irq", UINT32_MAX, &n->irq) || !opt_int(e, "pid", UINT32_MAX, &n->pid) ||
	    !opt_int(e, "defer-hard-irqs", UINT32_MAX, &n->defer_hard_irqs) ||
	    !opt_int(e, "gro-flush-timeout", INT64_MAX, &n->gro_flush_timeout) ||
	    !opt_int(e, "irq-suspend-timeout", INT64_MAX, &n->irq_suspend_timeout))
		return NT_EPARSE;
	if (!th)
		n->threaded = -1;
	else if ((n->threaded = threaded_mode(json_string_value(th))) < 0)
		return NT_EPARSE;
	n->id = (uint32_t)id;
	n->ifindex = (uint32_t)ifindex;
	return 0;
}

int nt_fixture_netdev_get(const nt_ctx *ctx, const char *ifname, int ifindex, nt_netdev *nd)
{
	json_t *root = NULL, *sec = NULL, *e;
	size_t i;
	int r = nt_fx_load(ctx, "netdev", ifname, &root, &sec);
	if (r < 0)
		return r;
	json_t *qs = json_object_get(sec, "queues"), *ns = json_object_get(sec, "napis");
	if ((qs && !json_is_array(qs)) || (ns && !json_is_array(ns))) {
		r = NT_EPARSE;
		goto out;
	}
	nd->queues = calloc(json_array_size(qs) + 1, sizeof(*nd->queues));
	nd->napis = calloc(json_array_size(ns) + 1, sizeof(*nd->napis));
	if (!nd->queues || !nd->napis) {
		r = -ENOMEM;
		goto out;
	}
	nd->qcap = json_array_size(qs) + 1;
	nd->ncap = json_array_size(ns) + 1;
	json_array_foreach(qs, i, e) {
		if ((r = queue_entry(e, ifindex, &nd->queues[nd->nqueues])) < 0)
			goto out;
		nd->nqueues++;
	}
	json_array_foreach(ns, i, e) {
		if ((r = napi_entry(e, ifindex, &nd->napis[nd->nnapis])) < 0)
			goto out;
		nd->nnapis++;
	}
out:
	json_decref(root);
	return r;
}

static int qstats_entry(json_t *e, int ifindex, nt_nd_qstats *q)
{
	const char *type = json_string_value(json_object_get(e, "queue-type"));
	const char *key;
	json_t *v;
	int64_t id;
	memset(q, 0, sizeof(*q));
	if (!json_is_object(e) || !type || !opt_int(e, "queue-id", UINT32_MAX, &id) || id < 0)
		return NT_EPARSE;
	if (!strcmp(type, "rx"))
		q->type = NT_NETDEV_QUEUE_RX;
	else if (!strcmp(type, "tx"))
		q->type = NT_NETDEV_QUEUE_TX;
	else
		return NT_EPARSE;
	json_object_foreach(e, key, v) {
		int i;
		for (i = 0; i < NT_NETDEV_QSTATS_N; i++)
			if (!strcmp(key, nt_netdev_qstat_names[i]))
				break;
		if (i == NT_NETDEV_QSTATS_N)
			continue; /* queue-type, queue-id */
		/* The kernel's counters are u64; jansson's integers stop at
		 * INT64_MAX, which no fixture needs to pass. */
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return NT_EPARSE;
		q->v[i] = (uint64_t)json_integer_value(v);
		q->present |= 1u << i;
	}
	q->id = (uint32_t)id;
	q->ifindex = (uint32_t)ifindex;
	return 0;
}

int nt_fixture_qstats_get(const nt_ctx *ctx, const char *ifname, int ifindex, nt_netdev *nd)
{
	json_t *root = NULL, *sec = NULL, *e;
	size_t i;
	int r = nt_fx_load(ctx, "netdev", ifname, &root, &sec);
	if (r < 0)
		return r;
	json_t *qs = json_object_get(sec, "qstats");
	if (!qs) {
		r = -EOPNOTSUPP;
		goto out;
	}
	if (!json_is_array(qs)) {
		r = NT_EPARSE;
		goto out;
	}
	nt_nd_qstats *p = realloc(nd->qstats, (nd->nqstats + json_array_size(qs) + 1) * sizeof(*p));
	if (!p) {
		r = -ENOMEM;
		goto out;
	}
	nd->qstats = p;
	nd->scap = nd->nqstats + json_array_size(qs) + 1;
	json_array_foreach(qs, i, e) {
		if ((r = qstats_entry(e, ifindex, &nd->qstats[nd->nqstats])) < 0)
			goto out;
		nd->nqstats++;
	}
out:
	json_decref(root);
	return r;
}

/* Pids of the threads a fixture's "threaded" write starts: above the
 * captured ones (the seed hosts' run below 10^5). */
#define NT_FX_NAPI_PID0 200000

static int next_pid(const nt_ctx *ctx, json_int_t id);
static int thread_start(const nt_ctx *ctx, const char *ifname, json_int_t id, int pid);
static void thread_stop(const nt_ctx *ctx, int pid);

/* napi-set threaded V on the NAPI entry E (id ID) of IFNAME, as 6.17 does
 * it: the mode is the NAPI's own, and the NAPI gets a thread napi/IF-ID
 * when it has none (a new pid each time), or loses it when V is 0; the
 * device's sysfs "threaded" is left as it was. */
static int napi_threaded(const nt_ctx *ctx, const char *ifname, json_t *e, uint32_t id, uint64_t v, char *err,
			 size_t errsize)
{
	json_t *pid = json_object_get(e, "pid");
	if (v >= sizeof(threaded_words) / sizeof(threaded_words[0]) - 1) {
		/* The policy's enum check. */
		nt_fx_set_err(err, errsize, "integer out of range");
		return -ERANGE;
	}
	if (json_object_set_new(e, "threaded", json_string(threaded_words[v])) < 0)
		return -ENOMEM;
	if (v && !pid) {
		int p = next_pid(ctx, id);
		int r = thread_start(ctx, ifname, id, p);
		if (r < 0)
			return r;
		return json_object_set_new(e, "pid", json_integer(p)) < 0 ? -ENOMEM : 0;
	}
	if (!v && pid) {
		thread_stop(ctx, (int)json_integer_value(pid));
		json_object_del(e, "pid");
	}
	return 0;
}

int nt_fixture_netdev_napi_set(const nt_ctx *ctx, const char *ifname, uint32_t id, const char *attr,
			       uint64_t v, char *err, size_t errsize)
{
	json_t *root = NULL, *sec = NULL, *e, *found = NULL;
	size_t i;
	char text[160];
	int r = nt_fx_load_edit(ctx, "netdev", ifname, &root, &sec);
	if (r < 0)
		return r;
	json_array_foreach(json_object_get(sec, "napis"), i, e)
		if (json_integer_value(json_object_get(e, "id")) == (json_int_t)id)
			found = e;
	if (!found) {
		/* The kernel looks the id up in the namespace: none. */
		snprintf(text, sizeof(text), "Unknown NAPI ID %u", id);
		nt_fx_set_err(err, errsize, text);
		r = -ENOENT;
		goto out;
	}
	if (!json_object_get(found, attr)) {
		snprintf(text, sizeof(text), "napi-set: the kernel has no %s", attr);
		nt_fx_set_err(err, errsize, text);
		r = -EOPNOTSUPP;
		goto out;
	}
	if (!strcmp(attr, "threaded")) {
		r = napi_threaded(ctx, ifname, found, id, v, err, errsize);
		if (r == 0)
			r = nt_fx_save(ctx, ifname, root);
		goto out;
	}
	if (v > INT64_MAX || json_object_set_new(found, attr, json_integer((json_int_t)v)) < 0) {
		r = v > INT64_MAX ? -ERANGE : -ENOMEM;
		goto out;
	}
	r = nt_fx_save(ctx, ifname, root);
out:
	json_decref(root);
	return r;
}

/* Create ROOT + REL holding TEXT (a fixture's /proc file of a new thread). */
static int put_file(const nt_ctx *ctx, const char *rel, const char *text)
{
	char path[PATH_MAX];
	int r = nt_path(ctx, path, sizeof(path), "%s", rel);
	if (r < 0)
		return r;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	size_t n = strlen(text);
	r = write(fd, text, n) == (ssize_t)n ? 0 : -EIO;
	close(fd);
	return r;
}

/* A pid for a new thread of NAPI ID, as the kernel gives one: the next
 * after the last it gave (ROOT/proc/sys/kernel/ns_last_pid, kept up to
 * date here, at least NT_FX_NAPI_PID0), so a thread the fixture ends and
 * starts again has a new pid, as a live one does. Where that file cannot
 * be kept, NT_FX_NAPI_PID0 + ID: one pid a NAPI. */
static int next_pid(const nt_ctx *ctx, json_int_t id)
{
	static const char *const dirs[] = { "/proc", "/proc/sys", "/proc/sys/kernel", NULL };
	char text[32], path[PATH_MAX];
	long last = 0;
	for (int i = 0; dirs[i]; i++)
		if (nt_path(ctx, path, sizeof(path), "%s", dirs[i]) == 0)
			(void)mkdir(path, 0755);
	if (nt_read_long(ctx, &last, "/proc/sys/kernel/ns_last_pid") < 0 || last < NT_FX_NAPI_PID0 ||
	    last >= INT32_MAX - 1)
		last = NT_FX_NAPI_PID0 - 1;
	snprintf(text, sizeof(text), "%ld\n", last + 1);
	if (put_file(ctx, "/proc/sys/kernel/ns_last_pid", text) < 0)
		return NT_FX_NAPI_PID0 + (int)(id & 0xfffff);
	return (int)(last + 1);
}

/* The thread napi/IFNAME-ID as the kernel starts it: on the online CPUs. */
static int thread_start(const nt_ctx *ctx, const char *ifname, json_int_t id, int pid)
{
	char online[1024] = "0", rel[64], name[64], text[2048], path[PATH_MAX];
	int r;
	if (nt_read_str(ctx, online, sizeof(online), "/sys/devices/system/cpu/online") < 0)
		snprintf(online, sizeof(online), "0");
	snprintf(name, sizeof(name), "napi/%s-%lld", ifname, (long long)id);
	snprintf(rel, sizeof(rel), "/proc/%d", pid);
	if ((r = nt_path(ctx, path, sizeof(path), "%s", rel)) < 0)
		return r;
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(rel, sizeof(rel), "/proc/%d/comm", pid);
	if ((r = put_file(ctx, rel, name)) < 0)
		return r;
	snprintf(text, sizeof(text), "Name:\t%s\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t2\n"
		 "Cpus_allowed_list:\t%s\n", name, pid, pid, online);
	snprintf(rel, sizeof(rel), "/proc/%d/status", pid);
	if ((r = put_file(ctx, rel, text)) < 0)
		return r;
	/* stat: field 39 (the last CPU) 0; the others as an idle kthread's. */
	snprintf(text, sizeof(text), "%d (%s) S 2 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1200 0 0 0 0 0 0 0 0 0 "
		 "0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, name);
	snprintf(rel, sizeof(rel), "/proc/%d/stat", pid);
	if ((r = put_file(ctx, rel, text)) < 0)
		return r;
	/* schedstat: run and wait time in ns, timeslices: not run yet. A
	 * test makes it run by writing a larger first field (the delivery
	 * check compares it at a window's two ends). */
	snprintf(rel, sizeof(rel), "/proc/%d/schedstat", pid);
	return put_file(ctx, rel, "0 0 0\n");
}

static void thread_stop(const nt_ctx *ctx, int pid)
{
	static const char *const files[] = { "comm", "status", "stat", "schedstat", "cmdline", NULL };
	char path[PATH_MAX];
	for (int i = 0; files[i]; i++)
		if (nt_path(ctx, path, sizeof(path), "/proc/%d/%s", pid, files[i]) == 0)
			(void)unlink(path);
	if (nt_path(ctx, path, sizeof(path), "/proc/%d", pid) == 0)
		(void)rmdir(path);
}

int nt_fixture_netdev_dev_write(const nt_ctx *ctx, const char *ifname, const char *file, uint64_t v)
{
	json_t *root = NULL, *sec = NULL, *e;
	size_t i;
	char text[32], rel[PATH_MAX];
	bool threaded = !strcmp(file, "threaded");
	const char *member = !strcmp(file, "napi_defer_hard_irqs") ? "defer-hard-irqs" :
			     !strcmp(file, "gro_flush_timeout") ? "gro-flush-timeout" : NULL;
	if (!threaded && !member)
		return -ENOENT;
	int r = nt_fx_load_edit(ctx, "netdev", ifname, &root, &sec);
	if (r < 0 && r != -EOPNOTSUPP)
		return r;
	json_t *napis = sec ? json_object_get(sec, "napis") : NULL;
	/* The kernel refuses threaded NAPI for a device without NAPI. */
	if (threaded && v && r == 0 && json_array_size(napis) == 0) {
		r = -EOPNOTSUPP;
		goto out;
	}
	snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
	snprintf(rel, sizeof(rel), "/sys/class/net/%s/%s", ifname, file);
	if ((r = nt_fixture_write_attr(ctx, text, rel)) < 0 || !root)
		goto out;
	json_array_foreach(napis, i, e) {
		json_int_t id = json_integer_value(json_object_get(e, "id"));
		if (member) {
			if (json_object_get(e, member))
				json_object_set_new(e, member, json_integer((json_int_t)v));
			continue;
		}
		if (json_object_get(e, "threaded"))
			json_object_set_new(e, "threaded", json_string(v ? "enabled" : "disabled"));
		json_t *pid = json_object_get(e, "pid");
		if (v && !pid) {
			int p = next_pid(ctx, id);
			if ((r = thread_start(ctx, ifname, id, p)) < 0)
				goto out;
			json_object_set_new(e, "pid", json_integer(p));
		} else if (!v && pid) {
			thread_stop(ctx, (int)json_integer_value(pid));
			json_object_del(e, "pid");
		}
	}
	r = nt_fx_save(ctx, ifname, root);
out:
	json_decref(root);
	return r;
}

int nt_fixture_task_set_allowed(const nt_ctx *ctx, int pid, const nt_cpuset *set)
{
	char *status = NULL, list[NT_MAX_CPUS * 4];
	int r = nt_read_all(ctx, &status, "/proc/%d/status", pid);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	if (nt_cpuset_empty(set) || nt_cpulist_format(set, list, sizeof(list)) < 0) {
		free(status);
		return -EINVAL;
	}
	/* The status text with its Cpus_allowed_list line replaced, the
	 * mask line (Cpus_allowed) dropped: readers take the list. */
	size_t cap = strlen(status) + strlen(list) + 64;
	char *out = malloc(cap), *p = status;
	if (!out) {
		free(status);
		return -ENOMEM;
	}
	size_t len = 0;
	bool put = false;
	while (*p) {
		size_t n = strcspn(p, "\n");
		bool nl = p[n] == '\n';
		if (!strncmp(p, "Cpus_allowed_list:", 18)) {
			len += (size_t)snprintf(out + len, cap - len, "Cpus_allowed_list:\t%s\n", list);
			put = true;
		} else if (strncmp(p, "Cpus_allowed:", 13)) {
			memcpy(out + len, p, n);
			len += n;
			out[len++] = '\n';
		}
		p += n + nl;
	}
	if (!put)
		len += (size_t)snprintf(out + len, cap - len, "Cpus_allowed_list:\t%s\n", list);
	out[len] = '\0';
	r = nt_write_str(ctx, out, "/proc/%d/status", pid);
	free(out);
	free(status);
	return r;
}
