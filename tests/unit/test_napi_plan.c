/* SPDX-License-Identifier: Apache-2.0 */
/* Plans that follow the kernel's own queue->IRQ map (issue 39), on a copy
 * of the EPYC tree whose enos0 has its `netdev` family answers in its
 * document (kernel/fixture_napi.c):
 *   - the answers are rewritten so that the NAPI of queue K has the IRQ of
 *     queue 15-K by name (mlx5_compK): the IRQ names mislead the old
 *     heuristic, and XPS "irq", RSS "placed", a flow rule's "cpu" and
 *     napi[] thread_cpus "irq" follow the family's IRQ, not the names'. */
#include "engine/plan.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "harness.h"
#include "plan_util.h"
#include "test_json.h"
#include "tree_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[64], state[64];

static const char *after(const json_t *step)
{
	const char *s = json_string_value(json_object_get(step, "after"));
	return s ? s : "(none)";
}

/* Plan TEXT on a fresh read of the tree; its steps (the caller's) or NULL,
 * with the warnings and errors into *WARN and *ERR (the caller's). */
static json_t *plan(const nt_ctx *ctx, const char *text, json_t **warn, json_t **err)
{
	nt_topology *t = NULL;
	nt_plan p;
	json_t *steps = NULL;
	*warn = NULL;
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	if (!t)
		return NULL;
	int r = nt_t_plan(ctx, t, text, &p, err);
	if (r == 0) {
		json_t *doc = nt_plan_to_json(&p, NULL);
		steps = json_incref(json_object_get(doc, "steps"));
		*warn = json_incref(p.warnings);
		json_decref(doc);
		nt_plan_free(&p);
	}
	nt_topology_free(t);
	return steps;
}

/* The IRQ of RX queue K of enos0 by the family's answers: 116 - K. */
static void queue_map(const nt_ctx *ctx)
{
	json_t *warn, *err;
	/* A plan with IRQ placement only: where each IRQ goes. */
	json_t *base = plan(ctx, "{\"name\":\"p\",\"irq_affinity\":[{\"interface\":\"enos0\",\"policy\":\"local\"}]}",
			    &warn, &err);
	json_decref(warn);
	json_decref(err);
	const json_t *i101 = step_find(base, "irq_affinity", "101", NULL);
	const json_t *i116 = step_find(base, "irq_affinity", "116", NULL);
	CHECK_MSG(i101 && i116 && strcmp(after(i101), after(i116)), "IRQs 101 and 116 placed alike: %s",
		  json_dumps(base, 0));
	if (!i101 || !i116)
		goto out;

	json_t *steps = plan(ctx,
			     "{\"name\":\"p\",\"irq_affinity\":[{\"interface\":\"enos0\",\"policy\":\"local\"}],"
			     "\"xps\":[{\"interface\":\"enos0\",\"policy\":\"irq\",\"queues\":\"0\"}],"
			     "\"rss\":[{\"interface\":\"enos0\",\"queues\":\"placed\"}],"
			     "\"napi\":[{\"interface\":\"enos0\",\"queues\":\"0\",\"threaded\":true,"
			     "\"thread_cpus\":\"irq\"}]}",
			     &warn, &err);
	CHECK_MSG(steps, "plan: %s", json_dumps(err, 0));
	/* TX queue 0's NAPI has IRQ 116: XPS goes where 116 is placed. */
	const json_t *x = step_find(steps, "xps_cpus", "enos0/tx-0", NULL);
	CHECK_MSG(x && !strcmp(after(x), after(i116)), "xps tx-0 %s, IRQ 116 on %s, IRQ 101 on %s",
		  x ? after(x) : "(no step)", after(i116), after(i101));
	/* The NAPI thread of RX queue 0 with IRQ 116. */
	x = step_find(steps, "napi_thread_cpus", "enos0/rx-0", NULL);
	CHECK_MSG(x && !strcmp(after(x), after(i116)), "thread rx-0 %s, IRQ 116 on %s", x ? after(x) : "(no step)",
		  after(i116));
	/* RSS "placed" names the IRQs of queues 0..15 in queue order. */
	CHECK_MSG(warned(warn, "whose IRQs 116..101 are on its node"), "%s", json_dumps(warn, 0));
	json_decref(steps);
	json_decref(warn);
	json_decref(err);

	/* A flow rule to the CPU IRQ 116 alone is placed on goes to queue 0. */
	char text[512];
	snprintf(text, sizeof(text),
		 "{\"name\":\"p\",\"irq_affinity\":[{\"interface\":\"enos0\",\"policy\":\"local\"}],"
		 "\"flows\":[{\"interface\":\"enos0\",\"flow_type\":\"tcp4\",\"dst_port\":5201,\"cpu\":%s}]}",
		 after(i116));
	steps = plan(ctx, text, &warn, &err);
	CHECK_MSG(steps, "plan: %s", json_dumps(err, 0));
	size_t i;
	json_t *s;
	bool found = false;
	json_array_foreach(steps, i, s) {
		if (strcmp(json_string_value(json_object_get(s, "kind")) ?: "", "flow"))
			continue;
		found = true;
		CHECK_MSG(strstr(after(s), "action 0") || strstr(after(s), "queue 0"), "flow rule %s", after(s));
	}
	CHECK_MSG(found, "no flow step: %s", json_dumps(steps, 0));
	json_decref(steps);
	json_decref(warn);
	json_decref(err);
out:
	json_decref(base);
}

int main(void)
{
	char cmd[1024];
	nt_ctx ctx;

	snprintf(root, sizeof(root), "/tmp/nt-napiplan-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-napiplan-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	/* The NAPI of queue K gets the IRQ named for queue 15-K. */
	snprintf(cmd, sizeof(cmd),
		 "python3 -c \"import json;p='%s/ethtool/enos0.json';d=json.load(open(p));"
		 "n=d['netdev']['napis'];[a.__setitem__('irq',116-(a['id']-8193)) for a in n];"
		 "json.dump(d,open(p,'w'))\"",
		 root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	queue_map(&ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
