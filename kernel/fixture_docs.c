/* SPDX-License-Identifier: Apache-2.0 */
/* The fixture's ethtool documents kept parsed from one host read to the
 * next, for an owner that reads the same tree again and again (the
 * agent's host cache).
 *
 * A read memo (kernel/fixture_memo.c) parses each NIC's document once per
 * read; on the agent's 256-CPU tree that parse was still a fifth of a
 * GET /v1/topology, for documents nothing had changed. The live kernel
 * has no such cost, so the tree's emulation should not either. A kept
 * document stands for the file while the file's identity and last change
 * read the same: device, inode, size, mtime and ctime, taken with one
 * open and fstat (through nt_open_read, so the root's rules hold as for
 * any read) in place of a read and a parse. A rename over the file (every
 * write of kernel/fixture.c) gives a new inode and ctime; a write in place
 * a new ctime, which no caller can set back.
 *
 * What that check cannot see is a second change within one tick of the
 * file system's clock (a jiffy on ext4 and tmpfs, 2 s on FAT): same size,
 * same times, new bytes. So a document is kept only once its ctime lies
 * settle_ms (nt_fx_docs_new) in the past when it is parsed; a file changed more recently is
 * parsed again at each read until it has settled. Changes after the parse
 * carry a ctime later than the kept one and are seen. */
#include "kernel/kernel.h"
#include "kernel/fixture_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <net/if.h>

/* More NICs than any host has: past it the table starts again empty, so
 * names that come and go cannot grow it without bound. */
#define DOCS_MAX 4096

struct fx_kept {
	char ifname[IF_NAMESIZE];
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	json_t *root;
};

struct nt_fx_docs {
	pthread_mutex_t mu;
	long settle_ms;
	int n, cap;
	struct fx_kept *kept;
	unsigned long parses;
};

int nt_fx_docs_new(long settle_ms, nt_fx_docs **out)
{
	nt_fx_docs *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ENOMEM;
	if (pthread_mutex_init(&d->mu, NULL) != 0) {
		free(d);
		return -ENOMEM;
	}
	d->settle_ms = settle_ms < 0 ? 0 : settle_ms;
	*out = d;
	return 0;
}

static void docs_clear(nt_fx_docs *d)
{
	for (int i = 0; i < d->n; i++)
		json_decref(d->kept[i].root);
	d->n = 0;
}

void nt_fx_docs_free(nt_fx_docs *d)
{
	if (!d)
		return;
	docs_clear(d);
	free(d->kept);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

unsigned long nt_fx_docs_parses(nt_fx_docs *d)
{
	pthread_mutex_lock(&d->mu);
	unsigned long n = d->parses;
	pthread_mutex_unlock(&d->mu);
	return n;
}

static bool same_ts(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool same_file(const struct fx_kept *k, const struct stat *st)
{
	return k->dev == st->st_dev && k->ino == st->st_ino && k->size == st->st_size &&
	       same_ts(&k->mtime, &st->st_mtim) && same_ts(&k->ctime, &st->st_ctim);
}

/* Whether a file last changed at CT is SETTLE_MS in the past. A clock
 * that reads earlier than CT (set back, or another host's on a network
 * file system) keeps nothing. */
static bool settled(const struct timespec *ct, long settle_ms)
{
	struct timespec now;
	if (clock_gettime(CLOCK_REALTIME, &now) < 0)
		return false;
	long long ms = (long long)(now.tv_sec - ct->tv_sec) * 1000 + (now.tv_nsec - ct->tv_nsec) / 1000000;
	return ms >= settle_ms;
}

static struct fx_kept *kept_find(nt_fx_docs *d, const char *ifname)
{
	for (int i = 0; i < d->n; i++)
		if (strcmp(d->kept[i].ifname, ifname) == 0)
			return &d->kept[i];
	return NULL;
}

/* ROOT kept for IFNAME as the file ST describes. Memory running out only
 * means it is parsed again next time. */
static void kept_put(nt_fx_docs *d, const char *ifname, const struct stat *st, json_t *root)
{
	struct fx_kept *k = kept_find(d, ifname);

	if (!k) {
		if (d->n == DOCS_MAX)
			docs_clear(d);
		if (d->n == d->cap) {
			int cap = d->cap ? d->cap * 2 : 16;
			struct fx_kept *nk = realloc(d->kept, sizeof(*nk) * (size_t)cap);
			if (!nk)
				return;
			d->kept = nk;
			d->cap = cap;
		}
		k = &d->kept[d->n++];
		strcpy(k->ifname, ifname);
		k->root = NULL;
	}
	json_decref(k->root);
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->size = st->st_size;
	k->mtime = st->st_mtim;
	k->ctime = st->st_ctim;
	k->root = json_incref(root);
}

int nt_fx_docs_get(const nt_ctx *ctx, nt_fx_docs *d, const char *ifname, json_t **rootp)
{
	struct stat st;
	json_t *root = NULL;
	int r;

	*rootp = NULL;
	if (strlen(ifname) >= IF_NAMESIZE)
		return nt_fx_parse(ctx, ifname, rootp);
	int fd = nt_open_read(ctx, "/ethtool/%s.json", ifname);
	if (fd < 0)
		/* No file is how a fixture says the driver has no ethtool ops. */
		return fd == -ENOENT ? -EOPNOTSUPP : fd;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	pthread_mutex_lock(&d->mu);
	struct fx_kept *k = kept_find(d, ifname);
	if (k && same_file(k, &st))
		root = json_incref(k->root);
	pthread_mutex_unlock(&d->mu);
	if (root) {
		*rootp = root;
		r = 0;
		goto out;
	}
	/* Parsed from the file as it is now: one replaced since the fstat
	 * above is kept under the older identity, which the next read's
	 * fstat no longer matches, so it is parsed again then. */
	if ((r = nt_fx_parse(ctx, ifname, &root)) < 0)
		goto out;
	pthread_mutex_lock(&d->mu);
	d->parses++;
	struct fx_kept *old = kept_find(d, ifname);
	if (settled(&st.st_ctim, d->settle_ms))
		kept_put(d, ifname, &st, root);
	else if (old) {
		/* Changed too lately to trust: nothing kept until it settles. */
		json_decref(old->root);
		*old = d->kept[--d->n];
	}
	pthread_mutex_unlock(&d->mu);
	*rootp = root;
out:
	close(fd);
	return r;
}
