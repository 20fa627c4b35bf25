/* SPDX-License-Identifier: Apache-2.0 */
/* The adaptive-coalescing (DIM) profiles (issue 41) over HTTP and the CLI,
 * against a real agent on a copy of the EPYC fixture whose enos0 keeps
 * the kernel's default EQE profiles (usec and pkts, as virtio_net does)
 * with adaptive RX on, and whose enos1 coalesces without profiles:
 *  - GET /v1/nics/enos0 and nettune nics enos0 show rx_profile and
 *    tx_profile, enos1's "not supported" with why;
 *  - 422s naming the JSON path (a wrong number of levels, a field the
 *    driver's levels lack, a NIC without profiles, and on 6.1 the release
 *    they need), with nothing applied and nothing recorded;
 *  - a transaction that sets rx_profile, read back, and its rollback
 *    leaving enos0's document byte for byte as it was;
 *  - GET /v1/diagnostics: dim-profile-default once a profile named
 *    "latency" is in effect, its source the transaction, and gone once
 *    its fix is applied. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"

#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

static char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8];

#define EQE_RX "[{\"usec\":1,\"pkts\":256},{\"usec\":8,\"pkts\":256},{\"usec\":64,\"pkts\":256},{\"usec\":128,\"pkts\":256},{\"usec\":256,\"pkts\":256}]"
#define EQE_TX "[{\"usec\":1,\"pkts\":128},{\"usec\":8,\"pkts\":128},{\"usec\":32,\"pkts\":128},{\"usec\":64,\"pkts\":128},{\"usec\":128,\"pkts\":128}]"
#define LATENCY_RX "[{\"usec\":1},{\"usec\":8},{\"usec\":8},{\"usec\":8},{\"usec\":8}]"

/* IFACE's "coalesce" as TEXT, the document written with a two-space
 * indent and a newline, so that a rollback must give back those bytes. */
static void give(const char *iface, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/ethtool/%s.json", root, iface);
	json_t *doc = json_load_file(path, 0, NULL), *c = json_loads(text, 0, NULL);
	CHECK(doc && c);
	if (doc && c) {
		json_object_set(doc, "coalesce", c);
		tu_write_doc(path, doc);
	}
	json_decref(doc);
	json_decref(c);
}

static json_t *param(json_t *nic, const char *name)
{
	return json_object_get(json_object_get(nic, "coalesce_params"), name);
}

static void test_cli(void)
{
	char cmd[PATH_MAX * 2], out[16384];
	snprintf(cmd, sizeof(cmd), "'%s' nics enos0 --root '%s'", NT_BIN, root);
	FILE *f = popen(cmd, "r");
	size_t n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = '\0';
	CHECK_MSG(f && pclose(f) == 0, "%s failed", cmd);
	CHECK_MSG(strstr(out, "\n  rx_profile           1/256 8/256 64/256 128/256 256/256 (usec/pkts)\n") != NULL,
		  "nics output:\n%s", out);
	CHECK_MSG(strstr(out, "\n  tx_profile           1/128 8/128 32/128 64/128 128/128 (usec/pkts)\n") != NULL,
		  "nics output:\n%s", out);
}

static void test_report(nt_agent *a)
{
	json_t *n = tu_get(a, "/v1/nics/enos0");
	json_t *rx = param(n, "rx_profile"), *want = json_loads(EQE_RX, 0, NULL);
	CHECK(json_is_true(json_object_get(rx, "supported")));
	CHECK(json_equal(json_object_get(rx, "value"), want));
	json_decref(want);
	json_decref(n);
	n = tu_get(a, "/v1/nics/enos1");
	CHECK_STR(tu_str(param(n, "rx_profile"), "reason"), "the driver does not report it");
	json_decref(n);
}

static void test_refusals(nt_agent *a)
{
	const char *shortp = "{\"profile\":{\"name\":\"short\",\"coalesce\":[{\"interface\":\"enos0\","
			     "\"rx_profile\":[{\"usec\":1},{\"usec\":8}]}]}}";
	const char *comps = "{\"profile\":{\"name\":\"comps\",\"coalesce\":[{\"interface\":\"enos0\","
			    "\"rx_profile\":[{\"comps\":4},{},{},{},{}]}]}}";
	const char *nodim = "{\"profile\":{\"name\":\"nodim\",\"coalesce\":[{\"interface\":\"enos1\","
			    "\"rx_profile\":" LATENCY_RX "}]}}";
	json_t *p = tu_post(a, "/v1/transactions", shortp, 422);
	CHECK(tu_error_at(p, "$.coalesce[0].rx_profile", "must list the 5 levels"));
	json_decref(p);
	p = tu_post(a, "/v1/transactions", comps, 422);
	CHECK(tu_error_at(p, "$.coalesce[0].rx_profile", "enos0 does not support comps in its rx_profile"));
	json_decref(p);
	p = tu_post(a, "/v1/transactions", nodim, 422);
	CHECK(tu_error_at(p, "$.coalesce[0].rx_profile",
		       "enos1 has no adaptive-coalescing profile to set (rx_profile): the driver does not report it"));
	json_decref(p);
	tu_put(root, "proc/sys/kernel/osrelease", "6.1.0-27-amd64");
	p = tu_post(a, "/v1/plan", nodim, 422);
	CHECK(tu_error_at(p, "$.coalesce[0].rx_profile", "needs Linux 6.11 or later (this kernel is 6.1.0-27-amd64)"));
	json_decref(p);
	tu_put(root, "proc/sys/kernel/osrelease", "7.3.4+deb13-amd64");
	CHECK_MSG(tu_sh("diff -r '%s/snap/ethtool' '%s/ethtool' >&2", dir, root) == 0,
		  "an ethtool document changed under a refused profile");
	json_t *h = tu_get(a, "/v1/transactions");
	json_t *items = json_is_array(h) ? h : json_object_get(h, "transactions");
	CHECK_INT(json_array_size(items), 0);
	json_decref(h);
}

