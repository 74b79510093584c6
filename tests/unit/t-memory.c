/* SPDX-License-Identifier: MIT */
/* Memory model against hand-derived values of the published formulas:
 * Korthikanti et al. (arXiv 2205.05198) Table 2 activation terms and the
 * Megatron-LM bytes per parameter with and without the distributed optimizer
 * (docs/user-guide/features/dist_optimizer.md). */
#include <math.h>

#include "testutil.h"

#include "../../perfmodel/optim.h"
#include "../../perfmodel/perf.h"

static struct mt_model gpt;      /* GPT-3 175B shape with dropout */
static struct mt_cluster *a100;
static struct mt_cluster *h100;

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	if (mt_model_load("gpt3-175b", &gpt, &err) || mt_cluster_load("dgx-a100-80g", &a100, &err) ||
	    mt_cluster_load("dgx-h100", &h100, &err))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mt_cluster_free(a100);
	mt_cluster_free(h100);
	return 0;
}

static void costs_for(const struct mt_model *m, const struct mt_cluster *c, int attn, int prec,
		      int tp, int sp, int mbs, int seq, struct mt_costs *a)
{
	struct mt_job j;
	struct mt_ctx x;

	mt_job_init(&j);
	j.gpus = 64;
	j.seq = seq;
	j.gbs = 64;
	j.attn_impl = attn;
	j.precision = prec;
	mt_ctx_init(&x, m, c, &j);
	mt_costs_compute(&x, &(struct mt_shape){ .tp = tp, .cp = 1, .mbs = mbs, .ep = 1, .etp = 1, .sp = sp,
				 .cp_comm = MT_CP_P2P, .cp_a2a = 0, .tp_overlap = 1, .fused_ce = 1 }, a);
}

/* Table 2: per layer, s b h (10 + 24/t + 5 a s / (h t)) bytes without sequence
 * parallelism, s b h (34/t + 5 a s / (h t)) with it, 34 s b h / t with
 * selective recompute, and the layer input (2 s b h / t) with full recompute. */
static void korthikanti_table2(void **state)
{
	const double s = 2048, b = 1, h = 12288, a = 96;
	struct mt_costs c;
	int t;

	(void)state;
	for (t = 1; t <= 8; t *= 2) {
		costs_for(&gpt, a100, MT_ATTN_UNFUSED, MT_PREC_BF16, t, 0, 1, (int)s, &c);
		assert_close(c.act[MT_L_DENSE][MT_RC_NONE],
			     s * b * h * (10 + 24.0 / t + 5 * a * s / (h * t)), 1e-12);
		if (t == 1)
			continue;
		costs_for(&gpt, a100, MT_ATTN_UNFUSED, MT_PREC_BF16, t, 1, 1, (int)s, &c);
		assert_close(c.act[MT_L_DENSE][MT_RC_NONE], s * b * h * (34.0 / t + 5 * a * s / (h * t)),
			     1e-12);
		assert_close(c.act[MT_L_DENSE][MT_RC_SELECTIVE], 34 * s * b * h / t, 1e-12);
		assert_close(c.act[MT_L_DENSE][MT_RC_FULL], 2 * s * b * h / t, 1e-12);
	}
	/* micro-batch size scales every term */
	costs_for(&gpt, a100, MT_ATTN_UNFUSED, MT_PREC_BF16, 8, 1, 4, (int)s, &c);
	assert_close(c.act[MT_L_DENSE][MT_RC_SELECTIVE], 34 * s * 4 * h / 8, 1e-12);
}

/* Selective recompute modules (docs/MODEL.md 4.4): core_attn frees the
 * Korthikanti et al. attention term (34 s b h / t left with SP); mlp frees
 * FC1's input, the activation input and FC2's input (2 + 8 + 8 of those 34),
 * leaving 16 s b h / t; layernorm frees nothing where the norms are fused
 * into the next linear (a dense GPT); each re-runs forward work. */
