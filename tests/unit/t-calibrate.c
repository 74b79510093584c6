/* SPDX-License-Identifier: MIT */
/* t-calibrate: harness statistics, busbw factors and collective plans, group
 * layouts, outlier flagging, result files (truncated, malformed), the
 * profile built from records, and the registry's contract. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/stats.h"
#include "../../lib/jsonr.h"
#include "../../probes/calibrate.h"
#include "../../probes/collective.h"
#include "../../perfmodel/cluster.h"
#include "testutil.h"

static void test_stats(void **state)
{
	double x[] = { 5, 1, 3, 2, 4 };
	double t[] = { 2e-3, 1e-3, 4e-3, 1e-3 };
	struct mt_stats s;

	(void)state;
	mt_stats_compute(x, 5, &s);
	assert_int_equal(s.n, 5);
	assert_close(s.median, 3, 1e-12);
	assert_close(s.min, 1, 1e-12);
	assert_close(s.max, 5, 1e-12);
	assert_close(s.p95, 4.8, 1e-12);                 /* linear between ranks */
	assert_close(s.cv, sqrt(2.5) / 3, 1e-12);         /* sample sd / mean */
	assert_true(x[0] <= x[1] && x[3] <= x[4]);        /* sorted in place */

	/* an even count: the mean of the middle two */
	mt_stats_compute(t, 4, &s);
	assert_close(s.median, 1.5e-3, 1e-12);
	/* rates from times: 1 GB moved in 1, 1, 2, 4 ms */
	mt_stats_invert(t, 4, 1.0, &s);
	assert_close(s.max, 1000, 1e-12);
	assert_close(s.min, 250, 1e-12);
	assert_close(s.median, 1 / 1.5e-3, 1e-12);
	assert_true(s.p95 < s.median);                   /* the rate 95% of samples reach */
	{
		double mean = (1000 + 1000 + 500 + 250) / 4.0;
		double sd = sqrt((pow(1000 - mean, 2) * 2 + pow(500 - mean, 2) +
				  pow(250 - mean, 2)) / 3);
		assert_close(s.cv, sd / mean, 1e-12);
	}
	/* one sample */
	mt_stats_compute(x, 1, &s);
	assert_int_equal(s.n, 1);
	assert_true(s.cv == 0 && s.p95 == s.median);
}

static void test_busbw_factors(void **state)
{
	(void)state;
	/* nccl-tests doc/PERFORMANCE.md */
	assert_close(mt_coll_busbw_factor(MT_COLL_ALL_REDUCE, 8), 1.75, 1e-12);
	assert_close(mt_coll_busbw_factor(MT_COLL_ALL_GATHER, 8), 0.875, 1e-12);
	assert_close(mt_coll_busbw_factor(MT_COLL_REDUCE_SCATTER, 16), 15.0 / 16, 1e-12);
	assert_close(mt_coll_busbw_factor(MT_COLL_ALL_TO_ALL, 4), 0.75, 1e-12);
	assert_close(mt_coll_busbw_factor(MT_COLL_SEND_RECV, 8), 1, 1e-12);
	assert_close(mt_coll_busbw_factor(MT_COLL_BROADCAST, 8), 1, 1e-12);
	assert_close(mt_coll_busbw_factor(MT_COLL_ALL_REDUCE, 2), 1, 1e-12);
}

