/* SPDX-License-Identifier: MIT */
/* settings: the knobs the search and one evaluation set alike. */
#include "settings.h"

#include "../perfmodel/graphs.h"
#include "../perfmodel/recompute.h"

/* The value of a settable knob: the pin, else a set rule's choice.  Returns
 * 1 with *v when fixed, 0 when the search enumerates it. */
int mt_set_fixed(struct mt_rules_run *r, int f, int pin, int *v)
{
	double d;

	if (pin != MT_UNSET) {
		*v = pin;
		return 1;
	}
	if (r && mt_rules_choose(r, f, &d)) {
		*v = (int)d;
		return 1;
	}
	return 0;
}

/* A setting the search does not enumerate: the pin, a set rule, or dflt. */
int mt_set_knob(struct mt_rules_run *r, int f, int pin, int dflt)
{
	int v;

	return mt_set_fixed(r, f, pin, &v) ? v : dflt;
}

/* The settings of the search and of estimate alike, at their stages (the
 * defaults are mt_config_settings()'s): TP overlap and CE fusion ... */
void mt_set_fusion(struct mt_cfg_facts *cf, const struct mt_pins *p, struct mt_config *cfg)
{
	cfg->tp_overlap = mt_set_knob(cf->r, MT_F_CFG_TP_OVERLAP, p->tp_overlap,
			       mt_tp_overlap_default(cf->x->job));
	cfg->fused_ce = mt_set_knob(cf->r, MT_F_CFG_FUSED_CE, p->fused_ce, 1);
	if (cf->r)
		mt_cfg_facts_stage(cf, MT_ST_FUSION, cfg);
}

/* ... the DP overlaps and gradient precision ... */
void mt_set_dp(struct mt_cfg_facts *cf, const struct mt_pins *p, struct mt_config *cfg)
{
	struct mt_rules_run *r = cf->r;

	cfg->overlap_grad = mt_set_knob(r, MT_F_CFG_OVERLAP_GRAD, p->overlap_grad, 1);
	cfg->overlap_param = mt_set_knob(r, MT_F_CFG_OVERLAP_PARAM, p->overlap_param, cfg->overlap_grad);
	if (cfg->overlap_param && !cfg->overlap_grad) /* Megatron needs both */
		cfg->overlap_param = 0;
	cfg->grad_fp32 = mt_set_knob(r, MT_F_CFG_GRAD_FP32, p->grad_fp32, 1);
	if (r)
		mt_cfg_facts_stage(cf, MT_ST_OVERLAP, cfg);
}

/* ... and the DDP bucket (0: Megatron's default, set by the plan). */
void mt_set_bucket(struct mt_cfg_facts *cf, const struct mt_pins *p, struct mt_config *cfg)
{
	cfg->bucket_params = mt_set_knob(cf->r, MT_F_CFG_BUCKET, p->bucket, 0);
	if (cf->r)
		mt_cfg_facts_stage(cf, MT_ST_BUCKET, cfg);
}

/* CUDA graphs: the pin, else a set rule's choice; never with full
 * recomputation (Megatron-LM d98e8a6 transformer_config.py:2856). */
int mt_set_graph(struct mt_rules_run *r, const struct mt_model *m, const struct mt_job *j,
		 const struct mt_config *cfg)
{
	const struct mt_pins *p = &j->pins;

	if (cfg->recompute == MT_RC_FULL || p->full_graph == 1) /* or one graph of the step */
		return 0;
	/* nor a graphed attention whose recomputation draws dropout masks
	 * (transformer_config.py:2879) */
	if ((mt_rc_mods(cfg) & MT_RCM_DEFAULT) && m->attn_dropout > 0)
		return 0;
	/* nor a graphed MLP or MoE block recomputed with hidden dropout (2886) */
	if ((mt_rc_mods(cfg) & ((1u << MT_RCM_MLP) | (1u << MT_RCM_MOE))) && m->dropout > 0)
		return 0;
	/* nor with the EP overlap, but for the scopes Megatron-LM runs beside
	 * it (the router and the preprocessing: perfmodel/graphs.h; 5.10) */
	if (cfg->ep_overlap && mt_graph_overlap_reason(m, j))
		return 0;
	return mt_set_knob(r, MT_F_CFG_CUDA_GRAPH, p->cuda_graph, 0) ? 1 : 0;
}
