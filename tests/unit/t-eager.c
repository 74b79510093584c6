/* SPDX-License-Identifier: MIT */
/* Megatron-LM's own layers as eager kernels (perfmodel/eager.c, docs/MODEL.md
 * 4.11): the kernels of the campaign's local Llama layer, what each fusion
 * changes, the scores' traffic, the host's wait, that Transformer Engine's
 * layers are left as they were, and the optimizer step without Transformer
 * Engine and Apex (perfmodel/eager_opt.c). */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "../../perfmodel/constants.h"
#include "../../perfmodel/eager.h"
#include "../../perfmodel/eager_opt.h"
#include "../../perfmodel/perf.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* The layer of the GPU campaign's 317M Llama (h 1024, 16 heads, 8 KV heads
 * of 64, FFN 4096, SwiGLU, RoPE) at MBS 16 and sequence 1024 on one GPU,
 * every fusion off (tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2). */
static struct mt_eager_in campaign(void)
{
	struct mt_eager_in in;
	int k;

	memset(&in, 0, sizeof(in));
	in.mbs = 16, in.seq = 1024;
	in.T = in.Tsp = in.mbs * in.seq;
	in.ap = 16, in.gp = 8, in.d = 64, in.h = 1024, in.f = 4096;
	in.gated = in.rope = in.mlp = 1;
	in.fusions_off = (1u << MT_FU_N) - 1;
	in.hbm = 2970e9, in.peak = 989.4e12, in.gap = 1.5e-6;
	in.host_f = MT_EAGER_HOST_FWD_US * 1e-6, in.host_b = MT_EAGER_HOST_BWD_US * 1e-6;
	for (k = 0; k < 4; k++)
		in.lin_f[k] = 1e-3, in.lin_b[k] = 2e-3, in.lin_par[k] = 1e6;
	return in;
}

static void the_local_layer_issues_its_kernels(void **state)
{
	struct mt_eager_in in = campaign();
	struct mt_eager_out o;

	(void)state;
	mt_eager_layer(&in, &o);
	/* forward: 2 norms, 4 GEMMs, the query's copy, RoPE 12 a tensor, the
	 * repeated K and V, baddbmm, mask, softmax, bmm, the context's copy, 2
	 * residual adds, silu, the offset add, the product */
	assert_int_equal((int)o.kern_f, 43);
	/* backward: 8 GEMMs, 6 main-gradient adds, 2 x 2 norm kernels, 2
	 * residual sums, the product's 2, silu's, chunk's, 4 batched GEMMs, the
	 * softmax's, the mask's, 2 scalings, 2 repeat sums, RoPE 7 a tensor,
	 * split's */
	assert_int_equal((int)o.kern_b, 49);
	assert_near(o.cpu_f, 43 * MT_EAGER_HOST_FWD_US * 1e-6, 1e-12);
	/* kept per token: 8h, 8 query widths, the bf16 probabilities, 10 FFN */
	assert_near(o.act_sp, 8 * 1024, 1e-9);
	assert_near(o.act_tp, 8 * 1024, 1e-9);
	assert_near(o.act_core, 2 * 16 * 1024, 1e-9);
	assert_near(o.act_mlp, 10 * 4096, 1e-9);
	assert_near(o.buffer, 16.0 * 16 * 1024 * 1024 * 2, 1);
}

static void the_scores_move_their_bytes(void **state)
{
	struct mt_eager_in in = campaign();
	struct mt_eager_out o;
	double E = 16.0 * 16 * 1024 * 1024, mask = 16.0 * 1024 * 1024, bw = 2970e9, want;

	(void)state;
	mt_eager_layer(&in, &o);
	/* baddbmm writes them, the mask reads and writes them (broadcast over
	 * the heads), softmax reads and writes them, bmm reads them */
	want = (2 * E / MT_EAGER_BW_VEC + (4 * E + mask) / MT_EAGER_BW_BCAST +
		4 * E / MT_EAGER_BW_SOFTMAX_FWD + 2 * E / MT_EAGER_BW_VEC) / bw;
	assert_near(o.attn_f, want, 1e-9);
	/* backward: four batched GEMMs, softmax's and the mask's */
	want = (8 * E / MT_EAGER_BW_VEC + 6 * E / MT_EAGER_BW_SOFTMAX_BWD +
		(4 * E + mask) / MT_EAGER_BW_BCAST) / bw;
	assert_near(o.attn_b, want, 1e-9);
	/* in FP32 the softmax moves twice the bytes and two casts come */
	in.softmax_fp32 = 1;
	mt_eager_layer(&in, &o);
	assert_int_equal((int)o.kern_f, 45);
	assert_near(o.act_core, 6 * 16 * 1024, 1e-9);
}

