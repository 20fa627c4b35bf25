/* SPDX-License-Identifier: Apache-2.0 */
/* The later-conflict check of a rollback (nt_store_later_conflict) over a
 * history of many transactions on the same targets: the named cases (no
 * later transaction; a later applied one; a later one rolled back or
 * reverted; a later step that was skipped, or a skipped step of the
 * rolled-back transaction itself; a later one that is still applying),
 * then every transaction of a generated history against the answer worked
 * out here by brute force from what was recorded; and the last change of
 * each target (the other reader of the same index) in that history. */
#include "harness.h"
#include "store/store.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NTARGETS 12
#define MAXTXN 256
#define MAXSTEPS 8

/* What the test recorded, to work the expected answer out from. */
typedef struct rec_txn {
	int64_t id;
	const char *status;
	int n;
	int target[MAXSTEPS];
	bool applied[MAXSTEPS];
} rec_txn;

static rec_txn hist[MAXTXN];
static int nhist;

static bool holds_changes(const char *status)
{
	/* The statuses of store/status.c that may leave changes in place. */
	static const char *const in_place[] = { "applying", "applied", "pending_confirm",
						"rolling_back", "rollback_failed" };
	for (size_t i = 0; i < sizeof(in_place) / sizeof(in_place[0]); i++)
		if (!strcmp(status, in_place[i]))
			return true;
	return false;
}

/* Target T is "100 + T/2" under sysctl (even T) or irq_affinity (odd T):
 * the same name under the other kind is another target. */
static void target_name(int t, char *buf, size_t size)
{
	snprintf(buf, size, "%d", 100 + t / 2);
}

static const char *target_kind(int t)
{
	return t % 2 ? "irq_affinity" : "sysctl";
}

/* Record a transaction touching TARGETS[0..N) (APPLIED[i]: that step was
 * applied, else skipped) in STATUS; its id. */
static int64_t add(nt_store *s, const char *status, int n, const int *targets, const bool *applied)
{
	json_t *steps = json_array();
	nt_store_step_rec recs[MAXSTEPS];
	int64_t id = 0;
	char name[32];

	for (int i = 0; i < n; i++) {
		target_name(targets[i], name, sizeof(name));
		json_array_append_new(steps, json_pack("{s:s,s:s,s:s,s:s}", "kind",
						       target_kind(targets[i]), "target", name,
						       "before", "1", "after", "2"));
		recs[i] = (nt_store_step_rec){ .idx = i,
					       .result = applied[i] ? "applied" : "skipped" };
	}
	json_t *txn = json_pack("{s:s,s:n,s:s,s:s}", "status", "applying", "profile", "client", "",
				"identity", "");
	CHECK_INT(nt_store_txn_create(s, txn, steps, NULL, &id), 0);
	json_decref(txn);
	json_decref(steps);
	CHECK_INT(nt_store_txn_stage(s, id, recs, n, status, NULL, -1, true, 0), 0);
	if (nhist < MAXTXN) {
		rec_txn *h = &hist[nhist++];
		h->id = id;
		h->status = status;
		h->n = n;
		for (int i = 0; i < n; i++) {
			h->target[i] = targets[i];
			h->applied[i] = applied[i];
		}
	}
	return id;
}

static void set_status(nt_store *s, int64_t id, const char *status)
{
	CHECK_INT(nt_store_txn_set_status(s, id, status, NULL, -1, true, 0), 0);
	for (int i = 0; i < nhist; i++)
		if (hist[i].id == id)
			hist[i].status = status;
}

/* The answer by its definition: the smallest later id, in a status that
 * holds changes, with an applied step on a target that an applied step
 * of ID touched. */
static int64_t expected(int64_t id)
{
	const rec_txn *me = NULL;
	for (int i = 0; i < nhist; i++)
		if (hist[i].id == id)
			me = &hist[i];
	if (!me)
		return -1;
	for (int i = 0; i < nhist; i++) {
		const rec_txn *o = &hist[i];
		if (o->id <= id || !holds_changes(o->status))
			continue;
		for (int a = 0; a < me->n; a++)
			for (int b = 0; b < o->n; b++)
				if (me->applied[a] && o->applied[b] && me->target[a] == o->target[b])
					return o->id;
	}
	return 0;
}

static int64_t later_of(nt_store *s, int64_t id)
{
	int64_t later = -1;
	CHECK_INT(nt_store_later_conflict(s, id, &later), 0);
	return later;
}

