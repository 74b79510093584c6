/* SPDX-License-Identifier: MIT */
/* verl: verl's Megatron-backend job, read and written (job/verl.h). */
#include "verl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/near.h"
#include "../lib/num.h"
#include "bridge.h"
#include "flags.h"
#include "knobs.h"
#include "../perfmodel/eager.h"
#include "../perfmodel/optim.h"
#include "../perfmodel/precision.h"

#define ACTOR "actor_rollout_ref.actor."
#define CRITIC "critic."

/* ---- reading ---- */

static const struct mt_yitem *get(const struct mt_yflat *f, const char *base, const char *key)
{
	char p[200];

	snprintf(p, sizeof(p), "%s%s", base, key);
	return mt_yflat_get(f, p);
}

/* Keys of verl's precision-aware optimizer under optim.
 * (verl/trainer/config/optim/megatron.yaml @ 1dda039b9c, verl 0.9.0 and
 * newer): declared there, so written without ++ */
static const char *const optim_declared[] = {
	"use_precision_aware_optimizer", "main_grads_dtype", "exp_avg_dtype", "exp_avg_sq_dtype",
	NULL,
};

static int verl_set(const struct mt_yitem *it)
{
	return it && !it->null && it->val[0];
}

/* An integer key: *out, 0 when absent (dflt then), -1 when not a number */
static int verl_get_int(struct mt_jobsrc *s, const struct mt_yflat *f, const char *base, const char *key,
		   long long dflt, long long *out, struct mt_error *err)
{
	const struct mt_yitem *it = get(f, base, key);

	*out = dflt;
	if (!verl_set(it))
		return 0;
	if (mt_parse_int(it->val, 0, 1LL << 53, out)) {
		mt_error_set(err, MT_EINVAL, "%s:%d: %s%s: expected a non-negative integer, got '%s'",
			     s->file, it->line, base, key, it->val);
		return -1;
	}
	return 1;
}

static int push_int(struct mt_jobsrc *s, const char *dest, long long v, int line, struct mt_error *err)
{
	char b[32];

	snprintf(b, sizeof(b), "%lld", v);
	return mt_jobsrc_field(s, dest, b, 0, line, 0, err);
}

/* Which role runs Megatron: the actor's base, or the critic's */
static int role(struct mt_jobsrc *s, const struct mt_yflat *f, const char **base, struct mt_error *err)
{
	const struct mt_yitem *a = mt_yflat_get(f, ACTOR "strategy");
	const struct mt_yitem *c = mt_yflat_get(f, CRITIC "strategy");

	if (verl_set(a) && !strcmp(a->val, "megatron")) {
		*base = ACTOR;
		return MT_OK;
	}
	if (verl_set(c) && !strcmp(c->val, "megatron")) {
		*base = CRITIC;
		mt_jobsrc_note(s, "the actor runs %s, the critic Megatron: the critic is read", a ? a->val : "no strategy");
		return MT_OK;
	}
	if (verl_set(a))
		return mt_error_set(err, MT_EINVAL, "%s:%d: " ACTOR "strategy: a verl config without the "
				    "Megatron backend: expected megatron (ppo_megatron_trainer), got "
				    "'%s'; megatune reads verl's Megatron engine", s->file, a->line, a->val);
	if (mt_yflat_has_section(f, ACTOR "megatron")) {
		*base = ACTOR;
		return MT_OK;
	}
	if (mt_yflat_has_section(f, CRITIC "megatron")) {
		*base = CRITIC;
		return MT_OK;
	}
	return mt_error_set(err, MT_EINVAL, "%s: a verl config without the Megatron backend: no "
			    ACTOR "strategy and no " ACTOR "megatron.* keys; expected verl's Megatron "
			    "engine config (ppo_megatron_trainer)", s->file);
}

/* What verl sets before the overrides, and its engine defaults
 * (transformer_impl.py provider_overrides; engine/megatron.yaml) */
