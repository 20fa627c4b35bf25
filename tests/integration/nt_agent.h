/* SPDX-License-Identifier: Apache-2.0 */
/* Run the agent as a real subprocess and talk HTTP to it, for integration
 * tests. Include once per test binary (everything is static), after
 * harness.h. Every helper is static inline, so a test uses what it needs.
 * Links with libcurl and jansson (the test build does).
 *
 *   nt_agent a;
 *   if (nt_agent_start(&a, NT_FIXTURES "/x460-4node-8nic", NULL, NULL) < 0) ...fail;
 *   long st; json_t *doc; char ct[128];
 *   nt_http("GET", nt_url(&a, "/v1/nics"), NULL, &st, &doc, ct, sizeof(ct));
 *   ...
 *   json_decref(doc);
 *   nt_agent_stop(&a);
 *
 * nt_agent_start runs `NT_BIN serve --listen 127.0.0.1:0 --root ROOT
 * --state-dir DIR [EXTRA...]` and waits for the line "listening on
 * http://ADDR:PORT" the CLI prints once it accepts connections. The child's
 * stdout goes to a file (never a pipe that could fill up and block it),
 * unlinked once that line is read; its stderr is the test's stderr. When
 * STATE_DIR is NULL a fresh temporary directory is made and removed again by
 * nt_agent_stop.
 *
 * Contract mode (tests/contract/): with NT_VIA_PRISM=1 in the environment,
 * nt_agent_start also starts Prism (`prism proxy openapi.yaml AGENT --errors
 * --validate-request false`) in front of the agent, and nt_url() points at
 * the proxy, so every response a test receives is checked against
 * openapi/openapi.yaml by a validator no one here wrote. Requests are not
 * validated (the tests send invalid ones on purpose and must see the
 * agent's own answer). A response that breaks the document comes back with
 * an `sl-violations` header (Prism's error severity also turns it into a
 * 500): nt_http_do prints it and counts a harness failure, and
 * nt_agent_stop fails the test for every violation in Prism's log (which
 * also covers clients that do not go through nt_http_do). No proxy or agent
 * outlives the test binary: each dies with it (PR_SET_PDEATHSIG), and one nobody
 * stopped (an agent SIGKILLed and started again in the same nt_agent, a test
 * returning early) is stopped at that nt_agent's next start or at exit, its
 * log still checked. Requests for a path or method the document does not
 * list (the 404/405 probes) cannot be checked by anyone; Prism answers those
 * itself, so nt_http_do repeats them straight to the agent and says so.
 * a->port stays the agent's own port (raw-socket tests of malformed HTTP).
 * NT_PRISM and NT_OPENAPI override where prism and the document are
 * (default: tests/contract/node_modules and openapi/openapi.yaml beside
 * NT_FIXTURES). */
#ifndef NT_TEST_AGENT_H
#define NT_TEST_AGENT_H

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct nt_agent {
	pid_t pid;
	int port;
	char base[64]; /* "http://127.0.0.1:PORT" */
	char state_dir[PATH_MAX];
	bool own_state_dir; /* made by nt_agent_start, removed by nt_agent_stop */
	char out_path[PATH_MAX]; /* the child's stdout */
	char url[1024]; /* buffer behind nt_url() */
	char direct[64]; /* "http://127.0.0.1:PORT" of the agent itself */
	pid_t prism_pid; /* contract mode: the proxy (its own process group) */
	char prism_log[PATH_MAX]; /* the proxy's output */
} nt_agent;

/* Contract mode: every proxy this test binary started and has not stopped
 * yet, with the agent it fronts. The proxy base -> agent base lets
 * nt_http_do send a request Prism cannot route (a path or method outside
 * the document) straight to the agent. The rest finds proxies nobody
 * stopped: a test that SIGKILLs its agent and starts it again in the same
 * nt_agent (nt_agent_start_ext stops the old proxy first), or one that
 * returns early without nt_agent_stop (stopped at exit). A few agents at
 * most are alive at once in a test binary. */
#define NT_PRISM_MAX 8
static struct {
	const nt_agent *owner;
	pid_t pid;
	char log[PATH_MAX];
	char proxy[64], direct[64];
} nt_prism_map[NT_PRISM_MAX];
static int nt_prism_unchecked; /* requests sent around the proxy */
static int nt_prism_started; /* proxies started by this test binary */

