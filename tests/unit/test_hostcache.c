/* SPDX-License-Identifier: Apache-2.0 */
/* The host model cache (host/hostcache.h): a read through it is the same
 * model as a whole read; the static part is built once while nothing
 * changes, and again after a NIC goes or comes back or a CPU goes offline,
 * so the next read sees it. The cache holds IRQ files open as the agent's
 * does, so every change below is also one a held descriptor must see. */
#include "host/hostcache.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "harness.h"
#include "tree_files.h"

#include <errno.h>
#include <unistd.h>

/* The topology document of a read through the cache and of a whole read. */
static void same_as_whole_read(nt_host_cache *c, const nt_ctx *ctx, const char *what)
{
	nt_topology *a = NULL, *b = NULL;
	CHECK_INT(nt_host_cache_read(c, &a), 0);
	CHECK_INT(nt_topology_read(ctx, &b), 0);
	if (a && b) {
		char *ta = nt_topology_to_text(a, NULL), *tb = nt_topology_to_text(b, NULL);
		CHECK_MSG(ta && tb && strcmp(ta, tb) == 0, "%s: the cached read differs", what);
		free(ta);
		free(tb);
	}
	nt_topology_free(a);
	nt_topology_free(b);
}

static int nnics(nt_host_cache *c, int *ncpus)
{
	nt_topology *t = NULL;
	int n = -1;
	if (nt_host_cache_read(c, &t) == 0) {
		n = t->nnics;
		*ncpus = nt_cpuset_count(&t->cpus_online);
	}
	nt_topology_free(t);
	return n;
}

/* Whether ROOT/REL holds VALUE and its newline. */
static bool file_is(const char *root, const char *rel, const char *value)
{
	char *text = tree_read(root, rel);
	size_t n = strlen(value);
	bool same = text && strncmp(text, value, n) == 0 && strcmp(text + n, "\n") == 0;
	free(text);
	return same;
}

