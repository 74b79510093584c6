/* SPDX-License-Identifier: MIT */
/* The rules' expression language: values, operators, functions, the curve
 * look-ups on a real profile, compile errors with their column, and message
 * templates with their formats. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "../../lib/sbuf.h"
#include "../../rules/expr.h"
#include "../../perfmodel/cluster.h"

static struct mt_val facts[MT_F_N];
static struct mt_cluster *h100;
static struct mt_env env;

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	int i;

	(void)state;
	for (i = 0; i < MT_F_N; i++) {
		facts[i].n = NAN;
		facts[i].s = NULL;
	}
	facts[MT_F_CFG_TP].n = 4;
	facts[MT_F_CFG_CP].n = 2;
	facts[MT_F_CFG_SP].n = 1;
	facts[MT_F_CFG_CP_COMM].n = MT_CP_A2A_P2P;
	facts[MT_F_MODEL_HIDDEN].n = 8192;
	facts[MT_F_MODEL_HEADS].n = 64;
	facts[MT_F_JOB_SEQ].n = 8192;
	facts[MT_F_CLUSTER_NVLINK_DOMAIN].n = 8;
	facts[MT_F_MODEL_NAME].s = "llama3-70b";
	facts[MT_F_CLUSTER_NCCL].n = 22103; /* 2.21.3 */
	if (mt_cluster_load("dgx-h100", &h100, &err))
		return -1;
	env.facts = facts;
	env.cluster = h100;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mt_cluster_free(h100);
	return 0;
}

static struct mt_val eval(const char *src)
{
	static char str[256];
	struct mt_cerr ce;
	struct mt_expr *e = mt_expr_compile(src, strlen(src), &ce);
	struct mt_val v;

	if (!e)
		fail_msg("'%s' does not compile: %s (column %d)", src, ce.msg, ce.col);
	v = mt_expr_eval(e, &env);
	if (v.s) { /* a string result lives in the expression */
		snprintf(str, sizeof(str), "%s", v.s);
		v.s = str;
	}
	mt_expr_free(e);
	return v;
}

static double num(const char *src)
{
	struct mt_val v = eval(src);

	if (v.s)
		fail_msg("'%s' is a string", src);
	return v.n;
}

/* The message of a compile error, and its column. */
static const char *error_of(const char *src, int *col)
{
	static struct mt_cerr ce;
	struct mt_expr *e = mt_expr_compile(src, strlen(src), &ce);

	if (e) {
		mt_expr_free(e);
		fail_msg("'%s' compiles, expected an error", src);
	}
	if (col)
		*col = ce.col;
	return ce.msg;
}

static void arithmetic_and_precedence(void **state)
{
	(void)state;
	assert_true(num("1 + 2 * 3") == 7);
	assert_true(num("(1 + 2) * 3") == 9);
	assert_true(num("2 ^ 3 ^ 2") == 512);     /* right-associative */
	assert_true(num("-2 ^ 2") == -4);
	assert_true(num("7 % 4") == 3);
	assert_true(num("10 - 3 - 2") == 5);      /* left-associative */
	assert_true(num("24 / 4 / 2") == 3);
	assert_true(num("2 * 9 % 4 - 1 + 3") == 4);
	assert_true(num("10 / 4") == 2.5);
	assert_true(isnan(num("1 / 0")));          /* n/a, not inf */
	assert_true(num("40M") == 40e6);
	assert_true(num("4Gi") == 4.0 * 1073741824);
	assert_true(num("64Ki") == 65536);
	assert_true(num("1.5e3") == 1500);
	assert_true(num("config.tp * config.cp") == 8);
	assert_true(num("model.hidden / config.tp") == 2048);
}

