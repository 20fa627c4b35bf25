/* SPDX-License-Identifier: Apache-2.0 */
/* The CLI's grouping of alike warnings (cli/warn_group.c), on the warnings
 * the agent gives the x460 and EPYC fixtures' "diagnose --fix-profile"
 * plans, and on the edges of its rule; and the views printing it (or, with
 * --verbose, every line). ui/warnings.js's groupWarnings is the same rule. */
#include "harness.h"
#include "cli/output.h"
#include "cli/txn_view.h"
#include "cli/warn_group.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_HAS(hay, needle) CHECK_MSG(strstr(hay, needle) != NULL, "no '%s' in:\n%s", needle, hay)

#define RPS " rps_cpus leave out CPU %s, where its IRQs are placed by this profile's irq_affinity steps (applied first)"
#define RESET ": changing rings or channels may reset the NIC and briefly drop its link"

static json_t *strings(const char *const *s)
{
	json_t *a = json_array();
	for (; *s; s++)
		json_array_append_new(a, json_string(*s));
	return a;
}

/* The groups of WARNINGS as one string, lines joined by '\n'. */
static char *grouped(const char *const *warnings, const char *nics_json)
{
	json_t *w = strings(warnings), *nics = nics_json ? json_loads(nics_json, 0, NULL) : NULL;
	json_t *g = nt_warn_group(w, nics);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	size_t i;
	json_t *s;
	json_array_foreach(g, i, s)
		fprintf(m, "%s%s", i ? "\n" : "", json_string_value(s));
	fclose(m);
	json_decref(g);
	json_decref(w);
	json_decref(nics);
	return buf;
}

#define GROUPS(expect, nics, ...) do { \
	const char *const _w[] = { __VA_ARGS__, NULL }; \
	char *_g = grouped(_w, nics); \
	CHECK_STR(_g, expect); \
	free(_g); \
} while (0)

/* The x460 fix profile's 17 warnings: 3 lines, nothing lost. */
static void test_x460(void)
{
	char rps[8][200], reset[8][100];
	const char *w[18];
	const char *cpus[8] = { "0", "1", "16", "17", "32", "33", "48", "49" };
	w[0] = "irqbalance \"ban\" left out: irqbalance is controlled only on the live host (--root /), not in a fixture tree";
	for (int i = 0; i < 8; i++) {
		snprintf(rps[i], sizeof(rps[i]), "eth%d:" RPS, i, cpus[i]);
		snprintf(reset[i], sizeof(reset[i]), "eth%d%s", i, RESET);
		w[1 + i] = rps[i];
		w[9 + i] = reset[i];
	}
	w[17] = NULL;
	char *g = grouped(w, NULL);
	CHECK_STR(g, "irqbalance \"ban\" left out: irqbalance is controlled only on the live host (--root /), not in a "
		     "fixture tree\n"
		     "eth0..eth7: rps_cpus leave out CPU [0 | 1 | 16 | 17 | 32 | 33 | 48 | 49], where its IRQs are "
		     "placed by this profile's irq_affinity steps (applied first)\n"
		     "eth0..eth7" RESET);
	free(g);
}

/* The EPYC's: its four NICs are bond0's ports; CPU lists with commas and
 * IRQ ranges are one value each, and a value they share is said once. */
static void test_epyc_bond(void)
{
	static const char nics[] = "{\"nics\":[{\"name\":\"bond0\",\"master\":null},{\"name\":\"enos0\",\"master\":\"bond0\"},"
				   "{\"name\":\"enos1\",\"master\":\"bond0\"},{\"name\":\"enos2\",\"master\":\"bond0\"},"
				   "{\"name\":\"enos3\",\"master\":\"bond0\"},{\"name\":\"lo\"}]}";
	GROUPS("every port of bond0 (enos0..enos3): rps_cpus leave out CPU [1-17 | 18-31,64-66 | 32-48 | 49-63,96-97], "
	       "where its IRQs are placed by this profile's irq_affinity steps (applied first)\n"
	       "every port of bond0 (enos0..enos3): xps_cpus of 16 TX queues follow the CPUs of IRQs [101..116 | 121..136 | "
	       "141..156 | 161..176] as this profile's irq_affinity steps place them (applied first)\n"
	       "every port of bond0 (enos0..enos3)" RESET,
	       nics,
	       "enos0: rps_cpus leave out CPU 1-17, where its IRQs are placed by this profile's irq_affinity steps (applied first)",
	       "enos1: rps_cpus leave out CPU 18-31,64-66, where its IRQs are placed by this profile's irq_affinity steps (applied first)",
	       "enos2: rps_cpus leave out CPU 32-48, where its IRQs are placed by this profile's irq_affinity steps (applied first)",
	       "enos3: rps_cpus leave out CPU 49-63,96-97, where its IRQs are placed by this profile's irq_affinity steps (applied first)",
	       "enos0: xps_cpus of 16 TX queues follow the CPUs of IRQs 101..116 as this profile's irq_affinity steps place them (applied first)",
	       "enos1: xps_cpus of 16 TX queues follow the CPUs of IRQs 121..136 as this profile's irq_affinity steps place them (applied first)",
	       "enos2: xps_cpus of 16 TX queues follow the CPUs of IRQs 141..156 as this profile's irq_affinity steps place them (applied first)",
	       "enos3: xps_cpus of 16 TX queues follow the CPUs of IRQs 161..176 as this profile's irq_affinity steps place them (applied first)",
	       "enos0" RESET, "enos1" RESET, "enos2" RESET, "enos3" RESET);
	/* Without the NICs (or with only some of the bond's ports) the names. */
	GROUPS("enos0..enos3" RESET, NULL, "enos0" RESET, "enos1" RESET, "enos2" RESET, "enos3" RESET);
	GROUPS("enos0, enos1, enos3" RESET, nics, "enos0" RESET, "enos1" RESET, "enos3" RESET);
}