static inline bool nt_via_prism(void)
{
	const char *v = getenv("NT_VIA_PRISM");
	return v && *v && strcmp(v, "0") != 0;
}

static inline int nt_prism_stop_left(const nt_agent *owner);

/* Contract mode, at exit: proxies still running are stopped (their logs
 * still count: a violation found now fails the binary). And a test binary
 * that never started its agent through nt_agent_start (it has its own
 * launcher) had none of its responses checked, so it must not pass as if
 * they had been: unless it already failed, it ends as skipped (77), saying
 * why. */
static void nt_prism_atexit(void)
{
	int failed = 0;
	if (nt_prism_stop_left(NULL) > 0) {
		fflush(NULL);
		_exit(1);
	}
#ifdef NT_TEST_HARNESS_H
	failed = nt_t_failed;
#endif
	if (!nt_prism_started && !failed) {
		printf("SKIP: NT_VIA_PRISM is set but this test started no plain-HTTP agent "
		       "(HTTPS with client certificates cannot be proxied), so no response "
		       "went through prism\n");
		fflush(stdout);
		_exit(77);
	}
}

__attribute__((constructor)) static void nt_prism_init(void)
{
	const char *v = getenv("NT_VIA_PRISM");
	if (v && *v && strcmp(v, "0") != 0)
		atexit(nt_prism_atexit);
}

/* A contract failure: counted by the harness when it is included. */
static inline void nt_contract_fail(void)
{
#ifdef NT_TEST_HARNESS_H
	nt_t_failed++;
#endif
}

/* In a child forked by PARENT (this test binary): SIGTERM, its ordinary
 * stop, when the test binary goes, however that ends (a ctest timeout's
 * SIGKILL included; the signal comes when the forking thread ends, and
 * children are started from main). A parent already gone: exit at once. */
static inline void nt_child_dies_with(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);
}

static inline int nt_agent_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	remove(path);
	return 0;
}

static inline void nt_agent_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Stop the proxy (its whole process group: SIGTERM, up to 5 s, then
 * SIGKILL, and reaped) and fail the test for every violation in its log.
 * Returns the number of violation lines. */
static inline int nt_prism_stop(nt_agent *a)
{
	if (a->prism_pid > 0) {
		int status;
		bool gone = false;
		kill(-a->prism_pid, SIGTERM);
		for (int i = 0; i < 500 && !gone; i++) {
			gone = waitpid(a->prism_pid, &status, WNOHANG) == a->prism_pid;
			if (!gone)
				nt_agent_sleep_ms(10);
		}
		kill(-a->prism_pid, SIGKILL);
		if (!gone)
			waitpid(a->prism_pid, &status, 0);
	}
	for (int i = 0; i < NT_PRISM_MAX; i++)
		if ((a->prism_pid > 0 && nt_prism_map[i].pid == a->prism_pid) ||
		    (a->base[0] && strcmp(nt_prism_map[i].proxy, a->base) == 0))
			memset(&nt_prism_map[i], 0, sizeof(nt_prism_map[i]));
	a->prism_pid = 0;
	if (!a->prism_log[0])
		return 0;
	FILE *f = fopen(a->prism_log, "r");
	char line[8192], last_req[512] = "";
	int nviol = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "Request received"))
			snprintf(last_req, sizeof(last_req), "%s", line);
		if (strstr(line, "Violation:") || strstr(line, "errors#VIOLATIONS")) {
			if (!nviol++)
				fprintf(stderr, "nt_agent: CONTRACT VIOLATIONS reported by prism (%s):\n",
					a->prism_log);
			fprintf(stderr, "  after %s  %s", last_req, line);
		}
	}
	if (f)
		fclose(f);
	if (nviol) {
		nt_contract_fail();
		fprintf(stderr, "nt_agent: %d contract violation lines; log kept in %s\n", nviol,
			a->prism_log);
	} else {
		unlink(a->prism_log);
	}
	if (nt_prism_unchecked)
		fprintf(stderr, "nt_agent: %d requests for paths/methods outside the document went "
				"straight to the agent (nothing to check them against)\n",
			nt_prism_unchecked);
	nt_prism_unchecked = 0;
	a->prism_log[0] = '\0';
	return nviol;
}

/* Stop the proxies nobody stopped: those of OWNER (NULL: all). Returns the
 * number of violation lines their logs held. */
