/* SPDX-License-Identifier: MIT */
/* megatune import: the nccl-tests and nvbandwidth parsers on small inputs
 * written for each case (tags inside a row, the old layouts, several tests
 * in one file, a missing footer, ranks from busbw/algbw, -C/-I/-S columns,
 * errors with their line), the recorded logs of tests/fixtures/nccl-tests
 * (every footer reproduced; the upstream summaries agree), and what the
 * imports add to a profile; the text and JSON summaries. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "../../lib/fsutil.h"
#include "../../lib/sbuf.h"
#include "../../import/import.h"
#include "../../perfmodel/profile.h"
#include "../../perfmodel/cluster.h"

static struct mt_import *parse_opts(int tool, const char *name, const char *text,
				    const struct mt_import_opts *o)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_import *im = NULL;

	if (mt_import_parse(tool, name, text, strlen(text), o, &im, &err))
		fail_msg("%s: %s", name, err.msg);
	return im;
}

static struct mt_import *parse_nt(const char *name, const char *text)
{
	return parse_opts(MT_IMP_NCCL_TESTS, name, text, NULL);
}

/* Parsing must fail with a message containing `want`; returns the status. */
static int parse_fails(int tool, const char *name, const char *text, const struct mt_import_opts *o,
		       const char *want)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_import *im = NULL;
	int rc = mt_import_parse(tool, name, text, strlen(text), o, &im, &err);

	if (!rc)
		fail_msg("%s: parsed, expected an error saying '%s'", name, want);
	assert_null(im);
	if (!strstr(err.msg, want))
		fail_msg("%s: '%s' does not say '%s'", name, err.msg, want);
	return rc;
}

static int has_warning(const struct mt_import *im, const char *s)
{
	int i;

	for (i = 0; i < im->nwarn; i++)
		if (strstr(im->warn[i], s))
			return 1;
	return 0;
}

/* The device list and table header of a 2 x 8 rank all_reduce, with the
 * mpirun tags of the AWS p5 log, one of them inside each row. */
static const char p5_like[] =
	"Warning: Permanently added 'worker-1' (ED25519) to the list of known hosts.\n"
	"[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 100 agg iters: 1 validation: 1 graph: 0\n"
	"[1,0]<stdout>:#\n"
	"[1,0]<stdout>:# Using devices\n"
	"[1,0]<stdout>:#  Rank  0 Group  0 Pid     25 on w-0 device  0 [0x53] NVIDIA H100 80GB HBM3\n"
	"[1,0]<stdout>:#  Rank  1 Group  0 Pid     26 on w-0 device  1 [0x64] NVIDIA H100 80GB HBM3\n"
	"[1,0]<stdout>:#  Rank  2 Group  0 Pid     27 on w-1 device  0 [0x53] NVIDIA H100 80GB HBM3\n"
	"[1,0]<stdout>:#  Rank  3 Group  0 Pid     28 on w-1 device  1 [0x64] NVIDIA H100 80GB HBM3\n"
	"[1,2]<stdout>:w-1:27:27 [0] NCCL INFO NCCL version 2.22.3+cuda12.2\n"
	"[1,0]<stdout>:#                                                              out-of-place                       in-place          \n"
	"[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	"[1,0]<stdout>:#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
	"[1,0]<stdout>:     1048576        262144     float     sum      -1[1,0]<stdout>:    138.1    7.59   11.39      0[1,0]<stdout>:    122.1    8.59   12.88      0\n"
	"[1,3]<stdout>:w-1:28:28 [1] NCCL INFO comm 0x55 rank 3 nranks 4 cudaDev 1 busId 64000 - Destroy COMPLETE\n"
	"[1,0]<stdout>:     2097152        524288     float     sum      -1[1,0]<stdout>:    148.5   14.12   21.18      0[1,0]<stdout>:    146.9   14.28   21.42      0\n"
	"[1,0]<stdout>:# Out of bounds values : 0 OK\n"
	"[1,0]<stdout>:# Avg bus bandwidth    : 16.7175 \n";

static void tags_inside_rows_are_removed(void **state)
{
	struct mt_import *im;
	const struct mt_nt_test *t;

	(void)state;
	im = parse_nt("p5.log", p5_like);
	assert_int_equal(im->nnt, 1);
	t = &im->nt[0];
	assert_int_equal(t->nrows, 2);
	assert_int_equal(t->layout, MT_NT_CURRENT);
	assert_int_equal(t->op, MT_COLL_ALL_REDUCE);      /* busbw/algbw = 1.5 > 1 */
	assert_int_equal(t->ranks, 4);
	assert_int_equal(t->hosts, 2);
	assert_int_equal(t->per_node, 2);
	assert_string_equal(t->gpu, "NVIDIA H100 80GB HBM3");
	assert_string_equal(t->nccl, "2.22.3");         /* from an INFO line */
	assert_string_equal(t->cuda, "12.2");
	assert_string_equal(t->rows[0].h[0].time.s, "138.1");
	assert_string_equal(t->rows[1].h[1].busbw.s, "21.42");
	assert_int_equal(t->rows[1].line, 15);
	assert_int_equal(t->footer_ok, 1);
	assert_int_equal(t->rows_bad, 0);
	mt_import_free(im);
}

