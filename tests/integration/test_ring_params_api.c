/* SPDX-License-Identifier: Apache-2.0 */
/* Ring and coalescing parameters only ethtool netlink reaches (issue 41,
 * item 2) over HTTP, against a real agent on a copy of the EPYC fixture
 * whose enos0 reports hds-thresh (max 1024) as 7.3's netdevsim does and
 * CQE mode in its coalescing:
 *  - GET /v1/nics/enos0 (and nettune nics enos0) reports each field,
 *    supported or not with why; GET /v1/topology carries none of them;
 *  - 422s naming the JSON path (hds_thresh above its maximum, a field the
 *    driver does not report, and on 6.1 the release it needs), with
 *    nothing applied: the ethtool documents byte for byte as before, no
 *    transaction recorded;
 *  - a transaction setting tcp_data_split, hds_thresh and cqe_mode_rx,
 *    shown in the report, and its rollback leaving enos0's document byte
 *    for byte as it was. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"

#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

static char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8];

/* enos0's document with hds-thresh and CQE mode, written as the fixture
 * writes a document after a change (two-space indent and a newline), so
 * that a rollback must give back the very bytes. */
static void give_enos0(void)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/ethtool/enos0.json", root);
	json_t *doc = json_load_file(path, 0, NULL);
	CHECK(doc != NULL);
	if (!doc)
		return;
	json_t *rings = json_object_get(doc, "rings");
	json_object_set_new(rings, "hds_thresh", json_integer(0));
	json_object_set_new(rings, "hds_thresh_max", json_integer(1024));
	json_object_set_new(doc, "coalesce",
			    json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "rx_usecs", 8, "tx_usecs", 8, "rx_frames", 0,
				      "tx_frames", 0, "adaptive_rx", 1, "adaptive_tx", 0, "cqe_mode_rx", 0, "cqe_mode_tx",
				      0));
	tu_write_doc(path, doc);
	json_decref(doc);
}

static json_t *field(json_t *nic, const char *obj, const char *name)
{
	return json_object_get(json_object_get(nic, obj), name);
}

static void test_report(nt_agent *a)
{
	json_t *n = tu_get(a, "/v1/nics/enos0");
	json_t *hds = field(n, "ring_params", "hds_thresh");
	CHECK(json_is_true(json_object_get(hds, "supported")));
	CHECK_INT(json_integer_value(json_object_get(hds, "value")), 0);
	CHECK_INT(json_integer_value(json_object_get(hds, "max")), 1024);
	CHECK_STR(tu_str(field(n, "ring_params", "tcp_data_split"), "value"), "off");
	CHECK(json_is_false(json_object_get(field(n, "ring_params", "rx_buf_len"), "supported")));
	CHECK_STR(tu_str(field(n, "ring_params", "rx_buf_len"), "reason"), "the driver does not report it");
	CHECK(json_is_false(json_object_get(field(n, "coalesce_params", "cqe_mode_rx"), "value")));
	CHECK(json_is_false(json_object_get(field(n, "coalesce_params", "tx_aggr_max_bytes"), "supported")));
	json_decref(n);
	/* enos1, as generated for 6.12 and on 7.3 here: no hds-thresh from
	 * its driver; no coalescing at all. */
	n = tu_get(a, "/v1/nics/enos1");
	CHECK_STR(tu_str(field(n, "ring_params", "hds_thresh"), "reason"), "the driver does not report it");
	CHECK(json_is_null(json_object_get(n, "coalesce_params")));
	json_decref(n);

	json_t *t = tu_get(a, "/v1/topology");
	char *text = t ? json_dumps(t, JSON_COMPACT) : NULL;
	CHECK_MSG(text && !strstr(text, "ring_params") && !strstr(text, "hds_thresh") && !strstr(text, "cqe_mode"),
		  "GET /v1/topology carries the netlink-only parameters");
	free(text);
	json_decref(t);
}

/* nettune nics enos0 on the same root: one line a parameter. */
static void test_cli(void)
{
	char cmd[PATH_MAX * 2], out[16384];
	snprintf(cmd, sizeof(cmd), "'%s' nics enos0 --root '%s'", NT_BIN, root);
	FILE *f = popen(cmd, "r");
	size_t n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = '\0';
	CHECK_MSG(f && pclose(f) == 0, "%s failed", cmd);
	CHECK_MSG(strstr(out, "\nring parameters (ethtool netlink):\n") != NULL, "nics output:\n%s", out);
	CHECK_MSG(strstr(out, "  tcp_data_split       off\n") != NULL, "nics output:\n%s", out);
	CHECK_MSG(strstr(out, "  hds_thresh           0 (max 1024)\n") != NULL, "nics output:\n%s", out);
	CHECK_MSG(strstr(out, "  rx_buf_len           not supported: the driver does not report it\n") != NULL,
		  "nics output:\n%s", out);
	CHECK_MSG(strstr(out, "\ncoalescing parameters (ethtool netlink):\n  cqe_mode_rx          off\n") != NULL,
		  "nics output:\n%s", out);
}