static void recompute_modules_free_their_terms(void **state)
{
	const double s = 2048, b = 1, h = 12288;
	struct mt_model ds;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_costs c;
	int t = 8;

	(void)state;
	costs_for(&gpt, a100, MT_ATTN_UNFUSED, MT_PREC_BF16, t, 1, 1, (int)s, &c);
	assert_close(mt_act_kept(&c, MT_L_DENSE, MT_RCM_DEFAULT), 34 * s * b * h / t, 1e-12);
	assert_close(mt_act_kept(&c, MT_L_DENSE, MT_RCM_DEFAULT | (1u << MT_RCM_MLP)),
		     16 * s * b * h / t, 1e-12);
	assert_close(mt_act_kept(&c, MT_L_DENSE, 0), c.act[MT_L_DENSE][MT_RC_NONE], 1e-12);
	assert_true(c.rc_act[MT_L_DENSE][MT_RCM_LAYERNORM] == 0);
	assert_true(c.rc_act[MT_L_DENSE][MT_RCM_MLA_UP_PROJ] == 0);
	assert_true(c.rc_mod[MT_L_DENSE][MT_RCM_CORE_ATTN] == c.attn_f[MT_L_DENSE]);
	assert_true(c.rc_mod[MT_L_DENSE][MT_RCM_MLP] > 0);
	assert_true(c.rc_mod_flops[MT_L_DENSE][MT_RCM_MLP] > 0);

	/* DeepSeek-V3 (MLA, MoE with a shared expert), TP 2 with SP, BF16 */
	assert_int_equal(mt_model_load("deepseek-v3", &ds, &err), 0);
	costs_for(&ds, h100, MT_ATTN_FLASH, MT_PREC_BF16, 2, 1, 1, 4096, &c);
	{
		const double T = 4096, a = ds.heads, dqk = ds.qk_nope_dim + ds.qk_rope_dim;
		const double dv = ds.v_head_dim, hh = ds.hidden, tt = 2;
		unsigned all = MT_RCM_ALL;

		/* mla_up_proj: Q, K and V */
		assert_close(c.rc_act[MT_L_MOE][MT_RCM_MLA_UP_PROJ],
			     T * (4 * a * dqk + 2 * a * dv) / tt, 1e-12);
		/* moe_act: each routed copy's FC2 input */
		assert_close(c.rc_act[MT_L_MOE][MT_RCM_MOE_ACT],
			     T * ds.topk * 2 * ds.moe_ffn / tt, 1e-12);
		/* layernorm: MLA's input norm and the pre-MLP norm of a MoE layer,
		 * only the input norm in a dense layer */
		assert_close(c.rc_act[MT_L_MOE][MT_RCM_LAYERNORM], T * 2 * 2 * hh / tt, 1e-12);
		assert_close(c.rc_act[MT_L_DENSE][MT_RCM_LAYERNORM], T * 2 * hh / tt, 1e-12);
		/* mlp applies to dense layers, moe_act and moe to MoE layers */
		assert_true(c.rc_act[MT_L_MOE][MT_RCM_MLP] == 0);
		assert_true(c.rc_act[MT_L_DENSE][MT_RCM_MOE_ACT] == 0);
		assert_true(c.rc_act[MT_L_MOE][MT_RCM_SHARED_EXPERTS] > 0);
		assert_true(c.rc_mod[MT_L_MOE][MT_RCM_MOE] > c.rc_mod[MT_L_MOE][MT_RCM_SHARED_EXPERTS]);
		/* what is kept never goes below the layer input */
		assert_true(mt_act_kept(&c, MT_L_MOE, all) > c.act[MT_L_MOE][MT_RC_FULL]);
		assert_true(mt_act_kept(&c, MT_L_DENSE, all) > c.act[MT_L_DENSE][MT_RC_FULL]);
		assert_true(mt_rc_time(&c, MT_L_MOE, all, 0) < c.rc_full[MT_L_MOE]);
		/* moe holds moe_act and shared_experts: counted once */
		assert_close(mt_act_kept(&c, MT_L_MOE, all),
			     mt_act_kept(&c, MT_L_MOE, all & ~((1u << MT_RCM_MOE_ACT) |
							      (1u << MT_RCM_SHARED_EXPERTS))), 1e-12);
	}
}

/* Flash attention keeps no s^2 tensor, only a log-sum-exp per head. */
static void flash_attention_drops_the_quadratic_term(void **state)
{
	const double s = 2048, h = 12288, a = 96;
	struct mt_costs c;

	(void)state;
	costs_for(&gpt, a100, MT_ATTN_FLASH, MT_PREC_BF16, 8, 1, 1, (int)s, &c);
	assert_close(c.act[MT_L_DENSE][MT_RC_NONE], s * h * 34 / 8 + s * 4 * a / 8, 1e-12);
}

