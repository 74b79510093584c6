/* SPDX-License-Identifier: MIT */
/* Cluster profiles: every bundled profile loads and keeps its provenance;
 * look-ups reproduce the measurements and interpolate sensibly between them;
 * the validator rejects what it must. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "../../lib/bundled.h"
#include "../../lib/jsonr.h"
#include "../../perfmodel/cluster.h"
#include "../../perfmodel/config.h"
#include "../../perfmodel/constants.h"
#include "../../perfmodel/hostmem.h"
#include "../../perfmodel/perf.h"

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

/* The bundled all-to-all curve was measured with 80 ranks on 10 nodes; 16
 * ranks on two nodes send a larger share of each buffer inside the node, so
 * their bus bandwidth at the NICs is higher (docs/MODEL.md 3.3).  nccl-tests
 * measured 91.82 GB/s at 4 GiB on two such nodes
 * (h100_2node16gpu_alltoall_sendrecv_nccltests2.17.8_xxrjun.txt); read as the
 * 80-rank figure it was about 50. */
static void alltoall_scales_with_its_ranks(void **state)
{
	struct mt_cluster *c = load("dgx-h100");
	double two = mt_coll_busbw(c, MT_COLL_ALL_TO_ALL, 16, 8, 4294967296.0);
	double ten = mt_coll_busbw(c, MT_COLL_ALL_TO_ALL, 80, 8, 4294967296.0);

	(void)state;
	assert_close(two, 91.82, 0.10);
	assert_true(two > 1.5 * ten);
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
	/* no network curve: derived from the NIC (docs/MODEL.md 3.3): a ring of 4
	 * ranks, one per domain, crosses the network at 2 x 3 of its steps, at
	 * MT_NET_EFF_RING of the line rate */
	{
		double f = 1.5, B = MT_NET_EFF_RING * 50;
		double t = MT_NCCL_BASE_US + 2 * 3 * MT_NIC_LATENCY_US + f * 1e9 / (B * 1e3);

		assert_close(mt_coll_busbw(c, MT_COLL_ALL_REDUCE, 4, 1, 1e9), f * 1e9 / (t * 1e3),
			     1e-9);
	}
	assert_string_equal(mt_coll_provenance(c, MT_COLL_ALL_REDUCE, 4, 1),
			    "derived from the NIC description");
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

/* What NICs of L GB/s per GPU allow a network group (docs/MODEL.md 3.3),
 * written out here from the traffic each operation must move. */
static double nic_bound(int op, int n, int k, double L)
{
	double m = (double)n / k;

	if (op == MT_COLL_ALL_TO_ALL)
		return L * (n - 1) / (n - k);
	if (op == MT_COLL_ALL_REDUCE || op == MT_COLL_ALL_GATHER || op == MT_COLL_REDUCE_SCATTER)
		return k * L * m * (n - 1) / (n * (m - 1));
	return k * L;
}

/* Issue 29: a copy of dgx-h100 with node.nic_gbps 50 -> 12.5 (or
 * nics_per_node 8 -> 4) priced the network exactly as the original.  The
 * NICs the profile describes bound every network figure, measured ones
 * included, and slow each byte at every size, not the plateau alone. */
static void described_nics_bound_measured_curves(void **state)
{
	static const int ops[] = { MT_COLL_ALL_REDUCE, MT_COLL_ALL_GATHER, MT_COLL_REDUCE_SCATTER,
				   MT_COLL_ALL_TO_ALL, MT_COLL_SEND_RECV };
	static const int shapes[][2] = { { 80, 8 }, { 10, 1 }, { 16, 2 }, { 64, 4 }, { 2, 1 } };
	static const double sizes[] = { 1 << 20, 80e6, 1 << 30, 16.0 * (1 << 30) };
	struct mt_cluster *h = load("dgx-h100");
	struct mt_cluster *e = load("tests/fixtures/profiles/dgx-h100-nic12.5.json");
	struct mt_cluster *f = load("tests/fixtures/profiles/dgx-h100-nics4.json");
	unsigned o, s, z;

	(void)state;
	for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
			for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
				int n = shapes[s][0], k = shapes[s][1];
				double be = mt_coll_busbw(e, ops[o], n, k, sizes[z]);
				double bf = mt_coll_busbw(f, ops[o], n, k, sizes[z]);

				if (be > nic_bound(ops[o], n, k, 12.5) * (1 + 1e-9) ||
				    bf > nic_bound(ops[o], n, k, 25) * (1 + 1e-9))
					fail_msg("%s over %d ranks, %d per domain, %.0f bytes: %.1f "
						 "and %.1f GB/s, above the NICs", mt_coll_name(ops[o]),
						 n, k, sizes[z], be, bf);
			}
	/* the 80-rank reduce-scatter peaks at 16 GiB (323.4 GB/s): there it
	 * runs at the line rate of 8 NICs of 12.5 GB/s over 10 nodes */
	assert_close(mt_coll_busbw(e, MT_COLL_REDUCE_SCATTER, 80, 8, 16.0 * (1 << 30)),
		     nic_bound(MT_COLL_REDUCE_SCATTER, 80, 8, 12.5), 1e-9);
	/* a DP bucket of 76 MiB over 8 ranks, 2 per node, is slower with fewer
	 * or slower NICs, though the curve there is below either line rate */
	assert_true(mt_coll_busbw(f, MT_COLL_REDUCE_SCATTER, 8, 2, 80e6) <
		    0.9 * mt_coll_busbw(h, MT_COLL_REDUCE_SCATTER, 8, 2, 80e6));
	assert_true(mt_coll_busbw(e, MT_COLL_REDUCE_SCATTER, 8, 2, 80e6) <
		    mt_coll_busbw(f, MT_COLL_REDUCE_SCATTER, 8, 2, 80e6));
	assert_string_equal(mt_coll_provenance(e, MT_COLL_REDUCE_SCATTER, 80, 8),
			    "measured, bounded by the NICs' line rate");
	assert_string_equal(mt_coll_provenance(h, MT_COLL_REDUCE_SCATTER, 80, 8), "measured");
	/* inside a node nothing changed */
	assert_close(mt_coll_busbw(e, MT_COLL_ALL_GATHER, 8, 8, 1 << 30),
		     mt_coll_busbw(h, MT_COLL_ALL_GATHER, 8, 8, 1 << 30), 1e-12);
	mt_cluster_free(h);
	mt_cluster_free(e);
	mt_cluster_free(f);
}

