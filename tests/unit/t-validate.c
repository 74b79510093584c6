/* SPDX-License-Identifier: MIT */
/* validate/: the log parser line by line and in chunks, the template filler,
 * the validation document's round trip and its summary. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "../../lib/fsutil.h"
#include "../../validate/logparse.h"
#include "../../validate/runner.h"
#include "../../validate/validation.h"

static struct mt_logparse *parse(const char *text, size_t chunk)
{
	struct mt_logparse *p = malloc(sizeof(*p));
	size_t n = strlen(text), i;

	assert_non_null(p);
	mt_logparse_init(p);
	for (i = 0; i < n; i += chunk)
		mt_logparse_feed(p, text + i, n - i < chunk ? n - i : chunk);
	mt_logparse_finish(p);
	return p;
}

#define MLM(n, ms, extra)                                                                  \
	" [2025-08-28 16:31:53] iteration " #n "/     128 | consumed samples: 160 | elapsed " \
	"time per iteration (ms): " #ms " | learning rate: 4.9E-07 | global batch size: 8 |" \
	extra " loss scale: 1.0 | number of skipped iterations:   0 | number of nan "       \
	"iterations:   0 |"

static void chunking_and_line_ends_do_not_matter(void **state)
{
	const char *log = "[default0]: " MLM(1, 900.0, " lm loss: 1.1E+01 |") "\r\n"
			  " 3: " MLM(2, 500.0, " lm loss: 1.0E+01 |") "\r\n"
			  "[rank0]: " MLM(3, 510.5, " lm loss: 9.9E+00 |") "\n"
			  " 1: " MLM(3, 999.0, " lm loss: 9.9E+00 |") "\n"
			  "[Rank 3] (after 3 iterations) memory (MB) | allocated: 1 | max allocated: "
			  "2048 | reserved: 3 | max reserved: 4096\n"
			  "[Rank 0] (after 3 iterations) memory (MB) | allocated: 1 | max allocated: "
			  "1024 | reserved: 3 | max reserved: 8192";
	size_t chunks[] = { 1, 2, 7, 64, 100000 };
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		struct mt_logparse *p = parse(log, chunks[k]);

		assert_int_equal(p->nstep, 3);
		assert_int_equal(p->lineno, 6);
		assert_int_equal(p->iter[2], 3);
		assert_close(p->step_s[2], 0.5105, 1e-12);
		assert_close(p->mem_max_alloc_b, 2048.0 * 1048576, 1e-12);
		assert_close(p->mem_max_reserved_b, 8192.0 * 1048576, 1e-12);
		assert_int_equal(mt_logparse_status(p), MT_VS_OK);
		free(p);
	}
}

/* each rank's last memory report, its four figures, in MB, GB or the
 * cached form of 2019, and a line without a rank */
static void each_rank_keeps_its_last_report(void **state)
{
	const char *log =
		"[Rank 1] (after 10 iterations) memory (MB) | allocated: 6351.375 | max allocated: "
		"7974.5 | reserved: 8528.0 | max reserved: 8528.0\n"
		"[Rank 0] (after 10 iterations) memory (MB) | allocated: 6245.0 | max allocated: "
		"6245.5 | reserved: 6554.0 | max reserved: 6554.0\n"
		"[Rank 1] (after 20 iterations) memory (MB) | allocated: 100 | max allocated: 200 | "
		"reserved: 300 | max reserved: 400\n"
		"[Rank 2] (after 1 iterations) memory (GB) | mem-allocated-gigabytes: 51.072 | "
		"mem-active-gigabytes: 51.072 | mem-reserved-gigabytes: 216.89 | "
		"mem-max-allocated-gigabytes: 194.41 | mem-max-reserved-gigabytes: 216.89\n"
		"after 100 iterations memory (MB) | allocated: 5133.5 | max allocated: 7899.0 | "
		"cached: 9324.0 | max cached: 9325.0\n";
	struct mt_logparse *p = parse(log, 4096);
	const double mb = 1048576.0;

	(void)state;
	assert_int_equal(p->nmemr, 4);
	assert_int_equal(p->memr[0].rank, 1); /* in the order first seen, the last report */
	assert_int_equal(p->memr[0].lineno, 3);
	assert_close(p->memr[0].alloc_b, 100 * mb, 1e-12);
	assert_close(p->memr[0].max_alloc_b, 200 * mb, 1e-12);
	assert_close(p->memr[0].reserved_b, 300 * mb, 1e-12);
	assert_close(p->memr[0].max_reserved_b, 400 * mb, 1e-12);
	assert_int_equal(p->memr[1].rank, 0);
	assert_close(p->memr[1].alloc_b, 6245.0 * mb, 1e-12); /* not max allocated's */
	assert_close(p->memr[1].max_alloc_b, 6245.5 * mb, 1e-12);
	assert_int_equal(p->memr[2].rank, 2);
	assert_close(p->memr[2].alloc_b, 51.072e9, 1e-12);
	assert_close(p->memr[2].max_alloc_b, 194.41e9, 1e-12);
	assert_close(p->memr[2].max_reserved_b, 216.89e9, 1e-12);
	assert_int_equal(p->memr[3].rank, -1);
	assert_close(p->memr[3].reserved_b, 9324.0 * mb, 1e-12);
	assert_close(p->memr[3].max_reserved_b, 9325.0 * mb, 1e-12);
	free(p);
}

