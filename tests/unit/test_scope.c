/* SPDX-License-Identifier: Apache-2.0 */
/* What a kind of setting reaches, and what a plan does about it in a
 * network namespace other than the initial one (issue 43, item 1):
 *  - every registered kind declares its scope in its own file, and every
 *    allowlisted sysctl key too; IRQ affinity, irqbalance and the
 *    host-wide sysctls are machine-wide, a link's settings are the
 *    namespace's; a kind nobody knows counts as machine-wide;
 *  - a fixture tree tells the namespace by its two ns/net files (distinct
 *    inodes: another namespace; a hard link: the same; none: initial);
 *  - a plan there refuses other_irqs, irqbalance and host-wide sysctls
 *    with one error per JSON path naming the reason and the key that
 *    allows them, plans per-namespace kinds beside them, and with
 *    allow_machine_wide plans them with a warning; the host model says
 *    where it runs (netns_initial) in both of its writers. */
#include "engine/plan.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/kernel.h"
#include "settings/setting.h"
#include "plan_util.h"
#include "harness.h"
#include "test_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_declarations(void)
{
	int kinds = 0;
	for (int m = 0; nt_setting_modules[m]; m++)
		for (int i = 0; nt_setting_modules[m]->kinds && nt_setting_modules[m]->kinds[i]; i++) {
			const nt_setting_kind *k = nt_setting_modules[m]->kinds[i];
			kinds++;
			CHECK_MSG(k->target_scope || (k->scope != NT_SCOPE_UNDECLARED && k->scope_why && k->scope_why[0]),
				  "kind %s declares no scope (or no reason)", k->name);
		}
	CHECK(kinds >= 19); /* every kind of 2026-12, and whatever comes next */
	for (int i = 0; nt_sysctl_allowlist[i].key; i++)
		CHECK_MSG(nt_sysctl_allowlist[i].scope == NT_SCOPE_NETNS || nt_sysctl_allowlist[i].scope == NT_SCOPE_MACHINE,
			  "sysctl %s declares no scope", nt_sysctl_allowlist[i].key);

	static const char *const machine[] = { "irq_affinity", "irqbalance_ban", "irqbalance_service", NULL };
	static const char *const netns[] = { "rings", "channels", "coalesce", "pause", "feature", "flow", "rss",
					     "rps_cpus", "rps_flow_cnt", "xps_cpus", "xps_rxqs", "mtu",
					     "txqueuelen", "qdisc", "bond", NULL };
	const char *why = NULL;
	for (int i = 0; machine[i]; i++) {
		CHECK_MSG(nt_setting_scope(nt_setting_find(machine[i]), "24", &why) == NT_SCOPE_MACHINE, "%s", machine[i]);
		CHECK(why && why[0]);
	}
	for (int i = 0; netns[i]; i++) {
		CHECK_MSG(nt_setting_find(netns[i]) != NULL, "%s is not a kind", netns[i]);
		CHECK_MSG(nt_setting_scope(nt_setting_find(netns[i]), "eth0", NULL) == NT_SCOPE_NETNS, "%s", netns[i]);
	}
	const nt_setting_kind *sysctl = nt_setting_find("sysctl");
	static const char *const host_keys[] = { "net.core.rps_sock_flow_entries", "net.core.rmem_max",
						 "net.core.netdev_budget", "net.core.default_qdisc",
						 "net.ipv4.tcp_mem", NULL };
	static const char *const ns_keys[] = { "net.core.somaxconn", "net.ipv4.tcp_rmem",
					       "net.ipv4.tcp_congestion_control", "net.ipv4.ip_local_port_range",
					       NULL };
	for (int i = 0; host_keys[i]; i++) {
		CHECK_MSG(nt_setting_scope(sysctl, host_keys[i], &why) == NT_SCOPE_MACHINE, "%s", host_keys[i]);
		CHECK(why && strstr(why, "whole machine"));
	}
	for (int i = 0; ns_keys[i]; i++)
		CHECK_MSG(nt_setting_scope(sysctl, ns_keys[i], NULL) == NT_SCOPE_NETNS, "%s", ns_keys[i]);
	/* What is not known to stay inside is taken as reaching outside: a
	 * kind this build does not know, a sysctl not on the allowlist. */
	CHECK_INT(nt_setting_scope(NULL, "x", &why), NT_SCOPE_MACHINE);
	CHECK(why && strstr(why, "does not declare"));
	CHECK_INT(nt_setting_scope(sysctl, "kernel.panic", NULL), NT_SCOPE_MACHINE);
	CHECK_STR(nt_reach_name(NT_SCOPE_NETNS), "netns");
	CHECK_STR(nt_reach_name(NT_SCOPE_MACHINE), "machine");
}

static void test_netns_files(void)
{
	char dir[] = "/tmp/nt-scope-ns-XXXXXX", cmd[512];
	nt_ctx ctx;
	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(nt_ctx_init(&ctx, dir), 0);
	CHECK(!nt_kernel_netns_other(&ctx)); /* no files: the initial namespace */
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/proc/self/ns %s/proc/1/ns && echo a > %s/proc/self/ns/net && "
		 "echo b > %s/proc/1/ns/net", dir, dir, dir, dir);
	CHECK_INT(system(cmd), 0);
	CHECK(nt_kernel_netns_other(&ctx)); /* two inodes: two namespaces */
	snprintf(cmd, sizeof(cmd), "ln -f %s/proc/1/ns/net %s/proc/self/ns/net", dir, dir);
	CHECK_INT(system(cmd), 0);
	CHECK(!nt_kernel_netns_other(&ctx)); /* one inode */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