static int verl_defaults(struct mt_jobsrc *s, const struct mt_yflat *f, const char *base,
			 long long tp, struct mt_error *err)
{
	static const struct {
		const char *key, *dest, *val;
	} d[] = {
		{ "megatron.override_transformer_config.moe_token_dispatcher_type",
		  "moe_token_dispatcher_type", "alltoall" },
		{ "megatron.override_transformer_config.moe_router_load_balancing_type",
		  "moe_router_load_balancing_type", "none" },
		{ "megatron.override_transformer_config.attention_backend", "attention_backend", "flash" },
		{ "megatron.use_distributed_optimizer", "use_distributed_optimizer", "True" },
		{ "megatron.sequence_parallel", "sequence_parallel", "True" },
		{ "megatron.dtype", "bf16", "True" },
	};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		if (get(f, base, d[i].key))
			continue;
		if (!strcmp(d[i].dest, "sequence_parallel") && tp < 2)
			continue; /* Megatron-LM turns it off with TP 1 */
		if ((rc = mt_jobsrc_field(s, d[i].dest, d[i].val, 0, 0, 0, err)))
			return rc;
	}
	return MT_OK;
}

/* The sequence, the batch and the GPUs */
static int verl_batch(struct mt_jobsrc *s, const struct mt_yflat *f, const char *base,
		      struct mt_error *err)
{
	long long prompt, resp, mini, n, micro, tok, per, nodes, seq;
	const struct mt_yitem *dyn = get(f, base, "use_dynamic_bsz");
	int rc = 0;

	if (verl_get_int(s, f, "data.", "max_prompt_length", 512, &prompt, err) < 0 ||
	    verl_get_int(s, f, "data.", "max_response_length", 512, &resp, err) < 0 ||
	    verl_get_int(s, f, base, "ppo_mini_batch_size", 256, &mini, err) < 0 ||
	    verl_get_int(s, f, "actor_rollout_ref.rollout.", "n", 1, &n, err) < 0 ||
	    (rc = verl_get_int(s, f, base, "ppo_micro_batch_size_per_gpu", 0, &micro, err)) < 0 ||
	    verl_get_int(s, f, base, "ppo_max_token_len_per_gpu", 16384, &tok, err) < 0 ||
	    verl_get_int(s, f, "trainer.", "n_gpus_per_node", 8, &per, err) < 0 ||
	    verl_get_int(s, f, "trainer.", "nnodes", 1, &nodes, err) < 0)
		return MT_EINVAL;
	seq = prompt + resp;
	if (!mt_yflat_get(f, "data.max_prompt_length") || !mt_yflat_get(f, "data.max_response_length"))
		mt_jobsrc_note(s, "the sequence: data.max_prompt_length + data.max_response_length = "
			       "%lld + %lld (verl's defaults where not given)", prompt, resp);
	if (verl_set(dyn) && mt_yaml_bool(dyn->val) == 1) {
		micro = tok / (seq > 0 ? seq : 1);
		if (micro < 1)
			micro = 1;
		mt_jobsrc_note(s, "use_dynamic_bsz: micro-batches of up to %lld tokens "
			       "(ppo_max_token_len_per_gpu), timed as %lld sequences of %lld", tok,
			       micro, seq);
	} else if (!rc) {
		micro = 1;
		mt_jobsrc_note(s, "%sppo_micro_batch_size_per_gpu is not set: read as 1", base);
	}
	s->nproc_per_node = (int)per;
	s->nnodes = (int)nodes;
	return push_int(s, "seq_length", seq, 0, err) ||
	       push_int(s, "global_batch_size", mini * n, 0, err) ||
	       push_int(s, "micro_batch_size", micro, 0, err);
}

/* An engine key megatune does not read: when it resembles one it reads
 * (the knob table's verl keys, dtype, the offloads), a typo (job/script.h) */
