/* SPDX-License-Identifier: MIT */
/* MoE token dispatch (perfmodel/dispatch.c): the routing arithmetic, the look-up
 * in the profile's moe_dispatch points, the section's reader and its errors,
 * and what the dispatchers and the 1F1B EP overlap do to a layer's time. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "../../lib/jsonr.h"
#include "../../perfmodel/perf.h"

static struct mt_cluster *load(const char *spec)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;

	if (mt_cluster_load(spec, &c, &err))
		fail_msg("%s: %s", spec, err.msg);
	return c;
}

/* The jobs of the layer tests: 256 GPUs, sequence 4096, global batch 2048. */
static void job_256(struct mt_job *j)
{
	mt_job_init(j);
	j->gpus = 256;
	j->seq = 4096;
	j->gbs = 2048;
}

/* DeepSeek-V3's shape of the issue: TP1 EP32, flex */
static const struct mt_shape ep32_flex = { .tp = 1, .cp = 1, .mbs = 1, .ep = 32, .etp = 1,
					   .sp = 1, .fused_ce = 1,
					   .dispatcher = MT_DISPATCH_FLEX };

static void routing_counts_distinct_ranks_and_nodes(void **state)
{
	(void)state;
	/* one rank: everything stays */
	assert_close(mt_route_ranks(256, 8, 1), 1, 1e-12);
	/* as many ranks as experts: every expert on its own rank */
	assert_close(mt_route_ranks(8, 8, 8), 8, 1e-12);
	/* E=256, k=8, EP8: 8 (1 - C(224,8)/C(256,8)) */
	{
		double q = 1;
		int i;

		for (i = 0; i < 8; i++)
			q *= (224.0 - i) / (256.0 - i);
		assert_close(mt_route_ranks(256, 8, 8), 8 * (1 - q), 1e-12);
	}
	/* fewer distinct ranks than k, more than one */
	assert_true(mt_route_ranks(128, 8, 32) < 8 && mt_route_ranks(128, 8, 32) > 6);
	/* other nodes: none on one node, at most nodes - 1 */
	assert_close(mt_route_remote_nodes(128, 8, 1), 0, 1e-12);
	assert_true(mt_route_remote_nodes(128, 8, 4) < 3 && mt_route_remote_nodes(128, 8, 4) > 2);
}

static void names_parse_both_ways(void **state)
{
	int d;

	(void)state;
	for (d = 0; d < MT_DISPATCH_N; d++)
		assert_int_equal(mt_dispatcher_parse(mt_dispatcher_name(d)), d);
	assert_int_equal(mt_dispatcher_parse("auto"), MT_DISPATCH_AUTO);
	assert_int_equal(mt_dispatcher_parse("deepep"), -2);
	assert_string_equal(mt_flex_backend_name(MT_FLEX_HYBRIDEP), "hybridep");
}

