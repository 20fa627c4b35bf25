/* SPDX-License-Identifier: Apache-2.0 */
/* The CLI's agent commands against a fixture agent, as an operator and a
 * CI job use them: the lines a person reads for plan, apply, confirm,
 * show, history and rollback; refused and conflicting requests as lines
 * that say what was wrong; an unreachable agent; each exit code of
 * cli/exit.h (a missing or weak token too); try answered and not; --json (and -o json) byte for byte the body a direct HTTP
 * request gets; no escape code off a terminal or with NO_COLOR, colour on
 * a terminal (a pseudo-terminal here).
 *
 * The CLI talks to the agent's base URL, which in contract mode is the
 * validating proxy; the direct requests it is compared with go to the same
 * URL, so both see the same bytes. */
#include "harness.h"
#include "integration/nt_agent.h"
/* The transaction tests' helpers (fixture copies, EPYC_FIX); this test
 * uses a few of them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "integration/test_txn_util.h"
#pragma GCC diagnostic pop

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pty.h>
#include <sys/socket.h>
#include <poll.h>
#include <sched.h>

#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

typedef struct run {
	int code; /* exit code, -1 when it did not exit */
	char *out, *err; /* everything written to stdout, stderr (owned) */
	size_t out_len;
} run;

static void run_free(run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *s = NULL;
	size_t n = 0;
	if (!f)
		return strdup("");
	FILE *m = open_memstream(&s, &n);
	char buf[4096];
	size_t k;
	while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, k, m);
	fclose(m);
	fclose(f);
	if (len)
		*len = n;
	return s;
}

/* NT_BIN with ARGV (NULL-terminated, without the program), stdout and
 * stderr to files (neither is a terminal); ENV "NAME=VALUE" strings set in
 * the child only (NULL: none). */
static run cli_env_in(const char *const *env, const char *const *argv, const char *in)
{
	run r = { .code = -1 };
	char out[] = "/tmp/nt-cli-out-XXXXXX", err[] = "/tmp/nt-cli-err-XXXXXX";
	int fo = mkstemp(out), fe = mkstemp(err);
	const char *args[32] = { NT_BIN };
	int n = 1;
	for (; argv[n - 1] && n < 31; n++)
		args[n] = argv[n - 1];
	args[n] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fo, 1);
		dup2(fe, 2);
		int fi = in ? open(in, O_RDONLY) : -1;
		if (fi >= 0)
			dup2(fi, 0);
		unsetenv("NO_COLOR");
		unsetenv("NETTUNE_AGENT");
		for (int i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		execv(NT_BIN, (char *const *)args);
		_exit(127);
	}
	int st;
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		r.code = WEXITSTATUS(st);
	close(fo);
	close(fe);
	r.out = slurp(out, &r.out_len);
	r.err = slurp(err, NULL);
	unlink(out);
	unlink(err);
	return r;
}

static run cli_env(const char *const *env, const char *const *argv)
{
	return cli_env_in(env, argv, NULL);
}

#define CLI(...) cli_env(NULL, (const char *const[]){ __VA_ARGS__, NULL })

/* The same on a pseudo-terminal (stdin, stdout and stderr): what a person
 * at a terminal sees, in R.out. When PROMPT appears in the output, ANSWER
 * is typed (PROMPT NULL: nothing is). */
