/* SPDX-License-Identifier: MIT */
/* expr: the expression language of the rules, compiled once, evaluated often.
 *
 *   numbers      8192  1e6  40M (x1e6)  4Gi (x2^30); suffixes K M G T, Ki Mi Gi Ti
 *   strings      "a2a+p2p"   booleans  true false on off (1 and 0)
 *   names        dotted fact names (facts.def): config.tp, cluster.nvlink_domain
 *   operators    + - * / % ^   == != < <= > >=   && || !  (also and, or, not)
 *   functions    min max abs ceil floor round log2 sqrt pow divides(a, b)
 *                if(cond, a, b) has(x) version("2.26")
 *                busbw(op, ranks, per_domain, bytes)  coll_time(...)
 *                plateau(op, ranks, per_domain)  knee(op, ranks, per_domain, frac)
 *                gemm_tflops(dtype, m, n, k)  offload_gbps(dir)  per_domain(n, stride)
 *                best(knob, value, ...)  least_mem(knob, value, ...)
 *                provenance(op, ranks, per_domain): "measured", "published
 *                measurement", "derived, not measured", ... (a string)
 *
 * An enumeration fact compared with a string literal compiles to a number
 * comparison, and an unknown value is a compile error (config.cp_comm ==
 * "a2x" names the values it could be).  Evaluation allocates nothing; the
 * curve functions cache their last results per call site, so a compiled
 * expression is not safe to evaluate from two threads at once.
 *
 * Templates are message text with {expr} or {expr:format} holes; formats:
 * pct, gib, bytes, params, s, ms, us, gbps, tflops, x, int, .N (N decimals),
 * on (on/off), vs (a relative difference: 0.031 is "3.1% slower"), ver (a
 * version code: 22105 is "2.21.5").  A hole that is exactly a boolean or enumeration fact prints
 * its name.  {{ and }} are literal braces.
 */
#ifndef MT_EXPR_H
#define MT_EXPR_H

#include <stddef.h>

#include "facts.h"

struct sbuf;
struct mt_cluster;

/* A compile error: a message and the 0-based column in the source. */
struct mt_cerr {
	int col;
	char msg[256];
};

/* best() and least_mem() over the candidates a search evaluated: `what` is 0
 * for the least step time of the feasible ones, 1 for the least memory; the
 * pairs are knob (MT_BK_*) and value.  NaN when none matched. */
enum { MT_BK_TP, MT_BK_PP, MT_BK_CP, MT_BK_EP, MT_BK_ETP, MT_BK_VPP, MT_BK_MBS,
       MT_BK_RECOMPUTE, MT_BK_DIST_OPT, MT_BK_SP, MT_BK_CP_COMM, MT_BK_N };
const char *mt_best_knob_name(int k);
typedef double (*mt_best_fn)(void *ctx, int what, const int *knob, const double *val, int n);

/* What an evaluation reads. */
struct mt_env {
	const struct mt_val *facts;        /* [MT_F_N] */
	const struct mt_cluster *cluster;  /* curve functions: NaN without one */
	mt_best_fn best;                   /* best(), least_mem(): NaN without one */
	void *best_ctx;
};

enum mt_vt { MT_VT_NUM, MT_VT_STR, MT_VT_ANY };

struct mt_expr;
struct mt_tmpl;

/* Compile `src` (n bytes).  NULL on error, with ce filled (ENOMEM reads
 * "out of memory"). */
struct mt_expr *mt_expr_compile(const char *src, size_t n, struct mt_cerr *ce);
void mt_expr_free(struct mt_expr *e);

struct mt_val mt_expr_eval(struct mt_expr *e, const struct mt_env *env);
/* As a truth value: non-zero number; NaN and strings are false. */
int mt_expr_true(struct mt_expr *e, const struct mt_env *env);

/* What the compiled expression depends on. */
int mt_expr_stage(const struct mt_expr *e);     /* latest stage among its facts and functions */
unsigned mt_expr_knobs(const struct mt_expr *e);
int mt_expr_type(const struct mt_expr *e);      /* enum mt_vt */
/* The facts it reads, each once, in order of first use. */
const int *mt_expr_facts(const struct mt_expr *e, int *n);
/* The fact it is exactly (a bare name), or -1. */
int mt_expr_bare_fact(const struct mt_expr *e);
/* 1 when it calls best() or least_mem(). */
int mt_expr_uses_best(const struct mt_expr *e);
/* Check that every string literal `e` may produce (not those passed to a
 * function or compared) names a value of enumeration fact `fact` (for SET on
 * an enumeration knob).  0, or -1 with ce filled. */
int mt_expr_check_enum(const struct mt_expr *e, int fact, struct mt_cerr *ce);

struct mt_tmpl *mt_tmpl_compile(const char *src, size_t n, struct mt_cerr *ce);
void mt_tmpl_free(struct mt_tmpl *t);
void mt_tmpl_render(struct mt_tmpl *t, const struct mt_env *env, struct sbuf *sb);
int mt_tmpl_stage(const struct mt_tmpl *t);
int mt_tmpl_uses_best(const struct mt_tmpl *t);
unsigned mt_tmpl_knobs(const struct mt_tmpl *t);
/* Call fn(fact, ctx) for every fact the template reads. */
void mt_tmpl_each_fact(const struct mt_tmpl *t, void (*fn)(int fact, void *ctx), void *ctx);

/* Format one value as a template would ({v:fmt}); fmt may be NULL. */
void mt_val_format(struct sbuf *sb, struct mt_val v, const char *fmt, int fact);

/* The function names, NULL-terminated (docs). */
extern const char *const mt_expr_functions[];

#endif
