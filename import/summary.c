/* SPDX-License-Identifier: MIT */
/* import: what was read, checked and imported, for `megatune import`: the
 * text summary (a table per file) and the megatune.import/1 JSON document
 * (docs/FORMATS.md).  Printed numbers are written back as they were printed. */
#include <math.h>
#include <string.h>

#include "../lib/jsonw.h"
#include "../lib/sbuf.h"
#include "../lib/table.h"
#include "../perfmodel/cluster.h"
#include "import.h"

/* ------------------------------------------------------------------ */
/* JSON summary */

/* A printed number back as it was printed: the same decimals, or the same
 * significant digits in exponent form; "N/A" is null. */
static void jw_tok(struct jw *w, const char *key, const struct mt_imp_num *n)
{
	const char *e, *dot;
	int dec = 0, sig = 0;

	if (!n->s[0])
		return;
	if (!isfinite(n->v)) {
		jw_null(w, key);
		return;
	}
	e = strpbrk(n->s, "eE");
	dot = strchr(n->s, '.');
	if (e) {
		const char *p;
		for (p = n->s; p < e; p++)
			sig += *p >= '0' && *p <= '9';
		jw_num(w, key, n->v, sig ? sig : 1);
		return;
	}
	if (dot)
		dec = (int)strlen(dot + 1);
	jw_fix(w, key, n->v, dec);
}

static void summary_json_half(struct jw *w, const char *key, const struct mt_nt_test *t,
		      const struct mt_nt_half *h)
{
	if (!h->present) {
		jw_null(w, key);
		return;
	}
	jw_obj(w, key);
	jw_tok(w, t->cputime ? "cputime_us" : t->time_ms ? "time_ms" : "time_us", &h->time);
	jw_tok(w, "algbw_gbps", &h->algbw);
	jw_tok(w, "busbw_gbps", &h->busbw);
	jw_tok(w, t->layout == MT_NT_OLD || t->layout == MT_NT_VERY_OLD ? "error" : "wrong",
	       &h->wrong);
	jw_tok(w, "i_min_us", &h->i_min);
	jw_tok(w, "i_max_us", &h->i_max);
	jw_tok(w, "i_p99_us", &h->i_p99);
	jw_tok(w, "i_cv_pct", &h->i_cv);
	jw_end(w);
}

