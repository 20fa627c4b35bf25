/* SPDX-License-Identifier: Apache-2.0 */
/* Flow rules (kernel/flows.c, settings/flows.c): a rule as text and as the
 * kernel's struct ethtool_rx_flow_spec, both ways; the flows[] section on
 * a copy of the EPYC tree whose mlx5 ports have a rule table in the
 * fixture: ports dealt to the queues whose IRQs the profile places on
 * CPUs 1-4, 422s with JSON paths (no table, a queue beyond the NIC's, a
 * malformed address, more rules than the table, a CPU no queue's IRQ is
 * placed on, a foreign rule in the way), and a transaction applied and
 * rolled back leaving the table as it was, a rule inserted by hand before
 * included; "replace" journals the foreign rule and rollback restores it. */
#include "diagnose/diagnose.h"
#include "engine/plan.h"
#include "engine/txn.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "kernel/flows.h"
#include "settings/setting.h"
#include "setting_util.h"
#include "harness.h"
#include "tree_files.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[64], state[64];

static const char *roundtrip(const char *text)
{
	static char out[NT_FLOW_TEXT_MAX];
	static char why[128];
	nt_flow_rule r;
	if (nt_flow_rule_parse(text, &r, why, sizeof(why)) < 0)
		return why;
	if (nt_flow_rule_format(&r, out, sizeof(out)) < 0)
		return "(no room)";
	return out;
}

static void test_text(void)
{
	CHECK_STR(roundtrip("tcp4 dst-port 5002 queue 1"), "tcp4 dst-port 5002 queue 1");
	/* Canonical order, prefixes for netmasks, masks in the kernel's sense. */
	CHECK_STR(roundtrip("udp4 dst-port 53 src-ip 10.1.0.0/255.255.0.0 drop"),
		  "udp4 src-ip 10.1.0.0/16 dst-port 53 drop");
	CHECK_STR(roundtrip("tcp4 dst-ip 10.0.0.1/255.0.255.0 src-port 80/0xff00 queue 3"),
		  "tcp4 dst-ip 10.0.0.1/255.0.255.0 src-port 80/0xff00 queue 3");
	CHECK_STR(roundtrip("tcp6 dst-ip 2001:db8::1 dst-port 5201 queue 7"), "tcp6 dst-ip 2001:db8::1 dst-port 5201 queue 7");
	CHECK_STR(roundtrip("udp6 src-ip 2001:db8::/32 queue 0"), "udp6 src-ip 2001:db8::/32 queue 0");
	CHECK_STR(roundtrip("none"), "none");
	CHECK_STR(roundtrip("tcp4 dst-port 70000 queue 1"), "'70000' is not a port (0-65535) with an optional mask");
	CHECK_STR(roundtrip("tcp4 dst-ip 10.0.0.300 queue 1"), "'10.0.0.300' is not an IPv4 address with an optional mask");
	CHECK_STR(roundtrip("tcp4 dst-ip 2001:db8::1 queue 1"), "'2001:db8::1' is not an IPv4 address with an optional mask");
	CHECK_STR(roundtrip("sctp4 queue 1"), "'sctp4' is not a flow type (tcp4, udp4, tcp6, udp6)");
	CHECK_STR(roundtrip("tcp4 dst-port 1"), "no action ('queue N' or 'drop')");
	CHECK_STR(roundtrip("tcp4 drop queue 1"), "'queue' after the action");
	CHECK_STR(roundtrip("tcp4 dst-port 1 dst-port 2 drop"), "'dst-port' given twice or without a value");

	/* To the kernel's struct and back. */
	nt_flow_rule r, back;
	struct ethtool_rx_flow_spec fs;
	CHECK_INT(nt_flow_rule_parse("tcp4 src-ip 192.168.1.0/24 dst-port 5003 queue 2", &r, NULL, 0), 0);
	r.location = 9;
	CHECK_INT(nt_flow_spec_encode(&r, &fs), 0);
	CHECK_INT(fs.flow_type, TCP_V4_FLOW);
	CHECK_INT(fs.location, 9);
	CHECK_INT(fs.ring_cookie, 2);
	CHECK_INT(fs.h_u.tcp_ip4_spec.pdst, htons(5003));
	CHECK_INT(fs.m_u.tcp_ip4_spec.pdst, 0xffff);
	CHECK_INT(fs.m_u.tcp_ip4_spec.psrc, 0);
	CHECK_INT(ntohl(fs.m_u.tcp_ip4_spec.ip4src), 0xffffff00);
	nt_flow_spec_decode(&fs, 0, &back);
	CHECK(nt_flow_rule_equal(&r, &back) && back.location == 9);
	CHECK_INT(nt_flow_rule_parse("udp6 dst-ip 2001:db8::5 drop", &r, NULL, 0), 0);
	CHECK_INT(nt_flow_spec_encode(&r, &fs), 0);
	CHECK(fs.flow_type == UDP_V6_FLOW && fs.ring_cookie == RX_CLS_FLOW_DISC);
	nt_flow_spec_decode(&fs, 0, &back);
	CHECK(nt_flow_rule_equal(&r, &back));
	/* A VLAN match is not modelled: reported as other, never written. */
	fs.flow_type |= FLOW_EXT;
	fs.m_ext.vlan_tci = htons(0xfff);
	nt_flow_spec_decode(&fs, 0, &back);
	CHECK_INT(back.type, NT_FLOW_OTHER);
	CHECK(nt_flow_spec_encode(&back, &fs) < 0);

	const nt_setting_kind *k = nt_setting_find("flow");
	CHECK(k != NULL);
	if (!k)
		return;
	CHECK(nt_t_equal(k, "tcp4 dst-port 5002 queue 1", "tcp4 dst-port 5002 queue 1 replace"));
	CHECK(!nt_t_equal(k, "tcp4 dst-port 5002 queue 1", "tcp4 dst-port 5002 queue 2"));
	CHECK(nt_t_equal(k, "none", "none"));
	CHECK(k->order > nt_setting_irq_affinity.order && k->order < nt_setting_rings.order);
}

