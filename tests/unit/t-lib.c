/* SPDX-License-Identifier: MIT */
/* lib/: string buffer, JSON writer and reader, tables, atomic writes, medians,
 * versions, statistics in JSON. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "../../lib/fsutil.h"
#include "../../lib/jsonr.h"
#include "../../lib/jsonw.h"
#include "../../lib/near.h"
#include "../../lib/shell.h"
#include "../../lib/stats.h"
#include "../../lib/stats_json.h"
#include "../../lib/table.h"
#include "../../lib/ver.h"

static void sbuf_grows_and_detaches(void **state)
{
	struct sbuf sb = SBUF_INIT;
	char *s;
	size_t len;
	int i;

	(void)state;
	assert_string_equal(sb.buf, "");
	for (i = 0; i < 1000; i++)
		sbuf_addf(&sb, "%d,", i);
	assert_false(sb.failed);
	assert_int_equal(sb.len, strlen(sb.buf));
	assert_memory_equal(sb.buf, "0,1,2,", 6);
	s = sbuf_detach(&sb, &len);
	assert_string_equal(sb.buf, "");
	assert_int_equal(len, strlen(s));
	free(s);
	sbuf_release(&sb);
}

/* one word the shell reads back as it was: bare when every character is
 * literal to the shell, else quotes closed, escaped, reopened */
static void shell_word_quotes_what_the_shell_reads(void **state)
{
	struct sbuf sb = SBUF_INIT;

	(void)state;
	mt_shell_word(&sb, "a b'c");
	sbuf_addc(&sb, ' ');
	mt_shell_word(&sb, "");
	sbuf_addc(&sb, ' ');
	mt_shell_word(&sb, "$x\\n'");
	sbuf_addc(&sb, ' ');
	mt_shell_word(&sb, "--x=1,2/a:b@c%d+e");
	sbuf_addc(&sb, ' ');
	mt_shell_word(&sb, "Et*7|t*6|L");
	sbuf_addc(&sb, ' ');
	mt_shell_word(&sb, "([0]*3+[1]*58)");
	sbuf_addc(&sb, ' ');
	mt_shell_word(&sb, "X=~/y");
	sbuf_addc(&sb, ' ');
	mt_shell_word(&sb, "#c");
	assert_string_equal(sb.buf, "'a b'\\''c' '' '$x\\n'\\''' --x=1,2/a:b@c%d+e 'Et*7|t*6|L' "
				    "'([0]*3+[1]*58)' 'X=~/y' '#c'");
	sbuf_release(&sb);
}

static void json_writer_numbers_and_escapes(void **state)
{
	struct sbuf sb = SBUF_INIT;
	struct jw w;

	(void)state;
	jw_init(&w, &sb, 0);
	jw_obj(&w, NULL);
	jw_int(&w, "big", 9007199254740993LL); /* 2^53 + 1: not a double */
	jw_num(&w, "third", 1.0 / 3, 6);
	jw_num(&w, "inf", INFINITY, 6);
	jw_fix(&w, "pi", 3.14159, 2);
	jw_str(&w, "s", "a\"b\\c\n\x01");
	jw_arr(&w, "empty");
	jw_end(&w);
	jw_bool(&w, "t", 1);
	jw_null(&w, "n");
	jw_end(&w);
	assert_string_equal(sb.buf, "{\"big\":9007199254740993,\"third\":0.333333,\"inf\":null,"
				    "\"pi\":3.14,\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"empty\":[],"
				    "\"t\":true,\"n\":null}");
	sbuf_release(&sb);
}

