/* SPDX-License-Identifier: MIT */
/* expr: a recursive-descent compiler to a small stack machine (the machine
 * is vm.c, the code expr_code.h, message templates template.c).
 *
 * Grammar (lowest precedence first):
 *   expr    := and ( ("||" | "or") and )*
 *   and     := not ( ("&&" | "and") not )*
 *   not     := ("!" | "not") not | cmp
 *   cmp     := sum ( ("==" | "!=" | "<" | "<=" | ">" | ">=") sum )?
 *   sum     := prod ( ("+" | "-") prod )*
 *   prod    := unary ( ("*" | "/" | "%") unary )*
 *   unary   := "-" unary | power
 *   power   := primary ( "^" unary )?
 *   primary := number | string | name | name "(" args ")" | "(" expr ")"
 */
#include "expr.h"
#include "expr_code.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/num.h"
#include "../lib/sbuf.h"
#include "../lib/ver.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"

/* argument kinds: n number, s string (checked when a literal) */
struct fninfo {
	const char *name;
	int min, max;
	const char *args;   /* per-argument kind for the fixed ones; "" for any */
	int cached;
	int stage;          /* at least this stage */
};

static const struct fninfo fns[FN_N] = {
	[FN_MIN] = { "min", 1, 8, "", 0, MT_ST_STATIC },
	[FN_MAX] = { "max", 1, 8, "", 0, MT_ST_STATIC },
	[FN_ABS] = { "abs", 1, 1, "n", 0, MT_ST_STATIC },
	[FN_CEIL] = { "ceil", 1, 1, "n", 0, MT_ST_STATIC },
	[FN_FLOOR] = { "floor", 1, 1, "n", 0, MT_ST_STATIC },
	[FN_ROUND] = { "round", 1, 1, "n", 0, MT_ST_STATIC },
	[FN_LOG2] = { "log2", 1, 1, "n", 0, MT_ST_STATIC },
	[FN_SQRT] = { "sqrt", 1, 1, "n", 0, MT_ST_STATIC },
	[FN_POW] = { "pow", 2, 2, "nn", 0, MT_ST_STATIC },
	[FN_DIVIDES] = { "divides", 2, 2, "nn", 0, MT_ST_STATIC },
	[FN_IF] = { "if", 3, 3, "", 0, MT_ST_STATIC },
	[FN_HAS] = { "has", 1, 1, "", 0, MT_ST_STATIC },
	[FN_VERSION] = { "version", 1, 1, "s", 0, MT_ST_STATIC },
	[FN_BUSBW] = { "busbw", 4, 4, "snnn", 1, MT_ST_STATIC },
	[FN_COLL_TIME] = { "coll_time", 4, 4, "snnn", 1, MT_ST_STATIC },
	[FN_PLATEAU] = { "plateau", 3, 3, "snn", 1, MT_ST_STATIC },
	[FN_KNEE] = { "knee", 4, 4, "snnn", 1, MT_ST_STATIC },
	[FN_GEMM] = { "gemm_tflops", 4, 4, "snnn", 1, MT_ST_STATIC },
	[FN_OFFLOAD] = { "offload_gbps", 1, 1, "s", 0, MT_ST_STATIC },
	[FN_PER_DOMAIN] = { "per_domain", 2, 2, "nn", 0, MT_ST_STATIC },
	[FN_BEST] = { "best", 2, 10, "", 0, MT_ST_SEARCH },
	[FN_LEAST_MEM] = { "least_mem", 2, 10, "", 0, MT_ST_SEARCH },
	[FN_PROVENANCE] = { "provenance", 3, 3, "snn", 0, MT_ST_STATIC },
};

const char *const mt_expr_functions[] = {
	"min", "max", "abs", "ceil", "floor", "round", "log2", "sqrt", "pow", "divides", "if",
	"has", "version", "busbw", "coll_time", "plateau", "knee", "gemm_tflops", "offload_gbps",
	"per_domain", "best", "least_mem", "provenance", NULL,
};

