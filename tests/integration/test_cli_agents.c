/* SPDX-License-Identifier: Apache-2.0 */
/* The CLI without an agent and with ones a fixture agent is not: usage
 * refused by name (an option the command does not read, an unknown output
 * format, a missing profile) with cli/exit.h's codes, an agent that does
 * not answer, the commands that read the host themselves (nics, irqs,
 * rates, diagnose --root) and --help; a hostile agent (terminal controls
 * in its strings shown safely, a malformed document an error, silence
 * waited for NETTUNE_TIMEOUT, a huge answer not read past 64 MiB, only
 * http:// and https://); diagnose asking an agent (--agent,
 * NETTUNE_AGENT) or the tree (--root). The rest of the CLI is
 * test_cli.c's and test_cli_bench.c's. */
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
		test_diagnose_agent(dir, root);
		tu_sh("rm -rf '%s'", dir);
	} else {
		CHECK_MSG(0, "cannot copy %s", EPYC);
	}
	TEST_MAIN_END();
}
