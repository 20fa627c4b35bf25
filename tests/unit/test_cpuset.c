/* SPDX-License-Identifier: Apache-2.0 */
/* cpulist and hex-mask parsing/formatting, including the field reports'
 * masks (docs/field-reports.md#smp-affinity-mask) and
 * hosts with 256+ CPUs. */
#include "base/cpuset.h"
#include "kernel/ctx.h"
#include "harness.h"

#include <errno.h>

static const char *list(const char *in)
{
	static char buf[4096];
	nt_cpuset s;
	if (nt_cpulist_parse(in, &s) < 0)
		return "ERR";
	nt_cpulist_format(&s, buf, sizeof(buf));
	return buf;
}

static const char *mask_to_list(const char *mask)
{
	static char buf[4096];
	nt_cpuset s;
	int r = nt_cpumask_parse(mask, &s);
	if (r < 0)
		return "ERR";
	nt_cpulist_format(&s, buf, sizeof(buf));
	return buf;
}

static const char *list_to_mask(const char *l, int nbits)
{
	static char buf[4096];
	nt_cpuset s;
	if (nt_cpulist_parse(l, &s) < 0)
		return "ERR";
	if (nt_cpumask_format(&s, nbits, buf, sizeof(buf)) < 0)
		return "ERR";
	return buf;
}

int main(void)
{
	nt_cpuset s, t;

	CHECK_STR(list("0-3,8,10-11"), "0-3,8,10-11");
	CHECK_STR(list("3,2,1,0"), "0-3");
	CHECK_STR(list(" 0-13,28-41\n"), "0-13,28-41");
	CHECK_STR(list(""), "");
	CHECK_STR(list("5"), "5");
	CHECK_STR(list("0-1,1-2"), "0-2");
	CHECK_STR(list("4-2"), "ERR");
	CHECK_STR(list("a"), "ERR");
	CHECK_STR(list("1,,2"), "ERR");
	CHECK_STR(list("1-"), "ERR");
	CHECK_STR(list("0-4095"), "0-4095");
	CHECK_INT(nt_cpulist_parse("4096", &s), -ERANGE);
	CHECK_INT(nt_cpulist_parse("99999999999999", &s), -ERANGE);

	/* The x460's masks: rightmost bit CPU 0, 32-bit groups. */
	CHECK_STR(mask_to_list("00000000,000000f0"), "4-7");
	CHECK_STR(mask_to_list("00000000,0000f000"), "12-15");
	CHECK_STR(mask_to_list("000000f0,00000000"), "36-39");
	CHECK_STR(mask_to_list("f0000000,00000000"), "60-63");
	CHECK_STR(mask_to_list("f0"), "4-7");
	/* The Ceph node's: CPUs 40,41 in a short leading group. */
	CHECK_STR(mask_to_list("000300,00000000"), "40-41");
	CHECK_STR(mask_to_list("00000300,00000000"), "40-41");
	CHECK_STR(mask_to_list("FF"), "0-7");
	CHECK_STR(mask_to_list("0"), "");
	CHECK_STR(mask_to_list("xyz"), "ERR");
	CHECK_STR(mask_to_list(",ff"), "ERR");
	CHECK_STR(mask_to_list("ff,"), "ERR");
	CHECK_STR(mask_to_list("123456789"), "ERR"); /* a group wider than 32 bits */
	CHECK_STR(mask_to_list(""), "ERR");

	CHECK_STR(list_to_mask("4-7", 64), "00000000,000000f0");
	CHECK_STR(list_to_mask("40-41", 56), "000300,00000000");
	CHECK_STR(list_to_mask("0", 2), "1");
	CHECK_STR(list_to_mask("", 2), "0");
	CHECK_STR(list_to_mask("255", 0), "80000000,00000000,00000000,00000000,00000000,00000000,00000000,00000000");
	/* 256+ CPUs both ways. */
	CHECK_STR(mask_to_list(list_to_mask("0,63,64,255,300-301", 512)), "0,63-64,255,300-301");
	CHECK_STR(list_to_mask("0-3", 112), "0000,00000000,00000000,0000000f");

	/* set algebra */
	nt_cpulist_parse("0-31,64-95", &s);
	nt_cpulist_parse("16-47", &t);
	CHECK_INT(nt_cpuset_count(&s), 64);
	CHECK(nt_cpuset_intersects(&s, &t));
	nt_cpuset u;
	nt_cpuset_and(&u, &s, &t);
	char buf[256];
	nt_cpulist_format(&u, buf, sizeof(buf));
	CHECK_STR(buf, "16-31");
	nt_cpuset_andnot(&u, &s, &t);
	nt_cpulist_format(&u, buf, sizeof(buf));
	CHECK_STR(buf, "0-15,64-95");
	CHECK_INT(nt_cpuset_next(&s, 32), 64);
	CHECK_INT(nt_cpuset_next(&s, 96), -1);
	CHECK_INT(nt_cpuset_last(&s), 95);
	CHECK(!nt_cpuset_subset(&t, &s));
	nt_cpulist_parse("70-71", &t);
	CHECK(nt_cpuset_subset(&t, &s));
	/* A buffer too small is an error, not a truncated list. */
	nt_cpulist_parse("0,2,4,6,8,10", &s);
	CHECK_INT(nt_cpulist_format(&s, buf, 5), -ENOSPC);
	TEST_MAIN_END();
}