static void test_layouts(void **state)
{
	struct mt_world w = { 0 };
	struct mt_group g[16];
	int n;

	(void)state;
	/* 2 nodes x 4 ranks, this is global rank 6 = node 1, local 2 */
	w.rank = 6;
	w.size = 8;
	w.local_rank = 2;
	w.local_size = 4;
	w.node = 1;
	w.nnodes = 2;
	w.mpi = 1;
	n = mt_coll_layouts(&w, 0, g, 16);
	assert_int_equal(n, 4);
	assert_string_equal(g[0].name, "nvlink-2");
	assert_int_equal(g[0].span, MT_SPAN_NVLINK);
	assert_int_equal(g[0].grank, 0);                  /* local 2 starts pair (2,3) */
	assert_string_equal(g[1].name, "nvlink-4");
	assert_int_equal(g[1].grank, 2);
	assert_string_equal(g[2].name, "rail-2x1");
	assert_int_equal(g[2].span, MT_SPAN_NETWORK);
	assert_int_equal(g[2].per_node, 1);
	assert_int_equal(g[2].color, 2);                  /* the rail of local rank 2 */
	assert_int_equal(g[2].grank, 1);
	assert_string_equal(g[3].name, "world-8");
	assert_int_equal(g[3].ranks, 8);
	assert_int_equal(g[3].per_node, 4);
	/* pairs on different nodes never share a color */
	assert_int_not_equal(g[0].color, 1);

	/* one node of 3 ranks: a pair (rank 2 sits out) and the whole node */
	memset(&w, 0, sizeof(w));
	w.rank = w.local_rank = 2;
	w.size = w.local_size = 3;
	w.nnodes = 1;
	w.mpi = 1;
	n = mt_coll_layouts(&w, 0, g, 16);
	assert_int_equal(n, 2);
	assert_int_equal(g[0].member, 0);
	assert_string_equal(g[1].name, "nvlink-3");
	assert_int_equal(g[1].member, 1);

	/* one process over 8 GPUs: 2, 4, 8 */
	memset(&w, 0, sizeof(w));
	w.size = w.local_size = w.nnodes = 1;
	n = mt_coll_layouts(&w, 8, g, 16);
	assert_int_equal(n, 3);
	assert_int_equal(g[2].ndev, 8);
	assert_int_equal(g[2].devices[7], 7);
}

static void test_plan_sizes(void **state)
{
	struct mt_probe_opts o = { 0 };
	struct mt_world w = { 0 };
	struct mt_group g = { 0 };
	struct mt_probe_ctx ctx = { 0 };
	struct mt_case *cs = NULL;
	struct mt_error err = MT_ERROR_INIT;
	int n = 0, i, seen_ag = 0;

	(void)state;
	o.backend = MT_BACKEND_CUDA;
	o.depth = MT_DEPTH_FULL;
	o.min_bytes = 33554432;
	o.max_bytes = 33554432;
	g.span = MT_SPAN_NETWORK;
	g.ranks = 80;
	g.per_node = 8;
	ctx.opts = &o;
	ctx.world = &w;
	ctx.groups = &g;
	ctx.ngroups = 1;
	assert_int_equal(mt_plan_collective(&ctx, &cs, &n, &err), 0);
	assert_int_equal(n, MT_COLL_N);
	for (i = 0; i < n; i++) {
		if (cs[i].op == MT_COLL_ALL_GATHER) {
			/* nccl-tests rounds to 16 bytes per rank: 33553920 with 80 ranks */
			assert_true(cs[i].bytes == 33553920);
			assert_close(cs[i].busbw_factor, 79.0 / 80, 1e-12);
			seen_ag = 1;
		}
		if (cs[i].op == MT_COLL_ALL_REDUCE) {
			assert_true(cs[i].bytes == 33554432);
			assert_close(cs[i].busbw_factor, 2 * 79.0 / 80, 1e-12);
		}
		assert_true(cs[i].inner >= 1);
	}
	assert_true(seen_ag);
	free(cs);
	/* --ops narrows, bad limits are refused */
	o.ops = "all_reduce,sendrecv";
	assert_int_equal(mt_plan_collective(&ctx, &cs, &n, &err), 0);
	assert_int_equal(n, 2);
	free(cs);
	o.min_bytes = 1 << 20;
	o.max_bytes = 1024;
	assert_int_not_equal(mt_plan_collective(&ctx, &cs, &n, &err), 0);
	assert_non_null(strstr(err.msg, "--min-bytes"));
}