/* With FP8, Transformer Engine saves the inputs of the four GEMMs in one byte:
 * QKV and FC1 inputs (sequence-parallel), projection and FC2 inputs (TP). */
static void fp8_saves_gemm_inputs_in_one_byte(void **state)
{
	struct mt_costs bf, f8;
	double s = 4096, h = 12288, t = 4;

	(void)state;
	costs_for(&gpt, h100, MT_ATTN_FLASH, MT_PREC_BF16, 4, 1, 1, (int)s, &bf);
	costs_for(&gpt, h100, MT_ATTN_FLASH, MT_PREC_FP8, 4, 1, 1, (int)s, &f8);
	assert_close(bf.act[0][MT_RC_NONE] - f8.act[0][MT_RC_NONE],
		     s * (2 * h / t + h / t + 4 * h / t), 1e-12);
}

static struct mt_mem memory_of(const struct mt_model *m, const struct mt_cluster *cl,
			       struct mt_config *cfg, int gpus, int seq, int gbs,
			       struct mt_plan *plan)
{
	struct mt_job j;
	struct mt_ctx x;
	struct mt_costs a;
	struct mt_mem mem;
	long dp = gpus / (cfg->tp * cfg->cp * cfg->pp);

	mt_job_init(&j);
	j.gpus = gpus;
	j.seq = seq;
	j.gbs = gbs;
	mt_ctx_init(&x, m, cl, &j);
	cfg->dp = (int)dp;
	cfg->num_mb = (int)(gbs / (dp * cfg->mbs));
	mt_costs_compute(&x, &(struct mt_shape){ .tp = cfg->tp, .cp = cfg->cp, .mbs = cfg->mbs, .ep = cfg->ep, .etp = cfg->etp, .sp = cfg->sp,
				 .cp_comm = cfg->cp_comm, .cp_a2a = cfg->cp_a2a, .tp_overlap = 1, .fused_ce = 1 }, &a);
	assert_int_equal(mt_plan_compute(&x, &a, cfg->pp, cfg->vpp, (int)dp, cfg->num_mb, cfg, plan), 0);
	mt_memory(&x, &a, plan, cfg, &mem);
	return mem;
}

static void base_config(struct mt_config *c, int tp, int pp)
{
	memset(c, 0, sizeof(*c));
	c->tp = tp;
	c->pp = pp;
	c->vpp = c->cp = c->ep = c->etp = c->mbs = 1;
	c->sp = tp > 1;
	c->grad_fp32 = 1;
	c->overlap_grad = c->overlap_param = c->tp_overlap = c->fused_ce = 1;
}

/* bf16 parameters with fp32 gradients: 18 bytes per parameter, or
 * 6 + 12/d with the distributed optimizer over d = DP x CP ranks. */
static void bytes_per_parameter(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config cfg;
	struct mt_plan *plan = malloc(sizeof(*plan));
	struct mt_mem mem;
	double P;
	int d;

	(void)state;
	assert_int_equal(mt_model_load("llama3-8b", &m, &err), 0);
	for (d = 0; d <= 1; d++) {
		base_config(&cfg, 2, 1);
		cfg.dist_opt = d;
		mem = memory_of(&m, h100, &cfg, 64, 4096, 128, plan);
		P = plan->par_dense[0];
		/* attention, MLP, embedding and output over TP 2 (vocabulary padded
		 * to 128 x TP), the norms replicated */
		assert_close(P, 32.0 * (mt_model_attn_params(&m) + mt_model_dense_mlp_params(&m)) / 2 +
				2.0 * mt_model_padded_vocab(&m, 2) * 4096 / 2 +
				32.0 * mt_model_norm_params(&m) + 4096, 1e-12);
		assert_close(mem.weights + mem.grads + mem.optimizer, P * (d ? 6 + 12.0 / 32 : 18), 1e-9);
	}
	/* bf16 gradient buffers: 2 bytes less per parameter */
	base_config(&cfg, 2, 1);
	cfg.dist_opt = 1;
	cfg.grad_fp32 = 0;
	mem = memory_of(&m, h100, &cfg, 64, 4096, 128, plan);
	assert_close(mem.weights + mem.grads + mem.optimizer, plan->par_dense[0] * (4 + 12.0 / 32), 1e-9);
	free(plan);
}