#define NVL_NODE "\"node\": {\"gpus_per_node\": 8, \"nvlink_domain\": 8, \"nvlink_gbps\": 200, " \
	"\"nics_per_node\": 8, \"nic_gbps\": 50, \"source\": \"s\"}, "

/* node.nvlink_gbps bounds the NVLink curves the same way: every rank moves
 * (n-1)/n of the buffer over its links, all-reduce with the reduction in
 * the switch (NVLS) the buffer once each way, 2 (n-1)/n of it. */
static void described_nvlink_bounds_measured_curves(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;

	(void)state;
	assert_int_equal(from_text(GOOD_HEAD NVL_NODE GOOD_GEMM ", \"collectives\": ["
				   "{\"op\": \"all_gather\", \"span\": \"nvlink\", \"ranks\": 8, "
				   "\"source\": \"s\", \"points\": [{\"bytes\": 1048576, \"busbw_gbps\": 100}, "
				   "{\"bytes\": 1073741824, \"busbw_gbps\": 350}]}, "
				   "{\"op\": \"all_reduce\", \"span\": \"nvlink\", \"ranks\": 8, "
				   "\"source\": \"s\", \"points\": [{\"bytes\": 1073741824, "
				   "\"busbw_gbps\": 400}]}]}", &c, &err), 0);
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_GATHER, 8, 8, 1073741824.0), 200, 1e-9);
	/* at 1 MiB each byte takes the described rate's time on top of the
	 * measured latency: 1/bw = 1/100 + 1/200 - 1/350 */
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_GATHER, 8, 8, 1048576.0),
		     1 / (1 / 100.0 + 1 / 200.0 - 1 / 350.0), 1e-9);
	assert_close(mt_coll_busbw(c, MT_COLL_ALL_REDUCE, 8, 8, 1073741824.0), 2 * 200 * 7 / 8.0,
		     1e-9);
	assert_string_equal(mt_coll_provenance(c, MT_COLL_ALL_GATHER, 8, 8),
			    "derived, not measured, bounded by the NVLink line rate");
	mt_cluster_free(c);
}

