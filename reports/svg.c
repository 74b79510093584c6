/* SPDX-License-Identifier: MIT */
/* svg: line charts and stacked bars for the HTML report. */
#include "svg.h"

#include <math.h>
#include <string.h>

#include "../lib/text.h"

/* Tableau-like, distinguishable in print and for common colour blindness. */
const char *const svg_palette[SVG_COLORS] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1b9e77", "#7570b3",
};

void svg_escape(struct sbuf *sb, const char *s)
{
	if (!s)
		return;
	for (; *s; s++) {
		switch (*s) {
		case '&': sbuf_adds(sb, "&amp;"); break;
		case '<': sbuf_adds(sb, "&lt;"); break;
		case '>': sbuf_adds(sb, "&gt;"); break;
		case '"': sbuf_adds(sb, "&quot;"); break;
		case '\'': sbuf_adds(sb, "&#39;"); break;
		default:
			/* control characters other than tab and newline are dropped;
			 * bytes that are not UTF-8 become U+FFFD */
			if ((unsigned char)*s >= 0x80) {
				int k = mt_utf8_len((const unsigned char *)s, strnlen(s, 4));

				if (!k) {
					sbuf_adds(sb, "&#xfffd;");
				} else {
					sbuf_add(sb, s, (size_t)k);
					s += k - 1;
				}
			} else if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n') {
				sbuf_addc(sb, *s);
			}
			break;
		}
	}
}

void svg_num(struct sbuf *sb, double v)
{
	double a = fabs(v);

	if (!isfinite(v))
		sbuf_adds(sb, "n/a");
	else if (a >= 1e6)
		sbuf_addf(sb, "%.3g", v);
	else if (a >= 100 || v == floor(v))
		sbuf_addf(sb, "%.0f", v);
	else if (a >= 10)
		sbuf_addf(sb, "%.1f", v);
	else if (a >= 1)
		sbuf_addf(sb, "%.2f", v);
	else
		sbuf_addf(sb, "%.3g", v);
}

void svg_size(struct sbuf *sb, double b)
{
	static const char *const u[] = { "B", "K", "M", "G", "T" };
	int i = 0;

	while (i < 4 && b >= 1024) {
		b /= 1024;
		i++;
	}
	if (b == floor(b))
		sbuf_addf(sb, "%.0f%s", b, u[i]);
	else
		sbuf_addf(sb, "%.1f%s", b, u[i]);
}

int svg_ticks(double lo, double hi, int logscale, double *out, int max)
{
	int n = 0;

	if (!(hi > lo) || max < 1)
		return 0;
	if (logscale) {
		double d0 = floor(log10(lo)), top = ceil(log10(hi)), d;
		const double m[3] = { 1, 2, 5 };
		int decades = 0, k;
		/* decades, and 2 and 5 within them when fewer than three decades show */
		for (d = d0; d <= top; d++)
			decades += pow(10, d) >= lo * 0.999 && pow(10, d) <= hi * 1.001;
		for (d = d0; d <= top && n < max; d++) {
			double base = pow(10, d);
			for (k = 0; k < (decades < 3 ? 3 : 1) && n < max; k++)
				if (base * m[k] >= lo * 0.999 && base * m[k] <= hi * 1.001)
					out[n++] = base * m[k];
		}
		return n;
	} else {
		double raw = (hi - lo) / 5, mag = pow(10, floor(log10(raw))), step, t;
		double r = raw / mag;
		step = (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
		for (t = ceil(lo / step) * step; t <= hi + step * 1e-9 && n < max; t += step)
			out[n++] = fabs(t) < step * 1e-9 ? 0 : t;
		return n;
	}
}

/* ---------------------------------------------------------------- line chart */

struct frame {
	double x0, x1, y0, y1;      /* data range */
	double px, py, pw, ph;      /* plot area */
	int logx, logy;
};

static double svg_mapx(const struct frame *f, double x)
{
	double t = f->logx ? (log10(x) - log10(f->x0)) / (log10(f->x1) - log10(f->x0))
			   : (x - f->x0) / (f->x1 - f->x0);
	return f->px + t * f->pw;
}

static double svg_mapy(const struct frame *f, double y)
{
	double t = f->logy ? (log10(y) - log10(f->y0)) / (log10(f->y1) - log10(f->y0))
			   : (y - f->y0) / (f->y1 - f->y0);
	return f->py + f->ph - t * f->ph;
}

static int svg_usable(double v, int logscale)
{
	return isfinite(v) && (!logscale || v > 0);
}

static void tick_label(struct sbuf *sb, double v, int bytes)
{
	if (bytes)
		svg_size(sb, v);
	else
		svg_num(sb, v);
}

/* Legend items in rows under the plot; returns the rows used. */
static int legend_rows(const char *const *names, int n, double width)
{
	double x = 0;
	int rows = n ? 1 : 0, i;

	for (i = 0; i < n; i++) {
		double w = 22 + 6.2 * (double)strlen(names[i] ? names[i] : "") + 14;
		if (x > 0 && x + w > width) {
			rows++;
			x = 0;
		}
		x += w;
	}
	return rows;
}

static void legend(struct sbuf *sb, const char *const *names, const int *colors, const int *dashed,
		   int n, double x0, double y0, double width, int boxes)
{
	double x = 0, y = y0;
	int i;

	for (i = 0; i < n; i++) {
		const char *name = names[i] ? names[i] : "";
		double w = 22 + 6.2 * (double)strlen(name) + 14;
		const char *col = svg_palette[(colors[i] % SVG_COLORS + SVG_COLORS) % SVG_COLORS];

		if (x > 0 && x + w > width) {
			y += 16;
			x = 0;
		}
		if (boxes)
			sbuf_addf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>",
				  x0 + x, y - 9, col);
		else
			sbuf_addf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				      "stroke-width=\"2\"%s/>", x0 + x, y - 4, x0 + x + 16, y - 4, col,
				  dashed && dashed[i] ? " stroke-dasharray=\"5 3\"" : "");
		sbuf_addf(sb, "<text x=\"%.1f\" y=\"%.1f\" class=\"lg\">", x0 + x + 20, y);
		svg_escape(sb, name);
		sbuf_adds(sb, "</text>");
		x += w;
	}
}