static void near_engine_key(struct mt_jobsrc *s, const struct mt_yitem *it, const char *sub)
{
	static const char *const other[] = {
		"dtype", "param_offload", "grad_offload", "optimizer_offload",
		"override_transformer_config", "override_ddp_config", NULL,
	};
	char like[200];
	struct mt_near nr;
	size_t i, l = strcspn(sub, ".");

	mt_near_init(&nr, sub, l, -1);
	for (i = 0; other[i]; i++)
		mt_near_try(&nr, other[i]);
	for (i = 0; i < MT_KNOB_N && !sub[l]; i++)
		if (mt_knobs[i].verl[0] && mt_knobs[i].megatron[0])
			mt_near_try(&nr, mt_knobs[i].verl);
	if (!nr.match)
		return;
	snprintf(like, sizeof(like), "%.*s%s%s", (int)(sub - it->path), it->path, nr.match, sub + l);
	mt_jobsrc_typo(s, it->line, "key", it->path, like);
}

/* One key under base + "megatron." */
static int engine_key(struct mt_jobsrc *s, const struct mt_yitem *it, const char *sub, int orig,
		      struct mt_error *err)
{
	char k[200];
	size_t i;

	if (!strncmp(sub, "override_transformer_config.", 28)) {
		snprintf(k, sizeof(k), "model.%s", sub + 28);
		return mt_bridge_item(s, k, it->val, 0, it->line, orig, err);
	}
	if (!strncmp(sub, "override_ddp_config.", 20)) {
		snprintf(k, sizeof(k), "ddp.%s", sub + 20);
		return mt_bridge_item(s, k, it->val, 0, it->line, orig, err);
	}
	for (i = 0; i < MT_KNOB_N; i++)
		if (mt_knobs[i].verl[0] && mt_knobs[i].megatron[0] && !strcmp(mt_knobs[i].verl, sub))
			return mt_jobsrc_field(s, mt_knobs[i].megatron, it->val, 0, it->line, orig, err);
	if (!strcmp(sub, "dtype"))
		return mt_jobsrc_field(s, !strcmp(it->val, "float16") ? "fp16" : "bf16", "True", 0,
				       it->line, orig, err);
	if ((!strcmp(sub, "param_offload") || !strcmp(sub, "grad_offload") ||
	     !strcmp(sub, "optimizer_offload")) && mt_yaml_bool(it->val) == 1)
		mt_jobsrc_note(s, "line %d: %s: verl moves it to the host between phases; the "
			       "training step megatune times has it on the GPU", it->line, sub);
	near_engine_key(s, it, sub);
	s->nskipped++;
	return MT_OK;
}

/* The key as the job wrote it (raw[] plus 1): an override's last setting,
 * or a YAML key kept now */
static int raw_of(struct mt_jobsrc *s, const struct mt_yitem *it)
{
	int i;

	if (s->kind == MT_JS_VERL_YAML)
		return mt_jobsrc_raw(s, it->path, it->val, it->line);
	for (i = s->nraw - 1; i >= 0; i--)
		if (!strcmp(s->raw[i].key, it->path))
			return i + 1;
	return 0;
}

/* A key of verl's precision-aware optimizer (optim_declared): its name
 * after base "optim.", or NULL */
static const char *optim_item(const char *path, const char *base)
{
	size_t l = strlen(base), i;

	if (strncmp(path, base, l) || strncmp(path + l, "optim.", 6))
		return NULL;
	for (i = 0; optim_declared[i]; i++)
		if (!strcmp(path + l + 6, optim_declared[i]))
			return path + l + 6;
	return NULL;
}

/* One of them as OptimizerConfig's field; main_grads_dtype bf16 with the
 * precision-aware optimizer on is the DDP buffer's dtype unless
 * override_ddp_config.grad_reduce_in_fp32 says otherwise
 * (verl/workers/engine/megatron/transformer_impl.py @ 1dda039b9c
 * _resolve_override_ddp_config) */
