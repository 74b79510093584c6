/* SPDX-License-Identifier: MIT */
/* advise_opts: the options advise and estimate share (advise_opts.h). */
#include "advise_opts.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../job/flagtable.h"
#include "../job/knobs.h"
#include "../lib/num.h"
#include "../perfmodel/eager.h"
#include "../perfmodel/host.h"
#include "../perfmodel/hostmem.h"
#include "../perfmodel/perf.h"
#include "../tuner/search.h"
#include "common.h"

/* A release of job/flagtable.def into a job setting (index + 1); a name it
 * does not know is a usage error naming those it does. */
static int opt_release(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct advise_args *a = args;
	int kind = !strcmp(o->name, "megatron-version") ? MT_FLAG_MEGATRON : MT_FLAG_BRIDGE;
	int i, len = 0, rel = mt_release_find(kind, arg);
	char list[512];

	if (rel >= 0) {
		*(kind == MT_FLAG_MEGATRON ? &a->job.megatron_version : &a->job.bridge_version) =
			rel + 1;
		return 0;
	}
	for (i = 0; i < mt_release_count(kind) + mt_release_forks(kind) && len >= 0 &&
		    (size_t)len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - (size_t)len, "%s%s", i ? ", " : "",
				mt_release_name(kind, i));
	fprintf(stderr, "megatune %s: error: --%s: unknown release '%s'; known: %s (or the number, "
		"e.g. %s)\n", cmd, o->name, arg, list,
		kind == MT_FLAG_MEGATRON ? "0.14" : "0.5");
	return 2;
}

/* A knob of job/knobs.def: its value into the job's pin. */
static int opt_knob(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct advise_args *a = args;
	int k = (int)((const struct mt_knob *)o->data - mt_knobs), v;
	char want[160];

	if (mt_knob_parse(k, arg, &v, want, sizeof(want)))
		return cli_opt_bad(cmd, o->name, want, arg);
	mt_knob_set_pin(&a->job, k, v);
	return 0;
}

/* --moe-balance aux|pretrained|forced|drop:CF */
static int opt_balance(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct mt_job *job = &((struct advise_args *)args)->job;
	double cf;

	if (!strcmp(arg, "aux")) {
		job->moe_balance = MT_BAL_AUX;
	} else if (!strcmp(arg, "pretrained")) {
		job->moe_balance = MT_BAL_PRETRAINED;
	} else if (!strcmp(arg, "forced")) {
		job->moe_balance = MT_BAL_FORCED;
	} else if (!strncmp(arg, "drop:", 5) && !mt_parse_num_range(arg + 5, 1, 64, &cf)) {
		job->moe_balance = MT_BAL_DROP;
		job->moe_capacity = cf;
	} else {
		return cli_opt_bad(cmd, o->name, "aux, pretrained, forced or drop:CF (a capacity "
				   "factor from 1 to 64)", arg);
	}
	return 0;
}

static int opt_modules(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct mt_job *job = &((struct advise_args *)args)->job;
	char badm[64];

	if (mt_offload_modules_parse(arg, &job->offload_modules, badm, sizeof(badm)))
		return cli_opt_bad(cmd, o->name, "modules among attn_norm, qkv_linear, core_attn, "
				   "attn_proj, mlp_norm, expert_fc1, moe_act (comma-separated)", badm);
	return 0;
}

/* --cuda-graph-scope attn,moe_router,...: per-layer graphs of these scopes */
static int opt_scope(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct mt_job *job = &((struct advise_args *)args)->job;
	char bad[64];

	if (mt_graph_scope_parse(arg, &job->graph_scope, bad, sizeof(bad)))
		return cli_opt_bad(cmd, o->name, "scopes among attn, mlp, moe_router, "
				   "moe_preprocess, moe (comma-separated)", bad);
	if (job->pins.cuda_graph == MT_UNSET)
		job->pins.cuda_graph = 1;
	return 0;
}

/* --fusions-off F,F...: the fusions Megatron-LM's own layers run as eager ops
 * (perfmodel/eager.h mt_fusion names, or all) */
