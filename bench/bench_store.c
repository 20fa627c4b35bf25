/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark: the store's part of an apply and a rollback, without the host
 * or HTTP, against a history of past transactions: what a long-running
 * agent's database holds. Each transaction has the steps of the big host's
 * apply (1027 IRQs + 3 sysctls); the history alternates an apply and its
 * rollback (a new transaction on the same targets), all applied.
 *
 *   bench_store STATE_DIR [HISTORY] [ROUNDS]
 *
 * Creates STATE_DIR/nettune.db (STATE_DIR must not hold one), records
 * HISTORY transactions (default 200), then for ROUNDS rounds (default 11)
 * one more apply and rollback, timing each store call. Prints the medians
 * as one JSON object, in milliseconds:
 *   create     the journal of 1030 steps (one SQL transaction)
 *   stage      their 1030 results and the status (one SQL transaction)
 *   get        the transaction read back whole (the reply)
 *   conflict   the later-conflict check of rolling back the newest apply
 *              (no later transaction: what every rollback of the newest pays)
 *   conflict_old  the same check for the first apply of the history (the
 *              answer is the next transaction)
 * Put STATE_DIR on tmpfs: on a disk the figures are the disk's fsyncs. */
#include "bench/bench_util.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NIRQ 1027

static json_t *make_steps(bool back)
{
	json_t *steps = json_array();
	char target[16];
	const char *from = back ? "4-7" : "0-255", *to = back ? "0-255" : "4-7";
	for (int i = 0; steps && i < NIRQ; i++) {
		snprintf(target, sizeof(target), "%d", 100 + i);
		json_array_append_new(steps, json_pack("{s:s,s:s,s:s,s:s,s:s}", "kind",
						       "irq_affinity", "target", target, "interface",
						       "enp65s0f0", "before", from, "after", to));
	}
	static const char *const sysctls[] = { "net.core.rmem_max", "net.core.wmem_max",
					       "net.ipv4.tcp_rmem" };
	for (int i = 0; steps && i < 3; i++)
		json_array_append_new(steps, json_pack("{s:s,s:s,s:s,s:s}", "kind", "sysctl", "target",
						       sysctls[i], "before", back ? "2" : "1",
						       "after", back ? "1" : "2"));
	return steps;
}

/* One transaction through the store as the engine records it; its id, or
 * -1. T, when not NULL, receives the time of each call. */
static int64_t one(nt_store *s, const json_t *steps, int64_t rollback_of, nt_store_step_rec *recs,
		   double *t_create, double *t_stage, double *t_get)
{
	int64_t id = 0;
	int n = (int)json_array_size(steps);
	json_t *txn = json_pack("{s:s,s:n,s:s,s:s,s:[]}", "status", "applying", "profile", "client",
				"127.0.0.1", "identity", "", "warnings");
	json_t *doc = NULL;
	if (rollback_of)
		json_object_set_new(txn, "rollback_of", json_integer(rollback_of));
	double a = now_ms();
	int r = nt_store_txn_create(s, txn, steps, NULL, &id);
	double b = now_ms();
	json_decref(txn);
	if (r < 0)
		return -1;
	if (nt_store_txn_stage(s, id, recs, n, "applied", NULL, -1, true, 0) < 0)
		return -1;
	double c = now_ms();
	if (nt_store_txn_get(s, id, &doc) < 0)
		return -1;
	double d = now_ms();
	json_decref(doc);
	if (t_create) {
		*t_create = b - a;
		*t_stage = c - b;
		*t_get = d - c;
	}
	return id;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_store STATE_DIR [HISTORY] [ROUNDS]\n");
		return 2;
	}
	int history = argc > 2 ? atoi(argv[2]) : 200, rounds = argc > 3 ? atoi(argv[3]) : 11;
	char path[4096], err[256] = "";
	struct stat sb;
	snprintf(path, sizeof(path), "%s/nettune.db", argv[1]);
	if (history < 2 || rounds < 1 || stat(path, &sb) == 0) {
		fprintf(stderr, "bench_store: HISTORY >= 2, ROUNDS >= 1, and no %s yet\n", path);
		return 2;
	}
	nt_store *s = NULL;
	if (nt_store_open(path, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_store: %s\n", err);
		return 1;
	}
	json_t *fwd = make_steps(false), *back = make_steps(true);
	int n = (int)json_array_size(fwd);
	nt_store_step_rec *recs = calloc((size_t)n, sizeof(*recs));
	double *tc = calloc((size_t)rounds, sizeof(double)), *ts = calloc((size_t)rounds, sizeof(double));
	double *tg = calloc((size_t)rounds, sizeof(double)), *tk = calloc((size_t)rounds, sizeof(double));
	double *to = calloc((size_t)rounds, sizeof(double));
	int rc = 1;
	if (!fwd || !back || !recs || !tc || !ts || !tg || !tk || !to)
		goto out;
	for (int i = 0; i < n; i++)
		recs[i] = (nt_store_step_rec){ .idx = i, .result = "applied" };

	int64_t first = 0, last = 0, later;
	for (int h = 0; h < history; h += 2) {
		int64_t ap = one(s, fwd, 0, recs, NULL, NULL, NULL);
		if (ap < 0 || one(s, back, ap, recs, NULL, NULL, NULL) < 0)
			goto out;
		if (!first)
			first = ap;
	}
	for (int k = 0; k < rounds; k++) {
		if ((last = one(s, fwd, 0, recs, &tc[k], &ts[k], &tg[k])) < 0)
			goto out;
		double a = now_ms();
		if (nt_store_later_conflict(s, last, &later) < 0 || later != 0)
			goto out;
		double b = now_ms();
		if (nt_store_later_conflict(s, first, &later) < 0 || later != first + 1)
			goto out;
		double c = now_ms();
		tk[k] = b - a;
		to[k] = c - b;
		if (one(s, back, last, recs, NULL, NULL, NULL) < 0)
			goto out;
	}
	printf("{\"history\":%d,\"steps\":%d,\"rounds\":%d,\"create_ms\":%.3f,\"stage_ms\":%.3f,"
	       "\"get_ms\":%.3f,\"conflict_ms\":%.3f,\"conflict_old_ms\":%.3f}\n",
	       history, n, rounds, median(tc, rounds), median(ts, rounds), median(tg, rounds),
	       median(tk, rounds), median(to, rounds));
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "bench_store: a store call failed: %s\n", nt_store_errmsg(s));
	nt_store_close(s);
	json_decref(fwd);
	json_decref(back);
	free(recs);
	free(tc);
	free(ts);
	free(tg);
	free(tk);
	free(to);
	return rc;
}
