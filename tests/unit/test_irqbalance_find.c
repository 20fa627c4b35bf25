/* SPDX-License-Identifier: Apache-2.0 */
/* Finding irqbalance (kernel/irqbalance_client.h) on a tree: by its socket
 * file, else among every process (a zombie is not running); and with the
 * agent's memo, the search among every process made again only once the
 * last one that found none is old enough, a daemon found (or started by
 * the agent) kept by its PID while it runs, and searched for again once it
 * is gone. */
#include "kernel/ctx.h"
#include "kernel/irqbalance_client.h"
#include "harness.h"
#include "tree_files.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char root[] = "/tmp/nt-irqb-XXXXXX";

/* A process PID named COMM in the tree, in state STATE. */
static void process(int pid, const char *comm, char state)
{
	char rel[64], text[128], dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/proc/%d", root, pid);
	mkdir(dir, 0755);
	snprintf(rel, sizeof(rel), "proc/%d/comm", pid);
	snprintf(text, sizeof(text), "%s\n", comm);
	tree_write(root, rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(text, sizeof(text), "%d (%s) %c 1 %d %d 0\n", pid, comm, state, pid, pid);
	tree_write(root, rel, text);
}

static void gone(int pid)
{
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s/proc/%d", root, pid);
	CHECK_INT(system(cmd), 0);
}

static int found(const nt_ctx *ctx, nt_irqbalance_memo *m)
{
	nt_irqbalance_proc p;
	int r = nt_irqbalance_find_memo(ctx, m, &p);
	return r < 0 ? r : p.pid;
}

int main(void)
{
	nt_ctx ctx;
	nt_irqbalance_memo m;

	char dir[PATH_MAX];
	if (!mkdtemp(root)) {
		CHECK_MSG(0, "no temporary directory");
		TEST_MAIN_END();
	}
	snprintf(dir, sizeof(dir), "%s/proc", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/run", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/run/irqbalance", root);
	mkdir(dir, 0755);
	process(1, "systemd", 'S');
	process(2, "kthreadd", 'S');
	for (int pid = 100; pid < 400; pid++)
		process(pid, "kworker/0:1", 'I');
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	nt_irqbalance_memo_init(&m);

	/* None: the search finds nothing, and says so for a while. */
	CHECK_INT(found(&ctx, &m), 0);
	process(777, "irqbalance", 'S');
	CHECK_INT(found(&ctx, &m), 0);
	/* Without the memo, every call searches. */
	CHECK_INT(found(&ctx, NULL), 777);
	/* Once the search that found none is old enough, it is made again. */
	m.max_age_ms = 50;
	nanosleep(&(struct timespec){ .tv_nsec = 60 * 1000 * 1000 }, NULL);
	CHECK_INT(found(&ctx, &m), 777);
	/* Found: kept by its PID, whatever the age. */
	m.max_age_ms = 60 * 60 * 1000;
	CHECK_INT(found(&ctx, &m), 777);
	/* A zombie runs nothing; gone, it is searched for again at once:
	 * a new daemon under another PID is found. */
	process(777, "irqbalance", 'Z');
	process(778, "irqbalance", 'S');
	CHECK_INT(found(&ctx, &m), 778);
	gone(778);
	CHECK_INT(found(&ctx, &m), 0);

	/* By its socket file: found at once, memo or not, and kept by its
	 * PID should the file go. */
	process(900, "irqbalance", 'S');
	CHECK_INT(found(&ctx, &m), 0); /* the search that found none stands */
	tree_write(root, "run/irqbalance/irqbalance900.sock", "");
	nt_irqbalance_proc p;
	CHECK_INT(nt_irqbalance_find_memo(&ctx, &m, &p), 0);
	CHECK_INT(p.pid, 900);
	CHECK(strstr(p.socket_path, "/run/irqbalance/irqbalance900.sock") != NULL);
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "rm -f %s/run/irqbalance/irqbalance900.sock", root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(found(&ctx, &m), 900);
	/* Started by the agent itself: known at once, without a search. */
	gone(900);
	CHECK_INT(found(&ctx, &m), 0);
	process(950, "irqbalance", 'S');
	CHECK_INT(found(&ctx, &m), 0);
	nt_irqbalance_memo_found(&m, 950);
	CHECK_INT(found(&ctx, &m), 950);
	gone(950);
	/* A socket file whose process is not irqbalance is not it. */
	process(901, "sshd", 'S');
	tree_write(root, "run/irqbalance/irqbalance901.sock", "");
	CHECK_INT(found(&ctx, NULL), 0);

	nt_irqbalance_memo_destroy(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
	TEST_MAIN_END();
}
