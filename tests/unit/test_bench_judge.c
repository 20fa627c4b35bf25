/* SPDX-License-Identifier: Apache-2.0 */
/* cli/bench_judge.c (the verdict and the CI gates of bench-run --compare)
 * and cli/bench_plot.c (its SVG chart). The figures are chosen so that the
 * expected ratio and gain are plain arithmetic (110 / 100 = 1.1). */
#include "cli/bench_judge.h"
#include "cli/bench_plot.h"
#include "cli/exit.h"
#include "harness.h"

#include <math.h>
#include <string.h>

#define NEAR(a, b) CHECK_MSG(fabs((a) - (b)) <= 1e-12, "%s = %.15g, expected %.15g", #a, (double)(a), (double)(b))

static nt_bench_gates gates(bool lower, double gain, bool no_loss)
{
	return (nt_bench_gates){ .lower_is_better = lower, .require_gain = gain, .require_no_loss = no_loss,
				 .loss_margin = NT_BENCH_LOSS_MARGIN, .confidence = NT_BENCH_CONFIDENCE };
}

/* Judge the figures BASE and CAND (N each) under G, with their medians and
 * p given (the verdict's words come from them). */
static void judge(const double *base, const double *cand, size_t n, double bm, double cm, double p,
		  const nt_bench_gates *g, nt_bench_verdict *v, nt_bench_effect *e)
{
	CHECK_INT(nt_bench_effect_of(base, n, cand, n, g->confidence, e), 0);
	nt_bench_judge(bm, cm, p, e, g, v);
}