/* A per-rank gemm record. */
static cJSON *rec(const char *probe, const char *label, int rank, const char *host, double rate)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"probe\": \"%s\", \"label\": \"%s\", \"rank\": %d, \"host\": \"%s\", "
		 "\"device\": %d, \"case\": {\"dtype\": \"fp32\", \"m\": 256, \"n\": 256, \"k\": 256, "
		 "\"direction\": \"h2d\", \"memory\": \"pinned\", \"bytes\": 1048576}, "
		 "\"time_us\": {\"n\": 5, \"median\": 10, \"min\": 9, \"max\": 11, \"p95\": 11, "
		 "\"cv\": 0.05}, \"%s\": %g, \"rate\": {\"n\": 5, \"median\": %g, \"min\": %g, "
		 "\"max\": %g, \"p95\": %g, \"cv\": 0.05}, \"verified\": \"yes\"}",
		 probe, label, rank, host, rank % 8, !strcmp(probe, "gemm") ? "tflops" : "gbps",
		 rate, rate, rate * 0.9, rate * 1.1, rate * 0.9);
	return cJSON_Parse(buf);
}

static void test_outliers(void **state)
{
	cJSON *r = cJSON_CreateArray();
	struct mt_outlier o[8];
	int n;

	(void)state;
	cJSON_AddItemToArray(r, rec("gemm", "fp32 256^3", 0, "a", 100));
	cJSON_AddItemToArray(r, rec("gemm", "fp32 256^3", 1, "a", 101));
	cJSON_AddItemToArray(r, rec("gemm", "fp32 256^3", 2, "b", 99));
	cJSON_AddItemToArray(r, rec("gemm", "fp32 256^3", 3, "b", 80));
	/* another case where everyone is equal */
	cJSON_AddItemToArray(r, rec("gemm", "fp32 512^3", 0, "a", 50));
	cJSON_AddItemToArray(r, rec("gemm", "fp32 512^3", 1, "a", 50));
	cJSON_AddItemToArray(r, rec("gemm", "fp32 512^3", 2, "b", 49));
	n = mt_find_outliers(r, 10, o, 8);
	assert_int_equal(n, 1);
	assert_non_null(strstr(o[0].what, "rank 3"));
	assert_non_null(strstr(o[0].what, "b device 3"));
	assert_non_null(strstr(o[0].metric, "fp32 256^3"));
	assert_close(o[0].median, 99.5, 1e-12);
	assert_close(o[0].below_pct, 100 * (1 - 80 / 99.5), 1e-9);
	/* a wider margin forgives it */
	assert_int_equal(mt_find_outliers(r, 25, o, 8), 0);
	cJSON_Delete(r);

	/* two ranks on one host: no peers to judge by; on two hosts: judged,
	 * and an offload record names a link */
	r = cJSON_CreateArray();
	cJSON_AddItemToArray(r, rec("offload", "h2d pinned 1MiB", 0, "a", 50));
	cJSON_AddItemToArray(r, rec("offload", "h2d pinned 1MiB", 1, "a", 30));
	assert_int_equal(mt_find_outliers(r, 10, o, 8), 0);
	cJSON_Delete(r);
	r = cJSON_CreateArray();
	cJSON_AddItemToArray(r, rec("offload", "h2d pinned 1MiB", 0, "a", 50));
	cJSON_AddItemToArray(r, rec("offload", "h2d pinned 1MiB", 1, "b", 30));
	assert_int_equal(mt_find_outliers(r, 10, o, 8), 1);
	assert_non_null(strstr(o[0].what, "link"));
	/* a failed measurement is not a rate */
	cJSON_ReplaceItemInObject(cJSON_GetArrayItem(r, 1), "verified", cJSON_CreateString("FAILED"));
	assert_int_equal(mt_find_outliers(r, 10, o, 8), 0);
	cJSON_Delete(r);
}

