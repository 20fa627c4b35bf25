/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a request body as the API takes it: the structure
 * pre-scan, the JSON parser with duplicate keys refused (and the path of a
 * duplicate), then profile validation against a fixture host and, for a
 * valid profile, planning what it asks for. NT_FUZZ_ROOT (default the
 * x460 fixture) is the host; run.sh gives it a root whose NICs have every
 * kind of ethtool setting (tests/fuzz/every_kind_root.py). */
#include "api/jsonpath.h"
#include "api/server_int.h"
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
		fprintf(stderr, "fuzz_profile: cannot read the host %s\n", root);
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[128], path[256];
	json_error_t je;

	if (nt_srv_json_prescan((const char *)data, size, NT_JSON_MAX_DEPTH, NT_JSON_MAX_VALUES, why,
				sizeof(why)) < 0)
		return 0;
	json_t *v = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (!v) {
		if (json_error_code(&je) == json_error_duplicate_key)
			nt_json_path_at((const char *)data, size, (size_t)je.position, path,
					sizeof(path));
		return 0;
	}
	json_t *errors = json_array();
	if (nt_profile_validate(host, v, errors) == 0) {
		nt_desired *d = NULL;
		int n = 0;
		json_t *warnings = json_array();
		if (nt_profile_desired(host, v, &d, &n, warnings) == 0)
			free(d);
		json_decref(warnings);
	} else if (json_array_size(errors) == 0) {
		abort(); /* invalid, but nothing says why */
	}
	json_decref(errors);
	json_decref(v);
	return 0;
}
