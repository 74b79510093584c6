/* SPDX-License-Identifier: MIT */
/* html: the tuning report. */
#include "html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tuner/advice.h"
#include "../compare/comparison.h"
#include "../lib/fsutil.h"
#include "../lib/version.h"
#include "../perfmodel/cluster.h"
#include "html_parts.h"
#include "html_trend.h"

/* ---------------------------------------------------------------- style and script */

static const char css[] =
	":root{--fg:#1d2733;--mute:#5c6b7a;--line:#d9dee4;--bg:#fff;--band:#f4f6f8;--accent:#4e79a7;"
	"--bad:#c0392b;--good:#2e7d32;--warn:#b7791f}"
	"*{box-sizing:border-box}"
	"body{margin:0;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',"
	"Arial,sans-serif;color:var(--fg);background:var(--bg)}"
	"header{background:#1d2733;color:#fff;padding:18px 28px 10px}"
	"header h1{margin:0;font-size:22px;font-weight:600}"
	"header p{margin:4px 0 8px;color:#c9d3dd}"
	"nav a{color:#c9d3dd;margin-right:16px;text-decoration:none;font-size:14px}"
	"nav a:hover{color:#fff}"
	"main{max-width:1180px;margin:0 auto;padding:8px 28px 40px}"
	"section{margin:26px 0;padding-top:6px;border-top:1px solid var(--line)}"
	"h2{font-size:19px;margin:10px 0 6px}h3{font-size:16px;margin:18px 0 6px}"
	".lead{color:var(--mute);margin:0 0 10px}"
	".cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}"
	".card{flex:1 1 150px;border:1px solid var(--line);border-radius:6px;padding:10px 14px}"
	".card b{display:block;font-size:21px;font-weight:600}"
	".card span{color:var(--mute);font-size:13px}"
	"table{border-collapse:collapse;margin:8px 0;font-size:13.5px;width:auto}"
	"th,td{border-bottom:1px solid var(--line);padding:4px 10px;text-align:left;"
	"vertical-align:top}"
	"th{background:var(--band);font-weight:600;white-space:nowrap}"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	"tr.best td{background:#eef4fb}"
	"th.sort{cursor:pointer}th.sort:after{content:' \\2195';color:#9aa7b4;font-weight:400}"
	"table.cands th,table.cands td{padding:4px 7px}table.cands th{white-space:normal;"
	"vertical-align:bottom}"
	".scroll{overflow-x:auto}"
	".grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(430px,1fr));gap:8px 22px}"
	"svg.chart{width:100%;height:auto;display:block;margin:6px 0 10px}"
	".single{max-width:760px}.wide{max-width:1000px}"
	"svg .ct{font-size:14px;font-weight:600;fill:var(--fg)}"
	"svg .tk,svg .lg,svg .bv{font-size:11px;fill:#44505c}"
	"svg .al{font-size:12px;fill:var(--mute)}svg .bl{font-size:12px;fill:var(--fg)}"
	"svg .lt{font-size:11px;fill:var(--bad)}"
	"svg .grid{stroke:#e6e9ed;stroke-width:1}svg .frame{fill:none;stroke:#b8c1ca}"
	"svg .limit{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:6 4}"
	".rule{border:1px solid var(--line);border-left:4px solid var(--accent);border-radius:4px;"
	"padding:8px 12px;margin:8px 0}"
	".rule.violated{border-left-color:var(--bad)}.rule.overridden{border-left-color:var(--warn)}"
	".rule h4{margin:0 0 4px;font-size:14px}.rule code{font-size:12.5px}"
	".rule .eff{color:var(--accent);font-weight:600}"
	".rule .cite{color:var(--mute);font-size:12.5px;margin-top:4px}"
	".tag{display:inline-block;font-size:11px;padding:1px 6px;border-radius:9px;"
	"background:var(--band);color:var(--mute);margin-left:6px;vertical-align:1px}"
	".tag.bad{background:#fbe9e7;color:var(--bad)}.tag.good{background:#e8f5e9;color:var(--good)}"
	".tag.warn{background:#fdf3e1;color:var(--warn)}"
	"details{margin:4px 0}summary{cursor:pointer;color:var(--mute);font-size:13px}"
	"pre{background:#f6f8fa;border:1px solid var(--line);border-radius:4px;padding:10px 12px;"
	"overflow-x:auto;font-size:12.5px;line-height:1.4;margin:6px 0}"
	".copy{float:right;font-size:12px;border:1px solid var(--line);background:#fff;"
	"border-radius:4px;padding:2px 8px;cursor:pointer}"
	".none{color:var(--mute);font-style:italic}"
	".verdict-regressed td{background:#fdecea}.verdict-improved td{background:#edf7ee}"
	"footer{max-width:1180px;margin:0 auto;padding:0 28px 30px;color:var(--mute);font-size:12.5px}"
	"@media print{header{background:none;color:#000;padding:0}header p,nav a{color:#333}"
	"nav,.copy{display:none}section{break-inside:auto;break-before:auto}"
	"h2,h3{break-after:avoid}.grid2{grid-template-columns:1fr 1fr}"
	".scroll{overflow:visible}table.cands{font-size:9.5px}table.cands th,table.cands td{padding:2px 3px}"
	".chart,.rule,table{break-inside:avoid}main{max-width:none;padding:0}"
	"body{font-size:12px}}";

