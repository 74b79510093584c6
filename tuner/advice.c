/* SPDX-License-Identifier: MIT */
/* advice: the `megatune.advice/1` document, written from a search and read
 * back (advice.h). */
#define _DEFAULT_SOURCE 1 /* realpath */
#include "advice.h"

#include "../perfmodel/host.h"

#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../perfmodel/band.h"
#include "../perfmodel/eager.h"
#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../lib/jsonw.h"
#include "../lib/units.h"
#include "../lib/version.h"
#include "../job/knobs.h"
#include "../rules/engine.h"
#include "../rules/fired.h"
#include "../perfmodel/hostmem.h"
#include "../perfmodel/precision.h"
#include "../job/flags.h"
#include "../job/flagtable.h"
#include "../job/verl.h"
#include "../perfmodel/layout.h"
#include "../perfmodel/recompute.h"

int mt_candidate_args(const struct mt_model *m, const struct mt_job *j, const struct mt_config *c,
		      const struct mt_explain *ex, struct mt_kv *out)
{
	int rel = mt_release_resolve(MT_FLAG_MEGATRON, j->megatron_version);
	int n = mt_megatron_args(m, j, c, out);

	if (ex)
		n = mt_kv_merge(out, n, ex->args, ex->nargs);
	return mt_flags_for_release(MT_FLAG_MEGATRON, rel, out, n);
}

int mt_candidate_bridge(const struct mt_model *m, const struct mt_job *j,
			const struct mt_config *c, const struct mt_explain *ex, struct mt_kv *out)
{
	int rel = mt_release_resolve(MT_FLAG_BRIDGE, j->bridge_version);
	int n = mt_bridge_overrides(m, j, c, out);

	if (ex)
		n = mt_bridge_notes(out, mt_kv_merge(out, n, ex->bridge, ex->nbridge));
	return mt_flags_for_release(MT_FLAG_BRIDGE, rel, out, n);
}

int mt_candidate_verl(const struct mt_model *m, const struct mt_job *j,
		      const struct mt_config *c, const struct mt_explain *ex, struct mt_kv *out)
{
	struct mt_kv *b = calloc(MT_FLAGS_MAX, sizeof(*b));
	int n;

	if (!b)
		return 0;
	n = mt_verl_keys(m, j, b, mt_candidate_bridge(m, j, c, ex, b), out);
	free(b);
	return n;
}

int mt_candidate_env(const struct mt_explain *ex, struct mt_kv *out)
{
	return ex ? mt_kv_merge(out, 0, ex->env, ex->nenv) : 0;
}

const struct mt_explain *mt_advice_explain(const struct mt_advice_rules *ar, int i)
{
	return ar && ar->ex && i < ar->nex ? &ar->ex[i] : NULL;
}

const char *mt_config_label(char *buf, size_t cap, const struct mt_model *m,
			    const struct mt_config *cfg)
{
	int n = snprintf(buf, cap, "TP%d PP%d", cfg->tp, cfg->pp);

	if (cfg->vpp > 1 && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, " VPP%d", cfg->vpp);
	if (cfg->cp > 1 && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, " CP%d(%s)", cfg->cp,
			      mt_cp_comm_name(cfg->cp_comm));
	if (m->experts && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, " EP%d ETP%d", cfg->ep, cfg->etp);
	if (n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, " DP%d MBS%d", cfg->dp, cfg->mbs);
	return buf;
}

/* ---------------------------------------------------------------- JSON */

/* A knob's value under its JSON key (job/knobs.def), as the advice writes
 * it: numbers, booleans, names. */
static void json_knob(struct jw *w, int k, long long v)
{
	const struct mt_knob *kn = &mt_knobs[k];
	char buf[MT_KNOB_FMT_MAX];
	int i;

	switch (kn->type) {
	case MT_KT_RC_MODULES: /* a list of names */
		jw_arr(w, kn->json);
		for (i = 0; i < MT_RCM_N; i++)
			if (v & (1LL << i))
				jw_str(w, NULL, mt_rc_module_name(i));
		jw_end(w);
		break;
	case MT_KT_ONOFF:
		jw_bool(w, kn->json, (int)v);
		break;
	case MT_KT_FSDP:
		jw_bool(w, kn->json, v != MT_FSDP_OFF);
		if (v > MT_FSDP_OFF)
			jw_str(w, "fsdp_impl", mt_fsdp_impl_name((int)v));
		break;
	case MT_KT_RECOMPUTE:
	case MT_KT_RC_METHOD:
	case MT_KT_OPT_DTYPE:
	case MT_KT_CP_COMM:
	case MT_KT_GRAD_DTYPE:
	case MT_KT_DISPATCHER:
		jw_str(w, kn->json, mt_knob_format(k, v, buf, sizeof(buf)));
		break;
	default:
		jw_int(w, kn->json, v);
		break;
	}
}

