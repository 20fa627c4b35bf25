/* SPDX-License-Identifier: Apache-2.0 */
/* cpulist and hex-mask parsing/formatting, including the field reports'
 * masks (docs/field-reports.md#smp-affinity-mask) and
 * hosts with 256+ CPUs. */
#include "base/cpuset.h"
#include "kernel/ctx.h"
#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The formats as snprintf writes them, the way the formatters did before
 * they wrote digits by hand: what each must still match byte for byte. */
static void ref_list(const nt_cpuset *s, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int c = nt_cpuset_next(s, 0); c >= 0;) {
		int e = c;
		while (e + 1 < NT_MAX_CPUS && nt_cpuset_isset(s, e + 1))
			e++;
		len += (size_t)(e == c ? snprintf(buf + len, size - len, "%s%d", len ? "," : "", c)
				       : snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "", c, e));
		c = nt_cpuset_next(s, e + 1);
	}
}

static void ref_mask(const nt_cpuset *s, int nbits, char *buf, size_t size)
{
	int groups = (nbits + 31) / 32, lead = nbits % 32 ? nbits % 32 : 32;
	size_t len = 0;
	for (int g = groups - 1; g >= 0; g--) {
		unsigned v = (unsigned)(s->w[g / 2] >> ((g % 2) * 32)) & 0xffffffffu;
		int width = g == groups - 1 ? (lead + 3) / 4 : 8;
		len += (size_t)snprintf(buf + len, size - len, "%0*x%s", width, v, g ? "," : "");
	}
}

/* Random sets of up to 4096 CPUs, sparse and dense, in both formats. */
static void formats_match_reference(void)
{
	static char got[20000], want[20000];
	srand(31);
	for (int round = 0; round < 2000; round++) {
		nt_cpuset s;
		nt_cpuset_zero(&s);
		int top = 1 + rand() % (round % 3 ? 300 : NT_MAX_CPUS);
		int density = 1 + rand() % 8;
		for (int c = 0; c < top; c++)
			if (rand() % density == 0)
				nt_cpuset_set(&s, c);
		int r = nt_cpulist_format(&s, got, sizeof(got));
		ref_list(&s, want, sizeof(want));
		CHECK_MSG(r == (int)strlen(want) && !strcmp(got, want), "round %d: list '%s', want '%s'",
			  round, got, want);
		int last = nt_cpuset_last(&s), nbits = top > last + 1 ? top : last + 1;
		r = nt_cpumask_format(&s, top, got, sizeof(got));
		ref_mask(&s, nbits, want, sizeof(want));
		CHECK_MSG(r == (int)strlen(want) && !strcmp(got, want), "round %d: mask '%s', want '%s'",
			  round, got, want);
	}
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
	CHECK_STR(buf, "");
	/* Exactly the room it needs, with its terminator, is enough. */
	CHECK_INT(nt_cpulist_format(&s, buf, 13), 12);
	CHECK_STR(buf, "0,2,4,6,8,10");
	CHECK_INT(nt_cpulist_format(&s, buf, 12), -ENOSPC);
	formats_match_reference();
	TEST_MAIN_END();
}
