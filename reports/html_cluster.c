/* SPDX-License-Identifier: MIT */
/* html_cluster: the report's cluster section, from a parsed profile (struct
 * mt_cluster): the GPU and node facts with their provenance, the measured
 * GEMM, collective and host<->device curves, attention, outliers, sources. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../perfmodel/cluster.h"
#include "html_parts.h"

/* a value the profile may leave out (validated positive when given) */
static double given(double v)
{
	return v > 0 ? v : NAN;
}

static void html_cluster_provenance(struct sbuf *sb, const struct mt_cluster *c, int src)
{
	const struct mt_source *s = mt_cluster_source(c, src);

	sbuf_adds(sb, "<span class=\"tag\" title=\"");
	esc(sb, s ? s->citation : "no source");
	sbuf_adds(sb, "\">");
	esc(sb, s ? s->kind : "unsourced");
	sbuf_adds(sb, ": ");
	esc(sb, s ? s->id : NULL);
	sbuf_adds(sb, "</span>");
}

static void fact_row(struct sbuf *sb, const char *what, double v, const char *fmt,
		     const struct mt_cluster *c, int src)
{
	if (!isfinite(v))
		return;
	sbuf_adds(sb, "<tr><th>");
	sbuf_adds(sb, what);
	sbuf_adds(sb, "</th><td class=\"n\">");
	num(sb, v, fmt);
	sbuf_adds(sb, "</td><td>");
	html_cluster_provenance(sb, c, src);
	sbuf_adds(sb, "</td></tr>");
}

static int cmp_xy(const void *a, const void *b)
{
	const double *p = a, *q = b;

	return (p[0] > q[0]) - (p[0] < q[0]);
}

/* The points of one GEMM dtype as (size, TFLOP/s) pairs sorted by size. */
static int gemm_points(const struct mt_cluster *c, int dt, double *xy, int max)
{
	int n = 0, i;

	for (i = 0; i < c->ngemm && n < max; i++) {
		const struct mt_gemm_pt *g = &c->gemm[i];

		if (g->dtype != dt)
			continue;
		xy[2 * n] = cbrt(g->m * g->n * g->k);
		xy[2 * n + 1] = g->tflops;
		n++;
	}
	qsort(xy, (size_t)n, 2 * sizeof(double), cmp_xy);
	return n;
}

