/* SPDX-License-Identifier: Apache-2.0 */
/* The IRQ half of a host read (see nt_tp_irq_half in topology_int.h):
 * /proc/interrupts parsed a block at a time, the IRQs made from its lines,
 * each IRQ's files read in parts by the threads free to take them, held
 * open between reads or not (the same sources serve nt_irq_files_read and
 * nt_irq_files_write for a transaction). */
#include "host/topology.h"
#include "host/topology_int.h"
#include "host/interrupts.h"
#include "kernel/heldfiles.h"
#include "kernel/kernel.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------- IRQs */

static int cmp_irq(const void *a, const void *b)
{
	const nt_irq *x = a, *y = b;
	return (x->irq > y->irq) - (x->irq < y->irq);
}

/* "N/" + NAME into REL without snprintf (called thousands of times). */
static void irq_rel(char *rel, size_t size, int irq, const char *name)
{
	char digits[16];
	int nd = 0;
	unsigned v = (unsigned)irq;
	do {
		digits[nd++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && nd < (int)sizeof(digits));
	size_t k = 0;
	while (nd > 0 && k + 1 < size)
		rel[k++] = digits[--nd];
	if (k + 1 < size)
		rel[k++] = '/';
	size_t nl = strlen(name);
	if (k + nl >= size)
		nl = size - 1 - k;
	memcpy(rel + k, name, nl);
	rel[k + nl] = '\0';
}

/* Where an IRQ's files are read from: a directory opened for this read
 * (nt_dir_open; -1 when it could not be: then each file is reported
 * missing), or a set of files held open between reads, whose pass this
 * read has. */
typedef struct {
	int dirfd;
	nt_held_files *held; /* NULL: read beneath dirfd */
} irq_source;

/* Files of an IRQ directory, by slot in a held set. */
enum { SLOT_AFFINITY_LIST, SLOT_AFFINITY, SLOT_EFFECTIVE_LIST, SLOT_EFFECTIVE, SLOT_DEBUG };

static int irq_read(nt_topology *t, const irq_source *src, int irq, int slot, const char *rel, char *buf,
		    size_t size)
{
	if (src->held)
		return nt_held_read(src->held, irq, slot, rel, buf, size);
	if (src->dirfd < 0)
		return -ENOENT;
	return nt_read_at(&t->ctx, src->dirfd, rel, buf, size);
}

/* IRQ's CPU set beneath SRC into *SET: the cpulist file LIST (in key
 * SLOT), else the mask file MASK (SLOT + 1). Returns 0 or the list's
 * -errno. */
static int read_irq_set(nt_topology *t, const irq_source *src, int irq, const char *list, const char *mask,
			int slot, nt_cpuset *set)
{
	char buf[4096], rel[64];

	irq_rel(rel, sizeof(rel), irq, list);
	int r = irq_read(t, src, irq, slot, rel, buf, sizeof(buf));
	if (r >= 0)
		return nt_cpulist_parse(buf, set);
	irq_rel(rel, sizeof(rel), irq, mask);
	if (irq_read(t, src, irq, slot + 1, rel, buf, sizeof(buf)) >= 0)
		return nt_cpumask_parse(buf, set);
	return r;
}

/* IRQ's affinity, effective affinity and (from debugfs) whether the
 * kernel manages it. Touches only IRQ: several threads read IRQs at once.
 * Returns 0 or the -errno of its affinity, for the caller to report. */
static int read_irq_affinity(nt_topology *t, nt_irq *irq, const irq_source *src, const irq_source *dbg)
{
	char rel[64];
	int err = read_irq_set(t, src, irq->irq, "smp_affinity_list", "smp_affinity", SLOT_AFFINITY_LIST,
			       &irq->affinity);
	int r;
	irq->has_affinity = err >= 0;
	irq->has_effective = read_irq_set(t, src, irq->irq, "effective_affinity_list", "effective_affinity",
					  SLOT_EFFECTIVE_LIST, &irq->effective) >= 0;

	irq->node = -1;

	/* Kernel-managed IRQs (multi-queue block devices, some NIC queues)
	 * refuse affinity writes with EIO. Only debugfs says so in advance. */
	if (dbg->held || dbg->dirfd >= 0) {
		char buf[8192];
		irq_rel(rel, sizeof(rel), irq->irq, "");
		rel[strlen(rel) - 1] = '\0'; /* "N", not "N/" */
		r = irq_read(t, dbg, irq->irq, SLOT_DEBUG, rel, buf, sizeof(buf));
		if (r >= 0) {
			irq->managed_known = true;
			irq->managed = strstr(buf, "AFFINITY_MANAGED") != NULL;
		} else if (r == -EFBIG) {
			char *all = NULL;
			if (nt_read_all(&t->ctx, &all, "/sys/kernel/debug/irq/irqs/%d", irq->irq) >= 0) {
				irq->managed_known = true;
				irq->managed = strstr(all, "AFFINITY_MANAGED") != NULL;
				free(all);
			}
		}
	}
	return err < 0 ? err : 0;
}

/* SRC for directory PATH: HELD's pass when it can be had, else the
 * directory opened for this read. */
static void source_begin(const nt_ctx *ctx, irq_source *src, nt_held_files *held, const char *path)
{
	src->held = NULL;
	src->dirfd = held ? nt_held_begin(held) : -EBUSY;
	if (src->dirfd >= 0) {
		src->held = held;
		return;
	}
	if (src->dirfd == -EBUSY)
		src->dirfd = nt_dir_open(ctx, "%s", path);
}

/* PARTIAL: the pass read only some of the files, and closes none of
 * the others (see nt_held_end_partial). */
static void source_end(irq_source *src, bool partial)
{
	if (src->held && partial)
		nt_held_end_partial(src->held);
	else if (src->held)
		nt_held_end(src->held);
	else if (src->dirfd >= 0)
		close(src->dirfd);
	src->dirfd = -1;
	src->held = NULL;
}

int nt_irq_files_read(const nt_ctx *ctx, nt_irq_files *files, const int *irqs, int n, const char *name,
		      char *bufs, size_t size, int *res)
{
	char rel[64];
	int slot;

	if (!strcmp(name, "smp_affinity_list"))
		slot = SLOT_AFFINITY_LIST;
	else if (!strcmp(name, "effective_affinity_list"))
		slot = SLOT_EFFECTIVE_LIST;
	else
		return -EINVAL;
	if (size == 0)
		return -EINVAL;
	for (int p = 0; p < NT_IRQ_PARTS; p++) {
		irq_source src = { .dirfd = -1 };
		bool begun = false;
		for (int i = 0; i < n; i++) {
			char *buf = bufs + (size_t)i * size;
			if (irqs[i] < 0 || (unsigned)irqs[i] % NT_IRQ_PARTS != (unsigned)p)
				continue;
			if (!begun) {
				source_begin(ctx, &src, files ? files->proc[p] : NULL, "/proc/irq");
				begun = true;
			}
			irq_rel(rel, sizeof(rel), irqs[i], name);
			buf[0] = '\0';
			if (src.held)
				res[i] = nt_held_read(src.held, irqs[i], slot, rel, buf, size);
			else
				res[i] = src.dirfd >= 0 ? nt_read_at(ctx, src.dirfd, rel, buf, size) : src.dirfd;
		}
		if (begun)
			source_end(&src, true);
	}
	for (int i = 0; i < n; i++)
		if (irqs[i] < 0)
			res[i] = -EINVAL;
	return 0;
}

int nt_irq_files_write(const nt_ctx *ctx, nt_irq_files *files, int irq, const char *cpulist, char *buf,
		       size_t size, int *read_r, char *err, size_t errsize)
{
	nt_held_files *held = files && irq >= 0 ? files->proc[(unsigned)irq % NT_IRQ_PARTS] : NULL;
	return nt_kernel_irq_set_affinity_held(ctx, held, SLOT_AFFINITY_LIST, irq, cpulist, buf, size, read_r,
					       err, errsize);
}


/* Take parts until none is left, reading every IRQ of each. */
static void *take_parts(void *arg)
{
	nt_tp_irq_half *h = arg;
	nt_topology *t = h->t;
	int p;

	while ((p = __atomic_fetch_add(&h->next_part, 1, __ATOMIC_RELAXED)) < NT_IRQ_PARTS) {
		irq_source src, dbg;
		source_begin(&t->ctx, &dbg, h->files ? h->files->debug[p] : NULL,
			     "/sys/kernel/debug/irq/irqs");
		source_begin(&t->ctx, &src, h->files ? h->files->proc[p] : NULL, "/proc/irq");
		for (int i = 0; i < t->nirqs; i++) {
			nt_irq *q = &t->irqs[i];
			if ((int)((unsigned)q->irq % NT_IRQ_PARTS) == p)
				h->errs[i] = read_irq_affinity(t, q, &src, &dbg);
		}
		source_end(&src, false);
		source_end(&dbg, false);
	}
	return NULL;
}

/* How many threads read the IRQ files: one per 256 IRQs, no more than
 * the parts or the CPUs that can run them. */
static int irq_threads(int nirqs)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = nirqs / 256;
	if (n > NT_IRQ_PARTS)
		n = NT_IRQ_PARTS;
	if (cpus > 0 && n > cpus)
		n = (int)cpus;
	return n < 1 ? 1 : n;
}