static int optim_read(struct mt_jobsrc *s, const struct mt_yflat *f, const struct mt_yitem *it,
		      const char *base, int orig, struct mt_error *err)
{
	const char *name = optim_item(it->path, base);
	const struct mt_yitem *pa, *over;
	char k[200];

	if (strcmp(name, "main_grads_dtype")) {
		snprintf(k, sizeof(k), "optimizer.%s", name);
		return mt_bridge_item(s, k, !strcmp(it->val, "32") ? "fp32" : it->val, 0, it->line,
				      orig, err);
	}
	snprintf(k, sizeof(k), "%soptim.use_precision_aware_optimizer", base);
	pa = mt_yflat_get(f, k);
	snprintf(k, sizeof(k), "%smegatron.override_ddp_config.grad_reduce_in_fp32", base);
	over = mt_yflat_get(f, k);
	if (mt_opt_dtype_parse(it->val) == MT_OD_BF16 && verl_set(pa) && mt_yaml_bool(pa->val) == 1 &&
	    !verl_set(over))
		return mt_jobsrc_field(s, "grad_reduce_in_bf16", "True", 0, it->line, orig, err);
	return MT_OK;
}

int mt_verl_read(struct mt_jobsrc *s, const struct mt_yflat *f, struct mt_error *err)
{
	const char *base = NULL;
	char eng[64], opt[96];
	long long tp;
	const struct mt_yitem *mp;
	int i, rc, orig;

	if ((rc = role(s, f, &base, err)))
		return rc;
	s->format = MT_JF_VERL;
	snprintf(eng, sizeof(eng), "%smegatron.", base);
	snprintf(opt, sizeof(opt), "%soptim.override_optimizer_config.", base);
	if (verl_get_int(s, f, eng, "tensor_model_parallel_size", 1, &tp, err) < 0 ||
	    (rc = verl_batch(s, f, base, err)) || (rc = verl_defaults(s, f, base, tp, err)))
		return rc ? rc : MT_EINVAL;
	for (i = 0; i < f->n; i++) {
		const struct mt_yitem *it = &f->v[i];
		int e = !strncmp(it->path, eng, strlen(eng)), o = !strncmp(it->path, opt, strlen(opt));
		int po = !e && !o && optim_item(it->path, base) != NULL;

		if (it->null || (!e && !o && !po))
			continue;
		orig = raw_of(s, it);
		if (e)
			rc = engine_key(s, it, it->path + strlen(eng), orig, err);
		else if (po)
			rc = optim_read(s, f, it, base, orig, err);
		else {
			char k[160];

			snprintf(k, sizeof(k), "optimizer.%s", it->path + strlen(opt));
			rc = mt_bridge_item(s, k, it->val, 0, it->line, orig, err);
		}
		if (rc)
			return rc;
	}
	mp = mt_yflat_get(f, !strcmp(base, ACTOR) ? "actor_rollout_ref.model.hf_config_path" :
						      "critic.model.hf_config_path");
	if (!verl_set(mp))
		mp = mt_yflat_get(f, !strcmp(base, ACTOR) ? "actor_rollout_ref.model.path" :
							  "critic.model.path");
	if (verl_set(mp)) {
		snprintf(s->model_path, sizeof(s->model_path), "%s", mp->val);
		s->model_path_line = mp->line;
	}
	return MT_OK;
}

int mt_verl_items(const struct mt_jobsrc *s, struct mt_yflat *f, struct mt_error *err)
{
	int i, k;

	memset(f, 0, sizeof(*f));
	f->v = calloc((size_t)(s->nraw ? s->nraw : 1), sizeof(*f->v));
	if (!f->v)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	f->cap = s->nraw;
	for (i = 0; i < s->nraw; i++) {
		struct mt_yitem *it = &f->v[f->n];
		const char *v = s->raw[i].val;
		size_t l = strlen(v);

		snprintf(it->path, sizeof(it->path), "%s", s->raw[i].key);
		it->line = s->raw_line[i];
		if (l >= 2 && (v[0] == '"' || v[0] == '\'') && v[l - 1] == v[0]) {
			snprintf(it->val, sizeof(it->val), "%.*s", (int)(l - 2), v + 1);
			it->quoted = 1;
		} else {
			snprintf(it->val, sizeof(it->val), "%s", v);
			it->null = !strcmp(v, "null") || !strcmp(v, "~") || !*v;
		}
		/* a later override of the same key wins, as in Hydra */
		for (k = 0; k < f->n && strcmp(f->v[k].path, it->path); k++)
			;
		if (k < f->n)
			f->v[k] = *it;
		else
			f->n++;
	}
	return MT_OK;
}