static int plan_of(const nt_ctx *ctx, const nt_topology *t, const char *text, nt_plan *plan, json_t **errors)
{
	json_t *p = json_loads(text, 0, NULL);
	CHECK_MSG(p != NULL, "%s", text);
	*errors = json_array();
	int r = nt_plan_build(ctx, NULL, t, p, plan, *errors);
	json_decref(p);
	return r;
}

/* The error at PATH says WHAT (a part of it). */
static void check_error(const json_t *errors, const char *path, const char *what)
{
	size_t i;
	json_t *e;
	json_array_foreach(errors, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "path")), path) &&
		    strstr(json_string_value(json_object_get(e, "message")), what))
			return;
	char *s = json_dumps(errors, 0);
	CHECK_MSG(0, "no error at %s with '%s' in %s", path, what, s);
	free(s);
}

#define RECIPE                                                                                      \
	"{\"name\":\"recipe\",\"irq_affinity\":[{\"interface\":\"enos2\",\"cpus\":\"1-4\"}],"      \
	"\"flows\":[{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_ports\":\"5002-5005\"," \
	"\"cpus\":\"1-4\"}]}"

static const nt_step *step(const nt_plan *plan, const char *kind, const char *target)
{
	for (int i = 0; i < plan->nsteps; i++)
		if (!strcmp(plan->steps[i].kind->name, kind) && !strcmp(plan->steps[i].target, target))
			return &plan->steps[i];
	return NULL;
}