static run cli_pty_answer(const char *const *env, const char *const *argv, const char *prompt,
			  const char *answer)
{
	run r = { .code = -1 };
	const char *args[32] = { NT_BIN };
	int n = 1, master;
	for (; argv[n - 1] && n < 31; n++)
		args[n] = argv[n - 1];
	args[n] = NULL;
	pid_t pid = forkpty(&master, NULL, NULL, NULL);
	if (pid < 0) {
		perror("forkpty");
		r.out = strdup("");
		r.err = strdup("");
		return r;
	}
	if (pid == 0) {
		unsetenv("NO_COLOR");
		setenv("TERM", "xterm", 1);
		for (int i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		execv(NT_BIN, (char *const *)args);
		_exit(127);
	}
	size_t len = 0;
	FILE *m = open_memstream(&r.out, &len);
	char buf[4096];
	for (;;) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		int pr = poll(&p, 1, 20000);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			fprintf(stderr, "cli_pty: nothing for 20 s\n");
			break; /* a hung child is killed below */
		}
		ssize_t k = read(master, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break; /* EIO once the child has closed the terminal */
		fwrite(buf, 1, (size_t)k, m);
		fflush(m);
		if (prompt && r.out && strstr(r.out, prompt)) {
			if (write(master, answer, strlen(answer)) < 0)
				perror("write to the terminal");
			prompt = NULL;
		}
	}
	fclose(m);
	r.out_len = len;
	close(master);
	int st;
	kill(pid, SIGKILL); /* no-op when it has exited; reaped either way */
	if (waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		r.code = WEXITSTATUS(st);
	r.err = strdup("");
	return r;
}

static bool has(const char *hay, const char *needle)
{
	return hay && strstr(hay, needle);
}

static run cli_pty(const char *const *env, const char *const *argv)
{
	return cli_pty_answer(env, argv, NULL, NULL);
}

#define CHECK_HAS(hay, needle) CHECK_MSG(has(hay, needle), "no '%s' in:\n%s", needle, hay ? hay : "(null)")
#define CHECK_HASNT(hay, needle) CHECK_MSG(!has(hay, needle), "'%s' in:\n%s", needle, hay ? hay : "(null)")

/* The body METHOD PATH gets straight from the agent's base URL. */
static nt_http_result direct(nt_agent *a, const char *method, const char *path, const char *body)
{
	nt_http_result r;
	memset(&r, 0, sizeof(r));
	nt_http_do1(method, nt_url(a, path), body, body ? strlen(body) : 0, body ? "application/json" : NULL, &r);
	return r;
}

static void check_same_bytes(const run *c, const nt_http_result *h, const char *what)
{
	CHECK_MSG(c->out_len == h->body_len && h->body && memcmp(c->out, h->body, h->body_len) == 0,
		  "%s: --json printed %zu bytes, the API answered %zu", what, c->out_len, h->body_len);
}

#define GOOD "{\"name\":\"epyc-fix\",\"rings\":[{\"interface\":\"enos*\",\"rx\":4096}]," \
	"\"bonds\":[{\"interface\":\"bond0\",\"xmit_hash_policy\":\"layer3+4\"}]," \
	"\"sysctl\":{\"net.ipv4.tcp_rmem\":\"4096 87380 16777216\"}}"
#define BAD "{\"name\":\"too-big\",\"rings\":[{\"interface\":\"enos0\",\"rx\":99999}]}"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_session(const char *dir, const char *root)
{
	nt_agent a;
	char good[PATH_MAX], bad[PATH_MAX], base[128], agent_env[160];
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	snprintf(good, sizeof(good), "%s/good.json", dir);
	snprintf(bad, sizeof(bad), "%s/bad.json", dir);
	write_file(good, GOOD);
	write_file(bad, BAD);

	/* Refusals a person can act on: the host's CPUs, a sysctl to quote;
	 * no desired state: the command that sets one. */
	char worse[PATH_MAX];
	snprintf(worse, sizeof(worse), "%s/worse.json", dir);
	write_file(worse, "{\"name\":\"w\",\"sysctl\":{\"net.core.rmem_max\":16777216},"
			  "\"irq_affinity\":[{\"interface\":\"enos0\",\"cpus\":\"120-200\"}]}");
	run c = CLI("plan", worse, "--agent", base);
	CHECK_INT(c.code, 4);
	CHECK_HAS(c.err, "CPU 128-200 do not exist: this host's CPUs are 0-127");
	CHECK_HAS(c.err, "the value must be a string: quote it, \"16777216\"");
	run_free(&c);
	c = CLI("desired", "--agent", base);
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "nettune desired set PROFILE.json, or nettune apply --persist");
	CHECK_HASNT(c.err, "PUT /v1/desired");
	run_free(&c);

	/* plan: grouped by interface and kind, before → after, the NIC-reset
	 * warnings, one summary line; nothing written. */
	c = CLI("plan", good, "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "INTERFACE");
	CHECK_HAS(c.out, "enos0");
	CHECK_HAS(c.out, "rx=1024,tx=1024");
	CHECK_HAS(c.out, "→");
	CHECK_HAS(c.out, "rx=4096,tx=1024");
	CHECK_HAS(c.out, "layer2+3");
	CHECK_HAS(c.out, "layer3+4");
	CHECK_HAS(c.out, "net.ipv4.tcp_rmem");
	/* The four ports' reset warnings, alike but for the port: one line
	 * naming the bond (its ports from GET /v1/nics), and how many. */
	CHECK_HAS(c.out, "warning: every port of bond0 (enos0..enos3): changing rings or channels may reset the NIC");
	CHECK_HAS(c.out, "(4 warnings as 1 line, alike ones together; --verbose lists each)");
	CHECK_HASNT(c.out, "warning: enos1:");
	CHECK_HAS(c.out, "6 steps; nothing applied");
	CHECK_HAS(c.out, "nettune apply --plan p-");
	CHECK_HASNT(c.out, "\033");
	CHECK_HASNT(c.out, "{");
	/* Each interface's rings sit on one line: the group shows the interface
	 * once, on its first row. */
	CHECK_MSG(strstr(c.out, "bond0") && strstr(c.out, "host"), "groups:\n%s", c.out);
	run_free(&c);
	/* --verbose: each warning as the agent sent it. */
	c = CLI("plan", good, "--verbose", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "warning: enos0: changing rings or channels may reset the NIC");
	CHECK_HAS(c.out, "warning: enos3: changing rings or channels may reset the NIC");
	CHECK_HASNT(c.out, "every port of");
	run_free(&c);
	/* "-" is standard input: the same plan. */
	c = cli_env_in(NULL, (const char *const[]){ "plan", "-", "--agent", base, NULL }, good);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "6 steps; nothing applied");
	run_free(&c);
	/* --json: the agent's bytes, the same plan but for its own id and
	 * expiry (each plan is kept under a new id). */
	nt_http_result h = direct(&a, "POST", "/v1/plan", GOOD);
	c = CLI("plan", good, "--json", "--agent", base);
	CHECK_INT(c.code, 0);
	json_t *cj = json_loads(c.out ? c.out : "", 0, NULL);
	char plan_id[64] = "";
	snprintf(plan_id, sizeof(plan_id), "%s", json_string_value(json_object_get(cj, "id")) ?: "");
	CHECK_MSG(strlen(plan_id) == 34 && strcmp(plan_id, json_string_value(json_object_get(h.json, "id")) ?: ""),
		  "plan ids '%s' and '%s'", plan_id, json_string_value(json_object_get(h.json, "id")) ?: "");
	CHECK_INT(c.out_len, h.body_len); /* ids and times of the same length: the same bytes otherwise */
	json_object_del(cj, "id");
	json_object_del(cj, "expires");
	json_object_del(h.json, "id");
	json_object_del(h.json, "expires");
	CHECK_MSG(json_equal(cj, h.json), "plan: --json printed another plan than the API's");
	json_decref(cj);
	CHECK_INT(json_array_size(json_object_get(h.json, "steps")), 6);
	run_free(&c);
	nt_http_result_free(&h);

	/* Refused: the two lines that say what is wrong, exit 4; with --json
	 * the problem document unchanged on stdout. */
	c = CLI("apply", bad, "--agent", base);
	CHECK_INT(c.code, 4);
	CHECK_HAS(c.err, "nettune: profile refused:");
	CHECK_HAS(c.err, "$.rings[0].rx: rx 99999 is above enos0's maximum 8192");
	CHECK_INT(strlen(c.out), 0);
	run_free(&c);
	h = direct(&a, "POST", "/v1/plan", BAD);
	c = CLI("plan", bad, "-o", "json", "--agent", base);
	CHECK_INT(c.code, 4);
	CHECK_INT(h.status, 422);
	check_same_bytes(&c, &h, "refused plan");
	run_free(&c);
	nt_http_result_free(&h);

	/* apply of that plan by its id, with a confirm deadline: id, status,
	 * steps changed (from the lean answer's counts), the deadline and the
	 * exact command that keeps it. */
	c = CLI("apply", "--plan", plan_id, "--confirm-timeout", "600", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "transaction 1: pending_confirm, 6 steps changed (rings ×4, bond ×1, sysctl ×1)");
	CHECK_HAS(c.out, "warning: every port of bond0 (enos0..enos3): changing rings or channels may reset the NIC");
	CHECK_HAS(c.out, "reverts at ");
	char want[256];
	snprintf(want, sizeof(want), "nettune confirm 1 --agent %s", base);
	CHECK_HAS(c.out, want);
	run_free(&c);
	/* A plan is applied once; a PROFILE.json beside --plan is refused. */
	c = CLI("apply", "--plan", plan_id, "--agent", base);
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "was applied at");
	run_free(&c);
	c = CLI("apply", good, "--plan", plan_id, "--agent", base);
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "takes no PROFILE.json");
	run_free(&c);

	/* A second apply meanwhile: conflict, exit 5, naming the one in flight. */
	c = CLI("apply", good, "--agent", base);
	CHECK_INT(c.code, 5);
	CHECK_HAS(c.err, "nettune: conflict:");
	CHECK_HAS(c.err, "transaction 1 is in flight");
	run_free(&c);
	h = direct(&a, "POST", "/v1/transactions", "{\"profile\":" GOOD "}");
	c = CLI("apply", good, "--json", "--agent", base);
	CHECK_INT(c.code, 5);
	CHECK_INT(h.status, 409);
	check_same_bytes(&c, &h, "conflicting apply");
	CHECK_INT(strlen(c.err), 0);
	run_free(&c);
	nt_http_result_free(&h);

	/* The agent's URL from NETTUNE_AGENT. */
	snprintf(agent_env, sizeof(agent_env), "NETTUNE_AGENT=%s", base);
	c = cli_env((const char *const[]){ agent_env, NULL }, (const char *const[]){ "confirm", "1", NULL });
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "transaction 1: applied");
	/* Its duration holds the wait for the confirmation: said as such. */
	CHECK_HAS(c.out, " after it was applied");
	CHECK_HASNT(c.out, ") in ");
	run_free(&c);
	c = CLI("confirm", "1", "--agent", base);
	CHECK_INT(c.code, 5); /* no longer waiting */
	CHECK_HAS(c.err, "nettune: conflict:");
	run_free(&c);

	c = CLI("plan", good, "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "already tuned: nothing to do");
	run_free(&c);

	/* show: header and steps with results; --json the GET body. */
	c = CLI("show", "1", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "transaction 1  applied");
	CHECK_HAS(c.out, "every port of bond0 (enos0..enos3): changing rings or channels may reset the NIC");
	CHECK_HAS(c.out, "epyc-fix");
	CHECK_HAS(c.out, "127.0.0.1");
	CHECK_HAS(c.out, "RESULT");
	CHECK_HAS(c.out, "bond0");
	CHECK_HAS(c.out, "layer3+4");
	CHECK_HASNT(c.out, "\033");
	run_free(&c);
	h = direct(&a, "GET", "/v1/transactions/1", NULL);
	c = CLI("show", "1", "--json", "--agent", base);
	CHECK_INT(c.code, 0);
	check_same_bytes(&c, &h, "show");
	run_free(&c);
	nt_http_result_free(&h);
	c = CLI("show", "99", "--agent", base);
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "nettune: not found");
	run_free(&c);

	/* rollback: a new transaction, its origin named. */
	c = CLI("rollback", "1", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "transaction 2 (rollback of 1): applied, 6 steps changed");
	run_free(&c);

	/* Again: it was rolled back already, which is all it says (no advice
	 * to roll back transaction 2 first or to use --force), and --force
	 * makes no empty transaction. */
	c = CLI("rollback", "1", "--agent", base);
	CHECK_INT(c.code, 5);
	CHECK_STR(c.err, "nettune: conflict: transaction 1 is already rolled back, by transaction 2\n");
	run_free(&c);
	c = CLI("rollback", "1", "--force", "--agent", base);
	CHECK_INT(c.code, 5);
	CHECK_STR(c.err, "nettune: conflict: transaction 1 is already rolled back, by transaction 2\n");
	run_free(&c);
	h = direct(&a, "GET", "/v1/transactions", NULL);
	CHECK_INT((int)json_array_size(json_object_get(h.json, "transactions")), 2);
	nt_http_result_free(&h);

	/* history: one line each, newest first; filters; --json the GET body. */
	c = CLI("history", "--agent", base);
	CHECK_INT(c.code, 0);
	char *l2 = strstr(c.out, "\n2 "), *l1 = strstr(c.out, "\n1 ");
	CHECK_MSG(l2 && l1 && l2 < l1, "newest first:\n%s", c.out);
	CHECK_HAS(c.out, "rollback of 1");
	CHECK_HAS(c.out, "epyc-fix");
	CHECK_HAS(c.out, " UTC");
	run_free(&c);
	c = CLI("history", "--status", "rolled_back", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "no transactions");
	run_free(&c);
	c = CLI("history", "--limit", "1", "--agent", base);
	CHECK_HAS(c.out, "showing the newest 1 of 2");
	CHECK_MSG(!strstr(c.out, "\n1 "), "limit 1 shows one:\n%s", c.out);
	run_free(&c);
	c = CLI("history", "--since", "1h", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_MSG(strstr(c.out, "\n1 ") && strstr(c.out, "\n2 "), "since 1h:\n%s", c.out);
	run_free(&c);
	c = CLI("history", "--since", "2999-01-01", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "no transactions");
	run_free(&c);
	c = CLI("history", "--since", "yesterday", "--agent", base);
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "--since");
	run_free(&c);
	h = direct(&a, "GET", "/v1/transactions?limit=20", NULL);
	c = CLI("history", "--json", "--agent", base);
	CHECK_INT(c.code, 0);
	check_same_bytes(&c, &h, "history");
	run_free(&c);
	nt_http_result_free(&h);

	/* A terminal gets colour (status words), unless NO_COLOR; a terminal
	 * with TERM=dumb none. */
	c = cli_pty(NULL, (const char *const[]){ "history", "--agent", base, NULL });
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "\033[32mapplied\033[0m");
	run_free(&c);
	c = cli_pty((const char *const[]){ "NO_COLOR=1", NULL },
		    (const char *const[]){ "history", "--agent", base, NULL });
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "applied");
	CHECK_HASNT(c.out, "\033");
	run_free(&c);
	c = cli_pty((const char *const[]){ "TERM=dumb", NULL },
		    (const char *const[]){ "show", "1", "--agent", base, NULL });
	CHECK_HAS(c.out, "transaction 1");
	CHECK_HASNT(c.out, "\033");
	run_free(&c);
	c = cli_pty(NULL, (const char *const[]){ "apply", bad, "--agent", base, NULL });
	CHECK_INT(c.code, 4);
	CHECK_HAS(c.out, "\033[");
	CHECK_HAS(c.out, "$.rings[0].rx");
	run_free(&c);

	/* try: ENTER at the prompt keeps the change (transaction 3). */
	static const char *const plain[] = { "NO_COLOR=1", NULL };
	c = cli_pty_answer(plain, (const char *const[]){ "try", good, "--confirm-timeout", "60", "--agent", base, NULL },
			   "press ENTER", "\n");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "transaction 3: pending_confirm, 6 steps changed");
	CHECK_HAS(c.out, "revert in");
	CHECK_HAS(c.out, "transaction 3: applied");
	run_free(&c);
	/* Nobody answers: the agent puts it back at the deadline, and try
	 * shows that and exits 9 (transaction 5, after rolling 3 back as 4). */
	c = CLI("rollback", "3", "--agent", base);
	CHECK_INT(c.code, 0);
	run_free(&c);
	c = cli_pty(plain, (const char *const[]){ "try", good, "--confirm-timeout", "1", "--agent", base, NULL });
	CHECK_INT(c.code, 9);
	CHECK_HAS(c.out, "transaction 5: reverted");
	CHECK_HAS(c.out, "put back: 6 steps");
	run_free(&c);
	c = CLI("plan", good, "--agent", base);
	CHECK_HAS(c.out, "6 steps; nothing applied"); /* all of it was put back */
	run_free(&c);
	/* Ctrl-C at the prompt: the countdown ends saying what happens next
	 * (transaction 6 stays pending until its deadline or a rollback). */
	c = cli_pty_answer(plain, (const char *const[]){ "try", good, "--confirm-timeout", "30", "--agent", base, NULL },
			   "press ENTER", "\003");
	CHECK_INT(c.code, 130);
	CHECK_HAS(c.out, "interrupted, not confirmed: the agent puts transaction 6 back at");
	CHECK_HAS(c.out, "nettune confirm 6");
	run_free(&c);
	c = CLI("show", "6", "--agent", base);
	CHECK_HAS(c.out, "transaction 6  pending_confirm");
	CHECK_HAS(c.out, "nettune confirm 6 keeps it");
	run_free(&c);
	/* It need not wait for its deadline: rollback reverts it now. */
	c = CLI("rollback", "6", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "transaction 6: reverted before its confirm deadline, 6 steps put back");
	run_free(&c);
	c = CLI("plan", good, "--agent", base);
	CHECK_HAS(c.out, "6 steps; nothing applied");
	run_free(&c);
	/* Without a terminal there is nobody to ask. */
	c = CLI("try", good, "--agent", base);
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "apply --confirm-timeout");
	run_free(&c);

	nt_agent_stop(&a);
}