static inline int nt_prism_stop_left(const nt_agent *owner)
{
	int nviol = 0;
	for (int i = 0; i < NT_PRISM_MAX; i++) {
		if (nt_prism_map[i].pid <= 0 || (owner && nt_prism_map[i].owner != owner))
			continue;
		nt_agent t;
		memset(&t, 0, sizeof(t));
		t.prism_pid = nt_prism_map[i].pid;
		snprintf(t.prism_log, sizeof(t.prism_log), "%s", nt_prism_map[i].log);
		snprintf(t.base, sizeof(t.base), "%s", nt_prism_map[i].proxy);
		fprintf(stderr, "nt_agent: prism pid %d (%s) outlived its agent; stopping it\n",
			(int)t.prism_pid, t.base[0] ? t.base : "not listening yet");
		nviol += nt_prism_stop(&t);
	}
	return nviol;
}

/* Stop the agent: SIGTERM, wait up to 10 s, then SIGKILL. Returns the
 * child's exit status as waitpid gave it (0 for a clean exit), -1 when it
 * had to be killed. Safe to call twice. */

static inline int nt_agent_stop(nt_agent *a)
{
	int status = 0, ret = -1;
	nt_prism_stop(a);
	if (a->pid > 0) {
		kill(a->pid, SIGTERM);
		for (int i = 0; i < 1000; i++) {
			pid_t w = waitpid(a->pid, &status, WNOHANG);
			if (w == a->pid) {
				ret = status;
				break;
			}
			nt_agent_sleep_ms(10);
		}
		if (ret == -1) {
			fprintf(stderr, "nt_agent: pid %d ignored SIGTERM, killing\n", (int)a->pid);
			kill(a->pid, SIGKILL);
			waitpid(a->pid, &status, 0);
		}
		a->pid = 0;
	}
	if (a->out_path[0]) {
		unlink(a->out_path);
		a->out_path[0] = '\0';
	}
	if (a->own_state_dir && a->state_dir[0]) {
		nftw(a->state_dir, nt_agent_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
		a->state_dir[0] = '\0';
		a->own_state_dir = false;
	}
	return ret;
}

/* A free TCP port on 127.0.0.1 (bound once and released; Prism takes a
 * port number, not a socket). Returns the port or -1. */
static inline int nt_free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
	if (fd < 0)
		return -1;
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* Contract mode: start Prism in front of the running agent and point
 * a->base at it. Returns 0 or -1 with the reason printed. */
static inline int nt_prism_start(nt_agent *a)
{
	char prism[PATH_MAX], doc[PATH_MAX], upstream[64], port_s[16];
	char tmpl[] = "/tmp/nt-prism-log-XXXXXX";
	const char *e;
	int fd, port = nt_free_port();

	e = getenv("NT_PRISM");
	snprintf(prism, sizeof(prism), "%s", e && *e ? e : NT_FIXTURES "/../contract/node_modules/.bin/prism");
	e = getenv("NT_OPENAPI");
	snprintf(doc, sizeof(doc), "%s", e && *e ? e : NT_FIXTURES "/../../openapi/openapi.yaml");
	if (access(prism, X_OK) != 0) {
		fprintf(stderr, "nt_agent: NT_VIA_PRISM is set but %s is missing (tests/prepare.sh BUILD_DIR -L contract installs it)\n",
			prism);
		return -1;
	}
	if (port < 0 || (fd = mkstemp(tmpl)) < 0) {
		perror("nt_agent: prism port/log");
		return -1;
	}
	snprintf(a->prism_log, sizeof(a->prism_log), "%s", tmpl);
	snprintf(upstream, sizeof(upstream), "%s", a->direct);
	snprintf(port_s, sizeof(port_s), "%d", port);
	fflush(NULL);
	pid_t parent = getpid();
	a->prism_pid = fork();
	if (a->prism_pid < 0) {
		perror("nt_agent: fork");
		close(fd);
		return -1;
	}
	if (a->prism_pid == 0) {
		/* Its own process group: prism is node with children. */
		setpgid(0, 0);
		nt_child_dies_with(parent);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
		execl(prism, prism, "proxy", doc, upstream, "--errors", "--validate-request", "false",
		      "--cors", "false", "--host", "127.0.0.1", "--port", port_s, (char *)NULL);
		fprintf(stderr, "nt_agent: exec %s: %s\n", prism, strerror(errno));
		_exit(127);
	}
	setpgid(a->prism_pid, a->prism_pid);
	close(fd);
	for (int j = 0; j < NT_PRISM_MAX; j++) {
		if (nt_prism_map[j].pid <= 0 && !nt_prism_map[j].proxy[0]) {
			nt_prism_map[j].owner = a;
			nt_prism_map[j].pid = a->prism_pid;
			snprintf(nt_prism_map[j].log, sizeof(nt_prism_map[j].log), "%s", a->prism_log);
			break;
		}
	}
	/* Up to 60 s: prism reads and dereferences the document first. */
	for (int i = 0; i < 6000; i++) {
		char buf[4096];
		bool up = false;
		FILE *f = fopen(a->prism_log, "r");
		while (f && fgets(buf, sizeof(buf), f))
			if (strstr(buf, "Prism is listening on"))
				up = true;
		if (f)
			fclose(f);
		if (up) {
			nt_prism_started++;
			snprintf(a->base, sizeof(a->base), "http://127.0.0.1:%d", port);
			for (int j = 0; j < NT_PRISM_MAX; j++) {
				if (nt_prism_map[j].pid == a->prism_pid) {
					snprintf(nt_prism_map[j].proxy, sizeof(nt_prism_map[j].proxy), "%s", a->base);
					snprintf(nt_prism_map[j].direct, sizeof(nt_prism_map[j].direct), "%s", a->direct);
					break;
				}
			}
			return 0;
		}
		int status;
		if (waitpid(a->prism_pid, &status, WNOHANG) == a->prism_pid) {
			for (int j = 0; j < NT_PRISM_MAX; j++)
				if (nt_prism_map[j].pid == a->prism_pid)
					memset(&nt_prism_map[j], 0, sizeof(nt_prism_map[j]));
			a->prism_pid = 0;
			break;
		}
		nt_agent_sleep_ms(10);
	}
	fprintf(stderr, "nt_agent: prism did not start; its output is in %s\n", a->prism_log);
	a->prism_log[0] = '\0'; /* kept for the reader, not scanned */
	return -1;
}

typedef struct nt_agent_opts {
	const char *state_dir; /* NULL: a temporary one */
	const char *const *extra; /* further serve arguments, NULL-terminated */
	const char *stderr_path; /* the child's stderr goes here (NULL: the test's) */
} nt_agent_opts;

/* As nt_agent_start, but the "listening on" line may say http or https
 * (a->base follows it), and the child's stderr can go to a file. */
static inline int nt_agent_start_ext(nt_agent *a, const char *root, const nt_agent_opts *o)
{
	char tmpl[] = "/tmp/nt-agent-out-XXXXXX";
	const char *argv[64];
	int argc = 0, fd, efd = -1;
	char scheme[8] = "http";

	/* The same nt_agent started again without nt_agent_stop (its agent
	 * was killed on purpose): its old proxy is still running. */
	nt_prism_stop_left(a);
	memset(a, 0, sizeof(*a));
	if (o->state_dir) {
		snprintf(a->state_dir, sizeof(a->state_dir), "%s", o->state_dir);
	} else {
		char st[] = "/tmp/nt-agent-state-XXXXXX";
		if (!mkdtemp(st)) {
			perror("nt_agent: mkdtemp");
			return -1;
		}
		snprintf(a->state_dir, sizeof(a->state_dir), "%s", st);
		a->own_state_dir = true;
	}
	fd = mkstemp(tmpl);
	if (fd < 0) {
		perror("nt_agent: mkstemp");
		nt_agent_stop(a);
		return -1;
	}
	snprintf(a->out_path, sizeof(a->out_path), "%s", tmpl);
	if (o->stderr_path) {
		efd = open(o->stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (efd < 0) {
			perror("nt_agent: stderr file");
			close(fd);
			nt_agent_stop(a);
			return -1;
		}
	}
	argv[argc++] = NT_BIN;
	argv[argc++] = "serve";
	argv[argc++] = "--listen";
	argv[argc++] = "127.0.0.1:0";
	argv[argc++] = "--root";
	argv[argc++] = root;
	argv[argc++] = "--state-dir";
	argv[argc++] = a->state_dir;
	for (int i = 0; o->extra && o->extra[i] && argc < 63; i++)
		argv[argc++] = o->extra[i];
	argv[argc] = NULL;

	fflush(NULL);
	pid_t parent = getpid();
	a->pid = fork();
	if (a->pid < 0) {
		perror("nt_agent: fork");
		close(fd);
		if (efd >= 0)
			close(efd);
		nt_agent_stop(a);
		return -1;
	}
	if (a->pid == 0) {
		nt_child_dies_with(parent);
		dup2(fd, STDOUT_FILENO);
		if (efd >= 0)
			dup2(efd, STDERR_FILENO);
		execv(NT_BIN, (char *const *)argv);
		fprintf(stderr, "nt_agent: exec %s: %s\n", NT_BIN, strerror(errno));
		_exit(127);
	}
	close(fd);
	if (efd >= 0)
		close(efd);

	/* 15 s; four times that under the sanitizers (tests/sanitize sets
	 * ASAN_OPTIONS), where an agent loading thousands of profile files at
	 * start (test_hostile_edges' reload storm) runs several times slower. */
	int tries = getenv("ASAN_OPTIONS") ? 6000 : 1500;
	for (int i = 0; i < tries && a->port <= 0; i++) {
		char buf[4096];
		FILE *f = fopen(a->out_path, "r");
		if (f) {
			while (fgets(buf, sizeof(buf), f)) {
				const char *p = strstr(buf, "listening on http");
				const char *colon = p ? strrchr(p, ':') : NULL;
				if (p && colon && strchr(buf, '\n')) {
					a->port = atoi(colon + 1);
					snprintf(scheme, sizeof(scheme), "%s",
						 strncmp(p, "listening on https", 18) == 0 ? "https" :
											      "http");
					break;
				}
			}
			fclose(f);
		}
		if (a->port > 0)
			break;
		int status;
		if (waitpid(a->pid, &status, WNOHANG) == a->pid) {
			fprintf(stderr, "nt_agent: serve exited (status %d) before listening\n",
				WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			a->pid = 0;
			nt_agent_stop(a);
			return -1;
		}
		nt_agent_sleep_ms(10);
	}
	if (a->port <= 0) {
		fprintf(stderr, "nt_agent: no \"listening on\" line\n");
		nt_agent_stop(a);
		return -1;
	}
	snprintf(a->base, sizeof(a->base), "%s://127.0.0.1:%d", scheme, a->port);
	snprintf(a->direct, sizeof(a->direct), "%s", a->base);
	unlink(a->out_path);
	a->out_path[0] = '\0';
	/* Contract mode: plain HTTP agents get the validating proxy in front,
	 * as nt_agent_start's do. (Prism cannot stand in front of a client
	 * certificate handshake, so HTTPS agents are asked directly.) */
	if (nt_via_prism() && strcmp(scheme, "http") == 0 && nt_prism_start(a) < 0) {
		nt_agent_stop(a);
		return -1;
	}
	return 0;
}

/* Start the agent on ROOT (a fixture tree or "/"). EXTRA is a
 * NULL-terminated list of further serve arguments, or NULL. Returns 0, or -1
 * with the reason printed to stderr. */
static inline int nt_agent_start(nt_agent *a, const char *root, const char *state_dir,
			  const char *const *extra)
{
	nt_agent_opts o = { .state_dir = state_dir, .extra = extra };
	return nt_agent_start_ext(a, root, &o);
}

/* The agent's own URL for PATH, around the proxy in contract mode: for
 * what Prism cannot relay (a body over its 1 MB limit, raw HTTP). Same
 * buffer as nt_url. */
static inline const char *nt_url_direct(nt_agent *a, const char *path)
{
	snprintf(a->url, sizeof(a->url), "%s%s", a->direct[0] ? a->direct : a->base, path);
	return a->url;
}

/* BASE + PATH in a buffer inside A (valid until the next call). */
static inline const char *nt_url(nt_agent *a, const char *path)
{
	snprintf(a->url, sizeof(a->url), "%s%s", a->base, path);
	return a->url;
}

/* ---- HTTP ---- */

typedef struct nt_http_result {
	long status; /* 0 when no response arrived */
	char content_type[128]; /* "" when none */
	char allow[128]; /* Allow header, "" when none */
	char location[256]; /* Location header, "" when none */
	char violations[2048]; /* contract mode: Prism's sl-violations header, "" when none */
	char cache_control[64]; /* the agent sends "no-store" on every answer; Prism's own lack it */
	char *body; /* raw body, NUL-terminated (owned) */
	size_t body_len;
	json_t *json; /* body parsed, NULL when empty or not JSON (owned) */
} nt_http_result;

static inline void nt_http_result_free(nt_http_result *r)
{
	free(r->body);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

static inline size_t nt_http_body_cb(char *p, size_t sz, size_t n, void *ud)
{
	nt_http_result *r = ud;
	size_t len = sz * n;
	char *nb = realloc(r->body, r->body_len + len + 1);
	if (!nb)
		return 0;
	r->body = nb;
	memcpy(r->body + r->body_len, p, len);
	r->body_len += len;
	r->body[r->body_len] = '\0';
	return len;
}

static inline void nt_http_copy_header(const char *line, size_t len, const char *name, char *dst,
				size_t dstsize)
{
	size_t nl = strlen(name);
	if (len <= nl || strncasecmp(line, name, nl) != 0)
		return;
	const char *v = line + nl;
	const char *end = line + len;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		end--;
	snprintf(dst, dstsize, "%.*s", (int)(end - v), v);
}

static inline size_t nt_http_header_cb(char *p, size_t sz, size_t n, void *ud)
{
	nt_http_result *r = ud;
	size_t len = sz * n;
	nt_http_copy_header(p, len, "Allow:", r->allow, sizeof(r->allow));
	nt_http_copy_header(p, len, "Location:", r->location, sizeof(r->location));
	nt_http_copy_header(p, len, "sl-violations:", r->violations, sizeof(r->violations));
	nt_http_copy_header(p, len, "Cache-Control:", r->cache_control, sizeof(r->cache_control));
	return len;
}

/* Send METHOD URL with BODY (BODY_LEN bytes; NULL for none) as REQ_CTYPE
 * (NULL: no Content-Type header). Fills RES (free with nt_http_result_free).
 * Returns 0 when a response arrived, -1 otherwise (curl's reason printed).
 * A server that answers before reading the whole body (413) may reset the
 * upload; the response still counts when its status arrived. */
static inline int nt_http_do1(const char *method, const char *url, const char *body, size_t body_len,
		      const char *req_ctype, nt_http_result *res)
{
	static bool inited;
	struct curl_slist *hdrs = NULL;
	char ctype_hdr[256];
	CURLcode cc;
	CURL *h;

	memset(res, 0, sizeof(*res));
	if (!inited) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		inited = true;
	}
	h = curl_easy_init();
	if (!h)
		return -1;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	/* Paths are sent exactly as written: the tests probe "..". */
	curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, nt_http_body_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, res);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, nt_http_header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, res);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	}
	if (req_ctype) {
		snprintf(ctype_hdr, sizeof(ctype_hdr), "Content-Type: %s", req_ctype);
		hdrs = curl_slist_append(hdrs, ctype_hdr);
	} else if (body) {
		hdrs = curl_slist_append(hdrs, "Content-Type:"); /* curl's default removed */
	}
	if (hdrs)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);

	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res->status);
	char *ct = NULL;
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	if (ct)
		snprintf(res->content_type, sizeof(res->content_type), "%s", ct);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);

	if (cc != CURLE_OK && res->status == 0) {
		fprintf(stderr, "nt_http: %s %s: %s\n", method, url, curl_easy_strerror(cc));
		return -1;
	}
	if (res->body_len)
		res->json = json_loadb(res->body, res->body_len, 0, NULL);
	return 0;
}

