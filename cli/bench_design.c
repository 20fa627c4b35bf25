/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/bench_design.h"

#include <errno.h>
#include <stdlib.h>

uint64_t nt_bench_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void nt_bench_design(size_t n, uint64_t seed, unsigned char *arm, size_t *block)
{
	uint64_t st = seed;
	unsigned char first = 0;
	for (size_t b = 0; b < n; b++) {
		/* A couple's first block takes a coin; its second mirrors it. */
		if (b % 2 == 0)
			first = (unsigned char)(nt_bench_splitmix64(&st) >> 63);
		else
			first = (unsigned char)!first;
		arm[2 * b] = first;
		arm[2 * b + 1] = (unsigned char)!first;
		block[2 * b] = block[2 * b + 1] = b;
	}
}

int nt_bench_parse_seed(const char *s, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}