static void test_judge(void)
{
	nt_bench_verdict v;
	nt_bench_effect e;
	nt_bench_gates g = gates(false, -1, false);
	/* Five rounds each, the candidate 10% above with 1% noise: every
	 * candidate/baseline ratio lies in [1.07, 1.13]. */
	const double base[] = { 100, 101, 99, 100.5, 99.5 }, up[] = { 110, 111, 109, 110.5, 109.5 };
	const double down[] = { 80, 81, 79, 80.5, 79.5 }, same[] = { 100.2, 100.9, 99.1, 100.4, 99.6 };

	/* No gate asked: exit 0; the effect's estimate and interval. */
	judge(base, up, 5, 100, 110, 0.0079, &g, &v, &e);
	NEAR(v.ratio, 1.1);
	NEAR(v.gain, 0.1);
	CHECK_STR(v.verdict, "better");
	CHECK_INT(v.exit_code, 0);
	CHECK_STR(v.gate, "");
	CHECK(e.defined && e.bounded && e.exact);
	CHECK(e.confidence >= 0.95);
	CHECK_MSG(e.lo > 1.07 && e.lo < 1.1 && e.hi > 1.1 && e.hi < 1.13, "[%g, %g]", e.lo, e.hi);
	CHECK(fabs(e.ratio - 1.1) < 0.005);
	NEAR(v.gain_lo, e.lo - 1);

	/* --require-gain 5%: the interval's lower end is above +5%: passed. */
	g = gates(false, 0.05, false);
	judge(base, up, 5, 100, 110, 0.0079, &g, &v, &e);
	CHECK_INT(v.exit_code, 0);
	CHECK_MSG(strstr(v.gate, "--require-gain 5%: passed") != NULL, "%s", v.gate);
	/* 20% asked: shown below it (the interval ends under +13%): 10. */
	g = gates(false, 0.20, false);
	judge(base, up, 5, 100, 110, 0.0079, &g, &v, &e);
	CHECK_INT(v.exit_code, NT_EXIT_GAIN_TOO_SMALL);
	CHECK_MSG(strstr(v.gate, "FAILED") && strstr(v.gate, "below +20.0%"), "%s", v.gate);
	/* 10% asked: the interval straddles it: not shown, never a pass, and
	 * the estimate not above it, so more rounds are not promised. */
	g = gates(false, 0.10, false);
	judge(base, up, 5, 100, 110, 0.0079, &g, &v, &e);
	CHECK_INT(v.exit_code, NT_EXIT_NOT_SHOWN);
	CHECK_MSG(strstr(v.gate, "NOT SHOWN") != NULL, "%s", v.gate);
	/* 8% asked: straddled too, but the estimate is above it: the rounds
	 * the spread would need, more than five. */
	g = gates(false, 0.08, false);
	judge(base, up, 5, 100, 110, 0.0079, &g, &v, &e);
	if (v.exit_code == NT_EXIT_NOT_SHOWN) {
		CHECK_MSG(v.rounds_needed > 5 && strstr(v.gate, "rounds per arm"), "%zu: %s", v.rounds_needed, v.gate);
	} else {
		CHECK_INT(v.exit_code, 0); /* the interval may clear 8% already */
	}

	/* --require-no-loss: 20% worse is shown worse than the 2% margin:
	 * 12; the same figures the other way pass; an A/A run passes only
	 * when its interval clears -2%. */
	g = gates(false, -1, true);
	judge(base, down, 5, 100, 80, 0.0079, &g, &v, &e);
	CHECK_STR(v.verdict, "worse");
	CHECK_INT(v.exit_code, NT_EXIT_LOSS);
	CHECK_MSG(strstr(v.gate, "--require-no-loss 2%: FAILED") != NULL, "%s", v.gate);
	judge(base, up, 5, 100, 110, 0.0079, &g, &v, &e);
	CHECK_INT(v.exit_code, 0);
	judge(base, same, 5, 100, 100.2, 0.6, &g, &v, &e);
	CHECK_MSG(v.exit_code == 0 || v.exit_code == NT_EXIT_NOT_SHOWN, "%d: %s", v.exit_code, v.gate);
	CHECK_INT(v.exit_code, v.gain_lo > -0.02 ? 0 : NT_EXIT_NOT_SHOWN);

	/* The gate that could not fail: 3 + 3 rounds of a candidate
	 * 94% slower. No interval at 95%: not shown (11), never passed. */
	const double b3[] = { 9.3e9, 9.1e9, 9.4e9 }, c3[] = { 5.3e8, 5.5e8, 5.2e8 };
	judge(b3, c3, 3, 9.3e9, 5.3e8, 0.1, &g, &v, &e);
	CHECK(!e.bounded);
	CHECK_INT(v.exit_code, NT_EXIT_NOT_SHOWN);
	CHECK_MSG(strstr(v.gate, "3 + 3 rounds cannot reach 95% confidence") != NULL, "%s", v.gate);
	CHECK(isinf(v.gain_lo) && isinf(v.gain_hi));
	/* At 80% confidence 3 + 3 rounds reach an interval, and it shows the loss. */
	g.confidence = 0.8;
	judge(b3, c3, 3, 9.3e9, 5.3e8, 0.1, &g, &v, &e);
	CHECK(e.bounded);
	CHECK_INT(v.exit_code, NT_EXIT_LOSS);

	/* Lower is better: 10% lower latency is a 10% gain; 25% higher is a
	 * loss beyond the margin. Both gates at once name both. */
	g = gates(true, 0.05, true);
	const double lat[] = { 100, 101, 99, 100.5, 99.5 }, fast[] = { 90, 91, 89, 90.5, 89.5 };
	const double slow[] = { 125, 126, 124, 125.5, 124.5 };
	judge(lat, fast, 5, 100, 90, 0.0079, &g, &v, &e);
	NEAR(v.gain, 0.1);
	CHECK_STR(v.verdict, "better");
	CHECK_INT(v.exit_code, 0);
	CHECK_MSG(v.gain_lo > 0.05 && v.gain_hi < 0.15, "[%g, %g]", v.gain_lo, v.gain_hi);
	judge(lat, slow, 5, 100, 125, 0.0079, &g, &v, &e);
	CHECK_STR(v.verdict, "worse");
	CHECK_INT(v.exit_code, NT_EXIT_LOSS);
	CHECK_MSG(strstr(v.gate, "--require-no-loss 2%: FAILED") && strstr(v.gate, "--require-gain 5%: FAILED"), "%s",
		  v.gate);

	/* A figure of 0: no ratio, so no gate can be shown. */
	g = gates(false, 0.05, false);
	const double zero[] = { 0, 1, 2, 3, 4 };
	judge(zero, up, 5, 2, 110, 0.0079, &g, &v, &e);
	CHECK(!e.defined);
	CHECK_INT(v.exit_code, NT_EXIT_NOT_SHOWN);
	CHECK_MSG(strstr(v.gate, "positive figures") != NULL, "%s", v.gate);
	/* A baseline median of 0: the median ratio is not defined either. */
	nt_bench_judge(0, 5, 0.0079, &e, &g, &v);
	CHECK(isnan(v.ratio));
	CHECK(isinf(v.gain) && v.gain > 0);
}

