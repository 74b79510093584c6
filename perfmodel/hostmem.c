/* SPDX-License-Identifier: MIT */
/* hostmem: host memory per rank and node, optimizer CPU offload time
 * (docs/MODEL.md 4.10). */
#include "hostmem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "constants.h"
#include "model.h"
#include "perf.h"
#include "recompute.h"

static const char *const om_names[MT_OM_N] = {
	"attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm", "expert_fc1", "moe_act",
};

const char *mt_offload_module_name(int m)
{
	return m >= 0 && m < MT_OM_N ? om_names[m] : "?";
}

int mt_offload_modules_parse(const char *s, unsigned *bits, char *bad, size_t cap)
{
	char buf[256], *tok, *save = NULL;
	int i;

	*bits = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		for (i = 0; i < MT_OM_N && strcmp(tok, om_names[i]); i++)
			;
		if (i == MT_OM_N) {
			snprintf(bad, cap, "%s", tok);
			return -1;
		}
		*bits |= 1u << i;
	}
	if (!*bits) {
		snprintf(bad, cap, "%s", s);
		return -1;
	}
	return 0;
}

double mt_host_capacity(const struct mt_cluster *c)
{
	return c->host_memory_bytes > 0 ? MT_HOST_USABLE * c->host_memory_bytes : 0;
}

/* Bytes of activations offloaded by one model chunk for one micro-batch (the
 * share of chunk_act() in memory.c that goes to the host). */
static double offloaded(const struct mt_costs *a, const struct mt_plan *b,
			const struct mt_config *cfg, int st)
{
	double layers = b->nl[st][0] + b->nl[st][1], chunk, f_rc, f_off, out = 0;
	const unsigned mods = mt_rc_mods(cfg);
	int k;

	if (cfg->offload_layers <= 0 || layers <= 0)
		return 0;
	chunk = layers / b->vpp;
	f_rc = mt_rc_full_share(cfg, chunk);
	f_off = fmin(cfg->offload_layers, chunk * (1 - f_rc)) / chunk;
	for (k = 0; k < MT_L_N; k++)
		out += b->nl[st][k] / (double)b->vpp * f_off *
		       fmax(0, mt_act_kept(a, k, mods) - a->act_fine[k]);
	return out;
}

/* ... and by fine-grained offload: the named modules' inputs that stay
 * after recomputation, at most what the layer keeps (memory.c) */
static double fine_offloaded(const struct mt_costs *a, const struct mt_plan *b,
			     const struct mt_config *cfg, int st)
{
	const unsigned mods = mt_rc_mods(cfg);
	double out = 0;
	int k;

	for (k = 0; k < MT_L_N; k++)
		out += b->nl[st][k] / (double)b->vpp * fmin(a->act_fine[k], mt_act_kept(a, k, mods));
	return out;
}

void mt_hostmem(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
		const struct mt_config *cfg, struct mt_mem *mem)
{
	const struct mt_job *j = x->job;
	int st = mem->stage, r, ranks;
	double act, opt = 0;

	/* activations: the offloaded layers of every micro-batch in flight, in
	 * pinned host tensors */
	act = mt_inflight(b->pp, b->vpp, b->num_mb, st) *
	      (offloaded(a, b, cfg, st) + fine_offloaded(a, b, cfg, st));
	/* optimizer states: the offloaded share of this rank's shard */
	if (j->opt_offload > 0) {
		double pd, pe, pq;

		r = 0;
		while (r < b->nrep && b->rep[r] != st)
			r++;
		if (r < b->nrep) { /* the plan has them */
			pd = b->par_dense[r];
			pe = b->par_exp[r];
		} else {
			pd = mt_stage_params(x, a, b, st, &pe, &pq);
		}
		opt = j->opt_offload * MT_OPT_HOST_BYTES *
		      (pd / (cfg->dist_opt ? (double)b->dp * a->cp : 1) +
		       pe / (cfg->dist_opt ? (double)b->edp : 1));
	}
	ranks = x->cluster->gpus_per_node < j->gpus ? x->cluster->gpus_per_node : j->gpus;
	mem->host_per_gpu = act + opt + MT_HOST_RANK_BYTES;
	mem->host_per_node = ranks * mem->host_per_gpu;
}

