/* SPDX-License-Identifier: MIT */
/* optim: the precision-aware optimizer's states, bytes and checks (optim.h). */
#include "optim.h"

#include <string.h>

#include "constants.h"
#include "precision.h"

static const char *const od_names[MT_OD_N] = { "fp32", "fp16", "bf16", "fp8" };
/* torch's names: as validate_args maps the flags (arguments.py @ d98e8a64dd
 * lines 1077-1085: fp8 is torch.uint8) and as Megatron-Bridge writes them */
static const char *const od_torch[MT_OD_N] = { "float32", "float16", "bfloat16", "uint8" };

const char *mt_opt_dtype_name(int d)
{
	return d >= 0 && d < MT_OD_N ? od_names[d] : "?";
}

int mt_opt_dtype_parse(const char *s)
{
	int i;

	if (!strncmp(s, "torch.", 6))
		s += 6;
	for (i = 0; i < MT_OD_N; i++)
		if (!strcmp(s, od_names[i]) || !strcmp(s, od_torch[i]))
			return i;
	return -1;
}

double mt_opt_dtype_bytes(int d)
{
	return d == MT_OD_FP8 ? 1 : d == MT_OD_FP32 ? 4 : 2;
}

int mt_prec_opt_default(const struct mt_job *job)
{
	const struct mt_pins *p = &job->pins;

	if (p->prec_opt != MT_UNSET)
		return p->prec_opt;
	return job->opt_offload > 0 ||
	       (p->exp_avg != MT_UNSET && p->exp_avg != MT_OD_FP32) ||
	       (p->exp_avg_sq != MT_UNSET && p->exp_avg_sq != MT_OD_FP32) ||
	       (p->main_params != MT_UNSET && p->main_params != MT_OD_FP32);
}

void mt_config_prec_opt(const struct mt_job *job, struct mt_config *cfg, int on)
{
	const struct mt_pins *p = &job->pins;

	cfg->prec_opt = on;
	cfg->exp_avg = cfg->exp_avg_sq = cfg->main_params = MT_OD_FP32;
	if (!on || job->opt_offload > 0)
		return;
	cfg->exp_avg = p->exp_avg != MT_UNSET ? p->exp_avg : MT_OD_MOMENT_DEFAULT;
	cfg->exp_avg_sq = p->exp_avg_sq != MT_UNSET ? p->exp_avg_sq : MT_OD_MOMENT_DEFAULT;
	cfg->main_params = p->main_params != MT_UNSET ? p->main_params : MT_OD_MASTER_DEFAULT;
}

/* Transformer Engine holds the master weights (FusedAdam master_weights):
 * use_precision_aware_optimizer_no_fp8_or_ds_fp8 (optimizer_config.py @
 * d98e8a64dd lines 407-414); else Megatron-Core keeps them in FP32 */
static int te_master(const struct mt_job *j, const struct mt_config *c)
{
	return c->main_params != MT_OD_FP32 || j->precision != MT_PREC_FP8 ||
	       j->fp8_recipe == MT_FP8_DELAYED;
}

/* Bytes of a master weight: FP16, or FP32 as its 16-bit remainder beside a
 * BF16 weight (FusedAdam store_param_remainders: a BF16 parameter only, not
 * a quantised one), else FP32 */
static double master_bytes(const struct mt_job *j, const struct mt_config *c, int dp)
{
	int quantised = mt_param_gather_q(j, c->dist_opt) && dp > 1;

	if (!c->prec_opt || j->opt_offload > 0)
		return 4;
	if (c->main_params == MT_OD_FP16)
		return 2;
	return te_master(j, c) && !quantised ? 2 : 4;
}

double mt_opt_state_bytes(const struct mt_job *j, const struct mt_config *c, int dp)
{
	if (!c->prec_opt || j->opt_offload > 0)
		return 12;
	return master_bytes(j, c, dp) + mt_opt_dtype_bytes(c->exp_avg) +
	       mt_opt_dtype_bytes(c->exp_avg_sq);
}

double mt_opt_step_copy_bytes(const struct mt_job *j, const struct mt_config *c)
{
	if (!c->prec_opt || j->opt_offload > 0)
		return 0;
	return 4.0 * ((c->exp_avg != MT_OD_FP32) + (c->exp_avg_sq != MT_OD_FP32) +
		      (c->main_params == MT_OD_FP16));
}

