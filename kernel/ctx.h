/* SPDX-License-Identifier: Apache-2.0 */
/* The context every core function takes: which host root to read, and the
 * one place where /sys and /proc paths are made.
 *
 * Every path to a kernel file is built by nt_path() from a root directory
 * ("/" on the live host, a fixture tree in tests). Nothing else in the core
 * may spell "/sys" or "/proc" into an open() without going through it, so a
 * captured tree is a whole host. */
#ifndef NT_CTX_H
#define NT_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#include "base/errors.h"

struct nt_host_cache;
struct nt_fx_memo;
struct nt_fx_docs;
struct nt_rtnl_read;

typedef struct nt_ctx {
	char root[PATH_MAX]; /* without trailing slash; "" for "/" */
	bool live; /* root is "/": kernel interfaces (ioctl, netlink) are used */
	/* The agent's host model cache for this root (host/hostcache.h), or
	 * NULL: reads of the host model through a context that carries one
	 * (the agent's routes, engine and drift watcher) reuse the static part
	 * of the host. Not owned; the agent keeps it alive longer than every
	 * copy of the context. */
	struct nt_host_cache *host_cache;
	/* On a fixture root, between nt_kernel_read_begin and _end (one read
	 * of the host): each ethtool document parsed once for the read
	 * (kernel/fixture_memo.c). NULL otherwise, and always on a live root. */
	struct nt_fx_memo *fx_memo;
	/* On a live root, between nt_kernel_read_begin and _end: the read's
	 * one rtnetlink socket (kernel/nlmsg.h, nt_nl_route_get), opened at
	 * the read's first question about a link, so that the links and root
	 * qdiscs of every NIC are asked on one socket, not one per NIC. NULL
	 * otherwise, and always on a fixture root. */
	struct nt_rtnl_read *rtnl;
	/* On a fixture root, the ethtool documents its owner keeps parsed
	 * from one read to the next (kernel/fixture_docs.c), or NULL: the
	 * read memo above then parses each once per read. Not owned, as
	 * host_cache is not. */
	struct nt_fx_docs *fx_docs;
	/* This process runs in a network namespace other than the initial
	 * one (nt_kernel_netns_other, learnt once by the agent at its start;
	 * false until someone asks). There the kinds of machine-wide scope
	 * (settings/setting.h, nt_reach) would change every namespace, and a
	 * plan refuses them unless MACHINE_WIDE_ALLOWED (the operator's
	 * allow_machine_wide). */
	bool netns_other;
	bool machine_wide_allowed;
} nt_ctx;

/* Set up a context for ROOT ("/" or a fixture tree). Returns 0 or -errno. */
int nt_ctx_init(nt_ctx *ctx, const char *root);

/* Write ROOT + REL (REL starts with '/') into BUF. Returns 0, or
 * -ENAMETOOLONG when it does not fit. */
int nt_path(const nt_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Every read and write below opens its file without following a symlink in
 * the last component and without blocking, and uses only regular files
 * (NT_EFILETYPE otherwise: a FIFO planted as a target would hang the agent);
 * on a fixture root the file must also lie under the root (NT_EOUTSIDE), and
 * a write replaces the file in one step (never an empty file after a crash).
 *
 * Read a whole small file (sysfs attribute, /proc line) under the root into
 * BUF, NUL-terminated, trailing newline removed. Returns the length or
 * -errno. -EFBIG when the file does not fit. */
int nt_read_str(const nt_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Read a file of any size. *OUT is malloc'd and NUL-terminated; the caller
 * frees it. Returns the length or -errno. */
int nt_read_all(const nt_ctx *ctx, char **out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Open a file under the root for reading, checked as the reads above are,
 * for a caller that reads a big file a block at a time (/proc/interrupts
 * of a big host). Returns the descriptor (close it) or -errno. */
int nt_open_read(const nt_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Read a decimal integer file. Returns 0 or -errno / NT_EPARSE. */
int nt_read_long(const nt_ctx *ctx, long *out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Write VALUE to a file under the root (no O_CREAT: kernel files exist or
 * the write is wrong). Returns 0 or -errno as the kernel gave it. */
int nt_write_str(const nt_ctx *ctx, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Open the directory ROOT + REL (REL starts with '/') for the *at() calls
 * of code that works on several files of one directory (a fixture's IRQ
 * files): the last component is not followed, and on a fixture root the
 * directory must lie under the root, checked once here, so files opened
 * from it by name with O_NOFOLLOW are under the root too. Returns the
 * descriptor (O_PATH, close it) or -errno / NT_EOUTSIDE. For reads
 * beneath a directory see nt_dir_open below (its last component may be a
 * link, as sysfs class directories are). */
int nt_open_dir(const nt_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* readlink() under the root; the target as the link says it. Returns the
 * length or -errno. */
int nt_readlink(const nt_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Resolve a path under the root to its canonical form *relative to the
 * root* (for example "/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0").
 * Loops and dangling links give -ELOOP / -ENOENT, never a hang. */
int nt_resolve(const nt_ctx *ctx, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Reading many files of one directory (every IRQ under /proc/irq, the
 * attributes of a NIC): nt_dir_open opens the directory under the root
 * once (checked as a read is) and returns its descriptor (close it) or
 * -errno; nt_read_at and nt_read_long_at then read REL, a relative path
 * without "..", beneath it with the rules above, in one open, one fstat and
 * one read, never leaving the directory (NT_EOUTSIDE). */
int nt_dir_open(const nt_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int nt_read_at(const nt_ctx *ctx, int dirfd, const char *rel, char *buf, size_t size);
int nt_read_long_at(const nt_ctx *ctx, int dirfd, const char *rel, long *out);

/* The pieces of nt_read_at for a caller that keeps the file open and
 * reads it again (kernel/heldfiles.h): nt_open_at opens REL beneath DIRFD
 * with the same checks and returns the descriptor or -errno (nt_open_rw_at
 * the same for reading and writing); nt_pread_value reads the whole value
 * from offset 0 as nt_read_at does (length or -errno, -EFBIG when it does
 * not fit). */
int nt_open_at(const nt_ctx *ctx, int dirfd, const char *rel);
int nt_open_rw_at(const nt_ctx *ctx, int dirfd, const char *rel);
int nt_pread_value(int fd, char *buf, size_t size);

/* nt_write_str, and then the file read back into BUF through the
 * descriptor the write used (on procfs and sysfs a read at offset 0 makes
 * the value anew), the way a write is checked with one open instead of
 * two. On a fixture root, whose write replaces the file, the new file is
 * opened for the read. Returns the write's 0 or -errno; when that is 0,
 * *READ_R is the read's length or -errno, as nt_read_str gives them. */
int nt_write_read_str(const nt_ctx *ctx, const char *value, char *buf, size_t size, int *read_r,
		      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

bool nt_exists(const nt_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Interface names as the kernel allows them: 1..15 bytes, none of them a
 * control byte or a space, no '/' or ':', not "." or ".."; bytes from 0x7f
 * up are allowed, as the kernel allows them (they need not be UTF-8: a
 * caller that puts a name in JSON checks that). Requests are checked with
 * this before a name becomes part of a path. */
bool nt_ifname_valid(const char *name);

#endif
