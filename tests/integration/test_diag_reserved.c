/* SPDX-License-Identifier: Apache-2.0 */
/* GET /v1/diagnostics judges steering by the CPUs the profile in effect
 * keeps for applications: on a copy of the EPYC tree, RPS of enos1 over
 * every CPU is no finding while no profile reserves any, and
 * rps-reserved-cpus once the desired state's reserve_app_cpus keeps some
 * of them (the reservation the API takes from the desired state). */
#include "harness.h"
#include "integration/nt_agent.h"
#include "test_json.h"
#include "tree_files.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

static json_t *diagnostics(nt_agent *a)
{
	long st = 0;
	json_t *doc = NULL;
	CHECK_INT(nt_http("GET", nt_url(a, "/v1/diagnostics"), NULL, &st, &doc, NULL, 0), 0);
	CHECK_INT(st, 200);
	return doc;
}

int main(void)
{
	char root[] = "/tmp/nt-diagres-XXXXXX", cmd[PATH_MAX + 128];
	nt_agent a;
	if (access(EPYC, F_OK) != 0)
		SKIP("fixture %s is not present", EPYC);
	CHECK(mkdtemp(root) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -a %s/. %s/", EPYC, root);
	CHECK_INT(system(cmd), 0);
	tree_write(root, "sys/class/net/enos1/queues/rx-0/rps_cpus", "ffffffff,ffffffff,ffffffff,ffffffff\n");
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start on %s", root);
		goto out;
	}
	json_t *doc = diagnostics(&a);
	CHECK_MSG(doc && !finding(doc, "rps-reserved-cpus", "enos1"), "a finding with nothing reserved");
	json_decref(doc);

	long st = 0;
	json_t *put = NULL;
	nt_http("PUT", nt_url(&a, "/v1/desired"),
		"{\"name\":\"keep\",\"irq_affinity\":[{\"interface\":\"enos1\",\"policy\":\"local\","
		"\"reserve_app_cpus\":4}]}",
		&st, &put, NULL, 0);
	CHECK_MSG(st == 200, "PUT /v1/desired: %ld", st);
	json_decref(put);
	doc = diagnostics(&a);
	const json_t *f = doc ? finding(doc, "rps-reserved-cpus", "enos1") : NULL;
	char *text = doc ? json_dumps(doc, 0) : NULL;
	CHECK_MSG(f != NULL, "no rps-reserved-cpus for enos1: %s", text ? text : "?");
	free(text);
	const char *res = json_string_value(json_object_get(json_object_get(f, "evidence"), "reserved"));
	CHECK_MSG(res && res[0], "the finding names no reserved CPUs");
	json_decref(doc);
	CHECK_INT(nt_agent_stop(&a), 0);
out:
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	system(cmd);
	TEST_MAIN_END();
}
