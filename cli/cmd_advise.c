/* SPDX-License-Identifier: MIT */
/* advise and estimate: parse the job and the pins, run the model, print. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/sbuf.h"
#include "../lib/jsonr.h"
#include "../lib/num.h"
#include "../job/knobs.h"
#include "../reports/advice.h"
#include "../reports/html.h"
#include "../rules/engine.h"
#include "../job/flags.h"
#include "../job/flagtable.h"
#include "../perfmodel/eager.h"
#include "../perfmodel/host.h"
#include "../perfmodel/hostmem.h"
#include "../job/launch.h"
#include "../perfmodel/layout.h"
#include "../perfmodel/perf.h"
#include "../tuner/search.h"
#include "../tuner/suggest.h"
#include "cli.h"
#include "common.h"
#include "opts.h"

/* F_NONE: nothing of the format's own on stdout (--json - or --report - has it) */
enum out_format { F_TEXT, F_JSON, F_MEGATRON, F_BRIDGE, F_VERL, F_ENV, F_TORCHRUN, F_SLURM, F_NONE };

#define MAX_RULE_PATHS 16

struct args {
	const char *model, *cluster, *json, *report;
	int format;
	struct mt_job job;
	const char *rule_paths[MAX_RULE_PATHS];
	int nrule_paths;
	int no_rules;
	int strict;              /* --strict: a typo in the model's config is an error */
	int recipe_given;        /* --fp8-recipe was given */
	int flex_backend;        /* --moe-flex-backend: enum mt_flex_backend + 1, 0 the profile's */
	struct mt_layout layout; /* --pp-layout, when given (job.pins.layout points here) */
	int stage;               /* estimate --stage: the stage whose memory table is printed;
				  * -1: the most loaded */
};

/* A release of job/flagtable.def into a job setting (index + 1); a name it
 * does not know is a usage error naming those it does. */
static int opt_release(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct args *a = args;
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
	struct args *a = args;
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
	struct mt_job *job = &((struct args *)args)->job;
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
	struct mt_job *job = &((struct args *)args)->job;
	char badm[64];

	if (mt_offload_modules_parse(arg, &job->offload_modules, badm, sizeof(badm)))
		return cli_opt_bad(cmd, o->name, "modules among attn_norm, qkv_linear, core_attn, "
				   "attn_proj, mlp_norm, expert_fc1, moe_act (comma-separated)", badm);
	return 0;
}

/* --cuda-graph-scope attn,moe_router,...: per-layer graphs of these scopes */
static int opt_scope(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct mt_job *job = &((struct args *)args)->job;
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
	struct mt_job *job = &((struct args *)args)->job;
	const char *p = arg;
	unsigned bits = 0;

	if (!strcmp(arg, "all")) {
		job->fusions_off = (1u << MT_FU_N) - 1;
		return 0;
	}
	while (*p) {
		size_t l = strcspn(p, ",");
		char name[32];
		int f;

		snprintf(name, sizeof(name), "%.*s", (int)(l < sizeof(name) ? l : sizeof(name) - 1), p);
		if (!l || l >= sizeof(name) || (f = mt_fusion_parse(name)) < 0)
			return cli_opt_bad(cmd, o->name, "fusions among masked_softmax, bias_activation, "
					   "bias_dropout, rope (comma-separated), or all", arg);
		bits |= 1u << f;
		p += l;
		if (*p == ',' && !*++p)
			return cli_opt_bad(cmd, o->name, "fusions among masked_softmax, bias_activation, "
					   "bias_dropout, rope (comma-separated), or all", arg);
	}
	if (!bits)
		return cli_opt_bad(cmd, o->name, "fusions among masked_softmax, bias_activation, "
				   "bias_dropout, rope (comma-separated), or all", arg);
	job->fusions_off = bits;
	return 0;
}

/* (0, 1] and [0, 90): an open end the table's ranges do not give */
static int opt_share(const char *cmd, const struct cli_opt *o, const char *arg, void *args)
{
	struct mt_job *job = &((struct args *)args)->job;
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
	struct args *a = args;
	struct mt_error err = MT_ERROR_INIT;

	(void)o;
	if (mt_layout_parse(arg, &a->layout, &err))
		return cli_fail(cmd, &err);
	a->job.pins.layout = &a->layout;
	return 0;
}