static void test_parse_confidence(void)
{
	double c;
	CHECK_INT(nt_bench_parse_confidence("0.95", &c), 0);
	NEAR(c, 0.95);
	CHECK_INT(nt_bench_parse_confidence("99%", &c), 0);
	NEAR(c, 0.99);
	CHECK(nt_bench_parse_confidence("95", &c) < 0); /* not a fraction, and no % */
	CHECK(nt_bench_parse_confidence("0.4", &c) < 0);
	CHECK(nt_bench_parse_confidence("1", &c) < 0);
	CHECK(nt_bench_parse_confidence("", &c) < 0);
	CHECK(nt_bench_parse_confidence("high", &c) < 0);
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
	nt_plot_arm pa = { .name = "baseline (host as it is)", .values = a, .n = 3, .median = 9.2e9 };
	nt_plot_arm pb = { .name = "candidate <tiny> & \"small\"", .values = b, .n = 4, .median = 1.475e8 };
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
	nt_plot_arm pc = { .name = "a", .values = c, .n = 1, .median = 12.5 }, pd = { .name = "b", .values = c, .n = 1, .median = 12.5 };
	svg = nt_bench_svg("t", "us", &pc, &pd);
	CHECK(svg && strstr(svg, ">us<") && count(svg, "class=\"round\"") == 2 && strstr(svg, "1 round<"));
	/* Two arms draw no interval even when one is given. */
	pc.interval = true;
	pc.lo = 10;
	pc.hi = 14;
	free(svg);
	svg = nt_bench_svg("t", "us", &pc, &pd);
	CHECK(svg && !strstr(svg, "class=\"interval\""));
	free(svg);

	/* nettune tune's chart: four arms side by side, the baseline without
	 * an interval, two candidates with one (drawn in the values' scale,
	 * and counted in the axis: 3e10 is past every dot), one unbounded
	 * (not drawn), and a note after the round count. */
	nt_plot_arm arms[4] = {
		{ .name = "baseline", .values = a, .n = 3, .median = 9.2e9 },
		{ .name = "candidate 1", .values = a, .n = 3, .median = 9.2e9, .interval = true, .lo = 2e10, .hi = 3e10 },
		{ .name = "candidate 2", .values = b, .n = 4, .median = 1.475e8, .interval = true, .lo = 1e8, .hi = 2e8,
		  .note = ", dropped" },
		{ .name = "candidate 3", .values = b, .n = 4, .median = 1.475e8, .interval = true, .lo = 0, .hi = INFINITY },
	};
	svg = nt_bench_svg_arms("tune", "bits/s", arms, 4);
	CHECK(svg != NULL);
	if (!svg)
		return;
	CHECK_INT(count(svg, "class=\"arm\""), 4);
	CHECK(strstr(svg, "id=\"arm-a\"") && strstr(svg, "id=\"arm-d\""));
	CHECK_INT(count(svg, "class=\"interval\""), 2);
	CHECK(strstr(svg, "<title>interval 20 to 30 Gbit/s</title>") != NULL);
	CHECK(strstr(svg, "4 rounds, dropped<") != NULL);
	/* The axis reaches the interval's top, 30 Gbit/s. */
	CHECK(strstr(svg, ">30</text>") != NULL);
	CHECK(!strstr(svg, "nan") && !strstr(svg, "inf"));
	free(svg);
}


/* A machine drifting by 5% a block, the candidate 3% better in every
 * block: the arms as samples overlap (not shown), the blocks' ratios
 * agree (shown: every one is 1.03, and six blocks reach 95%). */
static void test_paired(void)
{
	double base[8], cand[8];
	for (int i = 0; i < 8; i++) {
		double drift = 1 + 0.05 * i;
		base[i] = 100 * drift * (1 + 0.0003 * i * (i % 2 ? 1 : -1));
		cand[i] = 103 * drift;
	}
	nt_bench_gates g = gates(false, 0.01, false);
	nt_bench_effect e, p;
	nt_bench_verdict v;
	CHECK_INT(nt_bench_effect_of(base, 8, cand, 8, g.confidence, &e), 0);
	nt_bench_judge(100, 103, 0.5, &e, &g, &v);
	CHECK_INT(v.exit_code, NT_EXIT_NOT_SHOWN);
	CHECK_INT(nt_bench_effect_paired(base, cand, 8, g.confidence, &p), 0);
	CHECK(p.paired && p.defined && p.bounded && p.exact && p.rounds == 8);
	CHECK_MSG(p.lo > 1.027 && p.hi < 1.033, "[%g, %g]", p.lo, p.hi);
	nt_bench_judge(100, 103, 0.0078, &p, &g, &v);
	CHECK_INT(v.exit_code, 0);
	CHECK_MSG(strstr(v.gate, "--require-gain 1%: passed") != NULL, "%s", v.gate);
	/* Five blocks cannot reach 95%: not shown, said in blocks. */
	CHECK_INT(nt_bench_effect_paired(base, cand, 5, g.confidence, &p), 0);
	CHECK(!p.bounded);
	nt_bench_judge(100, 103, 0.0625, &p, &g, &v);
	CHECK_INT(v.exit_code, NT_EXIT_NOT_SHOWN);
	CHECK_MSG(strstr(v.gate, "5 blocks cannot reach 95% confidence (the smallest p they can give is 0.0625)"),
		  "%s", v.gate);
	/* A figure of 0: no ratio. */
	base[2] = 0;
	CHECK_INT(nt_bench_effect_paired(base, cand, 8, g.confidence, &p), 0);
	CHECK(!p.defined);
}

int main(void)
{
	test_paired();
	test_parse_confidence();
	test_judge();
	test_parse_gain();
	test_plot();
	TEST_MAIN_END();
}