static void a_vanished_loss_is_nan_unless_skipped(void **state)
{
	struct mt_logparse *p;

	(void)state;
	/* the loss vanishes at iteration 3: NaN, with that line as evidence */
	p = parse(MLM(1, 900.0, " lm loss: 1.1E+01 |") "\n" MLM(2, 500.0, " lm loss: 1.0E+01 |")
		  "\n" MLM(3, 500.0, "") "\n", 4096);
	assert_int_equal(mt_logparse_status(p), MT_VS_NAN);
	assert_int_equal(p->evidence_lineno, 3);
	free(p);
	/* fp16 loss-scale search: no loss because every iteration was skipped */
	p = parse(" iteration       10/ 1000000 | elapsed time per iteration (ms): 356.2 | loss "
		  "scale: 8388608.0 | number of skipped iterations:  10 | number of nan "
		  "iterations:   0 |\n", 3);
	assert_int_equal(mt_logparse_status(p), MT_VS_NO_ITERATIONS);
	assert_int_equal(p->skipped, 10);
	assert_int_equal(p->skip_lineno, 1);
	assert_int_equal(p->nstep, 0);
	free(p);
}

static void a_cut_last_line_is_a_cut_log(void **state)
{
	struct mt_logparse *p;
	size_t chunks[] = { 1, 5, 4096 }, k;
	struct sbuf sb = SBUF_INIT;

	(void)state;
	/* cut in the elapsed time, after lines with a loss: the log is cut, not
	 * NaN, and its 0.163 s fragment is no step */
	for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		p = parse(MLM(1, 900.0, " lm loss: 1.1E+01 |") "\n" MLM(2, 500.0, " lm loss: 1.0E+01 |")
			  "\n [2025-08-28 16:31:53] iteration 3/     128 | consumed samples: 160 | elapsed "
			  "time per iteration (ms): 163", chunks[k]);
		assert_int_equal(mt_logparse_status(p), MT_VS_OK);
		assert_int_equal(p->nstep, 2);
		assert_int_equal(p->cut_lineno, 3);
		assert_int_equal(p->last_iter, 2);
		assert_non_null(strstr(p->cut_line, "(ms): 163"));
		free(p);
	}
	/* cut before its elapsed time, or right after a separator */
	p = parse(MLM(1, 900.0, " lm loss: 1.1E+01 |") "\n iteration 2/     128 | consumed", 4096);
	assert_int_equal(p->cut_lineno, 2);
	assert_int_equal(mt_logparse_status(p), MT_VS_OK);
	free(p);
	p = parse(MLM(1, 900.0, " lm loss: 1.1E+01 |") "\n iteration 2/     128 | elapsed time per "
		  "iteration (ms): 500.0 |", 4096);
	assert_int_equal(p->cut_lineno, 2);
	assert_int_equal(p->nstep, 1);
	mt_logparse_text(&sb, p);
	assert_non_null(strstr(sb.buf, "log cut: line 2 ends mid-line; its step is not counted"));
	sbuf_release(&sb);
	free(p);
	/* the only line, not closed by '|'; a whole last line without its newline counts */
	p = parse(" iteration 1/ 10 | elapsed time per iteration (ms): 16", 4096);
	assert_int_equal(p->cut_lineno, 1);
	assert_int_equal(mt_logparse_status(p), MT_VS_NO_ITERATIONS);
	free(p);
	p = parse(MLM(1, 900.0, " lm loss: 1.1E+01 |") "\n" MLM(2, 500.0, " lm loss: 1.0E+01 |"), 4096);
	assert_int_equal(p->cut_lineno, 0);
	assert_int_equal(p->nstep, 2);
	free(p);
	/* a Lightning bar without its closing bracket */
	p = parse("Epoch 0: : 100%|####| 50/50 [16:26<00:00, train_step_timing in s=12.80]\rEpoch 0: "
		  ": 100%|####| 51/52 [16:26<00:00, train_step_timing in s=1", 4096);
	assert_int_equal(p->cut_lineno, 2);
	assert_int_equal(p->nstep, 1);
	free(p);
	/* a whole line that stops before the loss says nothing of the loss */
	p = parse(MLM(1, 900.0, " lm loss: 1.1E+01 |") "\n iteration 2/     128 | elapsed time per "
		  "iteration (ms): 500.0 | learning rate: 4.9E-07 |\n", 4096);
	assert_int_equal(mt_logparse_status(p), MT_VS_OK);
	assert_int_equal(p->cut_lineno, 0);
	free(p);
}

