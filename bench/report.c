/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c: `pagecache bench report -o HTML RESULT.json...`, bench results
 * drawn: one HTML file that stands alone, with an SVG chart drawn here for
 * each kind of result and, under each chart, a table of the numbers it
 * draws:
 *   warmup     each condition's query latencies (q1_ms, q2_ms, ...): bar to
 *              the median, line from min to max over the trials;
 *   readtwice  every readtwice file in one chart: aggregate MB/s per cgroup
 *              count, a bar per layout (and per limit, where a file says one);
 *   swapin     per workload, real time and major faults against
 *              page-cluster, a line per VMA readahead setting, the tuner's
 *              run (page_cluster "auto") a diamond at the page-cluster it
 *              spent its time at, with a dashed line at its value;
 *   compare    the first result of each bench against each later one of the
 *              same bench that shares rows with it: paired bars of the means
 *              (+- one standard deviation) and the marks `bench compare`
 *              computes (compare.c's: the same reading, the same test).
 * Every metric of every row is in a table too, and each file's other
 * objects (setup, auto_check, size, total) as key and value.
 *
 * Files are read as compare reads them (bench_result_read,
 * bench_metric_read). What is in them is not trusted: every string is
 * escaped for HTML and XML (controls, bidirectional and other invisible
 * format characters, non-characters and bytes that are not UTF-8 shown as
 * [U+202E], [\xff]), names are cut short in charts, sizes are bounded
 * (files, rows, series, points), numbers that are huge, negative or
 * missing are drawn clamped to the axis or left out, never trusted to be
 * in order. The document has no script, no font, no stylesheet and no
 * link outside itself (href only to #fragments, no url()), and says so to
 * the browser too (a Content-Security-Policy of default-src 'none'). It
 * is well-formed XML as well, each SVG on its own included.
 *
 * A file that cannot be read, or is not a result, is said (naming it) and
 * left out; the rest is drawn and the exit status is 1. With nothing left
 * to draw nothing is written. -o is written atomically (out_write_file).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "bench.h"
#include "json.h"
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_FILES 64			/* result files in one report */
#define MAX_ROWS 4096			/* rows of one file read */
#define MAX_CATS 64			/* groups of bars in one chart */
#define MAX_SER 8			/* series in one chart */
#define MAX_X 16			/* page-cluster values in one chart */
#define MAX_PAIRS 96			/* rows of one compare chart */
#define MAX_WL 8			/* swapin workloads drawn per file */
#define MAX_QCHART 6			/* warmup's q<N>_ms drawn */
#define MAX_LINES 20000			/* of a table of every metric */
#define LABEL_CHARS 32			/* of a name in a chart */
#define CELL_CHARS 200			/* of a name in a table */
#define FONT 12.0			/* px, the charts' text */
#define CHAR_W (FONT * 0.62)		/* an estimate of one character's width */
#define BIG 1e300			/* beyond this a number is clamped to it */

/* Okabe and Ito's colours, told apart by people with any colour vision */
static const char *const colours[MAX_SER] = { "#0072b2", "#e69f00", "#009e73", "#cc79a7",
					      "#56b4e9", "#d55e00", "#000000", "#999999" };

enum kind { K_WARMUP, K_READTWICE, K_SWAPIN, K_OTHER };

struct input {
	const char *path;
	struct pc_json *doc;
	const char *bench;
	enum kind kind;
	int n;				/* its number among the inputs of its kind, from 1 */
};

struct report {
	FILE *o;			/* the document's sections, in memory */
	FILE *toc;			/* their list, links to them (#id) */
	struct input in[MAX_FILES];
	int nin;
	unsigned failures;
	int svgs;			/* for unique ids */
};

/* ---- text ---- */

/* The code point at s[*i], *i moved past it; a byte that is not UTF-8: -1 - byte. */
static long utf8_next(const unsigned char *s, size_t n, size_t *i)
{
	unsigned char c = s[*i];
	long cp;
	size_t len;

	if (c < 0x80) {
		(*i)++;
		return c;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		(*i)++;
		return -1 - (long)c;
	}
	if (*i + len > n)
		goto bad;
	for (size_t k = 1; k < len; k++) {
		if ((s[*i + k] & 0xc0) != 0x80)
			goto bad;
		cp = cp << 6 | (s[*i + k] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		goto bad;
	*i += len;
	return cp;
bad:
	(*i)++;
	return -1 - (long)c;
}

/*
 * Shown as [U+XXXX], not as themselves: controls (not XML), bidirectional
 * overrides and isolates, zero-width and other invisible format
 * characters (they would reorder or hide what is around them), and
 * non-characters (not XML either).
 */
static bool shown_as_code(long c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0xad || c == 0x061c ||
	       c == 0x180e || (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
	       (c >= 0x2060 && c <= 0x206f) || c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb) ||
	       (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe || (c >= 0xe0000 && c <= 0xe007f);
}

/* s, at most max characters of it (then an ellipsis), as HTML and XML text or attribute value. */
static void esc_n(FILE *o, const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)u), i = 0, chars = 0;

	while (i < n) {
		size_t at = i;
		long c = utf8_next(u, n, &i);

		if (chars++ >= max) {
			fputs("\u2026", o);
			return;
		}
		if (c < 0)
			fprintf(o, "[\\x%02x]", (unsigned)(-1 - c));
		else if (shown_as_code(c))
			fprintf(o, "[U+%04lX]", c);
		else if (c == '<')
			fputs("&lt;", o);
		else if (c == '>')
			fputs("&gt;", o);
		else if (c == '&')
			fputs("&amp;", o);
		else if (c == '"')
			fputs("&quot;", o);
		else if (c == '\'')
			fputs("&#39;", o);
		else
			fwrite(u + at, 1, i - at, o);
	}
}

static void esc(FILE *o, const char *s)
{
	esc_n(o, s, CELL_CHARS);
}

/* How many characters esc_n(s, max) shows, about (for widths). */
static size_t shown_chars(const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)u), i = 0, chars = 0, shown = 0;

	while (i < n) {
		long c = utf8_next(u, n, &i);

		if (chars++ >= max)
			return shown + 1;
		shown += c < 0 ? 6 : shown_as_code(c) ? 8 : 1;
	}
	return shown;
}

/*
 * v to 10 significant digits, as the project's JSON writer has it (so a
 * bench's own numbers come out as its file has them, compare's as `bench
 * compare --json` has them), in the shortest form that reads back the
 * same: "16.15932315", "5200" (not 5.2e+03); "n/a" if not finite.
 */
static const char *num(double v, char *buf, size_t len)
{
	char ten[40];

	if (!isfinite(v))
		return "n/a";
	snprintf(ten, sizeof(ten), "%.10g", v);
	for (int p = 1; p <= 10; p++) {
		snprintf(buf, len, "%.*g", p, v);
		/* an exponent only for the very large and small */
		if (!strcmp(buf, ten) || (strtod(buf, NULL) == strtod(ten, NULL) &&
					  (!strchr(buf, 'e') || fabs(v) >= 1e10 || fabs(v) < 1e-5)))
			return buf;
	}
	snprintf(buf, len, "%s", ten);
	return buf;
}

/* A table cell of a number. */
static void td_num(FILE *o, double v)
{
	char b[40];

	fprintf(o, "<td class=\"n\">%s</td>", num(v, b, sizeof(b)));
}

static void td_text(FILE *o, const char *s)
{
	fputs("<td>", o);
	esc(o, s);
	fputs("</td>", o);
}

/* ---- axes ---- */

struct axis {
	double lo, hi, step;
	double scale;			/* tick labels in units of this (1, 1e3, 1e6, 1e9) */
	const char *suffix;
	int decimals;
};

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* An axis over [lo, hi] (NaN: nothing to fit) with round ticks; with zero, 0 is on it. */
static void axis_fit(struct axis *a, double lo, double hi, bool zero)
{
	double span, raw, mag, norm, m;
	int k;

	if (!isfinite(lo) || !isfinite(hi) || lo > hi) {
		lo = 0;
		hi = 1;
	}
	lo = clampd(lo, -BIG, BIG);
	hi = clampd(hi, -BIG, BIG);
	if (zero) {
		lo = lo > 0 ? 0 : lo;
		hi = hi < 0 ? 0 : hi;
	}
	m = fmax(fabs(lo), fabs(hi));
	if (hi - lo <= m * 1e-9 || hi - lo < 1e-250) {
		double d = m > 1e-250 ? m * 0.1 : 1;

		if (zero && lo == 0)
			hi += 2 * d;
		else {
			lo -= d;
			hi += d;
		}
	}
	span = hi - lo;
	raw = span / 5;
	k = (int)floor(log10(raw));
	mag = pow(10, k);
	norm = raw / mag;
	if (norm < 1.5)
		norm = 1;
	else if (norm < 3)
		norm = 2;
	else if (norm < 7)
		norm = 5;
	else {
		norm = 1;
		k++;
		mag *= 10;
	}
	a->step = norm * mag;
	a->lo = floor(lo / a->step) * a->step;
	a->hi = ceil(hi / a->step) * a->step;
	if (!(a->hi > a->lo) || !isfinite(a->hi - a->lo)) {
		a->lo = lo;
		a->hi = hi;
		a->step = (hi - lo) / 5;
	}
	m = fmax(fabs(a->lo), fabs(a->hi));
	a->scale = m >= 1e12 ? 0 : m >= 1e9 ? 1e9 : m >= 1e6 ? 1e6 : m >= 1e4 ? 1e3 : 1;
	a->suffix = a->scale == 1e9 ? "G" : a->scale == 1e6 ? "M" : a->scale == 1e3 ? "k" : "";
	if (a->scale > 0) {
		k = (int)floor(log10(a->step / a->scale) + 1e-9);
		a->decimals = k < 0 ? (k < -9 ? -1 : -k) : 0;
	} else
		a->decimals = -1;
}

/* v's position between p0 (at lo) and p1 (at hi), clamped to the axis. */
static double ax_px(const struct axis *a, double v, double p0, double p1)
{
	v = clampd(isfinite(v) ? v : a->lo, a->lo, a->hi);
	return p0 + (v - a->lo) / (a->hi - a->lo) * (p1 - p0);
}

static const char *tick_text(const struct axis *a, double v, char *buf, size_t len)
{
	if (fabs(v) < a->step * 1e-9) {
		snprintf(buf, len, "0");	/* not -1.1e-17, nor 0k */
		return buf;
	}
	if (a->decimals < 0)
		snprintf(buf, len, "%.3g", v);
	else
		snprintf(buf, len, "%.*f%s", a->decimals, v / a->scale, a->suffix);
	return buf;
}

/* Tick values of a, at most 40. */
static int ticks(const struct axis *a, double *t)
{
	int n = 0;

	for (int i = 0; i <= 40 && n < 41; i++) {
		double v = a->lo + i * a->step;

		if (v > a->hi + a->step * 1e-6)
			break;
		t[n++] = v;
	}
	return n;
}

/* ---- SVG pieces ---- */

static void svg_begin(struct report *r, double w, double h, const char *title)
{
	FILE *o = r->o;

	r->svgs++;
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-labelledby=\"svg%d\" "
		"font-family=\"DejaVu Sans, Liberation Sans, Arial, sans-serif\" font-size=\"%.0f\">\n"
		"<title id=\"svg%d\">", w, h, w, h, r->svgs, FONT, r->svgs);
	esc(o, title);
	fputs("</title>\n<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n", o);
	fprintf(o, "<text x=\"%.1f\" y=\"18\" font-size=\"14\" font-weight=\"bold\">", 10.0);
	esc_n(o, title, 110);
	fputs("</text>\n", o);
}