/* A step that fails half-way: rolled_back, exit 6, the failing step with
 * the kernel's error and what was put back. The EPYC fix's ninth step
 * (net.core.wmem_max) is made unwritable while the steps run slowly. */
static void test_rolled_back(const char *dir, const char *root)
{
	nt_agent a;
	char prof[PATH_MAX], base[128];
	snprintf(prof, sizeof(prof), "%s/epyc.json", dir);
	write_file(prof, EPYC_FIX);
	setenv("NETTUNE_TEST_STEP_DELAY_MS", "200", 1);
	int r = nt_agent_start(&a, root, NULL, NULL);
	unsetenv("NETTUNE_TEST_STEP_DELAY_MS");
	if (r < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	pid_t pid = fork();
	if (pid == 0) {
		nt_agent_sleep_ms(600);
		_exit(tu_script(root, dir, "rm $R/proc/sys/net/core/wmem_max && mkdir $R/proc/sys/net/core/wmem_max"));
	}
	run c = CLI("apply", prof, "--agent", base);
	int st;
	waitpid(pid, &st, 0);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the fault could not be made");
	CHECK_INT(c.code, 6);
	CHECK_HAS(c.out, "transaction 1: rolled_back");
	CHECK_HAS(c.out, "failed: step 8, sysctl net.core.wmem_max");
	CHECK_HAS(c.out, "put back: 8 steps");
	CHECK_HAS(c.out, "the host is as it was before");
	run_free(&c);
	c = CLI("history", "--status", "rolled_back", "--agent", base);
	CHECK_HAS(c.out, "rolled_back");
	CHECK_HAS(c.out, "epyc-fix");
	run_free(&c);
	nt_agent_stop(&a);
	tu_script(root, dir, "rmdir $R/proc/sys/net/core/wmem_max && echo 212992 > $R/proc/sys/net/core/wmem_max");
}

/* An agent with tokens: no token, exit 8 and what to set; a read token
 * lists history but may not apply (exit 8, the scope it needs). */
static void test_denied(const char *dir, const char *root)
{
	nt_agent a;
	char tokens[PATH_MAX], prof[PATH_MAX], base[128];
	snprintf(tokens, sizeof(tokens), "%s/tokens", dir);
	snprintf(prof, sizeof(prof), "%s/good.json", dir);
	write_file(tokens, "ci read cli-test-read-secret-0123456789\n");
	write_file(prof, GOOD);
	chmod(tokens, 0600);
	const char *extra[] = { "--tokens", tokens, NULL };
	if (nt_agent_start(&a, root, NULL, extra) < 0) {
		CHECK_MSG(0, "agent with tokens did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	run c = CLI("history", "--agent", base);
	CHECK_INT(c.code, 8);
	CHECK_HAS(c.err, "nettune: not allowed:");
	CHECK_HAS(c.err, "NETTUNE_TOKEN");
	run_free(&c);
	static const char *const read_token[] = { "NETTUNE_TOKEN=cli-test-read-secret-0123456789", NULL };
	c = cli_env(read_token, (const char *const[]){ "history", "--agent", base, NULL });
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "no transactions");
	run_free(&c);
	c = cli_env(read_token, (const char *const[]){ "apply", prof, "--agent", base, NULL });
	CHECK_INT(c.code, 8);
	CHECK_HAS(c.err, "scope apply");
	run_free(&c);
	/* A plan changes nothing: the read scope may ask for one. */
	c = cli_env(read_token, (const char *const[]){ "plan", prof, "--agent", base, NULL });
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "6 steps; nothing applied");
	run_free(&c);
	nt_agent_stop(&a);
}

/* desired set, show and clear: clear's 204 is a success (exit 0 and a
 * line saying so), a second clear finds nothing (exit 1). */
static void test_desired_clear(const char *dir, const char *root)
{
	nt_agent a;
	char prof[PATH_MAX], base[128];
	snprintf(prof, sizeof(prof), "%s/rmem.json", dir);
	write_file(prof, "{\"name\":\"rmem\",\"sysctl\":{\"net.core.rmem_max\":\"16777216\"}}");
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	run c = CLI("desired", "set", prof, "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "desired state: profile rmem");
	run_free(&c);
	c = CLI("desired", "clear", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "desired state cleared; the host was not changed");
	CHECK_INT(strlen(c.err), 0);
	run_free(&c);
	c = CLI("desired", "clear", "--agent", base);
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "nettune: not found");
	run_free(&c);
	nt_agent_stop(&a);
}

/* Where an application goes: the CPUs the profile in effect
 * reserved for the NIC, and the rule that chose them; a bond for its
 * ports; a NIC of unknown node refused (non-zero) until --cpus-list. */
static void test_placement(const char *dir, const char *root)
{
	nt_agent a;
	char prof[PATH_MAX], base[128];
	snprintf(prof, sizeof(prof), "%s/app.json", dir);
	write_file(prof, "{\"name\":\"app\",\"irq_affinity\":[{\"interface\":\"enos*\",\"policy\":\"local\","
			 "\"exclude_cpus\":\"0\",\"reserve_app_cpus\":4}]}");
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	run c = CLI("plan", prof, "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "reserved for the application: enos0 cpus 30-31,94-95");
	run_free(&c);
	c = CLI("apply", prof, "--agent", base);
	CHECK_INT(c.code, 0);
	run_free(&c);
	c = CLI("placement", "enos0", "--cpus", "4", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "app cpus  30-31,94-95");
	CHECK_HAS(c.out, "rule      reserved: the CPUs transaction 1 reserved for enos0");
	run_free(&c);
	c = CLI("placement", "enos0", "--json", "--agent", base);
	CHECK_INT(c.code, 0);
	json_t *doc = json_loads(c.out, 0, NULL);
	CHECK_STR(json_string_value(json_object_get(doc, "rule")), "reserved");
	CHECK_STR(json_string_value(json_object_get(doc, "source")), "transaction 1");
	json_decref(doc);
	run_free(&c);
	/* enos2's own reservation, on node 1. */
	c = CLI("placement", "enos2", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "app cpus  62-63,126-127");
	run_free(&c);
	/* A bond: its ports, both nodes. */
	c = CLI("placement", "bond0", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "bond0: node 0-1, ports enos0,enos1,enos2,enos3");
	CHECK_HAS(c.out, "--membind=0-1");
	run_free(&c);
	/* A VLAN stands for the link it sits on: vlan5 on enos2 (node 1),
	 * vlan6 on bond0 (its ports, both nodes); irq_affinity places the
	 * link's IRQs. */
	tu_sh("cd '%s/sys' && mkdir -p devices/virtual/net/vlan5 devices/virtual/net/vlan6 && "
	      "ln -s ../../devices/virtual/net/vlan5 class/net/vlan5 && ln -s ../../devices/virtual/net/vlan6 "
	      "class/net/vlan6 && ln -s ../../../pci0000:81/0000:81:00.0/net/enos2 devices/virtual/net/vlan5/lower_enos2 && "
	      "ln -s ../bond0 devices/virtual/net/vlan6/lower_bond0 && for v in vlan5 vlan6; do echo 1500 > "
	      "devices/virtual/net/$v/mtu; echo up > devices/virtual/net/$v/operstate; done", root);
	c = CLI("placement", "vlan5", "--root", root);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "vlan5: node 1, ports enos2");
	run_free(&c);
	c = CLI("placement", "vlan6", "--root", root);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "vlan6: node 0-1, ports enos0,enos1,enos2,enos3");
	run_free(&c);
	snprintf(prof, sizeof(prof), "%s/vlan.json", dir);
	write_file(prof, "{\"name\":\"v\",\"irq_affinity\":[{\"interface\":\"vlan5\",\"policy\":\"local-node\"}]}");
	c = CLI("plan", prof, "--json", "--agent", base);
	CHECK_INT(c.code, 0);
	json_t *plan = json_loads(c.out, 0, NULL);
	size_t i;
	json_t *st;
	int on_enos2 = 0, others = 0;
	json_array_foreach(json_object_get(plan, "steps"), i, st) {
		if (!strcmp(json_string_value(json_object_get(st, "interface")) ?: "", "enos2"))
			on_enos2++;
		else
			others++;
	}
	CHECK_MSG(on_enos2 > 0 && others == 0, "vlan5's plan: %d steps on enos2, %d elsewhere", on_enos2, others);
	json_decref(plan);
	run_free(&c);
	/* Read alone (a --root and no agent named): no reservation known,
	 * CPUs of the node that serve no NIC's interrupts. */
	c = CLI("placement", "enos0", "--root", root);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "rule      node-free");
	run_free(&c);
	nt_agent_stop(&a);

	/* A NIC of unknown node (the VM's ifb0): refused with exit 1 and what
	 * to do, until the CPUs are named. */
	c = CLI("placement", "ifb0", "--root", NT_FIXTURES "/vm-virtio-2cpu");
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "--cpus-list");
	run_free(&c);
	c = CLI("placement", "ifb0", "--root", NT_FIXTURES "/vm-virtio-2cpu", "--cpus-list", "1");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "app cpus  1");
	CHECK_HAS(c.out, "rule      given");
	run_free(&c);
	c = CLI("placement", "ifb0", "--root", NT_FIXTURES "/vm-virtio-2cpu", "--cpus-list", "x");
	CHECK_INT(c.code, 2);
	run_free(&c);
	c = CLI("run", "--near", "ifb0", "--root", NT_FIXTURES "/vm-virtio-2cpu", "--", "true");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "--cpus-list");
	run_free(&c);
	/* CPUs this machine does not have (a placement worked out on another
	 * host): said as such, not as "Invalid argument". */
	cpu_set_t mine;
	bool big = sched_getaffinity(0, sizeof(mine), &mine) == 0 && (CPU_ISSET(126, &mine) || CPU_ISSET(127, &mine));
	c = CLI("run", "--near", "enos2", "--root", EPYC, "--cpus-list", "126-127", "--", "true");
	if (big) {
		/* This machine has one of them: the bind works. */
		CHECK_INT(c.code, 0);
	} else {
		CHECK_INT(c.code, 1);
		CHECK_HAS(c.err, "nettune: the placement names CPUs 126-127, which this machine does not have or does "
				 "not let this process use (it may use ");
		CHECK_HAS(c.err, "it was worked out on the host of --root");
		CHECK_HASNT(c.err, "Invalid argument");
	}
	run_free(&c);
	/* CPU 0 exists on every machine that runs this test. */
	c = CLI("run", "--near", "ifb0", "--root", NT_FIXTURES "/vm-virtio-2cpu", "--cpus-list", "0", "--", "sh", "-c",
		"grep Cpus_allowed_list /proc/self/status");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "Cpus_allowed_list:\t0\n");
	run_free(&c);
}

