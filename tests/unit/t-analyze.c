/* SPDX-License-Identifier: MIT */
/* The trace reader and the analysis, against real recorded traces
 * (tests/fixtures/traces/, copied from the shared data with their sources)
 * and what the tools that recorded them published: TraceLens's
 * gpu_timeline.csv, Holistic Trace Analysis's test assertions, and the
 * findings tools/findings-ref.py measured independently (in Python). */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "../../lib/fsutil.h"
#include "../../profiler/analyze.h"
#include "../../rules/engine.h"
#include "../../rules/facts.h"

#define TR "tests/fixtures/traces/"

static struct mt_trace *load(const char *path)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_trace *t = NULL;
	int rc = mt_trace_read(path, NULL, &t, &err);

	if (rc)
		fail_msg("%s: %s", path, err.msg);
	return t;
}

static void analyze(const char *path, const struct mt_analyze_opts *o, struct mt_rank_stats *r)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_trace *t = load(path);
	int rc = mt_analyze_rank(t, 0, o, r, &err);

	mt_trace_free(t);
	if (rc)
		fail_msg("%s: %s", path, err.msg);
}

/* gpu_timeline.csv: "type,time ms,percent" */
static double timeline(const char *csv, const char *type)
{
	char *data = NULL, *line, *save = NULL;
	size_t len;
	struct mt_error err = MT_ERROR_INIT;
	double v = NAN;

	if (mt_read_file(csv, 1 << 20, &data, &len, &err))
		fail_msg("%s", err.msg);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(type);
		if (!strncmp(line, type, n) && line[n] == ',')
			v = strtod(line + n + 1, NULL);
	}
	free(data);
	if (isnan(v))
		fail_msg("%s: no row %s", csv, type);
	return v;
}

static void check_tracelens(const char *name)
{
	char trace[256], csv[256];
	struct mt_analyze_opts o = { .linked_only = 1 };
	struct mt_rank_stats r;

	snprintf(trace, sizeof(trace), TR "tracelens_h100/%s.json.gz", name);
	snprintf(csv, sizeof(csv), TR "tracelens_h100/%s_perf_report_csvs/gpu_timeline.csv", name);
	analyze(trace, &o, &r);
	/* within 0.1% */
	assert_close(r.comp / 1e6, timeline(csv, "computation_time"), 1e-3);
	assert_close(r.exposed_memcpy / 1e6, timeline(csv, "exposed_memcpy_time"), 1e-3);
	assert_close(r.busy / 1e6, timeline(csv, "busy_time"), 1e-3);
	assert_close(r.idle / 1e6, timeline(csv, "idle_time"), 1e-3);
	assert_close(r.total / 1e6, timeline(csv, "total_time"), 1e-3);
	assert_true(r.exposed_comm == 0 && timeline(csv, "exposed_comm_time") == 0);
	/* the breakdown adds up */
	assert_int_equal(r.comp + r.exposed_comm + r.exposed_memcpy + r.idle, r.total);
}

static void tracelens_qwen(void **s)
{
	struct mt_analyze_opts all = { 0 };
	struct mt_rank_stats r;

	(void)s;
	check_tracelens("Qwen_Qwen1.5-0.5B-Chat__1016005");
	/* by default every GPU event counts: the 436 unlinked kernels too
	 * (kernel_summary.csv: 1465 kernels, 45432.698 us in all) */
	analyze(TR "tracelens_h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", &all, &r);
	assert_int_equal(r.nkernels, 1465);
	assert_int_equal(r.nleft_out, 0);
	assert_close((double)r.cat_time[MT_KC_GEMM] + r.cat_time[MT_KC_ATTENTION] +
		     r.cat_time[MT_KC_ELEMENTWISE] + r.cat_time[MT_KC_REDUCTION] +
		     r.cat_time[MT_KC_OTHER], 45432698.0, 1e-6);
}

static void tracelens_bert(void **s)
{
	(void)s;
	check_tracelens("gaunernst_bert-small-uncased__1016001");
}

static void tracelens_timesformer(void **s)
{
	(void)s;
	check_tracelens("facebook_timesformer-base-finetuned-k400__1016002");
}

