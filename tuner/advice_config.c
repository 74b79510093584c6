/* SPDX-License-Identifier: MIT */
/* advice_config: a candidate's `config` object back into struct mt_config
 * (tuner/advice.h, docs/FORMATS.md section 3). */
#include "advice.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../job/knobs.h"
#include "../perfmodel/eager.h"
#include "../perfmodel/host.h"
#include "../perfmodel/hostmem.h"
#include "../perfmodel/layout.h"
#include "../perfmodel/optim.h"
#include "../perfmodel/recompute.h"

/* An integer >= lo (and at most hi) at key. */
static int get_i64(const cJSON *o, const char *key, int required, int lo, double hi,
		   int64_t *out, const char *file, const char *where, struct mt_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v) {
		if (required)
			return mt_error_set(err, MT_EINVAL, "%s: field '%s.%s': missing (expected an "
					    "integer >= %d)", file, where, key, lo);
		return MT_OK;
	}
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi)
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.%s': expected an integer >= %d", file,
				    where, key, lo);
	*out = (int64_t)v->valuedouble;
	return MT_OK;
}

static int advice_config_get_int(const cJSON *o, const char *key, int required, int lo, int *out,
		   const char *file, const char *where, struct mt_error *err)
{
	int64_t x = *out;
	int rc = get_i64(o, key, required, lo, 1e9, &x, file, where, err);

	*out = (int)x;
	return rc;
}

static int get_bool(const cJSON *o, const char *key, int *out, const char *file,
		    const char *where, struct mt_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return MT_OK;
	if (!cJSON_IsBool(v))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.%s': expected true or false", file,
				    where, key);
	*out = cJSON_IsTrue(v);
	return MT_OK;
}

static int get_enum(const cJSON *o, const char *key, int (*parse)(const char *), int *out,
		    const char *want, const char *file, const char *where, struct mt_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	int x;

	if (!v)
		return MT_OK;
	if (!cJSON_IsString(v) || (x = parse(v->valuestring)) < 0)
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.%s': expected %s", file, where, key,
				    want);
	*out = x;
	return MT_OK;
}

/* "megatron" or "torch": the implementations of a sharded configuration */
static int fsdp_impl_parse(const char *s);

/* the master weights of the precision-aware optimizer: fp32 or fp16 */
static int main_params_parse(const char *s)
{
	int d = mt_opt_dtype_parse(s);

	return d == MT_OD_FP32 || d == MT_OD_FP16 ? d : -1;
}

/* config.recompute_modules: a list of module names (selective only; absent:
 * core_attn) */
static int get_rc_modules(const cJSON *o, const char *file, const char *where,
			  struct mt_config *c, struct mt_error *err)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "recompute_modules"), *v;
	unsigned bits = 0;

	if (l && !cJSON_IsArray(l))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.recompute_modules': expected a "
				    "list of module names", file, where);
	cJSON_ArrayForEach(v, l) {
		unsigned b;
		char bad[64];

		if (!cJSON_IsString(v) || mt_rc_modules_parse(v->valuestring, &b, bad, sizeof(bad)))
			return mt_error_set(err, MT_EINVAL, "%s: field '%s.recompute_modules': "
					    "expected names from core_attn, moe_act, layernorm, "
					    "mla_up_proj, mlp, moe, shared_experts", file, where);
		bits |= b;
	}
	c->recompute_modules = c->recompute != MT_RC_SELECTIVE ? 0 : bits ? (int)bits
			     : (int)MT_RCM_DEFAULT;
	return MT_OK;
}

static int fsdp_impl_parse(const char *s)
{
	int impl = mt_fsdp_impl_parse(s);

	return impl > MT_FSDP_OFF ? impl : -1;
}

static int split_parse(const char *s)
{
	/* in the order of enum mt_split */
	static const char *const n[] = { "even", "account_embedding_and_loss", "account_loss",
					 "first_last", "layout" };
	int i;

	for (i = 0; i < 5; i++)
		if (!strcmp(s, n[i]))
			return i;
	return -1;
}

static int dtype_fp32(const char *s)
{
	return !strcmp(s, "fp32") ? 1 : !strcmp(s, "bf16") ? 0 : -1;
}

/* a candidate's dispatcher is one that ran: "auto" is the job's word only */
static int dispatcher_parse(const char *s)
{
	int d = mt_dispatcher_parse(s);

	return d >= 0 ? d : -1;
}

