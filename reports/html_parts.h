/* SPDX-License-Identifier: MIT */
/* html_parts: what the files of the report page share (html.c, html_cluster.c,
 * html_advice.c): lenient getters of the input documents, escaped text and
 * table cells, and the sections each file renders.  Private to reports/.
 */
#ifndef MT_HTML_PARTS_H
#define MT_HTML_PARTS_H

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/sbuf.h"
#include "svg.h"

#define GIB 1073741824.0

struct mt_cluster;
struct mt_validation;

/* ---------------------------------------------------------------- input access */

/* Lenient reads of the documents the report was given (lib/jsonr.h): a
 * missing or mistyped member reads as NAN, NULL or false. */
static inline const cJSON *jget(const cJSON *o, const char *path)
{
	return mt_jget(o, path);
}

static inline double jnum(const cJSON *o, const char *path)
{
	return mt_jget_num(o, path, NAN);
}

static inline const char *jstr(const cJSON *o, const char *path)
{
	return mt_jget_strd(o, path, NULL);
}

static inline int jtrue(const cJSON *o, const char *path)
{
	return mt_jget_bool(o, path, 0) == 1;
}

/* ---------------------------------------------------------------- text helpers */

static inline void esc(struct sbuf *sb, const char *s)
{
	svg_escape(sb, s ? s : "n/a");
}

static inline void num(struct sbuf *sb, double v, const char *fmt)
{
	if (!isfinite(v))
		sbuf_adds(sb, "n/a");
	else
		sbuf_addf(sb, fmt, v);
}

/* A cell whose text is a number: right-aligned, sortable by its value. */
static inline void td_num(struct sbuf *sb, double v, const char *fmt)
{
	if (isfinite(v))
		sbuf_addf(sb, "<td class=\"n\" data-v=\"%.9g\">", v);
	else
		sbuf_adds(sb, "<td class=\"n\" data-v=\"\">");
	num(sb, v, fmt);
	sbuf_adds(sb, "</td>");
}

static inline void td_str(struct sbuf *sb, const char *s)
{
	sbuf_adds(sb, "<td>");
	esc(sb, s);
	sbuf_adds(sb, "</td>");
}

/* Stacked bars in a <div> of the class that sets their width. */
static inline void bars(struct sbuf *sb, const char *cls, const struct svg_stacked *s)
{
	sbuf_addf(sb, "<div class=\"%s\">", cls);
	svg_stacked_bars(sb, s);
	sbuf_adds(sb, "</div>");
}

static inline void section(struct sbuf *sb, const char *id, const char *title, const char *lead)
{
	sbuf_addf(sb, "<section id=\"%s\"><h2>%s</h2>", id, title);
	if (lead)
		sbuf_addf(sb, "<p class=\"lead\">%s</p>", lead);
}

/* The sections, in the order of the page. */
void html_summary(struct sbuf *sb, const cJSON *adv);
void html_cluster(struct sbuf *sb, const struct mt_cluster *c, const char *note);
void html_candidates(struct sbuf *sb, const cJSON *adv);
void html_memory(struct sbuf *sb, const cJSON *adv);
void html_timebars(struct sbuf *sb, const cJSON *adv);
void html_why(struct sbuf *sb, const cJSON *adv);
void html_configuration(struct sbuf *sb, const cJSON *adv);
/* The Validation section (html_validation.c). */
/* With a cluster whose profile holds a corrections section (calibrate
 * --from-validation), the section also shows the fitted factors and the
 * residuals of the runs they were fitted to. */
struct mt_cluster;
void html_check(struct sbuf *sb, const cJSON *doc);
void html_validation(struct sbuf *sb, const struct mt_validation *v, const struct mt_cluster *c);
/* One fired rule (an advice candidate's or an analysis finding) as a card. */
void html_rule_card(struct sbuf *sb, const cJSON *r);

#endif
