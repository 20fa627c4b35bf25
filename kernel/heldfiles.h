/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel files kept open between reads of the host.
 *
 * Reading a procfs or sysfs attribute costs an open (a path walk), a
 * check that it is a regular file, a read and a close; a host with a
 * thousand IRQs has two affinity files each, read on every request of the
 * agent. A descriptor kept open is read again with one pread at offset 0,
 * for which procfs and sysfs make the value anew. An agent holds one such
 * set for /proc/irq (and one for debugfs's irq/irqs when it reads there);
 * a command run once has nothing to keep and reads with nt_read_at.
 *
 * A held descriptor still names the right file:
 * - on procfs and sysfs, because removing an entry (an IRQ freed, a device
 *   gone) makes every open descriptor of it fail with EIO or ENODEV; a
 *   failed read drops the descriptor and opens the path again, which finds
 *   the new entry of a reused number or none;
 * - on any other file system (a fixture tree), because an inotify watch
 *   on each held file reports its removal, a rename over it or away from
 *   it; the events are read once at the start of each pass, and the path
 *   of each file they name is opened again. Where no watch can be had
 *   (inotify's limits are the system's), a descriptor whose file has no
 *   link left (fstat on each read) is opened again instead; that check
 *   misses a file renamed away.
 * Off a kernel file system the directory itself is opened again at the
 * start of each pass and compared with the held one (device and inode): a
 * directory replaced drops every descriptor. On procfs, sysfs and debugfs
 * the directory is kept from the first pass on, and a pass costs no call:
 * a set is made for a directory the kernel never removes (/proc/irq,
 * debugfs's irq/irqs), not for one that can go (a NIC's).
 *
 * Cost: one descriptor per file, and on procfs the kernel keeps a page of
 * buffer per open file that has been read (about 4 KB). BUDGET caps how
 * many are held; past it a file is read with open/read/close as before.
 * Descriptors of files not read in a pass (an IRQ that went away) are
 * closed at its end.
 *
 * One pass at a time: nt_held_begin takes the set, or says another thread
 * has it (-EBUSY), and that caller reads without it. */
#ifndef NT_HELDFILES_H
#define NT_HELDFILES_H

#include "kernel/ctx.h"

typedef struct nt_held_files nt_held_files;

/* A set for directory DIR under CTX's root ("/proc/irq"), holding at most
 * BUDGET descriptors (0: none, every read opens its file). Nothing is
 * opened yet. Returns 0 or -ENOMEM / -ENAMETOOLONG. */
int nt_held_files_new(const nt_ctx *ctx, const char *dir, int budget, nt_held_files **out);
void nt_held_files_free(nt_held_files *h);

/* Hold files without inotify watches: each read of a fixture tree's
 * file checks it with fstat, as when the system's inotify limits are
 * reached. Drops what is held. For tests. */
void nt_held_files_no_watch(nt_held_files *h);

/* Start a pass: reads what the watches saw, opens the directory again
 * (off a kernel file system) and keeps or drops what is held. Returns the
 * directory's descriptor, valid until nt_held_end (do not close it), or
 * -EBUSY while another pass runs, or the -errno of opening the directory
 * (the pass is not started then). */
int nt_held_begin(nt_held_files *h);

/* Read REL beneath the directory, as nt_read_at does (same checks, same
 * value, same errors), through the descriptor held under key (ID, SLOT)
 * when there is one; a file opened here is kept under that key while the
 * budget allows. Only between nt_held_begin and nt_held_end. */
int nt_held_read(nt_held_files *h, int id, int slot, const char *rel, char *buf, size_t size);

/* Write VALUE to REL beneath the directory with one write, and read it
 * back into BUF (*READ_R: as nt_pread_value), both through the descriptor
 * held under key (ID, SLOT) once it has been opened for writing: a procfs
 * attribute takes a write whatever the file position, and makes its value
 * anew for a read at offset 0 (off a kernel file system the file is
 * written at offset 0 and cut to the value's length). Otherwise the file
 * is opened for reading and writing with nt_open_rw_at's checks, and held
 * in place of a descriptor opened only for reading (or in a new key, while
 * the budget allows). A held write that fails with anything but EBUSY or EAGAIN is
 * tried once more on the path opened again (the entry may be gone).
 * Returns 0 or the write's -errno. For the live host: a fixture tree's
 * files are written by kernel/fixture.c, as the kernel would change them.
 * Only between nt_held_begin and nt_held_end. */
int nt_held_write_read(nt_held_files *h, int id, int slot, const char *rel, const char *value, char *buf,
		       size_t size, int *read_r);

/* End the pass: descriptors not read during it are closed. */
void nt_held_end(nt_held_files *h);
/* End a pass that read only some of the files (a transaction reading back
 * the IRQs it changed): only descriptors that failed are closed. */
void nt_held_end_partial(nt_held_files *h);

/* Descriptors held now, and how many files were opened (not read through a
 * held descriptor) since the set was made: for tests and metrics. */
int nt_held_count(nt_held_files *h);
unsigned long nt_held_opens(nt_held_files *h);

#endif
