/* SPDX-License-Identifier: Apache-2.0 */
#include "kernel/heldfiles.h"

#include <errno.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* One held descriptor. Open addressing with linear probing: a slot is
 * free (FREE, ends a probe), held (fd >= 0) or keeps its key without a
 * descriptor (GONE: its file failed and could not be opened again, or the
 * budget was full). Slots are only emptied by the rebuild at a pass's end. */
enum { FREE = -1, GONE = -2 };
typedef struct {
	int id, slot;
	int fd;
	int wd; /* its file's inotify watch (a fixture tree), or -1 */
	bool rw; /* opened for writing too (nt_held_write_read) */
	unsigned gen; /* the pass that last read it */
} held;

struct nt_held_files {
	pthread_mutex_t mu;
	nt_ctx ctx;
	char dir[PATH_MAX];
	int budget;
	int dirfd; /* -1 when none is held */
	dev_t dev;
	ino_t ino;
	bool kernel_fs; /* procfs, sysfs or debugfs: a removed entry fails its reads */
	int notify; /* inotify watching held files off a kernel file system, or -1 */
	bool notify_failed; /* none could be made: fstat on each read instead */
	bool no_watch; /* nt_held_files_no_watch */
	held *tab;
	size_t cap; /* a power of two, or 0 */
	int count; /* held */
	size_t used; /* held or GONE */
	unsigned gen;
	unsigned long opens;
};

int nt_held_files_new(const nt_ctx *ctx, const char *dir, int budget, nt_held_files **out)
{
	nt_held_files *h = calloc(1, sizeof(*h));
	*out = NULL;
	if (!h)
		return -ENOMEM;
	if (snprintf(h->dir, sizeof(h->dir), "%s", dir) >= (int)sizeof(h->dir)) {
		free(h);
		return -ENAMETOOLONG;
	}
	if (pthread_mutex_init(&h->mu, NULL) != 0) {
		free(h);
		return -ENOMEM;
	}
	h->ctx = *ctx;
	h->ctx.host_cache = NULL;
	h->budget = budget > 0 ? budget : 0;
	h->dirfd = -1;
	h->notify = -1;
	*out = h;
	return 0;
}

static void drop_all(nt_held_files *h)
{
	for (size_t i = 0; i < h->cap; i++)
		if (h->tab[i].fd >= 0)
			close(h->tab[i].fd);
	free(h->tab);
	h->tab = NULL;
	h->cap = 0;
	h->count = 0;
	h->used = 0;
	if (h->dirfd >= 0)
		close(h->dirfd);
	h->dirfd = -1;
	if (h->notify >= 0)
		close(h->notify); /* and every watch with it */
	h->notify = -1;
	h->notify_failed = false;
}

void nt_held_files_no_watch(nt_held_files *h)
{
	pthread_mutex_lock(&h->mu);
	drop_all(h);
	h->no_watch = true;
	pthread_mutex_unlock(&h->mu);
}

