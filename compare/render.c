/* SPDX-License-Identifier: MIT */
/* render: a comparison as text, JUnit XML and Markdown. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"

static const char *s_or(const char *s, const char *d)
{
	return s && *s ? s : d;
}

static void render_pct(struct sbuf *sb, const char *fmt, double v)
{
	if (isfinite(v))
		sbuf_addf(sb, fmt, v);
	else
		sbuf_adds(sb, "n/a");
}

/* "+20.10% (noise +-3.61%, tolerance 5%, p 0.002)" */
static void why(struct sbuf *sb, const struct mt_cmp_metric *m)
{
	render_pct(sb, "%+.2f%%", m->change_pct);
	sbuf_adds(sb, " (");
	if (m->noise_pct > 0)
		sbuf_addf(sb, "noise +-%.2f%% by %s, ", m->noise_pct, s_or(m->method, "?"));
	else
		sbuf_adds(sb, "no noise measured, ");
	sbuf_addf(sb, "tolerance %.3g%%", m->tolerance_pct);
	if (isfinite(m->p_value))
		sbuf_addf(sb, ", p %.3g", m->p_value);
	sbuf_addf(sb, "; %s is better)", s_or(m->better, "lower"));
}

static void render_counts(struct sbuf *sb, const struct mt_comparison *c)
{
	sbuf_addf(sb, "%d metrics: %d regressed, %d improved, %d unchanged, %d inconclusive",
		  c->nmetrics, c->counts[0], c->counts[1], c->counts[2], c->counts[3]);
	if (mt_comparison_missing(c))
		sbuf_addf(sb, "; %d missing from the current", mt_comparison_missing(c));
}

void mt_compare_text(struct sbuf *sb, const struct mt_comparison *c, int all)
{
	int i, shown = 0;

	sbuf_addf(sb, "compare %s: %s\n  baseline %s\n  current  %s\n", s_or(c->kind, "?"),
		  s_or(c->verdict, "?"), s_or(c->baseline_file, "?"), s_or(c->current_file, "?"));
	sbuf_adds(sb, "  ");
	render_counts(sb, c);
	sbuf_addf(sb, "\n  tolerance %.3g%%, confidence %.3g%%\n\n", c->tolerance_pct,
		  c->confidence_pct);
	sbuf_addf(sb, "  %-12s %9s %9s %8s %12s %12s %-8s %s\n", "verdict", "change", "noise",
		  "p", "baseline", "current", "unit", "metric");
	for (i = 0; i < c->nmetrics; i++) {
		const struct mt_cmp_metric *m = &c->metrics[i];

		if (!all && !strcmp(m->verdict, "unchanged"))
			continue;
		shown++;
		sbuf_addf(sb, "  %-12s ", m->verdict);
		if (isfinite(m->change_pct))
			sbuf_addf(sb, "%+8.2f%% ", m->change_pct);
		else
			sbuf_addf(sb, "%9s ", "n/a");
		if (m->noise_pct > 0)
			sbuf_addf(sb, "+-%6.2f%% ", m->noise_pct);
		else
			sbuf_addf(sb, "%9s ", "-");
		if (isfinite(m->p_value))
			sbuf_addf(sb, "%8.2g ", m->p_value);
		else
			sbuf_addf(sb, "%8s ", "-");
		sbuf_addf(sb, "%12.6g %12.6g %-8s %s", m->baseline, m->current, s_or(m->unit, "-"),
			  s_or(m->name, "?"));
		if (m->note)
			sbuf_addf(sb, "  [%s]", m->note);
		sbuf_addc(sb, '\n');
	}
	if (!shown)
		sbuf_adds(sb, "  (no metric changed beyond its tolerance)\n");
	else if (!all && c->counts[2])
		sbuf_addf(sb, "  (%d unchanged not shown: --all shows them)\n", c->counts[2]);
	if (mt_comparison_missing(c)) {
		sbuf_addf(sb, "\n  only in the baseline (%d): missing from the current, a "
			  "failure (the run stopped before them? --allow-missing lets them "
			  "pass):\n", c->nonly_baseline);
		for (i = 0; i < c->nonly_baseline; i++)
			sbuf_addf(sb, "    %s\n", c->only_baseline[i]);
	} else if (c->nonly_baseline) {
		sbuf_addf(sb, "\n  only in the baseline (%d):\n", c->nonly_baseline);
		for (i = 0; i < c->nonly_baseline; i++)
			sbuf_addf(sb, "    %s\n", c->only_baseline[i]);
	}
	if (c->nonly_current) {
		sbuf_addf(sb, "\n  only in the current (%d):\n", c->nonly_current);
		for (i = 0; i < c->nonly_current; i++)
			sbuf_addf(sb, "    %s\n", c->only_current[i]);
	}
}

