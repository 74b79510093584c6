/* SPDX-License-Identifier: MIT */
/* effects: the published A/B pairs behind the gains of settings
 * (effects.h, docs/MODEL.md 8.2).  Each row is a pair of
 * tests/fixtures/published/effects.json, whose `source` and `verified`
 * fields cite it; t-effects fails when a row here and its pair disagree. */
#include "effects.h"

#include <math.h>
#include <stddef.h>

#include "constants.h"
#include "dispatch.h"

static const struct mt_effect rows[] = {
	{ "zoo-qwen3-235b-ep-overlap", MT_EF_EP_OVERLAP, 9, MT_DISPATCH_FLEX, MT_FLEX_DEEPEP, 1,
	  276.0 / 245.0, 1.081,
	  "1F1B EP overlap off -> on: Qwen3-235B-A22B on 256 H100, DeepEP across nodes, TP2 PP8 "
	  "VPP4 EP32 (Megatron-MoE-ModelZoo)" },
	{ "gb200-dsv3-deepep", MT_EF_DISPATCHER, 10, MT_DISPATCH_FLEX, MT_FLEX_DEEPEP, 0,
	  566.07 / 540.00, 0.925,
	  "all-to-all -> DeepEP: DeepSeek-V3 on 256 GB200, EP32 inside the NVLink domain (NVIDIA's "
	  "GB200 optimisation history)" },
	{ "gb200-dsv3-hybridep", MT_EF_FLEX_BACKEND, 10, MT_DISPATCH_FLEX, MT_FLEX_HYBRIDEP, 0,
	  943.56 / 829.93, 1.157,
	  "DeepEP -> HybridEP: DeepSeek-V3 on 256 GB200, EP32 inside the NVLink domain (NVIDIA's "
	  "GB200 optimisation history)" },
	{ "gb200-dsv3-cuda-graphs", MT_EF_CUDA_GRAPHS, 10, MT_DISPATCH_FLEX, -1, 0,
	  663.27 / 610.71, 1.000,
	  "per-layer CUDA graphs off -> attn, moe_router, moe_preprocess: DeepSeek-V3 on 256 GB200, "
	  "dropless (NVIDIA's GB200 optimisation history)" },
	{ "gb200-dsv3-no-up-proj-recompute", MT_EF_RECOMPUTE, 10, -1, -1, -1, 610.71 / 566.07, 1.006,
	  "recompute of mla_up_proj off (moe_act instead): DeepSeek-V3 on 256 GB200 (NVIDIA's GB200 "
	  "optimisation history)" },
	{ "bridge-llama3-8b-mxfp8-b200", MT_EF_FP8_RECIPE, 10, -1, -1, -1, 29521.0 / 30624.0, 0.981,
	  "FP8 tensorwise -> MXFP8: Llama3 8B on 8 B200 (Megatron-Bridge, NeMo 25.11)" },
	{ "bridge-dsv3-blockwise-h100", MT_EF_FP8_RECIPE, 9, -1, -1, -1, 330.0 / 338.0, 0.975,
	  "FP8 tensorwise -> block-wise: DeepSeek-V3 on 1024 H100 (Megatron-Bridge, NeMo 25.09)" },
	{ "zoo-qwen3-235b-dropless-16k", MT_EF_MOE_BALANCE, 9, MT_DISPATCH_FLEX, -1, 0,
	  237.0 / 295.0, 0.789,
	  "forced balance -> dropless routing of a released router: Qwen3-235B-A22B on 256 H100, "
	  "16k tokens (Megatron-MoE-ModelZoo)" },
	{ "bridge-qwen3-30b-b200-to-gb200", MT_EF_HOST, 10, -1, -1, -1, 26112.0 / 27136.0, 1.000,
	  "DGX B200 -> GB200 (x86 -> Grace host): Qwen3-30B-A3B on 8 GPUs, HybridEP "
	  "(Megatron-Bridge, NeMo 26.04.01)" },
};

const struct mt_effect *mt_effect_rows(int *n)
{
	*n = (int)(sizeof(rows) / sizeof(rows[0]));
	return rows;
}

double mt_effect_u(const struct mt_effect *e)
{
	return fmax(MT_EFFECT_NOISE_FLOOR, fabs(e->predicted / e->published - 1));
}

const struct mt_effect *mt_effect_find(int setting, const struct mt_cluster *c,
					   const struct mt_config *cfg)
{
	int gen = c->compute_capability >= 10 ? 10 : 9, across;
	size_t i;

	if (c->compute_capability > 0 && c->compute_capability < 9)
		return NULL;
	across = cfg->ep > 1 && mt_group_per_domain(c, cfg->ep, cfg->tp) < cfg->ep;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct mt_effect *e = &rows[i];

		if (e->setting != setting || e->gen != gen)
			continue;
		if (e->dispatcher >= 0 && cfg->ep * cfg->etp > 1 && e->dispatcher != cfg->dispatcher)
			continue;
		if (e->backend >= 0 && cfg->dispatcher == MT_DISPATCH_FLEX &&
		    e->backend != cfg->flex_backend)
			continue;
		if (e->across >= 0 && cfg->ep > 1 && e->across != across)
			continue;
		return e;
	}
	return NULL;
}