static void json_reader_positions_and_types(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_jpos at = { "f.json", "node" };
	cJSON *root = NULL;
	const char *text = "{\n  \"a\": 1,\n  \"b\": [1, 2,, 3]\n}\n";
	int64_t v;
	double d;

	(void)state;
	assert_int_equal(mt_json_parse("f.json", text, strlen(text), &root, &err), MT_EPARSE);
	assert_non_null(strstr(err.msg, "f.json:3:"));
	assert_int_equal(mt_json_parse("f.json", "{} x", 4, &root, &err), MT_EPARSE);
	assert_non_null(strstr(err.msg, "unexpected text after the value"));
	assert_int_equal(mt_json_parse("f.json", "{\"a\": [1, {\"b\": \"c", 17, &root, &err), MT_EPARSE);
	assert_non_null(strstr(err.msg, "ends too early"));

	text = "{\"n\": 12, \"f\": 1.5, \"s\": \"x\", \"neg\": -3}";
	assert_int_equal(mt_json_parse("f.json", text, strlen(text), &root, &err), 0);
	assert_int_equal(mt_jint(&at, root, "n", 1, 0, 100, &v, &err), 1);
	assert_int_equal(v, 12);
	assert_int_equal(mt_jint(&at, root, "f", 1, 0, 100, &v, &err), MT_EINVAL);
	assert_string_equal(err.msg, "f.json: field 'node.f': expected an integer in [0, 100], got 1.5");
	assert_int_equal(mt_jint(&at, root, "neg", 1, 0, 100, &v, &err), MT_EINVAL);
	assert_int_equal(mt_jnum(&at, root, "s", 1, 0, 1e300, &d, &err), MT_EINVAL);
	assert_string_equal(err.msg, "f.json: field 'node.s': expected a number >= 0, got \"x\"");
	assert_int_equal(mt_jnum(&at, root, "missing", 0, 0, 1, &d, &err), 0);
	assert_int_equal(mt_jnum(&at, root, "missing", 1, 0, 1, &d, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "missing field 'node.missing'"));
	cJSON_Delete(root);
}

static void table_aligns_columns(void **state)
{
	struct mt_table t;
	struct sbuf sb = SBUF_INIT;

	(void)state;
	mt_table_init(&t);
	mt_table_col(&t, 0, "name", NULL, 1);
	mt_table_col(&t, 1, "size", "(B)", 0);
	mt_table_cell(&t, "a");
	mt_table_cell(&t, "%d", 1024);
	mt_table_cell(&t, "longer");
	mt_table_cell(&t, "%d", 8);
	mt_table_render(&t, &sb, "", MT_TABLE_HASH);
	assert_string_equal(sb.buf, "# name    size\n"
				    "#          (B)\n"
				    "  a       1024\n"
				    "  longer     8\n");
	mt_table_release(&t);
	sbuf_release(&sb);
}

static void atomic_write_never_leaves_a_partial_file(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	char dir[] = "/tmp/mt-test-XXXXXX", path[64], *data;
	size_t len;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	assert_int_equal(mt_write_atomic(path, "first", 5, &err), 0);
	assert_int_equal(mt_read_file(path, 100, &data, &len, &err), 0);
	assert_string_equal(data, "first");
	free(data);
	/* a failing write (the directory is read-only) keeps the old file */
	if (geteuid() != 0) {
		chmod(dir, 0500);
		assert_int_equal(mt_write_atomic(path, "second", 6, &err), MT_EIO);
		chmod(dir, 0700);
		assert_int_equal(mt_read_file(path, 100, &data, &len, &err), 0);
		assert_string_equal(data, "first");
		free(data);
	}
	/* a target that is a directory cannot be replaced: the temporary is removed */
	snprintf(path, sizeof(path), "%s/sub", dir);
	mkdir(path, 0700);
	assert_int_equal(mt_write_atomic(path, "x", 1, &err), MT_EIO);
	assert_non_null(strstr(err.msg, "cannot write"));
	rmdir(path);
	snprintf(path, sizeof(path), "%s/out.json", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0); /* no temporary left behind */
	/* size limit */
	assert_int_equal(mt_write_atomic("/tmp/mt-test-big", "0123456789", 10, &err), 0);
	assert_int_equal(mt_read_file("/tmp/mt-test-big", 5, &data, &len, &err), MT_EINVAL);
	unlink("/tmp/mt-test-big");
}

static void robust_cv_ignores_an_outlier_and_keeps_its_input(void **state)
{
	const double x[] = { 4, 1, 100, 3, 2 };
	const double zero[] = { 0, 0, 1 };

	(void)state;
	/* median 3, absolute deviations 1 2 97 0 1: MAD 1 */
	assert_true(fabs(mt_robust_cv(x, 5) - 1.4826 / 3) < 1e-12);
	assert_true(x[0] == 4 && x[2] == 100); /* not reordered */
	assert_true(isnan(mt_robust_cv(x, 0)));
	assert_true(isnan(mt_robust_cv(zero, 3))); /* median 0 */
}

