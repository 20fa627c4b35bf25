/* SPDX-License-Identifier: Apache-2.0 */
/* PUT /v1/desired answers with what this request did, under concurrency:
 * three clients at once against a real agent, one setting profile A, one
 * profile B, one clearing the desired state, ROUNDS times each. Every PUT
 * that records its profile must be answered 200 with its own profile (not
 * the other client's, not a 503 or 404 because a DELETE came between the
 * write and the answer); DELETE answers 204 or 404. */
#include "harness.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"

#include <pthread.h>

#define VM NT_FIXTURES "/vm-virtio-2cpu"
#define ROUNDS 100

typedef struct client {
	const char *url;
	const char *method;
	const char *body; /* NULL: DELETE */
	const char *name; /* the profile name its answers must carry */
	int ok, wrong_name, unavailable, other;
	char first_bad[256];
} client;

static void *run(void *arg)
{
	client *c = arg;
	for (int i = 0; i < ROUNDS; i++) {
		long st = 0;
		json_t *doc = NULL;
		nt_http(c->method, c->url, c->body, &st, &doc, NULL, 0);
		const char *got = json_string_value(
			json_object_get(json_object_get(doc, "profile"), "name"));
		bool good;
		if (c->body) {
			good = st == 200 && got && !strcmp(got, c->name);
			if (st == 200 && !good)
				c->wrong_name++;
			else if (st == 503 || st == 404)
				c->unavailable++;
			else if (!good)
				c->other++;
		} else {
			good = st == 204 || st == 404;
			if (!good)
				c->other++;
		}
		if (good) {
			c->ok++;
		} else if (!c->first_bad[0]) {
			char *txt = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
			snprintf(c->first_bad, sizeof(c->first_bad), "%ld %s", st, txt ? txt : "");
			free(txt);
		}
		json_decref(doc);
	}
	return NULL;
}

int main(void)
{
	char dir[PATH_MAX], root[PATH_MAX], state[PATH_MAX + 8], url[256];
	nt_agent a;

	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0)
		SKIP("cannot copy %s", VM);
	snprintf(state, sizeof(state), "%s/state", dir);
	const char *extra[] = { "--drift-policy", "report", "--drift-interval", "1", NULL };
	if (nt_agent_start(&a, root, state, extra) < 0) {
		CHECK_MSG(0, "agent did not start");
		goto out;
	}
	snprintf(url, sizeof(url), "%s", nt_url(&a, "/v1/desired"));
	/* One request first: the harness sets libcurl up once, not per thread. */
	long st = 0;
	nt_http("DELETE", url, NULL, &st, NULL, NULL, 0);
	CHECK_INT(st, 404);

	client cl[3] = {
		{ .url = url, .method = "PUT", .name = "race-a",
		  .body = "{\"profile\":{\"name\":\"race-a\",\"sysctl\":"
			  "{\"net.core.rmem_max\":\"16777216\"}}}" },
		{ .url = url, .method = "PUT", .name = "race-b",
		  .body = "{\"profile\":{\"name\":\"race-b\",\"sysctl\":"
			  "{\"net.core.wmem_max\":\"16777216\"}}}" },
		{ .url = url, .method = "DELETE" },
	};
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, run, &cl[i]);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 3; i++) {
		printf("%s %s: %d ok, %d with another profile, %d 503/404, %d other%s%s\n",
		       cl[i].method, cl[i].name ? cl[i].name : "", cl[i].ok, cl[i].wrong_name,
		       cl[i].unavailable, cl[i].other, cl[i].first_bad[0] ? "; first: " : "",
		       cl[i].first_bad);
		CHECK_MSG(cl[i].ok == ROUNDS, "%s %s: %d of %d answered as it did", cl[i].method,
			  cl[i].name ? cl[i].name : "", cl[i].ok, ROUNDS);
	}
	/* The history saw every change (each PUT recorded a "set"). */
	json_t *doc = NULL;
	nt_http("PUT", url, cl[0].body, &st, &doc, NULL, 0);
	CHECK_INT(st, 200);
	CHECK_STR(json_string_value(json_object_get(json_object_get(doc, "profile"), "name")),
		  "race-a");
	CHECK(json_array_size(json_object_get(doc, "history")) > 0);
	json_decref(doc);
	nt_agent_stop(&a);
out:
	tu_sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