static void published_curves_of_the_bundled_profiles(void **state)
{
	struct mt_cluster *h = load("dgx-h100"), *gb = load("gb200-nvl72"), *a = load("dgx-a100-80g");
	int basis, src;
	double lat, g;

	(void)state;
	assert_true(mt_dispatch_available(h, MT_DISPATCH_FLEX));
	assert_false(mt_dispatch_available(a, MT_DISPATCH_FLEX));
	assert_true(mt_dispatch_available(a, MT_DISPATCH_ALLTOALL));
	assert_true(mt_dispatch_available(a, MT_DISPATCH_ALLGATHER));
	/* DeepEP V1 on H800: EP8 NVLink 153 GB/s, EP32 RDMA 58 GB/s (node basis) */
	g = mt_dispatch_gbps(h, MT_DOP_DISPATCH, 1, 8, 8, &basis, &src, &lat);
	assert_close(g, 153, 1e-12);
	assert_int_equal(basis, MT_DBASIS_RANK);
	assert_string_equal(mt_cluster_source(h, src)->kind, "published");
	g = mt_dispatch_gbps(h, MT_DOP_DISPATCH, 1, 32, 8, &basis, &src, &lat);
	assert_close(g, 58, 1e-12);
	assert_int_equal(basis, MT_DBASIS_NODE);
	/* between EP16 (43) and EP32 (58), log-interpolated; beyond EP64: its 51 */
	g = mt_dispatch_gbps(h, MT_DOP_COMBINE, 0, 24, 8, &basis, &src, &lat);
	assert_true(g > 43 && g < 57);
	assert_close(mt_dispatch_gbps(h, MT_DOP_COMBINE, 0, 256, 8, &basis, &src, &lat), 50, 1e-12);
	/* HybridEP on NVL72, 16 SMs: EP32 inside the domain, BF16 dispatch 485.5 */
	assert_int_equal(gb->dispatch.flex_backend, MT_FLEX_HYBRIDEP);
	g = mt_dispatch_gbps(gb, MT_DOP_DISPATCH, 0, 32, 32, &basis, &src, &lat);
	assert_close(g, 485.5, 1e-12);
	mt_cluster_free(h);
	mt_cluster_free(gb);
	mt_cluster_free(a);
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

#define HEAD "{\"schema\": \"megatune.profile/1\", \"name\": \"x\", " \
	"\"sources\": [{\"id\": \"s\", \"kind\": \"published\", \"citation\": \"c\"}], " \
	"\"gpu\": {\"name\": \"G\", \"memory_bytes\": 8e10, \"hbm_gbps\": 3000, " \
	"\"peak_tflops\": {\"bf16\": 1000}, \"source\": \"s\"}, " \
	"\"node\": {\"gpus_per_node\": 1, \"nvlink_domain\": 1, \"nics_per_node\": 1, " \
	"\"nic_gbps\": 50, \"source\": \"s\"}, " \
	"\"gemm\": [{\"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, " \
	"\"tflops\": 700, \"source\": \"s\"}], "
#define PT(x) "\"moe_dispatch\": {\"flex_backend\": \"deepep\", \"points\": [{\"backend\": " \
	"\"deepep\", \"op\": \"dispatch\", \"dtype\": \"fp8\", \"span\": \"network\", " \
	"\"ranks\": 16, \"gbps\": 40, \"source\": \"s\"" x "}]}}"

static void reader_errors_name_the_field(void **state)
{
	static const struct {
		const char *json, *want;
	} bad[] = {
		{ HEAD "\"moe_dispatch\": 3}", "field 'moe_dispatch': expected an object" },
		{ HEAD "\"moe_dispatch\": {\"flex_backend\": \"nccl\", \"points\": []}}",
		  "field 'moe_dispatch.flex_backend': unknown value \"nccl\"" },
		{ HEAD "\"moe_dispatch\": {\"flex_backend\": \"deepep\", \"points\": []}}",
		  "field 'moe_dispatch.points': expected at least one point" },
		{ HEAD PT(", \"basis\": \"gpu\""), "field 'moe_dispatch.points[0].basis': unknown value" },
		{ HEAD "\"moe_dispatch\": {\"flex_backend\": \"deepep\", \"points\": [{\"backend\": "
		  "\"deepep\", \"op\": \"dispatch\", \"dtype\": \"fp8\", \"span\": \"pcie\", "
		  "\"ranks\": 8, \"gbps\": 40, \"source\": \"s\"}]}}",
		  "field 'moe_dispatch.points[0].span': expected \"nvlink\" or \"network\"" },
		{ HEAD "\"moe_dispatch\": {\"flex_backend\": \"deepep\", \"points\": [{\"backend\": "
		  "\"deepep\", \"op\": \"combine\", \"dtype\": \"fp8\", \"span\": \"nvlink\", "
		  "\"ranks\": 8, \"gbps\": 40, \"source\": \"s\"}]}}",
		  "field 'moe_dispatch.points[0].dtype': the combine runs in bf16" },
		{ HEAD "\"moe_dispatch\": {\"flex_backend\": \"deepep\", \"points\": [{\"backend\": "
		  "\"deepep\", \"op\": \"dispatch\", \"dtype\": \"fp8\", \"span\": \"nvlink\", "
		  "\"ranks\": 8, \"gbps\": 40, \"source\": \"nope\"}]}}",
		  "field 'moe_dispatch.points[0].source': unknown source id \"nope\"" },
		{ HEAD "\"moe_dispatch\": {\"flex_backend\": \"deepep\", \"points\": [{\"backend\": "
		  "\"deepep\", \"op\": \"dispatch\", \"dtype\": \"fp4\", \"span\": \"nvlink\", "
		  "\"ranks\": 8, \"gbps\": 40, \"source\": \"s\"}]}}",
		  "field 'moe_dispatch.points[0].dtype': expected \"fp8\" or \"bf16\"" },
		/* what is sent is Megatron's (BF16), not a cluster's: the old
		 * section-wide flag is refused with the reason (issue 30) */
		{ HEAD "\"moe_dispatch\": {\"flex_backend\": \"deepep\", \"fp8_dispatch\": true, "
		  "\"points\": [{\"backend\": \"deepep\", \"op\": \"dispatch\", \"dtype\": \"fp8\", "
		  "\"span\": \"network\", \"ranks\": 16, \"gbps\": 40, \"source\": \"s\"}]}}",
		  "field 'moe_dispatch.fp8_dispatch': no longer read: Megatron-LM's DeepEP and "
		  "HybridEP dispatchers send BF16" },
		{ HEAD "\"moe_dispatch\": {\"flex_backend\": \"hybridep\", \"fp8_dispatch\": false, "
		  "\"points\": [{\"backend\": \"hybridep\", \"op\": \"dispatch\", \"dtype\": "
		  "\"bf16\", \"span\": \"nvlink\", \"ranks\": 8, \"gbps\": 40, \"source\": \"s\"}]}}",
		  "field 'moe_dispatch.fp8_dispatch': no longer read" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_cluster *c = NULL;
		int rc = from_text(bad[i].json, &c, &err);

		if (rc != MT_EINVAL || !strstr(err.msg, bad[i].want))
			fail_msg("case %zu: rc %d, message '%s', expected '%s'", i, rc, err.msg,
				 bad[i].want);
		assert_null(c);
	}
	{
		struct mt_error err = MT_ERROR_INIT;
		struct mt_cluster *c = NULL;

		assert_int_equal(from_text(HEAD PT(""), &c, &err), 0);
		assert_int_equal(c->dispatch.flex_sms, 20);
		assert_true(mt_dispatch_available(c, MT_DISPATCH_FLEX));
		mt_cluster_free(c);
	}
}

/* Qwen3-235B-A22B on H100, TP2 EP32 (4 nodes): flex is timed on the RDMA curve
 * with far fewer bytes than the alltoall dispatcher sends; the 1F1B overlap
 * saves time; forced balance is faster than the auxiliary loss's 1.3. */
static void dispatchers_and_overlap_in_a_layer(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = load("dgx-h100");
	struct mt_model m;
	struct mt_job j;
	struct mt_ctx x;
	struct mt_shape sh = { .tp = 2, .cp = 1, .mbs = 1, .ep = 32, .etp = 1, .sp = 1,
			       .tp_overlap = 1, .fused_ce = 1 };
	struct mt_costs *a = malloc(sizeof(*a)), *f = malloc(sizeof(*f));
	double lam;

	(void)state;
	assert_non_null(a);
	assert_non_null(f);
	assert_int_equal(mt_model_load("qwen3-235b-a22b", &m, &err), 0);
	job_256(&j);
	mt_ctx_init(&x, &m, c, &j);
	sh.dispatcher = MT_DISPATCH_ALLTOALL;
	mt_costs_compute(&x, &sh, a);
	sh.dispatcher = MT_DISPATCH_FLEX;
	mt_costs_compute(&x, &sh, f);
	assert_true(f->disp.bytes < a->disp.bytes / 2);
	assert_true(f->ep_comm[MT_L_MOE] < a->ep_comm[MT_L_MOE]);
	assert_int_equal(a->disp.src, -1);
	assert_string_equal(mt_cluster_source(c, f->disp.src)->id, "deepep-v1");
	/* flex permutes once each way, alltoall twice */
	assert_true(f->elem_f[MT_L_MOE] < a->elem_f[MT_L_MOE]);
	/* the 1F1B overlap hides part of it */
	assert_true(f->ep_1f1b_save > 0 && f->ep_1f1b_exposed < f->ep_comm[MT_L_MOE]);
	assert_close(mt_ep_overlap_paired(1, 1, 8), 7.0 / 8, 1e-12);
	assert_close(mt_ep_overlap_paired(8, 4, 128), 1 - (14.0 + 24.0) / 512, 1e-12);
	/* balance (5.3): forced routing is random, not even: the busiest of 32
	 * ranks is a little above the mean; an auxiliary loss adds the experts'
	 * skew, a released router more; token drop caps it at the capacity */
	j.moe_balance = MT_BAL_FORCED;
	lam = mt_moe_imbalance(&x, 32, 2048);
	assert_true(lam > 1.0 && lam < 1.05);
	j.moe_balance = MT_BAL_AUX;
	assert_true(mt_moe_imbalance(&x, 32, 2048) > lam);
	j.moe_balance = MT_BAL_PRETRAINED;
	assert_true(mt_moe_imbalance(&x, 32, 2048) > 1.5);
	j.moe_balance = MT_BAL_DROP;
	j.moe_capacity = 1.01;
	assert_close(mt_moe_imbalance(&x, 32, 2048), 1.01, 1e-12);
	assert_close(mt_moe_imbalance(&x, 1, 2048), 1.0, 1e-12);
	free(a);
	free(f);
	mt_cluster_free(c);
}

/* A small linear congruential generator: the same draws on every machine. */
static unsigned long long lcg_state = 88172645463325252ull;
static double uniform01(void)
{
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(lcg_state >> 11) / 9007199254740992.0;
}

/* The busiest rank's share under uniform top-k routing (forced balance, the
 * skew 0) is the largest of the ranks' hypergeometric loads: a simulation of
 * 300 micro-batches of Qwen3-30B-A3B's routing (128 experts, top-8) over EP 8
 * and 16 agrees with mt_moe_imbalance() within 1%, and the expected largest
 * of n normal draws is the tables' */
static void imbalance_matches_random_routing(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = load("dgx-h100");
	static const int eps[] = { 8, 16 };
	struct mt_model m;
	struct mt_job j;
	struct mt_ctx x;
	size_t t;

	(void)state;
	assert_close(mt_normal_max(2), 0.5642, 1e-3);
	assert_close(mt_normal_max(8), 1.4236, 1e-3);
	assert_close(mt_normal_max(64), 2.3423, 1e-3);
	assert_true(mt_normal_max(24) > mt_normal_max(16) && mt_normal_max(24) < mt_normal_max(32));
	assert_int_equal(mt_model_load("qwen3-30b-a3b", &m, &err), 0);
	job_256(&j);
	j.moe_balance = MT_BAL_FORCED;
	mt_ctx_init(&x, &m, c, &j);
	for (t = 0; t < sizeof(eps) / sizeof(eps[0]); t++) {
		int e = eps[t], E = 128, k = 8, T = 512, it, i, r, n;
		double sum = 0;

		for (it = 0; it < 300; it++) {
			int load[16] = { 0 }, top = 0;

			for (n = 0; n < T * e; n++) {
				int pick[8];

				for (i = 0; i < k; i++) { /* k distinct experts */
					int ex, dup;

					do {
						ex = (int)(uniform01() * E);
						for (dup = 0, r = 0; r < i; r++)
							dup |= pick[r] == ex;
					} while (dup);
					pick[i] = ex;
					load[ex / (E / e)]++;
				}
			}
			for (r = 0; r < e; r++)
				if (load[r] > top)
					top = load[r];
			sum += (double)top / ((double)T * k);
		}
		assert_close(mt_moe_imbalance(&x, e, T), sum / 300, 0.01);
	}
	mt_cluster_free(c);
}

/* Megatron-LM sends the BF16 hidden states with DeepEP (token_dispatcher.py:1320
 * @ d98e8a6) and HybridEP (fused_a2a.py:327 refuses FP8 dispatch) whatever the
 * precision: FP8 training dispatches as many bytes, in as much time, as BF16
 * (issue 30: dgx-h100 said fp8_dispatch true and halved them). */
static void fp8_training_dispatches_bf16(void **state)
{
	static const char *const clusters[] = { "dgx-h100", "dgx-b200", "gb200-nvl72" };
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_costs *cs = calloc(2, sizeof(*cs)), *b = cs, *f = cs + 1;
	size_t i;

	(void)state;
	assert_non_null(cs);
	assert_int_equal(mt_model_load("deepseek-v3", &m, &err), 0);
	for (i = 0; i < sizeof(clusters) / sizeof(clusters[0]); i++) {
		struct mt_cluster *c = load(clusters[i]);
		struct mt_job j;
		struct mt_ctx x;

		job_256(&j);
		j.precision = MT_PREC_BF16;
		mt_ctx_init(&x, &m, c, &j);
		mt_costs_compute(&x, &ep32_flex, b);
		j.precision = MT_PREC_FP8;
		mt_costs_compute(&x, &ep32_flex, f);
		assert_true(b->disp.bytes > 0);
		if (fabs(f->disp.bytes - b->disp.bytes) > 1e-9 * b->disp.bytes ||
		    fabs(f->disp.dispatch_s - b->disp.dispatch_s) > 1e-12)
			fail_msg("%s: FP8 training dispatches %.0f bytes in %g s, BF16 %.0f in %g s",
				 clusters[i], f->disp.bytes, f->disp.dispatch_s, b->disp.bytes,
				 b->disp.dispatch_s);
		mt_cluster_free(c);
	}
	free(cs);
}

/* DeepSeek-V3 at EP32 on DGX B200 (4 nodes of 8): the inter-node dispatch is
 * timed on DeepEP V1's node-basis RDMA figure for the same 400 Gb/s NIC per
 * GPU (58 GB/s, derived), the bytes counted once per other node, not on
 * DeepEP V2's EP16 per-rank figure (90 GB/s over every destination rank:
 * 407 MiB per dispatch, 4.74 ms, before issue 30). */
static void blackwell_inter_node_ep_uses_node_basis_rdma(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = load("dgx-b200"), *gb = load("gb200-nvl72");
	struct mt_model m;
	struct mt_costs *o = malloc(sizeof(*o));
	struct mt_job j;
	struct mt_ctx x;
	int basis, src;
	double lat, g, per_copy, before_s;

	(void)state;
	assert_non_null(o);
	/* the look-up: node basis across domains, derived, for both Blackwell profiles */
	g = mt_dispatch_gbps(c, MT_DOP_DISPATCH, 0, 32, 8, &basis, &src, &lat);
	assert_close(g, 58, 1e-12);
	assert_int_equal(basis, MT_DBASIS_NODE);
	assert_string_equal(mt_cluster_source(c, src)->id, "deepep-v1-cx7");
	assert_string_equal(mt_cluster_source(c, src)->kind, "derived");
	assert_close(mt_dispatch_gbps(c, MT_DOP_COMBINE, 0, 32, 8, &basis, &src, &lat), 57, 1e-12);
	assert_int_equal(basis, MT_DBASIS_NODE);
	/* two NVL72 racks: EP144 beyond the table's EP64, its 51 GB/s */
	assert_close(mt_dispatch_gbps(gb, MT_DOP_DISPATCH, 0, 144, 72, &basis, &src, &lat), 51,
		     1e-12);
	assert_int_equal(basis, MT_DBASIS_NODE);
	/* inside one domain nothing changes: HybridEP's NVLink table */
	assert_close(mt_dispatch_gbps(gb, MT_DOP_DISPATCH, 0, 32, 72, &basis, &src, &lat), 485.5,
		     1e-12);
	assert_int_equal(basis, MT_DBASIS_RANK);

	/* the layer: bytes once per other node of the 4, BF16 */
	assert_int_equal(mt_model_load("deepseek-v3", &m, &err), 0);
	job_256(&j);
	mt_ctx_init(&x, &m, c, &j);
	mt_costs_compute(&x, &ep32_flex, o);
	assert_string_equal(mt_cluster_source(c, o->disp.src)->id, "deepep-v1-cx7");
	assert_close(o->disp.gbps, 58, 1e-12);
	per_copy = 4096.0 * m.hidden * 2;
	assert_close(o->disp.bytes / per_copy, mt_route_remote_nodes(m.experts, m.topk, 4), 1e-9);
	/* what the per-rank figure gave: 407 MiB at 90 GB/s */
	before_s = per_copy * mt_route_ranks(m.experts, m.topk, 32) / 90e9;
	assert_true(per_copy * mt_route_ranks(m.experts, m.topk, 32) / (1 << 20) > 406 &&
		    per_copy * mt_route_ranks(m.experts, m.topk, 32) / (1 << 20) < 408);
	if (getenv("MT_VERBOSE"))
		printf("DeepSeek-V3 EP32 on dgx-b200: %.1f MiB at %g GB/s = %.3f ms per dispatch "
		       "(per-rank basis before: %.1f MiB at 90 GB/s = %.3f ms); busiest rank %.3f ms\n",
		       o->disp.bytes / (1 << 20), o->disp.gbps, o->disp.bytes / 58e9 * 1e3,
		       per_copy * mt_route_ranks(m.experts, m.topk, 32) / (1 << 20), before_s * 1e3,
		       o->disp.dispatch_s * 1e3);
	assert_true(o->disp.bytes / 58e9 < 0.7 * before_s);
	free(o);
	mt_cluster_free(c);
	mt_cluster_free(gb);
}

static void overlap_checks_cite_megatron(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model moe, dense;
	const char *why;

	(void)state;
	assert_int_equal(mt_model_load("qwen3-235b-a22b", &moe, &err), 0);
	assert_int_equal(mt_model_load("llama3-8b", &dense, &err), 0);
	assert_null(mt_ep_overlap_reason(&moe, 32, MT_DISPATCH_FLEX, 8, 4, MT_RC_SELECTIVE));
	assert_null(mt_ep_overlap_reason(&moe, 32, MT_DISPATCH_ALLTOALL, 1, 1, MT_RC_NONE));
	why = mt_ep_overlap_reason(&moe, 32, MT_DISPATCH_FLEX, 8, 1, MT_RC_NONE);
	assert_non_null(strstr(why, "transformer_config.py:3007"));
	why = mt_ep_overlap_reason(&moe, 32, MT_DISPATCH_ALLTOALL, 8, 4, MT_RC_FULL);
	assert_non_null(strstr(why, "transformer_config.py:3021"));
	why = mt_ep_overlap_reason(&moe, 32, MT_DISPATCH_ALLGATHER, 1, 1, MT_RC_NONE);
	assert_non_null(strstr(why, "transformer_config.py:3016"));
	why = mt_ep_overlap_reason(&moe, 1, MT_DISPATCH_ALLTOALL, 1, 1, MT_RC_NONE);
	assert_non_null(strstr(why, "transformer_config.py:3013"));
	assert_non_null(mt_ep_overlap_reason(&dense, 1, MT_DISPATCH_ALLTOALL, 1, 1, MT_RC_NONE));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(imbalance_matches_random_routing),
		cmocka_unit_test(routing_counts_distinct_ranks_and_nodes),
		cmocka_unit_test(names_parse_both_ways),
		cmocka_unit_test(published_curves_of_the_bundled_profiles),
		cmocka_unit_test(reader_errors_name_the_field),
		cmocka_unit_test(dispatchers_and_overlap_in_a_layer),
		cmocka_unit_test(fp8_training_dispatches_bf16),
		cmocka_unit_test(blackwell_inter_node_ep_uses_node_basis_rdma),
		cmocka_unit_test(overlap_checks_cite_megatron),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
