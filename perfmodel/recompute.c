/* SPDX-License-Identifier: MIT */
/* recompute: the modules of selective recomputation (recompute.h). */
#include "recompute.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cluster.h"
#include "config.h"
#include "model.h"
#include "precision.h"

static const char *const names[MT_RCM_N] = {
	"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts",
};

const char *mt_rc_module_name(int mod)
{
	return mod >= 0 && mod < MT_RCM_N ? names[mod] : "?";
}

int mt_rc_modules_parse(const char *s, unsigned *bits, char *bad, size_t cap)
{
	unsigned b = 0;

	while (*s) {
		size_t n = strcspn(s, ", ");
		int i;

		if (n) {
			for (i = 0; i < MT_RCM_N; i++)
				if (strlen(names[i]) == n && !strncmp(s, names[i], n))
					break;
			if (i == MT_RCM_N) {
				snprintf(bad, cap, "%.*s", (int)n, s);
				return -1;
			}
			b |= 1u << i;
		}
		s += n;
		if (*s)
			s++;
	}
	if (!b) {
		snprintf(bad, cap, "%s", "");
		return -1;
	}
	*bits = b;
	return 0;
}

const char *mt_rc_modules_format(unsigned bits, char sep, char *buf, size_t cap)
{
	size_t len = 0;
	int i;

	if (cap)
		buf[0] = 0;
	for (i = 0; i < MT_RCM_N; i++) {
		int w;

		if (!(bits & (1u << i)) || len >= cap)
			continue;
		w = snprintf(buf + len, cap - len, "%s%s", len ? (char[]){ sep, 0 } : "", names[i]);
		if (w > 0)
			len += (size_t)w;
	}
	return buf;
}

#define TC "Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py:"

const char *mt_rc_modules_reason(const struct mt_model *m, const struct mt_job *j, unsigned bits,
				 int ep, int ep_overlap, int shared_overlap)
{
	if ((bits & (1u << MT_RCM_MOE_ACT)) && !m->experts)
		return "moe_act needs a MoE model (" TC "1964 raises: moe_act in recompute_modules is "
		       "only supported with moe_grouped_gemm)";
	/* grouped GEMM is the set rule moe-grouped-gemm's, with several experts per GPU */
	if ((bits & (1u << MT_RCM_MOE_ACT)) && m->experts && ep > 0 && m->experts / ep <= 1)
		return "moe_act needs grouped GEMM, several experts per GPU (" TC "1964 raises: moe_act "
		       "in recompute_modules is only supported with moe_grouped_gemm)";
	if ((bits & (1u << MT_RCM_MLA_UP_PROJ)) && !m->mla)
		return "mla_up_proj needs multi-latent attention (" TC "1969 raises: mla_up_proj in "
		       "recompute_modules is only supported with multi_latent_attention)";
	if ((bits & ((1u << MT_RCM_MOE) | (1u << MT_RCM_SHARED_EXPERTS))) && !m->experts)
		return "moe and shared_experts need a MoE model (Megatron-LM d98e8a6 "
		       "megatron/core/transformer/moe/moe_layer.py:247-255: only a MoE layer reads them)";
	if ((bits & (1u << MT_RCM_SHARED_EXPERTS)) && !m->shared_ffn)
		return "shared_experts needs a model with shared experts (Megatron-LM d98e8a6 "
		       "megatron/core/transformer/moe/moe_layer.py:517: only the shared experts read it)";
	if ((bits & (1u << MT_RCM_SHARED_EXPERTS)) && shared_overlap)
		return "shared_experts cannot be recomputed with the shared-expert overlap, which "
		       "megatune turns on with EP > 1 and alltoall or flex without the 1F1B EP overlap ("
		       TC "1991 raises: shared_experts recompute cannot work with "
		       "--moe-shared-expert-overlap)";
	if ((bits & ((1u << MT_RCM_MOE_ACT) | (1u << MT_RCM_LAYERNORM))) &&
	    j->precision == MT_PREC_FP8 && j->fp8_recipe == MT_FP8_DELAYED)
		return "moe_act and layernorm cannot be recomputed with FP8 delayed scaling (" TC
		       "2002 raises: Delayed scaling does not support moe_act and layernorm recompute "
		       "for fp8)";
	if ((bits & (1u << MT_RCM_MOE)) && ep_overlap)
		return "moe cannot be recomputed with the 1F1B EP overlap (" TC "3030 asserts: disable "
		       "moe in recompute_modules when enabling overlap_moe_expert_parallel_comm)";
	return NULL;
}

