/* SPDX-License-Identifier: MIT */
/* config: the job a user asks about, the pins that narrow the search, one
 * candidate configuration, and the evaluation of a candidate; which
 * configurations can run (the validity checks) and the words for why one
 * cannot (the prune vocabulary).
 *
 * All of these are plain records without heap pointers, so the search can keep
 * them on the stack and copy the best ones into a fixed-size table: evaluating
 * a candidate never allocates.
 */
#ifndef MT_CONFIG_H
#define MT_CONFIG_H

#include <stdint.h>

#include "../lib/err.h"
#include "dispatch.h"
#include "host.h"
#include "schedule.h"

struct mt_model;
struct mt_cluster;
struct mt_layout;

enum mt_precision { MT_PREC_BF16, MT_PREC_FP8, MT_PREC_NVFP4 };
/* Fully sharded data parallelism (docs/MODEL.md 5.11): none, Megatron-FSDP
 * (--use-megatron-fsdp, optim_grads_params) or PyTorch FSDP2
 * (--use-torch-fsdp2).  Non-zero means sharded. */
enum mt_fsdp_impl { MT_FSDP_OFF, MT_FSDP_MEGATRON, MT_FSDP_TORCH };
enum mt_fp8_recipe { MT_FP8_DELAYED, MT_FP8_TENSORWISE, MT_FP8_BLOCKWISE, MT_FP8_MXFP8 };
enum mt_recompute { MT_RC_NONE, MT_RC_SELECTIVE, MT_RC_FULL, MT_RC_N };
/* How full recomputation spends --recompute-num-layers N (Megatron-Core
 * TransformerBlock._checkpointed_forward, docs/MODEL.md 4.4): block
 * checkpoints the first N layers of each model chunk, one by one, and keeps
 * the others whole; uniform checkpoints every layer, in groups of N whose
 * input alone is kept. */
enum mt_rc_method { MT_RC_BLOCK, MT_RC_UNIFORM, MT_RC_METHOD_N };
enum mt_cp_comm { MT_CP_P2P, MT_CP_ALL_GATHER, MT_CP_A2A, MT_CP_A2A_P2P, MT_CP_N };
/* The dtype of a state of the precision-aware optimizer (Megatron-LM
 * --exp-avg-dtype, --exp-avg-sq-dtype, --main-params-dtype; perfmodel/optim.h):
 * fp8 is Transformer Engine's FusedAdam torch.uint8 (E4M3). */
enum mt_opt_dtype { MT_OD_FP32, MT_OD_FP16, MT_OD_BF16, MT_OD_FP8, MT_OD_N };
/* The precision-aware optimizer's states where not pinned (docs/MODEL.md 4.8):
 * BF16 moments, FP32 master weights */
#define MT_OD_MOMENT_DEFAULT MT_OD_BF16
#define MT_OD_MASTER_DEFAULT MT_OD_FP32
enum mt_split {
	MT_SPLIT_EVEN,       /* layers divide evenly over pp x vpp chunks */
	MT_SPLIT_ACCOUNT,    /* account_for_embedding/loss_in_pipeline_split */
	MT_SPLIT_ACCOUNT_LOSS, /* account_for_loss_in_pipeline_split only */
	MT_SPLIT_FIRST_LAST, /* decoder_first/last_pipeline_num_layers */
	MT_SPLIT_LAYOUT,     /* pipeline_model_parallel_layout (perfmodel/layout.h) */
};

