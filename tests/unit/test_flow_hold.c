/* SPDX-License-Identifier: Apache-2.0 */
/* The desired state holding flow rules (agent/drift.c, settings/flows.c),
 * on a copy of the EPYC tree whose enos2 has a rule table in the fixture
 * (kernel/fixture.c), with the watcher checked by hand (no thread):
 *   - a rule of ours deleted behind the agent's back is repaired;
 *   - a location of ours filled with another program's rule is
 *     "contested", never overwritten, named with the rule found there in
 *     the drift report and the diagnosis's `drift` finding, and the rest
 *     of the desired state (another rule, a sysctl) is still repaired,
 *     the desired state never "invalid";
 *   - a rule of ours changed in place is contested the same way;
 *   - once the other program's rule is gone, the location is ours again
 *     and repaired. */
#include "agent/drift.h"
#include "diagnose/diagnose.h"
#include "engine/txn.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/flows.h"
#include "store/store.h"
#include "harness.h"
#include "engine_util.h"
#include "tree_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RULES "ethtool/enos2.json"
#define RMEM "proc/sys/net/core/rmem_max"
#define PROFILE                                                                                     \
	"{\"name\":\"hold\",\"sysctl\":{\"net.core.rmem_max\":\"16777216\"},"                      \
	"\"flows\":[{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_ports\":\"5002-5003\","  \
	"\"queues\":\"1-2\"}]}"

static int ncontested;

static void on_log(void *ud, const json_t *ev)
{
	(void)ud;
	if (!strcmp(json_string_value(json_object_get(ev, "event")), "drift_contested"))
		ncontested++;
}

/* Put the table's rules: "LOC RULE" pairs, NULL-terminated. */
static void put_rules(const char *root, const char *const *rules)
{
	char text[1024];
	int n = snprintf(text, sizeof(text),
			 "{\"channels\": {\"combined\": 16, \"combined_max\": 63}, \"flows\": {\"size\": 1024, "
			 "\"rules\": [");
	for (int i = 0; rules[i]; i += 2)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%s{\"location\": %s, \"rule\": \"%s\"}",
			      i ? ", " : "", rules[i], rules[i + 1]);
	snprintf(text + n, sizeof(text) - (size_t)n, "]}}");
	tree_write(root, RULES, text);
}

/* The rule at LOC of enos2 as text ("none" when empty). */
static const char *rule_at(const nt_ctx *ctx, unsigned loc)
{
	static char text[NT_FLOW_TEXT_MAX];
	nt_flow_rule r;
	if (nt_flows_get(ctx, "enos2", loc, &r) < 0)
		return "(unreadable)";
	if (nt_flow_rule_format(&r, text, sizeof(text)) < 0)
		return "(no room)";
	return text;
}

/* The report's target flow TARGET (borrowed from REPORT), or NULL. */
static json_t *target(json_t *report, const char *tgt)
{
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(report, "targets"), i, t)
		if (!strcmp(json_string_value(json_object_get(t, "kind")), "flow") &&
		    !strcmp(json_string_value(json_object_get(t, "target")), tgt))
			return t;
	return NULL;
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "(none)";
}

/* Whether DIAG has a `drift` finding whose message has WHAT. */
static bool drift_finding(const json_t *diag, const char *what)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(diag, "findings"), i, f)
		if (!strcmp(str(f, "id"), "drift") && strstr(str(f, "message"), what))
			return true;
	return false;
}

