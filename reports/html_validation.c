/* SPDX-License-Identifier: MIT */
/* html_validation: the report's Validation section (megatune.validation/1):
 * predicted against measured step time, a scatter with the y = x line and
 * each candidate labelled, and the status of every run with its evidence. */
#include <math.h>
#include <stdio.h>

#include "../perfmodel/cluster.h"
#include "../validate/logparse.h"
#include "../validate/validation.h"
#include "html_parts.h"

#define W 560.0
#define H 420.0
#define PX 70.0  /* plot area: left, top, width, height */
#define PY 20.0
#define PW 460.0
#define PH 340.0

static double html_validation_mapx(double v, double lo, double hi)
{
	return PX + (v - lo) / (hi - lo) * PW;
}

static double html_validation_mapy(double v, double lo, double hi)
{
	return PY + PH - (v - lo) / (hi - lo) * PH;
}

static void scatter(struct sbuf *sb, const struct mt_validation *v)
{
	double lo = INFINITY, hi = 0, ticks[16];
	int i, n, pts = 0;

	for (i = 0; i < v->ncand; i++) {
		const struct mt_vcand *c = &v->cand[i];

		if (!c->has_measured || !isfinite(c->pred.step_s))
			continue;
		lo = fmin(lo, fmin(c->pred.step_s, c->meas.step_s));
		hi = fmax(hi, fmax(c->pred.step_s, c->meas.step_s));
		pts++;
	}
	if (!pts) {
		sbuf_adds(sb, "<p>No candidate has both a predicted and a measured step.</p>");
		return;
	}
	lo = lo * 0.9;
	hi = hi * 1.1;
	if (hi - lo < 1e-9)
		hi = lo + 1;
	sbuf_addf(sb, "<div class=\"single\"><svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" "
		      "role=\"img\"><text x=\"%.0f\" y=\"14\" class=\"ct\">Step time: predicted vs "
		      "measured (s)</text><rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" "
		      "class=\"frame\"/>", W, H, PX, PX, PY, PW, PH);
	n = svg_ticks(lo, hi, 0, ticks, 16);
	for (i = 0; i < n; i++) {
		double x = html_validation_mapx(ticks[i], lo, hi), y = html_validation_mapy(ticks[i], lo, hi);

		sbuf_addf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			      "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">",
			  x, PY, x, PY + PH, PX, y, PX + PW, y, x, PY + PH + 16);
		svg_num(sb, ticks[i]);
		sbuf_addf(sb, "</text><text x=\"%.1f\" y=\"%.1f\" class=\"tk\" "
			      "text-anchor=\"end\">", PX - 6, y + 4);
		svg_num(sb, ticks[i]);
		sbuf_adds(sb, "</text>");
	}
	sbuf_addf(sb, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"limit\" "
		      "data-ref=\"y=x\"><title>y = x: measured equals predicted</title></line>"
		      "<text x=\"%.1f\" y=\"%.1f\" class=\"lt\">y = x</text>",
		  html_validation_mapx(lo, lo, hi), html_validation_mapy(lo, lo, hi), html_validation_mapx(hi, lo, hi), html_validation_mapy(hi, lo, hi),
		  html_validation_mapx(hi, lo, hi) - 40, html_validation_mapy(hi, lo, hi) + 14);
	sbuf_addf(sb, "<text x=\"%.0f\" y=\"%.0f\" class=\"al\" text-anchor=\"middle\">predicted "
		      "step (s)</text><text x=\"16\" y=\"%.0f\" class=\"al\" text-anchor=\"middle\" "
		      "transform=\"rotate(-90 16 %.0f)\">measured step (s)</text>",
		  PX + PW / 2, H - 8, PY + PH / 2, PY + PH / 2);
	for (i = 0; i < v->ncand; i++) {
		const struct mt_vcand *c = &v->cand[i];
		double x, y;

		if (!c->has_measured || !isfinite(c->pred.step_s))
			continue;
		x = html_validation_mapx(c->pred.step_s, lo, hi);
		y = html_validation_mapy(c->meas.step_s, lo, hi);
		sbuf_addf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" class=\"vpoint\">"
			      "<title>", x, y, c->status == MT_VS_OK ? svg_palette[0] : "#c0392b");
		esc(sb, c->name);
		sbuf_addf(sb, ": predicted %.4g s, measured %.4g s (%s)</title></circle>"
			      "<text x=\"%.1f\" y=\"%.1f\" class=\"bl\">", c->pred.step_s,
			  c->meas.step_s, mt_vstatus_name(c->status), x + 7, y - 6);
		esc(sb, c->name);
		sbuf_adds(sb, "</text>");
	}
	sbuf_adds(sb, "</svg></div><p class=\"lead\">Blue: ran to the end; red: failed after the "
		      "steps shown (its status below).  Above the line: slower than predicted.</p>");
}

