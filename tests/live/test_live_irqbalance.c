/* SPDX-License-Identifier: Apache-2.0 */
/* The irqbalance client against Debian's real daemon: find it by its
 * socket, read its settings, ban IRQs and clear the ban, and check that a
 * banned IRQ keeps the affinity we give it while irqbalance runs passes. */
#include "kernel/ctx.h"
#include "kernel/irqbalance_client.h"
#include "host/topology.h"
#include "harness.h"
#include "live/live_irq.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t start_daemon(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		/* --interval=1: a balancing pass every second. */
		execl("/usr/sbin/irqbalance", "irqbalance", "--foreground", "--interval=1", (char *)NULL);
		_exit(127);
	}
	return pid;
}

int main(void)
{
	nt_ctx ctx;
	nt_irqbalance_proc p;
	char reply[8192], list[1024];

	if (geteuid() != 0)
		SKIP("needs root to talk to irqbalance and write IRQ affinity");
	if (access("/usr/sbin/irqbalance", X_OK) != 0)
		SKIP("irqbalance is not installed (Debian package irqbalance)");
	nt_ctx_init(&ctx, "/");
	CHECK_INT(nt_irqbalance_find(&ctx, &p), 0);
	if (p.pid)
		SKIP("an irqbalance (pid %d) already runs here; not touching it", p.pid);

	/* The file socket, as under systemd's RuntimeDirectory. */
	mkdir("/run/irqbalance", 0755);
	pid_t daemon = start_daemon();
	/* The process shows before its socket does. */
	for (int i = 0; i < 100 && !p.socket_path[0]; i++) {
		usleep(50000);
		nt_irqbalance_find(&ctx, &p);
	}
	CHECK_INT(p.pid, daemon);
	CHECK(strstr(p.socket_path, "/run/irqbalance/irqbalance") != NULL);
	CHECK(strstr(p.cmdline, "--interval=1") != NULL);
	/* The socket may appear a moment after the process. */
	int r = -1;
	for (int i = 0; i < 50 && r < 0; i++) {
		r = nt_irqbalance_command(&p, "setup", reply, sizeof(reply));
		if (r < 0)
			usleep(100000);
	}
	CHECK_MSG(r > 0, "setup: %s", nt_strerror(r));
	CHECK(strncmp(reply, "SLEEP 1", 7) == 0);
	CHECK_INT(nt_irqbalance_parse_banned(reply, list, sizeof(list)), 0);
	CHECK_STR(list, "");

	/* Pick the IRQs of this machine's eth0 (or any NIC with IRQs). */
	nt_topology *t = NULL;
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	int irq = -1;
	for (int i = 0; t && i < t->nnics && irq < 0; i++)
		for (int k = 0; k < t->nics[i].nirqs; k++)
			if (!t->irqs[t->nics[i].irqs[k]].managed) {
				irq = t->irqs[t->nics[i].irqs[k]].irq;
				break;
			}
	CHECK(t && t->irqbalance.running && t->irqbalance.pid == daemon);
	nt_topology_free(t);
	if (irq >= 0) {
		char cmd[64], orig[256], now[256];
		snprintf(cmd, sizeof(cmd), "settings ban irqs %d", irq);
		CHECK(nt_irqbalance_command(&p, cmd, NULL, 0) >= 0);
		usleep(200000);
		CHECK(nt_irqbalance_command(&p, "setup", reply, sizeof(reply)) > 0);
		nt_irqbalance_parse_banned(reply, list, sizeof(list));
		char want[16];
		snprintf(want, sizeof(want), "%d", irq);
		CHECK_STR(list, want);
		/* Our affinity survives several one-second passes. */
		read_affinity(irq, orig, sizeof(orig));
		int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
		const char *mine = ncpu > 1 ? "1" : "0";
		CHECK_INT(write_affinity(irq, mine), 0);
		sleep(4);
		read_affinity(irq, now, sizeof(now));
		CHECK_STR(now, mine);
		write_affinity(irq, orig);
		CHECK(nt_irqbalance_command(&p, "settings ban irqs NONE", NULL, 0) >= 0);
		usleep(200000);
		nt_irqbalance_command(&p, "setup", reply, sizeof(reply));
		nt_irqbalance_parse_banned(reply, list, sizeof(list));
		CHECK_STR(list, "");
	} else {
		printf("note: no NIC IRQ here; ban not exercised on an IRQ\n");
	}

	/* Stop and start again from the recorded command line. */
	char err[256] = "";
	CHECK_INT(nt_irqbalance_stop(&p, err, sizeof(err)), 0);
	waitpid(daemon, NULL, WNOHANG);
	nt_irqbalance_proc q;
	nt_irqbalance_find(&ctx, &q);
	CHECK_INT(q.pid, 0);
	/* As in `nettune serve`, which takes SIGTERM with sigwait: the daemon
	 * it starts must not inherit the blocked mask. */
	sigset_t term, old;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	CHECK_INT(nt_irqbalance_start(p.cmdline, err, sizeof(err)), 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; i < 100 && !q.pid; i++) {
		usleep(50000);
		nt_irqbalance_find(&ctx, &q);
	}
	CHECK(q.pid > 0 && q.pid != daemon);
	CHECK_STR(q.cmdline, p.cmdline);
	if (q.pid > 0) {
		char st[128], line[256], blk[64] = "";
		snprintf(st, sizeof(st), "/proc/%d/status", q.pid);
		FILE *f = fopen(st, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "SigBlk: %63s", blk) == 1)
				break;
		if (f)
			fclose(f);
		CHECK_STR(blk, "0000000000000000");
		/* ...so SIGTERM stops it. */
		CHECK_INT(nt_irqbalance_stop(&q, err, sizeof(err)), 0);
		kill(q.pid, SIGKILL); /* not our child; never leave a daemon for later tests */
	}
	CHECK(nt_irqbalance_start("irqbalance --foreground", err, sizeof(err)) == -EINVAL);
	CHECK(nt_irqbalance_start("/bin/sh -c true", err, sizeof(err)) == -EINVAL);
	TEST_MAIN_END();
}