/* In-flight micro-batches: p - i for 1F1B; for the interleaved schedule the
 * first stage holds L (1 + (p-1)/(p v)) layers' activations (Korthikanti 4.2.3). */
static void inflight_microbatches(void **state)
{
	int p, v, i;

	(void)state;
	for (p = 2; p <= 16; p *= 2) {
		for (i = 0; i < p; i++) {
			assert_int_equal(mt_inflight(p, 1, 1000, i), p - i);
			assert_int_equal(mt_inflight(p, 1, 2, i), p - i < 2 ? p - i : 2);
		}
		for (v = 2; v <= 8; v *= 2) {
			/* chunks of L/(p v) layers in flight on stage 0 */
			double layers = mt_inflight(p, v, 1000, 0) / (double)(p * v);
			assert_close(layers, 1 + (p - 1.0) / (p * v), 1e-12);
		}
	}
	assert_int_equal(mt_inflight(1, 1, 8, 0), 1);
}

/* With 1F1B the first stage is the most loaded: it holds p micro-batches. */
static void first_stage_is_most_loaded(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config cfg;
	struct mt_plan *plan = malloc(sizeof(*plan));
	struct mt_mem mem;

	(void)state;
	assert_int_equal(mt_model_load("llama3-70b", &m, &err), 0);
	base_config(&cfg, 8, 8);
	cfg.dist_opt = 1;
	mem = memory_of(&m, h100, &cfg, 128, 4096, 256, plan);
	assert_int_equal(mem.stage, 0);
	free(plan);
}

/* Every stage of model m (TP 8, PP pp, the distributed optimizer) on 64 H100
 * at sequence 8192, GBS 128, with the layout `lay` (NULL: the even split):
 * st[] from mt_memory_stages, *peak from mt_memory.  Returns the count. */
static int every_stage(const struct mt_model *m, int pp, const char *lay, struct mt_mem *st,
		       struct mt_mem *peak)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_layout l;
	struct mt_config cfg;
	struct mt_plan *plan = malloc(sizeof(*plan));
	struct mt_job j;
	struct mt_ctx x;
	struct mt_costs a;
	int n;

	mt_job_init(&j);
	j.gpus = 64;
	j.seq = 8192;
	j.gbs = 128;
	if (lay) {
		assert_int_equal(mt_layout_parse(lay, &l, &err), 0);
		j.pins.layout = &l;
	}
	base_config(&cfg, 8, pp);
	cfg.dist_opt = 1;
	cfg.dp = 64 / (8 * pp);
	cfg.num_mb = 128 / cfg.dp;
	mt_ctx_init(&x, m, h100, &j);
	mt_costs_compute(&x, &(struct mt_shape){ .tp = 8, .cp = 1, .mbs = 1, .ep = 1, .etp = 1,
				 .sp = 1, .cp_comm = MT_CP_P2P, .tp_overlap = 1, .fused_ce = 1 }, &a);
	assert_int_equal(mt_plan_compute(&x, &a, pp, 1, cfg.dp, cfg.num_mb, &cfg, plan), 0);
	n = mt_memory_stages(&x, &a, plan, &cfg, st);
	mt_memory(&x, &a, plan, &cfg, peak);
	free(plan);
	return n;
}

/* Every pipeline stage of Llama-3 70B at PP 4 on 64 GPUs: under 1F1B the
 * first holds the most micro-batches in flight, the last the output layer
 * and the logits; the peak is the heaviest of them; the allocator's figures
 * nest (allocated <= max allocated <= reserved) and with what lies outside
 * it make the total. */