static void the_most_telling_failure_wins(void **state)
{
	struct mt_logparse *p;

	(void)state;
	/* an NCCL error first, then the OOM that caused it: OOM, its line */
	p = parse("torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled\n"
		  "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)\n"
		  "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
		  "has a total capacity of 79.11 GiB of which 1.2 GiB is free.\n"
		  "NCCL error again\n", 5);
	assert_int_equal(mt_logparse_status(p), MT_VS_OOM);
	assert_int_equal(p->evidence_lineno, 3);
	free(p);
	p = parse("a\nx NCCL WARN Cuda failure 2 'out of memory'\n", 4096);
	assert_int_equal(mt_logparse_status(p), MT_VS_OOM);
	assert_int_equal(p->evidence_lineno, 2);
	free(p);
	p = parse("AssertionError: Rank 3: found NaN in local grad norm\n", 4096);
	assert_int_equal(mt_logparse_status(p), MT_VS_NAN);
	free(p);
}

/* a failed launch's evidence: the last `error:` line, else the last line of text
 * (mpirun's banners of dashes are no evidence) */
static void an_exit_names_its_error_line(void **state)
{
	struct mt_logparse *p;

	(void)state;
	p = parse("megatune proxy: error: adv.json: job.model: cannot read 'm.json'\n"
		  "------------------------------------------\n"
		  "Primary job  terminated normally, but 1 process returned\n"
		  "  Exit code:    2\n"
		  "------------------------------------------\n  \n", 7);
	assert_int_equal(p->failure, MT_VS_OK); /* no failure line: an exit */
	assert_int_equal(p->err_lineno, 1);
	assert_string_equal(p->err_line, "megatune proxy: error: adv.json: job.model: cannot read "
			    "'m.json'");
	assert_int_equal(p->last_lineno, 4);
	assert_string_equal(p->last_line, "  Exit code:    2");
	free(p);
	p = parse("usage: x\n[rank0]: ValueError: bad\nlast words\n=====\n", 4096);
	assert_int_equal(p->err_lineno, 2);
	assert_int_equal(p->last_lineno, 3);
	free(p);
	p = parse("all is well\n", 4096);
	assert_int_equal(p->err_lineno, 0);
	assert_int_equal(p->last_lineno, 1);
	free(p);
}

static void nemo_lightning_and_step_time(void **state)
{
	struct mt_logparse *p;

	(void)state;
	p = parse(" 0: Training epoch 0, iteration 8/29 | max_memory_reserved: 2147483648 | "
		  "max_memory_allocated: 1073741824 | train_step_timing in s: 27.01 | "
		  "TFLOPS_per_GPU: 48.58\n 0: \n", 4096);
	assert_int_equal(p->nstep, 1);
	assert_int_equal(p->iter[0], 9); /* 0-based */
	assert_close(p->step_s[0], 27.01, 1e-12);
	assert_close(p->log_tflops[0], 48.58, 1e-12);
	assert_close(p->mem_max_reserved_b, 2147483648.0, 1e-12);
	free(p);
	p = parse("Epoch 0: : 100%|####| 50/50 [16:26<00:00, v_num=gjbq, train_step_timing in "
		  "s=12.80]\rEpoch 0: : 100%|####| 51/52 [16:26<00:00, train_step_timing in s=12.90]",
		  9);
	assert_int_equal(p->nstep, 2);
	assert_int_equal(p->iter[1], 51);
	free(p);
	/* Step Time lines count only without iteration lines */
	p = parse("Step Time : 20.61s GPU utilization: 538.9MODEL_TFLOP/s/GPU\n", 4096);
	assert_int_equal(p->nstep, 1);
	assert_close(p->log_tflops[0], 538.9, 1e-12);
	free(p);
	p = parse(MLM(1, 20000.0, " lm loss: 1.0E+01 |") "\nStep Time : 20.61s GPU utilization: "
		  "538.9 TFLOP/s/GPU\n", 4096);
	assert_int_equal(p->nstep, 1);
	assert_close(p->step_s[0], 20.0, 1e-12);
	free(p);
}