int mt_advice_layout(const cJSON *o, const char *file, const char *where, struct mt_layout *out,
		     struct mt_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "pipeline_layout");
	int split = -1, pp = 1, vpp = 1, rc;

	memset(out, 0, sizeof(*out));
	out->mtp_chunk = -1;
	if ((rc = get_enum(o, "pipeline_split", split_parse, &split,
			   "even, account_embedding_and_loss, account_loss, first_last or layout",
			   file, where, err)))
		return rc;
	if (split != MT_SPLIT_LAYOUT) {
		if (v)
			return mt_error_set(err, MT_EINVAL, "%s: field '%s.pipeline_layout': expected "
					    "only with pipeline_split \"layout\"", file, where);
		return MT_OK;
	}
	if (!cJSON_IsString(v))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.pipeline_layout': expected the "
				    "layout string (pipeline_split is \"layout\")", file, where);
	if ((rc = advice_config_get_int(o, "pp", 1, 1, &pp, file, where, err)) ||
	    (rc = advice_config_get_int(o, "vpp", 0, 1, &vpp, file, where, err)))
		return rc;
	if (mt_layout_parse(v->valuestring, out, err)) {
		mt_error_prefix(err, "%s: field '%s.pipeline_layout': ", file, where);
		if (err)
			err->code = MT_EINVAL; /* a bad file, not a bad flag */
		return MT_EINVAL;
	}
	if ((long)pp * vpp != out->n)
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.pipeline_layout': expected PP x VPP "
				    "= %ld model chunks, got %d", file, where, (long)pp * vpp, out->n);
	return MT_OK;
}

/* The keys the merges of the MoE dispatchers, precision recipes, CUDA
 * graphs, Megatron-FSDP and the P2P overlap added. */
static int read_later_keys(const cJSON *o, const char *file, const char *where,
			   struct mt_config *c, struct mt_error *err)
{
	int64_t bytes = 0; /* bucket_size_params x the gradient's bytes: checked, not kept */
	int rc, impl = MT_FSDP_MEGATRON, p2p = 1;

	if ((rc = get_bool(o, "fsdp", &c->fsdp, file, where, err)) ||
	    (rc = get_bool(o, "cuda_graphs", &c->cuda_graph, file, where, err)) ||
	    (rc = get_bool(o, "moe_rank_budget", &c->rank_budget, file, where, err)) ||
	    (rc = get_bool(o, "full_iteration_graphs", &c->full_graph, file, where, err)) ||
	    (rc = get_bool(o, "overlap_p2p_comm", &p2p, file, where, err)) ||
	    (rc = get_bool(o, "ep_overlap", &c->ep_overlap, file, where, err)) ||
	    (rc = get_bool(o, "moe_shared_expert_overlap", &c->shared_overlap, file, where, err)) ||
	    (rc = get_i64(o, "bucket_size_bytes", 0, 0, 1e15, &bytes, file, where, err)) ||
	    (rc = get_enum(o, "moe_dispatcher", dispatcher_parse, &c->dispatcher,
			   "alltoall, allgather or flex", file, where, err)) ||
	    (rc = get_enum(o, "fsdp_impl", fsdp_impl_parse, &impl, "megatron or torch", file, where,
			   err)) ||
	    (rc = get_bool(o, "precision_aware_optimizer", &c->prec_opt, file, where, err)) ||
	    (rc = get_enum(o, "exp_avg_dtype", mt_opt_dtype_parse, &c->exp_avg,
			   "fp32, fp16, bf16 or fp8", file, where, err)) ||
	    (rc = get_enum(o, "exp_avg_sq_dtype", mt_opt_dtype_parse, &c->exp_avg_sq,
			   "fp32, fp16, bf16 or fp8", file, where, err)) ||
	    (rc = get_enum(o, "main_params_dtype", main_params_parse, &c->main_params,
			   "fp32 or fp16", file, where, err)))
		return rc;
	if (!c->prec_opt) /* the optimizer's states are FP32 without it */
		c->exp_avg = c->exp_avg_sq = c->main_params = MT_OD_FP32;
	if (c->fsdp)
		c->fsdp = impl;
	/* false without interleaving says nothing: mt_p2p_blocks() reads it so */
	c->p2p_blocking = !p2p;
	return MT_OK;
}