/* A text element: s escaped and cut at max characters. */
static void svg_text(FILE *o, double x, double y, const char *anchor, const char *extra,
		     const char *s, size_t max)
{
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s%s>", x, y, anchor,
		extra ? " " : "", extra ? extra : "");
	esc_n(o, s, max);
	fputs("</text>\n", o);
}

/* The value axis, vertical, at x0, from y1 (bottom) to y0 (top), grid lines to x1. */
static void y_axis(FILE *o, const struct axis *a, double x0, double x1, double y0, double y1,
		   const char *title)
{
	double t[41];
	int n = ticks(a, t);
	char b[48];

	for (int i = 0; i < n; i++) {
		double y = ax_px(a, t[i], y1, y0);

		fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n",
			x0, y, x1, y);
		svg_text(o, x0 - 5, y + 4, "end", NULL, tick_text(a, t[i], b, sizeof(b)), 16);
	}
	fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n",
		x0, y0, x0, y1);
	fprintf(o, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\">",
		14.0, (y0 + y1) / 2);
	esc_n(o, title, 60);
	fputs("</text>\n", o);
}

/* Legend entries in a row (wrapped) from (x, y); returns the y under them. */
static double legend(FILE *o, double x, double y, double xmax, const char *const *names, int n,
		     const char *const *shapes, size_t max)
{
	double cx = x;

	for (int i = 0; i < n; i++) {
		double w = 22 + CHAR_W * (double)shown_chars(names[i], max) + 18;

		if (cx > x && cx + w > xmax) {
			cx = x;
			y += 18;
		}
		if (shapes && shapes[i] && !strcmp(shapes[i], "line"))
			fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				"stroke-width=\"2\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
				cx, y - 4, cx + 16, y - 4, colours[i % MAX_SER], cx + 8, y - 4,
				colours[i % MAX_SER]);
		else
			fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\" fill=\"%s\"/>\n",
				cx, y - 10, colours[i % MAX_SER]);
		svg_text(o, cx + 20, y, "start", NULL, names[i], max);
		cx += w;
	}
	return y + 18;
}

/* ---- grouped bars: categories x series, each a centre and a spread ---- */

struct pt {
	double c, lo, hi;		/* centre (the bar), spread (the line) */
	bool have, spread;
};

struct bars {
	const char *title, *ytitle, *note;
	const char *cats[MAX_CATS];
	int ncat;
	const char *ser[MAX_SER];
	int nser;
	struct pt v[MAX_CATS][MAX_SER];
};

static void draw_bars(struct report *r, const struct bars *b)
{
	FILE *o = r->o;
	double W = 1120, left = 78, right = 20, top = 34, ph = 300, maxlab = 0, gw, bw, ly, bottom;
	double lo = NAN, hi = NAN, y0, y1;
	bool rotate;
	struct axis a;
	char nb[48];

	for (int c = 0; c < b->ncat; c++) {
		double w = CHAR_W * (double)shown_chars(b->cats[c], LABEL_CHARS);

		maxlab = fmax(maxlab, w);
		for (int s = 0; s < b->nser; s++) {
			const struct pt *p = &b->v[c][s];

			if (!p->have)
				continue;
			lo = isnan(lo) ? p->c : fmin(lo, p->c);
			hi = isnan(hi) ? p->c : fmax(hi, p->c);
			if (p->spread) {
				lo = fmin(lo, fmin(p->lo, p->hi));
				hi = fmax(hi, fmax(p->lo, p->hi));
			}
		}
	}
	axis_fit(&a, lo, hi, true);
	gw = (W - left - right) / (b->ncat ? b->ncat : 1);
	rotate = maxlab > gw - 6;
	if (rotate && maxlab * 0.82 - gw / 2 + 8 > left) {
		/* the first label, turned 35 degrees, reaches left of its group: room for it */
		left = fmin(W / 2, maxlab * 0.82 - gw / 2 + 8);
		gw = (W - left - right) / (b->ncat ? b->ncat : 1);
	}
	bottom = rotate ? 30 + fmin(maxlab, CHAR_W * LABEL_CHARS) * 0.72 : 40;
	/* the legend's height (as legend() wraps it) decides where the plot starts */
	{
		double h = 0, cx = 0;

		for (int s = 0; s < b->nser; s++) {
			double w = 22 + CHAR_W * (double)shown_chars(b->ser[s], LABEL_CHARS) + 18;

			if (cx > 0 && left + cx + w > W - right) {
				cx = 0;
				h += 18;
			}
			cx += w;
		}
		top += 22 + h + (b->note ? 16 : 0);
	}
	y0 = top;
	y1 = top + ph;
	svg_begin(r, W, y1 + bottom, b->title);
	ly = legend(o, left, 40, W - right, b->ser, b->nser, NULL, LABEL_CHARS);
	if (b->note)
		svg_text(o, left, ly - 2, "start", "fill=\"#555555\"", b->note, 160);
	y_axis(o, &a, left, W - right, y0, y1, b->ytitle);
	bw = fmin(36, (gw - 12) / (b->nser ? b->nser : 1));
	for (int c = 0; c < b->ncat; c++) {
		double gx = left + c * gw + (gw - bw * b->nser) / 2, cx = left + c * gw + gw / 2;

		for (int s = 0; s < b->nser; s++) {
			const struct pt *p = &b->v[c][s];
			double x = gx + s * bw, yb = ax_px(&a, 0, y1, y0), yc;

			if (!p->have)
				continue;
			yc = ax_px(&a, p->c, y1, y0);
			fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
				"fill-opacity=\"0.85\"><title>", x + 1, fmin(yb, yc), bw - 2, fabs(yb - yc),
				colours[s]);
			esc_n(o, b->cats[c], LABEL_CHARS);
			fputs(", ", o);
			esc_n(o, b->ser[s], LABEL_CHARS);
			fprintf(o, ": %s</title></rect>\n", num(p->c, nb, sizeof(nb)));
			if (p->spread) {
				double ya = ax_px(&a, p->lo, y1, y0), yz = ax_px(&a, p->hi, y1, y0),
				       xm = x + bw / 2;

				fprintf(o, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" "
					"stroke=\"#222222\" stroke-width=\"1.5\" fill=\"none\"/>\n", xm, ya, yz,
					xm - bw / 4, ya, xm + bw / 4, xm - bw / 4, yz, xm + bw / 4);
			}
		}
		if (rotate)
			fprintf(o, "<text transform=\"translate(%.1f %.1f) rotate(-35)\" "
				"text-anchor=\"end\">", cx + 4, y1 + 16);
		else
			fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", cx, y1 + 18);
		esc_n(o, b->cats[c], LABEL_CHARS);
		fputs("</text>\n", o);
	}
	fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n",
		left, ax_px(&a, 0, y1, y0), W - right, ax_px(&a, 0, y1, y0));
	fputs("</svg>\n", o);
}