static const char *const best_knobs[MT_BK_N] = {
	"tp", "pp", "cp", "ep", "etp", "vpp", "mbs", "recompute", "dist_opt", "sp", "cp_comm",
};
const int mt_best_knob_fact[MT_BK_N] = {
	MT_F_CFG_TP, MT_F_CFG_PP, MT_F_CFG_CP, MT_F_CFG_EP, MT_F_CFG_ETP, MT_F_CFG_VPP,
	MT_F_CFG_MBS, MT_F_CFG_RECOMPUTE, MT_F_CFG_DIST_OPT, MT_F_CFG_SP, MT_F_CFG_CP_COMM,
};

const char *mt_best_knob_name(int k) { return k >= 0 && k < MT_BK_N ? best_knobs[k] : "?"; }

/* ---------------------------------------------------------------- compiler */

struct desc {
	int type;       /* enum mt_vt */
	int efact;      /* the enumeration fact it is exactly, or -1 */
	int str_ins;    /* the OP_STR instruction it is exactly, or -1 */
	int bool_fact;  /* it is exactly a boolean fact */
};

struct cc {
	const char *s;
	size_t n, i;
	struct mt_expr *e;
	struct mt_cerr *ce;
	int failed;
	int depth;          /* nesting of the recursive descent */
};

#define NEST_MAX 200

