/* IRQ affinity: target = IRQ number, value = cpulist.
 *
 * The write goes to /proc/irq/N/smp_affinity_list through kernel/kernel.h,
 * which on a fixture tree also rewrites what the kernel derives from it
 * (smp_affinity, effective_affinity(_list)). On the live host effective
 * affinity changes only when the IRQ next fires, so verification compares
 * smp_affinity_list alone. */
#include "settings/setting.h"
#include "kernel/kernel.h"
#include "host/cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int parse_irq(const char *target, long *irq)
{
	char *end;
	if (!target || !isdigit((unsigned char)target[0]))
		return NT_EINVALID;
	errno = 0;
	long v = strtol(target, &end, 10);
	if (errno || *end || v < 0 || v > 1000000)
		return NT_EINVALID;
	*irq = v;
	return 0;
}

static int irq_read(const nt_ctx *ctx, const char *target, char *value, size_t size)
{
	long irq;
	char buf[NT_VALUE_MAX * 4];
	nt_cpuset s;
	int r = parse_irq(target, &irq);
	if (r < 0)
		return r;
	r = nt_read_str(ctx, buf, sizeof(buf), "/proc/irq/%ld/smp_affinity_list", irq);
	if (r == -ENOENT) {
		/* Old kernels have only the mask. */
		r = nt_read_str(ctx, buf, sizeof(buf), "/proc/irq/%ld/smp_affinity", irq);
		if (r < 0)
			return r;
		r = nt_cpumask_parse(buf, &s);
	} else if (r >= 0) {
		r = nt_cpulist_parse(buf, &s);
	}
	if (r < 0)
		return r;
	r = nt_cpulist_format(&s, value, size);
	return r < 0 ? r : 0;
}

static bool irq_equal(const char *a, const char *b)
{
	nt_cpuset x, y;
	if (nt_cpulist_parse(a, &x) < 0 || nt_cpulist_parse(b, &y) < 0)
		return strcmp(a, b) == 0;
	return nt_cpuset_equal(&x, &y);
}

static int irq_validate(const nt_ctx *ctx, const nt_topology *t, const char *target,
			const char *value, char *why, size_t whysize)
{
	long irq;
	nt_cpuset s;
	if (parse_irq(target, &irq) < 0) {
		snprintf(why, whysize, "'%s' is not an IRQ number", target);
		return NT_EINVALID;
	}
	if (nt_cpulist_parse(value, &s) < 0 || nt_cpuset_empty(&s)) {
		snprintf(why, whysize, "'%s' is not a non-empty cpulist", value);
		return NT_EINVALID;
	}
	if (t && !nt_cpuset_subset(&s, &t->cpus_online)) {
		snprintf(why, whysize, "cpulist '%s' names CPUs that are not online", value);
		return NT_EINVALID;
	}
	if (!nt_exists(ctx, "/proc/irq/%ld", irq)) {
		snprintf(why, whysize, "IRQ %ld does not exist", irq);
		return NT_EINVALID;
	}
	return 0;
}

static int irq_apply(const nt_ctx *ctx, const char *target, const char *value, char *err,
		     size_t errsize)
{
	long irq;
	nt_cpuset s;
	char canon[NT_VALUE_MAX];
	int r = parse_irq(target, &irq);

	if (r < 0)
		goto out;
	if ((r = nt_cpulist_parse(value, &s)) < 0 || nt_cpuset_empty(&s)) {
		r = r < 0 ? r : NT_EINVALID;
		goto out;
	}
	if ((r = nt_cpulist_format(&s, canon, sizeof(canon))) < 0)
		goto out;
	/* Retries a transient EBUSY/EAGAIN; on a fixture root it also writes
	 * what the kernel derives from the list. */
	r = nt_kernel_irq_set_affinity(ctx, (int)irq, canon, NULL, 0);
out:
	if (r < 0 && err && errsize)
		snprintf(err, errsize, "IRQ %s: %s", target, nt_strerror(r));
	return r;
}

/* "effective N": the CPUs the interrupt is delivered to now. */
static int irq_observe(const nt_ctx *ctx, const char *target, char *out, size_t size)
{
	char buf[NT_VALUE_MAX];
	char *end;
	long irq = strtol(target, &end, 10);
	if (*end || irq < 0)
		return NT_EINVALID;
	int r = nt_read_str(ctx, buf, sizeof(buf), "/proc/irq/%ld/effective_affinity_list", irq);
	if (r < 0)
		return r;
	r = snprintf(out, size, "effective %s", buf);
	return r < 0 || (size_t)r >= size ? -ENOSPC : 0;
}

const nt_setting_kind nt_setting_irq_affinity = {
	.name = "irq_affinity",
	.read = irq_read,
	.validate = irq_validate,
	.apply = irq_apply,
	.observe = irq_observe,
	.equal = irq_equal,
	/* The kernel refuses affinity changes to managed IRQs with EIO. */
	.skip_errno = EIO,
	.skip_reason = "skipped: not movable",
};
