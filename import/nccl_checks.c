/* SPDX-License-Identifier: MIT */
/* import: what an nccl-tests table measured (collective, ranks) and its
 * checks against itself (busbw = algbw x factor, the footer average), for the
 * text and the JSON readers; what each check means is in import.h. */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../perfmodel/cluster.h"

/* The collectives a file name mentions, as a bit set. */
static unsigned ops_in_file_name(const char *path)
{
	static const struct {
		const char *s;
		int op;
	} pats[] = {
		{ "all_reduce", MT_COLL_ALL_REDUCE }, { "allreduce", MT_COLL_ALL_REDUCE },
		{ "all_gather", MT_COLL_ALL_GATHER }, { "allgather", MT_COLL_ALL_GATHER },
		{ "reduce_scatter", MT_COLL_REDUCE_SCATTER },
		{ "reducescatter", MT_COLL_REDUCE_SCATTER },
		{ "alltoall", MT_COLL_ALL_TO_ALL }, { "all_to_all", MT_COLL_ALL_TO_ALL },
		{ "a2a", MT_COLL_ALL_TO_ALL }, { "sendrecv", MT_COLL_SEND_RECV },
		{ "send_recv", MT_COLL_SEND_RECV }, { "broadcast", MT_COLL_BROADCAST },
		{ "bcast", MT_COLL_BROADCAST },
	};
	char buf[256];
	unsigned set = 0;
	size_t i;

	copys(buf, sizeof(buf), base_name(path));
	for (i = 0; buf[i]; i++)
		buf[i] = (char)tolower((unsigned char)buf[i]);
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (strstr(buf, pats[i].s))
			set |= 1u << pats[i].op;
	return set;
}

static int single_bit(unsigned set)
{
	int i, found = -1;

	for (i = 0; i < MT_COLL_N; i++)
		if (set & (1u << i)) {
			if (found >= 0)
				return -1;
			found = i;
		}
	return found;
}

static int is_reduction(const char *redop)
{
	return redop[0] && strcmp(redop, "none");
}

/* ------------------------------------------------------------------ */
/* checks */

/* The interval of busbw/algbw ratios every row allows; the number of values
 * used (0: none, -1: the rows disagree). */
static int ratio_interval(const struct mt_nt_test *t, double *lo, double *hi)
{
	int i, h, n = 0;

	*lo = 0;
	*hi = INFINITY;
	for (i = 0; i < t->nrows; i++)
		for (h = 0; h < 2; h++) {
			const struct mt_nt_half *x = &t->rows[i].h[h];
			double a, b, ha, hb;
			if (!x->present || !isfinite(x->algbw.v) || !isfinite(x->busbw.v))
				continue;
			a = x->algbw.v;
			b = x->busbw.v;
			ha = imp_half_unit(x->algbw.s);
			hb = imp_half_unit(x->busbw.s);
			if (a - ha <= 0 || b - hb <= 0)
				continue;
			if ((b - hb) / (a + ha) > *lo)
				*lo = (b - hb) / (a + ha);
			if ((b + hb) / (a - ha) < *hi)
				*hi = (b + hb) / (a - ha);
			n++;
		}
	if (n && *lo > *hi * (1 + 1e-12))
		return -1;
	return n;
}

/* The rank count a busbw/algbw ratio interval implies for `op` (0: none or
 * not one). */
static int ranks_from_ratio(int op, double lo, double hi)
{
	double nlo, nhi;
	long a, b;

	switch (op) {
	case MT_COLL_ALL_REDUCE:
		if (lo >= 2)
			return 0;
		nlo = 2 / (2 - lo);
		nhi = hi >= 2 ? INFINITY : 2 / (2 - hi);
		break;
	case MT_COLL_ALL_GATHER:
	case MT_COLL_REDUCE_SCATTER:
	case MT_COLL_ALL_TO_ALL:
		if (lo >= 1)
			return 0;
		nlo = 1 / (1 - lo);
		nhi = hi >= 1 ? INFINITY : 1 / (1 - hi);
		break;
	default:
		return 0;
	}
	if (!(nhi < 1e7))
		return 0;
	a = (long)ceil(nlo - 1e-9);
	b = (long)floor(nhi + 1e-9);
	if (a < 2)
		a = 2;
	return a == b ? (int)a : 0;
}