/* The bundled profiles stay within the hardware they describe: no warning,
 * and no figure above the line rate, so the bounds change none of their
 * results (the golden outputs are unchanged). */
static void bundled_profiles_keep_within_their_description(void **state)
{
	static const double sizes[] = { 1 << 16, 1 << 24, 1 << 30, 16.0 * (1 << 30) };
	const struct mt_bundled *b;
	char note[1024];

	(void)state;
	for (b = mt_bundled_files; b->name; b++) {
		struct mt_cluster *c;
		int op, k, n;
		unsigned z;

		if (strcmp(b->kind, "profile"))
			continue;
		c = load(b->name);
		if (mt_cluster_note(c, 0, note, sizeof(note)))
			fail_msg("%s: %s", b->name, note);
		for (op = 0; op < MT_COLL_N; op++)
			for (n = 2; n <= 4 * c->nvlink_domain; n *= 2)
				for (k = 1; k <= n && k <= c->nvlink_domain; k *= 2)
					for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
						double bw = mt_coll_busbw(c, op, n, k, sizes[z]);
						double line = mt_coll_line_gbps(c, op, n, k);

						if (line > 0 && bw > line * (1 + 1e-9))
							fail_msg("%s: %s, %d ranks, %d per domain: "
								 "%.1f above %.1f GB/s", b->name,
								 mt_coll_name(op), n, k, bw, line);
					}
		mt_cluster_free(c);
	}
	{
		struct mt_cluster *e = load("tests/fixtures/profiles/dgx-h100-nic12.5.json");

		assert_int_equal(mt_cluster_note(e, 0, note, sizeof(note)), 1);
		assert_non_null(strstr(note, "node.nic_gbps 12.5"));
		assert_int_equal(mt_cluster_note(e, 1, note, sizeof(note)), 0);
		mt_cluster_free(e);
	}
}

/* A network described but not measured (dgx-h100 without its network curves)
 * gets curves derived from its NICs: within 5% of the measured 80-rank sweeps
 * (xxrjun-10node) at 4 GiB and above, and of the one-GPU-per-node send; far
 * below their plateau at small sizes, where NCCL's step latencies dominate. */
static void derived_network_curves_follow_the_measured_ones(void **state)
{
	static const int ops[] = { MT_COLL_ALL_REDUCE, MT_COLL_ALL_GATHER, MT_COLL_REDUCE_SCATTER,
				   MT_COLL_ALL_TO_ALL };
	struct mt_cluster *h = load("dgx-h100");
	struct mt_cluster *d = load("tests/fixtures/profiles/dgx-h100-nonet.json");
	struct mt_cluster *d2 = load("tests/fixtures/profiles/dgx-h100-nonet-nic25.json");
	unsigned o;
	int z;

	(void)state;
	for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		for (z = 32; z <= 34; z++)
			assert_close(mt_coll_busbw(d, ops[o], 80, 8, ldexp(1, z)),
				     mt_coll_busbw(h, ops[o], 80, 8, ldexp(1, z)), 0.05);
		assert_true(mt_coll_busbw(d, ops[o], 80, 8, 1 << 20) <
			    0.3 * mt_coll_busbw(d, ops[o], 80, 8, ldexp(1, 34)));
		assert_string_equal(mt_coll_provenance(d, ops[o], 80, 8),
				    "derived from the NIC description");
	}
	/* pipeline sends: one GPU per node to its peer on the same rail */
	assert_close(mt_coll_busbw(d, MT_COLL_SEND_RECV, 2, 1, 1 << 30),
		     mt_coll_busbw(h, MT_COLL_SEND_RECV, 2, 1, 1 << 30), 0.05);
	/* sizes between: rising with the size */
	assert_true(mt_coll_busbw(d, MT_COLL_REDUCE_SCATTER, 16, 1, 1 << 20) <
		    mt_coll_busbw(d, MT_COLL_REDUCE_SCATTER, 16, 1, 1 << 26));
	/* half the NIC rate: every large transfer takes about twice as long */
	for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		assert_close(mt_coll_busbw(d2, ops[o], 80, 8, ldexp(1, 34)),
			     0.5 * mt_coll_busbw(d, ops[o], 80, 8, ldexp(1, 34)), 0.05);
	mt_cluster_free(h);
	mt_cluster_free(d);
	mt_cluster_free(d2);
}

