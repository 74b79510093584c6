/* SPDX-License-Identifier: MIT */
/* trace_guard: strings cut at the cap on a character boundary whatever the
 * chunking, numbers over the cap across chunks refused, everything else
 * passed unchanged; and the reader on top of it. */
#include "testutil.h"

#include <stdio.h>

#include "../../lib/sbuf.h"
#include "../../profiler/trace.h"
#include "../../profiler/trace_guard.h"

/* Filter `in` cut into chunks of `step` bytes; the output in *out. */
static void filter(const char *in, size_t n, size_t step, struct sbuf *out, struct mt_guard *g)
{
	unsigned char *chunk = malloc(step);
	size_t i;

	assert_non_null(chunk);
	memset(g, 0, sizeof(*g));
	for (i = 0; i < n; i += step) {
		size_t k = n - i < step ? n - i : step, w;

		memcpy(chunk, in + i, k);
		w = mt_guard_filter(g, chunk, k);
		sbuf_add(out, chunk, w);
	}
	free(chunk);
}

static void test_unchanged(void **state)
{
	static const char doc[] = "{\"a\":\"x\\\"y\\\\\",\"b\":[1.5e3,-2,\"\\u00e9\"],\"c\":\"caf\xc3\xa9\"}";
	static const size_t steps[] = { 1, 2, 3, 7, 64 };
	size_t s;

	(void)state;
	for (s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		struct sbuf out = SBUF_INIT;
		struct mt_guard g;

		filter(doc, sizeof(doc) - 1, steps[s], &out, &g);
		assert_int_equal(out.len, sizeof(doc) - 1);
		assert_memory_equal(out.buf, doc, out.len);
		assert_int_equal(g.cut, 0);
		assert_int_equal(g.bad_num, 0);
		assert_int_equal(g.in_str, 0);
		sbuf_release(&out);
	}
}

static void test_cut(void **state)
{
	static const size_t steps[] = { 4096, 65536, 262144, 1000003 };
	struct sbuf in = SBUF_INIT;
	size_t s, i;

	(void)state;
	/* a 3 MiB string of 2-byte characters and escapes, then a short one */
	sbuf_adds(&in, "[\"");
	for (i = 0; i < 3 * MT_TRACE_MAX_STR / 8; i++)
		sbuf_adds(&in, i % 2 ? "\xc3\xa9\\n\\u00e9" : "ab\\\"\xc3\xa9");
	sbuf_adds(&in, "\",\"tail\"]");
	for (s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		struct sbuf out = SBUF_INIT;
		struct mt_guard g;
		struct mt_trace *t = NULL;
		struct mt_error err = MT_ERROR_INIT;
		int rc;

		filter(in.buf, in.len, steps[s], &out, &g);
		assert_int_equal(g.cut, 1);
		assert_true(out.len >= MT_TRACE_MAX_STR && out.len < MT_TRACE_MAX_STR + 32);
		assert_memory_equal(out.buf + out.len - 9, "\",\"tail\"]", 9);
		/* the cut text is still a valid JSON document (no broken escape
		 * or UTF-8 sequence): the reader takes it without error */
		rc = mt_trace_read_mem("cut.json", out.buf, out.len, NULL, &t, &err);
		assert_int_equal(rc, MT_OK);
		mt_trace_free(t);
		sbuf_release(&out);
	}
	sbuf_release(&in);
}

static void test_long_number(void **state)
{
	struct sbuf in = SBUF_INIT, out = SBUF_INIT;
	struct mt_guard g;
	size_t i;

	(void)state;
	sbuf_adds(&in, "[\"x\",");
	for (i = 0; i < 100000; i++)
		sbuf_addc(&in, '7');
	sbuf_adds(&in, "]");
	filter(in.buf, in.len, 4096, &out, &g);
	assert_int_equal(g.bad_num, 1);
	assert_int_equal(g.bad_num_at, 5);
	sbuf_release(&in);
	sbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unchanged),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_long_number),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
