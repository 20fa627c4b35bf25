/* SPDX-License-Identifier: Apache-2.0 */
#include "engine/plan_ids.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

typedef enum { SLOT_EMPTY, SLOT_LIVE, SLOT_EXPIRED, SLOT_USED } slot_state;

typedef struct slot {
	slot_state state;
	char id[NT_PLAN_ID_SIZE];
	uint64_t seq; /* order of making: the smallest is the oldest */
	int64_t when_ms; /* LIVE: created; EXPIRED: expired; USED: taken */
	int64_t txn; /* USED: the transaction that used it, 0 none */
	nt_kept_plan kept; /* LIVE only */
} slot;

struct nt_plan_ids {
	pthread_mutex_t lock;
	int ttl_s;
	uint64_t seq;
	int steps; /* steps of the live plans */
	slot slots[NT_PLAN_IDS_MAX];
};

void nt_kept_plan_free(nt_kept_plan *k)
{
	if (!k)
		return;
	nt_plan_free(&k->plan);
	json_decref(k->profile);
	free(k->profile_name);
	memset(k, 0, sizeof(*k));
}

int nt_plan_ids_new(nt_plan_ids **out)
{
	nt_plan_ids *p = calloc(1, sizeof(*p));
	*out = NULL;
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	p->ttl_s = NT_PLAN_TTL_DEFAULT_S;
	*out = p;
	return 0;
}