/* ABCI's A100 log: nccl-tests before the root column */
static const char old_layout[] =
	"# nThread 1 nGpus 1 minBytes 4 maxBytes 33554432 step: 2(factor) warmup iters: 5 iters: 100 validation: 1 \n"
	"#\n"
	"# Using devices\n"
	"#   Rank  0 Pid 1235813 on      a0048 device  0 [0x27] A100-SXM4-40GB\n"
	"#   Rank  1 Pid 1235814 on      a0048 device  1 [0x2a] A100-SXM4-40GB\n"
	"#\n"
	"#                                                     out-of-place                       in-place          \n"
	"#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
	"#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
	"    16777216       4194304   float     sum    236.6   70.90   70.90  2e-07    215.9   77.71   77.71  2e-07\n"
	"    33554432       8388608   float     sum    370.7   90.52   90.52  2e-07    358.5   93.60   93.60  0e+00\n"
	"# Out of bounds values : 0 OK\n"
	"# Avg bus bandwidth    : 83.1812 \n"
	"#\n";

static void old_layout_with_error_column(void **state)
{
	struct mt_import *im;
	const struct mt_nt_test *t;

	(void)state;
	/* two ranks: busbw = algbw, which sendrecv shares; the file name decides */
	im = parse_nt("abci_all_reduce.nccl", old_layout);
	t = &im->nt[0];
	assert_int_equal(t->layout, MT_NT_OLD);
	assert_string_equal(t->columns, "size count type redop time algbw busbw error time algbw busbw error");
	assert_int_equal(t->op, MT_COLL_ALL_REDUCE);
	assert_string_equal(t->op_from, "columns and file name");
	assert_int_equal(t->ranks, 2);
	assert_int_equal(t->hosts, 1);
	assert_false(t->rows[0].has_root);
	assert_string_equal(t->rows[0].h[0].wrong.s, "2e-07");
	assert_close(t->rows[1].h[1].wrong.v, 0, 0);
	assert_int_equal(t->wrong_rows, 0);            /* an error column is not a count */
	assert_int_equal(t->footer_ok, 1);
	mt_import_free(im);

	/* without a name, the collective cannot be told from sendrecv */
	parse_fails(MT_IMP_NCCL_TESTS, "abci.nccl", old_layout, NULL, "give --op");
}

/* nccl-tests 2.0 all_gather: neither redop nor root */
static const char very_old[] =
	"# Collective test starting: all_gather_perf\n"
	"#       size         count   type     time   algbw   busbw  error     time   algbw   busbw  error\n"
	"#        (B)    (elements)            (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
	"     4194304        131072  float    59.52   70.47   61.66  0e+00    58.41   71.81   62.83  0e+00\n"
	"     8388608        262144  float    101.3   82.81   72.46  0e+00    99.95   83.93   73.44  0e+00\n"
	" Out of bounds values : 0 OK\n"
	" Avg bus bandwidth    : 67.5975 \n";

static void very_old_layout_without_redop(void **state)
{
	struct mt_import *im;
	const struct mt_nt_test *t;

	(void)state;
	im = parse_nt("ag.txt", very_old);
	t = &im->nt[0];
	assert_int_equal(t->layout, MT_NT_VERY_OLD);
	assert_int_equal(t->op, MT_COLL_ALL_GATHER);
	assert_int_equal(t->ranks, 8);                  /* 7/8 = 0.875 */
	assert_string_equal(t->ranks_from, "busbw/algbw ratio");
	assert_string_equal(t->rows[0].redop, "");
	assert_int_equal(t->footer_ok, 1);
	mt_import_free(im);
}

/* Two runs appended to one file, each with its own header and footer, the
 * second without a "Collective test starting" line. */
static const char two_tests[] =
	"# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	"  1073741824     268435456     float     sum      -1   4000.8  268.38  469.67      0   3997.6  268.60  470.05      0\n"
	"# Out of bounds values : 0 OK\n"
	"# Avg bus bandwidth    : 469.86 \n"
	"#\n"
	"./build/all_gather_perf -b 1G -e 1G -g 8\n"
	"# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
	"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	"  1073741824      33554432     float    none      -1   2719.6  394.82  345.47      0   2700.8  397.57  347.87      0\n"
	"# Out of bounds values : 0 OK\n"
	"# Avg bus bandwidth    : 346.67 \n";

