/* SPDX-License-Identifier: Apache-2.0 */
/* engine/plan_ids.c: the shape of an id, a plan taken once, expiry at the
 * TTL, the newest NT_PLAN_IDS_MAX kept (the oldest evicted, and told from
 * a used one), and the bound on the steps kept in all. */
#include "harness.h"
#include "engine/plan_ids.h"
#include "settings/setting.h"

#include <errno.h>

/* A plan of N sysctl steps (the kind does not matter to the store). */
static nt_plan nt_t_plan(int n)
{
	nt_plan p = { 0 };
	p.steps = calloc((size_t)n + 1, sizeof(nt_step));
	p.nsteps = n;
	for (int i = 0; i < n; i++) {
		p.steps[i].kind = &nt_setting_sysctl;
		snprintf(p.steps[i].target, sizeof(p.steps[i].target), "net.core.rmem_max");
	}
	p.warnings = json_array();
	p.reserved = json_object();
	return p;
}

static int put(nt_plan_ids *ids, int n, int64_t now, char *id)
{
	nt_plan p = nt_t_plan(n);
	json_t *profile = json_pack("{s:s}", "name", "x");
	int64_t exp;
	int r = nt_plan_ids_put(ids, &p, profile, NULL, now, id, &exp);
	CHECK(p.steps == NULL); /* taken */
	json_decref(profile);
	nt_plan_free(&p);
	return r;
}

static int take(nt_plan_ids *ids, const char *id, int64_t now, nt_plan_gone *gone, int64_t *txn)
{
	nt_kept_plan k;
	int64_t when;
	int r = nt_plan_ids_take(ids, id, now, &k, gone, &when, txn);
	nt_kept_plan_free(&k);
	return r;
}

int main(void)
{
	nt_plan_ids *ids;
	char id[NT_PLAN_ID_SIZE], id2[NT_PLAN_ID_SIZE], first[NT_PLAN_ID_SIZE];
	nt_plan_gone gone;
	int64_t txn;

	CHECK(nt_plan_id_valid("p-0123456789abcdef0123456789abcdef"));
	CHECK(!nt_plan_id_valid("p-0123456789ABCDEF0123456789abcdef"));
	CHECK(!nt_plan_id_valid("p-0123456789abcdef0123456789abcde"));
	CHECK(!nt_plan_id_valid("p-0123456789abcdef0123456789abcdef0"));
	CHECK(!nt_plan_id_valid("q-0123456789abcdef0123456789abcdef"));
	CHECK(!nt_plan_id_valid("42"));
	CHECK(!nt_plan_id_valid(""));
	CHECK(!nt_plan_id_valid(NULL));

	CHECK_INT(nt_plan_ids_new(&ids), 0);
	nt_plan_ids_set_ttl(ids, 10);
	nt_plan_ids_set_ttl(ids, 0); /* out of range: ignored */
	CHECK_INT(nt_plan_ids_ttl(ids), 10);

	/* Taken once, with its steps; then used (and by which transaction). */
	CHECK_INT(put(ids, 3, 1000, id), 0);
	CHECK(nt_plan_id_valid(id));
	nt_kept_plan k;
	int64_t when;
	CHECK_INT(nt_plan_ids_take(ids, id, 2000, &k, &gone, &when, &txn), 0);
	CHECK_INT(k.plan.nsteps, 3);
	CHECK_STR(json_string_value(json_object_get(k.profile, "name")), "x");
	CHECK_INT(k.expires_ms, 1000 + 10 * 1000);
	nt_kept_plan_free(&k);
	nt_plan_ids_used(ids, id, 7);
	CHECK_INT(take(ids, id, 2000, &gone, &txn), -ENOENT);
	CHECK_INT(gone, NT_PLAN_USED);
	CHECK_INT(txn, 7);

	/* Expired at the TTL, and told so. */
	CHECK_INT(put(ids, 1, 1000, id2), 0);
	CHECK(strcmp(id, id2) != 0);
	CHECK_INT(take(ids, id2, 1000 + 10 * 1000, &gone, &txn), -ENOENT);
	CHECK_INT(gone, NT_PLAN_EXPIRED);

	/* Unknown. */
	CHECK_INT(take(ids, "p-00000000000000000000000000000000", 0, &gone, &txn), -ENOENT);
	CHECK_INT(gone, NT_PLAN_UNKNOWN);

	/* The newest NT_PLAN_IDS_MAX: one more evicts the oldest live plan
	 * once no slot only remembers an id. */
	nt_plan_ids_free(ids);
	CHECK_INT(nt_plan_ids_new(&ids), 0);
	for (int i = 0; i < NT_PLAN_IDS_MAX; i++)
		CHECK_INT(put(ids, 1, 1000 + i, i == 0 ? first : id), 0);
	CHECK_INT(put(ids, 1, 5000, id2), 0);
	CHECK_INT(take(ids, first, 5000, &gone, &txn), -ENOENT);
	CHECK_INT(gone, NT_PLAN_UNKNOWN);
	CHECK_INT(take(ids, id, 5000, &gone, &txn), 0); /* the newest of the first batch stays */
	CHECK_INT(take(ids, id2, 5000, &gone, &txn), 0);

	/* The steps kept in all: a big plan evicts the older ones. */
	nt_plan_ids_free(ids);
	CHECK_INT(nt_plan_ids_new(&ids), 0);
	CHECK_INT(put(ids, NT_PLAN_IDS_STEPS_MAX / 2, 1000, first), 0);
	CHECK_INT(put(ids, NT_PLAN_IDS_STEPS_MAX / 2, 1001, id), 0);
	CHECK_INT(put(ids, 10, 1002, id2), 0);
	CHECK_INT(take(ids, first, 1003, &gone, &txn), -ENOENT);
	CHECK_INT(gone, NT_PLAN_UNKNOWN);
	CHECK_INT(take(ids, id, 1003, &gone, &txn), 0);
	CHECK_INT(take(ids, id2, 1003, &gone, &txn), 0);
	nt_plan_ids_free(ids);
	TEST_MAIN_END();
}
