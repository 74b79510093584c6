/* SPDX-License-Identifier: MIT */
/* Cluster profiles: every bundled profile loads and keeps its provenance;
 * look-ups reproduce the measurements and interpolate sensibly between them;
 * the validator rejects what it must. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "../../lib/bundled.h"
#include "../../lib/jsonr.h"
#include "../../tuner/cluster.h"

static struct mt_cluster *load(const char *spec)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;

	if (mt_cluster_load(spec, &c, &err))
		fail_msg("%s: %s", spec, err.msg);
	return c;
}

static void every_bundled_profile_loads_with_provenance(void **state)
{
	const struct mt_bundled *b;
	int count = 0;

	(void)state;
	for (b = mt_bundled_files; b->name; b++) {
		struct mt_cluster *c;
		int i;

		if (strcmp(b->kind, "profile"))
			continue;
		count++;
		c = load(b->name);
		assert_string_equal(c->name, b->name);
		assert_true(c->nsources > 0);
		assert_non_null(mt_cluster_source(c, c->gpu_src));
		assert_non_null(mt_cluster_source(c, c->node_src));
		for (i = 0; i < c->ngemm; i++)
			assert_non_null(mt_cluster_source(c, c->gemm[i].src));
		for (i = 0; i < c->ncoll; i++) {
			int j;
			assert_non_null(mt_cluster_source(c, c->coll[i].src));
			for (j = 0; j < c->coll[i].npts; j++)
				assert_non_null(mt_cluster_source(c, c->coll[i].pts[j].src));
		}
		assert_true(c->peak_tflops[MT_DT_BF16] > 0);
		assert_true(c->hbm_gbps > 0 && c->hbm_gbps <= c->hbm_spec_gbps);
		mt_cluster_free(c);
	}
	assert_int_equal(count, 5);
}

static void h100_numbers_are_the_published_ones(void **state)
{
	struct mt_cluster *c = load("dgx-h100");

	(void)state;
	assert_close(c->memory_bytes, 81559.0 * 1048576, 1e-12); /* MLPerf Eos: 81559 MiB */
	assert_close(c->peak_tflops[MT_DT_BF16], 989.4, 1e-9);
	assert_close(c->peak_tflops[MT_DT_FP8], 1978.9, 1e-9);
	assert_close(c->hbm_gbps, 2970, 1e-9);      /* Azure STREAM triad 2.97 TB/s */
	/* an exact measured shape returns the measurement (Azure FP8 16384^3) */
	assert_close(mt_gemm_tflops(c, MT_DT_FP8, 16384, 16384, 16384), 1377.3, 1e-9);
	assert_close(mt_gemm_tflops(c, MT_DT_FP8, 802816, 192, 768), 663.8, 1e-9);
	/* the 8-GPU NVLS all-reduce at 8 GiB, in-place, 478.87 GB/s */
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_REDUCE, 8, 8, 8589934592.0), 478.87, 1e-6);
	assert_close(mt_offload_gbps(c, MT_OFF_H2D), 51, 1e-9);
	mt_cluster_free(c);
}

static void gemm_rate_rises_with_size_and_stays_below_peak(void **state)
{
	struct mt_cluster *c = load("dgx-h100");
	double prev = 0, s;

	(void)state;
	for (s = 256; s <= 65536; s *= 1.5) {
		double r = mt_gemm_tflops(c, MT_DT_BF16, s, s, s);
		assert_true(r >= prev - 1e-9);
		assert_true(r < c->peak_tflops[MT_DT_BF16]);
		prev = r;
	}
	/* BF16 is derived from FP8 at the ratio of dense peaks */
	assert_close(mt_gemm_tflops(c, MT_DT_BF16, 5000, 5000, 5000) * 2,
		     mt_gemm_tflops(c, MT_DT_FP8, 5000, 5000, 5000), 1e-3);
	mt_cluster_free(c);
}

/* The model of a shape it has not seen, checked against Azure's two measured
 * non-square shapes with those measurements taken out of the profile. */
static void gemm_shape_model_predicts_held_out_shapes(void **state)
{
	struct mt_cluster *c = load("dgx-h100");
	int i;

	(void)state;
	for (i = 0; i < c->ngemm; i++) /* hide the odd shapes from the exact match */
		if (!(c->gemm[i].m == c->gemm[i].n && c->gemm[i].n == c->gemm[i].k))
			c->gemm[i].dtype = MT_DT_FP32;
	{
		double t = mt_gemm_time(c, MT_DT_FP8, 6144, 12288, 12288);
		assert_close(2.0 * 6144 * 12288 * 12288 / t / 1e12, 1351.4, 0.05);
		t = mt_gemm_time(c, MT_DT_FP8, 1024, 2145, 1024);
		assert_close(2.0 * 1024 * 2145 * 1024 / t / 1e12, 410.7, 0.10);
		/* the skinny shape is bound by HBM traffic (roofline) */
		t = mt_gemm_time(c, MT_DT_FP8, 802816, 192, 768);
		assert_close(2.0 * 802816 * 192 * 768 / t / 1e12, 663.8, 0.20);
	}
	mt_cluster_free(c);
}

