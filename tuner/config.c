/* SPDX-License-Identifier: MIT */
/* config: defaults and names of the knobs. */
#include "config.h"

#include <string.h>

#include "cluster.h"

void mt_pins_init(struct mt_pins *p)
{
	p->tp = p->pp = p->vpp = p->cp = p->ep = p->etp = p->mbs = MT_UNSET;
	p->recompute = p->recompute_layers = p->cp_comm = p->dist_opt = MT_UNSET;
	p->offload_layers = p->sp = MT_UNSET;
	p->tp_overlap = p->overlap_grad = p->overlap_param = p->fused_ce = p->grad_fp32 = MT_UNSET;
	p->bucket = MT_UNSET;
}

void mt_job_init(struct mt_job *j)
{
	memset(j, 0, sizeof(*j));
	j->precision = MT_PREC_BF16;
	j->attn_impl = MT_ATTN_FLASH;
	j->mem_headroom = 0.05;
	j->top_k = 5;
	mt_pins_init(&j->pins);
}

static const char *const rc_names[MT_RC_N] = { "none", "selective", "full" };
static const char *const cp_names[MT_CP_N] = { "p2p", "all_gather", "a2a", "a2a+p2p" };

const char *mt_recompute_name(int rc)
{
	return rc >= 0 && rc < MT_RC_N ? rc_names[rc] : "?";
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

const char *mt_precision_name(int p)
{
	return p == MT_PREC_FP8 ? "fp8" : "bf16";
}

int mt_precision_parse(const char *s)
{
	if (!strcmp(s, "bf16"))
		return MT_PREC_BF16;
	if (!strcmp(s, "fp8"))
		return MT_PREC_FP8;
	return -1;
}

const char *mt_fp8_recipe_name(int r)
{
	return r == MT_FP8_TENSORWISE ? "tensorwise" : "delayed";
}

int mt_fp8_recipe_parse(const char *s)
{
	if (!strcmp(s, "delayed"))
		return MT_FP8_DELAYED;
	if (!strcmp(s, "tensorwise"))
		return MT_FP8_TENSORWISE;
	return -1;
}