/* /proc/interrupts, a block at a time (nt_interrupts_read_fd). Returns 0,
 * a -errno of the read, or the parser's error. */
static int parse_interrupts_file(nt_topology *t, nt_interrupts *in, nt_irq_files *files)
{
	memset(in, 0, sizeof(*in));
	int fd = nt_open_read(&t->ctx, "/proc/interrupts");
	if (fd < 0)
		return fd;
	int hint = files ? __atomic_load_n(&files->interrupts_lines, __ATOMIC_RELAXED) : 0;
	int r = nt_interrupts_read_fd(fd, NT_INTERRUPTS_BLOCK, hint, in);
	close(fd);
	return r;
}

/* T's IRQs made from the parsed lines IN (consumed), in IRQ order.
 * Touches only T's IRQ members. 0 or -ENOMEM. */
static int make_irqs(nt_topology *t, nt_interrupts *in)
{
	t->have_irq_info = true;
	t->irq_cpu_columns = in->cpus;
	t->ncolumns = in->ncols;
	in->cpus = NULL;
	/* The IRQs' counts stay in the parser's one block. */
	t->irq_counts = in->counts;
	in->counts = NULL;
	t->irqs = calloc((size_t)(in->nlines ? in->nlines : 1), sizeof(nt_irq));
	if (!t->irqs) {
		nt_interrupts_free(in);
		return -ENOMEM;
	}
	for (int i = 0; i < in->nlines; i++) {
		nt_irq_line *L = &in->lines[i];
		nt_irq *q = &t->irqs[t->nirqs++];
		q->irq = L->irq;
		memcpy(q->name, L->name, sizeof(q->name));
		memcpy(q->chip, L->chip, sizeof(q->chip));
		memcpy(q->hwirq, L->hwirq, sizeof(q->hwirq));
		q->counts = L->counts;
		q->ncounts = L->ncols;
		q->total = L->total; /* summed by the parser, in the same pass */
		q->nic = -1;
		q->queue = -1;
	}
	nt_interrupts_free(in);
	/* The kernel lists IRQs in ascending order already; sorting big
	 * structs that are in order would only move memory. */
	bool sorted = true;
	for (int i = 1; i < t->nirqs && sorted; i++)
		sorted = t->irqs[i - 1].irq < t->irqs[i].irq;
	if (!sorted)
		qsort(t->irqs, (size_t)t->nirqs, sizeof(nt_irq), cmp_irq);
	return 0;
}


