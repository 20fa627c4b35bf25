/* SPDX-License-Identifier: Apache-2.0 */
#include "host/hostcache.h"
#include "kernel/heldfiles.h"
#include "kernel/kernel.h"
#include "kernel/irqbalance_client.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One static part and the readers copying from it: a part replaced while
 * a reader still uses it is freed by the last one. */
typedef struct snapshot {
	nt_topology *base;
	char *key; /* the key base was read under */
	int refs; /* the cache's own reference while current, plus readers */
} snapshot;

struct nt_host_cache {
	pthread_mutex_t mu;
	nt_ctx ctx; /* without host_cache: the static read must not come back here */
	snapshot *cur; /* NULL when none */
	nt_irq_files files; /* every set NULL unless files are held */
	nt_irqbalance_memo irqbalance; /* files.irqbalance */
	unsigned long builds;
};

static void snap_put(snapshot *s)
{
	if (s && --s->refs == 0) {
		nt_topology_free(s->base);
		free(s->key);
		free(s);
	}
}

int nt_host_cache_new(const nt_ctx *ctx, nt_host_cache **out)
{
	nt_host_cache *c = calloc(1, sizeof(*c));
	*out = NULL;
	if (!c)
		return -ENOMEM;
	if (pthread_mutex_init(&c->mu, NULL) != 0) {
		free(c);
		return -ENOMEM;
	}
	c->ctx = *ctx;
	c->ctx.host_cache = NULL;
	c->ctx.fx_memo = NULL;
	c->ctx.rtnl = NULL;
	/* A tree read again and again keeps its ethtool documents parsed
	 * (kernel/fixture_docs.c); the live kernel has none to keep. */
	c->ctx.fx_docs = NULL;
	if (!ctx->live && nt_fx_docs_new(NT_FX_DOCS_SETTLE_MS, &c->ctx.fx_docs) < 0) {
		pthread_mutex_destroy(&c->mu);
		free(c);
		return -ENOMEM;
	}
	nt_irqbalance_memo_init(&c->irqbalance);
	c->files.irqbalance = &c->irqbalance;
	*out = c;
	return 0;
}

void nt_host_cache_free(nt_host_cache *c)
{
	if (!c)
		return;
	snap_put(c->cur);
	for (int p = 0; p < NT_IRQ_PARTS; p++) {
		nt_held_files_free(c->files.proc[p]);
		nt_held_files_free(c->files.debug[p]);
	}
	nt_irqbalance_memo_destroy(&c->irqbalance);
	nt_fx_docs_free(c->ctx.fx_docs);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* A growing string for the key. */
typedef struct {
	char *s;
	size_t len, cap;
	bool oom;
} keybuf;

static void key_add(keybuf *k, const char *s, size_t n)
{
	if (k->oom)
		return;
	if (k->len + n + 1 > k->cap) {
		size_t cap = k->cap ? k->cap : 256;
		while (k->len + n + 1 > cap)
			cap *= 2;
		char *ns = realloc(k->s, cap);
		if (!ns) {
			k->oom = true;
			return;
		}
		k->s = ns;
		k->cap = cap;
	}
	memcpy(k->s + k->len, s, n);
	k->len += n;
	k->s[k->len] = '\0';
}

int nt_host_cache_key(const nt_ctx *ctx, char **out)
{
	char buf[8192], path[PATH_MAX];
	keybuf k = { 0 };
	int r;

	*out = NULL;
	/* A file that cannot be read is part of the key too (its error). */
	r = nt_read_str(ctx, buf, sizeof(buf), "/sys/devices/system/cpu/online");
	key_add(&k, r >= 0 ? buf : "-", r >= 0 ? (size_t)r : 1);
	key_add(&k, "\n", 1);
	r = nt_read_str(ctx, buf, sizeof(buf), "/sys/devices/system/node/online");
	key_add(&k, r >= 0 ? buf : "-", r >= 0 ? (size_t)r : 1);
	key_add(&k, "\n", 1);
	DIR *d = NULL;
	if (nt_path(ctx, path, sizeof(path), "/sys/class/net") == 0)
		d = opendir(path);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			key_add(&k, de->d_name, strlen(de->d_name));
			key_add(&k, "/", 1);
		}
		closedir(d);
	}
	if (k.oom || !k.s) {
		free(k.s);
		return -ENOMEM;
	}
	*out = k.s;
	return 0;
}

/* Whether every NIC of the read still has the ifindex the static part saw:
 * a link deleted and made again under its old name leaves the key as it
 * was, not its ifindex. */
static bool same_links(const nt_topology *base, const nt_topology *t)
{
	for (int i = 0; i < t->nnics && i < base->nnics; i++)
		if (base->nics[i].static_ifindex && t->nics[i].ifindex &&
		    base->nics[i].static_ifindex != t->nics[i].ifindex)
			return false;
	return true;
}

