/* SPDX-License-Identifier: MIT */
/* html: the tuning report. */
#include "html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/version.h"
#include "advice.h"
#include "svg.h"

#define GIB 1073741824.0

/* ---------------------------------------------------------------- input access */

/* The member at a dotted path ("time.step_s"), or NULL. */
static const cJSON *jget(const cJSON *o, const char *path)
{
	char key[96];
	const char *p = path;

	while (o && *p) {
		size_t n = strcspn(p, ".");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
		p += n;
		if (*p == '.')
			p++;
	}
	return o;
}

static double jnum(const cJSON *o, const char *path)
{
	const cJSON *v = jget(o, path);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *jstr(const cJSON *o, const char *path)
{
	const cJSON *v = jget(o, path);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int jtrue(const cJSON *o, const char *path)
{
	return cJSON_IsTrue(jget(o, path));
}

/* ---------------------------------------------------------------- text helpers */

static void esc(struct sbuf *sb, const char *s)
{
	svg_escape(sb, s ? s : "n/a");
}

static void num(struct sbuf *sb, double v, const char *fmt)
{
	if (!isfinite(v))
		sbuf_adds(sb, "n/a");
	else
		sbuf_addf(sb, fmt, v);
}

/* A cell whose text is a number: right-aligned, sortable by its value. */
static void td_num(struct sbuf *sb, double v, const char *fmt)
{
	if (isfinite(v))
		sbuf_addf(sb, "<td class=\"n\" data-v=\"%.9g\">", v);
	else
		sbuf_adds(sb, "<td class=\"n\" data-v=\"\">");
	num(sb, v, fmt);
	sbuf_adds(sb, "</td>");
}

static void td_str(struct sbuf *sb, const char *s)
{
	sbuf_adds(sb, "<td>");
	esc(sb, s);
	sbuf_adds(sb, "</td>");
}

/* "TP4 PP2 VPP8 CP2(p2p) EP8 DP4 MBS1" from a candidate's config */
static void label(struct sbuf *sb, const cJSON *cand)
{
	const cJSON *c = jget(cand, "config");
	double cp = jnum(c, "cp"), ep = jnum(c, "ep"), vpp = jnum(c, "vpp");

	sbuf_adds(sb, "TP");
	num(sb, jnum(c, "tp"), "%.0f");
	sbuf_adds(sb, " PP");
	num(sb, jnum(c, "pp"), "%.0f");
	if (vpp > 1)
		sbuf_addf(sb, " VPP%.0f", vpp);
	if (cp > 1) {
		sbuf_addf(sb, " CP%.0f(", cp);
		esc(sb, jstr(c, "cp_comm_type"));
		sbuf_addc(sb, ')');
	}
	if (ep > 1)
		sbuf_addf(sb, " EP%.0f ETP%.0f", ep, jnum(c, "etp"));
	sbuf_adds(sb, " DP");
	num(sb, jnum(c, "dp"), "%.0f");
	sbuf_adds(sb, " MBS");
	num(sb, jnum(c, "mbs"), "%.0f");
}

/* "#1 TP4 PP2 ..." for a bar of a chart; the caller frees it. */
static char *bar_label(const cJSON *cand)
{
	struct sbuf sb = SBUF_INIT;

	sbuf_addf(&sb, "#%.0f ", jnum(cand, "rank"));
	label(&sb, cand);
	return sbuf_detach(&sb, NULL);
}

/* Stacked bars in a <div> of the class that sets their width. */
static void bars(struct sbuf *sb, const char *cls, const struct svg_stacked *s)
{
	sbuf_addf(sb, "<div class=\"%s\">", cls);
	svg_stacked_bars(sb, s);
	sbuf_adds(sb, "</div>");
}

static void section(struct sbuf *sb, const char *id, const char *title, const char *lead)
{
	sbuf_addf(sb, "<section id=\"%s\"><h2>%s</h2>", id, title);
	if (lead)
		sbuf_addf(sb, "<p class=\"lead\">%s</p>", lead);
}

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

/* ---------------------------------------------------------------- summary */

static const struct {
	const char *key, *name;
} time_parts[] = {
	{ "tp_exposed_s", "exposed TP communication" },
	{ "cp_exposed_s", "exposed CP communication" },
	{ "ep_exposed_s", "exposed EP communication" },
	{ "pp_exposed_s", "exposed pipeline send/recv" },
	{ "dp_exposed_s", "exposed DP communication" },
	{ "offload_exposed_s", "exposed activation offload" },
	{ "host_exposed_s", "host overhead" },
	{ "bubble_s", "pipeline bubble" },
	{ "optimizer_s", "optimizer step" },
	{ "recompute_s", "recomputation" },
	{ "gemm_s", "GEMM time" },
	{ "attention_s", "attention time" },
	{ "elementwise_s", "element-wise time" },
	{ "gpu_overhead_s", "kernel gaps and SM sharing" },
};

static void card(struct sbuf *sb, const char *value, const char *what)
{
	sbuf_adds(sb, "<div class=\"card\"><b>");
	sbuf_adds(sb, value);
	sbuf_adds(sb, "</b><span>");
	sbuf_adds(sb, what);
	sbuf_adds(sb, "</span></div>");
}

static void summary(struct sbuf *sb, const cJSON *adv)
{
	const cJSON *job = jget(adv, "job"), *cands = jget(adv, "candidates");
	const cJSON *best = cJSON_GetArrayItem(cands, 0), *second = cJSON_GetArrayItem(cands, 1);
	char buf[96];
	double cap = jnum(adv, "search.capacity_bytes");

	section(sb, "summary", "Summary", NULL);
	sbuf_adds(sb, "<p><b>");
	esc(sb, jstr(job, "model"));
	sbuf_adds(sb, "</b> (");
	num(sb, jnum(adv, "model.params_total") / 1e9, "%.1f");
	sbuf_adds(sb, " B parameters");
	if (jnum(adv, "model.experts") > 0) {
		sbuf_adds(sb, ", ");
		num(sb, jnum(adv, "model.params_active") / 1e9, "%.1f");
		sbuf_adds(sb, " B active");
	}
	sbuf_adds(sb, ") on <b>");
	esc(sb, jstr(job, "cluster"));
	sbuf_adds(sb, "</b> (");
	esc(sb, jstr(adv, "cluster.gpu"));
	sbuf_adds(sb, "): ");
	num(sb, jnum(job, "gpus"), "%.0f");
	sbuf_adds(sb, " GPUs, sequence ");
	num(sb, jnum(job, "seq"), "%.0f");
	sbuf_adds(sb, ", global batch ");
	num(sb, jnum(job, "gbs"), "%.0f");
	sbuf_adds(sb, ", ");
	esc(sb, jstr(job, "precision"));
	sbuf_adds(sb, ".</p>");
	if (!best) {
		sbuf_adds(sb, "<p class=\"none\">No configuration fits: see the pruned counts below.</p>"
			      "</section>");
		return;
	}
	sbuf_adds(sb, "<p>Recommended: <b>");
	label(sb, best);
	sbuf_adds(sb, "</b>, recompute ");
	esc(sb, jstr(best, "config.recompute"));
	sbuf_addf(sb, ", distributed optimizer %s.</p>",
		  jtrue(best, "config.distributed_optimizer") ? "on" : "off");
	if (jtrue(adv, "rules.constraints_relaxed")) {
		sbuf_adds(sb, "<p class=\"tag bad\">no candidate that fits satisfies every constraint "
			      "rule: ranked without ");
		esc(sb, jstr(adv, "rules.relaxed"));
		sbuf_adds(sb, "</p>");
	}
	sbuf_adds(sb, "<div class=\"cards\">");
	snprintf(buf, sizeof(buf), "%.3f s", jnum(best, "time.step_s"));
	card(sb, buf, "predicted step time");
	snprintf(buf, sizeof(buf), "%.0f", jnum(best, "throughput.tokens_per_s_per_gpu"));
	card(sb, buf, "tokens/s per GPU");
	snprintf(buf, sizeof(buf), "%.1f", jnum(best, "throughput.model_tflops_per_gpu"));
	card(sb, buf, "model TFLOP/s per GPU");
	snprintf(buf, sizeof(buf), "%.1f%%", 100 * jnum(best, "throughput.mfu"));
	card(sb, buf, "MFU");
	snprintf(buf, sizeof(buf), "%.1f GiB", jnum(best, "memory.total_bytes") / GIB);
	{
		char what[64];
		snprintf(what, sizeof(what), "peak memory of %.1f GiB usable", cap / GIB);
		card(sb, buf, what);
	}
	sbuf_adds(sb, "</div>");
	if (second) {
		double d = jnum(second, "time.step_s") / jnum(best, "time.step_s") - 1;
		double diff[sizeof(time_parts) / sizeof(time_parts[0])];
		int order[2] = { -1, -1 };
		unsigned i;

		sbuf_adds(sb, "<p>Runner-up: ");
		label(sb, second);
		if (d < 0.001)
			sbuf_adds(sb, ", practically as fast (within 0.1%)");
		else
			sbuf_addf(sb, ", %.1f%% slower", 100 * d);
		for (i = 0; i < sizeof(time_parts) / sizeof(time_parts[0]); i++) {
			char key[64];
			snprintf(key, sizeof(key), "time.%s", time_parts[i].key);
			diff[i] = jnum(second, key) - jnum(best, key);
			if (!isfinite(diff[i]) || diff[i] <= 0)
				continue;
			if (order[0] < 0 || diff[i] > diff[order[0]]) {
				order[1] = order[0];
				order[0] = (int)i;
			} else if (order[1] < 0 || diff[i] > diff[order[1]]) {
				order[1] = (int)i;
			}
		}
		if (order[0] >= 0) {
			sbuf_addf(sb, ": it loses on %s (+%.3f s)", time_parts[order[0]].name,
				  diff[order[0]]);
			if (order[1] >= 0)
				sbuf_addf(sb, " and %s (+%.3f s)", time_parts[order[1]].name,
					  diff[order[1]]);
		}
		sbuf_adds(sb, ".</p>");
	}
	sbuf_adds(sb, "</section>");
}

/* ---------------------------------------------------------------- cluster */

static const cJSON *source_of(const cJSON *prof, const char *id)
{
	const cJSON *s;

	if (!id)
		return NULL;
	cJSON_ArrayForEach(s, jget(prof, "sources")) {
		const char *sid = jstr(s, "id");
		if (sid && !strcmp(sid, id))
			return s;
	}
	return NULL;
}

static void provenance(struct sbuf *sb, const cJSON *prof, const char *id)
{
	const cJSON *s = source_of(prof, id);

	sbuf_adds(sb, "<span class=\"tag\" title=\"");
	esc(sb, s ? jstr(s, "citation") : "no source");
	sbuf_adds(sb, "\">");
	esc(sb, s ? jstr(s, "kind") : "unsourced");
	sbuf_adds(sb, ": ");
	esc(sb, id);
	sbuf_adds(sb, "</span>");
}

static void fact_row(struct sbuf *sb, const char *what, double v, const char *fmt,
		     const cJSON *prof, const char *src)
{
	if (!isfinite(v))
		return;
	sbuf_adds(sb, "<tr><th>");
	sbuf_adds(sb, what);
	sbuf_adds(sb, "</th><td class=\"n\">");
	num(sb, v, fmt);
	sbuf_adds(sb, "</td><td>");
	provenance(sb, prof, src);
	sbuf_adds(sb, "</td></tr>");
}

static int cmp_xy(const void *a, const void *b)
{
	const double *p = a, *q = b;

	return (p[0] > q[0]) - (p[0] < q[0]);
}

/* The points of one GEMM dtype as (size, TFLOP/s) pairs sorted by size. */
static int gemm_points(const cJSON *prof, const char *dt, double *xy, int max)
{
	const cJSON *g;
	int n = 0;

	cJSON_ArrayForEach(g, jget(prof, "gemm")) {
		const char *d = jstr(g, "dtype");
		double m = jnum(g, "m"), nn = jnum(g, "n"), k = jnum(g, "k"), t = jnum(g, "tflops");
		if (!d || strcmp(d, dt) || !(m > 0 && nn > 0 && k > 0) || !isfinite(t) || n >= max)
			continue;
		xy[2 * n] = cbrt(m * nn * k);
		xy[2 * n + 1] = t;
		n++;
	}
	qsort(xy, (size_t)n, 2 * sizeof(double), cmp_xy);
	return n;
}

static void gemm_chart(struct sbuf *sb, const cJSON *prof)
{
	static const char *const dts[] = { "fp8", "bf16", "fp16", "tf32", "fp32" };
	struct svg_series s[5];
	struct svg_refline refs[5];
	char reflabels[5][48];
	double xy[2 * 256], xs[5][256], ys[5][256];
	int ns = 0, nr = 0, i, k;

	for (i = 0; i < 5; i++) {
		double pk;
		char key[48];
		int n = gemm_points(prof, dts[i], xy, 256);

		if (!n)
			continue;
		for (k = 0; k < n; k++) {
			xs[ns][k] = xy[2 * k];
			ys[ns][k] = xy[2 * k + 1];
		}
		s[ns] = (struct svg_series){ .name = dts[i], .x = xs[ns], .y = ys[ns], .n = n,
					     .color = i, .markers = 1 };
		ns++;
		snprintf(key, sizeof(key), "gpu.peak_tflops.%s", dts[i]);
		pk = jnum(prof, key);
		if (pk > 0) {
			snprintf(reflabels[nr], sizeof(reflabels[nr]), "%s datasheet peak", dts[i]);
			refs[nr] = (struct svg_refline){ .label = reflabels[nr], .y = pk, .color = i };
			nr++;
		}
	}
	svg_line_chart(sb, &(struct svg_line_chart){
		.title = "GEMM rate against size", .xlabel = "size: cube root of m x n x k (log)",
		.ylabel = "TFLOP/s", .yunit = "TFLOP/s", .logx = 1,
		.series = s, .nseries = ns, .refs = refs, .nrefs = nr });
}

/* One chart per collective operation: bus bandwidth against message size,
 * a line per measured curve, the NVLink and NIC line rates for reference. */
static void collective_charts(struct sbuf *sb, const cJSON *prof)
{
	static const char *const ops[] = { "all_reduce", "all_gather", "reduce_scatter", "alltoall",
					   "sendrecv", "broadcast" };
	double nvl = jnum(prof, "node.nvlink_gbps");
	double nic = jnum(prof, "node.nic_gbps") * jnum(prof, "node.nics_per_node") /
		     jnum(prof, "node.gpus_per_node");
	unsigned o;

	sbuf_adds(sb, "<div class=\"grid2\">");
	for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		struct svg_series s[16];
		struct svg_refline refs[2];
		static double xs[16][256], ys[16][256];
		char names[16][80], title[64];
		const cJSON *cv;
		int ns = 0, nr = 0;

		cJSON_ArrayForEach(cv, jget(prof, "collectives")) {
			const cJSON *p;
			const char *op = jstr(cv, "op");
			int n = 0;
			if (!op || strcmp(op, ops[o]) || ns >= 16)
				continue;
			cJSON_ArrayForEach(p, jget(cv, "points")) {
				if (n >= 256)
					break;
				xs[ns][n] = jnum(p, "bytes");
				ys[ns][n] = jnum(p, "busbw_gbps");
				n++;
			}
			snprintf(names[ns], sizeof(names[ns]), "%s, %.0f ranks (%.0f per node)",
				 jstr(cv, "span") ? jstr(cv, "span") : "?", jnum(cv, "ranks"),
				 jnum(cv, "ranks_per_node"));
			s[ns].name = names[ns];
			s[ns].x = xs[ns];
			s[ns].y = ys[ns];
			s[ns].n = n;
			s[ns].color = ns;
			s[ns].dashed = 0;
			s[ns].markers = 1;
			ns++;
		}
		if (!ns)
			continue;
		if (nvl > 0) {
			refs[nr].label = "NVLink per GPU (datasheet)";
			refs[nr].y = nvl;
			refs[nr].color = 3;
			nr++;
		}
		if (nic > 0) {
			refs[nr].label = "NICs per GPU (line rate)";
			refs[nr].y = nic;
			refs[nr].color = 8;
			nr++;
		}
		snprintf(title, sizeof(title), "%s bus bandwidth", ops[o]);
		sbuf_adds(sb, "<div>");
		svg_line_chart(sb, &(struct svg_line_chart){
			.title = title, .xlabel = "message size (bytes, log)",
			.ylabel = "bus bandwidth (GB/s, log)", .yunit = "GB/s", .logx = 1, .logy = 1,
			.xbytes = 1, .series = s, .nseries = ns, .refs = refs, .nrefs = nr });
		sbuf_adds(sb, "</div>");
	}
	sbuf_adds(sb, "</div>");
}

/* Host<->device bandwidths as bars against the host link's line rate. */
static void offload_chart(struct sbuf *sb, const cJSON *prof)
{
	static const char *const segs[] = { "GB/s" };
	static const int colors[] = { 4 };
	const cJSON *e;
	char *labels[32];
	double v[32];
	int n = 0, i;
	double line;

	cJSON_ArrayForEach(e, jget(prof, "offload")) {
		struct sbuf lb = SBUF_INIT;
		const cJSON *nl = jget(e, "numa_local");
		if (n == 32)
			break;
		sbuf_adds(&lb, jstr(e, "direction") ? jstr(e, "direction") : "?");
		sbuf_addc(&lb, ' ');
		sbuf_adds(&lb, jstr(e, "memory") ? jstr(e, "memory") : "");
		if (nl && cJSON_IsFalse(nl))
			sbuf_adds(&lb, ", remote NUMA");
		if (jtrue(e, "under_load"))
			sbuf_adds(&lb, ", under load");
		labels[n] = sbuf_detach(&lb, NULL);
		v[n] = jnum(e, "gbps");
		if (!isfinite(v[n]))
			v[n] = 0;
		n++;
	}
	line = jnum(prof, "node.pcie_gbps");
	sbuf_adds(sb, "<h3>Host&#8596;device copies</h3>");
	bars(sb, "single", &(struct svg_stacked){
		.title = "Host\xe2\x86\x94" "device copy bandwidth", .unit = "GB/s",
		.bars = (const char *const *)labels, .segments = segs, .colors = colors,
		.values = v, .nbar = n, .nseg = 1, .limit = line > 0 ? line : 0,
		.limit_label = "host link line rate" });
	for (i = 0; i < n; i++)
		free(labels[i]);
}

static void cluster(struct sbuf *sb, const cJSON *prof)
{
	const cJSON *e;
	const char *gsrc = jstr(prof, "gpu.source"), *nsrc = jstr(prof, "node.source");

	section(sb, "cluster", "Cluster", NULL);
	sbuf_adds(sb, "<p><b>");
	esc(sb, jstr(prof, "name"));
	sbuf_adds(sb, "</b>: ");
	esc(sb, jstr(prof, "description"));
	sbuf_adds(sb, "</p><div class=\"grid2\"><div><h3>GPU</h3><table><tbody><tr><th>name</th><td>");
	esc(sb, jstr(prof, "gpu.name"));
	sbuf_adds(sb, "</td><td>");
	provenance(sb, prof, gsrc);
	sbuf_adds(sb, "</td></tr>");
	fact_row(sb, "memory (GiB)", jnum(prof, "gpu.memory_bytes") / GIB, "%.1f", prof, gsrc);
	fact_row(sb, "SMs", jnum(prof, "gpu.sm_count"), "%.0f", prof, gsrc);
	fact_row(sb, "compute capability", jnum(prof, "gpu.compute_capability"), "%.1f", prof, gsrc);
	fact_row(sb, "BF16 dense peak (TFLOP/s)", jnum(prof, "gpu.peak_tflops.bf16"), "%.1f", prof, gsrc);
	fact_row(sb, "FP8 dense peak (TFLOP/s)", jnum(prof, "gpu.peak_tflops.fp8"), "%.1f", prof, gsrc);
	fact_row(sb, "HBM, datasheet (GB/s)", jnum(prof, "gpu.hbm_gbps"), "%.0f", prof, gsrc);
	fact_row(sb, "HBM, achieved (GB/s)", jnum(prof, "memory_bandwidth.gbps"), "%.0f", prof,
		 jstr(prof, "memory_bandwidth.source"));
	sbuf_adds(sb, "</tbody></table></div><div><h3>Node and network</h3><table><tbody>");
	fact_row(sb, "GPUs per node", jnum(prof, "node.gpus_per_node"), "%.0f", prof, nsrc);
	fact_row(sb, "NVLink domain (GPUs)", jnum(prof, "node.nvlink_domain"), "%.0f", prof, nsrc);
	fact_row(sb, "NVLink per GPU and direction (GB/s)", jnum(prof, "node.nvlink_gbps"), "%.0f", prof, nsrc);
	fact_row(sb, "NICs per node", jnum(prof, "node.nics_per_node"), "%.0f", prof, nsrc);
	fact_row(sb, "NIC per direction (GB/s)", jnum(prof, "node.nic_gbps"), "%.1f", prof, nsrc);
	fact_row(sb, "host link per direction (GB/s)", jnum(prof, "node.pcie_gbps"), "%.0f", prof, nsrc);
	fact_row(sb, "NUMA nodes", jnum(prof, "node.numa_nodes"), "%.0f", prof, nsrc);
	if (jstr(prof, "software.nccl")) {
		sbuf_adds(sb, "<tr><th>NCCL</th><td class=\"n\">");
		esc(sb, jstr(prof, "software.nccl"));
		sbuf_adds(sb, "</td><td></td></tr>");
	}
	sbuf_adds(sb, "</tbody></table></div></div>");

	if (cJSON_GetArraySize(jget(prof, "gemm"))) {
		sbuf_adds(sb, "<h3>GEMM</h3><div class=\"single\">");
		gemm_chart(sb, prof);
		sbuf_adds(sb, "</div>");
	}
	if (cJSON_GetArraySize(jget(prof, "collectives"))) {
		sbuf_adds(sb, "<h3>Collectives</h3><p class=\"lead\">nccl-tests bus bandwidth per "
			      "curve: <i>nvlink</i> curves stay inside one NVLink domain, "
			      "<i>network</i> curves cross domains. Hover a point for its value.</p>");
		collective_charts(sb, prof);
	}
	if (cJSON_GetArraySize(jget(prof, "attention"))) {
		sbuf_adds(sb, "<h3>Attention</h3><table><thead><tr><th>kernel</th><th>dtype</th>"
			      "<th class=\"n\">head dim</th><th class=\"n\">sequence</th><th>causal</th>"
			      "<th class=\"n\">forward TFLOP/s</th><th class=\"n\">backward TFLOP/s</th>"
			      "<th>source</th></tr></thead><tbody>");
		cJSON_ArrayForEach(e, jget(prof, "attention")) {
			sbuf_adds(sb, "<tr>");
			td_str(sb, jstr(e, "impl") ? jstr(e, "impl") : "flash");
			td_str(sb, jstr(e, "dtype"));
			td_num(sb, jnum(e, "head_dim"), "%.0f");
			td_num(sb, jnum(e, "seq"), "%.0f");
			td_str(sb, jtrue(e, "causal") ? "yes" : "no");
			td_num(sb, jnum(e, "fwd_tflops"), "%.1f");
			td_num(sb, jnum(e, "bwd_tflops"), "%.1f");
			sbuf_adds(sb, "<td>");
			provenance(sb, prof, jstr(e, "source"));
			sbuf_adds(sb, "</td></tr>");
		}
		sbuf_adds(sb, "</tbody></table>");
	}
	if (cJSON_GetArraySize(jget(prof, "offload"))) {
		offload_chart(sb, prof);
		sbuf_adds(sb, "<table><thead><tr><th>direction</th>"
			      "<th>memory</th><th>NUMA-local</th><th>under load</th>"
			      "<th class=\"n\">GB/s</th><th>source</th></tr></thead><tbody>");
		cJSON_ArrayForEach(e, jget(prof, "offload")) {
			const cJSON *nl = jget(e, "numa_local");
			sbuf_adds(sb, "<tr>");
			td_str(sb, jstr(e, "direction"));
			td_str(sb, jstr(e, "memory"));
			td_str(sb, nl && cJSON_IsFalse(nl) ? "no" : "yes");
			td_str(sb, jtrue(e, "under_load") ? "yes" : "no");
			td_num(sb, jnum(e, "gbps"), "%.1f");
			sbuf_adds(sb, "<td>");
			provenance(sb, prof, jstr(e, "source"));
			sbuf_adds(sb, "</td></tr>");
		}
		sbuf_adds(sb, "</tbody></table>");
	}
	sbuf_adds(sb, "<h3>Outliers</h3>");
	if (!cJSON_GetArraySize(jget(prof, "outliers"))) {
		sbuf_adds(sb, "<p class=\"none\">none reported by the profile</p>");
	} else {
		sbuf_adds(sb, "<ul>");
		cJSON_ArrayForEach(e, jget(prof, "outliers")) {
			sbuf_adds(sb, "<li>");
			esc(sb, cJSON_IsString(e) ? e->valuestring : jstr(e, "what"));
			sbuf_adds(sb, "</li>");
		}
		sbuf_adds(sb, "</ul>");
	}
	sbuf_adds(sb, "<details><summary>sources</summary><table><thead><tr><th>id</th><th>kind</th>"
		      "<th>citation</th></tr></thead><tbody>");
	cJSON_ArrayForEach(e, jget(prof, "sources")) {
		sbuf_adds(sb, "<tr>");
		td_str(sb, jstr(e, "id"));
		td_str(sb, jstr(e, "kind"));
		td_str(sb, jstr(e, "citation"));
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></details></section>");
}

/* ---------------------------------------------------------------- candidates */

static void candidates(struct sbuf *sb, const cJSON *adv)
{
	const cJSON *c, *p;
	int i = 0;

	section(sb, "candidates", "Candidates",
		"Every configuration that fits, fastest first (click a column to sort).");
	sbuf_adds(sb, "<div class=\"scroll\"><table class=\"sortable cands\"><thead><tr>"
		      "<th class=\"n\">#</th><th class=\"n\">TP</th><th class=\"n\">PP</th>"
		      "<th class=\"n\">VPP</th><th class=\"n\">CP</th><th>CP<br>comm</th>"
		      "<th class=\"n\">EP</th><th class=\"n\">ETP</th><th class=\"n\">DP</th>"
		      "<th class=\"n\">MBS</th><th class=\"n\">micro-<br>batches</th><th>recompute</th>"
		      "<th>dist.<br>opt.</th><th class=\"n\">memory<br>(GiB)</th><th class=\"n\">step<br>(s)</th>"
		      "<th class=\"n\">tokens/s<br>per GPU</th><th class=\"n\">TFLOP/s<br>per GPU</th>"
		      "<th class=\"n\">MFU</th></tr></thead><tbody>");
	cJSON_ArrayForEach(c, jget(adv, "candidates")) {
		const cJSON *cf = jget(c, "config");
		sbuf_addf(sb, "<tr%s>", i++ ? "" : " class=\"best\"");
		td_num(sb, jnum(c, "rank"), "%.0f");
		td_num(sb, jnum(cf, "tp"), "%.0f");
		td_num(sb, jnum(cf, "pp"), "%.0f");
		td_num(sb, jnum(cf, "vpp"), "%.0f");
		td_num(sb, jnum(cf, "cp"), "%.0f");
		td_str(sb, jnum(cf, "cp") > 1 ? jstr(cf, "cp_comm_type") : "-");
		td_num(sb, jnum(cf, "ep"), "%.0f");
		td_num(sb, jnum(cf, "etp"), "%.0f");
		td_num(sb, jnum(cf, "dp"), "%.0f");
		td_num(sb, jnum(cf, "mbs"), "%.0f");
		td_num(sb, jnum(cf, "num_microbatches"), "%.0f");
		td_str(sb, jstr(cf, "recompute"));
		td_str(sb, jtrue(cf, "distributed_optimizer") ? "on" : "off");
		td_num(sb, jnum(c, "memory.total_bytes") / GIB, "%.1f");
		td_num(sb, jnum(c, "time.step_s"), "%.3f");
		td_num(sb, jnum(c, "throughput.tokens_per_s_per_gpu"), "%.0f");
		td_num(sb, jnum(c, "throughput.model_tflops_per_gpu"), "%.1f");
		td_num(sb, 100 * jnum(c, "throughput.mfu"), "%.1f%%");
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></div>");
	sbuf_addf(sb, "<p>The search evaluated %.0f candidates in %.3f s; %.0f fit.</p>",
		  jnum(adv, "search.evaluated"), jnum(adv, "search.seconds"),
		  isfinite(jnum(adv, "search.feasible")) ? jnum(adv, "search.feasible")
							 : jnum(adv, "search.timed"));
	sbuf_adds(sb, "<h3>Pruned</h3><table class=\"sortable\"><thead><tr><th>reason or rule</th>"
		      "<th class=\"n\">candidates</th></tr></thead><tbody>");
	cJSON_ArrayForEach(p, jget(adv, "pruned")) {
		if (!cJSON_IsNumber(p) || p->valuedouble <= 0)
			continue;
		sbuf_adds(sb, "<tr>");
		td_str(sb, p->string);
		td_num(sb, p->valuedouble, "%.0f");
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></section>");
}

/* ---------------------------------------------------------------- memory and time */

static void memory(struct sbuf *sb, const cJSON *adv)
{
	static const char *const segs[] = { "weights", "gradients", "optimizer states",
					    "activations and logits", "buffers (MoE dispatch, transient)",
					    "NCCL, CUDA context, workspaces, graphs, fragmentation" };
	static const int colors[] = { 0, 1, 2, 4, 5, 9 };
	const cJSON *c;
	int nbar = 0, i, nc = cJSON_GetArraySize(jget(adv, "candidates"));
	double *v;
	char **labels, lim[96];

	section(sb, "memory", "Memory", "Per GPU, on the most loaded pipeline stage, against the "
		"usable memory (GiB).");
	if (!nc) {
		sbuf_adds(sb, "<p class=\"none\">no candidate fits</p></section>");
		return;
	}
	v = calloc((size_t)nc * 6, sizeof(double));
	labels = calloc((size_t)nc, sizeof(char *));
	if (!v || !labels) {
		free(v);
		free(labels);
		sbuf_adds(sb, "</section>");
		return;
	}
	cJSON_ArrayForEach(c, jget(adv, "candidates")) {
		const cJSON *m = jget(c, "memory");
		double *r = v + nbar * 6;

		labels[nbar] = bar_label(c);
		r[0] = jnum(m, "weights_bytes") / GIB;
		r[1] = jnum(m, "grads_bytes") / GIB;
		r[2] = jnum(m, "optimizer_bytes") / GIB;
		r[3] = (jnum(m, "activations_bytes") + jnum(m, "logits_bytes")) / GIB;
		r[4] = (jnum(m, "moe_dispatch_bytes") + jnum(m, "transient_bytes")) / GIB;
		r[5] = (jnum(m, "nccl_bytes") + jnum(m, "cuda_context_bytes") + jnum(m, "workspace_bytes") +
			jnum(m, "cuda_graphs_bytes") + jnum(m, "fragmentation_bytes")) / GIB;
		for (i = 0; i < 6; i++)
			if (!isfinite(r[i]))
				r[i] = 0;
		nbar++;
	}
	snprintf(lim, sizeof(lim), "usable: %.1f GiB less %.0f%% headroom",
		 jnum(adv, "cluster.memory_bytes") / GIB, 100 * jnum(adv, "job.mem_headroom"));
	bars(sb, "wide", &(struct svg_stacked){
		.unit = "GiB", .bars = (const char *const *)labels, .segments = segs,
		.colors = colors, .values = v, .nbar = nbar, .nseg = 6,
		.limit = jnum(adv, "search.capacity_bytes") / GIB, .limit_label = lim,
		.width = 900 });
	for (i = 0; i < nbar; i++)
		free(labels[i]);
	free(labels);
	free(v);
	sbuf_adds(sb, "</section>");
}

static void timebars(struct sbuf *sb, const cJSON *adv)
{
	static const char *const segs[] = { "compute", "recompute", "exposed TP", "exposed CP",
					    "exposed EP", "exposed PP", "exposed DP", "exposed offload",
					    "host", "bubble", "optimizer" };
	static const char *const keys[] = { NULL, "recompute_s", "tp_exposed_s", "cp_exposed_s",
					    "ep_exposed_s", "pp_exposed_s", "dp_exposed_s",
					    "offload_exposed_s", "host_exposed_s", "bubble_s",
					    "optimizer_s" };
	static const int colors[] = { 0, 10, 1, 6, 3, 7, 2, 8, 9, 5, 11 };
	enum { NS = 11, TOP = 10 };
	const cJSON *c;
	double v[TOP * NS];
	char *labels[TOP];
	int nbar = 0, i, k;
	struct svg_stacked s;

	section(sb, "time", "Time", "Step time of the top candidates: compute, then what is not "
		"hidden behind it (seconds).");
	cJSON_ArrayForEach(c, jget(adv, "candidates")) {
		const cJSON *t = jget(c, "time");

		if (nbar == TOP)
			break;
		labels[nbar] = bar_label(c);
		v[nbar * NS] = jnum(t, "compute_s") - jnum(t, "recompute_s");
		for (k = 1; k < NS; k++)
			v[nbar * NS + k] = jnum(t, keys[k]);
		for (k = 0; k < NS; k++)
			if (!isfinite(v[nbar * NS + k]))
				v[nbar * NS + k] = 0;
		nbar++;
	}
	if (!nbar) {
		sbuf_adds(sb, "<p class=\"none\">no candidate fits</p></section>");
		return;
	}
	s = (struct svg_stacked){ .unit = "s", .bars = (const char *const *)labels,
				  .segments = segs, .colors = colors, .values = v, .nbar = nbar,
				  .nseg = NS, .width = 900 };
	bars(sb, "wide", &s);
	/* the part that is not compute, on its own scale */
	{
		double rest[TOP * (NS - 1)];
		for (i = 0; i < nbar; i++)
			for (k = 1; k < NS; k++)
				rest[i * (NS - 1) + k - 1] = v[i * NS + k];
		s.title = "What is not compute";
		s.segments = segs + 1;
		s.colors = colors + 1;
		s.values = rest;
		s.nseg = NS - 1;
		bars(sb, "wide", &s);
	}
	for (i = 0; i < nbar; i++)
		free(labels[i]);
	/* the best candidate's breakdown, as numbers */
	c = cJSON_GetArrayItem(jget(adv, "candidates"), 0);
	sbuf_adds(sb, "<details><summary>the best candidate's step, part by part</summary><table>"
		      "<thead><tr><th>part</th><th class=\"n\">exposed (s)</th>"
		      "<th class=\"n\">hidden (s)</th><th class=\"n\">share</th></tr></thead><tbody>");
	{
		static const struct { const char *name, *exp, *hid; } rows[] = {
			{ "GEMM", "gemm_s", NULL }, { "attention", "attention_s", NULL },
			{ "element-wise", "elementwise_s", NULL }, { "recompute", "recompute_s", NULL },
			{ "kernel gaps, SM sharing", "gpu_overhead_s", NULL },
			{ "TP communication", "tp_exposed_s", "tp_hidden_s" },
			{ "CP communication", "cp_exposed_s", "cp_hidden_s" },
			{ "EP communication", "ep_exposed_s", "ep_hidden_s" },
			{ "PP send/recv", "pp_exposed_s", "pp_hidden_s" },
			{ "DP communication", "dp_exposed_s", "dp_hidden_s" },
			{ "activation offload", "offload_exposed_s", "offload_hidden_s" },
			{ "host overhead", "host_exposed_s", NULL },
			{ "pipeline bubble", "bubble_s", NULL }, { "optimizer step", "optimizer_s", NULL },
			{ "step", "step_s", NULL },
		};
		const cJSON *t = jget(c, "time");
		double step = jnum(t, "step_s");
		unsigned r;
		for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
			double e = jnum(t, rows[r].exp);
			sbuf_adds(sb, "<tr>");
			td_str(sb, rows[r].name);
			td_num(sb, e, "%.4f");
			if (rows[r].hid)
				td_num(sb, jnum(t, rows[r].hid), "%.4f");
			else
				sbuf_adds(sb, "<td class=\"n\">-</td>");
			td_num(sb, 100 * e / step, "%.1f%%");
			sbuf_adds(sb, "</tr>");
		}
	}
	sbuf_adds(sb, "</tbody></table></details></section>");
}

/* ---------------------------------------------------------------- why */

static void evidence(struct sbuf *sb, const cJSON *ev)
{
	const cJSON *e;

	if (!cJSON_GetArraySize(ev))
		return;
	sbuf_adds(sb, "<details><summary>evidence: the facts it read</summary><table><tbody>");
	cJSON_ArrayForEach(e, ev) {
		sbuf_adds(sb, "<tr><td><code>");
		esc(sb, e->string);
		sbuf_adds(sb, "</code></td>");
		if (cJSON_IsNumber(e)) {
			td_num(sb, e->valuedouble, "%.6g");
		} else if (cJSON_IsBool(e)) {
			td_str(sb, cJSON_IsTrue(e) ? "on" : "off");
		} else if (cJSON_IsString(e)) {
			td_str(sb, e->valuestring);
		} else {
			td_str(sb, "n/a");
		}
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></details>");
}

/* The group of a fired rule as the terminal shows it (reports/advice.h): a
 * set rule chose a knob when its effect names the configuration. */
/* A fired rule (advice) or a finding (analysis) as a card: title and id,
 * status when it is not plain, effect, message, evidence, sources. */
static void rule_card(struct sbuf *sb, const cJSON *r)
{
	const char *st = jstr(r, "status"), *src = jstr(r, "source");
	const cJSON *ci;

	sbuf_addf(sb, "<div class=\"rule %s\"><h4>",
		  !st ? "" : !strcmp(st, "violated") ? "violated"
		  : !strcmp(st, "overridden") ? "overridden" : "");
	esc(sb, jstr(r, "title") ? jstr(r, "title") : jstr(r, "id"));
	sbuf_adds(sb, " <span class=\"tag\">");
	esc(sb, jstr(r, "id"));
	sbuf_adds(sb, "</span>");
	if (st && strcmp(st, "note") && strcmp(st, "applied")) {
		sbuf_addf(sb, "<span class=\"tag %s\">", !strcmp(st, "violated") ? "bad" : "warn");
		esc(sb, st);
		sbuf_adds(sb, "</span>");
	}
	sbuf_adds(sb, "</h4>");
	if (jstr(r, "effect")) {
		sbuf_adds(sb, "<div class=\"eff\">");
		esc(sb, jstr(r, "effect"));
		sbuf_adds(sb, "</div>");
	}
	sbuf_adds(sb, "<div>");
	esc(sb, jstr(r, "message"));
	sbuf_adds(sb, "</div>");
	evidence(sb, jget(r, "evidence"));
	if (cJSON_GetArraySize(jget(r, "cite")) || src) {
		sbuf_adds(sb, "<div class=\"cite\">");
		cJSON_ArrayForEach(ci, jget(r, "cite")) {
			sbuf_adds(sb, "source: ");
			esc(sb, cJSON_IsString(ci) ? ci->valuestring : NULL);
			sbuf_adds(sb, "<br>");
		}
		if (src) {
			sbuf_adds(sb, "rule: ");
			esc(sb, src);
		}
		sbuf_adds(sb, "</div>");
	}
	sbuf_adds(sb, "</div>");
}

static int rule_group(const cJSON *r)
{
	const char *st = jstr(r, "status"), *kind = jstr(r, "kind"), *eff = jstr(r, "effect");

	return mt_rule_group(jstr(r, "id"), st && !strcmp(st, "violated"),
			     kind && !strcmp(kind, "set"), eff && !strncmp(eff, "config.", 7));
}

static void why(struct sbuf *sb, const cJSON *adv)
{
	static const char *const heads[MT_RG_N] = {
		"Constraints the recommendation breaks", "Why this configuration", "Chosen by rules",
		"Advice", "Flags and variables from rules"
	};
	const cJSON *best = cJSON_GetArrayItem(jget(adv, "candidates"), 0), *r;
	int g, any;

	section(sb, "why", "Why",
		"The rules that fired for the recommended configuration, with the numbers they used "
		"and their sources (docs/RULES.md).");
	if (!jtrue(adv, "rules.enabled")) {
		sbuf_adds(sb, "<p class=\"none\">rules were off (--no-rules)</p></section>");
		return;
	}
	if (!best) {
		sbuf_adds(sb, "<p class=\"none\">no candidate fits</p></section>");
		return;
	}
	for (g = 0; g < MT_RG_N; g++) {
		int pass, passes = g == MT_RG_WHY ? MT_WHY_RANKS : 1;
		any = 0;
		for (pass = 0; pass < passes; pass++)
		cJSON_ArrayForEach(r, jget(best, "rules")) {
			if (rule_group(r) != g || (g == MT_RG_WHY && mt_why_rank(jstr(r, "id")) != pass))
				continue;
			if (!any)
				sbuf_addf(sb, "<h3>%s</h3>", heads[g]);
			any = 1;
			rule_card(sb, r);
		}
	}
	sbuf_adds(sb, "</section>");
}

/* ---------------------------------------------------------------- configuration */

static void copy_block(struct sbuf *sb, const char *id, const char *title)
{
	sbuf_addf(sb, "<h3>%s <button class=\"copy\" data-for=\"%s\">copy</button></h3>"
		      "<pre id=\"%s\">", title, id, id);
}

static void configuration(struct sbuf *sb, const cJSON *adv)
{
	const cJSON *best = cJSON_GetArrayItem(jget(adv, "candidates"), 0), *a;
	int first = 1;

	section(sb, "configuration", "Configuration",
		"The recommended configuration, ready to paste.");
	if (!best) {
		sbuf_adds(sb, "<p class=\"none\">no candidate fits</p></section>");
		return;
	}
	copy_block(sb, "cfg-megatron", "Megatron-LM arguments");
	cJSON_ArrayForEach(a, jget(best, "megatron_args")) {
		const char *t = cJSON_IsString(a) ? a->valuestring : "";
		/* one flag per line: a token starting with -- opens a line */
		if (!strncmp(t, "--", 2)) {
			if (!first)
				sbuf_adds(sb, " \\\n");
			first = 0;
		} else {
			sbuf_addc(sb, ' ');
		}
		esc(sb, t);
	}
	sbuf_adds(sb, "</pre>");
	copy_block(sb, "cfg-bridge", "Megatron-Bridge overrides");
	first = 1;
	cJSON_ArrayForEach(a, jget(best, "bridge_overrides")) {
		if (!first)
			sbuf_adds(sb, " \\\n");
		first = 0;
		esc(sb, cJSON_IsString(a) ? a->valuestring : "");
	}
	sbuf_adds(sb, "</pre>");
	copy_block(sb, "cfg-env", "Environment");
	first = 1;
	cJSON_ArrayForEach(a, jget(best, "env")) {
		if (!first)
			sbuf_addc(sb, '\n');
		first = 0;
		sbuf_adds(sb, "export ");
		esc(sb, a->string);
		sbuf_addc(sb, '=');
		esc(sb, cJSON_IsString(a) ? a->valuestring : "");
	}
	if (first)
		sbuf_adds(sb, "# none");
	sbuf_adds(sb, "</pre></section>");
}

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
		rule_card(sb, f);
	sbuf_adds(sb, "</section>");
}

static void regressions(struct sbuf *sb, const cJSON *cmp)
{
	const cJSON *m;
	const char *verdict = jstr(cmp, "verdict");

	section(sb, "regressions", "Regression verdicts",
		"The current results against the baseline, with the noise band of each metric.");
	if (verdict) {
		int bad = !strcmp(verdict, "regressed") || !strcmp(verdict, "fail");
		sbuf_addf(sb, "<p>Overall: <span class=\"tag %s\">", bad ? "bad" : "good");
		esc(sb, verdict);
		sbuf_adds(sb, "</span></p>");
	}
	sbuf_adds(sb, "<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>metric</th>"
		      "<th>unit</th><th class=\"n\">baseline</th><th class=\"n\">current</th>"
		      "<th class=\"n\">change</th><th class=\"n\">noise band</th><th>verdict</th>"
		      "</tr></thead><tbody>");
	cJSON_ArrayForEach(m, jget(cmp, "metrics")) {
		const char *v = jstr(m, "verdict");
		sbuf_adds(sb, "<tr");
		if (v && (!strcmp(v, "regressed") || !strcmp(v, "improved")))
			sbuf_addf(sb, " class=\"verdict-%s\"", v);
		sbuf_adds(sb, ">");
		td_str(sb, jstr(m, "name"));
		td_str(sb, jstr(m, "unit"));
		td_num(sb, jnum(m, "baseline"), "%.6g");
		td_num(sb, jnum(m, "current"), "%.6g");
		td_num(sb, jnum(m, "change_pct"), "%+.2f%%");
		td_num(sb, jnum(m, "noise_pct"), "&#177;%.2f%%");
		td_str(sb, v);
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></div></section>");
}

/* ---------------------------------------------------------------- the page */

static int schema_is(const cJSON *doc, const char *want, const char *file, const char *opt,
		     struct mt_error *err)
{
	const char *s = jstr(doc, "schema");

	if (!cJSON_IsObject(doc))
		return mt_error_set(err, MT_EINVAL, "%s: expected a JSON object (%s)", file, opt);
	if (!s)
		return mt_error_set(err, MT_EINVAL, "%s: field 'schema': missing; %s expects \"%s\"",
				    file, opt, want);
	if (strcmp(s, want))
		return mt_error_set(err, MT_EINVAL, "%s: field 'schema': %s expects \"%s\", got \"%s\"",
				    file, opt, want, s);
	return MT_OK;
}

int mt_report_check(const struct mt_report_in *in, struct mt_error *err)
{
	int rc;

	if (!in->advice && !in->profile && !in->analysis && !in->compare)
		return mt_error_set(err, MT_EUSAGE, "nothing to report: give --advice, --profile, "
				    "--analysis or --compare");
	if (in->advice && (rc = schema_is(in->advice, "megatune.advice/1", in->advice_file,
					  "--advice", err)))
		return rc;
	if (in->profile && (rc = schema_is(in->profile, "megatune.profile/1", in->profile_file,
					   "--profile", err)))
		return rc;
	if (in->analysis && (rc = schema_is(in->analysis, "megatune.analysis/1", in->analysis_file,
					    "--analysis", err)))
		return rc;
	if (in->compare && (rc = schema_is(in->compare, "megatune.comparison/1", in->compare_file,
					   "--compare", err)))
		return rc;
	if (in->advice && !cJSON_IsArray(jget(in->advice, "candidates")))
		return mt_error_set(err, MT_EINVAL, "%s: field 'candidates': expected an array",
				    in->advice_file);
	return MT_OK;
}

void mt_report_html(struct sbuf *sb, const struct mt_report_in *in)
{
	const cJSON *adv = in->advice;

	sbuf_adds(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
		      "<title>megatune report");
	if (adv) {
		sbuf_adds(sb, ": ");
		esc(sb, jstr(adv, "job.model"));
		sbuf_adds(sb, " on ");
		esc(sb, jstr(adv, "job.cluster"));
	} else if (in->profile) {
		sbuf_adds(sb, ": ");
		esc(sb, jstr(in->profile, "name"));
	}
	sbuf_adds(sb, "</title><style>");
	sbuf_adds(sb, css);
	sbuf_adds(sb, "</style></head><body><header><h1>megatune report</h1><p>");
	if (adv) {
		esc(sb, jstr(adv, "job.model"));
		sbuf_adds(sb, " on ");
		num(sb, jnum(adv, "job.gpus"), "%.0f");
		sbuf_adds(sb, " GPUs of ");
		esc(sb, jstr(adv, "job.cluster"));
		sbuf_adds(sb, " &#183; ");
	}
	sbuf_adds(sb, "megatune " MEGATUNE_VERSION "</p><nav>");
	if (adv)
		sbuf_adds(sb, "<a href=\"#summary\">Summary</a>");
	if (in->profile)
		sbuf_adds(sb, "<a href=\"#cluster\">Cluster</a>");
	if (adv)
		sbuf_adds(sb, "<a href=\"#candidates\">Candidates</a><a href=\"#memory\">Memory</a>"
			      "<a href=\"#time\">Time</a><a href=\"#why\">Why</a>"
			      "<a href=\"#configuration\">Configuration</a>");
	if (in->analysis)
		sbuf_adds(sb, "<a href=\"#findings\">Findings</a>");
	if (in->compare)
		sbuf_adds(sb, "<a href=\"#regressions\">Regressions</a>");
	sbuf_adds(sb, "</nav></header><main>");
	if (adv)
		summary(sb, adv);
	if (in->profile)
		cluster(sb, in->profile);
	if (adv) {
		candidates(sb, adv);
		memory(sb, adv);
		timebars(sb, adv);
		why(sb, adv);
		configuration(sb, adv);
	}
	if (in->analysis)
		findings(sb, in->analysis);
	if (in->compare)
		regressions(sb, in->compare);
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
	sbuf_adds(sb, ". Predictions come from megatune's model (docs/MODEL.md); measured values from "
		      "the profile, each with its source.</footer><script>");
	sbuf_adds(sb, script);
	sbuf_adds(sb, "</script></body></html>\n");
}
