/* SPDX-License-Identifier: Apache-2.0 */
/* Benchmark: the cost of one topology read (whole, as the CLI does, and
 * through the agent's host model cache, static part kept), one rendering
 * of its document (jansson, as the reference, and the text writer the API
 * and CLI use) and one diagnosis on a host tree (default: the synthetic
 * 256-CPU host that tests/fixtures/gen/mkhost.py big writes). Prints the
 * median of N runs. Not a test: speed is measured here, never asserted in
 * ctest. */
#include "kernel/ctx.h"
#include "bench/bench_util.h"
#include "diagnose/diagnose.h"
#include "host/hostcache.h"
#include "host/topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : "/";
	int runs = argc > 2 ? atoi(argv[2]) : 20;
	int held = argc > 3 ? atoi(argv[3]) : 8192; /* the agent's default */
	nt_ctx ctx;
	if (runs < 1 || nt_ctx_init(&ctx, root) < 0) {
		fprintf(stderr, "usage: bench_topology ROOT [RUNS [HELD_FILES]]\n");
		return 2;
	}
	double *rd = calloc((size_t)runs, sizeof(double)), *js = calloc((size_t)runs, sizeof(double)),
	       *dg = calloc((size_t)runs, sizeof(double)), *cr = calloc((size_t)runs, sizeof(double)),
	       *tx = calloc((size_t)runs, sizeof(double));
	nt_host_cache *hc = NULL;
	/* Files held open as the agent holds them (by default, its default
	 * budget; 0 to compare with none). */
	if (!rd || !js || !dg || !cr || !tx || nt_host_cache_new(&ctx, &hc) < 0 ||
	    nt_host_cache_hold_files(hc, held) < 0)
		return 1;
	int nics = 0, irqs = 0, cpus = 0;
	for (int i = 0; i < runs; i++) {
		nt_topology *t;
		double a = now_ms();
		if (nt_topology_read(&ctx, &t) < 0)
			return 1;
		double b = now_ms();
		json_t *doc = nt_topology_to_json(t);
		char *s = json_dumps(doc, JSON_COMPACT);
		double c = now_ms();
		nt_diag_options o = { .rtt_ms = 10 };
		json_t *d = nt_diagnose(t, &o);
		double e = now_ms();
		char *text = nt_topology_to_text(t, NULL);
		double f = now_ms();
		nt_topology *ct;
		if (nt_host_cache_read(hc, &ct) < 0)
			return 1;
		double g = now_ms();
		nt_topology_free(ct);
		free(text);
		rd[i] = b - a;
		js[i] = c - b;
		dg[i] = e - c;
		tx[i] = f - e;
		cr[i] = g - f;
		nics = t->nnics;
		irqs = t->nirqs;
		cpus = nt_cpuset_count(&t->cpus_online);
		free(s);
		json_decref(doc);
		json_decref(d);
		nt_topology_free(t);
	}
	printf("host %s: %d CPUs, %d NICs, %d IRQs; median of %d runs\n", root, cpus, nics, irqs, runs);
	printf("  topology read   %8.2f ms   (whole, as the CLI)\n", median(rd, runs));
	printf("  cached read     %8.2f ms   (static part from the host model cache, IRQ files held\n"
	       "                              open: %d, as the agent)\n",
	       median(cr, runs), nt_host_cache_held(hc));
	printf("  render JSON     %8.2f ms   (jansson build + dump)\n", median(js, runs));
	printf("  render text     %8.2f ms   (the text writer the API and CLI use)\n", median(tx, runs));
	printf("  diagnose        %8.2f ms\n", median(dg, runs));
	nt_host_cache_free(hc);
	free(rd);
	free(js);
	free(dg);
	free(cr);
	free(tx);
	return 0;
}
