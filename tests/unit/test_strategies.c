/* SPDX-License-Identifier: Apache-2.0 */
/* IRQ placement strategies and irqbalance handling, planned on the
 * field-report hosts read from their fixture trees: "local" with CPU 0 left
 * out (docs/field-reports.md#cpu0-kept-free), "local-node" masks,
 * other_irqs to housekeeping CPUs
 * (docs/field-reports.md#other-irqs-to-system-node), an explicit cpulist
 * dealt in IRQ order (docs/field-reports.md#set-irq-affinity-cpulist),
 * reserve_app_cpus, a NIC of unknown locality, hyper-thread siblings last,
 * the irqbalance modes, and the ban list's composition. */
#include "harness.h"
#include "test_json.h"
#include "base/cpuset.h"
#include "engine/plan.h"
#include "engine/profile.h"
#include "settings/setting.h"
#include "setting_util.h"
#include "placement/cpus.h"
#include "placement/irq.h"
#include "host/topology.h"

#include <errno.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#define X460 NT_FIXTURES "/x460-4node-8nic"
#define CEPH NT_FIXTURES "/ceph-2node-ib"
#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

static nt_topology *read_host(const char *root, nt_ctx *ctx)
{
	nt_topology *t = NULL;
	CHECK_INT(nt_ctx_init(ctx, root), 0);
	int r = nt_topology_read(ctx, &t);
	CHECK_MSG(r == 0 && t, "cannot read %s: %d", root, r);
	return t;
}

/* Plan TEXT on T; returns the result code, PLAN filled on success and the
 * errors in *ERRORS (caller decrefs). */
static int nt_t_plan(const nt_ctx *ctx, const nt_topology *t, const char *text, nt_plan *plan,
		   json_t **errors)
{
	json_error_t je;
	json_t *p = json_loads(text, 0, &je);
	CHECK_MSG(p != NULL, "profile does not parse: %s", je.text);
	*errors = json_array();
	int r = nt_plan_build(ctx, NULL, t, p, plan, *errors);
	json_decref(p);
	return r;
}

static const nt_step *step_for(const nt_plan *plan, const char *kind, const char *target)
{
	for (int i = 0; i < plan->nsteps; i++)
		if (strcmp(plan->steps[i].kind->name, kind) == 0 &&
		    strcmp(plan->steps[i].target, target) == 0)
			return &plan->steps[i];
	return NULL;
}

static int first_cpu(const char *list)
{
	nt_cpuset s;
	if (nt_cpulist_parse(list, &s) < 0)
		return -1;
	return nt_cpuset_next(&s, 0);
}

/* The x460: "local", CPU 0 out: each NIC's IRQ on a CPU of its own node,
 * one CPU each, distinct first CPUs; irqbalance runs there, so the plan
 * says it will undo this. */