static void expr_fail(struct cc *c, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void expr_fail(struct cc *c, size_t at, const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return;
	c->failed = 1;
	if (!c->ce)
		return;
	c->ce->col = (int)at;
	va_start(ap, fmt);
	vsnprintf(c->ce->msg, sizeof(c->ce->msg), fmt, ap);
	va_end(ap);
}

static int expr_emit(struct cc *c, int op, int a, double n)
{
	struct mt_expr *e = c->e;

	if (c->failed)
		return -1;
	if (e->n == e->cap) {
		int cap = e->cap ? 2 * e->cap : 16;
		struct ins *p = realloc(e->code, (size_t)cap * sizeof(*p));
		if (!p) {
			expr_fail(c, c->i, "out of memory");
			return -1;
		}
		e->code = p;
		e->cap = cap;
	}
	memset(&e->code[e->n], 0, sizeof(e->code[0]));
	e->code[e->n].op = op;
	e->code[e->n].a = a;
	e->code[e->n].n = n;
	return e->n++;
}

static void expr_push(struct cc *c, int k)
{
	c->e->depth += k;
	if (c->e->depth > c->e->maxdepth)
		c->e->maxdepth = c->e->depth;
}

static void skip_ws(struct cc *c)
{
	while (c->i < c->n && isspace((unsigned char)c->s[c->i]))
		c->i++;
}

static int peek(struct cc *c, const char *tok)
{
	size_t k = strlen(tok);

	skip_ws(c);
	if (c->i + k > c->n || memcmp(c->s + c->i, tok, k))
		return 0;
	/* word operators must end at a word boundary */
	if (isalpha((unsigned char)tok[0]) && c->i + k < c->n &&
	    (isalnum((unsigned char)c->s[c->i + k]) || c->s[c->i + k] == '_' || c->s[c->i + k] == '.'))
		return 0;
	return 1;
}

static int accept(struct cc *c, const char *tok)
{
	if (!peek(c, tok))
		return 0;
	c->i += strlen(tok);
	return 1;
}

static void expect(struct cc *c, const char *tok)
{
	if (!accept(c, tok)) {
		if (c->i >= c->n)
			expr_fail(c, c->i, "expected '%s' at the end of the expression", tok);
		else
			expr_fail(c, c->i, "expected '%s' before '%.12s'", tok, c->s + c->i);
	}
}

static void add_fact(struct cc *c, int f)
{
	struct mt_expr *e = c->e;
	int i;

	if (mt_facts[f].stage > e->stage)
		e->stage = mt_facts[f].stage;
	e->knobs |= mt_facts[f].knobs;
	for (i = 0; i < e->nfacts; i++)
		if (e->facts[i] == f)
			return;
	if (e->nfacts == (int)(sizeof(e->facts) / sizeof(e->facts[0])))
		expr_fail(c, c->i, "an expression reads at most %d different facts",
		     (int)(sizeof(e->facts) / sizeof(e->facts[0])));
	else
		e->facts[e->nfacts++] = f;
}

static struct desc d_of(int type)
{
	struct desc d = { type, -1, -1, 0 };
	return d;
}

static struct desc parse_expr(struct cc *c);

static const char *type_name(int t)
{
	return t == MT_VT_STR ? "a string" : "a number";
}

static void need_num(struct cc *c, struct desc d, size_t at, const char *what)
{
	if (d.type == MT_VT_STR)
		expr_fail(c, at, "%s needs a number, got a string", what);
}

static int add_string(struct cc *c, const char *p, size_t len)
{
	struct mt_expr *e = c->e;
	size_t off;

	if (e->pool_len + len + 1 > e->pool_cap) {
		size_t cap = e->pool_cap ? e->pool_cap : 64;
		char *q;
		while (cap < e->pool_len + len + 1)
			cap *= 2;
		q = realloc(e->pool, cap);
		if (!q) {
			expr_fail(c, c->i, "out of memory");
			return -1;
		}
		e->pool = q;
		e->pool_cap = cap;
	}
	off = e->pool_len;
	memcpy(e->pool + off, p, len);
	e->pool[off + len] = '\0';
	e->pool_len += len + 1;
	return (int)off;
}

static struct desc parse_string(struct cc *c)
{
	size_t start = c->i++;
	char buf[256];
	size_t k = 0;
	int off, ins;
	struct desc d = d_of(MT_VT_STR);

	while (c->i < c->n && c->s[c->i] != '"') {
		char ch = c->s[c->i++];
		if (ch == '\\' && c->i < c->n)
			ch = c->s[c->i++];
		if (k + 1 >= sizeof(buf)) {
			expr_fail(c, start, "string longer than %zu characters", sizeof(buf) - 1);
			return d;
		}
		buf[k++] = ch;
	}
	if (c->i >= c->n) {
		expr_fail(c, start, "unterminated string");
		return d;
	}
	c->i++;
	off = add_string(c, buf, k);
	ins = expr_emit(c, OP_STR, off, 0);
	expr_push(c, 1);
	d.str_ins = ins;
	return d;
}

static struct desc parse_number(struct cc *c)
{
	const char *p = c->s + c->i;
	char buf[64];
	size_t k = 0, start = c->i;
	double v, mul = 1;

	while (c->i < c->n && k + 1 < sizeof(buf) &&
	       (isdigit((unsigned char)c->s[c->i]) || c->s[c->i] == '.' ||
		((c->s[c->i] == 'e' || c->s[c->i] == 'E') && c->i + 1 < c->n &&
		 (isdigit((unsigned char)c->s[c->i + 1]) || c->s[c->i + 1] == '-' || c->s[c->i + 1] == '+')) ||
		((c->s[c->i] == '-' || c->s[c->i] == '+') && k > 0 && (buf[k - 1] == 'e' || buf[k - 1] == 'E'))))
		buf[k++] = c->s[c->i++];
	buf[k] = '\0';
	if (mt_parse_num(buf, &v)) {
		expr_fail(c, start, "bad number '%.*s'", (int)k, p);
		return d_of(MT_VT_NUM);
	}
	if (c->i < c->n && strchr("KMGT", c->s[c->i])) {
		int bin = c->i + 1 < c->n && c->s[c->i + 1] == 'i';
		int e3 = (int)(strchr("KMGT", c->s[c->i]) - "KMGT") + 1;
		mul = bin ? pow(1024, e3) : pow(1000, e3);
		c->i += bin ? 2 : 1;
	}
	if (c->i < c->n && (isalpha((unsigned char)c->s[c->i]) || c->s[c->i] == '_')) {
		expr_fail(c, start, "bad number '%.*s' (suffixes: K M G T, Ki Mi Gi Ti)",
		     (int)(c->i - start + 1), p);
		return d_of(MT_VT_NUM);
	}
	expr_emit(c, OP_NUM, 0, v * mul);
	expr_push(c, 1);
	return d_of(MT_VT_NUM);
}

static int fn_find(const char *p, size_t k)
{
	int f;

	for (f = 0; f < FN_N; f++)
		if (strlen(fns[f].name) == k && !memcmp(fns[f].name, p, k))
			return f;
	return -1;
}

static int coll_ok(const char *s) { return mt_coll_parse(s) >= 0; }

/* the literal string at instruction i */
static const char *lit(struct cc *c, int ins)
{
	return ins >= 0 && c->e->code[ins].op == OP_STR ? c->e->pool + c->e->code[ins].a : NULL;
}

/* if(cond, a, b), lazy: cond JF else; a JMP end; else: b */
static struct desc parse_if(struct cc *c, size_t at)
{
	int jf, jmp;
	struct desc cond, a, b, d = d_of(MT_VT_NUM);

	cond = parse_expr(c);
	need_num(c, cond, at, "if()'s condition");
	expect(c, ",");
	jf = expr_emit(c, OP_JF, 0, 0);
	expr_push(c, -1);
	a = parse_expr(c);
	expect(c, ",");
	jmp = expr_emit(c, OP_JMP, 0, 0);
	expr_push(c, -1);
	if (jf >= 0)
		c->e->code[jf].a = c->e->n;
	b = parse_expr(c);
	if (jmp >= 0)
		c->e->code[jmp].a = c->e->n;
	expect(c, ")");
	d.type = a.type == b.type ? a.type : MT_VT_ANY;
	return d;
}

/* best() and least_mem(): knob names and enumeration values, given as
 * literals, become numbers now. */
static void check_best_args(struct cc *c, const struct fninfo *fi, const struct desc *args,
			    int argc, size_t at)
{
	int i;

	if (argc % 2) {
		expr_fail(c, at, "%s() takes knob, value pairs", fi->name);
		return;
	}
	for (i = 0; i < argc; i += 2) {
		const char *k = lit(c, args[i].str_ins), *v;
		int b;
		if (!k) {
			expr_fail(c, at, "%s(): argument %d must be a knob name in quotes", fi->name,
			     i + 1);
			break;
		}
		for (b = 0; b < MT_BK_N; b++)
			if (!strcmp(k, best_knobs[b]))
				break;
		if (b == MT_BK_N) {
			expr_fail(c, at, "%s(\"%s\"): unknown knob; expected tp, pp, cp, ep, etp, vpp, "
			     "mbs, recompute, dist_opt, sp or cp_comm", fi->name, k);
			break;
		}
		c->e->code[args[i].str_ins].op = OP_NUM;
		c->e->code[args[i].str_ins].n = b;
		v = lit(c, args[i + 1].str_ins);
		if (v) {
			int idx = mt_fact_enum(mt_best_knob_fact[b], v);
			if (idx < 0) {
				expr_fail(c, at, "%s(): '%s' is not a value of %s", fi->name, v, k);
				break;
			}
			c->e->code[args[i + 1].str_ins].op = OP_NUM;
			c->e->code[args[i + 1].str_ins].n = idx;
		}
	}
	if (argc > 2 && !c->failed) {
		/* (tp, pp, cp, ep, etp) combine; the others stand alone */
		for (i = 0; i < argc; i += 2) {
			int b = (int)c->e->code[args[i].str_ins].n;
			if (b > MT_BK_ETP)
				expr_fail(c, at, "%s(): '%s' can only be asked alone; tp, pp, cp, ep and "
				     "etp combine", fi->name, best_knobs[b]);
		}
	}
}

static struct desc parse_call(struct cc *c, int f, size_t at)
{
	struct desc args[MAX_ARGS];
	int argc = 0, i, ins;
	struct desc d = d_of(MT_VT_NUM);
	const struct fninfo *fi = &fns[f];

	if (fi->stage > c->e->stage)
		c->e->stage = fi->stage;
	if (f == FN_BEST || f == FN_LEAST_MEM)
		c->e->uses_best = 1;
	if (f == FN_IF)
		return parse_if(c, at);
	if (!accept(c, ")")) {
		do {
			size_t argat;
			skip_ws(c);
			argat = c->i;
			if (argc == MAX_ARGS) {
				expr_fail(c, argat, "%s() takes at most %d arguments", fi->name, fi->max);
				return d;
			}
			args[argc] = parse_expr(c);
			if ((int)strlen(fi->args) > argc) {
				char k = fi->args[argc];
				if (k == 'n' && args[argc].type == MT_VT_STR)
					expr_fail(c, argat, "%s(): argument %d must be a number", fi->name,
					     argc + 1);
				if (k == 's' && args[argc].type == MT_VT_NUM)
					expr_fail(c, argat, "%s(): argument %d must be a string", fi->name,
					     argc + 1);
			}
			argc++;
		} while (accept(c, ","));
		expect(c, ")");
	}
	if (c->failed)
		return d;
	if (argc < fi->min || argc > fi->max) {
		if (fi->min == fi->max)
			expr_fail(c, at, "%s() takes %d argument%s, got %d", fi->name, fi->min,
			     fi->min == 1 ? "" : "s", argc);
		else
			expr_fail(c, at, "%s() takes %d to %d arguments, got %d", fi->name, fi->min,
			     fi->max, argc);
		return d;
	}
	/* literal arguments checked now */
	switch (f) {
	case FN_VERSION: {
		const char *s = lit(c, args[0].str_ins);
		if (s && mt_ver_code(s) < 0)
			expr_fail(c, at, "version(\"%s\"): expected a version like \"2.26\" or \"2.21.5\"", s);
		break;
	}
	case FN_BUSBW: case FN_COLL_TIME: case FN_PLATEAU: case FN_KNEE: case FN_PROVENANCE: {
		const char *s = lit(c, args[0].str_ins);
		if (s && !coll_ok(s))
			expr_fail(c, at, "%s(\"%s\"): unknown collective; expected all_reduce, all_gather, "
			     "reduce_scatter, alltoall, sendrecv or broadcast", fi->name, s);
		break;
	}
	case FN_GEMM: {
		const char *s = lit(c, args[0].str_ins);
		if (s && mt_dtype_parse(s) < 0)
			expr_fail(c, at, "gemm_tflops(\"%s\"): unknown type; expected bf16, fp16, fp8, tf32 "
			     "or fp32", s);
		break;
	}
	case FN_OFFLOAD: {
		const char *s = lit(c, args[0].str_ins);
		if (s && strcmp(s, "h2d") && strcmp(s, "d2h") && strcmp(s, "bidir"))
			expr_fail(c, at, "offload_gbps(\"%s\"): expected h2d, d2h or bidir", s);
		break;
	}
	case FN_BEST: case FN_LEAST_MEM:
		check_best_args(c, fi, args, argc, at);
		break;
	default:
		break;
	}
	for (i = 0; i < argc && !c->failed; i++)
		if (args[i].str_ins >= 0 && c->e->code[args[i].str_ins].op == OP_STR)
			c->e->code[args[i].str_ins].b = 1; /* an argument, not a result */
	ins = expr_emit(c, OP_CALL, f, 0);
	if (ins >= 0) {
		c->e->code[ins].b = argc;
		c->e->code[ins].c = -1;
		if (fi->cached)
			c->e->code[ins].c = c->e->ncache++;
	}
	expr_push(c, 1 - argc);
	if (f == FN_MIN || f == FN_MAX) {
		for (i = 0; i < argc; i++)
			need_num(c, args[i], at, fi->name);
	}
	if (f == FN_PROVENANCE)
		d.type = MT_VT_STR;
	return d;
}

static struct desc parse_primary(struct cc *c)
{
	size_t at;
	char ch;

	skip_ws(c);
	at = c->i;
	if (c->i >= c->n) {
		expr_fail(c, at, "expected a value at the end of the expression");
		return d_of(MT_VT_NUM);
	}
	ch = c->s[c->i];
	if (ch == '(') {
		struct desc d;
		c->i++;
		d = parse_expr(c);
		expect(c, ")");
		d.efact = -1;
		d.str_ins = -1;
		d.bool_fact = 0;
		return d;
	}
	if (ch == '"')
		return parse_string(c);
	if (isdigit((unsigned char)ch) || (ch == '.' && c->i + 1 < c->n && isdigit((unsigned char)c->s[c->i + 1])))
		return parse_number(c);
	if (isalpha((unsigned char)ch) || ch == '_') {
		size_t k = 0;
		const char *p = c->s + c->i;
		int f;

		while (c->i + k < c->n &&
		       (isalnum((unsigned char)p[k]) || p[k] == '_' || p[k] == '.'))
			k++;
		c->i += k;
		if ((k == 4 && !memcmp(p, "true", 4)) || (k == 2 && !memcmp(p, "on", 2))) {
			expr_emit(c, OP_NUM, 0, 1);
			expr_push(c, 1);
			return d_of(MT_VT_NUM);
		}
		if ((k == 5 && !memcmp(p, "false", 5)) || (k == 3 && !memcmp(p, "off", 3))) {
			expr_emit(c, OP_NUM, 0, 0);
			expr_push(c, 1);
			return d_of(MT_VT_NUM);
		}
		if (k == 3 && !memcmp(p, "nan", 3)) {
			expr_emit(c, OP_NUM, 0, NAN);
			expr_push(c, 1);
			return d_of(MT_VT_NUM);
		}
		if (k == 3 && !memcmp(p, "inf", 3)) {
			expr_emit(c, OP_NUM, 0, INFINITY);
			expr_push(c, 1);
			return d_of(MT_VT_NUM);
		}
		if (accept(c, "(")) {
			f = fn_find(p, k);
			if (f < 0) {
				expr_fail(c, at, "unknown function '%.*s'", (int)k, p);
				return d_of(MT_VT_NUM);
			}
			return parse_call(c, f, at);
		}
		f = mt_fact_find(p, k);
		if (f < 0) {
			const char *sug = mt_fact_suggest(p, k);
			if (sug)
				expr_fail(c, at, "unknown name '%.*s' (did you mean '%s'?)", (int)k, p, sug);
			else
				expr_fail(c, at, "unknown name '%.*s' (megatune rules facts lists them)",
				     (int)k, p);
			return d_of(MT_VT_NUM);
		} else {
			struct desc d = d_of(mt_facts[f].type == MT_FT_STR ? MT_VT_STR : MT_VT_NUM);
			expr_emit(c, OP_FACT, f, 0);
			expr_push(c, 1);
			add_fact(c, f);
			if (mt_facts[f].type == MT_FT_ENUM)
				d.efact = f;
			if (mt_facts[f].type == MT_FT_BOOL)
				d.bool_fact = 1;
			return d;
		}
	}
	expr_fail(c, at, "unexpected '%c'", ch);
	return d_of(MT_VT_NUM);
}

static struct desc parse_unary(struct cc *c);

static struct desc parse_power(struct cc *c)
{
	struct desc d = parse_primary(c);
	size_t at;

	skip_ws(c);
	at = c->i;
	if (accept(c, "^")) {
		struct desc r;
		if (++c->depth > NEST_MAX) {
			expr_fail(c, at, "expression nested more than %d deep", NEST_MAX);
			return d_of(MT_VT_NUM);
		}
		r = parse_unary(c);
		c->depth--;
		need_num(c, d, at, "'^'");
		need_num(c, r, at, "'^'");
		expr_emit(c, OP_POW, 0, 0);
		expr_push(c, -1);
		return d_of(MT_VT_NUM);
	}
	return d;
}

static struct desc parse_unary(struct cc *c)
{
	size_t at;

	skip_ws(c);
	at = c->i;
	if (accept(c, "-")) {
		struct desc d;
		if (++c->depth > NEST_MAX) {
			expr_fail(c, at, "expression nested more than %d deep", NEST_MAX);
			return d_of(MT_VT_NUM);
		}
		d = parse_unary(c);
		c->depth--;
		need_num(c, d, at, "'-'");
		expr_emit(c, OP_NEG, 0, 0);
		return d_of(MT_VT_NUM);
	}
	return parse_power(c);
}

/* The binary arithmetic operators, left-associative, loosest level first:
 * level 0 is + and -, level 1 is *, / and %, whose operands are unary. */
static struct desc parse_arith(struct cc *c, int level)
{
	static const struct { const char *tok; int op; } ops[2][4] = {
		{ { "+", OP_ADD }, { "-", OP_SUB } },
		{ { "*", OP_MUL }, { "/", OP_DIV }, { "%", OP_MOD } },
	};
	struct desc d = level ? parse_unary(c) : parse_arith(c, 1);

	for (;;) {
		int i;
		size_t at;
		struct desc r;

		skip_ws(c);
		at = c->i;
		for (i = 0; ops[level][i].tok && !accept(c, ops[level][i].tok); i++)
			;
		if (!ops[level][i].tok)
			return d;
		r = level ? parse_unary(c) : parse_arith(c, 1);
		need_num(c, d, at, "arithmetic");
		need_num(c, r, at, "arithmetic");
		expr_emit(c, ops[level][i].op, 0, 0);
		expr_push(c, -1);
		d = d_of(MT_VT_NUM);
	}
}

/* An enumeration fact compared with a string literal: the literal becomes the
 * value's index. */
static void enum_literal(struct cc *c, int efact, int str_ins, size_t at)
{
	const char *s = lit(c, str_ins);
	int idx;

	if (!s)
		return;
	idx = mt_fact_enum(efact, s);
	if (idx < 0) {
		char vals[160] = "";
		const char *const *v;
		size_t k = 0;
		for (v = mt_facts[efact].enums; *v && k < sizeof(vals) - 24; v++)
			k += (size_t)snprintf(vals + k, sizeof(vals) - k, "%s%s", k ? ", " : "", *v);
		expr_fail(c, at, "%s has no value \"%s\"; expected one of %s", mt_facts[efact].name, s,
		     vals);
		return;
	}
	c->e->code[str_ins].op = OP_NUM;
	c->e->code[str_ins].n = idx;
}

static struct desc parse_cmp(struct cc *c)
{
	static const struct { const char *tok; int op; } ops[] = {
		{ "==", OP_EQ }, { "!=", OP_NE }, { "<=", OP_LE }, { ">=", OP_GE },
		{ "<", OP_LT }, { ">", OP_GT },
	};
	struct desc d = parse_arith(c, 0), r;
	size_t at;
	unsigned i;

	skip_ws(c);
	at = c->i;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!accept(c, ops[i].tok))
			continue;
		r = parse_arith(c, 0);
		if (d.efact >= 0 && r.str_ins >= 0) {
			enum_literal(c, d.efact, r.str_ins, at);
			r.type = MT_VT_NUM;
		} else if (r.efact >= 0 && d.str_ins >= 0) {
			enum_literal(c, r.efact, d.str_ins, at);
			d.type = MT_VT_NUM;
		}
		if (d.type != MT_VT_ANY && r.type != MT_VT_ANY && d.type != r.type)
			expr_fail(c, at, "'%s' compares %s with %s", ops[i].tok, type_name(d.type),
			     type_name(r.type));
		if (!c->failed) { /* compared, not a result */
			if (d.str_ins >= 0 && c->e->code[d.str_ins].op == OP_STR)
				c->e->code[d.str_ins].b = 1;
			if (r.str_ins >= 0 && c->e->code[r.str_ins].op == OP_STR)
				c->e->code[r.str_ins].b = 1;
		}
		if (ops[i].op != OP_EQ && ops[i].op != OP_NE &&
		    (d.type == MT_VT_STR || r.type == MT_VT_STR))
			expr_fail(c, at, "'%s' needs numbers", ops[i].tok);
		expr_emit(c, ops[i].op, 0, 0);
		expr_push(c, -1);
		skip_ws(c);
		if (c->i < c->n && strchr("<>=!", c->s[c->i]) && c->s[c->i] && !(c->s[c->i] == '!' && c->i + 1 < c->n && c->s[c->i + 1] != '='))
			expr_fail(c, c->i, "comparisons do not chain; use && between them");
		return d_of(MT_VT_NUM);
	}
	return d;
}

