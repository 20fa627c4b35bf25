/* SPDX-License-Identifier: Apache-2.0 */
/* Plans that follow the kernel's own queue->IRQ map (issue 39), on a copy
 * of the EPYC tree whose enos0 has its `netdev` family answers in its
 * document (kernel/fixture_napi.c):
 *   - the answers are rewritten so that the NAPI of queue K has the IRQ of
 *     queue 15-K by name (mlx5_compK): the IRQ names mislead the old
 *     heuristic, and XPS "irq", RSS "placed", a flow rule's "cpu" and
 *     napi[] thread_cpus "irq" follow the family's IRQ, not the names';
 *   - per-NAPI "threaded" (napi-set, 6.17): an entry with "queues" threads
 *     only those queues' NAPIs, applied (one thread appears) and rolled
 *     back (the thread goes, the NAPI reads as before); without "queues"
 *     the device's file is written;
 *   - on a kernel whose napi-get has no "threaded" (6.13 to 6.16: the
 *     member taken out of the document), an entry threading some queues is
 *     refused with the version it needs and the device-wide way, and one
 *     naming all queues goes to the device's file with a warning. */
#include "engine/plan.h"
#include "engine/txn.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/netdev.h"
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

/* A NAPI of enos0's document: its "threaded" word and its pid (0 none). */
static const char *napi_state(int id, int *pid)
{
	static char word[32];
	char *text = tree_read(root, "ethtool/enos0.json");
	json_t *d = text ? json_loads(text, 0, NULL) : NULL, *e;
	size_t i;
	snprintf(word, sizeof(word), "(none)");
	*pid = 0;
	json_array_foreach(json_object_get(json_object_get(d, "netdev"), "napis"), i, e)
		if (json_integer_value(json_object_get(e, "id")) == id) {
			const char *w = json_string_value(json_object_get(e, "threaded"));
			snprintf(word, sizeof(word), "%s", w ? w : "(absent)");
			*pid = (int)json_integer_value(json_object_get(e, "pid"));
		}
	json_decref(d);
	free(text);
	return word;
}

#define PER_NAPI                                                                                         \
	"{\"name\":\"t\",\"napi\":[{\"interface\":\"enos0\",\"queues\":\"1\",\"threaded\":true,"      \
	"\"thread_cpus\":\"5\"}]}"

static void per_napi_threaded(const nt_ctx *ctx)
{
	json_t *warn, *err;
	json_t *steps = plan(ctx, PER_NAPI, &warn, &err);
	CHECK_MSG(steps, "plan: %s", json_dumps(err, 0));
	int pos = -1, tpos = -1;
	const json_t *x = step_find(steps, "napi", "enos0/rx-1/threaded", &pos);
	const json_t *th = step_find(steps, "napi_thread_cpus", "enos0/rx-1", &tpos);
	CHECK_MSG(x && !strcmp(after(x), "1") && th && !strcmp(after(th), "5") && pos < tpos &&
			  json_array_size(steps) == 2,
		  "steps: %s", json_dumps(steps, 0));
	json_decref(steps);
	json_decref(warn);
	json_decref(err);
	/* thread_cpus on a queue whose NAPI is not threaded, the entry not
	 * threading it: refused. */
	steps = plan(ctx, "{\"name\":\"t\",\"napi\":[{\"interface\":\"enos0\",\"queues\":\"2\",\"thread_cpus\":\"5\"}]}",
		     &warn, &err);
	CHECK_MSG(!steps && has_error(err, "$.napi[0].thread_cpus", "enos0 rx-2: thread_cpus needs threaded NAPI, and "
								  "its NAPI (8195) is not threaded"),
		  "%s", json_dumps(err, 0));
	json_decref(steps);
	json_decref(warn);
	json_decref(err);
	/* Without "queues": the device's file. */
	steps = plan(ctx, "{\"name\":\"t\",\"napi\":[{\"interface\":\"enos0\",\"threaded\":true}]}", &warn, &err);
	CHECK_MSG(step_find(steps, "napi_device", "enos0/threaded", NULL) && json_array_size(steps) == 1,
		  "steps: %s", json_dumps(steps, 0));
	json_decref(steps);
	json_decref(warn);
	json_decref(err);

	/* Applied: only NAPI 8194 (queue 1) gets a thread; rolled back, it
	 * has none and reads "disabled" again. */
	char *dev_before = tree_read(root, "sys/class/net/enos0/threaded");
	nt_txn_engine *e = NULL;
	int pid;
	char rel[64];
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e)
		return;
	json_t *profile = json_loads(PER_NAPI, 0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	nt_txn_outcome o = { 0 };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_MSG(!strcmp(json_string_value(json_object_get(o.doc, "status")) ?: "", "applied"), "%s",
		  json_dumps(o.doc, 0));
	int64_t id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	CHECK_STR(napi_state(8194, &pid), "enabled");
	CHECK(pid);
	snprintf(rel, sizeof(rel), "proc/%d/status", pid);
	char *status = tree_read(root, rel);
	CHECK_MSG(status && strstr(status, "Cpus_allowed_list:\t5\n"), "thread: %s", status ?: "(none)");
	free(status);
	for (int k = 8193; k < 8209; k++)
		if (k != 8194) {
			CHECK_STR(napi_state(k, &pid), "disabled");
			CHECK_MSG(!pid, "NAPI %d has a thread", k);
		}
	char *dev_now = tree_read(root, "sys/class/net/enos0/threaded");
	CHECK_MSG(dev_now && dev_before && !strcmp(dev_now, dev_before), "device threaded %s", dev_now ?: "?");
	free(dev_now);
	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
	CHECK_STR(napi_state(8194, &pid), "disabled");
	CHECK(!pid);
	json_decref(profile);
	nt_txn_engine_close(e);
	free(dev_before);
}

/* A kernel with napi-set but no per-NAPI threaded (6.13 to 6.16). */
static void no_per_napi_threaded(const nt_ctx *ctx)
{
	char cmd[512];
	json_t *warn, *err;
	snprintf(cmd, sizeof(cmd),
		 "python3 -c \"import json;p='%s/ethtool/enos0.json';d=json.load(open(p));"
		 "[a.pop('threaded',0) for a in d['netdev']['napis']];json.dump(d,open(p,'w'))\"",
		 root);
	CHECK_INT(system(cmd), 0);
	json_t *steps = plan(ctx, PER_NAPI, &warn, &err);
	CHECK(steps == NULL);
	CHECK_MSG(has_error(err, "$.napi[0].threaded", "Linux 6.17 or later") &&
			  has_error(err, "$.napi[0].threaded", "without 'queues' it goes to the device-wide "
								"/sys/class/net/enos0/threaded"),
		  "%s", json_dumps(err, 0));
	json_decref(steps);
	json_decref(warn);
	json_decref(err);
	/* Every queue: the device's file, said. */
	steps = plan(ctx, "{\"name\":\"t\",\"napi\":[{\"interface\":\"enos0\",\"queues\":\"0-15\",\"threaded\":true}]}",
		     &warn, &err);
	CHECK_MSG(step_find(steps, "napi_device", "enos0/threaded", NULL) && json_array_size(steps) == 1,
		  "steps: %s %s", json_dumps(steps, 0), json_dumps(err, 0));
	CHECK_MSG(warned(warn, "the kernel has no per-NAPI threaded (Linux 6.17)"), "%s", json_dumps(warn, 0));
	json_decref(steps);
	json_decref(warn);
	json_decref(err);
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
	per_napi_threaded(&ctx);
	no_per_napi_threaded(&ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