static void concatenated_tests(void **state)
{
	struct mt_import *im;

	(void)state;
	im = parse_nt("two.log", two_tests);
	assert_int_equal(im->nnt, 2);
	assert_int_equal(im->nt[0].op, MT_COLL_ALL_REDUCE);
	assert_int_equal(im->nt[0].ranks, 8);
	assert_int_equal(im->nt[0].nrows, 1);
	assert_string_equal(im->nt[1].name, "all_gather_perf");
	assert_string_equal(im->nt[1].op_from, "command line");
	assert_int_equal(im->nt[1].op, MT_COLL_ALL_GATHER);
	assert_int_equal(im->nt[1].ranks, 8);
	assert_int_equal(im->nt[1].hosts, 1);           /* one process, -g 8 */
	assert_int_equal(im->nt[1].nrows, 1);
	assert_int_equal(im->nt[0].footer_ok, 1);
	assert_int_equal(im->nt[1].footer_ok, 1);
	assert_close(im->nt[1].avg.v, 346.67, 0);
	mt_import_free(im);
}

/* li-plus's paste: the command line and the table, no device list, no footer */
static const char truncated[] =
	"./build/sendrecv_perf -b 128M -e 1G -f 2 -g 8\n"
	"#\n"
	"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
	"   134217728      33554432     float     sum      -1   1211.2  110.81  110.81      0   1211.8  110.76  110.76    N/A\n"
	"   268435456      67108864     float     sum      -1   1423.3  188.60  188.60      0   1420.2  189.01  189.01    N/A\n";

static void missing_footer_and_device_list(void **state)
{
	struct mt_import *im;
	const struct mt_nt_test *t;

	(void)state;
	im = parse_nt("paste.md", truncated);
	t = &im->nt[0];
	assert_int_equal(t->op, MT_COLL_SEND_RECV);
	assert_int_equal(t->ranks, 8);
	assert_string_equal(t->ranks_from, "command line");
	assert_int_equal(t->hosts, 1);
	assert_int_equal(t->footer_ok, -1);
	assert_false(t->has_avg);
	assert_true(isnan(t->rows[0].h[1].wrong.v));
	assert_string_equal(t->rows[0].h[1].wrong.s, "N/A");
	assert_true(has_warning(im, "no 'Avg bus bandwidth' footer"));
	mt_import_free(im);
}

static void ranks_from_busbw_over_algbw(void **state)
{
	static const char text[] =
		"# Collective test starting: all_reduce_perf\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"  8589934592    2147483648     float     sum      -1    47535  180.71  338.82      0    47743  179.92  337.35      0\n"
		"# Avg bus bandwidth    : 338.085 \n";
	static const char headerless[] =
		"  8589934592    2147483648     float     sum      -1  31226.8  275.08  481.39      0  31239.3  274.97  481.20      0\n";
	static const char rs[] =
		"# Collective test starting: reduce_scatter_perf\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		" 17179869184      26843520     float     sum      -1    51470  333.78  329.61      0    51383  334.35  330.17      0\n";
	struct mt_import *im;

	(void)state;
	im = parse_nt("x.log", text);
	assert_int_equal(im->nt[0].ranks, 16);          /* 338.82 / 180.71 = 2 * 15/16 */
	assert_string_equal(im->nt[0].ranks_from, "busbw/algbw ratio");
	assert_int_equal(im->nt[0].hosts, 0);
	assert_int_equal(im->nt[0].footer_ok, 1);
	mt_import_free(im);

	im = parse_nt("allreduce_8.txt", headerless);
	assert_int_equal(im->nt[0].ranks, 8);
	assert_int_equal(im->nt[0].layout, MT_NT_CURRENT);
	assert_int_equal(im->nt[0].header_line, 0);
	assert_true(has_warning(im, "without its header"));
	mt_import_free(im);

	im = parse_nt("x.log", rs);
	assert_int_equal(im->nt[0].ranks, 80);          /* 329.61 / 333.78 = 79/80 */
	mt_import_free(im);
}

