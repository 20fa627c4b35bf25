/* SPDX-License-Identifier: Apache-2.0 */
/* RSS "placed" with a node (settings/rss_placed.c), the pure parts: which
 * queues a node takes (IRQ CPUs within the node, clear of reserved CPUs,
 * a queue without a known IRQ never), and the IRQs as the plan says them. */
#include "settings/rss_placed.h"
#include "harness.h"

#include <string.h>

static void test_pick(void)
{
	nt_cpuset node0, node1, res, c[6], on, off;
	char text[64];
	nt_cpulist_parse("0-3", &node0);
	nt_cpulist_parse("4-7", &node1);
	nt_cpulist_parse("3", &res);
	nt_cpulist_parse("0", &c[0]);
	nt_cpulist_parse("1-2", &c[1]); /* two CPUs, both of node 0 */
	nt_cpulist_parse("3-4", &c[2]); /* across both nodes: neither */
	nt_cpulist_parse("4", &c[3]);
	nt_cpuset_zero(&c[4]); /* an IRQ with no CPUs known */
	nt_cpulist_parse("3", &c[5]); /* node 0, reserved */
	const nt_cpuset *cpus[7] = { &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], NULL };
	CHECK_INT(nt_rss_placed_pick(cpus, 7, &node0, &res, &on, &off), 2);
	nt_cpulist_format(&on, text, sizeof(text));
	CHECK_STR(text, "0-1");
	nt_cpulist_format(&off, text, sizeof(text));
	CHECK_STR(text, "2-6");
	/* Without reserved CPUs queue 5 is node 0's too. */
	CHECK_INT(nt_rss_placed_pick(cpus, 7, &node0, NULL, &on, &off), 3);
	nt_cpulist_format(&on, text, sizeof(text));
	CHECK_STR(text, "0-1,5");
	CHECK_INT(nt_rss_placed_pick(cpus, 7, &node1, &res, &on, &off), 1);
	nt_cpulist_format(&on, text, sizeof(text));
	CHECK_STR(text, "3");
	/* Only the first NQ queues are looked at. */
	CHECK_INT(nt_rss_placed_pick(cpus, 1, &node1, NULL, &on, &off), 0);
	CHECK(nt_cpuset_empty(&on) && nt_cpuset_count(&off) == 1);
}

static void test_irq_text(void)
{
	char out[32];
	const int up[] = { 141, 142, 143, 144 }, down[] = { 116, 115, 114 }, odd[] = { 141, 150, 152 },
		  two[] = { 141, 142 }, many[] = { 1000, 1002, 1004, 1006, 1008, 1010, 1012, 1014 };
	nt_rss_irq_list_format(up, 4, out, sizeof(out));
	CHECK_STR(out, "141..144");
	nt_rss_irq_list_format(down, 3, out, sizeof(out));
	CHECK_STR(out, "116..114");
	nt_rss_irq_list_format(odd, 3, out, sizeof(out));
	CHECK_STR(out, "141,150,152");
	nt_rss_irq_list_format(two, 2, out, sizeof(out));
	CHECK_STR(out, "141,142");
	nt_rss_irq_list_format(up, 1, out, sizeof(out));
	CHECK_STR(out, "141");
	nt_rss_irq_list_format(up, 0, out, sizeof(out));
	CHECK_STR(out, "");
	/* Too many for OUT: shortened, and still a string. */
	nt_rss_irq_list_format(many, 8, out, sizeof(out));
	CHECK_STR(out, "1000,1002,1004,1006,1008,...");
	CHECK(strlen(out) < sizeof(out));
}

int main(void)
{
	test_pick();
	test_irq_text();
	TEST_MAIN_END();
}
