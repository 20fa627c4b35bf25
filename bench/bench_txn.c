/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark: plan, apply and roll back a profile that places every NIC IRQ
 * of a host (policy local) and sets buffer sysctls, through the real engine
 * and SQLite journal, on a COPY of a host tree (never on /). Prints the
 * median of N rounds and the number of steps, and for reference the bare
 * cost of the same writes: a loop of open, write, close of the
 * smp_affinity_list of every IRQ the plan moves (its current value, so the
 * tree is left as it was).
 *   bench_txn ROOT_COPY STATE_DIR [ROUNDS] */
#include "kernel/ctx.h"
#include "bench/bench_util.h"
#include "engine/txn.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The reference: write each IRQ step's before-value to its
 * smp_affinity_list, with nothing around it. Returns the milliseconds
 * taken, or -1. */
static double bare_loop(const nt_ctx *ctx, const json_t *steps)
{
	size_t i;
	json_t *s;
	char path[PATH_MAX + 64], val[300];
	double a = now_ms();
	json_array_foreach(steps, i, s) {
		if (strcmp(json_string_value(json_object_get(s, "kind")), "irq_affinity") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/proc/irq/%s/smp_affinity_list", ctx->root,
			 json_string_value(json_object_get(s, "target")));
		int n = snprintf(val, sizeof(val), "%s\n", json_string_value(json_object_get(s, "before")));
		int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd < 0 || write(fd, val, (size_t)n) != n) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return now_ms() - a;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_txn ROOT_COPY STATE_DIR [ROUNDS]\n");
		return 2;
	}
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	nt_ctx ctx;
	nt_txn_engine *e = NULL;
	if (rounds < 1 || nt_ctx_init(&ctx, argv[1]) < 0 || ctx.live) {
		fprintf(stderr, "bench_txn: ROOT_COPY must be a host tree (a copy), not /\n");
		return 2;
	}
	if (nt_txn_engine_open(&ctx, argv[2], &e) < 0 || !e) {
		fprintf(stderr, "bench_txn: cannot open the engine in %s\n", argv[2]);
		return 1;
	}
	json_t *profile = json_pack("{s:s, s:[{s:s, s:s, s:s}], s:{s:s, s:s}}", "name", "bench", "irq_affinity",
				    "interface", "*", "policy", "local", "exclude_cpus", "0", "sysctl",
				    "net.core.rmem_max", "16777216", "net.ipv4.tcp_rmem", "4096 87380 16777216");
	double *pl = calloc((size_t)rounds, sizeof(double)), *ap = calloc((size_t)rounds, sizeof(double)),
	       *rb = calloc((size_t)rounds, sizeof(double)), *bl = calloc((size_t)rounds, sizeof(double));
	int steps = 0;
	nt_txn_request req = { .profile = profile, .client = "bench", .identity = "" };
	for (int i = 0; i < rounds; i++) {
		nt_txn_outcome o;
		memset(&o, 0, sizeof(o));
		double a = now_ms();
		if (nt_txn_plan(e, &req, &o) < 0) {
			fprintf(stderr, "plan failed: %s\n", o.message);
			return 1;
		}
		double b = now_ms();
		steps = (int)json_array_size(json_object_get(o.doc, "steps"));
		bl[i] = bare_loop(&ctx, json_object_get(o.doc, "steps"));
		if (bl[i] < 0) {
			fprintf(stderr, "the bare write loop failed\n");
			return 1;
		}
		nt_txn_outcome_free(&o);
		memset(&o, 0, sizeof(o));
		if (nt_txn_apply(e, &req, &o) < 0) {
			fprintf(stderr, "apply failed: %s\n", o.message);
			return 1;
		}
		double c = now_ms();
		int64_t id = json_integer_value(json_object_get(o.doc, "id"));
		nt_txn_outcome_free(&o);
		memset(&o, 0, sizeof(o));
		nt_txn_request rr = { .client = "bench", .identity = "" };
		if (nt_txn_rollback(e, id, false, &rr, &o) < 0) {
			fprintf(stderr, "rollback failed: %s\n", o.message);
			return 1;
		}
		double d = now_ms();
		nt_txn_outcome_free(&o);
		pl[i] = b - a;
		ap[i] = c - b;
		rb[i] = d - c;
	}
	printf("host %s: %d steps a transaction; median of %d rounds\n", argv[1], steps, rounds);
	printf("  plan (read host + validate + before-values)  %8.2f ms\n", median(pl, rounds));
	printf("  apply (journal, write, read back, record)     %8.2f ms\n", median(ap, rounds));
	printf("  rollback (as a new transaction)               %8.2f ms\n", median(rb, rounds));
	printf("  bare loop (open, write, close each IRQ)       %8.2f ms\n", median(bl, rounds));
	json_decref(profile);
	nt_txn_engine_close(e);
	return 0;
}