/* ---- lines against a numeric x, with one extra marked point per series ---- */

struct lines {
	const char *title, *ytitle, *xtitle;
	double xs[MAX_X];
	int nx;
	const char *ser[MAX_SER];
	int nser;
	struct pt v[MAX_X][MAX_SER];
	struct pt mark[MAX_SER];	/* the tuner's run: at markx */
	double markx[MAX_SER];		/* NaN: not known, drawn at the right edge */
	bool have_mark;
};

static void draw_lines(struct report *r, const struct lines *l)
{
	FILE *o = r->o;
	double W = 560, left = 78, right = 24, top = 60, ph = 240, bottom = 44, y0, y1, x0, x1;
	double ylo = NAN, yhi = NAN, xlo = NAN, xhi = NAN, t[41];
	const char *names[MAX_SER + 1], *shapes[MAX_SER + 1];
	struct axis ay, ax;
	char b[48];
	int n, nn = 0;

	for (int i = 0; i < l->nx; i++) {
		xlo = isnan(xlo) ? l->xs[i] : fmin(xlo, l->xs[i]);
		xhi = isnan(xhi) ? l->xs[i] : fmax(xhi, l->xs[i]);
		for (int s = 0; s < l->nser; s++) {
			const struct pt *p = &l->v[i][s];

			if (!p->have)
				continue;
			ylo = isnan(ylo) ? p->c : fmin(ylo, p->c);
			yhi = isnan(yhi) ? p->c : fmax(yhi, p->c);
			if (p->spread) {
				ylo = fmin(ylo, fmin(p->lo, p->hi));
				yhi = fmax(yhi, fmax(p->lo, p->hi));
			}
		}
	}
	for (int s = 0; s < l->nser; s++) {
		if (!l->mark[s].have)
			continue;
		ylo = isnan(ylo) ? l->mark[s].c : fmin(ylo, l->mark[s].c);
		yhi = isnan(yhi) ? l->mark[s].c : fmax(yhi, l->mark[s].c);
		if (isfinite(l->markx[s]) && fabs(l->markx[s]) < 1e6) {
			xlo = isnan(xlo) ? l->markx[s] : fmin(xlo, l->markx[s]);
			xhi = isnan(xhi) ? l->markx[s] : fmax(xhi, l->markx[s]);
		}
	}
	axis_fit(&ay, ylo, yhi, true);
	axis_fit(&ax, xlo, xhi, false);
	if (isfinite(xlo) && isfinite(xhi) && xhi - xlo <= 12 && xhi > xlo) {
		ax.lo = floor(xlo);	/* page-cluster: whole numbers, no margin */
		ax.hi = ceil(xhi);
		ax.step = 1;
		ax.decimals = 0;
		ax.scale = 1;
		ax.suffix = "";
	}
	for (int s = 0; s < l->nser; s++) {
		names[nn] = l->ser[s];
		shapes[nn++] = "line";
	}
	y0 = top;
	y1 = top + ph;
	x0 = left + 12;
	x1 = W - right - 12;
	svg_begin(r, W, y1 + bottom, l->title);
	legend(o, left, 40, W - right, names, nn, shapes, LABEL_CHARS);
	if (l->have_mark) {
		double lx = W - right - 150;

		fprintf(o, "<path d=\"M%.1f %.1fl6 -6l6 6l-6 6z\" fill=\"#ffffff\" stroke=\"#000000\" "
			"stroke-width=\"1.5\"/>\n", lx, 36.0);
		svg_text(o, lx + 16, 40, "start", NULL, "auto (tuner), dashed", 40);
	}
	y_axis(o, &ay, left, W - right, y0, y1, l->ytitle);
	n = ticks(&ax, t);
	for (int i = 0; i < n; i++) {
		double x = ax_px(&ax, t[i], x0, x1);

		fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n",
			x, y1, x, y1 + 4);
		svg_text(o, x, y1 + 17, "middle", NULL, tick_text(&ax, t[i], b, sizeof(b)), 16);
	}
	fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n",
		left, y1, W - right, y1);
	svg_text(o, (x0 + x1) / 2, y1 + 36, "middle", NULL, l->xtitle, 60);
	for (int s = 0; s < l->nser; s++) {
		bool pen = false;

		fputs("<path d=\"", o);
		for (int i = 0; i < l->nx; i++) {
			const struct pt *p = &l->v[i][s];

			if (!p->have)
				continue;
			fprintf(o, "%s%.1f %.1f", pen ? "L" : "M", ax_px(&ax, l->xs[i], x0, x1),
				ax_px(&ay, p->c, y1, y0));
			pen = true;
		}
		/* the first drawn widest: a line under another one stays in sight */
		fprintf(o, "%s\" stroke=\"%s\" stroke-width=\"%.1f\" fill=\"none\"/>\n",
			pen ? "" : "M0 0", colours[s], 2 + 1.5 * (l->nser - 1 - s));
		for (int i = 0; i < l->nx; i++) {
			const struct pt *p = &l->v[i][s];
			double x = ax_px(&ax, l->xs[i], x0, x1);

			if (!p->have)
				continue;
			if (p->spread)
				fprintf(o, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8\" stroke=\"%s\" "
					"fill=\"none\"/>\n", x, ax_px(&ay, p->lo, y1, y0),
					ax_px(&ay, p->hi, y1, y0), x - 4, ax_px(&ay, p->lo, y1, y0), x - 4,
					ax_px(&ay, p->hi, y1, y0), colours[s]);
			fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>", x,
				ax_px(&ay, p->c, y1, y0), colours[s]);
			esc_n(o, l->ser[s], LABEL_CHARS);
			fprintf(o, ", %s: ", tick_text(&ax, l->xs[i], b, sizeof(b)));
			fprintf(o, "%s</title></circle>\n", num(p->c, b, sizeof(b)));
		}
		if (l->mark[s].have) {
			double y = ax_px(&ay, l->mark[s].c, y1, y0),
			       x = isfinite(l->markx[s]) && fabs(l->markx[s]) < 1e6 ?
				   ax_px(&ax, l->markx[s], x0, x1) : x1;

			fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				"stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/>\n", x0, y, x1, y, colours[s]);
			fprintf(o, "<path d=\"M%.1f %.1fl7 -7l7 7l-7 7z\" fill=\"#ffffff\" stroke=\"%s\" "
				"stroke-width=\"2\"><title>auto, ", x - 7, y, colours[s]);
			esc_n(o, l->ser[s], LABEL_CHARS);
			fprintf(o, ": %s</title></path>\n", num(l->mark[s].c, b, sizeof(b)));
		}
	}
	fputs("</svg>\n", o);
}

/* ---- paired horizontal bars: base and new per row ---- */

struct pair {
	const char *label;
	double a, sa, b, sb, pdiff;
	bool sig, mm, higher;
};

struct pairs {
	const char *title, *xtitle, *base, *new_;
	struct pair *p;
	int n;
};

