/* SPDX-License-Identifier: Apache-2.0 */
/* Channel counts in profiles (made with the NIC's rings, with a warning)
 * and bond options the kernel only changes on a bond that is down. */
#include "kernel/ctx.h"
#include "engine/plan.h"
#include "engine/profile.h"
#include "settings/setting.h"
#include "setting_util.h"
#include "host/topology.h"
#include "harness.h"
#include "test_json.h"

int main(void)
{
	char root[] = "/tmp/nt-chan-XXXXXX", cmd[512];
	nt_ctx ctx;
	nt_topology *t = NULL;

	CHECK(mkdtemp(root) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		TEST_MAIN_END();

	/* Validation: above the maximum, bad types, a bond's mode. */
	json_error_t je;
	json_t *bad = json_loads("{\"name\":\"x\",\"channels\":[{\"interface\":\"enos0\",\"combined\":64},"
				 "{\"interface\":\"enos1\",\"combined\":\"many\"},{\"interface\":\"enos2\"}],"
				 "\"bonds\":[{\"interface\":\"bond0\",\"mode\":\"balance-rr\"}]}",
				 0, &je);
	json_t *errors = json_array();
	nt_plan plan;
	CHECK_INT(nt_plan_build(&ctx, NULL, t, bad, &plan, errors), NT_EINVALID);
	CHECK(has_error(errors, "$.channels[0].combined", "above enos0's maximum 63"));
	CHECK(has_error(errors, "$.channels[1].combined", "count from 0"));
	CHECK(has_error(errors, "$.channels[2]", "at least one"));
	CHECK(has_error(errors, "$.bonds[0].mode", "only while the bond is down"));
	json_decref(bad);
	json_decref(errors);

	/* Channels go first (before IRQ affinity: the driver rebuilds the
	 * queues), rings later; one reset warning a NIC all the same. */
	json_t *p = json_loads("{\"name\":\"q\",\"rings\":[{\"interface\":\"enos*\",\"rx\":4096}],"
			       "\"sysctl\":{\"net.core.somaxconn\":\"8192\"},"
			       "\"channels\":[{\"interface\":\"enos0\",\"combined\":32},"
			       "{\"interface\":\"enos3\",\"combined\":\"max\"}]}",
			       0, &je);
	errors = json_array();
	CHECK_INT(nt_plan_build(&ctx, NULL, t, p, &plan, errors), 0);
	int ring0 = -1, chan0 = -1, ring3 = -1, chan3 = -1;
	for (int i = 0; i < plan.nsteps; i++) {
		const nt_step *s = &plan.steps[i];
		if (s->kind == &nt_setting_rings && !strcmp(s->target, "enos0"))
			ring0 = i;
		if (s->kind == &nt_setting_channels && !strcmp(s->target, "enos0")) {
			chan0 = i;
			CHECK_STR(nt_t_str(s->kind, &s->before), "rx=0,tx=0,other=0,combined=16");
			CHECK_STR(nt_t_str(s->kind, &s->after), "rx=0,tx=0,other=0,combined=32");
		}
		if (s->kind == &nt_setting_rings && !strcmp(s->target, "enos3"))
			ring3 = i;
		if (s->kind == &nt_setting_channels && !strcmp(s->target, "enos3")) {
			chan3 = i;
			CHECK_STR(nt_t_str(s->kind, &s->after), "rx=0,tx=0,other=0,combined=63");
		}
	}
	CHECK(ring0 >= 0 && chan0 >= 0 && chan0 < ring0);
	CHECK(ring3 >= 0 && chan3 >= 0 && chan3 < ring3);
	for (int i = 0; i < plan.nsteps; i++)
		CHECK(plan.steps[i].kind != &nt_setting_channels || i < ring0);
	int warned = 0;
	size_t i;
	json_t *w;
	json_array_foreach(plan.warnings, i, w)
		if (strstr(json_string_value(w), "may reset the NIC"))
			warned++;
	CHECK_INT(warned, 4); /* enos0..enos3, once each */

	/* Apply and restore through the kind, as a transaction does: with
	 * one handle for the stage, and with none (a handle per call). */
	char err[256];
	nt_value got, orig = nt_t_val(&nt_setting_channels, "rx=0,tx=0,other=0,combined=16");
	nt_ethtool *eh = NULL;
	CHECK_INT(nt_ethtool_open(&ctx, &eh), 0);
	int back = -1;
	CHECK_INT(nt_setting_apply_read(&ctx, eh, &nt_setting_channels, "enos0", &plan.steps[chan0].after, &got,
					&back, err, sizeof(err)), 0);
	CHECK_INT(back, 0);
	CHECK(nt_setting_equal(&nt_setting_channels, &got, &plan.steps[chan0].after));
	back = -1;
	CHECK_INT(nt_setting_apply_read(&ctx, NULL, &nt_setting_channels, "enos0", &plan.steps[chan0].before,
					&got, &back, err, sizeof(err)), 0);
	CHECK_INT(back, 0);
	CHECK(nt_setting_equal(&nt_setting_channels, &got, &orig));
	nt_ethtool_close(eh);
	nt_plan_free(&plan);
	json_decref(errors);
	json_decref(p);
	nt_topology_free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	system(cmd);
	TEST_MAIN_END();
}