static const char *lk(const char *key, void *ctx)
{
	(void)ctx;
	if (!strcmp(key, "name"))
		return "c1-tp2";
	if (!strcmp(key, "gpus"))
		return "8";
	return NULL;
}

#define W "the --launch template" /* what mt_program_check names */

static void templates_fill_quote_and_refuse(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb;

	(void)state;
	sbuf_init(&sb);
	assert_int_equal(mt_template_fill("run {name} -n {gpus} ${X} {{y}} {a,b} {}", lk, NULL,
					  &sb, &err), MT_OK);
	assert_string_equal(sb.buf, "run c1-tp2 -n 8 ${X} {y} {a,b} {}");
	sbuf_reset(&sb);
	assert_int_equal(mt_template_fill("run {nme}", lk, NULL, &sb, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "unknown placeholder {nme}"));
	sbuf_release(&sb);
	assert_int_equal(mt_program_check("A=1 B=2 sh -c true", W, &err), MT_OK);
	assert_int_equal(mt_program_check("/nonexistent/x y", W, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "'/nonexistent/x'"));
	assert_non_null(strstr(err.msg, "(the program of the --launch template)"));
	assert_int_equal(mt_program_check("env A=1 'B=2 3' sh", W, &err), MT_OK);
	assert_int_equal(mt_program_check("env A=1 no-such-program-xyz", W, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "'no-such-program-xyz' is not found on PATH"));
	assert_int_equal(mt_program_check("cd /tmp && no-such-program-xyz", W, &err), MT_OK);
}

static void kendall_tau_counts_pairs(void **state)
{
	double a[] = { 1, 2, 3, 4 }, b[] = { 10, 20, 30, 40 }, c[] = { 40, 30, 20, 10 };
	double d[] = { 10, 30, 20, 40 };

	(void)state;
	assert_close(mt_kendall_tau(a, b, 4), 1.0, 1e-12);
	assert_close(mt_kendall_tau(a, c, 4), -1.0, 1e-12);
	assert_close(mt_kendall_tau(a, d, 4), 4.0 / 6.0, 1e-12);
	assert_true(isnan(mt_kendall_tau(a, b, 1)));
}

static void the_document_reads_back(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_validation v, r;
	char path[] = "/tmp/t-validate-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	memset(&v, 0, sizeof(v));
	v.model = strdup("m");
	v.gpus = 8;
	v.ncand = 3;
	v.cand = calloc(3, sizeof(*v.cand));
	for (int i = 0; i < 3; i++) {
		char n[16];

		snprintf(n, sizeof(n), "c%d", i + 1);
		v.cand[i].name = strdup(n);
		v.cand[i].predicted_rank = i + 1;
		v.cand[i].pred.step_s = 1.0 + i * 0.1;
		v.cand[i].wall_s = NAN;
		v.cand[i].has_measured = i != 1;
		v.cand[i].status = i == 1 ? MT_VS_OOM : MT_VS_OK;
		v.cand[i].meas.step_s = 2.0 - i * 0.5; /* c3 fastest */
		v.cand[i].meas.log_tflops_per_gpu = NAN;
		v.cand[i].meas.mem_max_allocated_gib = NAN;
		v.cand[i].meas.mem_max_reserved_gib = NAN;
	}
	v.cand[1].evidence_line = strdup("CUDA out of memory \"quoted\"");
	v.cand[1].evidence_lineno = 42;
	/* tune's runs: c3 first, without a correction; c1 second, with one */
	v.cand[2].tune_run = 1;
	v.cand[2].tune_corrected_s = NAN;
	v.cand[0].tune_run = 2;
	v.cand[0].tune_fitted_from = 1;
	v.cand[0].tune_corrected_s = 1.9;
	v.cand[1].tune_corrected_s = NAN;
	assert_int_equal(mt_validation_write(path, &v, &err), MT_OK);
	assert_int_equal(mt_validation_load(path, "--validation", &r, &err), MT_OK);
	assert_int_equal(r.ncand, 3);
	assert_string_equal(r.cand[1].evidence_line, "CUDA out of memory \"quoted\"");
	assert_int_equal(r.cand[1].evidence_lineno, 42);
	assert_int_equal(r.cand[1].status, MT_VS_OOM);
	assert_false(r.cand[1].has_measured);
	assert_int_equal(r.sum.ok, 2);
	assert_int_equal(r.sum.failed, 1);
	assert_string_equal(r.sum.measured_ranking[0], "c3");
	assert_close(r.sum.kendall_tau, -1.0, 1e-12);
	assert_close(r.sum.mae_step_s, (1.0 + 0.2) / 2, 1e-9);
	assert_int_equal(r.cand[2].tune_run, 1);
	assert_true(isnan(r.cand[2].tune_corrected_s));
	assert_int_equal(r.cand[0].tune_run, 2);
	assert_int_equal(r.cand[0].tune_fitted_from, 1);
	assert_close(r.cand[0].tune_corrected_s, 1.9, 1e-9);
	assert_int_equal(r.cand[1].tune_run, 0);
	assert_true(isnan(r.cand[1].tune_corrected_s));
	mt_validation_free(&r);
	mt_validation_free(&v);
	unlink(path);
}

