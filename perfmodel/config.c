/* SPDX-License-Identifier: MIT */
/* config: defaults and names of the knobs, the validity checks and the
 * prune vocabulary. */
#include "config.h"
#include "host.h"
#include "layout.h"

#include <string.h>

#include "cluster.h"
#include "eager.h"
#include "graphs.h"
#include "model.h"
#include "hostmem.h"
#include "optim.h"
#include "precision.h"
#include "recompute.h"

void mt_pins_init(struct mt_pins *p)
{
	p->tp = p->pp = p->vpp = p->cp = p->ep = p->etp = p->mbs = MT_UNSET;
	p->recompute = p->recompute_layers = p->cp_comm = p->dist_opt = MT_UNSET;
	p->offload_layers = p->sp = MT_UNSET;
	p->recompute_modules = p->recompute_method = MT_UNSET;
	p->tp_overlap = p->overlap_grad = p->overlap_param = p->fused_ce = p->grad_fp32 = MT_UNSET;
	p->bucket = MT_UNSET;
	p->ep_overlap = MT_UNSET;
	p->cuda_graph = MT_UNSET;
	p->rank_budget = MT_UNSET;
	p->full_graph = MT_UNSET;
	p->fsdp = MT_UNSET;
	p->p2p_overlap = MT_UNSET;
	p->prec_opt = p->exp_avg = p->exp_avg_sq = p->main_params = MT_UNSET;
	for (int i = 0; i < MT_KNOB_EXTRA; i++)
		p->extra[i] = MT_UNSET;
}

void mt_job_init(struct mt_job *j)
{
	memset(j, 0, sizeof(*j));
	j->precision = MT_PREC_BF16;
	j->attn_impl = MT_ATTN_FLASH;
	j->grad_accum_fusion = 1;
	j->ce_native = 0;
	j->moe_grouped_gemm = 1;
	j->split = MT_UNSET;
	j->mem_headroom = 0.05;
	j->roomy_tol = MT_ROOMY_TOL;
	j->top_k = 5;
	j->moe_dispatcher = MT_DISPATCH_AUTO;
	j->moe_rank_budget = MT_RANK_BUDGET;
	j->param_gather_q = MT_UNSET;
	j->mxfp8_ag_bf16 = MT_UNSET;
	mt_pins_init(&j->pins);
}

static const char *const rc_names[MT_RC_N] = { "none", "selective", "full" };
static const char *const cp_names[MT_CP_N] = { "p2p", "all_gather", "a2a", "a2a+p2p" };

const char *mt_recompute_name(int rc)
{
	return rc >= 0 && rc < MT_RC_N ? rc_names[rc] : "?";
}

static const char *const rc_method_names[MT_RC_METHOD_N] = { "block", "uniform" };

const char *mt_rc_method_name(int method)
{
	return method >= 0 && method < MT_RC_METHOD_N ? rc_method_names[method] : "?";
}

int mt_rc_method_parse(const char *s)
{
	int i;

	for (i = 0; i < MT_RC_METHOD_N; i++)
		if (!strcmp(s, rc_method_names[i]))
			return i;
	return -1;
}

static const char *const fsdp_names[] = { "off", "megatron", "torch" };

const char *mt_fsdp_impl_name(int impl)
{
	return impl >= MT_FSDP_OFF && impl <= MT_FSDP_TORCH ? fsdp_names[impl] : "?";
}

int mt_fsdp_impl_parse(const char *s)
{
	int i;

	for (i = MT_FSDP_OFF; i <= MT_FSDP_TORCH; i++)
		if (!strcmp(s, fsdp_names[i]))
			return i;
	return -1;
}

int mt_recompute_parse(const char *s)
{
	int i;

	for (i = 0; i < MT_RC_N; i++)
		if (!strcmp(s, rc_names[i]))
			return i;
	return -1;
}

const char *mt_cp_comm_name(int cc)
{
	return cc >= 0 && cc < MT_CP_N ? cp_names[cc] : "?";
}

int mt_cp_comm_parse(const char *s)
{
	int i;

	for (i = 0; i < MT_CP_N; i++)
		if (!strcmp(s, cp_names[i]))
			return i;
	return -1;
}

static const char *const prec_names[] = { "bf16", "fp8", "nvfp4" };
static const char *const recipe_names[] = { "delayed", "tensorwise", "blockwise", "mxfp8" };

const char *mt_precision_name(int p)
{
	return p >= 0 && p <= MT_PREC_NVFP4 ? prec_names[p] : "?";
}

int mt_precision_parse(const char *s)
{
	int i;

	for (i = 0; i <= MT_PREC_NVFP4; i++)
		if (!strcmp(s, prec_names[i]))
			return i;
	return -1;
}

const char *mt_fp8_recipe_name(int r)
{
	return r >= 0 && r <= MT_FP8_MXFP8 ? recipe_names[r] : "?";
}

int mt_fp8_recipe_parse(const char *s)
{
	int i;

	for (i = 0; i <= MT_FP8_MXFP8; i++)
		if (!strcmp(s, recipe_names[i]))
			return i;
	return -1;
}

/* ---------------------------------------------------------------- validity */