static void fusions_remove_their_eager_ops(void **state)
{
	struct mt_eager_in in = campaign();
	struct mt_eager_out all, o;

	(void)state;
	mt_eager_layer(&in, &all);
	in.fusions_off &= ~(1u << MT_FU_ROPE);
	mt_eager_layer(&in, &o);
	assert_int_equal((int)o.kern_f, 43 - 24 + 2);
	assert_int_equal((int)o.kern_b, 49 - 14 + 2);
	assert_true(o.elem_f < all.elem_f);
	in = campaign();
	in.fusions_off &= ~(1u << MT_FU_BIAS_ACT);
	mt_eager_layer(&in, &o);
	assert_int_equal((int)o.kern_f, 43 - 2);
	assert_near(o.act_mlp, 6 * 4096, 1e-9); /* FC1's output and FC2's input */
	in = campaign();
	in.fusions_off &= ~(1u << MT_FU_MASKED_SOFTMAX);
	mt_eager_layer(&in, &o);
	assert_int_equal((int)o.kern_f, 43 - 1);
	assert_true(o.attn_f < all.attn_f);
}

static void short_kernels_wait_for_the_host(void **state)
{
	struct mt_eager_in in = campaign();
	struct mt_eager_out o;

	(void)state;
	/* a host faster than a kernel gap: the GPU never waits */
	in.host_f = in.host_b = 1e-6;
	mt_eager_layer(&in, &o);
	assert_near(o.idle_f + o.idle_b, 0, 1e-15);
	/* a GPU of unbounded bandwidth: every memory-bound kernel waits its
	 * whole issue less the gap; the GEMMs (1 and 2 ms) never */
	in = campaign();
	in.hbm = 1e30, in.peak = 1e30;
	mt_eager_layer(&in, &o);
	assert_near(o.idle_f, (43 - 4) * (MT_EAGER_HOST_FWD_US - 1.5) * 1e-6, 1e-9);
	assert_near(o.idle_b, (49 - 8) * (MT_EAGER_HOST_BWD_US - 1.5) * 1e-6, 1e-9);
}

/* Transformer Engine's layers are timed as before whatever the job's
 * fusion flags; Megatron-LM's own keep more per token and wait for the
 * host. */
static void only_the_local_layers_change(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_cluster *c = NULL;
	struct mt_job j;
	struct mt_ctx x;
	struct mt_costs te, off, local;
	struct mt_shape sh = { .tp = 1, .cp = 1, .mbs = 2, .ep = 1, .etp = 1, .fused_ce = 1 };

	(void)state;
	assert_int_equal(mt_model_load("llama3-8b", &m, &err), 0);
	assert_int_equal(mt_cluster_load("dgx-h100", &c, &err), 0);
	mt_job_init(&j);
	j.gpus = 8, j.seq = 4096, j.gbs = 64, j.attn_impl = MT_ATTN_UNFUSED;
	mt_ctx_init(&x, &m, c, &j);
	mt_costs_compute(&x, &sh, &te);
	j.fusions_off = (1u << MT_FU_N) - 1;
	mt_ctx_init(&x, &m, c, &j);
	mt_costs_compute(&x, &sh, &off);
	assert_memory_equal(&te.elem_f, &off.elem_f, sizeof(te.elem_f));
	assert_memory_equal(&te.act, &off.act, sizeof(te.act));
	assert_int_equal(off.eager, 0);
	j.transformer_impl = MT_TI_LOCAL;
	mt_ctx_init(&x, &m, c, &j);
	mt_costs_compute(&x, &sh, &local);
	assert_int_equal(local.eager, 1);
	assert_true(local.act[MT_L_DENSE][MT_RC_NONE] > te.act[MT_L_DENSE][MT_RC_NONE]);
	assert_true(local.elem_f[MT_L_DENSE] > te.elem_f[MT_L_DENSE]);
	assert_true(local.eager_idle_f[MT_L_DENSE] + local.eager_idle_b[MT_L_DENSE] > 0);
	/* the accumulation fused into the weight-gradient GEMM: no main-gradient
	 * adds */
	assert_near(local.host_ops[MT_L_DENSE], 92 - 6, 1e-9);
	assert_true(local.eager_buffer > 0 && te.eager_buffer == 0);
	mt_cluster_free(c);
}

