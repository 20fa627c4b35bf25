/* SPDX-License-Identifier: Apache-2.0 */
/* Timing helpers shared by the benchmarks. */
#ifndef NT_BENCH_UTIL_H
#define NT_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts V in place and returns its median. */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_d);
	return v[n / 2];
}

#endif
