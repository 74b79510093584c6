/* SPDX-License-Identifier: MIT */
/* advise and estimate: parse the job and the pins, run the model, print. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/sbuf.h"
#include "../lib/jsonr.h"
#include "../lib/num.h"
#include "../reports/advice.h"
#include "../reports/html.h"
#include "../rules/engine.h"
#include "../tuner/flags.h"
#include "../tuner/flagtable.h"
#include "../tuner/hostmem.h"
#include "../tuner/launch.h"
#include "../tuner/layout.h"
#include "../advisor/search.h"
#include "cli.h"
#include "common.h"

static const char advise_usage[] =
	"usage: megatune advise --model NAME|config.json --gpus N --seq N --gbs N [options]\n"
	"       megatune estimate --model NAME|config.json --gpus N --seq N --gbs N [pins] [options]\n"
	"\n"
	"advise searches every valid parallel configuration (TP, PP, VPP, CP, EP, ETP,\n"
	"micro-batch, recompute, CP communication, distributed optimizer, activation\n"
	"offload, MoE token dispatcher, EP overlap; DP follows) with the memory and time\n"
	"model calibrated by the cluster profile, and ranks the configurations that\n"
	"fit; the tuning rules prune, choose settings and explain each choice.  estimate evaluates one configuration\n"
	"(unpinned knobs take TP=PP=CP=EP=ETP=VPP=MBS=1, no recompute; unpinned\n"
	"settings take the set rules' values; an unpinned dispatcher and EP overlap\n"
	"the fastest) and prints its full memory and time\n"
	"breakdown with the rules that fire for it.\n"
	"\n"
	"job:\n"
	"  --model NAME|FILE     a bundled model or a Hugging Face / megatune model JSON\n"
	"                        bundled: llama3-8b llama3-70b llama3.1-405b mixtral-8x7b\n"
	"                        mixtral-8x22b qwen3-30b-a3b qwen3-235b-a22b deepseek-v3\n"
	"                        gpt3-175b llama2-7b llama2-70b gpt3-5b\n"
	"  --cluster NAME|FILE   a bundled profile or a megatune.profile/1 file\n"
	"                        (default dgx-h100); bundled: dgx-a100-80g dgx-h100\n"
	"                        dgx-h200 dgx-b200 gb200-nvl72\n"
	"  --gpus N              GPUs in the job (whole nodes when more than one node)\n"
	"  --seq N               sequence length\n"
	"  --gbs N               global batch size, in sequences\n"
	"  --precision P         bf16 (default), fp8 or nvfp4 (Blackwell: FP4 GEMMs)\n"
	"  --fp8-recipe R        delayed (default), tensorwise (current scaling),\n"
	"                        blockwise (128x128 weight / 1x128 activation scales,\n"
	"                        Hopper or newer) or mxfp8 (1x32 blocks, Blackwell)\n"
	"  --fp8-param-gather on|off   keep the weights in FP8 (NVFP4) and all-gather them\n"
	"                        so (default on with the distributed optimizer)\n"
	"  --optimizer-cpu-offload F   keep the share F (0 to 1] of the optimizer states\n"
	"                        in host memory and step them on the CPU\n"
	"  --attention A         flash (default, fused attention) or unfused\n"
	"  --mem-headroom PCT    GPU memory kept free, percent (default 5)\n"
	"  --moe-dispatcher D    alltoall, allgather, flex (DeepEP on Hopper, HybridEP on\n"
	"                        Blackwell / NVL72; EP may cross NVLink domains) or auto\n"
	"                        (default: searched, every one the profile can time)\n"
	"  --moe-balance B       router load balance: aux (default, auxiliary loss: the\n"
	"                        busiest EP rank gets 1.3x the mean), forced\n"
	"                        (--moe-router-force-load-balancing) or drop:CF (token\n"
	"                        drop at capacity factor CF)\n"
	"\n"
	"pins (narrow the search; all of them pinned = one configuration):\n"
	"  --tp N --pp N --vpp N --cp N --ep N --etp N --mbs N\n"
	"  --recompute none|selective|full\n"
	"  --recompute-layers N|all   full recompute: layers per model chunk (default: the\n"
	"                        fewest that fit)\n"
	"  --cp-comm p2p|all_gather|a2a|a2a+p2p   --dist-opt on|off\n"
	"  --fsdp on|off|megatron|torch   fully sharded data parallelism: weights,\n"
	"                        gradients and optimizer sharded over DP, each layer\n"
	"                        gathered per micro-batch; on = megatron: Megatron-FSDP\n"
	"                        (--use-megatron-fsdp, optim_grads_params); torch:\n"
	"                        PyTorch FSDP2 (--use-torch-fsdp2: PP 1, EP 1, untied\n"
	"                        embeddings, no distributed optimizer); searched where\n"
	"                        they can run (below compute capability 10 not with TP\n"
	"                        or CP)\n"
	"  --offload-layers N    layers whose activations go to host memory\n"
	"                        (Megatron-Core: PP 1 and no recompute only)\n"
	"  --offload-modules M,M...  fine-grained activation offload: the inputs of these\n"
	"                        modules of every layer go to host memory (attn_norm,\n"
	"                        qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1,\n"
	"                        moe_act; any PP; not with --offload-layers)\n"
	"  --sequence-parallel on|off\n"
	"  --cuda-graphs on|off  Transformer Engine per-layer CUDA graphs (default: the\n"
	"                        cuda-graphs-host-bound rule turns them on where launches\n"
	"                        bound the step and their buffers fit; never with full\n"
	"                        recompute, offload or the EP overlap (whose delayed wgrad\n"
	"                        needs Transformer Engine 2.12 inside graphs))\n"
	"  --bucket-size N       DDP bucket, in parameters\n"
	"  --ep-overlap on|off   1F1B EP all-to-all overlap (--overlap-moe-expert-parallel-comm\n"
	"                        --delay-wgrad-compute); searched where Megatron-LM allows it\n"
	"                        (EP > 1, alltoall or flex, VPP with PP > 1, no full recompute,\n"
	"                        no CUDA graphs)\n"
	"  --pp-layout STRING    Megatron's --pipeline-model-parallel-layout, e.g.\n"
	"                        'Et|(tt|)*29m|tL': E embedding, t layer, m MTP layer,\n"
	"                        L loss, | stage boundary, (...)*N and X*N repeat; needs\n"
	"                        --pp, and PP x VPP stages (VPP follows from the layout).\n"
	"                        Unpinned, a split the layers do not divide evenly gets\n"
	"                        the balanced layout the search builds\n"
	"\n"
	"settings (on by default, not searched; set rules may choose them):\n"
	"  --tp-comm-overlap on|off   --overlap-grad-reduce on|off\n"
	"  --overlap-param-gather on|off   --ce-fusion on|off   --grad-reduce fp32|bf16\n"
	"  --overlap-p2p on|off  the interleaved schedule's stage-to-stage sends under\n"
	"                        compute (off: --no-overlap-p2p-communication, each send\n"
	"                        blocks its model chunk; needs PP > 2 with VPP; no rule\n"
	"                        sets it)\n"
	"\n"
	"rules (the tuning guidance, docs/RULES.md):\n"
	"  --rules PATH          add a rule file or a folder of *.rules files (repeatable);\n"
	"                        their set rules take precedence over the bundled ones\n"
	"  --no-rules            the model alone: no pruning, choices or messages by rules\n"
	"\n"
	"output:\n"
	"  --top K               candidates to keep (default 5, at most 64)\n"
	"  --json FILE           write megatune.advice/1 JSON ('-' for stdout)\n"
	"  --report FILE         write the HTML report (summary, cluster curves,\n"
	"                        candidates, memory, time, rules, configuration)\n"
	"  --format F            text (default), json, megatron, bridge, env, torchrun or\n"
	"                        slurm: what to print on stdout (megatron/bridge/env: the\n"
	"                        best candidate's Megatron-LM flags, model included,\n"
	"                        Megatron-Bridge overrides, variables; torchrun/slurm: a\n"
	"                        script that runs it, pretrain_gpt.py on mock data, from\n"
	"                        $MEGATRON_LM, default /opt/megatron-lm)\n"
	"  --megatron-version R  the Megatron-LM release the flags are for: core_v0.8.0\n"
	"                        to core_v0.19.0 (default, the newest), or 0.14 for\n"
	"                        core_v0.14.0: renamed flags take the older spelling, flags\n"
	"                        it lacks become '# --flag needs ...' lines\n"
	"  --bridge-version R    the Megatron-Bridge release the overrides are for: v0.2.0\n"
	"                        to v0.6.0 (default); docs/FORMATS.md section 7\n"
	"  -h, --help            this help\n"
	"\n"
	"exit codes: 0 success; 1 nothing feasible (the reasons are printed), or for\n"
	"estimate a configuration that does not fit; 2 bad usage or bad input (a rule\n"
	"file with a problem included: FILE:LINE: reason).\n"
	"\n"
	"example:\n"
	"  megatune advise --model llama3-70b --cluster dgx-h100 --gpus 64 --seq 8192 --gbs 128\n";

enum {
	O_MODEL = 256, O_CLUSTER, O_GPUS, O_SEQ, O_GBS, O_PRECISION, O_FP8_RECIPE, O_ATTENTION,
	O_HEADROOM, O_TP, O_PP, O_VPP, O_CP, O_EP, O_ETP, O_MBS, O_RECOMPUTE, O_RC_LAYERS,
	O_CP_COMM, O_DIST_OPT, O_OFFLOAD, O_SP, O_TP_OVERLAP, O_OVERLAP_GRAD, O_OVERLAP_PARAM,
	O_CE_FUSION, O_GRAD_REDUCE, O_TOP, O_JSON, O_FORMAT, O_RULES, O_NO_RULES, O_DISPATCHER,
	O_BUCKET, O_REPORT, O_MLM_VERSION, O_BRIDGE_VERSION, O_EP_OVERLAP, O_MOE_BALANCE,
	O_PARAM_GATHER, O_OPT_OFFLOAD, O_CUDA_GRAPHS, O_OFFLOAD_MODULES, O_PP_LAYOUT, O_FSDP,
	O_P2P_OVERLAP,
};

static const struct option long_opts[] = {
	{ "model", required_argument, NULL, O_MODEL },
	{ "cluster", required_argument, NULL, O_CLUSTER },
	{ "gpus", required_argument, NULL, O_GPUS },
	{ "seq", required_argument, NULL, O_SEQ },
	{ "gbs", required_argument, NULL, O_GBS },
	{ "precision", required_argument, NULL, O_PRECISION },
	{ "fp8-recipe", required_argument, NULL, O_FP8_RECIPE },
	{ "attention", required_argument, NULL, O_ATTENTION },
	{ "mem-headroom", required_argument, NULL, O_HEADROOM },
	{ "tp", required_argument, NULL, O_TP },
	{ "pp", required_argument, NULL, O_PP },
	{ "vpp", required_argument, NULL, O_VPP },
	{ "cp", required_argument, NULL, O_CP },
	{ "ep", required_argument, NULL, O_EP },
	{ "etp", required_argument, NULL, O_ETP },
	{ "mbs", required_argument, NULL, O_MBS },
	{ "recompute", required_argument, NULL, O_RECOMPUTE },
	{ "recompute-layers", required_argument, NULL, O_RC_LAYERS },
	{ "cp-comm", required_argument, NULL, O_CP_COMM },
	{ "dist-opt", required_argument, NULL, O_DIST_OPT },
	{ "offload-layers", required_argument, NULL, O_OFFLOAD },
	{ "sequence-parallel", required_argument, NULL, O_SP },
	{ "tp-comm-overlap", required_argument, NULL, O_TP_OVERLAP },
	{ "overlap-grad-reduce", required_argument, NULL, O_OVERLAP_GRAD },
	{ "overlap-param-gather", required_argument, NULL, O_OVERLAP_PARAM },
	{ "ce-fusion", required_argument, NULL, O_CE_FUSION },
	{ "grad-reduce", required_argument, NULL, O_GRAD_REDUCE },
	{ "top", required_argument, NULL, O_TOP },
	{ "json", required_argument, NULL, O_JSON },
	{ "format", required_argument, NULL, O_FORMAT },
	{ "rules", required_argument, NULL, O_RULES },
	{ "no-rules", no_argument, NULL, O_NO_RULES },
	{ "moe-dispatcher", required_argument, NULL, O_DISPATCHER },
	{ "bucket-size", required_argument, NULL, O_BUCKET },
	{ "report", required_argument, NULL, O_REPORT },
	{ "megatron-version", required_argument, NULL, O_MLM_VERSION },
	{ "bridge-version", required_argument, NULL, O_BRIDGE_VERSION },
	{ "ep-overlap", required_argument, NULL, O_EP_OVERLAP },
	{ "moe-balance", required_argument, NULL, O_MOE_BALANCE },
	{ "fp8-param-gather", required_argument, NULL, O_PARAM_GATHER },
	{ "optimizer-cpu-offload", required_argument, NULL, O_OPT_OFFLOAD },
	{ "cuda-graphs", required_argument, NULL, O_CUDA_GRAPHS },
	{ "offload-modules", required_argument, NULL, O_OFFLOAD_MODULES },
	{ "pp-layout", required_argument, NULL, O_PP_LAYOUT },
	{ "fsdp", required_argument, NULL, O_FSDP },
	{ "overlap-p2p", required_argument, NULL, O_P2P_OVERLAP },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

enum out_format { F_TEXT, F_JSON, F_MEGATRON, F_BRIDGE, F_ENV, F_TORCHRUN, F_SLURM };

#define MAX_RULE_PATHS 16

struct args {
	const char *model, *cluster, *json, *report;
	int format;
	struct mt_job job;
	const char *rule_paths[MAX_RULE_PATHS];
	int nrule_paths;
	int no_rules;
	struct mt_layout layout; /* --pp-layout, when given (job.pins.layout points here) */
};

