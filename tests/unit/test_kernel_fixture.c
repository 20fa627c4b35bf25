/* SPDX-License-Identifier: Apache-2.0 */
/* kernel/kernel.h on a fixture root: the one place that plays the kernel.
 * A written attribute ends with the newline the kernel shows; an IRQ's
 * masks and effective affinity follow its cpulist; a bond option reads as
 * "name number"; what only the live host has (rtnetlink, a namespace,
 * irqbalance's socket) says -EOPNOTSUPP. */
#include "kernel/irqbalance_client.h"
#include "kernel/kernel.h"
#include "kernel/link.h"
#include "harness.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	/* mkdir -p of the parent */
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

/* The file's bytes, newline included (nt_read_str would strip it). */
static const char *raw(const char *rel)
{
	static char buf[4][512];
	static int k;
	char path[PATH_MAX];
	char *b = buf[k++ % 4];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	FILE *f = fopen(path, "r");
	b[0] = '\0';
	if (f) {
		size_t n = fread(b, 1, 511, f);
		b[n] = '\0';
		fclose(f);
	}
	return b;
}

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

int main(void)
{
	nt_ctx ctx;
	char err[256], buf[128];

	snprintf(root, sizeof(root), "/tmp/nt-kfix-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	put("/proc/sys/net/core/rmem_max", "212992\n");
	put("/proc/irq/42/smp_affinity_list", "0-63\n");
	put("/proc/irq/42/smp_affinity", "ffffffff,ffffffff\n");
	put("/proc/irq/42/effective_affinity_list", "0\n");
	put("/proc/irq/42/effective_affinity", "00000000,00000001\n");
	put("/proc/irq/43/smp_affinity_list", "0-3\n"); /* no masks: only the list */
	put("/sys/class/net/bond0/bonding/xmit_hash_policy", "layer2 0\n");
	put("/sys/class/net/bond0/bonding/miimon", "100\n");
	CHECK_INT(nt_ctx_init(&ctx, root), 0);

	/* An attribute: the value and the kernel's newline. */
	CHECK_INT(nt_kernel_write_attr(&ctx, "4194304", "/proc/sys/net/core/%s", "rmem_max"), 0);
	CHECK_STR(raw("/proc/sys/net/core/rmem_max"), "4194304\n");
	/* No O_CREAT: a file the kernel does not have stays absent. */
	CHECK_INT(nt_kernel_write_attr(&ctx, "1", "/proc/sys/net/core/nope"), -ENOENT);

	/* IRQ affinity and what the kernel derives from it. */
	CHECK_INT(nt_kernel_irq_set_affinity(&ctx, 42, "4-7,40", err, sizeof(err)), 0);
	CHECK_STR(raw("/proc/irq/42/smp_affinity_list"), "4-7,40\n");
	CHECK_STR(raw("/proc/irq/42/smp_affinity"), "00000100,000000f0\n");
	CHECK_STR(raw("/proc/irq/42/effective_affinity_list"), "4\n");
	CHECK_STR(raw("/proc/irq/42/effective_affinity"), "00000000,00000010\n");
	CHECK_INT(nt_kernel_irq_set_affinity(&ctx, 43, "2", err, sizeof(err)), 0);
	CHECK_STR(raw("/proc/irq/43/smp_affinity_list"), "2\n");
	char p43[PATH_MAX];
	snprintf(p43, sizeof(p43), "%s/proc/irq/43/smp_affinity", root);
	CHECK_INT(access(p43, F_OK), -1); /* not created where the fixture has none */
	CHECK_INT(nt_kernel_irq_set_affinity(&ctx, 44, "1", err, sizeof(err)), -ENOENT);
	CHECK_STR(err, "IRQ 44: No such file or directory");
	CHECK_INT(nt_kernel_irq_set_affinity(&ctx, 42, "", err, sizeof(err)), NT_EINVALID);
	CHECK_INT(nt_kernel_irq_set_affinity(&ctx, 42, "7-3", err, sizeof(err)), NT_EINVALID);
	CHECK_STR(raw("/proc/irq/42/smp_affinity_list"), "4-7,40\n");

	/* Every value is written over the file in place (the same inode: a
	 * reader holding it open sees the new value whole), a shorter one
	 * padded with newlines and then cut. The mode stays and no temporary
	 * file is left. */
	char p42[PATH_MAX];
	struct stat before, after;
	snprintf(p42, sizeof(p42), "%s/proc/irq/42/smp_affinity_list", root);
	chmod(p42, 0640);
	CHECK_INT(stat(p42, &before), 0);
	CHECK_INT(nt_kernel_irq_set_affinity(&ctx, 42, "8-9,41", err, sizeof(err)), 0);
	CHECK_INT(stat(p42, &after), 0);
	CHECK(before.st_ino == after.st_ino);
	CHECK_STR(raw("/proc/irq/42/smp_affinity_list"), "8-9,41\n");
	CHECK_STR(raw("/proc/irq/42/smp_affinity"), "00000200,00000300\n");
	CHECK_STR(raw("/proc/irq/42/effective_affinity_list"), "8\n");
	CHECK_STR(raw("/proc/irq/42/effective_affinity"), "00000000,00000100\n");
	CHECK_INT(nt_kernel_irq_set_affinity(&ctx, 42, "33", err, sizeof(err)), 0);
	CHECK_INT(stat(p42, &after), 0);
	CHECK(before.st_ino == after.st_ino && (after.st_mode & 07777) == 0640 && after.st_size == 3);
	CHECK_STR(raw("/proc/irq/42/smp_affinity_list"), "33\n");
	CHECK_STR(raw("/proc/irq/42/smp_affinity"), "00000002,00000000\n");
	CHECK_STR(raw("/proc/irq/42/effective_affinity_list"), "33\n");
	CHECK_STR(raw("/proc/irq/42/effective_affinity"), "00000002,00000000\n");
	CHECK_INT(stat(p42, &before), 0);
	CHECK_INT(nt_kernel_irq_set_affinity(&ctx, 42, "1-3,40", err, sizeof(err)), 0);
	CHECK_INT(stat(p42, &after), 0);
	CHECK(before.st_ino == after.st_ino && after.st_size == 7);
	CHECK_STR(raw("/proc/irq/42/smp_affinity_list"), "1-3,40\n");
	CHECK_STR(raw("/proc/irq/42/effective_affinity_list"), "1\n");
	/* What a kill between the padded write and the cut leaves reads as
	 * the new value. */
	put("/proc/irq/43/smp_affinity_list", "5\n\n\n\n\n");
	CHECK_INT(nt_read_str(&ctx, buf, sizeof(buf), "/proc/irq/43/smp_affinity_list"), 1);
	CHECK_STR(buf, "5");
	snprintf(buf, sizeof(buf), "ls -A %s/proc/irq/42 | grep -q nt-new", root);
	CHECK_MSG(system(buf) != 0, "a temporary file was left in /proc/irq/42");
	/* A symlink planted as a derived file is refused, not followed. */
	char eff[PATH_MAX];
	snprintf(eff, sizeof(eff), "%s/proc/irq/42/effective_affinity", root);
	unlink(eff);
	CHECK_INT(symlink("/etc/hostname", eff), 0);
	CHECK_INT(nt_kernel_irq_set_affinity(&ctx, 42, "4-7,40", err, sizeof(err)), NT_EFILETYPE);
	unlink(eff);
	put("/proc/irq/42/effective_affinity", "00000002,00000000\n");
	/* Nor is a symlink in the IRQ's place. */
	char p45[PATH_MAX];
	snprintf(p45, sizeof(p45), "%s/proc/irq/45", root);
	CHECK_INT(symlink("42", p45), 0);
	CHECK(nt_kernel_irq_set_affinity(&ctx, 45, "1", err, sizeof(err)) < 0);
	CHECK_STR(raw("/proc/irq/42/smp_affinity_list"), "4-7,40\n");

	/* The write and its read-back in one call: the new file is read,
	 * shorter (replaced) or not (written in place). */
	int back = 0;
	char got[64];
	CHECK_INT(nt_kernel_irq_set_affinity_held(&ctx, NULL, 0, 42, "5", got, sizeof(got), &back, err,
						  sizeof(err)), 0);
	CHECK_INT(back, 1);
	CHECK_STR(got, "5");
	CHECK_INT(nt_kernel_irq_set_affinity_held(&ctx, NULL, 0, 42, "4-7,40", got, sizeof(got), &back, err,
						  sizeof(err)), 0);
	CHECK_INT(back, 6);
	CHECK_STR(got, "4-7,40");
	CHECK_STR(raw("/proc/irq/42/effective_affinity_list"), "4\n");
	/* A file longer than a page is replaced, not written in place: the
	 * read-back is of the new file. */
	char big[5000];
	memset(big, '\n', sizeof(big) - 1);
	big[0] = '9';
	big[sizeof(big) - 1] = '\0';
	put("/proc/irq/42/smp_affinity_list", big);
	CHECK_INT(stat(p42, &before), 0);
	CHECK_INT(nt_kernel_irq_set_affinity_held(&ctx, NULL, 0, 42, "2-3", got, sizeof(got), &back, err,
						  sizeof(err)), 0);
	CHECK_INT(stat(p42, &after), 0);
	CHECK(before.st_ino != after.st_ino && after.st_size == 4);
	CHECK_INT(back, 3);
	CHECK_STR(got, "2-3");
	/* A failed write reads nothing back and says why. */
	back = 0;
	CHECK_INT(nt_kernel_irq_set_affinity_held(&ctx, NULL, 0, 44, "1", got, sizeof(got), &back, err,
						  sizeof(err)),
		  -ENOENT);
	CHECK_STR(err, "IRQ 44: No such file or directory");
	CHECK_STR(got, "");
	CHECK(back < 0);
	/* The same for any attribute: nt_write_read_str. */
	CHECK_INT(nt_write_read_str(&ctx, "8388608", got, sizeof(got), &back, "/proc/sys/net/core/rmem_max"), 0);
	CHECK_INT(back, 7);
	CHECK_STR(got, "8388608");
	CHECK_INT(nt_write_read_str(&ctx, "1", got, sizeof(got), &back, "/proc/sys/net/core/nope"), -ENOENT);
	CHECK_STR(got, "");

	/* Bond options as the driver shows them. */
	CHECK_INT(nt_kernel_bond_set(&ctx, "bond0", "xmit_hash_policy", "layer3+4"), 0);
	CHECK_STR(raw("/sys/class/net/bond0/bonding/xmit_hash_policy"), "layer3+4 1\n");
	CHECK_INT(nt_kernel_bond_set(&ctx, "bond0", "xmit_hash_policy", "2"), 0);
	CHECK_STR(raw("/sys/class/net/bond0/bonding/xmit_hash_policy"), "layer2+3 2\n");
	CHECK_INT(nt_kernel_bond_set(&ctx, "bond0", "xmit_hash_policy", "layer9"), -EINVAL);
	CHECK_STR(raw("/sys/class/net/bond0/bonding/xmit_hash_policy"), "layer2+3 2\n");
	CHECK_INT(nt_kernel_bond_set(&ctx, "bond0", "miimon", "200"), 0);
	CHECK_STR(raw("/sys/class/net/bond0/bonding/miimon"), "200\n");
	CHECK_INT(nt_kernel_bond_set(&ctx, "bond0", "../../x", "1"), -EINVAL);
	CHECK_INT(nt_kernel_bond_set(&ctx, "../bond0", "miimon", "1"), -EINVAL);

	/* Only the live host has these. */
	CHECK_INT(nt_kernel_netns(&ctx, buf, sizeof(buf)), -EOPNOTSUPP);
	CHECK_STR(buf, "");
	nt_link_info *links = NULL;
	int n = -1;
	CHECK_INT(nt_link_dump(&ctx, &links, &n), -EOPNOTSUPP);
	CHECK(links == NULL);
	CHECK_INT(n, 0);
	CHECK_INT(nt_irqbalance_controllable(&ctx, err, sizeof(err)), -EOPNOTSUPP);
	CHECK(strstr(err, "live host") != NULL);
	CHECK_INT(nt_irqbalance_controllable(&ctx, NULL, 0), -EOPNOTSUPP);

	/* And the live context says yes without touching anything. */
	nt_ctx live;
	CHECK_INT(nt_ctx_init(&live, "/"), 0);
	CHECK_INT(nt_irqbalance_controllable(&live, err, sizeof(err)), 0);
	CHECK(nt_kernel_netns(&live, buf, sizeof(buf)) > 0);
	CHECK(strncmp(buf, "net:[", 5) == 0);

	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	TEST_MAIN_END();
}