static void json_test(struct jw *w, const struct mt_import *im, const struct mt_nt_test *t)
{
	int i;

	jw_obj(w, NULL);
	jw_str(w, "name", t->name);
	jw_str(w, "op", t->op >= 0 ? mt_coll_name(t->op) : "not imported");
	jw_str(w, "op_from", t->op_from);
	jw_str(w, "layout", mt_nt_layout_name(t->layout));
	jw_str(w, "columns", t->columns);
	if (!im->json) {
		jw_int(w, "line", t->line);
		jw_int(w, "header_line", t->header_line);
	}
	jw_str(w, "nccl_tests_version", t->nt_version);
	jw_str(w, "nccl", t->nccl);
	jw_str(w, "cuda", t->cuda);
	jw_int(w, "ranks", t->ranks);
	jw_str(w, "ranks_from", t->ranks_from);
	jw_int(w, "devices_listed", t->ndev);
	jw_int(w, "hosts", t->hosts);
	jw_int(w, "ranks_per_node", t->per_node);
	jw_str(w, "gpu", t->gpu);
	jw_int(w, "nthread", t->nthread);
	jw_int(w, "ngpus", t->ngpus);
	jw_arr(w, "rows");
	for (i = 0; i < t->nrows; i++) {
		const struct mt_nt_row *r = &t->rows[i];
		jw_obj(w, NULL);
		if (!im->json)
			jw_int(w, "line", r->line);
		jw_tok(w, "size_bytes", &r->size);
		jw_tok(w, "count", &r->count);
		if (r->type[0])
			jw_str(w, "type", r->type);
		if (r->redop[0])
			jw_str(w, "redop", r->redop);
		if (r->has_root)
			jw_int(w, "root", r->root);
		summary_json_half(w, "out_of_place", t, &r->h[0]);
		summary_json_half(w, "in_place", t, &r->h[1]);
		if (r->timestamp[0])
			jw_str(w, "timestamp", r->timestamp);
		jw_end(w);
	}
	jw_end(w);
	if (t->has_avg || t->has_oob) {
		jw_obj(w, "footer");
		if (t->has_avg) {
			if (!im->json)
				jw_int(w, "line", t->avg_line);
			jw_tok(w, "avg_busbw_gbps", &t->avg);
		}
		if (t->has_oob) {
			jw_int(w, "out_of_bounds", t->oob);
			jw_bool(w, "out_of_bounds_ok", t->oob_ok);
		}
		jw_end(w);
	} else {
		jw_null(w, "footer");
	}
	jw_obj(w, "checks");
	jw_int(w, "busbw_values", t->nvals);
	jw_num(w, "mean_busbw_printed", t->mean_printed, 10);
	jw_num(w, "mean_busbw_estimate", t->mean_est, 10);
	jw_num(w, "mean_busbw_min", t->mean_lo, 10);
	jw_num(w, "mean_busbw_max", t->mean_hi, 10);
	if (t->footer_ok < 0) {
		jw_null(w, "footer_reproduced");
		jw_null(w, "footer_exact");
	} else {
		jw_bool(w, "footer_reproduced", t->footer_ok);
		jw_bool(w, "footer_exact", t->footer_exact);
	}
	jw_int(w, "rows_checked", t->rows_checked);
	jw_int(w, "rows_inconsistent", t->rows_bad);
	jw_int(w, "rows_with_wrong_elements", t->wrong_rows);
	jw_end(w);
	jw_obj(w, "peak_busbw_gbps");
	jw_num(w, "out_of_place", t->peak_oop, 8);
	jw_num(w, "in_place", t->peak_ip, 8);
	jw_end(w);
	if (t->span >= 0) {
		jw_obj(w, "profile");
		jw_str(w, "op", mt_coll_name(t->op));
		jw_str(w, "span", mt_span_name(t->span));
		jw_int(w, "ranks", t->ranks);
		jw_int(w, "ranks_per_node", t->curve_per_node);
		jw_int(w, "points", t->npoints);
		jw_int(w, "rows_left_out", t->nskipped);
		if (t->replaced[0])
			jw_str(w, "replaces", t->replaced);
		else
			jw_null(w, "replaces");
		jw_end(w);
	} else {
		jw_null(w, "profile");
	}
	jw_end(w);
}

static void json_nvb(struct jw *w, const struct mt_import *im)
{
	int i, r, c;

	jw_str(w, "nvbandwidth_version", im->nvb_version);
	jw_str(w, "git_version", im->nvb_git);
	jw_str(w, "driver", im->driver);
	jw_str(w, "cuda_runtime", im->cuda_runtime);
	jw_str(w, "host", im->host);
	jw_arr(w, "gpus");
	for (i = 0; i < im->ngpu; i++)
		jw_str(w, NULL, im->gpu[i]);
	jw_end(w);
	jw_arr(w, "tests");
	for (i = 0; i < im->nnvb; i++) {
		const struct mt_nvb_test *m = &im->nvb[i];
		jw_obj(w, NULL);
		jw_str(w, "name", m->name);
		jw_str(w, "description", m->desc);
		jw_str(w, "status", m->status);
		if (!im->json)
			jw_int(w, "line", m->line);
		jw_arr(w, "matrix_gbps");
		for (r = 0; r < m->nrows; r++) {
			jw_arr(w, NULL);
			for (c = 0; c < m->ncols; c++)
				jw_num(w, NULL, m->v[r * m->ncols + c], 6);
			jw_end(w);
		}
		jw_end(w);
		if (m->has_sum)
			jw_tok(w, "sum_gbps", &m->sum);
		else
			jw_null(w, "sum_gbps");
		jw_num(w, "sum_recomputed_gbps", m->sum_values, 8);
		if (m->sum_ok < 0)
			jw_null(w, "sum_reproduced");
		else
			jw_bool(w, "sum_reproduced", m->sum_ok);
		if (m->direction[0]) {
			jw_obj(w, "profile");
			jw_str(w, "direction", m->direction);
			jw_num(w, "median_gbps", m->gbps, 6);
			jw_end(w);
		} else {
			jw_null(w, "profile");
		}
		jw_end(w);
	}
	jw_end(w);
}

