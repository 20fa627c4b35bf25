/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark reference: the least any tool must do to place a set of IRQs,
 * a bare loop that opens ROOT/proc/irq/N/smp_affinity_list, writes the
 * CPU list and closes it, for every IRQ of a list. bench/run.py hands it
 * the IRQs and values of the agent's own plan, so the loop and the agent's
 * transaction do the same placements on the same tree; bench/lab/10-bench.sh
 * does the same on / of the VM lab's kernel, with hundreds of NIC IRQs.
 *
 *   bench_writeloop ROOT LIST [ROUNDS]
 *
 * LIST has one line per IRQ: "IRQ AFTER BEFORE" (CPU lists without
 * spaces). Each round writes every AFTER (the "apply" pass), then every
 * BEFORE (the "restore" pass, what a rollback writes), so the tree ends as
 * it started. Prints the median time of each pass over ROUNDS (default 5)
 * as one JSON object.
 *
 * On a fixture tree (a regular file) the write needs O_TRUNC to leave the
 * right content; on /proc it is ignored. No fsync, no read-back: this is the
 * floor, not a fair rival of a journalled transaction.
 *
 * The same passes are then made through the agent's own write of an IRQ's
 * affinity (nt_kernel_irq_set_affinity), "kernel_apply_ms" and
 * "kernel_restore_ms": on / that is the loop above with its retries; on a
 * tree it is the fixture playing the kernel, which also rewrites the mask
 * and the two effective-affinity files the kernel would, each so that a
 * kill never leaves a torn file. The agent's transaction can go no faster
 * than that on the same tree. */
#include "bench/bench_util.h"
#include "kernel/ctx.h"
#include "kernel/kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	char path[PATH_MAX];
	unsigned irq;
	char after[256], before[256];
} irq_t;

static int write_value(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(value);
	ssize_t n = write(fd, value, len);
	int r = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (close(fd) < 0 && !r)
		r = -errno;
	return r;
}

/* The same through the agent's write of an IRQ's affinity. */
static int kernel_pass(const nt_ctx *ctx, const irq_t *v, size_t n, int after, double *ms)
{
	char err[256];
	double t0 = now_ms();
	for (size_t i = 0; i < n; i++) {
		int r = nt_kernel_irq_set_affinity(ctx, (int)v[i].irq, after ? v[i].after : v[i].before, err,
						   sizeof(err));
		if (r < 0) {
			fprintf(stderr, "bench_writeloop: IRQ %u: %s\n", v[i].irq, err[0] ? err : nt_strerror(r));
			return r;
		}
	}
	*ms = now_ms() - t0;
	return 0;
}

/* Writes every IRQ's AFTER (or BEFORE) value; 0 or the first -errno. */
static int pass(const irq_t *v, size_t n, int after, double *ms)
{
	double t0 = now_ms();
	for (size_t i = 0; i < n; i++) {
		int r = write_value(v[i].path, after ? v[i].after : v[i].before);
		if (r < 0) {
			fprintf(stderr, "bench_writeloop: %s: %s\n", v[i].path, strerror(-r));
			return r;
		}
	}
	*ms = now_ms() - t0;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: bench_writeloop ROOT LIST [ROUNDS]\n");
		return 2;
	}
	const char *root = argv[1];
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	if (rounds < 1) {
		fprintf(stderr, "bench_writeloop: ROUNDS must be at least 1\n");
		return 2;
	}
	/* "/" as ROOT is the kernel itself: paths then start at /proc. */
	const char *prefix = strcmp(root, "/") == 0 ? "" : root;
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		fprintf(stderr, "bench_writeloop: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	irq_t *v = NULL;
	double *ap = NULL, *rs = NULL, *kap = NULL, *krs = NULL;
	nt_ctx ctx;
	size_t n = 0, cap = 0;
	int rc = 1;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		unsigned irq;
		irq_t one;
		if (line[0] == '\n' || line[0] == '#')
			continue;
		if (sscanf(line, "%u %255s %255s", &irq, one.after, one.before) != 3) {
			fprintf(stderr, "bench_writeloop: bad line: %s", line);
			goto out;
		}
		one.irq = irq;
		if (snprintf(one.path, sizeof(one.path), "%s/proc/irq/%u/smp_affinity_list", prefix, irq) >=
		    (int)sizeof(one.path)) {
			fprintf(stderr, "bench_writeloop: ROOT too long\n");
			goto out;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			irq_t *p = realloc(v, cap * sizeof(*v));
			if (!p)
				goto out;
			v = p;
		}
		v[n++] = one;
	}
	ap = calloc((size_t)rounds, sizeof(double));
	rs = calloc((size_t)rounds, sizeof(double));
	kap = calloc((size_t)rounds, sizeof(double));
	krs = calloc((size_t)rounds, sizeof(double));
	if (nt_ctx_init(&ctx, root) < 0) {
		fprintf(stderr, "bench_writeloop: %s: not a host root\n", root);
		goto out;
	}
	if (!ap || !rs || !kap || !krs || !n) {
		if (!n)
			fprintf(stderr, "bench_writeloop: no IRQs in %s\n", argv[2]);
		goto out;
	}
	for (int i = 0; i < rounds; i++)
		if (pass(v, n, 1, &ap[i]) < 0 || pass(v, n, 0, &rs[i]) < 0)
			goto out;
	for (int i = 0; i < rounds; i++)
		if (kernel_pass(&ctx, v, n, 1, &kap[i]) < 0 || kernel_pass(&ctx, v, n, 0, &krs[i]) < 0)
			goto out;
	printf("{\"irqs\": %zu, \"rounds\": %d, \"apply_ms\": %.3f, \"restore_ms\": %.3f, "
	       "\"kernel_apply_ms\": %.3f, \"kernel_restore_ms\": %.3f}\n",
	       n, rounds, median(ap, rounds), median(rs, rounds), median(kap, rounds), median(krs, rounds));
	rc = 0;
out:
	fclose(f);
	free(v);
	free(ap);
	free(rs);
	free(kap);
	free(krs);
	return rc;
}
