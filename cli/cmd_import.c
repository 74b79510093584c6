/* SPDX-License-Identifier: MIT */
/* import: nccl-tests and nvbandwidth output into a megatune.profile/1. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/bundled.h"
#include "../lib/fsutil.h"
#include "../lib/jsonw.h"
#include "../lib/sbuf.h"
#include "../lib/table.h"
#include "../import/import.h"
#include "../probes/profile.h"
#include "../tuner/cluster.h"
#include "cli.h"

static const char import_usage[] =
	"usage: megatune import nccl-tests|nvbandwidth FILE... [-o profile.json]\n"
	"                       [--base NAME|FILE] [--name NAME] [--span nvlink|network]\n"
	"                       [--op OP] [--ranks N] [--strict] [--json]\n"
	"\n"
	"Reads the output of nccl-tests (all_reduce_perf, all_gather_perf,\n"
	"reduce_scatter_perf, alltoall_perf, sendrecv_perf, broadcast_perf: the text\n"
	"as printed, in any of its table layouts, with mpirun --tag-output prefixes\n"
	"and NCCL INFO lines tolerated, several tests per file, or the -J JSON file)\n"
	"or of nvbandwidth (text or -j JSON), checks every table against itself, and\n"
	"writes a cluster profile that `megatune advise --cluster FILE` reads:\n"
	"  nccl-tests   one collective curve per test: op, span, ranks, ranks per\n"
	"               node, and per size the out-of-place busbw and time\n"
	"  nvbandwidth  host->device, device->host and bidirectional copy bandwidth\n"
	"               (pinned, NUMA-local: the median over the GPUs; a GPU more than\n"
	"               10% below it is named in the profile's outliers)\n"
	"Every file becomes a source (kind \"imported\") with a citation naming the\n"
	"tool and NCCL versions, the ranks and hosts, the GPU and the file.\n"
	"\n"
	"Checks: busbw = algbw x the bus factor of the collective for every row; the\n"
	"'Avg bus bandwidth' footer is the mean of every busbw of the table within\n"
	"the rounding of the printed digits; nvbandwidth SUM lines add up.  A failed\n"
	"check is a warning, or an error with --strict.\n"
	"\n"
	"  -o, --output FILE   the profile to write (atomically; '-': standard output).\n"
	"                      Without it the files are only read and checked.\n"
	"  --base NAME|FILE    the profile the measurements are added to (its GPU,\n"
	"                      node, GEMM and other curves stay); default: the bundled\n"
	"                      profile of the GPU the logs name (H100 dgx-h100, H200\n"
	"                      dgx-h200, A100 dgx-a100-80g, B200 dgx-b200, GB200\n"
	"                      gb200-nvl72)\n"
	"  --name NAME         the profile's name (default: the output file's name)\n"
	"  --span S            nvlink or network for every curve (default: nvlink when\n"
	"                      every rank ran on one host inside one NVLink domain)\n"
	"  --op OP             the collective of a table the log does not name\n"
	"                      (all_reduce, all_gather, reduce_scatter, alltoall,\n"
	"                      sendrecv, broadcast); a named test keeps its name\n"
	"  --ranks N           the rank count where the log has no device list and\n"
	"                      busbw/algbw does not determine it\n"
	"  --strict            a failed consistency check is an error (exit 1)\n"
	"  --json              print what was read and checked as JSON\n"
	"                      (megatune.import/1) instead of the text summary\n"
	"\n"
	"exit codes: 0 success; 1 a check failed under --strict; 2 bad usage or bad\n"
	"input (not a log of that tool, an empty file, a table without rows, a value\n"
	"that is not a number), with the file, the line and what was expected; the\n"
	"output file is then left as it was.\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "megatune import: error: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(see megatune import --help)\n");
	return 2;
}

struct iopts {
	const char *out, *base, *name;
	int span, op, ranks, strict, json;
};

static int parse(int argc, char **argv, struct iopts *o, int *first)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "base", required_argument, NULL, 'b' },
		{ "name", required_argument, NULL, 'n' },
		{ "span", required_argument, NULL, 's' },
		{ "op", required_argument, NULL, 'p' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "strict", no_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->span = o->op = -1;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(import_usage, stdout);
			return 0;
		case 'o': o->out = optarg; break;
		case 'b': o->base = optarg; break;
		case 'n':
			if (!optarg[0] || strlen(optarg) > 63)
				return usage_error("--name: expected a name of 1 to 63 characters, got '%s'",
						   optarg);
			o->name = optarg;
			break;
		case 's':
			if (!strcmp(optarg, "nvlink"))
				o->span = MT_SPAN_NVLINK;
			else if (!strcmp(optarg, "network"))
				o->span = MT_SPAN_NETWORK;
			else
				return usage_error("--span: expected nvlink or network, got '%s'", optarg);
			break;
		case 'p':
			if ((o->op = mt_coll_parse(optarg)) < 0)
				return usage_error("--op: expected all_reduce, all_gather, reduce_scatter, "
						   "alltoall, sendrecv or broadcast, got '%s'", optarg);
			break;
		case 'r': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (!optarg[0] || *end || v < 2 || v > (1 << 24))
				return usage_error("--ranks: expected a number of ranks of 2 or more, got '%s'",
						   optarg);
			o->ranks = (int)v;
			break;
		}
		case 'S': o->strict = 1; break;
		case 'j': o->json = 1; break;
		default:
			if (optopt && strchr("o", optopt))
				return usage_error("option '%s' needs a value", argv[optind - 1]);
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	*first = optind;
	return -1;
}

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

static void json_half(struct jw *w, const char *key, const struct mt_nt_test *t,
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
		json_half(w, "out_of_place", t, &r->h[0]);
		json_half(w, "in_place", t, &r->h[1]);
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

static void json_doc(struct sbuf *sb, struct mt_import *const *ims, int n, int tool,
		     const struct iopts *o, const char *base, const char *name, int built,
		     char **gw, int ngw)
{
	struct jw w;
	int i, j;

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
		jw_str(&w, "base", base);
		jw_str(&w, "name", name);
		if (o->out)
			jw_str(&w, "written", o->out);
		else
			jw_null(&w, "written");
	} else {
		jw_null(&w, "base");
	}
	jw_arr(&w, "warnings");
	for (i = 0; i < ngw; i++)
		jw_str(&w, NULL, gw[i]);
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

/* ------------------------------------------------------------------ */