static void collective_time_follows_the_nccl_tests_definitions(void **state)
{
	struct mt_cluster *c = load("dgx-h100");
	double S = 1073741824.0, bw;

	(void)state;
	assert_close(mt_coll_busbw_factor(MT_COLL_ALL_REDUCE, 8), 2.0 * 7 / 8, 1e-12);
	assert_close(mt_coll_busbw_factor(MT_COLL_ALL_GATHER, 8), 7.0 / 8, 1e-12);
	assert_close(mt_coll_busbw_factor(MT_COLL_SEND_RECV, 8), 1, 1e-12);
	bw = mt_coll_busbw(c, MT_COLL_ALL_GATHER, 8, 8, S);
	/* time = size * (n-1)/n / busbw */
	assert_close(mt_coll_time(c, MT_COLL_ALL_GATHER, 8, 8, S), S * 7 / 8 / (bw * 1e9), 1e-12);
	/* xxrjun 1 node: all_gather out-of-place at 1 GiB = 345.46 GB/s */
	assert_close(bw, 345.46, 1e-6);
	assert_true(mt_coll_time(c, MT_COLL_ALL_GATHER, 1, 1, S) == 0);
	mt_cluster_free(c);
}

static void small_messages_pay_latency(void **state)
{
	struct mt_cluster *c = load("dgx-h100");
	double t_small, prev = 0, s;

	(void)state;
	/* below the smallest measured size (32 MiB for all_gather) the time
	 * follows the alpha-beta line through the two smallest points */
	t_small = mt_coll_time(c, MT_COLL_ALL_GATHER, 8, 8, 1024);
	assert_true(t_small > 20e-6 && t_small < 60e-6);
	for (s = 1024; s < 1e10; s *= 2) {
		double t = mt_coll_time(c, MT_COLL_ALL_GATHER, 8, 8, s);
		assert_true(t > prev);
		prev = t;
	}
	mt_cluster_free(c);
}

/* Groups with fewer GPUs per node drive fewer NICs: the rail curves derived
 * for 1, 2 and 4 GPUs per node reproduce the measured peaks of the 10-node
 * runs (xxrjun summary.csv: all_reduce G1 48.89, G2 98.32, G4 196.40 GB/s). */
static void network_groups_scale_with_nics(void **state)
{
	struct mt_cluster *c = load("dgx-h100");
	double big = 16e9;

	(void)state;
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_REDUCE, 10, 1, big / 8), 48.89, 0.10);
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_REDUCE, 20, 2, big / 4), 98.32, 0.10);
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_REDUCE, 40, 4, big / 2), 196.40, 0.10);
	/* a rail across more nodes than were measured uses the nearest curve */
	assert_true(mt_coll_busbw(c, MT_COLL_REDUCE_SCATTER, 128, 1, 1e9) > 20);
	/* inside the NVLink domain is much faster than across it */
	assert_true(mt_coll_busbw(c, MT_COLL_ALL_GATHER, 8, 8, 1e9) >
		    4 * mt_coll_busbw(c, MT_COLL_ALL_GATHER, 16, 1, 1e9));
	mt_cluster_free(c);
}

static void nvl72_domain(void **state)
{
	struct mt_cluster *c = load("gb200-nvl72");

	(void)state;
	assert_int_equal(c->nvlink_domain, 72);
	assert_int_equal(c->gpus_per_node, 4);
	/* a 64-GPU group is inside the NVLink domain */
	assert_true(mt_coll_busbw(c, MT_COLL_ALL_GATHER, 64, 64, 4e9) > 300);
	mt_cluster_free(c);
}

/* A group across NVLink domains moves its data over its members' NICs and,
 * inside each domain, over NVLink: no curve stretched to a shape it was not
 * measured at may beat either (docs/MODEL.md 3.3).  GB200 NVL72 once gave
 * 2253 GB/s across two racks against 676 GB/s inside one. */
