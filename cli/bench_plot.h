/* SPDX-License-Identifier: Apache-2.0 */
/* The chart of an A/B benchmark run (nettune bench-run --compare --plot):
 * each arm's rounds as a strip of dots, its median as a bar, a value axis
 * with its unit, as a self-contained SVG document. Pure: the caller writes
 * the text where it wants. */
#ifndef NT_CLI_BENCH_PLOT_H
#define NT_CLI_BENCH_PLOT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct nt_plot_arm {
	const char *name; /* "baseline", "candidate (tuned.json)" */
	const double *values; /* in rounds' order */
	size_t n;
	double median;
	/* nt_bench_svg_arms only: an interval drawn beside the dots, in the
	 * values' unit (ends not finite or not above 0: not drawn), and a
	 * note after the round count (", dropped"; may be NULL). */
	bool interval;
	double lo, hi;
	const char *note;
} nt_plot_arm;

/* The SVG of the two arms A and B with TITLE and UNIT (the values' unit:
 * "bits/s" is shown scaled, "Gbit/s"; anything else as given, may be "").
 * Text is escaped for XML. Returns a string the caller frees, or NULL
 * (no memory). */
char *nt_bench_svg(const char *title, const char *unit, const nt_plot_arm *a, const nt_plot_arm *b);

/* The SVG of NARMS arms side by side (nettune tune --plot: the baseline
 * and each candidate with its interval), as nt_bench_svg draws two. */
char *nt_bench_svg_arms(const char *title, const char *unit, const nt_plot_arm *arms, size_t narms);

#endif