static void test_without_agent(void)
{
	/* Nothing listens on port 1. */
	/* nics IF reads the host itself: a queue table of one NIC. */
	const char *fx = EPYC;
	run c = CLI("nics", "enos0", "--root", fx);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "RX        IRQ IRQ CPUS       SERVED BY  RPS CPUS       RFS FLOWS");
	CHECK_HAS(c.out, "rx-1      102 3              3          (none)         0");
	CHECK_HAS(c.out, "XPS RXQS");
	run_free(&c);
	c = CLI("nics", "enos0", "--root", fx, "--json");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "\"rps_flow_cnt\": 0");
	run_free(&c);
	c = CLI("nics", "nosuch0", "--root", fx);
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "no NIC named 'nosuch0'");
	run_free(&c);
	c = CLI("history", "--agent", "http://127.0.0.1:1");
	CHECK_INT(c.code, 3);
	CHECK_HAS(c.err, "cannot reach the agent at http://127.0.0.1:1");
	CHECK_HAS(c.err, "nettune serve");
	run_free(&c);
	c = CLI("show", "abc");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "not a transaction id");
	run_free(&c);
	c = CLI("history", "-o", "yaml");
	CHECK_INT(c.code, 2);
	run_free(&c);
	c = CLI("plan", "/nonexistent/profile.json");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "nettune: cannot read /nonexistent/profile.json: No such file or directory");
	CHECK_HASNT(c.err, "line -1");
	run_free(&c);
	/* An option the command does not read is refused by name, with the
	 * command's own options listed; nothing runs. */
	c = CLI("topology", "--tls-cert", "x.pem");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "topology does not take --tls-cert");
	CHECK_HAS(c.err, "--root --json --output");
	CHECK_HASNT(c.err, "--listen");
	CHECK_INT((int)c.out_len, 0);
	run_free(&c);
	c = CLI("serve", "--persist", "--listen", "127.0.0.1:1");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "serve does not take --persist");
	/* serve's are the configuration file's keys and the file's own two. */
	CHECK_HAS(c.err, "--held-files");
	CHECK_HAS(c.err, "--check-config");
	run_free(&c);
	c = CLI("serve", "-o", "json");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "serve does not take --output");
	run_free(&c);
	c = CLI("plan", "--confirm-timeout", "5", "/nonexistent/profile.json");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "plan does not take --confirm-timeout");
	CHECK_HASNT(c.err, "/nonexistent/profile.json");
	run_free(&c);
	c = CLI("history", "--force");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "history does not take --force");
	run_free(&c);
	/* ... and the ones it reads still work, --help on every command. */
	/* Text diagnose: each finding with the fragment that fixes it. */
	c = CLI("diagnose", "--root", EPYC);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "ring-below-max");
	CHECK_HAS(c.out, "        fix: {\"rings\":[{\"interface\":\"enos0\"");
	CHECK_HAS(c.out, "nettune diagnose --root " EPYC " --fix-profile | nettune plan -");
	run_free(&c);
	c = CLI("diagnose", "--root", EPYC, "--rtt-ms", "5", "--fix-profile");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "\"irq_affinity\"");
	run_free(&c);
	/* irqs: a table for people, the document with --json (the same bytes
	 * as before the table: GET /v1/irqs's), a NIC's IRQs by name. */
	c = CLI("irqs", "--root", EPYC, "--interval-ms", "10");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "IRQ  OWNER  QUEUE  AFFINITY  EFFECTIVE  NODE  IRQ/S");
	CHECK_HAS(c.out, "mlx5_comp0@pci:0000:01:00.0");
	CHECK_HAS(c.out, "IRQ/S over 10 ms");
	CHECK_HASNT(c.out, "{");
	run_free(&c);
	run j = CLI("irqs", "--root", EPYC, "--json");
	CHECK_INT(j.code, 0);
	json_t *ja = json_loads(j.out ? j.out : "", 0, NULL);
	CHECK(ja && json_array_size(json_object_get(ja, "irqs")) > 0 && json_object_get(ja, "cpu_columns"));
	run_free(&j);
	c = CLI("irqs", "enos0", "--root", EPYC, "--interval-ms", "10");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, " enos0 ");
	CHECK_HASNT(c.out, "enos1");
	CHECK_HASNT(c.out, "ttyS0");
	run_free(&c);
	j = CLI("irqs", "--nic", "enos1", "--json", "--root", EPYC);
	CHECK_INT(j.code, 0);
	json_t *jb = json_loads(j.out ? j.out : "", 0, NULL);
	size_t ix, nown = 0;
	json_t *q;
	json_array_foreach(json_object_get(ja, "irqs"), ix, q)
		nown += json_is_string(json_object_get(q, "owner")) &&
			!strcmp(json_string_value(json_object_get(q, "owner")), "enos1");
	CHECK(jb && nown > 0 && json_array_size(json_object_get(jb, "irqs")) == nown);
	json_array_foreach(json_object_get(jb, "irqs"), ix, q)
		CHECK_STR(json_string_value(json_object_get(q, "owner")), "enos1");
	json_decref(ja);
	json_decref(jb);
	run_free(&j);
	c = CLI("irqs", "nosuch0", "--root", EPYC);
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "no NIC named 'nosuch0'");
	run_free(&c);
	c = CLI("rates", "--root", EPYC, "--interval-ms", "10", "-o", "json");
	CHECK_INT(c.code, 0);
	run_free(&c);
	c = CLI("serve", "--help");
	CHECK_INT(c.code, 0);
	run_free(&c);
	/* help COMMAND: the same list, on stdout. */
	c = CLI("help", "rollback");
	CHECK_INT(c.code, 0);
	CHECK_STR(c.out, "rollback options: --json --agent --force --output --verbose\n");
	run_free(&c);
	c = CLI("help", "nosuch");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "unknown command 'nosuch'");
	run_free(&c);
	/* --help lists every exit code. */
	c = CLI("--help");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "Exit status:");
	CHECK_HAS(c.out, "    4  the profile was refused");
	CHECK_HAS(c.out, "    7  rollback failed");
	CHECK_HAS(c.out, "  130  interrupted at the try prompt");
	run_free(&c);
}