/* The busbw each printed value allows, narrowed by size / time when the
 * time column holds the GPU time the bandwidth was computed from. */
static void value_interval(const struct mt_nt_test *t, const struct mt_nt_row *r,
			   const struct mt_nt_half *x, double *lo, double *hi)
{
	double b = x->busbw.v, hb = t->layout == MT_NT_JSON ? 5e-7 : imp_half_unit(x->busbw.s);

	*lo = b - hb > 0 ? b - hb : 0;
	*hi = b + hb;
	if (r->size.v == 0 && b == 0) {
		*lo = *hi = 0;
		return;
	}
	if (!t->cputime && t->op >= 0 && t->ranks > 0 && isfinite(x->time.v) && r->size.v > 0) {
		double tm = x->time.v, ht = t->layout == MT_NT_JSON ? 5e-7 : imp_half_unit(x->time.s);
		double f = mt_coll_busbw_factor(t->op, t->ranks), l2, h2;
		if (t->time_ms) {
			tm *= 1e3;
			ht *= 1e3;
		}
		if (tm - ht <= 0)
			return;
		l2 = r->size.v * f / ((tm + ht) * 1e3);
		h2 = r->size.v * f / ((tm - ht) * 1e3);
		if (l2 < *lo)
			l2 = *lo;
		if (h2 > *hi)
			h2 = *hi;
		if (l2 <= h2) {
			*lo = l2;
			*hi = h2;
		}
	}
}

static void check_test(struct mt_import *im, struct mt_nt_test *t)
{
	double sum = 0, slo = 0, shi = 0, sest = 0;
	int i, h, n = 0;

	t->peak_oop = t->peak_ip = 0;
	for (i = 0; i < t->nrows; i++) {
		const struct mt_nt_row *r = &t->rows[i];
		int bad = 0, wrong = 0;
		for (h = 0; h < 2; h++) {
			const struct mt_nt_half *x = &r->h[h];
			double lo, hi;
			if (!x->present || !isfinite(x->busbw.v))
				continue;
			if (h == 0 && x->busbw.v > t->peak_oop)
				t->peak_oop = x->busbw.v;
			if (h == 1 && x->busbw.v > t->peak_ip)
				t->peak_ip = x->busbw.v;
			value_interval(t, r, x, &lo, &hi);
			sum += x->busbw.v;
			slo += lo;
			shi += hi;
			sest += (lo + hi) / 2;
			n++;
			if (t->op >= 0 && t->ranks > 0 && isfinite(x->algbw.v)) {
				double f = mt_coll_busbw_factor(t->op, t->ranks);
				double hb = t->layout == MT_NT_JSON ? 5e-7 : imp_half_unit(x->busbw.s);
				double ha = t->layout == MT_NT_JSON ? 5e-7 : imp_half_unit(x->algbw.s);
				double e = x->algbw.v * f;
				if (fabs(x->busbw.v - e) > hb + ha * f + 1e-9 * (1 + e)) {
					if (!bad && !t->rows_bad) {
						t->bad_line = r->line;
						t->bad_busbw = x->busbw.v;
						t->bad_expect = e;
					}
					bad = 1;
				}
			}
			if (t->layout != MT_NT_OLD && t->layout != MT_NT_VERY_OLD && isfinite(x->wrong.v) &&
			    x->wrong.v > 0)
				wrong = 1;
		}
		t->wrong_rows += wrong;
		if (t->op >= 0 && t->ranks > 0)
			t->rows_checked++;
		t->rows_bad += bad;
	}
	t->nvals = n;
	if (n) {
		t->mean_printed = sum / n;
		t->mean_lo = slo / n;
		t->mean_hi = shi / n;
		t->mean_est = sest / n;
	}
	if (t->has_avg && n) {
		double f = t->avg.v, hf = t->layout == MT_NT_JSON ? 5e-7 : imp_half_unit(t->avg.s);
		double eps = 1e-9 * (1 + fabs(f));
		char buf[64];
		t->footer_ok = t->mean_lo <= f + hf + eps && t->mean_hi >= f - hf - eps;
		snprintf(buf, sizeof(buf), t->layout == MT_NT_JSON ? "%f" : "%g", t->mean_est);
		t->footer_exact = !strcmp(buf, t->avg.s);
	} else if (t->has_avg) {
		t->footer_ok = 0;
	}
	(void)im;
}