static void test_x460_local(void)
{
	nt_ctx ctx;
	nt_topology *t = read_host(X460, &ctx);
	nt_plan plan;
	json_t *errors;
	if (!t)
		return;
	int r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth*\","
			"\"policy\":\"local\",\"exclude_cpus\":\"0\"}]}", &plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, JSON_COMPACT));
	if (r == 0) {
		nt_cpuset firsts;
		nt_cpuset_zero(&firsts);
		CHECK_INT(plan.nsteps, 8);
		for (int i = 0; i < plan.nsteps; i++) {
			const nt_step *s = &plan.steps[i];
			const nt_nic *nic = nt_topology_nic(t, s->interface);
			nt_cpuset set;
			CHECK_STR(s->kind->name, "irq_affinity");
			CHECK(nt_cpulist_parse(nt_t_str(s->kind, &s->after), &set) == 0 && nt_cpuset_count(&set) == 1);
			int c = nt_cpuset_next(&set, 0);
			CHECK_MSG(nic && nt_topology_cpu_node(t, c) == nic->numa_node,
				  "%s IRQ %s on CPU %d, off its node", s->interface, s->target, c);
			CHECK_MSG(c != 0, "IRQ %s on the excluded CPU 0", s->target);
			CHECK_MSG(!nt_cpuset_isset(&firsts, c), "CPU %d is two NICs' first CPU", c);
			nt_cpuset_set(&firsts, c);
		}
		CHECK(warned(plan.warnings, "irqbalance (pid 1234) is running"));
		CHECK_INT(json_object_size(plan.reserved), 0);
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* local-node: every IRQ gets its node's mask minus exclusions; eth1's
	 * mask starts at eth0's first CPU, and the plan says so. */
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth*\","
		    "\"policy\":\"local-node\",\"exclude_cpus\":\"0\"}]}", &plan, &errors);
	CHECK_INT(r, 0);
	if (r == 0) {
		const nt_step *s0 = step_for(&plan, "irq_affinity", "177");
		const nt_step *s1 = step_for(&plan, "irq_affinity", "185");
		const nt_step *s2 = step_for(&plan, "irq_affinity", "193");
		const nt_step *s7 = step_for(&plan, "irq_affinity", "233");
		CHECK_STR(s0 ? nt_t_str(s0->kind, &s0->after) : NULL, "1-15");
		CHECK_STR(s1 ? nt_t_str(s1->kind, &s1->after) : NULL, "1-15");
		CHECK_STR(s2 ? nt_t_str(s2->kind, &s2->after) : NULL, "16-31");
		CHECK_STR(s7 ? nt_t_str(s7->kind, &s7->after) : NULL, "48-63");
		CHECK(warned(plan.warnings, "eth1: its IRQ mask 1-15 starts at CPU 1, as eth0's does"));
		CHECK(warned(plan.warnings, "eth3: its IRQ mask 16-31 starts at CPU 16, as eth2's"));
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* Unknown policy names both. */
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\","
		    "\"policy\":\"remote\"}]}", &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.irq_affinity[0].policy", "known: local, local-node"));
	json_decref(errors);
	nt_topology_free(t);
}

/* The Ceph node: ib0 "local", everything else to the housekeeping CPUs
 * 0-1 (their production rule, docs/field-reports.md#other-irqs-to-system-node),
 * eno1 included since it is not tuned. */
static void test_ceph_other(void)
{
	nt_ctx ctx;
	nt_topology *t = read_host(CEPH, &ctx);
	nt_plan plan;
	json_t *errors;
	if (!t)
		return;
	int r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"ib0\","
			"\"policy\":\"local\"}],\"other_irqs\":{\"cpus\":\"0-1\"}}", &plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, JSON_COMPACT));
	if (r == 0) {
		const nt_nic *ib0 = nt_topology_nic(t, "ib0");
		int others = 0, mine = 0;
		for (int i = 0; i < t->nirqs; i++) {
			const nt_irq *irq = &t->irqs[i];
			char target[16];
			snprintf(target, sizeof(target), "%d", irq->irq);
			const nt_step *s = step_for(&plan, "irq_affinity", target);
			bool of_ib0 = irq->nic >= 0 && &t->nics[irq->nic] == ib0;
			if (of_ib0) {
				CHECK_MSG(s && nt_topology_cpu_node(t, first_cpu(nt_t_str(s->kind, &s->after))) == 0 &&
					  strchr(nt_t_str(s->kind, &s->after), '-') == NULL && strchr(nt_t_str(s->kind, &s->after), ',') == NULL,
					  "ib0 IRQ %d: %s", irq->irq, s ? nt_t_str(s->kind, &s->after) : "no step");
				mine++;
			} else if (irq->has_affinity && !irq->managed) {
				CHECK_MSG(s && strcmp(nt_t_str(s->kind, &s->after), "0-1") == 0, "IRQ %d (%s): %s", irq->irq,
					  irq->name, s ? nt_t_str(s->kind, &s->after) : "no step");
				others++;
			}
		}
		CHECK_INT(mine, 9);
		/* timer, ttyS0, rtc0, acpi, ahci, 5 nvme, 5 eno1 */
		CHECK_INT(others, 15);
		CHECK_INT(plan.nsteps, mine + others);
		const nt_step *eno1 = step_for(&plan, "irq_affinity", "81");
		CHECK_STR(eno1 ? eno1->interface : NULL, "eno1");
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* A managed IRQ is not moved by other_irqs either. */
	for (int i = 0; i < t->nirqs; i++)
		if (t->irqs[i].irq == 72)
			t->irqs[i].managed = true;
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"other_irqs\":{\"cpus\":\"0-1\"}}", &plan, &errors);
	CHECK_INT(r, 0);
	if (r == 0) {
		CHECK(step_for(&plan, "irq_affinity", "72") == NULL);
		CHECK(step_for(&plan, "irq_affinity", "71") != NULL);
		CHECK(warned(plan.warnings, "other_irqs: 1 kernel-managed IRQ(s) left"));
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* other_irqs is checked like any cpulist, and has one field. */
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"other_irqs\":{\"cpus\":\"0-99\",\"node\":1}}", &plan,
		    &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.other_irqs.cpus", "CPU 56-99 do not exist"));
	CHECK(has_error(errors, "$.other_irqs.node", "unknown field"));
	json_decref(errors);
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"other_irqs\":\"0-1\"}", &plan, &errors);
	CHECK(has_error(errors, "$.other_irqs", "must be an object"));
	json_decref(errors);
	nt_topology_free(t);
}