/* Stored profiles from the command line, and --name: the agent's stored
 * profile first, else the shipped one (NETTUNE_SHIPPED_PROFILES points at
 * the source tree's profiles/). */
static void test_profiles(const char *dir, const char *root)
{
	nt_agent a;
	char good[PATH_MAX], base[128];
	static const char *const shipped[] = { "NETTUNE_SHIPPED_PROFILES=" NT_FIXTURES "/../../profiles", NULL };
	/* Drift checked every second: what the note after a rollback of the
	 * desired state's transaction says is seen to be so. */
	static const char *const every_second[] = { "--drift-interval", "1", NULL };
	if (nt_agent_start(&a, root, NULL, every_second) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	snprintf(good, sizeof(good), "%s/good.json", dir);
	write_file(good, GOOD);
#define PCLI(...) cli_env(shipped, (const char *const[]){ __VA_ARGS__, "--agent", base, NULL })
	run c = PCLI("profiles");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "the agent stores no profiles");
	CHECK_HAS(c.out, "shipped in ");
	CHECK_HAS(c.out, "throughput");
	CHECK_HAS(c.out, "esnet-100g");
	run_free(&c);
	c = PCLI("profiles", "put", "epyc-fix", good);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "profile epyc-fix stored");
	run_free(&c);
	c = PCLI("profiles", "put", "epyc-fix", good);
	CHECK_HAS(c.out, "profile epyc-fix replaced");
	run_free(&c);
	c = PCLI("profiles", "put", "other", good); /* the file names itself epyc-fix */
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "does not match");
	run_free(&c);
	c = PCLI("profiles", "list");
	CHECK_HAS(c.out, "stored in the agent:");
	CHECK_HAS(c.out, "epyc-fix");
	/* A stored epyc-fix hides the shipped one of that name. */
	CHECK_HAS(c.out, "shipped in ");
	CHECK_MSG(!strstr(strstr(c.out, "shipped in") ?: "", "epyc-fix"),
		  "shipped epyc-fix listed beside the stored one:\n%s", c.out);
	run_free(&c);
	c = PCLI("profiles", "show", "epyc-fix");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "\"layer3+4\"");
	run_free(&c);
	nt_http_result h = direct(&a, "GET", "/v1/profiles", NULL);
	c = PCLI("profiles", "--json");
	check_same_bytes(&c, &h, "profiles --json");
	run_free(&c);
	nt_http_result_free(&h);

	/* --name: the stored one goes as profile_name; a shipped one as its
	 * document, said on stderr; an unknown name exits 1. */
	c = PCLI("plan", "--name", "epyc-fix");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "6 steps; nothing applied");
	CHECK_HASNT(c.err, "shipped");
	run_free(&c);
	c = PCLI("plan", "--name", "throughput");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.err, "profile 'throughput' is the shipped ");
	CHECK_HAS(c.out, "net.ipv4.tcp_rmem");
	run_free(&c);
	c = PCLI("profiles", "show", "latency");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "net.core.busy_poll");
	run_free(&c);
	c = PCLI("plan", "--name", "nosuch");
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "no profile 'nosuch'");
	run_free(&c);
	/* The nettune of the build tree, with no NETTUNE_SHIPPED_PROFILES:
	 * the source tree's profiles/, listed and loaded by name. */
	char tree[PATH_MAX], want[PATH_MAX + 64];
	if (!realpath(NT_FIXTURES "/../../profiles", tree))
		snprintf(tree, sizeof(tree), "(no profiles/ in the source tree)");
	c = cli_env(NULL, (const char *const[]){ "profiles", "--agent", base, NULL });
	CHECK_INT(c.code, 0);
	snprintf(want, sizeof(want), "shipped in %s (plan, apply or try --name NAME):", tree);
	CHECK_HAS(c.out, want);
	CHECK_HAS(c.out, "100g-streams");
	run_free(&c);
	c = cli_env(NULL, (const char *const[]){ "plan", "--name", "throughput", "--agent", base, NULL });
	CHECK_INT(c.code, 0);
	snprintf(want, sizeof(want), "profile 'throughput' is the shipped %s/throughput.json", tree);
	CHECK_HAS(c.err, want);
	CHECK_HAS(c.out, "net.ipv4.tcp_rmem");
	run_free(&c);
	/* A folder that is not there is said, not left out. */
	c = cli_env((const char *const[]){ "NETTUNE_SHIPPED_PROFILES=/nonexistent/profiles", NULL },
		    (const char *const[]){ "profiles", "--agent", base, NULL });
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "no shipped profiles: /nonexistent/profiles: No such file or directory");
	run_free(&c);
	c = PCLI("plan", good, "--name", "epyc-fix");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "one PROFILE.json or --name NAME");
	run_free(&c);
	c = PCLI("apply");
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "nettune: apply wants one PROFILE.json or --name NAME, or --plan ID (the id 'nettune plan' printed)");
	run_free(&c);
	c = PCLI("plan", "--name", "../etc");
	CHECK_INT(c.code, 2);
	run_free(&c);
	c = PCLI("apply", "--name", "epyc-fix");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "transaction 1: applied, 6 steps changed");
	run_free(&c);
	h = direct(&a, "GET", "/v1/transactions/1", NULL);
	CHECK_STR(json_string_value(json_object_get(h.json, "profile_name")), "epyc-fix");
	nt_http_result_free(&h);
	/* Rolling back the transaction that set the desired state: the
	 * state still holds, and the CLI says what the agent does with it. */
	c = PCLI("rollback", "1");
	CHECK_INT(c.code, 0);
	CHECK_HASNT(c.out, "desired state");
	run_free(&c);
	c = PCLI("apply", "--name", "epyc-fix", "--persist");
	CHECK_HAS(c.out, "transaction 3: applied, 6 steps changed");
	run_free(&c);
	c = PCLI("rollback", "3");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "note: transaction 3 made profile epyc-fix the desired state, which still holds");
	CHECK_HAS(c.out, "the targets this rollback changed are reported overridden ('nettune drift");
	CHECK_HAS(c.out, "nettune desired clear");
	/* What the agent does is not to put the profile back. */
	CHECK_HASNT(c.out, "puts the profile back");
	CHECK_HASNT(c.out, "repairs the difference");
	run_free(&c);
	/* ... and so it is (policy repair): every target overridden, none
	 * repaired, no transaction after the rollback. */
	size_t nt = 0, over = 0, ti;
	json_t *tg;
	for (int i = 0; i < 60 && (nt == 0 || over < nt); i++) {
		usleep(100000);
		h = direct(&a, "GET", "/v1/drift", NULL);
		nt = json_array_size(json_object_get(h.json, "targets"));
		over = 0;
		json_array_foreach(json_object_get(h.json, "targets"), ti, tg)
			over += !strcmp(json_string_value(json_object_get(tg, "state")) ?: "", "overridden") &&
				json_integer_value(json_object_get(tg, "repairs_in_window")) == 0;
		nt_http_result_free(&h);
	}
	CHECK_MSG(nt > 0 && over == nt, "after the rollback: %zu of %zu targets overridden, unrepaired", over, nt);
	sleep(2);
	h = direct(&a, "GET", "/v1/transactions", NULL);
	CHECK_INT((int)json_integer_value(json_object_get(h.json, "total")), 4);
	nt_http_result_free(&h);
	c = PCLI("desired", "clear");
	run_free(&c);

	c = PCLI("profiles", "delete", "epyc-fix");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "profile epyc-fix deleted");
	run_free(&c);
	c = PCLI("profiles", "delete", "epyc-fix");
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "no profile 'epyc-fix'");
	run_free(&c);
	c = PCLI("profiles", "frobnicate");
	CHECK_INT(c.code, 2);
	run_free(&c);
#undef PCLI
	nt_agent_stop(&a);
}

/* Occurrences of NEEDLE in HAY. */
static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay ? strstr(hay, needle) : NULL; p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* bench-run's per-queue counters (issue 41): COMMAND plays a round's
 * traffic by adding to enos0's RX queue counters in the fixture's qstats
 * (1,176,000 packets on queue 3, 1,500 on each other queue: 98% on one);
 * enos2 and enos3 keep no qstats (the member removed: what a kernel before
 * 6.9 or a driver without them answers). The report has each queue's
 * delta, the skew line, and the two NICs without counters said once under
 * one reason; bond0 and lo, without a device, are not looked at. A round
 * spread evenly says nothing of a queue. --compare has the line per round
 * and the missing NICs once. */
