/* SPDX-License-Identifier: Apache-2.0 */
/* cli/bench_design.c: the order of bench-run --compare's rounds. Every
 * block holds one round of each arm, side by side; consecutive blocks
 * mirror each other (ABBA or BAAB), so each arm's rounds sit at the same
 * mean position within every four rounds and a linear drift cancels; the
 * same seed gives the same order, and different seeds differ. */
#include "cli/bench_design.h"
#include "harness.h"

#include <errno.h>
#include <string.h>

static void test_balanced(void)
{
	unsigned char arm[2 * 41];
	size_t block[2 * 41];
	for (uint64_t seed = 0; seed < 200; seed++)
		for (size_t n = 1; n <= 41; n += 4) {
			nt_bench_design(n, seed, arm, block);
			size_t count[2] = { 0, 0 };
			double pos[2] = { 0, 0 };
			for (size_t i = 0; i < 2 * n; i++) {
				count[arm[i]]++;
				pos[arm[i]] += (double)i;
				CHECK_INT((long)block[i], (long)(i / 2));
			}
			CHECK_INT((long)count[0], (long)n);
			CHECK_INT((long)count[1], (long)n);
			for (size_t b = 0; b < n; b++)
				CHECK(arm[2 * b] != arm[2 * b + 1]);
			/* Mirrored couples: a linear drift's sum is equal for the
			 * arms over every whole couple. */
			for (size_t b = 0; b + 1 < n; b += 2)
				CHECK(arm[2 * b] == arm[2 * b + 3] && arm[2 * b + 1] == arm[2 * b + 2]);
			if (n % 2 == 0)
				CHECK(pos[0] == pos[1]);
		}
}

static void test_seeded(void)
{
	unsigned char a[40], b[40];
	size_t blk[40];
	nt_bench_design(20, 42, a, blk);
	nt_bench_design(20, 42, b, blk);
	CHECK(memcmp(a, b, sizeof(a)) == 0);
	/* The order of seed 42 on every machine (splitmix64's first outputs). */
	uint64_t st = 0;
	CHECK(nt_bench_splitmix64(&st) == 0xe220a8397b1dcdafull);
	/* Different seeds give different orders, and both couple ways occur. */
	int differ = 0, starts_b = 0;
	for (uint64_t seed = 1; seed <= 64; seed++) {
		nt_bench_design(20, seed, b, blk);
		differ += memcmp(a, b, sizeof(a)) != 0;
		starts_b += b[0];
	}
	CHECK_MSG(differ >= 60, "%d of 64 seeds differ from seed 42", differ);
	CHECK_MSG(starts_b > 16 && starts_b < 48, "%d of 64 start with the candidate", starts_b);
	uint64_t v;
	CHECK_INT(nt_bench_parse_seed("18446744073709551615", &v), 0);
	CHECK(v == UINT64_MAX);
	CHECK_INT(nt_bench_parse_seed("0", &v), 0);
	CHECK(v == 0);
	CHECK_INT(nt_bench_parse_seed("18446744073709551616", &v), -EINVAL);
	CHECK_INT(nt_bench_parse_seed("-1", &v), -EINVAL);
	CHECK_INT(nt_bench_parse_seed("12x", &v), -EINVAL);
	CHECK_INT(nt_bench_parse_seed("", &v), -EINVAL);
}

int main(void)
{
	test_balanced();
	test_seeded();
	TEST_MAIN_END();
}
