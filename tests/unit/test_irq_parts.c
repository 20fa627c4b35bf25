/* SPDX-License-Identifier: Apache-2.0 */
/* A host with over a thousand IRQs is read in parts by several threads
 * (host/topology_irq.c, NT_IRQ_PARTS): every IRQ gets its own files' values,
 * whatever part and thread read it, with files held open (host model
 * cache) or not (whole read); an IRQ whose affinity file is missing is
 * reported once, in IRQ order, among the problems; an IRQ with only mask
 * files is read from them. */
#include "host/hostcache.h"
#include "host/topology.h"
#include "kernel/ctx.h"
#include "harness.h"
#include "tree_files.h"

#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>

#define FIRST 2000
#define COUNT 1200


/* What IRQ's files hold: affinity CPU irq % 128, effective (irq * 7) % 128;
 * every 100th has no smp_affinity_list (reported); every 50th others only
 * masks (read from them). */
static bool missing(int irq)
{
	return irq % 100 == 0;
}
static bool masks_only(int irq)
{
	return irq % 50 == 25;
}

static void add_irqs(const char *root)
{
	char path[PATH_MAX + 64], rel[64], text[64];
	snprintf(path, sizeof(path), "%s/proc/interrupts", root);
	FILE *f = fopen(path, "a");
	if (!f) {
		perror(path);
		exit(1);
	}
	for (int irq = FIRST; irq < FIRST + COUNT; irq++) {
		fprintf(f, "%4d:", irq);
		for (int c = 0; c < 128; c++)
			fprintf(f, " %10d", c == irq % 128 ? irq : 0);
		fprintf(f, "  IR-PCI-MSIX-0000:e1:00.0 %d-edge  nvme9q%d\n", irq, irq - FIRST);
		snprintf(path, sizeof(path), "%s/proc/irq/%d", root, irq);
		mkdir(path, 0755);
		int a = irq % 128, e = (irq * 7) % 128;
		if (masks_only(irq)) {
			/* 128 bits: four 32-bit words, the highest first. */
			unsigned w[4] = { 0 };
			w[3 - a / 32] |= 1u << (a % 32);
			snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity", irq);
			snprintf(text, sizeof(text), "%08x,%08x,%08x,%08x\n", w[0], w[1], w[2], w[3]);
			tree_write(root, rel, text);
			unsigned v[4] = { 0 };
			v[3 - e / 32] |= 1u << (e % 32);
			snprintf(rel, sizeof(rel), "proc/irq/%d/effective_affinity", irq);
			snprintf(text, sizeof(text), "%08x,%08x,%08x,%08x\n", v[0], v[1], v[2], v[3]);
			tree_write(root, rel, text);
			continue;
		}
		if (!missing(irq)) {
			snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", irq);
			snprintf(text, sizeof(text), "%d\n", a);
			tree_write(root, rel, text);
		}
		snprintf(rel, sizeof(rel), "proc/irq/%d/effective_affinity_list", irq);
		snprintf(text, sizeof(text), "%d\n", e);
		tree_write(root, rel, text);
	}
	fclose(f);
}

static void check_read(nt_topology *t, const char *how)
{
	int bad = 0, checked = 0;
	for (int irq = FIRST; irq < FIRST + COUNT; irq++) {
		const nt_irq *q = nt_topology_irq(t, irq);
		if (!q) {
			bad++;
			continue;
		}
		checked++;
		bool ok = q->total == (uint64_t)irq && q->has_effective && nt_cpuset_count(&q->effective) == 1 &&
			  nt_cpuset_isset(&q->effective, (irq * 7) % 128);
		if (missing(irq))
			ok = ok && !q->has_affinity;
		else
			ok = ok && q->has_affinity && nt_cpuset_count(&q->affinity) == 1 &&
			     nt_cpuset_isset(&q->affinity, irq % 128);
		if (!ok) {
			if (bad < 5)
				fprintf(stderr, "%s: IRQ %d read wrong\n", how, irq);
			bad++;
		}
	}
	CHECK_MSG(bad == 0, "%s: %d of %d IRQs read wrong", how, bad, COUNT);
	CHECK_INT(checked, COUNT);

	/* The missing files, each reported once, in IRQ order. */
	int last = -1, reported = 0;
	bool ordered = true;
	size_t i;
	json_t *p;
	json_array_foreach(t->problems, i, p) {
		const char *path = json_string_value(json_object_get(p, "path"));
		int irq;
		if (path && sscanf(path, "/proc/irq/%d/smp_affinity_list", &irq) == 1 && irq >= FIRST) {
			ordered = ordered && irq > last && missing(irq);
			last = irq;
			reported++;
		}
	}
	CHECK_MSG(ordered, "%s: problems out of IRQ order or for a file that is there", how);
	CHECK_INT(reported, COUNT / 100);
}

int main(void)
{
	char root[] = "/tmp/nt-irqparts-XXXXXX", cmd[PATH_MAX + 128];
	nt_ctx ctx;
	nt_topology *t = NULL;
	nt_host_cache *c = NULL;

	if (!mkdtemp(root))
		SKIP("no temporary directory");
	snprintf(cmd, sizeof(cmd), "cp -a %s/epyc7713-2node-bond/. %s/", NT_FIXTURES, root);
	CHECK_INT(system(cmd), 0);
	add_irqs(root);
	CHECK_INT(nt_ctx_init(&ctx, root), 0);

	CHECK_INT(nt_topology_read(&ctx, &t), 0);
	if (t)
		check_read(t, "whole read");
	nt_topology_free(t);

	CHECK_INT(nt_host_cache_new(&ctx, &c), 0);
	CHECK_INT(nt_host_cache_hold_files(c, 8192), 0);
	for (int pass = 0; pass < 2 && c; pass++) {
		t = NULL;
		CHECK_INT(nt_host_cache_read(c, &t), 0);
		if (t)
			check_read(t, pass ? "held files, second read" : "held files, first read");
		nt_topology_free(t);
	}
	/* Both files of every new IRQ but the missing ones, and the fixture's. */
	CHECK_MSG(c && nt_host_cache_held(c) >= 2 * COUNT - COUNT / 100, "held %d",
		  c ? nt_host_cache_held(c) : -1);
	nt_host_cache_free(c);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
	TEST_MAIN_END();
}