/* The settings megatune does not time (job/knobs.def's GENERIC rows), each
 * under its key, read by its type. */
static int read_generic(const cJSON *o, const char *file, const char *where, struct mt_config *c,
			struct mt_error *err)
{
	int k, rc;

	for (k = 0; k < MT_KNOB_N; k++) {
		const struct mt_knob *kn = &mt_knobs[k];
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, kn->json);
		char want[160];
		int x;

		if (!mt_knob_in_slot(k) || !v)
			continue;
		if (kn->type == MT_KT_INT) {
			int64_t i = 0;

			if ((rc = get_i64(o, kn->json, 1, (int)kn->lo, (double)kn->hi, &i, file, where,
					  err)))
				return rc;
			x = (int)i;
		} else if (kn->type == MT_KT_ONOFF) {
			x = 0;
			if ((rc = get_bool(o, kn->json, &x, file, where, err)))
				return rc;
		} else if (!cJSON_IsString(v) || mt_knob_parse(k, v->valuestring, &x, want,
								 sizeof(want))) {
			mt_knob_parse(k, "", &x, want, sizeof(want));
			return mt_error_set(err, MT_EINVAL, "%s: field '%s.%s': expected %s", file,
					    where, kn->json, want);
		}
		mt_knob_set_cfg(c, k, x);
	}
	return MT_OK;
}

int mt_advice_config(const cJSON *o, const struct mt_job *job, const char *file,
		     const char *where, struct mt_config *c, struct mt_error *err)
{
	int64_t bucket = -1;
	int rc;

	memset(c, 0, sizeof(*c));
	if (!cJSON_IsObject(o))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s': expected the configuration object",
				    file, where);
	mt_config_settings(job, c);
	c->vpp = c->ep = c->etp = 1;
	c->dist_opt = 1;
	if ((rc = advice_config_get_int(o, "tp", 1, 1, &c->tp, file, where, err)) ||
	    (rc = advice_config_get_int(o, "pp", 1, 1, &c->pp, file, where, err)) ||
	    (rc = advice_config_get_int(o, "cp", 1, 1, &c->cp, file, where, err)) ||
	    (rc = advice_config_get_int(o, "mbs", 1, 1, &c->mbs, file, where, err)) ||
	    (rc = advice_config_get_int(o, "vpp", 0, 1, &c->vpp, file, where, err)) ||
	    (rc = advice_config_get_int(o, "ep", 0, 1, &c->ep, file, where, err)) ||
	    (rc = advice_config_get_int(o, "etp", 0, 1, &c->etp, file, where, err)) ||
	    (rc = advice_config_get_int(o, "dp", 0, 1, &c->dp, file, where, err)) ||
	    (rc = advice_config_get_int(o, "edp", 0, 1, &c->edp, file, where, err)) ||
	    (rc = advice_config_get_int(o, "num_microbatches", 0, 1, &c->num_mb, file, where, err)) ||
	    (rc = advice_config_get_int(o, "recompute_layers", 0, 0, &c->recompute_layers, file, where, err)) ||
	    (rc = advice_config_get_int(o, "offload_layers", 0, 0, &c->offload_layers, file, where, err)) ||
	    (rc = get_i64(o, "bucket_size_params", 0, 0, 1e15, &bucket, file, where, err)) ||
	    (rc = advice_config_get_int(o, "first_stage_layers", 0, 0, &c->first_layers, file, where, err)) ||
	    (rc = advice_config_get_int(o, "last_stage_layers", 0, 0, &c->last_layers, file, where, err)) ||
	    (rc = get_bool(o, "sequence_parallel", &c->sp, file, where, err)) ||
	    (rc = get_bool(o, "distributed_optimizer", &c->dist_opt, file, where, err)) ||
	    (rc = get_bool(o, "tp_comm_overlap", &c->tp_overlap, file, where, err)) ||
	    (rc = get_bool(o, "overlap_grad_reduce", &c->overlap_grad, file, where, err)) ||
	    (rc = get_bool(o, "overlap_param_gather", &c->overlap_param, file, where, err)) ||
	    (rc = get_bool(o, "cross_entropy_fusion", &c->fused_ce, file, where, err)) ||
	    (rc = get_enum(o, "recompute", mt_recompute_parse, &c->recompute,
			   "none, selective or full", file, where, err)) ||
	    (rc = get_enum(o, "recompute_method", mt_rc_method_parse, &c->recompute_method,
			   "block or uniform", file, where, err)) ||
	    (rc = get_enum(o, "cp_comm_type", mt_cp_comm_parse, &c->cp_comm,
			   "p2p, all_gather, a2a or a2a+p2p", file, where, err)) ||
	    (rc = get_enum(o, "grad_reduce_dtype", dtype_fp32, &c->grad_fp32, "bf16 or fp32", file,
			   where, err)) ||
	    (rc = get_enum(o, "pipeline_split", split_parse, &c->split,
			   "even, account_embedding_and_loss, account_loss, first_last or layout",
			   file, where, err)) ||
	    (rc = read_later_keys(o, file, where, c, err)) ||
	    (rc = read_generic(o, file, where, c, err)))
		return rc;
	{
		struct mt_layout l;

		if ((rc = mt_advice_layout(o, file, where, &l, err)))
			return rc;
	}
	if (bucket >= 0)
		c->bucket_params = bucket;
	if (c->recompute == MT_RC_FULL && c->recompute_layers == 0)
		c->recompute_layers = MT_ALL_LAYERS;
	if (c->recompute != MT_RC_FULL)
		c->recompute_method = MT_RC_BLOCK;
	return get_rc_modules(o, file, where, c, err);
}