/* ---- writing ---- */

/* Keys verl's config declares (engine/megatron.yaml, the actor's batch keys):
 * plain key=value; the rest need ++ */
static const char *const declared[] = {
	"tensor_model_parallel_size", "pipeline_model_parallel_size",
	"virtual_pipeline_model_parallel_size", "context_parallel_size", "expert_model_parallel_size",
	"expert_tensor_parallel_size", "sequence_parallel", "use_distributed_optimizer",
	"use_megatron_fsdp", "dtype", "override_transformer_config.recompute_granularity",
	"override_transformer_config.recompute_modules", "override_transformer_config.recompute_method",
	"override_transformer_config.recompute_num_layers",
	"override_transformer_config.attention_backend", NULL,
};

static int verl_put(struct mt_kv *o, int n, const char *key, const char *val)
{
	struct mt_kv kv;
	size_t i;
	int dec = 0;

	if (n >= MT_FLAGS_MAX)
		return n;
	if (!strncmp(key, ACTOR "megatron.", sizeof(ACTOR "megatron.") - 1))
		for (i = 0; declared[i]; i++)
			dec |= !strcmp(key + sizeof(ACTOR "megatron.") - 1, declared[i]);
	if (!strncmp(key, ACTOR "ppo_", sizeof(ACTOR "ppo_") - 1) || !strncmp(key, "data.", 5))
		dec = 1;
	if (!strncmp(key, ACTOR "optim.", sizeof(ACTOR "optim.") - 1))
		for (i = 0; optim_declared[i]; i++)
			dec |= !strcmp(key + sizeof(ACTOR "optim.") - 1, optim_declared[i]);
	snprintf(kv.key, sizeof(kv.key), "%s%.93s", dec ? "" : "++", key);
	snprintf(kv.val, sizeof(kv.val), "%s", val);
	return mt_kv_merge(o, n, &kv, 1); /* two Bridge paths to one verl key: the last */
}

/* The precision-aware optimizer as verl's own keys under optim.
 * (verl/trainer/config/optim/megatron.yaml, verl/workers/config/optimizer.py
 * @ 1dda039b9c, verl 0.9.0 and newer; verl/utils/megatron/optimizer.py turns
 * them into OptimizerConfig's dtypes, which override_optimizer_config would
 * pass on as strings): on or left out, and the moments in fp32 or bf16, the
 * only ones verl takes; its master weights stay FP32 (as a remainder). */
static int optim_key(const struct mt_kv *b, struct mt_kv *o, int n)
{
	const char *f = b->key + 10;
	char k[320];
	int d;

	if (!strcmp(f, "use_precision_aware_optimizer"))
		return strcmp(b->val, "true") ? n : verl_put(o, n, ACTOR "optim.use_precision_aware_optimizer",
							"true");
	d = mt_opt_dtype_parse(b->val);
	if (!strcmp(f, "main_params_dtype") && d == MT_OD_FP32)
		return n;
	if (strcmp(f, "main_params_dtype") && (d == MT_OD_FP32 || d == MT_OD_BF16)) {
		snprintf(k, sizeof(k), ACTOR "optim.%s", f);
		return verl_put(o, n, k, mt_opt_dtype_name(d));
	}
	snprintf(k, sizeof(k), "verl keeps %s in %s (verl/workers/config/optimizer.py: "
		 "exp_avg_dtype and exp_avg_sq_dtype take fp32 or bf16; no main_params_dtype): "
		 "megatune timed %.40s", f, strcmp(f, "main_params_dtype") ? "fp32 or bf16" : "fp32",
		 d >= 0 ? mt_opt_dtype_name(d) : b->val);
	return mt_kv_note(o, n, "optim", k);
}

