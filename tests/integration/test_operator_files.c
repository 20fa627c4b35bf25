/* SPDX-License-Identifier: Apache-2.0 */
/* Files an operator names are read only when they are regular files and
 * no larger than 1 MiB (kernel/regfile.h), against a real agent:
 *   - a FIFO as --desired-file: the agent still starts, listens, logs the
 *     file as refused and stops on SIGTERM; one swapped in before a SIGHUP
 *     does not hang the reload (health answers, SIGTERM still stops it);
 *   - a FIFO as --config: `serve` refuses at once, naming the file;
 *   - in the profiles directory a FIFO, a directory and a dangling symlink
 *     named NAME.json are each logged naming the file (and skipped), while
 *     a good profile beside them loads;
 *   - a desired file and a profile file over 1 MiB are refused with a log
 *     line naming the file and the limit, and nothing of them is used. */
#include "harness.h"
#include "integration/nt_agent_ext.h"
#include "integration/test_txn_util.h"

#define VM NT_FIXTURES "/vm-virtio-2cpu"

/* A throw-away copy of VM: a desired state is applied (drift policy
 * repair), never to the source tree. */
static char root[PATH_MAX];

/* ERRFILE's text (static buffer, the last 256 KiB at most). */
static const char *slurp(const char *path)
{
	static char buf[256 * 1024];
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return buf;
	off_t end = lseek(fd, 0, SEEK_END);
	off_t from = end > (off_t)sizeof(buf) - 1 ? end - (off_t)sizeof(buf) + 1 : 0;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, from);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

/* Wait up to MS for every one of WANT (NULL-terminated) on one line of the
 * log ERRFILE. */
static bool wait_log(const char *errfile, const char *const *want, int ms)
{
	for (int waited = 0; waited <= ms; waited += 50) {
		const char *text = slurp(errfile);
		for (const char *line = text; line && *line;) {
			const char *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);
			char one[8192];
			snprintf(one, sizeof(one), "%.*s", (int)(len < sizeof(one) ? len : sizeof(one) - 1),
				 line);
			bool all = true;
			for (int i = 0; want[i]; i++)
				all = all && strstr(one, want[i]);
			if (all)
				return true;
			line = nl ? nl + 1 : NULL;
		}
		nt_agent_sleep_ms(50);
	}
	return false;
}

static long health(nt_agent *a)
{
	long st = 0;
	nt_http("GET", nt_url(a, "/v1/health"), NULL, &st, NULL, NULL, 0);
	return st;
}

/* Stopped by SIGTERM within nt_agent_stop's 10 s, exiting by itself. */
static void stop_checked(nt_agent *a, const char *what)
{
	int status = nt_agent_stop(a);
	CHECK_MSG(status != -1 && WIFEXITED(status), "%s: the agent ignored SIGTERM", what);
}

static void write_big(const char *path, size_t size)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	/* A valid JSON object that is simply too large. */
	fputs("{\"sysctl\":{\"net.core.rmem_max\":\"16777216\"},\"x\":\"", f);
	for (size_t i = 0; i < size; i++)
		fputc('a', f);
	fputs("\"}", f);
	fclose(f);
}