static void test_plan(const nt_ctx *ctx, const nt_topology *t)
{
	nt_plan plan;
	json_t *errors;
	char target[32], irq[16];
	int r = plan_of(ctx, t, RECIPE, &plan, &errors);
	CHECK_INT(r, 0);
	const nt_setting_kind *k = nt_setting_find("flow");
	for (int n = 0; r == 0 && n < 4; n++) {
		snprintf(target, sizeof(target), "enos2/loc-%d", n);
		const nt_step *s = step(&plan, "flow", target);
		CHECK_MSG(s != NULL, "no step for %s", target);
		if (!s)
			continue;
		CHECK_STR(nt_t_str(k, &s->before), "none");
		unsigned port, q;
		CHECK_INT(sscanf(nt_t_str(k, &s->after), "tcp4 dst-port %u queue %u", &port, &q), 2);
		CHECK_INT(port, 5002 + n);
		/* enos2's mlx5_comp<Q> is IRQ 141 + Q: placed on CPU n + 1. */
		snprintf(irq, sizeof(irq), "%u", 141 + q);
		const nt_step *a = step(&plan, "irq_affinity", irq);
		CHECK_MSG(a && !strcmp(nt_t_str(&nt_setting_irq_affinity, &a->after), (char[]){ (char)('1' + n), 0 }),
			  "queue %u of port %u: IRQ %s goes to %s, not CPU %d", q, port, irq,
			  a ? nt_t_str(&nt_setting_irq_affinity, &a->after) : "(no step)", n + 1);
	}
	if (r == 0)
		nt_plan_free(&plan);
	json_decref(errors);

	r = plan_of(ctx, t,
		    "{\"name\":\"x\",\"flows\":[{\"interface\":\"enos2\",\"flow_type\":\"tcp4\",\"dst_port\":1,\"queue\":16},"
		    "{\"interface\":\"enos2\",\"flow_type\":\"udp4\",\"dst_ip\":\"10.0.0.256\",\"action\":\"drop\"},"
		    "{\"interface\":\"enos1\",\"flow_type\":\"tcp4\",\"queue\":0},"
		    "{\"interface\":\"enos0\",\"flow_type\":\"tcp4\",\"dst_ports\":\"1-3\",\"queues\":\"0-1\"},"
		    "{\"interface\":\"enos2\",\"flow_type\":\"sctp\",\"queue\":0},"
		    "{\"interface\":\"enos3\",\"flow_type\":\"tcp4\",\"dst_port\":9,\"cpu\":5}]}",
		    &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	check_error(errors, "$.flows[0].queue", "queue 16 is beyond enos2's 16 RX queues");
	check_error(errors, "$.flows[1].dst_ip", "'10.0.0.256' is not an IPv4 address");
	check_error(errors, "$.flows[2].interface", "enos1 has no flow rule table");
	check_error(errors, "$.flows[3]", "enos0's rules would take 3 locations; its rule table holds 2");
	check_error(errors, "$.flows[4].flow_type", "unknown flow_type 'sctp'");
	json_decref(errors);
	/* Form and host valid; "cpu" 5 is where no IRQ of enos3 is placed. */
	r = plan_of(ctx, t,
		    "{\"name\":\"x\",\"flows\":[{\"interface\":\"enos3\",\"flow_type\":\"tcp4\",\"dst_port\":9,\"cpu\":5}]}",
		    &plan, &errors);
	CHECK_INT(r, NT_EINVALID);
	check_error(errors, "$.flows[0]", "no RX queue's IRQ is placed on CPU 5 alone");
	json_decref(errors);
}

static const char *const RULES = "ethtool/enos2.json";

static void test_transaction(const nt_ctx *ctx)
{
	nt_txn_engine *e = NULL;
	nt_txn_outcome o = { 0 };
	/* A rule put there by hand before (ethtool -U ... loc 1000). */
	tree_write(root, RULES,
		   "{\"channels\": {\"combined\": 16, \"combined_max\": 63}, \"flows\": {\"size\": 1024, \"rules\": "
		   "[{\"location\": 1000, \"rule\": \"udp4 dst-port 53 drop\"}]}, "
		   "\"features\": {\"rx-ntuple-filter\": {\"on\": false, \"fixed\": false}}}");
	char *orig = tree_read(root, RULES);
	CHECK_INT(nt_txn_engine_open(ctx, state, &e), 0);
	if (!e)
		goto out;
	json_t *profile = json_loads(RECIPE, 0, NULL);
	nt_txn_request req = { .profile = profile, .client = "test", .identity = "" };
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	char *doc = json_dumps(o.doc, 0);
	CHECK_MSG(doc && strstr(doc, "enos2: 1 flow rule this profile does not ask for, left as they are (location 1000 "
				     "'udp4 dst-port 53 drop')"),
		  "no warning of the hand-made rule: %s", doc ? doc : "");
	free(doc);
	int64_t id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	nt_flow_table tab;
	CHECK_INT(nt_flows_read(ctx, "enos2", &tab), 0);
	CHECK_INT(tab.n, 5);
	CHECK(tab.n == 5 && tab.rules[0].location == 0 && tab.rules[0].dst_port == 5002 &&
	      tab.rules[3].dst_port == 5005 && tab.rules[4].location == 1000 && tab.rules[4].drop);
	nt_flow_table_free(&tab);
	/* ntuple was off: turned on by a step of the same transaction. */
	const nt_setting_kind *fk = nt_setting_find("feature");
	nt_value fv;
	CHECK(fk && fk->read(ctx, NULL, "enos2/rx-ntuple-filter", &fv) == 0 && !strcmp(nt_t_str(fk, &fv), "on"));
	nt_txn_request back = { .client = "test", .identity = "" };
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	CHECK_STR(json_string_value(json_object_get(o.doc, "status")), "applied");
	nt_txn_outcome_free(&o);
	CHECK_INT(nt_flows_read(ctx, "enos2", &tab), 0);
	CHECK_MSG(tab.n == 1 && tab.rules[0].location == 1000, "%d rules after the rollback", tab.n);
	nt_flow_table_free(&tab);
	CHECK(fk && fk->read(ctx, NULL, "enos2/rx-ntuple-filter", &fv) == 0 && !strcmp(nt_t_str(fk, &fv), "off"));

	/* A rule of someone else's at location 0: refused, then replaced with
	 * "replace" and put back by the rollback. */
	tree_write(root, RULES,
		   "{\"channels\": {\"combined\": 16}, \"flows\": {\"size\": 1024, \"rules\": "
		   "[{\"location\": 0, \"rule\": \"tcp4 dst-port 22 queue 0\"}]}}");
	json_decref(profile);
	profile = json_loads("{\"name\":\"r\",\"flows\":[{\"interface\":\"enos2\",\"flow_type\":\"tcp4\","
			     "\"dst_port\":5002,\"queue\":3}]}",
			     0, NULL);
	req.profile = profile;
	int r = nt_txn_apply(e, &req, &o);
	CHECK_INT(r, NT_EINVALID);
	if (o.errors)
		check_error(o.errors, "$.flows[0]", "location 0 of enos2 holds a rule nettune was not asked for "
						     "('tcp4 dst-port 22 queue 0'); not overwritten");
	nt_txn_outcome_free(&o);
	json_object_set_new(json_array_get(json_object_get(profile, "flows"), 0), "replace", json_true());
	CHECK_INT(nt_txn_apply(e, &req, &o), 0);
	id = json_integer_value(json_object_get(o.doc, "id"));
	nt_txn_outcome_free(&o);
	nt_flow_rule fr;
	CHECK_INT(nt_flows_get(ctx, "enos2", 0, &fr), 0);
	CHECK(fr.dst_port == 5002 && fr.queue == 3);
	CHECK_INT(nt_txn_rollback(e, id, false, &back, &o), 0);
	nt_txn_outcome_free(&o);
	CHECK_INT(nt_flows_get(ctx, "enos2", 0, &fr), 0);
	CHECK_MSG(fr.dst_port == 22 && fr.queue == 0, "location 0 after the rollback: port %u queue %u", fr.dst_port,
		  fr.queue);
	json_decref(profile);

	/* The driver's refusal at apply comes back with its reason. */
	const nt_setting_kind *k = nt_setting_find("flow");
	nt_value v = nt_t_val(k, "tcp4 dst-port 1 queue 99");
	char err[256] = "";
	CHECK_INT(k->apply(ctx, NULL, "enos2/loc-5", &v, err, sizeof(err)), -EINVAL);
	CHECK_MSG(strstr(err, "enos2/loc-5 flow rule:") && strstr(err, "queue 99 is beyond the 16 RX rings"), "%s", err);
	v = nt_t_val(k, "none");
	CHECK_INT(k->apply(ctx, NULL, "enos2/loc-5", &v, err, sizeof(err)), 0);
out:
	nt_txn_engine_close(e);
	free(orig);
}

static bool has_finding(const json_t *doc, const char *id, const char *what)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(doc, "findings"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "id")), id) &&
		    strstr(json_string_value(json_object_get(f, "message")), what))
			return true;
	return false;
}

