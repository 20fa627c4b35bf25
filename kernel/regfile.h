/* SPDX-License-Identifier: Apache-2.0 */
/* Files an operator names (the configuration, the tokens file, the
 * desired-state file, profile files, TLS keys), opened so that a wrong kind
 * of file is refused instead of hanging the agent: a FIFO put in place of
 * one would block open() and read() for good (start-up or a reload never
 * ends, SIGTERM included), and a huge file would be read into memory.
 *
 * A symlink is followed (secrets and managed files are often mounted or
 * deployed through one); what it leads to must be a regular file, checked
 * on the open descriptor (fstat), so the file read is the file checked.
 * Kernel files under the root go through kernel/ctx.h instead, which
 * refuses symlinks too. */
#ifndef NT_REGFILE_H
#define NT_REGFILE_H

#include <stddef.h>
#include <sys/stat.h>

/* Open PATH read-only (O_NONBLOCK|O_CLOEXEC|O_NOCTTY) if it is a regular
 * file. Returns the descriptor (the caller's), with *ST filled when ST is
 * not NULL; or -errno, or NT_EFILETYPE (kernel/ctx.h) for a FIFO,
 * directory, socket or device (the null device, 1:3, is taken as an empty
 * file: `--config /dev/null`). WHY (WHYSIZE bytes, may be NULL) gets a
 * sentence naming the file: "PATH is a FIFO, not a regular file", "PATH
 * is a symlink to nothing (dangling)", "PATH: No such file or directory". */
int nt_regfile_open(const char *path, struct stat *st, char *why, size_t whysize);

/* Read PATH whole (opened as above) into *BUF (malloc'd, the caller's,
 * NUL-terminated; *LEN bytes without the NUL). A file larger than MAX
 * bytes is refused with -EFBIG and WHY "PATH is larger than MAX bytes,
 * the limit for this file"; no more than MAX + 1 bytes are ever read. Returns 0 or as
 * nt_regfile_open, or -errno of a failed read. */
int nt_regfile_read(const char *path, size_t max, char **buf, size_t *len, char *why,
		    size_t whysize);

#endif