static int opt_fusions(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct mt_job *job = &((struct advise_args *)args)->job;

	if (mt_fusions_parse(arg, &job->fusions_off))
		return cli_opt_bad(cmd, o->name, "fusions among masked_softmax, bias_activation, "
				   "bias_dropout, rope (comma-separated), or all", arg);
	return 0;
}

/* (0, 1] and [0, 90): an open end the table's ranges do not give */
static int opt_share(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct mt_job *job = &((struct advise_args *)args)->job;
	double d;

	if (!strcmp(o->name, "optimizer-cpu-offload")) {
		if (mt_parse_num_range(arg, 0, 1, &d) || !(d > 0))
			return cli_opt_bad(cmd, o->name, "a share of the optimizer states in (0, 1]",
					   arg);
		job->opt_offload = d;
		return 0;
	}
	if (mt_parse_num_range(arg, 0, 90, &d) || d >= 90)
		return cli_opt_bad(cmd, o->name, "a percentage in [0, 90)", arg);
	if (!strcmp(o->name, "prefer-headroom"))
		job->roomy_tol = d / 100;
	else
		job->mem_headroom = d / 100;
	return 0;
}

static int opt_layout(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct advise_args *a = args;
	struct mt_error err = MT_ERROR_INIT;

	(void)o;
	if (mt_layout_parse(arg, &a->layout, &err))
		return cli_fail(cmd, &err);
	a->job.pins.layout = &a->layout;
	return 0;
}

#define JOB(f) offsetof(struct advise_args, job.f)
#define FN(nm, mt, fun, hl) \
	{ .type = CLI_FN, .name = nm, .meta = mt, .fn = fun, .has_arg = 1, .help = hl }

static const char *const precision_names[] = { "bf16", "fp8", "nvfp4", NULL };
static const char *const recipe_names[] = { "delayed", "tensorwise", "blockwise", "mxfp8", NULL };
static const char *const attention_names[] = { "flash", "unfused", NULL };
static const char *const impl_names[] = { "transformer_engine", "local", NULL }; /* MT_TI_* */
const char *const cli_advise_flex[] = { "profile", "deepep", "hybridep", NULL };
const char *const cli_advise_formats[] = {
	[F_TEXT] = "text", [F_JSON] = "json", [F_MEGATRON] = "megatron", [F_BRIDGE] = "bridge",
	[F_VERL] = "verl", [F_ENV] = "env", [F_TORCHRUN] = "torchrun", [F_SLURM] = "slurm", NULL
};

