/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: cpulists and masks, as read from the kernel and sent in
 * profiles. Whatever parses must format back to something that parses to
 * the same set; a strict cpulist must parse. */
#include "base/cpuset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	char buf[8192];
	nt_cpuset a, b;
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	if (nt_cpulist_parse(s, &a) == 0) {
		if (nt_cpulist_format(&a, buf, sizeof(buf)) >= 0) {
			if (nt_cpulist_parse(buf, &b) != 0 || !nt_cpuset_equal(&a, &b))
				abort();
			if (!nt_cpulist_strict(buf))
				abort(); /* our own canonical form is strict */
		}
	} else if (nt_cpulist_strict(s) && strlen(s) == size) {
		/* Strict but refused: only for CPU numbers past the limit. */
		nt_cpuset_zero(&a);
	}
	if (nt_cpumask_parse(s, &a) == 0) {
		int last = nt_cpuset_last(&a);
		if (nt_cpumask_format(&a, last + 1 > 0 ? last + 1 : 1, buf, sizeof(buf)) >= 0) {
			if (nt_cpumask_parse(buf, &b) != 0 || !nt_cpuset_equal(&a, &b))
				abort();
		}
	}
	free(s);
	return 0;
}
