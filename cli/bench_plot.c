/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/bench_plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
	char *s;
	size_t len, cap;
	bool failed;
} buf;

static void put(buf *b, const char *fmt, ...)
{
	if (b->failed)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->failed = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

/* S as XML character data or attribute text. */
static void put_text(buf *b, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '<': put(b, "&lt;"); break;
		case '>': put(b, "&gt;"); break;
		case '&': put(b, "&amp;"); break;
		case '"': put(b, "&quot;"); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			if (c < 0x20 && c != '\t' && c != '\n')
				put(b, "?");
			else
				put(b, "%c", c);
		}
	}
}

/* The scale of bits/s values: Gbit/s, Mbit/s, ... by the largest. */
static double scale_for(const char *unit, double maxv, char *label, size_t size)
{
	if (unit && !strcmp(unit, "bits/s")) {
		static const struct { double f; const char *name; } s[] = {
			{ 1e12, "Tbit/s" }, { 1e9, "Gbit/s" }, { 1e6, "Mbit/s" }, { 1e3, "kbit/s" },
		};
		for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
			if (maxv >= s[i].f) {
				snprintf(label, size, "%s", s[i].name);
				return s[i].f;
			}
		snprintf(label, size, "bit/s");
		return 1;
	}
	snprintf(label, size, "%s", unit ? unit : "");
	return 1;
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) for RANGE in about
 * five steps. */
