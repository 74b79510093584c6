/* SPDX-License-Identifier: MIT */
/* html_trend: the report's trend charts, one per metric of a history, each
 * with the rolling baseline `megatune compare --history` judges against and
 * its band (compare/trend.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compare/trend.h"
#include "html_parts.h"
#include "html_trend.h"

static void trend_chart(struct sbuf *sb, const struct mt_trend *t)
{
	double *x = calloc((size_t)t->n * 5, sizeof(double));
	double *v, *b, *lo, *hi;
	struct svg_series s[5];
	char title[300];
	int i, ns = 0, nb = 0;

	if (!x)
		return;
	v = x + t->n;
	b = v + t->n;
	lo = b + t->n;
	hi = lo + t->n;
	for (i = 0; i < t->n; i++) {
		x[i] = (double)t->pt[i].run;
		v[i] = t->pt[i].value;
		b[i] = t->pt[i].base;
		lo[i] = t->pt[i].lo;
		hi[i] = t->pt[i].hi;
		nb += isfinite(b[i]);
	}
	snprintf(title, sizeof(title), "%s", t->name);
	s[ns++] = (struct svg_series){ "measured", x, v, t->n, 0, 0, 1 };
	if (nb) {
		s[ns++] = (struct svg_series){ "baseline (median of the runs before)", x, b, t->n,
					       2, 0, 0 };
		s[ns++] = (struct svg_series){ "band: tolerance plus noise", x, hi, t->n,
					       2, 1, 0 };
		s[ns++] = (struct svg_series){ "band (low)", x, lo, t->n, 2, 1, 0 };
	}
	sbuf_adds(sb, "<div class=\"trend\">");
	svg_line_chart(sb, &(struct svg_line_chart){
		.title = title, .xlabel = "run", .ylabel = t->unit, .xunit = "run",
		.yunit = t->unit, .series = s, .nseries = ns, .width = 560, .height = 300 });
	sbuf_adds(sb, "</div>");
	free(x);
}

void html_trends(struct sbuf *sb, const struct mt_trend *t, int n, const char *db)
{
	int i, reg = 0;

	for (i = 0; i < n; i++)
		reg += t[i].regressed > 0;
	section(sb, "trends", "Trends", "Each metric over the runs of the history, with the "
		"rolling baseline (the median of the runs before) and its band: a point outside "
		"it, on the worse side, is what `megatune compare --history` calls regressed.");
	sbuf_adds(sb, "<p>History ");
	esc(sb, db);
	sbuf_addf(sb, ": %d charts (metrics with a regressed run first), %d with one", n, reg);
	if (n && t[0].n)
		sbuf_addf(sb, ", runs %lld to %lld", t[0].pt[0].run, t[0].pt[t[0].n - 1].run);
	sbuf_adds(sb, ".</p><div class=\"grid2\">");
	for (i = 0; i < n; i++)
		trend_chart(sb, &t[i]);
	sbuf_adds(sb, "</div></section>");
}