/* Bridge's mixed_precision recipe v as verl's dtype, format, recipe and gather keys. */
static int verl_precision(const struct mt_job *j, int dist_opt, const char *v, struct mt_kv *o,
			  int n)
{
	/* the weights kept quantised for the all-gather: TransformerConfig's
	 * fp8_param / fp4_param and the DDP config's *_param_gather, as
	 * --fp8-param-gather sets both */
	int q = mt_param_gather_q(j, dist_opt);

	n = verl_put(o, n, ACTOR "megatron.dtype", "bfloat16");
	if (strstr(v, "nvfp4")) {
		n = verl_put(o, n, ACTOR "megatron.override_transformer_config.fp4", "e2m1");
		n = verl_put(o, n, ACTOR "megatron.override_transformer_config.fp4_recipe",
			     "nvfp4");
		if (q) {
			n = verl_put(o, n, ACTOR "megatron.override_transformer_config.fp4_param",
				     "true");
			n = verl_put(o, n, ACTOR "megatron.override_ddp_config.fp4_param_gather",
				     "true");
		}
		return n;
	}
	if (strstr(v, "fp8")) {
		n = verl_put(o, n, ACTOR "megatron.override_transformer_config.fp8", "hybrid");
		n = verl_put(o, n, ACTOR "megatron.override_transformer_config.fp8_recipe",
			     mt_fp8_recipe_name(j->fp8_recipe));
		if (q) {
			n = verl_put(o, n, ACTOR "megatron.override_transformer_config.fp8_param",
				     "true");
			n = verl_put(o, n, ACTOR "megatron.override_ddp_config.fp8_param_gather",
				     "true");
		}
		/* the MXFP8 gather in BF16 needs the reuse in both configs:
		 * the optimizer stages the master weights into the gather
		 * buffer only with its own (Megatron-Core d98e8a6
		 * optimizer/optimizer.py:800-808), and verl builds its
		 * OptimizerConfig from override_optimizer_config alone */
		if (mt_param_ag_recast(j, dist_opt) > 0) {
			n = verl_put(o, n, ACTOR "megatron.override_ddp_config."
				"reuse_grad_buf_for_mxfp8_param_ag", "true");
			n = verl_put(o, n, ACTOR "optim.override_optimizer_config."
				"reuse_grad_buf_for_mxfp8_param_ag", "true");
			n = mt_kv_note(o, n, "overlap_param_gather",
				       "MXFP8 weights with the parameter gather overlapped: "
				       "Megatron-LM's own loop stages the master weights into "
				       "the gather buffer (training.py @ d98e8a6, lines "
				       "3057-3078), verl's does not; there set "
				       "override_ddp_config.overlap_param_gather=false");
		}
	}
	return n;
}