/* The pins, in the knob table's order; the job's own settings (the
 * dispatcher, the quantised gather) are written with the job. */
static void json_pins(struct jw *w, const struct mt_job *j)
{
	const size_t lo = offsetof(struct mt_job, pins), hi = lo + sizeof(struct mt_pins);
	int k;

	jw_obj(w, "pins");
	for (k = 0; k < MT_KNOB_N; k++) {
		int v = mt_knob_pin(j, k);

		if (mt_knobs[k].pin >= lo && mt_knobs[k].pin < hi && v != MT_UNSET)
			json_knob(w, k, v);
	}
	if (j->pins.layout) {
		char lay[MT_LAYOUT_STR_MAX * 2];

		if (mt_layout_format(j->pins.layout, lay, sizeof(lay)) >= 0)
			jw_str(w, "pipeline_layout", lay);
	}
	jw_end(w);
}

/* A model file given by a relative path is written absolute, so that a
 * reader in another directory (validate's runs, the proxy) finds it. */
static const char *model_source(const char *src, char *abs)
{
	if (src && src[0] != '/' && strncmp(src, "bundled", 7) && mt_is_path(src) &&
	    realpath(src, abs))
		return abs;
	return src;
}

/* The names of the bits set in `bits` (of n) as the list `key`; nothing when none. */
static void name_list(struct jw *w, const char *key, unsigned bits, int n, const char *(*name)(int))
{
	int i;

	if (!bits)
		return;
	jw_arr(w, key);
	for (i = 0; i < n; i++)
		if (bits & (1u << i))
			jw_str(w, NULL, name(i));
	jw_end(w);
}

static void json_head(struct jw *w, const struct mt_model *m, const struct mt_cluster *c,
		      const struct mt_job *j)
{
	char abs[PATH_MAX];

	jw_str(w, "schema", "megatune.advice/1");
	jw_str(w, "megatune_version", MEGATUNE_VERSION);
	jw_obj(w, "job");
	jw_str(w, "model", m->name);
	jw_str(w, "model_source", model_source(m->source, abs));
	jw_str(w, "cluster", c->name);
	jw_str(w, "cluster_source", c->file);
	jw_int(w, "gpus", j->gpus);
	jw_int(w, "seq", j->seq);
	jw_int(w, "gbs", j->gbs);
	jw_str(w, "precision", mt_precision_name(j->precision));
	if (j->precision == MT_PREC_FP8)
		jw_str(w, "fp8_recipe", mt_fp8_recipe_name(j->fp8_recipe));
	if (j->param_gather_q == 0 || j->param_gather_q == 1)
		jw_bool(w, "quantised_param_gather", j->param_gather_q);
	if (j->opt_offload > 0)
		jw_num(w, "optimizer_cpu_offload", j->opt_offload, 6);
	name_list(w, "offload_modules", j->offload_modules, MT_OM_N, mt_offload_module_name);
	name_list(w, "cuda_graph_scope", j->graph_scope, MT_GS_N, mt_graph_scope_name);
	jw_str(w, "attention", j->attn_impl == MT_ATTN_FLASH ? "flash" : "unfused");
	jw_bool(w, "gradient_accumulation_fusion", j->grad_accum_fusion);
	if (j->transformer_impl != MT_TI_TE) /* Megatron-LM's own layers (MODEL.md 4.11) */
		jw_str(w, "transformer_impl", mt_transformer_impl_name(j->transformer_impl));
	name_list(w, "fusions_off", j->fusions_off, MT_FU_N, mt_fusion_name);
	if (j->softmax_fp32)
		jw_bool(w, "attention_softmax_fp32", 1);
	/* the job's settings the memory terms depend on (docs/MODEL.md 4.8),
	 * each written only when it departs from the default, so that a
	 * re-evaluation (calibrate --from-validation) predicts what was printed */
	if (j->ce_native)
		jw_str(w, "cross_entropy_fusion_impl", "native");
	if (!j->moe_grouped_gemm)
		jw_bool(w, "moe_grouped_gemm", 0);
	if (j->wgrad_defer) {
		jw_bool(w, "defer_embedding_wgrad", 1);
		if (j->wgrad_defer_limit > 0)
			jw_int(w, "wgrad_deferral_limit", j->wgrad_defer_limit);
	}
	if (j->dist_opt_instances > 1)
		jw_int(w, "distributed_optimizer_instances", j->dist_opt_instances);
	jw_str(w, "moe_dispatcher", mt_dispatcher_name(j->moe_dispatcher));
	jw_str(w, "megatron_version", mt_release_name(MT_FLAG_MEGATRON,
		mt_release_resolve(MT_FLAG_MEGATRON, j->megatron_version)));
	jw_str(w, "bridge_version", mt_release_name(MT_FLAG_BRIDGE,
		mt_release_resolve(MT_FLAG_BRIDGE, j->bridge_version)));
	jw_num(w, "mem_headroom", j->mem_headroom, 6);
	jw_num(w, "prefer_headroom", j->roomy_tol, 6);
	json_pins(w, j);
	jw_end(w);
	jw_obj(w, "model");
	jw_str(w, "arch", m->arch);
	jw_int(w, "params_total", m->params_total);
	jw_int(w, "params_active", m->params_active);
	jw_int(w, "params_mtp", m->params_mtp);
	jw_int(w, "layers", m->layers);
	jw_int(w, "hidden", m->hidden);
	jw_int(w, "heads", m->heads);
	jw_int(w, "kv_heads", m->kv_heads);
	jw_int(w, "vocab", m->vocab);
	jw_int(w, "experts", m->experts);
	jw_int(w, "moe_layers", m->moe_layers);
	jw_end(w);
	jw_obj(w, "cluster");
	jw_str(w, "gpu", c->gpu_name);
	jw_num(w, "memory_bytes", c->memory_bytes, 15);
	jw_int(w, "gpus_per_node", c->gpus_per_node);
	jw_int(w, "nvlink_domain", c->nvlink_domain);
	jw_num(w, "peak_tflops", mt_cluster_mfu_peak(c, mt_recipe(mt_recipe_of(j))->gemm_dtype, NULL),
	       6);
	if (c->corr.on) { /* calibrate --from-validation (docs/FORMATS.md section 2) */
		int i;

		jw_obj(w, "corrections");
		for (i = 0; i < MT_CORR_N; i++)
			jw_num(w, mt_corr_name(i), c->corr.f[i], 6);
		jw_num(w, "step_memory_factor", c->corr.mem_step, 6);
		jw_num(w, "memory_overhead_bytes", c->corr.mem_bytes, 15);
		jw_str(w, "provenance", c->corr.note);
		jw_end(w);
	}
	jw_end(w);
}

