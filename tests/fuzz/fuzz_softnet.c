/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: /proc/net/softnet_stat (host/delivery.c) in every
 * layout the parser knows (no CPU column: rows are the online CPUs; 13
 * fields or more: the 13th names the CPU). The first byte picks the online
 * CPUs handed over (how many, and how far apart). What it accepts must
 * name CPUs a CPU set can hold. */
#include "base/cpuset.h"
#include "base/errors.h"
#include "host/delivery.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int online[64];
	nt_softnet s;

	if (size < 1)
		return 0;
	/* Up to 64 online CPUs, 1, 2 or 3 apart, or 1000 (past NT_MAX_CPUS,
	 * as /proc/interrupts' columns may name). */
	int nonline = data[0] % 65, step = data[0] / 65 == 3 ? 1000 : 1 + data[0] / 65;
	for (int i = 0; i < nonline; i++)
		online[i] = i * step;
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	int r = nt_softnet_parse(text, nonline ? online : NULL, nonline, &s);
	if (r != 0 && r != NT_EPARSE && r != -ENOMEM)
		abort();
	if (r == 0) {
		nt_cpuset set;
		nt_cpuset_zero(&set);
		for (int i = 0; i < s.n; i++) {
			if (s.rows[i].cpu < 0 || s.rows[i].cpu >= NT_MAX_CPUS)
				abort(); /* a CPU no set can hold */
			nt_cpuset_set(&set, s.rows[i].cpu);
			(void)nt_softnet_delta(s.rows[i].processed, s.rows[i].received_rps);
		}
	}
	nt_softnet_free(&s);
	free(text);
	return 0;
}