static void draw_pairs(struct report *r, const struct pairs *pp)
{
	FILE *o = r->o;
	double W = 1120, maxlab = 0, left, right = 150, top = 80, rowh = 30, y1, lo = NAN, hi = NAN;
	char bn[2][80];
	const char *names[2] = { bn[0], bn[1] };
	struct axis a;
	double t[41];
	char b[48], c[64];
	int n;

	for (int i = 0; i < pp->n; i++) {
		const struct pair *p = &pp->p[i];
		double v[4] = { p->a - (isfinite(p->sa) ? p->sa : 0), p->a + (isfinite(p->sa) ? p->sa : 0),
				p->b - (isfinite(p->sb) ? p->sb : 0), p->b + (isfinite(p->sb) ? p->sb : 0) };

		maxlab = fmax(maxlab, CHAR_W * (double)shown_chars(p->label, LABEL_CHARS));
		for (int k = 0; k < 4; k++)
			if (isfinite(v[k])) {
				lo = isnan(lo) ? v[k] : fmin(lo, v[k]);
				hi = isnan(hi) ? v[k] : fmax(hi, v[k]);
			}
	}
	left = fmin(320, maxlab + 16);
	if (left < 90)
		left = 90;
	axis_fit(&a, lo, hi, true);
	y1 = top + rowh * pp->n;
	svg_begin(r, W, y1 + 48, pp->title);
	for (int k = 0; k < 2; k++) {	/* the file's name; its directory is in the heading */
		const char *path = k ? pp->new_ : pp->base, *slash = strrchr(path, '/');

		snprintf(bn[k], sizeof(bn[k]), "%s: %s", k ? "new" : "base",
			 slash && slash[1] ? slash + 1 : path);
	}
	legend(o, left, 40, W - right, names, 2, NULL, 60);
	svg_text(o, left, 60, "start", "fill=\"#555555\"",
		 "bar: mean; line: one standard deviation each way; right: change (positive is "
		 "better), * Welch p < 0.05, + mmtests rule", 200);
	n = ticks(&a, t);
	for (int i = 0; i < n; i++) {
		double x = ax_px(&a, t[i], left, W - right);

		fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n",
			x, top, x, y1);
		svg_text(o, x, y1 + 16, "middle", NULL, tick_text(&a, t[i], b, sizeof(b)), 16);
	}
	svg_text(o, (left + W - right) / 2, y1 + 36, "middle", NULL, pp->xtitle, 80);
	for (int i = 0; i < pp->n; i++) {
		const struct pair *p = &pp->p[i];
		double y = top + i * rowh, x0 = ax_px(&a, 0, left, W - right);
		const double m[2] = { p->a, p->b }, s[2] = { p->sa, p->sb };
		const char *col = !p->sig ? "#555555" : p->pdiff >= 0 ? "#007a3d" : "#c0001a";

		svg_text(o, left - 6, y + rowh / 2 + 4, "end", NULL, p->label, LABEL_CHARS);
		for (int k = 0; k < 2; k++) {
			double xv = ax_px(&a, m[k], left, W - right), yy = y + 3 + k * 12;

			if (!isfinite(m[k]))
				continue;
			fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"11\" fill=\"%s\">"
				"<title>%s: %s</title></rect>\n", fmin(x0, xv), yy, fabs(xv - x0),
				colours[k], k ? "new" : "base", num(m[k], b, sizeof(b)));
			if (isfinite(s[k]) && s[k] > 0)
				fprintf(o, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#222222\" fill=\"none\"/>\n",
					ax_px(&a, m[k] - s[k], left, W - right), yy + 5.5,
					ax_px(&a, m[k] + s[k], left, W - right));
		}
		if (isfinite(p->pdiff))
			snprintf(c, sizeof(c), "%+.2f%%%s%s", p->pdiff, p->sig ? " *" : "",
				 p->mm ? " +" : "");
		else
			snprintf(c, sizeof(c), "n/a");
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\"%s>%s</text>\n", W - right + 8,
			y + rowh / 2 + 4, col, p->sig ? " font-weight=\"bold\"" : "", c);
	}
	fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n",
		ax_px(&a, 0, left, W - right), top, ax_px(&a, 0, left, W - right), y1);
	fputs("</svg>\n", o);
}

/* ---- reading rows ---- */

/* metric NAME of row, read; false (and why, if it is there but unreadable) if not usable */
static bool row_metric(struct report *r, const struct input *in, const struct pc_json *row,
		       const char *name, struct bench_metric *m)
{
	const struct pc_json *v = pc_json_get(pc_json_get(row, "metrics"), name);

	double mean, lo, hi;

	(void)r;
	(void)in;
	if (!v || bench_metric_read(v, row, m))
		return false;
	/* the summary as the file states it, where it does (compare computes its own) */
	mean = pc_json_number(pc_json_get(v, "mean"), NAN);
	lo = pc_json_number(pc_json_get(v, "min"), NAN);
	hi = pc_json_number(pc_json_get(v, "max"), NAN);
	if (isfinite(mean))
		m->s.mean = mean;
	if (isfinite(lo) && isfinite(hi)) {
		m->s.min = lo;
		m->s.max = hi;
		m->minmax = true;
	}
	return true;
}

/* A metric as a point: the median (with per-run values) or the mean, min to max. */
static struct pt metric_pt(const struct bench_metric *m, bool median)
{
	struct pt p = { .have = true };

	p.c = median && m->values ? m->s.median : m->s.mean;
	if (m->minmax) {
		p.spread = true;
		p.lo = m->s.min;
		p.hi = m->s.max;
	}
	if (!isfinite(p.c))
		p.have = false;
	return p;
}

static size_t nrows(const struct input *in)
{
	size_t n = pc_json_count(pc_json_get(in->doc, "results"));

	return n > MAX_ROWS ? MAX_ROWS : n;
}

static const struct pc_json *row_at(const struct input *in, size_t i)
{
	return pc_json_at(pc_json_get(in->doc, "results"), i);
}

/* ---- the sections ---- */

/* A section's start and heading, and its line in the list at the top. */
static void h2(struct report *r, const char *id, const char *title, const struct input *in)
{
	FILE *f[2] = { r->o, r->toc };

	fprintf(r->o, "<section id=\"%s\">\n<h2>", id);
	fprintf(r->toc, "<li><a href=\"#%s\">", id);
	for (int k = 0; k < 2; k++) {
		esc(f[k], title);
		if (in) {
			fputs(": <code>", f[k]);
			esc(f[k], in->path);
			fputs("</code>", f[k]);
		}
	}
	fputs("</h2>\n", r->o);
	fputs("</a></li>\n", r->toc);
}

static void note(struct report *r, const char *fmt, const char *s)
{
	/* fmt has one %s or none, for s; fmt is ours, s is escaped */
	const char *at = strstr(fmt, "%s");

	fputs("<p class=\"note\">", r->o);
	if (at) {
		fwrite(fmt, 1, (size_t)(at - fmt), r->o);
		esc(r->o, s);
		fputs(at + 2, r->o);
	} else
		fputs(fmt, r->o);
	fputs("</p>\n", r->o);
}

/* The file's other top-level members: objects as key and value, scalars too. */
static void extras(struct report *r, const struct input *in, const char *id)
{
	FILE *o = r->o;
	size_t n = pc_json_count(in->doc);
	bool any = false;

	for (size_t i = 0; i < n && i < 64; i++) {
		const char *k = pc_json_key_at(in->doc, i, NULL);
		const struct pc_json *v = pc_json_at(in->doc, i);
		size_t m = pc_json_count(v);

		if (!strcmp(k, "results") || !strcmp(k, "bench"))
			continue;
		if (pc_json_type(v) == PC_JSON_ARRAY) {
			if (!strcmp(k, "errors") && m == 0)
				continue;
		}
		if (!any)
			fprintf(o, "<details><summary>What else the file says</summary>\n"
				"<table class=\"kv\" id=\"%s-extra\">\n", id);
		any = true;
		if (pc_json_type(v) == PC_JSON_OBJECT) {
			for (size_t j = 0; j < m && j < 256; j++) {
				fputs("<tr>", o);
				fputs("<th>", o);
				esc(o, k);
				fputs(".", o);
				esc(o, pc_json_key_at(v, j, NULL));
				fputs("</th>", o);
				{
					const struct pc_json *x = pc_json_at(v, j);
					char *t = NULL;

					if (pc_json_type(x) == PC_JSON_STRING)
						td_text(o, pc_json_string(x, NULL));
					else if (pc_json_type(x) == PC_JSON_NUMBER)
						td_num(o, pc_json_number(x, NAN));
					else if (pc_json_canonical(x, NULL, &t) == 0)
						td_text(o, t);
					free(t);
				}
				fputs("</tr>\n", o);
			}
		} else {
			char *t = NULL;

			fputs("<tr><th>", o);
			esc(o, k);
			fputs("</th>", o);
			if (pc_json_type(v) == PC_JSON_STRING)
				td_text(o, pc_json_string(v, NULL));
			else if (pc_json_type(v) == PC_JSON_ARRAY && m > 0 && strcmp(k, "errors")) {
				char b[48];

				snprintf(b, sizeof(b), "a list of %zu", m);
				td_text(o, b);
			} else if (pc_json_canonical(v, NULL, &t) == 0)
				td_text(o, t);
			free(t);
			fputs("</tr>\n", o);
		}
	}
	if (any)
		fputs("</table></details>\n", o);
}

