/* SPDX-License-Identifier: Apache-2.0 */
/* One read of the host shared by concurrent requests (see read_share.h).
 *
 * Tickets order arrivals: a caller takes the next ticket on entry; a read
 * records the last ticket handed out when it starts. A caller may use a
 * read whose start ticket is at least its own (the read began after the
 * caller arrived). Everything below is under one mutex except the read and
 * the rendering, which run outside it. */
#include "api/read_share.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct nt_snapshot {
	nt_read_share *share;
	unsigned long start_ticket; /* the last ticket handed out when the read began */
	int refs; /* under share->lock */
	bool done; /* the read ended (t set, or err) */
	int err;
	nt_topology *t;
	pthread_mutex_t render_lock; /* guards text[] and len[] */
	char *text[NT_DOC_COUNT];
	size_t len[NT_DOC_COUNT];
};

struct nt_read_share {
	const nt_ctx *ctx;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a read ended */
	unsigned long tickets;
	nt_snapshot *reading; /* the read in progress, NULL when none */
	unsigned long reads, served;
};

int nt_read_share_new(const nt_ctx *ctx, nt_read_share **out)
{
	nt_read_share *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	*out = s;
	return 0;
}

void nt_read_share_free(nt_read_share *s)
{
	if (!s)
		return;
	/* Every request has ended (the server stopped first), so no
	 * snapshot is left. */
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static void snapshot_free(nt_snapshot *snap)
{
	for (int i = 0; i < NT_DOC_COUNT; i++)
		free(snap->text[i]);
	nt_topology_free(snap->t);
	pthread_mutex_destroy(&snap->render_lock);
	free(snap);
}

/* Drop one reference; under s->lock. */
static void unref_locked(nt_snapshot *snap)
{
	if (--snap->refs == 0)
		snapshot_free(snap);
}

int nt_read_share_get(nt_read_share *s, nt_snapshot **out)
{
	nt_snapshot *snap;
	int r;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	unsigned long ticket = ++s->tickets;
	for (;;) {
		snap = s->reading;
		if (!snap)
			break;
		if (snap->start_ticket >= ticket) {
			/* Begun after we arrived: its answer is ours too. */
			snap->refs++;
			while (!snap->done)
				pthread_cond_wait(&s->cond, &s->lock);
			goto joined;
		}
		/* Begun before we arrived: it may miss a change made just
		 * before our request. Wait for it to end, then join or start
		 * the next read. */
		while (s->reading == snap)
			pthread_cond_wait(&s->cond, &s->lock);
	}

	snap = calloc(1, sizeof(*snap));
	if (!snap) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	snap->share = s;
	snap->start_ticket = s->tickets;
	snap->refs = 1;
	pthread_mutex_init(&snap->render_lock, NULL);
	s->reading = snap;
	s->reads++;
	pthread_mutex_unlock(&s->lock);

	r = nt_topology_read(s->ctx, &snap->t);

	pthread_mutex_lock(&s->lock);
	snap->err = r < 0 ? r : 0;
	snap->done = true;
	s->reading = NULL;
	pthread_cond_broadcast(&s->cond);
joined:
	s->served++;
	if (snap->err < 0) {
		r = snap->err;
		unref_locked(snap);
		pthread_mutex_unlock(&s->lock);
		return r;
	}
	pthread_mutex_unlock(&s->lock);
	*out = snap;
	return 0;
}

const nt_topology *nt_snapshot_topology(const nt_snapshot *snap)
{
	return snap->t;
}

const char *nt_snapshot_text(nt_snapshot *snap, nt_snapshot_doc doc, size_t *len)
{
	static char *(*const render[NT_DOC_COUNT])(const nt_topology *, size_t *) = {
		[NT_DOC_TOPOLOGY] = nt_topology_to_text,
		[NT_DOC_NICS] = nt_nics_to_text,
		[NT_DOC_IRQS] = nt_irqs_to_text,
	};
	const char *text;

	if ((unsigned)doc >= NT_DOC_COUNT)
		return NULL;
	/* Rendered once, under the lock; never changed after, so each
	 * reader may send it while others still do. */
	pthread_mutex_lock(&snap->render_lock);
	if (!snap->text[doc])
		snap->text[doc] = render[doc](snap->t, &snap->len[doc]);
	text = snap->text[doc];
	if (text && len)
		*len = snap->len[doc];
	pthread_mutex_unlock(&snap->render_lock);
	return text;
}

void nt_snapshot_put(nt_snapshot *snap)
{
	if (!snap)
		return;
	nt_read_share *s = snap->share;
	pthread_mutex_lock(&s->lock);
	unref_locked(snap);
	pthread_mutex_unlock(&s->lock);
}

void nt_read_share_stats(nt_read_share *s, unsigned long *reads, unsigned long *served)
{
	pthread_mutex_lock(&s->lock);
	*reads = s->reads;
	*served = s->served;
	pthread_mutex_unlock(&s->lock);
}
