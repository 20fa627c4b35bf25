/* SPDX-License-Identifier: Apache-2.0 */
/* nt_desire_put: a later value for a (kind, target) replaces the earlier
 * one in place (keeping its position), another kind or target is a new
 * entry, and the index finds entries after it has grown. */
#include "harness.h"
#include "settings/section.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nt_value cpus(int c)
{
	nt_value v;
	memset(&v, 0, sizeof(v));
	nt_cpuset_set(&v.cpus, c);
	return v;
}

int main(void)
{
	nt_section_plan p;
	memset(&p, 0, sizeof(p));
	const nt_setting_kind *irq = &nt_setting_irq_affinity, *sys = &nt_setting_sysctl;
	char target[16], path[32];

	/* 5000 IRQs: the index grows several times on the way. */
	for (int i = 0; i < 5000; i++) {
		nt_value v = cpus(i % 64);
		snprintf(target, sizeof(target), "%d", i);
		snprintf(path, sizeof(path), "$.irq_affinity[%d]", i);
		CHECK_INT(nt_desire_put(&p, irq, target, "eth0", &v, path), 0);
	}
	CHECK_INT(p.n, 5000);
	CHECK(p.index_cap >= 2 * p.n);
	/* The same target of another kind is another entry. */
	nt_value text;
	memset(&text, 0, sizeof(text));
	snprintf(text.text, sizeof(text.text), "1");
	CHECK_INT(nt_desire_put(&p, sys, "17", NULL, &text, "$.sysctl.17"), 0);
	CHECK_INT(p.n, 5001);
	CHECK(p.v[5000].kind == sys);
	/* A later value replaces the earlier one where it was. */
	nt_value v = cpus(7);
	CHECK_INT(nt_desire_put(&p, irq, "17", "eth1", &v, "$.other_irqs"), 0);
	CHECK_INT(p.n, 5001);
	CHECK(p.v[17].kind == irq);
	CHECK_STR(p.v[17].target, "17");
	CHECK_STR(p.v[17].interface, "eth1");
	CHECK_STR(p.v[17].path, "$.other_irqs");
	CHECK(nt_cpuset_equal(&p.v[17].value.cpus, &v.cpus));
	CHECK_STR(p.v[5000].value.text, "1");
	/* Every entry is found again, none duplicated. */
	int found = 0;
	for (int i = 0; i < 5000; i++) {
		nt_value w = cpus(3);
		snprintf(target, sizeof(target), "%d", i);
		CHECK_INT(nt_desire_put(&p, irq, target, "eth2", &w, "$"), 0);
		found += strcmp(p.v[i].target, target) == 0 && strcmp(p.v[i].interface, "eth2") == 0;
	}
	CHECK_INT(found, 5000);
	CHECK_INT(p.n, 5001);
	nt_desire_index_free(&p);
	CHECK(p.index == NULL && p.index_cap == 0);
	free(p.v);
	TEST_MAIN_END();
}