void mt_advice_eval_job(const struct mt_job *job, const struct mt_config *cfg,
			const struct mt_layout *layout, struct mt_job *out)
{
	struct mt_pins *p = &out->pins;

	*out = *job;
	/* the sizes and settings the checks of the pinned choices read
	 * (mt_job_check), as the configuration has them */
	p->tp = cfg->tp;
	p->pp = cfg->pp;
	p->vpp = cfg->vpp;
	p->cp = cfg->cp;
	p->ep = cfg->ep;
	p->etp = cfg->etp;
	p->mbs = cfg->mbs;
	p->recompute = cfg->recompute;
	p->recompute_modules = cfg->recompute == MT_RC_SELECTIVE && cfg->recompute_modules > 0
				       ? cfg->recompute_modules : MT_UNSET;
	p->offload_layers = cfg->offload_layers;
	/* what mt_evaluate would otherwise choose itself */
	p->ep_overlap = cfg->ep_overlap;
	p->cuda_graph = cfg->cuda_graph;
	p->rank_budget = cfg->dispatcher == MT_DISPATCH_FLEX && cfg->rank_budget ? 1 : MT_UNSET;
	p->full_graph = cfg->full_graph ? 1 : 0;
	p->p2p_overlap = mt_p2p_blocks(cfg) ? 0 : MT_UNSET;
	p->prec_opt = cfg->prec_opt;
	p->exp_avg = cfg->exp_avg;
	p->exp_avg_sq = cfg->exp_avg_sq;
	p->main_params = cfg->main_params;
	if (out->moe_dispatcher == MT_DISPATCH_AUTO && (cfg->ep > 1 || cfg->etp > 1) &&
	    cfg->dispatcher >= 0 && cfg->dispatcher < MT_DISPATCH_N)
		out->moe_dispatcher = cfg->dispatcher;
	p->layout = cfg->split == MT_SPLIT_LAYOUT && layout && layout->n > 0 ? layout : NULL;
}

/* Megatron-LM's own layers (docs/MODEL.md 4.11): job.transformer_impl,
 * job.fusions_off, job.attention_softmax_fp32, each written only when set;
 * and the settings of the memory terms (4.8): job.cross_entropy_fusion_impl,
 * job.moe_grouped_gemm, job.defer_embedding_wgrad, job.wgrad_deferral_limit,
 * job.distributed_optimizer_instances. */
static int eager_settings(const cJSON *j, const char *file, struct mt_job *job,
			  struct mt_error *err)
{
	const cJSON *arr, *v;
	const char *s;
	int x;