/* "file:line", or "file" for JSON input */
static const char *loc(const struct mt_import *im, int line, char *buf)
{
	if (line > 0 && !im->json)
		snprintf(buf, 600, "%s:%d", im->path, line);
	else
		snprintf(buf, 600, "%s", im->path);
	return buf;
}

/* Decide what each test measured and over how many ranks, then check. */
int imp_nt_finish_test(struct ntp *s, struct mt_nt_test *t)
{
	struct mt_import *im = s->im;
	const struct mt_import_opts *o = s->o;
	double rlo = 0, rhi = INFINITY;
	int nratio = ratio_interval(t, &rlo, &rhi);
	unsigned fname = ops_in_file_name(im->path);
	int where = t->header_line ? t->header_line : t->nrows ? t->rows[0].line : t->line;
	long idx = t - im->nt;
	const struct cmdinfo *c = s->tcmd && idx >= 0 && idx < s->ntcmd ? &s->tcmd[idx] : &s->cmd;
	char lb[600];

	/* the collective */
	if (t->name[0]) {
		t->op = imp_op_of_test(t->name);
		if (!t->op_from[0])
			copys(t->op_from, sizeof(t->op_from), "test header");
	}
	if (t->op == -1 && o->op >= 0) {
		t->op = o->op;
		copys(t->op_from, sizeof(t->op_from), "--op");
	}
	if (t->op == -1 && t->nrows) {
		const struct mt_nt_row *r0 = &t->rows[0];
		unsigned cand = 0;
		if (nratio > 0 && rhi < 1) {
			cand = is_reduction(r0->redop) ? 1u << MT_COLL_REDUCE_SCATTER
						       : (1u << MT_COLL_ALL_GATHER) | (1u << MT_COLL_ALL_TO_ALL);
		} else if (nratio > 0 && rlo > 1) {
			cand = 1u << MT_COLL_ALL_REDUCE;
		} else if (nratio > 0) {
			if (r0->has_root && r0->root >= 0)
				cand = is_reduction(r0->redop) ? 0 : 1u << MT_COLL_BROADCAST;
			else if (is_reduction(r0->redop) || !r0->redop[0])
				cand = (1u << MT_COLL_SEND_RECV) | (1u << MT_COLL_ALL_REDUCE);
		} else {
			cand = (1u << MT_COLL_N) - 1;
		}
		if (single_bit(cand) >= 0 && nratio > 0) {
			t->op = single_bit(cand);
			copys(t->op_from, sizeof(t->op_from), "busbw/algbw and redop columns");
		} else if (single_bit(cand & fname) >= 0) {
			t->op = single_bit(cand & fname);
			copys(t->op_from, sizeof(t->op_from), nratio > 0 ? "columns and file name"
									  : "file name");
		}
	}
	if (t->op == -1)
		return mt_error_set(s->err, MT_EINVAL, "%s: cannot tell which collective this table "
				    "measured (no 'Collective test starting' line, no command line, "
				    "and neither its columns nor the file name say): give --op "
				    "all_reduce|all_gather|reduce_scatter|alltoall|sendrecv|broadcast",
				    loc(im, where, lb));
	if (t->op == -2) {
		imp_warnf(im, "%s: %s is not one of the collectives a profile holds (all_reduce, "
			  "all_gather, reduce_scatter, alltoall, sendrecv, broadcast): not imported",
			  loc(im, where, lb), t->name);
		check_test(im, t);
		return MT_OK;
	}

	/* the rank count */
	if (!t->ranks && o->ranks > 0) {
		t->ranks = o->ranks;
		copys(t->ranks_from, sizeof(t->ranks_from), "--ranks");
	}
	if (!t->ranks && c->seen && (c->np || c->g || c->t || !c->mpi)) {
		int per = (c->g ? c->g : t->ngpus ? t->ngpus : 1) *
			  (c->t ? c->t : t->nthread ? t->nthread : 1);
		if (c->mpi && c->np) {
			t->ranks = c->np * per;
			if (c->ppn && !t->hosts)
				t->hosts = (t->ranks + c->ppn * per - 1) / (c->ppn * per);
		} else if (!c->mpi && !s->mpi_tags) {
			t->ranks = per;
			t->hosts = 1;
		}
		if (t->ranks)
			copys(t->ranks_from, sizeof(t->ranks_from), "command line");
	}
	if (!t->ranks && nratio > 0) {
		t->ranks = ranks_from_ratio(t->op, rlo, rhi);
		if (t->ranks)
			copys(t->ranks_from, sizeof(t->ranks_from), "busbw/algbw ratio");
	}
	if (!t->ranks && t->nthread && t->ngpus && !s->mpi_tags) {
		t->ranks = t->nthread * t->ngpus;
		t->hosts = 1;
		copys(t->ranks_from, sizeof(t->ranks_from), "nThread x nGpus");
		imp_warnf(im, "%s: no device list: %d ranks taken from 'nThread %d nGpus %d', which "
			  "assumes a single process (give --ranks if several processes ran)",
			  loc(im, where, lb), t->ranks, t->nthread, t->ngpus);
	}
	if (!t->ranks && t->nrows)
		return mt_error_set(s->err, MT_EINVAL, "%s: cannot tell over how many ranks %s ran "
				    "(no device list, no command line, and busbw/algbw does not "
				    "determine it for %s): give --ranks N", loc(im, where, lb),
				    t->name[0] ? t->name : "this test", mt_coll_name(t->op));
	if (t->ranks && t->hosts == 1 && !t->per_node)
		t->per_node = t->ranks;
	/* the device list and the measured ratio should agree */
	if (nratio > 0 && t->ranks) {
		int n2 = ranks_from_ratio(t->op, rlo, rhi);
		if (n2 && n2 != t->ranks)
			imp_warnf(im, "%s: busbw/algbw says %d ranks, the %s says %d", loc(im, where, lb), n2,
				  t->ranks_from, t->ranks);
	}
	check_test(im, t);
	return MT_OK;
}