/* HTA tests/test_trace_analysis.py: 4876 GPU events after HTA's ProfilerStep
 * window in the ns-resolution trace (float ns timestamps). */
static void hta_window(void **s)
{
	struct mt_analyze_opts o = { .window = MT_WIN_HTA };
	struct mt_rank_stats r;

	(void)s;
	analyze(TR "hta/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", &o, &r);
	assert_int_equal(r.nevents, 4876);
	assert_int_equal(r.nsteps, 5);
	o.window = MT_WIN_ALL;
	analyze(TR "hta/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", &o, &r);
	assert_int_equal(r.nevents, 6095);
}

/* HTA tests/test_trace_parse.py: 21 ncclKernel kernels; the longest is an
 * all-reduce by its "Collective name". */
static void hta_nccl_kernels(void **s)
{
	struct mt_analyze_opts o = { 0 };
	struct mt_rank_stats r;
	struct mt_trace *t = load(TR "hta/nccl_data.json.gz");
	const struct mt_gpu_ev *longest = NULL;
	size_t i, n = 0;

	(void)s;
	for (i = 0; i < t->ngpu; i++) {
		const struct mt_gpu_ev *g = &t->gpu[i];
		if (!strstr(mt_trace_str(t, g->name), "ncclKernel"))
			continue;
		n++;
		if (!longest || g->end - g->start > longest->end - longest->start)
			longest = g;
	}
	assert_int_equal(n, 21);
	assert_non_null(longest);
	assert_int_equal(longest->coll, MT_TC_ALLREDUCE);
	mt_trace_free(t);
	analyze(TR "hta/nccl_data.json.gz", &o, &r);
	assert_int_equal(r.ncomm, 21);
	assert_true(r.comm > 0 && r.exposed_comm <= r.comm);
	assert_true(r.coll_kernels[MT_TC_ALLREDUCE] > 0);
}

/* HTA: the queue-length summary of rank 0 has 6 streams. */
static void hta_streams(void **s)
{
	struct mt_analyze_opts o = { 0 };
	struct mt_rank_stats r;

	(void)s;
	analyze(TR "hta/negative_queue_rank0.json.gz", &o, &r);
	assert_int_equal(r.nstreams, 6);
	assert_true(r.coll_kernels[MT_TC_ALLTOALL] + r.coll_kernels[MT_TC_SENDRECV] > 0);
}

/* DeepSeek-V3: no nccl kernel at all; DeepEP's kernels are communication. */
static void deepseek_deepep(void **s)
{
	struct mt_analyze_opts o = { 0 };
	struct mt_rank_stats r;

	(void)s;
	analyze(TR "deepseek_profile_data/train.json.gz", &o, &r);
	assert_true(r.custom_kernels >= 20);
	assert_int_equal(r.ncomm, r.custom_kernels);
	assert_int_equal(r.nstreams, 3);
	assert_false(r.no_comm_multi_stream);
	assert_true(r.overlap_pct > 90 && r.overlap_pct < 100);
	assert_true(r.ep_present);
	/* without the DeepEP names nothing would be communication: the tool says so */
	{
		struct mt_trace *t = load(TR "deepseek_profile_data/train.json.gz");
		size_t i;
		for (i = 0; i < t->ngpu; i++)
			if (strstr(mt_trace_str(t, t->gpu[i].name), "nccl"))
				fail_msg("an nccl kernel in the DeepSeek trace");
		mt_trace_free(t);
	}
}

