/* SPDX-License-Identifier: Apache-2.0 */
/* irqbalance handling in transactions, against Debian's real daemon on this
 * machine: with "ban", the affinity a transaction sets survives several
 * balancing passes and the ban is undone by the rollback; with "stop", the
 * daemon is gone after the apply and runs again (same command line) after
 * the rollback. This machine's IRQ affinity is restored and the daemon
 * killed at the end, whatever happened. */
#include "harness.h"
#include "live/live_irq.h"
#include "integration/nt_agent.h"
#include "integration/test_txn_util.h"
#include "kernel/ctx.h"
#include "kernel/irqbalance_client.h"
#include "settings/setting.h"
#include "host/topology.h"

#include <signal.h>
#include <sys/stat.h>

#define MAXIRQ 16

static int irqs[MAXIRQ], nirq;
static char orig[MAXIRQ][256];

static void restore_affinity(void)
{
	for (int i = 0; i < nirq; i++)
		write_affinity(irqs[i], orig[i]);
}

/* The daemon is this test's child; a child that exits stays a zombie
 * (and "running" to anyone who signals it) until reaped, and the main thread
 * is busy in HTTP when the agent stops it. Reap it as it goes, as the init
 * process of a real host would. */
static void *reaper(void *arg)
{
	waitpid(*(pid_t *)arg, NULL, 0);
	return NULL;
}