/* Mellanox's set_irq_affinity_cpulist.sh 0-7
 * (docs/field-reports.md#set-irq-affinity-cpulist): enos0's 17 IRQs (async +
 * 16 completion) get 0..7 round-robin in IRQ order; reserve_app_cpus. */
static void test_epyc(void)
{
	nt_ctx ctx;
	nt_topology *t = read_host(EPYC, &ctx);
	nt_plan plan;
	json_t *errors;
	char target[16], want[16];
	if (!t)
		return;
	const nt_nic *enos0 = nt_topology_nic(t, "enos0");
	CHECK(enos0 && enos0->nirqs == 17);
	int r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"enos0\","
			"\"cpus\":\"0-7\"}]}", &plan, &errors);
	CHECK_INT(r, 0);
	if (r == 0) {
		for (int q = 0; enos0 && q < enos0->nirqs; q++) {
			/* No IRQ of the fixture's enos0 is on its CPU already, so
			 * each has a step. */
			snprintf(target, sizeof(target), "%d", 100 + q);
			snprintf(want, sizeof(want), "%d", q % 8);
			const nt_step *s = step_for(&plan, "irq_affinity", target);
			CHECK_MSG(s && strcmp(nt_t_str(s->kind, &s->after), want) == 0, "IRQ %s: %s, want %s", target,
				  s ? nt_t_str(s->kind, &s->after) : "no step", want);
		}
		CHECK(!warned(plan.warnings, "off its node"));
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* enos0 on node 0 with CPUs 0-7: no word. enos2 (node 1) with CPU 0,
	 * or 0 and 32-33: a warning naming the node of each CPU off its own
	 * (17 steps were planned without one). */
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"enos2\","
		    "\"cpus\":\"0\"}]}", &plan, &errors);
	CHECK_INT(r, 0);
	if (r == 0) {
		CHECK(warned(plan.warnings, "enos2: its 'cpus' are off its node 1 (CPU 0 on node 0)"));
		CHECK(plan.nsteps > 0);
		nt_plan_free(&plan);
	}
	json_decref(errors);
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"enos2\","
		    "\"cpus\":\"0,32-33,64\"}]}", &plan, &errors);
	CHECK_INT(r, 0);
	if (r == 0) {
		CHECK(warned(plan.warnings, "enos2: its 'cpus' are off its node 1 (CPU 0,64 on node 0)"));
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* A bond stands for its ports (0 steps were planned, "no movable
	 * IRQs"): each port placed from its own node, reserve per port. */
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"bond0\","
		    "\"policy\":\"local\",\"reserve_app_cpus\":2}]}", &plan, &errors);
	CHECK_INT(r, 0);
	if (r == 0) {
		int ports[4] = { 0 };
		CHECK(!warned(plan.warnings, "no movable IRQs"));
		for (int i = 0; i < plan.nsteps; i++) {
			const nt_step *s = &plan.steps[i];
			if (strcmp(s->kind->name, "irq_affinity"))
				continue;
			const nt_nic *nic = nt_topology_nic(t, s->interface);
			CHECK_MSG(nic && !strncmp(s->interface, "enos", 4), "step on %s", s->interface);
			if (!nic || strncmp(s->interface, "enos", 4))
				continue;
			ports[s->interface[4] - '0']++;
			CHECK_MSG(nt_topology_set_on_node(t, &s->after.cpus, nic->numa_node), "IRQ %s of %s off node %d",
				  s->target, s->interface, nic->numa_node);
		}
		for (int k = 0; k < 4; k++)
			CHECK_MSG(ports[k] > 0, "enos%d has no step", k);
		CHECK_STR(json_string_value(json_object_get(plan.reserved, "enos2")), "63,127");
		CHECK(json_object_get(plan.reserved, "bond0") == NULL);
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* reserve_app_cpus 4: whole cores from the end of node 0 (0-31,64-95,
	 * siblings N and N+64), reported, never given to enos0's IRQs. */
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"enos0\","
		    "\"policy\":\"local\",\"reserve_app_cpus\":4}]}", &plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, JSON_COMPACT));
	if (r == 0) {
		const char *res = json_string_value(json_object_get(plan.reserved, "enos0"));
		CHECK_STR(res, "30-31,94-95");
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* exclude_cpus "0" does not change which cores are the node's last
	 * (it gave 31,64,94-95, CPU 64 being CPU 0's sibling and 94
	 * taken while its sibling 30 served an IRQ). An excluded thread near
	 * the end (95) puts its core (31,95) after the whole ones. */
	static const struct {
		const char *exclude;
		int n;
		const char *want;
	} ex[] = { { "0", 4, "30-31,94-95" }, { "0", 3, "31,94-95" }, { "95", 4, "29-30,93-94" },
		   { "0,64", 2, "31,95" } };
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		char prof[256];
		snprintf(prof, sizeof(prof),
			 "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"enos0\",\"policy\":\"local\","
			 "\"exclude_cpus\":\"%s\",\"reserve_app_cpus\":%d}]}", ex[i].exclude, ex[i].n);
		r = nt_t_plan(&ctx, t, prof, &plan, &errors);
		CHECK_MSG(r == 0, "plan: %d", r);
		if (r == 0) {
			const char *res = json_string_value(json_object_get(plan.reserved, "enos0"));
			CHECK_MSG(res && !strcmp(res, ex[i].want), "exclude %s, %d: %s, want %s", ex[i].exclude,
				  ex[i].n, res ? res : "(none)", ex[i].want);
			nt_plan_free(&plan);
		}
		json_decref(errors);
	}

	/* 50 of node 0's 64 reserved: 14 left for 17 IRQs, which wrap round
	 * them and never land on a reserved CPU or a reserved CPU's sibling. */
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"enos0\","
		    "\"policy\":\"local\",\"reserve_app_cpus\":50}]}", &plan, &errors);
	CHECK_INT(r, 0);
	if (r == 0) {
		nt_cpuset res, used;
		const char *rl = json_string_value(json_object_get(plan.reserved, "enos0"));
		CHECK(rl && nt_cpulist_parse(rl, &res) == 0 && nt_cpuset_count(&res) == 50);
		CHECK(rl && nt_topology_set_on_node(t, &res, 0));
		nt_cpuset_zero(&used);
		for (int q = 0; enos0 && q < enos0->nirqs; q++) {
			snprintf(target, sizeof(target), "%d", 100 + q);
			const nt_step *s = step_for(&plan, "irq_affinity", target);
			/* An IRQ already on its CPU has no step: its current CPU counts. */
			int c = s ? first_cpu(nt_t_str(s->kind, &s->after)) : nt_cpuset_next(&t->irqs[enos0->irqs[q]].affinity, 0);
			nt_cpuset_set(&used, c);
			CHECK_MSG(!nt_cpuset_isset(&res, c), "IRQ %s on reserved CPU %d", target, c);
			CHECK_MSG(!nt_cpuset_isset(&res, c < 64 ? c + 64 : c - 64),
				  "IRQ %s on CPU %d, sibling of a reserved CPU", target, c);
		}
		CHECK_INT(nt_cpuset_count(&used), 14);
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* Reserving all of a node, a count that is not one, or with 'cpus'. */
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"enos*\","
		    "\"policy\":\"local\",\"exclude_cpus\":\"0\",\"reserve_app_cpus\":63}]}", &plan,
		    &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.irq_affinity[0].reserve_app_cpus", "enos0 has 63 usable CPU(s)"));
	CHECK(!has_error(errors, "$.irq_affinity[0].reserve_app_cpus", "enos2"));
	json_decref(errors);
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"enos0\","
		    "\"policy\":\"local\",\"reserve_app_cpus\":-1},{\"interface\":\"enos1\","
		    "\"cpus\":\"1\",\"reserve_app_cpus\":2}]}", &plan, &errors);
	CHECK(has_error(errors, "$.irq_affinity[0].reserve_app_cpus", "integer from 0"));
	CHECK(has_error(errors, "$.irq_affinity[1].reserve_app_cpus", "goes with a 'policy'"));
	json_decref(errors);
	nt_topology_free(t);
}