/* Compare with a facts fixture measured by tools/findings-ref.py. */
static void check_facts(const char *fixture, const char *const *traces, int n)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_rank_stats *r = calloc((size_t)n, sizeof(*r));
	struct mt_job_stats j;
	struct mt_val *want = calloc(MT_F_N, sizeof(*want)), *got = calloc(MT_F_N, sizeof(*got));
	unsigned char gw[MT_F_N], gg[MT_F_N];
	char *strings = NULL;
	struct mt_analyze_opts o = { .window = MT_WIN_STEPS };
	int i;

	assert_non_null(r);
	assert_non_null(want);
	assert_non_null(got);
	for (i = 0; i < n; i++) {
		struct mt_trace *t = load(traces[i]);
		if (mt_analyze_rank(t, i, &o, &r[i], &err))
			fail_msg("%s", err.msg);
		mt_trace_free(t);
	}
	mt_analyze_job(r, n, &j);
	mt_analyze_facts(r, n, &j, got, gg);
	if (mt_facts_read(fixture, want, gw, &strings, &err))
		fail_msg("%s", err.msg);
	for (i = 0; i < MT_F_N; i++) {
		if (gw[i] != gg[i])
			fail_msg("%s: fact %s given by %s only", fixture, mt_facts[i].name,
				 gw[i] ? "the fixture" : "megatune");
		if (!gw[i])
			continue;
		/* the fixture rounds fractions to 5 decimals, ratios to 4, others to 6 digits */
		if (fabs(got[i].n - want[i].n) > 6e-6 + 5e-5 * fabs(want[i].n) +
		    (i == MT_F_FIND_KERNEL_US ? 5e-4 : 0))   /* us, to 3 decimals */
			fail_msg("%s: %s = %.9g, the fixture says %.9g", fixture, mt_facts[i].name,
				 got[i].n, want[i].n);
	}
	free(strings);
	free(want);
	free(got);
	free(r);
}

static void facts_dlrm_8rank(void **s)
{
	static const char *const tr[] = {
		TR "param_dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz",
		TR "param_dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json.gz",
		TR "param_dlrm_kineto/worker2_step_12.1694128201554.pt.trace.json.gz",
		TR "param_dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json.gz",
		TR "param_dlrm_kineto/worker4_step_12.1694128201547.pt.trace.json.gz",
		TR "param_dlrm_kineto/worker5_step_12.1694128201549.pt.trace.json.gz",
		TR "param_dlrm_kineto/worker6_step_12.1694128201553.pt.trace.json.gz",
		TR "param_dlrm_kineto/worker7_step_12.1694128201553.pt.trace.json.gz",
	};
	struct mt_rank_stats r[8];
	struct mt_job_stats j;
	struct mt_analyze_opts o = { .window = MT_WIN_STEPS };
	struct mt_error err = MT_ERROR_INIT;
	int i;

	(void)s;
	check_facts("tests/fixtures/findings/dlrm-8rank.json", tr, 8);
	for (i = 0; i < 8; i++) {
		struct mt_trace *t = load(tr[i]);
		assert_int_equal(t->rank, i);
		assert_int_equal(t->world_size, 8);
		if (mt_analyze_rank(t, i, &o, &r[i], &err))
			fail_msg("%s", err.msg);
		mt_trace_free(t);
	}
	mt_analyze_job(r, 8, &j);
	/* the slowest rank is named, the ranks share a clock, rank 1 waits */
	assert_int_equal(r[j.slowest].rank, 4);
	assert_true(j.one_clock);
	assert_int_equal(j.start_skew, 7513000);
	assert_int_equal(r[j.wait_rank].rank, 1);
	assert_int_equal(j.nstragglers, 1);
	assert_int_equal(r[j.stragglers[0]].rank, 4);
}

static void facts_single(void **s)
{
	static const char *const qwen[] = { TR "tracelens_h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz" };
	static const char *const bert[] = { TR "tracelens_h100/gaunernst_bert-small-uncased__1016001.json.gz" };
	static const char *const ds[] = { TR "deepseek_profile_data/train.json.gz" };
	static const char *const nccl[] = { TR "hta/nccl_data.json.gz" };

	(void)s;
	check_facts("tests/fixtures/findings/tracelens-qwen-h100.json", qwen, 1);
	check_facts("tests/fixtures/findings/tracelens-bert-h100.json", bert, 1);
	check_facts("tests/fixtures/findings/deepseek-v3-ep64.json", ds, 1);
	check_facts("tests/fixtures/findings/hta-nccl-resnet.json", nccl, 1);
}

/* ---- the reader on its own */

static struct mt_trace *mem(const char *text, struct mt_error *err, int *rc)
{
	struct mt_trace *t = NULL;

	*rc = mt_trace_read_mem("x.json", text, strlen(text), NULL, &t, err);
	return t;
}

