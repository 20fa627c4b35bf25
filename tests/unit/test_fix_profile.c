/* SPDX-License-Identifier: Apache-2.0 */
/* diagnose's fixes merged into one profile that validates on the host it
 * came from, and whose plan fixes what was found. */
#include "base/cpuset.h"
#include "kernel/ctx.h"
#include "diagnose/diagnose.h"
#include "engine/plan.h"
#include "engine/profile.h"
#include "host/topology.h"
#include "harness.h"

static void check_host(const char *root, int min_entries)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		return;
	nt_diag_options o = { .rtt_ms = 10 };
	json_t *d = nt_diagnose(t, &o);
	json_t *p = nt_diagnose_fix_profile(d, "diagnose-fixes");
	CHECK(p != NULL);
	int entries = (int)(json_array_size(json_object_get(p, "irq_affinity")) +
			    json_array_size(json_object_get(p, "rings")) + json_array_size(json_object_get(p, "bonds")) +
			    json_object_size(json_object_get(p, "sysctl")));
	CHECK_MSG(entries >= min_entries, "%s: %d entries", root, entries);
	/* The irqbalance fix needs a daemon to talk to; fixtures have none. */
	json_object_del(p, "irqbalance");
	json_t *errors = json_array();
	int r = nt_profile_validate(t, p, errors);
	char *e = json_dumps(errors, 0);
	CHECK_MSG(r == 0, "%s: %s", root, e);
	free(e);
	/* No interface twice in one list. */
	size_t i, k;
	json_t *a, *b;
	json_array_foreach(json_object_get(p, "irq_affinity"), i, a)
		json_array_foreach(json_object_get(p, "irq_affinity"), k, b)
			if (i < k)
				CHECK(!json_equal(json_object_get(a, "interface"), json_object_get(b, "interface")));
	nt_plan plan;
	memset(&plan, 0, sizeof(plan));
	json_t *perr = json_array();
	if (nt_plan_build(&ctx, NULL, t, p, &plan, perr) == 0) {
		CHECK(plan.nsteps > 0);
		/* No NIC IRQ goes to CPU 0 (docs/field-reports.md#cpu0-kept-free):
		 * on both hosts CPU 0 is one of many on its node. */
		int moved = 0;
		for (int s = 0; s < plan.nsteps; s++) {
			const nt_step *st = &plan.steps[s];
			if (strcmp(st->kind->name, "irq_affinity") || !st->interface[0])
				continue;
			json_t *doc = nt_step_to_json(st);
			nt_cpuset after;
			const char *to = json_string_value(json_object_get(doc, "after"));
			CHECK_MSG(to && nt_cpulist_parse(to, &after) == 0, "%s: step %s after", root, st->target);
			if (to && nt_cpulist_parse(to, &after) == 0)
				CHECK_MSG(!nt_cpuset_isset(&after, 0), "%s: %s %s -> %s includes CPU 0", root,
					  st->interface, st->target, to);
			moved++;
			json_decref(doc);
		}
		CHECK_MSG(moved > 0, "%s: no NIC IRQ step", root);
		nt_plan_free(&plan);
	} else {
		CHECK_MSG(0, "plan failed on %s", root);
	}
	json_decref(perr);
	json_decref(errors);
	json_decref(p);
	json_decref(d);
	nt_topology_free(t);
}

int main(void)
{
	check_host(NT_FIXTURES "/epyc7713-2node-bond", 8); /* 4 NICs' IRQs, 4 rings, bond0, sysctls */
	check_host(NT_FIXTURES "/x460-4node-8nic", 6);
	check_host(NT_FIXTURES "/ceph-2node-ib", 1);
	/* Nothing to fix: an empty profile, still valid. */
	json_t *empty = json_pack("{s:[]}", "findings");
	json_t *p = nt_diagnose_fix_profile(empty, "none");
	CHECK(p && json_object_get(p, "irq_affinity") == NULL && json_object_get(p, "sysctl") == NULL);
	json_decref(p);
	json_decref(empty);
	TEST_MAIN_END();
}