static void every_stage_of_a_pipeline(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_mem st[4], peak;
	double max = 0;
	int i, arg = -1;

	(void)state;
	assert_int_equal(mt_model_load("llama3-70b", &m, &err), 0);
	assert_int_equal(every_stage(&m, 4, NULL, st, &peak), 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(st[i].stage, i);
		if (st[i].total > max) {
			max = st[i].total;
			arg = i;
		}
		if (i > 0)
			assert_true(st[i].activations < st[i - 1].activations);
		assert_true(i == 3 ? st[i].logits > 0 : st[i].logits == 0);
		assert_true(st[i].allocated > 0);
		assert_true(st[i].allocated <= st[i].max_allocated);
		assert_true(st[i].max_allocated <= st[i].reserved);
		assert_close(st[i].reserved + st[i].outside, st[i].total, 1e-12);
		assert_close(st[i].allocated, st[i].weights + st[i].grads + st[i].optimizer +
						      st[i].workspace + st[i].cuda_graphs, 1e-12);
		assert_close(st[i].outside, st[i].nccl + st[i].cuda_context, 1e-12);
	}
	/* 1F1B: p - i micro-batches of 20 layers in flight on stage i */
	assert_close(st[1].activations / st[3].activations, 3, 1e-12);
	assert_int_equal(arg, 0);
	assert_int_equal(peak.stage, arg);
	assert_true(peak.total == max);
	assert_true(peak.max_allocated == st[arg].max_allocated);
}

/* calibrate --from-validation's memory terms (docs/MODEL.md 10): the step
 * memory factor k multiplies what each stage allocates inside a step, so
 * max allocated - allocated and reserved - allocated grow k-fold, and the
 * memory term is added to reserved and the total; allocated between steps
 * and what lies outside the allocator stay. */
static void corrected_step_memory(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_mem st[4], sc[4], peak;
	const struct mt_corr save = h100->corr;
	const double k = 1.3, d = 1073741824.0;
	int i;

	(void)state;
	assert_int_equal(mt_model_load("llama3-70b", &m, &err), 0);
	assert_int_equal(every_stage(&m, 4, NULL, st, &peak), 4);
	mt_corr_init(&h100->corr);
	h100->corr.on = 1;
	h100->corr.mem_step = k;
	h100->corr.mem_bytes = d;
	assert_int_equal(every_stage(&m, 4, NULL, sc, &peak), 4);
	h100->corr = save;
	for (i = 0; i < 4; i++) {
		assert_close(sc[i].allocated, st[i].allocated, 1e-12);
		assert_close(sc[i].max_allocated - sc[i].allocated,
			     k * (st[i].max_allocated - st[i].allocated), 1e-12);
		assert_close(sc[i].reserved - sc[i].allocated,
			     k * (st[i].reserved - st[i].allocated) + d, 1e-12);
		assert_close(sc[i].outside, st[i].outside, 1e-12);
		assert_close(sc[i].total, sc[i].reserved + sc[i].outside, 1e-12);
	}
}

/* A middle stage that is not the slowest can hold the most memory: with
 * few layers on the first stage, stage 1 (30 layers, 3 micro-batches in
 * flight) outweighs stage 2 (31 layers, 2 in flight), which the step time
 * evaluates; the peak is still the heaviest stage. */
static void peak_is_the_heaviest_stage(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_mem st[4], peak;
	int i;

	(void)state;
	assert_int_equal(mt_model_load("llama3-70b", &m, &err), 0);
	assert_int_equal(every_stage(&m, 4, "Et*2|t*30|t*31|t*17L", st, &peak), 4);
	assert_int_equal(peak.stage, 1);
	for (i = 0; i < 4; i++)
		assert_true(st[i].total <= peak.total);
	assert_true(peak.total == st[1].total);
	assert_true(st[1].total > st[2].total);
}

/* Full recompute of N layers per chunk lowers memory linearly; selective
 * recompute of flash attention saves (almost) nothing. */
static void recompute_lowers_memory(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config cfg;
	struct mt_plan *plan = malloc(sizeof(*plan));
	double prev = 1e300;
	int n;

	(void)state;
	assert_int_equal(mt_model_load("llama3-70b", &m, &err), 0);
	base_config(&cfg, 8, 4);
	cfg.dist_opt = 1;
	cfg.recompute = MT_RC_FULL;
	for (n = 1; n <= 20; n++) {
		struct mt_mem mem;
		cfg.recompute_layers = n;
		mem = memory_of(&m, h100, &cfg, 64, 8192, 128, plan);
		assert_true(mem.activations < prev);
		prev = mem.activations;
	}
	free(plan);
}

/* Logits, counted once (docs/MODEL.md 4.8): from the loss's forward to its
 * backward the output layer's inputs and the loss's FP32 softmax are kept
 * (4 bytes a logit, the fused loss as the unfused one: both copy the BF16
 * logits to FP32); beside them for a moment one BF16 copy (2 bytes); no
 * layer's own transient is live with them.  On the last stage only. */
