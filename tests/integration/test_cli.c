/* SPDX-License-Identifier: Apache-2.0 */
/* The CLI's agent commands against a fixture agent, as an operator and a
 * CI job use them: the lines a person reads for plan, apply, confirm,
 * show, history and rollback; refused and conflicting requests as lines
 * that say what was wrong; the exit codes of cli/exit.h that need an
 * agent (a missing or weak token too); try answered and not; --json (and
 * -o json) byte for byte the body a direct HTTP request gets; stored
 * profiles by --name; placement reports; no escape code off a terminal
 * or with NO_COLOR, colour on a terminal (a pseudo-terminal here).
 *
 * The CLI talks to the agent's base URL, which in contract mode is the
 * validating proxy; the direct requests it is compared with go to the same
 * URL, so both see the same bytes. Without an agent and with a hostile
 * one: test_cli_agents.c; bench-run: test_cli_bench.c. */
#include "harness.h"
#include "integration/nt_agent.h"
/* The transaction tests' helpers (fixture copies); this test uses a few. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "integration/test_txn_util.h"
#pragma GCC diagnostic pop
#include "integration/cli_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sched.h>

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

int main(void)
{
	char dir[PATH_MAX], root[PATH_MAX];
	if (access(EPYC, F_OK) != 0)
		SKIP("fixture %s is not present", EPYC);
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_session(dir, root);
		tu_sh("rm -rf '%s'", dir);
	} else {
		CHECK_MSG(0, "cannot copy %s", EPYC);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_rolled_back(dir, root);
		tu_sh("rm -rf '%s'", dir);
	} else {
		CHECK_MSG(0, "cannot copy %s", EPYC);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_profiles(dir, root);
		tu_sh("rm -rf '%s'", dir);
	} else {
		CHECK_MSG(0, "cannot copy %s", EPYC);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_denied(dir, root);
		tu_sh("rm -rf '%s'", dir);
	} else {
		CHECK_MSG(0, "cannot copy %s", EPYC);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_desired_clear(dir, root);
		tu_sh("rm -rf '%s'", dir);
	} else {
		CHECK_MSG(0, "cannot copy %s", EPYC);
	}
	if (tu_copy(EPYC, dir, sizeof(dir), root, sizeof(root)) == 0) {
		test_placement(dir, root);
		tu_sh("rm -rf '%s'", dir);
	} else {
		CHECK_MSG(0, "cannot copy %s", EPYC);
	}
	TEST_MAIN_END();
}