#define MT_UNSET (-1)
/* Knob values a target release lacks (struct mt_job release_off) */
enum {
	MT_ROFF_FLEX = 1u << 0,          /* the flex dispatcher (DeepEP / HybridEP) */
	MT_ROFF_FSDP_MEGATRON = 1u << 1, /* Megatron-FSDP */
	MT_ROFF_FSDP_TORCH = 1u << 2,    /* PyTorch FSDP2 */
	MT_ROFF_CP_COMM = 1u << 3,       /* CP communication other than p2p */
	MT_ROFF_CP_A2A_P2P = 1u << 4,    /* hierarchical a2a+p2p */
	MT_ROFF_RC_MODULES = 1u << 5,    /* recompute modules other than core_attn */
	MT_ROFF_GRAPH_OFFLOAD = 1u << 6, /* full-iteration graphs with CPU offloading (before
					  * core_v0.18.0 every graph refuses it) */
	MT_ROFF_SPLIT_ACCOUNT = 1u << 7,    /* account_for_embedding/loss_in_pipeline_split */
	MT_ROFF_SPLIT_FIRST_LAST = 1u << 8, /* decoder_first/last_pipeline_num_layers */
	MT_ROFF_SPLIT_LAYOUT = 1u << 9,     /* pipeline_model_parallel_layout */
	MT_ROFF_SPLIT_UNEVEN_VPP = 1u << 10, /* an uneven split with VPP > 1
					      * (num_virtual_stages_per_pipeline_rank) */
	MT_ROFF_PREC_OPT = 1u << 11,     /* the precision-aware optimizer with its searched
					  * dtypes (BF16 moments: core_v0.13.0) */
};
/* Spare slots for the settings megatune does not time (job/knobs.def's
 * GENERIC rows): a pin and the candidate's value, MT_UNSET when not set. */
#define MT_KNOB_EXTRA 4
/* --recompute-layers all: every layer of each model chunk */
#define MT_ALL_LAYERS (1 << 20)

/* Headroom before speed (docs/MODEL.md 7.1): a candidate using more than
 * MT_ROOMY_USE of the usable memory is on the limit, and one whose activation
 * offload pins more than MT_ROOMY_HOST_USE of the node's usable host memory
 * rests on it; the ranking puts first the fastest candidate that is neither
 * when its step is within the fastest's band (the prediction cannot tell the
 * two apart), or within mt_job.roomy_tol where that is wider (default
 * MT_ROOMY_TOL; 0: off). */
#define MT_ROOMY_USE 0.95
#define MT_ROOMY_HOST_USE 0.5
#define MT_ROOMY_TOL 0.03

/* The HybridEP rank budget's factor, tokens a rank may receive over the mean
 * (docs/MODEL.md 5.8): NVIDIA's DeepSeek-V3 recipes set 1.5 (Megatron-Bridge
 * 067f987df0 src/megatron/bridge/perf_recipes/deepseek/common.py). */
#define MT_RANK_BUDGET 1.5

/* Knobs a user may fix; MT_UNSET leaves a knob to the search. */
struct mt_pins {
	int tp, pp, vpp, cp, ep, etp, mbs;
	int recompute, recompute_layers, cp_comm, dist_opt, offload_layers, sp;
	int recompute_modules;    /* --recompute-modules: bits of enum mt_rc_module
				   * (perfmodel/recompute.h); implies selective */
	int recompute_method;     /* --recompute-method: enum mt_rc_method (full only) */
	/* settings that are on by default rather than searched */
	int tp_overlap, overlap_grad, overlap_param, fused_ce, grad_fp32;
	int bucket;               /* DDP bucket size in parameters */
	int ep_overlap;           /* --overlap-moe-expert-parallel-comm (searched) */
	int cuda_graph;           /* per-layer CUDA graphs (--cuda-graphs on|off) */
	int rank_budget;          /* HybridEP rank budget (--moe-rank-budget on|off) */
	int full_graph;           /* full-iteration CUDA graphs (--full-iteration-graphs on|off) */
	int p2p_overlap;          /* --overlap-p2p on|off: the interleaved schedule's
				   * stage-to-stage sends under compute (default on) */
	/* --pp-layout: a pipeline layout (perfmodel/layout.h), borrowed from the
	 * caller for the life of the job; NULL leaves the split to the search */
	const struct mt_layout *layout;
	int fsdp;                 /* --fsdp off|megatron|torch: enum mt_fsdp_impl */
	int prec_opt;             /* --precision-aware-optimizer on|off */
	int exp_avg, exp_avg_sq, main_params; /* its states: enum mt_opt_dtype */
	int extra[MT_KNOB_EXTRA]; /* generic settings (job/knobs.def) */
};