static const char *const prune_ids[MT_PRUNE_N] = {
	"tp-heads", "tp-kv-heads", "tp-ffn", "cp-sequence", "cp-heads", "cp-attention",
	"ep-experts", "ep-gpus", "etp-ffn", "etp-bias", "moe-sp", "sp-sequence", "offload", "pp-layers", "vpp",
	"batch", "memory", "dominated",
	"host-memory", "fsdp", "torch-fsdp2", "p2p-pp", "release", "bound",
};

static const char *const prune_texts[MT_PRUNE_N] = {
	"TP does not divide the attention heads",
	"TP does not divide the key/value heads",
	"TP does not divide the MLP width",
	"the sequence does not split into 2 x CP chunks",
	"a2a context parallelism needs heads divisible by its group",
	"context parallelism needs fused (flash) attention",
	"EP does not divide the number of experts",
	"EP x ETP does not divide the GPUs of a pipeline stage",
	"ETP does not divide the expert width",
	"MoE with biases on the linear layers needs ETP 1",
	"MoE with TP > 1 needs sequence parallelism",
	"sequence parallelism needs the sequence shard (seq / CP) divisible by TP",
	"activation offload needs PP 1, no recomputation and fewer offloaded layers than layers",
	"the layers cannot be split over PP x VPP stages",
	"interleaving needs PP > 1 and micro-batches divisible by PP",
	"DP x micro-batch does not divide the global batch",
	"does not fit in GPU memory",
	"more recomputation or offload than needed to fit",
	"offloaded activations or optimizer states do not fit in the host memory of a node",
	"Megatron-FSDP needs a data-parallel group, and no TP or CP below compute capability 10",
	"PyTorch FSDP2 needs PP 1, EP 1 and untied embeddings",
	"interleaving without overlapped P2P communication needs PP > 2",
	"the target Megatron-LM or Megatron-Bridge release lacks its flags",
	"not evaluated: no recompute, offload or optimizer setting can bring its step below "
	"the candidates ranked (a floor of the step time)",
};

#define ETP_BIAS_CITE "Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py:2613 " \
	"asserts: Bias in Moe is only supported when ETP==1"

/* The check of Megatron-LM (NVIDIA/Megatron-LM at d98e8a64dd) that each
 * reason keeps to (docs/MEGATRON_CHECKS.md); NULL for megatune's own. */
static const char *const prune_cites[MT_PRUNE_N] = {
	"Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py:1447 raises: "
	"num_attention_heads must be a multiple of tensor_model_parallel_size",
	"Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py:1465 raises: "
	"num_query_groups must be a multiple or divisor of tensor_model_parallel_size; "
	"megatune needs TP to divide them",
	"Megatron-LM d98e8a6 megatron/core/tensor_parallel/layers.py:1038: "
	"ColumnParallelLinear divides its output width by the TP size",
	"Megatron-LM d98e8a6 megatron/training/arguments.py:1336 asserts: "
	"seq-length should be a multiple of 2 * context-parallel-size",
	"Transformer Engine's all-to-all context parallelism scatters the heads of a TP rank "
	"over the CP group; Megatron-LM d98e8a6 megatron/training/arguments.py:582 asserts the "
	"hierarchical sizes multiply to CP",
	"Megatron-LM d98e8a6 megatron/core/transformer/dot_product_attention.py:57 asserts: "
	"Context parallelism is only supported by TEDotProductAttention",
	"Megatron-LM d98e8a6 megatron/training/arguments.py:1657 asserts: "
	"Number of experts should be a multiple of expert model parallel_size",
	"Megatron-LM d98e8a6 megatron/core/parallel_state.py:882 raises: world_size is not "
	"divisible by expert_tensor_model_pipeline_parallel size",
	"Megatron-LM d98e8a6 megatron/core/tensor_parallel/layers.py:1038: "
	"the expert GEMMs divide their width by the ETP size",
	ETP_BIAS_CITE,
	"Megatron-LM d98e8a6 megatron/core/transformer/moe/moe_layer.py:636 raises in training: "
	"MoE and tensor parallelism without sequence parallelism",
	"Megatron-LM d98e8a6 megatron/core/tensor_parallel/mappings.py:72 asserts: "
	"First dimension of the tensor should be divisible by tensor parallel size",
	"Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py:1887, 1892 and "
	"1897 raise: CPU offloading only for fewer layers than num_layers, without pipeline "
	"parallelism and without activation recomputation",
	"Megatron-LM d98e8a6 megatron/training/arguments.py:997 asserts: Number of layers "
	"should be divisible by the pipeline-model-parallel size; "
	"megatron/core/transformer/transformer_config.py:2304-2409 check the uneven splits",
	"Megatron-LM d98e8a6 megatron/training/arguments.py:1002 asserts: pipeline-model-parallel "
	"size should be greater than 1 with the interleaved schedule; "
	"megatron/core/pipeline_parallel/schedules.py:1160 and 1172 raise unless the micro-batches "
	"come in groups of PP",
	"Megatron-LM d98e8a6 megatron/core/num_microbatches_calculator.py:381 asserts: "
	"global_batch_size divisible by micro_batch_size x data_parallel_size",
	NULL,
	NULL,
	NULL,
	MT_FSDP_CITE,
	MT_TORCH_FSDP_CITE,
	"Megatron-LM d98e8a6 megatron/training/arguments.py:1006 asserts: When interleaved "
	"schedule is used and p2p communication overlap is disabled, pipeline-model-parallel size "
	"should be greater than 2",
	NULL, /* release: megatune's table of releases (job/flagtable.def) */
	NULL, /* bound: the search's own floor (perfmodel/perf.h mt_timing_floor) */
};