static void median_of_odd_even_and_repeated(void **state)
{
	double a[] = { 5, 1, 4, 2, 3 }, b[] = { 4, 1, 3, 2 }, c[] = { 7 };
	double d[] = { 0.1, 0.7, 0.1, 0.7, 0.3, 0.3 };
	double big[1001];
	int i;

	(void)state;
	assert_true(mt_median(a, 5) == 3);
	assert_true(mt_median(b, 4) == 2.5);
	assert_true(mt_median(c, 1) == 7);
	assert_true(mt_median(d, 6) == (0.3 + 0.3) / 2);
	assert_true(isnan(mt_median(c, 0)));
	for (i = 0; i < 1001; i++)
		big[i] = (i * 7919) % 1001; /* a permutation of 0..1000 */
	assert_true(mt_median(big, 1001) == 500);
	/* the mean of the two middle values, rounded as (a + b) / 2 */
	{
		double e[] = { 0.1, 0.2 };
		assert_true(mt_median(e, 2) == (0.1 + 0.2) / 2);
	}
	assert_true(mt_round_sig(123.456789, 6) == 123.457);
	assert_true(mt_round_sig(0.0123456, 3) == 0.0123);
	assert_true(mt_round_sig(0, 3) == 0);
}

static void version_strict_grammar(void **state)
{
	(void)state;
	assert_int_equal(mt_ver_code("2.21.5"), 22105);
	assert_int_equal(mt_ver_code("2.26"), 22600);
	assert_int_equal(mt_ver_code("13.0"), 130000);
	assert_int_equal(mt_ver_code("12"), 120000);
	assert_int_equal(mt_ver_code("2.28.9"), 22809);
	assert_int_equal(mt_ver_code(NULL), -1);
	assert_int_equal(mt_ver_code(""), -1);
	assert_int_equal(mt_ver_code("2."), -1);
	assert_int_equal(mt_ver_code(".2"), -1);
	assert_int_equal(mt_ver_code("2..1"), -1);
	assert_int_equal(mt_ver_code("2.21.5.1"), -1);
	assert_int_equal(mt_ver_code("2.100"), -1);
	assert_int_equal(mt_ver_code("2.-1"), -1);
	assert_int_equal(mt_ver_code("2. 1"), -1);
	assert_int_equal(mt_ver_code(" 2.1"), -1);
	assert_int_equal(mt_ver_code("2.26.6+cuda12.8"), -1);
	assert_int_equal(mt_ver_span("2.26.6+cuda12.8"), 6);
	assert_int_equal(mt_ver_span("12.8 blah"), 4);
	assert_int_equal(mt_ver_span("2.26."), 4);
	assert_int_equal(mt_ver_span("v2"), 0);
	assert_int_equal(mt_ver_span(NULL), 0);
}

static void json_lenient_getters_follow_paths(void **state)
{
	cJSON *root = cJSON_Parse("{\"gpu\": {\"name\": \"H100\", \"sm\": 132, \"ok\": true},"
				  " \"list\": [1, 2], \"s\": \"x\", \"a.b\": 1}");

	(void)state;
	assert_non_null(root);
	assert_string_equal(mt_jget_str(root, "gpu.name"), "H100");
	assert_string_equal(mt_jget_str(root, "s"), "x");
	assert_string_equal(mt_jget_str(root, "gpu.sm"), "");
	assert_null(mt_jget_strd(root, "gpu.none", NULL));
	assert_null(mt_jget_strd(root, "s.deeper", NULL));
	assert_true(mt_jget_num(root, "gpu.sm", 0) == 132);
	assert_true(isnan(mt_jget_num(root, "gpu.name", NAN)));
	assert_true(mt_jget_num(root, "list", -1) == -1);
	assert_null(mt_jget(root, "list.0"));
	assert_null(mt_jget(root, "a.b")); /* a path, not a key with a dot */
	assert_int_equal(mt_jget_bool(root, "gpu.ok", 0), 1);
	assert_int_equal(mt_jget_bool(root, "gpu.sm", -1), -1);
	assert_null(mt_jget(NULL, "gpu"));
	assert_ptr_equal(mt_jget(root, "gpu"), cJSON_GetObjectItemCaseSensitive(root, "gpu"));
	cJSON_Delete(root);
}

static int dist(const char *a, const char *b)
{
	return mt_near_distance(a, strlen(a), b, strlen(b));
}

