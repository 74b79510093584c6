/* SPDX-License-Identifier: MIT */
/* compare: the Mann-Whitney U test, the normal quantile, verdicts, the
 * thresholds file, the metrics of a real nccl-tests log, the comparison
 * document written and read back by its owner. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>

#include "../../compare/comparison.h"
#include "../../compare/compare.h"
#include "../../lib/jsonr.h"

#define P5 "tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1"

static void test_mwu(void **state)
{
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };
	/* ties: ranks 1, 3, 3, 3, 5.5, 5.5, 7.5, 7.5; U = 2.5, var = 16/12 (9 - 36/56) */
	const double c[] = { 1, 2, 2, 3 }, d[] = { 2, 3, 4, 4 };
	const double e[] = { 5, 5, 5 }, f[] = { 5, 5, 5 };

	(void)state;
	/* complete separation of 5 and 5: z = 12 / sqrt(22.9167) */
	assert_close(mt_mwu_p(a, 5, b, 5), 0.012186, 1e-3);
	assert_close(mt_mwu_p(b, 5, a, 5), 0.012186, 1e-3);
	assert_close(mt_mwu_p(c, 4, d, 4), 0.134185, 1e-3);
	assert_close(mt_mwu_p(e, 3, f, 3), 1.0, 1e-9); /* all tied: no evidence */
	assert_true(isnan(mt_mwu_p(a, 1, b, 5)));
}

static void test_z_and_verdict(void **state)
{
	(void)state;
	assert_close(mt_cmp_z(99), 2.5758, 1e-4);
	assert_close(mt_cmp_z(95), 1.9600, 1e-4);
	assert_string_equal(mt_cmp_verdict(4, 0, 5, 0, NAN, 0.01), "unchanged");
	assert_string_equal(mt_cmp_verdict(20, 0, 5, 4, NAN, 0.01), "regressed");
	assert_string_equal(mt_cmp_verdict(20, 1, 5, 4, NAN, 0.01), "improved");
	assert_string_equal(mt_cmp_verdict(-20, 1, 5, 4, NAN, 0.01), "regressed");
	assert_string_equal(mt_cmp_verdict(8, 0, 5, 10, NAN, 0.01), "inconclusive");
	/* beyond the tolerance, and beyond the band, but the band reaches back
	 * into the tolerance: the noise may have carried a change of 5% or less
	 * past it */
	assert_string_equal(mt_cmp_verdict(8.7, 0, 5, 7.8, NAN, 0.01), "inconclusive");
	assert_string_equal(mt_cmp_verdict(-8.7, 1, 5, 7.8, 0.001, 0.01), "inconclusive");
	assert_string_equal(mt_cmp_verdict(10.5, 0, 5, 3.7, 0.001, 0.01), "regressed");
	assert_string_equal(mt_cmp_verdict(9, 0, 5, 4, NAN, 0.01), "inconclusive");
	assert_string_equal(mt_cmp_verdict(9.01, 0, 5, 4, NAN, 0.01), "regressed");
	assert_string_equal(mt_cmp_verdict(20, 0, 5, 4, 0.2, 0.01), "inconclusive");
	assert_string_equal(mt_cmp_verdict(20, 0, 5, 4, 0.002, 0.01), "regressed");
	assert_string_equal(mt_cmp_verdict(NAN, 0, 5, 0, NAN, 0.01), "inconclusive");
}

static void test_nccl_pair(void **state)
{
	struct mt_cm_set a, b;
	struct mt_comparison c, r;
	struct mt_cmp_opts o = { .tolerance_pct = 5, .confidence_pct = 99 };
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb = SBUF_INIT;
	cJSON *doc = NULL;
	int i, found = 0;

	(void)state;
	assert_int_equal(mt_cm_load(P5 ".txt", &a, &err), MT_OK);
	assert_int_equal(mt_cm_load(P5 "-with-tuner.txt", &b, &err), MT_OK);
	assert_string_equal(a.kind, "nccl-tests");
	assert_int_equal(a.n, 64); /* 32 sizes, two placements */
	assert_string_equal(a.env.nccl, "2.22.3");
	assert_int_equal(mt_compare_sets(&a, &b, &o, &c, &err), MT_OK);
	assert_string_equal(c.verdict, "regressed");
	assert_string_equal(c.metrics[0].verdict, "regressed"); /* worst first */
	for (i = 0; i < c.nmetrics; i++)
		if (!strcmp(c.metrics[i].id, "all_reduce|16 ranks|65536|in-place")) {
			found = 1;
			assert_string_equal(c.metrics[i].verdict, "regressed");
			assert_close(c.metrics[i].change_pct, 20.10, 1e-3);
		}
	assert_true(found);
	c.baseline_file = "a";
	c.current_file = "b";
	mt_comparison_json(&sb, &c);
	assert_int_equal(mt_json_parse("mem", sb.buf, sb.len, &doc, &err), MT_OK);
	assert_int_equal(mt_comparison_read(doc, "mem", "--compare", &r, &err), MT_OK);
	assert_int_equal(r.nmetrics, c.nmetrics);
	assert_string_equal(r.verdict, "regressed");
	assert_string_equal(r.metrics[0].method, "document spread");
	assert_int_equal(r.counts[0], c.counts[0]);
	assert_int_equal(r.counts[2], c.counts[2]);
	assert_int_equal(r.allow_missing, 0);
	mt_comparison_free(&r);
	cJSON_Delete(doc);
	sbuf_release(&sb);
	mt_compare_free(&c);
	mt_cm_set_free(&a);
	mt_cm_set_free(&b);
}