/* The data range of a chart's series and reference lines into f; 0 when no
 * point can be plotted. */
static int line_range(const struct svg_line_chart *c, struct frame *f)
{
	int i, k, any = 0;

	f->logx = c->logx;
	f->logy = c->logy;
	f->x0 = f->y0 = INFINITY;
	f->x1 = f->y1 = -INFINITY;
	for (i = 0; i < c->nseries; i++)
		for (k = 0; k < c->series[i].n; k++) {
			double x = c->series[i].x[k], y = c->series[i].y[k];
			if (!svg_usable(x, f->logx) || !svg_usable(y, f->logy))
				continue;
			any = 1;
			f->x0 = fmin(f->x0, x);
			f->x1 = fmax(f->x1, x);
			f->y0 = fmin(f->y0, y);
			f->y1 = fmax(f->y1, y);
		}
	for (i = 0; i < c->nrefs; i++)
		if (svg_usable(c->refs[i].y, f->logy)) {
			f->y0 = fmin(f->y0, c->refs[i].y);
			f->y1 = fmax(f->y1, c->refs[i].y);
		}
	return any;
}

/* Each series as a path, and a point with its values on hover. */
static void line_series(struct sbuf *sb, const struct svg_line_chart *c, const struct frame *fr)
{
	const struct frame f = *fr;
	int i, k;

	for (i = 0; i < c->nseries; i++) {
		const struct svg_series *s = &c->series[i];
		const char *col = svg_palette[(s->color % SVG_COLORS + SVG_COLORS) % SVG_COLORS];
		int first = 1;

		sbuf_addf(sb, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s d=\"", col,
			  s->dashed ? " stroke-dasharray=\"5 3\"" : "");
		for (k = 0; k < s->n; k++) {
			if (!svg_usable(s->x[k], f.logx) || !svg_usable(s->y[k], f.logy))
				continue;
			sbuf_addf(sb, "%s%.1f %.1f", first ? "M" : " L", svg_mapx(&f, s->x[k]),
				  svg_mapy(&f, s->y[k]));
			first = 0;
		}
		sbuf_adds(sb, "\"/>");
		for (k = 0; k < s->n; k++) {
			if (!svg_usable(s->x[k], f.logx) || !svg_usable(s->y[k], f.logy))
				continue;
			sbuf_addf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"><title>",
				  svg_mapx(&f, s->x[k]), svg_mapy(&f, s->y[k]), s->markers ? "2.6" : "4",
				  s->markers ? col : "transparent");
			svg_escape(sb, s->name);
			sbuf_adds(sb, ": ");
			if (c->xbytes)
				svg_size(sb, s->x[k]);
			else
				svg_num(sb, s->x[k]);
			if (c->xunit && !c->xbytes)
				sbuf_addf(sb, " %s", c->xunit);
			sbuf_adds(sb, " \xe2\x86\x92 ");
			svg_num(sb, s->y[k]);
			if (c->yunit)
				sbuf_addf(sb, " %s", c->yunit);
			sbuf_adds(sb, "</title></circle>");
		}
	}
}

