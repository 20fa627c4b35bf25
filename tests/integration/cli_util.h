/* SPDX-License-Identifier: Apache-2.0 */
/* What the CLI tests (test_cli*.c) share: NT_BIN run with arguments, its
 * exit code and output (files, or a pseudo-terminal that may answer a
 * prompt), substring checks, the body the API gives the same request, two
 * profiles (GOOD applies on the EPYC fixture, BAD is refused). Include
 * after nt_agent.h. */
#ifndef NT_CLI_UTIL_H
#define NT_CLI_UTIL_H

#include <poll.h>
#include <pty.h>

#define EPYC NT_FIXTURES "/epyc7713-2node-bond"

typedef struct run {
	int code; /* exit code, -1 when it did not exit */
	char *out, *err; /* everything written to stdout, stderr (owned) */
	size_t out_len;
} run;

__attribute__((unused)) static void run_free(run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

__attribute__((unused)) static char *slurp(const char *path, size_t *len)
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
__attribute__((unused)) static run cli_env_in(const char *const *env, const char *const *argv, const char *in)
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

__attribute__((unused)) static run cli_env(const char *const *env, const char *const *argv)
{
	return cli_env_in(env, argv, NULL);
}

#define CLI(...) cli_env(NULL, (const char *const[]){ __VA_ARGS__, NULL })

/* The same on a pseudo-terminal (stdin, stdout and stderr): what a person
 * at a terminal sees, in R.out. When PROMPT appears in the output, ANSWER
 * is typed (PROMPT NULL: nothing is). */
__attribute__((unused)) static run cli_pty_answer(const char *const *env, const char *const *argv, const char *prompt,
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

__attribute__((unused)) static bool has(const char *hay, const char *needle)
{
	return hay && strstr(hay, needle);
}

__attribute__((unused)) static run cli_pty(const char *const *env, const char *const *argv)
{
	return cli_pty_answer(env, argv, NULL, NULL);
}

#define CHECK_HAS(hay, needle) CHECK_MSG(has(hay, needle), "no '%s' in:\n%s", needle, hay ? hay : "(null)")
#define CHECK_HASNT(hay, needle) CHECK_MSG(!has(hay, needle), "'%s' in:\n%s", needle, hay ? hay : "(null)")

/* The body METHOD PATH gets straight from the agent's base URL. */
__attribute__((unused)) static nt_http_result direct(nt_agent *a, const char *method, const char *path, const char *body)
{
	nt_http_result r;
	memset(&r, 0, sizeof(r));
	nt_http_do1(method, nt_url(a, path), body, body ? strlen(body) : 0, body ? "application/json" : NULL, &r);
	return r;
}

__attribute__((unused)) static void check_same_bytes(const run *c, const nt_http_result *h, const char *what)
{
	CHECK_MSG(c->out_len == h->body_len && h->body && memcmp(c->out, h->body, h->body_len) == 0,
		  "%s: --json printed %zu bytes, the API answered %zu", what, c->out_len, h->body_len);
}

#define GOOD "{\"name\":\"epyc-fix\",\"rings\":[{\"interface\":\"enos*\",\"rx\":4096}]," \
	"\"bonds\":[{\"interface\":\"bond0\",\"xmit_hash_policy\":\"layer3+4\"}]," \
	"\"sysctl\":{\"net.ipv4.tcp_rmem\":\"4096 87380 16777216\"}}"
#define BAD "{\"name\":\"too-big\",\"rings\":[{\"interface\":\"enos0\",\"rx\":99999}]}"

__attribute__((unused)) static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

#endif