/* Sorting by a column (numbers by data-v), and copy buttons.  Nothing runs
 * at load but the listeners; errors are caught so that the page stays clean. */
static const char script[] =
	"(function(){try{"
	"document.querySelectorAll('table.sortable').forEach(function(t){"
	"t.querySelectorAll('th').forEach(function(th,i){th.classList.add('sort');"
	"th.addEventListener('click',function(){var b=t.tBodies[0],r=Array.prototype.slice.call(b.rows),"
	"up=th.dataset.dir!=='a';th.dataset.dir=up?'a':'d';r.sort(function(x,y){"
	"var p=x.cells[i],q=y.cells[i],u=p.dataset.v,v=q.dataset.v;"
	"if(u!==undefined&&v!==undefined){u=u===''?Infinity:+u;v=v===''?Infinity:+v;return up?u-v:v-u;}"
	"u=p.textContent;v=q.textContent;return up?u.localeCompare(v):v.localeCompare(u);});"
	"r.forEach(function(x){b.appendChild(x);});});});});"
	"document.querySelectorAll('button.copy').forEach(function(btn){"
	"btn.addEventListener('click',function(){var pre=document.getElementById(btn.dataset.for);"
	"var txt=pre?pre.textContent:'';function sel(){var g=document.createRange();g.selectNodeContents(pre);"
	"var s=window.getSelection();s.removeAllRanges();s.addRange(g);}"
	"try{navigator.clipboard.writeText(txt).then(function(){btn.textContent='copied';},sel);}"
	"catch(e){sel();}});});"
	"}catch(e){}})();";

/* ---------------------------------------------------------------- findings, regressions */

