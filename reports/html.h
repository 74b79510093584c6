/* SPDX-License-Identifier: MIT */
/* html: the tuning report, one self-contained HTML page.
 *
 * The report renders the documents the other commands write —
 * megatune.advice/1, megatune.profile/1, megatune.analysis/1 and
 * megatune.comparison/1 (docs/FORMATS.md) — each section present when its
 * input is given.  Everything is inline (CSS, SVG charts from svg.h, a few
 * lines of JavaScript for sorting and copying); the page fetches nothing.
 * Every string taken from an input is escaped.
 */
#ifndef MT_HTML_H
#define MT_HTML_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/sbuf.h"

struct mt_report_in {
	const cJSON *advice, *profile, *analysis, *compare;  /* any may be NULL */
	const char *advice_file, *profile_file, *analysis_file, *compare_file;
};

/* Check each document's schema; MT_EINVAL naming the file and field when one
 * is not what its option expects, or when no input is given. */
int mt_report_check(const struct mt_report_in *in, struct mt_error *err);

/* Append the page to sb (call mt_report_check first). */
void mt_report_html(struct sbuf *sb, const struct mt_report_in *in);

#endif
