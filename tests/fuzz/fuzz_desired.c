/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the desired state as a file (agent/desired_file.c),
 * whose bytes reach the JSON parser without the API's structure pre-scan:
 * read as the agent reads it, then validated and planned against a fixture
 * host as PUT /v1/desired would. NT_FUZZ_ROOT (default the x460 fixture;
 * run.sh gives the every-kind root of fuzz_profile) is the host. */
#include "agent/agent.h"
#include "engine/profile.h"
#include "host/topology.h"
#include "kernel/ctx.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nt_topology *host;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *root = getenv("NT_FUZZ_ROOT");
	nt_ctx ctx;
	if (!root)
		root = NT_FIXTURES "/x460-4node-8nic";
	if (nt_ctx_init(&ctx, root) < 0 || nt_topology_read(&ctx, &host) < 0) {
		fprintf(stderr, "fuzz_desired: cannot read the host %s\n", root);
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[512];
	json_t *profile = NULL;

	msg[0] = '\0';
	if (nt_desired_file_read((const char *)data, size, &profile, msg, sizeof(msg)) < 0) {
		if (profile || !msg[0])
			abort(); /* refused without a reason, or with a profile */
		return 0;
	}
	if (!json_is_object(profile))
		abort();
	json_t *errors = json_array();
	if (nt_profile_validate(host, profile, errors) == 0) {
		nt_desired *d = NULL;
		int n = 0;
		json_t *warnings = json_array();
		if (nt_profile_desired(host, profile, &d, &n, warnings) == 0)
			free(d);
		json_decref(warnings);
	} else if (json_array_size(errors) == 0) {
		abort(); /* invalid, but nothing says why */
	}
	json_decref(errors);
	json_decref(profile);
	return 0;
}