struct mt_job {
	int gpus;
	int seq;
	int64_t gbs;
	int precision;            /* enum mt_precision */
	int fp8_recipe;           /* enum mt_fp8_recipe: delayed or current (tensorwise) scaling */
	int attn_impl;            /* enum mt_attn_impl (flash unless pinned) */
	int grad_accum_fusion;    /* 1 (default): each micro-batch's weight gradients are
				   * accumulated inside the weight-gradient GEMM; 0: added to
				   * the main gradients by a kernel of their own
				   * (--no-gradient-accumulation-fusion; always with PyTorch
				   * FSDP2; docs/MODEL.md 4.3) */
	int transformer_impl;     /* enum mt_transformer_impl (perfmodel/eager.h): Transformer
				   * Engine (default), or Megatron-LM's own layers timed as
				   * PyTorch eager kernels (--transformer-impl local,
				   * docs/MODEL.md 4.11) */
	unsigned fusions_off;     /* bits of enum mt_fusion (perfmodel/eager.h): the fusions the
				   * job turns off (--no-*-fusion), timed with the local layers */
	int softmax_fp32;         /* --attention-softmax-in-fp32: the eager softmax in FP32 */
	int ce_native;            /* 1: a fused loss (--cross-entropy-loss-fusion) is Megatron-LM's
				   * torch.compile'd one, as a job of Megatron-LM's flags runs
				   * it; 0 (default): Transformer Engine's, as NVIDIA's recipes
				   * set it (--cross-entropy-fusion-impl te; docs/MODEL.md 4.8) */
	int moe_grouped_gemm;     /* 1 (default): the experts run Transformer Engine's grouped
				   * GEMM (--moe-grouped-gemm), with its per-stream workspaces */
	int wgrad_defer;          /* --defer-embedding-wgrad-compute: the output layer's weight
				   * gradients of up to wgrad_defer_limit micro-batches (0: all)
				   * computed after the last one, their inputs kept until then */
	int wgrad_defer_limit;
	/* the job's own pipeline split (enum mt_split: first/last stage layers,
	 * embedding or loss accounted), kept where the candidate's PP and VPP
	 * can run it; MT_UNSET leaves the split to the plan (docs/MODEL.md 4.6) */
	int split, split_first, split_last;
	int dist_opt_instances;   /* --num-distributed-optimizer-instances (0, 1: one) */
	int moe_dispatcher;       /* enum mt_dispatcher, or MT_DISPATCH_AUTO: searched */
	double mem_headroom;      /* fraction of GPU memory kept free, default 0.05 */
	double roomy_tol;         /* step time given up for headroom: the ranking puts first the
				   * fastest candidate using at most MT_ROOMY_USE of the usable
				   * memory when it is within this share of the fastest, which
				   * uses more (default MT_ROOMY_TOL; 0: off; docs/MODEL.md 7.1) */
	int top_k;
	int no_fold;              /* rank every candidate, not one per parallel layout
				   * with its variants folded under it (tuner/search.h) */
	int exhaustive;           /* evaluate every candidate: no level-C block is skipped
				   * for a step floor above the ranking (docs/MODEL.md 7) */
	int moe_balance;          /* enum mt_moe_balance: aux (default), forced, drop */
	double moe_capacity;      /* MT_BAL_DROP: the expert capacity factor */
	double moe_rank_budget;   /* the rank budget's factor where a candidate has one
				   * (MT_RANK_BUDGET unless a job read back gives its own) */
	int megatron_version;     /* release of the flags (job/flagtable.h): 0 the newest */
	int bridge_version;       /* release of the Bridge overrides: 0 the newest */
	unsigned release_off;     /* MT_ROFF_* bits: values the releases cannot run, which
				   * the search skips (job/release.h) */
	struct mt_pins pins;
	/* low precision and host memory (perfmodel/precision.h, perfmodel/hostmem.h) */
	int param_gather_q;       /* weights kept and all-gathered quantised (--fp8-param-gather);
				   * MT_UNSET: on with the distributed optimizer */
	int mxfp8_ag_bf16;        /* MXFP8 weights gathered in BF16 through the gradient buffer
				   * (--reuse-grad-buf-for-mxfp8-param-ag); MT_UNSET: on, as
				   * Bridge's MXFP8 recipe sets it */
	double opt_offload;       /* share of optimizer states on the host (0: none) */
	unsigned offload_modules; /* fine-grained activation offload: bits of enum
				   * mt_offload_module (perfmodel/hostmem.h), 0 none */
	unsigned graph_scope;     /* what per-layer CUDA graphs capture (--cuda-graph-scope):
				   * bits of enum mt_graph_scope (perfmodel/host.h); 0: attention
				   * and the MLP, or the router and preprocessing of dropless
				   * MoE, or the whole MoE block with padded token drop */
};