/* One Bridge override as verl keys */
static int from_bridge(const struct mt_kv *b, const struct mt_job *j, int dist_opt, struct mt_kv *o,
		       int n)
{
	static const char *const engine_keys[] = {
		"tensor_model_parallel_size", "pipeline_model_parallel_size",
		"virtual_pipeline_model_parallel_size", "context_parallel_size",
		"expert_model_parallel_size", "expert_tensor_parallel_size", "sequence_parallel", NULL,
	};
	char k[200], v[256];
	const char *f, *a;
	size_t i;

	/* full-iteration graphs are Megatron-LM's training loop's (training.py
	 * FullCudaGraphWrapper); verl runs forward_backward_func itself */
	if ((!strcmp(b->key, "model.cuda_graph_impl") && !strcmp(b->val, "full_iteration")) ||
	    (!strcmp(b->key, "model.cuda_graph_scope") && strstr(b->val, "full_iteration")))
		return mt_kv_note(o, n, "graphs", "full-iteration CUDA graphs are left out: Megatron-LM's "
				  "training loop wraps its step in them (training.py "
				  "FullCudaGraphWrapper), verl calls forward_backward_func itself");
	/* Megatron-LM's own layers: verl builds Transformer Engine's
	 * (verl/models/mcore/model_initializer.py @ 1dda039b9c: every model's
	 * get_gpt_decoder_block_spec(..., use_transformer_engine=True), lines
	 * 105-194), so their spec and the fusions they turn off have no key */
	if (!strcmp(b->key, "model.transformer_impl"))
		return mt_kv_note(o, n, "layers", "Megatron-LM's own layers (--transformer-impl local) "
				  "and their fusions turned off are left out: verl builds Transformer "
				  "Engine's layers (verl/models/mcore/model_initializer.py: "
				  "use_transformer_engine=True), a job megatune times apart");
	if (j->transformer_impl == MT_TI_LOCAL &&
	    (!strcmp(b->key, "model.transformer_layer_spec") ||
	     !strcmp(b->key, "model.masked_softmax_fusion") ||
	     !strcmp(b->key, "model.bias_activation_fusion") ||
	     !strcmp(b->key, "model.bias_dropout_fusion") || !strcmp(b->key, "model.apply_rope_fusion")))
		return n;
	if (!strncmp(b->key, "rerun_state_machine.", 20) ||
	    (!strcmp(b->key, "model.cuda_graph_modules") && !strcmp(b->val, "[]")))
		return n;
	snprintf(v, sizeof(v), "%s", b->val);
	if ((a = strstr(v, "AttnBackend.")))
		snprintf(v, sizeof(v), "%.*s", (int)strcspn(a + 12, ",}"), a + 12);
	if (!strncmp(b->key, "model.", 6)) {
		f = b->key + 6;
		if (!strcmp(f, "seq_length"))
			return n;
		for (i = 0; engine_keys[i]; i++)
			if (!strcmp(f, engine_keys[i])) {
				snprintf(k, sizeof(k), ACTOR "megatron.%s", f);
				return verl_put(o, n, k, v);
			}
		snprintf(k, sizeof(k), ACTOR "megatron.override_transformer_config.%s", f);
		return verl_put(o, n, k, v);
	}
	if (!strncmp(b->key, "comm_overlap.", 13)) {
		f = b->key + 13;
		if (!strcmp(f, "overlap_p2p_comm") || !strcmp(f, "batch_p2p_comm"))
			return mt_kv_note(o, n, "p2p", "verl sets overlap_p2p_comm with VPP > 1 and "
				     "batch_p2p_comm false itself (transformer_impl.py)");
		snprintf(k, sizeof(k), ACTOR "megatron.override_transformer_config.%s", f);
		return verl_put(o, n, k, v);
	}
	if (!strcmp(b->key, "ddp.use_distributed_optimizer") || !strcmp(b->key, "ddp.use_megatron_fsdp")) {
		snprintf(k, sizeof(k), ACTOR "megatron.%s", b->key + 4);
		return verl_put(o, n, k, v);
	}
	if (!strncmp(b->key, "ddp.", 4)) {
		snprintf(k, sizeof(k), ACTOR "megatron.override_ddp_config.%s", b->key + 4);
		return verl_put(o, n, k, v);
	}
	if (!strcmp(b->key, "optimizer.use_precision_aware_optimizer") ||
	    (!strncmp(b->key, "optimizer.", 10) && strstr(b->key, "_dtype")))
		return optim_key(b, o, n);
	if (!strncmp(b->key, "optimizer.", 10)) {
		if (!strcmp(b->key, "optimizer.use_distributed_optimizer"))
			return n;
		snprintf(k, sizeof(k), ACTOR "optim.override_optimizer_config.%s", b->key + 10);
		return verl_put(o, n, k, v);
	}
	if (!strcmp(b->key, "train.micro_batch_size"))
		return verl_put(o, n, ACTOR "ppo_micro_batch_size_per_gpu", v);
	if (!strcmp(b->key, "train.global_batch_size")) {
		char t[256];

		snprintf(t, sizeof(t), "the global batch of %.24s sequences is ppo_mini_batch_size prompts "
			 "x rollout.n responses: with rollout.n = K give ppo_mini_batch_size = %.24s / K", v, v);
		n = mt_kv_note(o, n, "batch", t);
		return verl_put(o, n, ACTOR "ppo_mini_batch_size", v);
	}
	if (!strcmp(b->key, "dataset.seq_length")) {
		char p[32], r[32], t[256];

		snprintf(p, sizeof(p), "%lld", (long long)j->seq / 2);
		snprintf(r, sizeof(r), "%lld", (long long)j->seq - j->seq / 2);
		snprintf(t, sizeof(t), "the sequence megatune timed, %lld tokens, is "
			 "data.max_prompt_length + data.max_response_length: split it as the data "
			 "needs", (long long)j->seq);
		n = mt_kv_note(o, n, "seq", t);
		n = verl_put(o, n, "data.max_prompt_length", p);
		return verl_put(o, n, "data.max_response_length", r);
	}
	if (!strcmp(b->key, "mixed_precision"))
		return verl_precision(j, dist_opt, v, o, n);
	if (!strcmp(b->key, "dist.use_torch_fsdp2"))
		return mt_kv_note(o, n, "fsdp2", "PyTorch FSDP2 is verl's fsdp strategy "
			     "(actor_rollout_ref.actor.strategy=fsdp2), not a key of its Megatron engine");
	return n; /* checkpoint.*, mixed_precision.*: not verl's */
}