static void test_bench_queues(const char *dir, const char *root, const char *prof, const char *rep)
{
	nt_agent a;
	char bump[PATH_MAX], base[128];
	snprintf(bump, sizeof(bump), "%s/bump.py", dir);
	static const char py[] =
		"import json, os, sys\n"
		"p = sys.argv[1] + '/ethtool/enos0.json'\n"
		"d = json.load(open(p))\n"
		"for q in d['netdev']['qstats']:\n"
		"    if q['queue-type'] == 'rx':\n"
		"        n = 1176000 if q['queue-id'] == 3 and sys.argv[2] == 'skew' else 1500\n"
		"        q['rx-packets'] += n; q['rx-bytes'] += n * 1500\n"
		"json.dump(d, open(p + '.tmp', 'w')); os.rename(p + '.tmp', p)\n"
		"print('v=1')\n";
	write_file(bump, py);
	tu_script(root, dir, "for n in enos2 enos3; do python3 -c 'import json, sys\n"
			     "p = sys.argv[1]; d = json.load(open(p)); del d[\"netdev\"][\"qstats\"]; "
			     "json.dump(d, open(p, \"w\"))' $R/ethtool/$n.json; done");
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	run c = CLI("bench-run", "--agent", base, "--root", root, "--profile", prof, "--report", rep, "--", "python3",
		    bump, root, "skew");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.err, "enos0: RX queue 3 took 98% of 1.2M packets");
	CHECK_HAS(c.err, "enos0            rx      3        1176000       1764000000");
	CHECK_HAS(c.err, "per-queue counters: none for enos2, enos3: no per-queue statistics: a kernel before 6.9 "
			 "(qstats-get), or the driver (mlx5_core) keeps none");
	CHECK_INT(count_of(c.err, "per-queue counters: none"), 1);
	CHECK_HASNT(c.err, "TX queue");
	run_free(&c);
	json_t *r = json_load_file(rep, 0, NULL);
	json_t *cq = json_object_get(json_object_get(r, "counters"), "queues");
	json_t *e0 = NULL, *row;
	size_t i;
	json_array_foreach(cq, i, row) {
		const char *nic = json_string_value(json_object_get(row, "nic"));
		CHECK_MSG(nic && strcmp(nic, "bond0") && strcmp(nic, "lo"), "%s looked at", nic ? nic : "?");
		if (nic && !strcmp(nic, "enos0"))
			e0 = row;
	}
	CHECK_INT(json_array_size(cq), 4);
	CHECK_STR(json_string_value(json_object_get(e0, "source")), "netlink");
	CHECK_INT(json_integer_value(json_object_get(e0, "rx_packets")), 1176000 + 15 * 1500);
	CHECK_INT(json_integer_value(json_object_get(e0, "tx_packets")), 0);
	CHECK_INT(json_array_size(json_object_get(e0, "rx")), 16);
	json_t *q3 = json_array_get(json_object_get(e0, "rx"), 3);
	CHECK_INT(json_integer_value(json_object_get(q3, "queue")), 3);
	CHECK_INT(json_integer_value(json_object_get(q3, "packets")), 1176000);
	CHECK_INT(json_integer_value(json_object_get(q3, "bytes")), 1176000LL * 1500);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(e0, "rx_top"), "queue")), 3);
	CHECK(json_is_null(json_object_get(e0, "tx_top")));
	CHECK_STR(json_string_value(json_array_get(json_object_get(json_object_get(r, "counters"), "queue_skew"), 0)),
		  "enos0: RX queue 3 took 98% of 1.2M packets");
	json_t *miss = json_object_get(json_object_get(r, "counters"), "queue_stats_missing");
	CHECK_INT(json_array_size(miss), 1);
	CHECK_INT(json_array_size(json_object_get(json_array_get(miss, 0), "nics")), 2);

	/* Bound near enos0 to CPU 0 (--cpus-list: a CPU this machine has):
	 * CPU 0 is the application class of the round's CPU time; unbound
	 * (above) there is none. */
	CHECK(json_object_get(json_object_get(json_object_get(json_object_get(r ? r : json_null(), "counters"),
									"cpu_time"), "classes"), "app") == NULL);
	json_decref(r);
	c = CLI("bench-run", "--agent", base, "--root", root, "--profile", prof, "--report", rep, "--near", "enos0",
		"--cpus-list", "0", "--", "python3", bump, root, "even");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.err, "on the 1 application CPUs (--near) that served none 0.00 s");
	run_free(&c);
	json_t *rn = json_load_file(rep, 0, NULL);
	json_t *app = json_object_get(
		json_object_get(json_object_get(json_object_get(rn, "counters"), "cpu_time"), "classes"), "app");
	CHECK_INT(json_array_size(json_object_get(app, "list")), 1);
	CHECK_INT(json_integer_value(json_array_get(json_object_get(app, "list"), 0)), 0);
	CHECK_INT(json_array_size(json_object_get(app, "with_nic_irq")), 0);
	json_decref(rn);

	/* Spread evenly: each queue's delta, no skew line. */
	c = CLI("bench-run", "--agent", base, "--root", root, "--profile", prof, "--report", rep, "--", "python3",
		bump, root, "even");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.err, "enos0            rx      3           1500          2250000");
	CHECK_HASNT(c.err, "took");
	run_free(&c);

	/* --compare: the line under its round, the NICs without once. */
	c = CLI("bench-run", "--compare", "2", "--agent", base, "--root", root, "--profile", prof, "--report", rep,
		"--metric-regex", "v=([0-9]+)", "--higher-is-better", "--", "python3", bump, root, "skew");
	CHECK_HAS(c.err, "round 1: enos0: RX queue 3 took 98% of 1.2M packets");
	CHECK_HAS(c.err, "round 4: enos0: RX queue 3 took 98% of 1.2M packets");
	CHECK_INT(count_of(c.err, "per-queue counters: none for enos2, enos3"), 1);
	run_free(&c);
	r = json_load_file(rep, 0, NULL);
	json_t *r1 = json_array_get(json_object_get(r, "rounds"), 0);
	CHECK_STR(json_string_value(json_array_get(json_object_get(json_object_get(r1, "counters"), "queue_skew"), 0)),
		  "enos0: RX queue 3 took 98% of 1.2M packets");
	CHECK_INT(json_array_size(json_object_get(json_object_get(r1, "counters"), "queues")), 4);
	CHECK_INT(json_array_size(json_object_get(r, "queue_stats_missing")), 1);
	json_decref(r);
	nt_agent_stop(&a);
}

/* bench-run on a fixture: in a network namespace of its own (the tree's
 * proc/self/ns/net and proc/1/ns/net are two files) the agent refuses a
 * profile with IRQ affinity (422, naming the JSON path), and with
 * --allow-machine-wide plans it, and bench-run warns of the steps whose
 * kinds declare they reach the whole machine (irq_affinity), not of rings,
 * which are the namespace's NIC's; a transaction that stops at its first
 * step reports the steps after it as "not run". */