static void cputime_per_iteration_and_timestamps(void **state)
{
	static const char text[] =
		"# nccl-tests version 2.19.6 nccl-headers=22902 nccl-library=22902\n"
		"# Collective test starting: all_gather_perf\n"
		"# nThread 1 nGpus 4 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
		"# Per-Iteration Report: CUDA event timing; i_* uses max over process rows \n"
		"#\n"
		"# Using devices\n"
		"#  Rank  0 Group  0 Pid    100 on      node1 device  0 [0000:10:00] NVIDIA H100 80GB HBM3\n"
		"#  Rank  1 Group  0 Pid    100 on      node1 device  1 [0000:11:00] NVIDIA H100 80GB HBM3\n"
		"#  Rank  2 Group  0 Pid    100 on      node1 device  2 [0000:12:00] NVIDIA H100 80GB HBM3\n"
		"#  Rank  3 Group  0 Pid    100 on      node1 device  3 [0000:13:00] NVIDIA H100 80GB HBM3\n"
		"#\n"
		"#                                                   out-of-place (+ per-iteration)                                in-place (+ per-iteration)\n"
		"#       size         count      type   redop    root  cputime   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%  cputime   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%           timestamp\n"
		"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%)   %Y-%m-%d %H:%M:%S\n"
		"     1048576         65536     float    none      -1    20.00   52.43   39.32       0    19.50    21.00    20.90     1.20    20.10   52.17   39.13       0    19.60    21.10    21.00     1.10  2026-01-02 03:04:05\n"
		"     2097152        131072     float    none      -1    30.00   69.91   52.43       0    29.50    31.00    30.90     1.20    30.20   69.44   52.08       0    29.70    31.20    31.10     1.10  2026-01-02 03:04:06\n"
		"# Out of bounds values : 0 OK\n"
		"# Avg bus bandwidth    : 45.7395 \n"
		"#\n"
		"# Collective test concluded: all_gather_perf\n";
	struct mt_import *im;
	const struct mt_nt_test *t;

	(void)state;
	im = parse_nt("x.log", text);
	t = &im->nt[0];
	assert_true(t->cputime);
	assert_true(t->per_iter);
	assert_true(t->timestamps);
	assert_string_equal(t->nt_version, "2.19.6");
	assert_string_equal(t->nccl, "2.29.2");
	assert_int_equal(t->ranks, 4);
	assert_string_equal(t->rows[1].h[0].i_p99.s, "30.90");
	assert_string_equal(t->rows[1].h[1].i_min.s, "29.70");
	assert_string_equal(t->rows[0].timestamp, "2026-01-02 03:04:05");
	assert_int_equal(t->footer_ok, 1);
	assert_int_equal(t->rows_bad, 0);
	mt_import_free(im);
}

static void footer_and_row_checks(void **state)
{
	static const char bad_footer[] =
		"# Collective test starting: all_reduce_perf\n"
		"#  Rank  0 Group  0 Pid 1 on h device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
		"#  Rank  1 Group  0 Pid 2 on h device  1 [0000:05:00] NVIDIA H100 80GB HBM3\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"  8589934592    2147483648     float     sum      -1   269368   31.89   31.89      0   269407   31.88   31.88      0\n"
		"  4294967296    1073741824     float     sum      -1   134734   31.88   31.88      0   135069   31.80   31.80      0\n"
		"# Out of bounds values : 0 OK\n"
		"# Avg bus bandwidth    : 31.95 \n";
	static const char bad_row[] =
		"# Collective test starting: all_reduce_perf\n"
		"#  Rank  0 Group  0 Pid 1 on h device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
		"#  Rank  1 Group  0 Pid 2 on h device  1 [0000:05:00] NVIDIA H100 80GB HBM3\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"  8589934592    2147483648     float     sum      -1   269368   31.89   33.89      0   269407   31.88   31.88      0\n";
	struct mt_import_opts strict = { -1, 0, 1 };
	struct mt_import *im;

	(void)state;
	im = parse_nt("x.log", bad_footer);
	assert_int_equal(im->nt[0].footer_ok, 0);
	assert_true(has_warning(im, "x.log:8: all_reduce_perf: the footer 'Avg bus bandwidth : 31.95' "
				"is not the mean of the 4 busbw values"));
	mt_import_free(im);
	assert_int_equal(parse_fails(MT_IMP_NCCL_TESTS, "x.log", bad_footer, &strict, "(--strict)"),
			 MT_EINFEASIBLE);

	im = parse_nt("x.log", bad_row);
	assert_int_equal(im->nt[0].rows_bad, 1);
	assert_int_equal(im->nt[0].bad_line, 5);
	assert_true(has_warning(im, "x.log:5: all_reduce_perf: busbw 33.89 is not algbw x 1"));
	mt_import_free(im);
}

