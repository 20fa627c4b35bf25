/* SPDX-License-Identifier: Apache-2.0 */
/* The order of bench-run --compare's rounds: baseline (A) and candidate
 * (B) in blocks of two rounds, one of each arm; consecutive blocks mirror
 * each other, AB BA or BA AB (ABBA), the way of each couple drawn from a
 * seed, and an odd last block's order too. A drift that is linear in time
 * adds +d to one block's candidate/baseline difference and -d to its
 * mirror's, so it cancels in every four rounds, and in the arms' sums;
 * A B A B ... would put the candidate after the baseline every time. The
 * seed is printed, and --seed repeats the order exactly. Pure: the same
 * seed gives the same order on every machine (splitmix64, not rand()). */
#ifndef NT_CLI_BENCH_DESIGN_H
#define NT_CLI_BENCH_DESIGN_H

#include <stddef.h>
#include <stdint.h>

/* The order of 2 x N rounds (N blocks) from SEED: ARM[i] is 0 (baseline)
 * or 1 (candidate) for round i, BLOCK[i] its block, 0 to N-1; each block's
 * two rounds are next to each other. ARM and BLOCK hold 2 x N entries. */
void nt_bench_design(size_t n, uint64_t seed, unsigned char *arm, size_t *block);

/* The next number of the splitmix64 sequence at *STATE. */
uint64_t nt_bench_splitmix64(uint64_t *state);

/* "12345" into *OUT: a decimal number from 0 to 2^64 - 1. Returns 0 or
 * -EINVAL. */
int nt_bench_parse_seed(const char *s, uint64_t *out);

#endif