int main(void)
{
	char root[] = "/tmp/nt-hostcache-XXXXXX", cmd[512], path[PATH_MAX + 64];
	nt_ctx ctx;
	nt_host_cache *c = NULL;
	int ncpus = 0;

	if (!mkdtemp(root))
		SKIP("no temporary directory");
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_host_cache_new(&ctx, &c), 0);
	if (!c)
		TEST_MAIN_END();
	CHECK_INT(nt_host_cache_hold_files(c, 8192), 0);
	CHECK_INT(nt_host_cache_builds(c), 0);
	CHECK_INT(nt_host_cache_held(c), 0);

	same_as_whole_read(c, &ctx, "fresh");
	CHECK_INT(nnics(c, &ncpus), 6);
	CHECK_INT(ncpus, 128);
	CHECK_INT(nt_host_cache_builds(c), 1); /* nothing changed: built once */
	int held = nt_host_cache_held(c);
	CHECK_MSG(held > 0, "no IRQ file held after reads");

	/* Written in place (as the fixture's kernel does) and replaced by a
	 * rename (as another program may): both seen through a held
	 * descriptor, or the one opened again. */
	tree_write(root, "proc/irq/101/smp_affinity_list", "100-101\n");
	snprintf(path, sizeof(path), "%s/proc/irq/102/smp_affinity_list", root);
	snprintf(cmd, sizeof(cmd), "printf '5\\n' > %s.tmp && mv %s.tmp %s", path, path, path);
	CHECK_INT(system(cmd), 0);
	nt_topology *t0 = NULL;
	CHECK_INT(nt_host_cache_read(c, &t0), 0);
	const nt_irq *w = t0 ? nt_topology_irq(t0, 101) : NULL, *v = t0 ? nt_topology_irq(t0, 102) : NULL;
	CHECK(w && nt_cpuset_count(&w->affinity) == 2 && nt_cpuset_isset(&w->affinity, 100));
	CHECK(v && nt_cpuset_count(&v->affinity) == 1 && nt_cpuset_isset(&v->affinity, 5));
	nt_topology_free(t0);
	same_as_whole_read(c, &ctx, "files rewritten");
	CHECK_INT(nt_host_cache_held(c), held);

	/* One file of a few IRQs read for a transaction: through the held
	 * descriptors, the values the files hold, and nothing else held is
	 * closed; without the cache the same values. */
	{
		int irqs[5] = { 101, 102, 999999, -1, 100 }, res[5], res2[5];
		char bufs[5][64], bufs2[5][64];
		CHECK_INT(nt_host_cache_read_irq_files(c, &ctx, irqs, 5, "smp_affinity_list", bufs[0], 64, res), 0);
		CHECK_INT(res[0], 7);
		CHECK_STR(bufs[0], "100-101");
		CHECK_INT(res[1], 1);
		CHECK_STR(bufs[1], "5");
		CHECK_INT(res[2], -ENOENT);
		CHECK_INT(res[3], -EINVAL);
		CHECK(res[4] > 0 && file_is(root, "proc/irq/100/smp_affinity_list", bufs[4]));
		CHECK_INT(nt_host_cache_held(c), held);
		CHECK_INT(nt_host_cache_read_irq_files(NULL, &ctx, irqs, 5, "smp_affinity_list", bufs2[0], 64,
						       res2), 0);
		for (int i = 0; i < 5; i++) {
			CHECK_INT(res2[i], res[i]);
			if (res[i] >= 0)
				CHECK_STR(bufs2[i], bufs[i]);
		}
		CHECK_INT(nt_host_cache_read_irq_files(c, &ctx, irqs, 5, "effective_affinity_list", bufs[0], 64,
						       res), 0);
		CHECK(res[0] > 0 && file_is(root, "proc/irq/101/effective_affinity_list", bufs[0]));
		CHECK_INT(nt_host_cache_read_irq_files(c, &ctx, irqs, 5, "node", bufs[0], 64, res), -EINVAL);
		CHECK_INT(nt_host_cache_held(c), held);
	}

	/* A dynamic change is seen without a rebuild. */
	tree_write(root, "proc/irq/100/smp_affinity_list", "7\n");
	nt_topology *t = NULL;
	CHECK_INT(nt_host_cache_read(c, &t), 0);
	const nt_irq *q = t ? nt_topology_irq(t, 100) : NULL;
	CHECK(q && q->has_affinity && nt_cpuset_count(&q->affinity) == 1 && nt_cpuset_isset(&q->affinity, 7));
	nt_topology_free(t);
	CHECK_INT(nt_host_cache_builds(c), 1);

	/* debugfs says which IRQs the kernel manages; a big file is read whole
	 * too; IRQs it does not list stay unknown. */
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/kernel/debug/irq/irqs", root);
	CHECK_INT(system(cmd), 0);
	tree_write(root, "sys/kernel/debug/irq/irqs/100", "handler:  handle_edge_irq\nflags:     AFFINITY_MANAGED\n");
	tree_write(root, "sys/kernel/debug/irq/irqs/101", "handler:  handle_edge_irq\nflags:     0x0\n");
	char *big = malloc(20000);
	if (big) {
		memset(big, 'x', 19000);
		strcpy(big + 19000, "\nAFFINITY_MANAGED\n");
		tree_write(root, "sys/kernel/debug/irq/irqs/102", big);
		free(big);
	}
	t = NULL;
	CHECK_INT(nt_host_cache_read(c, &t), 0);
	const nt_irq *m0 = t ? nt_topology_irq(t, 100) : NULL, *m1 = t ? nt_topology_irq(t, 101) : NULL,
		     *m2 = t ? nt_topology_irq(t, 102) : NULL, *m3 = t ? nt_topology_irq(t, 103) : NULL;
	CHECK(m0 && m0->managed_known && m0->managed);
	CHECK(m1 && m1->managed_known && !m1->managed);
	CHECK(m2 && m2->managed_known && m2->managed);
	CHECK(m3 && !m3->managed_known);
	nt_topology_free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/sys/kernel/debug", root);
	CHECK_INT(system(cmd), 0);

	/* A NIC removed, then back. */
	snprintf(path, sizeof(path), "%s/sys/class/net/enos3", root);
	char target[PATH_MAX];
	ssize_t tl = readlink(path, target, sizeof(target) - 1);
	CHECK(tl > 0);
	target[tl > 0 ? tl : 0] = '\0';
	CHECK_INT(unlink(path), 0);
	CHECK_INT(nnics(c, &ncpus), 5);
	CHECK_INT(nt_host_cache_builds(c), 2);
	same_as_whole_read(c, &ctx, "NIC removed");
	CHECK_INT(symlink(target, path), 0);
	CHECK_INT(nnics(c, &ncpus), 6);
	CHECK_INT(nt_host_cache_builds(c), 3);
	same_as_whole_read(c, &ctx, "NIC back");

	/* CPUs 64-127 offline. */
	tree_write(root, "sys/devices/system/cpu/online", "0-63\n");
	CHECK_INT(nnics(c, &ncpus), 6);
	CHECK_INT(ncpus, 64);
	CHECK_INT(nt_host_cache_builds(c), 4);
	same_as_whole_read(c, &ctx, "CPUs offline");

	/* bond0 deleted and made again as a plain link under its old name:
	 * the key is the same, its ifindex is not. */
	CHECK(nt_host_cache_read(c, &t) == 0 && t && nt_topology_nic(t, "bond0") &&
	      nt_topology_nic(t, "bond0")->is_bond);
	nt_topology_free(t);
	unsigned long before = nt_host_cache_builds(c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/sys/devices/virtual/net/bond0/bonding", root);
	CHECK_INT(system(cmd), 0);
	tree_write(root, "sys/devices/virtual/net/bond0/ifindex", "99\n");
	t = NULL;
	CHECK_INT(nt_host_cache_read(c, &t), 0);
	const nt_nic *b0 = t ? nt_topology_nic(t, "bond0") : NULL;
	CHECK(b0 && !b0->is_bond && b0->ifindex == 99);
	nt_topology_free(t);
	CHECK_INT(nt_host_cache_builds(c), before + 1);
	same_as_whole_read(c, &ctx, "link made again");

	/* Invalidation builds again even when the key did not change. */
	nt_host_cache_invalidate(c);
	CHECK_INT(nnics(c, &ncpus), 6);
	CHECK_INT(nt_host_cache_builds(c), 6);

	/* An IRQ gone from /proc/interrupts: its held files are closed. */
	held = nt_host_cache_held(c);
	snprintf(cmd, sizeof(cmd), "sed -i '/^ *100:/d' %s/proc/interrupts", root);
	CHECK_INT(system(cmd), 0);
	t = NULL;
	CHECK_INT(nt_host_cache_read(c, &t), 0);
	CHECK(t && !nt_topology_irq(t, 100));
	nt_topology_free(t);
	CHECK_INT(nt_host_cache_held(c), held - 2);
	same_as_whole_read(c, &ctx, "IRQ gone");

	/* A context carrying the cache reads through it. */
	nt_ctx cached = ctx;
	cached.host_cache = c;
	CHECK_INT(nt_topology_read(&cached, &t), 0);
	nt_topology_free(t);
	CHECK_INT(nt_host_cache_builds(c), 6);

	nt_host_cache_free(c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
	TEST_MAIN_END();
}
