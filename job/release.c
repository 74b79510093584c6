/* SPDX-License-Identifier: MIT */
/* release: what a job's target releases can run (release.h). */
#include "release.h"

#include <stdio.h>
#include <string.h>

#include "../perfmodel/dispatch.h"
#include "../perfmodel/optim.h"
#include "../perfmodel/recompute.h"
#include "flagtable.h"
#include "knobs.h"

/* The releases of a job, resolved. */
struct rel {
	int mlm, bridge;
};

/* 0 when release `r` of `kind` accepts `name` (itself or its older
 * spelling; a name not in the table is accepted), else the row. */
static const struct mt_flag_row *lacks(int kind, int r, const char *name)
{
	const struct mt_flag_row *row = mt_flag_find(kind, name), *old;

	if (!row || mt_flag_accepts(row, r))
		return NULL;
	if (row->older[0] && (old = mt_flag_find(kind, row->older)) && mt_flag_accepts(old, r))
		return NULL;
	return row;
}

/* The first of the Megatron-LM flags and Bridge paths (NULL-terminated
 * lists) that the releases lack, described in msg; 0 when they run all. */
static int release_missing(const struct rel *rl, const char *const *mlm, const char *const *bridge,
		   char *msg, size_t cap)
{
	const struct mt_flag_row *row;
	int i;

	for (i = 0; mlm && mlm[i]; i++)
		if ((row = lacks(MT_FLAG_MEGATRON, rl->mlm, mlm[i]))) {
			snprintf(msg, cap, "Megatron-LM %s or newer (--%s); the target is %s",
				 row->first, row->name, mt_release_name(MT_FLAG_MEGATRON, rl->mlm));
			return 1;
		}
	for (i = 0; bridge && bridge[i]; i++)
		if ((row = lacks(MT_FLAG_BRIDGE, rl->bridge, bridge[i]))) {
			snprintf(msg, cap, "Megatron-Bridge %s or newer (%s); the target is %s",
				 row->first, row->name, mt_release_name(MT_FLAG_BRIDGE, rl->bridge));
			return 1;
		}
	return 0;
}

#define LIST(...) (const char *const[]){ __VA_ARGS__, NULL }

static const char *const *EP_OVERLAP_M = LIST("overlap-moe-expert-parallel-comm",
						"delay-wgrad-compute");
static const char *const *EP_OVERLAP_B = LIST("comm_overlap.overlap_moe_expert_parallel_comm",
						"comm_overlap.delay_wgrad_compute");

/* A pinned value the releases cannot run: the error; an unpinned one: the
 * knob pinned off.  Returns MT_OK or the error. */
static int release_pin_off(const struct rel *rl, int *pin, int on_value, const char *const *mlm,
		   const char *const *bridge, const char *what, struct mt_error *err)
{
	char msg[256];

	if (!release_missing(rl, mlm, bridge, msg, sizeof(msg)))
		return MT_OK;
	if (*pin != MT_UNSET && *pin >= on_value)
		return mt_error_set(err, MT_EUSAGE, "%s needs %s", what, msg);
	*pin = 0;
	return MT_OK;
}

/* The knobs in spare slots (knobs.def), by their rows: one whose flag or
 * override path the releases lack is refused when pinned to other than its
 * default, and a TIMED one is left at its default (the search tries no
 * other value). */
static int slot_knobs(const struct rel *rl, struct mt_job *j, struct mt_error *err)
{
	char flag[MT_KNOB_FMT_MAX], msg[256], buf[MT_KNOB_FMT_MAX];
	int k;

	for (k = 0; k < MT_KNOB_N; k++) {
		const struct mt_knob *kn = &mt_knobs[k];
		const char *mlm[2] = { NULL, NULL }, *bridge[2] = { NULL, NULL };
		int pin = mt_knob_pin(j, k);

		if (!mt_knob_in_slot(k))
			continue;
		mlm[0] = *kn->megatron ? mt_knob_flag(k, flag, sizeof(flag)) : NULL;
		bridge[0] = *kn->bridge ? kn->bridge : NULL;
		if (!release_missing(rl, mlm, bridge, msg, sizeof(msg)))
			continue;
		if (pin != MT_UNSET && pin != kn->dflt)
			return mt_error_set(err, MT_EUSAGE, "--%s %s needs %s", kn->cli,
					    mt_knob_format(k, pin, buf, sizeof(buf)), msg);
		if (kn->group == MT_KG_TIMED)
			mt_knob_set_pin(j, k, kn->dflt);
	}
	return MT_OK;
}