static int bad(const char *cmd, const char *opt, const char *what, const char *got)
{
	fprintf(stderr, "megatune %s: error: --%s: expected %s, got '%s'\n", cmd, opt, what, got);
	return 2;
}

/* A release of tuner/flagtable.def into a job setting (index + 1); a name it
 * does not know is a usage error naming those it does. */
static int parse_release(const char *cmd, const char *opt, int kind, const char *arg, int *out)
{
	char list[512];
	int i, len = 0, rel = mt_release_find(kind, arg);

	if (rel >= 0) {
		*out = rel + 1;
		return 0;
	}
	for (i = 0; i < mt_release_count(kind) && len >= 0 && (size_t)len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - (size_t)len, "%s%s", i ? ", " : "",
				mt_release_name(kind, i));
	fprintf(stderr, "megatune %s: error: --%s: unknown release '%s'; known: %s (or the number, "
		"e.g. %s)\n", cmd, opt, arg, list,
		kind == MT_FLAG_MEGATRON ? "0.14" : "0.5");
	return 2;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_onoff(const char *s)
{
	if (!strcmp(s, "on") || !strcmp(s, "true") || !strcmp(s, "1"))
		return 1;
	if (!strcmp(s, "off") || !strcmp(s, "false") || !strcmp(s, "0"))
		return 0;
	return -1;
}

/* The options that pin a knob.  Returns -1 when `c` is handled, else the exit
 * code. */
static int parse_knob(const char *cmd, int c, const char *name, const char *arg, struct args *a)
{
	int *pin = NULL, onoff;
	long v;

	switch (c) {
	case O_TP: pin = &a->job.pins.tp; break;
	case O_PP: pin = &a->job.pins.pp; break;
	case O_VPP: pin = &a->job.pins.vpp; break;
	case O_CP: pin = &a->job.pins.cp; break;
	case O_EP: pin = &a->job.pins.ep; break;
	case O_ETP: pin = &a->job.pins.etp; break;
	case O_MBS: pin = &a->job.pins.mbs; break;
	case O_RC_LAYERS:
		if (!strcmp(arg, "all")) {
			a->job.pins.recompute_layers = MT_ALL_LAYERS;
			break;
		}
		pin = &a->job.pins.recompute_layers;
		break;
	case O_OFFLOAD:
		if (parse_long(arg, 0, 1 << 20, &v))
			return bad(cmd, name, "a number of layers (0 or more)", arg);
		a->job.pins.offload_layers = (int)v;
		break;
	case O_RECOMPUTE:
		if ((a->job.pins.recompute = mt_recompute_parse(arg)) < 0)
			return bad(cmd, name, "none, selective or full", arg);
		break;
	case O_CP_COMM:
		if ((a->job.pins.cp_comm = mt_cp_comm_parse(arg)) < 0)
			return bad(cmd, name, "p2p, all_gather, a2a or a2a+p2p", arg);
		break;
	case O_OFFLOAD_MODULES: {
		char badm[64];

		if (mt_offload_modules_parse(arg, &a->job.offload_modules, badm, sizeof(badm)))
			return bad(cmd, name, "modules among attn_norm, qkv_linear, core_attn, "
				   "attn_proj, mlp_norm, expert_fc1, moe_act (comma-separated)",
				   badm);
		break;
	}
	case O_OPT_OFFLOAD: {
		char *end;
		double d = strtod(arg, &end);
		if (end == arg || *end || !(d > 0 && d <= 1))
			return bad(cmd, name, "a share of the optimizer states in (0, 1]", arg);
		a->job.opt_offload = d;
		break;
	}
	case O_FSDP:
		if ((onoff = mt_fsdp_impl_parse(arg)) >= 0)
			a->job.pins.fsdp = onoff;
		else if ((onoff = parse_onoff(arg)) >= 0)
			a->job.pins.fsdp = onoff ? MT_FSDP_MEGATRON : MT_FSDP_OFF;
		else
			return bad(cmd, name, "on, off, megatron or torch", arg);
		break;
	case O_GRAD_REDUCE:
		if (!strcmp(arg, "fp32"))
			a->job.pins.grad_fp32 = 1;
		else if (!strcmp(arg, "bf16"))
			a->job.pins.grad_fp32 = 0;
		else
			return bad(cmd, name, "fp32 or bf16", arg);
		break;
	default:
		onoff = parse_onoff(arg);
		if (onoff < 0)
			return bad(cmd, name, "on or off", arg);
		switch (c) {
		case O_DIST_OPT: a->job.pins.dist_opt = onoff; break;
		case O_SP: a->job.pins.sp = onoff; break;
		case O_TP_OVERLAP: a->job.pins.tp_overlap = onoff; break;
		case O_OVERLAP_GRAD: a->job.pins.overlap_grad = onoff; break;
		case O_OVERLAP_PARAM: a->job.pins.overlap_param = onoff; break;
		case O_CE_FUSION: a->job.pins.fused_ce = onoff; break;
		case O_EP_OVERLAP: a->job.pins.ep_overlap = onoff; break;
		case O_PARAM_GATHER: a->job.param_gather_q = onoff; break;
		case O_CUDA_GRAPHS: a->job.pins.cuda_graph = onoff; break;
		case O_P2P_OVERLAP: a->job.pins.p2p_overlap = onoff; break;
		}
		break;
	}
	if (pin) {
		if (parse_long(arg, 1, 1 << 24, &v))
			return bad(cmd, name, "a positive integer", arg);
		*pin = (int)v;
	}
	return -1;
}

/* --moe-balance aux|forced|drop:CF into the job; -1 when malformed. */
static int parse_balance(const char *arg, struct mt_job *job)
{
	char *end;
	double cf;

	if (!strcmp(arg, "aux")) {
		job->moe_balance = MT_BAL_AUX;
	} else if (!strcmp(arg, "forced")) {
		job->moe_balance = MT_BAL_FORCED;
	} else if (!strncmp(arg, "drop:", 5) && (cf = strtod(arg + 5, &end)) >= 1 && cf <= 64 &&
		   end != arg + 5 && !*end) {
		job->moe_balance = MT_BAL_DROP;
		job->moe_capacity = cf;
	} else {
		return -1;
	}
	return 0;
}

/* --format NAME: its F_* value, or -1. */
static int parse_format(const char *arg)
{
	static const char *const names[] = { [F_TEXT] = "text", [F_JSON] = "json",
		[F_MEGATRON] = "megatron", [F_BRIDGE] = "bridge", [F_ENV] = "env",
		[F_TORCHRUN] = "torchrun", [F_SLURM] = "slurm" };
	int i;

	for (i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (names[i] && !strcmp(arg, names[i]))
			return i;
	return -1;
}

static int parse_args(const char *cmd, int argc, char **argv, struct args *a)
{
	long v;
	int c, idx, rc;

	memset(a, 0, sizeof(*a));
	a->cluster = "dgx-h100";
	mt_job_init(&a->job);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", long_opts, &idx)) != -1) {
		const char *name = NULL, *arg = optarg;

		for (idx = 0; long_opts[idx].name; idx++)
			if (long_opts[idx].val == c)
				name = long_opts[idx].name;
		switch (c) {
		case 'h':
			fputs(advise_usage, stdout);
			return 0;
		case '?':
			return cli_usage_error(cmd, optopt ? "option '%s' needs a value" :
					       "unknown option '%s'", argv[optind - 1]);
		case O_MODEL: a->model = arg; break;
		case O_NO_RULES: a->no_rules = 1; break;
		case O_RULES:
			if (a->nrule_paths == MAX_RULE_PATHS) {
				fprintf(stderr, "megatune %s: error: --rules: at most %d paths\n", cmd,
					MAX_RULE_PATHS);
				return 2;
			}
			a->rule_paths[a->nrule_paths++] = arg;
			break;
		case O_DISPATCHER:
			if ((a->job.moe_dispatcher = mt_dispatcher_parse(arg)) < MT_DISPATCH_AUTO)
				return bad(cmd, name, "alltoall, allgather, flex or auto", arg);
			break;
		case O_MOE_BALANCE:
			if (parse_balance(arg, &a->job))
				return bad(cmd, name, "aux, forced or drop:CF (a capacity factor from 1 to 64)", arg);
			break;
		case O_BUCKET:
			if (parse_long(arg, 1, 2000000000, &v))
				return bad(cmd, name, "a number of parameters (1 to 2e9)", arg);
			a->job.pins.bucket = (int)v;
			break;
		case O_PP_LAYOUT: {
			struct mt_error err = MT_ERROR_INIT;

			if (mt_layout_parse(arg, &a->layout, &err))
				return cli_fail(cmd, &err);
			a->job.pins.layout = &a->layout;
			break;
		}
		case O_CLUSTER: a->cluster = arg; break;
		case O_JSON: a->json = arg; break;
		case O_REPORT: a->report = arg; break;
		case O_MLM_VERSION:
		case O_BRIDGE_VERSION:
			if (parse_release(cmd, name, c == O_MLM_VERSION ? MT_FLAG_MEGATRON :
					  MT_FLAG_BRIDGE, arg, c == O_MLM_VERSION ?
					  &a->job.megatron_version : &a->job.bridge_version))
				return 2;
			break;
		case O_GPUS:
			if (parse_long(arg, 1, 1 << 24, &v))
				return bad(cmd, name, "a positive number of GPUs", arg);
			a->job.gpus = (int)v;
			break;
		case O_SEQ:
			if (parse_long(arg, 1, 1 << 26, &v))
				return bad(cmd, name, "a positive sequence length", arg);
			a->job.seq = (int)v;
			break;
		case O_GBS:
			if (parse_long(arg, 1, LONG_MAX / 2, &v))
				return bad(cmd, name, "a positive global batch size", arg);
			a->job.gbs = v;
			break;
		case O_TOP:
			if (parse_long(arg, 1, MT_TOP_MAX, &v))
				return bad(cmd, name, "an integer between 1 and 64", arg);
			a->job.top_k = (int)v;
			break;
		case O_HEADROOM: {
			double d;
			if (mt_parse_num_range(arg, 0, 90, &d) || d >= 90)
				return bad(cmd, name, "a percentage in [0, 90)", arg);
			a->job.mem_headroom = d / 100;
			break;
		}
		case O_PRECISION:
			if ((a->job.precision = mt_precision_parse(arg)) < 0)
				return bad(cmd, name, "bf16, fp8 or nvfp4", arg);
			break;
		case O_FP8_RECIPE:
			if ((a->job.fp8_recipe = mt_fp8_recipe_parse(arg)) < 0)
				return bad(cmd, name, "delayed, tensorwise, blockwise or mxfp8", arg);
			break;
		case O_ATTENTION:
			if (!strcmp(arg, "flash"))
				a->job.attn_impl = MT_ATTN_FLASH;
			else if (!strcmp(arg, "unfused"))
				a->job.attn_impl = MT_ATTN_UNFUSED;
			else
				return bad(cmd, name, "flash or unfused", arg);
			break;
		case O_FORMAT:
			if ((a->format = parse_format(arg)) < 0)
				return bad(cmd, name,
					   "text, json, megatron, bridge, env, torchrun or slurm", arg);
			break;
		default:
			if ((rc = parse_knob(cmd, c, name, arg, a)) >= 0)
				return rc;
			break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "megatune %s: error: unexpected argument '%s'\n", cmd, argv[optind]);
		return 2;
	}
	if (a->no_rules && a->nrule_paths) {
		fprintf(stderr, "megatune %s: error: --rules and --no-rules exclude each other\n", cmd);
		return 2;
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

static int emit(const char *cmd, const char *path, const struct sbuf *sb)
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

/* --format torchrun|slurm: the script that runs the candidate (tuner/launch.h). */
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
	} else {
		n = mt_candidate_env(ex, kv);
		mt_kv_render(&sb, kv, n, MT_KV_ASSIGN, "\n");
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

	if (mt_model_load(a->model, m, &err))
		return cli_fail(cmd, &err);
	warn_model(cmd, m, &a->job);
	if (mt_cluster_load(a->cluster, c, &err))
		return cli_fail(cmd, &err);
	*rs = NULL;
	if (!a->no_rules) {
		if (mt_ruleset_load_files(a->rule_paths, a->nrule_paths, 1, rs, &err))
			return cli_fail(cmd, &err);
	}
	return -1;
}

/* The HTML report of an advice document (the JSON in sb) with the cluster
 * the search used. */
static int write_report(const char *cmd, const struct args *a, const struct mt_cluster *c,
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
	if ((a->json && (rc = emit(cmd, a->json, sb))) ||
	    (a->report && (rc = write_report(cmd, a, c, sb)))) {
		mt_outset_abort(&os);
		return rc;
	}
	if (mt_outset_commit(&os, &err))
		return cli_fail(cmd, &err);
	return 0;
}

/* Explain the ranked candidates: the rules that fired for each. */
static int explain(struct mt_rules_run *run, const struct mt_search_result *res,
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
	if ((rc = parse_args("advise", argc, argv, &a)) >= 0)
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
	if (run) {
		ex = calloc((size_t)(res->ntop ? res->ntop : 1), sizeof(*ex));
		if (!ex || explain(run, res, ex, &err)) {
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
		if (a.format == F_JSON && (rc = emit("advise", "-", &sb)))
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
		rc = emit("advise", "-", &sb);
	} else if (a.format != F_JSON) {
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

static int pinned_or(int pin, int dflt)
{
	return pin != MT_UNSET ? pin : dflt;
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
	const struct mt_pins *p;
	int rc;

	memset(&ex, 0, sizeof(ex));
	memset(&ar, 0, sizeof(ar));
	if ((rc = parse_args("estimate", argc, argv, &a)) >= 0)
		return rc;
	if ((rc = load_inputs("estimate", &a, &m, &c, &rs)) >= 0)
		goto out;
	if (rs && mt_rules_start(rs, &m, c, &a.job, &run, &err)) {
		rc = cli_fail("estimate", &err);
		goto out;
	}
	p = &a.job.pins;
	memset(&cfg, 0, sizeof(cfg));
	mt_config_settings(&a.job, &cfg);
	cfg.tp = pinned_or(p->tp, 1);
	cfg.pp = pinned_or(p->pp, 1);
	cfg.vpp = pinned_or(mt_pins_vpp(p), 1); /* VPP may follow from the layout */
	cfg.cp = pinned_or(p->cp, 1);
	cfg.ep = pinned_or(p->ep, 1);
	cfg.etp = pinned_or(p->etp, 1);
	cfg.mbs = pinned_or(p->mbs, 1);
	cfg.recompute = pinned_or(p->recompute, MT_RC_NONE);
	cfg.recompute_layers = pinned_or(p->recompute_layers, 0);
	cfg.cp_comm = pinned_or(p->cp_comm, MT_CP_P2P);
	cfg.dist_opt = pinned_or(p->dist_opt, 1);
	cfg.fsdp = p->fsdp > 0 ? p->fsdp : MT_FSDP_OFF;
	cfg.offload_layers = pinned_or(p->offload_layers, 0);
	cfg.cuda_graph = pinned_or(p->cuda_graph, 0);
	cfg.sp = pinned_or(p->sp, cfg.tp > 1);
	cfg.bucket_params = p->bucket != MT_UNSET ? p->bucket : 0;
	if (mt_evaluate(&m, c, &a.job, run, &cfg, &e, &err)) {
		rc = cli_fail("estimate", &err);
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
		if (a.format == F_JSON && (rc = emit("estimate", "-", &sb)))
			goto out;
	}
	rc = 0;
	if (a.format == F_TEXT) {
		sbuf_reset(&sb);
		mt_estimate_text(&sb, &m, c, &a.job, &e, &ar);
		rc = emit("estimate", "-", &sb);
	} else if (a.format != F_JSON) {
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
