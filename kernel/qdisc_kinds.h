/* SPDX-License-Identifier: Apache-2.0 */
/* Whether the running kernel has a qdisc kind, known without loading a
 * module and without a request to the kernel.
 *
 * The kernel lists no qdisc kinds anywhere: register_qdisc() keeps them in
 * a private list, and the only way to ask is to create one. A create of a
 * kind the kernel lacks first calls request_module("sch_KIND") (a module
 * loaded is a change to the host), and one the kernel has makes a qdisc
 * unless it fails later: no netlink request is a question that changes
 * nothing. So the answer comes from what the kernel and its packaging
 * expose read-only, each under the root (a fixture root is a whole host):
 *   1. /sys/module/sch_KIND: the module is loaded (or built in with
 *      parameters): the kernel has the kind;
 *   2. the kernel's configuration, /boot/config-RELEASE or, built with
 *      CONFIG_IKCONFIG_PROC, /proc/config.gz (read through libz, opened
 *      when first needed): CONFIG_NET_SCH_KIND=y is built in; =m a module,
 *      there when the kernel takes modules and modules.dep under
 *      /lib/modules/RELEASE lists it (or cannot be read); not set, lacking;
 *   3. without a configuration, /lib/modules/RELEASE/modules.builtin and
 *      modules.dep: listed in either, there; both read and in neither,
 *      lacking.
 * RELEASE is /proc/sys/kernel/osrelease. pfifo_fast, noqueue, noop and mq
 * are part of every kernel (net/sched/Makefile's obj-y: no symbol, module
 * or modules.builtin line of their own tells). */
#ifndef NT_QDISC_KINDS_H
#define NT_QDISC_KINDS_H

#include "kernel/ctx.h"

#include <stddef.h>

/* Whether the kernel behind CTX has qdisc KIND: 1 it has, 0 it lacks, or
 * -ENOENT when nothing tells (no configuration, no module lists). HOW
 * gets the source as a clause ("CONFIG_NET_SCH_FQ is not set in
 * /proc/config.gz"). */
int nt_qdisc_kind_available(const nt_ctx *ctx, const char *kind, char *how, size_t howsize);

#endif