int imp_nt_report_checks(struct mt_import *im, const struct mt_import_opts *o, struct mt_error *err)
{
	int i, failed = 0;
	char first[MT_ERROR_MSG_MAX] = "";

	for (i = 0; i < im->nnt; i++) {
		struct mt_nt_test *t = &im->nt[i];
		char msg[1400], lb[600];
		const char *name = t->name[0] ? t->name : t->op >= 0 ? mt_coll_name(t->op) : "test";

		if (t->op == -2)
			continue;
		msg[0] = 0;
		if (t->footer_ok == 0)
			snprintf(msg, sizeof(msg), "%s: %s: the footer 'Avg bus bandwidth : %s' is not "
				 "the mean of the %d busbw values of the table (their printed digits "
				 "allow %.6g to %.6g): rows missing or edited?", loc(im, t->avg_line, lb),
				 name, t->avg.s, t->nvals, t->mean_lo, t->mean_hi);
		if (msg[0]) {
			imp_warnf(im, "%s", msg);
			if (!failed++)
				copys(first, sizeof(first), msg);
		}
		if (t->rows_bad) {
			snprintf(msg, sizeof(msg), "%s: %s: busbw %.6g is not algbw x %.6g (the factor "
				 "for %d ranks) = %.6g%s", loc(im, t->bad_line, lb), name,
				 t->bad_busbw, mt_coll_busbw_factor(t->op, t->ranks), t->ranks,
				 t->bad_expect, t->rows_bad > 1 ? " (and in more rows)" : "");
			imp_warnf(im, "%s", msg);
			if (!failed++)
				copys(first, sizeof(first), msg);
		}
		if (t->wrong_rows || (t->has_oob && (t->oob || !t->oob_ok))) {
			snprintf(msg, sizeof(msg), "%s: %s: nccl-tests found wrong results (%d row%s "
				 "with wrong elements, out of bounds values %d)", loc(im, t->line, lb),
				 name, t->wrong_rows, t->wrong_rows == 1 ? "" : "s", t->oob);
			imp_warnf(im, "%s", msg);
			if (!failed++)
				copys(first, sizeof(first), msg);
		}
		if (!t->has_avg && t->nrows)
			imp_warnf(im, "%s: %s: no 'Avg bus bandwidth' footer (a truncated log?): the "
				  "average was not checked", loc(im, t->line, lb), name);
	}
	if (failed && o->strict)
		return mt_error_set(err, MT_EINFEASIBLE, "%s (--strict)", first);
	return MT_OK;
}