static void bad_input_names_file_line_and_column(void **state)
{
	static const char header_only[] =
		"# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
	static const char not_a_number[] =
		"# Collective test starting: all_reduce_perf\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"        1024           256     float     sum      -1    35.59    0.03    fast      0    30.61    0.03    0.03      0\n";
	static const char short_row[] =
		"# Collective test starting: all_reduce_perf\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"        1024           256     float     sum      -1    35.59    0.03\n";
	static const char bad_avg[] =
		"# Collective test starting: all_reduce_perf\n"
		"#  Rank  0 Group  0 Pid 1 on h device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
		"#  Rank  1 Group  0 Pid 2 on h device  1 [0000:05:00] NVIDIA H100 80GB HBM3\n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"        1024           256     float     sum      -1    35.59    0.03    0.03      0    30.61    0.03    0.03      0\n"
		"# Avg bus bandwidth    : lots\n";
	static const char nvb[] =
		"nvbandwidth Version: v0.8\n"
		"Running host_to_device_memcpy_ce.\n"
		"memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
		"           0\n"
		" 0     55.63\n"
		"\n"
		"SUM host_to_device_memcpy_ce 55.63\n";

	(void)state;
	parse_fails(MT_IMP_NCCL_TESTS, "e.txt", "", NULL, "e.txt: empty file");
	parse_fails(MT_IMP_NCCL_TESTS, "r.txt", "hello\nworld\n", NULL,
		    "r.txt: not nccl-tests output: no result table");
	parse_fails(MT_IMP_NCCL_TESTS, "h.txt", header_only, NULL,
		    "h.txt:2: a table header with no result rows");
	parse_fails(MT_IMP_NCCL_TESTS, "n.txt", not_a_number, NULL,
		    "n.txt:3: column 'busbw (out-of-place)' of the result row: expected a number, got 'fast'");
	parse_fails(MT_IMP_NCCL_TESTS, "s.txt", short_row, NULL,
		    "s.txt:3: a result row of 7 columns; the table header (line 2) has 13");
	parse_fails(MT_IMP_NCCL_TESTS, "a.txt", bad_avg, NULL,
		    "a.txt:6: 'Avg bus bandwidth': expected a number of GB/s after the colon, got 'lots'");
	parse_fails(MT_IMP_NCCL_TESTS, "v.txt", nvb, NULL, "this is nvbandwidth output");
	parse_fails(MT_IMP_NVBANDWIDTH, "t.txt", old_layout, NULL, "this is nccl-tests output");
	parse_fails(MT_IMP_NVBANDWIDTH, "j.json", "{\"results\": []}", NULL, "this is nccl-tests JSON");
	parse_fails(MT_IMP_NCCL_TESTS, "j.json", "{\"results\": [1]}", NULL,
		    "j.json: field 'results[0]': expected an object, got a number");
	parse_fails(MT_IMP_NCCL_TESTS, "j.json", "{\"results\": [", NULL, "j.json:1:");
	parse_fails(MT_IMP_NVBANDWIDTH, "m.txt",
		    "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
		    "           0         1\n 0     55.63      fast\n", NULL,
		    "m.txt:4: column 2 of the host_to_device_memcpy_ce matrix: expected a number or N/A, got 'fast'");
}

/* ------------------------------------------------------------------ */
/* the recorded logs */

static const char *const logs[] = {
	"a100_16node128gpu_all_reduce_oldformat_abci.txt",
	"a100_1node8gpu_all_reduce_oldformat_abci.txt",
	"a100_1node8gpu_sendrecv_g8_liplus.txt",
	"a100_2node16gpu_all_reduce_oldformat_abci.txt",
	"h100_10node80gpu_allcoll_nccltests2.17.8_xxrjun.txt",
	"h100_1node8gpu_all_reduce_g8_together_nvls.txt",
	"h100_1node8gpu_allcoll_nccltests2.17.8_xxrjun.txt",
	"h100_1node8gpu_reduce_scatter_g8_together_ring.txt",
	"h100_2node16gpu_all_reduce_gcp_a3mega.txt",
	"h100_2node16gpu_alltoall_sendrecv_nccltests2.17.8_xxrjun.txt",
	"h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1-with-tuner.txt",
	"h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1.txt",
	"h200_2node2gpu_all_reduce_1nic_dranet.txt",
};

static struct mt_import *load_log(const char *name)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_import *im = NULL;
	char path[256];

	snprintf(path, sizeof(path), "tests/fixtures/nccl-tests/%s", name);
	if (mt_import_file(MT_IMP_NCCL_TESTS, path, NULL, &im, &err))
		fail_msg("%s", err.msg);
	return im;
}

