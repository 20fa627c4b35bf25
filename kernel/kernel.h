/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's setting interfaces, live or on a fixture root.
 *
 * Kinds of setting change the host through these calls and never ask
 * whether the root is live: on the live host they write the kernel's files;
 * on a fixture root kernel/fixture.c also does what the kernel would do in
 * reply (show a trailing newline, rewrite the masks that mirror an IRQ's
 * cpulist, print a bond option's number), so a fixture after an apply reads
 * like a host after one. NIC settings over ethtool are in kernel/ethtool.h,
 * which makes the same choice when its handle is opened. */
#ifndef NT_KERNEL_H
#define NT_KERNEL_H

#include "kernel/ctx.h"

#include <stdarg.h>
#include <stddef.h>

/* At the agent's start, before recovery reads anything: on a fixture root
 * the temporary files of writes a kill interrupted are removed (the live
 * kernel has none). Returns how many, or -errno. */
int nt_kernel_tidy(const nt_ctx *ctx);

/* One read of the host, answered from one state: between these two, on a
 * fixture root, each NIC's ethtool document is parsed once and every
 * question about the NIC answered from it, as the live kernel answers from
 * the device's one state (kernel/fixture_memo.c). On a live root the
 * read's questions about links (the link dump, each NIC's MTU range, queue
 * length and root qdisc) go over one rtnetlink socket, opened at the first
 * and closed by end (kernel/nlmsg.h, nt_nl_route_get), where each would
 * open its own. Only for reads, from one thread: nothing may be written
 * through CTX in between. begin returns 0 or -ENOMEM (then the read
 * parses, or opens a socket, per question, as without). */
int nt_kernel_read_begin(nt_ctx *ctx);
void nt_kernel_read_end(nt_ctx *ctx);

/* The ethtool documents of a fixture root kept parsed between reads
 * (kernel/fixture_docs.c) for an owner that reads the tree again and
 * again: set in a context's fx_docs, the reads between nt_kernel_read_begin
 * and _end take each document from here while its file has not changed
 * (one fstat) and parse it only when it has. A document whose file changed
 * less than SETTLE_MS ago is parsed again at every read, so a change within
 * one tick of the file system's clock is not missed; 2000 covers every
 * file system's clock. new returns 0 or -ENOMEM; parses counts the
 * documents parsed (tests, benchmarks). Safe from several threads. */
typedef struct nt_fx_docs nt_fx_docs;
#define NT_FX_DOCS_SETTLE_MS 2000
int nt_fx_docs_new(long settle_ms, nt_fx_docs **out);
void nt_fx_docs_free(nt_fx_docs *d);
unsigned long nt_fx_docs_parses(nt_fx_docs *d);

/* Write VALUE to the kernel attribute file under the root that FMT names
 * (a sysfs or procfs path starting with '/'). On a fixture root a newline
 * follows VALUE, as the kernel shows one when the file is read, so a
 * restored fixture file is byte for byte what it was. Returns 0 or the
 * kernel's -errno (-E2BIG on a fixture root for a value longer than a page,
 * which no attribute takes). */
int nt_kernel_write_attr(const nt_ctx *ctx, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int nt_kernel_vwrite_attr(const nt_ctx *ctx, const char *value, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Point IRQ at the CPUs of CPULIST ("0-3,8") through
 * /proc/irq/IRQ/smp_affinity_list. EBUSY and EAGAIN come from an IRQ in the
 * middle of a move and are retried a few times (irqbalance's activate.c
 * treats them as transient too). On a fixture root smp_affinity and
 * effective_affinity(_list) are rewritten as well, effective being the
 * first CPU of the list, the CPU that serves it on some hardware
 * (docs/field-reports.md#first-cpu-serves); on
 * the live host effective affinity changes only when the IRQ next fires.
 * Returns 0 or -errno (-EIO: a kernel-managed IRQ, -EINVAL: CPUs the kernel
 * refuses, NT_EINVALID: not a cpulist), with "IRQ N: reason" in ERR. */
int nt_kernel_irq_set_affinity(const nt_ctx *ctx, int irq, const char *cpulist, char *err,
			       size_t errsize);

/* nt_kernel_irq_set_affinity, and then smp_affinity_list as it reads
 * after the write into BUF (SIZE bytes), read through the descriptor the
 * write used. HELD, when not NULL, is a set of files held open over
 * /proc/irq (kernel/heldfiles.h) in which the IRQ's smp_affinity_list is
 * key (IRQ, SLOT): on the live host the write and its check are then one
 * write and one pread on the descriptor the agent already reads the IRQ
 * through, with no open or close, in a pass of HELD's taken here.
 * Otherwise (HELD NULL or in another pass, or a fixture root) the file is
 * opened once for the write and its check (nt_write_read_str). Returns the
 * write's 0 or -errno (with ERR); when that is 0, *READ_R is the read's
 * length or -errno. */
struct nt_held_files;
int nt_kernel_irq_set_affinity_held(const nt_ctx *ctx, struct nt_held_files *held, int slot, int irq,
				    const char *cpulist, char *buf, size_t size, int *read_r, char *err,
				    size_t errsize);

/* Set OPTION ("xmit_hash_policy", "miimon") of bond BOND to VALUE through
 * /sys/class/net/BOND/bonding/OPTION. On a fixture root the file then reads
 * as the bonding driver shows it: an enumerated option as its name and
 * number ("layer3+4 1"), refusing a name the driver does not know with
 * -EINVAL as the driver does. Returns 0 or -errno (-EINVAL for a bad bond
 * or option name). */
int nt_kernel_bond_set(const nt_ctx *ctx, const char *bond, const char *option,
		       const char *value);

/* The network namespace this process runs in ("net:[4026531840]") into
 * BUF. A fixture root is a captured host, not a namespace anything runs
 * in: -EOPNOTSUPP. Returns the length or -errno. */
int nt_kernel_netns(const nt_ctx *ctx, char *buf, size_t size);

/* Whether this process runs in a network namespace other than the
 * initial one: ROOT/proc/self/ns/net and ROOT/proc/1/ns/net are not the
 * same inode, or (a live root) the kernel hides the initial namespace's
 * own sysctls. A fixture tree says so with two files there (distinct
 * files: another namespace; one file and a hard link: the same); a tree
 * without them is the initial namespace. */
bool nt_kernel_netns_other(const nt_ctx *ctx);

#endif