/* The job's own settings: refused when the releases cannot run them. */
static int settings(const struct rel *rl, const struct mt_job *j, struct mt_error *err)
{
	static const char *const recipe_flag[] = { NULL, "fp8-recipe", "fp8-recipe=blockwise",
						   "fp8-recipe=mxfp8" };
	char msg[256];

	if (j->precision == MT_PREC_NVFP4 && release_missing(rl, LIST("fp4-format"), NULL, msg, sizeof(msg)))
		return mt_error_set(err, MT_EUSAGE, "--precision nvfp4 needs %s", msg);
	if (j->precision == MT_PREC_FP8 && j->fp8_recipe > 0 && j->fp8_recipe < 4 &&
	    release_missing(rl, LIST(recipe_flag[j->fp8_recipe]), NULL, msg, sizeof(msg)))
		return mt_error_set(err, MT_EUSAGE, "--fp8-recipe %s needs %s",
				    mt_fp8_recipe_name(j->fp8_recipe), msg);
	if (j->offload_modules &&
	    release_missing(rl, LIST("fine-grained-activation-offloading"),
		    LIST("model.fine_grained_activation_offloading"), msg, sizeof(msg)))
		return mt_error_set(err, MT_EUSAGE, "--offload-modules needs %s", msg);
	if (j->opt_offload > 0 &&
	    release_missing(rl, LIST("optimizer-cpu-offload"), LIST("optimizer.optimizer_cpu_offload"), msg,
		    sizeof(msg)))
		return mt_error_set(err, MT_EUSAGE, "--optimizer-cpu-offload needs %s", msg);
	if (j->moe_balance == MT_BAL_FORCED &&
	    release_missing(rl, LIST("moe-router-force-load-balancing"),
		    LIST("model.moe_router_force_load_balancing"), msg, sizeof(msg)))
		return mt_error_set(err, MT_EUSAGE, "--moe-balance forced needs %s", msg);
	return MT_OK;
}

/* The dispatcher, FSDP and CP communication: values the search skips. */
static int skipped(const struct rel *rl, struct mt_job *j, const struct mt_cluster *c,
		   struct mt_error *err)
{
	struct mt_pins *p = &j->pins;
	char msg[256];
	int hybrid = c && c->dispatch.flex_backend == MT_FLEX_HYBRIDEP;