static void test_apply_rollback(nt_agent *a)
{
	json_t *t = tu_post(a, "/v1/transactions",
			    "{\"profile\":{\"name\":\"dim\",\"coalesce\":[{\"interface\":\"enos0\",\"rx_profile\":" LATENCY_RX
			    "}]}}",
			    201);
	CHECK_STR(tu_str(t, "status"), "applied");
	json_int_t id = json_integer_value(json_object_get(t, "id"));
	json_t *s = json_array_get(json_object_get(t, "steps"), 0);
	CHECK_INT(json_array_size(json_object_get(t, "steps")), 1);
	CHECK_STR(tu_str(s, "kind"), "coalesce_rx_profile");
	CHECK_STR(tu_str(s, "before"), "1/256/-,8/256/-,64/256/-,128/256/-,256/256/-");
	CHECK_STR(tu_str(s, "after"), "1/256/-,8/256/-,8/256/-,8/256/-,8/256/-");
	json_decref(t);
	json_t *n = tu_get(a, "/v1/nics/enos0");
	CHECK_INT(json_integer_value(json_object_get(json_array_get(json_object_get(param(n, "rx_profile"), "value"), 4),
						     "usec")),
		  8);
	json_decref(n);
	tu_rollback_restores(a, (long long)id, dir, root, "ethtool/enos0.json");
}

static const json_t *dim_finding(json_t *d)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(d, "findings"), i, f)
		if (!strcmp(tu_str(f, "id"), "dim-profile-default") && !strcmp(tu_str(f, "subject"), "enos0"))
			return f;
	return NULL;
}

static void test_finding(nt_agent *a)
{
	json_t *d = tu_get(a, "/v1/diagnostics");
	CHECK(dim_finding(d) == NULL); /* nothing asked for latency yet */
	json_decref(d);
	/* A profile named "latency" takes effect (a sysctl of its own). */
	json_t *t = tu_post(a, "/v1/transactions",
			    "{\"profile\":{\"name\":\"latency\",\"sysctl\":{\"net.core.busy_read\":\"50\"}}}", 201);
	char source[64];
	snprintf(source, sizeof(source), "transaction %lld", (long long)json_integer_value(json_object_get(t, "id")));
	json_decref(t);
	d = tu_get(a, "/v1/diagnostics");
	const json_t *f = dim_finding(d);
	CHECK(f != NULL);
	json_t *fix = NULL;
	if (f) {
		CHECK_STR(tu_str(json_object_get(f, "evidence"), "source"), source);
		fix = json_incref(json_object_get(f, "fix"));
	}
	json_decref(d);
	if (!fix)
		return;
	/* Its fix applied: the profile is no longer the default. */
	json_t *body = json_pack("{s:O}", "profile", fix);
	json_object_set_new(json_object_get(body, "profile"), "name", json_string("dim-fix"));
	char *text = json_dumps(body, JSON_COMPACT);
	t = tu_post(a, "/v1/transactions", text, 201);
	CHECK_STR(tu_str(t, "status"), "applied");
	json_decref(t);
	free(text);
	json_decref(body);
	json_decref(fix);
	d = tu_get(a, "/v1/diagnostics");
	CHECK(dim_finding(d) == NULL);
	json_decref(d);
}

int main(void)
{
	nt_agent a;
	if (!tu_fixture_copy(EPYC, dir, sizeof(dir), root, sizeof(root), state, sizeof(state)))
		TEST_MAIN_END();
	give("enos0", "{\"rx_usecs\": 8, \"tx_usecs\": 8, \"adaptive_rx\": 1, \"adaptive_tx\": 0, \"rx_profile\": " EQE_RX
		      ", \"tx_profile\": " EQE_TX "}");
	give("enos1", "{\"rx_usecs\": 8, \"tx_usecs\": 8, \"adaptive_rx\": 1, \"adaptive_tx\": 0}");
	tu_put(root, "proc/sys/kernel/osrelease", "7.3.4+deb13-amd64");
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	test_cli();
	if (nt_agent_start(&a, root, state, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
	} else {
		test_report(&a);
		test_refusals(&a);
		test_apply_rollback(&a);
		test_finding(&a);
		nt_agent_stop(&a);
	}
	tu_sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