	if ((s = mt_jget_strd(j, "transformer_impl", NULL)) &&
	    (x = mt_transformer_impl_parse(s)) >= 0)
		job->transformer_impl = x;
	else if (s)
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.transformer_impl': expected "
				    "transformer_engine or local", file);
	if ((x = get_bool(j, "attention_softmax_fp32", &job->softmax_fp32, file, "job", err)))
		return x;
	/* the memory terms' settings (docs/MODEL.md 4.8), written only when set */
	if ((s = mt_jget_strd(j, "cross_entropy_fusion_impl", NULL)) &&
	    (!strcmp(s, "native") || !strcmp(s, "te")))
		job->ce_native = !strcmp(s, "native");
	else if (s)
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.cross_entropy_fusion_impl': "
				    "expected native or te", file);
	if ((x = get_bool(j, "moe_grouped_gemm", &job->moe_grouped_gemm, file, "job", err)) ||
	    (x = get_bool(j, "defer_embedding_wgrad", &job->wgrad_defer, file, "job", err)) ||
	    (x = advice_config_get_int(j, "wgrad_deferral_limit", 0, 0, &job->wgrad_defer_limit,
				       file, "job", err)) ||
	    (x = advice_config_get_int(j, "distributed_optimizer_instances", 0, 1,
				       &job->dist_opt_instances, file, "job", err)))
		return x;
	if (!(arr = cJSON_GetObjectItemCaseSensitive(j, "fusions_off")))
		return MT_OK;
	if (!cJSON_IsArray(arr))
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.fusions_off': expected an array "
				    "of fusion names", file);
	job->fusions_off = 0;
	cJSON_ArrayForEach(v, arr) {
		x = cJSON_IsString(v) ? mt_fusion_parse(v->valuestring) : -1;
		if (x < 0)
			return mt_error_set(err, MT_EINVAL, "%s: field 'job.fusions_off': expected "
					    "fusion names among masked_softmax, bias_activation, "
					    "bias_dropout, rope", file);
		job->fusions_off |= 1u << x;
	}
	return MT_OK;
}

int mt_advice_job(const cJSON *doc, const char *file, struct mt_job *job, struct mt_error *err)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(doc, "job"), *mods, *v;
	const char *s;
	int x;

	if (!cJSON_IsObject(j))
		return mt_error_set(err, MT_EINVAL, "%s: field 'job': expected an object", file);
	if ((s = mt_jget_strd(j, "precision", NULL)) && (x = mt_precision_parse(s)) >= 0)
		job->precision = x;
	else if (s)
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.precision': expected bf16, fp8 or "
				    "nvfp4", file);
	if ((s = mt_jget_strd(j, "fp8_recipe", NULL)) && (x = mt_fp8_recipe_parse(s)) >= 0)
		job->fp8_recipe = x;
	else if (s)
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.fp8_recipe': expected a recipe "
				    "name", file);
	s = mt_jget_strd(j, "attention", NULL);
	if (s && (!strcmp(s, "flash") || !strcmp(s, "unfused")))
		job->attn_impl = !strcmp(s, "unfused") ? MT_ATTN_UNFUSED : MT_ATTN_FLASH;
	else if (s)
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.attention': expected flash or "
				    "unfused", file);
	if ((x = get_bool(j, "gradient_accumulation_fusion", &job->grad_accum_fusion, file, "job",
			  err)) ||
	    (x = eager_settings(j, file, job, err)))
		return x;
	if ((s = mt_jget_strd(j, "moe_dispatcher", NULL)) && (x = mt_dispatcher_parse(s)) >= -1)
		job->moe_dispatcher = x;
	else if (s)
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.moe_dispatcher': expected "
				    "alltoall, allgather, flex or auto", file);
	if ((v = cJSON_GetObjectItemCaseSensitive(j, "quantised_param_gather"))) {
		if (!cJSON_IsBool(v))
			return mt_error_set(err, MT_EINVAL, "%s: field 'job.quantised_param_gather': "
					    "expected true or false", file);
		job->param_gather_q = cJSON_IsTrue(v);
	}
	job->opt_offload = mt_jget_num(j, "optimizer_cpu_offload", job->opt_offload);
	if (!(job->opt_offload >= 0 && job->opt_offload <= 1))
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.optimizer_cpu_offload': expected "
				    "a share between 0 and 1", file);
	job->mem_headroom = mt_jget_num(j, "mem_headroom", job->mem_headroom);
	if (!(job->mem_headroom >= 0 && job->mem_headroom < 1))
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.mem_headroom': expected a share "
				    "between 0 and 1", file);
	job->roomy_tol = mt_jget_num(j, "prefer_headroom", job->roomy_tol);
	if (!(job->roomy_tol >= 0 && job->roomy_tol < 1))
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.prefer_headroom': expected a share "
				    "between 0 and 1", file);
	if ((mods = cJSON_GetObjectItemCaseSensitive(j, "cuda_graph_scope"))) {
		if (!cJSON_IsArray(mods))
			return mt_error_set(err, MT_EINVAL, "%s: field 'job.cuda_graph_scope': expected "
					    "an array of scope names", file);
		job->graph_scope = 0;
		cJSON_ArrayForEach(v, mods) {
			x = cJSON_IsString(v) ? mt_graph_scope_find(v->valuestring, strlen(v->valuestring))
					      : -1;
			if (x < 0)
				return mt_error_set(err, MT_EINVAL, "%s: field 'job.cuda_graph_scope': "
						    "expected scope names among attn, mlp, moe_router, "
						    "moe_preprocess, moe", file);
			job->graph_scope |= 1u << x;
		}
	}
	if (!(mods = cJSON_GetObjectItemCaseSensitive(j, "offload_modules")))
		return MT_OK;
	if (!cJSON_IsArray(mods))
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.offload_modules': expected an "
				    "array of module names", file);
	job->offload_modules = 0;
	cJSON_ArrayForEach(v, mods) {
		for (x = 0; x < MT_OM_N; x++)
			if (cJSON_IsString(v) && !strcmp(v->valuestring, mt_offload_module_name(x)))
				break;
		if (x == MT_OM_N)
			return mt_error_set(err, MT_EINVAL, "%s: field 'job.offload_modules': expected "
					    "module names such as %s", file, mt_offload_module_name(0));
		job->offload_modules |= 1u << x;
	}
	return MT_OK;
}