static void status_table(struct sbuf *sb, const struct mt_validation *v)
{
	int i;

	sbuf_adds(sb, "<div class=\"scroll\"><table class=\"vstatus\"><thead><tr>"
		      "<th>candidate</th><th class=\"n\">rank</th><th class=\"n\">predicted "
		      "(s)</th><th class=\"n\">measured (s)</th><th class=\"n\">n</th>"
		      "<th class=\"n\">error</th><th class=\"n\">tokens/s/GPU</th><th class=\"n\">"
		      "TFLOP/s/GPU</th><th class=\"n\">reserved GiB</th><th>status</th>"
		      "</tr></thead><tbody>");
	for (i = 0; i < v->ncand; i++) {
		const struct mt_vcand *c = &v->cand[i];
		int m = c->has_measured;

		sbuf_addf(sb, "<tr class=\"vs-%s\"><td style=\"white-space:nowrap\">",
			  mt_vstatus_name(c->status));
		esc(sb, c->name);
		sbuf_adds(sb, "</td>");
		td_num(sb, c->predicted_rank, "%.0f");
		td_num(sb, c->pred.step_s, "%.4g");
		td_num(sb, m ? c->meas.step_s : NAN, "%.4g");
		td_num(sb, m ? c->meas.step_n : NAN, "%.0f");
		td_num(sb, m ? 100 * mt_vrel(c->meas.step_s, c->pred.step_s) : NAN, "%+.1f%%");
		td_num(sb, m ? c->meas.tokens_per_s_per_gpu : NAN, "%.0f");
		td_num(sb, m ? c->meas.tflops_per_gpu : NAN, "%.1f");
		td_num(sb, m ? c->meas.mem_max_reserved_gib : NAN, "%.2f");
		td_str(sb, mt_vstatus_name(c->status));
		sbuf_adds(sb, "</tr>");
		if (!c->evidence_line && !c->reason && !c->log)
			continue;
		sbuf_adds(sb, "<tr><td colspan=\"10\" style=\"max-width:1100px;word-break:break-word;"
			      "font-size:12.5px\">");
		if (c->evidence_line) {
			sbuf_addf(sb, "line %ld: <code>", c->evidence_lineno);
			esc(sb, c->evidence_line);
			sbuf_adds(sb, "</code>");
		}
		if (c->reason) {
			sbuf_adds(sb, c->evidence_line ? "<br>" : "");
			esc(sb, c->reason);
		}
		if (c->log) {
			sbuf_adds(sb, c->evidence_line || c->reason ? "<br>" : "");
			sbuf_adds(sb, "log: ");
			esc(sb, c->log);
		}
		sbuf_adds(sb, "</td></tr>");
	}
	sbuf_adds(sb, "</tbody></table></div>");
}

/* The factors calibrate --from-validation fitted, and the runs behind them. */
static void fit_table(struct sbuf *sb, const struct mt_corr *k)
{
	int i;

	sbuf_adds(sb, "<h3>Model corrections fitted from measured runs</h3><p class=\"lead\">");
	esc(sb, k->note);
	sbuf_adds(sb, ".  Leave-one-out step error: before ");
	num(sb, 100 * k->loo_before, "%.2f%%");
	sbuf_adds(sb, ", after ");
	num(sb, 100 * k->loo_after, "%.2f%%");
	sbuf_adds(sb, ".</p><div class=\"scroll\"><table><thead><tr><th>factor</th>"
		      "<th class=\"n\">time multiplier</th></tr></thead><tbody>");
	for (i = 0; i < MT_CORR_N; i++) {
		sbuf_adds(sb, "<tr>");
		td_str(sb, mt_corr_name(i));
		td_num(sb, k->f[i], "%.3f");
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "<tr>");
	td_str(sb, "step memory (multiplier)");
	td_num(sb, k->mem_step, "%.3f");
	sbuf_adds(sb, "</tr><tr>");
	td_str(sb, "memory term (GiB)");
	td_num(sb, k->mem_bytes / (1024.0 * 1024 * 1024), "%+.2f");
	sbuf_adds(sb, "</tr></tbody></table></div>");
	if (!k->nruns)
		return;
	sbuf_adds(sb, "<div class=\"scroll\"><table><thead><tr><th>run</th><th class=\"n\">"
		      "measured (s)</th><th class=\"n\">predicted (s)</th><th class=\"n\">"
		      "residual</th><th class=\"n\">corrected (s)</th><th class=\"n\">"
		      "residual</th></tr></thead><tbody>");
	for (i = 0; i < k->nruns; i++) {
		const struct mt_corr_run *r = &k->runs[i];

		sbuf_adds(sb, "<tr>");
		td_str(sb, r->name);
		td_num(sb, r->measured_s, "%.4g");
		td_num(sb, r->predicted_s, "%.4g");
		td_num(sb, 100 * mt_vrel(r->measured_s, r->predicted_s), "%+.1f%%");
		td_num(sb, r->corrected_s, "%.4g");
		td_num(sb, 100 * mt_vrel(r->measured_s, r->corrected_s), "%+.1f%%");
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></div>");
}

void html_validation(struct sbuf *sb, const struct mt_validation *v, const struct mt_cluster *c)
{
	const struct mt_vsummary *s = &v->sum;
	int i;

	section(sb, "validation", "Validation",
		"The top candidates run for real: measured step (median of the steady "
		"iterations) against megatune's prediction, and how each run ended.");
	sbuf_adds(sb, "<div class=\"cards\"><div class=\"card\"><b>");
	sbuf_addf(sb, "%d / %d", s->ok, v->ncand);
	sbuf_adds(sb, "</b><span>ran to the end</span></div><div class=\"card\"><b>");
	num(sb, s->kendall_tau, "%.2f");
	sbuf_adds(sb, "</b><span>Kendall's tau, predicted vs measured</span></div>"
		      "<div class=\"card\"><b>");
	num(sb, 100 * s->mape_step, "%.1f%%");
	sbuf_adds(sb, "</b><span>mean absolute step error</span></div><div class=\"card\"><b>");
	esc(sb, s->nranked ? s->measured_ranking[0] : "none");
	sbuf_adds(sb, "</b><span>measured best</span></div></div>");
	scatter(sb, v);
	status_table(sb, v);
	if (c && c->corr.on)
		fit_table(sb, &c->corr);
	sbuf_adds(sb, "<p>Measured ranking:");
	for (i = 0; i < s->nranked; i++) {
		sbuf_addf(sb, " %d.&#160;", i + 1);
		esc(sb, s->measured_ranking[i]);
	}
	if (!s->nranked)
		sbuf_adds(sb, " none");
	sbuf_adds(sb, "</p></section>");
}