/* The IRQ half's own thread (or the reading thread itself, when none
 * could be made): parse, make the IRQs, say they are ready, then take
 * parts with the helpers. */
void *nt_tp_irq_half_main(void *arg)
{
	nt_tp_irq_half *h = arg;
	nt_topology *t = h->t;
	nt_interrupts in;

	h->parse_r = parse_interrupts_file(t, &in, h->files);
	if (h->parse_r >= 0 && h->files)
		__atomic_store_n(&h->files->interrupts_lines, in.nlines, __ATOMIC_RELAXED);
	if (h->parse_r >= 0) {
		h->bad_lines = in.bad_lines;
		h->first_bad_line = in.first_bad_line;
		h->r = make_irqs(t, &in);
		if (h->r == 0 && !(h->errs = calloc((size_t)(t->nirqs ? t->nirqs : 1), sizeof(int))))
			h->r = -ENOMEM;
	}
	bool go = h->parse_r >= 0 && h->r == 0;
	/* Which NIC owns each IRQ needs only the IRQs and the static part:
	 * found here, off the NIC reader's path. It writes the NICs' IRQ
	 * members only, which the NIC half never touches. */
	if (go)
		nt_tp_read_irq_owners(t);
	pthread_mutex_lock(&h->mu);
	h->ready = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	if (!go) {
		/* No parts to read: none will be taken. */
		__atomic_store_n(&h->next_part, NT_IRQ_PARTS, __ATOMIC_RELAXED);
		return NULL;
	}
	/* This thread and the NIC reader are two; more only where the host
	 * has the IRQs and CPUs for them. A helper that cannot be made
	 * leaves its parts to the others. */
	for (int k = 2, n = irq_threads(t->nirqs); k < n; k++)
		if (pthread_create(&h->helpers[h->nhelpers], NULL, take_parts, h) == 0)
			h->nhelpers++;
	take_parts(h);
	for (int k = 0; k < h->nhelpers; k++)
		pthread_join(h->helpers[k], NULL);
	return NULL;
}

/* Once the NICs are read: help with the parts left, wait for the IRQ
 * half's end, and report what it met. Returns 0 or -ENOMEM. */
int nt_tp_finish_irq_half(nt_topology *t, nt_tp_irq_half *h, pthread_t thread, bool threaded)
{
	pthread_mutex_lock(&h->mu);
	while (!h->ready)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	take_parts(h);
	if (threaded)
		pthread_join(thread, NULL);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);

	int r = 0;
	if (h->parse_r < 0) {
		nt_tp_problemf(t, h->parse_r, "/proc/interrupts");
		t->have_irq_info = false;
		r = h->parse_r == -ENOMEM ? h->parse_r : 0;
	} else {
		if (h->bad_lines)
			nt_tp_problemf(t, NT_EPARSE, "/proc/interrupts: %d unparsable line(s), first at line %d",
				 h->bad_lines, h->first_bad_line);
		r = h->r;
		for (int i = 0; r == 0 && i < t->nirqs; i++)
			if (h->errs[i] < 0)
				nt_tp_problemf(t, h->errs[i], "/proc/irq/%d/smp_affinity_list", t->irqs[i].irq);
	}
	free(h->errs);
	h->errs = NULL;
	return r;
}