static void every_log_reproduces_its_footers(void **state)
{
	/* tests, rows of the first test, ranks, hosts of each log */
	static const int want[][4] = {
		{ 1, 24, 128, 16 }, { 1, 24, 8, 1 }, { 1, 4, 8, 1 }, { 1, 24, 16, 2 },
		{ 5, 10, 80, 10 }, { 1, 31, 8, 1 }, { 5, 10, 8, 1 }, { 1, 31, 8, 1 },
		{ 1, 31, 16, 2 }, { 2, 3, 16, 2 }, { 1, 32, 16, 2 }, { 1, 32, 16, 2 }, { 1, 24, 2, 2 },
	};
	size_t i;
	int j, footers = 0, exact = 0;

	(void)state;
	for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		struct mt_import *im = load_log(logs[i]);
		assert_int_equal(im->nnt, want[i][0]);
		assert_int_equal(im->nt[0].nrows, want[i][1]);
		for (j = 0; j < im->nnt; j++) {
			const struct mt_nt_test *t = &im->nt[j];
			assert_true(t->op >= 0);
			assert_int_equal(t->ranks, want[i][2]);
			assert_int_equal(t->hosts, want[i][3]);
			assert_int_equal(t->rows_bad, 0);
			assert_int_equal(t->rows_checked, t->nrows);
			if (t->footer_ok < 0)
				continue;
			if (t->footer_ok != 1)
				fail_msg("%s %s: footer %s, the printed busbw allow %.6f to %.6f", logs[i],
					 t->name, t->avg.s, t->mean_lo, t->mean_hi);
			footers++;
			exact += t->footer_exact;
			if (mt_test_verbose())
				printf("# %s %s: footer %s, mean of printed %.6f, estimate %.6f%s\n", logs[i],
				       t->name, t->avg.s, t->mean_printed, t->mean_est,
				       t->footer_exact ? " (exact)" : "");
		}
		mt_import_free(im);
	}
	assert_int_equal(footers, 21);
	assert_int_equal(exact, 15);
}

/* xxrjun's own summariser read the same logs: its average and its peak
 * (the larger of out-of-place and in-place) are ours */
static void logs_agree_with_the_upstream_summaries(void **state)
{
	static const struct {
		const char *log, *csv, *file;
	} cases[] = {
		{ "h100_1node8gpu_allcoll_nccltests2.17.8_xxrjun.txt", "xxrjun_single-node_summary.csv",
		  "nccl_N1_G8_cnode3-002.log" },
		{ "h100_10node80gpu_allcoll_nccltests2.17.8_xxrjun.txt", "xxrjun_multi-node_summary.csv",
		  "nccl_N10_G8.log" },
	};
	size_t c;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_import *im = load_log(cases[c].log);
		char path[256], *csv, *line, *save = NULL;
		size_t len;
		int matched = 0;

		snprintf(path, sizeof(path), "tests/fixtures/nccl-tests/%s", cases[c].csv);
		if (mt_read_file(path, 1 << 20, &csv, &len, &err))
			fail_msg("%s", err.msg);
		for (line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char file[64], test[64];
			double avg, peak;
			int j;
			if (sscanf(line, "%63[^,],%63[^,],%*d,%*d,%*[^,],%*d,%*d,%lf,%lf", file, test, &avg,
				   &peak) != 4 || strcmp(file, cases[c].file))
				continue;
			for (j = 0; j < im->nnt; j++) {
				const struct mt_nt_test *t = &im->nt[j];
				if (strcmp(t->name, test))
					continue;
				assert_close(t->avg.v, avg, 1e-12);
				assert_close(fmax(t->peak_oop, t->peak_ip), peak, 1e-12);
				matched++;
			}
		}
		assert_int_equal(matched, 5);
		free(csv);
		mt_import_free(im);
	}
}

static void nccl_tests_json_file(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_import *im = NULL;
	const struct mt_nt_test *t;

	(void)state;
	if (mt_import_file(MT_IMP_NCCL_TESTS,
			   "tests/fixtures/nccl-tests/constructed/all_reduce_g8_v2.17.8.json", NULL, &im,
			   &err))
		fail_msg("%s", err.msg);
	assert_true(im->json);
	assert_int_equal(im->json_version, 1);
	t = &im->nt[0];
	assert_int_equal(t->layout, MT_NT_JSON);
	assert_string_equal(t->name, "all_reduce_perf");
	assert_int_equal(t->op, MT_COLL_ALL_REDUCE);
	assert_int_equal(t->ranks, 8);                  /* 1 device listed x 1 thread x 8 GPUs */
	assert_int_equal(t->hosts, 1);
	assert_string_equal(t->nccl, "2.26.2");
	assert_int_equal(t->nrows, 31);
	assert_true(t->rows[0].has_root);
	assert_int_equal(t->rows[0].root, -1);
	assert_true(t->has_avg);                        /* "average_bus_bandwidith" */
	assert_int_equal(t->footer_ok, 1);
	assert_int_equal(t->footer_exact, 1);
	assert_int_equal(t->rows_bad, 0);
	mt_import_free(im);
}