static pid_t start_daemon(void)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(126);
		/* --interval=1: a balancing pass every second. */
		execl("/usr/sbin/irqbalance", "irqbalance", "--foreground", "--interval=1", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Wait until the daemon answers on its socket. */
static int wait_daemon(const nt_ctx *ctx, nt_irqbalance_proc *p)
{
	char reply[8192];
	for (int i = 0; i < 100; i++) {
		if (nt_irqbalance_find(ctx, p) == 0 && p->pid && p->socket_path[0] &&
		    nt_irqbalance_command(p, "setup", reply, sizeof(reply)) > 0)
			return 0;
		usleep(100000);
	}
	return -1;
}

static int banned(const nt_irqbalance_proc *p, char *list, size_t size)
{
	char reply[65536];
	list[0] = '\0';
	int r = nt_irqbalance_command(p, "setup", reply, sizeof(reply));
	if (r < 0)
		return r;
	return nt_irqbalance_parse_banned(reply, list, size);
}

static bool in_list(const char *list, int irq)
{
	int *v = NULL, n = 0;
	bool found = false;
	if (nt_irqlist_parse(list, &v, &n) == 0)
		for (int i = 0; i < n; i++)
			found = found || v[i] == irq;
	free(v);
	return found;
}

static int64_t rollback(nt_agent *a, int64_t id)
{
	char path[64];
	snprintf(path, sizeof(path), "/v1/transactions/%lld/rollback", (long long)id);
	json_t *doc = tu_post(a, path, "{}", 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	int64_t rid = json_integer_value(json_object_get(doc, "id"));
	json_decref(doc);
	return rid;
}

int main(void)
{
	nt_ctx ctx;
	nt_irqbalance_proc p, q;
	nt_agent a;
	char list[4096], now[256], body[1024];
	const char *mine = "1";

	/* Shared helpers this test has no use for. */
	(void)tu_async_start;
	(void)tu_async_join;
	(void)tu_copy;
	(void)tu_read;
	if (geteuid() != 0)
		SKIP("needs root to talk to irqbalance and write IRQ affinity");
	if (access("/usr/sbin/irqbalance", X_OK) != 0)
		SKIP("irqbalance is not installed (Debian package irqbalance)");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP("needs 2 CPUs to move an IRQ to CPU 1");
	nt_ctx_init(&ctx, "/");
	if (nt_irqbalance_find(&ctx, &p) == 0 && p.pid)
		SKIP("an irqbalance (pid %d) already runs here; not touching it", p.pid);

	/* eth0's movable IRQs and their affinity now. */
	nt_topology *t = NULL;
	if (nt_topology_read(&ctx, &t) < 0)
		SKIP("cannot read this host");
	nt_nic *eth0 = nt_topology_nic(t, "eth0");
	for (int i = 0; eth0 && i < eth0->nirqs && nirq < MAXIRQ; i++) {
		const nt_irq *irq = &t->irqs[eth0->irqs[i]];
		if (irq->managed || !irq->has_affinity)
			continue;
		irqs[nirq] = irq->irq;
		read_affinity(irq->irq, orig[nirq], sizeof(orig[nirq]));
		nirq++;
	}
	nt_topology_free(t);
	if (nirq == 0)
		SKIP("no eth0 with movable IRQs here");

	mkdir("/run/irqbalance", 0755);
	pid_t daemon = start_daemon();
	if (wait_daemon(&ctx, &p) < 0 || p.pid != daemon) {
		kill(daemon, SIGTERM);
		waitpid(daemon, NULL, 0);
		CHECK_MSG(0, "irqbalance did not come up");
		TEST_MAIN_END();
	}
	pthread_t reap;
	pthread_create(&reap, NULL, reaper, &daemon);
	if (nt_agent_start(&a, "/", NULL, NULL) < 0) {
		kill(daemon, SIGTERM);
		pthread_join(reap, NULL);
		CHECK_MSG(0, "agent did not start on /");
		TEST_MAIN_END();
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);

	/* ---- ban ---- */
	char before_ban[4096];
	CHECK_INT(banned(&p, before_ban, sizeof(before_ban)), 0);
	snprintf(body, sizeof(body), "{\"profile\":{\"name\":\"ban-live\",\"irqbalance\":\"ban\","
		 "\"irq_affinity\":[{\"interface\":\"eth0\",\"cpus\":\"%s\"}]}}", mine);
	json_t *doc = tu_post(&a, "/v1/transactions", body, 201);
	CHECK_STR(tu_str(doc, "status"), "applied");
	json_t *steps = json_object_get(doc, "steps");
	CHECK_STR(tu_str(json_array_get(steps, 0), "kind"), "irqbalance_ban");
	int64_t id = json_integer_value(json_object_get(doc, "id"));
	json_decref(doc);
	CHECK_INT(banned(&p, list, sizeof(list)), 0);
	for (int i = 0; i < nirq; i++)
		CHECK_MSG(in_list(list, irqs[i]), "IRQ %d not in the ban list '%s'", irqs[i], list);
	/* Several one-second passes: the affinity stays ours. */
	sleep(4);
	for (int i = 0; i < nirq; i++) {
		read_affinity(irqs[i], now, sizeof(now));
		CHECK_MSG(strcmp(now, mine) == 0, "IRQ %d: %s after 4 s of irqbalance, set %s", irqs[i],
			  now, mine);
	}
	CHECK_INT(nt_irqbalance_find(&ctx, &q), 0);
	CHECK_INT(q.pid, daemon);
	if (id > 0)
		rollback(&a, id);
	CHECK_INT(banned(&p, list, sizeof(list)), 0);
	CHECK_STR(list, before_ban);
	for (int i = 0; i < nirq; i++) {
		read_affinity(irqs[i], now, sizeof(now));
		CHECK_MSG(strcmp(now, orig[i]) == 0, "IRQ %d: %s after the rollback, was %s", irqs[i],
			  now, orig[i]);
	}

	/* ---- stop ---- */
	snprintf(body, sizeof(body), "{\"profile\":{\"name\":\"stop-live\",\"irqbalance\":\"stop\","
		 "\"irq_affinity\":[{\"interface\":\"eth0\",\"cpus\":\"%s\"}]}}", mine);
	doc = tu_post(&a, "/v1/transactions", body, 201);
	CHECK_MSG(strcmp(tu_str(doc, "status"), "applied") == 0, "stop: %s",
		  doc ? json_dumps(doc, JSON_COMPACT) : "");
	steps = json_object_get(doc, "steps");
	json_t *s0 = json_array_get(steps, 0);
	CHECK_STR(tu_str(s0, "kind"), "irqbalance_service");
	CHECK_STR(tu_str(s0, "after"), "stopped");
	CHECK_MSG(strncmp(tu_str(s0, "before"), "running ", 8) == 0, "before: %s", tu_str(s0, "before"));
	id = json_integer_value(json_object_get(doc, "id"));
	bool stopped = strcmp(tu_str(doc, "status"), "applied") == 0;
	json_decref(doc);
	if (!stopped)
		kill(daemon, SIGTERM); /* so that the join below returns */
	pthread_join(reap, NULL); /* gone, and reaped */
	CHECK_INT(nt_irqbalance_find(&ctx, &q), 0);
	CHECK_INT(q.pid, 0);
	if (id > 0)
		rollback(&a, id);
	CHECK_INT(nt_irqbalance_find(&ctx, &q), 0);
	CHECK(q.pid > 0 && q.pid != daemon);
	CHECK_STR(q.cmdline, p.cmdline);
	for (int i = 0; i < nirq; i++) {
		read_affinity(irqs[i], now, sizeof(now));
		CHECK_MSG(strcmp(now, orig[i]) == 0, "IRQ %d: %s after the rollback, was %s", irqs[i],
			  now, orig[i]);
	}

	/* Clean up: the agent, the daemon (the one we started, or the one the
	 * rollback started again, by its pid), and this machine's affinity. */
	nt_agent_stop(&a);
	if (nt_irqbalance_find(&ctx, &q) == 0 && q.pid && strcmp(q.cmdline, p.cmdline) == 0) {
		kill(q.pid, SIGKILL); /* not our child; no lingering daemon for later tests */
		for (int i = 0; i < 50 && nt_irqbalance_find(&ctx, &q) == 0 && q.pid; i++)
			usleep(100000);
	}
	restore_affinity();
	curl_global_cleanup();
	TEST_MAIN_END();
}
