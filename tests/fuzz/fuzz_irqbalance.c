/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: irqbalance's "setup" reply (its ban list). */
#include "kernel/irqbalance_client.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	char list[4096];
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (nt_irqbalance_parse_banned(s, list, sizeof(list)) >= 0 && !memchr(list, 0, sizeof(list)))
		abort();
	free(s);
	return 0;
}