static void logits_on_the_last_stage(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config cfg;
	struct mt_plan *plan = malloc(sizeof(*plan));
	struct mt_job j;
	struct mt_ctx x;
	struct mt_costs a;
	struct mt_mem mem;
	double T = 4096, V = 129024 /* padded to a multiple of 128 x 8 */, t = 8, h = 8192;
	int f;

	(void)state;
	assert_int_equal(mt_model_load("llama3-70b", &m, &err), 0);
	base_config(&cfg, 8, 1);
	mt_job_init(&j);
	j.gpus = 8;
	j.seq = 4096;
	j.gbs = 8;
	mt_ctx_init(&x, &m, h100, &j);
	for (f = 0; f <= 1; f++) {
		mt_costs_compute(&x, &(struct mt_shape){ .tp = 8, .cp = 1, .mbs = 1, .ep = 1, .etp = 1,
					 .sp = 1, .cp_comm = MT_CP_P2P, .cp_a2a = 0, .tp_overlap = 1,
					 .fused_ce = f }, &a);
		assert_close(a.act_out, T * 4 * h / t + T * V / t * 4, 1e-12);
		assert_close(a.logits_transient, T * V / t * 2, 1e-12);
	}
	cfg.dist_opt = 1;
	mem = memory_of(&m, h100, &cfg, 8, 4096, 8, plan);
	/* the logits' 6 bytes once: 4 kept, 2 the transient (the layer's own
	 * transient, T h 2 or the MLP's, is smaller here) */
	assert_true(a.transient < a.act_out + a.logits_transient);
	assert_close(mem.logits, a.act_out, 1e-12);
	assert_close(mem.transient, a.logits_transient, 1e-12);
	assert_close(mem.logits + mem.transient, T * 4 * h / t + T * V / t * 6, 1e-12);
	base_config(&cfg, 8, 4);
	cfg.dist_opt = 1;
	mem = memory_of(&m, h100, &cfg, 32, 4096, 32, plan);
	assert_int_equal(mem.stage, 0);
	assert_true(mem.logits == 0); /* stage 0 of 4 has no output layer */
	free(plan);
}

/* The precision-aware optimizer (docs/MODEL.md 4.8): master weights and the
 * two moments per parameter of the shard, in their dtypes (the FP32 master
 * kept as its 16-bit remainder beside a BF16 weight: 2 bytes); the step's
 * FP32 copies of the states below FP32; the bytes its step moves. */