static const struct cli_opt job_opts[] = {
	CLI_SEC("job"),
	{ .type = CLI_STR, .name = "model", .meta = "NAME|FILE", .off = offsetof(struct advise_args, model),
	  .help = "a bundled model or a Hugging Face / megatune model JSON\n"
		  "bundled: llama3-8b llama3-70b llama3.1-405b mixtral-8x7b\n"
		  "mixtral-8x22b qwen3-30b-a3b qwen3-235b-a22b deepseek-v3\n"
		  "gpt3-175b llama2-7b llama2-70b gpt3-5b, also by the\n"
		  "Hugging Face id each copies (meta-llama/Meta-Llama-3-8B)" },
	{ .type = CLI_FLAG, .name = "strict", .off = offsetof(struct advise_args, strict),
	  .help = "refuse a model config whose field megatune does not\n"
		  "read resembles one it reads (a typo; otherwise a warning)" },
	{ .type = CLI_STR, .name = "cluster", .meta = "NAME|FILE",
	  .off = offsetof(struct advise_args, cluster),
	  .help = "a bundled profile or a megatune.profile/1 file\n"
		  "(default dgx-h100); bundled: dgx-a100-80g dgx-h100\n"
		  "dgx-h200 dgx-b200 gb200-nvl72" },
	{ .type = CLI_INT, .name = "gpus", .meta = "N", .off = JOB(gpus), .lo = 1, .hi = 1 << 24,
	  .want = "a positive number of GPUs",
	  .help = "GPUs in the job (whole nodes when more than one node)" },
	{ .type = CLI_INT, .name = "seq", .meta = "N", .off = JOB(seq), .lo = 1, .hi = 1 << 26,
	  .want = "a positive sequence length", .help = "sequence length" },
	{ .type = CLI_I64, .name = "gbs", .meta = "N", .off = JOB(gbs), .lo = 1, .hi = 1e15,
	  .want = "a positive global batch size", .help = "global batch size, in sequences" },
	{ .type = CLI_CHOICE, .name = "precision", .meta = "P", .off = JOB(precision),
	  .choices = precision_names,
	  .help = "bf16 (default), fp8 or nvfp4 (Blackwell: FP4 GEMMs)" },
	{ .type = CLI_CHOICE, .name = "fp8-recipe", .meta = "R", .off = JOB(fp8_recipe),
	  .choices = recipe_names,
	  .help = "delayed (default, Megatron-LM's; NVIDIA's Blackwell\n"
		  "recipes use mxfp8), tensorwise (current scaling),\n"
		  "blockwise (128x128 weight / 1x128 activation scales,\n"
		  "Hopper or newer) or mxfp8 (1x32 blocks, Blackwell)" },
	FN("optimizer-cpu-offload", "F", opt_share,
	   "keep the share F (0 to 1] of the optimizer states\n"
	   "in host memory and step them on the CPU"),
	{ .type = CLI_CHOICE, .name = "attention", .meta = "A", .off = JOB(attn_impl),
	  .choices = attention_names,
	  .help = "flash (default, fused attention) or unfused (implied\n"
		  "by --transformer-impl local)" },
	{ .type = CLI_CHOICE, .name = "transformer-impl", .meta = "I", .off = JOB(transformer_impl),
	  .choices = impl_names,
	  .help = "transformer_engine (default) or local: Megatron-LM's\n"
		  "own layers (--transformer-impl local), timed as the\n"
		  "PyTorch eager kernels they run where Transformer Engine\n"
		  "and Apex are not installed (docs/MODEL.md 4.11): unfused\n"
		  "attention, gradient accumulation apart\n"
		  "(--grad-accum-fusion off), and none of what needs\n"
		  "Transformer Engine: FP8 and NVFP4, the TP overlap,\n"
		  "per-layer CUDA graphs, CP, the EP overlap, fine-grained\n"
		  "offload, the precision-aware optimizer (refused when\n"
		  "pinned, else not searched)" },
	FN("fusions-off", "F,F...", opt_fusions,
	   "with --transformer-impl local, the fusions the job turns\n"
	   "off, run as eager ops: masked_softmax, bias_activation,\n"
	   "bias_dropout, rope, or all (--no-masked-softmax-fusion,\n"
	   "--no-bias-swiglu-fusion or --no-bias-gelu-fusion,\n"
	   "--no-bias-dropout-fusion, --no-rope-fusion)"),
	{ .type = CLI_ONOFF, .name = "grad-accum-fusion", .meta = "on|off", .off = JOB(grad_accum_fusion),
	  .help = "gradient accumulation inside the weight-gradient GEMM\n"
		  "(default on; off: --no-gradient-accumulation-fusion, a\n"
		  "kernel of its own adds each micro-batch's weight\n"
		  "gradients, as NVIDIA's Megatron-FSDP recipes run)" },
	{ .type = CLI_CHOICE, .name = "moe-flex-backend", .meta = "L", .off = offsetof(struct advise_args, flex_backend),
	  .choices = cli_advise_flex,
	  .help = "the library of the flex dispatcher: deepep or hybridep\n"
		  "(default: the profile's moe_dispatch.flex_backend;\n"
		  "timed from that library's points of the profile)" },
	FN("mem-headroom", "PCT", opt_share, "GPU memory kept free, percent (default 5)"),
	FN("prefer-headroom", "PCT", opt_share,
	   "rank first the fastest candidate using at most 95%\n"
	   "of the usable memory when it is at most PCT percent\n"
	   "slower than a faster one above that (default 3;\n"
	   "0: rank by step time alone)"),
	FN("moe-balance", "B", opt_balance,
	   "router load balance: aux (default, an auxiliary loss\n"
	   "trained from scratch), pretrained (the router of a\n"
	   "released checkpoint, fine-tuning or continued\n"
	   "pre-training: more skewed), forced\n"
	   "(--moe-router-force-load-balancing: random routing) or\n"
	   "drop:CF (token drop at capacity factor CF); the busiest\n"
	   "EP rank's share follows from top-k, experts, EP and\n"
	   "tokens per micro-batch"),
	FN("cuda-graph-scope", "S,S...", opt_scope,
	   "what per-layer CUDA graphs capture: attn, mlp,\n"
	   "moe_router, moe_preprocess, moe (the whole MoE block:\n"
	   "padded token drop only); implies --cuda-graphs on\n"
	   "(default: attn with mlp, or moe_router and\n"
	   "moe_preprocess in dropless MoE, or moe with drop)"),
	FN("offload-modules", "M,M...", opt_modules,
	   "fine-grained activation offload: the inputs of these\n"
	   "modules of every layer go to host memory (attn_norm,\n"
	   "qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1,\n"
	   "moe_act; any PP; not with --offload-layers)"),
	CLI_OPT_END,
};

