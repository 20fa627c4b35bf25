/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's setting interfaces: see kernel/kernel.h. The live side is
 * here; what a fixture root needs besides is in kernel/fixture.c. */
#include "kernel/kernel.h"
#include "kernel/fixture.h"
#include "kernel/fixture_int.h"
#include "kernel/heldfiles.h"
#include "kernel/nlmsg.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int nt_kernel_tidy(const nt_ctx *ctx)
{
	return ctx->live ? 0 : nt_fixture_clean_temps(ctx);
}

int nt_kernel_read_begin(nt_ctx *ctx)
{
	if (ctx->live)
		return ctx->rtnl ? 0 : nt_rtnl_read_new(&ctx->rtnl);
	return ctx->fx_memo ? 0 : nt_fx_memo_new(&ctx->fx_memo);
}

void nt_kernel_read_end(nt_ctx *ctx)
{
	nt_rtnl_read_free(ctx->rtnl);
	ctx->rtnl = NULL;
	nt_fx_memo_free(ctx->fx_memo);
	ctx->fx_memo = NULL;
}

int nt_kernel_vwrite_attr(const nt_ctx *ctx, const char *value, const char *fmt, va_list ap)
{
	char rel[PATH_MAX];
	int n = vsnprintf(rel, sizeof(rel), fmt, ap);

	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	if (!ctx->live)
		return nt_fixture_write_attr(ctx, value, rel);
	return nt_write_str(ctx, value, "%s", rel);
}

int nt_kernel_write_attr(const nt_ctx *ctx, const char *value, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = nt_kernel_vwrite_attr(ctx, value, fmt, ap);
	va_end(ap);
	return r;
}

/* Set IRQ's affinity; with BUF, read smp_affinity_list back into it too
 * (see nt_kernel_irq_set_affinity_held), through HELD (with BUF only) on
 * the live host. */
static int irq_set(const nt_ctx *ctx, nt_held_files *held, int slot, int irq, const char *cpulist, char *buf,
		   size_t size, int *read_r, char *err, size_t errsize)
{
	char rel[32];
	int r = 0;

	if (irq < 0 || !cpulist || !*cpulist) {
		r = NT_EINVALID;
	} else if (!ctx->live) {
		r = nt_fixture_irq_set_affinity(ctx, irq, cpulist, buf, size, read_r);
	} else {
		if (held)
			snprintf(rel, sizeof(rel), "%d/smp_affinity_list", irq);
		for (int attempt = 0; attempt < 3; attempt++) {
			r = held && buf ? nt_held_write_read(held, irq, slot, rel, cpulist, buf, size, read_r) :
			    buf		? nt_write_read_str(ctx, cpulist, buf, size, read_r,
							    "/proc/irq/%d/smp_affinity_list", irq) :
					  nt_write_str(ctx, cpulist, "/proc/irq/%d/smp_affinity_list", irq);
			if (r != -EBUSY && r != -EAGAIN)
				break;
			nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
		}
	}
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "IRQ %d: %s", irq, nt_strerror(r));
	return r;
}

int nt_kernel_irq_set_affinity(const nt_ctx *ctx, int irq, const char *cpulist, char *err,
			       size_t errsize)
{
	return irq_set(ctx, NULL, 0, irq, cpulist, NULL, 0, NULL, err, errsize);
}

int nt_kernel_irq_set_affinity_held(const nt_ctx *ctx, nt_held_files *held, int slot, int irq,
				    const char *cpulist, char *buf, size_t size, int *read_r, char *err,
				    size_t errsize)
{
	if (!buf || size == 0 || !read_r)
		return -EINVAL;
	buf[0] = '\0';
	*read_r = -EIO;
	/* Another pass under way (a read of the host): the usual path. */
	if (!ctx->live || !held || nt_held_begin(held) < 0)
		return irq_set(ctx, NULL, 0, irq, cpulist, buf, size, read_r, err, errsize);
	int r = irq_set(ctx, held, slot, irq, cpulist, buf, size, read_r, err, errsize);
	nt_held_end_partial(held);
	return r;
}

/* An option is one file name under bonding/. */
static bool option_valid(const char *option)
{
	return option && *option && !strchr(option, '/') && strcmp(option, ".") &&
	       strcmp(option, "..");
}

int nt_kernel_bond_set(const nt_ctx *ctx, const char *bond, const char *option,
		       const char *value)
{
	if (!nt_ifname_valid(bond) || !option_valid(option) || !value)
		return -EINVAL;
	if (!ctx->live)
		return nt_fixture_bond_set(ctx, bond, option, value);
	return nt_write_str(ctx, value, "/sys/class/net/%s/bonding/%s", bond, option);
}

bool nt_kernel_netns_other(const nt_ctx *ctx)
{
	char self[PATH_MAX], init[PATH_MAX];
	struct stat a, b;
	/* stat follows the magic links to the namespaces themselves: one
	 * inode per namespace on nsfs. */
	if (nt_path(ctx, self, sizeof(self), "/proc/self/ns/net") == 0 &&
	    nt_path(ctx, init, sizeof(init), "/proc/1/ns/net") == 0 && stat(self, &a) == 0 &&
	    stat(init, &b) == 0 && (a.st_dev != b.st_dev || a.st_ino != b.st_ino))
		return true;
	if (!ctx->live)
		return false;
	/* PID 1's link could not be read (reading it needs ptrace access to
	 * PID 1, which a container's root or hidepid=2 lacks), or it names
	 * our own namespace, which in a PID namespace of its own is the
	 * container's init, not the machine's. Either way the sysctls tell:
	 * the kernel registers net/core's host-wide table (netdev_max_backlog
	 * among it, on every kernel) for the initial namespace only, so
	 * /proc/sys/net/core without it is another namespace's. Without
	 * /proc/sys at all nothing can be told, and the initial namespace is
	 * assumed, as before this was asked. */
	return nt_exists(ctx, "/proc/sys/net/core/somaxconn") &&
	       !nt_exists(ctx, "/proc/sys/net/core/netdev_max_backlog");
}

int nt_kernel_netns(const nt_ctx *ctx, char *buf, size_t size)
{
	if (size)
		buf[0] = '\0';
	if (!ctx->live)
		return -EOPNOTSUPP;
	return nt_readlink(ctx, buf, size, "/proc/self/ns/net");
}
