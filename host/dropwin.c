/* SPDX-License-Identifier: Apache-2.0 */
#include "host/dropwin.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
	char nic[IF_NAMESIZE];
	unsigned rx; /* the RX ring when the window started */
	uint64_t base; /* the drop counter at start_ms */
	int64_t start_ms;
	uint64_t prev_drops; /* the window before, when there was one */
	int64_t prev_ms;
	bool changed; /* the current window began with a ring change: no window before it counts */
	int64_t seen_ms; /* when the agent first saw the NIC */
} entry;

struct nt_dropwin {
	pthread_mutex_t lock;
	int64_t window_ms;
	entry *e;
	int n;
};

nt_dropwin *nt_dropwin_new(int64_t window_ms)
{
	nt_dropwin *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	w->window_ms = window_ms > 0 ? window_ms : NT_DROPWIN_DEFAULT_MS;
	return w;
}

void nt_dropwin_free(nt_dropwin *w)
{
	if (!w)
		return;
	pthread_mutex_destroy(&w->lock);
	free(w->e);
	free(w);
}

static entry *find(nt_dropwin *w, const char *nic)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->e[i].nic, nic))
			return &w->e[i];
	return NULL;
}

static void restart(entry *e, unsigned rx, uint64_t drops, int64_t now_ms, bool changed)
{
	e->rx = rx;
	e->base = drops;
	e->start_ms = now_ms;
	e->prev_drops = 0;
	e->prev_ms = 0;
	e->changed = changed;
}

json_t *nt_dropwin_update(nt_dropwin *w, const nt_topology *t, int64_t now_ms)
{
	json_t *out = json_object();
	if (!out)
		return NULL;
	pthread_mutex_lock(&w->lock);
	for (int i = 0; i < t->nnics; i++) {
		const nt_nic *nic = &t->nics[i];
		if (!nic->has_rings || !nic->has_stats)
			continue;
		uint64_t drops = nic->rx_dropped + nic->rx_missed + nic->rx_fifo_errors;
		entry *e = find(w, nic->name);
		if (!e) {
			entry *grown = realloc(w->e, sizeof(*grown) * (size_t)(w->n + 1));
			if (!grown)
				continue;
			w->e = grown;
			e = &w->e[w->n++];
			memset(e, 0, sizeof(*e));
			snprintf(e->nic, sizeof(e->nic), "%s", nic->name);
			restart(e, nic->rings.rx, drops, now_ms, false);
			e->seen_ms = now_ms;
			continue;
		}
		if (e->rx != nic->rings.rx)
			restart(e, nic->rings.rx, drops, now_ms, true);
		else if (drops < e->base)
			restart(e, nic->rings.rx, drops, now_ms, e->changed);
		uint64_t cur = drops - e->base;
		int64_t span = now_ms - e->start_ms;
		/* Until a whole window has been watched, a few quiet seconds say
		 * nothing of a NIC that dropped since boot: it is judged on its
		 * counters since boot (left out here), so the finding does not
		 * vanish at an agent's second look. A ring change is judged at
		 * once: what came after it is all that counts. */
		if (e->changed || now_ms - e->seen_ms >= w->window_ms) {
			json_t *o = json_pack("{s:I, s:I, s:s}", "drops", (json_int_t)(cur + e->prev_drops),
					      "over_ms", (json_int_t)(span + e->prev_ms), "since",
					      e->changed ? "ring-change" : "window");
			if (o)
				json_object_set_new(out, nic->name, o);
		}
		if (span >= w->window_ms) {
			/* Roll: this window becomes the one before. */
			e->prev_drops = cur;
			e->prev_ms = span;
			e->base = drops;
			e->start_ms = now_ms;
			e->changed = false;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return out;
}