static void precision_aware_optimizer_bytes(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config cfg;
	struct mt_plan *plan = malloc(sizeof(*plan));
	struct mt_mem mem;
	struct mt_job j;
	double P;

	(void)state;
	assert_int_equal(mt_model_load("llama3-8b", &m, &err), 0);
	mt_job_init(&j);
	base_config(&cfg, 2, 1);
	cfg.dist_opt = 1;
	mem = memory_of(&m, h100, &cfg, 64, 4096, 128, plan);
	P = plan->par_dense[0] / 32;
	assert_close(mem.optimizer, 12 * P, 1e-12);
	assert_close(mt_opt_step_moved_bytes(&j, &cfg, 32), 38, 1e-12);
	/* on: BF16 moments, FP32 master weights as the remainder: 2 + 2 + 2 */
	mt_config_prec_opt(&j, &cfg, 1);
	assert_int_equal(cfg.exp_avg, MT_OD_BF16);
	assert_int_equal(cfg.exp_avg_sq, MT_OD_BF16);
	assert_int_equal(cfg.main_params, MT_OD_FP32);
	mem = memory_of(&m, h100, &cfg, 64, 4096, 128, plan);
	assert_close(mem.optimizer, 6 * P, 1e-12);
	assert_close(mem.weights + mem.grads, plan->par_dense[0] * (2 + 4), 1e-9);
	assert_close(mt_opt_step_copy_bytes(&j, &cfg), 8, 1e-12);
	/* grads 3 x 4, remainder 6, each BF16 moment 24, the weight 2 */
	assert_close(mt_opt_step_moved_bytes(&j, &cfg, 32), 12 + 6 + 48 + 2, 1e-12);
	/* the main gradients in BF16 are the DDP buffer's: 2 bytes, and 3 x 2 moved */
	cfg.grad_fp32 = 0;
	mem = memory_of(&m, h100, &cfg, 64, 4096, 128, plan);
	assert_close(mem.grads, plan->par_dense[0] * 2, 1e-9);
	assert_close(mt_opt_step_moved_bytes(&j, &cfg, 32), 6 + 6 + 48 + 2, 1e-12);
	cfg.grad_fp32 = 1;
	/* FP32 moments: 2 + 4 + 4, no copies; FP8 moments with FP16 master
	 * weights: 2 + 1 + 1, an FP32 copy of each */
	cfg.exp_avg = cfg.exp_avg_sq = MT_OD_FP32;
	assert_close(mt_opt_state_bytes(&j, &cfg, 32), 10, 1e-12);
	assert_close(mt_opt_step_copy_bytes(&j, &cfg), 0, 1e-12);
	assert_close(mt_opt_step_moved_bytes(&j, &cfg, 32), 12 + 6 + 16 + 2, 1e-12);
	cfg.exp_avg = cfg.exp_avg_sq = MT_OD_FP8;
	cfg.main_params = MT_OD_FP16;
	assert_close(mt_opt_state_bytes(&j, &cfg, 32), 4, 1e-12);
	assert_close(mt_opt_step_copy_bytes(&j, &cfg), 12, 1e-12);
	/* FP8 with current scaling and FP32 master weights: Megatron-Core keeps
	 * them whole (no remainder): 4 + 2 + 2 */
	j.precision = MT_PREC_FP8;
	j.fp8_recipe = MT_FP8_TENSORWISE;
	mt_config_prec_opt(&j, &cfg, 1);
	assert_close(mt_opt_state_bytes(&j, &cfg, 32), 8, 1e-12);
	/* delayed scaling, weights not kept in FP8 (DP 1): the remainder again */
	j.fp8_recipe = MT_FP8_DELAYED;
	assert_close(mt_opt_state_bytes(&j, &cfg, 1), 6, 1e-12);
	/* with the optimizer offloaded the hybrid optimizer keeps FP32 states */
	j.opt_offload = 0.5;
	mt_config_prec_opt(&j, &cfg, 1);
	assert_int_equal(cfg.exp_avg, MT_OD_FP32);
	assert_close(mt_opt_state_bytes(&j, &cfg, 32), 12, 1e-12);
	free(plan);
}

/* Multi-token prediction: the stage of the MTP layers, when it is not the
 * first, keeps a copy of the word embedding (Megatron-Core gpt_model.py:173)
 * beside the output layer: its weights, gradients and optimizer states. */
static void mtp_stage_keeps_an_embedding(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config cfg;
	struct mt_plan *plan = malloc(sizeof(*plan));
	struct mt_job j;
	struct mt_ctx x;
	struct mt_costs a;
	double h, V, d = 0;
	int k, r, last = -1;

	(void)state;
	assert_int_equal(mt_model_load("deepseek-v3", &m, &err), 0);
	assert_int_equal(m.mtp_layers, 1);
	base_config(&cfg, 2, 16);
	cfg.ep = 8;
	cfg.dist_opt = 1;
	mt_job_init(&j);
	j.gpus = 1024;
	j.seq = 4096;
	j.gbs = 8192;
	mt_ctx_init(&x, &m, h100, &j);
	cfg.dp = 1024 / (2 * 16);
	cfg.num_mb = 8192 / cfg.dp;
	mt_costs_compute(&x, &(struct mt_shape){ .tp = 2, .cp = 1, .mbs = 1, .ep = 8, .etp = 1, .sp = 1,
				 .cp_comm = MT_CP_P2P, .cp_a2a = 0, .tp_overlap = 1, .fused_ce = 1 }, &a);
	assert_int_equal(mt_plan_compute(&x, &a, 16, 1, cfg.dp, cfg.num_mb, &cfg, plan), 0);
	assert_int_equal(plan->mtp_stage, 15);
	for (r = 0; r < plan->nrep; r++)
		if (plan->rep[r] == 15)
			last = r;
	assert_true(last >= 0);
	h = m.hidden;
	V = mt_model_padded_vocab(&m, 2);
	for (k = 0; k < MT_L_N; k++)
		d += plan->nl[15][k] * (a.par_tp[k] + a.par_rep[k]);
	/* the output layer and final norm, the MTP projection and norms, and
	 * the embedding's copy (V h / TP: no learned positions) */
	assert_close(a.par_emb, V * h / 2, 1e-12);
	assert_close(plan->par_dense[last],
		     d + V * h / 2 + h * m.norm + 2.0 * h * h / 2 + 3.0 * h * m.norm + a.par_emb, 1e-12);
	/* one pipeline stage: the first stage's own embedding, no copy */
	base_config(&cfg, 2, 1);
	cfg.ep = 8;
	cfg.dp = 1024 / 2;
	cfg.num_mb = 8192 / cfg.dp;
	assert_int_equal(mt_plan_compute(&x, &a, 1, 1, cfg.dp, cfg.num_mb, &cfg, plan), 0);
	d = 0;
	for (k = 0; k < MT_L_N; k++)
		d += plan->nl[0][k] * (a.par_tp[k] + a.par_rep[k]);
	assert_close(plan->par_dense[0],
		     d + a.par_emb + V * h / 2 + h * m.norm + 2.0 * h * h / 2 + 3.0 * h * m.norm, 1e-12);
	free(plan);
}

