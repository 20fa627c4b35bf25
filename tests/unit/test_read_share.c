/* SPDX-License-Identifier: Apache-2.0 */
/* Shared host reads (api/read_share.h): concurrent callers may share a
 * read, but none is ever answered with a read that began before it
 * arrived. Each thread owns one IRQ of a copied fixture tree, writes a new
 * affinity to it, then asks for a snapshot: the snapshot must show that
 * affinity, whichever thread's read it came from. */
#include "api/read_share.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "harness.h"
#include "tree_files.h"

#include <pthread.h>
#include <unistd.h>

#define NTHREADS 8
#define ROUNDS 25

typedef struct worker {
	nt_read_share *share;
	const char *root;
	int irq;
	int ncpus;
	int stale; /* snapshots that missed this thread's own write */
	int failed; /* reads or renders that failed */
	int rounds;
} worker;

static void *work(void *arg)
{
	worker *w = arg;
	char rel[64], val[16];

	snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", w->irq);
	for (int i = 0; i < ROUNDS; i++) {
		int cpu = (w->irq + i) % w->ncpus;
		snprintf(val, sizeof(val), "%d\n", cpu);
		tree_write(w->root, rel, val);

		nt_snapshot *snap = NULL;
		if (nt_read_share_get(w->share, &snap) < 0) {
			w->failed++;
			continue;
		}
		const nt_irq *q = nt_topology_irq(nt_snapshot_topology(snap), w->irq);
		nt_cpuset want;
		nt_cpuset_zero(&want);
		nt_cpuset_set(&want, cpu);
		if (!q || !q->has_affinity || !nt_cpuset_equal(&q->affinity, &want))
			w->stale++;
		/* Every reader of a snapshot gets the same text. */
		size_t len = 0;
		const char *text = nt_snapshot_text(snap, NT_DOC_IRQS, &len);
		if (!text || len == 0 || strlen(text) != len || nt_snapshot_text(snap, NT_DOC_IRQS, NULL) != text)
			w->failed++;
		nt_snapshot_put(snap);
		w->rounds++;
	}
	return NULL;
}

int main(void)
{
	char root[] = "/tmp/nt-readshare-XXXXXX", cmd[512];
	nt_ctx ctx;
	nt_read_share *share = NULL;
	worker w[NTHREADS];
	pthread_t th[NTHREADS];

	if (!mkdtemp(root))
		SKIP("no temporary directory");
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_read_share_new(&ctx, &share), 0);
	if (!share)
		TEST_MAIN_END();

	/* The IRQs of the fixture, one per thread. */
	nt_topology *t = NULL;
	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	CHECK(t && t->nirqs >= NTHREADS);
	if (!t || t->nirqs < NTHREADS)
		TEST_MAIN_END();
	for (int i = 0; i < NTHREADS; i++)
		w[i] = (worker){ .share = share, .root = root, .irq = t->irqs[i * (t->nirqs / NTHREADS)].irq,
				 .ncpus = nt_cpuset_count(&t->cpus_online) };
	nt_topology_free(t);

	for (int i = 0; i < NTHREADS; i++)
		CHECK_INT(pthread_create(&th[i], NULL, work, &w[i]), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);

	unsigned long reads = 0, served = 0;
	nt_read_share_stats(share, &reads, &served);
	for (int i = 0; i < NTHREADS; i++) {
		CHECK_MSG(w[i].stale == 0, "IRQ %d: %d of %d snapshots older than the thread's own write",
			  w[i].irq, w[i].stale, ROUNDS);
		CHECK_INT(w[i].failed, 0);
		CHECK_INT(w[i].rounds, ROUNDS);
	}
	CHECK_INT(served, NTHREADS * ROUNDS);
	CHECK(reads >= 1 && reads <= served);
	printf("%lu requests served by %lu reads\n", served, reads);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
	nt_read_share_free(share);
	TEST_MAIN_END();
}
