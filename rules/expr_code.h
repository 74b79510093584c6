/* SPDX-License-Identifier: MIT */
/* expr_code: the compiled form of an expression, private to rules/: the
 * compiler (expr.c) writes it, the stack machine (vm.c) runs it.  Nothing
 * outside expr.c and vm.c includes this header.
 */
#ifndef MT_EXPR_CODE_H
#define MT_EXPR_CODE_H

#include "expr.h"

enum op {
	OP_NUM, OP_STR, OP_FACT, OP_NEG, OP_NOT, OP_BOOL,
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_POW,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	OP_AND, OP_OR,  /* a: target; short-circuit, leaves 0/1 */
	OP_JF, OP_JMP,  /* a: target */
	OP_CALL,        /* a: function, b: argc, c: cache slot or -1 */
};

struct ins {
	int op, a, b, c;
	double n;
	const char *s;  /* OP_STR: points into the expression's string pool */
};

enum fn {
	FN_MIN, FN_MAX, FN_ABS, FN_CEIL, FN_FLOOR, FN_ROUND, FN_LOG2, FN_SQRT, FN_POW,
	FN_DIVIDES, FN_IF, FN_HAS, FN_VERSION, FN_BUSBW, FN_COLL_TIME, FN_PLATEAU, FN_KNEE,
	FN_GEMM, FN_OFFLOAD, FN_PER_DOMAIN, FN_BEST, FN_LEAST_MEM, FN_PROVENANCE, FN_N
};

#define CACHE_WAYS 4
#define MAX_ARGS 10
#define STACK_MAX 64

struct cache {
	int used, next;
	double key[CACHE_WAYS][4];
	const char *skey[CACHE_WAYS];
	const struct mt_cluster *cl[CACHE_WAYS];
	double val[CACHE_WAYS];
};

struct mt_expr {
	struct ins *code;
	int n, cap;
	int stage;
	unsigned knobs;
	int type;
	int bare;           /* the fact it is exactly, or -1 */
	int facts[64];
	int nfacts;
	int uses_best;      /* calls best() or least_mem() */
	struct cache *caches;
	int ncache;
	char *pool;         /* string literals */
	size_t pool_len, pool_cap;
	int depth, maxdepth;
};

/* The fact each best() knob (enum mt_best_knob) reads its values from. */
extern const int mt_best_knob_fact[MT_BK_N];

#endif
