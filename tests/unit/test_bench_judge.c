/* SPDX-License-Identifier: Apache-2.0 */
/* cli/bench_judge.c (the verdict and the CI gates of bench-run --compare)
 * and cli/bench_plot.c (its SVG chart). The figures are chosen so that the
 * expected ratio and gain are plain arithmetic (110 / 100 = 1.1). */
#include "cli/bench_judge.h"
#include "cli/bench_plot.h"
#include "cli/exit.h"
#include "harness.h"

#include <math.h>

#define NEAR(a, b) CHECK_MSG(fabs((a) - (b)) <= 1e-12, "%s = %.15g, expected %.15g", #a, (double)(a), (double)(b))

static nt_bench_gates gates(bool lower, double gain, bool no_loss)
{
	return (nt_bench_gates){ .lower_is_better = lower, .require_gain = gain, .require_no_loss = no_loss };
}

static void test_judge(void)
{
	nt_bench_verdict v;
	nt_bench_gates g = gates(false, -1, false);

	/* 10% better, significant, no gate asked: exit 0. */
	nt_bench_judge(100, 110, 0.0079, &g, &v);
	NEAR(v.ratio, 1.1);
	NEAR(v.gain, 0.1);
	CHECK_STR(v.verdict, "better");
	CHECK_INT(v.exit_code, 0);
	CHECK_STR(v.gate, "");

	/* --require-gain 5%: 10% with p < 0.05 passes. */
	g = gates(false, 0.05, false);
	nt_bench_judge(100, 110, 0.0079, &g, &v);
	CHECK_INT(v.exit_code, 0);
	CHECK_MSG(strstr(v.gate, "passed") != NULL, "%s", v.gate);
	/* 10% but p = 0.2: not significant (11), and says so. */
	nt_bench_judge(100, 110, 0.2, &g, &v);
	CHECK_INT(v.exit_code, NT_EXIT_NOT_SIGNIFICANT);
	CHECK_STR(v.verdict, "no significant difference");
	CHECK_MSG(strstr(v.gate, "not significant") && !strstr(v.gate, "too small"), "%s", v.gate);
	/* 3% with p < 0.05: too small (10), significant. */
	nt_bench_judge(100, 103, 0.01, &g, &v);
	CHECK_INT(v.exit_code, NT_EXIT_GAIN_TOO_SMALL);
	CHECK_MSG(strstr(v.gate, "too small") && !strstr(v.gate, "not significant"), "%s", v.gate);
	/* 3% and p = 0.5: both, exit 10, both said. */
	nt_bench_judge(100, 103, 0.5, &g, &v);
	CHECK_INT(v.exit_code, NT_EXIT_GAIN_TOO_SMALL);
	CHECK_MSG(strstr(v.gate, "too small") && strstr(v.gate, "not significant"), "%s", v.gate);
	/* Exactly the gain asked: passes (at least). */
	nt_bench_judge(100, 105, 0.01, &g, &v);
	CHECK_INT(v.exit_code, 0);
	/* Worse: the gain gate fails as too small. */
	nt_bench_judge(100, 80, 0.01, &g, &v);
	CHECK_INT(v.exit_code, NT_EXIT_GAIN_TOO_SMALL);
	CHECK_STR(v.verdict, "worse");

	/* --require-no-loss: 20% worse with p < 0.05 fails (12); not
	 * significant or better passes. */
	g = gates(false, -1, true);
	nt_bench_judge(100, 80, 0.0079, &g, &v);
	NEAR(v.gain, -0.2);
	CHECK_INT(v.exit_code, NT_EXIT_LOSS);
	CHECK_MSG(strstr(v.gate, "FAILED") && strstr(v.gate, "20.0%"), "%s", v.gate);
	nt_bench_judge(100, 80, 0.3, &g, &v);
	CHECK_INT(v.exit_code, 0);
	nt_bench_judge(100, 120, 0.0079, &g, &v);
	CHECK_INT(v.exit_code, 0);
	/* Both gates, a loss: the loss's code wins, both are said. */
	g = gates(false, 0.05, true);
	nt_bench_judge(100, 80, 0.0079, &g, &v);
	CHECK_INT(v.exit_code, NT_EXIT_LOSS);
	CHECK_MSG(strstr(v.gate, "--require-no-loss: FAILED") && strstr(v.gate, "--require-gain 5%: FAILED"), "%s",
		  v.gate);

	/* Lower is better (latency): 100 -> 90 is a 10% gain. */
	g = gates(true, 0.05, true);
	nt_bench_judge(100, 90, 0.0079, &g, &v);
	NEAR(v.ratio, 0.9);
	NEAR(v.gain, 0.1);
	CHECK_STR(v.verdict, "better");
	CHECK_INT(v.exit_code, 0);
	nt_bench_judge(100, 125, 0.0079, &g, &v);
	NEAR(v.gain, -0.25);
	CHECK_STR(v.verdict, "worse");
	CHECK_INT(v.exit_code, NT_EXIT_LOSS);

	/* A baseline of 0: no ratio, the direction still counts. */
	g = gates(false, 0.05, false);
	nt_bench_judge(0, 5, 0.0079, &g, &v);
	CHECK(isnan(v.ratio));
	CHECK(isinf(v.gain) && v.gain > 0);
	CHECK_INT(v.exit_code, 0);
	/* Equal medians, any p: no difference, no gain. */
	nt_bench_judge(100, 100, 1, &g, &v);
	CHECK_STR(v.verdict, "no significant difference");
	CHECK_INT(v.exit_code, NT_EXIT_GAIN_TOO_SMALL);
}

