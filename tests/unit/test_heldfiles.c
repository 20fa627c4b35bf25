/* SPDX-License-Identifier: Apache-2.0 */
/* Files held open between reads (kernel/heldfiles.h): a held read gives
 * what nt_read_at gives, also after the file is rewritten, replaced,
 * removed, turned into a symlink or FIFO, or its directory made anew,
 * both with inotify watches and with the fstat check used without them;
 * with watches also after it is renamed away, and after a thousand files
 * are replaced at once; files not read in a pass are closed (not in a
 * partial pass); the budget is kept; one pass at a time. On the live
 * /proc/irq the values equal nt_read_at's. */
#include "kernel/ctx.h"
#include "kernel/heldfiles.h"
#include "harness.h"
#include "tree_files.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* REL read through H in a pass of its own. */
static int pass_read(nt_held_files *h, int id, int slot, const char *rel, char *buf, size_t size)
{
	int dfd = nt_held_begin(h);
	if (dfd < 0)
		return dfd;
	int r = nt_held_read(h, id, slot, rel, buf, size);
	nt_held_end(h);
	return r;
}

/* IRQ ID's smp_affinity_list read through H in a pass of its own is
 * WANT, and H has opened OPENS files in all. */
static void read_is(nt_held_files *h, int id, const char *want, unsigned long opens)
{
	char rel[64], buf[64];
	snprintf(rel, sizeof(rel), "%d/smp_affinity_list", id);
	CHECK_INT(pass_read(h, id, 0, rel, buf, sizeof(buf)), (int)strlen(want));
	CHECK_STR(buf, want);
	CHECK_INT(nt_held_opens(h), opens);
}

/* A shell line with every %1$s replaced by ROOT. */
__attribute__((format(printf, 1, 2))) static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	CHECK_MSG(system(cmd) == 0, "%s", cmd);
}