static void reader_variants(void **s)
{
	struct mt_error err = MT_ERROR_INIT;
	int rc;
	/* bare array, string pid, "stream 7" tid, ns floats, old capitalised cats */
	struct mt_trace *t = mem(
		"[{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"k\",\"pid\":0,\"tid\":\"stream 7\","
		"\"ts\":1.0005,\"dur\":2.0015,\"args\":{\"correlation\":5}},"
		"{\"ph\":\"X\",\"cat\":\"Runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":12,\"tid\":3,"
		"\"ts\":0.5,\"dur\":1,\"args\":{\"correlation\":5}},"
		"{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"x\",\"pid\":\"Spans\",\"tid\":\"a\",\"ts\":1}]",
		&err, &rc);

	(void)s;
	assert_int_equal(rc, 0);
	assert_int_equal(t->ngpu, 1);
	assert_int_equal(t->gpu[0].start, 1000);      /* 1.0005 us: half to even */
	assert_int_equal(t->gpu[0].end, 1000 + 2002); /* 2.0015 us -> 2002 ns */
	assert_int_equal(t->gpu[0].stream, 7);
	assert_int_equal(t->gpu[0].device, 0);
	assert_non_null(mt_trace_launch(t, 5));
	assert_int_equal(mt_trace_launch(t, 5)->ts, 500);
	assert_null(mt_trace_launch(t, 6));
	assert_int_equal(t->rank, -1);
	mt_trace_free(t);

	/* megatune.trace/1 lines */
	t = mem("{\"schema\":\"megatune.trace/1\",\"pid\":9,\"rank\":3,\"world_size\":4}\n"
		"{\"t\":\"runtime\",\"name\":\"cudaLaunchKernel\",\"tid\":1,\"start\":100,\"end\":150,\"corr\":1}\n"
		"{\"t\":\"kernel\",\"name\":\"ncclDevKernel_AllGather_RING_LL\",\"dev\":2,\"stream\":13,"
		"\"start\":200,\"end\":900,\"corr\":1}\n"
		"{\"t\":\"nvtx\",\"name\":\"ProfilerStep#4\",\"tid\":1,\"start\":50,\"end\":1000}\n"
		"{\"t\":\"end\",\"records\":3,\"dropped\":0}\n", &err, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(t->format, MT_TRACE_MEGATUNE);
	assert_int_equal(t->rank, 3);
	assert_int_equal(t->world_size, 4);
	assert_int_equal(t->ngpu, 1);
	assert_int_equal(t->gpu[0].start, 200);
	assert_int_equal(t->gpu[0].device, 2);
	assert_int_equal(t->nstep, 1);
	assert_int_equal(t->step[0].num, 4);
	assert_true(t->has_end);
	mt_trace_free(t);

	{
		int64_t v;
		assert_int_equal(mt_us_to_ns("1.2345", 6, &v), 0);
		assert_int_equal(v, 1234);   /* half to even */
		assert_int_equal(mt_us_to_ns("1.2355", 6, &v), 0);
		assert_int_equal(v, 1236);
		assert_int_equal(mt_us_to_ns("1.23451", 7, &v), 0);
		assert_int_equal(v, 1235);
		assert_int_equal(mt_us_to_ns("1682725898237042.5", 18, &v), 0);
		assert_int_equal(v, 1682725898237042500LL);
		assert_int_equal(mt_us_to_ns("1e3", 3, &v), 0);
		assert_int_equal(v, 1000000);
		assert_int_equal(mt_us_to_ns("x", 1, &v), -1);
		assert_int_equal(mt_us_to_ns("", 0, &v), -1);
	}
}

static void reader_errors(void **s)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "", "empty" },
		{ "   \n", "empty" },
		{ "{\"traceEvents\":[{\"ph\":\"X\",", "truncated" },
		{ "<html>", "not valid JSON at byte 0" },
		{ "{\"traceEvents\":[1,]}", "not valid JSON" },
		{ "42", "not an object or array" },
	};
	size_t i;

	(void)s;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mt_error err = MT_ERROR_INIT;
		int rc;
		struct mt_trace *t = mem(bad[i].text, &err, &rc);
		assert_null(t);
		assert_int_equal(rc, MT_EPARSE);
		if (!strstr(err.msg, bad[i].want) || strncmp(err.msg, "x.json: ", 8))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].text, err.msg, bad[i].want);
	}
}