/* node.nic_latency_us is the network step of the derived curves: a slower
 * step slows small messages and leaves large ones as they were. */
static void nic_latency_drives_small_messages(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *a = NULL, *b = NULL;

	(void)state;
	assert_int_equal(from_text(GOOD_HEAD GOOD_NODE GOOD_GEMM "}", &a, &err), 0);
	assert_int_equal(from_text(GOOD_HEAD "\"node\": {\"gpus_per_node\": 1, \"nvlink_domain\": 1, "
				   "\"nics_per_node\": 1, \"nic_gbps\": 50, \"nic_latency_us\": 56, "
				   "\"source\": \"s\"}, " GOOD_GEMM "}", &b, &err), 0);
	assert_true(mt_coll_busbw(b, MT_COLL_REDUCE_SCATTER, 16, 1, 1 << 20) <
		    0.5 * mt_coll_busbw(a, MT_COLL_REDUCE_SCATTER, 16, 1, 1 << 20));
	assert_close(mt_coll_busbw(b, MT_COLL_REDUCE_SCATTER, 16, 1, 64.0 * (1 << 30)),
		     mt_coll_busbw(a, MT_COLL_REDUCE_SCATTER, 16, 1, 64.0 * (1 << 30)), 0.01);
	mt_cluster_free(a);
	mt_cluster_free(b);
}

/* The datasheet bounds what was measured on the GPU and its host link:
 * memory_bandwidth above gpu.hbm_gbps, a copy above node.pcie_gbps. */
static void datasheet_bounds_memory_and_host_link(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	char note[512];

	(void)state;
	assert_int_equal(from_text(GOOD_HEAD "\"node\": {\"gpus_per_node\": 1, \"nvlink_domain\": 1, "
				   "\"nics_per_node\": 1, \"nic_gbps\": 50, \"pcie_gbps\": 32, "
				   "\"source\": \"s\"}, " GOOD_GEMM ", \"memory_bandwidth\": {\"kernel\": "
				   "\"stream-triad\", \"gbps\": 4000, \"source\": \"s\"}, \"offload\": "
				   "[{\"direction\": \"h2d\", \"gbps\": 55, \"source\": \"s\"}]}", &c, &err),
			 0);
	assert_close(c->hbm_gbps, 3000, 1e-12);
	assert_close(mt_offload_gbps(c, MT_OFF_H2D), 32, 1e-12);
	assert_int_equal(mt_cluster_note(c, 0, note, sizeof(note)), 1);
	assert_non_null(strstr(note, "gpu.hbm_gbps 3000"));
	assert_int_equal(mt_cluster_note(c, 1, note, sizeof(note)), 1);
	assert_non_null(strstr(note, "node.pcie_gbps 32"));
	mt_cluster_free(c);
}

/* host.memory_gbps (the host probe's STREAM triad) gives the host Adam rate
 * when the profile has no measurement of it: Adam moves MT_HOST_ADAM_BYTES
 * per parameter. */