void nt_held_files_free(nt_held_files *h)
{
	if (!h)
		return;
	drop_all(h);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

static size_t hash(int id, int slot)
{
	uint64_t k = ((uint64_t)(uint32_t)id << 8) ^ (uint32_t)slot;
	k *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(k >> 32);
}

static held *find(nt_held_files *h, int id, int slot)
{
	if (!h->cap)
		return NULL;
	for (size_t i = hash(id, slot) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		held *e = &h->tab[i];
		if (e->fd == FREE)
			return NULL;
		if (e->id == id && e->slot == slot)
			return e;
	}
}

static void place(held *tab, size_t cap, held e)
{
	size_t i = hash(e.id, e.slot) & (cap - 1);
	while (tab[i].fd != FREE)
		i = (i + 1) & (cap - 1);
	tab[i] = e;
}

/* A table of CAP slots holding the descriptors held now, without GONE
 * keys; those not read in the current pass are closed when
 * KEEP_CURRENT_ONLY. */
static int rebuild(nt_held_files *h, size_t cap, bool keep_current_only)
{
	held *tab = malloc(cap * sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		tab[i].fd = FREE;
	int count = 0;
	for (size_t i = 0; i < h->cap; i++) {
		held e = h->tab[i];
		if (e.fd < 0)
			continue;
		if (keep_current_only && e.gen != h->gen) {
			close(e.fd);
			continue;
		}
		place(tab, cap, e);
		count++;
	}
	free(h->tab);
	h->tab = tab;
	h->cap = cap;
	h->count = count;
	h->used = (size_t)count;
	return 0;
}

/* Close E's descriptor; its key stays (GONE) until the pass's end. */
static void forget(nt_held_files *h, held *e)
{
	close(e->fd);
	e->fd = GONE;
	e->wd = -1;
	e->rw = false;
	h->count--;
}

static int cmp_wd(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Off a kernel file system, a watch on held descriptor FD's file, so that
 * its removal, a rename over it or away from it is seen once per pass
 * (see drain) rather than checked with an fstat on every read. The watch
 * goes on the open file itself (through /proc/self/fd, the agent's own
 * process, not a path under the root): a path could have changed since
 * the open. Returns the watch, or -1 (then each read checks with fstat):
 * on a kernel file system, or when inotify cannot be had (its limits on
 * instances and watches are the system's). Watches are never removed one
 * by one: two keys can name one file (a hard link), whose watch they
 * share; a watch goes when its file does, or with the descriptor. */
static int watch(nt_held_files *h, int fd)
{
	char path[64];

	if (h->kernel_fs || h->no_watch || h->notify_failed)
		return -1;
	if (h->notify < 0 && (h->notify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
		h->notify_failed = true;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int wd = inotify_add_watch(h->notify, path, IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF);
	return wd < 0 ? -1 : wd;
}

/* The watches' events since the last pass. Each names a file that was
 * removed, renamed or replaced (a rename over it takes its last link:
 * IN_ATTRIB), or whose attributes changed; every held descriptor of it is
 * closed, and its path opened again at its next read. Writes in place
 * (IN_MODIFY, not watched) leave it held: a pread sees them. When events
 * were lost (the queue overflowed) or cannot be sorted, nothing held is
 * trusted. Returns whether everything must be dropped. */
static bool drain(nt_held_files *h)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int *wds = NULL;
	size_t n = 0, cap = 0;
	bool all = false;

	if (h->notify < 0)
		return false;
	for (;;) {
		ssize_t len = read(h->notify, buf, sizeof(buf));
		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0) {
			/* EAGAIN: read to the end. Anything else: unknown. */
			all = all || (len < 0 && errno != EAGAIN);
			break;
		}
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				all = true;
			} else if (!all && ev->wd >= 0) {
				if (n == cap) {
					int *nw = realloc(wds, (cap ? cap * 2 : 64) * sizeof(*wds));
					if (!nw) {
						all = true;
						continue;
					}
					wds = nw;
					cap = cap ? cap * 2 : 64;
				}
				wds[n++] = ev->wd;
			}
		}
	}
	if (!all && n) {
		qsort(wds, n, sizeof(*wds), cmp_wd);
		for (size_t i = 0; i < h->cap; i++) {
			held *e = &h->tab[i];
			if (e->fd >= 0 && e->wd >= 0 && bsearch(&e->wd, wds, n, sizeof(*wds), cmp_wd))
				forget(h, e);
		}
	}
	free(wds);
	return all;
}

int nt_held_begin(nt_held_files *h)
{
	if (pthread_mutex_trylock(&h->mu) != 0)
		return -EBUSY;
	if (drain(h))
		drop_all(h);
	/* On a kernel file system the directory is one the kernel never
	 * removes (see the header): the one held stands, for no call at all
	 * (a transaction takes a pass per step it writes). */
	if (h->dirfd >= 0 && h->kernel_fs) {
		h->gen++;
		return h->dirfd;
	}
	/* Opened again each pass, to notice a directory replaced (a fixture
	 * tree made anew): one open, against a pread per file. */
	int fd = nt_dir_open(&h->ctx, "%s", h->dir);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) < 0) {
		int err = -errno;
		close(fd);
		fd = err;
	}
	if (fd < 0) {
		drop_all(h);
		pthread_mutex_unlock(&h->mu);
		return fd;
	}
	if (h->dirfd >= 0 && st.st_dev == h->dev && st.st_ino == h->ino) {
		close(fd);
	} else {
		drop_all(h);
		struct statfs sfs;
		h->dirfd = fd;
		h->dev = st.st_dev;
		h->ino = st.st_ino;
		h->kernel_fs = fstatfs(fd, &sfs) == 0 &&
			       (sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC ||
				sfs.f_type == DEBUGFS_MAGIC);
	}
	h->gen++;
	return h->dirfd;
}

/* Whether held entry E still names the file at its path (see the
 * header): a value read from it stands. A watched file was checked at the
 * pass's start (drain). */
static bool still_linked(const nt_held_files *h, const held *e)
{
	struct stat st;
	if (h->kernel_fs || e->wd >= 0)
		return true;
	return fstat(e->fd, &st) == 0 && st.st_nlink > 0;
}

/* Hold FD (opened for writing too: RW) under (ID, SLOT), whose entry E
 * is found or NULL, in place of a descriptor held there: while the
 * budget allows a new one. Returns whether it was kept (else it is
 * closed). */