/* Interval arithmetic on a hand-made trace: two streams, comm under compute. */
static void breakdown_by_hand(void **s)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_rank_stats r;
	struct mt_analyze_opts o = { 0 };
	int rc;
	/* compute [0,10) and [20,30) on stream 7; nccl [5,25) on stream 13;
	 * memcpy [40,50); launches at 0, 1, 2, 35 (the memcpy's: 5 us after the
	 * GPU went idle at 30, so 5 us host wait and 5 us launch gap). */
	struct mt_trace *t = mem(
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_gemm\",\"pid\":0,\"tid\":7,\"ts\":0,\"dur\":10,\"args\":{\"correlation\":1,\"stream\":7}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_bf16_RING_LL\",\"pid\":0,\"tid\":13,\"ts\":5,\"dur\":20,\"args\":{\"correlation\":2,\"stream\":13}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"flash_fwd_kernel\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":10,\"args\":{\"correlation\":3,\"stream\":7}},"
		"{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pinned)\",\"pid\":0,\"tid\":7,\"ts\":40,\"dur\":10,\"args\":{\"correlation\":4,\"stream\":7}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1,\"args\":{\"correlation\":1}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"correlation\":2}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,\"args\":{\"correlation\":3}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":1,\"tid\":1,\"ts\":35,\"dur\":1,\"args\":{\"correlation\":4}}"
		"],\"distributedInfo\":{\"rank\":2,\"world_size\":4}}", &err, &rc);

	(void)s;
	assert_int_equal(rc, 0);
	rc = mt_analyze_rank(t, 0, &o, &r, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(r.rank, 2);
	assert_int_equal(r.total, 50000);
	assert_int_equal(r.busy, 40000);
	assert_int_equal(r.idle, 10000);
	assert_int_equal(r.idle_host_wait, 5000);
	assert_int_equal(r.idle_launch, 5000);
	assert_int_equal(r.comp, 20000);
	assert_int_equal(r.comm, 20000);
	assert_int_equal(r.exposed_comm, 10000);        /* [10,20) */
	assert_int_equal(r.exposed_memcpy, 10000);
	assert_true(fabs(r.overlap_pct - 50.0) < 1e-9);
	assert_int_equal(r.nstreams, 2);
	assert_int_equal(r.cat_count[MT_KC_GEMM], 1);
	assert_int_equal(r.cat_count[MT_KC_ATTENTION], 1);
	assert_int_equal(r.cat_count[MT_KC_COMM], 1);
	assert_int_equal(r.coll_kernels[MT_TC_ALLREDUCE], 1);
	assert_int_equal(r.coll_exposed[MT_TC_ALLREDUCE], 10000);
	assert_int_equal(r.comp + r.exposed_comm + r.exposed_memcpy + r.idle, r.total);

	/* a user pattern turns the GEMM into communication (a made-up case) */
	o.comm_patterns[0] = "^sm90_";
	o.ncomm_patterns = 1;
	assert_int_equal(mt_analyze_rank(t, 0, &o, &r, &err), 0);
	assert_int_equal(r.ncomm, 2);
	assert_int_equal(r.custom_kernels, 1);
	o.comm_patterns[0] = "([";
	assert_int_equal(mt_analyze_rank(t, 0, &o, &r, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "--comm-pattern"));
	mt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reader_variants),
		cmocka_unit_test(reader_errors),
		cmocka_unit_test(breakdown_by_hand),
		cmocka_unit_test(tracelens_qwen),
		cmocka_unit_test(tracelens_bert),
		cmocka_unit_test(tracelens_timesformer),
		cmocka_unit_test(hta_window),
		cmocka_unit_test(hta_nccl_kernels),
		cmocka_unit_test(hta_streams),
		cmocka_unit_test(deepseek_deepep),
		cmocka_unit_test(facts_dlrm_8rank),
		cmocka_unit_test(facts_single),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