/* The knobs (job/knobs.def): the searched ones, then the settings */
#define KO_ENTRY(id, nm, mt, hl) \
	{ .type = CLI_FN, .name = nm, .meta = mt, .help = hl, .fn = opt_knob, .has_arg = 1, \
	  .data = &mt_knobs[MT_KNOB_##id] },
#define KO_NONE(id, cli, meta, help)

static const struct cli_opt pin_opts[] = {
	CLI_SEC("pins (narrow the search; all of them pinned = one configuration)"),
#define KO_PINS KO_ENTRY
#define KO_SETTINGS KO_NONE
#define KO_GENERIC KO_NONE
#define KO_TIMED KO_ENTRY
#define KNOB(id, cli, meta, type, lo, hi, dflt, pin, cfg, fact, json, mlm, bridge, verl, group, \
	     change, help) KO_##group(id, cli, meta, help)
#include "../job/knobs.def"
#undef KO_PINS
#undef KO_SETTINGS
#undef KO_GENERIC
#undef KO_TIMED
	FN("pp-layout", "STRING", opt_layout,
	   "Megatron's --pipeline-model-parallel-layout, e.g.\n"
	   "'Et|(tt|)*29m|tL': E embedding, t layer, m MTP layer,\n"
	   "L loss, | stage boundary, (...)*N and X*N repeat; needs\n"
	   "--pp, and PP x VPP stages (VPP follows from the layout).\n"
	   "Unpinned, a split the layers do not divide evenly gets\n"
	   "the balanced layout the search builds"),
	CLI_SEC("settings (on by default, not searched; set rules may choose them)"),
#define KO_PINS KO_NONE
#define KO_SETTINGS KO_ENTRY
#define KO_GENERIC KO_ENTRY
#define KO_TIMED KO_NONE
#include "../job/knobs.def"
#undef KNOB
#undef KO_PINS
#undef KO_SETTINGS
#undef KO_GENERIC
#undef KO_TIMED
	CLI_OPT_END,
};

static const struct cli_opt out_opts[] = {
	CLI_SEC("rules (the tuning guidance, docs/RULES.md)"),
	{ .type = CLI_STRS, .name = "rules", .meta = "PATH",
	  .off = offsetof(struct advise_args, rule_paths), .count_off = offsetof(struct advise_args, nrule_paths),
	  .cap = MAX_RULE_PATHS, .want = "paths",
	  .help = "add a rule file or a folder of *.rules files (repeatable);\n"
		  "their set rules take precedence over the bundled ones" },
	{ .type = CLI_FLAG, .name = "no-rules", .off = offsetof(struct advise_args, no_rules),
	  .help = "the model alone: no pruning, choices or messages by rules" },
	CLI_SEC("output"),
	{ .type = CLI_INT, .name = "top", .meta = "K", .off = JOB(top_k), .lo = 1, .hi = MT_TOP_MAX,
	  .want = "an integer between 1 and 64",
	  .help = "parallel layouts to rank (default 5, at most 64):\n"
		  "each layout (TP, PP, CP, EP, ETP, dispatcher, FSDP)\n"
		  "appears once, with its best settings; its runner-up\n"
		  "variants (VPP, micro-batch, recompute, ...) are folded\n"
		  "under it" },
	{ .type = CLI_FLAG, .name = "no-fold", .off = JOB(no_fold),
	  .help = "rank every candidate on its own, variants of one\n"
		  "layout included (--top then counts candidates)" },
	{ .type = CLI_FLAG, .name = "exhaustive", .off = JOB(exhaustive),
	  .help = "evaluate every candidate: without it, a pipeline\n"
		  "plan whose step floor cannot enter the ranking is\n"
		  "skipped (same ranking, counted as 'bound')" },
	{ .type = CLI_STR, .name = "json", .meta = "FILE", .off = offsetof(struct advise_args, json),
	  .help = "write megatune.advice/1 JSON ('-': standard output,\n"
		  "instead of the text; one of --json -, --report - and\n"
		  "--format writes there)" },
	{ .type = CLI_STR, .name = "report", .meta = "FILE", .off = offsetof(struct advise_args, report),
	  .help = "write the HTML report (summary, cluster curves,\n"
		  "candidates, memory, time, rules, configuration; '-':\n"
		  "standard output, instead of the text)" },
	{ .type = CLI_CHOICE, .name = "format", .meta = "F", .off = offsetof(struct advise_args, format),
	  .choices = cli_advise_formats,
	  .help = "text (default), json, megatron, bridge, verl, env, torchrun\n"
		  "or slurm: what to print on stdout (megatron/bridge/verl/env:\n"
		  "the best candidate's Megatron-LM flags, model included,\n"
		  "Megatron-Bridge overrides, verl's Megatron-backend Hydra\n"
		  "overrides, variables; torchrun/slurm: a\n"
		  "script that runs it, pretrain_gpt.py on mock data, from\n"
		  "$MEGATRON_LM, default /opt/megatron-lm)" },
	FN("megatron-version", "R", opt_release,
	   "the Megatron-LM release the job runs: core_v0.8.0 to\n"
	   "core_v0.19.0 (default, the newest), or 0.14 for\n"
	   "core_v0.14.0: the search leaves out what it cannot run\n"
	   "(dispatchers, FSDP, CP types, the EP overlap, graphs,\n"
	   "recompute modules, uneven pipeline splits) and refuses a\n"
	   "pin of it; renamed flags take the older spelling, other\n"
	   "flags it lacks become '# --flag needs ...' lines;\n"
	   "loongforge: LoongForge's fork of core_v0.15.0, its flags\n"
	   "and loongforge/train.py"),
	FN("bridge-version", "R", opt_release,
	   "the Megatron-Bridge release the overrides are for: v0.2.0\n"
	   "to v0.6.0 (default); docs/FORMATS.md section 7"),
	CLI_OPT_END,
};

const struct cli_opt cli_advise_opts[] = {
	{ .type = CLI_GROUP, .group = job_opts },
	{ .type = CLI_GROUP, .group = pin_opts },
	{ .type = CLI_GROUP, .group = out_opts },
	CLI_OPT_END,
};

/* estimate's own: what of the one configuration it prints */
static const struct cli_opt stage_opts[] = {
	CLI_SEC("estimate"),
	{ .type = CLI_INT, .name = "stage", .meta = "N", .off = offsetof(struct advise_args, stage),
	  .lo = 0, .hi = MT_MAX_PP - 1, .want = "a pipeline stage, 0 to PP - 1",
	  .help = "print the memory table of pipeline stage N (0 to PP - 1)\n"
		  "instead of the most loaded stage's (default)" },
	CLI_OPT_END,
};

const struct cli_opt cli_estimate_opts[] = {
	{ .type = CLI_GROUP, .group = job_opts },
	{ .type = CLI_GROUP, .group = pin_opts },
	{ .type = CLI_GROUP, .group = out_opts },
	{ .type = CLI_GROUP, .group = stage_opts },
	CLI_OPT_END,
};
