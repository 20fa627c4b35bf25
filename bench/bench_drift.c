/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark: the cost of one drift check (agent/drift.c) on a host tree:
 * read the desired state, re-plan it against the host as it is now (a full
 * topology read and placement) and compare. The desired profile places
 * every NIC IRQ (policy local) and sets two sysctls; it is applied once
 * first, so the timed checks find the host in sync (the steady state), then
 * once more with one sysctl changed behind the agent's back (policy report:
 * found, not repaired). Works on a COPY of a host tree (never on /).
 *   bench_drift ROOT_COPY STATE_DIR [RUNS] */
#include "agent/drift.h"
#include "bench/bench_util.h"
#include "engine/txn.h"
#include "kernel/ctx.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_drift ROOT_COPY STATE_DIR [RUNS]\n");
		return 2;
	}
	int runs = argc > 3 ? atoi(argv[3]) : 20;
	nt_ctx ctx;
	nt_store *store = NULL;
	nt_txn_engine *e = NULL;
	nt_drift *d = NULL;
	char path[PATH_MAX + 16], err[512];
	if (runs < 1 || nt_ctx_init(&ctx, argv[1]) < 0 || ctx.live) {
		fprintf(stderr, "bench_drift: ROOT_COPY must be a host tree (a copy), not /\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/nettune.db", argv[2]);
	if (nt_store_open(path, &store, err, sizeof(err)) < 0 ||
	    nt_txn_engine_new(&ctx, store, NULL, &e) < 0 || nt_txn_engine_start(e) < 0) {
		fprintf(stderr, "bench_drift: cannot open the engine in %s: %s\n", argv[2], err);
		return 1;
	}
	nt_drift_config cfg = { .policy = NT_DRIFT_REPORT };
	if (nt_drift_new(&ctx, e, store, &cfg, NULL, NULL, false, &d) < 0)
		return 1;
	json_t *profile = json_pack("{s:s, s:[{s:s, s:s, s:s}], s:{s:s, s:s}}", "name", "bench",
				    "irq_affinity", "interface", "*", "policy", "local",
				    "exclude_cpus", "0", "sysctl", "net.core.rmem_max", "16777216",
				    "net.ipv4.tcp_rmem", "4096 87380 16777216");
	nt_txn_request req = { .profile = profile, .client = "bench", .identity = "",
			       .persist = true };
	nt_txn_outcome o = { 0 };
	if (nt_txn_apply(e, &req, &o) < 0) {
		fprintf(stderr, "bench_drift: apply: %s\n", o.message);
		return 1;
	}
	int steps = (int)json_array_size(json_object_get(o.doc, "steps"));
	nt_txn_outcome_free(&o);

	double *ck = calloc((size_t)runs, sizeof(double));
	for (int i = 0; i < runs; i++) {
		double a = now_ms();
		nt_drift_check(d, "drift");
		ck[i] = now_ms() - a;
	}
	json_t *rep = nt_drift_report(d);
	const char *st = json_string_value(json_object_get(rep, "status"));
	printf("host %s: desired profile of %d steps; median of %d checks\n", argv[1], steps, runs);
	printf("  check, in sync  %8.2f ms  (status %s)\n", median(ck, runs), st ? st : "?");
	json_decref(rep);

	if (nt_write_str(&ctx, "1234", "/proc/sys/net/core/rmem_max") == 0) {
		double a = now_ms();
		nt_drift_check(d, "drift");
		double b = now_ms();
		rep = nt_drift_report(d);
		printf("  check, 1 drift  %8.2f ms  (status %s, %zu target)\n", b - a,
		       json_string_value(json_object_get(rep, "status")),
		       json_array_size(json_object_get(rep, "targets")));
		json_decref(rep);
	}
	free(ck);
	json_decref(profile);
	nt_drift_free(d);
	nt_txn_engine_close(e);
	nt_store_close(store);
	return 0;
}