double mt_opt_offload_time(const struct mt_ctx *x, double opt_params)
{
	const struct mt_cluster *c = x->cluster;
	const struct mt_job *j = x->job;
	double n, ranks, gpps, d2h, h2d;

	if (j->opt_offload <= 0 || opt_params <= 0)
		return 0;
	n = j->opt_offload * opt_params;
	ranks = c->gpus_per_node < j->gpus ? c->gpus_per_node : j->gpus;
	/* measured, else what the host's measured memory bandwidth allows (Adam
	 * on the host is memory-bound), else the estimate */
	gpps = c->optimizer_gparams_per_s > 0 ? c->optimizer_gparams_per_s
	       : c->host_memory_gbps > 0      ? c->host_memory_gbps / MT_HOST_ADAM_BYTES
					      : MT_HOST_ADAM_GPARAMS;
	d2h = mt_offload_gbps(c, MT_OFF_D2H) * 1e9;
	h2d = mt_offload_gbps(c, MT_OFF_H2D) * 1e9;
	/* FP32 gradients down, BF16 parameters up; Adam on the node's CPUs,
	 * which its ranks share */
	return 4 * n / d2h + n * ranks / (gpps * 1e9) + 2 * n / h2d;
}

#define FINE_CITE "Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py"

int mt_offload_modules_check(const struct mt_model *m, const struct mt_job *j,
			     struct mt_error *err)
{
	unsigned b = j->offload_modules;

	if (!b)
		return MT_OK;
	if (j->pins.offload_layers != MT_UNSET && j->pins.offload_layers > 0)
		return mt_error_set(err, MT_EINVAL,
				    "--offload-modules: fine-grained activation offload cannot run with "
				    "--offload-layers (" FINE_CITE ":2128 asserts: "
				    "fine_grained_activation_offloading cannot be enabled with "
				    "cpu_offloading)");
	if ((b & (1u << MT_OM_ATTN_PROJ)) && !(b & (1u << MT_OM_CORE_ATTN)))
		return mt_error_set(err, MT_EINVAL,
				    "--offload-modules: attn_proj needs core_attn as well (" FINE_CITE
				    ":2149 raises: attn_proj cannot be set to offload_modules alone without "
				    "core_attn)");
	if ((b & ((1u << MT_OM_EXPERT_FC1) | (1u << MT_OM_MOE_ACT))) && !m->experts)
		return mt_error_set(err, MT_EINVAL,
				    "--offload-modules: expert_fc1 and moe_act offload the experts' "
				    "inputs, and model '%s' has no experts", m->name);
	if (j->pins.cuda_graph == 1)
		return mt_error_set(err, MT_EINVAL,
				    "--offload-modules with --cuda-graphs on: Megatron-LM offloads inside "
				    "per-layer graphs only with delay_offload_until_cuda_graph, which "
				    "megatune does not model; drop one of them");
	return MT_OK;
}

int mt_hostmem_check(const struct mt_job *j, struct mt_error *err)
{
	if (j->opt_offload > 0 && j->pins.dist_opt == 0)
		return mt_error_set(err, MT_EINVAL,
				    "--optimizer-cpu-offload %g: needs the distributed optimizer, not "
				    "--dist-opt off (it runs with --use-precision-aware-optimizer, and "
				    "Megatron-LM d98e8a6 megatron/core/optimizer/__init__.py:1057 raises: "
				    "--use-precision-aware-optimizer only supported with distributed "
				    "optimizer)", j->opt_offload);
	if (j->opt_offload > 0 && j->param_gather_q == 1 && j->precision == MT_PREC_FP8 &&
	    j->fp8_recipe != MT_FP8_DELAYED)
		return mt_error_set(err, MT_EINVAL,
				    "--optimizer-cpu-offload with --fp8-param-gather on needs "
				    "--fp8-recipe delayed (Megatron-LM d98e8a6 "
				    "megatron/training/arguments.py:1889 asserts: When `--fp8-param-gather` "
				    "is enabled, the optimizer cpu offload must be used in conjunction with "
				    "`--fp8-recipe delayed`)");
	return MT_OK;
}