/* Every metric of every row: label, metric, unit, runs, mean, stddev, min, median, max. */
static void all_metrics(struct report *r, const struct input *in, const char *id)
{
	FILE *o = r->o;
	size_t n = nrows(in), lines = 0;

	fprintf(o, "<details><summary>Every metric of every row</summary>\n<table class=\"data\" "
		"id=\"%s-all\">\n<tr><th>row</th><th>metric</th><th>unit</th><th>better</th>"
		"<th>runs</th><th>mean</th><th>stddev</th><th>min</th><th>median</th><th>max</th>"
		"</tr>\n", id);
	for (size_t i = 0; i < n && lines < MAX_LINES; i++) {
		const struct pc_json *row = row_at(in, i), *ms = pc_json_get(row, "metrics");
		char *label;

		if (pc_json_type(ms) != PC_JSON_OBJECT)
			continue;	/* said when the file was read */
		label = bench_row_label(row);
		for (size_t k = 0; k < pc_json_count(ms) && lines < MAX_LINES; k++, lines++) {
			struct bench_metric m;
			const char *why = bench_metric_read(pc_json_at(ms, k), row, &m);

			fputs("<tr>", o);
			td_text(o, label ? label : "?");
			td_text(o, pc_json_key_at(ms, k, NULL));
			if (why) {
				fputs("<td colspan=\"8\">unreadable: ", o);
				esc(o, why);
				fputs("</td></tr>\n", o);
				continue;
			}
			td_text(o, m.unit ? m.unit : "");
			td_text(o, m.better == 1 ? "higher" : m.better == 0 ? "lower" : "");
			fprintf(o, "<td class=\"n\">%zu</td>", m.s.n);
			td_num(o, m.s.mean);
			td_num(o, m.s.stddev);
			td_num(o, m.minmax ? m.s.min : NAN);
			td_num(o, m.values ? m.s.median : NAN);
			td_num(o, m.minmax ? m.s.max : NAN);
			fputs("</tr>\n", o);
		}
		free(label);
	}
	fputs("</table>\n", o);
	if (lines == MAX_LINES)
		note(r, "the table stops at 20,000 lines", NULL);
	fputs("</details>\n", o);
}

/* "q2_ms" -> 2; 0 if not a query latency */
static int qnum(const char *name)
{
	char *end;
	long v;

	if (!name || name[0] != 'q' || name[1] < '1' || name[1] > '9')
		return 0;
	v = strtol(name + 1, &end, 10);
	return strcmp(end, "_ms") || v < 1 || v > 99 ? 0 : (int)v;
}

static void section_warmup(struct report *r, const struct input *in)
{
	FILE *o = r->o;
	struct bars *b = calloc(1, sizeof(*b));
	const char *qs[MAX_QCHART];
	char *cats[MAX_CATS] = { 0 }, id[32], title[96];
	size_t n = nrows(in), rows[MAX_CATS];
	int nq = 0, runs = -1, runs_hi = 0;

	snprintf(id, sizeof(id), "warmup-%d", in->n);
	h2(r, id, "Warm-up latency per condition", in);
	if (!b) {
		note(r, "out of memory", NULL);
		goto out;
	}
	/* the query metrics, q1_ms, q2_ms, ..., in order, from every row */
	for (int want = 1; want < 100 && nq < MAX_QCHART; want++) {
		const char *found = NULL;

		for (size_t i = 0; i < n && !found; i++) {
			const struct pc_json *ms = pc_json_get(row_at(in, i), "metrics");

			for (size_t k = 0; k < pc_json_count(ms) && !found; k++)
				if (qnum(pc_json_key_at(ms, k, NULL)) == want)
					found = pc_json_key_at(ms, k, NULL);
		}
		if (found)
			qs[nq++] = found;
	}
	for (size_t i = 0; i < n && b->ncat < MAX_CATS; i++) {
		const struct pc_json *row = row_at(in, i);
		const char *c = pc_json_string(pc_json_get(row, "condition"), NULL);

		if (pc_json_type(pc_json_get(row, "metrics")) != PC_JSON_OBJECT)
			continue;	/* said when it was read */

		cats[b->ncat] = c ? strdup(c) : bench_row_label(row);
		if (!cats[b->ncat])
			continue;
		b->cats[b->ncat] = cats[b->ncat];
		rows[b->ncat] = i;
		for (int q = 0; q < nq; q++) {
			struct bench_metric m;

			if (row_metric(r, in, row, qs[q], &m)) {
				b->v[b->ncat][q] = metric_pt(&m, true);
				int k = (int)(m.s.n > 100000 ? 100000 : m.s.n);

				runs = runs < 0 || k < runs ? k : runs;
				runs_hi = k > runs_hi ? k : runs_hi;
			}
		}
		b->ncat++;
	}
	if (n > MAX_CATS)
		note(r, "more conditions than one chart holds: the first 64 are drawn", NULL);
	if (!nq || !b->ncat) {
		note(r, "no query latencies (q1_ms, ...) to draw", NULL);
	} else {
		static const char *const qlabel[MAX_QCHART] = { "Q1", "Q2", "Q3", "Q4", "Q5", "Q6" };
		char qn[MAX_QCHART][16];

		for (int q = 0; q < nq; q++) {
			snprintf(qn[q], sizeof(qn[q]), "%s (%.8s)", qlabel[q], qs[q]);
			b->ser[q] = qn[q];
		}
		b->nser = nq;
		if (runs == runs_hi)
			snprintf(title, sizeof(title), "Time of the first queries after a restart, per "
				 "condition (%d trial%s each)", runs, runs == 1 ? "" : "s");
		else
			snprintf(title, sizeof(title), "Time of the first queries after a restart, per "
				 "condition (%d to %d trials)", runs, runs_hi);
		b->title = title;
		b->ytitle = "query time (ms)";
		b->note = "bar: median of the trials; line: min to max (the mean where the file "
			  "has no per-trial values)";
		draw_bars(r, b);
		fprintf(o, "<table class=\"data\" id=\"%s-table\">\n<tr><th>condition</th>"
			"<th>metric</th><th>trials</th><th>min</th><th>median</th><th>max</th>"
			"<th>mean</th><th>unit</th></tr>\n", id);
		for (int c = 0; c < b->ncat; c++)
			for (int q = 0; q < nq; q++) {
				struct bench_metric m;

				if (!row_metric(r, in, row_at(in, rows[c]), qs[q], &m))
					continue;
				fputs("<tr>", o);
				td_text(o, b->cats[c]);
				td_text(o, qs[q]);
				fprintf(o, "<td class=\"n\">%zu</td>", m.s.n);
				td_num(o, m.minmax ? m.s.min : NAN);
				td_num(o, m.values ? m.s.median : NAN);
				td_num(o, m.minmax ? m.s.max : NAN);
				td_num(o, m.s.mean);
				td_text(o, m.unit ? m.unit : "");
				fputs("</tr>\n", o);
			}
		fputs("</table>\n", o);
	}
	all_metrics(r, in, id);
	extras(r, in, id);
out:
	fputs("</section>\n", o);
	for (int c = 0; c < MAX_CATS; c++)
		free(cats[c]);
	free(b);
}

/* readtwice's limit per cgroup: the row's, else the file's total or setup; NaN: none said */
static double rt_limit(const struct input *in, const struct pc_json *row)
{
	static const char *const keys[] = { "limit_bytes", "limit" };
	const struct pc_json *where[] = { row, pc_json_get(in->doc, "total"),
					  pc_json_get(in->doc, "setup") };

	for (size_t w = 0; w < 3; w++)
		for (size_t k = 0; k < 2; k++) {
			const struct pc_json *v = pc_json_get(where[w], keys[k]);

			if (pc_json_type(v) == PC_JSON_NUMBER)
				return pc_json_number(v, NAN);
			if (pc_json_type(v) == PC_JSON_NULL || pc_json_type(v) == PC_JSON_BOOL)
				return NAN;
		}
	return NAN;
}

static void limit_text(double v, char *buf, size_t len)
{
	char b[40];

	if (isnan(v))
		snprintf(buf, len, "none");
	else if (v > 0 && v < 1.8e19 && v == floor(v))
		fmt_size((uint64_t)v, buf, len);
	else
		snprintf(buf, len, "%s", num(v, b, sizeof(b)));
}

struct rtpoint {
	const struct input *in;
	const struct pc_json *row;
	const char *layout;
	double cgroups, readers, limit;
	char series[160];
	int order;			/* its series' index */
	size_t seq;			/* its place among the rows read */
};

