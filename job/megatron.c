/* SPDX-License-Identifier: MIT */
/* megatron: Megatron-LM arguments into knobs (megatron.h). */
#include "megatron.h"

#include <string.h>

#include "../lib/num.h"
#include "../tuner/dispatch.h"
#include "../tuner/layout.h"
#include "../tuner/recompute.h"
#include "knobs.h"

/* The argument named `flag`, or NULL. */
static const struct mt_kv *find(const struct mt_kv *kv, int n, const char *flag)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(kv[i].key, flag))
			return &kv[i];
	return NULL;
}

/* What Megatron-LM runs without the knob's flag. */
static long long absent(int k)
{
	switch (mt_knobs[k].type) {
	case MT_KT_INT:
		return mt_knobs[k].group == MT_KG_GENERIC ? MT_UNSET : mt_knobs[k].lo > 0 ? 1 : 0;
	case MT_KT_GRAD_DTYPE:
		return 1; /* no --grad-reduce-in-bf16: FP32 */
	case MT_KT_CP_COMM:
		return MT_CP_P2P;
	case MT_KT_RECOMPUTE:
		return MT_RC_NONE;
	case MT_KT_DISPATCHER:
		return MT_DISPATCH_ALLTOALL;
	case MT_KT_FSDP:
		return MT_FSDP_OFF;
	case MT_KT_LAYERS:
		return 0;
	default:
		return mt_knobs[k].group == MT_KG_GENERIC ? MT_UNSET : 0;
	}
}

static int bad(struct mt_error *err, const char *flag, const char *want, const char *got)
{
	return mt_error_set(err, MT_EINVAL, "--%s: expected %s, got '%s'", flag, want, got);
}

/* One knob from its flag; the knobs whose flags differ from their field are
 * read here, side by side with job/flags.c, which writes them. */
static int read_knob(const struct mt_kv *kv, int n, int k, struct mt_config *c,
		     struct mt_error *err)
{
	const struct mt_knob *kn = &mt_knobs[k];
	char flag[96], want[160];
	const struct mt_kv *a;
	long long v = absent(k);
	int x;

	mt_knob_flag(k, flag, sizeof(flag));
	a = find(kv, n, flag);
	switch (k) {
	case MT_KNOB_GRAD_FP32: /* --grad-reduce-in-bf16 */
		v = !a;
		break;
	case MT_KNOB_FSDP:
		v = a ? MT_FSDP_MEGATRON : find(kv, n, "use-torch-fsdp2") ? MT_FSDP_TORCH : MT_FSDP_OFF;
		break;
	case MT_KNOB_CUDA_GRAPH: /* --cuda-graph-impl transformer_engine */
		v = a && !strcmp(a->val, "transformer_engine");
		break;
	case MT_KNOB_P2P_OVERLAP: /* --no-overlap-p2p-communication */
		c->p2p_blocking = find(kv, n, "no-overlap-p2p-communication") != NULL;
		return MT_OK;
	default:
		if (!a)
			break;
		if (kn->type == MT_KT_ONOFF) {
			v = 1;
			break;
		}
		if (mt_knob_parse(k, a->val, &x, want, sizeof(want)))
			return bad(err, flag, want, a->val);
		v = x;
		break;
	}
	mt_knob_set_cfg(c, k, v);
	return MT_OK;
}

int mt_megatron_read(const struct mt_kv *kv, int n, struct mt_config *c, struct mt_error *err)
{
	const struct mt_kv *a;
	int k, rc;

	for (k = 0; k < MT_KNOB_N; k++)
		if (mt_knobs[k].cfg >= 0 || k == MT_KNOB_P2P_OVERLAP)
			if ((rc = read_knob(kv, n, k, c, err)))
				return rc;
	/* a layout gives VPP itself (job/flags.c prints one or the other) */
	if ((a = find(kv, n, "pipeline-model-parallel-layout"))) {
		struct mt_layout l;

		if (mt_layout_parse(a->val, &l, err))
			return MT_EINVAL;
		c->split = MT_SPLIT_LAYOUT;
		if (c->pp > 0 && l.n % c->pp == 0)
			c->vpp = l.n / c->pp;
	}
	/* --recompute-method block --recompute-num-layers N: full recompute only */
	if (c->recompute != MT_RC_FULL)
		c->recompute_layers = 0;
	/* --recompute-modules: selective only; without it, core_attn */
	if (c->recompute != MT_RC_SELECTIVE)
		c->recompute_modules = 0;
	else if (c->recompute_modules <= 0)
		c->recompute_modules = MT_RCM_DEFAULT;
	return MT_OK;
}