static void comparisons_and_logic(void **state)
{
	(void)state;
	assert_true(num("config.tp > 2 && config.cp == 2") == 1);
	assert_true(num("config.tp > 8 || config.cp > 4") == 0);
	assert_true(num("not (config.tp > 8)") == 1);
	assert_true(num("config.tp <= 4 and config.sp") == 1);
	assert_true(num("1 || 0 && 0") == 1);     /* && binds tighter than || */
	assert_true(num("(1 || 0) && 0") == 0);
	assert_true(num("0 or 1 and 1 or 0") == 1);
	assert_true(num("on") == 1 && num("off") == 0 && num("true") == 1);
	/* n/a compares false both ways, and has() tells it apart */
	assert_true(num("cluster.cc > 9") == 0);
	assert_true(num("cluster.cc <= 9") == 0);
	assert_true(num("has(cluster.cc)") == 0);
	assert_true(num("has(config.tp)") == 1);
	assert_true(num("!has(cluster.cc)") == 1);
	/* && and || short-circuit: the right side is not needed */
	assert_true(num("config.tp > 8 && 1 / 0 > 1") == 0);
	assert_true(num("config.tp > 1 || 1 / 0 > 1") == 1);
	/* strings */
	assert_true(num("model.name == \"llama3-70b\"") == 1);
	assert_true(num("model.name != \"llama3-8b\"") == 1);
}

static void enumerations_compare_by_name(void **state)
{
	int col;

	(void)state;
	assert_true(num("config.cp_comm == \"a2a+p2p\"") == 1);
	assert_true(num("\"p2p\" != config.cp_comm") == 1);
	/* a misspelt value is caught when the rule loads, with the choices */
	assert_non_null(strstr(error_of("config.cp_comm == \"a2x\"", &col),
			       "config.cp_comm has no value \"a2x\"; expected one of p2p, all_gather, a2a, a2a+p2p"));
}

static void functions(void **state)
{
	(void)state;
	assert_true(num("min(3, config.tp, 9)") == 3);
	assert_true(num("max(3, config.tp, 9)") == 9);
	assert_true(isnan(num("max(1, cluster.cc)")));
	assert_true(num("ceil(7 / 2)") == 4 && num("floor(7 / 2)") == 3 && num("round(2.5)") == 3);
	assert_true(num("log2(1024)") == 10 && num("abs(-3)") == 3 && num("sqrt(16)") == 4);
	assert_true(num("pow(2, 10)") == 1024);
	assert_true(num("divides(config.tp, model.heads)") == 1);
	assert_true(num("divides(3, model.heads)") == 0);
	assert_true(num("divides(0, 8)") == 0);
	assert_true(num("divides(2.5, 5)") == 0);
	assert_true(num("version(\"2.21.3\")") == 22103);
	assert_true(num("cluster.nccl < version(\"2.26\")") == 1);
	/* if() evaluates one side only */
	assert_true(num("if(config.tp > 1, 10, 1 / 0)") == 10);
	assert_true(num("if(config.tp > 8, 1 / 0, 20)") == 20);
	assert_string_equal(eval("if(config.sp, \"on\", \"off\")").s, "on");
	assert_true(num("per_domain(16, 2)") == 4);
	assert_true(num("per_domain(4, 1)") == 4);
}

static void curves_of_the_profile(void **state)
{
	double plateau, knee, at_knee, below, t;

	(void)state;
	/* the measured all-reduce inside a DGX H100 */
	assert_true(num("busbw(\"all_reduce\", 8, 8, 256Mi)") > 300);
	assert_true(num("busbw(\"all_reduce\", 8, 8, 256Mi)") > num("busbw(\"all_reduce\", 8, 8, 64Ki)"));
	plateau = num("plateau(\"reduce_scatter\", 64, 8)");
	knee = num("knee(\"reduce_scatter\", 64, 8, 0.9)");
	assert_true(plateau > 10 && plateau < 1000);
	assert_true(knee > 1e5 && knee < 1e11);
	/* the knee is where the curve reaches 90% of its plateau, and just below it
	 * does not */
	{
		char src[160];
		snprintf(src, sizeof(src), "busbw(\"reduce_scatter\", 64, 8, %.17g)", knee);
		at_knee = num(src);
		snprintf(src, sizeof(src), "busbw(\"reduce_scatter\", 64, 8, %.17g)", knee / 1.2);
		below = num(src);
	}
	assert_true(at_knee >= 0.9 * plateau);
	assert_true(below < 0.9 * plateau);
	t = num("coll_time(\"all_gather\", 8, 8, 1Gi)");
	assert_true(t > 1e-3 && t < 1);
	assert_true(num("coll_time(\"all_gather\", 1, 1, 1Gi)") == 0);
	assert_true(num("gemm_tflops(\"bf16\", 8192, 8192, 8192)") > 500);
	assert_true(num("offload_gbps(\"h2d\")") > 10);
	/* where a curve comes from: 8-GPU NVLink all-reduce published, 4-GPU derived */
	assert_string_equal(eval("provenance(\"all_reduce\", 8, 8)").s, "published measurement");
	assert_string_equal(eval("provenance(\"reduce_scatter\", 8, 8)").s, "measured");
	assert_string_equal(eval("provenance(\"reduce_scatter\", 4, 4)").s, "derived, not measured");
	/* without a cluster the look-ups are n/a */
	env.cluster = NULL;
	assert_true(isnan(num("busbw(\"all_reduce\", 8, 8, 1Mi)")));
	env.cluster = h100;
	/* best() without a search is n/a */
	assert_true(isnan(num("best(\"tp\", 4)")));
}

