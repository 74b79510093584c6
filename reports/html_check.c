/* SPDX-License-Identifier: MIT */
/* html_check: the report's Check section (megatune.check/1, docs/CHECK.md):
 * the job as its file states it, what megatune predicts for it and, for a
 * log, what the run measured; the diagnoses with their evidence; the changes
 * searched from it with their gains and the exact diff in the job's words. */
#include <stdio.h>

#include "html_parts.h"

static void job_facts(struct sbuf *sb, const cJSON *job)
{
	const cJSON *x;
	int n = 0;

	sbuf_adds(sb, "<table><tbody><tr><th>job</th><td>");
	esc(sb, jstr(job, "file"));
	sbuf_adds(sb, " (");
	esc(sb, jstr(job, "kind"));
	sbuf_adds(sb, ", ");
	esc(sb, jstr(job, "format"));
	sbuf_adds(sb, ")</td></tr><tr><th>model</th><td>");
	esc(sb, jstr(job, "model"));
	sbuf_adds(sb, "</td></tr><tr><th>GPUs</th><td>");
	num(sb, jnum(job, "gpus"), "%.0f");
	sbuf_adds(sb, " of ");
	esc(sb, jstr(job, "cluster"));
	if (jstr(job, "gpus_from")) {
		sbuf_adds(sb, " (");
		esc(sb, jstr(job, "gpus_from"));
		sbuf_adds(sb, ")");
	}
	sbuf_adds(sb, "</td></tr><tr><th>sequence, batch</th><td>");
	num(sb, jnum(job, "seq"), "%.0f");
	sbuf_adds(sb, ", ");
	num(sb, jnum(job, "gbs"), "%.0f");
	sbuf_adds(sb, " sequences</td></tr>");
	cJSON_ArrayForEach(x, jget(job, "not_modelled")) {
		if (!n++)
			sbuf_addf(sb, "<tr><th>not modelled</th><td><details><summary>%d flags or "
				      "keys megatune does not model</summary>",
				  cJSON_GetArraySize(jget(job, "not_modelled")));
		else
			sbuf_adds(sb, ", ");
		esc(sb, jstr(x, "flag") ? jstr(x, "flag") : jstr(x, "key"));
		if (isfinite(jnum(x, "line")))
			sbuf_addf(sb, " (line %.0f)", jnum(x, "line"));
	}
	if (n)
		sbuf_adds(sb, "</details></td></tr>");
	cJSON_ArrayForEach(x, jget(job, "notes")) {
		sbuf_adds(sb, "<tr><th>note</th><td>");
		esc(sb, cJSON_IsString(x) ? x->valuestring : "?");
		sbuf_adds(sb, "</td></tr>");
	}
	sbuf_adds(sb, "</tbody></table>");
}

