/* SPDX-License-Identifier: MIT */
/* svg: a small writer of the report's charts — line charts on linear or log
 * axes with ticks, legends and reference lines, and stacked bars.
 *
 * Charts are inline <svg> elements sized by a viewBox (they scale with the
 * page) with their text in the page's font.  Every point and bar segment has a
 * <title> tooltip with its numbers, and every string is escaped: labels may
 * come from input files.  The writer appends to an sbuf and allocates
 * nothing else; arrays are borrowed for the duration of the call.
 */
#ifndef MT_SVG_H
#define MT_SVG_H

#include "../lib/sbuf.h"

/* The report's palette: index into it with a series' `color`. */
#define SVG_COLORS 12
extern const char *const svg_palette[SVG_COLORS];

/* Append text escaped for HTML and SVG (&, <, >, ", '). */
void svg_escape(struct sbuf *sb, const char *s);

struct svg_series {
	const char *name;
	const double *x, *y;
	int n;
	int color;              /* palette index */
	int dashed;
	int markers;            /* dots at the points */
};

struct svg_refline {            /* a horizontal reference line */
	const char *label;
	double y;
	int color;
};

struct svg_line_chart {
	const char *title;      /* may be NULL */
	const char *xlabel, *ylabel;
	const char *xunit, *yunit; /* for tooltips: "bytes", "GB/s" */
	int logx, logy;
	int xbytes;             /* x ticks as sizes (1K, 1M, 1G) */
	const struct svg_series *series;
	int nseries;
	const struct svg_refline *refs;
	int nrefs;
	int width, height;      /* viewBox; 0: 640 x 360 */
};

void svg_line_chart(struct sbuf *sb, const struct svg_line_chart *c);

struct svg_stacked {
	const char *title;
	const char *unit;       /* "GiB", "s" */
	const char *const *bars;     /* [nbar] labels */
	const char *const *segments; /* [nseg] names */
	const int *colors;           /* [nseg] palette indices */
	const double *values;        /* [nbar][nseg], row-major, >= 0 */
	int nbar, nseg;
	double limit;           /* a vertical line (capacity), 0: none */
	const char *limit_label;
	int width;              /* viewBox width; 0: 640 */
};

/* Horizontal stacked bars, one per row, with a legend. */
void svg_stacked_bars(struct sbuf *sb, const struct svg_stacked *s);

/* "Nice" tick values for [lo, hi]: linear (1, 2, 5 steps) or decades.
 * Returns the count written to out (at most max). */
int svg_ticks(double lo, double hi, int logscale, double *out, int max);

/* A number for a tick or tooltip: 3 significant digits, or a size (1.5M). */
void svg_num(struct sbuf *sb, double v);
void svg_size(struct sbuf *sb, double bytes);

#endif