void nt_plan_ids_free(nt_plan_ids *p)
{
	if (!p)
		return;
	for (int i = 0; i < NT_PLAN_IDS_MAX; i++)
		nt_kept_plan_free(&p->slots[i].kept);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void nt_plan_ids_set_ttl(nt_plan_ids *p, int ttl_s)
{
	if (ttl_s < 1 || ttl_s > 86400)
		return;
	pthread_mutex_lock(&p->lock);
	p->ttl_s = ttl_s;
	pthread_mutex_unlock(&p->lock);
}

int nt_plan_ids_ttl(const nt_plan_ids *p)
{
	return p->ttl_s;
}

bool nt_plan_id_valid(const char *id)
{
	if (!id || strncmp(id, "p-", 2) != 0 || strlen(id) != NT_PLAN_ID_SIZE - 1)
		return false;
	for (const char *c = id + 2; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return true;
}

/* Under the lock: a live plan past its expiry gives up its steps (the
 * memory of up to 64 big plans) and is remembered as expired. */
static void expire(nt_plan_ids *p, slot *s, int64_t now_ms)
{
	if (s->state != SLOT_LIVE || now_ms < s->kept.expires_ms)
		return;
	s->when_ms = s->kept.expires_ms;
	p->steps -= s->kept.plan.nsteps;
	nt_kept_plan_free(&s->kept);
	s->state = SLOT_EXPIRED;
}

/* Under the lock: the slot for a new plan: an empty one, else the oldest
 * of those that only remember an id, else the oldest live plan. */
/* Under the lock: forget S (an evicted id is unknown). */
static void drop(nt_plan_ids *p, slot *s)
{
	if (s->state == SLOT_LIVE)
		p->steps -= s->kept.plan.nsteps;
	nt_kept_plan_free(&s->kept);
	memset(s, 0, sizeof(*s));
}

static slot *free_slot(nt_plan_ids *p, int64_t now_ms)
{
	slot *empty = NULL, *old_gone = NULL, *old_live = NULL;
	for (int i = 0; i < NT_PLAN_IDS_MAX; i++) {
		slot *s = &p->slots[i];
		expire(p, s, now_ms);
		if (s->state == SLOT_EMPTY) {
			empty = empty ? empty : s;
		} else if (s->state == SLOT_LIVE) {
			if (!old_live || s->seq < old_live->seq)
				old_live = s;
		} else if (!old_gone || s->seq < old_gone->seq) {
			old_gone = s;
		}
	}
	slot *s = empty ? empty : old_gone ? old_gone : old_live;
	drop(p, s);
	return s;
}

/* Under the lock: room for a plan of N more steps, evicting the oldest
 * live plans while the steps kept would pass NT_PLAN_IDS_STEPS_MAX (one
 * plan bigger than that is kept alone). */
static void make_room(nt_plan_ids *p, int n)
{
	while (p->steps > 0 && p->steps + n > NT_PLAN_IDS_STEPS_MAX) {
		slot *old = NULL;
		for (int i = 0; i < NT_PLAN_IDS_MAX; i++)
			if (p->slots[i].state == SLOT_LIVE && (!old || p->slots[i].seq < old->seq))
				old = &p->slots[i];
		if (!old)
			break;
		drop(p, old);
	}
}

static slot *find(nt_plan_ids *p, const char *id)
{
	for (int i = 0; i < NT_PLAN_IDS_MAX; i++)
		if (p->slots[i].state != SLOT_EMPTY && strcmp(p->slots[i].id, id) == 0)
			return &p->slots[i];
	return NULL;
}

int nt_plan_ids_put(nt_plan_ids *p, nt_plan *plan, json_t *profile, const char *profile_name,
		    int64_t now_ms, char *id, int64_t *expires_ms)
{
	unsigned char rnd[16];
	char *name = NULL;
	/* An id is a capability to apply what it names: not guessable. */
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return errno ? -errno : -EIO;
	if (profile_name && !(name = strdup(profile_name)))
		return -ENOMEM;
	snprintf(id, NT_PLAN_ID_SIZE, "p-");
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(id + 2 + 2 * i, 3, "%02x", rnd[i]);
	pthread_mutex_lock(&p->lock);
	slot *s = free_slot(p, now_ms);
	make_room(p, plan->nsteps);
	p->steps += plan->nsteps;
	s->state = SLOT_LIVE;
	s->seq = ++p->seq;
	s->when_ms = now_ms;
	memcpy(s->id, id, NT_PLAN_ID_SIZE);
	s->kept.plan = *plan;
	s->kept.profile = json_incref(profile);
	s->kept.profile_name = name;
	s->kept.created_ms = now_ms;
	s->kept.expires_ms = *expires_ms = now_ms + (int64_t)p->ttl_s * 1000;
	pthread_mutex_unlock(&p->lock);
	memset(plan, 0, sizeof(*plan));
	return 0;
}

int nt_plan_ids_take(nt_plan_ids *p, const char *id, int64_t now_ms, nt_kept_plan *out,
		     nt_plan_gone *gone, int64_t *when_ms, int64_t *txn)
{
	int r = -ENOENT;
	memset(out, 0, sizeof(*out));
	*gone = NT_PLAN_UNKNOWN;
	*when_ms = *txn = 0;
	pthread_mutex_lock(&p->lock);
	slot *s = find(p, id);
	if (s)
		expire(p, s, now_ms);
	if (!s) {
		*gone = NT_PLAN_UNKNOWN;
	} else if (s->state == SLOT_LIVE) {
		*out = s->kept;
		p->steps -= s->kept.plan.nsteps;
		memset(&s->kept, 0, sizeof(s->kept));
		s->state = SLOT_USED;
		s->when_ms = now_ms;
		r = 0;
	} else {
		*gone = s->state == SLOT_EXPIRED ? NT_PLAN_EXPIRED : NT_PLAN_USED;
		*when_ms = s->when_ms;
		*txn = s->txn;
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

int nt_plan_ids_peek(nt_plan_ids *p, const char *id, int64_t now_ms, nt_plan_gone *gone,
		     int64_t *when_ms, int64_t *txn)
{
	int r = -ENOENT;
	*gone = NT_PLAN_UNKNOWN;
	*when_ms = *txn = 0;
	pthread_mutex_lock(&p->lock);
	slot *s = find(p, id);
	if (s)
		expire(p, s, now_ms);
	if (s && s->state == SLOT_LIVE) {
		r = 0;
	} else if (s) {
		*gone = s->state == SLOT_EXPIRED ? NT_PLAN_EXPIRED : NT_PLAN_USED;
		*when_ms = s->when_ms;
		*txn = s->txn;
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

void nt_plan_ids_used(nt_plan_ids *p, const char *id, int64_t txn)
{
	pthread_mutex_lock(&p->lock);
	slot *s = find(p, id);
	if (s && s->state == SLOT_USED)
		s->txn = txn;
	pthread_mutex_unlock(&p->lock);
}
