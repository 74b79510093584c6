/* SPDX-License-Identifier: MIT */
/* html_trend: the report's Trends section (trend charts of a history). */
#ifndef MT_HTML_TREND_H
#define MT_HTML_TREND_H

#include "../lib/sbuf.h"

struct mt_trend;

/* Append the section: one chart per trend (compare/trend.h), `db` naming
 * the history in the text. */
void html_trends(struct sbuf *sb, const struct mt_trend *t, int n, const char *db);

#endif