static void test_refusals(nt_agent *a)
{
	const char *over = "{\"profile\":{\"name\":\"over\",\"rings\":[{\"interface\":\"enos0\",\"tcp_data_split\":\"on\","
			   "\"hds_thresh\":2048}]}}";
	json_t *p = tu_post(a, "/v1/plan", over, 422);
	CHECK(tu_error_at(p, "$.rings[0].hds_thresh", "hds_thresh 2048 is above enos0's maximum 1024"));
	json_decref(p);
	p = tu_post(a, "/v1/transactions", over, 422);
	CHECK(tu_error_at(p, "$.rings[0].hds_thresh", "maximum 1024"));
	json_decref(p);
	/* A field the driver does not report: the rings' at the field's path
	 * (validation), the coalescing one at its entry's (the plan's check,
	 * made once the profile is valid). */
	const char *nohds = "{\"profile\":{\"name\":\"nohds\",\"rings\":[{\"interface\":\"enos1\",\"hds_thresh\":64}]}}";
	const char *noaggr = "{\"profile\":{\"name\":\"noaggr\",\"coalesce\":[{\"interface\":\"enos0\","
			     "\"tx_aggr_max_frames\":8}]}}";
	p = tu_post(a, "/v1/transactions", nohds, 422);
	CHECK(tu_error_at(p, "$.rings[0].hds_thresh", "enos1 does not support hds_thresh: the driver does not report it"));
	json_decref(p);
	p = tu_post(a, "/v1/transactions", noaggr, 422);
	CHECK(tu_error_at(p, "$.coalesce[0]", "enos0 does not support coalescing tx_aggr_max_frames"));
	json_decref(p);
	/* On 6.1 the release is named. */
	tu_put(root, "proc/sys/kernel/osrelease", "6.1.0-27-amd64");
	p = tu_post(a, "/v1/plan", nohds, 422);
	CHECK(tu_error_at(p, "$.rings[0].hds_thresh",
		       "enos1 does not support hds_thresh: needs Linux 6.14 or later (this kernel is 6.1.0-27-amd64)"));
	json_decref(p);
	p = tu_post(a, "/v1/plan", noaggr, 422);
	CHECK(tu_error_at(p, "$.coalesce[0]", "tx_aggr_max_frames needs Linux 6.3 or later (this kernel is 6.1.0-27-amd64)"));
	json_decref(p);
	tu_put(root, "proc/sys/kernel/osrelease", "7.3.4+deb13-amd64");
	/* Nothing applied, nothing recorded. */
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
			    "{\"profile\":{\"name\":\"hds\",\"rings\":[{\"interface\":\"enos0\",\"tcp_data_split\":\"on\","
			    "\"hds_thresh\":512}],\"coalesce\":[{\"interface\":\"enos0\",\"cqe_mode_rx\":true}]}}",
			    201);
	CHECK_STR(tu_str(t, "status"), "applied");
	json_int_t id = json_integer_value(json_object_get(t, "id"));
	size_t i;
	json_t *s;
	int seen = 0;
	json_array_foreach(json_object_get(t, "steps"), i, s) {
		if (!strcmp(tu_str(s, "kind"), "ring_params")) {
			CHECK_STR(tu_str(s, "before"), "tcp_data_split=off,hds_thresh=0,tx_push=off,rx_push=off");
			CHECK_STR(tu_str(s, "after"), "tcp_data_split=on,hds_thresh=512,tx_push=off,rx_push=off");
			seen++;
		} else if (!strcmp(tu_str(s, "kind"), "coalesce")) {
			CHECK(strstr(tu_str(s, "after"), "cqe_mode_rx=on") != NULL);
			seen++;
		}
	}
	CHECK_INT(seen, 2);
	json_decref(t);
	json_t *n = tu_get(a, "/v1/nics/enos0");
	CHECK_STR(tu_str(field(n, "ring_params", "tcp_data_split"), "value"), "on");
	CHECK_INT(json_integer_value(json_object_get(field(n, "ring_params", "hds_thresh"), "value")), 512);
	CHECK(json_is_true(json_object_get(field(n, "coalesce_params", "cqe_mode_rx"), "value")));
	json_decref(n);

	tu_rollback_restores(a, (long long)id, dir, root, "ethtool/enos0.json");
}

int main(void)
{
	nt_agent a;
	if (!tu_fixture_copy(EPYC, dir, sizeof(dir), root, sizeof(root), state, sizeof(state)))
		TEST_MAIN_END();
	give_enos0();
	tu_put(root, "proc/sys/kernel/osrelease", "7.3.4+deb13-amd64");
	tu_sh("cp -a '%s' '%s/snap'", root, dir);
	test_cli();
	if (nt_agent_start(&a, root, state, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
	} else {
		test_report(&a);
		test_refusals(&a);
		test_apply_rollback(&a);
		nt_agent_stop(&a);
	}
	tu_sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