static void findings(struct sbuf *sb, const cJSON *an)
{
	static const char *const segs[] = { "computation", "exposed communication",
					    "exposed memory copies", "idle" };
	static const int colors[] = { 0, 1, 4, 9 };
	const cJSON *r, *f;
	int nr = cJSON_GetArraySize(jget(an, "ranks")), n = 0, i;
	double *v = nr ? calloc((size_t)nr * 4, sizeof(double)) : NULL;
	char **labels = nr ? calloc((size_t)nr, sizeof(char *)) : NULL;

	section(sb, "findings", "Profile findings", "What the traced run did, per rank "
		"(megatune analyze).");
	if (jstr(an, "source")) {
		sbuf_adds(sb, "<p>");
		esc(sb, jstr(an, "source"));
		sbuf_adds(sb, "</p>");
	}
	sbuf_adds(sb, "<div class=\"scroll\"><table class=\"sortable\"><thead><tr>"
		      "<th class=\"n\">rank</th><th class=\"n\">total (ms)</th><th class=\"n\">busy (ms)</th>"
		      "<th class=\"n\">idle (ms)</th><th class=\"n\">computation (ms)</th>"
		      "<th class=\"n\">communication (ms)</th><th class=\"n\">exposed comm. (ms)</th>"
		      "<th class=\"n\">exposed copies (ms)</th><th class=\"n\">overlap</th></tr></thead><tbody>");
	cJSON_ArrayForEach(r, jget(an, "ranks")) {
		double tot = jnum(r, "total_us"), comp = jnum(r, "computation_us");
		double ec = jnum(r, "exposed_comm_us"), em = jnum(r, "exposed_memcpy_us");
		double idle = jnum(r, "idle_us");
		sbuf_adds(sb, "<tr>");
		td_num(sb, jnum(r, "rank"), "%.0f");
		td_num(sb, tot / 1e3, "%.3f");
		td_num(sb, jnum(r, "busy_us") / 1e3, "%.3f");
		td_num(sb, idle / 1e3, "%.3f");
		td_num(sb, comp / 1e3, "%.3f");
		td_num(sb, jnum(r, "comm_us") / 1e3, "%.3f");
		td_num(sb, ec / 1e3, "%.3f");
		td_num(sb, em / 1e3, "%.3f");
		td_num(sb, jnum(r, "overlap_pct"), "%.1f%%");
		sbuf_adds(sb, "</tr>");
		if (v && labels && n < nr) {
			struct sbuf lb = SBUF_INIT;
			sbuf_adds(&lb, "rank ");
			num(&lb, jnum(r, "rank"), "%.0f");
			labels[n] = sbuf_detach(&lb, NULL);
			v[n * 4] = isfinite(comp) ? comp / 1e3 : 0;
			v[n * 4 + 1] = isfinite(ec) ? ec / 1e3 : 0;
			v[n * 4 + 2] = isfinite(em) ? em / 1e3 : 0;
			v[n * 4 + 3] = isfinite(idle) ? idle / 1e3 : 0;
			n++;
		}
	}
	sbuf_adds(sb, "</tbody></table></div>");
	if (n)
		bars(sb, "wide", &(struct svg_stacked){
			.unit = "ms", .bars = (const char *const *)labels, .segments = segs,
			.colors = colors, .values = v, .nbar = n, .nseg = 4, .width = 900 });
	for (i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
	free(v);
	sbuf_adds(sb, "<h3>Findings</h3>");
	if (!cJSON_GetArraySize(jget(an, "findings")))
		sbuf_adds(sb, "<p class=\"none\">none</p>");
	cJSON_ArrayForEach(f, jget(an, "findings"))
		html_rule_card(sb, f);
	sbuf_adds(sb, "</section>");
}

static void regressions(struct sbuf *sb, const struct mt_comparison *cmp)
{
	int i;

	section(sb, "regressions", "Regression verdicts",
		"The current results against the baseline, with the noise band of each metric.");
	if (cmp->verdict) {
		int bad = !strcmp(cmp->verdict, "regressed") || !strcmp(cmp->verdict, "fail");
		sbuf_addf(sb, "<p>Overall: <span class=\"tag %s\">", bad ? "bad" : "good");
		esc(sb, cmp->verdict);
		sbuf_adds(sb, "</span></p>");
	}
	sbuf_adds(sb, "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>metric</th>"
		      "<th>unit</th><th class=\"n\">baseline</th><th class=\"n\">current</th>"
		      "<th class=\"n\">change</th><th class=\"n\">noise band</th><th>verdict</th>"
		      "<th>noise from</th></tr></thead><tbody>");
	for (i = 0; i < cmp->nmetrics; i++) {
		const struct mt_cmp_metric *m = &cmp->metrics[i];
		const char *v = m->verdict;

		sbuf_adds(sb, "<tr");
		if (v && (!strcmp(v, "regressed") || !strcmp(v, "improved")))
			sbuf_addf(sb, " class=\"verdict-%s\"", v);
		sbuf_adds(sb, ">");
		td_str(sb, m->name);
		td_str(sb, m->unit);
		td_num(sb, m->baseline, "%.6g");
		td_num(sb, m->current, "%.6g");
		td_num(sb, m->change_pct, "%+.2f%%");
		td_num(sb, m->noise_pct, "&#177;%.2f%%");
		td_str(sb, v);
		td_str(sb, m->note ? m->note : m->method);
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></div>");
	if (cmp->nonly_baseline || cmp->nonly_current)
		sbuf_addf(sb, "<p>Not compared: %d metrics only in the baseline, %d only in the "
			  "current.</p>", cmp->nonly_baseline, cmp->nonly_current);
	sbuf_adds(sb, "</section>");
}

/* ---------------------------------------------------------------- the page */

int mt_report_schema(const cJSON *doc, const char *want, const char *file, const char *opt,
		     struct mt_error *err)
{
	return mt_jschema(doc, want, file, opt, err);
}

/* The typed documents the page draws, each read once (tuner/advice.h,
 * compare/comparison.h); has_* says which were read. */
struct parsed {
	struct mt_advice_doc adv;
	struct mt_comparison cmp;
	int has_adv, has_cmp;
};

static void parsed_free(struct parsed *p)
{
	if (p->has_adv)
		mt_advice_doc_free(&p->adv);
	if (p->has_cmp)
		mt_comparison_free(&p->cmp);
	p->has_adv = p->has_cmp = 0;
}

/* Check the inputs and read them into p; on an error, what was read before
 * it stays in p (the caller frees p either way). */
static int read_inputs(const struct mt_report_in *in, struct parsed *p, struct mt_error *err)
{
	int rc;

	memset(p, 0, sizeof(*p));
	if (!in->advice && !in->cluster && !in->analysis && !in->compare && !in->history_file &&
	    !in->validation && !in->check)
		return mt_error_set(err, MT_EUSAGE, "nothing to report: give --advice, --profile, "
				    "--analysis, --compare, --validation, --check or --history");
	if (in->check && (rc = mt_report_schema(in->check, "megatune.check/1", in->check_file,
						"--check", err)))
		return rc;
	if (in->advice && (rc = mt_report_schema(in->advice, "megatune.advice/1", in->advice_file,
					  "--advice", err)))
		return rc;
	if (in->analysis && (rc = mt_report_schema(in->analysis, "megatune.analysis/1", in->analysis_file,
					    "--analysis", err)))
		return rc;
	if (in->compare) {
		if ((rc = mt_comparison_read(in->compare, in->compare_file, "--compare", &p->cmp, err)))
			return rc;
		p->has_cmp = 1;
	}
	if (in->advice) {
		if ((rc = mt_advice_read(in->advice, in->advice_file, "--advice", &p->adv, err)))
			return rc;
		p->has_adv = 1;
	}
	return MT_OK;
}

int mt_report_mismatch(const struct mt_report_in *in, char *buf, size_t cap)
{
	const char *name, *gpu;

	if (!in->advice || !in->cluster)
		return 0;
	name = jstr(in->advice, "job.cluster");
	gpu = jstr(in->advice, "cluster.gpu");
	if ((!name || !strcmp(name, in->cluster->name)) &&
	    (!gpu || !strcmp(gpu, in->cluster->gpu_name)))
		return 0;
	snprintf(buf, cap, "the advice was made for %s (%s) but the profile is %s (%s): the "
		 "cluster section describes another system than the advice's predictions",
		 name ? name : "a profile it does not name", gpu ? gpu : "GPU not given",
		 in->cluster->name, in->cluster->gpu_name);
	return 1;
}

int mt_report_check(const struct mt_report_in *in, struct mt_error *err)
{
	struct parsed p;
	int rc = read_inputs(in, &p, err);

	parsed_free(&p);
	return rc;
}

static void html_render(struct sbuf *sb, const struct mt_report_in *in, const struct parsed *p)
{
	const cJSON *adv = p->has_adv ? in->advice : NULL;
	const struct mt_advice_doc *doc = &p->adv;

	sbuf_adds(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
		      "<title>megatune report");
	if (adv) {
		sbuf_adds(sb, ": ");
		esc(sb, doc->model);
		sbuf_adds(sb, " on ");
		esc(sb, doc->cluster);
	} else if (in->cluster) {
		sbuf_adds(sb, ": ");
		esc(sb, in->cluster->name);
	}
	sbuf_adds(sb, "</title><style>");
	sbuf_adds(sb, css);
	sbuf_adds(sb, "</style></head><body><header><h1>megatune report</h1><p>");
	if (adv) {
		esc(sb, doc->model);
		sbuf_adds(sb, " on ");
		num(sb, doc->gpus, "%.0f");
		sbuf_adds(sb, " GPUs of ");
		esc(sb, doc->cluster);
		sbuf_adds(sb, " &#183; ");
	}
	sbuf_adds(sb, "megatune " MEGATUNE_VERSION "</p><nav>");
	if (in->check)
		sbuf_adds(sb, "<a href=\"#check\">Check</a>");
	if (adv)
		sbuf_adds(sb, "<a href=\"#summary\">Summary</a>");
	if (in->cluster)
		sbuf_adds(sb, "<a href=\"#cluster\">Cluster</a>");
	if (adv)
		sbuf_adds(sb, "<a href=\"#candidates\">Candidates</a><a href=\"#memory\">Memory</a>"
			      "<a href=\"#time\">Time</a><a href=\"#why\">Why</a>"
			      "<a href=\"#configuration\">Configuration</a>");
	if (in->analysis)
		sbuf_adds(sb, "<a href=\"#findings\">Findings</a>");
	if (in->compare)
		sbuf_adds(sb, "<a href=\"#regressions\">Regressions</a>");
	if (in->validation)
		sbuf_adds(sb, "<a href=\"#validation\">Validation</a>");

	if (in->history_file)
		sbuf_adds(sb, "<a href=\"#trends\">Trends</a>");
	sbuf_adds(sb, "</nav></header><main>");
	if (in->check)
		html_check(sb, in->check);
	if (adv)
		html_summary(sb, adv);
	if (in->cluster) {
		char note[768];

		html_cluster(sb, in->cluster,
			     adv && mt_report_mismatch(in, note, sizeof(note)) ? note : NULL);
	}
	if (adv) {
		html_candidates(sb, adv);
		html_memory(sb, adv);
		html_timebars(sb, adv);
		html_why(sb, adv);
		html_configuration(sb, adv);
	}
	if (in->analysis)
		findings(sb, in->analysis);
	if (p->has_cmp)
		regressions(sb, &p->cmp);
	if (in->validation)
		html_validation(sb, in->validation, in->cluster);
	if (in->history_file)
		html_trends(sb, in->trends, in->ntrends, in->history_file);
	sbuf_adds(sb, "</main><footer>Inputs:");
	if (in->advice_file) {
		sbuf_adds(sb, " advice ");
		esc(sb, in->advice_file);
	}
	if (in->profile_file) {
		sbuf_adds(sb, " &#183; profile ");
		esc(sb, in->profile_file);
	}
	if (in->analysis_file) {
		sbuf_adds(sb, " &#183; analysis ");
		esc(sb, in->analysis_file);
	}
	if (in->compare_file) {
		sbuf_adds(sb, " &#183; comparison ");
		esc(sb, in->compare_file);
	}
	if (in->validation_file) {
		sbuf_adds(sb, " &#183; validation ");
		esc(sb, in->validation_file);
	}
	if (in->check_file) {
		sbuf_adds(sb, " &#183; check ");
		esc(sb, in->check_file);
	}
	sbuf_adds(sb, ". Predictions come from megatune's model (docs/MODEL.md); measured values from "
		      "the profile, each with its source.</footer><script>");
	sbuf_adds(sb, script);
	sbuf_adds(sb, "</script></body></html>\n");
}

void mt_report_html(struct sbuf *sb, const struct mt_report_in *in)
{
	struct mt_error err = MT_ERROR_INIT;
	struct parsed p;

	read_inputs(in, &p, &err); /* what failed is left out: mt_report_check said why */
	html_render(sb, in, &p);
	parsed_free(&p);
}

int mt_report_write(const char *path, const struct mt_report_in *in, struct mt_error *err)
{
	struct sbuf sb = SBUF_INIT;
	struct parsed p;
	int rc;

	if ((rc = read_inputs(in, &p, err)) == MT_OK)
		html_render(&sb, in, &p);
	parsed_free(&p);
	if (rc)
		return rc;
	if (sb.failed) {
		sbuf_release(&sb);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	rc = mt_write_atomic(path, sb.buf, sb.len, err);
	sbuf_release(&sb);
	return rc;
}