static void fixture_cases(bool watch)
{
	char root[] = "/tmp/nt-held-XXXXXX", buf[64];
	nt_ctx ctx;
	nt_held_files *h = NULL;

	if (!mkdtemp(root)) {
		CHECK_MSG(0, "no temporary directory");
		return;
	}
	sh("mkdir -p %1$s/proc/irq/1 %1$s/proc/irq/2 %1$s/proc/irq/3", root);
	tree_write(root, "proc/irq/1/smp_affinity_list", "0-3\n");
	tree_write(root, "proc/irq/2/smp_affinity_list", "4\n");
	tree_write(root, "proc/irq/3/smp_affinity_list", "5\n");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	CHECK_INT(nt_held_files_new(&ctx, "/proc/irq", 2, &h), 0);
	if (!h)
		return;
	if (!watch)
		nt_held_files_no_watch(h);

	/* First pass opens and holds; the next reads through the descriptors. */
	int dfd = nt_held_begin(h);
	CHECK(dfd >= 0);
	CHECK_INT(nt_held_read(h, 1, 0, "1/smp_affinity_list", buf, sizeof(buf)), 3);
	CHECK_STR(buf, "0-3");
	CHECK_INT(nt_held_read(h, 2, 0, "2/smp_affinity_list", buf, sizeof(buf)), 1);
	CHECK_STR(buf, "4");
	/* Past the budget of 2: read, not held. */
	CHECK_INT(nt_held_read(h, 3, 0, "3/smp_affinity_list", buf, sizeof(buf)), 1);
	CHECK_STR(buf, "5");
	/* One pass at a time. */
	CHECK_INT(nt_held_begin(h), -EBUSY);
	nt_held_end(h);
	CHECK_INT(nt_held_count(h), 2);
	CHECK_INT(nt_held_opens(h), 3);

	CHECK_INT(nt_held_begin(h), dfd); /* the same directory, still held */
	CHECK_INT(nt_held_read(h, 1, 0, "1/smp_affinity_list", buf, sizeof(buf)), 3);
	CHECK_INT(nt_held_read(h, 2, 0, "2/smp_affinity_list", buf, sizeof(buf)), 1);
	nt_held_end(h);
	CHECK_INT(nt_held_opens(h), 3); /* no open: both were held */

	/* A partial pass (a transaction reading back a few IRQs) closes none
	 * of what it did not read; a whole pass then closes what it missed. */
	CHECK_INT(nt_held_begin(h), dfd);
	CHECK_INT(nt_held_read(h, 2, 0, "2/smp_affinity_list", buf, sizeof(buf)), 1);
	nt_held_end_partial(h);
	CHECK_INT(nt_held_count(h), 2);
	CHECK_INT(nt_held_opens(h), 3);
	CHECK_INT(nt_held_begin(h), dfd);
	CHECK_INT(nt_held_read(h, 1, 0, "1/smp_affinity_list", buf, sizeof(buf)), 3);
	CHECK_INT(nt_held_read(h, 2, 0, "2/smp_affinity_list", buf, sizeof(buf)), 1);
	nt_held_end(h);
	CHECK_INT(nt_held_count(h), 2);

	/* Rewritten in place: the held descriptor reads the new value. */
	tree_write(root, "proc/irq/1/smp_affinity_list", "7\n");
	read_is(h, 1, "7", 3);

	/* Replaced by a rename: the old file has no link left, the path is
	 * opened again. */
	sh("printf '8-9\\n' > %1$s/proc/irq/1/n && mv %1$s/proc/irq/1/n %1$s/proc/irq/1/smp_affinity_list", root);
	read_is(h, 1, "8-9", 4);
	CHECK_INT(nt_held_count(h), 1); /* 2 was not read in that pass: closed */

	/* Renamed away, a new file put at its path: the held file still has
	 * its link, so only a watch sees it. */
	if (watch) {
		sh("mv %1$s/proc/irq/1/smp_affinity_list %1$s/proc/irq/1/old && "
		   "printf '6\\n' > %1$s/proc/irq/1/smp_affinity_list",
		   root);
		read_is(h, 1, "6", 5);
		/* Its attributes changed (a watch cannot tell why): opened again,
		 * same value. */
		sh("chmod 600 %1$s/proc/irq/1/smp_affinity_list", root);
		read_is(h, 1, "6", 6);
		/* Rewritten in place: no event, still held. */
		tree_write(root, "proc/irq/1/smp_affinity_list", "5\n");
		read_is(h, 1, "5", 6);
		CHECK_INT(nt_held_count(h), 1);
	}

	/* Removed: the read fails as nt_read_at does; nothing is held for it. */
	sh("rm %1$s/proc/irq/1/smp_affinity_list", root);
	CHECK_INT(pass_read(h, 1, 0, "1/smp_affinity_list", buf, sizeof(buf)), -ENOENT);
	CHECK_STR(buf, "");
	CHECK_INT(nt_held_count(h), 0);

	/* Held, then turned into a symlink leading out, or a FIFO: refused as
	 * nt_read_at refuses them. */
	CHECK_INT(pass_read(h, 2, 0, "2/smp_affinity_list", buf, sizeof(buf)), 1);
	CHECK_INT(nt_held_count(h), 1);
	sh("rm %1$s/proc/irq/2/smp_affinity_list && ln -s /etc/hostname %1$s/proc/irq/2/smp_affinity_list", root);
	CHECK_INT(pass_read(h, 2, 0, "2/smp_affinity_list", buf, sizeof(buf)), NT_EFILETYPE);
	CHECK_INT(nt_held_count(h), 0);
	CHECK_INT(pass_read(h, 3, 0, "3/smp_affinity_list", buf, sizeof(buf)), 1);
	sh("rm %1$s/proc/irq/3/smp_affinity_list && mkfifo %1$s/proc/irq/3/smp_affinity_list", root);
	CHECK_INT(pass_read(h, 3, 0, "3/smp_affinity_list", buf, sizeof(buf)), NT_EFILETYPE);
	CHECK_INT(pass_read(h, 3, 0, "../../etc/x", buf, sizeof(buf)), -EINVAL);

	/* The directory made anew: every descriptor is dropped, the new files
	 * are read. */
	sh("rm -rf %1$s/proc/irq && mkdir -p %1$s/proc/irq/1", root);
	tree_write(root, "proc/irq/1/smp_affinity_list", "0\n");
	CHECK_INT(pass_read(h, 1, 0, "1/smp_affinity_list", buf, sizeof(buf)), 1);
	CHECK_STR(buf, "0");
	sh("rm -rf %1$s/proc/irq && mkdir -p %1$s/proc/irq/1", root);
	tree_write(root, "proc/irq/1/smp_affinity_list", "1\n");
	CHECK_INT(pass_read(h, 1, 0, "1/smp_affinity_list", buf, sizeof(buf)), 1);
	CHECK_STR(buf, "1");
	/* And gone: the pass cannot start, nothing stays held. */
	sh("rm -rf %1$s/proc/irq", root);
	CHECK_INT(nt_held_begin(h), -ENOENT);
	CHECK_INT(nt_held_count(h), 0);

	/* Written through the set: the first write opens the file for
	 * writing too, in place of the descriptor held for reading; later
	 * writes and reads go through it, with no open. */
	sh("mkdir -p %1$s/proc/irq/5", root);
	tree_write(root, "proc/irq/5/smp_affinity_list", "0-3\n");
	CHECK_INT(pass_read(h, 5, 0, "5/smp_affinity_list", buf, sizeof(buf)), 3);
	unsigned long opens = nt_held_opens(h);
	int back = 0;
	CHECK(nt_held_begin(h) >= 0);
	CHECK_INT(nt_held_write_read(h, 5, 0, "5/smp_affinity_list", "2\n", buf, sizeof(buf), &back), 0);
	CHECK_INT(back, 1);
	CHECK_STR(buf, "2");
	CHECK_INT(nt_held_write_read(h, 5, 0, "5/smp_affinity_list", "3\n", buf, sizeof(buf), &back), 0);
	CHECK_STR(buf, "3");
	CHECK_INT(nt_held_read(h, 5, 0, "5/smp_affinity_list", buf, sizeof(buf)), 1);
	CHECK_STR(buf, "3");
	nt_held_end_partial(h);
	CHECK_INT(nt_held_opens(h), opens + 1);
	CHECK_INT(nt_held_count(h), 1);
	char *text = tree_read(root, "proc/irq/5/smp_affinity_list");
	CHECK_STR(text, "3\n");
	free(text);
	/* Replaced behind the descriptor: the write goes to the new file. */
	sh("printf '7\\n' > %1$s/proc/irq/5/n && mv %1$s/proc/irq/5/n %1$s/proc/irq/5/smp_affinity_list", root);
	CHECK(nt_held_begin(h) >= 0);
	CHECK_INT(nt_held_write_read(h, 5, 0, "5/smp_affinity_list", "1\n", buf, sizeof(buf), &back), 0);
	CHECK_STR(buf, "1");
	nt_held_end_partial(h);
	CHECK_INT(nt_held_opens(h), opens + 2);
	text = tree_read(root, "proc/irq/5/smp_affinity_list");
	CHECK_STR(text, "1\n");
	free(text);
	/* A file that cannot be opened for writing: its error, nothing held
	 * for it, and nothing read back. */
	sh("mkdir -p %1$s/proc/irq/6/smp_affinity_list", root);
	CHECK(nt_held_begin(h) >= 0);
	CHECK_INT(nt_held_write_read(h, 6, 0, "6/smp_affinity_list", "1\n", buf, sizeof(buf), &back), -EISDIR);
	CHECK_STR(buf, "");
	CHECK_INT(back, -EIO);
	nt_held_end_partial(h);

	/* A value that does not fit: -EFBIG, as nt_read_at. */
	sh("mkdir -p %1$s/proc/irq/4", root);
	tree_write(root, "proc/irq/4/big", "0123456789abcdef0123456789abcdef\n");
	CHECK_INT(pass_read(h, 4, 0, "4/big", buf, 8), -EFBIG);

	nt_held_files_free(h);

	/* Budget 0: nothing held, every read opens. */
	CHECK_INT(nt_held_files_new(&ctx, "/proc/irq", 0, &h), 0);
	tree_write(root, "proc/irq/4/x", "3\n");
	CHECK_INT(pass_read(h, 4, 0, "4/x", buf, sizeof(buf)), 1);
	CHECK_INT(pass_read(h, 4, 0, "4/x", buf, sizeof(buf)), 1);
	CHECK_INT(nt_held_count(h), 0);
	CHECK_INT(nt_held_opens(h), 2);
	nt_held_files_free(h);
	sh("rm -rf %1$s", root);
}