	if (release_missing(rl, hybrid ? LIST("moe-token-dispatcher-type=flex",
				      "moe-flex-dispatcher-backend=hybridep")
			       : LIST("moe-token-dispatcher-type=flex"),
		    LIST("model.moe_flex_dispatcher_backend"), msg, sizeof(msg))) {
		if (j->moe_dispatcher == MT_DISPATCH_FLEX)
			return mt_error_set(err, MT_EUSAGE, "--moe-dispatcher flex needs %s", msg);
		j->release_off |= MT_ROFF_FLEX;
	}
	if (release_missing(rl, LIST("use-megatron-fsdp", "ckpt-format=fsdp_dtensor"),
		    LIST("ddp.use_megatron_fsdp"), msg, sizeof(msg))) {
		if (p->fsdp == MT_FSDP_MEGATRON)
			return mt_error_set(err, MT_EUSAGE, "--fsdp megatron needs %s", msg);
		j->release_off |= MT_ROFF_FSDP_MEGATRON;
	}
	if (release_missing(rl, LIST("use-torch-fsdp2"), LIST("dist.use_torch_fsdp2"), msg, sizeof(msg))) {
		if (p->fsdp == MT_FSDP_TORCH)
			return mt_error_set(err, MT_EUSAGE, "--fsdp torch needs %s", msg);
		j->release_off |= MT_ROFF_FSDP_TORCH;
	}
	if (release_missing(rl, LIST("cp-comm-type"), LIST("model.cp_comm_type"), msg, sizeof(msg))) {
		if (p->cp_comm != MT_UNSET && p->cp_comm != MT_CP_P2P)
			return mt_error_set(err, MT_EUSAGE, "--cp-comm %s needs %s",
					    mt_cp_comm_name(p->cp_comm), msg);
		j->release_off |= MT_ROFF_CP_COMM | MT_ROFF_CP_A2A_P2P;
	}
	if (release_missing(rl, LIST("recompute-modules"), LIST("model.recompute_modules"), msg,
		    sizeof(msg))) {
		if (p->recompute_modules != MT_UNSET && p->recompute_modules != MT_RCM_DEFAULT)
			return mt_error_set(err, MT_EUSAGE, "--recompute-modules needs %s", msg);
		j->release_off |= MT_ROFF_RC_MODULES;
	}
	if (p->recompute_modules != MT_UNSET &&
	    (p->recompute_modules & (1u << MT_RCM_SHARED_EXPERTS)) &&
	    release_missing(rl, LIST("recompute-modules=shared_experts"), NULL, msg, sizeof(msg)))
		return mt_error_set(err, MT_EUSAGE, "--recompute-modules shared_experts needs %s",
				    msg);
	/* full-iteration graphs as an implementation of their own, which
	 * Megatron-LM exempts from its refusal of graphs with CPU offloading */
	if (release_missing(rl, LIST("cuda-graph-impl=full_iteration"), LIST("model.cuda_graph_impl=full_iteration"),
		    msg, sizeof(msg)))
		j->release_off |= MT_ROFF_GRAPH_OFFLOAD;
	/* the uneven pipeline splits (docs/MODEL.md 4.6): before their flags a
	 * release splits the layers evenly or not at all */
	if (release_missing(rl, LIST("account-for-embedding-in-pipeline-split",
			     "account-for-loss-in-pipeline-split"), NULL, msg, sizeof(msg)))
		j->release_off |= MT_ROFF_SPLIT_ACCOUNT;
	if (release_missing(rl, LIST("decoder-first-pipeline-num-layers"), NULL, msg, sizeof(msg)))
		j->release_off |= MT_ROFF_SPLIT_FIRST_LAST;
	/* before it, virtual stages are layers per stage of an even split
	 * (arguments.py @ core_r0.10.0 asserts L divisible by PP with them):
	 * the flag itself, not its older spelling */
	{
		const struct mt_flag_row *vs =
			mt_flag_find(MT_FLAG_MEGATRON, "num-virtual-stages-per-pipeline-rank");

		if (vs && !mt_flag_accepts(vs, rl->mlm))
			j->release_off |= MT_ROFF_SPLIT_UNEVEN_VPP;
	}
	if (release_missing(rl, LIST("pipeline-model-parallel-layout"),
		    LIST("model.pipeline_model_parallel_layout"), msg, sizeof(msg))) {
		if (p->layout)
			return mt_error_set(err, MT_EUSAGE, "--pp-layout needs %s", msg);
		j->release_off |= MT_ROFF_SPLIT_LAYOUT;
	}
	if (release_missing(rl, LIST("hierarchical-context-parallel-sizes"),
		    LIST("model.hierarchical_context_parallel_sizes"), msg, sizeof(msg))) {
		if (p->cp_comm == MT_CP_A2A_P2P)
			return mt_error_set(err, MT_EUSAGE, "--cp-comm a2a+p2p needs %s", msg);
		j->release_off |= MT_ROFF_CP_A2A_P2P;
	}
	return MT_OK;
}

/* The precision-aware optimizer: its flags, and a moment's dtype where a
 * release lacks it (BF16 from core_v0.13.0); what the releases cannot run is
 * refused when pinned, else left out of the search. */
