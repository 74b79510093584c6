/* SPDX-License-Identifier: MIT */
/* vm: the stack machine that evaluates a compiled expression (expr_code.h),
 * with the profile-curve functions and their per-expression caches. */
#include "expr.h"
#include "expr_code.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/sbuf.h"
#include "../lib/ver.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"

static int truthy(struct mt_val v)
{
	return !v.s && v.n != 0 && !isnan(v.n);
}

static struct mt_val vm_num(double n)
{
	struct mt_val v = { n, NULL };
	return v;
}

/* The size at which the measured bus bandwidth of a collective reaches `frac`
 * of its plateau, and the plateau itself (the best over 1 KiB to 16 GiB). */
static double plateau(const struct mt_cluster *cl, int op, int ranks, int pd)
{
	double best = 0, b;
	int i;

	for (i = 10; i <= 34; i++) {
		b = mt_coll_busbw(cl, op, ranks, pd, ldexp(1, i));
		if (b > best)
			best = b;
	}
	return best;
}

static double knee(const struct mt_cluster *cl, int op, int ranks, int pd, double frac)
{
	double top = plateau(cl, op, ranks, pd), x;
	int i;

	if (top <= 0)
		return NAN;
	/* quarter-octave steps, then the first size at or above the target */
	for (i = 40; i <= 136; i++) {
		x = ldexp(1, i / 4) * pow(2, (i % 4) / 4.0);
		if (mt_coll_busbw(cl, op, ranks, pd, x) >= frac * top)
			return x;
	}
	return ldexp(1, 34);
}

static double call(struct mt_expr *e, const struct ins *in, const struct mt_val *a,
		   const struct mt_env *env)
{
	int f = in->a, argc = in->b, i, op;
	const struct mt_cluster *cl = env->cluster;
	struct cache *cache = in->c >= 0 ? &e->caches[in->c] : NULL;
	double r;

	switch (f) {
	case FN_MIN: case FN_MAX:
		r = a[0].n;
		for (i = 1; i < argc; i++) {
			if (isnan(a[i].n) || isnan(r))
				r = NAN;
			else if (f == FN_MIN ? a[i].n < r : a[i].n > r)
				r = a[i].n;
		}
		return r;
	case FN_ABS: return fabs(a[0].n);
	case FN_CEIL: return ceil(a[0].n);
	case FN_FLOOR: return floor(a[0].n);
	case FN_ROUND: return round(a[0].n);
	case FN_LOG2: return a[0].n > 0 ? log2(a[0].n) : NAN;
	case FN_SQRT: return a[0].n >= 0 ? sqrt(a[0].n) : NAN;
	case FN_POW: return pow(a[0].n, a[1].n);
	case FN_DIVIDES:
		/* a divides b: b is a whole multiple of a */
		if (!(a[0].n >= 1) || isnan(a[1].n) || a[0].n != floor(a[0].n) || a[1].n != floor(a[1].n))
			return 0;
		return fmod(a[1].n, a[0].n) == 0;
	case FN_HAS: return a[0].s ? 1 : !isnan(a[0].n);
	case FN_VERSION: {
		long v = a[0].s ? mt_ver_code(a[0].s) : -1;
		return v < 0 ? NAN : (double)v;
	}
	case FN_OFFLOAD:
		if (!cl || !a[0].s)
			return NAN;
		return mt_offload_gbps(cl, !strcmp(a[0].s, "h2d") ? MT_OFF_H2D
					   : !strcmp(a[0].s, "d2h") ? MT_OFF_D2H : MT_OFF_BIDIR);
	case FN_PER_DOMAIN:
		if (!cl || !(a[0].n >= 1) || !(a[1].n >= 1))
			return NAN;
		return mt_group_per_domain(cl, (int)a[0].n, (int)a[1].n);
	case FN_BEST: case FN_LEAST_MEM: {
		int k[MAX_ARGS / 2];
		double v[MAX_ARGS / 2];
		int np = argc / 2;
		if (!env->best)
			return NAN;
		for (i = 0; i < np; i++) {
			k[i] = (int)a[2 * i].n;
			if (a[2 * i + 1].s) {
				int b = k[i] >= 0 && k[i] < MT_BK_N ? k[i] : 0;
				int idx = mt_fact_enum(mt_best_knob_fact[b], a[2 * i + 1].s);
				if (idx < 0)
					return NAN;
				v[i] = idx;
			} else {
				v[i] = a[2 * i + 1].n;
			}
		}
		return env->best(env->best_ctx, f == FN_LEAST_MEM, k, v, np);
	}
	default:
		break;
	}
	/* curve look-ups: cached per call site */
	if (!cl || !a[0].s)
		return NAN;
	for (i = 1; i < argc; i++)
		if (isnan(a[i].n))
			return NAN;
	if (cache) {
		for (i = 0; i < cache->used; i++) {
			int j, same = cache->skey[i] == a[0].s && cache->cl[i] == cl;
			for (j = 1; j < argc && same; j++)
				same = cache->key[i][j] == a[j].n;
			if (same)
				return cache->val[i];
		}
	}
	if (f == FN_GEMM) {
		int dt = mt_dtype_parse(a[0].s);
		r = dt < 0 || a[1].n < 1 || a[2].n < 1 || a[3].n < 1 ? NAN
		    : mt_gemm_tflops(cl, dt, a[1].n, a[2].n, a[3].n);
	} else {
		op = mt_coll_parse(a[0].s);
		if (op < 0 || !(a[1].n >= 1) || !(a[2].n >= 1)) {
			r = NAN;
		} else if (a[1].n < 2) {
			r = f == FN_COLL_TIME ? 0 : NAN;
		} else {
			int ranks = (int)a[1].n, pd = (int)a[2].n;
			if (pd > ranks)
				pd = ranks;
			switch (f) {
			case FN_BUSBW: r = a[3].n > 0 ? mt_coll_busbw(cl, op, ranks, pd, a[3].n) : NAN; break;
			case FN_COLL_TIME: r = a[3].n > 0 ? mt_coll_time(cl, op, ranks, pd, a[3].n) : 0; break;
			case FN_PLATEAU: r = plateau(cl, op, ranks, pd); break;
			default: r = a[3].n > 0 && a[3].n <= 1 ? knee(cl, op, ranks, pd, a[3].n) : NAN; break;
			}
		}
	}
	if (cache) {
		int slot = cache->used < CACHE_WAYS ? cache->used++ : (cache->next++ % CACHE_WAYS);
		cache->skey[slot] = a[0].s;
		cache->cl[slot] = cl;
		for (i = 1; i < argc; i++)
			cache->key[slot][i] = a[i].n;
		cache->val[slot] = r;
	}
	return r;
}