static void gemm_chart(struct sbuf *sb, const struct mt_cluster *c)
{
	static const int dts[] = { MT_DT_FP8, MT_DT_BF16, MT_DT_FP16, MT_DT_TF32, MT_DT_FP32 };
	struct svg_series s[5];
	struct svg_refline refs[5];
	char reflabels[5][48];
	double xy[2 * 256], xs[5][256], ys[5][256];
	int ns = 0, nr = 0, i, k;

	for (i = 0; i < 5; i++) {
		double pk;
		int n = gemm_points(c, dts[i], xy, 256);

		if (!n)
			continue;
		for (k = 0; k < n; k++) {
			xs[ns][k] = xy[2 * k];
			ys[ns][k] = xy[2 * k + 1];
		}
		s[ns] = (struct svg_series){ .name = mt_dtype_name(dts[i]), .x = xs[ns], .y = ys[ns],
					     .n = n, .color = i, .markers = 1 };
		ns++;
		pk = c->peak_tflops[dts[i]];
		if (pk > 0) {
			snprintf(reflabels[nr], sizeof(reflabels[nr]), "%s datasheet peak",
				 mt_dtype_name(dts[i]));
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
static void collective_charts(struct sbuf *sb, const struct mt_cluster *c)
{
	double nvl = c->nvlink_gbps;
	double nic = given(c->nic_gbps) * c->nics_per_node / c->gpus_per_node;
	int o;

	sbuf_adds(sb, "<div class=\"grid2\">");
	for (o = 0; o < MT_COLL_N; o++) {
		struct svg_series s[16];
		struct svg_refline refs[2];
		static double xs[16][256], ys[16][256];
		char names[16][80], title[64];
		int ns = 0, nr = 0, i;

		for (i = 0; i < c->ncoll; i++) {
			const struct mt_coll_curve *cv = &c->coll[i];
			int n;

			if (cv->op != o || ns >= 16)
				continue;
			for (n = 0; n < cv->npts && n < 256; n++) {
				xs[ns][n] = cv->pts[n].bytes;
				ys[ns][n] = cv->pts[n].busbw_gbps;
			}
			/* an NVLink curve's ranks share one domain, which may hold
			 * several nodes (an NVL72 rack's trays of 4) */
			if (cv->span == MT_SPAN_NVLINK)
				snprintf(names[ns], sizeof(names[ns]), "%s, %d ranks in one domain",
					 mt_span_name(cv->span), cv->ranks);
			else
				snprintf(names[ns], sizeof(names[ns]), "%s, %d ranks (%d per node)",
					 mt_span_name(cv->span), cv->ranks, cv->per_node);
			s[ns] = (struct svg_series){ .name = names[ns], .x = xs[ns], .y = ys[ns],
						     .n = n, .color = ns, .markers = 1 };
			ns++;
		}
		if (!ns)
			continue;
		if (nvl > 0)
			refs[nr++] = (struct svg_refline){ .label = "NVLink per GPU (datasheet)",
							   .y = nvl, .color = 3 };
		if (nic > 0)
			refs[nr++] = (struct svg_refline){ .label = "NICs per GPU (line rate)",
							   .y = nic, .color = 8 };
		snprintf(title, sizeof(title), "%s bus bandwidth", mt_coll_name(o));
		sbuf_adds(sb, "<div>");
		svg_line_chart(sb, &(struct svg_line_chart){
			.title = title, .xlabel = "message size (bytes, log)",
			.ylabel = "bus bandwidth (GB/s, log)", .yunit = "GB/s", .logx = 1, .logy = 1,
			.xbytes = 1, .series = s, .nseries = ns, .refs = refs, .nrefs = nr });
		sbuf_adds(sb, "</div>");
	}
	sbuf_adds(sb, "</div>");
}

static const char *memory_kind(const struct mt_offload_pt *e)
{
	return e->pinned ? "pinned" : "pageable";
}

/* Host<->device bandwidths as bars against the host link's line rate. */
static void offload_chart(struct sbuf *sb, const struct mt_cluster *c)
{
	static const char *const segs[] = { "GB/s" };
	static const int colors[] = { 4 };
	char *labels[32];
	double v[32];
	int n, i;

	for (n = 0; n < c->noffload && n < 32; n++) {
		const struct mt_offload_pt *e = &c->offload[n];
		struct sbuf lb = SBUF_INIT;

		sbuf_adds(&lb, mt_offload_dir_name(e->dir));
		sbuf_addc(&lb, ' ');
		sbuf_adds(&lb, memory_kind(e));
		if (!e->numa_local)
			sbuf_adds(&lb, ", remote NUMA");
		if (e->under_load)
			sbuf_adds(&lb, ", under load");
		labels[n] = sbuf_detach(&lb, NULL);
		v[n] = e->gbps;
	}
	sbuf_adds(sb, "<h3>Host&#8596;device copies</h3>");
	bars(sb, "single", &(struct svg_stacked){
		.title = "Host\xe2\x86\x94" "device copy bandwidth", .unit = "GB/s",
		.bars = (const char *const *)labels, .segments = segs, .colors = colors,
		.values = v, .nbar = n, .nseg = 1, .limit = c->pcie_gbps > 0 ? c->pcie_gbps : 0,
		.limit_label = "host link line rate" });
	for (i = 0; i < n; i++)
		free(labels[i]);
}

static void facts(struct sbuf *sb, const struct mt_cluster *c)
{
	int g = c->gpu_src, nd = c->node_src;

	sbuf_adds(sb, "<p><b>");
	esc(sb, c->name);
	sbuf_adds(sb, "</b>: ");
	esc(sb, c->description[0] ? c->description : NULL);
	sbuf_adds(sb, "</p><div class=\"grid2\"><div><h3>GPU</h3><table><tbody><tr><th>name</th><td>");
	esc(sb, c->gpu_name);
	sbuf_adds(sb, "</td><td>");
	html_cluster_provenance(sb, c, g);
	sbuf_adds(sb, "</td></tr>");
	fact_row(sb, "memory (GiB)", c->memory_bytes / GIB, "%.1f", c, g);
	fact_row(sb, "SMs", given(c->sm_count), "%.0f", c, g);
	fact_row(sb, "compute capability", given(c->compute_capability), "%.1f", c, g);
	/* a CPU profile's peak is a fraction of a TFLOP/s */
	fact_row(sb, "BF16 dense peak (TFLOP/s)", given(c->peak_tflops[MT_DT_BF16]),
		 c->peak_tflops[MT_DT_BF16] >= 10 ? "%.1f" : "%.3g", c, g);
	fact_row(sb, "FP8 dense peak (TFLOP/s)", given(c->peak_tflops[MT_DT_FP8]),
		 c->peak_tflops[MT_DT_FP8] >= 10 ? "%.1f" : "%.3g", c, g);
	fact_row(sb, "HBM, datasheet (GB/s)", c->hbm_spec_gbps, "%.0f", c, g);
	fact_row(sb, "HBM, achieved (GB/s)", c->hbm_measured ? c->hbm_gbps : NAN, "%.0f", c,
		 c->hbm_src);
	sbuf_adds(sb, "</tbody></table></div><div><h3>Node and network</h3><table><tbody>");
	fact_row(sb, "GPUs per node", c->gpus_per_node, "%.0f", c, nd);
	fact_row(sb, "NVLink domain (GPUs)", c->nvlink_domain, "%.0f", c, nd);
	fact_row(sb, "NVLink per GPU and direction (GB/s)", given(c->nvlink_gbps), "%.0f", c, nd);
	fact_row(sb, "NICs per node", c->nics_per_node, "%.0f", c, nd);
	fact_row(sb, "NIC per direction (GB/s)", given(c->nic_gbps), "%.1f", c, nd);
	fact_row(sb, "host link per direction (GB/s)", given(c->pcie_gbps), "%.0f", c, nd);
	fact_row(sb, "NUMA nodes", c->numa_given ? c->numa_nodes : NAN, "%.0f", c, nd);
	if (c->nccl_version[0]) {
		sbuf_adds(sb, "<tr><th>NCCL</th><td class=\"n\">");
		esc(sb, c->nccl_version);
		sbuf_adds(sb, "</td><td></td></tr>");
	}
	sbuf_adds(sb, "</tbody></table></div></div>");
}

static void attention(struct sbuf *sb, const struct mt_cluster *c)
{
	int i;

	sbuf_adds(sb, "<h3>Attention</h3><table><thead><tr><th>kernel</th><th>dtype</th>"
		      "<th class=\"n\">head dim</th><th class=\"n\">sequence</th><th>causal</th>"
		      "<th class=\"n\">forward TFLOP/s</th><th class=\"n\">backward TFLOP/s</th>"
		      "<th>source</th></tr></thead><tbody>");
	for (i = 0; i < c->nattn; i++) {
		const struct mt_attn_pt *e = &c->attn[i];

		sbuf_adds(sb, "<tr>");
		td_str(sb, mt_attn_impl_name(e->impl));
		td_str(sb, mt_dtype_name(e->dtype));
		td_num(sb, e->head_dim, "%.0f");
		td_num(sb, e->seq, "%.0f");
		td_str(sb, e->causal ? "yes" : "no");
		td_num(sb, e->fwd_tflops, "%.1f");
		td_num(sb, e->bwd_tflops, "%.1f");
		sbuf_adds(sb, "<td>");
		html_cluster_provenance(sb, c, e->src);
		sbuf_adds(sb, "</td></tr>");
	}
	sbuf_adds(sb, "</tbody></table>");
}

static void offload(struct sbuf *sb, const struct mt_cluster *c)
{
	int i;

	offload_chart(sb, c);
	sbuf_adds(sb, "<table><thead><tr><th>direction</th>"
		      "<th>memory</th><th>NUMA-local</th><th>under load</th>"
		      "<th class=\"n\">GB/s</th><th>source</th></tr></thead><tbody>");
	for (i = 0; i < c->noffload; i++) {
		const struct mt_offload_pt *e = &c->offload[i];

		sbuf_adds(sb, "<tr>");
		td_str(sb, mt_offload_dir_name(e->dir));
		td_str(sb, memory_kind(e));
		td_str(sb, e->numa_local ? "yes" : "no");
		td_str(sb, e->under_load ? "yes" : "no");
		td_num(sb, e->gbps, "%.1f");
		sbuf_adds(sb, "<td>");
		html_cluster_provenance(sb, c, e->src);
		sbuf_adds(sb, "</td></tr>");
	}
	sbuf_adds(sb, "</tbody></table>");
}

void html_cluster(struct sbuf *sb, const struct mt_cluster *c, const char *note)
{
	int i;

	section(sb, "cluster", "Cluster", NULL);
	if (note) {
		sbuf_adds(sb, "<div class=\"rule violated\"><h4>Not the advice's system</h4><div>");
		esc(sb, note);
		sbuf_adds(sb, "</div></div>");
	}
	facts(sb, c);
	if (c->ngemm) {
		sbuf_adds(sb, "<h3>GEMM</h3><div class=\"single\">");
		gemm_chart(sb, c);
		sbuf_adds(sb, "</div>");
	}
	if (c->ncoll) {
		sbuf_adds(sb, "<h3>Collectives</h3><p class=\"lead\">nccl-tests bus bandwidth per "
			      "curve: <i>nvlink</i> curves stay inside one NVLink domain, "
			      "<i>network</i> curves cross domains. Hover a point for its value.</p>");
		collective_charts(sb, c);
	}
	if (c->nattn)
		attention(sb, c);
	if (c->noffload)
		offload(sb, c);
	sbuf_adds(sb, "<h3>Outliers</h3>");
	if (!c->noutliers) {
		sbuf_adds(sb, "<p class=\"none\">none reported by the profile</p>");
	} else {
		sbuf_adds(sb, "<ul>");
		for (i = 0; i < c->noutliers; i++) {
			sbuf_adds(sb, "<li>");
			esc(sb, c->outliers[i]);
			sbuf_adds(sb, "</li>");
		}
		sbuf_adds(sb, "</ul>");
	}
	sbuf_adds(sb, "<details><summary>sources</summary><table><thead><tr><th>id</th><th>kind</th>"
		      "<th>citation</th></tr></thead><tbody>");
	for (i = 0; i < c->nsources; i++) {
		sbuf_adds(sb, "<tr>");
		td_str(sb, c->sources[i].id);
		td_str(sb, c->sources[i].kind);
		td_str(sb, c->sources[i].citation);
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></details></section>");
}
