/* SPDX-License-Identifier: MIT */
/* perf: the memory and time model, in three levels so that the search can
 * evaluate millions of candidates without repeating work.
 *
 *   level A  mt_costs_compute()   everything that depends on the shape of one
 *            layer (struct mt_shape): TP, CP, micro-batch, EP, ETP, SP, CP comm
 *            type (and a2a+p2p's inner group size, 0 for the NVLink-domain
 *            default), TP overlap and fused cross-entropy.  GEMM,
 *            attention and collective look-ups in the profile happen here.
 *   level B  mt_plan_compute()    the pipeline: PP, VPP, the layer split, DP and
 *            the number of micro-batches; DP communication look-ups.
 *   level C  mt_memory() and mt_timing()   recompute, distributed optimizer and
 *            activation offload: arithmetic only, no look-up, no allocation.
 *
 * Every formula is in docs/MODEL.md with its source; the section numbers in the
 * comments of costs.c, costs_comm.c, costs_mem.c, memory.c and timing.c refer
 * to it.
 */
#ifndef MT_PERF_H
#define MT_PERF_H

#include "cluster.h"
#include "config.h"
#include "host.h"
#include "layout.h"
#include "model.h"
#include "recompute.h"
#include "schedule.h"

#define MT_MAX_PP 1024

enum { MT_L_DENSE, MT_L_MOE, MT_L_N };

/* Level A: per-layer, per-micro-batch costs on one GPU. */
struct mt_costs {
	/* the shape these costs are for */
	int tp, cp, mbs, ep, etp, sp, cp_type;
	int dispatcher;             /* enum mt_dispatcher */
	int rank_budget;            /* HybridEP with a rank budget */
	int valid;
	double tokens;              /* T = mbs * seq / cp */

	/* seconds per layer per micro-batch, forward and backward */
	double gemm_f[MT_L_N], gemm_b[MT_L_N];
	double attn_f[MT_L_N], attn_b[MT_L_N];
	double elem_f[MT_L_N], elem_b[MT_L_N];
	double tp_comm[MT_L_N], tp_exposed[MT_L_N];   /* forward + backward */
	double cp_comm[MT_L_N], cp_exposed[MT_L_N];
	double ep_comm[MT_L_N], ep_exposed[MT_L_N];
	double fwd[MT_L_N], bwd[MT_L_N];             /* compute + exposed comm */
	/* selective recompute, per module (enum mt_rc_module, docs/MODEL.md
	 * 4.4 and 5.12): the forward work re-run in the backward (s), its
	 * executed FLOPs, and the activation bytes it frees */
	double rc_mod[MT_L_N][MT_RCM_N], rc_mod_flops[MT_L_N][MT_RCM_N];
	double rc_act[MT_L_N][MT_RCM_N];
	double rc_full[MT_L_N];                      /* extra time, one more forward */
	double host_ops[MT_L_N];                     /* kernels launched, fwd + bwd (GPU gaps) */
	struct mt_host_layer hl[MT_L_N];             /* the host timeline's regions (5.8) */
	struct mt_host_layer hl_wait;                /* a MoE layer with a rank budget as it would
						      * be without: waiting for the counts */

	/* executed FLOPs per layer per micro-batch, forward only */
	double flops_gemm_f[MT_L_N], flops_attn_f[MT_L_N];

	/* activation bytes per layer per micro-batch */
	double act[MT_L_N][MT_RC_N];   /* [none, selective (core_attn), full (checkpoint only)];
					* mt_act_kept() for a candidate's modules */
	double act_layer_peak[MT_L_N]; /* one layer rematerialised during backward */
	double act_fine[MT_L_N];       /* of act[k][base], the inputs of the job's offload_modules */

	/* parameters of one layer held by this GPU (elements) */
	double par_tp[MT_L_N];      /* split by TP (attention, dense MLP, shared experts) */
	double par_rep[MT_L_N];     /* replicated over TP (norms, router, MLA down-proj) */
	double par_exp[MT_L_N];     /* routed experts, split by EP x ETP */
	double par_fp8[MT_L_N];     /* of those, in FP8 linear layers (weight cache) */