static void test_bench(const char *dir, const char *root)
{
	nt_agent a;
	char prof[PATH_MAX], irqprof[PATH_MAX], rep[PATH_MAX], base[128];
	snprintf(prof, sizeof(prof), "%s/rings.json", dir);
	snprintf(irqprof, sizeof(irqprof), "%s/irqs.json", dir);
	snprintf(rep, sizeof(rep), "%s/report.json", dir);
	write_file(prof, "{\"name\":\"r\",\"rings\":[{\"interface\":\"enos0\",\"rx\":2048},"
			 "{\"interface\":\"enos1\",\"rx\":2048}]}");
	write_file(irqprof, "{\"name\":\"i\",\"irq_affinity\":[{\"interface\":\"enos0\",\"cpus\":\"1-4\"}],"
			    "\"rings\":[{\"interface\":\"enos0\",\"rx\":2048}]}");
	tu_script(root, dir, "mkdir -p $R/proc/self/ns $R/proc/1/ns && echo self > $R/proc/self/ns/net "
			     "&& echo init > $R/proc/1/ns/net");
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	run c = CLI("bench-run", "--agent", base, "--root", root, "--profile", prof, "--report", rep, "--", "true");
	CHECK_INT(c.code, 0);
	CHECK_HASNT(c.err, "whole machine");
	run_free(&c);
	c = CLI("bench-run", "--agent", base, "--root", root, "--profile", irqprof, "--report", rep, "--", "true");
	CHECK_INT(c.code, 125);
	CHECK_HAS(c.err, "$.irq_affinity[0]");
	CHECK_HAS(c.err, "allow_machine_wide");
	run_free(&c);
	nt_agent_stop(&a);

	static const char *const allow[] = { "--allow-machine-wide", NULL };
	if (nt_agent_start(&a, root, NULL, allow) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	c = CLI("bench-run", "--agent", base, "--root", root, "--profile", irqprof, "--report", rep, "--", "true");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.err, "warning: running in a network namespace of its own, but irq_affinity change the whole machine");
	CHECK_HASNT(c.err, "rings change");
	run_free(&c);
	json_t *r = json_load_file(rep, 0, NULL);
	CHECK_HAS(json_string_value(json_array_get(json_object_get(r, "warnings"), 0)), "irq_affinity change the whole machine");
	json_decref(r);
	nt_agent_stop(&a);

	/* One inode, the initial namespace: no warning. */
	tu_script(root, dir, "ln -f $R/proc/1/ns/net $R/proc/self/ns/net");
	setenv("NETTUNE_TEST_FAULT", "fail:0", 1);
	int st = nt_agent_start(&a, root, NULL, NULL);
	unsetenv("NETTUNE_TEST_FAULT");
	if (st < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	c = CLI("bench-run", "--agent", base, "--root", root, "--profile", prof, "--report", rep, "--", "true");
	CHECK_INT(c.code, 125);
	CHECK_HASNT(c.err, "network namespace");
	CHECK_HAS(c.err, "ended rolled_back");
	CHECK_HAS(c.err, "1 step(s) not run");
	run_free(&c);
	r = json_load_file(rep, 0, NULL);
	json_t *steps = json_object_get(json_object_get(r, "transaction"), "steps");
	CHECK_STR(json_string_value(json_object_get(json_array_get(steps, 0), "result")), "failed");
	CHECK_STR(json_string_value(json_object_get(json_array_get(steps, 1), "result")), "not run");
	json_decref(r);
	nt_agent_stop(&a);
	test_bench_queues(dir, root, prof, rep);
}

/* A fake agent for what a fixture agent never sends: strings that hold
 * terminal controls, a malformed document, silence and a huge answer.
 * A process (and one more per connection) in its own group, answering by
 * path; stopped with fake_stop. */
#define HOSTILE "\\u001b]0;pwned\\u0007\\u001b[2J\\u009b1A\\u202eok\\u2066x\\nline"
static const char *fake_body(const char *req, int *status)
{
	*status = 200;
	if (!strncmp(req, "GET /v1/transactions/1 ", 23))
		return "{\"id\":1,\"status\":\"rollback_failed\",\"created\":\"2026-11-30T16:52:00.615Z\","
		       "\"profile_name\":\"" HOSTILE "\",\"client\":\"c\",\"identity\":\"" HOSTILE "\","
		       "\"error\":\"" HOSTILE "\",\"warnings\":[\"" HOSTILE "\"],\"reserved\":{\"" HOSTILE "\":\"1\"},"
		       "\"steps\":[{\"index\":0,\"interface\":\"" HOSTILE "\",\"kind\":\"sysctl\",\"target\":\"" HOSTILE
		       "\",\"before\":\"" HOSTILE "\",\"after\":\"1\",\"result\":\"rollback_failed\",\"error\":\"" HOSTILE
		       "\"}]}";
	if (!strncmp(req, "GET /v1/transactions/5 ", 23)) {
		*status = 409;
		return "{\"type\":\"about:blank\",\"title\":\"" HOSTILE "\",\"status\":409,\"detail\":\"" HOSTILE "\"}";
	}
	if (!strncmp(req, "GET /v1/transactions/6 ", 23)) {
		*status = 500;
		return "\x1b]0;raw\x07 not json \xc2\x9b";
	}
	if (!strncmp(req, "GET /v1/transactions?", 21))
		return "{\"total\":1,\"limit\":20,\"offset\":0,\"transactions\":[{\"id\":1,\"status\":\"applied\","
		       "\"created\":\"2026-11-30T16:52:00.615Z\",\"nsteps\":1,\"client\":\"" HOSTILE "\","
		       "\"profile_name\":\"" HOSTILE "\",\"error\":\"" HOSTILE "\"}]}";
	if (!strncmp(req, "GET /v1/drift ", 14))
		return "{\"status\":\"drifted\",\"policy\":\"report\",\"interval_s\":30,\"message\":\"" HOSTILE "\","
		       "\"targets\":[{\"kind\":\"sysctl\",\"target\":\"" HOSTILE "\",\"desired\":\"1\",\"current\":\""
		       HOSTILE "\",\"state\":\"drifted\",\"culprit\":\"" HOSTILE "\"}]}";
	if (!strncmp(req, "GET /v1/desired ", 16))
		return "{\"profile\":{\"name\":\"x\"},\"profile_name\":\"" HOSTILE "\",\"source\":\"api\",\"set\":"
		       "\"2026-11-30T16:52:00.615Z\",\"client\":\"" HOSTILE "\",\"identity\":\"" HOSTILE "\","
		       "\"policy\":\"report\",\"history\":[{\"at\":\"2026-11-30T16:52:00.615Z\",\"action\":\"set\","
		       "\"profile_name\":\"" HOSTILE "\",\"identity\":\"" HOSTILE "\"}]}";
	if (!strncmp(req, "POST /v1/plan ", 14))
		return "{\"steps\":7}";
	/* The CLI asks for the lean answer (?steps=failed), --json for the whole one. */
	if (!strncmp(req, "POST /v1/transactions ", 22) || !strncmp(req, "POST /v1/transactions?steps=failed ", 35))
		return "{\"id\":3,\"status\":\"applied\",\"steps\":{}}";
	return NULL;
}

static void fake_conn(int c)
{
	char req[65536];
	size_t n = 0;
	ssize_t k;
	while (n + 1 < sizeof(req) && (k = read(c, req + n, sizeof(req) - 1 - n)) > 0) {
		n += (size_t)k;
		req[n] = '\0';
		char *end = strstr(req, "\r\n\r\n");
		if (!end)
			continue;
		const char *cl = strcasestr(req, "\r\nContent-Length:");
		size_t want = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
		if (n - (size_t)(end + 4 - req) >= want)
			break;
	}
	req[n] = '\0';
	char head[256];
	if (!strncmp(req, "GET /v1/transactions/2 ", 23)) {
		sleep(60); /* silent */
	} else if (!strncmp(req, "GET /v1/transactions/3 ", 23)) {
		/* 100 MiB without a length, until the reader goes. */
		static char chunk[65536];
		memset(chunk, 'x', sizeof(chunk));
		const char *h = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
		if (write(c, h, strlen(h)) > 0)
			for (int i = 0; i < 1600 && write(c, chunk, sizeof(chunk)) > 0; i++)
				;
	} else if (!strncmp(req, "GET /v1/transactions/4 ", 23)) {
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
					     "Content-Length: 209715200\r\nConnection: close\r\n\r\n{");
		(void)!write(c, head, strlen(head));
	} else {
		int status;
		const char *b = fake_body(req, &status);
		if (!b)
			status = 404, b = "{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404}";
		snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
					     "Connection: close\r\n\r\n", status, strlen(b));
		(void)!write(c, head, strlen(head));
		(void)!write(c, b, strlen(b));
	}
	close(c);
	_exit(0);
}

static pid_t fake_start(char *url, size_t size)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 16) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0) {
		if (l >= 0)
			close(l);
		return -1;
	}
	snprintf(url, size, "http://127.0.0.1:%d", ntohs(a.sin_port));
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGCHLD, SIG_IGN);
		for (;;) {
			int c = accept(l, NULL, NULL);
			if (c < 0)
				continue;
			if (fork() == 0) {
				close(l);
				fake_conn(c);
			}
			close(c);
		}
	}
	if (pid > 0)
		setpgid(pid, pid);
	close(l);
	return pid;
}

static void fake_stop(pid_t pid)
{
	if (pid > 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* No byte that drives a terminal in S: no ESC, BEL, 8-bit CSI, bidi
 * override or isolate, and no newline but the CLI's own line ends. */
static bool terminal_safe(const char *s)
{
	return s && !strchr(s, '\x1b') && !strchr(s, '\x07') && !strstr(s, "\xc2\x9b") && !strstr(s, "\xe2\x80\xae") &&
	       !strstr(s, "\xe2\x81\xa6") && !strstr(s, "\nline");
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_hostile_agent(void)
{
	char url[64], env_url[96];
	pid_t fake = fake_start(url, sizeof(url));
	CHECK_MSG(fake > 0, "cannot start the fake agent");
	if (fake <= 0)
		return;
	snprintf(env_url, sizeof(env_url), "NETTUNE_AGENT=%s", url);
	const char *env[] = { env_url, NULL };
	const char *tty_env[] = { env_url, "TERM=xterm", NULL };
	static const char *const cmds[][3] = {
		{ "show", "1", NULL }, { "history", NULL, NULL }, { "drift", NULL, NULL },
		{ "desired", "show", NULL }, { "show", "5", NULL }, { "show", "6", NULL },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		run c = cli_env(env, cmds[i]);
		CHECK_MSG(terminal_safe(c.out) && terminal_safe(c.err), "nettune %s %s printed controls:\n%s%s", cmds[i][0],
			  cmds[i][1] ? cmds[i][1] : "", c.out, c.err);
		CHECK_MSG(has(c.out, "\\x1b]0;pwned\\x07") || has(c.err, "\\x1b]0;pwned\\x07") ||
				  has(c.err, "\\x1b]0;raw\\x07"),
			  "nettune %s: the escaped text is missing:\n%s%s", cmds[i][0], c.out, c.err);
		run_free(&c);
		/* On a terminal, with colour: the CLI's own SGR codes, and only those. */
		c = cli_pty(tty_env, cmds[i]);
		CHECK_HASNT(c.out, "\x1b]");
		CHECK_HASNT(c.out, "\x1b[2J");
		CHECK_HASNT(c.out, "\xe2\x80\xae");
		run_free(&c);
	}
	run c = cli_env(env, (const char *const[]){ "show", "1", NULL });
	CHECK_HAS(c.out, "\\u009b1A\\u202eok\\u2066x\\x0aline");
	CHECK_HAS(c.out, "rollback_failed");
	run_free(&c);
	/* --json stays the agent's bytes. */
	c = cli_env(env, (const char *const[]){ "show", "1", "--json", NULL });
	CHECK_HAS(c.out, "\\u001b]0;pwned");
	CHECK_INT(c.code, 0);
	run_free(&c);

	/* A malformed document is an error, not "already tuned". */
	char prof[] = "/tmp/nt-cli-prof-XXXXXX";
	int pf = mkstemp(prof);
	CHECK((pf >= 0 && write(pf, "{\"name\":\"x\"}", 12) == 12));
	if (pf >= 0)
		close(pf);
	c = cli_env(env, (const char *const[]){ "plan", prof, NULL });
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "malformed document (steps is not an array of objects)");
	CHECK_HASNT(c.out, "already tuned");
	run_free(&c);
	c = cli_env(env, (const char *const[]){ "apply", prof, NULL });
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "malformed document");
	CHECK_HASNT(c.out, "already tuned");
	run_free(&c);
	unlink(prof);

	/* A silent agent is waited for NETTUNE_TIMEOUT seconds. */
	char to[] = "NETTUNE_TIMEOUT=1";
	const char *env_to[] = { env_url, to, NULL };
	double t0 = mono_s();
	c = cli_env(env_to, (const char *const[]){ "show", "2", NULL });
	double took = mono_s() - t0;
	printf("silent agent with NETTUNE_TIMEOUT=1: gave up after %.2f s\n", took);
	CHECK_INT(c.code, 3);
	CHECK_HAS(c.err, "no answer within 1 s");
	CHECK_MSG(took < 5, "took %.1f s", took);
	run_free(&c);
	c = cli_env((const char *const[]){ env_url, "NETTUNE_TIMEOUT=soon", NULL }, (const char *const[]){ "show", "1", NULL });
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "NETTUNE_TIMEOUT wants a number of seconds");
	run_free(&c);

	/* Answers past 64 MiB are not read: announced, and streamed. */
	c = cli_env(env, (const char *const[]){ "show", "4", NULL });
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "larger than 64 MiB");
	run_free(&c);
	c = cli_env(env, (const char *const[]){ "show", "3", NULL });
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "larger than 64 MiB");
	run_free(&c);

	/* Only http:// and https://. */
	c = CLI("history", "--agent", "file:///etc/passwd");
	CHECK_INT(c.code, 1);
	CHECK_HAS(c.err, "is not http:// or https://");
	CHECK_HASNT(c.out, "root:");
	run_free(&c);
	fake_stop(fake);
}