/* vm_provenance(op, ranks, per_domain): where that curve comes from, in words */
static const char *vm_provenance(const struct mt_val *a, const struct mt_env *env)
{
	int op;

	if (!env->cluster || !a[0].s || !(a[1].n >= 1) || !(a[2].n >= 1))
		return NULL;
	op = mt_coll_parse(a[0].s);
	if (op < 0)
		return NULL;
	return mt_coll_provenance(env->cluster, op, (int)a[1].n, (int)a[2].n);
}

static int veq(struct mt_val x, struct mt_val y)
{
	if (x.s || y.s)
		return x.s && y.s && !strcmp(x.s, y.s);
	return x.n == y.n;
}

struct mt_val mt_expr_eval(struct mt_expr *e, const struct mt_env *env)
{
	struct mt_val st[STACK_MAX];
	int sp = 0, pc = 0;

	while (pc < e->n) {
		const struct ins *in = &e->code[pc++];
		struct mt_val x, y;

		switch (in->op) {
		case OP_NUM: st[sp++] = vm_num(in->n); break;
		case OP_STR: st[sp].n = 0; st[sp++].s = e->pool + in->a; break;
		case OP_FACT: st[sp++] = env->facts[in->a]; break;
		case OP_NEG: st[sp - 1] = vm_num(-st[sp - 1].n); break;
		case OP_NOT: st[sp - 1] = vm_num(isnan(st[sp - 1].n) && !st[sp - 1].s ? NAN : !truthy(st[sp - 1])); break;
		case OP_BOOL: st[sp - 1] = vm_num(truthy(st[sp - 1])); break;
		case OP_AND:
			if (!truthy(st[sp - 1])) {
				st[sp - 1] = vm_num(0);
				pc = in->a;
			} else {
				sp--;
			}
			break;
		case OP_OR:
			if (truthy(st[sp - 1])) {
				st[sp - 1] = vm_num(1);
				pc = in->a;
			} else {
				sp--;
			}
			break;
		case OP_JF:
			if (!truthy(st[--sp]))
				pc = in->a;
			break;
		case OP_JMP: pc = in->a; break;
		case OP_CALL: {
			int argc = in->b;
			double r;
			sp -= argc;
			if (in->a == FN_PROVENANCE) {
				st[sp].s = vm_provenance(st + sp, env);
				st[sp].n = st[sp].s ? 0 : NAN;
				sp++;
				break;
			}
			r = call(e, in, st + sp, env);
			st[sp++] = vm_num(r);
			break;
		}
		default:
			y = st[--sp];
			x = st[sp - 1];
			switch (in->op) {
			case OP_ADD: st[sp - 1] = vm_num(x.n + y.n); break;
			case OP_SUB: st[sp - 1] = vm_num(x.n - y.n); break;
			case OP_MUL: st[sp - 1] = vm_num(x.n * y.n); break;
			case OP_DIV: st[sp - 1] = vm_num(y.n != 0 ? x.n / y.n : NAN); break;
			case OP_MOD: st[sp - 1] = vm_num(y.n != 0 ? fmod(x.n, y.n) : NAN); break;
			case OP_POW: st[sp - 1] = vm_num(pow(x.n, y.n)); break;
			case OP_EQ: st[sp - 1] = vm_num(veq(x, y)); break;
			case OP_NE: st[sp - 1] = vm_num(!veq(x, y) && !(isnan(x.n) && !x.s) && !(isnan(y.n) && !y.s)); break;
			case OP_LT: st[sp - 1] = vm_num(x.n < y.n); break;
			case OP_LE: st[sp - 1] = vm_num(x.n <= y.n); break;
			case OP_GT: st[sp - 1] = vm_num(x.n > y.n); break;
			case OP_GE: st[sp - 1] = vm_num(x.n >= y.n); break;
			}
			break;
		}
	}
	return sp > 0 ? st[sp - 1] : vm_num(NAN);
}

int mt_expr_true(struct mt_expr *e, const struct mt_env *env)
{
	return truthy(mt_expr_eval(e, env));
}