	/* embedding (first stage) and output layer + loss (last stage) */
	double emb_f, emb_b, out_f, out_b;
	double out_tp_comm, out_tp_exposed;
	double flops_out_f;
	double par_emb;             /* elements on this GPU */
	double act_emb;             /* bytes per in-flight micro-batch */
	double act_out;             /* bytes, last stage, one micro-batch */
	double logits_transient;
	double host_ops_io;

	/* pipeline and MoE */
	double p2p_bytes, p2p_time; /* one activation between stages */
	struct mt_dispatch_buffers dbuf; /* the dispatcher's token buffers, one MoE layer */
	double moe_tokens;          /* tokens this GPU routes per MoE layer (T / SP) */
	/* MoE dispatch and its overlaps (5.3), per MoE layer and micro-batch */
	struct mt_dispatch_cost disp;
	double ep_shared_hidden;    /* hidden behind the shared experts (no 1F1B overlap) */
	double ep_1f1b_exposed;     /* exposed with the 1F1B overlap, every micro-batch paired */
	double ep_1f1b_save;        /* layer time saved by that overlap, paired micro-batch */
	double transient;           /* largest temporary other than logits */
	/* Megatron-LM's own layers (--transformer-impl local, docs/MODEL.md 4.11),
	 * per layer and micro-batch: the GPU's wait for the host's issue of the
	 * eager kernels, forward and backward, and the host's issue time (s);
	 * the persistent score buffer of their attention (bytes) */
	int eager;
	double eager_idle_f[MT_L_N], eager_idle_b[MT_L_N], eager_cpu[MT_L_N];
	double eager_buffer;
};

/* Level B: the pipeline layout and the DP communication of one candidate. */
struct mt_plan {
	int pp, vpp, split, first_layers, last_layers;
	int dp, edp, num_mb;
	int valid;
	/* layers of each type per stage, and totals */
	int nl[MT_MAX_PP][MT_L_N];
	int tot[MT_L_N];
	int chunk_layers_max;       /* most layers in one model chunk */
	/* each stage's model chunks in flight at its peak, in units of its
	 * mean chunk (the interleaved schedule walked, docs/MODEL.md 4.8) */
	double inflight_ck[MT_MAX_PP];
	int rep[5];                 /* stages evaluated for time: first, heaviest middle
				     * (and the heaviest under the EP overlap's saving, when another),
				     * the MTP stage when apart, last */
	int nrep;
	int mtp_stage;              /* the stage holding the MTP layers (pp - 1 unless a layout
				     * puts them elsewhere) */
	struct mt_layout layout;    /* the chunks of the split, every split in layout form */
	/* Megatron-FSDP (perfmodel/fsdp.h): one layer's parameter all-gather and
	 * gradient reduce-scatter per micro-batch, s; the embedding's/output's */
	double fsdp_ag[MT_L_N], fsdp_rs[MT_L_N], fsdp_io_ag, fsdp_io_rs;
	/* ... and the parameters a rank gathers for one layer / for the
	 * embedding or output layer (PyTorch FSDP2 copies them out, 5.11) */
	double fsdp_par[MT_L_N], fsdp_io_par, fsdp_gb; /* fsdp_gb: gradient bytes */
	/* DP communication per step, seconds: [dist_opt] */
	double dp_rs[2], dp_ag[2], dp_rs_last[2], dp_ag_first[2];
	/* parameters on each representative stage (elements), for memory */
	double par_dense[5], par_exp[5], par_fp8[5];
	int64_t bucket_params;
	double p2p_time;            /* one activation to the next stage (s) */
	/* optimizer-step time per parameter (s), at its least with or without
	 * the precision-aware optimizer (the step floor; mt_timing times the
	 * candidate's own, perfmodel/optim.h) */
	double opt_s_per_param;
	double nccl_bytes;
};

