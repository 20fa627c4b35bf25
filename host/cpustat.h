/* SPDX-License-Identifier: Apache-2.0 */
/* The CPU time of each CPU from /proc/stat's "cpuN" rows, for the cost of a
 * benchmark round (nettune bench-run): how much of the host's CPU it burned,
 * and in which class (user, system, hard and soft interrupts). Pure. */
#ifndef NT_HOST_CPUSTAT_H
#define NT_HOST_CPUSTAT_H

#include <stdint.h>

/* One CPU's time since boot in USER_HZ ticks (sysconf(_SC_CLK_TCK)), as
 * the kernel's show_stat() writes it: user nice system idle iowait irq
 * softirq steal (guest and guest_nice are inside user and nice already). */
typedef struct nt_cpu_time {
	int cpu;
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
} nt_cpu_time;

/* The "cpuN" rows of TEXT into *OUT (malloc'd, *N rows, in the text's
 * order); the "cpu" row of all CPUs and every other row are skipped. A row
 * needs the first four fields (user nice system idle); the later ones read
 * 0 where an old kernel does not write them. Returns 0, NT_EPARSE (a cpuN
 * row that is not numbers, a CPU number out of range or twice, no cpuN
 * row) or -ENOMEM. */
int nt_cpustat_parse(const char *text, nt_cpu_time **out, int *n);

/* The busy ticks of T: everything but idle, iowait and steal (steal is
 * time the hypervisor gave another guest, burned by nobody here). */
static inline uint64_t nt_cpu_time_busy(const nt_cpu_time *t)
{
	return t->user + t->nice + t->system + t->irq + t->softirq;
}

#endif