const char *mt_prune_cite(int r) { return r >= 0 && r < MT_PRUNE_N ? prune_cites[r] : NULL; }

const char *mt_prune_id(int r) { return r >= 0 && r < MT_PRUNE_N ? prune_ids[r] : "?"; }
const char *mt_prune_text(int r) { return r >= 0 && r < MT_PRUNE_N ? prune_texts[r] : "?"; }

static int pin_or(int pin, int dflt)
{
	return pin != MT_UNSET ? pin : dflt;
}

int mt_tp_overlap_default(const struct mt_job *job)
{
	/* Megatron-Bridge's performance scripts turn the overlap off for every
	 * NVFP4 configuration (rule tp-comm-overlap-nvfp4); Megatron-LM's own
	 * layers have none (Transformer Engine's userbuffers: job/local.h) */
	return job->precision != MT_PREC_NVFP4 && job->transformer_impl != MT_TI_LOCAL;
}


int mt_pins_vpp(const struct mt_pins *p)
{
	if (p->vpp != MT_UNSET)
		return p->vpp;
	if (p->layout && p->pp > 0 && p->layout->n % p->pp == 0)
		return p->layout->n / p->pp;
	return MT_UNSET;
}

void mt_config_settings(const struct mt_job *job, struct mt_config *cfg)
{
	const struct mt_pins *p = &job->pins;

	cfg->tp_overlap = pin_or(p->tp_overlap, mt_tp_overlap_default(job));
	cfg->overlap_grad = pin_or(p->overlap_grad, 1);
	/* Megatron-LM overlaps the parameter gather only with the reduction */
	cfg->overlap_param = pin_or(p->overlap_param, cfg->overlap_grad);
	cfg->fused_ce = pin_or(p->fused_ce, 1);
	cfg->grad_fp32 = pin_or(p->grad_fp32, 1);
	cfg->bucket_params = 0;
	/* Megatron-LM overlaps the interleaved schedule's sends by default */
	cfg->p2p_blocking = p->p2p_overlap == 0;
	/* the settings megatune does not time, as pinned */
	memcpy(cfg->extra, p->extra, sizeof(cfg->extra));
	mt_config_prec_opt(job, cfg, mt_prec_opt_default(job));
}

/* ---------------------------------------------------------------- checks */

int mt_tp_reason(const struct mt_model *m, int tp)
{
	if (m->heads % tp)
		return MT_PRUNE_TP_HEADS;
	if (!m->mla && m->kv_heads % tp)
		return MT_PRUNE_TP_GROUPS;
	if ((m->moe_layers < m->layers && m->ffn % tp) || (m->shared_ffn && m->shared_ffn % tp))
		return MT_PRUNE_TP_FFN;
	return -1;
}

int mt_cp_reason(const struct mt_model *m, const struct mt_job *j, int tp, int cp, int cc)
{
	if (cp == 1)
		return -1;
	if (j->seq % (2 * cp))
		return MT_PRUNE_CP_SEQ;
	if (j->attn_impl != MT_ATTN_FLASH)
		return MT_PRUNE_CP_ATTN;
	if (cc == MT_CP_A2A && ((m->heads / tp) % cp || (!m->mla && (m->kv_heads / tp) % cp)))
		return MT_PRUNE_CP_HEADS;
	return -1;
}

/* a2a+p2p: Ulysses over an inner group (by default the CP ranks inside one
 * NVLink domain), a ring across; the inner size must divide CP (Megatron
 * checks the product of --hierarchical-context-parallel-sizes) and the
 * heads. */
int mt_a2a_p2p_ok(const struct mt_model *m, int tp, int cp, int inner)
{
	return inner > 1 && inner < cp && cp % inner == 0 && (m->heads / tp) % inner == 0 &&
	       (m->mla || (m->kv_heads / tp) % inner == 0);
}

int mt_ep_reason(const struct mt_model *m, int ep, int etp)
{
	if (!m->experts)
		return (ep == 1 && etp == 1) ? -1 : MT_PRUNE_EP_EXPERTS;
	if (m->experts % ep)
		return MT_PRUNE_EP_EXPERTS;
	if (m->moe_ffn % etp)
		return MT_PRUNE_ETP_FFN;
	if (etp > 1 && m->linear_bias)
		return MT_PRUNE_ETP_BIAS;
	return -1;
}

#define EPO_CITE "Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py:"