struct mt_config {
	int tp, pp, vpp, cp, ep, etp, dp, edp;
	int mbs, num_mb;
	int sp;                   /* sequence parallelism */
	int recompute;            /* enum mt_recompute */
	int recompute_layers;     /* full: layers per model chunk recomputed (block), or
				   * the layers of each checkpointed group (uniform) */
	int recompute_method;     /* full: enum mt_rc_method (MT_RC_BLOCK unless pinned) */
	int recompute_modules;    /* selective: bits of enum mt_rc_module (perfmodel/recompute.h),
				   * MT_RCM_DEFAULT (core_attn) unless chosen; 0 otherwise */
	int cp_comm;              /* enum mt_cp_comm (meaningful when cp > 1) */
	int cp_a2a;               /* a2a+p2p: size of the inner a2a group */
	int dist_opt;             /* distributed optimizer */
	int offload_layers;       /* layers per model chunk with activations on the host */
	int tp_overlap, overlap_grad, overlap_param, fused_ce, grad_fp32;
	int64_t bucket_params;    /* DDP bucket size in parameters */
	int split;                /* enum mt_split */
	int first_layers, last_layers; /* MT_SPLIT_FIRST_LAST: layers on the end stages */
	int dispatcher;           /* enum mt_dispatcher (MoE) */
	int ep_overlap;           /* 1F1B EP all-to-all overlap (--overlap-moe-expert-parallel-comm) */
	int shared_overlap;       /* --moe-shared-expert-overlap (follows: shared experts, EP > 1,
				   * alltoall or flex, no 1F1B overlap) */
	int flex_backend;         /* enum mt_flex_backend of the cluster (flex) */
	int rank_budget;          /* flex on HybridEP with a static per-rank token budget
				   * (--moe-expert-rank-capacity-factor, job.moe_rank_budget):
				   * no host wait for the received counts (docs/MODEL.md 5.8) */
	int cuda_graph;           /* Transformer Engine per-layer CUDA graphs (docs/MODEL.md 5.10) */
	int full_graph;           /* one CUDA graph of the whole forward and backward of a step
				   * (--cuda-graph-impl full_iteration): no per-op host cost, no
				   * per-layer graphs; only where no layer waits for the host */
	int p2p_blocking;         /* with VPP > 1: each stage-to-stage send blocks its model
				   * chunk (--no-overlap-p2p-communication, 5.5); 0: the
				   * sends overlap compute, Megatron's default */
	int fsdp;                 /* enum mt_fsdp_impl: Megatron-FSDP (optim_grads_params) or
				   * PyTorch FSDP2 (perfmodel/fsdp.h) */
	int prec_opt;             /* the precision-aware optimizer (--use-precision-aware-
				   * optimizer; perfmodel/optim.h) */
	int exp_avg, exp_avg_sq;  /* its Adam moments: enum mt_opt_dtype (MT_OD_FP32 without it) */
	int main_params;          /* its master weights: MT_OD_FP32 or MT_OD_FP16 */
	int extra[MT_KNOB_EXTRA]; /* generic settings as pinned (job/knobs.def) */
};