static void fifo_desired(const char *dir)
{
	char fifo[PATH_MAX], err[PATH_MAX], good[PATH_MAX], state[PATH_MAX];
	nt_agent a;
	snprintf(fifo, sizeof(fifo), "%s/desired.fifo", dir);
	snprintf(good, sizeof(good), "%s/desired.json", dir);
	snprintf(err, sizeof(err), "%s/fifo.err", dir);
	snprintf(state, sizeof(state), "%s/state-fifo", dir);
	CHECK_INT(mkfifo(fifo, 0600), 0);
	const char *extra[] = { "--desired-file", fifo, NULL };
	nt_agent_opts o = { .state_dir = state, .extra = extra, .stderr_path = err };
	if (nt_agent_start_ext(&a, root, &o) < 0) {
		CHECK_MSG(0, "a FIFO as --desired-file: the agent did not start (hung?)");
		return;
	}
	CHECK_INT(health(&a), 200);
	const char *want[] = { "desired_file", fifo, "FIFO", NULL };
	CHECK_MSG(wait_log(err, want, 2000), "no log line refusing %s: %s", fifo, slurp(err));
	stop_checked(&a, "FIFO desired file at start");

	/* A regular file at start, a FIFO swapped in before SIGHUP. */
	FILE *f = fopen(good, "w");
	if (f) {
		fputs("{\"name\":\"held\",\"sysctl\":{\"net.core.rmem_max\":\"16777216\"}}", f);
		fclose(f);
	}
	const char *extra2[] = { "--desired-file", good, NULL };
	o.extra = extra2;
	if (nt_agent_start_ext(&a, root, &o) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	unlink(good);
	CHECK_INT(mkfifo(good, 0600), 0);
	kill(a.pid, SIGHUP);
	const char *want2[] = { "desired_file", good, "FIFO", NULL };
	CHECK_MSG(wait_log(err, want2, 5000), "the reload did not refuse the FIFO: %s", slurp(err));
	CHECK_INT(health(&a), 200);
	/* Another reload is still served, and the desired state stayed. */
	kill(a.pid, SIGHUP);
	nt_agent_sleep_ms(300);
	long st = 0;
	json_t *doc = NULL;
	nt_http("GET", nt_url(&a, "/v1/desired"), NULL, &st, &doc, NULL, 0);
	CHECK_INT(st, 200);
	CHECK_STR(tu_str(json_object_get(doc, "profile"), "name"), "held");
	json_decref(doc);
	stop_checked(&a, "FIFO desired file swapped in before SIGHUP");
}

static void fifo_config(const char *dir)
{
	char fifo[PATH_MAX], err[4096];
	snprintf(fifo, sizeof(fifo), "%s/nettune.conf", dir);
	CHECK_INT(mkfifo(fifo, 0600), 0);
	const char *args[] = { "--config", fifo, "--listen", "127.0.0.1:0", "--root", root, NULL };
	int rc = nt_serve_expect_exit(args, 10, err, sizeof(err));
	CHECK_MSG(rc > 0, "serve with a FIFO as --config: rc %d (-1: it hung)", rc);
	CHECK_MSG(strstr(err, fifo) && strstr(err, "is a FIFO, not a regular file"), "%s", err);
	/* A directory is refused the same way. */
	const char *args2[] = { "--config", dir, "--listen", "127.0.0.1:0", "--root", root, NULL };
	rc = nt_serve_expect_exit(args2, 10, err, sizeof(err));
	CHECK_MSG(rc > 0, "serve with a directory as --config: rc %d", rc);
	CHECK_MSG(strstr(err, "is a directory, not a regular file"), "%s", err);
	/* A configuration file over 1 MiB. */
	char big[PATH_MAX];
	snprintf(big, sizeof(big), "%s/big.conf", dir);
	tu_sh("yes '# a comment line' | head -c 1100000 > '%s'", big);
	const char *args3[] = { "--config", big, "--listen", "127.0.0.1:0", "--root", root, NULL };
	rc = nt_serve_expect_exit(args3, 10, err, sizeof(err));
	CHECK_MSG(rc > 0, "serve with a 1.1 MB config: rc %d", rc);
	CHECK_MSG(strstr(err, big) && strstr(err, "larger than 1048576 bytes"), "%s", err);
}

static void profiles_dir(const char *dir)
{
	char pd[PATH_MAX], err[PATH_MAX], state[PATH_MAX], path[PATH_MAX + 32];
	nt_agent a;
	snprintf(pd, sizeof(pd), "%s/profiles", dir);
	snprintf(err, sizeof(err), "%s/profiles.err", dir);
	snprintf(state, sizeof(state), "%s/state-profiles", dir);
	tu_sh("mkdir -p '%1$s/sub.json' && ln -s '%1$s/nowhere' '%1$s/dangling.json' && "
	      "mkfifo '%1$s/pipe.json' && "
	      "echo '{\"sysctl\":{\"net.core.rmem_max\":\"16777216\"}}' > '%1$s/good.json'",
	      pd);
	snprintf(path, sizeof(path), "%s/huge.json", pd);
	write_big(path, 1024 * 1024);
	const char *extra[] = { "--profiles-dir", pd, NULL };
	nt_agent_opts o = { .state_dir = state, .extra = extra, .stderr_path = err };
	if (nt_agent_start_ext(&a, root, &o) < 0) {
		CHECK_MSG(0, "agent with a FIFO in its profiles directory did not start (hung?)");
		return;
	}
	static const struct {
		const char *file, *why;
	} bad[] = {
		{ "pipe.json", "is a FIFO, not a regular file" },
		{ "sub.json", "is a directory, not a regular file" },
		{ "dangling.json", "is a symlink to nothing" },
		{ "huge.json", "is larger than 1048576 bytes" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char file[PATH_MAX + 32];
		snprintf(file, sizeof(file), "%s/%s", pd, bad[i].file);
		const char *want[] = { "profile_invalid", file, bad[i].why, NULL };
		CHECK_MSG(wait_log(err, want, 2000), "no log line for %s (%s): %s", file, bad[i].why,
			  slurp(err));
	}
	long st = 0;
	nt_http("GET", nt_url(&a, "/v1/profiles/good"), NULL, &st, NULL, NULL, 0);
	CHECK_INT(st, 200);
	nt_http("GET", nt_url(&a, "/v1/profiles/huge"), NULL, &st, NULL, NULL, 0);
	CHECK_INT(st, 404);
	stop_checked(&a, "profiles directory with a FIFO");
}

static void big_desired(const char *dir)
{
	char file[PATH_MAX], err[PATH_MAX], state[PATH_MAX];
	nt_agent a;
	snprintf(file, sizeof(file), "%s/big-desired.json", dir);
	snprintf(err, sizeof(err), "%s/big.err", dir);
	snprintf(state, sizeof(state), "%s/state-big", dir);
	write_big(file, 1024 * 1024);
	const char *extra[] = { "--desired-file", file, NULL };
	nt_agent_opts o = { .state_dir = state, .extra = extra, .stderr_path = err };
	if (nt_agent_start_ext(&a, root, &o) < 0) {
		CHECK_MSG(0, "agent did not start");
		return;
	}
	const char *want[] = { "desired_file", file, "larger than 1048576 bytes", NULL };
	CHECK_MSG(wait_log(err, want, 2000), "no log line refusing %s: %s", file, slurp(err));
	long st = 0;
	nt_http("GET", nt_url(&a, "/v1/desired"), NULL, &st, NULL, NULL, 0);
	CHECK_INT(st, 404);
	stop_checked(&a, "big desired file");
}

int main(void)
{
	char dir[PATH_MAX];
	if (tu_copy(VM, dir, sizeof(dir), root, sizeof(root)) < 0)
		SKIP("cannot copy %s", VM);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	fifo_desired(dir);
	fifo_config(dir);
	profiles_dir(dir);
	big_desired(dir);
	curl_global_cleanup();
	tu_sh("rm -rf '%s'", dir);
	TEST_MAIN_END();
}