const char *mt_ep_overlap_reason(const struct mt_model *m, int ep, int dispatcher, int pp, int vpp,
				 int recompute)
{
	if (!m->experts || ep <= 1)
		return "it needs expert parallelism (EP > 1) (" EPO_CITE "3013 asserts: "
		       "overlap_moe_expert_parallel_comm is only supported with expert model parallelism)";
	if (dispatcher == MT_DISPATCH_ALLGATHER)
		return "it needs the alltoall or flex dispatcher (" EPO_CITE "3016 asserts: "
		       "overlap_moe_expert_parallel_comm is supported with alltoall/flex token dispatcher)";
	if (pp > 1 && vpp <= 1)
		return "with PP > 1 it needs a virtual pipeline (--vpp > 1) (" EPO_CITE "3007 asserts: "
		       "virtual_pipeline_model_parallel_size must be specified when "
		       "pipeline_model_parallel_size > 1)";
	if (recompute == MT_RC_FULL)
		return "it cannot run with full recomputation (" EPO_CITE "3021 asserts: "
		       "disable full recomputation when enabling overlap_moe_expert_parallel_comm)";
	if (m->mtp_layers > 1)
		return "it supports at most one MTP layer (" EPO_CITE "3042 asserts: MTP supports at "
		       "most one layer when enabling overlap_moe_expert_parallel_comm)";
	return NULL;
}

#define FUSED_EXPERTS_CITE "Megatron-Core core_v0.18.0 megatron/core/transformer/moe/experts.py:326-360 " \
	"(TEGroupedMLP._is_fused_impl_supported, asserted with the op fuser)"

const char *mt_rank_budget_reason(const struct mt_model *m, const struct mt_job *j, int etp)
{
	if (!m->experts)
		return "the model has no experts";
	if (etp > 1)
		return "the budget's fused experts take no expert tensor parallelism: ETP 1 (" FUSED_EXPERTS_CITE ")";
	if (j->offload_modules & ((1u << MT_OM_EXPERT_FC1) | (1u << MT_OM_MOE_ACT)))
		return "the budget's fused experts take no offloaded expert_fc1 or moe_act (" FUSED_EXPERTS_CITE ")";
	if (!m->gated)
		return "the budget's fused experts need SwiGLU experts (" FUSED_EXPERTS_CITE ")";
	return NULL;
}

/* A pinned rank budget needs MoE and the flex dispatcher on HybridEP
 * (Megatron-LM d98e8a6 transformer_config.py:1868-1883; core_v0.18.0 also
 * asked for the TE op fuser, which job/flags.c prints with it). */
static int rank_budget_check(const struct mt_model *m, const struct mt_cluster *c,
			     const struct mt_job *j, struct mt_error *err)
{
	const char *why;

	if (j->pins.rank_budget != 1)
		return MT_OK;
	if ((why = mt_rank_budget_reason(m, j, j->pins.etp != MT_UNSET ? j->pins.etp : 1)))
		return mt_error_set(err, MT_EINVAL, "--moe-rank-budget on: %s", why);
	if (j->moe_dispatcher != MT_DISPATCH_AUTO && j->moe_dispatcher != MT_DISPATCH_FLEX)
		return mt_error_set(err, MT_EINVAL,
				    "--moe-rank-budget on needs --moe-dispatcher flex (Megatron-LM "
				    "d98e8a6 transformer_config.py:1870 raises: "
				    "moe_expert_rank_capacity_factor requires moe_flex_dispatcher_backend "
				    "to be 'hybridep' or 'ncclep')");
	if (c->dispatch.flex_backend != MT_FLEX_HYBRIDEP)
		return mt_error_set(err, MT_EINVAL,
				    "--moe-rank-budget on needs the flex dispatcher on HybridEP: profile "
				    "%s times flex as %s (--moe-flex-backend hybridep, where it has "
				    "HybridEP points)", c->name,
				    c->dispatch.flex_backend >= 0
					    ? mt_flex_backend_name(c->dispatch.flex_backend) : "nothing");
	return MT_OK;
}

/* --cuda-graph-scope: scopes per-layer graphs can take (5.10) */
static int graph_scope_check(const struct mt_job *j, struct mt_error *err)
{
	if (!j->graph_scope)
		return MT_OK;
	if (j->pins.cuda_graph == 0 || j->pins.full_graph == 1)
		return mt_error_set(err, MT_EINVAL,
				    "--cuda-graph-scope names what per-layer CUDA graphs capture: not "
				    "with %s", j->pins.cuda_graph == 0 ? "--cuda-graphs off"
								       : "--full-iteration-graphs on");
	if ((j->graph_scope & (1u << MT_GS_PRE)) && !(j->graph_scope & (1u << MT_GS_ROUTER)))
		return mt_error_set(err, MT_EINVAL,
				    "--cuda-graph-scope moe_preprocess needs moe_router too (Megatron-LM "
				    "d98e8a6 megatron/core/transformer/transformer_config.py:2821-2824 "
				    "asserts: moe_preprocess cuda graph is only supported with moe_router "
				    "cuda graph)");
	if ((j->graph_scope & (1u << MT_GS_MOE)) && j->moe_balance != MT_BAL_DROP)
		return mt_error_set(err, MT_EINVAL,
				    "--cuda-graph-scope moe: Megatron-LM graphs the whole MoE block only "
				    "with padded token drop, whose sizes are static (d98e8a6 "
				    "megatron/core/transformer/transformer_config.py:2840); use "
				    "moe_router,moe_preprocess, or --moe-balance drop:CF");
	return MT_OK;
}