/* One pass over files 0, STEP, 2 * STEP... below N of H's directory, each
 * to hold its number times MULT. Returns how many did not. */
static int pass_all(nt_held_files *h, int n, int step, int mult)
{
	char rel[64], want[32], buf[64];
	int bad = 0;
	CHECK(nt_held_begin(h) >= 0);
	for (int i = 0; i < n; i += step) {
		snprintf(rel, sizeof(rel), "%d", i);
		snprintf(want, sizeof(want), "%d", i * mult);
		if (nt_held_read(h, i, i % 3, rel, buf, sizeof(buf)) < 0 || strcmp(buf, want) != 0)
			bad++;
	}
	nt_held_end(h);
	return bad;
}

/* Many keys: the table grows and every value stays with its key. */
static void many_keys(void)
{
	char root[] = "/tmp/nt-held-many-XXXXXX", want[16], path[PATH_MAX], to[PATH_MAX];
	nt_ctx ctx;
	nt_held_files *h = NULL;
	const int n = 1500;

	if (!mkdtemp(root)) {
		CHECK_MSG(0, "no temporary directory");
		return;
	}
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%d", root, i);
		snprintf(want, sizeof(want), "%d\n", i * 7);
		FILE *f = fopen(path, "w");
		if (f) {
			fputs(want, f);
			fclose(f);
		}
	}
	CHECK_INT(nt_ctx_init(&ctx, "/"), 0);
	CHECK_INT(nt_held_files_new(&ctx, root, 8192, &h), 0);
	if (!h)
		return;
	/* The last pass reads every other file: the rest are closed. */
	for (int pass = 0; pass < 3; pass++)
		CHECK_INT(pass_all(h, n, pass == 2 ? 2 : 1, 7), 0);
	CHECK_INT(nt_held_count(h), n / 2);
	CHECK_INT(nt_held_opens(h), n);

	/* Every held file replaced by a rename at once: each is opened again,
	 * the others stay held. */
	for (int i = 0; i < n; i += 2) {
		snprintf(path, sizeof(path), "%s/%d.new", root, i);
		FILE *f = fopen(path, "w");
		if (f) {
			fprintf(f, "%d\n", i * 11);
			fclose(f);
		}
		snprintf(to, sizeof(to), "%s/%d", root, i);
		CHECK(rename(path, to) == 0);
	}
	CHECK_INT(pass_all(h, n, 2, 11), 0);
	CHECK_INT(nt_held_opens(h), n + n / 2);
	CHECK_INT(nt_held_count(h), n / 2);
	nt_held_files_free(h);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	CHECK_INT(system(path), 0);
}

