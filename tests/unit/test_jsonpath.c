/* SPDX-License-Identifier: Apache-2.0 */
/* nt_json_path_at: the JSON path of the value at a byte offset, as used to
 * name a duplicate key; and what jansson reports for one lands on it. */
#include "harness.h"
#include "api/jsonpath.h"

#include <jansson.h>

/* The path jansson's duplicate-key error points at in TEXT. */
static const char *dup_path(const char *text)
{
	static char path[256];
	json_error_t je;
	json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (v) {
		json_decref(v);
		return "(accepted)";
	}
	if (json_error_code(&je) != json_error_duplicate_key)
		return "(other error)";
	nt_json_path_at(text, strlen(text), (size_t)je.position, path, sizeof(path));
	return path;
}

int main(void)
{
	char buf[256];
	const char *t = "{\"rings\":[{\"interface\":\"eth0\",\"rx\":4096}]}";

	nt_json_path_at(t, strlen(t), strstr(t, "4096") - t, buf, sizeof(buf));
	CHECK_STR(buf, "$.rings[0].rx");
	nt_json_path_at(t, strlen(t), 0, buf, sizeof(buf));
	CHECK_STR(buf, "$");

	CHECK_STR(dup_path("{\"name\":\"p\",\"name\":\"q\"}"), "$.name");
	CHECK_STR(dup_path("{\"sysctl\":{\"net.core.rmem_max\":\"1\",\"net.core.rmem_max\":\"2\"}}"),
		  "$.sysctl['net.core.rmem_max']");
	CHECK_STR(dup_path("{\"rings\":[{\"interface\":\"a\"},{\"interface\":\"b\",\"rx\":1,\"rx\":2}]}"),
		  "$.rings[1].rx");
	CHECK_STR(dup_path("{\"a\":[[1,2],{\"x\":{},\"x\":[]}]}"), "$.a[1].x");
	CHECK_STR(dup_path("{\"a\\\"b\":1,\"a\\\"b\":2}"), "$['a\\\"b']");
	CHECK_STR(dup_path("{\"name\":\"p\",\"name2\":\"q\"}"), "(accepted)");

	/* Hostile input: unbalanced, deep, truncated, tiny buffers. */
	char deep[200];
	memset(deep, '[', sizeof(deep));
	nt_json_path_at(deep, sizeof(deep), sizeof(deep), buf, sizeof(buf));
	CHECK(strncmp(buf, "$[0][0]", 7) == 0 && strstr(buf, "...") != NULL);
	nt_json_path_at("]]]}}}", 6, 6, buf, sizeof(buf));
	CHECK_STR(buf, "$");
	nt_json_path_at(t, strlen(t), 1000, buf, 4);
	CHECK_STR(buf, "$");
	CHECK_INT(nt_json_path_at(t, strlen(t), 5, buf, 0), 0);
	TEST_MAIN_END();
}