static void compile_errors_say_what_and_where(void **state)
{
	int col;

	(void)state;
	assert_non_null(strstr(error_of("config.tpp > 1", &col), "unknown name 'config.tpp' (did you mean 'config.tp'?)"));
	assert_int_equal(col, 0);
	assert_non_null(strstr(error_of("config.tp > 1 && cp_comm == 2", &col), "did you mean 'config.cp_comm'"));
	assert_int_equal(col, 17);
	assert_non_null(strstr(error_of("config.tp >", &col), "expected a value at the end"));
	assert_non_null(strstr(error_of("(config.tp > 1", NULL), "expected ')'"));
	assert_non_null(strstr(error_of("!model.name", NULL), "'!' needs a number"));
	assert_non_null(strstr(error_of("not model.name", NULL), "'not' needs a number"));
	assert_non_null(strstr(error_of("1 and model.name", NULL), "'&&' needs a number"));
	assert_non_null(strstr(error_of("model.name or 1", NULL), "'||' needs a number"));
	assert_non_null(strstr(error_of("config.tp > 1)", NULL), "unexpected ')'"));
	assert_non_null(strstr(error_of("frobnicate(1)", NULL), "unknown function 'frobnicate'"));
	assert_non_null(strstr(error_of("min()", NULL), "min() takes 1 to 8 arguments, got 0"));
	assert_non_null(strstr(error_of("divides(1)", NULL), "divides() takes 2 arguments, got 1"));
	assert_non_null(strstr(error_of("busbw(\"allreduce\", 8, 8, 1)", NULL), "unknown collective"));
	assert_non_null(strstr(error_of("gemm_tflops(\"int4\", 1, 1, 1)", NULL), "unknown type"));
	assert_non_null(strstr(error_of("version(\"two\")", NULL), "expected a version"));
	assert_non_null(strstr(error_of("best(\"tpp\", 4)", NULL), "unknown knob"));
	assert_non_null(strstr(error_of("best(\"tp\", 4, \"mbs\", 1)", NULL), "'mbs' can only be asked alone"));
	assert_non_null(strstr(error_of("best(\"recompute\", \"partial\")", NULL), "'partial' is not a value of recompute"));
	assert_non_null(strstr(error_of("model.name + 1", NULL), "arithmetic needs a number"));
	assert_non_null(strstr(error_of("config.tp == \"four\"", NULL), "compares a number with a string"));
	assert_non_null(strstr(error_of("1 < 2 < 3", NULL), "comparisons do not chain"));
	assert_non_null(strstr(error_of("\"open", NULL), "unterminated string"));
	assert_non_null(strstr(error_of("12abc", NULL), "bad number"));
	assert_non_null(strstr(error_of("", NULL), "empty expression"));
	assert_non_null(strstr(error_of("config.tp $ 2", NULL), "unexpected '$ 2'"));
}