/* Hyper-thread siblings last. */
static void test_siblings(void)
{
	nt_ctx ctx;
	nt_topology *t = read_host(X460, &ctx);
	nt_cpuset s;
	int order[64];
	if (!t)
		return;
	/* The x460 fixture: siblings N and N+8 in a node; node 0 without CPU 0 gives
	 * CPU 8 (whose sibling is out) among the first threads. */
	nt_cpulist_parse("1-15", &s);
	int n = nt_cpus_siblings_last(t, &s, order);
	CHECK_INT(n, 15);
	for (int i = 0; i < n; i++)
		CHECK_INT(order[i], i + 1);
	/* 8 IRQs on node 0 with CPU 0 out: no CPU is used with its sibling
	 * before every core has one. eth0 given 8 IRQs (those of eth0..7). */
	nt_nic *eth0 = nt_topology_nic(t, "eth0");
	int idx[8], *saved = eth0 ? eth0->irqs : NULL, nsaved = eth0 ? eth0->nirqs : 0;
	for (int i = 0; i < 8; i++)
		idx[i] = nt_topology_nic(t, (char[]){ 'e', 't', 'h', (char)('0' + i), 0 })->irqs[0];
	if (eth0) {
		eth0->irqs = idx;
		eth0->nirqs = 8;
	}
	nt_desired *d = NULL;
	int nd = 0;
	json_t *w = json_array();
	json_t *p = json_loads("{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth0\","
			       "\"policy\":\"local\",\"exclude_cpus\":\"0\"}]}", 0, NULL);
	CHECK_INT(nt_profile_desired(t, p, &d, &nd, w), 0);
	CHECK_INT(nd, 8);
	for (int i = 0; i < nd; i++)
		for (int j = 0; j < i; j++) {
			int a = first_cpu(nt_t_str(d[i].kind, &d[i].value)), b = first_cpu(nt_t_str(d[j].kind, &d[j].value));
			CHECK_MSG(a % 8 != b % 8, "CPUs %d and %d are siblings, both used for 8 IRQs on 8 "
				  "cores", a, b);
		}
	free(d);
	if (eth0) {
		eth0->irqs = saved;
		eth0->nirqs = nsaved;
	}

	/* Siblings numbered side by side (core = CPU / 2, as on many hosts):
	 * the even CPUs come first. */
	for (int c = 0; c < 16; c++)
		t->cpu_core[c] = c / 2 % 4, t->cpu_package[c] = c / 8;
	nt_cpulist_parse("0-7", &s);
	n = nt_cpus_siblings_last(t, &s, order);
	int want[] = { 0, 2, 4, 6, 1, 3, 5, 7 };
	CHECK_INT(n, 8);
	for (int i = 0; i < 8; i++)
		CHECK_INT(order[i], want[i]);
	/* and "local" deals them in that order: 3 IRQs of eth0 skip CPU 1. */
	int three[3] = { idx[0], idx[1], idx[2] };
	eth0->irqs = three;
	eth0->nirqs = 3;
	json_decref(w);
	w = json_array();
	CHECK_INT(nt_profile_desired(t, p, &d, &nd, w), 0);
	CHECK_INT(nd, 3);
	if (nd == 3) {
		/* node 0 minus CPU 0: cores {1}, {2,3}, {4,5}, {6,7}, {8,9}... */
		CHECK_STR(nt_t_str(d[0].kind, &d[0].value), "1");
		CHECK_STR(nt_t_str(d[1].kind, &d[1].value), "2");
		CHECK_STR(nt_t_str(d[2].kind, &d[2].value), "4");
	}
	free(d);
	/* reserve takes whole cores from the end: 2 of node 0 = {14,15}. */
	nt_cpuset res;
	nt_cpulist_parse("0-15", &s);
	n = nt_cpus_siblings_last(t, &s, order);
	CHECK_INT(nt_reserve_app_cpus(t, order, n, 2, &res), 0);
	char cl[64];
	nt_cpulist_format(&res, cl, sizeof(cl));
	CHECK_STR(cl, "14-15");
	CHECK_INT(nt_reserve_app_cpus(t, order, n, 16, &res), -ENOSPC);
	eth0->irqs = saved;
	eth0->nirqs = nsaved;
	json_decref(p);
	json_decref(w);
	nt_topology_free(t);
}

