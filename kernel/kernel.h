/* The kernel's setting interfaces, live or on a fixture root. (Interim;
 * replaced by the kernel backend.) */
#ifndef NT_KERNEL_H
#define NT_KERNEL_H

#include "kernel/ctx.h"
#include "host/cpuset.h"

int nt_kernel_irq_set_affinity(const nt_ctx *ctx, long irq, const nt_cpuset *cpus);
int nt_kernel_bond_set(const nt_ctx *ctx, const char *bond, const char *option, const char *value);

#endif