/* The optimizer step without Transformer Engine and Apex: the campaign's
 * Llama holds 99 parameter tensors (the 99 of its log's gradient buckets:
 * 16 layers of two norms, QKV, projection, FC1 and FC2, the embedding, the
 * final norm and the untied output layer); each tensor's norm is read back,
 * AdamW's foreach kernels and the loops move 110 bytes a parameter. */
static void the_fallback_optimizer_counts_its_tensors(void **state)
{
	struct mt_model m;
	struct mt_plan b;
	const double P = 317228032, hbm = 2970e9, bw = hbm * MT_EAGER_BW_VEC, op = 8.2e-6;
	double t;

	(void)state;
	memset(&m, 0, sizeof(m));
	memset(&b, 0, sizeof(b));
	m.layers = 16, m.hidden = 1024, m.heads = 16, m.kv_heads = 8, m.head_dim = 64;
	m.ffn = 4096, m.gated = 1, m.norm = MT_NORM_RMS;
	b.pp = 1, b.vpp = 1, b.nl[0][MT_L_DENSE] = 16;
	assert_near(mt_eager_opt_tensors(&m, &b, 0, 0), 99, 1e-9);
	/* tied: the output layer is the embedding's weight, a tensor of its own
	 * on the last stage under PP */
	m.tied = 1;
	assert_near(mt_eager_opt_tensors(&m, &b, 0, 0), 98, 1e-9);
	b.pp = 2, b.mtp_stage = 1, b.nl[0][MT_L_DENSE] = b.nl[1][MT_L_DENSE] = 8;
	assert_near(mt_eager_opt_tensors(&m, &b, 0, 0), 8 * 6 + 1, 1e-9);
	assert_near(mt_eager_opt_tensors(&m, &b, 1, 0), 8 * 6 + 2, 1e-9);
	/* LayerNorm and biases (GPT-2): each norm two tensors, each linear two */
	m.norm = MT_NORM_LAYER, m.linear_bias = 1;
	assert_near(mt_eager_opt_tensors(&m, &b, 1, 0), 8 * 12 + 3, 1e-9);
	/* the norms (host-bound: a tiny op each), one read back per tensor, the
	 * rest bound by its 106 bytes a parameter */
	t = mt_eager_opt_time(99, P, hbm, 20e-6);
	assert_near(t, 99 * op + 99 * 20e-6 + P * 106 / bw, 1e-12);
	assert_true(t > 3.5 * P * MT_ADAM_BYTES_PER_PARAM / hbm);
	/* many small tensors: the host's issue bounds it */
	t = mt_eager_opt_time(1e5, 1e6, hbm, 20e-6);
	assert_near(t, 1e5 * op + 1e5 * 20e-6 + 3e5 * op, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_local_layer_issues_its_kernels),
		cmocka_unit_test(the_scores_move_their_bytes),
		cmocka_unit_test(fusions_remove_their_eager_ops),
		cmocka_unit_test(short_kernels_wait_for_the_host),
		cmocka_unit_test(only_the_local_layers_change),
		cmocka_unit_test(the_fallback_optimizer_counts_its_tensors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