static void nvbandwidth_text_and_json(void **state)
{
	static const char *const files[] = {
		"tests/fixtures/nvbandwidth/h100_8gpu_nvbandwidth_v0.8_constructed.txt",
		"tests/fixtures/nvbandwidth/h100_8gpu_nvbandwidth_v0.8_constructed.json",
	};
	size_t f;

	(void)state;
	for (f = 0; f < 2; f++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_import *im = NULL;
		cJSON *doc = NULL, *off, *e;
		char **gw = NULL;
		int ngw = 0, i, seen = 0;
		struct mt_cluster *c = NULL;

		if (mt_import_file(MT_IMP_NVBANDWIDTH, files[f], NULL, &im, &err))
			fail_msg("%s", err.msg);
		assert_string_equal(im->nvb_version, "v0.8");
		assert_string_equal(im->driver, "570.124.06");
		assert_int_equal(im->ngpu, 8);
		assert_string_equal(im->gpu[7], "NVIDIA H100 80GB HBM3");
		assert_string_equal(im->host, "dgx-node-01");
		assert_int_equal(im->nnvb, 5);
		for (i = 0; i < im->nnvb; i++)
			assert_int_equal(im->nvb[i].sum_ok, 1);
		assert_int_equal(im->nvb[4].nrows, 8);
		assert_true(isnan(im->nvb[4].v[0]));         /* the N/A diagonal */
		assert_string_equal(mt_import_base_for_gpu(mt_import_gpu(&im, 1)), "dgx-h100");

		assert_int_equal(mt_profile_new("dgx-h100", "t", &doc, &err), 0);
		assert_int_equal(mt_import_build(doc, &im, 1, NULL, &gw, &ngw, &err), 0);
		off = cJSON_GetObjectItemCaseSensitive(doc, "offload");
		cJSON_ArrayForEach(e, off) {
			const char *d = cJSON_GetObjectItemCaseSensitive(e, "direction")->valuestring;
			double g = cJSON_GetObjectItemCaseSensitive(e, "gbps")->valuedouble;
			if (!strcmp(d, "h2d")) {
				assert_close(g, f ? 55.638 : 55.635, 1e-9);
				seen++;
			}
			if (!strcmp(d, "bidirectional")) {
				assert_true(g > 46.8 && g < 46.95);
				seen++;
			}
		}
		assert_int_equal(seen, 2);
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "outliers")), 1);
		assert_true(has_warning(im, "device_to_device_memcpy_read_ce"));
		assert_int_equal(mt_cluster_from_json(doc, "x", &c, &err), 0);
		assert_close(mt_offload_gbps(c, MT_OFF_H2D), f ? 55.638 : 55.635, 1e-9);
		mt_cluster_free(c);
		cJSON_Delete(doc);
		for (i = 0; i < ngw; i++)
			free(gw[i]);
		free(gw);
		mt_import_free(im);
	}
}

/* The 8-GPU logs into dgx-h100: curves replace the bundled ones, the
 * look-ups return the measurements, the provenance names the file. */
static void logs_become_profile_curves(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_import *ims[2];
	struct mt_cluster *c = NULL;
	cJSON *doc = NULL;
	char **gw = NULL;
	int ngw = 0, i, found = 0;

	(void)state;
	ims[0] = load_log("h100_1node8gpu_allcoll_nccltests2.17.8_xxrjun.txt");
	ims[1] = load_log("h100_2node16gpu_alltoall_sendrecv_nccltests2.17.8_xxrjun.txt");
	assert_int_equal(mt_profile_new("dgx-h100", "t", &doc, &err), 0);
	if (mt_import_build(doc, ims, 2, NULL, &gw, &ngw, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(ngw, 0);
	for (i = 0; i < 5; i++) {
		assert_int_equal(ims[0]->nt[i].span, MT_SPAN_NVLINK);
		assert_int_equal(ims[0]->nt[i].npoints, 10);
		assert_string_equal(ims[0]->nt[i].replaced, "base profile");
	}
	assert_int_equal(ims[1]->nt[0].span, MT_SPAN_NETWORK);
	assert_int_equal(ims[1]->nt[0].curve_per_node, 8);
	if (mt_cluster_from_json(doc, "x", &c, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(c->nccl_version, "2.29.2");
	/* the 8 GiB all_reduce point as measured */
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_REDUCE, 8, 8, 8589934592.0), 481.39, 1e-9);
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_TO_ALL, 16, 8, 8589934592.0), 91.89, 1e-9);
	for (i = 0; i < c->nsources; i++)
		if (!strcmp(c->sources[i].kind, "imported") &&
		    strstr(c->sources[i].citation, "nccl-tests 2.17.8 all_reduce_perf, all_gather_perf, "
						     "reduce_scatter_perf, alltoall_perf, sendrecv_perf, "
						     "NCCL 2.29.2, 8 ranks on 1 host, NVIDIA H100 80GB HBM3: "
						     "h100_1node8gpu_allcoll_nccltests2.17.8_xxrjun.txt"))
			found = 1;
	assert_true(found);
	mt_cluster_free(c);
	cJSON_Delete(doc);
	free(gw);
	mt_import_free(ims[0]);
	mt_import_free(ims[1]);
}