static double state_moved(int d)
{
	return d == MT_OD_BF16 ? MT_ADAM_STATE_BF16 : d == MT_OD_FP16 ? MT_ADAM_STATE_FP16
	       : d == MT_OD_FP8 ? MT_ADAM_STATE_FP8 : MT_ADAM_STATE_FP32;
}

double mt_opt_step_moved_bytes(const struct mt_job *j, const struct mt_config *c, int dp)
{
	double master;

	if (!c->prec_opt || j->opt_offload > 0)
		return MT_ADAM_BYTES_PER_PARAM;
	master = c->main_params == MT_OD_FP16 ? MT_ADAM_STATE_FP16
		 : master_bytes(j, c, dp) == 2 ? MT_ADAM_REMAINDER : MT_ADAM_STATE_FP32;
	return MT_ADAM_GRAD_PASSES * (c->grad_fp32 ? 4 : 2) + master + state_moved(c->exp_avg) +
	       state_moved(c->exp_avg_sq) + MT_ADAM_PARAM_WRITE;
}

/* A dtype pinned below FP32, by its flag, or NULL */
static const char *low_pin(const struct mt_pins *p)
{
	return p->exp_avg != MT_UNSET && p->exp_avg != MT_OD_FP32 ? "--exp-avg-dtype"
	       : p->exp_avg_sq != MT_UNSET && p->exp_avg_sq != MT_OD_FP32 ? "--exp-avg-sq-dtype"
	       : p->main_params != MT_UNSET && p->main_params != MT_OD_FP32 ? "--main-params-dtype"
	       : NULL;
}

int mt_prec_opt_check(const struct mt_job *j, struct mt_error *err)
{
	const struct mt_pins *p = &j->pins;
	const char *low = low_pin(p);

	if (p->prec_opt == 0 && low)
		return mt_error_set(err, MT_EUSAGE, "%s below fp32 with --precision-aware-optimizer "
				    "off: Megatron-LM d98e8a6 megatron/core/optimizer/"
				    "optimizer_config.py:468-480 asserts the states are fp32 when not "
				    "using precision-aware optimizer", low);
	if (p->prec_opt == 0 && j->opt_offload > 0)
		return mt_error_set(err, MT_EUSAGE, "--optimizer-cpu-offload with "
				    "--precision-aware-optimizer off: Megatron-LM d98e8a6 "
				    "megatron/training/arguments.py:1885 asserts: The optimizer cpu "
				    "offload must be used in conjunction with "
				    "`--use-precision-aware-optimizer`");
	if (low && j->opt_offload > 0)
		return mt_error_set(err, MT_EUSAGE, "%s with --optimizer-cpu-offload: the hybrid "
				    "device optimizer keeps its states in FP32 whatever the dtypes "
				    "(Megatron-LM d98e8a6 megatron/core/optimizer/__init__.py:504-545 "
				    "builds it without them)", low);
	if (mt_prec_opt_default(j) && p->dist_opt == 0)
		return mt_error_set(err, MT_EUSAGE, "--precision-aware-optimizer with --dist-opt "
				    "off: Megatron-LM d98e8a6 megatron/core/optimizer/__init__.py:1057 "
				    "raises: --use-precision-aware-optimizer only supported with "
				    "distributed optimizer");
	if (mt_prec_opt_default(j) && p->fsdp != MT_UNSET && p->fsdp != MT_FSDP_OFF)
		return mt_error_set(err, MT_EUSAGE, "--precision-aware-optimizer with --fsdp %s: %s",
				    p->fsdp == MT_FSDP_TORCH ? "torch" : "megatron", p->fsdp == MT_FSDP_TORCH
				    ? "PyTorch FSDP2 runs without the distributed optimizer, which it "
				      "needs (Megatron-LM d98e8a6 megatron/core/optimizer/__init__.py:1057)"
				    : "Megatron-FSDP keeps its states in the dtypes of "
				      "--megatron-fsdp-main-params-dtype and --megatron-fsdp-main-grads-"
				      "dtype, which megatune does not model");
	return MT_OK;
}