/* Context parallelism divides every activation by CP; the parts add up. */
static void parts_add_up_and_cp_divides(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config cfg;
	struct mt_plan *plan = malloc(sizeof(*plan));
	struct mt_mem m1, m2;

	(void)state;
	assert_int_equal(mt_model_load("llama3-70b", &m, &err), 0);
	base_config(&cfg, 8, 1);
	cfg.dist_opt = 1;
	m1 = memory_of(&m, h100, &cfg, 64, 16384, 8, plan);
	cfg.cp = 2;
	m2 = memory_of(&m, h100, &cfg, 64, 16384, 8, plan);
	assert_close(m2.activations, m1.activations / 2, 0.01);
	assert_close(m1.total, m1.weights + m1.grads + m1.optimizer + m1.activations + m1.logits +
			       m1.moe_dispatch + m1.transient + m1.nccl + m1.cuda_context +
			       m1.workspace + m1.cuda_graphs + m1.fragmentation, 1e-12);
	free(plan);
}

/* Experts are sharded over EP x ETP, their optimizer states over expert DP. */
static void experts_shard_over_ep(void **state)
{
	struct mt_model m;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config cfg;
	struct mt_plan *plan = malloc(sizeof(*plan));
	double e1, e8;

	(void)state;
	assert_int_equal(mt_model_load("mixtral-8x7b", &m, &err), 0);
	base_config(&cfg, 2, 1);
	cfg.dist_opt = 1;
	memory_of(&m, h100, &cfg, 16, 4096, 64, plan);
	e1 = plan->par_exp[0];
	cfg.ep = 8;
	memory_of(&m, h100, &cfg, 16, 4096, 64, plan);
	e8 = plan->par_exp[0];
	assert_close(e1 / e8, 8, 1e-12);
	assert_close(e1, 32.0 * 8 * mt_model_expert_params(&m), 1e-12);
	assert_int_equal(plan->edp, 16 * 1 / 8 * 2 / 2); /* N / (ETP EP PP) */
	free(plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(korthikanti_table2),
		cmocka_unit_test(flash_attention_drops_the_quadratic_term),
		cmocka_unit_test(fp8_saves_gemm_inputs_in_one_byte),
		cmocka_unit_test(bytes_per_parameter),
		cmocka_unit_test(inflight_microbatches),
		cmocka_unit_test(first_stage_is_most_loaded),
		cmocka_unit_test(every_stage_of_a_pipeline),
		cmocka_unit_test(peak_is_the_heaviest_stage),
		cmocka_unit_test(recompute_lowers_memory),
		cmocka_unit_test(logits_on_the_last_stage),
		cmocka_unit_test(precision_aware_optimizer_bytes),
		cmocka_unit_test(mtp_stage_keeps_an_embedding),
		cmocka_unit_test(parts_add_up_and_cp_divides),
		cmocka_unit_test(experts_shard_over_ep),
		cmocka_unit_test(corrected_step_memory),
		cmocka_unit_test(recompute_modules_free_their_terms),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