/* A NIC whose locality is unknown (numa_node -1, no local_cpulist) is
 * left out with a warning, unless the entry names CPUs. */
static void test_unknown_locality(void)
{
	char dir[] = "/tmp/nt-strat-XXXXXX", cmd[PATH_MAX * 3], root[PATH_MAX];
	if (!mkdtemp(dir)) {
		CHECK_MSG(0, "mkdtemp");
		return;
	}
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(cmd, sizeof(cmd),
		 "cp -a '%s' '%s' && d='%s/sys/class/net/eth2/device/' && echo -1 > \"$d/numa_node\" && "
		 "rm -f \"$d/local_cpulist\" \"$d/local_cpus\"", X460, root, root);
	CHECK_INT(system(cmd), 0);
	nt_ctx ctx;
	nt_topology *t = read_host(root, &ctx);
	nt_plan plan;
	json_t *errors;
	if (t) {
		const nt_nic *eth2 = nt_topology_nic(t, "eth2");
		CHECK(eth2 && eth2->numa_node == -1 && !eth2->has_local_cpus);
		int r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth[23]\","
				"\"policy\":\"local\"}]}", &plan, &errors);
		CHECK_INT(r, 0);
		if (r == 0) {
			CHECK(warned(plan.warnings, "eth2: NUMA locality unknown"));
			CHECK(step_for(&plan, "irq_affinity", "193") == NULL);
			CHECK(step_for(&plan, "irq_affinity", "201") != NULL);
			CHECK_INT(plan.nsteps, 1);
			nt_plan_free(&plan);
		}
		json_decref(errors);
		r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth2\","
			    "\"cpus\":\"20\"}]}", &plan, &errors);
		CHECK_INT(r, 0);
		if (r == 0) {
			const nt_step *s = step_for(&plan, "irq_affinity", "193");
			CHECK_STR(s ? nt_t_str(s->kind, &s->after) : NULL, "20");
			nt_plan_free(&plan);
		}
		json_decref(errors);
		nt_topology_free(t);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	system(cmd);
}