void mt_import_summary_json(struct sbuf *sb, struct mt_import *const *ims, int n, int tool,
			    const struct mt_import_summary *s)
{
	struct jw w;
	int i, j, built = s->base != NULL;

	jw_init(&w, sb, 1);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", "megatune.import/1");
	jw_str(&w, "tool", mt_import_tool_name(tool));
	jw_arr(&w, "files");
	for (i = 0; i < n; i++) {
		const struct mt_import *im = ims[i];
		jw_obj(&w, NULL);
		jw_str(&w, "path", im->path);
		jw_str(&w, "format", im->json ? "json" : "text");
		if (im->json && tool == MT_IMP_NCCL_TESTS)
			jw_int(&w, "json_version", im->json_version);
		if (built && im->source_id[0]) {
			jw_str(&w, "source", im->source_id);
			jw_str(&w, "citation", im->citation);
		}
		if (tool == MT_IMP_NCCL_TESTS) {
			jw_arr(&w, "tests");
			for (j = 0; j < im->nnt; j++)
				json_test(&w, im, &im->nt[j]);
			jw_end(&w);
		} else {
			json_nvb(&w, im);
		}
		jw_arr(&w, "warnings");
		for (j = 0; j < im->nwarn; j++)
			jw_str(&w, NULL, im->warn[j]);
		jw_end(&w);
		jw_end(&w);
	}
	jw_end(&w);
	jw_obj(&w, "profile");
	if (built) {
		jw_str(&w, "base", s->base);
		jw_str(&w, "name", s->name);
		if (s->written)
			jw_str(&w, "written", s->written);
		else
			jw_null(&w, "written");
	} else {
		jw_null(&w, "base");
	}
	jw_arr(&w, "warnings");
	for (i = 0; i < s->nwarn; i++)
		jw_str(&w, NULL, s->warn[i]);
	jw_end(&w);
	jw_end(&w);
	jw_end(&w);
	sbuf_addc(sb, '\n');
}

/* ------------------------------------------------------------------ */
/* text summary */

static void text_nt(struct sbuf *sb, const struct mt_import *im, int built)
{
	struct mt_table t;
	const struct mt_nt_test *t0 = im->nnt ? &im->nt[0] : NULL;
	int i;

	if (im->json)
		sbuf_addf(sb, "%s: nccl-tests -J file (format %d)", im->path, im->json_version);
	else
		sbuf_addf(sb, "%s: nccl-tests %s", im->path,
			  t0 && t0->nt_version[0] ? t0->nt_version : "(version not printed)");
	sbuf_addf(sb, ", NCCL %s, %s\n", t0 && t0->nccl[0] ? t0->nccl : "(version not printed)",
		  t0 && t0->gpu[0] ? t0->gpu : "GPU not named");
	mt_table_init(&t);
	mt_table_col(&t, 0, "test", "", 1);
	mt_table_col(&t, 1, "op", "", 1);
	mt_table_col(&t, 2, "ranks", "", 0);
	mt_table_col(&t, 3, "hosts", "", 0);
	mt_table_col(&t, 4, "rows", "", 0);
	mt_table_col(&t, 5, "peak busbw", "GB/s", 0);
	mt_table_col(&t, 6, "footer avg", "GB/s", 0);
	mt_table_col(&t, 7, "reproduced", "", 1);
	mt_table_col(&t, 8, "span", "", 1);
	mt_table_col(&t, 9, "points", "", 0);
	for (i = 0; i < im->nnt; i++) {
		const struct mt_nt_test *x = &im->nt[i];
		mt_table_cell(&t, "%s", x->name[0] ? x->name : "-");
		mt_table_cell(&t, "%s", x->op >= 0 ? mt_coll_name(x->op) : "(not imported)");
		mt_table_cell(&t, "%d", x->ranks);
		if (x->hosts)
			mt_table_cell(&t, "%d", x->hosts);
		else
			mt_table_cell(&t, "?");
		mt_table_cell(&t, "%d", x->nrows);
		mt_table_cell(&t, "%.2f", x->peak_oop);
		mt_table_cell(&t, "%s", x->has_avg ? x->avg.s : "-");
		mt_table_cell(&t, "%s", x->footer_ok < 0 ? "no footer" : !x->footer_ok ? "NO"
					: x->footer_exact ? "yes (exact)" : "yes");
		mt_table_cell(&t, "%s", built && x->span >= 0 ? mt_span_name(x->span) : "-");
		if (built && x->span >= 0)
			mt_table_cell(&t, "%d", x->npoints);
		else
			mt_table_cell(&t, "-");
	}
	mt_table_render(&t, sb, "  ", 0);
	mt_table_release(&t);
}

