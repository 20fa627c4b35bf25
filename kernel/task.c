/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel threads in /proc: see kernel/task.h. */
#include "kernel/task.h"
#include "kernel/fixture.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int nt_task_parse_allowed(const char *status, nt_cpuset *out)
{
	static const char key[] = "Cpus_allowed_list:";
	const char *p = status;
	char list[4096];
	nt_cpuset_zero(out);
	while (p && *p) {
		if (!strncmp(p, key, sizeof(key) - 1)) {
			p += sizeof(key) - 1;
			while (*p == ' ' || *p == '\t')
				p++;
			size_t n = strcspn(p, "\n");
			if (n >= sizeof(list))
				return NT_EPARSE;
			memcpy(list, p, n);
			list[n] = '\0';
			return nt_cpulist_parse(list, out) < 0 ? NT_EPARSE : 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

/* Field N (1-based, N >= 3) of a /proc/PID/stat line as an unsigned
 * number: counted after the last ')', as the command name in parentheses
 * may hold spaces and ')'. Returns 0 or NT_EPARSE. */
static int stat_field(const char *stat, int n, unsigned long long *out)
{
	const char *p = stat ? strrchr(stat, ')') : NULL;
	if (!p)
		return NT_EPARSE;
	p++;
	/* Field 3 (state) follows the name. */
	for (int field = 3; field <= n; field++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return NT_EPARSE;
		if (field == n) {
			char *end;
			errno = 0;
			if (*p < '0' || *p > '9')
				return NT_EPARSE;
			unsigned long long v = strtoull(p, &end, 10);
			if (end == p || errno || (*end && *end != ' ' && *end != '\n'))
				return NT_EPARSE;
			*out = v;
			return 0;
		}
		p += strcspn(p, " \n");
	}
	return NT_EPARSE;
}

int nt_task_parse_last_cpu(const char *stat, int *cpu)
{
	unsigned long long v;
	*cpu = -1;
	if (stat_field(stat, 39, &v) < 0 || v >= NT_MAX_CPUS)
		return NT_EPARSE;
	*cpu = (int)v;
	return 0;
}

int nt_task_parse_cpu_ticks(const char *stat, uint64_t *ticks)
{
	unsigned long long u, s;
	*ticks = 0;
	if (stat_field(stat, 14, &u) < 0 || stat_field(stat, 15, &s) < 0 || u > UINT64_MAX - s)
		return NT_EPARSE;
	*ticks = u + s;
	return 0;
}

int nt_task_parse_schedstat(const char *text, uint64_t *run_ns)
{
	char *end;
	*run_ns = 0;
	/* "RUN_NS WAIT_NS TIMESLICES\n" (kernel/sched/stats.c, proc_pid_schedstat). */
	if (!text || *text < '0' || *text > '9')
		return NT_EPARSE;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || (*end != ' ' && *end != '\n' && *end))
		return NT_EPARSE;
	*run_ns = v;
	return 0;
}

int nt_task_napi_id(const char *comm, const char *ifname, long *id)
{
	char prefix[32];
	int n = snprintf(prefix, sizeof(prefix), "napi/%s-", ifname);
	size_t len = strlen(comm);
	*id = -1;
	if (n < 0 || (size_t)n >= sizeof(prefix))
		return -ENOENT;
	/* Since 5.17 a kernel thread's comm file shows its whole name; before,
	 * the 15 bytes of TASK_COMM_LEN: such a name, cut inside the prefix
	 * or right after it, is the NIC's with its id unknown. */
	if (len == 15 && len <= (size_t)n)
		return strncmp(comm, prefix, len) ? -ENOENT : 0;
	if (len <= (size_t)n || strncmp(comm, prefix, (size_t)n))
		return -ENOENT;
	const char *d = comm + n;
	for (const char *c = d; *c; c++)
		if (!isdigit((unsigned char)*c))
			return -ENOENT;
	errno = 0;
	long v = strtol(d, NULL, 10);
	if (errno || v > UINT32_MAX)
		return -ENOENT;
	*id = v;
	return 0;
}

int nt_task_read(const nt_ctx *ctx, int pid, nt_task *out)
{
	char *text = NULL;
	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->last_cpu = -1;
	int r = nt_read_all(ctx, &text, "/proc/%d/status", pid);
	if (r < 0)
		return r;
	out->has_allowed = nt_task_parse_allowed(text, &out->allowed) == 0;
	free(text);
	text = NULL;
	r = nt_read_all(ctx, &text, "/proc/%d/stat", pid);
	if (r >= 0) {
		(void)nt_task_parse_last_cpu(text, &out->last_cpu);
		uint64_t ticks;
		if (nt_task_parse_cpu_ticks(text, &ticks) == 0) {
			long hz = sysconf(_SC_CLK_TCK);
			out->stat_run_ns = ticks * (uint64_t)(hz > 0 ? 1000000000L / hz : 10000000L);
			out->has_stat_run = true;
		}
		free(text);
	}
	return 0;
}

int nt_task_read_run(const nt_ctx *ctx, int pid, nt_task *out)
{
	char buf[128];
	int r = nt_task_read(ctx, pid, out);
	if (r < 0)
		return r;
	/* schedstat counts in nanoseconds what stat counts in ticks (utime and
	 * stime of a kernel thread grow by whole ticks, when the timer tick
	 * finds it running): the first where the kernel has it
	 * (CONFIG_SCHED_INFO). */
	if (nt_read_str(ctx, buf, sizeof(buf), "/proc/%d/schedstat", pid) >= 0 &&
	    nt_task_parse_schedstat(buf, &out->run_ns) == 0) {
		out->has_run = true;
		out->run_source = "schedstat";
	} else if (out->has_stat_run) {
		out->run_ns = out->stat_run_ns;
		out->has_run = true;
		out->run_source = "stat";
	}
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	const nt_napi_thread *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

int nt_napi_threads_find(const nt_ctx *ctx, const char *ifname, nt_napi_thread *out, int max)
{
	char path[PATH_MAX], comm[64];
	struct dirent *de;
	int n = 0;
	int r = nt_path(ctx, path, sizeof(path), "/proc");
	if (r < 0)
		return r;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		long id;
		if (*end || pid <= 0 || pid > 0x7fffffff)
			continue;
		/* A kernel thread's comm is short; anything that cannot be
		 * read (a task gone meanwhile) is not one of ours. */
		if (nt_read_str(ctx, comm, sizeof(comm), "/proc/%ld/comm", pid) < 0)
			continue;
		if (nt_task_napi_id(comm, ifname, &id) == 0)
			out[n++] = (nt_napi_thread){ .pid = (int)pid, .napi_id = id };
	}
	closedir(d);
	qsort(out, (size_t)n, sizeof(*out), by_pid);
	return n;
}

int nt_task_set_allowed(const nt_ctx *ctx, int pid, const nt_cpuset *set)
{
	if (pid <= 0)
		return -ESRCH;
	if (!ctx->live)
		return nt_fixture_task_set_allowed(ctx, pid, set);
	/* A set as large as ours: glibc's cpu_set_t stops at 1024 CPUs. */
	cpu_set_t *cs = CPU_ALLOC(NT_MAX_CPUS);
	size_t size = CPU_ALLOC_SIZE(NT_MAX_CPUS);
	if (!cs)
		return -ENOMEM;
	CPU_ZERO_S(size, cs);
	for (int c = nt_cpuset_next(set, 0); c >= 0; c = nt_cpuset_next(set, c + 1))
		CPU_SET_S((size_t)c, size, cs);
	int r = sched_setaffinity(pid, size, cs) < 0 ? -errno : 0;
	CPU_FREE(cs);
	return r;
}