/* Contract mode: whether RES is Prism's own answer for a request it could
 * not route (the path or method is not in the document). */
static inline bool nt_prism_unroutable(const nt_http_result *res)
{
	const char *type = json_string_value(json_object_get(res->json, "type"));
	return type && strncmp(type, "https://stoplight.io/prism/errors#NO_", 37) == 0 &&
	       (strstr(type, "NO_PATH_MATCHED") || strstr(type, "NO_METHOD_MATCHED"));
}

/* JSON equality where 1.0 equals 1: Prism re-serializes bodies through
 * JavaScript, which prints a real with no fraction as an integer. */
static inline bool nt_json_loose_equal(json_t *a, json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_typeof(a) != json_typeof(b))
		return false;
	if (json_is_object(a)) {
		const char *k;
		json_t *v;
		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach(a, k, v)
			if (!json_object_get(b, k) || !nt_json_loose_equal(v, json_object_get(b, k)))
				return false;
		return true;
	}
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!nt_json_loose_equal(json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	}
	return json_equal(a, b);
}

/* Contract mode: the proxy base URL prefix of URL and the matching agent
 * base, or NULL. */
static inline const char *nt_prism_direct(const char *url, size_t *prefix)
{
	for (int i = 0; i < NT_PRISM_MAX; i++) {
		size_t n = strlen(nt_prism_map[i].proxy);
		if (n && strncmp(url, nt_prism_map[i].proxy, n) == 0) {
			*prefix = n;
			return nt_prism_map[i].direct;
		}
	}
	return NULL;
}