/* Per-GPU memory of a pipeline stage (the most loaded one unless said), bytes. */
struct mt_mem {
	double weights, grads, optimizer;
	double activations;       /* in-flight micro-batches of the stage */
	double logits;            /* output layer and cross-entropy (last stage) */
	double moe_dispatch;      /* token dispatch buffers (MoE) */
	double transient;         /* the largest temporary buffer */
	double nccl;              /* NCCL communicator buffers */
	double cuda_context;      /* CUDA context and kernel images */
	double workspace;         /* cuBLAS / cuDNN / Transformer Engine workspaces */
	double cuda_graphs;       /* captured graphs' private pools */
	double fragmentation;     /* caching-allocator slack */
	double total;
	/* the total as PyTorch's caching allocator reports it (docs/MODEL.md
	 * 4.8): what stays allocated between steps, the peak inside a step,
	 * what it reserves, and what lies outside it; reserved + outside =
	 * total */
	double allocated, max_allocated, reserved, outside;
	double host_per_gpu;      /* host memory of one rank: offloaded activations and optimizer
				   * states, pinned buffers, process (perfmodel/hostmem.h) */
	double host_per_node;     /* the node's ranks together */
	int stage;                /* the stage it was computed for */
};

/* Time of one training step, seconds.  Exposed parts add up to step. */
struct mt_time {
	double step;
	double compute;           /* GEMM + attention + element-wise, all micro-batches */
	double gemm, attention, elementwise;
	double recompute;         /* extra forward work of recomputation (in compute) */
	double gpu_overhead;      /* kernel gaps and SMs taken by overlapped comm (in compute) */
	double tp_exposed, tp_hidden;
	double cp_exposed, cp_hidden;
	double ep_exposed, ep_hidden;
	double pp_exposed, pp_hidden;
	double dp_exposed, dp_hidden;
	double offload_exposed, offload_hidden;
	double bubble;
	double optimizer;
	double host_exposed;      /* launch overhead not hidden behind GPU work */
	double host_cpu, host_gpu; /* the critical stage's host issue time and GPU time over
				    * all micro-batches (host_exposed: what the first exceeds) */
	double host_removed;      /* host time the critical stage would expose without its
				   * CUDA graphs and HybridEP rank budget, less what it
				   * exposes with them: their saving (docs/MODEL.md 8.1) */
	double imbalance;         /* slowest stage above the mean, times micro-batches */
	struct mt_host_tl host_tl; /* the critical stage's host timeline, one micro-batch (5.8) */
};

struct mt_tput {
	double tokens_per_s_per_gpu;
	double model_tflops_per_gpu;
	double hw_tflops_per_gpu;
	double mfu;
	double model_flops_step;  /* model FLOPs of one step (Megatron convention) */
	double hw_flops_step;     /* executed FLOPs, recomputation included */
};

/* the uncertain terms a band counts, as bits of mt_band.terms */
enum {
	MT_BT_GEMM_DERIVED = 1 << 0, /* GEMMs on a curve scaled from another dtype */
	MT_BT_COMM_DERIVED = 1 << 1, /* exposed communication on derived curves */
	MT_BT_DISPATCH = 1 << 2,     /* token dispatch exposed */
	MT_BT_OVERLAP = 1 << 3,      /* communication hidden by the overlap model */
	MT_BT_HOST = 1 << 4,         /* the host's issue time near or above the GPU's */
	MT_BT_HOST_REMOVED = 1 << 5, /* host time removed by graphs or a rank budget */
};
#define MT_BT_N 6

/* The range of a predicted step time (perfmodel/band.h, docs/MODEL.md 8.1). */
struct mt_band {
	double lo, hi;            /* step time range, s */
	double spec_lo, spec_hi;  /* the candidate's own terms, s (no model-wide error) */
	double base;              /* the model-wide relative error used */
	unsigned terms;           /* MT_BT_* that count for more than 1% of the step */
};

