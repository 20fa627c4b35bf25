/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel threads as /proc shows them: a task's allowed CPUs
 * (/proc/PID/status, Cpus_allowed_list) and the CPU it last ran on
 * (/proc/PID/stat, field 39), and the NAPI threads of a NIC found by their
 * name, "napi/IF-ID" (/proc/PID/comm), for kernels whose `netdev` family
 * does not name them. Every path goes through the context's root, so a
 * fixture tree with a /proc/PID of its own shows threads as well.
 *
 * The parsers are pure string functions with their own unit tests. */
#ifndef NT_TASK_H
#define NT_TASK_H

#include "kernel/ctx.h"
#include "base/cpuset.h"

#include <stdbool.h>
#include <stdint.h>

/* The Cpus_allowed_list of a /proc/PID/status text. Returns 0, -ENOENT
 * without the line, NT_EPARSE for a list that is not one. */
int nt_task_parse_allowed(const char *status, nt_cpuset *out);
/* Field 39 (processor) of a /proc/PID/stat line: counted after the last
 * ')', as the command name in parentheses may hold spaces and ')'.
 * Returns 0 or NT_EPARSE. */
int nt_task_parse_last_cpu(const char *stat, int *cpu);
/* Fields 14 and 15 (utime and stime, in clock ticks) of a /proc/PID/stat
 * line, summed into *TICKS. Returns 0 or NT_EPARSE. */
int nt_task_parse_cpu_ticks(const char *stat, uint64_t *ticks);
/* The first field of a /proc/PID/schedstat text: the nanoseconds the task
 * has run on a CPU. Returns 0 or NT_EPARSE. */
int nt_task_parse_schedstat(const char *text, uint64_t *run_ns);
/* The NAPI id in thread name COMM when it is "napi/IFNAME-ID": 0 and *ID,
 * -ENOENT for another thread. Before 5.17 /proc showed a kernel thread's
 * name cut at 15 bytes (TASK_COMM_LEN): a name of 15 bytes cut inside or
 * right after "napi/IFNAME-" matches with *ID -1. */
int nt_task_napi_id(const char *comm, const char *ifname, long *id);

typedef struct nt_task {
	int pid;
	bool has_allowed;
	nt_cpuset allowed;
	int last_cpu; /* -1 when unknown */
	/* utime + stime from /proc/PID/stat, in nanoseconds (whole ticks). */
	bool has_stat_run;
	uint64_t stat_run_ns;
	/* nt_task_read_run only: the time it ran, from /proc/PID/schedstat
	 * (RUN_SOURCE "schedstat"), else the stat's ("stat"). */
	bool has_run;
	uint64_t run_ns;
	const char *run_source;
} nt_task;

/* PID's allowed CPUs and last CPU. Returns 0, -ENOENT when the task is
 * gone (both unknown then), or -errno. */
int nt_task_read(const nt_ctx *ctx, int pid, nt_task *out);
/* nt_task_read, and the time PID has run (one more file, schedstat):
 * what the delivery check compares at a window's two ends. */
int nt_task_read_run(const nt_ctx *ctx, int pid, nt_task *out);

/* Allow PID on the CPUs of SET: sched_setaffinity on a live root (the
 * kernel keeps what it can of SET: its online CPUs, the task's cpuset);
 * on a fixture root its /proc/PID/status says SET. Read it back with
 * nt_task_read. Returns 0, -ESRCH when the task is gone, -EINVAL for a set
 * the kernel cannot use (no online CPU in it), or -errno. */
int nt_task_set_allowed(const nt_ctx *ctx, int pid, const nt_cpuset *set);

typedef struct nt_napi_thread {
	int pid;
	long napi_id; /* -1 when the name was cut */
} nt_napi_thread;

/* The threads named "napi/IFNAME-ID" under ROOT/proc, at most MAX into
 * OUT, in pid order. Returns how many, or -errno when /proc cannot be
 * listed. */
int nt_napi_threads_find(const nt_ctx *ctx, const char *ifname, nt_napi_thread *out, int max);

#endif
