/* The table of setting kinds: a new kind is one new file here and one line
 * in this table. */
#include "settings/setting.h"
#include "kernel/kernel.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const nt_setting_kind *const nt_setting_kinds[] = {
	&nt_setting_irq_affinity,
	&nt_setting_rings,
	&nt_setting_channels,
	&nt_setting_bond,
	&nt_setting_sysctl,
	&nt_setting_irqbalance_ban,
	&nt_setting_irqbalance_service,
	NULL,
};

/* Kinds that report per-NIC state in the host model (host/topology.h):
 * one line each, as above. */
const nt_nic_report_fn nt_nic_reporters[] = {
	NULL,
};

const nt_setting_kind *nt_setting_find(const char *name)
{
	for (int i = 0; name && nt_setting_kinds[i]; i++)
		if (strcmp(nt_setting_kinds[i]->name, name) == 0)
			return nt_setting_kinds[i];
	return NULL;
}

bool nt_setting_equal(const nt_setting_kind *k, const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	if (k->equal)
		return k->equal(a, b);
	return strcmp(a, b) == 0;
}

int nt_setting_verify(const nt_ctx *ctx, const nt_setting_kind *k, const char *target,
		      const char *want, char *got, size_t gotsize)
{
	int r = k->read(ctx, target, got, gotsize);
	if (r < 0)
		return r;
	return nt_setting_equal(k, got, want) ? 0 : NT_ECONFLICT;
}

int nt_setting_write(const nt_ctx *ctx, const char *value, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = nt_kernel_vwrite_attr(ctx, value, fmt, ap);
	va_end(ap);
	return r;
}