/* ---------------------------------------------------------------- JUnit XML */

static void xml(struct sbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		switch (ch) {
		case '&': sbuf_adds(sb, "&amp;"); break;
		case '<': sbuf_adds(sb, "&lt;"); break;
		case '>': sbuf_adds(sb, "&gt;"); break;
		case '"': sbuf_adds(sb, "&quot;"); break;
		case '\'': sbuf_adds(sb, "&apos;"); break;
		default:
			/* XML 1.0 has no other control characters than tab, LF, CR */
			if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
				sbuf_addc(sb, ' ');
			else
				sbuf_addc(sb, (char)ch);
		}
	}
}

static void xml_why(struct sbuf *sb, const struct mt_cmp_metric *m)
{
	struct sbuf t = SBUF_INIT;

	sbuf_addf(&t, "%s: ", m->verdict);
	why(&t, m);
	sbuf_addf(&t, ": baseline %.6g %s, current %.6g %s", m->baseline, s_or(m->unit, ""),
		  m->current, s_or(m->unit, ""));
	if (m->note)
		sbuf_addf(&t, " [%s]", m->note);
	if (t.buf)
		xml(sb, t.buf);
	sbuf_release(&t);
}

/* A metric on one side only: skipped, or (missing from `current`, which
 * fails the gate) a failure saying so. */
static void junit_only(struct sbuf *sb, const char *cls, const char *name, const char *where,
		       const char *current)
{
	struct sbuf t = SBUF_INIT;

	sbuf_adds(sb, "    <testcase classname=\"");
	xml(sb, cls);
	sbuf_adds(sb, "\" name=\"");
	xml(sb, name);
	if (!current) {
		sbuf_addf(sb, "\" time=\"0\">\n      <skipped message=\"only in the %s: not "
			  "compared\"/>\n    </testcase>\n", where);
		return;
	}
	sbuf_addf(&t, "missing: in the baseline, not in %s (the run stopped before it, or no "
		  "longer measures it; --allow-missing lets it pass)", current);
	sbuf_adds(sb, "\" time=\"0\">\n      <failure type=\"missing\" message=\"");
	xml(sb, t.buf);
	sbuf_adds(sb, "\">");
	xml(sb, t.buf);
	sbuf_adds(sb, "</failure>\n    </testcase>\n");
	sbuf_release(&t);
}