static int prec_opt(const struct rel *rl, struct mt_job *j, struct mt_error *err)
{
	static const char *const flag[] = { "exp-avg-dtype", "exp-avg-sq-dtype" };
	const int pins[] = { j->pins.exp_avg, j->pins.exp_avg_sq };
	char msg[256], v[64];
	int i, pinned = j->pins.prec_opt == 1 || mt_prec_opt_default(j);

	if (release_missing(rl, LIST("use-precision-aware-optimizer"),
		    LIST("optimizer.use_precision_aware_optimizer"), msg, sizeof(msg))) {
		if (pinned && j->opt_offload <= 0)
			return mt_error_set(err, MT_EUSAGE, "--precision-aware-optimizer on needs %s",
					    msg);
		j->release_off |= MT_ROFF_PREC_OPT;
		return MT_OK;
	}
	if (j->opt_offload > 0) /* the hybrid optimizer's states are FP32 */
		return MT_OK;
	for (i = 0; i < 2; i++) {
		int d = pins[i] != MT_UNSET ? pins[i] : MT_OD_MOMENT_DEFAULT;

		snprintf(v, sizeof(v), "%s=%s", flag[i], mt_opt_dtype_name(d));
		if (!release_missing(rl, (const char *const[]){ v, NULL }, NULL, msg, sizeof(msg)))
			continue;
		if (pins[i] != MT_UNSET || pinned)
			return mt_error_set(err, MT_EUSAGE, "--%s %s needs %s", flag[i],
					    mt_opt_dtype_name(d), msg);
		j->release_off |= MT_ROFF_PREC_OPT;
	}
	return MT_OK;
}

int mt_release_grad_bf16(const struct mt_job *j)
{
	return !lacks(MT_FLAG_MEGATRON, mt_release_resolve(MT_FLAG_MEGATRON, j->megatron_version),
		      "grad-reduce-in-bf16");
}

int mt_release_restrict(struct mt_job *j, const struct mt_cluster *c, struct mt_error *err)
{
	struct rel rl = { mt_release_resolve(MT_FLAG_MEGATRON, j->megatron_version),
			  mt_release_resolve(MT_FLAG_BRIDGE, j->bridge_version) };
	struct mt_pins *p = &j->pins;
	char msg[256];
	int rc;

	j->release_off = 0;
	if ((rc = settings(&rl, j, err)) || (rc = skipped(&rl, j, c, err)) ||
	    (rc = release_pin_off(&rl, &p->ep_overlap, 1, EP_OVERLAP_M, EP_OVERLAP_B, "--ep-overlap on",
			  err)) ||
	    (rc = release_pin_off(&rl, &p->cuda_graph, 1, LIST("cuda-graph-impl"),
			  LIST("model.cuda_graph_impl"), "--cuda-graphs on", err)) ||
	    (rc = release_pin_off(&rl, &p->offload_layers, 1, LIST("cpu-offloading-num-layers"),
			  LIST("model.cpu_offloading_num_layers"), "--offload-layers", err)) ||
	    (rc = release_pin_off(&rl, &p->full_graph, 1, LIST("cuda-graph-scope"),
			  LIST("model.cuda_graph_scope"), "--full-iteration-graphs on", err)) ||
	    (rc = release_pin_off(&rl, &p->rank_budget, 1,
			  LIST("moe-expert-rank-capacity-factor", "use-transformer-engine-op-fuser"),
			  LIST("model.moe_expert_rank_capacity_factor",
			       "model.use_transformer_engine_op_fuser"),
			  "--moe-rank-budget on", err)))
		return rc;
	/* before core_v0.12.0 Megatron-LM reduces BF16 gradients in FP32
	 * (arguments.py: bf16 sets accumulate_allreduce_grads_in_fp32) */
	if (release_missing(&rl, LIST("grad-reduce-in-bf16"), NULL, msg, sizeof(msg))) {
		if (p->grad_fp32 == 0)
			return mt_error_set(err, MT_EUSAGE, "--grad-reduce bf16 needs %s", msg);
		p->grad_fp32 = 1;
	}
	if ((rc = prec_opt(&rl, j, err)) || (rc = slot_knobs(&rl, j, err)))
		return rc;
	if (p->p2p_overlap == 0 &&
	    release_missing(&rl, LIST("no-overlap-p2p-communication"), LIST("comm_overlap.overlap_p2p_comm"),
		    msg, sizeof(msg)))
		return mt_error_set(err, MT_EUSAGE, "--overlap-p2p off needs %s", msg);
	return MT_OK;
}
