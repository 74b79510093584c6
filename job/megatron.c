/* SPDX-License-Identifier: MIT */
/* megatron: Megatron-LM arguments into knobs, and what each flag is to megatune
 * (megatron.h); a whole job from its arguments is megatron_job.c. */
#include "megatron.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../lib/near.h"
#include "../lib/num.h"
#include "../perfmodel/dispatch.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/eager.h"
#include "../perfmodel/hostmem.h"
#include "../perfmodel/layout.h"
#include "../perfmodel/optim.h"
#include "../perfmodel/recompute.h"
#include "flagtable.h"
#include "knobs.h"
#include "megatron_tables.h"

/* The argument named `flag`, or NULL. */
static const struct mt_kv *megatron_find(const struct mt_kv *kv, int n, const char *flag)
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
		if (mt_knobs[k].group == MT_KG_GENERIC)
			return MT_UNSET;
		if (mt_knobs[k].dflt >= 0) /* the bucket: 0, Megatron-LM's own size */
			return mt_knobs[k].dflt;
		return mt_knobs[k].lo > 0 ? 1 : 0;
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

static int megatron_bad(struct mt_error *err, const char *flag, const char *want, const char *got)
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
	a = megatron_find(kv, n, flag);
	switch (k) {
	case MT_KNOB_GRAD_FP32: /* --grad-reduce-in-bf16, or --main-grads-dtype bf16, which
				 * leaves accumulate_allreduce_grads_in_fp32 off (arguments.py @
				 * d98e8a64dd lines 1213-1216) */
		v = !a && !((a = megatron_find(kv, n, "main-grads-dtype")) &&
			    mt_opt_dtype_parse(a->val) == MT_OD_BF16);
		break;
	case MT_KNOB_FSDP:
		v = a ? MT_FSDP_MEGATRON : megatron_find(kv, n, "use-torch-fsdp2") ? MT_FSDP_TORCH : MT_FSDP_OFF;
		break;
	case MT_KNOB_RANK_BUDGET: /* --moe-expert-rank-capacity-factor F (the factor: mt_job_read) */
		v = a != NULL;
		break;
	case MT_KNOB_FULL_GRAPH: /* --cuda-graph-impl full_iteration, or local with
				  * --cuda-graph-scope full_iteration (core_v0.16/0.17) */
		v = a && (!strcmp(a->val, "full_iteration") ||
			  (!strcmp(a->val, "local") && megatron_find(kv, n, "cuda-graph-scope") &&
			   strstr(megatron_find(kv, n, "cuda-graph-scope")->val, "full_iteration")));
		break;
	case MT_KNOB_CUDA_GRAPH: /* --cuda-graph-impl transformer_engine */
		v = a && !strcmp(a->val, "transformer_engine");
		break;
	case MT_KNOB_P2P_OVERLAP: /* --no-overlap-p2p-communication */
		c->p2p_blocking = megatron_find(kv, n, "no-overlap-p2p-communication") != NULL;
		return MT_OK;
	default:
		if (!a)
			break;
		if (kn->type == MT_KT_ONOFF) {
			v = 1;
			break;
		}
		if (mt_knob_parse(k, a->val, &x, want, sizeof(want)))
			return megatron_bad(err, flag, want, a->val);
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
	if ((a = megatron_find(kv, n, "pipeline-model-parallel-layout"))) {
		struct mt_layout l;

		if (mt_layout_parse(a->val, &l, err)) {
			char msg[sizeof(err->msg)];

			snprintf(msg, sizeof(msg), "%s", err->msg);
			return mt_error_set(err, MT_EINVAL, "--pipeline-model-parallel-layout: '%s': %s%s",
					    a->val, msg, strchr(a->val, '|') || !strchr(a->val, 'L') ?
					    " (in a script or a file of arguments quote the layout: "
					    "an unquoted '|' ends a shell command)" : "");
		}
		c->split = MT_SPLIT_LAYOUT;
		if (c->pp > 0 && l.n % c->pp == 0)
			c->vpp = l.n / c->pp;
	}
	/* --recompute-method block|uniform --recompute-num-layers N: full recompute only */
	if (c->recompute != MT_RC_FULL) {
		c->recompute_layers = 0;
		c->recompute_method = MT_RC_BLOCK;
	}
	/* the dtypes of the optimizer's states: the precision-aware optimizer's
	 * alone (optimizer_config.py @ d98e8a64dd lines 468-480 assert fp32
	 * without it) */
	if (!c->prec_opt)
		c->exp_avg = c->exp_avg_sq = c->main_params = MT_OD_FP32;
	/* --recompute-modules: selective only; without it, core_attn */
	if (c->recompute != MT_RC_SELECTIVE)
		c->recompute_modules = 0;
	else if (c->recompute_modules <= 0)
		c->recompute_modules = MT_RCM_DEFAULT;
	return MT_OK;
}