int mt_rc_module_sets(const struct mt_model *m, const struct mt_job *j, unsigned *sets)
{
	/* FP8 delayed scaling runs neither moe_act nor layernorm (transformer_config.py:2002) */
	int delayed = j->precision == MT_PREC_FP8 && j->fp8_recipe == MT_FP8_DELAYED;
	unsigned light = 0, heavy;
	int n = 0;

	/* today's selective: the core attention alone (Korthikanti et al.) */
	sets[n++] = MT_RCM_DEFAULT;
	/* the output-discarding modules, where the model has them: the
	 * separate norms (MLA's input norm, a MoE layer's pre-MLP norm), the
	 * experts' activation and MLA's up projections (the verl guide's and
	 * NVIDIA's DeepSeek-V3 recipes); core attention with them only where it
	 * frees more than the log-sum-exp (unfused attention) */
	if ((m->mla || m->experts) && !delayed)
		light |= 1u << MT_RCM_LAYERNORM;
	if (m->experts && !delayed)
		light |= 1u << MT_RCM_MOE_ACT;
	if (m->mla)
		light |= 1u << MT_RCM_MLA_UP_PROJ;
	if (j->attn_impl == MT_ATTN_UNFUSED)
		light |= MT_RCM_DEFAULT;
	if (light && light != MT_RCM_DEFAULT)
		sets[n++] = light;
	/* then the dense MLP (dense layers) as well */
	heavy = light | (m->moe_layers < m->layers ? 1u << MT_RCM_MLP : 0u);
	if (heavy != light && (heavy & ~MT_RCM_DEFAULT))
		sets[n++] = heavy;
	return n;
}

double mt_rc_full_share(const struct mt_config *cfg, double chunk)
{
	if (cfg->recompute != MT_RC_FULL || chunk <= 0)
		return 0;
	if (cfg->recompute_method == MT_RC_UNIFORM)
		return 1;
	return fmin(cfg->recompute_layers, chunk) / chunk;
}

double mt_rc_ckpt_share(const struct mt_config *cfg, double chunk)
{
	if (cfg->recompute != MT_RC_FULL || chunk <= 0)
		return 0;
	if (cfg->recompute_method == MT_RC_UNIFORM && cfg->recompute_layers > 0)
		return fmin(ceil(chunk / cfg->recompute_layers - 1e-9), chunk) / chunk;
	return mt_rc_full_share(cfg, chunk);
}

double mt_rc_group_layers(const struct mt_config *cfg, double chunk)
{
	if (cfg->recompute != MT_RC_FULL || chunk <= 0)
		return 0;
	if (cfg->recompute_method == MT_RC_UNIFORM && cfg->recompute_layers > 0)
		return fmax(1, fmin(cfg->recompute_layers, chunk));
	return 1;
}

const char *mt_rc_full_words(int method, int layers, char *buf, size_t cap)
{
	if (method == MT_RC_UNIFORM)
		snprintf(buf, cap, "every layer, in groups of %d", layers);
	else if (layers >= MT_ALL_LAYERS)
		snprintf(buf, cap, "every layer of each model chunk");
	else
		snprintf(buf, cap, "%d layer%s per model chunk", layers, layers == 1 ? "" : "s");
	return buf;
}