void svg_line_chart(struct sbuf *sb, const struct svg_line_chart *c)
{
	struct frame f;
	double ticks[64], W = c->width ? c->width : 640, H = c->height ? c->height : 360;
	const char *names[64];
	int colors[64], dashed[64], nl = 0, rows, i, n;

	if (!line_range(c, &f)) {
		sbuf_adds(sb, "<p class=\"none\">no data to plot</p>");
		return;
	}
	if (!f.logy && f.y0 > 0)
		f.y0 = 0; /* linear axes start at zero */
	if (f.x1 <= f.x0)
		f.x1 = f.logx ? f.x0 * 10 : f.x0 + 1;
	if (f.y1 <= f.y0)
		f.y1 = f.logy ? f.y0 * 10 : f.y0 + 1;
	if (f.logy) {
		f.y0 /= 1.3;
		f.y1 *= 1.3;
	} else {
		f.y1 += (f.y1 - f.y0) * 0.06;
	}
	for (i = 0; i < c->nseries && nl < 64; i++, nl++) {
		names[nl] = c->series[i].name;
		colors[nl] = c->series[i].color;
		dashed[nl] = c->series[i].dashed;
	}
	for (i = 0; i < c->nrefs && nl < 64; i++, nl++) {
		names[nl] = c->refs[i].label;
		colors[nl] = c->refs[i].color;
		dashed[nl] = 1;
	}
	f.px = 64;
	f.pw = W - f.px - 16;
	f.py = c->title ? 30 : 12;
	f.ph = H - f.py - 46;
	rows = legend_rows(names, nl, f.pw);
	sbuf_addf(sb, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">", W,
		  H + rows * 16 + 6);
	if (c->title) {
		sbuf_addf(sb, "<text x=\"%.1f\" y=\"18\" class=\"ct\">", f.px);
		svg_escape(sb, c->title);
		sbuf_adds(sb, "</text>");
	}
	/* grid and ticks */
	n = svg_ticks(f.y0, f.y1, f.logy, ticks, 64);
	for (i = 0; i < n; i++) {
		double y = svg_mapy(&f, ticks[i]);
		sbuf_addf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			      "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"end\">", f.px, y,
			  f.px + f.pw, y, f.px - 6, y + 4);
		tick_label(sb, ticks[i], 0);
		sbuf_adds(sb, "</text>");
	}
	n = svg_ticks(f.x0, f.x1, f.logx, ticks, 64);
	if (f.logx && c->xbytes) { /* sizes: powers of 2, every other decade-ish */
		double p = pow(2, ceil(log2(f.x0)));
		int stepb = (int)ceil((log2(f.x1) - log2(f.x0)) / 8);
		if (stepb < 1)
			stepb = 1;
		n = 0;
		for (; p <= f.x1 * 1.0001 && n < 64; p *= pow(2, stepb))
			ticks[n++] = p;
	}
	for (i = 0; i < n; i++) {
		double x = svg_mapx(&f, ticks[i]);
		sbuf_addf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			      "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">", x, f.py,
			  x, f.py + f.ph, x, f.py + f.ph + 16);
		tick_label(sb, ticks[i], c->xbytes);
		sbuf_adds(sb, "</text>");
	}
	sbuf_addf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"frame\"/>",
		  f.px, f.py, f.pw, f.ph);
	sbuf_addf(sb, "<text x=\"%.1f\" y=\"%.1f\" class=\"al\" text-anchor=\"middle\">",
		  f.px + f.pw / 2, f.py + f.ph + 34);
	svg_escape(sb, c->xlabel);
	sbuf_addf(sb, "</text><text x=\"14\" y=\"%.1f\" class=\"al\" text-anchor=\"middle\" "
		      "transform=\"rotate(-90 14 %.1f)\">", f.py + f.ph / 2, f.py + f.ph / 2);
	svg_escape(sb, c->ylabel);
	sbuf_adds(sb, "</text>");
	/* reference lines */
	for (i = 0; i < c->nrefs; i++) {
		const char *col = svg_palette[c->refs[i].color % SVG_COLORS];
		double y;
		if (!svg_usable(c->refs[i].y, f.logy))
			continue;
		y = svg_mapy(&f, c->refs[i].y);
		sbuf_addf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			      "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>", f.px, y,
			  f.px + f.pw, y, col);
		svg_escape(sb, c->refs[i].label);
		sbuf_adds(sb, ": ");
		svg_num(sb, c->refs[i].y);
		if (c->yunit)
			sbuf_addf(sb, " %s", c->yunit);
		sbuf_adds(sb, "</title></line>");
	}
	line_series(sb, c, &f);
	legend(sb, names, colors, dashed, nl, f.px, H + 4, f.pw, 0);
	sbuf_adds(sb, "</svg>");
}