static void network_groups_keep_to_their_links(void **state)
{
	static const int ops[] = { MT_COLL_ALL_REDUCE, MT_COLL_ALL_GATHER, MT_COLL_REDUCE_SCATTER,
				   MT_COLL_ALL_TO_ALL };
	static const double sizes[] = { 1 << 20, 64 << 20, 1 << 30, 8.0 * (1 << 30) };
	const struct mt_bundled *b;
	struct mt_cluster *g;
	unsigned o, z;

	(void)state;
	g = load("gb200-nvl72");
	assert_true(mt_coll_busbw(g, MT_COLL_REDUCE_SCATTER, 144, 72, 1 << 30) <=
		    mt_coll_busbw(g, MT_COLL_REDUCE_SCATTER, 72, 72, 1 << 30));
	assert_true(mt_coll_busbw(g, MT_COLL_ALL_REDUCE, 576, 72, 4.0 * (1 << 30)) <=
		    mt_coll_busbw(g, MT_COLL_ALL_REDUCE, 72, 72, 4.0 * (1 << 30)));
	mt_cluster_free(g);
	for (b = mt_bundled_files; b->name; b++) {
		struct mt_cluster *c;
		int k;

		if (strcmp(b->kind, "profile"))
			continue;
		c = load(b->name);
		for (k = 1; k <= c->nvlink_domain; k *= 2)
			for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
				for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
					double bw = mt_coll_busbw(c, ops[o], 16 * c->nvlink_domain, k,
								  sizes[z]);
					double nic = (double)k * c->nic_gbps * c->nics_per_node /
						     c->gpus_per_node;
					double nv = k > 1 ? mt_coll_busbw(c, ops[o], k, k, sizes[z]) : 1e30;

					if (bw > nic * 1.0001 || bw > nv * 1.0001)
						fail_msg("%s: %s over %d ranks, %d per domain, %.0f bytes: "
							 "%.0f GB/s, above its NICs (%.0f) or NVLink "
							 "(%.0f)", b->name, mt_coll_name(ops[o]),
							 16 * c->nvlink_domain, k, sizes[z], bw, nic, nv);
				}
		mt_cluster_free(c);
	}
}

static int from_text(const char *json, struct mt_cluster **c, struct mt_error *err)
{
	cJSON *root = NULL;
	int rc = mt_json_parse("p.json", json, strlen(json), &root, err);

	if (!rc)
		rc = mt_cluster_from_json(root, "p.json", c, err);
	cJSON_Delete(root);
	return rc;
}

#define GOOD_HEAD "{\"schema\": \"megatune.profile/1\", \"name\": \"x\", " \
	"\"sources\": [{\"id\": \"s\", \"kind\": \"spec\", \"citation\": \"c\"}], " \
	"\"gpu\": {\"name\": \"G\", \"memory_bytes\": 8e10, \"hbm_gbps\": 3000, " \
	"\"peak_tflops\": {\"bf16\": 1000}, \"source\": \"s\"}, "
#define GOOD_NODE "\"node\": {\"gpus_per_node\": 1, \"nvlink_domain\": 1, \"nics_per_node\": 1, " \
	"\"nic_gbps\": 50, \"source\": \"s\"}, "
#define GOOD_GEMM "\"gemm\": [{\"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, " \
	"\"tflops\": 700, \"source\": \"s\"}]"

static void minimal_profile_and_its_defaults(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;

	(void)state;
	assert_int_equal(from_text(GOOD_HEAD GOOD_NODE GOOD_GEMM "}", &c, &err), 0);
	/* no STREAM measurement: 90% of the datasheet */
	assert_close(c->hbm_gbps, 2700, 1e-12);
	/* one GEMM point: a flat curve at its size and above */
	assert_close(mt_gemm_tflops(c, MT_DT_BF16, 8192, 8192, 8192), 700, 1e-12);
	/* no network curve: 90% of the NIC line rate */
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_REDUCE, 4, 1, 1e9), 45, 1e-12);
	mt_cluster_free(c);
}

/* Two measurements of one size are averaged (in log space) into one point of
 * the sweep; the others keep their place. */
static void duplicate_sizes_merge_in_place(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;

	(void)state;
	assert_int_equal(from_text(GOOD_HEAD GOOD_NODE "\"gemm\": ["
				   "{\"dtype\": \"bf16\", \"m\": 1024, \"n\": 1024, \"k\": 1024, \"tflops\": 200, \"source\": \"s\"},"
				   "{\"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"tflops\": 700, \"source\": \"s\"},"
				   "{\"dtype\": \"bf16\", \"m\": 1024, \"n\": 1024, \"k\": 1024, \"tflops\": 50, \"source\": \"s\"}]}",
				   &c, &err), 0);
	assert_int_equal(c->gcurve[MT_DT_BF16].n, 2);
	/* halfway (in log size) between sqrt(200 * 50) = 100 and 700 */
	assert_close(mt_gemm_tflops(c, MT_DT_BF16, 2048, 2048, 2048), sqrt(100.0 * 700), 1e-9);
	assert_close(mt_gemm_tflops(c, MT_DT_BF16, 4096, 4096, 4096), 700, 1e-12);
	mt_cluster_free(c);
}

/* A profile that measured only some operations still prices the others:
 * the nearest relative on the same span. */