static void host_memory_bandwidth_drives_host_adam(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *a = NULL, *b = NULL;
	struct mt_job j;
	struct mt_ctx xa, xb;
	double ta, tb, copies;

	(void)state;
	assert_int_equal(from_text(GOOD_HEAD GOOD_NODE GOOD_GEMM "}", &a, &err), 0);
	assert_int_equal(from_text(GOOD_HEAD GOOD_NODE GOOD_GEMM ", \"host\": {\"memory_gbps\": 70, "
				   "\"source\": \"s\"}}", &b, &err), 0);
	memset(&j, 0, sizeof(j));
	j.gpus = 1;
	j.opt_offload = 1;
	memset(&xa, 0, sizeof(xa));
	xa.cluster = a;
	xa.job = &j;
	xb = xa;
	xb.cluster = b;
	ta = mt_opt_offload_time(&xa, 1e9);
	tb = mt_opt_offload_time(&xb, 1e9);
	copies = ta - 1e9 / (MT_HOST_ADAM_GPARAMS * 1e9);
	assert_close(tb, copies + 1e9 / (70 / MT_HOST_ADAM_BYTES * 1e9), 1e-9);
	mt_cluster_free(a);
	mt_cluster_free(b);
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
		/* every key of the schema feeds the model or is refused: a misspelt
		 * one would silently leave its default standing (issue 29) */
		{ GOOD_HEAD GOOD_NODE GOOD_GEMM ", \"collectivs\": []}",
		  "field 'collectivs': unknown field (expected one of schema, name, " },
		{ GOOD_HEAD "\"node\": {\"gpus_per_node\": 1, \"nvlink_domain\": 1, \"nics_per_node\": 1, "
		  "\"nic_gbps\": 50, \"nic_latency\": 2, \"source\": \"s\"}, " GOOD_GEMM "}",
		  "field 'node.nic_latency': unknown field (expected one of gpus_per_node, " },
		{ GOOD_HEAD GOOD_NODE GOOD_GEMM ", \"collectives\": [{\"op\": \"all_reduce\", \"span\": "
		  "\"network\", \"ranks\": 8, \"source\": \"s\", \"points\": [{\"bytes\": 8, "
		  "\"busbw_gbps\": 1, \"algbw_gbps\": 1}]}]}",
		  "field 'collectives[0].points[0].algbw_gbps': unknown field" },
		{ GOOD_HEAD GOOD_NODE "\"gemm\": [{\"dtype\": \"bf16\", \"m\": 8, \"n\": 8, \"k\": 8, "
		  "\"tflops\": 1, \"stats\": {\"n\": 3, \"median\": 1, \"mean\": 1}, \"source\": \"s\"}]}",
		  "field 'gemm[0].stats.mean': unknown field" },
		{ "{\"schema\": \"megatune.profile/1\", \"name\": \"x\", \"sources\": [{\"id\": \"s\", "
		  "\"kind\": \"spec\", \"citation\": \"c\"}], \"gpu\": {\"name\": \"G\", "
		  "\"memory_bytes\": 8e10, \"hbm_gbps\": 3000, \"peak_tflops\": {\"bf16\": 1000, "
		  "\"int8\": 2000}, \"source\": \"s\"}, " GOOD_NODE GOOD_GEMM "}",
		  "field 'gpu.peak_tflops.int8': unknown field (expected one of bf16, fp16, fp8" },
		{ GOOD_HEAD GOOD_NODE GOOD_GEMM ", \"host\": {\"launch_overhead\": 9, \"source\": \"s\"}}",
		  "field 'host.launch_overhead': unknown field" },
		{ GOOD_HEAD GOOD_NODE GOOD_GEMM ", \"moe_dispatch\": {\"flex_backend\": \"deepep\", "
		  "\"flex_sm\": 20, \"points\": []}}", "field 'moe_dispatch.flex_sm': unknown field" },
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
		cmocka_unit_test(alltoall_scales_with_its_ranks),
		cmocka_unit_test(nvl72_domain),
		cmocka_unit_test(network_groups_keep_to_their_links),
		cmocka_unit_test(minimal_profile_and_its_defaults),
		cmocka_unit_test(duplicate_sizes_merge_in_place),
		cmocka_unit_test(missing_operations_fall_back),
		cmocka_unit_test(validator_rejects),
		cmocka_unit_test(described_nics_bound_measured_curves),
		cmocka_unit_test(described_nvlink_bounds_measured_curves),
		cmocka_unit_test(bundled_profiles_keep_within_their_description),
		cmocka_unit_test(derived_network_curves_follow_the_measured_ones),
		cmocka_unit_test(nic_latency_drives_small_messages),
		cmocka_unit_test(datasheet_bounds_memory_and_host_link),
		cmocka_unit_test(host_memory_bandwidth_drives_host_adam),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