int main(void)
{
	char dir[64], path[128], err[256] = "";
	nt_store *s = NULL;

	snprintf(dir, sizeof(dir), "/tmp/nt-conflict-XXXXXX");
	if (!mkdtemp(dir))
		SKIP("mkdtemp failed");
	snprintf(path, sizeof(path), "%s/nettune.db", dir);
	CHECK_INT(nt_store_open(path, &s, err, sizeof(err)), 0);
	if (!s)
		TEST_MAIN_END();

	/* Forty earlier transactions on the targets the subject touches: a
	 * history the check must look past, not into. */
	const bool all[MAXSTEPS] = { true, true, true, true, true, true, true, true };
	for (int k = 0; k < 40; k++) {
		int t[4] = { k % NTARGETS, (k + 3) % NTARGETS, (k + 5) % NTARGETS, 6 };
		add(s, k % 3 ? "applied" : "rolled_back", 4, t, all);
	}
	/* The subject: targets 0..5 and 8 applied, 6 skipped (already at its
	 * value). */
	int subj_t[8] = { 0, 1, 2, 3, 4, 5, 8, 6 };
	bool subj_a[8] = { true, true, true, true, true, true, true, false };
	int64_t subj = add(s, "applied", 8, subj_t, subj_a);

	/* No later transaction. */
	CHECK_INT(later_of(s, subj), 0);
	/* An id no transaction has: nothing touched, no conflict. */
	CHECK_INT(later_of(s, subj + 1000), 0);

	/* Later ones that hold no changes: rolled back, reverted. */
	int t3[1] = { 3 }, t4[1] = { 4 };
	int64_t rb = add(s, "rolled_back", 1, t3, all);
	int64_t rv = add(s, "reverted", 1, t4, all);
	CHECK_INT(later_of(s, subj), 0);
	(void)rb;
	(void)rv;
	/* A later one whose step on a shared target was skipped. */
	int t2[1] = { 2 };
	bool skipped[1] = { false };
	int64_t sk = add(s, "applied", 1, t2, skipped);
	CHECK_INT(later_of(s, subj), 0);
	(void)sk;
	/* A later one changing the target the subject skipped (6), one
	 * changing a target the subject never touched (10), and one changing
	 * irq_affinity "104" (9) where the subject changed sysctl "104" (8):
	 * none conflicts. */
	int t6[1] = { 6 }, t10[1] = { 10 }, t9[1] = { 9 };
	add(s, "applied", 1, t6, all);
	add(s, "applied", 1, t10, all);
	add(s, "applied", 1, t9, all);
	CHECK_INT(later_of(s, subj), 0);

	/* A later applied one on target 1: the conflict. */
	int t1[1] = { 1 };
	int64_t hit = add(s, "applied", 1, t1, all);
	CHECK_INT(later_of(s, subj), hit);
	/* Another after it on target 0: still the earliest. */
	int t0[1] = { 0 };
	int64_t hit2 = add(s, "applied", 1, t0, all);
	CHECK_INT(later_of(s, subj), hit);
	/* The first rolled back: the next one is the answer. */
	set_status(s, hit, "rolled_back");
	CHECK_INT(later_of(s, subj), hit2);
	/* Still applying, or a rollback that failed: changes may be in place. */
	set_status(s, rb, "rollback_failed");
	CHECK_INT(later_of(s, subj), rb);
	int t5[1] = { 5 };
	set_status(s, rb, "rolled_back");
	set_status(s, hit2, "reverted");
	CHECK_INT(later_of(s, subj), 0);
	int64_t ing = add(s, "applying", 1, t5, all);
	CHECK_INT(later_of(s, subj), ing);
	set_status(s, ing, "recovered");
	CHECK_INT(later_of(s, subj), 0);

	/* A generated history: every transaction's answer against the
	 * definition. A fixed LCG keeps it the same on every run. */
	uint32_t x = 12345;
	while (nhist < 200) {
		int n = 1, t[MAXSTEPS];
		bool a[MAXSTEPS];
		x = x * 1103515245u + 12345u;
		n = 1 + (int)((x >> 16) % 4);
		for (int i = 0; i < n; i++) {
			x = x * 1103515245u + 12345u;
			t[i] = (int)((x >> 16) % NTARGETS);
			a[i] = (x >> 8) % 5 != 0;
		}
		x = x * 1103515245u + 12345u;
		static const char *const st[] = { "applied", "applied", "rolled_back", "reverted",
						  "pending_confirm", "recovered" };
		add(s, st[(x >> 16) % 6], n, t, a);
	}
	int wrong = 0, conflicts = 0;
	for (int i = 0; i < nhist; i++) {
		int64_t want = expected(hist[i].id), got = later_of(s, hist[i].id);
		if (got != want) {
			wrong++;
			fprintf(stderr, "transaction %lld: later %lld, expected %lld\n",
				(long long)hist[i].id, (long long)got, (long long)want);
		}
		conflicts += want > 0;
	}
	CHECK_INT(wrong, 0);
	/* The history holds both answers, so the comparison means something. */
	CHECK(conflicts > 20 && conflicts < nhist - 20);

	/* The last change of each target, which reads the same index newest
	 * first: the newest transaction with an applied step on it, whatever
	 * its status. */
	for (int t = 0; t < NTARGETS; t++) {
		int64_t want = 0;
		for (int i = 0; i < nhist; i++)
			for (int k = 0; k < hist[i].n; k++)
				if (hist[i].target[k] == t && hist[i].applied[k])
					want = hist[i].id;
		char name[32];
		json_t *lc = NULL;
		target_name(t, name, sizeof(name));
		int r = nt_store_last_change(s, target_kind(t), name, &lc);
		CHECK_MSG(want ? r == 0 : r == -ENOENT, "target %d: %d", t, r);
		CHECK_INT(lc ? json_integer_value(json_object_get(lc, "txn")) : 0, want);
		json_decref(lc);
	}

	nt_store_close(s);
	char f[160];
	static const char *const sfx[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(f, sizeof(f), "%s%s", path, sfx[i]);
		unlink(f);
	}
	rmdir(dir);
	TEST_MAIN_END();
}