/* The summaries say what was read and what became of it. */
static void summaries_text_and_json(void **state)
{
	struct mt_import *im = parse_nt("p5.log", p5_like);
	struct mt_import *const ims[1] = { im };
	struct mt_import_summary s = { NULL, NULL, NULL, NULL, 0 };
	char w0[] = "a warning about the import", *gw[1] = { w0 };
	struct sbuf sb = SBUF_INIT;

	(void)state;
	mt_import_summary_text(&sb, ims, 1, MT_IMP_NCCL_TESTS, &s);
	assert_false(sb.failed);
	assert_non_null(strstr(sb.buf, "megatune import: nccl-tests, 1 file\n"));
	assert_non_null(strstr(sb.buf, "all_reduce"));
	assert_non_null(strstr(sb.buf, "checked; nothing written (no -o, and no bundled"));
	sbuf_release(&sb);

	s.base = "dgx-h100";
	s.name = "p5";
	s.written = "-";
	s.warn = gw;
	s.nwarn = 1;
	mt_import_summary_text(&sb, ims, 1, MT_IMP_NCCL_TESTS, &s);
	assert_non_null(strstr(sb.buf, "wrote standard output: profile 'p5' = dgx-h100 "));
	sbuf_release(&sb);

	mt_import_summary_json(&sb, ims, 1, MT_IMP_NCCL_TESTS, &s);
	assert_false(sb.failed);
	assert_true(!strncmp(sb.buf, "{\n  \"schema\": \"megatune.import/1\",", 34));
	assert_non_null(strstr(sb.buf, "\"written\": \"-\""));
	assert_non_null(strstr(sb.buf, "\"a warning about the import\""));
	assert_int_equal(sb.buf[sb.len - 1], '\n');
	sbuf_release(&sb);

	s.base = NULL;
	mt_import_summary_json(&sb, ims, 1, MT_IMP_NCCL_TESTS, &s);
	assert_non_null(strstr(sb.buf, "\"base\": null"));
	sbuf_release(&sb);
	mt_import_free(im);
}

static void base_profile_from_gpu_name(void **state)
{
	(void)state;
	assert_string_equal(mt_import_base_for_gpu("NVIDIA H100 80GB HBM3"), "dgx-h100");
	assert_string_equal(mt_import_base_for_gpu("NVIDIA H200"), "dgx-h200");
	assert_string_equal(mt_import_base_for_gpu("A100-SXM4-40GB"), "dgx-a100-80g");
	assert_string_equal(mt_import_base_for_gpu("NVIDIA B200"), "dgx-b200");
	assert_string_equal(mt_import_base_for_gpu("HGX GB200"), "gb200-nvl72");
	assert_null(mt_import_base_for_gpu("Tesla V100-SXM2-32GB"));
	assert_null(mt_import_base_for_gpu(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tags_inside_rows_are_removed),
		cmocka_unit_test(old_layout_with_error_column),
		cmocka_unit_test(very_old_layout_without_redop),
		cmocka_unit_test(concatenated_tests),
		cmocka_unit_test(missing_footer_and_device_list),
		cmocka_unit_test(ranks_from_busbw_over_algbw),
		cmocka_unit_test(cputime_per_iteration_and_timestamps),
		cmocka_unit_test(footer_and_row_checks),
		cmocka_unit_test(bad_input_names_file_line_and_column),
		cmocka_unit_test(every_log_reproduces_its_footers),
		cmocka_unit_test(logs_agree_with_the_upstream_summaries),
		cmocka_unit_test(nccl_tests_json_file),
		cmocka_unit_test(nvbandwidth_text_and_json),
		cmocka_unit_test(logs_become_profile_curves),
		cmocka_unit_test(base_profile_from_gpu_name),
		cmocka_unit_test(summaries_text_and_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