/* enos2 (node 1): queue 0's IRQ 141 on CPU 96 (node 1), queue 11's IRQ 152
 * on CPU 1 (node 0). */
static void test_diagnose(const nt_ctx *ctx)
{
	nt_topology *t = NULL;
	tree_write(root, RULES,
		   "{\"channels\": {\"combined\": 16}, \"flows\": {\"size\": 1024, \"rules\": ["
		   "{\"location\": 0, \"rule\": \"tcp4 dst-port 5002 queue 0\"},"
		   "{\"location\": 1, \"rule\": \"tcp4 dst-ip 10.0.0.1 queue 1\"},"
		   "{\"location\": 2, \"rule\": \"udp4 dst-port 53 queue 11\"},"
		   "{\"location\": 3, \"rule\": \"udp4 dst-port 54 queue 11\"}]}}");
	CHECK_INT(nt_topology_read(ctx, &t), 0);
	if (!t)
		return;
	json_t *reserved = json_pack("{s:s}", "enos2", "96-97");
	nt_diag_options opt = { .reserved = reserved };
	json_t *doc = nt_diagnose(t, &opt);
	CHECK(has_finding(doc, "flow-queue-remote", "location 2 ('udp4 dst-port 53 queue 11') steers to queue 11, "
						     "whose IRQ 152 is served by CPU 1, off the NIC's node"));
	CHECK(!has_finding(doc, "flow-queue-remote", "location 0"));
	CHECK(has_finding(doc, "flow-queue-reserved", "location 0 ('tcp4 dst-port 5002 queue 0') steers to queue 0, "
						       "whose IRQ 141 is served by CPU 96, reserved"));
	CHECK(has_finding(doc, "flow-rules-overlap", "locations 0 ('tcp4 dst-port 5002 queue 0') and 1"));
	/* Different ports, or the same queue: no overlap. */
	CHECK(!has_finding(doc, "flow-rules-overlap", "locations 2"));
	json_decref(doc);
	json_decref(reserved);
	nt_topology_free(t);
}

int main(void)
{
	char cmd[512];
	nt_ctx ctx;
	nt_topology *t = NULL;

	test_text();
	snprintf(root, sizeof(root), "/tmp/nt-flows-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/nt-flows-state-XXXXXX");
	CHECK(mkdtemp(root) != NULL && mkdtemp(state) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	/* enos1 without a rule table; enos0's of two locations. */
	tree_write(root, "ethtool/enos1.json", "{\"channels\": {\"combined\": 16, \"combined_max\": 63}}");
	tree_write(root, "ethtool/enos0.json",
		   "{\"channels\": {\"combined\": 16, \"combined_max\": 63}, \"flows\": {\"size\": 2}}");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (t) {
		test_plan(&ctx, t);
		nt_topology_free(t);
		test_transaction(&ctx);
		test_diagnose(&ctx);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, state);
	system(cmd);
	TEST_MAIN_END();
}