/* A context shared by the levels: model, cluster, job; read-only once set up. */
struct mt_ctx {
	const struct mt_model *model;
	const struct mt_cluster *cluster;
	const struct mt_job *job;
	int gemm_dtype;             /* the recipe's GEMM curve: bf16, fp8 or fp4 */
	double gemm_slow;           /* the recipe's GEMM time over its curve's (4.9) */
	int recipe;                 /* enum mt_recipe (perfmodel/precision.h) */
	double hbm;                 /* bytes per second */
	double peak;                /* dense TFLOP/s of the precision, for MFU */
	struct mt_host_costs hc;    /* the host timeline's per-op CPU costs (5.8) */
	int pvocab_tp;              /* cached padded vocabulary for costs->tp */
	unsigned gen;               /* a number of its own (mt_ctx_init): the level-B
				     * memo tables of pipeline.c hold one context's
				     * answers at a time */
};

void mt_ctx_init(struct mt_ctx *x, const struct mt_model *m, const struct mt_cluster *c,
		 const struct mt_job *j);

/* The shape of one layer: the knobs level A depends on, and nothing else. */
struct mt_shape {
	int tp, cp, mbs, ep, etp, sp;
	int cp_comm;                /* enum mt_cp_comm */
	int cp_a2a;                 /* a2a+p2p's inner group; 0: the NVLink domain's */
	int tp_overlap, fused_ce;
	int dispatcher;             /* enum mt_dispatcher */
	int rank_budget;            /* flex (HybridEP) with a rank budget */
};

/* The shape of a configuration (its knobs of the same names). */
void mt_shape_of(const struct mt_config *cfg, struct mt_shape *sh);

/* Level A.  Fills *out (arithmetic and profile look-ups, no allocation);
 * out->valid is 0 when the shape cannot run. */
void mt_costs_compute(const struct mt_ctx *x, const struct mt_shape *sh, struct mt_costs *out);

/* Attention TFLOP/s of the profile for the job's kernel, with the fallbacks
 * and the causal correction of docs/MODEL.md 4.2. */
double mt_attn_rate(const struct mt_ctx *x, int impl, int hd, int seq, int bwd);

/* Level B.  Returns 0 and fills *out, or -1 when the layers cannot be split
 * over pp x vpp (no even, accounted or first/last split exists). */
int mt_plan_compute(const struct mt_ctx *x, const struct mt_costs *a, int pp, int vpp,
		    int dp, int num_mb, const struct mt_config *cfg, struct mt_plan *out);

/* Level C: memory of the most loaded stage, and the step time.  mt_memory
 * evaluates the first and last stages, the MTP stage and, of the middle
 * stages holding the same layers, the first (the one with the most
 * micro-batches in flight): out is the heaviest of every stage, the one
 * mt_memory_stages gives the largest total. */
void mt_memory(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
	       const struct mt_config *cfg, struct mt_mem *out);
/* The memory of every pipeline stage 0 .. b->pp - 1 into out[0 .. b->pp - 1]
 * (the caller's, b->pp entries), each as mt_memory computes its peak stage,
 * host memory included.  Returns b->pp. */
int mt_memory_stages(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
		     const struct mt_config *cfg, struct mt_mem *out);
void mt_timing(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
	       const struct mt_config *cfg, struct mt_time *time, struct mt_tput *tput);

/* Why full-iteration CUDA graphs (cfg.full_graph, docs/MODEL.md 5.10) cannot
 * run for cfg over the layer shape a: a MoE layer that waits for the host
 * (the dispatcher's counts: a synchronisation cannot be captured),
 * fine-grained activation offload (Megatron-LM then needs an in-flight
 * limit megatune does not set), dropout in a recomputed graphed module, or
 * CPU offloading where the target release refuses every graph with it
 * (MT_ROFF_GRAPH_OFFLOAD).  NULL when they can. */
const char *mt_full_graph_reason(const struct mt_ctx *x, const struct mt_costs *a,
				 const struct mt_config *cfg);