/* Whether WARNINGS has a string holding WORDS. */
static bool has_warning(const json_t *warnings, const char *words)
{
	size_t i;
	json_t *w;
	json_array_foreach(warnings, i, w)
		if (json_is_string(w) && strstr(json_string_value(w), words))
			return true;
	return false;
}

static int count_kind(const nt_plan *plan, const char *kind)
{
	int n = 0;
	for (int i = 0; i < plan->nsteps; i++)
		n += strcmp(plan->steps[i].kind->name, kind) == 0;
	return n;
}

static void test_refusal(void)
{
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_plan plan;
	json_t *errors;
	char root[PATH_MAX];
	snprintf(root, sizeof(root), "%s/epyc7713-2node-bond", NT_FIXTURES);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (!t)
		return;
	const char *prof = "{\"name\":\"o\",\"other_irqs\":{\"cpus\":\"1\"},"
			   "\"rings\":[{\"interface\":\"enos0\",\"rx\":4096}],"
			   "\"sysctl\":{\"net.core.rps_sock_flow_entries\":\"32768\",\"net.core.somaxconn\":\"8192\"}}";

	/* The initial namespace: everything is planned, as before. */
	int r = nt_t_plan(&ctx, t, prof, &plan, &errors);
	CHECK_MSG(r == 0, "%s", json_dumps(errors, JSON_COMPACT));
	int irqs = r == 0 ? count_kind(&plan, "irq_affinity") : 0;
	CHECK(irqs > 1);
	if (r == 0)
		nt_plan_free(&plan);
	json_decref(errors);

	/* Another namespace: the machine-wide ones refused, once a path. */
	ctx.netns_other = true;
	r = nt_t_plan(&ctx, t, prof, &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK_MSG(has_error(errors, "$.other_irqs.cpus", "machine-wide (/proc/irq is one for the whole machine"),
		  "%s", json_dumps(errors, JSON_COMPACT));
	CHECK(has_error(errors, "$.other_irqs.cpus", "allow_machine_wide"));
	CHECK(has_error(errors, "$.sysctl['net.core.rps_sock_flow_entries']", "machine-wide"));
	CHECK_MSG(json_array_size(errors) == 2, "%s", json_dumps(errors, JSON_COMPACT));
	json_decref(errors);

	/* Per-namespace kinds alone are planned there. */
	r = nt_t_plan(&ctx, t,
		      "{\"name\":\"n\",\"rings\":[{\"interface\":\"enos0\",\"rx\":4096}],"
		      "\"sysctl\":{\"net.core.somaxconn\":\"8192\"}}", &plan, &errors);
	CHECK_MSG(r == 0, "%s", json_dumps(errors, JSON_COMPACT));
	if (r == 0) {
		CHECK_INT(count_kind(&plan, "rings"), 1);
		CHECK_INT(count_kind(&plan, "sysctl"), 1);
		CHECK(!has_warning(plan.warnings, "whole machine"));
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* Allowed: planned, with one warning per kind. */
	ctx.machine_wide_allowed = true;
	r = nt_t_plan(&ctx, t, prof, &plan, &errors);
	CHECK_MSG(r == 0, "%s", json_dumps(errors, JSON_COMPACT));
	if (r == 0) {
		CHECK_INT(count_kind(&plan, "irq_affinity"), irqs);
		CHECK(has_warning(plan.warnings, "irq_affinity changes the whole machine"));
		CHECK(has_warning(plan.warnings, "sysctl changes the whole machine"));
		size_t i, n = 0;
		json_t *w;
		json_array_foreach(plan.warnings, i, w)
			n += strstr(json_string_value(w), "irq_affinity changes the whole machine") != NULL;
		CHECK_INT(n, 1);
		nt_plan_free(&plan);
	}
	json_decref(errors);
	nt_topology_free(t);

	/* The host model says where it was read from, in both writers. */
	ctx.machine_wide_allowed = false;
	for (int other = 0; other < 2; other++) {
		ctx.netns_other = other;
		CHECK_INT(nt_topology_read(&ctx, &t), 0);
		if (!t)
			continue;
		json_t *doc = nt_topology_to_json(t);
		CHECK(json_is_boolean(json_object_get(json_object_get(doc, "host"), "netns_initial")));
		CHECK(json_is_true(json_object_get(json_object_get(doc, "host"), "netns_initial")) == !other);
		char *text = nt_topology_to_text(t, NULL);
		json_t *doc2 = text ? json_loads(text, 0, NULL) : NULL;
		CHECK(json_equal(json_object_get(doc, "host"), json_object_get(doc2, "host")));
		free(text);
		json_decref(doc);
		json_decref(doc2);
		nt_topology_free(t);
	}
}

int main(void)
{
	test_declarations();
	test_netns_files();
	test_refusal();
	TEST_MAIN_END();
}