static const char *write_tmp(const char *text)
{
	static char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/t-calibrate-%d.jsonl", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Rounds: one record per measurement, the median round's; without rounds
 * every record stays. */
static void test_one_round(void **state)
{
	const char *text =
		"[{\"probe\":\"gemm\",\"label\":\"a\",\"rank\":0,\"host\":\"h\",\"round\":1,"
		"\"time_us\":{\"median\":30}},"
		"{\"probe\":\"gemm\",\"label\":\"a\",\"rank\":1,\"host\":\"h\",\"round\":1,"
		"\"time_us\":{\"median\":7}},"
		"{\"probe\":\"gemm\",\"label\":\"a\",\"rank\":0,\"host\":\"h\",\"round\":2,"
		"\"time_us\":{\"median\":10}},"
		"{\"probe\":\"gemm\",\"label\":\"a\",\"rank\":0,\"host\":\"h\",\"round\":3,"
		"\"time_us\":{\"median\":20}},"
		"{\"probe\":\"gemm\",\"label\":\"b\",\"rank\":0,\"host\":\"h\",\"round\":1},"
		"{\"probe\":\"gemm\",\"label\":\"b\",\"rank\":0,\"host\":\"h\",\"round\":2,"
		"\"time_us\":{\"median\":5}}]";
	cJSON *recs = cJSON_Parse(text), *one, *r;
	double want[] = { 7, 20, 5 };
	int i = 0;

	(void)state;
	assert_non_null(recs);
	assert_true(mt_results_has(recs, "gemm", "a", 3));
	assert_false(mt_results_has(recs, "gemm", "a", 4));
	one = mt_results_one_round(recs);
	assert_non_null(one);
	assert_int_equal(cJSON_GetArraySize(one), 3);
	/* file order; rank 0 of case a: the median of 30, 10, 20; case b: the round with a time */
	cJSON_ArrayForEach(r, one)
		assert_true(mt_jget_num(r, "time_us.median", NAN) == want[i++]);
	cJSON_Delete(one);
	cJSON_Delete(recs);
	/* without rounds, even two records of one measurement (appended passes) stay */
	recs = cJSON_Parse("[{\"probe\":\"gemm\",\"label\":\"a\",\"rank\":0},"
			   "{\"probe\":\"gemm\",\"label\":\"a\",\"rank\":0},"
			   "{\"probe\":\"host\",\"label\":\"a\"}]");
	one = mt_results_one_round(recs);
	assert_non_null(one);
	assert_int_equal(cJSON_GetArraySize(one), 3);
	cJSON_Delete(one);
	cJSON_Delete(recs);
}

static void test_results_file(void **state)
{
	cJSON *head, *recs;
	struct mt_error err = MT_ERROR_INIT;
	int trunc;
	const char *p;

	(void)state;
	/* a killed run: the last line cut short is dropped */
	p = write_tmp("{\"schema\": \"megatune.result/1\", \"kind\": \"run\", \"backend\": \"cpu\"}\n"
		      "{\"probe\": \"gemm\", \"label\": \"a\", \"rank\": 0, \"verified\": \"yes\"}\n"
		      "{\"probe\": \"gemm\", \"label\": \"b\", \"ra");
	assert_int_equal(mt_results_read(p, &head, &recs, &trunc, &err), 0);
	assert_int_equal(trunc, 1);
	assert_int_equal(cJSON_GetArraySize(recs), 1);
	assert_true(mt_results_has(recs, "gemm", "a", 0));
	assert_true(mt_results_has(recs, "gemm", "a", 1));
	assert_false(mt_results_has(recs, "gemm", "a", 2));
	assert_false(mt_results_has(recs, "gemm", "b", 1));
	assert_false(mt_results_has(recs, "host", "a", 1));
	cJSON_Delete(head);
	cJSON_Delete(recs);
	/* a bad line in the middle is an error naming the line */
	p = write_tmp("{\"schema\": \"megatune.result/1\"}\nnot json\n{\"probe\": \"x\"}\n");
	assert_int_equal(mt_results_read(p, &head, &recs, &trunc, &err), MT_EPARSE);
	assert_non_null(strstr(err.msg, "line 2"));
	/* no head: not a results file */
	p = write_tmp("{\"probe\": \"gemm\"}\n");
	assert_int_equal(mt_results_read(p, &head, &recs, &trunc, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "head record"));
	/* another schema */
	p = write_tmp("{\"schema\": \"megatune.result/2\"}\n");
	assert_int_equal(mt_results_read(p, &head, &recs, &trunc, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "schema"));
	unlink(p);
}

static void test_profile_from_records(void **state)
{
	const char *text =
		"[{\"probe\": \"gemm\", \"label\": \"fp32 512^3\", \"rank\": 0, \"host\": \"h\", "
		"\"case\": {\"dtype\": \"fp32\", \"m\": 512, \"n\": 512, \"k\": 512}, "
		"\"time_us\": {\"n\": 3, \"median\": 2000}, \"tflops\": 0.134, "
		"\"rate\": {\"n\": 3, \"median\": 0.134, \"min\": 0.12, \"max\": 0.14, \"p95\": 0.12, "
		"\"cv\": 0.02}, \"verified\": \"yes\"},"
		"{\"probe\": \"gemm\", \"label\": \"fp32 512^3\", \"rank\": 1, \"host\": \"h\", "
		"\"case\": {\"dtype\": \"fp32\", \"m\": 512, \"n\": 512, \"k\": 512}, "
		"\"time_us\": {\"n\": 3, \"median\": 2100}, \"tflops\": 0.128, "
		"\"rate\": {\"n\": 3, \"median\": 0.128, \"min\": 0.11, \"max\": 0.13, \"p95\": 0.11, "
		"\"cv\": 0.03}, \"verified\": \"yes\"},"
		"{\"probe\": \"collective\", \"label\": \"all_reduce nvlink-2 1048576\", \"rank\": -1, "
		"\"case\": {\"op\": \"all_reduce\", \"span\": \"nvlink\", \"ranks\": 2, "
		"\"ranks_per_node\": 2, \"bytes\": 1048576}, \"time_us\": {\"n\": 3, \"median\": 300}, "
		"\"algbw_gbps\": 3.5, \"busbw_gbps\": 3.5, \"rate\": {\"n\": 3, \"median\": 3.5}, "
		"\"verified\": \"yes\"},"
		"{\"probe\": \"collective\", \"label\": \"all_reduce nvlink-2 4194304\", \"rank\": -1, "
		"\"case\": {\"op\": \"all_reduce\", \"span\": \"nvlink\", \"ranks\": 2, "
		"\"ranks_per_node\": 2, \"bytes\": 4194304}, \"time_us\": {\"n\": 3, \"median\": 1000}, "
		"\"algbw_gbps\": 4.2, \"busbw_gbps\": 4.2, \"verified\": \"FAILED\"},"
		"{\"probe\": \"host\", \"label\": \"membw\", \"rank\": 0, \"host\": \"h\", "
		"\"case\": {\"metric\": \"membw\", \"bytes\": 1000000}, \"time_us\": {\"n\": 3, "
		"\"median\": 100}, \"gbps\": 12.5, \"verified\": \"yes\"},"
		"{\"probe\": \"host\", \"label\": \"adam 1M\", \"rank\": 0, \"host\": \"h\", "
		"\"case\": {\"metric\": \"adam\", \"params\": 1000000}, \"time_us\": {\"n\": 3, "
		"\"median\": 2000}, \"gbps\": 14, \"verified\": \"yes\"}]";
	cJSON *recs = cJSON_Parse(text), *doc = NULL, *x;
	struct mt_host_info h = { "h", "Test CPU", 2, 1, 8e9, 2 };
	struct mt_calib_info in = { 0 };
	struct mt_cluster *c = NULL;
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	assert_non_null(recs);
	in.backend = MT_BACKEND_CPU;
	in.hosts = &h;
	in.nhosts = 1;
	in.ranks = 2;
	in.ranks_per_node = 2;
	in.name = "test";
	in.margin_pct = 10;
	assert_int_equal(mt_calibrate_profile(recs, &in, &doc, &err), 0);
	/* the advisor's reader takes it */
	if (mt_cluster_from_json(doc, "built", &c, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(c->gpus_per_node, 2);
	assert_int_equal(c->ngemm, 1);
	assert_close(c->gemm[0].tflops, 0.131, 1e-9);      /* median of the ranks' medians */
	assert_int_equal(c->gemm[0].st.n, 6);
	assert_close(c->gemm[0].st.min, 0.11, 1e-9);
	assert_int_equal(c->ncoll, 1);
	assert_int_equal(c->coll[0].npts, 1);               /* the failed point is left out */
	assert_close(c->coll[0].pts[0].busbw_gbps, 3.5, 1e-9);
	assert_close(c->hbm_gbps, 12.5, 1e-9);
	assert_close(c->optimizer_gparams_per_s, 0.5, 1e-9);
	assert_close(c->peak_tflops[MT_DT_BF16], 0.134, 1e-9);
	assert_true(mt_gemm_tflops(c, MT_DT_BF16, 512, 512, 512) > 0);
	x = cJSON_GetObjectItemCaseSensitive(doc, "sources");
	assert_int_equal(cJSON_GetArraySize(x), 2);
	assert_close(c->nvlink_gbps, 12.5, 1e-9);           /* CPU: the triad is the link */
	mt_cluster_free(c);
	cJSON_Delete(doc);
	cJSON_Delete(recs);

	/* a loaded machine: the only all-reduce is below the reader's 0.1 GB/s
	 * floor and there is no triad; the profile must still be valid */
	recs = cJSON_Parse("[{\"probe\": \"gemm\", \"label\": \"g\", \"rank\": 0, "
			   "\"case\": {\"dtype\": \"fp32\", \"m\": 64, \"n\": 64, \"k\": 64}, "
			   "\"time_us\": {\"n\": 3, \"median\": 5}, \"tflops\": 0.1, "
			   "\"verified\": \"yes\"}, {\"probe\": \"collective\", \"label\": \"a\", "
			   "\"rank\": -1, \"case\": {\"op\": \"all_reduce\", \"span\": \"nvlink\", "
			   "\"ranks\": 2, \"ranks_per_node\": 2, \"bytes\": 1024}, \"time_us\": "
			   "{\"n\": 3, \"median\": 20}, \"busbw_gbps\": 0.05, \"verified\": \"yes\"}]");
	assert_non_null(recs);
	assert_int_equal(mt_calibrate_profile(recs, &in, &doc, &err), 0);
	if (mt_cluster_from_json(doc, "loaded", &c, &err))
		fail_msg("%s", err.msg);
	assert_close(c->nvlink_gbps, 0.1, 1e-9);
	mt_cluster_free(c);
	cJSON_Delete(doc);
	cJSON_Delete(recs);

	/* the link rate written covers every curve measured on it, not only the
	 * all-reduce: the profile's description bounds its curves (issue 29) */
	recs = cJSON_Parse("[{\"probe\": \"gemm\", \"label\": \"g\", \"rank\": 0, "
			   "\"case\": {\"dtype\": \"fp32\", \"m\": 64, \"n\": 64, \"k\": 64}, "
			   "\"time_us\": {\"n\": 3, \"median\": 5}, \"tflops\": 0.1, "
			   "\"verified\": \"yes\"}, {\"probe\": \"collective\", \"label\": \"a\", "
			   "\"rank\": -1, \"case\": {\"op\": \"all_reduce\", \"span\": \"nvlink\", "
			   "\"ranks\": 2, \"ranks_per_node\": 2, \"bytes\": 1048576}, \"time_us\": "
			   "{\"n\": 3, \"median\": 20}, \"busbw_gbps\": 1.0, \"verified\": \"yes\"}, "
			   "{\"probe\": \"collective\", \"label\": \"b\", \"rank\": -1, \"case\": "
			   "{\"op\": \"alltoall\", \"span\": \"nvlink\", \"ranks\": 2, "
			   "\"ranks_per_node\": 2, \"bytes\": 1048576}, \"time_us\": {\"n\": 3, "
			   "\"median\": 20}, \"busbw_gbps\": 2.0, \"verified\": \"yes\"}]");
	assert_non_null(recs);
	assert_int_equal(mt_calibrate_profile(recs, &in, &doc, &err), 0);
	if (mt_cluster_from_json(doc, "links", &c, &err))
		fail_msg("%s", err.msg);
	assert_close(c->nvlink_gbps, 2.0, 1e-9);
	{
		char note[512];

		if (mt_cluster_note(c, 0, note, sizeof(note)))
			fail_msg("%s", note);
	}
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_TO_ALL, 2, 2, 1048576), 2.0, 1e-9);
	mt_cluster_free(c);
	cJSON_Delete(doc);
	cJSON_Delete(recs);
}

/* One GPU of a known node (a VM given one H100 of a DGX): the bundled
 * node's shape and its 8-rank curves stay, and the profile is valid (the
 * first real H100 run wrote "8 ranks cannot be inside an NVLink domain of 1
 * GPUs" and no profile). */
static void test_profile_one_gpu_of_a_node(void **state)
{
	cJSON *recs = cJSON_Parse("[{\"probe\": \"gemm\", \"label\": \"bf16 4096^3\", "
				  "\"rank\": 0, \"host\": \"vm\", \"case\": {\"dtype\": \"bf16\", "
				  "\"m\": 4096, \"n\": 4096, \"k\": 4096}, \"time_us\": {\"n\": 3, "
				  "\"median\": 188}, \"tflops\": 729.6, \"verified\": \"yes\"}]");
	cJSON *doc = NULL;
	struct mt_host_info h = { "vm", "Test CPU", 16, 1, 128e9, 1 };
	struct mt_topo t;
	struct mt_calib_info in = { 0 };
	struct mt_cluster *c = NULL;
	struct mt_error err = MT_ERROR_INIT;
	const char *d;

	(void)state;
	assert_non_null(recs);
	memset(&t, 0, sizeof(t));
	t.ngpus = 1;
	t.nvlink_domain = 1;
	snprintf(t.gpu[0].name, sizeof(t.gpu[0].name), "NVIDIA H100 80GB HBM3");
	t.gpu[0].memory_bytes = 85520809984.0;
	t.gpu[0].sm_count = 132;
	t.gpu[0].cc_major = 9;
	in.backend = MT_BACKEND_CUDA;
	in.topo = &t;
	in.hosts = &h;
	in.nhosts = 1;
	in.ranks = 1;
	in.ranks_per_node = 1;
	in.name = "one-h100";
	in.margin_pct = 10;
	assert_int_equal(mt_calibrate_profile(recs, &in, &doc, &err), 0);
	if (mt_cluster_from_json(doc, "one GPU", &c, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(c->gpus_per_node, 8);
	assert_int_equal(c->nvlink_domain, 8);
	assert_true(c->ncoll > 0);
	d = mt_jget_str(doc, "description");
	assert_non_null(d);
	assert_non_null(strstr(d, "Only 1 of the node's 8 GPUs were visible"));
	mt_cluster_free(c);
	cJSON_Delete(doc);
	cJSON_Delete(recs);
}

/* Every measuring probe describes its cases and feeds the profile; hidden
 * probes stay out of the default list; CUDA backends forward by name. */
static void test_registry(void **state)
{
	const struct mt_probe *p;
	char names[256];
	int i, n = 0;

	(void)state;
	mt_probe_names(names, sizeof(names), ",");
	assert_string_equal(names, "gemm,attention,collective,dispatch,offload,host,topology");
	for (i = 0; (p = mt_probe_at(i)); i++) {
		n++;
		assert_ptr_equal(mt_probe_find(p->name), p);
		assert_non_null(p->summary);
		if (p->kind == MT_PROBE_INFO)
			continue;
		assert_non_null(p->describe);
		assert_non_null(p->to_profile);
		assert_non_null(p->ops[MT_BACKEND_CPU]);
		assert_non_null(p->ops[MT_BACKEND_CPU]->plan);
		if (p->ops[MT_BACKEND_CUDA])
			assert_non_null(p->ops[MT_BACKEND_CUDA]->plan);
		assert_int_equal(strstr(names, p->name) != NULL, !p->hidden);
	}
	assert_true(n >= 7);
	assert_non_null(p = mt_probe_find("skeleton"));
	assert_true(p->hidden);
	assert_null(p->ops[MT_BACKEND_CUDA]);
	assert_ptr_equal(mt_probe_find("gemm")->ops[MT_BACKEND_CUDA], &mt_cuda_forward);
	assert_null(mt_probe_find("nope"));
	assert_null(mt_probe_at(-1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_busbw_factors),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_plan_sizes),
		cmocka_unit_test(test_outliers),
		cmocka_unit_test(test_results_file),
		cmocka_unit_test(test_one_round),
		cmocka_unit_test(test_profile_from_records),
		cmocka_unit_test(test_profile_one_gpu_of_a_node),
		cmocka_unit_test(test_registry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