/* ---- what a flag is to megatune, and the typos of a job ---- */

/* The other flags the readers take (the model's RoPE, the job, the
 * configuration beyond the knob table). */
static const char *const read_flags[] = {
	"group-query-attention", "num-query-groups", "disable-bias-linear", "moe-layer-freq",
	"position-embedding-type", "use-rope-scaling", "rope-scaling-factor", "rope-type",
	"rotary-scaling-factor", "mscale", "mscale-all-dim", "yarn-original-max-position-embeddings",
	"yarn-beta-fast", "yarn-beta-slow", "rotary-seq-len-interpolation-factor",
	"moe-router-load-balancing-type", "tokenizer-type", "vocab-size", "seq-length", "encoder-seq-length",
	"global-batch-size", "bf16", "fp16", "fp8-format", "fp8-recipe", "fp4-format", "fp4-recipe",
	"fp4-param-gather", "fp8-param-gather", "reuse-grad-buf-for-mxfp8-param-ag",
	"attention-backend", "moe-router-force-load-balancing",
	"moe-expert-capacity-factor", "moe-pad-expert-input-to-capacity", "use-transformer-engine-op-fuser",
	"no-check-for-nan-in-loss-and-grad",
	"moe-flex-dispatcher-backend", "moe-enable-deepep", "optimizer-cpu-offload",
	"optimizer-offload-fraction", "main-grads-dtype",
	"fine-grained-activation-offloading", "offload-modules", "pipeline-model-parallel-layout",
	"account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split",
	"decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers",
	"hierarchical-context-parallel-sizes", "moe-shared-expert-overlap", "delay-wgrad-compute",
	"data-parallel-sharding-strategy", "use-torch-fsdp2", "no-overlap-p2p-communication",
	"recompute-method", "cuda-graph-modules", "cuda-graph-scope", "num-layers-per-virtual-pipeline-stage",
	"virtual-pipeline-model-parallel-size", "moe-grouped-gemm", "use-mcore-models",
	"transformer-impl", "micro-batch-size", "moe-permute-fusion", "no-gradient-accumulation-fusion",
	"model-name", /* LoongForge's model, as --model (job/loongforge.h) */
	"cross-entropy-fusion-impl", "offload-tensors", "attention-softmax-in-fp32",
	"apply-query-key-layer-scaling", "defer-embedding-wgrad-compute", "wgrad-deferral-limit",
	"num-distributed-optimizer-instances",
	NULL,
};

/* Flags that do not change the step time megatune predicts: data, paths,
 * the optimizer's hyperparameters, logging, checkpointing, evaluation. */
static const char *const not_timed[] = {
	"lr", "min-lr", "lr-", "weight-decay", "adam-", "clip-grad", "init-method-std", "seed",
	"train-iters", "train-samples", "save", "load", "data-", "split", "log-", "eval-",
	"tensorboard", "wandb-", "vocab-file", "merge-file", "tokenizer-model", "exit-",
	"distributed-backend", "ckpt-", "timing-log", "no-load-", "dataloader-type", "num-workers",
	"mock-data", "use-checkpoint", "finetune", "override-opt", "no-save-", "sgd-momentum",
	"loss-scale", "initial-loss-scale", "min-loss-scale", "hysteresis",
	"use-flash-attn", "no-persist-layer-norm", "profile", "use-pytorch-profiler",
	"rerun-", "check-for-", "no-check-for-", "manual-gc", "manual-gc-", "dist-ckpt", "use-dist-ckpt",
	"async-save", "auto-detect-ckpt-format", "make-vocab-size-divisible-by",
	"reset-", "eod-mask-loss", "per-split-data-args-path", "blend", "valid-", "test-",
	"train-data-path", "object-storage", "optimizer", "calculate-per-token-loss",
	"log-throughput", "disable-gloo-process-groups", "no-create-attention-mask-in-dataloader",
	"no-mmap-bin-files", "num-dataset-builder-threads", "legacy-tokenizer", "trust-remote-code",
	"decrease-batch-size-if-needed", "training-phase", NULL,
};