static struct desc parse_not(struct cc *c)
{
	size_t at;

	skip_ws(c);
	at = c->i;
	if (c->depth > NEST_MAX) {
		expr_fail(c, at, "expression nested more than %d deep", NEST_MAX);
		return d_of(MT_VT_NUM);
	}
	if (((c->i + 1 >= c->n || c->s[c->i + 1] != '=') && accept(c, "!")) || accept(c, "not")) {
		const char *op = c->s[at] == '!' ? "'!'" : "'not'";
		struct desc d;
		c->depth++;
		d = parse_not(c);
		c->depth--;
		need_num(c, d, at, op);
		expr_emit(c, OP_NOT, 0, 0);
		return d_of(MT_VT_NUM);
	}
	return parse_cmp(c);
}

/* || (or) at level 0 and && (and) at level 1, left-associative: the jump
 * skips the right side once the left decides. */
static struct desc parse_logic(struct cc *c, int level)
{
	static const struct { const char *sym, *word, *name; int op; } ops[2] = {
		{ "||", "or", "'||'", OP_OR }, { "&&", "and", "'&&'", OP_AND },
	};
	struct desc d = level ? parse_not(c) : parse_logic(c, 1);

	for (;;) {
		int j;
		size_t at;
		skip_ws(c);
		at = c->i;
		if (!accept(c, ops[level].sym) && !accept(c, ops[level].word))
			return d;
		need_num(c, d, at, ops[level].name);
		j = expr_emit(c, ops[level].op, 0, 0);
		expr_push(c, -1);
		d = level ? parse_not(c) : parse_logic(c, 1);
		need_num(c, d, at, ops[level].name);
		expr_emit(c, OP_BOOL, 0, 0);
		if (j >= 0)
			c->e->code[j].a = c->e->n;
		d = d_of(MT_VT_NUM);
	}
}