static inline int nt_http_do(const char *method, const char *url, const char *body, size_t body_len,
		      const char *req_ctype, nt_http_result *res)
{
	int rc = nt_http_do1(method, url, body, body_len, req_ctype, res);
	char direct[2048];
	size_t n = 0;
	const char *base = rc == 0 && nt_via_prism() ? nt_prism_direct(url, &n) : NULL;
	if (!base)
		return rc;
	snprintf(direct, sizeof(direct), "%s%s", base, url + n);
	if (res->violations[0]) {
		nt_contract_fail();
		fprintf(stderr, "CONTRACT VIOLATION: %s %s answered %ld: %s\n", method, url, res->status,
			res->violations);
		return rc;
	}
	/* Prism answers some requests itself instead of forwarding them: a
	 * path or method the document does not list (404/405), a body its own
	 * JSON parser refuses (400 `invalid_json`), a body over its 1 MB
	 * limit (500). Those answers are not the agent's (no `Cache-Control:
	 * no-store`, which the agent puts on every response), so they are
	 * asked again straight from the agent; nothing in the document can
	 * check them. HEAD has no operation in the document either. */
	if (nt_prism_unroutable(res) || strcmp(method, "HEAD") == 0 ||
	    strcasecmp(res->cache_control, "no-store") != 0) {
		if (!nt_prism_unroutable(res) && strcmp(method, "HEAD") != 0)
			fprintf(stderr, "nt_agent: prism answered %s %s itself (%ld), asking the agent directly\n",
				method, url, res->status);
		nt_http_result_free(res);
		nt_prism_unchecked++;
		return nt_http_do1(method, direct, body, body_len, req_ctype, res);
	}
	if (strcmp(method, "GET") == 0 && res->status == 200 &&
	    res->json && strncmp(res->content_type, "application/json", 16) == 0) {
		/* Prism hands on a re-serialized body (compact, reals without
		 * fractions), and the tests also check the agent's bytes. A read
		 * changes nothing, so it is asked again directly: when that is the
		 * same document Prism validated, the test gets the agent's own
		 * bytes. */
		nt_http_result d;
		if (nt_http_do1(method, direct, body, body_len, req_ctype, &d) == 0 &&
		    d.status == res->status && d.json && nt_json_loose_equal(d.json, res->json)) {
			nt_http_result_free(res);
			*res = d;
		} else {
			nt_http_result_free(&d);
		}
	}
	return rc;
}

