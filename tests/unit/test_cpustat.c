/* SPDX-License-Identifier: Apache-2.0 */
/* host/cpustat.c: /proc/stat's cpuN rows. */
#include "host/cpustat.h"
#include "base/errors.h"
#include "harness.h"

#include <stdlib.h>

static void test_rows(void)
{
	/* As a 6.x kernel writes it: the total row, two CPUs with ten
	 * fields (guest and guest_nice last), then the other rows. */
	const char *text = "cpu  300 10 200 9000 5 1 7 3 0 0\n"
			   "cpu0 100 4 120 4500 2 1 5 2 9 1\n"
			   "cpu2 200 6 80 4500 3 0 2 1 0 0\n"
			   "intr 12345 0 0\n"
			   "ctxt 999\n"
			   "cpu_not_a_row 1 2 3\n";
	nt_cpu_time *t = NULL;
	int n = 0;
	CHECK_INT(nt_cpustat_parse(text, &t, &n), 0);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_INT(t[0].cpu, 0);
		CHECK(t[0].user == 100 && t[0].nice == 4 && t[0].system == 120 && t[0].idle == 4500 &&
		      t[0].iowait == 2 && t[0].irq == 1 && t[0].softirq == 5 && t[0].steal == 2);
		CHECK_INT(t[1].cpu, 2);
		CHECK_INT((int)nt_cpu_time_busy(&t[0]), 100 + 4 + 120 + 1 + 5);
		CHECK_INT((int)nt_cpu_time_busy(&t[1]), 200 + 6 + 80 + 0 + 2);
	}
	free(t);
}

static void test_old_kernel(void)
{
	/* Before 2.6.11 there was no steal, before 2.6 only four fields:
	 * what is not written reads 0. */
	nt_cpu_time *t = NULL;
	int n = 0;
	CHECK_INT(nt_cpustat_parse("cpu0 1 2 3 4\n", &t, &n), 0);
	CHECK(n == 1 && t[0].idle == 4 && t[0].iowait == 0 && t[0].steal == 0);
	free(t);
}

static void test_bad(void)
{
	static const char *const bad[] = {
		"cpu0 1 2 3\n", /* three fields */
		"cpu0 1 2 x 4\n", /* not a number */
		"cpu0 1 2 3 4\ncpu0 1 2 3 4\n", /* twice */
		"cpu4096 1 2 3 4\n", /* past NT_MAX_CPUS */
		"cpu-1 1 2 3 4\n",
		"cpu 1 2 3 4\nintr 1\n", /* no cpuN row at all */
		"",
		"cpu0 1 2 3 99999999999999999999999\n", /* past 64 bits */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nt_cpu_time *t = (nt_cpu_time *)1;
		int n = 7;
		CHECK_MSG(nt_cpustat_parse(bad[i], &t, &n) == NT_EPARSE, "accepted: %s", bad[i]);
		CHECK(t == NULL && n == 0);
	}
}

int main(void)
{
	test_rows();
	test_old_kernel();
	test_bad();
	TEST_MAIN_END();
}