/* The profile's default name: the output file's name without .json. */
static void default_name(const struct iopts *o, const char *base, char *out, size_t cap)
{
	const char *p = o->out && strcmp(o->out, "-") ? o->out : base;
	const char *b = strrchr(p, '/');
	size_t n;

	b = b ? b + 1 : p;
	n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".json"))
		n -= 5;
	if (n > cap - 10)
		n = cap - 10;
	memcpy(out, b, n);
	out[n] = 0;
	if (!(o->out && strcmp(o->out, "-")))
		strcat(out, "-imported");
}

int cmd_import(int argc, char **argv)
{
	struct iopts o;
	struct mt_import_opts po;
	struct mt_import_build_opts bo;
	struct mt_import **ims = NULL;
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb = SBUF_INIT;
	char **gw = NULL, name[64] = "";
	const char *base = NULL;
	cJSON *doc = NULL;
	int first, n = 0, i, j, rc, tool, built = 0, ngw = 0, *nparse_warn = NULL;

	if ((rc = parse(argc, argv, &o, &first)) >= 0)
		return rc;
	if (first >= argc)
		return usage_error("give the tool (nccl-tests or nvbandwidth) and at least one file%s", "");
	if ((tool = mt_import_tool_parse(argv[first])) < 0)
		return usage_error("expected nccl-tests or nvbandwidth, got '%s'", argv[first]);
	first++;
	if (first >= argc)
		return usage_error("give at least one %s output file", mt_import_tool_name(tool));
	if (o.json && o.out && !strcmp(o.out, "-"))
		return usage_error("--json and -o - would both write to standard output%s", "");
	if (argc - first > 4096)
		return usage_error("at most 4096 files%s", "");
	po.op = o.op;
	po.ranks = o.ranks;
	po.strict = o.strict;
	bo.span = o.span;
	ims = calloc((size_t)(argc - first), sizeof(*ims));
	nparse_warn = calloc((size_t)(argc - first), sizeof(*nparse_warn));
	if (!ims || !nparse_warn) {
		mt_error_set(&err, MT_ENOMEM, "out of memory");
		goto fail;
	}
	for (i = first; i < argc; i++) {
		if ((rc = mt_import_file(tool, argv[i], &po, &ims[n], &err)))
			goto fail;
		n++;
	}
	/* what the files said, before anything can fail */
	for (i = 0; i < n; i++)
		for (j = 0; j < ims[i]->nwarn; j++)
			fprintf(stderr, "megatune import: warning: %s\n", ims[i]->warn[j]);
	for (i = 0; i < n; i++)
		nparse_warn[i] = ims[i]->nwarn;
	/* the profile the measurements go into */
	base = o.base;
	if (!base) {
		const char *gpu = mt_import_gpu(ims, n);
		base = mt_import_base_for_gpu(gpu);
		if (!base && o.out) {
			if (gpu)
				mt_error_set(&err, MT_EUSAGE, "the logs ran on '%s', which no bundled profile "
					     "describes (H100, H200, A100, B200, GB200): give --base NAME|FILE",
					     gpu);
			else
				mt_error_set(&err, MT_EUSAGE, "the logs do not name the GPU: give --base "
					     "NAME|FILE (dgx-a100-80g, dgx-h100, dgx-h200, dgx-b200, "
					     "gb200-nvl72 or a profile)");
			goto fail;
		}
	}
	if (base) {
		if (o.name)
			snprintf(name, sizeof(name), "%s", o.name);
		else
			default_name(&o, base, name, sizeof(name));
		if (!mt_is_path(base) && !mt_bundled_find("profile", base)) {
			struct sbuf names = SBUF_INIT;
			mt_bundled_list("profile", &names);
			mt_error_set(&err, MT_EUSAGE, "--base: unknown profile '%s': give a profile file "
				     "or one of: %s", base, names.buf);
			sbuf_release(&names);
			goto fail;
		}
		if ((rc = mt_profile_new(base, name, &doc, &err)))
			goto fail;
		rc = mt_import_build(doc, ims, n, &bo, &gw, &ngw, &err);
		/* then what building the profile found */
		for (i = 0; i < n; i++)
			for (j = nparse_warn[i]; j < ims[i]->nwarn; j++)
				fprintf(stderr, "megatune import: warning: %s\n", ims[i]->warn[j]);
		for (i = 0; i < ngw; i++)
			fprintf(stderr, "megatune import: warning: %s\n", gw[i]);
		if (rc)
			goto fail;
		if (o.out) {
			rc = mt_profile_write(doc, o.out, &err);
		} else {
			struct mt_cluster *c = NULL;
			rc = mt_cluster_from_json(doc, "(imported profile)", &c, &err);
			if (rc)
				mt_error_prefix(&err, "the profile would be invalid: ");
			mt_cluster_free(c);
		}
		if (rc)
			goto fail;
		built = 1;
	}
	/* the summary to standard output, or to standard error when the
	 * profile went to standard output */
	if (o.json) {
		json_doc(&sb, ims, n, tool, &o, base ? base : "", name, built, gw, ngw);
	} else {
		sbuf_addf(&sb, "megatune import: %s, %d file%s\n", mt_import_tool_name(tool), n,
			  n == 1 ? "" : "s");
		for (i = 0; i < n; i++) {
			if (tool == MT_IMP_NCCL_TESTS)
				text_nt(&sb, ims[i], built);
			else
				text_nvb(&sb, ims[i]);
		}
		if (built && o.out)
			sbuf_addf(&sb, "wrote %s: profile '%s' = %s with the imported measurements\n",
				  strcmp(o.out, "-") ? o.out : "standard output", name, base);
		else if (built)
			sbuf_addf(&sb, "checked; nothing written (no -o): the profile would be '%s' = %s "
				  "with the imported measurements\n", name, base);
		else
			sbuf_adds(&sb, "checked; nothing written (no -o, and no bundled profile for the "
				  "GPU)\n");
	}
	if (sb.failed) {
		mt_error_set(&err, MT_ENOMEM, "out of memory");
		goto fail;
	}
	fputs(sb.buf, o.out && !strcmp(o.out, "-") ? stderr : stdout);
	rc = 0;
	goto out;
fail:
	rc = cli_fail("import", &err);
out:
	for (i = 0; i < ngw; i++)
		free(gw[i]);
	free(gw);
	for (i = 0; i < n; i++)
		mt_import_free(ims[i]);
	free(ims);
	free(nparse_warn);
	cJSON_Delete(doc);
	sbuf_release(&sb);
	return rc;
}