static int read_once(nt_host_cache *c, nt_topology **out, bool retry)
{
	char *key = NULL;
	snapshot *s;
	int r;

	*out = NULL;
	/* Taken before the static part is read: a change in between makes the
	 * next key differ, so it costs a rebuild, never a stale model. */
	if ((r = nt_host_cache_key(&c->ctx, &key)) < 0)
		return r;
	pthread_mutex_lock(&c->mu);
	if (!c->cur || strcmp(c->cur->key, key) != 0) {
		/* Built under the lock: concurrent readers after a hotplug wait
		 * for one build instead of each doing its own. */
		snapshot *ns = calloc(1, sizeof(*ns));
		r = ns ? nt_topology_read_static(&c->ctx, &ns->base) : -ENOMEM;
		if (r < 0) {
			pthread_mutex_unlock(&c->mu);
			free(ns);
			free(key);
			return r;
		}
		ns->key = key;
		key = NULL;
		ns->refs = 1;
		snap_put(c->cur);
		c->cur = ns;
		c->builds++;
	}
	s = c->cur;
	s->refs++;
	pthread_mutex_unlock(&c->mu);
	free(key);
	/* The dynamic part, the expensive one, is read outside the lock. */
	r = nt_topology_read_dynamic(s->base, &c->files, out);
	pthread_mutex_lock(&c->mu);
	bool stale = r == 0 && !same_links(s->base, *out);
	if (stale && c->cur == s) {
		snap_put(c->cur);
		c->cur = NULL;
	}
	snap_put(s);
	pthread_mutex_unlock(&c->mu);
	if (stale && retry) {
		/* Read again on a static part made now: once, so links made and
		 * deleted without pause cannot keep a reader here. */
		nt_topology_free(*out);
		*out = NULL;
		return read_once(c, out, false);
	}
	return r;
}

int nt_host_cache_read(nt_host_cache *c, nt_topology **out)
{
	return read_once(c, out, true);
}

/* Declared in host/topology.h, defined here: a read goes through the cache
 * when the context carries one, and only the cache knows it is there. The
 * reader of the model (host/topology.c) knows nothing of its cache, so the
 * two do not include each other: the cache is built on the reader, not
 * the reader on the cache. */
int nt_topology_read(const nt_ctx *ctx, nt_topology **out)
{
	nt_topology *base = NULL;
	int r;

	*out = NULL;
	if (ctx->host_cache)
		return nt_host_cache_read(ctx->host_cache, out);
	if ((r = nt_topology_read_static(ctx, &base)) < 0)
		return r;
	r = nt_topology_read_dynamic(base, NULL, out);
	nt_topology_free(base);
	return r;
}

int nt_host_cache_hold_files(nt_host_cache *c, int budget)
{
	nt_irq_files f = { .irqbalance = &c->irqbalance };
	int r = 0;
	/* The sets are made all together or not at all. */
	if (budget <= 0 || c->files.proc[0])
		return 0;
	/* debugfs has one file per IRQ against /proc/irq's two: a third of
	 * the budget; each part an equal share. */
	int proc = (budget - budget / 3) / NT_IRQ_PARTS, debug = budget / 3 / NT_IRQ_PARTS;
	for (int p = 0; p < NT_IRQ_PARTS && r == 0; p++) {
		r = nt_held_files_new(&c->ctx, "/proc/irq", proc, &f.proc[p]);
		if (r == 0)
			r = nt_held_files_new(&c->ctx, "/sys/kernel/debug/irq/irqs", debug, &f.debug[p]);
	}
	if (r < 0) {
		for (int p = 0; p < NT_IRQ_PARTS; p++) {
			nt_held_files_free(f.proc[p]);
			nt_held_files_free(f.debug[p]);
		}
		return r;
	}
	pthread_mutex_lock(&c->mu);
	c->files = f;
	pthread_mutex_unlock(&c->mu);
	return 0;
}

int nt_host_cache_held(nt_host_cache *c)
{
	int n = 0;
	for (int p = 0; p < NT_IRQ_PARTS && c->files.proc[p]; p++)
		n += nt_held_count(c->files.proc[p]) + nt_held_count(c->files.debug[p]);
	return n;
}

int nt_host_cache_read_irq_files(nt_host_cache *c, const nt_ctx *ctx, const int *irqs, int n,
				 const char *name, char *bufs, size_t size, int *res)
{
	if (!c)
		return nt_irq_files_read(ctx, NULL, irqs, n, name, bufs, size, res);
	return nt_irq_files_read(&c->ctx, &c->files, irqs, n, name, bufs, size, res);
}

int nt_host_cache_irq_set_affinity(nt_host_cache *c, const nt_ctx *ctx, int irq, const char *cpulist,
				   char *buf, size_t size, int *read_r, char *err, size_t errsize)
{
	return nt_irq_files_write(ctx, c ? &c->files : NULL, irq, cpulist, buf, size, read_r, err, errsize);
}

struct nt_irqbalance_memo *nt_host_cache_irqbalance(nt_host_cache *c)
{
	return c ? &c->irqbalance : NULL;
}

void nt_host_cache_invalidate(nt_host_cache *c)
{
	pthread_mutex_lock(&c->mu);
	snap_put(c->cur);
	c->cur = NULL;
	pthread_mutex_unlock(&c->mu);
}

unsigned long nt_host_cache_builds(nt_host_cache *c)
{
	pthread_mutex_lock(&c->mu);
	unsigned long n = c->builds;
	pthread_mutex_unlock(&c->mu);
	return n;
}
