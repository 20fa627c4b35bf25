/* SPDX-License-Identifier: Apache-2.0 */
/* COMMAND of bench-run and of each --compare or tune round, run as a child
 * in a process group of its own (cli/bench.h, nt_bench_exec): SIGINT,
 * SIGTERM and SIGHUP passed on to the group, its output kept up to
 * NT_BENCH_MAX_OUTPUT, and a group that ignores a signal killed after
 * NT_BENCH_KILL_GRACE_S. Out of cli/cmd_bench.c, whose run this serves. */
#include "cli/bench.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Set by the signal handler; the pid the handler passes signals on to.
 * These are the only file-scope variables: a signal handler has no other
 * way to its state. */
static volatile sig_atomic_t got_signal;
static volatile pid_t child_pid;

static void on_signal(int sig)
{
	got_signal = sig;
	if (child_pid > 0)
		kill(-child_pid, sig);
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP };

static void set_handlers(void (*fn)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaction(forwarded[i], &sa, NULL);
}

void nt_bench_catch_signals(void)
{
	set_handlers(on_signal);
}

int nt_bench_signal(void)
{
	return got_signal;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A pidfd for PID (Linux 5.3), so that poll() wakes when it exits; -1
 * where the kernel has none, and the loop then looks every tick. */
static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* Whether PID has ended, without reaping it: while it is a zombie its
 * pid, and so its process group's id, cannot be taken by another
 * process, and the group can still be signalled safely. */
static bool ended(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* Keep up to NT_BENCH_MAX_OUTPUT bytes of CHUNK (N bytes) in *BUF; the
 * rest is counted in *DROPPED. Never fails: COMMAND must not block on a
 * full pipe because we ran short of memory. */
static void keep_output(char **buf, size_t *len, size_t *cap, size_t *dropped, const char *chunk, size_t n)
{
	size_t keep = *len + n > NT_BENCH_MAX_OUTPUT ? NT_BENCH_MAX_OUTPUT - *len : n;
	if (keep && *len + keep + 1 > *cap) {
		size_t ncap = (*len + keep + 1) * 2;
		char *nb = realloc(*buf, ncap);
		if (nb) {
			*buf = nb;
			*cap = ncap;
		}
	}
	if (keep && *len + keep + 1 <= *cap) {
		memcpy(*buf + *len, chunk, keep);
		*len += keep;
	} else {
		keep = 0;
	}
	*dropped += n - keep;
}

int nt_bench_exec(char **args, char **out, size_t *outlen, int *exit_status, int *signalled, double *duration_s)
{
	int fds[2] = { -1, -1 }, wstatus = 0;
	size_t len = 0, cap = 0, dropped = 0;
	char *buf = NULL;

	if (out && pipe2(fds, O_CLOEXEC) < 0) {
		fprintf(stderr, "nettune: bench-run: cannot start COMMAND: %s\n", strerror(errno));
		return -1;
	}
	double t0 = now_s();
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "nettune: bench-run: cannot start COMMAND: %s\n", strerror(errno));
		if (out) {
			close(fds[0]);
			close(fds[1]);
		}
		return -1;
	}
	if (pid == 0) {
		set_handlers(SIG_DFL);
		/* COMMAND dies with bench-run, also when bench-run is killed
		 * outright (SIGKILL: no handler runs), so no benchmark is left
		 * running on a host the agent is about to put back; a parent gone
		 * before the prctl took effect is caught by the getppid check. In
		 * a process group of its own, forwarded signals reach what it
		 * started too. */
		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(NT_BENCH_FAILED);
		if (out && dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(NT_BENCH_FAILED);
		execvp(args[0], args);
		fprintf(stderr, "nettune: bench-run: cannot run '%s': %s\n", args[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid); /* as the child does: whichever runs first */
	child_pid = pid;
	/* A signal that came between the fork and child_pid being set was
	 * not passed on yet. */
	if (got_signal)
		kill(-pid, got_signal);
	if (out)
		close(fds[1]);
	int rfd = out ? fds[0] : -1, pfd = pidfd_of(pid);

	/* The round is COMMAND's life: it ends when COMMAND exits, and what
	 * COMMAND left behind in its process group (a server it started, a
	 * daemon holding its standard output) is ended with it, since the
	 * host is put back right after. A signal passed on to COMMAND that
	 * it ignores is followed by SIGKILL after a grace: bench-run must
	 * not wait on it with the profile applied. */
	double signal_at = 0, exit_at = 0;
	bool killed = false, group_killed = false, leftover = false;
	for (;;) {
		if (!exit_at && ended(pid)) {
			exit_at = now_s();
			*duration_s = exit_at - t0;
			kill(-pid, SIGTERM);
		}
		double t = now_s();
		if (got_signal && !signal_at)
			signal_at = t;
		if (!exit_at && signal_at && !killed && t - signal_at >= NT_BENCH_KILL_GRACE_S) {
			fprintf(stderr, "nettune: bench-run: COMMAND did not end within %d s of %s: killed (SIGKILL)\n",
				NT_BENCH_KILL_GRACE_S, strsignal(got_signal));
			kill(-pid, SIGKILL);
			killed = true;
		}
		if (exit_at && rfd >= 0 && !group_killed && t - exit_at >= NT_BENCH_GROUP_GRACE_S) {
			/* Still open after COMMAND exited and its group was
			 * asked to end. */
			kill(-pid, SIGKILL);
			group_killed = leftover = true;
		}
		if (exit_at && (rfd < 0 || t - exit_at >= 2 * NT_BENCH_GROUP_GRACE_S)) {
			/* Held by a process outside COMMAND's group (one that
			 * left it with setsid): what it writes now is not this
			 * round's. */
			if (rfd >= 0)
				leftover = true;
			break;
		}
		struct pollfd pf[2];
		nfds_t n = 0;
		if (rfd >= 0)
			pf[n++] = (struct pollfd){ .fd = rfd, .events = POLLIN };
		if (pfd >= 0 && !exit_at)
			pf[n++] = (struct pollfd){ .fd = pfd, .events = POLLIN };
		/* A tick for what no descriptor tells: a kernel without pidfd,
		 * the graces. */
		int pr = poll(pf, n, 100);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr > 0 && rfd >= 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			char chunk[65536];
			ssize_t r = read(rfd, chunk, sizeof(chunk));
			if (r > 0) {
				keep_output(&buf, &len, &cap, &dropped, chunk, (size_t)r);
			} else if (r == 0 || errno != EINTR) {
				close(rfd);
				rfd = -1;
			}
		}
	}
	if (rfd >= 0)
		close(rfd);
	if (pfd >= 0)
		close(pfd);
	if (leftover)
		fprintf(stderr, "nettune: bench-run: a process COMMAND started still held its standard output %d s after "
				"it exited: its process group was ended and the output read up to then\n",
			NT_BENCH_GROUP_GRACE_S);
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	child_pid = 0;
	if (!exit_at)
		*duration_s = now_s() - t0;
	*exit_status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	*signalled = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
	if (dropped)
		fprintf(stderr, "nettune: bench-run: COMMAND printed %zu bytes; the first %u MiB were read, the last %zu "
				"bytes dropped\n",
			len + dropped, NT_BENCH_MAX_OUTPUT >> 20, dropped);
	if (out) {
		if (!buf)
			buf = calloc(1, 1);
		else
			buf[len] = '\0';
		*out = buf;
		*outlen = len;
	}
	return 0;
}