static void what_an_expression_depends_on(void **state)
{
	struct mt_cerr ce;
	const char *src = "config.tp > 1 && shape.tp_exposed_s > 0.1 * config.tp";
	struct mt_expr *e = mt_expr_compile(src, strlen(src), &ce);
	const int *f;
	int n;

	(void)state;
	assert_non_null(e);
	assert_int_equal(mt_expr_stage(e), MT_ST_SHAPE);
	assert_true(mt_expr_knobs(e) & K_TP);
	assert_true(mt_expr_knobs(e) & K_TP_OVERLAP);
	f = mt_expr_facts(e, &n);
	assert_int_equal(n, 2); /* each fact once */
	assert_int_equal(f[0], MT_F_CFG_TP);
	assert_int_equal(f[1], MT_F_SHAPE_TP_EXPOSED_S);
	mt_expr_free(e);
	src = "search.rank == 1 && best(\"tp\", 8) > 0";
	e = mt_expr_compile(src, strlen(src), &ce);
	assert_int_equal(mt_expr_stage(e), MT_ST_SEARCH);
	mt_expr_free(e);
	e = mt_expr_compile("model.layers", 12, &ce);
	assert_int_equal(mt_expr_bare_fact(e), MT_F_MODEL_LAYERS);
	assert_int_equal(mt_expr_stage(e), MT_ST_STATIC);
	mt_expr_free(e);
}

static const char *render(const char *src)
{
	static char out[512];
	struct mt_cerr ce;
	struct mt_tmpl *t = mt_tmpl_compile(src, strlen(src), &ce);
	struct sbuf sb = SBUF_INIT;

	if (!t)
		fail_msg("template '%s' does not compile: %s", src, ce.msg);
	mt_tmpl_render(t, &env, &sb);
	snprintf(out, sizeof(out), "%s", sb.buf);
	sbuf_release(&sb);
	mt_tmpl_free(t);
	return out;
}

static void templates_and_formats(void **state)
{
	struct mt_cerr ce;

	(void)state;
	assert_string_equal(render("TP {config.tp} of {cluster.nvlink_domain}"), "TP 4 of 8");
	assert_string_equal(render("{0.253:pct}"), "25.3%");
	assert_string_equal(render("{3Gi:gib}"), "3.0 GiB");
	assert_string_equal(render("{64Mi:bytes} {1536:bytes} {12:bytes}"), "64.0 MiB 1.50 KiB 12 B");
	assert_string_equal(render("{40M:params} {1.2e9:params} {512:params}"), "40.0M 1.20B 512");
	assert_string_equal(render("{2.5:s} {0.0123:s} {0.0000042:s} {0:s}"), "2.500 s 12.30 ms 4.2 us 0 s");
	assert_string_equal(render("{412.4:gbps} {7.25:gbps}"), "412 GB/s 7.2 GB/s");
	assert_string_equal(render("{1.274:x} {3.14159:.2}"), "1.27x 3.14");
	assert_string_equal(render("{0.031:vs}, {-0.02:vs}, {0.0001:vs}"), "3.1% slower, 2.0% faster, as fast");
	/* a bare boolean or enumeration fact prints its name */
	assert_string_equal(render("sp {config.sp}, cp {config.cp_comm}"), "sp on, cp a2a+p2p");
	assert_string_equal(render("{cluster.cc} {model.name}"), "n/a llama3-70b");
	assert_string_equal(render("{{literal}} {if(config.tp > 2, \"big: {x}\", \"small\")}"),
			    "{literal} big: {x}");
	assert_null(mt_tmpl_compile("{config.tp", 10, &ce));
	assert_non_null(strstr(ce.msg, "without a matching '}'"));
	assert_null(mt_tmpl_compile("a } b", 5, &ce));
	assert_null(mt_tmpl_compile("{config.tp:furlongs}", 20, &ce));
	assert_non_null(strstr(ce.msg, "unknown format 'furlongs'"));
	assert_null(mt_tmpl_compile("x {config.tpp}", 14, &ce));
	assert_int_equal(ce.col, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(arithmetic_and_precedence),
		cmocka_unit_test(comparisons_and_logic),
		cmocka_unit_test(enumerations_compare_by_name),
		cmocka_unit_test(functions),
		cmocka_unit_test(curves_of_the_profile),
		cmocka_unit_test(compile_errors_say_what_and_where),
		cmocka_unit_test(what_an_expression_depends_on),
		cmocka_unit_test(templates_and_formats),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