#define JOB(f) offsetof(struct args, job.f)
#define FN(nm, mt, fun, hl) \
	{ .type = CLI_FN, .name = nm, .meta = mt, .fn = fun, .has_arg = 1, .help = hl }

static const char *const precision_names[] = { "bf16", "fp8", "nvfp4", NULL };
static const char *const recipe_names[] = { "delayed", "tensorwise", "blockwise", "mxfp8", NULL };
static const char *const attention_names[] = { "flash", "unfused", NULL };
static const char *const impl_names[] = { "transformer_engine", "local", NULL }; /* MT_TI_* */
static const char *const flex_names[] = { "profile", "deepep", "hybridep", NULL };
static const char *const format_names[] = {
	[F_TEXT] = "text", [F_JSON] = "json", [F_MEGATRON] = "megatron", [F_BRIDGE] = "bridge",
	[F_VERL] = "verl", [F_ENV] = "env", [F_TORCHRUN] = "torchrun", [F_SLURM] = "slurm", NULL
};

static const struct cli_opt job_opts[] = {
	CLI_SEC("job"),
	{ .type = CLI_STR, .name = "model", .meta = "NAME|FILE", .off = offsetof(struct args, model),
	  .help = "a bundled model or a Hugging Face / megatune model JSON\n"
		  "bundled: llama3-8b llama3-70b llama3.1-405b mixtral-8x7b\n"
		  "mixtral-8x22b qwen3-30b-a3b qwen3-235b-a22b deepseek-v3\n"
		  "gpt3-175b llama2-7b llama2-70b gpt3-5b, also by the\n"
		  "Hugging Face id each copies (meta-llama/Meta-Llama-3-8B)" },
	{ .type = CLI_FLAG, .name = "strict", .off = offsetof(struct args, strict),
	  .help = "refuse a model config whose field megatune does not\n"
		  "read resembles one it reads (a typo; otherwise a warning)" },
	{ .type = CLI_STR, .name = "cluster", .meta = "NAME|FILE",
	  .off = offsetof(struct args, cluster),
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
	{ .type = CLI_CHOICE, .name = "moe-flex-backend", .meta = "L", .off = offsetof(struct args, flex_backend),
	  .choices = flex_names,
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
	  .off = offsetof(struct args, rule_paths), .count_off = offsetof(struct args, nrule_paths),
	  .cap = MAX_RULE_PATHS, .want = "paths",
	  .help = "add a rule file or a folder of *.rules files (repeatable);\n"
		  "their set rules take precedence over the bundled ones" },
	{ .type = CLI_FLAG, .name = "no-rules", .off = offsetof(struct args, no_rules),
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
	{ .type = CLI_STR, .name = "json", .meta = "FILE", .off = offsetof(struct args, json),
	  .help = "write megatune.advice/1 JSON ('-': standard output,\n"
		  "instead of the text; one of --json -, --report - and\n"
		  "--format writes there)" },
	{ .type = CLI_STR, .name = "report", .meta = "FILE", .off = offsetof(struct args, report),
	  .help = "write the HTML report (summary, cluster curves,\n"
		  "candidates, memory, time, rules, configuration; '-':\n"
		  "standard output, instead of the text)" },
	{ .type = CLI_CHOICE, .name = "format", .meta = "F", .off = offsetof(struct args, format),
	  .choices = format_names,
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

static const struct cli_opt advise_opts[] = {
	{ .type = CLI_GROUP, .group = job_opts },
	{ .type = CLI_GROUP, .group = pin_opts },
	{ .type = CLI_GROUP, .group = out_opts },
	CLI_OPT_END,
};

/* estimate's own: what of the one configuration it prints */
static const struct cli_opt stage_opts[] = {
	CLI_SEC("estimate"),
	{ .type = CLI_INT, .name = "stage", .meta = "N", .off = offsetof(struct args, stage),
	  .lo = 0, .hi = MT_MAX_PP - 1, .want = "a pipeline stage, 0 to PP - 1",
	  .help = "print the memory table of pipeline stage N (0 to PP - 1)\n"
		  "instead of the most loaded stage's (default)" },
	CLI_OPT_END,
};

static const struct cli_opt estimate_opts[] = {
	{ .type = CLI_GROUP, .group = job_opts },
	{ .type = CLI_GROUP, .group = pin_opts },
	{ .type = CLI_GROUP, .group = out_opts },
	{ .type = CLI_GROUP, .group = stage_opts },
	CLI_OPT_END,
};

static const char advise_tail[] =
	"exit codes: 0 success; 1 nothing feasible (the reasons are printed), or for\n"
	"estimate a configuration that does not fit; 2 bad usage or bad input (a rule\n"
	"file with a problem included: FILE:LINE: reason).\n"
	"\n"
	"example:\n"
	"  megatune advise --model llama3-70b --cluster dgx-h100 --gpus 64 --seq 8192 --gbs 128\n";

static const char advise_head[] =
	"usage: megatune advise --model NAME|config.json --gpus N --seq N --gbs N [options]\n"
	"       megatune estimate --model NAME|config.json --gpus N --seq N --gbs N [pins] [options]\n"
	"\n"
	"advise searches every valid parallel configuration (TP, PP, VPP, CP, EP, ETP,\n"
	"micro-batch, recompute, CP communication, distributed optimizer, activation\n"
	"offload, MoE token dispatcher, EP overlap; DP follows) with the memory and time\n"
	"model calibrated by the cluster profile, and ranks the configurations that\n"
	"fit; the tuning rules prune, choose settings and explain each choice.  estimate\n"
	"evaluates one configuration (unpinned knobs take TP=PP=CP=EP=ETP=VPP=MBS=1, no\n"
	"recompute; unpinned settings take the set rules' values; an unpinned dispatcher\n"
	"and EP overlap the fastest) and prints its full memory and time breakdown with\n"
	"the rules that fire for it.  The knobs are job/knobs.def's (docs/FORMATS.md).\n";

const struct cli_spec cli_spec_advise = {
	.cmd = "advise", .head = advise_head, .opts = advise_opts, .tail = advise_tail,
};
const struct cli_spec cli_spec_estimate = {
	.cmd = "estimate", .head = advise_head, .opts = estimate_opts, .tail = advise_tail,
};

/* --transformer-impl local attends unfused, as the job reader takes it
 * (DotProductAttention materialises the scores whatever --attention-backend
 * says: Megatron-LM d98e8a6 megatron/core/models/backends.py:129-131), and
 * accumulates the weight gradients apart: megatune times those layers where
 * Apex is not installed either (docs/MODEL.md 4.11), and their fused
 * accumulation is Apex's; the fusions turned off are timed on those layers
 * only.  -1 to go on, else the exit code after the message. */
static int local_layers(const char *cmd, struct mt_job *j)
{
	if (j->transformer_impl == MT_TI_LOCAL) {
		if (j->grad_accum_fusion == 1)
			return cli_usage_error(cmd, "--grad-accum-fusion on with --transformer-impl local: "
					       "Megatron-LM's own layers fuse the accumulation with Apex's "
					       "fused_weight_gradient_mlp_cuda, and megatune times them where "
					       "Apex is not installed, where they raise without it (Megatron-LM "
					       "d98e8a6 megatron/core/tensor_parallel/layers.py:1148-1157)");
		j->grad_accum_fusion = 0;
		if (j->attn_impl == MT_ATTN_FLASH)
			return cli_usage_error(cmd, "--attention flash with --transformer-impl local: "
					       "Megatron-LM's own layers attend with DotProductAttention, "
					       "which materialises the scores (unfused; Megatron-LM d98e8a6 "
					       "megatron/core/models/backends.py:129-131, and "
					       "--attention-backend chooses among Transformer Engine's "
					       "kernels only)");
		j->attn_impl = MT_ATTN_UNFUSED;
		return -1;
	}
	if (j->attn_impl < 0)
		j->attn_impl = MT_ATTN_FLASH;
	if (j->grad_accum_fusion < 0)
		j->grad_accum_fusion = 1;
	if (j->fusions_off)
		return cli_usage_error(cmd, "--fusions-off needs --transformer-impl local: megatune "
				       "times the fusions turned off as the eager ops of Megatron-LM's "
				       "own layers (docs/MODEL.md 4.11); Transformer Engine's layers are "
				       "timed fused");
	return -1;
}

static int advise_parse_args(const char *cmd, int argc, char **argv, struct args *a)
{
	const struct cli_spec *spec = !strcmp(cmd, "advise") ? &cli_spec_advise :
				      &cli_spec_estimate;
	int rc, first;

	memset(a, 0, sizeof(*a));
	a->stage = -1;
	a->cluster = "dgx-h100";
	mt_job_init(&a->job);
	a->job.fp8_recipe = -1;
	a->job.attn_impl = -1;
	a->job.grad_accum_fusion = -1;
	if ((rc = cli_parse(spec, argc, argv, a, &first)) >= 0)
		return rc;
	a->recipe_given = a->job.fp8_recipe >= 0;
	if (!a->recipe_given)
		a->job.fp8_recipe = MT_FP8_DELAYED;
	if ((rc = local_layers(cmd, &a->job)) >= 0)
		return rc;
	if (first < argc) {
		fprintf(stderr, "megatune %s: error: unexpected argument '%s'\n", cmd, argv[first]);
		return 2;
	}
	{
		/* one writer of standard output: --json - or --report - takes it
		 * from the text summary; with any other --format, or both, the
		 * documents would be mixed */
		int json = a->json && !strcmp(a->json, "-"), page = a->report && !strcmp(a->report, "-");

		if (json + page > 1 || ((json || page) && a->format != F_TEXT))
			return cli_usage_error(cmd, "%s%s%s%s write to standard output: choose one",
					       json ? "--json -" : "", json && page ? " and --report -" :
					       page ? "--report -" : "", a->format != F_TEXT ?
					       " and --format " : "", a->format != F_TEXT ?
					       format_names[a->format] : "");
		if (json || page)
			a->format = F_NONE;
	}
	if (a->no_rules && a->nrule_paths) {
		fprintf(stderr, "megatune %s: error: --rules and --no-rules exclude each other\n", cmd);
		return 2;
	}
	/* verl calls forward_backward_func itself: Megatron-LM's full-iteration
	 * graphs wrap its training loop's (training.py FullCudaGraphWrapper) */
	if (a->format == F_VERL) {
		if (a->job.pins.full_graph == 1)
			return cli_usage_error(cmd, "--full-iteration-graphs on with --format verl: verl "
					       "runs Megatron-Core's forward_backward_func itself, without "
					       "Megatron-LM's FullCudaGraphWrapper (training.py)");
		a->job.pins.full_graph = 0;
	}
	if (!a->model || !a->job.gpus || !a->job.seq || !a->job.gbs) {
		return cli_usage_error(cmd, "missing%s%s%s%s", a->model ? "" : " --model",
				       a->job.gpus ? "" : " --gpus", a->job.seq ? "" : " --seq",
				       a->job.gbs ? "" : " --gbs");
	}
	{
		const char *outs[2] = { a->json, a->report };
		const char *ins[2] = { a->model, a->cluster };

		if ((rc = cli_check_io(cmd, ins, 2, outs, 2)) ||
		    (rc = cli_check_io(cmd, a->rule_paths, a->nrule_paths, outs, 2)))
			return rc;
	}
	return -1; /* go on */
}

static int advise_emit(const char *cmd, const char *path, const struct sbuf *sb)
{
	struct mt_error err = MT_ERROR_INIT;

	if (sb->failed) {
		mt_error_set(&err, MT_ENOMEM, "out of memory");
		return cli_fail(cmd, &err);
	}
	if (mt_write_atomic(path, sb->buf, sb->len, &err))
		return cli_fail(cmd, &err);
	return 0;
}

/* --format torchrun|slurm: the script that runs the candidate (job/launch.h). */
static int print_launch(const struct mt_model *m, const struct mt_cluster *cl,
			const struct mt_job *j, const struct mt_config *c,
			const struct mt_explain *ex, int format)
{
	struct mt_kv args[MT_FLAGS_MAX], env[MT_FLAGS_MAX];
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb = SBUF_INIT;
	struct mt_launch l;
	char label[128], title[400];
	int rc = 0;

	memset(&l, 0, sizeof(l));
	l.kind = format == F_SLURM ? MT_LAUNCH_SLURM : MT_LAUNCH_TORCHRUN;
	l.gpus = (int)j->gpus;
	l.gpus_per_node = cl->gpus_per_node;
	l.args = args;
	l.nargs = mt_candidate_args(m, j, c, ex, args);
	l.env = env;
	l.nenv = mt_candidate_env(ex, env);
	snprintf(title, sizeof(title), "megatune: %s on %d GPUs of %s, %s; a benchmark on mock data",
		 m->name, l.gpus, cl->name, mt_config_label(label, sizeof(label), m, c));
	l.title = title;
	l.loongforge = mt_job_loongforge(j);
	if (!mt_launch_script(&sb, &l, &err) && sb.failed)
		mt_error_set(&err, MT_ENOMEM, "out of memory");
	if (err.code)
		rc = cli_fail("advise", &err);
	else
		fputs(sb.buf, stdout);
	sbuf_release(&sb);
	return rc;
}

static int print_flags(const struct mt_model *m, const struct mt_cluster *cl,
		       const struct mt_job *j, const struct mt_config *c,
		       const struct mt_explain *ex, int format)
{
	struct mt_kv kv[MT_FLAGS_MAX];
	struct sbuf sb = SBUF_INIT;
	int n;

	if (format == F_TORCHRUN || format == F_SLURM)
		return print_launch(m, cl, j, c, ex, format);
	if (format == F_MEGATRON) {
		n = mt_candidate_args(m, j, c, ex, kv);
		mt_kv_render(&sb, kv, n, MT_KV_ARGS, " \\\n  ");
	} else if (format == F_BRIDGE) {
		n = mt_candidate_bridge(m, j, c, ex, kv);
		mt_kv_render(&sb, kv, n, MT_KV_ASSIGN, " \\\n  ");
	} else if (format == F_VERL) {
		n = mt_candidate_verl(m, j, c, ex, kv);
		mt_kv_render(&sb, kv, n, MT_KV_ASSIGN, " \\\n  ");
	} else {
		n = mt_candidate_env(ex, kv);
		mt_kv_render(&sb, kv, n, MT_KV_EXPORT, "\n");
	}
	if (n)
		sbuf_addc(&sb, '\n');
	fputs(sb.buf, stdout);
	sbuf_release(&sb);
	return 0;
}

/* What the model reader and the sequence check accepted with a note: warnings
 * on stderr, stdout unchanged.  A sequence the check refuses is reported by
 * the search (mt_job_check()). */
static void warn_model(const char *cmd, const struct mt_model *m, const struct mt_job *j)
{
	struct mt_error err = MT_ERROR_INIT;
	char note[512];
	int i;

	for (i = 0; i < m->nnotes; i++)
		fprintf(stderr, "megatune %s: warning: %s\n", cmd, m->notes[i]);
	if (!mt_model_check_seq(m, j->seq, note, sizeof(note), &err) && note[0])
		fprintf(stderr, "megatune %s: warning: %s\n", cmd, note);
}

static int load_inputs(const char *cmd, struct args *a, struct mt_model *m,
		       struct mt_cluster **c, struct mt_ruleset **rs)
{
	struct mt_error err = MT_ERROR_INIT;

	if (mt_model_load(a->model, m, &err) || cli_typos(cmd, NULL, m, a->strict, &err))
		return cli_fail(cmd, &err);
	warn_model(cmd, m, &a->job);
	if (mt_cluster_load(a->cluster, c, &err))
		return cli_fail(cmd, &err);
	if (a->flex_backend > 0 &&
	    mt_dispatch_use_backend(&(*c)->dispatch, a->flex_backend - 1)) {
		fprintf(stderr, "megatune %s: error: --moe-flex-backend %s: profile %s has no "
			"moe_dispatch point of that library (add its measured or published figures)\n",
			cmd, flex_names[a->flex_backend], a->cluster);
		return 2;
	}
	cli_cluster_warnings(cmd, *c);
	/* FP8 on Blackwell: Megatron-LM's default recipe is per-tensor delayed
	 * scaling, while NVIDIA's Blackwell recipes train with MXFP8, which its
	 * tensor cores scale in hardware (perfmodel/precision.c) */
	if (a->job.precision == MT_PREC_FP8 && !a->recipe_given && (*c)->compute_capability >= 10)
		fprintf(stderr, "megatune %s: warning: --precision fp8 on %s uses delayed (per-tensor) "
			"scaling, Megatron-LM's default; NVIDIA's Blackwell recipes train with MXFP8, "
			"1x32 blocks scaled by the tensor cores: --fp8-recipe mxfp8 (Bridge's "
			"bf16_with_mxfp8_mixed)\n", cmd, (*c)->gpu_name);
	*rs = NULL;
	if (!a->no_rules) {
		if (mt_ruleset_load_files(a->rule_paths, a->nrule_paths, 1, rs, &err))
			return cli_fail(cmd, &err);
	}
	return -1;
}

/* The HTML report of an advice document (the JSON in sb) with the cluster
 * the search used. */
static int advise_write_report(const char *cmd, const struct args *a, const struct mt_cluster *c,
			const struct sbuf *json)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_report_in in;
	cJSON *adv = NULL;
	int rc = 0;

	memset(&in, 0, sizeof(in));
	if (mt_json_parse("advice", json->buf, json->len, &adv, &err)) {
		rc = cli_fail(cmd, &err);
		goto out;
	}
	in.advice = adv;
	in.advice_file = "this search";
	in.cluster = c;
	in.profile_file = a->cluster;
	if (mt_report_write(a->report, &in, &err))
		rc = cli_fail(cmd, &err);
out:
	cJSON_Delete(adv);
	return rc;
}

/* --json and --report committed together: neither replaced unless both
 * are written. */
static int emit_outputs(const char *cmd, const struct args *a, const struct mt_cluster *c,
			const struct sbuf *sb)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_outset os;
	int rc;

	mt_outset_begin(&os);
	if ((a->json && (rc = advise_emit(cmd, a->json, sb))) ||
	    (a->report && (rc = advise_write_report(cmd, a, c, sb)))) {
		mt_outset_abort(&os);
		return rc;
	}
	if (mt_outset_commit(&os, &err))
		return cli_fail(cmd, &err);
	return 0;
}

/* Explain the ranked candidates: the rules that fired for each. */
static int advise_explain(struct mt_rules_run *run, const struct mt_search_result *res,
		   struct mt_explain *ex, struct mt_error *err)
{
	int i;

	for (i = 0; i < res->ntop; i++)
		if (mt_rules_explain(run, &res->top[i], i + 1, (int)res->feasible,
				     res->top[0].time.step, &ex[i]))
			return mt_error_set(err, MT_ENOMEM, "out of memory");
	return MT_OK;
}

int cmd_advise(int argc, char **argv)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_search_result *res = NULL;
	struct mt_cluster *c = NULL;
	struct mt_ruleset *rs = NULL;
	struct mt_rules_run *run = NULL;
	struct mt_explain *ex = NULL;
	struct mt_advice_rules ar;
	struct mt_model m;
	struct sbuf sb = SBUF_INIT;
	struct args a;
	int rc, i;

	memset(&ar, 0, sizeof(ar));
	if ((rc = advise_parse_args("advise", argc, argv, &a)) >= 0)
		return rc;
	if ((rc = load_inputs("advise", &a, &m, &c, &rs)) >= 0)
		goto out;
	res = calloc(1, sizeof(*res));
	if (!res) {
		mt_error_set(&err, MT_ENOMEM, "out of memory");
		rc = cli_fail("advise", &err);
		goto out;
	}
	if (rs && mt_rules_start(rs, &m, c, &a.job, &run, &err)) {
		rc = cli_fail("advise", &err);
		goto out;
	}
	if (mt_search(&m, c, &a.job, run, res, &err)) {
		rc = cli_fail("advise", &err);
		goto out;
	}
	/* what each setting of the pick buys, with its evidence */
	if (res->ntop)
		res->ngains = mt_gains(&m, c, &a.job, &res->top[0], NULL, res->gains,
				       MT_GAINS_MAX);
	/* nothing fits: the changes that would, each searched */
	if (!res->ntop && mt_suggest_fits(&m, c, &a.job, res) < 0) {
		mt_error_set(&err, MT_ENOMEM, "out of memory");
		rc = cli_fail("advise", &err);
		goto out;
	}
	if (run) {
		ex = calloc((size_t)(res->ntop ? res->ntop : 1), sizeof(*ex));
		if (!ex || advise_explain(run, res, ex, &err)) {
			mt_error_set(&err, MT_ENOMEM, "out of memory");
			rc = cli_fail("advise", &err);
			goto out;
		}
		ar.set = rs;
		ar.run = run;
		ar.ex = ex;
		ar.nex = res->ntop;
	}
	if (a.json || a.format == F_JSON || a.report) {
		mt_advice_json(&sb, &m, c, &a.job, res, &ar);
		if ((rc = emit_outputs("advise", &a, c, &sb)))
			goto out;
		if (a.format == F_JSON && (rc = advise_emit("advise", "-", &sb)))
			goto out;
	}
	if (!res->ntop) {
		sbuf_reset(&sb);
		mt_infeasible_text(&sb, &m, c, &a.job, res, &ar);
		fputs(sb.buf, a.format == F_TEXT ? stdout : stderr);
		rc = 1;
		goto out;
	}
	rc = 0;
	if (a.format == F_TEXT) {
		sbuf_reset(&sb);
		mt_advice_text(&sb, &m, c, &a.job, res, &ar);
		rc = advise_emit("advise", "-", &sb);
	} else if (a.format != F_JSON && a.format != F_NONE) {
		rc = print_flags(&m, c, &a.job, &res->top[0].cfg, ex, a.format);
	}
out:
	if (ex)
		for (i = 0; i < (res && res->ntop ? res->ntop : 1); i++)
			mt_explain_free(&ex[i]);
	free(ex);
	sbuf_release(&sb);
	free(res);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	mt_cluster_free(c);
	return rc;
}

int cmd_estimate(int argc, char **argv)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	struct mt_ruleset *rs = NULL;
	struct mt_rules_run *run = NULL;
	struct mt_explain ex;
	struct mt_advice_rules ar;
	struct mt_model m;
	struct mt_config cfg;
	struct mt_eval e;
	struct sbuf sb = SBUF_INIT;
	struct args a;
	int rc;

	memset(&ex, 0, sizeof(ex));
	memset(&ar, 0, sizeof(ar));
	if ((rc = advise_parse_args("estimate", argc, argv, &a)) >= 0)
		return rc;
	if ((rc = load_inputs("estimate", &a, &m, &c, &rs)) >= 0)
		goto out;
	if (rs && mt_rules_start(rs, &m, c, &a.job, &run, &err)) {
		rc = cli_fail("estimate", &err);
		goto out;
	}
	memset(&cfg, 0, sizeof(cfg));
	mt_knobs_estimate_config(&a.job, &cfg);
	if (mt_evaluate(&m, c, &a.job, run, &cfg, &e, &err)) {
		rc = cli_fail("estimate", &err);
		goto out;
	}
	if (a.stage >= e.cfg.pp) {
		if (e.cfg.pp == 1)
			rc = cli_usage_error("estimate", "--stage %d: the configuration has one "
					     "pipeline stage: give 0", a.stage);
		else
			rc = cli_usage_error("estimate", "--stage %d: the configuration has %d "
					     "pipeline stages: give 0 to %d", a.stage, e.cfg.pp,
					     e.cfg.pp - 1);
		goto out;
	}
	if (run) {
		if (mt_rules_explain(run, &e, 0, -1, 0, &ex)) {
			mt_error_set(&err, MT_ENOMEM, "out of memory");
			rc = cli_fail("estimate", &err);
			goto out;
		}
		ar.set = rs;
		ar.run = run;
		ar.ex = &ex;
		ar.nex = 1;
	}
	if (a.json || a.format == F_JSON || a.report) {
		mt_estimate_json(&sb, &m, c, &a.job, &e, &ar);
		if ((rc = emit_outputs("estimate", &a, c, &sb)))
			goto out;
		if (a.format == F_JSON && (rc = advise_emit("estimate", "-", &sb)))
			goto out;
	}
	rc = 0;
	if (a.format == F_TEXT) {
		sbuf_reset(&sb);
		mt_estimate_text(&sb, &m, c, &a.job, &e, a.stage, &ar);
		rc = advise_emit("estimate", "-", &sb);
	} else if (a.format != F_JSON && a.format != F_NONE) {
		rc = print_flags(&m, c, &a.job, &e.cfg, run ? &ex : NULL, a.format);
	}
	if (!rc && !e.feasible)
		rc = 1;
out:
	mt_explain_free(&ex);
	sbuf_release(&sb);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	mt_cluster_free(c);
	return rc;
}