/* each rank's memory report beside its stage's prediction, exactly in
 * bytes, NAN as null; the stage of a rank in Megatron-LM's rank order */
static void memory_ranks_read_back(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_validation v, r;
	char path[] = "/tmp/t-validate-XXXXXX";
	int fd = mkstemp(path);
	const double mb = 1048576.0;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	memset(&v, 0, sizeof(v));
	v.model = strdup("m");
	v.gpus = 8;
	v.ncand = 1;
	v.cand = calloc(1, sizeof(*v.cand));
	v.cand[0].name = strdup("c1");
	v.cand[0].status = MT_VS_OK;
	v.cand[0].wall_s = NAN;
	v.cand[0].nmemr = 2;
	v.cand[0].memr = calloc(2, sizeof(*v.cand[0].memr));
	v.cand[0].memr[0] = (struct mt_vmemrank){ 5, 1, 17, 6351.375 * mb, 7974.18994140625 * mb,
						  8528 * mb, NAN, { 6e9, 7.5e9, 8e9 } };
	v.cand[0].memr[1] = (struct mt_vmemrank){ -1, -1, 18, NAN, 2048 * mb, NAN, 4096 * mb,
						  { NAN, NAN, NAN } };
	assert_int_equal(mt_validation_write(path, &v, &err), MT_OK);
	assert_int_equal(mt_validation_load(path, "--validation", &r, &err), MT_OK);
	assert_int_equal(r.cand[0].nmemr, 2);
	assert_int_equal(r.cand[0].memr[0].rank, 5);
	assert_int_equal(r.cand[0].memr[0].stage, 1);
	assert_int_equal(r.cand[0].memr[0].lineno, 17);
	assert_close(r.cand[0].memr[0].max_allocated, round(7974.18994140625 * mb), 1e-15);
	assert_true(isnan(r.cand[0].memr[0].max_reserved));
	assert_close(r.cand[0].memr[0].pred.max_allocated, 7.5e9, 1e-15);
	assert_int_equal(r.cand[0].memr[1].rank, -1);
	assert_int_equal(r.cand[0].memr[1].stage, -1);
	assert_true(isnan(r.cand[0].memr[1].pred.allocated));
	assert_close(r.cand[0].memr[1].max_reserved, 4096 * mb, 1e-15);
	mt_validation_free(&r);
	mt_validation_free(&v);
	unlink(path);
	/* tp-cp-ep-dp-pp: the pipeline outermost */
	assert_int_equal(mt_rank_stage(0, 16, 4), 0);
	assert_int_equal(mt_rank_stage(5, 16, 4), 1);
	assert_int_equal(mt_rank_stage(15, 16, 4), 3);
	assert_int_equal(mt_rank_stage(16, 16, 4), -1);
	assert_int_equal(mt_rank_stage(-1, 8, 1), 0);
	assert_int_equal(mt_rank_stage(-1, 8, 2), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chunking_and_line_ends_do_not_matter),
		cmocka_unit_test(each_rank_keeps_its_last_report),
		cmocka_unit_test(a_vanished_loss_is_nan_unless_skipped),
		cmocka_unit_test(a_cut_last_line_is_a_cut_log),
		cmocka_unit_test(the_most_telling_failure_wins),
		cmocka_unit_test(an_exit_names_its_error_line),
		cmocka_unit_test(nemo_lightning_and_step_time),
		cmocka_unit_test(templates_fill_quote_and_refuse),
		cmocka_unit_test(kendall_tau_counts_pairs),
		cmocka_unit_test(the_document_reads_back),
		cmocka_unit_test(memory_ranks_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
