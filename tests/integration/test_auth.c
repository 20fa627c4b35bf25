/* SPDX-License-Identifier: Apache-2.0 */
/* Authentication and authorization over a real socket: the token file is
 * checked at start (mode, shape), the listen policy refuses an open API on
 * a network address, and with tokens every request but the open ones needs
 * a valid bearer token of the right scope. Transactions record the token's
 * name; the access log names it and never prints a secret. Runs on a copy
 * of the EPYC host fixture (a sysctl is changed by an apply). */
#include "harness.h"
#include "integration/nt_agent_ext.h"

#define SRC NT_FIXTURES "/epyc7713-2node-bond"

static const char READ_SECRET[] = "r3ad-secret-0123456789abcdef";
static const char APPLY_SECRET[] = "app1y-secret-0123456789abcdef";

static char dir[PATH_MAX];

static long status_of(nt_agent *a, const char *method, const char *path, const char *body,
		      const char *bearer)
{
	nt_ext_result x;
	nt_req_opts o = { .bearer = bearer };
	nt_http_ext(method, nt_url(a, path), body, body ? strlen(body) : 0, &o, &x);
	long st = x.r.status;
	nt_ext_result_free(&x);
	return st;
}

static bool file_contains(const char *path, const char *needle)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	ssize_t len = getdelim(&buf, &n, '\0', f);
	fclose(f);
	bool found = len > 0 && memmem(buf, (size_t)len, needle, strlen(needle)) != NULL;
	free(buf);
	return found;
}