static void near_names_the_key_a_typo_resembles(void **state)
{
	static const char *const keys[] = {
		"num_key_value_heads", "num_attention_heads", "fp8", "fp4_recipe", "hidden_size", NULL,
	};
	struct mt_near nr;

	(void)state;
	assert_int_equal(dist("kitten", "sitting"), 3);
	assert_int_equal(dist("ab", "ba"), 1); /* a swap is one edit */
	assert_int_equal(dist("tensor-model-paralel-size", "tensor_model_parallel_size"), 1);
	assert_int_equal(dist("", "abc"), 3);
	assert_string_equal(mt_near_list("num_key_value_head", keys), "num_key_value_heads");
	assert_string_equal(mt_near_list("hiden_size", keys), "hidden_size");
	assert_null(mt_near_list("fp4", keys));          /* digits apart: another setting */
	assert_null(mt_near_list("fp8_recipe", keys));   /* fp4_recipe: digits apart */
	assert_null(mt_near_list("num_hidden_layers", keys));
	assert_null(mt_near_list("hidden_size", keys));  /* itself: not a typo */
	assert_int_equal(mt_near_bound(4), 0);
	assert_int_equal(mt_near_bound(9), 1);
	assert_int_equal(mt_near_bound(10), 2);
	/* a wider bound of the caller's; the first of equals kept */
	mt_near_init(&nr, "abcx", 4, 1);
	mt_near_try(&nr, "abcy");
	mt_near_try(&nr, "abcz");
	assert_string_equal(nr.match, "abcy");
	assert_int_equal(nr.best, 1);
}

static void stats_round_trip_through_json(void **state)
{
	struct mt_stats st = { 5, 123.4567891, 100.000001, 150.5, 149.99999, 0.012345 }, back;
	struct mt_jpos at = { "f.json", "gemm[0]" };
	struct mt_error err = { 0 };
	struct sbuf sb = SBUF_INIT;
	struct jw w;
	cJSON *o = cJSON_CreateObject(), *doc;

	(void)state;
	jw_init(&w, &sb, 0);
	jw_obj(&w, NULL);
	mt_stats_jw(&w, "stats", &st);
	jw_end(&w);
	assert_string_equal(sb.buf, "{\"stats\":{\"n\":5,\"median\":123.457,\"min\":100,"
				    "\"max\":150.5,\"p95\":150,\"cv\":0.0123}}");
	doc = cJSON_Parse(sb.buf);
	assert_int_equal(mt_stats_read(&at, doc, "stats", 1, &back, &err), 1);
	assert_int_equal(back.n, 5);
	assert_true(back.median == 123.457 && back.p95 == 150 && back.cv == 0.0123);
	mt_stats_get(cJSON_GetObjectItemCaseSensitive(doc, "stats"), &back);
	assert_true(back.min == 100 && back.max == 150.5);
	assert_int_equal(mt_stats_read(&at, doc, "none", 0, &back, &err), 0);
	assert_int_equal(back.n, 0);
	cJSON_Delete(doc);

	assert_non_null(mt_stats_add(o, "stats", &st));
	assert_true(mt_jget_num(o, "stats.median", 0) == 123.457);
	assert_true(mt_jget_num(o, "stats.cv", 0) == 0.0123);
	st.n = 0;
	assert_null(mt_stats_add(o, "other", &st));
	doc = cJSON_Parse("{\"stats\": {\"n\": 0, \"median\": 1}}");
	assert_int_equal(mt_stats_read(&at, doc, "stats", 1, &back, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "f.json: field 'gemm[0].stats.n'"));
	cJSON_Delete(doc);
	cJSON_Delete(o);
	sbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(robust_cv_ignores_an_outlier_and_keeps_its_input),
		cmocka_unit_test(sbuf_grows_and_detaches),
		cmocka_unit_test(shell_word_quotes_what_the_shell_reads),
		cmocka_unit_test(json_writer_numbers_and_escapes),
		cmocka_unit_test(json_reader_positions_and_types),
		cmocka_unit_test(table_aligns_columns),
		cmocka_unit_test(atomic_write_never_leaves_a_partial_file),
		cmocka_unit_test(median_of_odd_even_and_repeated),
		cmocka_unit_test(version_strict_grammar),
		cmocka_unit_test(json_lenient_getters_follow_paths),
		cmocka_unit_test(stats_round_trip_through_json),
		cmocka_unit_test(near_names_the_key_a_typo_resembles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
