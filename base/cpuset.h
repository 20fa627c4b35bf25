/* SPDX-License-Identifier: Apache-2.0 */
/* base/: the plain value types every layer uses, below kernel/ (which
 * reads CPU lists from the system into them). Nothing here includes
 * another folder of the project. */
/* CPU sets and their two kernel spellings, as pure functions.
 *
 * cpulist: "0-13,28-41" (canonical: ascending, ranges merged, "" for empty).
 * mask:    hex in comma-separated 32-bit groups, most significant group
 *          first, rightmost bit CPU 0: "00000000,000000f0" is CPUs 4-7 and
 *          "000300,00000000" is CPUs 40,41
 *          (docs/field-reports.md#smp-affinity-mask).
 *
 * A set is a fixed bitmap of NT_MAX_CPUS bits, large enough for every
 * machine Debian's kernel (NR_CPUS=8192) boots with a realistic topology
 * while keeping a topology of thousands of IRQs within a few megabytes. */
#ifndef NT_CPUSET_H
#define NT_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NT_MAX_CPUS 4096
#define NT_CPUSET_WORDS (NT_MAX_CPUS / 64)

typedef struct nt_cpuset {
	uint64_t w[NT_CPUSET_WORDS];
} nt_cpuset;

void nt_cpuset_zero(nt_cpuset *s);
void nt_cpuset_set(nt_cpuset *s, int cpu);
void nt_cpuset_clear(nt_cpuset *s, int cpu);
bool nt_cpuset_isset(const nt_cpuset *s, int cpu);
int nt_cpuset_count(const nt_cpuset *s);
bool nt_cpuset_empty(const nt_cpuset *s);
bool nt_cpuset_equal(const nt_cpuset *a, const nt_cpuset *b);
/* true when every CPU of SUB is in SUPER */
bool nt_cpuset_subset(const nt_cpuset *sub, const nt_cpuset *super);
bool nt_cpuset_intersects(const nt_cpuset *a, const nt_cpuset *b);
void nt_cpuset_and(nt_cpuset *dst, const nt_cpuset *a, const nt_cpuset *b);
void nt_cpuset_or(nt_cpuset *dst, const nt_cpuset *a, const nt_cpuset *b);
void nt_cpuset_andnot(nt_cpuset *dst, const nt_cpuset *a, const nt_cpuset *b);
/* Lowest CPU >= FROM in the set, or -1. */
int nt_cpuset_next(const nt_cpuset *s, int from);
/* Highest CPU in the set, or -1. */
int nt_cpuset_last(const nt_cpuset *s);

/* Parse "0-3,8,10-11" (spaces around items tolerated, "" is empty).
 * Returns 0, NT_EPARSE on bad syntax or a descending range, -ERANGE for a
 * CPU >= NT_MAX_CPUS. */
int nt_cpulist_parse(const char *s, nt_cpuset *out);
/* Whether S is a cpulist as a person or the kernel writes it: numbers and
 * ranges joined by ',', no spaces, no leading zeros ("" is the empty list).
 * nt_cpulist_parse is lenient (kernel files end in a newline); requests
 * are held to this. */
bool nt_cpulist_strict(const char *s);
/* Canonical cpulist into BUF. Returns the length, or -ENOSPC. */
int nt_cpulist_format(const nt_cpuset *s, char *buf, size_t size);

/* Parse a comma-grouped hex mask. Groups may be shorter than 8 digits
 * ("f0", "300,00000000"). Returns 0, NT_EPARSE or -ERANGE. */
int nt_cpumask_parse(const char *s, nt_cpuset *out);
/* Format as the kernel does for a machine with NBITS possible CPUs:
 * ceil(NBITS/32) groups, the leading one only as wide as its bits
 * ("00000000,000000f0" for 64, "000300,00000000" for 56, "3" for 2).
 * NBITS <= 0 means just enough bits for the highest CPU. Returns the
 * length or -ENOSPC. */
int nt_cpumask_format(const nt_cpuset *s, int nbits, char *buf, size_t size);

#endif