static void missing_operations_fall_back(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	int op;

	(void)state;
	assert_int_equal(from_text(GOOD_HEAD "\"node\": {\"gpus_per_node\": 8, \"nvlink_domain\": 8, "
				   "\"nvlink_gbps\": 450, \"nics_per_node\": 8, \"nic_gbps\": 50, "
				   "\"source\": \"s\"}, " GOOD_GEMM ", \"collectives\": [{\"op\": "
				   "\"sendrecv\", \"span\": \"nvlink\", \"ranks\": 8, \"source\": \"s\", "
				   "\"points\": [{\"bytes\": 1048576, \"busbw_gbps\": 100}, "
				   "{\"bytes\": 1073741824, \"busbw_gbps\": 350}]}]}", &c, &err), 0);
	for (op = 0; op < MT_COLL_N; op++) {
		assert_true(mt_coll_time(c, op, 8, 8, 1e8) > 0);
		assert_close(mt_coll_busbw(c, op, 8, 8, 1073741824.0), 350, 1e-12);
	}
	mt_cluster_free(c);
}

static void validator_rejects(void **state)
{
	static const struct {
		const char *json, *msg;
	} cases[] = {
		{ "{\"schema\": \"megatune.result/1\"}", "expected \"megatune.profile/1\"" },
		{ GOOD_HEAD GOOD_NODE "\"gemm\": []}", "at least one bf16, fp16 or fp8" },
		{ GOOD_HEAD GOOD_NODE "\"gemm\": [{\"dtype\": \"int4\", \"m\": 1, \"n\": 1, \"k\": 1, "
		  "\"tflops\": 1, \"source\": \"s\"}]}", "field 'gemm[0].dtype': expected one of" },
		{ GOOD_HEAD GOOD_NODE GOOD_GEMM ", \"collectives\": [{\"op\": \"all_reduce\", \"span\": "
		  "\"nvlink\", \"ranks\": 8, \"source\": \"s\", \"points\": [{\"bytes\": 1, "
		  "\"busbw_gbps\": 1}]}]}", "8 ranks cannot be inside an NVLink domain of 1" },
		{ GOOD_HEAD GOOD_NODE GOOD_GEMM ", \"collectives\": [{\"op\": \"all_reduce\", \"span\": "
		  "\"network\", \"ranks\": 8, \"source\": \"s\", \"points\": []}]}",
		  "expected at least one point" },
		{ GOOD_HEAD GOOD_NODE GOOD_GEMM ", \"collectives\": [{\"op\": \"all_reduce\", \"span\": "
		  "\"network\", \"ranks\": 8, \"source\": \"s\", \"points\": [{\"bytes\": 8, "
		  "\"busbw_gbps\": 1}, {\"bytes\": 8, \"busbw_gbps\": 2}]}]}", "two points for 8 bytes" },
		{ GOOD_HEAD "\"node\": {\"gpus_per_node\": 8, \"nvlink_domain\": 8, \"nvlink_gbps\": 450, "
		  "\"nics_per_node\": 8, \"nic_gbps\": 50, \"source\": \"s\"}, " GOOD_GEMM "}",
		  "at least one curve with span \"nvlink\"" },
		{ "{\"schema\": \"megatune.profile/1\", \"name\": \"x\", \"sources\": [{\"id\": \"s\", "
		  "\"kind\": \"rumour\", \"citation\": \"c\"}]}", "field 'sources[0].kind'" },
		{ "{\"schema\": \"megatune.profile/1\", \"name\": \"x\", \"sources\": [{\"id\": \"s\", "
		  "\"kind\": \"spec\", \"citation\": \"c\"}, {\"id\": \"s\", \"kind\": \"spec\", "
		  "\"citation\": \"d\"}]}", "duplicate source id \"s\"" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_cluster *c = NULL;

		assert_int_not_equal(from_text(cases[i].json, &c, &err), 0);
		assert_null(c);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("case %zu: '%s' does not say '%s'", i, err.msg, cases[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_bundled_profile_loads_with_provenance),
		cmocka_unit_test(h100_numbers_are_the_published_ones),
		cmocka_unit_test(gemm_rate_rises_with_size_and_stays_below_peak),
		cmocka_unit_test(gemm_shape_model_predicts_held_out_shapes),
		cmocka_unit_test(collective_time_follows_the_nccl_tests_definitions),
		cmocka_unit_test(small_messages_pay_latency),
		cmocka_unit_test(network_groups_scale_with_nics),
		cmocka_unit_test(nvl72_domain),
		cmocka_unit_test(network_groups_keep_to_their_links),
		cmocka_unit_test(minimal_profile_and_its_defaults),
		cmocka_unit_test(duplicate_sizes_merge_in_place),
		cmocka_unit_test(missing_operations_fall_back),
		cmocka_unit_test(validator_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
