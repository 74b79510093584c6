/* SPDX-License-Identifier: MIT */
/* num and text: the one reader of numbers from text, terminal escaping and
 * UTF-8 checks; duplicate keys and huge numbers in JSON. */
#include "testutil.h"

#include "../../lib/jsonr.h"
#include "../../lib/jsonw.h"
#include "../../lib/num.h"
#include "../../lib/sbuf.h"
#include "../../lib/text.h"

static void test_parse_num(void **state)
{
	static const char *const bad[] = { "", "nan", "NaN", "inf", "-inf", "infinity", "1e400",
					   "-1e400", "0x10", "1e", "1.2.3", " 1", "1 ", "12abc",
					   ".", "e5", "--1", NULL };
	double v = 0;
	int i;

	(void)state;
	for (i = 0; bad[i]; i++)
		if (mt_parse_num(bad[i], &v) == 0)
			fail_msg("'%s' was accepted as %g", bad[i], v);
	assert_int_equal(mt_parse_num("12.5", &v), 0);
	assert_true(v == 12.5);
	assert_int_equal(mt_parse_num("-3e2", &v), 0);
	assert_true(v == -300);
	assert_int_equal(mt_parse_num(".5", &v), 0);
	assert_int_equal(mt_parse_num_range("90", 0, 90, &v), 0);
	assert_int_equal(mt_parse_num_range("90.1", 0, 90, &v), -1);
	assert_int_equal(mt_parse_num_range("nan", 0, 90, &v), -1);
}

static void test_parse_int(void **state)
{
	static const char *const bad[] = { "", "0x10", "010x", "1.0", "1e3", "+5", " 5", "5 ",
					   "nan", "--1", "-", "9223372036854775808", "12abc", NULL };
	long long v = 0;
	int i;

	(void)state;
	for (i = 0; bad[i]; i++)
		if (mt_parse_int(bad[i], -100, 1LL << 62, &v) == 0)
			fail_msg("'%s' was accepted as %lld", bad[i], v);
	assert_int_equal(mt_parse_int("010", 0, 100, &v), 0); /* decimal, not octal */
	assert_true(v == 10);
	assert_int_equal(mt_parse_int("-7", -100, 100, &v), 0);
	assert_true(v == -7);
	assert_int_equal(mt_parse_int("101", 0, 100, &v), -1);
	assert_int_equal(mt_parse_int("0", 1, 100, &v), -1);
}

static void test_term_clean(void **state)
{
	char buf[64];
	struct sbuf sb = SBUF_INIT;

	(void)state;
	assert_string_equal(mt_text_escape(buf, sizeof(buf), "a\033[31mb\nc"),
			    "a\\x1b[31mb\\nc");
	assert_string_equal(mt_text_escape(buf, sizeof(buf), "caf\xc3\xa9"), "caf\xc3\xa9");
	assert_string_equal(mt_text_escape(buf, sizeof(buf), "bad\xff"), "bad\\xff");
	/* C1 CSI (U+009B) and an overlong '/' */
	assert_string_equal(mt_text_escape(buf, sizeof(buf), "x\xc2\x9b" "2J"), "x\\u009b2J");
	assert_string_equal(mt_text_escape(buf, sizeof(buf), "\xc0\xaf"), "\\xc0\\xaf");
	assert_string_equal(mt_text_escape(buf, 8, "abcdefghijkl"), "abcd...");
	mt_term_clean(&sb, "line\n\tx\033", 8, 1);
	assert_string_equal(sb.buf, "line\n\tx\\x1b");
	sbuf_release(&sb);
	assert_int_equal(mt_utf8_valid("\xed\xa0\x80", 3), 0); /* a surrogate */
	assert_int_equal(mt_utf8_valid("\xf4\x90\x80\x80", 4), 0); /* above U+10FFFF */
	assert_int_equal(mt_utf8_valid("\xf0\x9f\x98\x80", 4), 1);
}

static void test_text_lines(void **state)
{
	const char *t = "ab\n\ncdef\ng";
	char ln[4];
	size_t at = 0;

	(void)state;
	assert_true(mt_text_line(t, strlen(t), &at, ln, sizeof(ln)));
	assert_string_equal(ln, "ab");
	assert_true(mt_text_line(t, strlen(t), &at, ln, sizeof(ln)));
	assert_string_equal(ln, "");
	assert_true(mt_text_line(t, strlen(t), &at, ln, sizeof(ln)));
	assert_string_equal(ln, "cde"); /* cut to fit */
	assert_true(mt_text_line(t, strlen(t), &at, ln, sizeof(ln)));
	assert_string_equal(ln, "g"); /* the last line, without its newline */
	assert_false(mt_text_line(t, strlen(t), &at, ln, sizeof(ln)));
	at = 0;
	assert_true(mt_text_line("x\n", 2, &at, ln, sizeof(ln)));
	assert_false(mt_text_line("x\n", 2, &at, ln, sizeof(ln))); /* no line after the end */
}

static void test_json_out_utf8(void **state)
{
	struct sbuf sb = SBUF_INIT;

	(void)state;
	jw_quote(&sb, "ok\xc3\xa9 bad\xff\xfe end");
	assert_string_equal(sb.buf, "\"ok\xc3\xa9 bad\\ufffd\\ufffd end\"");
	sbuf_release(&sb);
}

static void test_json_checks(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	cJSON *root = NULL;
	const char *dup = "{\"a\": {\"b\": 1, \"c\": 2, \"b\": 3}}";
	const char *huge = "{\"a\": [1, 2, 1e308]}";
	const char *beyond = "{\"x\": 1e400}";
	const char *fine = "{\"a\": 1e29, \"b\": {\"b\": 1}}";
	struct sbuf big = SBUF_INIT;
	int i;

	(void)state;
	assert_int_equal(mt_json_parse("f.json", dup, strlen(dup), &root, &err), MT_EINVAL);
	assert_null(root);
	assert_string_equal(err.msg, "f.json: field 'a.b': duplicate key (each key may appear "
			    "once in an object)");
	assert_int_equal(mt_json_parse("f.json", huge, strlen(huge), &root, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "field 'a[2]'"));
	assert_int_equal(mt_json_parse("f.json", beyond, strlen(beyond), &root, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "beyond the range of a double"));
	assert_int_equal(mt_json_parse("f.json", fine, strlen(fine), &root, &err), MT_OK);
	cJSON_Delete(root);
	/* many keys (the sorted check) with one repeated at the end */
	sbuf_adds(&big, "{");
	for (i = 0; i < 500; i++)
		sbuf_addf(&big, "\"k%d\": %d, ", i, i);
	sbuf_adds(&big, "\"k7\": 0}");
	assert_int_equal(mt_json_parse("g.json", big.buf, big.len, &root, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "field 'k7': duplicate key"));
	sbuf_release(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_num),
		cmocka_unit_test(test_parse_int),
		cmocka_unit_test(test_term_clean),
		cmocka_unit_test(test_text_lines),
		cmocka_unit_test(test_json_out_utf8),
		cmocka_unit_test(test_json_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