/* 1 when the host's exposed time in t, beyond the step's fixed overhead, is
 * worth a full-iteration graph (over MT_FULL_GRAPH_GAIN of the step). */
int mt_full_graph_helps(const struct mt_time *t);

/* A floor of mt_timing()'s step over every level-C setting of a and b: any
 * recomputation, offload, optimizer sharding, FSDP mode and CUDA graphs, and
 * the 1F1B EP overlap when ep_overlap is set.  Every term mt_timing() adds
 * is at least zero, so the floor keeps the stages' forward and backward, the
 * bubble they make, the non-blocking pipeline sends, the optimizer at the
 * widest sharding and the fixed overhead (docs/MODEL.md 7).  The search
 * skips a level-C block whose floor cannot enter its ranking. */
double mt_timing_floor(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
		       int ep_overlap);

/* A floor of the step of every plan over the layer shape a, for mb_per_pp
 * micro-batches per pipeline stage (num_mb / pp, the same for every PP of a
 * shape): the forward and backward of a micro-batch through the whole model
 * (every layer, the MTP layers, the embedding and the output layer) with the
 * EP overlap's whole saving when ep_overlap is set, over pp, since the
 * stages mt_timing() evaluates hold the heaviest (mt_plan_compute), plus the
 * fixed overhead.  The search skips a layer shape with it. */
double mt_shape_floor(const struct mt_ctx *x, const struct mt_costs *a, double mb_per_pp,
		      int ep_overlap);

/* 1 when L layers split over pp x vpp model chunks (docs/MODEL.md 4.6): an
 * even, accounted or first/last split, or a pipeline layout (each chunk
 * holding at least one of the embedding, a layer or the loss). */
int mt_split_exists(int L, int pp, int vpp);

/* Parameters (elements) pipeline stage `stage` of plan p holds on one GPU:
 * returns the dense ones (its layers', the embedding on the first stage,
 * the output layer on the last, the MTP modules on theirs); *exp the routed
 * experts', *fp8 those of FP8 linear layers. */
double mt_stage_params(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *p,
		       int stage, double *exp, double *fp8);

/* Layers of model chunk j (0-based over pp*vpp chunks) under a split. */
int mt_chunk_layers(int L, int pp, int vpp, int split, int first, int last, int chunk);

/* The modules a configuration recomputes: its selective set (core_attn when
 * none is named), 0 without selective recomputation. */
static inline unsigned mt_rc_mods(const struct mt_config *c)
{
	if (c->recompute != MT_RC_SELECTIVE)
		return 0;
	return c->recompute_modules > 0 ? (unsigned)c->recompute_modules : MT_RCM_DEFAULT;
}

/* Activation bytes of one layer of kind k per micro-batch kept without full
 * recomputation: all of them less what the recomputed modules free (4.4). */
static inline double mt_act_kept(const struct mt_costs *a, int k, unsigned mods)
{
	double v = a->act[k][MT_RC_NONE];
	int i;

	if (mods & (1u << MT_RCM_MOE)) /* the MoE block holds the experts' and shared ones' */
		mods &= ~((1u << MT_RCM_MOE_ACT) | (1u << MT_RCM_SHARED_EXPERTS));
	for (i = 0; mods; i++, mods >>= 1)
		if (mods & 1)
			v -= a->rc_act[k][i];
	return v;
}

/* The forward work selective recomputation re-runs per layer of kind k and
 * micro-batch (5.12): seconds, or with flops executed FLOPs. */
static inline double mt_rc_time(const struct mt_costs *a, int k, unsigned mods, int flops)
{
	double v = 0;
	int i;

	if (mods & (1u << MT_RCM_MOE))
		mods &= ~((1u << MT_RCM_MOE_ACT) | (1u << MT_RCM_SHARED_EXPERTS));
	for (i = 0; mods; i++, mods >>= 1)
		if (mods & 1)
			v += flops ? a->rc_mod_flops[k][i] : a->rc_mod[k][i];
	return v;
}

#endif