static int flag_in(const char *flag, const char *const *list, int prefix)
{
	size_t l;

	for (; *list; list++) {
		l = strlen(*list);
		if (!strcmp(flag, *list) || (prefix && (*list)[l - 1] == '-' && !strncmp(flag, *list, l)))
			return 1;
	}
	return 0;
}

int mt_megatron_flag_class(const char *flag)
{
	char f[96];
	size_t i, k;

	for (k = 0; k < sizeof(model_keys) / sizeof(model_keys[0]); k++) {
		snprintf(f, sizeof(f), "%s", model_keys[k].key);
		for (i = 0; f[i]; i++)
			if (f[i] == '_')
				f[i] = '-';
		if (!strcmp(f, flag))
			return MT_FC_READ;
	}
	if (flag_in(flag, read_flags, 0))
		return MT_FC_READ;
	for (k = 0; k < MT_KNOB_N; k++)
		if (mt_knobs[k].megatron[0] && !strcmp(mt_knob_flag((int)k, f, sizeof(f)), flag))
			return MT_FC_READ;
	for (k = 0; fusion_bits[k].flag; k++)
		if (!strcmp(flag, fusion_bits[k].flag))
			return MT_FC_FUSION_OFF;
	if (flag_in(flag, not_timed, 1))
		return MT_FC_NOT_TIMED;
	return MT_FC_UNKNOWN;
}

/* The flag megatune reads that `flag` resembles (a typo), into near[cap];
 * 0 when none is within the bound */
static int near_flag(const char *flag, char *near, size_t cap)
{
	struct mt_near nr;
	size_t k, i;

	/* lib/near counts '-' and '_' alike: the fields are offered as they
	 * are, and the match written as a flag */
	mt_near_init(&nr, flag, strlen(flag), -1);
	for (k = 0; k < sizeof(model_keys) / sizeof(model_keys[0]); k++)
		mt_near_try(&nr, model_keys[k].key);
	for (k = 0; read_flags[k]; k++)
		mt_near_try(&nr, read_flags[k]);
	for (k = 0; fusion_bits[k].flag; k++)
		mt_near_try(&nr, fusion_bits[k].flag);
	for (k = 0; k < MT_KNOB_N; k++)
		if (mt_knobs[k].megatron[0])
			mt_near_try(&nr, mt_knobs[k].megatron);
	if (!nr.match)
		return 0;
	snprintf(near, cap, "%s", nr.match);
	for (i = 0; near[i]; i++)
		near[i] = near[i] == '_' ? '-' : near[i];
	return 1;
}

/* Megatron-LM's own flags (d98e8a64dd) that megatune does not model and that
 * resemble one it reads: never a typo */
static const char *const not_typos[] = { "decoder-seq-length", NULL };

void mt_megatron_typos(struct mt_jobsrc *s)
{
	char near[96], written[200], like[200], *q;
	const char *key, *dot;
	int i, o;

	/* the arguments block and Bridge's summary are the program's own words */
	if (s->kind == MT_JS_ARGBLOCK || s->kind == MT_JS_BRIDGE_SUMMARY)
		return;
	for (i = 0; i < s->n; i++) {
		key = s->arg[i].key;
		if (mt_megatron_flag_class(key) != MT_FC_UNKNOWN || flag_in(key, not_typos, 0) ||
		    !near_flag(key, near, sizeof(near)) ||
		    mt_jobsrc_find(s, near) >= 0)
			continue;
		o = s->orig[i];
		if (s->format == MT_JF_MEGATRON || o <= 0 || o > s->nraw) {
			snprintf(written, sizeof(written), "--%s", key);
			snprintf(like, sizeof(like), "--%s", near);
			mt_jobsrc_typo(s, s->line[i], "flag", written, like);
			continue;
		}
		/* a Bridge or verl key: the same path, its last part the field's name */
		snprintf(written, sizeof(written), "%s", s->raw[o - 1].key);
		dot = strrchr(written, '.');
		snprintf(like, sizeof(like), "%.*s%s", dot ? (int)(dot + 1 - written) : 0, written, near);
		for (q = like + (dot ? dot + 1 - written : 0); *q; q++)
			*q = *q == '-' ? '_' : *q;
		mt_jobsrc_typo(s, s->line[i], "key", written, like);
	}
}