/* The live /proc/irq (procfs: no fstat per read) gives what nt_read_at
 * gives, twice. */
static void live_proc(void)
{
	nt_ctx ctx;
	nt_held_files *h = NULL;
	char rel[64], a[4096], b[4096];
	int compared = 0;

	CHECK_INT(nt_ctx_init(&ctx, "/"), 0);
	DIR *d = opendir("/proc/irq");
	int dfd = nt_dir_open(&ctx, "/proc/irq");
	if (!d || dfd < 0) {
		printf("note: no /proc/irq here, live case not run\n");
		if (d)
			closedir(d);
		if (dfd >= 0)
			close(dfd);
		return;
	}
	CHECK_INT(nt_held_files_new(&ctx, "/proc/irq", 8192, &h), 0);
	struct dirent *de;
	for (int pass = 0; pass < 2 && h; pass++) {
		rewinddir(d);
		CHECK(nt_held_begin(h) >= 0);
		while ((de = readdir(d))) {
			int irq = atoi(de->d_name);
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			snprintf(rel, sizeof(rel), "%d/smp_affinity_list", irq);
			int ra = nt_read_at(&ctx, dfd, rel, a, sizeof(a));
			int rb = nt_held_read(h, irq, 0, rel, b, sizeof(b));
			CHECK_MSG(ra == rb && strcmp(a, b) == 0, "%s: %d '%s' against %d '%s'", rel, ra, a, rb, b);
			compared++;
		}
		nt_held_end(h);
	}
	CHECK_MSG(compared > 0, "no IRQ under /proc/irq");
	if (h)
		CHECK_INT(nt_held_opens(h), (unsigned long)nt_held_count(h));

	nt_held_files_free(h);
	closedir(d);
	close(dfd);
}

int main(void)
{
	fixture_cases(true);
	fixture_cases(false);
	many_keys();
	live_proc();
	TEST_MAIN_END();
}
