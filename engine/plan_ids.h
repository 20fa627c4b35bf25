/* SPDX-License-Identifier: Apache-2.0 */
/* Plans kept by id, so that an apply can carry out exactly the plan a
 * person (or the Ansible module's diff, or the web view's preview)
 * reviewed: POST /v1/plan keeps what it planned under a new id, and
 * POST /v1/transactions {"plan_id": ID} takes it out again, once.
 *
 * In memory only, for a short time (the TTL, 10 minutes by default): a
 * plan is a moment's view of the host, and after an agent restart it is
 * planned again. At most NT_PLAN_IDS_MAX are kept, holding at most
 * NT_PLAN_IDS_STEPS_MAX steps in all (a step is about 1 KB: a 1000-IRQ
 * plan is a megabyte); a new one evicts the oldest, so an id can also be
 * unknown because many (or big) plans were made since. An id that was taken, or that expired, is remembered (without
 * its steps) while its slot lasts, so that its reuse is told apart from
 * an id that never was. Thread-safe. */
#ifndef NT_PLAN_IDS_H
#define NT_PLAN_IDS_H

#include "engine/plan.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define NT_PLAN_IDS_MAX 64
#define NT_PLAN_IDS_STEPS_MAX 8192
#define NT_PLAN_TTL_DEFAULT_S 600
/* "p-" and 32 lower-case hex digits (128 random bits), and the NUL. */
#define NT_PLAN_ID_SIZE 35

typedef struct nt_plan_ids nt_plan_ids;

/* A plan taken out by its id: the caller owns it all
 * (nt_kept_plan_free). */
typedef struct nt_kept_plan {
	nt_plan plan;
	json_t *profile; /* the profile it was made from */
	char *profile_name; /* the stored profile's name it came from, or NULL */
	int64_t created_ms, expires_ms;
} nt_kept_plan;

void nt_kept_plan_free(nt_kept_plan *k);

/* What became of an id that cannot be taken. */
typedef enum {
	NT_PLAN_UNKNOWN, /* never made here, or evicted */
	NT_PLAN_EXPIRED,
	NT_PLAN_USED, /* taken already (by an apply, see NT_PLAN_USED's txn) */
} nt_plan_gone;

int nt_plan_ids_new(nt_plan_ids **out);
void nt_plan_ids_free(nt_plan_ids *p);
/* Seconds a plan is kept (1..86400; others are ignored). */
void nt_plan_ids_set_ttl(nt_plan_ids *p, int ttl_s);
int nt_plan_ids_ttl(const nt_plan_ids *p);

/* Whether ID has the shape of a plan id (only the shape). */
bool nt_plan_id_valid(const char *id);

/* Keep PLAN (its steps, warnings and reserved are taken: PLAN is zeroed)
 * made from PROFILE (a reference is taken) or the stored PROFILE_NAME
 * (copied; NULL for an inline profile), at NOW_MS. Its new id goes to ID
 * (NT_PLAN_ID_SIZE bytes) and its expiry to *EXPIRES_MS. Returns 0, or
 * -ENOMEM / -errno (no random bytes) with PLAN left to the caller. */
int nt_plan_ids_put(nt_plan_ids *p, nt_plan *plan, json_t *profile, const char *profile_name,
		    int64_t now_ms, char *id, int64_t *expires_ms);
/* Take the plan ID out, at NOW_MS: 0 with OUT filled (the id is used from
 * now on), or -ENOENT with *GONE saying why and *WHEN_MS when it expired
 * (NT_PLAN_EXPIRED) or was used (NT_PLAN_USED), and *TXN the transaction
 * that used it (0 when none did: its targets had moved). */
int nt_plan_ids_take(nt_plan_ids *p, const char *id, int64_t now_ms, nt_kept_plan *out,
		     nt_plan_gone *gone, int64_t *when_ms, int64_t *txn);
/* nt_plan_ids_take without taking: 0 when ID could be taken at NOW_MS,
 * else -ENOENT with *GONE, *WHEN_MS and *TXN as there. */
int nt_plan_ids_peek(nt_plan_ids *p, const char *id, int64_t now_ms, nt_plan_gone *gone,
		     int64_t *when_ms, int64_t *txn);
/* Say that the plan ID taken at NOW_MS went to transaction TXN (0: none,
 * its targets had moved), for a later reuse's answer. */
void nt_plan_ids_used(nt_plan_ids *p, const char *id, int64_t txn);

#endif
