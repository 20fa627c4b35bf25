/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel files that are not what they claim, on a hand-built root: a FIFO
 * in place of an attribute (reading or writing it must not block), a
 * symlink as the last component, a directory on the way that is a symlink
 * leading out of the root (nothing outside may be read or written), and a
 * write replaced in one step (the old inode is left whole); the same rules
 * for reads beneath a directory opened once. */
#include "harness.h"
#include "kernel/ctx.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64], outside[64];

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	FILE *f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void slurp(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "FAIL: a kernel file operation blocked\n";
	if (write(2, m, sizeof(m) - 1) < 0)
		_exit(2);
	_exit(1);
}

int main(void)
{
	char p[PATH_MAX], buf[256];
	nt_ctx ctx;

	snprintf(root, sizeof(root), "/tmp/nt-hostile-XXXXXX");
	snprintf(outside, sizeof(outside), "/tmp/nt-outside-XXXXXX");
	if (!mkdtemp(root) || !mkdtemp(outside))
		SKIP("cannot make temporary directories");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/proc/sys/net/core %s/proc/irq/3 %s/sys/x", root,
		 root, root);
	if (system(cmd) != 0)
		SKIP("cannot build the tree");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);
	signal(SIGALRM, on_alarm);
	alarm(20); /* any blocking open, read or write ends the test as failed */

	/* A FIFO as a sysctl: read and write are refused at once. */
	snprintf(p, sizeof(p), "%s/proc/sys/net/core/rmem_max", root);
	CHECK_INT(mkfifo(p, 0644), 0);
	CHECK_INT(nt_read_str(&ctx, buf, sizeof(buf), "/proc/sys/net/core/rmem_max"), NT_EFILETYPE);
	char *all = NULL;
	CHECK_INT(nt_read_all(&ctx, &all, "/proc/sys/net/core/rmem_max"), NT_EFILETYPE);
	CHECK(all == NULL);
	CHECK_INT(nt_write_str(&ctx, "4096", "/proc/sys/net/core/rmem_max"), NT_EFILETYPE);
	/* The same FIFO with a reader waiting would still be refused. */
	int rfd = open(p, O_RDONLY | O_NONBLOCK);
	CHECK(rfd >= 0);
	CHECK_INT(nt_write_str(&ctx, "4096", "/proc/sys/net/core/rmem_max"), NT_EFILETYPE);
	if (rfd >= 0) {
		CHECK_INT(read(rfd, buf, sizeof(buf)), 0); /* nothing was written into it */
		close(rfd);
	}

	/* A symlink as the last component, even one inside the root. */
	put("/proc/sys/net/core/wmem_max", "212992\n");
	snprintf(p, sizeof(p), "%s/proc/sys/net/core/wmem_default", root);
	CHECK_INT(symlink("wmem_max", p), 0);
	CHECK_INT(nt_read_str(&ctx, buf, sizeof(buf), "/proc/sys/net/core/wmem_default"),
		  NT_EFILETYPE);
	CHECK_INT(nt_write_str(&ctx, "1", "/proc/sys/net/core/wmem_default"), NT_EFILETYPE);
	snprintf(p, sizeof(p), "%s/proc/sys/net/core/wmem_max", root);
	slurp(p, buf, sizeof(buf));
	CHECK_STR(buf, "212992\n");

	/* A directory that leads out of the root: nothing outside is read or
	 * written, and the file outside keeps its bytes. */
	char victim[PATH_MAX];
	snprintf(victim, sizeof(victim), "%s/smp_affinity_list", outside);
	FILE *f = fopen(victim, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("precious\n", f);
		fclose(f);
	}
	snprintf(p, sizeof(p), "%s/proc/irq/4", root);
	CHECK_INT(symlink(outside, p), 0);
	CHECK_INT(nt_read_str(&ctx, buf, sizeof(buf), "/proc/irq/4/smp_affinity_list"), NT_EOUTSIDE);
	CHECK_INT(nt_write_str(&ctx, "0-1", "/proc/irq/4/smp_affinity_list"), NT_EOUTSIDE);
	slurp(victim, buf, sizeof(buf));
	CHECK_STR(buf, "precious\n");
	/* A path that climbs out by itself, with no symlink on the way (the
	 * open that refuses symlinks would take it): refused as well. */
	char rel0[PATH_MAX];
	snprintf(rel0, sizeof(rel0), "/proc/../../%s/smp_affinity_list", outside + strlen("/tmp/"));
	CHECK_INT(nt_read_str(&ctx, buf, sizeof(buf), "%s", rel0), NT_EOUTSIDE);
	CHECK_INT(nt_write_str(&ctx, "0-1", "%s", rel0), NT_EOUTSIDE);
	slurp(victim, buf, sizeof(buf));
	CHECK_STR(buf, "precious\n");
	/* The IRQ directory a fixture write opens is checked the same way. */
	CHECK_INT(nt_open_dir(&ctx, "/proc/irq/4"), NT_EFILETYPE);
	/* A relative link that climbs out with "..", too. */
	snprintf(p, sizeof(p), "%s/sys/x/up", root);
	char rel[PATH_MAX];
	snprintf(rel, sizeof(rel), "../../../%s", outside + strlen("/tmp/"));
	CHECK_INT(symlink(rel, p), 0);
	CHECK_INT(nt_write_str(&ctx, "0-1", "/sys/x/up/smp_affinity_list"), NT_EOUTSIDE);
	slurp(victim, buf, sizeof(buf));
	CHECK_STR(buf, "precious\n");

	/* A directory as the target. */
	CHECK_INT(nt_read_str(&ctx, buf, sizeof(buf), "/proc/irq/3"), NT_EFILETYPE);

	/* A fixture write replaces the file whole: a reader holding the old
	 * one still sees the old value in full (a crash in between leaves
	 * one or the other, never an empty file), the mode is kept, and no
	 * temporary file is left behind. */
	put("/proc/irq/3/smp_affinity_list", "0-1\n");
	snprintf(p, sizeof(p), "%s/proc/irq/3/smp_affinity_list", root);
	chmod(p, 0640);
	int old = open(p, O_RDONLY);
	CHECK_INT(nt_write_str(&ctx, "1", "/proc/irq/3/smp_affinity_list"), 0);
	CHECK_INT(nt_read_str(&ctx, buf, sizeof(buf), "/proc/irq/3/smp_affinity_list"), 1);
	CHECK_STR(buf, "1");
	if (old >= 0) {
		ssize_t n = pread(old, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		CHECK_STR(buf, "0-1\n");
		close(old);
	}
	struct stat st;
	CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640);
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s/proc/irq/3 | grep -v '^smp_affinity_list$')\"",
		 root);
	CHECK_MSG(system(cmd) == 0, "a temporary file was left in %s/proc/irq/3", root);

	/* A symlink planted where the new file goes is not followed. */
	snprintf(p, sizeof(p), "%s/proc/irq/3/smp_affinity_list.nt-new", root);
	CHECK_INT(symlink(victim, p), 0);
	CHECK_INT(nt_write_str(&ctx, "0", "/proc/irq/3/smp_affinity_list"), NT_EFILETYPE);
	slurp(victim, buf, sizeof(buf));
	CHECK_STR(buf, "precious\n");
	unlink(p);

	/* A write to a file that does not exist never creates it. */
	CHECK_INT(nt_write_str(&ctx, "1", "/proc/irq/3/nope"), -ENOENT);

	/* Reads beneath a directory opened once (nt_dir_open, nt_read_at)
	 * keep every rule: a FIFO, a symlink as the last component, a
	 * directory leading out of the root (absolute or by ".."), a ".."
	 * in the name; the plain file is read. */
	int irqdir = nt_dir_open(&ctx, "/proc/irq");
	CHECK(irqdir >= 0);
	if (irqdir >= 0) {
		CHECK_INT(nt_read_at(&ctx, irqdir, "3/smp_affinity_list", buf, sizeof(buf)), 1);
		CHECK_STR(buf, "1"); /* the last write that went through */
		long v = -1;
		CHECK_INT(nt_read_long_at(&ctx, irqdir, "3/smp_affinity_list", &v), 0);
		CHECK_INT(v, 1);
		snprintf(p, sizeof(p), "%s/proc/irq/3/fifo", root);
		CHECK_INT(mkfifo(p, 0644), 0);
		CHECK_INT(nt_read_at(&ctx, irqdir, "3/fifo", buf, sizeof(buf)), NT_EFILETYPE);
		snprintf(p, sizeof(p), "%s/proc/irq/3/link", root);
		CHECK_INT(symlink("smp_affinity_list", p), 0);
		CHECK_INT(nt_read_at(&ctx, irqdir, "3/link", buf, sizeof(buf)), NT_EFILETYPE);
		int r = nt_read_at(&ctx, irqdir, "4/smp_affinity_list", buf, sizeof(buf));
		CHECK_MSG(r == NT_EOUTSIDE, "read through a link out of the root gave %d", r);
		CHECK_INT(nt_read_at(&ctx, irqdir, "../irq/3/smp_affinity_list", buf, sizeof(buf)), -EINVAL);
		CHECK_INT(nt_read_at(&ctx, irqdir, "/etc/hostname", buf, sizeof(buf)), -EINVAL);
		CHECK_INT(nt_read_at(&ctx, irqdir, "3", buf, sizeof(buf)), NT_EFILETYPE);
		close(irqdir);
	}
	int sysx = nt_dir_open(&ctx, "/sys/x");
	CHECK(sysx >= 0);
	if (sysx >= 0) {
		CHECK_INT(nt_read_at(&ctx, sysx, "up/smp_affinity_list", buf, sizeof(buf)), NT_EOUTSIDE);
		close(sysx);
	}
	/* The directory itself is checked: one out of the root is refused. */
	CHECK_INT(nt_dir_open(&ctx, "/proc/irq/4"), NT_EOUTSIDE);

	alarm(0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", root, outside);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s, %s\n", root, outside);
	TEST_MAIN_END();
}
