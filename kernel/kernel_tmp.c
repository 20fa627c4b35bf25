#include "kernel/kernel.h"
#include "settings/setting.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int nt_kernel_irq_set_affinity(const nt_ctx *ctx, long irq, const nt_cpuset *cpus)
{
	char canon[NT_VALUE_MAX * 4];
	int r = nt_cpulist_format(cpus, canon, sizeof(canon));
	if (r < 0)
		return r;
	r = nt_setting_write(ctx, canon, "/proc/irq/%ld/smp_affinity_list", irq);
	if (r == 0 && !ctx->live)
		r = fixture_mirror(ctx, irq, cpus);
	return r;
}

static const char *const policies[] = {
	"layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4", "vlan+srcmac", NULL,
};

int nt_kernel_bond_set(const nt_ctx *ctx, const char *bond, const char *option, const char *value)
{
	char shown[64];
	if (!ctx->live && strcmp(option, "xmit_hash_policy") == 0) {
		for (int i = 0; policies[i]; i++)
			if (strcmp(policies[i], value) == 0)
				snprintf(shown, sizeof(shown), "%s %d", value, i);
		value = shown;
	}
	return nt_setting_write(ctx, value, "/sys/class/net/%s/bonding/%s", bond, option);
}