/* per-layer graphs beside full-iteration ones, and beside the 1F1B EP
 * overlap where their scopes cannot run with it (perfmodel/graphs.h, 5.10) */
static int graphs_ep_overlap_check(const struct mt_model *m, const struct mt_job *j,
				   struct mt_error *err)
{
	const struct mt_pins *p = &j->pins;
	const char *why;

	if (p->cuda_graph == 1 && p->full_graph == 1)
		return mt_error_set(err, MT_EINVAL,
				    "--cuda-graphs on with --full-iteration-graphs on: Megatron-LM runs "
				    "one CUDA graph implementation (--cuda-graph-impl transformer_engine "
				    "or full_iteration); pin one of them off");
	if (p->cuda_graph == 1 && p->ep_overlap == 1 && (why = mt_graph_overlap_reason(m, j)))
		return mt_error_set(err, MT_EINVAL,
				    "--cuda-graphs on with --ep-overlap on: %s; or pin one of them off",
				    why);
	return MT_OK;
}

void mt_config_moe_settings(const struct mt_model *m, const struct mt_cluster *c,
			    struct mt_config *cfg)
{
	cfg->flex_backend = c->dispatch.flex_backend > 0 ? c->dispatch.flex_backend : MT_FLEX_DEEPEP;
	/* not with the shared experts recomputed (transformer_config.py:1991) */
	cfg->shared_overlap = m->experts && m->shared_ffn > 0 && cfg->ep > 1 && !cfg->ep_overlap &&
			      cfg->dispatcher != MT_DISPATCH_ALLGATHER &&
			      !(cfg->recompute == MT_RC_SELECTIVE &&
				(cfg->recompute_modules & (1u << MT_RCM_SHARED_EXPERTS)));
}

#define CITE(r) mt_prune_cite(r)

/* --recompute-modules: selective recomputation only, and Megatron-LM's
 * checks of the modules (perfmodel/recompute.h) */
static int rc_modules_check(const struct mt_model *m, const struct mt_job *j,
			    struct mt_error *err)
{
	const struct mt_pins *p = &j->pins;
	char list[128];
	const char *why;

	if (p->recompute_modules == MT_UNSET)
		return MT_OK;
	mt_rc_modules_format((unsigned)p->recompute_modules, ',', list, sizeof(list));
	if (p->recompute != MT_UNSET && p->recompute != MT_RC_SELECTIVE)
		return mt_error_set(err, MT_EINVAL,
				    "--recompute-modules %s applies to --recompute selective only, "
				    "got --recompute %s (Megatron-LM d98e8a6 "
				    "megatron/core/transformer/transformer_config.py:1943: the modules "
				    "are read with recompute_granularity selective)", list,
				    mt_recompute_name(p->recompute));
	why = mt_rc_modules_reason(m, j, (unsigned)p->recompute_modules,
				   p->ep != MT_UNSET ? p->ep : 0, p->ep_overlap == 1, 0);
	if (why)
		return mt_error_set(err, MT_EINVAL, "--recompute-modules %s: %s", list, why);
	return MT_OK;
}
#define SP_TP_CITE "Megatron-LM d98e8a6 megatron/core/model_parallel_config.py:504 raises: " \
	"Cannot use sequence parallelism without tensor parallelism"

#define MT_GBS_MAX (1 << 24)
#define MT_GPUS_MAX (1 << 20)
#define MT_SEQ_MAX (1 << 24)

/* The precision recipe, the quantised parameter gather, host offload and
 * CUDA graphs (also with the EP overlap) against the GPU and Megatron-LM's checks. */