static void start_refusals(const char *tokens)
{
	char err[4096], path[PATH_MAX + 32];
	char state[PATH_MAX + 16];
	snprintf(state, sizeof(state), "%s/state-r", dir);

	/* No tokens, a network address: refused with a clear message. */
	const char *open_any[] = { "--listen", "0.0.0.0:0", "--root", SRC, "--state-dir", state,
				   NULL };
	int rc = nt_serve_expect_exit(open_any, 10, err, sizeof(err));
	CHECK_MSG(rc > 0, "serve on 0.0.0.0 without tokens exited %d", rc);
	CHECK_MSG(strstr(err, "without authentication") != NULL, "stderr: %s", err);
	const char *open_v6[] = { "--listen", "[::]:0", "--root", SRC, "--state-dir", state, NULL };
	rc = nt_serve_expect_exit(open_v6, 10, err, sizeof(err));
	CHECK_MSG(rc > 0, "serve on [::] without tokens exited %d", rc);

	/* The same with tokens starts (it is still running when we look). */
	const char *with_tokens[] = { "--listen", "0.0.0.0:0", "--root", SRC, "--state-dir", state,
				      "--tokens", tokens, NULL };
	rc = nt_serve_expect_exit(with_tokens, 2, err, sizeof(err));
	CHECK_MSG(rc == -1, "serve on 0.0.0.0 with tokens exited %d: %s", rc, err);

	/* A token file others can read is refused. */
	snprintf(path, sizeof(path), "%s/tokens-open", dir);
	nt_write_file(path, "ops apply aaaaaaaaaaaaaaaaaaaaaaaa\n", 0644);
	const char *open_file[] = { "--root", SRC, "--state-dir", state, "--tokens", path, NULL };
	rc = nt_serve_expect_exit(open_file, 10, err, sizeof(err));
	CHECK_MSG(rc > 0, "world-readable token file: exit %d", rc);
	CHECK_MSG(strstr(err, "chmod 600") != NULL, "stderr: %s", err);

	/* A NUL byte would cut the line: refused, naming the line, without
	 * the secret. */
	FILE *nf = fopen(path, "w");
	static const char nul_line[] = "ok read hhhhhhhhhhhhhhhhhhhhhhhh\nops apply iiiiiiiiiiiiiiii\0jjjjjjjj\n";
	CHECK(nf && fwrite(nul_line, 1, sizeof(nul_line) - 1, nf) == sizeof(nul_line) - 1);
	if (nf)
		fclose(nf);
	chmod(path, 0600);
	rc = nt_serve_expect_exit(open_file, 10, err, sizeof(err));
	CHECK_MSG(rc > 0, "token file with a NUL: exit %d", rc);
	CHECK_MSG(strstr(err, "line 2: holds a NUL byte") != NULL, "stderr: %s", err);
	CHECK_MSG(!strstr(err, "iiiiiiii") && !strstr(err, "jjjjjjjj"), "a secret was echoed: %s", err);

	/* A file another user owns is refused, as a readable one is. */
	if (geteuid() == 0) {
		nt_write_file(path, "ops apply kkkkkkkkkkkkkkkkkkkkkkkk\n", 0600);
		CHECK(chown(path, 65534, 65534) == 0);
		rc = nt_serve_expect_exit(open_file, 10, err, sizeof(err));
		CHECK_MSG(rc > 0, "token file owned by uid 65534: exit %d", rc);
		CHECK_MSG(strstr(err, "is owned by uid 65534, not by the agent's user (uid 0)") != NULL, "stderr: %s",
			  err);
		CHECK(chown(path, 0, 0) == 0);
	} else {
		/* Not counted: a file of another owner cannot be made here. */
		printf("note: not root, the owner check is not exercised\n");
	}

	/* Bad lines name the line and never echo the secret. */
	struct {
		const char *text, *want;
	} bad[] = {
		{ "ops admin bbbbbbbbbbbbbbbbbbbbbbbb\n", "line 1" },
		{ "# comment\nops apply short\n", "line 2" },
		{ "a/b read cccccccccccccccccccccccc\n", "name" },
		{ "ops read dddddddddddddddddddddddd extra\n", "three fields" },
		{ "x read eeeeeeeeeeeeeeeeeeeeeeee\nx apply ffffffffffffffffffffffff\n", "twice" },
		{ "x read gggggggggggggggggggggggg\ny apply gggggggggggggggggggggggg\n", "same secret" },
		{ "# nothing\n\n", "no token" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nt_write_file(path, bad[i].text, 0600);
		rc = nt_serve_expect_exit(open_file, 10, err, sizeof(err));
		CHECK_MSG(rc > 0, "bad token file %zu: exit %d", i, rc);
		CHECK_MSG(strstr(err, bad[i].want) != NULL, "bad token file %zu: stderr %s", i, err);
		CHECK_MSG(!strstr(err, "bbbbbbbbbbbbbbbb") && !strstr(err, "dddddddddddddddd") &&
				  !strstr(err, "gggggggggggggggg"),
			  "a secret was echoed: %s", err);
	}
}

int main(void)
{
	char tokens[PATH_MAX + 16], root[PATH_MAX + 16], log[PATH_MAX + 16], cmd[3 * PATH_MAX];
	nt_agent a;

	snprintf(dir, sizeof(dir), "/tmp/nt-auth-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tokens, sizeof(tokens), "%s/tokens", dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", SRC, root);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot copy the fixture\n");
		return 1;
	}
	char text[512];
	snprintf(text, sizeof(text),
		 "# name scope secret\n"
		 "grafana  read   %s\n"
		 "\n"
		 "fleet\tapply\t%s\n",
		 READ_SECRET, APPLY_SECRET);
	CHECK(nt_write_file(tokens, text, 0600) == 0);

	start_refusals(tokens);

	const char *extra[] = { "--tokens", tokens, NULL };
	nt_agent_opts ao = { .extra = extra, .stderr_path = log };
	if (nt_agent_start_ext(&a, root, &ao) < 0) {
		CHECK_MSG(0, "agent did not start");
		TEST_MAIN_END();
	}

	/* Open paths. */
	CHECK_INT(status_of(&a, "GET", "/v1/health", NULL, NULL), 200);
	/* The web view's static files are open (they tell nothing of the
	 * host); its data is not, and nothing deeper under /ui is. */
	CHECK_INT(status_of(&a, "GET", "/ui/", NULL, NULL), 200);
	CHECK_INT(status_of(&a, "GET", "/ui/app.js", NULL, NULL), 200);
	CHECK_INT(status_of(&a, "GET", "/ui", NULL, NULL), 301);
	CHECK_INT(status_of(&a, "GET", "/ui/no-such-file.js", NULL, NULL), 404);
	CHECK_INT(status_of(&a, "POST", "/ui/", "{}", NULL), 405);
	CHECK_INT(status_of(&a, "GET", "/ui/a/b", NULL, NULL), 401);
	CHECK_INT(status_of(&a, "GET", "/v1/topology", NULL, NULL), 401);

	/* No token, a wrong one, a wrong scheme: 401 problem with
	 * WWW-Authenticate, even on a path that does not exist. */
	const char *authz_bad[] = { NULL, "Bearer wrong-secret-0123456789", "Basic Zm9vOmJhcg==",
				    "Bearer", "Bearer r3ad-secret-0123456789abcdeX" };
	for (size_t i = 0; i < sizeof(authz_bad) / sizeof(authz_bad[0]); i++) {
		nt_ext_result x;
		nt_req_opts o = { .authz = authz_bad[i] };
		nt_http_ext("GET", nt_url(&a, "/v1/nics"), NULL, 0, &o, &x);
		CHECK_MSG(nt_is_problem(&x.r, 401), "case %zu: status %ld ct %s", i, x.r.status,
			  x.r.content_type);
		CHECK_MSG(strncmp(x.www_authenticate, "Bearer", 6) == 0, "case %zu: WWW-Authenticate '%s'",
			  i, x.www_authenticate);
		nt_ext_result_free(&x);
	}
	CHECK_INT(status_of(&a, "GET", "/v1/no-such-thing", NULL, NULL), 401);
	CHECK_INT(status_of(&a, "GET", "/metrics", NULL, NULL), 401);
	CHECK_INT(status_of(&a, "POST", "/v1/plan", "{}", NULL), 401);

	/* Valid tokens: read can read, only apply can write. */
	CHECK_INT(status_of(&a, "GET", "/v1/nics", NULL, READ_SECRET), 200);
	CHECK_INT(status_of(&a, "GET", "/v1/nics", NULL, APPLY_SECRET), 200);
	CHECK_INT(status_of(&a, "HEAD", "/v1/nics", NULL, READ_SECRET), 200);
	CHECK_INT(status_of(&a, "GET", "/metrics", NULL, READ_SECRET), 200);
	CHECK_INT(status_of(&a, "GET", "/v1/transactions", NULL, READ_SECRET), 200);
	CHECK_INT(status_of(&a, "GET", "/v1/no-such-thing", NULL, READ_SECRET), 404);

	const char *profile = "{\"name\":\"p\",\"sysctl\":{\"net.core.rmem_max\":\"33554432\"}}";
	char apply_body[512];
	snprintf(apply_body, sizeof(apply_body), "{\"profile\":%s}", profile);
	{
		/* A plan changes nothing: the read scope may ask for one. */
		nt_ext_result x;
		nt_req_opts o = { .bearer = READ_SECRET };
		nt_http_ext("POST", nt_url(&a, "/v1/plan"), profile, strlen(profile), &o, &x);
		CHECK_MSG(x.r.status == 200 && json_array_size(json_object_get(x.r.json, "steps")) == 1,
			  "plan with read: %ld", x.r.status);
		nt_ext_result_free(&x);
	}
	/* The agent's address in a browser leads to the web view, no token. */
	CHECK_INT(status_of(&a, "GET", "/", NULL, NULL), 301);
	CHECK_INT(status_of(&a, "POST", "/v1/transactions", apply_body, READ_SECRET), 403);
	CHECK_INT(status_of(&a, "PUT", "/v1/profiles/p", profile, READ_SECRET), 403);
	CHECK_INT(status_of(&a, "DELETE", "/v1/profiles/p", NULL, READ_SECRET), 403);
	CHECK_INT(status_of(&a, "POST", "/v1/transactions/1/rollback", "{}", READ_SECRET), 403);
	/* Nothing was applied by the refused requests. */
	{
		nt_ext_result x;
		nt_req_opts o = { .bearer = READ_SECRET };
		nt_http_ext("GET", nt_url(&a, "/v1/transactions"), NULL, 0, &o, &x);
		CHECK_INT(json_integer_value(json_object_get(x.r.json, "total")), 0);
		nt_ext_result_free(&x);
	}

	CHECK_INT(status_of(&a, "POST", "/v1/plan", profile, APPLY_SECRET), 200);
	CHECK_INT(status_of(&a, "PUT", "/v1/profiles/p", profile, APPLY_SECRET), 201);
	{
		nt_ext_result x;
		nt_req_opts o = { .bearer = APPLY_SECRET };
		nt_http_ext("POST", nt_url(&a, "/v1/transactions"), apply_body, strlen(apply_body), &o,
			    &x);
		CHECK_INT(x.r.status, 201);
		CHECK_STR(json_string_value(json_object_get(x.r.json, "identity")), "fleet");
		nt_ext_result_free(&x);
		/* And the record says so when read back by another token. */
		o.bearer = READ_SECRET;
		nt_http_ext("GET", nt_url(&a, "/v1/transactions/1"), NULL, 0, &o, &x);
		CHECK_INT(x.r.status, 200);
		CHECK_STR(json_string_value(json_object_get(x.r.json, "identity")), "fleet");
		CHECK_STR(json_string_value(json_object_get(x.r.json, "status")), "applied");
		nt_ext_result_free(&x);
	}

	nt_agent_stop(&a);

	/* The access log names tokens, never their secrets. */
	CHECK_MSG(file_contains(log, "identity=fleet"), "no access line with identity=fleet");
	CHECK_MSG(file_contains(log, "identity=grafana"), "no access line with identity=grafana");
	CHECK_MSG(file_contains(log, "status=401"), "401s are not logged");
	CHECK_MSG(file_contains(log, "txn_step"), "no transaction step in the log");
	CHECK_MSG(!file_contains(log, READ_SECRET) && !file_contains(log, APPLY_SECRET) &&
			  !file_contains(log, "wrong-secret"),
		  "a secret is in the log");
	/* The checker itself can see a secret when there is one. */
	FILE *f = fopen(log, "a");
	if (f) {
		fprintf(f, "planted %s\n", APPLY_SECRET);
		fclose(f);
	}
	CHECK(file_contains(log, APPLY_SECRET));

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	TEST_MAIN_END();
}
