/* SPDX-License-Identifier: Apache-2.0 */
/* This machine's IRQ affinity as the live tests read and restore it,
 * straight from /proc (not through the agent they check). */
#ifndef NT_TEST_LIVE_IRQ_H
#define NT_TEST_LIVE_IRQ_H

#include <stdio.h>
#include <string.h>

/* smp_affinity_list of IRQ into BUF without the newline. Returns 0 or -1. */
static inline int read_affinity(int irq, char *buf, size_t n)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/irq/%d/smp_affinity_list", irq);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)n, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return 0;
}

/* Write cpulist V to IRQ's smp_affinity_list. Returns 0 or -1 (the
 * kernel's refusal shows at close). */
static inline int write_affinity(int irq, const char *v)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/irq/%d/smp_affinity_list", irq);
	FILE *f = fopen(p, "w");
	if (!f)
		return -1;
	int r = fputs(v, f) < 0 ? -1 : 0;
	return fclose(f) == 0 ? r : -1;
}

#endif