static void text_nvb(struct sbuf *sb, const struct mt_import *im)
{
	struct mt_table t;
	int i;

	sbuf_addf(sb, "%s: nvbandwidth %s%s, driver %s, %d GPU%s%s%s\n", im->path,
		  im->nvb_version[0] ? im->nvb_version : "(version not printed)",
		  im->json ? " (JSON)" : "", im->driver[0] ? im->driver : "?", im->ngpu,
		  im->ngpu == 1 ? "" : "s", im->ngpu ? ", " : "", im->ngpu ? im->gpu[0] : "");
	mt_table_init(&t);
	mt_table_col(&t, 0, "test", "", 1);
	mt_table_col(&t, 1, "values", "", 0);
	mt_table_col(&t, 2, "min", "GB/s", 0);
	mt_table_col(&t, 3, "max", "GB/s", 0);
	mt_table_col(&t, 4, "SUM", "GB/s", 0);
	mt_table_col(&t, 5, "adds up", "", 1);
	mt_table_col(&t, 6, "imported as", "", 1);
	for (i = 0; i < im->nnvb; i++) {
		const struct mt_nvb_test *m = &im->nvb[i];
		double lo = INFINITY, hi = -INFINITY;
		int k, cnt = 0;
		for (k = 0; k < m->nrows * m->ncols; k++)
			if (isfinite(m->v[k])) {
				cnt++;
				if (m->v[k] < lo)
					lo = m->v[k];
				if (m->v[k] > hi)
					hi = m->v[k];
			}
		mt_table_cell(&t, "%s", m->name);
		mt_table_cell(&t, "%d", cnt);
		if (cnt) {
			mt_table_cell(&t, "%.2f", lo);
			mt_table_cell(&t, "%.2f", hi);
		} else {
			mt_table_cell(&t, "-");
			mt_table_cell(&t, "-");
		}
		mt_table_cell(&t, "%s", m->has_sum ? m->sum.s : "-");
		mt_table_cell(&t, "%s", m->sum_ok < 0 ? "-" : m->sum_ok ? "yes" : "NO");
		if (m->direction[0])
			mt_table_cell(&t, "%s %.2f GB/s", m->direction, m->gbps);
		else
			mt_table_cell(&t, "%s", strncmp(m->status, "Passed", 6) ? m->status : "-");
	}
	mt_table_render(&t, sb, "  ", 0);
	mt_table_release(&t);
}

void mt_import_summary_text(struct sbuf *sb, struct mt_import *const *ims, int n, int tool,
			    const struct mt_import_summary *s)
{
	int i, built = s->base != NULL;

	sbuf_addf(sb, "megatune import: %s, %d file%s\n", mt_import_tool_name(tool), n,
		  n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		if (tool == MT_IMP_NCCL_TESTS)
			text_nt(sb, ims[i], built);
		else
			text_nvb(sb, ims[i]);
	}
	if (built && s->written)
		sbuf_addf(sb, "wrote %s: profile '%s' = %s with the imported measurements\n",
			  strcmp(s->written, "-") ? s->written : "standard output", s->name, s->base);
	else if (built)
		sbuf_addf(sb, "checked; nothing written (no -o): the profile would be '%s' = %s "
			  "with the imported measurements\n", s->name, s->base);
	else
		sbuf_adds(sb, "checked; nothing written (no -o, and no bundled profile for the "
			  "GPU)\n");
}