static double tick_step(double range)
{
	double raw = range / 5, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

#define W 640
#define H 400
#define LEFT 90
#define RIGHT 30
#define TOP 50
#define BOTTOM 60

char *nt_bench_svg(const char *title, const char *unit, const nt_plot_arm *a, const nt_plot_arm *b)
{
	nt_plot_arm arms[2] = { *a, *b };
	arms[0].interval = arms[1].interval = false;
	return nt_bench_svg_arms(title, unit, arms, 2);
}

char *nt_bench_svg_arms(const char *title, const char *unit, const nt_plot_arm *arms, size_t narms)
{
	buf out = { 0 };
	static const char *const colour[] = { "#4c72b0", "#dd8452", "#55a868", "#c44e52",
					      "#8172b3", "#937860", "#da8bc3", "#8c8c8c" };
	const size_t ncolour = sizeof(colour) / sizeof(colour[0]);
	double lo = INFINITY, hi = -INFINITY;
	for (size_t k = 0; k < narms; k++) {
		for (size_t i = 0; i < arms[k].n; i++) {
			lo = fmin(lo, arms[k].values[i]);
			hi = fmax(hi, arms[k].values[i]);
		}
		/* An unbounded end (0 or +inf) is not drawn, and not scaled for. */
		if (arms[k].interval && isfinite(arms[k].lo) && isfinite(arms[k].hi) && arms[k].lo > 0) {
			lo = fmin(lo, arms[k].lo);
			hi = fmax(hi, arms[k].hi);
		}
	}
	if (!isfinite(lo)) {
		lo = 0;
		hi = 1;
	}
	char ulabel[48];
	double f = scale_for(unit, fmax(fabs(hi), fabs(lo)), ulabel, sizeof(ulabel));
	/* Figures too large for the axis's sums (a pad, a step past 1e308
	 * overflow): drawn in units of a power of ten, named on the axis. */
	double m = fmax(fabs(hi), fabs(lo)) / f;
	if (m >= 1e15) {
		int e = (int)floor(log10(m));
		f *= pow(10, e);
		size_t ul = strlen(ulabel);
		snprintf(ulabel + ul, sizeof(ulabel) - ul, "%sx 1e%d", ul ? " " : "", e);
	}
	lo /= f;
	hi /= f;
	/* The axis from 0 when the values are all positive and not far from
	 * it, so that a ratio reads off the chart; else around the values. */
	if (lo > 0 && lo < hi * 0.5)
		lo = 0;
	double pad = hi > lo ? (hi - lo) * 0.08 : fmax(fabs(hi) * 0.1, 1);
	double step = tick_step(hi - lo + 2 * pad);
	double y0 = floor((lo - (lo == 0 ? 0 : pad)) / step) * step, y1 = ceil((hi + pad) / step) * step;
	if (y1 <= y0)
		y1 = y0 + step;
	const double ph = H - TOP - BOTTOM, pw = W - LEFT - RIGHT;
#define YPX(v) (TOP + ph - ((v) - y0) / (y1 - y0) * ph)

	put(&out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		  "font-family=\"sans-serif\" font-size=\"12\">\n",
	    W, H, W, H);
	put(&out, "<title>");
	put_text(&out, title);
	put(&out, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	put(&out, "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">", W / 2);
	put_text(&out, title);
	put(&out, "</text>\n");
	/* The value axis, its ticks and grid. */
	put(&out, "<g id=\"axis\" stroke=\"#333\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", LEFT, TOP, LEFT,
	    (int)(TOP + ph));
	put(&out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n</g>\n", LEFT, (int)(TOP + ph), (int)(LEFT + pw),
	    (int)(TOP + ph));
	for (double v = y0; v <= y1 + step * 1e-6; v += step) {
		double y = YPX(v);
		put(&out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", LEFT, y, LEFT + pw, y);
		put(&out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n", LEFT - 6, y + 4,
		    fabs(v) < step * 1e-6 ? 0.0 : v);
	}
	put(&out, "<text x=\"20\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 20 %.1f)\">",
	    TOP + ph / 2, TOP + ph / 2);
	put_text(&out, *ulabel ? ulabel : "value");
	put(&out, "</text>\n");
	/* Each arm: a strip of dots (spread sideways by round, so equal values
	 * stay visible), its median as a bar, its name and round count. */
	/* Two arms where bench-run --compare always put them; more side by
	 * side, each in a slot of its own. */
	double slot = pw / (double)(narms ? narms : 1), half = fmin(50, slot * 0.35), spread = fmin(60, slot * 0.5);
	for (size_t k = 0; k < narms; k++) {
		const nt_plot_arm *arm = &arms[k];
		const char *col = colour[k % ncolour];
		double cx = narms == 2 ? LEFT + pw * (k == 0 ? 0.3 : 0.7) : LEFT + slot * ((double)k + 0.5);
		if (k < 26)
			put(&out, "<g class=\"arm\" id=\"arm-%c\" data-name=\"", (char)('a' + k));
		else
			put(&out, "<g class=\"arm\" id=\"arm-%zu\" data-name=\"", k);
		put_text(&out, arm->name);
		put(&out, "\" data-rounds=\"%zu\">\n", arm->n);
		for (size_t i = 0; i < arm->n; i++) {
			double dx = arm->n > 1 ? ((double)i / (double)(arm->n - 1) - 0.5) * spread : 0;
			put(&out, "<circle class=\"round\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" fill-opacity=\"0.75\">"
				  "<title>round %zu: %.6g %s</title></circle>\n",
			    cx + dx, YPX(arm->values[i] / f), col, i + 1, arm->values[i] / f, ulabel);
		}
		if (arm->n) {
			double my = YPX(arm->median / f);
			put(&out, "<line class=\"median\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				  "stroke-width=\"3\"/>\n",
			    cx - half, my, cx + half, my, col);
			put(&out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">median %.4g</text>\n", cx + half + 4, my + 4, col,
			    arm->median / f);
		}
		if (arm->interval && isfinite(arm->lo) && isfinite(arm->hi) && arm->lo > 0) {
			double ylo = YPX(arm->lo / f), yhi = YPX(arm->hi / f), x = cx + half * 0.6;
			put(&out, "<g class=\"interval\" stroke=\"%s\" stroke-width=\"2\"><title>interval %.6g to %.6g %s"
				  "</title>\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
				  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
				  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n</g>\n",
			    col, arm->lo / f, arm->hi / f, ulabel, x, ylo, x, yhi, x - 5, ylo, x + 5, ylo, x - 5, yhi, x + 5,
			    yhi);
		}
		put(&out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", cx, (int)(TOP + ph + 22));
		put_text(&out, arm->name);
		put(&out, "</text>\n<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#666\">%zu round%s%s</text>\n</g>\n",
		    cx, (int)(TOP + ph + 40), arm->n, arm->n == 1 ? "" : "s", arm->note ? arm->note : "");
	}
	put(&out, "</svg>\n");
#undef YPX
	if (out.failed) {
		free(out.s);
		return NULL;
	}
	return out.s;
}
