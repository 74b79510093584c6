/* SPDX-License-Identifier: MIT */
/* html: the tuning report, one self-contained HTML page.
 *
 * The report renders the documents the other commands write —
 * megatune.advice/1, megatune.profile/1, megatune.analysis/1 and
 * megatune.comparison/1 (docs/FORMATS.md) — each section present when its
 * input is given.  Everything is inline (CSS, SVG charts from svg.h, a few
 * lines of JavaScript for sorting and copying); the page fetches nothing.
 * Every string taken from an input is escaped.  The profile comes parsed and
 * validated (struct mt_cluster, read through perfmodel/profile.h); the sections
 * are rendered by html.c (the page, findings, regressions), html_cluster.c
 * and html_advice.c.
 */
#ifndef MT_HTML_H
#define MT_HTML_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/sbuf.h"

struct mt_cluster;
struct mt_trend;
struct mt_validation;

struct mt_report_in {
	const cJSON *advice, *analysis, *compare;  /* any may be NULL */
	const struct mt_cluster *cluster;          /* the profile, or NULL */
	const char *advice_file, *profile_file, *analysis_file, *compare_file;
	/* trend charts of a history (compare/trend.h), read by the command */
	const struct mt_trend *trends;
	int ntrends;
	const char *history_file;  /* NULL: no Trends section */
	const struct mt_validation *validation;    /* validate/validation.h, or NULL */
	const char *validation_file;
	const cJSON *check;                        /* megatune.check/1, or NULL */
	const char *check_file;
};

/* MT_EINVAL naming file and the 'schema' field when doc is not an object of
 * schema `want`, the document option `opt` ("--profile") expects. */
int mt_report_schema(const cJSON *doc, const char *want, const char *file, const char *opt,
		     struct mt_error *err);

/* When the advice (job.cluster, cluster.gpu) was made for another system
 * than the profile describes (its name, gpu.name): one sentence naming both
 * into buf[cap] and 1; else 0, also when either document is absent.  The
 * page says it in its cluster section; the command warns with it. */
int mt_report_mismatch(const struct mt_report_in *in, char *buf, size_t cap);

/* Check each document's schema; MT_EINVAL naming the file and field when one
 * is not what its option expects, or when no input is given. */
int mt_report_check(const struct mt_report_in *in, struct mt_error *err);

/* Append the page to sb (call mt_report_check first). */
void mt_report_html(struct sbuf *sb, const struct mt_report_in *in);

/* Check the inputs and write the page atomically to path ('-': stdout). */
int mt_report_write(const char *path, const struct mt_report_in *in, struct mt_error *err);

#endif