/* Every path that recurses goes through here: a bound on the nesting keeps
 * a hostile rule file from exhausting the C stack. */
static struct desc parse_expr(struct cc *c)
{
	struct desc d;

	if (++c->depth > NEST_MAX) {
		expr_fail(c, c->i, "expression nested more than %d deep", NEST_MAX);
		c->depth--;
		return d_of(MT_VT_NUM);
	}
	d = parse_logic(c, 0);
	c->depth--;
	return d;
}

void mt_expr_free(struct mt_expr *e)
{
	if (!e)
		return;
	free(e->code);
	free(e->caches);
	free(e->pool);
	free(e);
}

struct mt_expr *mt_expr_compile(const char *src, size_t n, struct mt_cerr *ce)
{
	struct cc c;
	struct desc d;
	struct mt_expr *e = calloc(1, sizeof(*e));

	if (!e) {
		if (ce) {
			ce->col = 0;
			snprintf(ce->msg, sizeof(ce->msg), "out of memory");
		}
		return NULL;
	}
	e->bare = -1;
	memset(&c, 0, sizeof(c));
	c.s = src;
	c.n = n;
	c.e = e;
	c.ce = ce;
	skip_ws(&c);
	if (c.i >= c.n)
		expr_fail(&c, 0, "empty expression");
	d = parse_expr(&c);
	skip_ws(&c);
	if (!c.failed && c.i < c.n)
		expr_fail(&c, c.i, "unexpected '%.16s' after the expression", src + c.i);
	if (!c.failed && e->maxdepth > STACK_MAX)
		expr_fail(&c, 0, "expression too deep (more than %d values on the stack)", STACK_MAX);
	if (!c.failed && e->ncache) {
		e->caches = calloc((size_t)e->ncache, sizeof(*e->caches));
		if (!e->caches)
			expr_fail(&c, 0, "out of memory");
	}
	if (c.failed) {
		mt_expr_free(e);
		return NULL;
	}
	e->type = d.type;
	if (e->n == 1 && e->code[0].op == OP_FACT)
		e->bare = e->code[0].a;
	return e;
}

int mt_expr_stage(const struct mt_expr *e) { return e->stage; }
unsigned mt_expr_knobs(const struct mt_expr *e) { return e->knobs; }
int mt_expr_type(const struct mt_expr *e) { return e->type; }
int mt_expr_bare_fact(const struct mt_expr *e) { return e->bare; }
int mt_expr_uses_best(const struct mt_expr *e) { return e->uses_best; }

const int *mt_expr_facts(const struct mt_expr *e, int *n)
{
	*n = e->nfacts;
	return e->facts;
}

int mt_expr_check_enum(const struct mt_expr *e, int fact, struct mt_cerr *ce)
{
	int i;

	for (i = 0; i < e->n; i++) {
		const char *s;
		if (e->code[i].op != OP_STR || e->code[i].b)
			continue;
		s = e->pool + e->code[i].a;
		if (mt_fact_enum(fact, s) < 0) {
			if (ce) {
				ce->col = 0;
				snprintf(ce->msg, sizeof(ce->msg), "%s has no value \"%s\"",
					 mt_facts[fact].name, s);
			}
			return -1;
		}
	}
	return 0;
}