/* The band of a prediction (perfmodel/band.h, docs/MODEL.md 8.1): the step's
 * range, the throughput's, the candidate's own part and its uncertain terms. */
static void band_json(struct jw *w, const struct mt_eval *e)
{
	const struct mt_band *b = &e->band;
	double tok = e->tput.tokens_per_s_per_gpu * e->time.step;
	int i;

	if (b->hi <= 0)
		return;
	jw_obj(w, "band");
	jw_num(w, "step_lo_s", b->lo, 6);
	jw_num(w, "step_hi_s", b->hi, 6);
	jw_num(w, "tokens_per_s_per_gpu_lo", tok / b->hi, 6);
	jw_num(w, "tokens_per_s_per_gpu_hi", tok / b->lo, 6);
	jw_num(w, "model_error", b->base, 4);
	jw_num(w, "own_lo_s", b->spec_lo, 6);
	jw_num(w, "own_hi_s", b->spec_hi, 6);
	jw_arr(w, "uncertain_terms");
	for (i = 0; i < MT_BT_N; i++)
		if (b->terms & (1u << i))
			jw_str(w, NULL, mt_band_term_name(i));
	jw_end(w);
	jw_end(w);
}

static void json_kv_array(struct jw *w, const char *key, const struct mt_kv *kv, int n, int args)
{
	char buf[400];
	int i;

	jw_arr(w, key);
	for (i = 0; i < n; i++) {
		if (mt_kv_is_note(&kv[i]))
			continue;
		if (args) {
			snprintf(buf, sizeof(buf), "--%.95s", kv[i].key);
			jw_str(w, NULL, buf);
			if (mt_kv_value_is_list(kv[i].val)) {
				/* a list value is several argv tokens */
				char tmp[sizeof(kv[i].val)], *tok, *save = NULL;
				snprintf(tmp, sizeof(tmp), "%s", kv[i].val);
				for (tok = strtok_r(tmp, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
					jw_str(w, NULL, tok);
			} else if (kv[i].val[0]) {
				jw_str(w, NULL, kv[i].val);
			}
		} else {
			snprintf(buf, sizeof(buf), "%.95s=%.255s", kv[i].key, kv[i].val);
			jw_str(w, NULL, buf);
		}
	}
	jw_end(w);
}

/* A list and, under notes_key, its notes as sentences */
static void json_kv_notes(struct jw *w, const char *key, const char *notes_key,
			  const struct mt_kv *kv, int n, int args)
{
	int i;

	json_kv_array(w, key, kv, n, args);
	jw_arr(w, notes_key);
	for (i = 0; i < n; i++)
		if (mt_kv_is_note(&kv[i]))
			jw_str(w, NULL, kv[i].val);
	jw_end(w);
}

/* The terms of a stage's memory, as the `memory` object names them */
static void json_mem_terms(struct jw *w, const struct mt_mem *mm)
{
	jw_num(w, "total_bytes", mm->total, 15);
	jw_num(w, "weights_bytes", mm->weights, 15);
	jw_num(w, "grads_bytes", mm->grads, 15);
	jw_num(w, "optimizer_bytes", mm->optimizer, 15);
	jw_num(w, "activations_bytes", mm->activations, 15);
	jw_num(w, "logits_bytes", mm->logits, 15);
	jw_num(w, "moe_dispatch_bytes", mm->moe_dispatch, 15);
	jw_num(w, "transient_bytes", mm->transient, 15);
	jw_num(w, "nccl_bytes", mm->nccl, 15);
	jw_num(w, "cuda_context_bytes", mm->cuda_context, 15);
	jw_num(w, "workspace_bytes", mm->workspace, 15);
	jw_num(w, "cuda_graphs_bytes", mm->cuda_graphs, 15);
	jw_num(w, "fragmentation_bytes", mm->fragmentation, 15);
}

/* As PyTorch's caching allocator reports it (docs/MODEL.md 4.8) */
static void json_mem_allocator(struct jw *w, const struct mt_mem *mm)
{
	jw_num(w, "allocated_bytes", mm->allocated, 15);
	jw_num(w, "max_allocated_bytes", mm->max_allocated, 15);
	jw_num(w, "reserved_bytes", mm->reserved, 15);
	jw_num(w, "outside_allocator_bytes", mm->outside, 15);
}

/* Every pipeline stage's memory (docs/FORMATS.md 3), the peak's flagged;
 * nothing when they cannot be evaluated again */
static void json_stages(struct jw *w, const struct mt_model *m, const struct mt_cluster *c,
			const struct mt_job *j, const struct mt_eval *e)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_mem *st = calloc((size_t)(e->cfg.pp > 0 ? e->cfg.pp : 1), sizeof(*st));
	int i;

	if (!st || mt_eval_stages(m, c, j, &e->cfg, st, &err)) {
		free(st);
		return;
	}
	jw_arr(w, "stages");
	for (i = 0; i < e->cfg.pp; i++) {
		jw_obj(w, NULL);
		jw_int(w, "stage", i);
		jw_bool(w, "peak", i == e->mem.stage);
		json_mem_terms(w, &st[i]);
		json_mem_allocator(w, &st[i]);
		jw_end(w);
	}
	jw_end(w);
	free(st);
}

/* One candidate; cl is NULL where the candidate was evaluated under another
 * job than j (a change that fits): its stages are not written. */
static void json_candidate(struct jw *w, const struct mt_model *m, const struct mt_cluster *cl,
			   const struct mt_job *j, const struct mt_eval *e, int rank,
			   const struct mt_explain *ex)
{
	const struct mt_config *c = &e->cfg;
	const struct mt_mem *mm = &e->mem;
	const struct mt_time *t = &e->time;
	struct mt_kv kv[MT_FLAGS_MAX];
	int n, i;

	jw_obj(w, NULL);
	jw_int(w, "rank", rank);
	jw_bool(w, "feasible", e->feasible);
	jw_obj(w, "config");
	jw_int(w, "tp", c->tp);
	jw_int(w, "pp", c->pp);
	jw_int(w, "vpp", c->vpp);
	jw_int(w, "cp", c->cp);
	jw_int(w, "ep", c->ep);
	jw_int(w, "etp", c->etp);
	jw_int(w, "dp", c->dp);
	jw_int(w, "edp", c->edp);
	jw_int(w, "mbs", c->mbs);
	jw_int(w, "num_microbatches", c->num_mb);
	jw_str(w, "recompute", mt_recompute_name(c->recompute));
	jw_int(w, "recompute_layers", c->recompute == MT_RC_FULL ? c->recompute_layers : 0);
	if (c->recompute == MT_RC_FULL)
		json_knob(w, MT_KNOB_RC_METHOD, c->recompute_method);
	if (c->recompute == MT_RC_SELECTIVE)
		json_knob(w, MT_KNOB_RC_MODULES,
			  c->recompute_modules > 0 ? c->recompute_modules : (int)MT_RCM_DEFAULT);
	jw_bool(w, "sequence_parallel", c->sp);
	jw_bool(w, "distributed_optimizer", c->dist_opt);
	jw_bool(w, "fsdp", c->fsdp != MT_FSDP_OFF);
	if (c->fsdp)
		jw_str(w, "fsdp_impl", mt_fsdp_impl_name(c->fsdp));
	jw_str(w, "cp_comm_type", c->cp > 1 ? mt_cp_comm_name(c->cp_comm) : "p2p");
	jw_int(w, "bucket_size_bytes", c->bucket_params * (c->grad_fp32 ? 4 : 2));
	jw_int(w, "bucket_size_params", c->bucket_params);
	jw_int(w, "offload_layers", c->offload_layers);
	jw_str(w, "moe_dispatcher", mt_dispatcher_name(c->dispatcher));
	jw_bool(w, "ep_overlap", c->ep_overlap);
	jw_bool(w, "moe_shared_expert_overlap", c->shared_overlap);
	jw_bool(w, "cuda_graphs", c->cuda_graph);
	jw_bool(w, "moe_rank_budget", c->dispatcher == MT_DISPATCH_FLEX && c->rank_budget);
	jw_bool(w, "full_iteration_graphs", c->full_graph);
	jw_bool(w, "overlap_p2p_comm", c->pp > 1 && c->vpp > 1 && !mt_p2p_blocks(c));
	jw_bool(w, "tp_comm_overlap", c->tp_overlap && c->sp);
	jw_bool(w, "overlap_grad_reduce", c->overlap_grad);
	jw_bool(w, "overlap_param_gather", c->dist_opt && c->overlap_param);
	jw_bool(w, "cross_entropy_fusion", c->fused_ce);
	jw_str(w, "grad_reduce_dtype", c->grad_fp32 ? "fp32" : "bf16");
	json_knob(w, MT_KNOB_PREC_OPT, c->prec_opt);
	if (c->prec_opt) {
		json_knob(w, MT_KNOB_EXP_AVG, c->exp_avg);
		json_knob(w, MT_KNOB_EXP_AVG_SQ, c->exp_avg_sq);
		json_knob(w, MT_KNOB_MAIN_PARAMS, c->main_params);
	}
	jw_str(w, "pipeline_split", c->split == MT_SPLIT_EVEN ? "even"
			: c->split == MT_SPLIT_ACCOUNT ? "account_embedding_and_loss"
			: c->split == MT_SPLIT_ACCOUNT_LOSS ? "account_loss"
			: c->split == MT_SPLIT_LAYOUT ? "layout" : "first_last");
	if (c->split == MT_SPLIT_LAYOUT) {
		struct mt_layout l;
		char lay[MT_LAYOUT_STR_MAX * 2];

		if (!mt_layout_of(m, j, c->pp, c->vpp, &l) && mt_layout_format(&l, lay, sizeof(lay)) >= 0)
			jw_str(w, "pipeline_layout", lay);
	}
	if (c->split == MT_SPLIT_FIRST_LAST) {
		jw_int(w, "first_stage_layers", c->first_layers);
		jw_int(w, "last_stage_layers", c->last_layers);
	}
	for (n = 0; n < MT_KNOB_N; n++) /* the knobs in spare slots */
		if (mt_knob_in_slot(n) && mt_knob_cfg(c, n) != MT_UNSET)
			json_knob(w, n, mt_knob_cfg(c, n));
	jw_end(w);

	jw_obj(w, "memory");
	jw_int(w, "stage", mm->stage);
	json_mem_terms(w, mm);
	jw_num(w, "host_per_gpu_bytes", mm->host_per_gpu, 15);
	jw_num(w, "host_per_node_bytes", mm->host_per_node, 15);
	json_mem_allocator(w, mm);
	if (cl)
		json_stages(w, m, cl, j, e);
	jw_end(w);

	jw_obj(w, "time");
	jw_num(w, "step_s", t->step, 6);
	jw_num(w, "compute_s", t->compute, 6);
	jw_num(w, "gemm_s", t->gemm, 6);
	jw_num(w, "attention_s", t->attention, 6);
	jw_num(w, "elementwise_s", t->elementwise, 6);
	jw_num(w, "recompute_s", t->recompute, 6);
	jw_num(w, "gpu_overhead_s", t->gpu_overhead, 6);
	jw_num(w, "tp_exposed_s", t->tp_exposed, 6);
	jw_num(w, "tp_hidden_s", t->tp_hidden, 6);
	jw_num(w, "cp_exposed_s", t->cp_exposed, 6);
	jw_num(w, "cp_hidden_s", t->cp_hidden, 6);
	jw_num(w, "ep_exposed_s", t->ep_exposed, 6);
	jw_num(w, "ep_hidden_s", t->ep_hidden, 6);
	jw_num(w, "pp_exposed_s", t->pp_exposed, 6);
	jw_num(w, "pp_hidden_s", t->pp_hidden, 6);
	jw_num(w, "dp_exposed_s", t->dp_exposed, 6);
	jw_num(w, "dp_hidden_s", t->dp_hidden, 6);
	jw_num(w, "offload_exposed_s", t->offload_exposed, 6);
	jw_num(w, "offload_hidden_s", t->offload_hidden, 6);
	jw_num(w, "host_exposed_s", t->host_exposed, 6);
	jw_num(w, "bubble_s", t->bubble, 6);
	jw_num(w, "optimizer_s", t->optimizer, 6);
	jw_num(w, "imbalance_s", t->imbalance, 6);
	jw_end(w);

	jw_obj(w, "throughput");
	jw_num(w, "tokens_per_s_per_gpu", e->tput.tokens_per_s_per_gpu, 6);
	jw_num(w, "model_tflops_per_gpu", e->tput.model_tflops_per_gpu, 6);
	jw_num(w, "hw_tflops_per_gpu", e->tput.hw_tflops_per_gpu, 6);
	jw_num(w, "mfu", e->tput.mfu, 6);
	jw_num(w, "model_flops_per_step", e->tput.model_flops_step, 8);
	jw_num(w, "hw_flops_per_step", e->tput.hw_flops_step, 8);
	jw_end(w);
	band_json(w, e);

	mt_fired_json(w, "rules", ex, MT_FIRED_FULL);

	if (ex && ex->dropped)
		jw_int(w, "rule_flags_dropped", ex->dropped);
	n = mt_candidate_args(m, j, c, ex, kv);
	json_kv_notes(w, "megatron_args", "megatron_notes", kv, n, 1);
	n = mt_candidate_bridge(m, j, c, ex, kv);
	json_kv_notes(w, "bridge_overrides", "bridge_notes", kv, n, 0);
	n = mt_candidate_verl(m, j, c, ex, kv);
	json_kv_notes(w, "verl_overrides", "verl_notes", kv, n, 0);
	n = mt_candidate_env(ex, kv);
	jw_obj(w, "env");
	for (i = 0; i < n; i++)
		jw_str(w, kv[i].key, kv[i].val);
	jw_end(w);
}

/* The runner-up variants folded under ranked layout i (docs/FORMATS.md 3) */
static void json_variants(struct jw *w, const struct mt_search_result *r, int i)
{
	char why[320];
	int v, k;

	jw_int(w, "variants_folded", r->folded[i]);
	jw_arr(w, "variants");
	for (v = 0; v < r->nvar[i]; v++) {
		const struct mt_variant *x = &r->var[i][v];

		jw_obj(w, NULL);
		jw_obj(w, "differs");
		for (k = 0; k < MT_KNOB_N; k++)
			if (mt_knob_shows(&x->cfg, &r->top[i].cfg, k))
				json_knob(w, k, mt_knob_cfg(&x->cfg, k));
		jw_end(w);
		jw_num(w, "step_s", x->step, 6);
		jw_num(w, "rank_key_s", x->key, 6);
		if (mt_variant_why(x, &r->top[i], r->capacity_bytes, why, sizeof(why)))
			jw_str(w, "why_after", why);
		jw_num(w, "peak_bytes", x->mem, 15);
		jw_num(w, "tokens_per_s_per_gpu", x->tokens_per_s, 6);
		jw_end(w);
	}
	jw_end(w);
}

static void json_rules_head(struct jw *w, const struct mt_advice_rules *ar, int relaxed, int which)
{
	const struct mt_ruleset *rs = ar ? ar->set : NULL;
	int i, users = 0;

	jw_obj(w, "rules");
	jw_bool(w, "enabled", rs != NULL);
	if (rs) {
		jw_int(w, "count", rs->n);
		jw_arr(w, "user_files");
		for (i = 0; i < rs->nfiles; i++) {
			int k, user = 0;
			for (k = 0; k < rs->n; k++)
				if (rs->rules[k].file == rs->files[i] && rs->rules[k].user)
					user = 1;
			if (user) {
				jw_str(w, NULL, rs->files[i]);
				users++;
			}
		}
		jw_end(w);
		jw_arr(w, "disabled");
		for (i = 0; i < rs->n; i++)
			if (rs->rules[i].disabled)
				jw_str(w, NULL, rs->rules[i].id);
		jw_end(w);
	}
	(void)users;
	jw_bool(w, "constraints_relaxed", relaxed);
	if (relaxed)
		jw_str(w, "relaxed", which >= 0 && rs && which < rs->n ? rs->rules[which].id : "all");
	jw_end(w);
}

/* Nothing fits: the closest candidate, the GPUs the model states alone need,
 * and the changes that fit (tuner/suggest.h), each with its best. */
static void json_nofit(struct jw *w, const struct mt_model *m, const struct mt_cluster *c,
		       const struct mt_job *j, const struct mt_search_result *r)
{
	int i;

	jw_obj(w, "nofit");
	if (r->min_gpus > 0)
		jw_int(w, "min_gpus_model_states", r->min_gpus);
	if (r->has_closest) {
		jw_arr(w, "closest");
		json_candidate(w, m, c, j, &r->closest, 0, NULL);
		jw_end(w);
		jw_end(w);
	}
	jw_arr(w, "changes_that_fit");
	for (i = 0; i < r->nsugg; i++) {
		jw_obj(w, NULL);
		jw_str(w, "change", r->sugg[i].change);
		jw_arr(w, "best");
		json_candidate(w, m, NULL, j, &r->sugg[i].best, 1, NULL);
		jw_end(w);
		jw_end(w);
		jw_end(w);
	}
	jw_end(w);
	jw_end(w);
}

/* The first candidate's gains over Megatron-LM's defaults for its layout,
 * each with its published evidence (tuner/gains.h, docs/FORMATS.md 3) */
static void json_gains(struct jw *w, const struct mt_gain *g, int n)
{
	int i;

	jw_arr(w, "gains");
	for (i = 0; i < n; i++) {
		jw_obj(w, NULL);
		jw_str(w, "setting", g[i].setting);
		jw_str(w, "from", g[i].from);
		jw_str(w, "to", g[i].to);
		if (isnan(g[i].gain))
			jw_null(w, "gain");
		else
			jw_num(w, "gain", g[i].gain, 6);
		jw_bool(w, "fits_without", g[i].fits);
		jw_num(w, "memory_without_bytes", floor(g[i].mem_bytes), 15);
		if (*g[i].with)
			jw_str(w, "reverted_with", g[i].with);
		if (g[i].ev) {
			jw_obj(w, "evidence");
			jw_str(w, "pair", g[i].ev->id);
			jw_str(w, "what", g[i].ev->what);
			jw_num(w, "published_ratio", g[i].ev->published, 6);
			jw_num(w, "predicted_ratio", g[i].ev->predicted, 6);
			jw_num(w, "uncertainty", mt_effect_u(g[i].ev), 6);
			jw_end(w);
		} else {
			jw_null(w, "evidence");
		}
		jw_end(w);
	}
	jw_end(w);
}

void mt_advice_json(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		    const struct mt_job *j, const struct mt_search_result *r,
		    const struct mt_advice_rules *ar)
{
	struct jw w;
	int i;

	jw_init(&w, sb, 1);
	jw_obj(&w, NULL);
	json_head(&w, m, c, j);
	json_rules_head(&w, ar, r->relaxed, r->relaxed_rule);
	jw_arr(&w, "candidates");
	for (i = 0; i < r->ntop; i++) {
		json_candidate(&w, m, c, j, &r->top[i], i + 1, mt_advice_explain(ar, i));
		json_variants(&w, r, i);
		if (i == 0)
			json_gains(&w, r->gains, r->ngains);
		jw_end(&w);
	}
	jw_end(&w);
	jw_obj(&w, "pruned");
	for (i = 0; i < MT_PRUNE_N; i++)
		jw_int(&w, mt_prune_id(i), r->pruned[i]);
	if (ar && ar->set && ar->run)
		for (i = 0; i < ar->set->n; i++)
			if (ar->set->rules[i].kind == MT_RK_CONSTRAINT && !ar->set->rules[i].disabled)
				jw_int(&w, ar->set->rules[i].id, mt_rules_pruned(ar->run, i));
	jw_end(&w);
	jw_obj(&w, "search");
	jw_int(&w, "evaluated", r->evaluated);
	jw_int(&w, "timed", r->timed);
	jw_int(&w, "feasible", r->feasible);
	jw_num(&w, "seconds", r->seconds, 6);
	jw_num(&w, "capacity_bytes", r->capacity_bytes, 15);
	jw_bool(&w, "headroom_pick", r->roomy_pick);
	jw_end(&w);
	if (!r->ntop)
		json_nofit(&w, m, c, j, r);
	jw_end(&w);
}

void mt_estimate_json(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		      const struct mt_job *j, const struct mt_eval *e,
		      const struct mt_advice_rules *ar)
{
	struct jw w;

	jw_init(&w, sb, 1);
	jw_obj(&w, NULL);
	json_head(&w, m, c, j);
	json_rules_head(&w, ar, 0, 0);
	jw_arr(&w, "candidates");
	json_candidate(&w, m, c, j, e, 1, mt_advice_explain(ar, 0));
	jw_end(&w);
	jw_end(&w);
	jw_obj(&w, "pruned");
	jw_end(&w);
	jw_obj(&w, "search");
	jw_int(&w, "evaluated", 1);
	jw_int(&w, "timed", 1);
	jw_int(&w, "feasible", e->feasible);
	jw_num(&w, "seconds", 0, 6);
	jw_num(&w, "capacity_bytes", c->memory_bytes * (1 - j->mem_headroom), 15);
	jw_end(&w);
	jw_end(&w);
}


/* ---------------------------------------------------------------- reading */

static double num_at(const cJSON *o, const char *obj, const char *key)
{
	if (obj)
		o = cJSON_GetObjectItemCaseSensitive(o, obj);
	return cJSON_IsObject(o) ? mt_jget_num(o, key, NAN) : NAN;
}

static const char *str_at(const cJSON *o, const char *obj, const char *key)
{
	o = cJSON_GetObjectItemCaseSensitive(o, obj);
	return cJSON_IsObject(o) ? mt_jget_str(o, key) : NULL;
}

static void advice_read_cand(const cJSON *c, struct mt_advice_cand *a)
{
	a->json = c;
	a->rank = num_at(c, NULL, "rank");
	a->tp = num_at(c, "config", "tp");
	a->pp = num_at(c, "config", "pp");
	a->vpp = num_at(c, "config", "vpp");
	a->cp = num_at(c, "config", "cp");
	a->ep = num_at(c, "config", "ep");
	a->etp = num_at(c, "config", "etp");
	a->dp = num_at(c, "config", "dp");
	a->mbs = num_at(c, "config", "mbs");
	a->cp_comm_type = str_at(c, "config", "cp_comm_type");
	a->step_s = num_at(c, "time", "step_s");
	a->peak_bytes = num_at(c, "memory", "total_bytes");
	a->tokens_per_s_per_gpu = num_at(c, "throughput", "tokens_per_s_per_gpu");
	a->mfu = num_at(c, "throughput", "mfu");
}

int mt_advice_read(const cJSON *doc, const char *file, const char *opt,
		   struct mt_advice_doc *out, struct mt_error *err)
{
	const char *s = cJSON_IsObject(doc) ? mt_jget_str(doc, "schema") : NULL;
	const cJSON *cands, *c;
	int i = 0;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(doc))
		return mt_error_set(err, MT_EINVAL, "%s: expected a JSON object (%s)", file, opt);
	if (!s)
		return mt_error_set(err, MT_EINVAL, "%s: field 'schema': missing; %s expects \"%s\"",
				    file, opt, "megatune.advice/1");
	if (strcmp(s, "megatune.advice/1"))
		return mt_error_set(err, MT_EINVAL, "%s: field 'schema': %s expects \"%s\", got \"%s\"",
				    file, opt, "megatune.advice/1", s);
	cands = cJSON_GetObjectItemCaseSensitive(doc, "candidates");
	if (!cJSON_IsArray(cands))
		return mt_error_set(err, MT_EINVAL, "%s: field 'candidates': expected an array",
				    file);
	out->model = str_at(doc, "job", "model");
	out->cluster = str_at(doc, "job", "cluster");
	out->precision = str_at(doc, "job", "precision");
	out->model_source = str_at(doc, "job", "model_source");
	out->attention = str_at(doc, "job", "attention");
	out->moe_dispatcher = str_at(doc, "job", "moe_dispatcher");
	out->gpus = num_at(doc, "job", "gpus");
	out->seq = num_at(doc, "job", "seq");
	out->gbs = num_at(doc, "job", "gbs");
	out->ncand = cJSON_GetArraySize(cands);
	if (!out->ncand)
		return MT_OK;
	out->cand = calloc((size_t)out->ncand, sizeof(*out->cand));
	if (!out->cand)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	cJSON_ArrayForEach(c, cands)
		advice_read_cand(c, &out->cand[i++]);
	return MT_OK;
}

void mt_advice_doc_free(struct mt_advice_doc *d)
{
	free(d->cand);
	d->cand = NULL;
	d->ncand = 0;
}