static void test_thresholds(void **state)
{
	struct mt_thresholds th;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cmp_opts o = { .tolerance_pct = 5, .confidence_pct = 99 };
	struct mt_cm_set s;
	int which;

	(void)state;
	assert_int_equal(mt_thresholds_load("tests/fixtures/compare/thresholds.txt", &th, &err),
			 MT_OK);
	assert_int_equal(th.n, 2);
	assert_string_equal(th.t[1].pattern, "all_reduce time, 16 ranks, 64 KiB, in place");
	assert_close(th.t[1].pct, 25, 1e-9);
	o.th = &th;
	memset(&s, 0, sizeof(s));
	mt_cm_add(&s, "x|1", "all_reduce time, 16 ranks, 16 GiB, out of place", "us", 0, 1);
	mt_cm_add(&s, "y|1", "gemm", "us", 0, 1);
	assert_close(mt_cmp_tolerance(&o, &s.m[0], &which), 1, 1e-9);
	assert_int_equal(which, 0);
	assert_close(mt_cmp_tolerance(&o, &s.m[1], &which), 5, 1e-9);
	assert_int_equal(which, -1);
	mt_cm_set_free(&s);
	mt_thresholds_free(&th);
	assert_int_equal(mt_thresholds_load("tests/fixtures/compare/thresholds-bad.txt", &th, &err),
			 MT_EINVAL);
	assert_non_null(strstr(err.msg, "thresholds-bad.txt:1: expected 'PATTERN PCT'"));
}

/* A crashed run fails the gate: its last record cut short is an error naming
 * the file and line; a metric of the baseline it lacks is a failure unless
 * allowed (with a history: one the newest run has). */
static void test_cut_and_missing(void **state)
{
	static const char head[] = "{\"schema\":\"megatune.result/1\",\"kind\":\"run\"}\n";
	static const char rec[] = "{\"probe\":\"gemm\",\"label\":\"a\",\"rank\":0,"
				  "\"time_us\":{\"median\":10}}\n";
	char text[512];
	struct mt_cm_set a, b;
	struct mt_comparison c;
	struct mt_cmp_opts o = { .tolerance_pct = 5, .confidence_pct = 99 };
	struct mt_error err = MT_ERROR_INIT;
	char **notes = NULL;

	(void)state;
	snprintf(text, sizeof(text), "%s%s%.30s", head, rec, rec);
	assert_int_equal(mt_cm_parse("cut.jsonl", text, strlen(text), &a, &err), MT_EPARSE);
	assert_non_null(strstr(err.msg, "cut.jsonl:3: a record cut short"));
	mt_cm_set_free(&a);
	snprintf(text, sizeof(text), "%s%s", head, rec);
	assert_int_equal(mt_cm_parse("whole.jsonl", text, strlen(text) - 1, &a, &err), MT_OK);
	assert_int_equal(a.n, 1); /* a whole last record without its newline */
	mt_cm_set_free(&a);

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	mt_cm_add(&a, "x", "x", "us", 0, 10);
	mt_cm_add(&a, "y", "y", "us", 0, 10);
	mt_cm_add(&b, "x", "x", "us", 0, 10);
	assert_int_equal(mt_cm_index(&a), MT_OK);
	assert_int_equal(mt_cm_index(&b), MT_OK);
	assert_int_equal(mt_compare_sets(&a, &b, &o, &c, &err), MT_OK);
	assert_string_equal(c.verdict, "fail");
	assert_int_equal(mt_comparison_missing(&c), 1);
	assert_string_equal(c.only_baseline[0], "y");
	mt_compare_free(&c);
	o.allow_missing = 1;
	assert_int_equal(mt_compare_sets(&a, &b, &o, &c, &err), MT_OK);
	assert_string_equal(c.verdict, "pass");
	assert_int_equal(mt_comparison_missing(&c), 0);
	assert_int_equal(c.nonly_baseline, 1);
	mt_compare_free(&c);
	o.allow_missing = 0;
	assert_int_equal(mt_compare_sets(&b, &a, &o, &c, &err), MT_OK);
	assert_string_equal(c.verdict, "pass"); /* a metric only in the current */
	mt_compare_free(&c);
	assert_int_equal(mt_compare_history(&(struct mt_cmp_hist_in){ &a, NULL, NULL, 1 }, &b, &o,
					    &c, &notes, &err), MT_OK);
	assert_string_equal(c.verdict, "fail");
	assert_int_equal(c.nonly_baseline, 1);
	mt_compare_free(&c);
	free(notes[0]);
	free(notes);
	mt_cm_set_free(&a);
	mt_cm_set_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mwu),
		cmocka_unit_test(test_z_and_verdict),
		cmocka_unit_test(test_nccl_pair),
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_cut_and_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