static void test_edges(void)
{
	/* One line: as it was. Two: both names, no range. */
	GROUPS("eth0" RESET, NULL, "eth0" RESET);
	GROUPS("eth0, eth1" RESET "\nmtu: a new MTU can cut this host off", NULL, "eth0" RESET,
	       "mtu: a new MTU can cut this host off", "eth1" RESET);
	/* Queues as subjects, and their runs. */
	GROUPS("eth0 rx-0..rx-3: its NAPI has no IRQ to follow; thread left as it is", NULL,
	       "eth0 rx-0: its NAPI has no IRQ to follow; thread left as it is",
	       "eth0 rx-1: its NAPI has no IRQ to follow; thread left as it is",
	       "eth0 rx-2: its NAPI has no IRQ to follow; thread left as it is",
	       "eth0 rx-3: its NAPI has no IRQ to follow; thread left as it is");
	/* A queue inside the text is a value; one subject twice says its lines. */
	GROUPS("eth0 (2 lines): tx-[3 | 5] has no rx-[3 | 5] to pair with; left out", NULL,
	       "eth0: tx-3 has no rx-3 to pair with; left out", "eth0: tx-5 has no rx-5 to pair with; left out");
	/* Numbers inside words are not values: bond0 and bond1 differ. */
	GROUPS("eth0: a slave of bond bond0 takes the bond's MTU; left out\n"
	       "eth1: a slave of bond bond1 takes the bond's MTU; left out",
	       NULL, "eth0: a slave of bond bond0 takes the bond's MTU; left out",
	       "eth1: a slave of bond bond1 takes the bond's MTU; left out");
	/* Without a subject only identical lines group. */
	GROUPS("other_irqs: 3 kernel-managed IRQ(s) left as they are\nirqbalance is running (×2)\nirqbalance is stopped",
	       NULL, "other_irqs: 3 kernel-managed IRQ(s) left as they are", "irqbalance is running",
	       "irqbalance is stopped", "irqbalance is running");
	/* More than 8 values: the first 4 and how many. */
	GROUPS("eth0..eth9: ring 0 is [100 | 101 | 102 | 103 | … 10 in all]", NULL, "eth0: ring 0 is 100",
	       "eth1: ring 0 is 101", "eth2: ring 0 is 102", "eth3: ring 0 is 103", "eth4: ring 0 is 104",
	       "eth5: ring 0 is 105", "eth6: ring 0 is 106", "eth7: ring 0 is 107", "eth8: ring 0 is 108",
	       "eth9: ring 0 is 109");
	/* Nothing, and what is not a string. */
	json_t *w = json_pack("[i, s, n]", 3, "eth0" RESET);
	json_t *g = nt_warn_group(w, NULL);
	CHECK(g && json_array_size(g) == 1);
	json_decref(g);
	json_decref(w);
	w = json_array();
	g = nt_warn_group(w, NULL);
	CHECK(g && json_array_size(g) == 0);
	json_decref(g);
	json_decref(w);
}

/* The views: grouped with a count and how to see each; --verbose each. */
static void test_views(void)
{
	json_t *plan = json_pack("{s:[], s:[s,s,s]}", "steps", "warnings", "eth0" RESET, "eth1" RESET, "eth2" RESET);
	for (int verbose = 0; verbose < 2; verbose++) {
		char *buf = NULL;
		size_t len = 0;
		nt_out o = { open_memstream(&buf, &len), false };
		nt_view_plan(&o, plan, NULL, verbose);
		fclose(o.f);
		if (!verbose) {
			CHECK_HAS(buf, "warning: eth0..eth2" RESET "\n(3 warnings as 1 line, alike ones together");
			CHECK_HAS(buf, "--verbose lists each");
		} else {
			CHECK_HAS(buf, "warning: eth0" RESET "\nwarning: eth1" RESET "\nwarning: eth2" RESET "\n");
			CHECK(strstr(buf, "--verbose") == NULL);
		}
		free(buf);
	}
	json_decref(plan);
}

int main(void)
{
	test_x460();
	test_epyc_bond();
	test_edges();
	test_views();
	TEST_MAIN_END();
}