struct mt_eval {
	struct mt_config cfg;
	struct mt_mem mem;
	struct mt_time time;
	struct mt_tput tput;
	struct mt_band band;
	int feasible;             /* fits in memory */
};

/* One item of a list of settings (job/flags.h, and the set rules' effects):
 * a flag ("--sequence-parallel") or key and value. */
struct mt_kv {
	char key[96];
	char val[256]; /* "" for a bare flag */
};

void mt_pins_init(struct mt_pins *p);
void mt_job_init(struct mt_job *j);

const char *mt_recompute_name(int rc);
int mt_recompute_parse(const char *s);
/* "block" or "uniform" for an enum mt_rc_method, and back (-1 when unknown). */
const char *mt_rc_method_name(int method);
int mt_rc_method_parse(const char *s);
/* "off", "megatron" or "torch" for an enum mt_fsdp_impl, and back (-1 when
 * unknown). */
const char *mt_fsdp_impl_name(int impl);
int mt_fsdp_impl_parse(const char *s);
const char *mt_cp_comm_name(int cc);
int mt_cp_comm_parse(const char *s);
const char *mt_precision_name(int p);
const char *mt_fp8_recipe_name(int r);
int mt_fp8_recipe_parse(const char *s);
int mt_precision_parse(const char *s);

/* Why a partial configuration was rejected. */
enum mt_prune {
	MT_PRUNE_TP_HEADS,     /* TP does not divide the attention heads */
	MT_PRUNE_TP_GROUPS,    /* TP does not divide the key/value heads */
	MT_PRUNE_TP_FFN,       /* TP does not divide an MLP or expert width */
	MT_PRUNE_CP_SEQ,       /* the sequence does not split into 2 x CP chunks */
	MT_PRUNE_CP_HEADS,     /* a2a CP needs heads divisible by the a2a group */
	MT_PRUNE_CP_ATTN,      /* CP needs fused (flash) attention */
	MT_PRUNE_EP_EXPERTS,   /* EP does not divide the experts */
	MT_PRUNE_EP_GPUS,      /* EP x ETP does not divide the GPUs of a stage */
	MT_PRUNE_ETP_FFN,      /* ETP does not divide the expert width */
	MT_PRUNE_ETP_BIAS,     /* MoE with linear biases needs ETP 1 */
	MT_PRUNE_MOE_SP,       /* MoE with TP > 1 needs sequence parallelism */
	MT_PRUNE_SP_SEQ,       /* SP needs the sequence shard divisible by TP */
	MT_PRUNE_OFFLOAD,      /* activation offload needs PP 1, no recompute, fewer than L layers */
	MT_PRUNE_PP_LAYERS,    /* the layers cannot be split over PP x VPP */
	MT_PRUNE_VPP,          /* interleaving needs PP > 1 and micro-batches divisible by PP */
	MT_PRUNE_BATCH,        /* DP x micro-batch does not divide the global batch */
	MT_PRUNE_MEMORY,       /* does not fit in GPU memory */
	MT_PRUNE_DOMINATED,    /* more recompute or offload than needed to fit */
	MT_PRUNE_HOST_MEMORY,  /* offloaded state does not fit in the node's host memory */
	MT_PRUNE_FSDP,         /* Megatron-FSDP: no DP x CP group to shard over */
	MT_PRUNE_TORCH_FSDP,   /* PyTorch FSDP2: PP, EP or tied embeddings */
	MT_PRUNE_P2P_PP,       /* interleaving without P2P overlap needs PP > 2 */
	MT_PRUNE_RELEASE,      /* the target Megatron-LM / Bridge release lacks it (job/release.h) */
	MT_PRUNE_BOUND,        /* a level-C block whose step floor cannot enter the ranking */
	MT_PRUNE_N
};

/* The short id ("tp-heads") and the sentence of a reason; "?" out of range. */
const char *mt_prune_id(int reason);
const char *mt_prune_text(int reason);
/* The Megatron-LM check a reason keeps to, "Megatron-LM d98e8a6 FILE:LINE ...";
 * NULL where it is megatune's own (memory, dominated). */
