/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/bench_judge.h"
#include "cli/exit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nt_bench_parse_gain(const char *s, double *out)
{
	if (!s || !*s)
		return -EINVAL;
	char *end;
	double v = strtod(s, &end);
	if (end == s || (*end && strcmp(end, "%")) || !isfinite(v) || v < 0 || v > 1000)
		return -EINVAL;
	*out = v / 100;
	return 0;
}

void nt_bench_judge(double base_median, double cand_median, double p, const nt_bench_gates *g, nt_bench_verdict *out)
{
	memset(out, 0, sizeof(*out));
	out->ratio = base_median != 0 ? cand_median / base_median : NAN;
	/* Without a ratio (a baseline of 0), the sign of the difference still
	 * says which is better, but not by how much. */
	double diff = g->lower_is_better ? base_median - cand_median : cand_median - base_median;
	if (isfinite(out->ratio))
		out->gain = g->lower_is_better ? 1 - out->ratio : out->ratio - 1;
	else
		out->gain = diff > 0 ? INFINITY : diff < 0 ? -INFINITY : 0;
	bool significant = p < NT_BENCH_ALPHA;
	out->verdict = significant && diff > 0 ? "better" : significant && diff < 0 ? "worse" : "no significant difference";

	size_t n = 0;
	if (g->require_no_loss) {
		if (significant && diff < 0) {
			out->exit_code = NT_EXIT_LOSS;
			n += (size_t)snprintf(out->gate + n, sizeof(out->gate) - n,
					      "--require-no-loss: FAILED: the candidate is worse by %.1f%% with p = %.3g < %.2f",
					      -100 * out->gain, p, NT_BENCH_ALPHA);
		} else {
			n += (size_t)snprintf(out->gate + n, sizeof(out->gate) - n,
					      "--require-no-loss: passed (%s, p = %.3g)",
					      diff < 0 ? "worse, but not significantly" : "not worse", p);
		}
	}
	if (g->require_gain >= 0 && n < sizeof(out->gate)) {
		bool big = out->gain >= g->require_gain && diff > 0;
		const char *sep = n ? "; " : "";
		if (big && significant) {
			snprintf(out->gate + n, sizeof(out->gate) - n, "%s--require-gain %.4g%%: passed (%+.1f%%, p = %.3g)", sep,
				 100 * g->require_gain, 100 * out->gain, p);
		} else if (!big) {
			snprintf(out->gate + n, sizeof(out->gate) - n,
				 "%s--require-gain %.4g%%: FAILED: the gain is too small (%+.1f%% < %.4g%%)%s (p = %.3g%s)", sep,
				 100 * g->require_gain, 100 * out->gain, 100 * g->require_gain,
				 significant ? "" : " and not significant", p, significant ? "" : " >= 0.05");
		} else {
			snprintf(out->gate + n, sizeof(out->gate) - n,
				 "%s--require-gain %.4g%%: FAILED: not significant (p = %.3g >= %.2f), though %+.1f%%", sep,
				 100 * g->require_gain, p, NT_BENCH_ALPHA, 100 * out->gain);
		}
		if (!(big && significant)) {
			if (!out->exit_code)
				out->exit_code = big ? NT_EXIT_NOT_SIGNIFICANT : NT_EXIT_GAIN_TOO_SMALL;
		}
	}
}