void mt_compare_junit(struct sbuf *sb, const struct mt_comparison *c)
{
	char cls[96];
	int i, n = c->nmetrics + c->nonly_baseline + c->nonly_current;
	int missing = mt_comparison_missing(c), failures = c->counts[0] + missing;
	int skipped = c->nonly_baseline - missing + c->nonly_current;

	snprintf(cls, sizeof(cls), "megatune.compare.%s", s_or(c->kind, "document"));
	sbuf_adds(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	sbuf_addf(sb, "<testsuites name=\"megatune compare\" tests=\"%d\" failures=\"%d\" "
		  "errors=\"0\" skipped=\"%d\" time=\"0\">\n", n, failures, skipped);
	sbuf_adds(sb, "  <testsuite name=\"");
	xml(sb, cls);
	sbuf_addf(sb, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"0\">\n",
		  n, failures, skipped);
	sbuf_adds(sb, "    <properties>\n      <property name=\"baseline\" value=\"");
	xml(sb, c->baseline_file);
	sbuf_adds(sb, "\"/>\n      <property name=\"current\" value=\"");
	xml(sb, c->current_file);
	sbuf_addf(sb, "\"/>\n      <property name=\"tolerance_pct\" value=\"%g\"/>\n"
		  "      <property name=\"confidence_pct\" value=\"%g\"/>\n    </properties>\n",
		  c->tolerance_pct, c->confidence_pct);
	for (i = 0; i < c->nmetrics; i++) {
		const struct mt_cmp_metric *m = &c->metrics[i];

		sbuf_adds(sb, "    <testcase classname=\"");
		xml(sb, cls);
		sbuf_adds(sb, "\" name=\"");
		xml(sb, m->name);
		sbuf_adds(sb, "\" time=\"0\">\n");
		if (!strcmp(m->verdict, "regressed")) {
			sbuf_adds(sb, "      <failure type=\"regression\" message=\"");
			xml_why(sb, m);
			sbuf_adds(sb, "\">");
			xml_why(sb, m);
			sbuf_adds(sb, "</failure>\n");
		} else {
			sbuf_adds(sb, "      <system-out>");
			xml_why(sb, m);
			sbuf_adds(sb, "</system-out>\n");
		}
		sbuf_adds(sb, "    </testcase>\n");
	}
	for (i = 0; i < c->nonly_baseline; i++)
		junit_only(sb, cls, c->only_baseline[i], "baseline",
			   missing ? s_or(c->current_file, "the current") : NULL);
	for (i = 0; i < c->nonly_current; i++)
		junit_only(sb, cls, c->only_current[i], "current", NULL);
	sbuf_adds(sb, "  </testsuite>\n</testsuites>\n");
}

void mt_compare_junit_error(struct sbuf *sb, const char *baseline, const char *current,
			    const char *message)
{
	sbuf_adds(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	sbuf_adds(sb, "<testsuites name=\"megatune compare\" tests=\"1\" failures=\"1\" "
		  "errors=\"0\" skipped=\"0\" time=\"0\">\n");
	sbuf_adds(sb, "  <testsuite name=\"megatune.compare\" tests=\"1\" failures=\"1\" "
		  "errors=\"0\" skipped=\"0\" time=\"0\">\n");
	sbuf_adds(sb, "    <properties>\n      <property name=\"baseline\" value=\"");
	xml(sb, baseline);
	sbuf_adds(sb, "\"/>\n      <property name=\"current\" value=\"");
	xml(sb, current);
	sbuf_adds(sb, "\"/>\n    </properties>\n");
	sbuf_adds(sb, "    <testcase classname=\"megatune.compare\" name=\"read and compare the "
		  "documents\" time=\"0\">\n      <failure type=\"bad input\" message=\"");
	xml(sb, message);
	sbuf_adds(sb, "\">");
	xml(sb, message);
	sbuf_adds(sb, "</failure>\n    </testcase>\n  </testsuite>\n</testsuites>\n");
}

/* ---------------------------------------------------------------- Markdown */

static void md(struct sbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		if (strchr("|\\`*_<>[]", *s))
			sbuf_addc(sb, '\\');
		sbuf_addc(sb, *s == '\n' ? ' ' : *s);
	}
}

#define MD_MAX_ROWS 50

void mt_compare_markdown(struct sbuf *sb, const struct mt_comparison *c)
{
	const char *v = mt_comparison_verdict(c);
	int i, rows = 0;

	sbuf_addf(sb, "### megatune compare (%s): %s%s%s\n\n", s_or(c->kind, "?"),
		  strcmp(v, "pass") ? "**" : "", v, strcmp(v, "pass") ? "**" : "");
	md(sb, c->baseline_file);
	sbuf_adds(sb, " → ");
	md(sb, c->current_file);
	sbuf_adds(sb, ": ");
	render_counts(sb, c);
	sbuf_addf(sb, " (tolerance %.3g%%, confidence %.3g%%).\n\n", c->tolerance_pct,
		  c->confidence_pct);
	for (i = 0; i < c->nmetrics; i++) {
		const struct mt_cmp_metric *m = &c->metrics[i];

		if (!strcmp(m->verdict, "unchanged"))
			continue;
		if (rows == MD_MAX_ROWS) {
			sbuf_addf(sb, "\n… and %d more changed metrics (see the JSON or JUnit "
				  "output).\n", c->nmetrics - c->counts[2] - rows);
			break;
		}
		if (!rows++)
			sbuf_adds(sb, "| verdict | metric | baseline | current | change | noise |\n"
				      "|---|---|--:|--:|--:|--:|\n");
		sbuf_addf(sb, "| %s%s%s | ", !strcmp(m->verdict, "regressed") ? "**" : "",
			  m->verdict, !strcmp(m->verdict, "regressed") ? "**" : "");
		md(sb, m->name);
		sbuf_addf(sb, " | %.6g %s | %.6g %s | ", m->baseline, s_or(m->unit, ""), m->current,
			  s_or(m->unit, ""));
		render_pct(sb, "%+.2f%%", m->change_pct);
		if (m->noise_pct > 0)
			sbuf_addf(sb, " | ±%.2f%% |\n", m->noise_pct);
		else
			sbuf_adds(sb, " | – |\n");
	}
	if (!rows)
		sbuf_adds(sb, "No metric changed beyond its tolerance.\n");
	if (mt_comparison_missing(c))
		sbuf_addf(sb, "\n**%d metrics of the baseline missing from the current** (a "
			  "failure: the run stopped before them?), %d only in the current.\n",
			  c->nonly_baseline, c->nonly_current);
	else if (c->nonly_baseline || c->nonly_current)
		sbuf_addf(sb, "\n%d metrics only in the baseline, %d only in the current (not "
			  "compared).\n", c->nonly_baseline, c->nonly_current);
}