static void test_parse_gain(void)
{
	double g;
	CHECK_INT(nt_bench_parse_gain("5%", &g), 0);
	NEAR(g, 0.05);
	CHECK_INT(nt_bench_parse_gain("5", &g), 0);
	NEAR(g, 0.05);
	CHECK_INT(nt_bench_parse_gain("0.5%", &g), 0);
	NEAR(g, 0.005);
	CHECK_INT(nt_bench_parse_gain("0", &g), 0);
	NEAR(g, 0);
	CHECK(nt_bench_parse_gain("", &g) < 0);
	CHECK(nt_bench_parse_gain("-5%", &g) < 0);
	CHECK(nt_bench_parse_gain("5%%", &g) < 0);
	CHECK(nt_bench_parse_gain("lots", &g) < 0);
	CHECK(nt_bench_parse_gain("1001%", &g) < 0);
	CHECK(nt_bench_parse_gain("nan", &g) < 0);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_plot(void)
{
	const double a[] = { 9.1e9, 9.4e9, 9.2e9 }, b[] = { 1.5e8, 1.4e8, 1.6e8, 1.45e8 };
	nt_plot_arm pa = { "baseline (host as it is)", a, 3, 9.2e9 };
	nt_plot_arm pb = { "candidate <tiny> & \"small\"", b, 4, 1.475e8 };
	char *svg = nt_bench_svg("iperf3: a & b", "bits/s", &pa, &pb);
	CHECK(svg != NULL);
	if (!svg)
		return;
	CHECK(!strncmp(svg, "<?xml", 5));
	CHECK(strstr(svg, "xmlns=\"http://www.w3.org/2000/svg\"") != NULL);
	CHECK_INT(count(svg, "class=\"round\""), 7);
	CHECK_INT(count(svg, "class=\"median\""), 2);
	CHECK(strstr(svg, "data-rounds=\"3\"") && strstr(svg, "data-rounds=\"4\""));
	/* bits/s shown in the largest value's scale. */
	CHECK(strstr(svg, "Gbit/s") != NULL);
	CHECK(strstr(svg, ">median 9.2<") != NULL);
	/* Text escaped: no raw '<' or '&' from the names. */
	CHECK(strstr(svg, "candidate &lt;tiny&gt; &amp; &quot;small&quot;") != NULL);
	CHECK(strstr(svg, "iperf3: a &amp; b") != NULL);
	CHECK(!strstr(svg, "<tiny>"));
	CHECK_INT(count(svg, "<svg"), 1);
	CHECK_INT(count(svg, "</svg>"), 1);
	free(svg);

	/* Another unit as given; one round an arm; the same values in both. */
	const double c[] = { 12.5 };
	nt_plot_arm pc = { "a", c, 1, 12.5 }, pd = { "b", c, 1, 12.5 };
	svg = nt_bench_svg("t", "us", &pc, &pd);
	CHECK(svg && strstr(svg, ">us<") && count(svg, "class=\"round\"") == 2 && strstr(svg, "1 round<"));
	free(svg);
}

int main(void)
{
	test_judge();
	test_parse_gain();
	test_plot();
	TEST_MAIN_END();
}