static bool keep(nt_held_files *h, held *e, int id, int slot, int fd, bool rw)
{
	if (!(e && e->fd >= 0) && h->count >= h->budget) {
		close(fd);
		return false;
	}
	if (!e) {
		/* Three quarters full at most: a hit still probes two and a
		 * half slots on average at worst, while a host's thousands of
		 * IRQ files take half the room a half-full table would. */
		if ((h->used + 1) * 4 > h->cap * 3 && rebuild(h, h->cap ? h->cap * 2 : 256, false) < 0) {
			close(fd);
			return false;
		}
		place(h->tab, h->cap, (held){ .id = id, .slot = slot, .fd = GONE, .wd = -1 });
		h->used++;
		e = find(h, id, slot);
	}
	if (e->fd >= 0)
		forget(h, e);
	e->fd = fd;
	e->wd = watch(h, fd);
	e->rw = rw;
	e->gen = h->gen;
	h->count++;
	return true;
}

int nt_held_read(nt_held_files *h, int id, int slot, const char *rel, char *buf, size_t size)
{
	held *e = find(h, id, slot);
	int r;

	if (e && e->fd >= 0) {
		r = nt_pread_value(e->fd, buf, size);
		if ((r >= 0 || r == -EFBIG) && still_linked(h, e)) {
			e->gen = h->gen;
			return r;
		}
		/* Gone or replaced: the path is opened again below, into the
		 * same slot. */
		forget(h, e);
	}
	int fd = nt_open_at(&h->ctx, h->dirfd, rel);
	if (fd < 0) {
		buf[0] = '\0';
		return fd;
	}
	h->opens++;
	r = nt_pread_value(fd, buf, size);
	if (r < 0 && r != -EFBIG)
		close(fd);
	else
		keep(h, e, id, slot, fd, false);
	return r;
}

/* One write of VALUE to FD (a short one is an error: the rest would be a
 * second value), then the value read back into BUF (*READ_R). A procfs
 * attribute refuses pwrite (seq_file clears FMODE_PWRITE) and its write
 * handler takes the whole value whatever the file position: a plain write
 * there (KERNEL_FS). Elsewhere the file is made to hold VALUE: written at
 * offset 0 and cut to its length. */
static int write_read(int fd, bool kernel_fs, const char *value, char *buf, size_t size, int *read_r)
{
	size_t len = strlen(value);
	ssize_t n;
	do {
		n = kernel_fs ? write(fd, value, len) : pwrite(fd, value, len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	if (!kernel_fs && ftruncate(fd, (off_t)len) < 0)
		return -errno;
	*read_r = nt_pread_value(fd, buf, size);
	return 0;
}

int nt_held_write_read(nt_held_files *h, int id, int slot, const char *rel, const char *value, char *buf,
		       size_t size, int *read_r)
{
	held *e = find(h, id, slot);
	int r;

	*read_r = -EIO;
	buf[0] = '\0';
	if (e && e->fd >= 0 && e->rw && still_linked(h, e)) {
		r = write_read(e->fd, h->kernel_fs, value, buf, size, read_r);
		/* Refused for now (an affinity change still pending): the caller
		 * tries again through the same descriptor. */
		if (r == 0 || r == -EBUSY || r == -EAGAIN) {
			e->gen = h->gen;
			return r;
		}
		/* Any other error may be the entry gone (procfs says EIO, as it
		 * does for a value refused): the path is opened again and the
		 * write tried once more, which tells the two apart. */
		forget(h, e);
	}
	int fd = nt_open_rw_at(&h->ctx, h->dirfd, rel);
	if (fd < 0)
		return fd;
	h->opens++;
	r = write_read(fd, h->kernel_fs, value, buf, size, read_r);
	/* Kept in place of a descriptor held for reading only; a write that
	 * failed keeps nothing. */
	if (r < 0)
		close(fd);
	else
		keep(h, e, id, slot, fd, true);
	return r;
}

static void end_pass(nt_held_files *h, bool whole)
{
	/* Keys without a descriptor (GONE) are those used and not held. */
	bool stale = h->used > (size_t)h->count;
	for (size_t i = 0; whole && i < h->cap && !stale; i++)
		stale = h->tab[i].fd >= 0 && h->tab[i].gen != h->gen;
	/* Only when an IRQ went away or a file failed: then the table is made
	 * again without them (when memory fails, they stay until a later
	 * pass). */
	if (stale)
		rebuild(h, h->cap, whole);
	pthread_mutex_unlock(&h->mu);
}

void nt_held_end(nt_held_files *h)
{
	end_pass(h, true);
}

void nt_held_end_partial(nt_held_files *h)
{
	end_pass(h, false);
}

int nt_held_count(nt_held_files *h)
{
	pthread_mutex_lock(&h->mu);
	int n = h->count;
	pthread_mutex_unlock(&h->mu);
	return n;
}

unsigned long nt_held_opens(nt_held_files *h)
{
	pthread_mutex_lock(&h->mu);
	unsigned long n = h->opens;
	pthread_mutex_unlock(&h->mu);
	return n;
}
