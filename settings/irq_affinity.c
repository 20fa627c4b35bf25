/* IRQ affinity: target = IRQ number, value = cpulist.
 *
 * The write goes to /proc/irq/N/smp_affinity_list. In a fixture tree
 * nothing else would react, so there we also rewrite smp_affinity and
 * effective_affinity(_list) the way the kernel would (effective = the first
 * CPU of the mask, which seed 000 observed as the CPU that handles the
 * interrupt), so that a fixture after an apply reads like a host after one.
 * On the live host effective affinity changes only when the IRQ next fires,
 * so verification compares smp_affinity_list alone. */
#include "settings/setting.h"
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

/* Bits in an existing mask file: 4 per hex digit, commas aside. */
static int mask_width(const nt_ctx *ctx, long irq, const char *file)
{
	char buf[NT_VALUE_MAX * 4];
	int bits = 0;
	if (nt_read_str(ctx, buf, sizeof(buf), "/proc/irq/%ld/%s", irq, file) < 0)
		return -1;
	for (char *p = buf; *p; p++)
		if (isxdigit((unsigned char)*p))
			bits += 4;
	return bits;
}

/* What the kernel would show after the write, for a fixture tree. */
static int fixture_mirror(const nt_ctx *ctx, long irq, const nt_cpuset *s)
{
	char buf[NT_VALUE_MAX * 4];
	nt_cpuset first;
	int r, bits;

	bits = mask_width(ctx, irq, "smp_affinity");
	if (bits > 0) {
		if ((r = nt_cpumask_format(s, bits, buf, sizeof(buf))) < 0)
			return r;
		if ((r = nt_setting_write(ctx, buf, "/proc/irq/%ld/smp_affinity", irq)) < 0)
			return r;
	}
	nt_cpuset_zero(&first);
	nt_cpuset_set(&first, nt_cpuset_next(s, 0));
	if (nt_exists(ctx, "/proc/irq/%ld/effective_affinity_list", irq)) {
		if ((r = nt_cpulist_format(&first, buf, sizeof(buf))) < 0)
			return r;
		if ((r = nt_setting_write(ctx, buf, "/proc/irq/%ld/effective_affinity_list", irq)) < 0)
			return r;
	}
	bits = mask_width(ctx, irq, "effective_affinity");
	if (bits > 0) {
		if ((r = nt_cpumask_format(&first, bits, buf, sizeof(buf))) < 0)
			return r;
		if ((r = nt_setting_write(ctx, buf, "/proc/irq/%ld/effective_affinity", irq)) < 0)
			return r;
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
	/* EBUSY/EAGAIN come from an IRQ in the middle of a move; irqbalance's
	 * activate.c treats them as transient too. */
	for (int attempt = 0; attempt < 3; attempt++) {
		r = nt_setting_write(ctx, canon, "/proc/irq/%ld/smp_affinity_list", irq);
		if (r != -EBUSY && r != -EAGAIN)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	if (r == 0 && !ctx->live)
		r = fixture_mirror(ctx, irq, &s);
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