int mt_verl_keys(const struct mt_model *m, const struct mt_job *j, const struct mt_kv *b, int nb,
		 struct mt_kv *o)
{
	int n = 0, i, dist_opt = 0;
	char t[256];

	for (i = 0; i < nb; i++)
		if (!strcmp(b[i].key, "ddp.use_distributed_optimizer") || !strcmp(b[i].key, "ddp.use_megatron_fsdp"))
			dist_opt |= !strcmp(b[i].val, "true");
	snprintf(t, sizeof(t), "verl builds the model from the Hugging Face config of "
		 "actor_rollout_ref.model.path: point it at %.100s", m->name);
	n = mt_kv_note(o, n, "model", t);
	for (i = 0; i < nb; i++) {
		struct mt_kv kv = b[i];

		if (!strncmp(kv.key, "#optimizer.", 11) && strstr(kv.key, "_dtype")) {
			/* a dtype Bridge's overrides cannot name: verl's keys neither */
			snprintf(kv.key, sizeof(kv.key), "%s", b[i].key + 1);
			snprintf(kv.val, sizeof(kv.val), "fp8");
			n = optim_key(&kv, o, n);
			continue;
		}
		if (!strcmp(kv.key, "#mixed_precision.grad_reduce_in_fp32")) {
			/* verl's engine takes it from override_ddp_config
			 * (transformer_impl.py: only when the key is not given) */
			n = verl_put(o, n, ACTOR "megatron.override_ddp_config.grad_reduce_in_fp32", "false");
			continue;
		}
		if (mt_kv_is_note(&kv)) {
			const char *eq = strchr(kv.val, '='), *colon = eq ? strchr(eq, ':') : NULL;

			/* a CommOverlapConfig field: a plain TransformerConfig override in verl */
			if (strncmp(kv.key, "#comm_overlap.", 14) || !eq || !colon) {
				/* the model's numerics (verl builds the model from the
				 * Hugging Face config) and Bridge's recipe caveats: not verl's */
				if (strncmp(kv.key, "#comm_overlap.", 14) && strncmp(kv.key, "#mixed_precision", 16) &&
				    strncmp(kv.key, "#model", 6) && strcmp(kv.key, "#rope") &&
				    strcmp(kv.key, "#ddp.bucket_size"))
					n = mt_kv_note(o, n, kv.key + 1, kv.val);
				continue;
			}
			snprintf(kv.key, sizeof(kv.key), "%s", b[i].key + 1);
			snprintf(kv.val, sizeof(kv.val), "%.*s", (int)(colon - eq - 1), eq + 1);
		}
		n = from_bridge(&kv, j, dist_opt, o, n);
	}
	if (m->experts)
		n = mt_kv_note(o, n, "balance", "verl turns the load-balancing loss off "
			  "(moe_router_load_balancing_type none, verl/workers/engine/megatron/"
			  "transformer_impl.py): routing is less even than the balance megatune timed");
	return n;
}