const char *mt_prune_cite(int reason);
/* validate_args' check that the model-parallel sizes divide the GPUs */
#define MT_WORLD_CITE "Megatron-LM d98e8a6 megatron/training/arguments.py:432 asserts: " \
	"world size is not divisible by total_model_size"

/* Megatron-FSDP's checks: FSDP refuses CUDA_DEVICE_MAX_CONNECTIONS=1, which
 * TP and CP need below compute capability 10 (megatune's rule
 * cuda-max-connections sets it; Megatron warns against the mix) */
#define MT_FSDP_CITE "Megatron-LM d98e8a6 megatron/training/arguments.py:1128-1169: Megatron-FSDP " \
	"shards over the data-parallel (and CP) ranks and requires CUDA_DEVICE_MAX_CONNECTIONS " \
	"unset or above 1 (1166); with TP or CP below compute capability 10 it only warns " \
	"(1456-1465)"
/* PyTorch FSDP2's checks in validate_args */
#define MT_TORCH_FSDP_CITE "Megatron-LM d98e8a6 megatron/training/arguments.py:1031-1049 " \
	"asserts: --use-torch-fsdp2 is not supported with pipeline parallelism, expert " \
	"parallelism, MCore's distributed optimizer or gradient accumulation fusion, and " \
	"requires --untie-embeddings-and-output-weights"

/* Validity of the knobs of a layer's shape: the enum mt_prune reason that
 * rules the value out, or -1 when it can run. */
int mt_tp_reason(const struct mt_model *m, int tp);
int mt_cp_reason(const struct mt_model *m, const struct mt_job *j, int tp, int cp, int cp_comm);
int mt_ep_reason(const struct mt_model *m, int ep, int etp);
/* a2a+p2p: 1 when an inner a2a group of `inner` GPUs fits CP and the heads. */
int mt_a2a_p2p_ok(const struct mt_model *m, int tp, int cp, int inner);

/* Why a HybridEP rank budget cannot run with ETP etp: Megatron-Core builds the
 * budget's experts with the Transformer Engine op fuser, whose fused path
 * (TEGroupedMLP._is_fused_impl_supported, experts.py @ core_v0.18.0 lines
 * 326-360) takes no expert tensor parallelism, no offloaded expert_fc1 or
 * moe_act, and SwiGLU experts.  NULL when it can. */
const char *mt_rank_budget_reason(const struct mt_model *m, const struct mt_job *j, int etp);

/* The 1F1B EP overlap (--overlap-moe-expert-parallel-comm) with these sizes:
 * NULL when Megatron-LM accepts it, else the reason with its check
 * ("Megatron-LM d98e8a6 FILE:LINE ..."). */
const char *mt_ep_overlap_reason(const struct mt_model *m, int ep, int dispatcher, int pp, int vpp,
				 int recompute);

/* The settings that follow from the dispatcher and the EP overlap: the flex
 * backend of the cluster and the shared-expert overlap. */
void mt_config_moe_settings(const struct mt_model *m, const struct mt_cluster *c,
			    struct mt_config *cfg);

/* Check a request before searching: GPUs, batch, sequence, precision and
 * pins against the model and cluster.  Returns MT_OK, or MT_EUSAGE /
 * MT_EINVAL with a message naming the flag and the cause. */
int mt_job_check(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *job,
		 struct mt_error *err);

/* The TP overlap unless pinned: on, except with NVFP4 (docs/MODEL.md 5.1). */
int mt_tp_overlap_default(const struct mt_job *job);

/* The VPP the pins fix: --vpp, else the stages per rank of a pinned
 * --pp-layout over a pinned --pp; MT_UNSET when neither says. */
int mt_pins_vpp(const struct mt_pins *p);

/* Apply the job's settings pins (or defaults) to a configuration. */
void mt_config_settings(const struct mt_job *job, struct mt_config *cfg);

#endif
