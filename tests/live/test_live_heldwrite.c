/* SPDX-License-Identifier: Apache-2.0 */
/* Writes of this machine's own IRQ affinity through the files the agent
 * holds open (kernel/heldfiles.h, nt_kernel_irq_set_affinity_held): procfs
 * takes a write on a descriptor held for reading and writing, again and
 * again (its position growing), each read back at offset 0, with one open
 * in all; an IRQ moved to another CPU this way reads so in /proc, and is
 * put back. */
#include "kernel/ctx.h"
#include "kernel/heldfiles.h"
#include "kernel/kernel.h"
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

static int irq_moved = -1;
static char irq_orig[256];

/* smp_affinity_list of IRQ read as any tool would, without the agent's code. */
static const char *proc_value(int irq)
{
	static char buf[256];
	char path[64];
	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	FILE *f = fopen(path, "r");
	buf[0] = '\0';
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

static void restore(void)
{
	char path[64];
	if (irq_moved < 0)
		return;
	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq_moved);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(irq_orig, f);
		fclose(f);
	}
}

int main(void)
{
	nt_ctx ctx;
	nt_held_files *h = NULL;
	char err[256], buf[256], rel[64];
	int back = 0, done = 0;

	if (geteuid() != 0) {
		printf("SKIP: writing IRQ affinity needs root\n");
		return 77;
	}
	CHECK_INT(nt_ctx_init(&ctx, "/"), 0);
	CHECK(ctx.live);
	CHECK_INT(nt_held_files_new(&ctx, "/proc/irq", 64, &h), 0);
	DIR *d = opendir("/proc/irq");
	if (!h || !d) {
		CHECK_MSG(0, "no /proc/irq or no held set");
		TEST_MAIN_END();
	}
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct dirent *de;
	while (!done && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		int irq = atoi(de->d_name);
		char cur[256];
		snprintf(cur, sizeof(cur), "%s", proc_value(irq));
		if (!cur[0])
			continue;
		unsigned long opens = nt_held_opens(h);
		/* Its own value back: refused for IRQs the kernel manages or
		 * will not move (EIO), which are passed over. */
		if (nt_kernel_irq_set_affinity_held(&ctx, h, 0, irq, cur, buf, sizeof(buf), &back, err,
						    sizeof(err)) != 0)
			continue;
		done = 1;
		CHECK_MSG(back > 0 && strcmp(buf, cur) == 0, "IRQ %d read back '%s' after '%s'", irq, buf, cur);
		CHECK_INT(nt_held_count(h), 1);
		/* Through the held descriptor from now on. */
		CHECK_INT(nt_kernel_irq_set_affinity_held(&ctx, h, 0, irq, cur, buf, sizeof(buf), &back, err,
							  sizeof(err)), 0);
		CHECK_STR(buf, cur);
		CHECK_INT(nt_held_opens(h), opens + 1);
		/* Read through it too, in a pass. */
		snprintf(rel, sizeof(rel), "%d/smp_affinity_list", irq);
		CHECK(nt_held_begin(h) >= 0);
		CHECK_INT(nt_held_read(h, irq, 0, rel, buf, sizeof(buf)), (int)strlen(cur));
		nt_held_end_partial(h);
		CHECK_STR(buf, cur);
		if (ncpus < 2) {
			printf("note: one CPU here, IRQ %d not moved\n", irq);
			break;
		}
		/* Moved to the last CPU and back, each seen in /proc. */
		snprintf(irq_orig, sizeof(irq_orig), "%s\n", cur);
		irq_moved = irq;
		atexit(restore);
		char to[32];
		snprintf(to, sizeof(to), "%ld", ncpus - 1);
		int r = nt_kernel_irq_set_affinity_held(&ctx, h, 0, irq, to, buf, sizeof(buf), &back, err,
							sizeof(err));
		if (r == -EIO || r == -EINVAL) {
			printf("note: IRQ %d refuses CPU %s (%s), not moved\n", irq, to, err);
			break;
		}
		CHECK_INT(r, 0);
		CHECK_STR(buf, to);
		CHECK_STR(proc_value(irq), to);
		CHECK_INT(nt_kernel_irq_set_affinity_held(&ctx, h, 0, irq, cur, buf, sizeof(buf), &back, err,
							  sizeof(err)), 0);
		CHECK_STR(buf, cur);
		CHECK_STR(proc_value(irq), cur);
		CHECK_INT(nt_held_opens(h), opens + 1);
		printf("IRQ %d: %s -> %s -> %s through one held descriptor\n", irq, cur, to, cur);
	}
	CHECK_MSG(done, "no IRQ here takes a write of its own affinity");
	closedir(d);
	nt_held_files_free(h);
	TEST_MAIN_END();
}