static int cmp_rtpoint(const void *a, const void *b)
{
	const struct rtpoint *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	if (x->cgroups != y->cgroups && !isnan(x->cgroups) && !isnan(y->cgroups))
		return x->cgroups < y->cgroups ? -1 : 1;
	if (isnan(x->cgroups) != isnan(y->cgroups))
		return isnan(x->cgroups) ? 1 : -1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void section_readtwice(struct report *r)
{
	FILE *o = r->o;
	struct bars *b = calloc(1, sizeof(*b));
	struct rtpoint *pts = NULL;
	size_t npts = 0, cap = 0;
	double cgs[MAX_CATS], readers0 = NAN;
	char catl[MAX_CATS][40], b1[40], b2[40];
	char sers[MAX_SER][160];
	int ncg = 0, nfiles = 0;
	bool readers_vary = false, dropped = false;

	for (int f = 0; f < r->nin; f++)
		nfiles += r->in[f].kind == K_READTWICE;
	if (!nfiles)
		goto out;
	h2(r, "readtwice", "readtwice: page-cache read throughput per layout and cgroup count",
	   NULL);
	if (!b)
		goto out;
	for (int f = 0; f < r->nin; f++) {
		const struct input *in = &r->in[f];

		if (in->kind != K_READTWICE)
			continue;
		for (size_t i = 0; i < nrows(in); i++) {
			const struct pc_json *row = row_at(in, i);
			struct rtpoint p = { .in = in, .row = row };

			if (pc_grow(&pts, &cap, npts, sizeof(*pts)) < 0)
				break;
			p.layout = pc_json_string(pc_json_get(row, "layout"), NULL);
			p.cgroups = pc_json_number(pc_json_get(row, "cgroups"), NAN);
			p.readers = pc_json_number(pc_json_get(row, "readers_per_cgroup"), NAN);
			p.limit = rt_limit(in, row);
			p.seq = npts;
			if (isnan(readers0))
				readers0 = p.readers;
			else if (p.readers != readers0 && !(isnan(p.readers)))
				readers_vary = true;
			pts[npts++] = p;
		}
	}
	for (size_t i = 0; i < npts; i++) {
		struct rtpoint *p = &pts[i];
		int s;

		limit_text(p->limit, b1, sizeof(b1));
		snprintf(p->series, sizeof(p->series), "%.60s%s%s%s%s", p->layout ? p->layout : "?",
			 isnan(p->limit) ? "" : ", limit ", isnan(p->limit) ? "" : b1,
			 readers_vary ? ", readers " : "",
			 readers_vary ? num(p->readers, b2, sizeof(b2)) : "");
		for (s = 0; s < b->nser && strcmp(b->ser[s], p->series); s++)
			;
		if (s == b->nser && s < MAX_SER) {
			snprintf(sers[s], sizeof(sers[s]), "%s", p->series);
			b->ser[b->nser++] = sers[s];
		}
		if (!isfinite(p->cgroups))
			continue;
		for (s = 0; s < ncg && cgs[s] != p->cgroups; s++)
			;
		if (s == ncg && ncg < MAX_CATS)
			cgs[ncg++] = p->cgroups;
	}
	qsort(cgs, (size_t)ncg, sizeof(cgs[0]), cmp_double);
	/* the table in the chart's order: series as they came, then cgroups */
	for (size_t i = 0; i < npts; i++) {
		int s;

		for (s = 0; s < b->nser && strcmp(b->ser[s], pts[i].series); s++)
			;
		pts[i].order = s;
	}
	if (npts)
		qsort(pts, npts, sizeof(*pts), cmp_rtpoint);
	for (int c = 0; c < ncg; c++) {
		snprintf(catl[c], sizeof(catl[c]), "%s", num(cgs[c], b1, sizeof(b1)));
		b->cats[c] = catl[c];
	}
	b->ncat = ncg;
	for (size_t i = 0; i < npts; i++) {
		struct rtpoint *p = &pts[i];
		struct bench_metric m;
		int s, c;

		for (s = 0; s < b->nser && strcmp(b->ser[s], p->series); s++)
			;
		for (c = 0; c < ncg && cgs[c] != p->cgroups; c++)
			;
		if (s == b->nser || c == ncg || !row_metric(r, p->in, p->row, "aggregate_mbps", &m)) {
			dropped = true;
			continue;
		}
		if (b->v[c][s].have)
			continue;	/* the first file's; the table has them all */
		b->v[c][s] = metric_pt(&m, false);
	}
	b->title = "Aggregate read throughput of all readers, per number of memory cgroups";
	b->ytitle = "all readers (MB/s, 1e6 bytes/s)";
	b->note = "bar: mean over the runs; line: min to max of the runs; x: memory cgroups";
	if (ncg && b->nser)
		draw_bars(r, b);
	else
		note(r, "no row with a cgroup count and aggregate_mbps to draw", NULL);
	if (dropped)
		note(r, "rows without a cgroup count or aggregate_mbps, past 8 series or past 64 "
		     "cgroup counts, and a second row of the same series and count, are in the "
		     "table only", NULL);
	fputs("<table class=\"data\" id=\"readtwice-table\">\n<tr><th>file</th><th>layout</th>"
	      "<th>limit per cgroup</th><th>readers per cgroup</th><th>cgroups</th><th>runs</th>"
	      "<th>aggregate MB/s mean</th><th>min</th><th>max</th><th>per reader MB/s mean</th>"
	      "</tr>\n", o);
	for (size_t i = 0; i < npts; i++) {
		struct rtpoint *p = &pts[i];
		struct bench_metric m;

		fputs("<tr>", o);
		td_text(o, p->in->path);
		td_text(o, p->layout ? p->layout : "?");
		limit_text(p->limit, b1, sizeof(b1));
		td_text(o, b1);
		td_num(o, p->readers);
		td_num(o, p->cgroups);
		td_num(o, pc_json_number(pc_json_get(p->row, "runs"), NAN));
		if (row_metric(r, p->in, p->row, "aggregate_mbps", &m)) {
			td_num(o, m.s.mean);
			td_num(o, m.minmax ? m.s.min : NAN);
			td_num(o, m.minmax ? m.s.max : NAN);
		} else
			fputs("<td>n/a</td><td>n/a</td><td>n/a</td>", o);
		if (row_metric(r, p->in, p->row, "mean_mbps_per_reader", &m))
			td_num(o, m.s.mean);
		else
			fputs("<td>n/a</td>", o);
		fputs("</tr>\n", o);
	}
	fputs("</table>\n", o);
	for (int f = 0; f < r->nin; f++) {
		char id[32];

		if (r->in[f].kind != K_READTWICE)
			continue;
		snprintf(id, sizeof(id), "readtwice-%d", r->in[f].n);
		fputs("<h3>", o);
		esc(o, r->in[f].path);
		fputs("</h3>\n", o);
		all_metrics(r, &r->in[f], id);
		extras(r, &r->in[f], id);
	}
	fputs("</section>\n", o);
out:
	free(pts);
	free(b);
}

/* page_cluster of a swapin row: a number, or -1 for "auto"; false if neither */
static bool sw_pc(const struct pc_json *row, double *pc, bool *is_auto)
{
	const struct pc_json *v = pc_json_get(row, "page_cluster");
	const char *s = pc_json_string(v, NULL);

	*is_auto = s && !strcmp(s, "auto");
	*pc = pc_json_number(v, NAN);
	return *is_auto || (isfinite(*pc) && fabs(*pc) < 1e6);
}

static void swapin_chart(struct report *r, const struct input *in, const char *wl,
			 const char *metric, const char *ytitle, const char *const *vmas, int nvma)
{
	struct lines *l = calloc(1, sizeof(*l));
	char title[128];

	if (!l)
		return;
	snprintf(title, sizeof(title), "%.40s: %s", wl, !strcmp(metric, "real") ? "real time" :
		 metric);
	l->title = title;
	l->ytitle = ytitle;
	l->xtitle = "vm.page-cluster (2^N pages a swap-in reads ahead)";
	for (int s = 0; s < nvma; s++) {
		l->ser[s] = vmas[s];
		l->markx[s] = NAN;
	}
	l->nser = nvma;
	for (size_t i = 0; i < nrows(in); i++) {
		const struct pc_json *row = row_at(in, i);
		const char *w = pc_json_string(pc_json_get(row, "workload"), NULL),
			   *vma = pc_json_string(pc_json_get(row, "vma_ra"), NULL);
		struct bench_metric m;
		double pc;
		bool is_auto;
		int s, x;

		if (!w || strcmp(w, wl) || !sw_pc(row, &pc, &is_auto))
			continue;
		for (s = 0; s < nvma && strcmp(vmas[s], vma ? vma : "(all)"); s++)
			;
		if (s == nvma || !row_metric(r, in, row, metric, &m))
			continue;
		if (is_auto) {
			struct bench_metric ap;

			if (l->mark[s].have)
				continue;
			l->mark[s] = metric_pt(&m, false);
			l->have_mark = l->have_mark || l->mark[s].have;
			if (row_metric(r, in, row, "auto_page_cluster", &ap))
				l->markx[s] = ap.s.mean;
			continue;
		}
		for (x = 0; x < l->nx && l->xs[x] != pc; x++)
			;
		if (x == l->nx) {
			if (l->nx == MAX_X)
				continue;
			l->xs[l->nx++] = pc;
		}
		if (!l->v[x][s].have)
			l->v[x][s] = metric_pt(&m, false);
	}
	/* x in order, with their points */
	for (int i = 1; i < l->nx; i++)
		for (int k = i; k > 0 && l->xs[k - 1] > l->xs[k]; k--) {
			double t = l->xs[k];
			struct pt tp[MAX_SER];

			l->xs[k] = l->xs[k - 1];
			l->xs[k - 1] = t;
			memcpy(tp, l->v[k], sizeof(tp));
			memcpy(l->v[k], l->v[k - 1], sizeof(tp));
			memcpy(l->v[k - 1], tp, sizeof(tp));
		}
	draw_lines(r, l);
	free(l);
}

static void section_swapin(struct report *r, const struct input *in)
{
	FILE *o = r->o;
	const char *wls[MAX_WL], *vmas[MAX_SER];
	int nwl = 0, nvma = 0;
	bool more = false, faults = false;
	char id[32];
	size_t n = nrows(in);

	snprintf(id, sizeof(id), "swapin-%d", in->n);
	h2(r, id, "Swap-in: real time and major faults against page-cluster", in);
	for (size_t i = 0; i < n; i++) {
		const struct pc_json *row = row_at(in, i);
		const char *w = pc_json_string(pc_json_get(row, "workload"), NULL),
			   *v = pc_json_string(pc_json_get(row, "vma_ra"), NULL);
		int k;

		if (!v)
			v = "(all)";
		if (!w)
			continue;
		faults = faults || pc_json_get(pc_json_get(row, "metrics"), "pgmajfault");
		for (k = 0; k < nwl && strcmp(wls[k], w); k++)
			;
		if (k == nwl) {
			if (nwl < MAX_WL)
				wls[nwl++] = w;
			else
				more = true;
		}
		for (k = 0; k < nvma && strcmp(vmas[k], v); k++)
			;
		if (k == nvma) {
			if (nvma < MAX_SER)
				vmas[nvma++] = v;
			else
				more = true;
		}
	}
	if (more)
		note(r, "more workloads or VMA readahead settings than drawn (8 each): the rest "
		     "are in the table of every metric", NULL);
	if (!nwl)
		note(r, "no row with a workload to draw", NULL);
	fputs("<p class=\"note\">A line per VMA readahead setting (vma_ra), a point per "
	      "page-cluster: the mean of the runs, the whisker from min to max. The tuner's run "
	      "(page_cluster \"auto\"): the diamond, at the mean page-cluster it ran at "
	      "(auto_page_cluster, time-weighted), with a dashed line at its value across the "
	      "chart.</p>\n", o);
	for (int w = 0; w < nwl; w++) {
		char tid[64];

		fputs("<div class=\"row\">\n", o);
		swapin_chart(r, in, wls[w], "real", "real time (s)", vmas, nvma);
		if (faults)
			swapin_chart(r, in, wls[w], "pgmajfault", "major faults (count)", vmas, nvma);
		fputs("</div>\n", o);
		snprintf(tid, sizeof(tid), "%s-w%d-table", id, w + 1);
		fprintf(o, "<table class=\"data\" id=\"%s\">\n<tr><th>workload</th><th>vma_ra</th>"
			"<th>page-cluster</th><th>runs</th><th>real mean (s)</th><th>min</th><th>max</th>"
			"<th>major faults mean</th><th>min</th><th>max</th><th>auto's page-cluster</th>"
			"</tr>\n", tid);
		for (size_t i = 0; i < n; i++) {
			const struct pc_json *row = row_at(in, i);
			const char *wl = pc_json_string(pc_json_get(row, "workload"), NULL),
				   *v = pc_json_string(pc_json_get(row, "vma_ra"), NULL);
			struct bench_metric m;
			double pc;
			bool is_auto;

			if (!wl || strcmp(wl, wls[w]) || !sw_pc(row, &pc, &is_auto))
				continue;
			fputs("<tr>", o);
			td_text(o, wl);
			td_text(o, v ? v : "(all)");
			if (is_auto)
				td_text(o, "auto");
			else
				td_num(o, pc);
			td_num(o, pc_json_number(pc_json_get(row, "runs"), NAN));
			for (int k = 0; k < 2; k++) {
				if (row_metric(r, in, row, k ? "pgmajfault" : "real", &m)) {
					td_num(o, m.s.mean);
					td_num(o, m.minmax ? m.s.min : NAN);
					td_num(o, m.minmax ? m.s.max : NAN);
				} else
					fputs("<td>n/a</td><td>n/a</td><td>n/a</td>", o);
			}
			if (is_auto && row_metric(r, in, row, "auto_page_cluster", &m))
				td_num(o, m.s.mean);
			else
				fputs("<td></td>", o);
			fputs("</tr>\n", o);
		}
		fputs("</table>\n", o);
	}
	all_metrics(r, in, id);
	extras(r, in, id);
	fputs("</section>\n", o);
}

static void section_other(struct report *r, const struct input *in)
{
	char id[32];

	snprintf(id, sizeof(id), "other-%d", in->n);
	h2(r, id, "A result of a bench this report has no chart for", in);
	note(r, "bench %s: its numbers, as read", in->bench);
	all_metrics(r, in, id);
	extras(r, in, id);
	fputs("</section>\n", r->o);
}

/* The metrics a comparison of this bench charts; the rest are in its table. */
static bool compare_charted(enum kind k, const char *metric, bool first_seen)
{
	switch (k) {
	case K_WARMUP:
		return qnum(metric) > 0;
	case K_SWAPIN:
		return !strcmp(metric, "real") || !strcmp(metric, "pgmajfault");
	case K_READTWICE:
		return !strcmp(metric, "aggregate_mbps") || !strcmp(metric, "mean_mbps_per_reader");
	default:
		return first_seen;
	}
}

static void section_compare(struct report *r, const struct input *a, const struct input *b,
			    int nth)
{
	FILE *o = r->o;
	struct bench_cmpset *cs = NULL;
	struct bench_cmp x;
	const char *charted[8];
	int ncharted = 0;
	char id[32], title[200];
	size_t n;

	if (bench_cmpset_make(a->path, a->doc, b->path, b->doc, true, &cs) != 0) {
		bench_cmpset_free(cs);
		return;
	}
	n = bench_cmpset_count(cs);
	if (!n) {
		bench_cmpset_free(cs);
		return;
	}
	snprintf(id, sizeof(id), "compare-%d", nth);
	fprintf(o, "<section id=\"%s\">\n<h2>", id);
	fprintf(r->toc, "<li><a href=\"#%s\">", id);
	for (int k = 0; k < 2; k++) {
		FILE *f = k ? r->toc : o;

		fputs("Compared (", f);
		esc(f, a->bench);
		fputs("): base <code>", f);
		esc(f, a->path);
		fputs("</code>, new <code>", f);
		esc(f, b->path);
		fputs("</code>", f);
	}
	fputs("</h2>\n", o);
	fputs("</a></li>\n", r->toc);
	fputs("<p class=\"note\">As <code>pagecache bench compare</code> reads them: rows matched "
	      "by identity, the change in percent with positive better, <b>*</b> where Welch's "
	      "t-test (two-sided) finds the means different at p &lt; 0.05, <b>+</b> where the "
	      "mmtests rule |d| &gt; 1.96 (sd_base + sd_new) holds.</p>\n", o);
	for (int s = 0; s < 2; s++) {
		int m = bench_cmpset_min_runs(cs, s);

		if (m >= 0 && m < BENCH_CMP_MIN_RUNS)
			note(r, "<code>%s</code> has metrics of fewer than 5 runs: with so few the "
			     "marks are noise", s ? b->path : a->path);
	}
	if (bench_cmpset_unmatched(cs))
		note(r, "rows or metrics in one file only are left out (see <code>pagecache bench "
		     "compare</code>)", NULL);
	for (size_t i = 0; i < n; i++) {
		int k;

		bench_cmpset_get(cs, i, &x);
		for (k = 0; k < ncharted && strcmp(charted[k], x.metric); k++)
			;
		if (k == ncharted && ncharted < 8 && compare_charted(a->kind, x.metric, !ncharted))
			charted[ncharted++] = x.metric;
	}
	for (int k = 0; k < ncharted; k++) {
		struct pair *p = calloc(MAX_PAIRS, sizeof(*p));
		struct pairs pp = { .base = a->path, .new_ = b->path, .p = p };
		const char *unit = NULL;
		char xt[96];
		size_t total = 0;

		if (!p)
			break;
		for (size_t i = 0; i < n; i++) {
			bench_cmpset_get(cs, i, &x);
			if (strcmp(x.metric, charted[k]))
				continue;
			total++;
			if (pp.n == MAX_PAIRS)
				continue;
			unit = unit ? unit : x.unit;
			p[pp.n++] = (struct pair){ x.row, x.base_mean, x.base_stddev, x.new_mean,
						   x.new_stddev, x.pdiff, x.significant,
						   x.mmtests_significant, x.higher };
		}
		snprintf(title, sizeof(title), "%.40s: base and new per row (%s is better)",
			 charted[k], p[0].higher ? "higher" : "lower");
		snprintf(xt, sizeof(xt), "%.40s (%.20s)", charted[k], unit ? unit : "no unit given");
		pp.title = title;
		pp.xtitle = xt;
		draw_pairs(r, &pp);
		if (total > MAX_PAIRS)
			note(r, "more rows than one chart holds: the first 96 are drawn, all are in the "
			     "table", NULL);
		free(p);
	}
	fprintf(o, "<table class=\"data\" id=\"%s-table\">\n<tr><th>row</th><th>metric</th>"
		"<th>unit</th><th>better</th><th>mean kind</th><th>base mean</th><th>base stddev</th>"
		"<th>new mean</th><th>new stddev</th><th>change %%</th><th>Welch p</th>"
		"<th>significant</th><th>mmtests</th><th>runs base/new</th></tr>\n", id);
	for (size_t i = 0; i < n; i++) {
		char rb[48];

		bench_cmpset_get(cs, i, &x);
		fputs("<tr>", o);
		td_text(o, x.row);
		td_text(o, x.metric);
		td_text(o, x.unit ? x.unit : "");
		td_text(o, x.higher ? "higher" : "lower");
		td_text(o, x.hmean ? "hmean" : "amean");
		td_num(o, x.base_mean);
		td_num(o, x.base_stddev);
		td_num(o, x.new_mean);
		td_num(o, x.new_stddev);
		td_num(o, x.pdiff);
		td_num(o, x.welch_p);
		td_text(o, x.significant ? "*" : "");
		td_text(o, x.mmtests_significant ? "+" : "");
		snprintf(rb, sizeof(rb), "%zu/%zu", x.runs_base, x.runs_new);
		td_text(o, rb);
		fputs("</tr>\n", o);
	}
	fputs("</table>\n</section>\n", o);
	bench_cmpset_free(cs);
}

/* ---- the document ---- */

static const char style[] =
	"body{font-family:'DejaVu Sans','Liberation Sans',Arial,sans-serif;margin:16px 24px;"
	"color:#111;background:#fff;max-width:1160px}"
	"h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}"
	"h3{font-size:15px}code{font-size:13px}"
	"svg.chart{display:block;margin:8px 0;max-width:100%;height:auto;border:1px solid #eee}"
	"div.row{display:flex;flex-wrap:wrap;gap:8px}"
	"table{border-collapse:collapse;font-size:12px;margin:6px 0 14px;display:block;"
	"overflow-x:auto;max-width:100%}"
	"th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"th{background:#f3f3f3}p.note{color:#444;font-size:13px}ul.files{columns:2}"
	"details{margin:6px 0}summary{cursor:pointer;color:#0b4f8a}";

static int fill(FILE *o, void *arg)
{
	const char **doc = arg;
	size_t len = strlen(*doc);

	return fwrite(*doc, 1, len, o) == len ? 0 : -EIO;
}

int bench_report(const char *out, char *const *files, int nfiles)
{
	struct report *r = calloc(1, sizeof(*r));
	char *doc = NULL, *body = NULL, *toc = NULL, when[64];
	size_t len = 0, blen = 0, tlen = 0;
	int rc = 0, ncmp = 0, nkind[K_OTHER + 1] = { 0 };
	time_t now = time(NULL);
	struct tm tm;

	if (!r) {
		cli_fail(out, ENOMEM, "cannot write");
		return EXIT_PARTIAL;
	}
	if (nfiles > MAX_FILES) {
		free(r);
		return cli_usage_error("at most %d result files in one report", MAX_FILES);
	}
	for (int i = 0; i < nfiles; i++) {
		struct input *in = &r->in[r->nin];

		in->path = files[i];
		if (bench_result_read(in->path, &in->doc, &in->bench) < 0) {
			r->failures++;
			continue;
		}
		in->kind = !strcmp(in->bench, "warmup") ? K_WARMUP :
			   !strcmp(in->bench, "readtwice") ? K_READTWICE :
			   !strcmp(in->bench, "swapin") ? K_SWAPIN : K_OTHER;
		in->n = ++nkind[in->kind];
		/* rows and metrics compare would refuse: said once, here, and left out of charts */
		for (size_t k = 0; k < nrows(in); k++) {
			const struct pc_json *row = row_at(in, k), *ms = pc_json_get(row, "metrics");
			char why[400];

			if (pc_json_type(ms) != PC_JSON_OBJECT) {
				snprintf(why, sizeof(why), "results[%zu] is not an object with a "
					 "\"metrics\" object", k);
				cli_fail_msg(in->path, "invalid row in", why);
				r->failures++;
				continue;
			}
			for (size_t j = 0; j < pc_json_count(ms); j++) {
				struct bench_metric m;
				const char *bad = bench_metric_read(pc_json_at(ms, j), row, &m);
				char *label;

				if (!bad)
					continue;
				label = bench_row_label(row);
				snprintf(why, sizeof(why), "row '%.100s', metric '%.100s': %s",
					 label ? label : "?", pc_json_key_at(ms, j, NULL), bad);
				free(label);
				cli_fail_msg(in->path, "invalid metric in", why);
				r->failures++;
			}
		}
		if (pc_json_count(pc_json_get(in->doc, "results")) > MAX_ROWS)
			cli_warn("'%s': more than %d rows: the first %d are drawn", in->path, MAX_ROWS,
				 MAX_ROWS);
		r->nin++;
	}
	if (!r->nin) {
		cli_warn("no result to draw: '%s' not written", out);
		rc = EXIT_PARTIAL;
		goto out;
	}
	r->o = open_memstream(&body, &blen);
	r->toc = open_memstream(&toc, &tlen);
	if (!r->o || !r->toc)
		goto nomem;
	for (int i = 0; i < r->nin; i++)
		if (r->in[i].kind == K_WARMUP)
			section_warmup(r, &r->in[i]);
	section_readtwice(r);
	for (int i = 0; i < r->nin; i++)
		if (r->in[i].kind == K_SWAPIN)
			section_swapin(r, &r->in[i]);
	for (int i = 0; i < r->nin; i++)
		if (r->in[i].kind == K_OTHER)
			section_other(r, &r->in[i]);
	/* the first result of each bench against each later one of that bench */
	for (int i = 0; i < r->nin; i++) {
		int first;

		for (first = 0; strcmp(r->in[first].bench, r->in[i].bench); first++)
			;
		if (first != i)
			section_compare(r, &r->in[first], &r->in[i], ++ncmp);
	}
	rc = fclose(r->o);
	r->o = NULL;
	if (fclose(r->toc) != 0 || rc != 0) {
		r->toc = NULL;
		goto nomem;
	}
	r->toc = NULL;
	r->o = open_memstream(&doc, &len);
	if (!r->o)
		goto nomem;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
	fprintf(r->o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"style-src 'unsafe-inline'\"/>\n<title>pagecache bench report</title>\n"
		"<style>%s</style>\n</head>\n<body>\n<h1>pagecache bench report</h1>\n"
		"<p class=\"note\">Drawn by pagecache %s on %s from %d result file%s:</p>\n"
		"<ul class=\"files\">\n",
		style, PC_VERSION, when, r->nin, r->nin == 1 ? "" : "s");
	for (int i = 0; i < r->nin; i++) {
		fputs("<li><code>", r->o);
		esc(r->o, r->in[i].path);
		fputs("</code> (", r->o);
		esc(r->o, r->in[i].bench);
		fputs(")</li>\n", r->o);
	}
	fprintf(r->o, "</ul>\n<nav><ul>\n%s</ul></nav>\n", toc);
	if (r->failures)
		fprintf(r->o, "<p class=\"note\"><b>%u problem%s</b> with the files given (said on "
			"stderr): files that could not be read are not here, rows and metrics that "
			"could not be read are left out of the charts.</p>\n", r->failures,
			r->failures == 1 ? "" : "s");
	fputs(body, r->o);
	fputs("</body>\n</html>\n", r->o);
	rc = fclose(r->o);
	r->o = NULL;
	if (rc != 0)
		goto nomem;
	{
		const char *d = doc;

		if (out_write_file(out, 0644, fill, &d) < 0) {
			rc = EXIT_PARTIAL;
			goto out;
		}
	}
	rc = r->failures ? EXIT_PARTIAL : 0;
	goto out;
nomem:
	cli_fail(out, ENOMEM, "cannot write");
	rc = EXIT_PARTIAL;
out:
	if (r->o)
		fclose(r->o);
	if (r->toc)
		fclose(r->toc);
	for (int i = 0; i < r->nin; i++)
		pc_json_free(r->in[i].doc);
	free(doc);
	free(body);
	free(toc);
	free(r);
	return rc;
}