static void test_hold(const nt_ctx *ctx, const char *root, nt_txn_engine *e, nt_store *store)
{
	nt_txn_outcome o = { 0 };
	nt_drift *d = NULL;
	json_t *rep = NULL, *profile = json_loads(PROFILE, 0, NULL);
	char buf[64];

	put_rules(root, (const char *const[]){ NULL });
	tree_write(root, RMEM, "212992\n");
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "", .persist = true };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(str(o.doc, "status"), "applied");
	int64_t applied = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	CHECK_STR(rule_at(ctx, 0), "tcp4 dst-port 5002 queue 1");
	CHECK_STR(rule_at(ctx, 1), "tcp4 dst-port 5003 queue 2");

	nt_drift_config cfg = { .policy = NT_DRIFT_REPAIR };
	CHECK_INT(nt_drift_new(ctx, e, store, &cfg, on_log, NULL, false, &d), 0);
	if (!d)
		goto out;
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	rep = nt_drift_report(d);
	CHECK_STR(str(rep, "status"), "in_sync");
	json_decref(rep);

	/* Deleted (ethtool -U enos2 delete 1): repaired. */
	put_rules(root, (const char *const[]){ "0", "tcp4 dst-port 5002 queue 1", NULL });
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	CHECK_STR(rule_at(ctx, 1), "tcp4 dst-port 5003 queue 2");
	rep = nt_drift_report(d);
	CHECK_STR(str(rep, "status"), "in_sync");
	json_decref(rep);

	/* Location 0 taken by another program's rule, location 1 deleted and
	 * the sysctl changed at the same time: the rule found at 0 stays, the
	 * rest is held. */
	put_rules(root, (const char *const[]){ "0", "udp4 dst-port 53 drop", NULL });
	tree_write(root, RMEM, "4096\n");
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	CHECK_STR(rule_at(ctx, 0), "udp4 dst-port 53 drop");
	CHECK_STR(rule_at(ctx, 1), "tcp4 dst-port 5003 queue 2");
	char *rm = tree_read(root, RMEM);
	CHECK_MSG(rm && !strncmp(rm, "16777216", 8), "rmem_max not repaired beside the taken rule: %s",
		  rm ? rm : "(unreadable)");
	free(rm);
	rep = nt_drift_report(d);
	CHECK_STR(str(rep, "status"), "drifted");
	CHECK_INT(json_array_size(json_object_get(rep, "errors")), 0);
	json_t *t = target(rep, "enos2/loc-0");
	CHECK_MSG(t != NULL, "enos2/loc-0 not in the drift report");
	CHECK_STR(str(t, "state"), "contested");
	CHECK(json_is_true(json_object_get(t, "taken")));
	CHECK_STR(str(t, "current"), "udp4 dst-port 53 drop");
	CHECK_STR(str(t, "desired"), "tcp4 dst-port 5002 queue 1");
	snprintf(buf, sizeof(buf), "after nettune's transaction %lld wrote it last", (long long)applied);
	CHECK_MSG(strstr(str(t, "culprit"), "another program put 'udp4 dst-port 53 drop' at flow enos2/loc-0") &&
			  strstr(str(t, "culprit"), buf),
		  "culprit: %s", str(t, "culprit"));
	CHECK(target(rep, "enos2/loc-1") == NULL);
	CHECK_INT(ncontested, 1);

	/* The diagnosis names it with the rule found there. */
	nt_topology *topo = NULL;
	CHECK_INT(nt_topology_read(ctx, &topo), 0);
	if (topo) {
		nt_diag_options opt = { 0 };
		json_t *diag = nt_diagnose(topo, &opt);
		CHECK_INT(nt_diagnose_add_drift(diag, rep), 0);
		CHECK_MSG(drift_finding(diag, "flow enos2/loc-0 holds another program's value (desired 'tcp4 "
					      "dst-port 5002 queue 1', now 'udp4 dst-port 53 drop')"),
			  "no drift finding naming the rule at enos2/loc-0");
		json_decref(diag);
		nt_topology_free(topo);
	}
	int64_t repair_txn = json_integer_value(json_object_get(rep, "last_repair_txn"));
	json_decref(rep);

	/* Checked again: still contested, not told again, no repair made. */
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	CHECK_STR(rule_at(ctx, 0), "udp4 dst-port 53 drop");
	rep = nt_drift_report(d);
	CHECK_STR(str(target(rep, "enos2/loc-0"), "state"), "contested");
	CHECK_INT(json_integer_value(json_object_get(rep, "last_repair_txn")), repair_txn);
	CHECK_INT(ncontested, 1);
	json_decref(rep);

	/* Ours changed in place (another queue): contested too, kept. */
	put_rules(root, (const char *const[]){ "0", "udp4 dst-port 53 drop", "1", "tcp4 dst-port 5003 queue 5", NULL });
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	CHECK_STR(rule_at(ctx, 1), "tcp4 dst-port 5003 queue 5");
	rep = nt_drift_report(d);
	t = target(rep, "enos2/loc-1");
	CHECK_STR(str(t, "state"), "contested");
	CHECK_STR(str(t, "current"), "tcp4 dst-port 5003 queue 5");
	CHECK_INT(ncontested, 2);
	json_decref(rep);

	/* The other rules deleted: the locations are ours again, repaired. */
	put_rules(root, (const char *const[]){ NULL });
	CHECK_INT(nt_drift_check(d, "drift"), 0);
	CHECK_STR(rule_at(ctx, 0), "tcp4 dst-port 5002 queue 1");
	CHECK_STR(rule_at(ctx, 1), "tcp4 dst-port 5003 queue 2");
	rep = nt_drift_report(d);
	CHECK_STR(str(rep, "status"), "in_sync");
	CHECK_INT(json_array_size(json_object_get(rep, "targets")), 0);
	json_decref(rep);
out:
	nt_drift_free(d);
	json_decref(profile);
}

int main(void)
{
	nt_t_engine h;
	if (nt_t_engine_open(&h, "epyc7713-2node-bond", "flowhold"))
		test_hold(&h.ctx, h.root, h.e, h.store);
	nt_t_engine_close(&h);
	TEST_MAIN_END();
}