static int precision_offload_check(const struct mt_model *m, const struct mt_cluster *c,
				   const struct mt_job *j, struct mt_error *err)
{
	const struct mt_pins *p = &j->pins;
	int rc;

	if ((rc = mt_recipe_check(j, c, err)))
		return rc;
	if (j->param_gather_q == 1 && !mt_prec_quantised(j))
		return mt_error_set(err, MT_EINVAL,
				    "--fp8-param-gather on needs --precision fp8 or nvfp4 (Megatron-LM "
				    "d98e8a6 megatron/core/transformer/transformer_config.py:1566 raises: "
				    "fp8_param must be used together with fp8 mode)");
	if (j->param_gather_q == 1 && p->dist_opt == 0)
		return mt_error_set(err, MT_EINVAL,
				    "--fp8-param-gather on needs the distributed optimizer (Megatron-LM "
				    "d98e8a6 megatron/training/arguments.py:1097: --fp8-param-gather only "
				    "supported with distributed optimizer, torch fsdp2, megatron fsdp, or "
				    "inference mode)");
	if ((rc = mt_hostmem_check(j, err)) || (rc = mt_prec_opt_check(j, err)) ||
	    (rc = mt_offload_modules_check(m, j, err)) ||
	    (rc = graphs_ep_overlap_check(m, j, err)) || (rc = rank_budget_check(m, c, j, err)) ||
	    (rc = graph_scope_check(j, err)) || (rc = mt_mxfp8_gather_check(j, err)))
		return rc;
	if (p->cuda_graph == 1 && (p->recompute == MT_RC_FULL ||
				   (p->offload_layers != MT_UNSET && p->offload_layers > 0)))
		return mt_error_set(err, MT_EINVAL,
				    "--cuda-graphs on: per-layer CUDA graphs run with neither %s "
				    "(Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py:%s)",
				    p->recompute == MT_RC_FULL ? "--recompute full" : "--offload-layers",
				    p->recompute == MT_RC_FULL
					    ? "2856 asserts: full recompute is only supported with full "
					      "iteration CUDA graph"
					    : "2801 raises: CUDA graphs not supported with CPU offloading");
	if (p->cuda_graph == 1 && p->recompute_modules != MT_UNSET && m->dropout > 0 &&
	    (p->recompute_modules & ((1u << MT_RCM_MLP) | (1u << MT_RCM_MOE))))
		return mt_error_set(err, MT_EINVAL,
				    "--cuda-graphs on: model '%s' has hidden dropout %g, and Megatron-LM "
				    "does not graph an MLP or MoE block it recomputes (--recompute-modules "
				    "mlp or moe; d98e8a6 megatron/core/transformer/transformer_config.py:2886 "
				    "asserts: hidden dropout is not supported with graphed MLP/MoE "
				    "recomputation)", m->name, m->dropout);
	if (p->cuda_graph == 1 && m->attn_dropout > 0 &&
	    (p->recompute == MT_RC_SELECTIVE || p->recompute_modules != MT_UNSET) &&
	    (p->recompute_modules == MT_UNSET || (p->recompute_modules & MT_RCM_DEFAULT)))
		return mt_error_set(err, MT_EINVAL,
				    "--cuda-graphs on: model '%s' has attention dropout %g, and Megatron-LM "
				    "does not graph an attention it recomputes (--recompute selective; "
				    "d98e8a6 megatron/core/transformer/transformer_config.py:2879 asserts: "
				    "attention dropout is not supported with graphed attention recomputation)",
				    m->name, m->attn_dropout);
	return MT_OK;
}

/* The checks of the dispatcher, the EP overlap, Megatron-FSDP, a pipeline
 * layout and the DP overlaps a pinned job must meet (mt_job_check). */
static int job_check_features(const struct mt_model *m, const struct mt_cluster *c,
			      const struct mt_job *j, struct mt_error *err)
{
	const struct mt_pins *p = &j->pins;
	int rc;

	if (j->moe_dispatcher != MT_DISPATCH_AUTO && !mt_dispatch_available(c, j->moe_dispatcher))
		return mt_error_set(err, MT_EINVAL,
				    "--moe-dispatcher %s: the profile of cluster '%s' has no "
				    "'moe_dispatch' section, so the flex dispatcher cannot be timed there "
				    "(docs/FORMATS.md section 2)", mt_dispatcher_name(j->moe_dispatcher),
				    c->name);
	if (p->ep_overlap == 1) {
		const char *why = mt_ep_overlap_reason(
			m, p->ep != MT_UNSET ? p->ep : m->experts ? 2 : 1,
			j->moe_dispatcher == MT_DISPATCH_AUTO ? MT_DISPATCH_ALLTOALL : j->moe_dispatcher,
			p->pp != MT_UNSET ? p->pp : 1, p->vpp != MT_UNSET ? p->vpp : 2,
			p->recompute != MT_UNSET ? p->recompute : MT_RC_NONE);

		if (why)
			return mt_error_set(err, MT_EINVAL,
					    "--ep-overlap on: Megatron-Core rejects this combination: %s",
					    why);
	}
	if (p->fsdp == MT_FSDP_MEGATRON && p->dist_opt == 0)
		return mt_error_set(err, MT_EUSAGE, "--fsdp on with --dist-opt off: Megatron-FSDP shards "
				    "the optimizer itself and turns the distributed optimizer on "
				    "(Megatron-LM d98e8a6 megatron/training/arguments.py:1128-1135)");
	if (p->fsdp == MT_FSDP_TORCH) {
		const char *why = p->dist_opt == 1 ? "--dist-opt on"
				  : p->pp != MT_UNSET && p->pp > 1 ? "--pp > 1"
				  : p->ep != MT_UNSET && p->ep > 1 ? "--ep > 1"
				  : m->tied ? "a model with tied embeddings"
				  : j->opt_offload > 0 ? "--optimizer-cpu-offload (the hybrid device "
							  "optimizer is the distributed optimizer's)"
				  : NULL;
		if (why)
			return mt_error_set(err, MT_EUSAGE, "--fsdp torch with %s: %s", why,
					    MT_TORCH_FSDP_CITE);
	}
	if (p->layout) {
		/* arguments.py:941-949 and transformer_config.py:2242-2290 read
		 * the layout against --pipeline-model-parallel-size */
		if (p->pp == MT_UNSET)
			return mt_error_set(err, MT_EUSAGE, "--pp-layout: needs --pp (the layout's %d "
					    "stages are PP x VPP)", p->layout->n);
		rc = mt_layout_check(p->layout, m, p->pp, p->vpp == MT_UNSET ? 0 : p->vpp, err);
		if (rc)
			return rc;
	}
	if (p->overlap_param == 1 && p->overlap_grad == 0)
		return mt_error_set(err, MT_EINVAL,
				    "--overlap-param-gather on needs --overlap-grad-reduce on "
				    "(Megatron-LM d98e8a6 megatron/training/arguments.py:1028 asserts: "
				    "Must use --overlap-param-gather with --overlap-grad-reduce)");
	if (p->overlap_param == 1 && p->dist_opt == 0)
		return mt_error_set(err, MT_EINVAL,
				    "--overlap-param-gather on needs the distributed optimizer "
				    "(Megatron-LM d98e8a6 megatron/training/arguments.py:1025 asserts: "
				    "--overlap-param-gather only supported with distributed optimizer)");
	return MT_OK;
}