/* diagnose with an agent named asks that agent (GET /v1/diagnostics), by
 * --agent or NETTUNE_AGENT, and its hint keeps the options given; --root
 * reads the tree here, whatever NETTUNE_AGENT says; both is refused. */
static void test_diagnose_agent(const char *dir, const char *root)
{
	nt_agent a;
	char base[128], env[192], hint[512], fix[PATH_MAX];
	if (nt_agent_start(&a, root, NULL, NULL) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	snprintf(base, sizeof(base), "%s", nt_url(&a, ""));
	snprintf(env, sizeof(env), "NETTUNE_AGENT=%s", base);
	/* By the environment: the EPYC agent's findings (this machine has no
	 * enos0 behind a bond0), drops judged since boot at its first look. */
	run c = cli_env((const char *const[]){ env, NULL }, (const char *const[]){ "diagnose", NULL });
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "warning bond-hash-layer2       bond0");
	CHECK_HAS(c.out, "error   ring-below-max         enos0");
	CHECK_HAS(c.out, "errors since boot) with its RX ring at 1024 of a possible 8192");
	CHECK_HAS(c.out, "\nall the fixes as one profile: nettune diagnose --fix-profile | nettune plan -\n");
	run_free(&c);
	/* By the flag, with the options kept in the hint. */
	c = CLI("diagnose", "--agent", base, "--rtt-ms", "5");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "bond-hash-layer2");
	snprintf(hint, sizeof(hint), "nettune diagnose --agent %s --rtt-ms 5 --fix-profile | nettune plan --agent %s -\n",
		 base, base);
	CHECK_HAS(c.out, hint);
	run_free(&c);
	/* --json: the agent's body, byte for byte. */
	c = CLI("diagnose", "--agent", base, "--json");
	nt_http_result h = direct(&a, "GET", "/v1/diagnostics", NULL);
	CHECK_INT(c.code, 0);
	check_same_bytes(&c, &h, "diagnose --agent --json");
	nt_http_result_free(&h);
	run_free(&c);
	/* --fix-profile: the agent's fixes, which its plan takes. */
	c = CLI("diagnose", "--agent", base, "--fix-profile");
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "\"xmit_hash_policy\": \"layer3+4\"");
	CHECK_HAS(c.out, "\"interface\": \"enos0\"");
	snprintf(fix, sizeof(fix), "%s/fix.json", dir);
	write_file(fix, c.out);
	run_free(&c);
	c = CLI("plan", fix, "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HAS(c.out, "layer2+3             →  layer3+4");
	run_free(&c);
	/* --root reads the tree here, the environment's agent aside; the
	 * hint says --root. */
	c = cli_env((const char *const[]){ env, NULL },
		    (const char *const[]){ "diagnose", "--root", NT_FIXTURES "/x460-4node-8nic", NULL });
	CHECK_INT(c.code, 0);
	CHECK_HASNT(c.out, "enos0");
	CHECK_HAS(c.out, "eth");
	CHECK_HAS(c.out, "nettune diagnose --root " NT_FIXTURES "/x460-4node-8nic --fix-profile | nettune plan -");
	run_free(&c);
	/* ring-below-max, one rule: the CLI asking the agent and the agent
	 * say the same once enos0's ring is raised (judged since the change:
	 * no drops, no finding), while enos1 is still judged since boot at
	 * the agent's first looks; read here, drops since boot keep enos0's
	 * finding, and the CLI says why the agent's differs. */
	c = CLI("diagnose", "--root", root);
	CHECK_HAS(c.out, "error   ring-below-max         enos0");
	CHECK_HAS(c.out, "\nring-below-max: drops counted since boot, read here; the agent judges them over its last "
			 "5 to 10 minutes, or since the ring last changed (nettune diagnose --agent URL)\n");
	run_free(&c);
	snprintf(fix, sizeof(fix), "%s/ring.json", dir);
	write_file(fix, "{\"name\":\"ring\",\"rings\":[{\"interface\":\"enos0\",\"rx\":4096}]}");
	c = CLI("apply", fix, "--agent", base);
	CHECK_INT(c.code, 0);
	run_free(&c);
	c = CLI("diagnose", "--agent", base);
	CHECK_INT(c.code, 0);
	CHECK_HASNT(c.out, "ring-below-max         enos0");
	CHECK_HAS(c.out, "error   ring-below-max         enos1");
	CHECK_HASNT(c.out, "drops counted since boot, read here");
	h = direct(&a, "GET", "/v1/diagnostics", NULL);
	size_t fi;
	json_t *fd;
	int agent_lines = 0;
	json_array_foreach(json_object_get(h.json, "findings"), fi, fd) {
		char line[256];
		snprintf(line, sizeof(line), "%-7s %-22s %-10s ", json_string_value(json_object_get(fd, "severity")),
			 json_string_value(json_object_get(fd, "id")), json_string_value(json_object_get(fd, "subject")));
		CHECK_MSG(strstr(c.out, line) != NULL, "the agent's finding '%s' is not in the CLI's", line);
		agent_lines++;
	}
	CHECK_MSG(agent_lines > 0, "the agent has no findings");
	nt_http_result_free(&h);
	run_free(&c);
	c = CLI("diagnose", "--root", root);
	CHECK_HAS(c.out, "ring-below-max         enos0      enos0 drops received packets");
	CHECK_HAS(c.out, "with its RX ring at 4096 of a possible 8192");
	run_free(&c);
	/* Two hosts named: refused, saying why, nothing printed. */
	c = CLI("diagnose", "--root", root, "--agent", base);
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "diagnose takes --root DIR (read that tree here) or --agent URL (ask that agent), not both");
	CHECK_INT((int)c.out_len, 0);
	run_free(&c);
	c = CLI("diagnose", "extra", "--root", root);
	CHECK_INT(c.code, 2);
	CHECK_HAS(c.err, "diagnose takes no arguments, not 'extra'");
	run_free(&c);
	nt_agent_stop(&a);
	/* No agent at the URL named: said, with exit status 3. */
	c = CLI("diagnose", "--agent", "http://127.0.0.1:1");
	CHECK_INT(c.code, 3);
	CHECK_HAS(c.err, "cannot reach the agent at http://127.0.0.1:1");
	CHECK_INT((int)c.out_len, 0);
	run_free(&c);
}

int main(void)
{
	char dir[PATH_MAX], root[PATH_MAX];
	if (access(EPYC, F_OK) != 0)
		SKIP("fixture %s is not present", EPYC);
	test_without_agent();
	test_hostile_agent();
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_session(dir, root);
		tu_sh("rm -rf '%s'", dir);
	} else {
		CHECK_MSG(0, "cannot copy %s", EPYC);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_rolled_back(dir, root);
		tu_sh("rm -rf '%s'", dir);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_bench(dir, root);
		tu_sh("rm -rf '%s'", dir);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_profiles(dir, root);
		tu_sh("rm -rf '%s'", dir);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_denied(dir, root);
		tu_sh("rm -rf '%s'", dir);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_desired_clear(dir, root);
		tu_sh("rm -rf '%s'", dir);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_placement(dir, root);
		tu_sh("rm -rf '%s'", dir);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_diagnose_agent(dir, root);
		tu_sh("rm -rf '%s'", dir);
	}
	TEST_MAIN_END();
}