/* The job as it is: predicted, and measured for a log */
static void html_check_as_is(struct sbuf *sb, const cJSON *doc)
{
	const cJSON *c = cJSON_GetArrayItem(jget(doc, "as_is.candidates"), 0), *m;

	if (jstr(doc, "cannot_time")) {
		sbuf_adds(sb, "<p class=\"bad\">megatune cannot time the job as written: ");
		esc(sb, jstr(doc, "cannot_time"));
		sbuf_adds(sb, "</p>");
	}
	if (!c)
		return;
	sbuf_adds(sb, "<h3>As it is</h3><table><thead><tr><th></th><th class=\"n\">step (s)</th>"
		      "<th class=\"n\">tokens/s per GPU</th><th class=\"n\">memory (GiB)</th>"
		      "</tr></thead><tbody><tr><td>predicted</td>");
	td_num(sb, jnum(c, "time.step_s"), "%.3f");
	td_num(sb, jnum(c, "throughput.tokens_per_s_per_gpu"), "%.0f");
	td_num(sb, jnum(c, "memory.total_bytes") / GIB, "%.1f");
	sbuf_adds(sb, "</tr>");
	if ((m = jget(doc, "measured"))) {
		sbuf_adds(sb, "<tr><td>measured (");
		esc(sb, jstr(m, "status"));
		sbuf_adds(sb, ")</td>");
		td_num(sb, jnum(m, "step_s"), "%.3f");
		td_num(sb, jnum(m, "tokens_per_s_per_gpu"), "%.0f");
		td_num(sb, jnum(m, "mem_max_reserved_gib"), "%.1f");
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table>");
	if (m && jstr(m, "reason")) {
		sbuf_adds(sb, "<p class=\"bad\">");
		esc(sb, jstr(m, "reason"));
		if (jstr(m, "evidence_line")) {
			sbuf_addf(sb, " (line %.0f: <code>", jnum(m, "evidence_lineno"));
			esc(sb, jstr(m, "evidence_line"));
			sbuf_adds(sb, "</code>)");
		}
		sbuf_adds(sb, "</p>");
	}
	if (!jtrue(c, "feasible"))
		sbuf_adds(sb, "<p class=\"bad\">It does not fit in GPU memory: the changes below say "
			      "what makes it fit.</p>");
}

static void html_check_diagnoses(struct sbuf *sb, const cJSON *doc)
{
	const cJSON *d, *e;
	int n = cJSON_GetArraySize(jget(doc, "diagnoses")) +
		cJSON_GetArraySize(jget(doc, "environment"));

	sbuf_addf(sb, "<h3>Diagnoses (%d)</h3>", n);
	if (!n) {
		sbuf_adds(sb, "<p>No rule finds the job misconfigured.</p>");
		return;
	}
	sbuf_adds(sb, "<table><thead><tr><th>rule</th><th>status</th><th>what</th></tr></thead>"
		      "<tbody>");
	cJSON_ArrayForEach(d, jget(doc, "diagnoses")) {
		sbuf_adds(sb, "<tr>");
		td_str(sb, jstr(d, "rule"));
		td_str(sb, jstr(d, "status"));
		sbuf_adds(sb, "<td>");
		esc(sb, jstr(d, "message"));
		if (jstr(d, "effect")) {
			sbuf_adds(sb, "<br><code>");
			esc(sb, jstr(d, "effect"));
			sbuf_adds(sb, "</code>");
		}
		if (jstr(d, "cite")) {
			sbuf_adds(sb, "<br><small>");
			esc(sb, jstr(d, "cite"));
			sbuf_adds(sb, "</small>");
		}
		sbuf_adds(sb, "</td></tr>");
	}
	cJSON_ArrayForEach(e, jget(doc, "environment")) {
		sbuf_adds(sb, "<tr><td>environment</td><td>missing</td>");
		td_str(sb, cJSON_IsString(e) ? e->valuestring : "?");
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table>");
}

static void changes(struct sbuf *sb, const cJSON *doc)
{
	const cJSON *c = cJSON_GetArrayItem(jget(doc, "as_is.candidates"), 0), *x, *l;
	double base = c && jtrue(c, "feasible") ? jnum(c, "time.step_s") : NAN;

	sbuf_adds(sb, "<h3>Changes searched from it</h3>");
	if (!cJSON_GetArraySize(jget(doc, "changes"))) {
		sbuf_adds(sb, "<p>No change found gains more than 0.5% of the step.</p>");
		return;
	}
	sbuf_adds(sb, "<table><thead><tr><th>change</th><th>knobs</th><th>configuration</th>"
		      "<th class=\"n\">step (s)</th><th class=\"n\">gain</th><th class=\"n\">"
		      "memory (GiB)</th></tr></thead><tbody>");
	cJSON_ArrayForEach(x, jget(doc, "changes")) {
		double s = jnum(x, "step_s");

		sbuf_adds(sb, "<tr>");
		td_str(sb, jstr(x, "kind"));
		td_str(sb, jstr(x, "changes"));
		td_str(sb, jstr(x, "config"));
		td_num(sb, s, "%.3f");
		td_num(sb, isfinite(base) ? 100 * (base / s - 1) : NAN, "%+.1f%%");
		td_num(sb, jnum(x, "memory_gib"), "%.1f");
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table>");
	cJSON_ArrayForEach(x, jget(doc, "changes")) {
		sbuf_adds(sb, "<details><summary>the diff: ");
		esc(sb, jstr(x, "kind"));
		sbuf_adds(sb, " (");
		esc(sb, jstr(x, "changes"));
		sbuf_adds(sb, ")</summary><pre>");
		cJSON_ArrayForEach(l, jget(x, "diff")) {
			esc(sb, cJSON_IsString(l) ? l->valuestring : "?");
			sbuf_adds(sb, "\n");
		}
		sbuf_adds(sb, "</pre></details>");
	}
}

void html_check(struct sbuf *sb, const cJSON *doc)
{
	section(sb, "check", "Check",
		"The job as its own file states it, what megatune predicts for it (and what a "
		"log's run measured), the rules that find it misconfigured, and the changes "
		"searched from it with their gains and the exact diff in the job's own words "
		"(docs/CHECK.md).");
	job_facts(sb, jget(doc, "job"));
	html_check_as_is(sb, doc);
	html_check_diagnoses(sb, doc);
	changes(sb, doc);
	sbuf_adds(sb, "</section>");
}