/* irqbalance modes on the x460 fixture, where it runs (pid 1234 in the tree). */
static void test_irqbalance_modes(void)
{
	nt_ctx ctx;
	nt_topology *t = read_host(X460, &ctx);
	nt_plan plan;
	json_t *errors;
#define fix "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"eth*\"," \
	"\"policy\":\"local\",\"exclude_cpus\":\"0\"}],\"irqbalance\":\"%s\"}"
	char text[512];
	if (!t)
		return;
	CHECK(t->irqbalance.running);

	snprintf(text, sizeof(text), fix, "require-absent");
	int r = nt_t_plan(&ctx, t, text, &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	CHECK(has_error(errors, "$.irqbalance", "irqbalance (pid 1234) is running"));
	json_decref(errors);
	/* require-absent with nothing to place is fine. */
	r = nt_t_plan(&ctx, t, "{\"name\":\"x\",\"irqbalance\":\"require-absent\"}", &plan, &errors);
	CHECK_INT(r, 0);
	if (r == 0)
		nt_plan_free(&plan);
	json_decref(errors);

	snprintf(text, sizeof(text), fix, "ignore");
	r = nt_t_plan(&ctx, t, text, &plan, &errors);
	CHECK_INT(r, 0);
	if (r == 0) {
		CHECK(warned(plan.warnings, "will rewrite the IRQ affinity"));
		CHECK_INT(plan.nsteps, 8);
		nt_plan_free(&plan);
	}
	json_decref(errors);

	/* A fixture has no daemon to talk to: ban and stop are left out with
	 * a warning instead of failing the plan. */
	const char *modes[] = { "ban", "stop" };
	for (int i = 0; i < 2; i++) {
		snprintf(text, sizeof(text), fix, modes[i]);
		r = nt_t_plan(&ctx, t, text, &plan, &errors);
		CHECK_MSG(r == 0, "%s: %d %s", modes[i], r, json_dumps(errors, JSON_COMPACT));
		if (r == 0) {
			CHECK(warned(plan.warnings, "controlled only on the live host"));
			CHECK(step_for(&plan, "irqbalance_ban", "irqbalance") == NULL);
			CHECK(step_for(&plan, "irqbalance_service", "irqbalance") == NULL);
			CHECK_INT(plan.nsteps, 8);
			nt_plan_free(&plan);
		}
		json_decref(errors);
	}
	snprintf(text, sizeof(text), fix, "maybe");
	r = nt_t_plan(&ctx, t, text, &plan, &errors);
	CHECK(has_error(errors, "$.irqbalance", "unknown irqbalance handling 'maybe'"));
	json_decref(errors);

	/* On a live host (pretended here, only the desired values are asked
	 * for, nothing is read or written) the irqbalance value comes first:
	 * the ban lists every IRQ the profile places. */
	t->ctx.live = true;
	for (int i = 0; i < 2; i++) {
		nt_desired *d = NULL;
		int n = 0;
		json_t *w = json_array();
		snprintf(text, sizeof(text), fix, modes[i]);
		json_t *p = json_loads(text, 0, NULL);
		CHECK_INT(nt_profile_desired(t, p, &d, &n, w), 0);
		CHECK_INT(n, 9);
		if (n == 9 && i == 0) {
			CHECK_STR(d[0].kind->name, "irqbalance_ban");
			CHECK_STR(nt_t_str(d[0].kind, &d[0].value), "177 185 193 201 209 217 225 233");
			CHECK_STR(d[0].path, "$.irqbalance");
		} else if (n == 9) {
			CHECK_STR(d[0].kind->name, "irqbalance_service");
			CHECK_STR(nt_t_str(d[0].kind, &d[0].value), "stopped");
		}
		for (int k = 1; k < n; k++)
			CHECK_STR(d[k].kind->name, "irq_affinity");
		free(d);
		json_decref(p);
		json_decref(w);
	}
	/* irqbalance not running: nothing to ban. */
	t->irqbalance.running = false;
	{
		nt_desired *d = NULL;
		int n = 0;
		json_t *w = json_array();
		snprintf(text, sizeof(text), fix, "ban");
		json_t *p = json_loads(text, 0, NULL);
		CHECK_INT(nt_profile_desired(t, p, &d, &n, w), 0);
		CHECK_INT(n, 8);
		CHECK(!warned(w, "irqbalance"));
		free(d);
		json_decref(p);
		json_decref(w);
	}
	t->ctx.live = false;
	nt_topology_free(t);
}

/* K's compose on text values, the result as text into OUT. */
static int compose_text(const nt_setting_kind *k, const char *before, const char *wanted, char *out,
			size_t size)
{
	nt_value b, w, o;
	int r;
	if ((r = k->parse(before, &b)) < 0 || (r = k->parse(wanted, &w)) < 0)
		return r;
	if ((r = k->compose(&b, &w, &o)) < 0)
		return r;
	return k->format(&o, out, size);
}

/* The ban list: its format, and the plan-time union with what is banned. */
static void test_ban_list(void)
{
	const nt_setting_kind *k = nt_setting_find("irqbalance_ban");
	char out[NT_VALUE_MAX];
	CHECK(k == &nt_setting_irqbalance_ban);
	CHECK(nt_setting_find("irqbalance_service") == &nt_setting_irqbalance_service);
	if (!k)
		return;
	CHECK(k->compose != NULL);
	CHECK_INT(compose_text(k, "5 60-62", "100 61 63", out, sizeof(out)), 0);
	CHECK_STR(out, "5 60-63 100");
	CHECK_INT(compose_text(k, "", "", out, sizeof(out)), 0);
	CHECK_STR(out, "");
	CHECK_INT(compose_text(k, "7", "", out, sizeof(out)), 0);
	CHECK_STR(out, "7");
	CHECK(compose_text(k, "7 x", "1", out, sizeof(out)) == NT_EPARSE);
	/* Every other IRQ up to 400: no runs, so the union is far longer
	 * than one value holds. */
	nt_value b = { 0 }, w = { 0 }, o;
	for (int i = 1; i < 140; i += 2)
		snprintf(w.text + strlen(w.text), sizeof(w.text) - strlen(w.text), "%s%d", i > 1 ? " " : "", i);
	for (int i = 200; i < 400 && strlen(b.text) < 200; i += 2)
		snprintf(b.text + strlen(b.text), sizeof(b.text) - strlen(b.text), "%s%d", i > 200 ? " " : "", i);
	CHECK(k->compose(&b, &w, &o) == -E2BIG);
	CHECK(nt_t_equal(k, "60 61 62 80", "60-62 80"));
	CHECK(!nt_t_equal(k, "60 61 62 80", "60-62"));
	CHECK(nt_setting_irq_affinity.compose == NULL);

	int v[] = { 9, 3, 4, 5, 3, 11 }, *p = NULL, n = 0;
	CHECK_INT(nt_irqlist_format(v, 6, out, sizeof(out)), 0);
	CHECK_STR(out, "3-5 9 11");
	CHECK_INT(nt_irqlist_parse(out, &p, &n), 0);
	CHECK_INT(n, 5);
	if (n == 5)
		CHECK(p[0] == 3 && p[2] == 5 && p[3] == 9 && p[4] == 11);
	free(p);
	CHECK(nt_irqlist_parse("5-3", &p, &n) == NT_EINVALID);
	CHECK(nt_irqlist_parse("1,2", &p, &n) == NT_EINVALID);

	/* The service value compares on its first word only. */
	CHECK(nt_t_equal(&nt_setting_irqbalance_service, "running systemd",
			 "running /usr/sbin/irqbalance --foreground"));
	CHECK(!nt_t_equal(&nt_setting_irqbalance_service, "running systemd", "stopped"));
}

/* A plan's before-values come from the host model it was made from (read
 * for the plan a moment earlier), not from a second read of each target:
 * a model that says otherwise than the file wins, and a target the model
 * could not read is read from its file. */
static void test_before_from_model(void)
{
	nt_ctx ctx;
	nt_topology *t = read_host(X460, &ctx);
	nt_plan plan;
	json_t *errors;
	char file[64];
	if (!t || t->nnics < 2 || t->nics[0].nirqs < 1 || t->nics[1].nirqs < 1) {
		CHECK_MSG(0, "the x460 tree has two NICs with IRQs");
		nt_topology_free(t);
		return;
	}
	nt_irq *a = &t->irqs[t->nics[0].irqs[0]], *b = &t->irqs[t->nics[1].irqs[0]];
	CHECK_INT(nt_read_str(&ctx, file, sizeof(file), "/proc/irq/%d/smp_affinity_list", b->irq) >= 0, 1);
	nt_cpuset_zero(&a->affinity);
	nt_cpuset_set(&a->affinity, 3); /* the model says 3, the file something else */
	b->has_affinity = false; /* the model could not read this one */
	nt_cpuset_zero(&b->affinity);
	char text[256];
	snprintf(text, sizeof(text), "{\"name\":\"x\",\"irq_affinity\":[{\"interface\":\"%s\","
		 "\"cpus\":\"1\"},{\"interface\":\"%s\",\"cpus\":\"1\"}]}", t->nics[0].name,
		 t->nics[1].name);
	int r = nt_t_plan(&ctx, t, text, &plan, &errors);
	CHECK_MSG(r == 0, "plan: %d %s", r, json_dumps(errors, JSON_COMPACT));
	if (r == 0) {
		char ta[16], tb[16];
		snprintf(ta, sizeof(ta), "%d", a->irq);
		snprintf(tb, sizeof(tb), "%d", b->irq);
		const nt_step *sa = step_for(&plan, "irq_affinity", ta), *sb = step_for(&plan, "irq_affinity", tb);
		CHECK_MSG(sa && sb, "steps for IRQs %s and %s", ta, tb);
		if (sa)
			CHECK_STR(nt_t_str(sa->kind, &sa->before), "3");
		if (sb)
			CHECK_STR(nt_t_str(sb->kind, &sb->before), file);
		nt_plan_free(&plan);
	}
	json_decref(errors);
	nt_topology_free(t);
}

int main(void)
{
	test_x460_local();
	test_ceph_other();
	test_epyc();
	test_siblings();
	test_unknown_locality();
	test_irqbalance_modes();
	test_ban_list();
	test_before_from_model();
	TEST_MAIN_END();
}