/* The common case: BODY (a NUL-terminated JSON text or NULL) sent as
 * application/json; *STATUS, the parsed *JSON (caller decrefs; NULL when the
 * body is not JSON) and the response's Content-Type into CTYPE (may be
 * NULL). Returns 0 when a response arrived, -1 otherwise. */
static inline int nt_http(const char *method, const char *url, const char *body, long *status,
		   json_t **json, char *ctype, size_t ctsize)
{
	nt_http_result r;
	int rc = nt_http_do(method, url, body, body ? strlen(body) : 0,
			    body ? "application/json" : NULL, &r);
	*status = r.status;
	if (json) {
		*json = r.json;
		r.json = NULL;
	}
	if (ctype && ctsize)
		snprintf(ctype, ctsize, "%s", r.content_type);
	nt_http_result_free(&r);
	return rc;
}

/* Whether RES is an RFC 9457 problem document with STATUS. */
static inline bool nt_is_problem(const nt_http_result *res, long status)
{
	return res->status == status &&
	       strncmp(res->content_type, "application/problem+json", 24) == 0 && res->json &&
	       json_integer_value(json_object_get(res->json, "status")) == status &&
	       json_is_string(json_object_get(res->json, "type")) &&
	       json_is_string(json_object_get(res->json, "title")) &&
	       json_is_string(json_object_get(res->json, "detail"));
}

#endif