int mt_job_check(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
		 struct mt_error *err)
{
	const struct mt_pins *p = &j->pins;
	long model_par = 1;
	int rc;

	if (j->gpus < 1 || j->gpus > MT_GPUS_MAX)
		return mt_error_set(err, MT_EUSAGE, "--gpus: expected between 1 and %d GPUs",
				    MT_GPUS_MAX);
	if (j->seq < 1 || j->seq > MT_SEQ_MAX)
		return mt_error_set(err, MT_EUSAGE, "--seq: expected a sequence length between 1 and %d",
				    MT_SEQ_MAX);
	if ((rc = mt_model_check_seq(m, j->seq, NULL, 0, err)))
		return rc;
	if (j->gbs < 1 || j->gbs > MT_GBS_MAX)
		return mt_error_set(err, MT_EUSAGE, "--gbs: expected a global batch size between 1 and %d",
				    MT_GBS_MAX);
	if (j->gpus > c->gpus_per_node && j->gpus % c->gpus_per_node)
		return mt_error_set(err, MT_EINVAL,
				    "--gpus %d: more than one node of %d GPUs must be whole nodes "
				    "(a multiple of %d) on cluster '%s'", j->gpus, c->gpus_per_node,
				    c->gpus_per_node, c->name);
	if (j->precision == MT_PREC_FP8 && c->peak_tflops[MT_DT_FP8] <= 0)
		return mt_error_set(err, MT_EINVAL,
				    "--precision fp8: the %s GPUs of cluster '%s' have no FP8 tensor "
				    "cores (no gpu.peak_tflops.fp8 in its profile)", c->gpu_name,
				    c->name);
	if ((rc = precision_offload_check(m, c, j, err)))
		return rc;
	if (p->tp != MT_UNSET) {
		int r;
		if (p->tp < 1 || j->gpus % p->tp)
			return mt_error_set(err, MT_EINVAL, "--tp %d: must divide --gpus %d", p->tp,
					    j->gpus);
		r = mt_tp_reason(m, p->tp);
		if (r == MT_PRUNE_TP_HEADS)
			return mt_error_set(err, MT_EINVAL,
					    "--tp %d: model '%s' has %d attention heads, which TP must "
					    "divide (%s)", p->tp, m->name, m->heads, CITE(MT_PRUNE_TP_HEADS));
		if (r == MT_PRUNE_TP_GROUPS)
			return mt_error_set(err, MT_EINVAL,
					    "--tp %d: model '%s' has %d key/value heads, which TP must "
					    "divide (%s)", p->tp, m->name, m->kv_heads,
					    CITE(MT_PRUNE_TP_GROUPS));
		if (r == MT_PRUNE_TP_FFN)
			return mt_error_set(err, MT_EINVAL,
					    "--tp %d: does not divide the MLP width of model '%s' (%s)",
					    p->tp, m->name, CITE(MT_PRUNE_TP_FFN));
		model_par *= p->tp;
	}
	if (p->pp != MT_UNSET) {
		if (p->pp < 1 || p->pp > m->layers || j->gpus % p->pp)
			return mt_error_set(err, MT_EINVAL,
					    "--pp %d: must divide --gpus %d and be at most the %d layers",
					    p->pp, j->gpus, m->layers);
		model_par *= p->pp;
	}
	if (p->cp != MT_UNSET) {
		if (p->cp < 1 || j->gpus % p->cp)
			return mt_error_set(err, MT_EINVAL, "--cp %d: must divide --gpus %d", p->cp,
					    j->gpus);
		if (p->cp > 1 && j->seq % (2 * p->cp))
			return mt_error_set(err, MT_EINVAL,
					    "--cp %d: the sequence length %d must be divisible by 2 x CP "
					    "= %d (%s)", p->cp, j->seq, 2 * p->cp, CITE(MT_PRUNE_CP_SEQ));
		if (p->cp > 1 && j->attn_impl != MT_ATTN_FLASH)
			return mt_error_set(err, MT_EINVAL,
					    "--cp %d: context parallelism needs fused attention, not "
					    "--attention unfused (%s)", p->cp, CITE(MT_PRUNE_CP_ATTN));
		model_par *= p->cp;
	}
	if (j->gpus % model_par)
		return mt_error_set(err, MT_EINVAL,
				    "--tp x --cp x --pp = %ld does not divide --gpus %d (%s)", model_par,
				    j->gpus, MT_WORLD_CITE);
	if ((p->ep != MT_UNSET && p->ep != 1) || (p->etp != MT_UNSET && p->etp != 1)) {
		if (!m->experts)
			return mt_error_set(err, MT_EINVAL,
					    "--ep/--etp: model '%s' is dense (no experts)", m->name);
	}
	if (p->ep != MT_UNSET && (p->ep < 1 || (m->experts && m->experts % p->ep)))
		return mt_error_set(err, MT_EINVAL, "--ep %d: must divide the %d experts of model '%s' (%s)",
				    p->ep, m->experts, m->name, CITE(MT_PRUNE_EP_EXPERTS));
	if (p->etp != MT_UNSET && (p->etp < 1 || (m->experts && m->moe_ffn % p->etp)))
		return mt_error_set(err, MT_EINVAL, "--etp %d: must divide the expert width %d (%s)",
				    p->etp, m->moe_ffn, CITE(MT_PRUNE_ETP_FFN));
	if (p->etp != MT_UNSET && p->etp > 1 && m->experts && m->linear_bias)
		return mt_error_set(err, MT_EINVAL,
				    "--etp %d: model '%s' has biases on its linear layers, and "
				    "Megatron-Core supports them in the experts with ETP 1 only (%s)",
				    p->etp, m->name, ETP_BIAS_CITE);
	if (p->mbs != MT_UNSET && (p->mbs < 1 || j->gbs % p->mbs))
		return mt_error_set(err, MT_EINVAL, "--mbs %d: must divide --gbs %lld", p->mbs,
				    (long long)j->gbs);
	if (p->vpp != MT_UNSET && (p->vpp < 1 || p->vpp > m->layers))
		return mt_error_set(err, MT_EINVAL, "--vpp %d: expected between 1 and the %d layers",
				    p->vpp, m->layers);
	if (p->vpp != MT_UNSET && p->vpp > 1 && p->pp == 1)
		return mt_error_set(err, MT_EINVAL, "--vpp %d: interleaving needs --pp > 1 (%s)", p->vpp,
				    CITE(MT_PRUNE_VPP));
	if (p->p2p_overlap == 0 && p->pp != MT_UNSET && p->pp > 0 && p->pp <= 2) {
		int v = mt_pins_vpp(p);

		if (v > 1)
			return mt_error_set(err, MT_EINVAL, "--overlap-p2p off with %d virtual "
					    "stages per rank: interleaving without the overlap needs "
					    "--pp > 2, got %d (%s)", v, p->pp, CITE(MT_PRUNE_P2P_PP));
	}
	if (p->recompute_layers != MT_UNSET && p->recompute != MT_UNSET && p->recompute != MT_RC_FULL)
		return mt_error_set(err, MT_EINVAL,
				    "--recompute-layers applies to --recompute full only");
	/* Megatron-LM d98e8a6 transformer_config.py: recompute_method with
	 * selective granularity raises */
	if (p->recompute_method != MT_UNSET && p->recompute != MT_UNSET && p->recompute != MT_RC_FULL)
		return mt_error_set(err, MT_EINVAL, "--recompute-method %s applies to --recompute "
				    "full only, got --recompute %s",
				    mt_rc_method_name(p->recompute_method),
				    mt_recompute_name(p->recompute));
	if (p->recompute_layers != MT_UNSET && p->recompute_layers != MT_ALL_LAYERS &&
	    p->recompute_layers > m->layers)
		return mt_error_set(err, MT_EINVAL, "--recompute-layers %d: the model has %d layers "
				    "(give at most %d, or 'all')", p->recompute_layers, m->layers,
				    m->layers);
	if ((rc = rc_modules_check(m, j, err)))
		return rc;
	if (p->sp == 1 && p->tp == 1)
		return mt_error_set(err, MT_EINVAL, "--sequence-parallel on needs --tp > 1 (%s)", SP_TP_CITE);
	if (p->sp == 0 && m->experts && p->tp != MT_UNSET && p->tp > 1)
		return mt_error_set(err, MT_EINVAL,
				    "--sequence-parallel off: Megatron-Core needs sequence parallelism "
				    "for MoE models with TP > 1 (%s)", CITE(MT_PRUNE_MOE_SP));
	if (p->offload_layers != MT_UNSET && p->offload_layers > 0) {
		if ((p->pp != MT_UNSET && p->pp > 1) ||
		    (p->recompute != MT_UNSET && p->recompute != MT_RC_NONE) ||
		    p->offload_layers >= m->layers)
			return mt_error_set(err, MT_EINVAL,
					    "--offload-layers %d: Megatron-Core offloads activations "
					    "only with PP 1, no recomputation and fewer than the %d "
					    "layers (%s)", p->offload_layers, m->layers, CITE(MT_PRUNE_OFFLOAD));
	}
	return job_check_features(m, c, j, err);
}