void mt_advice_model(const struct mt_advice_doc *d, char *out, size_t cap)
{
	const char *src = d->model_source;
	FILE *f;

	out[0] = '\0';
	if (src && *src && strncmp(src, "bundled", 7) && mt_is_path(src) && (f = fopen(src, "r"))) {
		fclose(f);
		snprintf(out, cap, "%s", src);
	} else if (d->model && *d->model) {
		snprintf(out, cap, "%s", d->model);
	}
}

int mt_advice_candidate(const char *file, int k, struct mt_model *m, struct mt_job *job,
			struct mt_config *cfg, struct mt_layout *layout, char *cluster, size_t cap,
			struct mt_error *err)
{
	cJSON *doc = NULL;
	struct mt_advice_doc d;
	const cJSON *c, *cj;
	char path[512];
	int rc;

	memset(&d, 0, sizeof(d));
	if ((rc = mt_json_load(file, &doc, err)))
		return rc;
	if ((rc = mt_advice_read(doc, file, "--advice", &d, err)))
		goto out;
	if (k < 1 || k > d.ncand) {
		rc = mt_error_set(err, MT_EUSAGE, "--candidate %d: %s has %d candidate%s", k, file,
				  d.ncand, d.ncand == 1 ? "" : "s");
		goto out;
	}
	c = d.cand[k - 1].json;
	cj = mt_jget(c, "config");
	mt_job_init(job);
	job->gpus = (int)d.gpus;
	job->seq = (int)d.seq;
	job->gbs = (int64_t)d.gbs;
	if (job->gpus < 1 || job->seq < 1 || job->gbs < 1 || !cJSON_IsObject(cj)) {
		rc = mt_error_set(err, MT_EINVAL, "%s: job.gpus, job.seq, job.gbs (positive numbers) "
				  "and candidates[%d].config (an object) are required", file, k - 1);
		goto out;
	}
	if ((rc = mt_advice_job(doc, file, job, err)))
		goto out;
	snprintf(path, sizeof(path), "candidates[%d].config", k - 1);
	if ((rc = mt_advice_config(cj, job, file, path, cfg, err)) ||
	    (layout && (rc = mt_advice_layout(cj, file, path, layout, err))))
		goto out;
	if (cluster && cap)
		snprintf(cluster, cap, "%s", d.cluster ? d.cluster : "");
	if (!m)
		goto out;
	/* the model: the file advise read when it still exists, else the name */
	mt_advice_model(&d, path, sizeof(path));
	if (!path[0]) {
		rc = mt_error_set(err, MT_EINVAL, "%s: job.model: expected the model's name", file);
		goto out;
	}
	if ((rc = mt_model_load(path, m, err)))
		mt_error_prefix(err, "%s: job.model: ", file);
out:
	mt_advice_doc_free(&d);
	cJSON_Delete(doc);
	return rc;
}
