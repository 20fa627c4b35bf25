/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: /proc/interrupts and /proc/softirqs text. */
#include "host/interrupts.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	nt_interrupts in;
	if (nt_interrupts_parse(s, &in) == 0) {
		for (int i = 0; i < in.nlines; i++)
			for (int c = 0; c < in.ncols; c++)
				(void)in.lines[i].counts[c];
		nt_interrupts_free(&in);
	}
	int *cpus = NULL, n = 0;
	uint64_t *rx = NULL, *tx = NULL;
	if (nt_softirqs_parse(s, &cpus, &rx, &tx, &n) == 0) {
		for (int c = 0; c < n; c++)
			(void)(rx[c] + tx[c] + (uint64_t)cpus[c]);
	}
	free(cpus);
	free(rx);
	free(tx);
	free(s);
	return 0;
}