/* ---------------------------------------------------------------- stacked bars */

void svg_stacked_bars(struct sbuf *sb, const struct svg_stacked *s)
{
	double W = s->width ? s->width : 640, label_w = 60, right = 78, rowh = 24, top;
	double bw, max = s->limit, ticks[32], H;
	int i, k, n, rows;

	if (s->nbar <= 0 || s->nseg <= 0) {
		sbuf_adds(sb, "<p class=\"none\">no data to plot</p>");
		return;
	}
	for (i = 0; i < s->nbar; i++) {
		double t = 0;
		for (k = 0; k < s->nseg; k++)
			t += fmax(0, s->values[i * s->nseg + k]);
		max = fmax(max, t);
		/* labels are as wide as the longest needs, up to 45% of the chart */
		label_w = fmax(label_w, 14 + 6.8 * (double)strlen(s->bars[i] ? s->bars[i] : ""));
	}
	label_w = fmin(label_w, 0.45 * W);
	bw = W - label_w - right;
	if (!(max > 0))
		max = 1;
	max *= 1.04;
	top = s->title ? 30 : 10;
	rows = s->nseg > 1 ? legend_rows(s->segments, s->nseg, W - 20) : 0;
	H = top + s->nbar * rowh + 30 + rows * 16 + 8;
	sbuf_addf(sb, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">", W, H);
	if (s->title) {
		sbuf_adds(sb, "<text x=\"10\" y=\"18\" class=\"ct\">");
		svg_escape(sb, s->title);
		sbuf_adds(sb, "</text>");
	}
	n = svg_ticks(0, max, 0, ticks, 32);
	for (i = 0; i < n; i++) {
		double x = label_w + ticks[i] / max * bw;
		sbuf_addf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			      "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">", x, top,
			  x, top + s->nbar * rowh, x, top + s->nbar * rowh + 14);
		svg_num(sb, ticks[i]);
		sbuf_adds(sb, "</text>");
	}
	sbuf_addf(sb, "<text x=\"%.1f\" y=\"%.1f\" class=\"al\" text-anchor=\"middle\">",
		  label_w + bw / 2, top + s->nbar * rowh + 28);
	svg_escape(sb, s->unit);
	sbuf_adds(sb, "</text>");
	for (i = 0; i < s->nbar; i++) {
		double y = top + i * rowh + 3, x = label_w, t = 0;
		sbuf_addf(sb, "<text x=\"%.1f\" y=\"%.1f\" class=\"bl\" text-anchor=\"end\">",
			  label_w - 8, y + 13);
		svg_escape(sb, s->bars[i]);
		sbuf_adds(sb, "</text>");
		for (k = 0; k < s->nseg; k++) {
			double v = fmax(0, s->values[i * s->nseg + k]), w = v / max * bw;
			if (w <= 0)
				continue;
			sbuf_addf(sb, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
				      "fill=\"%s\"><title>", x, y, w, rowh - 6,
				  svg_palette[(s->colors[k] % SVG_COLORS + SVG_COLORS) % SVG_COLORS]);
			svg_escape(sb, s->bars[i]);
			sbuf_adds(sb, " \xe2\x80\x94 ");
			svg_escape(sb, s->segments[k]);
			sbuf_adds(sb, ": ");
			svg_num(sb, v);
			sbuf_addc(sb, ' ');
			svg_escape(sb, s->unit);
			sbuf_adds(sb, "</title></rect>");
			x += w;
			t += v;
		}
		sbuf_addf(sb, "<text x=\"%.1f\" y=\"%.1f\" class=\"bv\">", x + 5, y + 13);
		svg_num(sb, t);
		sbuf_adds(sb, "</text>");
	}
	if (s->limit > 0) {
		double x = label_w + s->limit / max * bw;
		sbuf_addf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"limit\">"
			      "<title>", x, top - 4, x, top + s->nbar * rowh);
		svg_escape(sb, s->limit_label);
		sbuf_adds(sb, ": ");
		svg_num(sb, s->limit);
		sbuf_addc(sb, ' ');
		svg_escape(sb, s->unit);
		sbuf_addf(sb, "</title></line><text x=\"%.1f\" y=\"%.1f\" class=\"lt\" "
			      "text-anchor=\"end\">", x - 3, top - 6 > 8 ? top - 6 : 8);
		svg_escape(sb, s->limit_label);
		sbuf_adds(sb, "</text>");
	}
	if (s->nseg > 1)
		legend(sb, s->segments, s->colors, NULL, s->nseg, 10, top + s->nbar * rowh + 48, W - 20, 1);
	sbuf_adds(sb, "</svg>");
}
