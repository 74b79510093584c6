/* SPDX-License-Identifier: MIT */
/* check: the job a user already runs, read from its own file, evaluated as it
 * is, diagnosed by the rules, and searched from: the best change of one knob,
 * of two, and the best overall, each with its gain and the exact diff of
 * flags.  The readers are job/script.h and job/megatron.h. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../tuner/advice.h"
#include "../tuner/search.h"
#include "../tuner/suggest.h"
#include "../job/diff.h"
#include "../job/flags.h"
#include "../job/knobs.h"
#include "../job/megatron.h"
#include "../job/formats.h"
#include "../job/script.h"
#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../lib/sbuf.h"
#include "../reports/advice.h"
#include "../reports/html.h"
#include "../rules/engine.h"
#include "../perfmodel/dispatch.h"
#include "../validate/logparse.h"
#include "../validate/validate.h"
#include "../check/check_change.h"
#include "../check/check_memory.h"
#include "cli.h"
#include "common.h"
#include "opts.h"

#define JOB_MAX_BYTES (256u << 20)
#define MAX_RULE_PATHS 16

struct args {
	const char *job, *cluster, *model, *json, *validation, *report;
	char **jobs;              /* JOB...: several are checked in turn */
	int njobs;
	int gpus;
	int warmup;               /* -1: the first logged interval */
	int no_rules, strict;
	const char *rule_paths[MAX_RULE_PATHS];
	int nrule_paths;
};

static const struct cli_opt check_opts[] = {
	CLI_SEC("job"),
	{ .type = CLI_STR, .name = "cluster", .meta = "NAME|FILE",
	  .off = offsetof(struct args, cluster),
	  .help = "a bundled profile or a megatune.profile/1 file\n(default dgx-h100)" },
	{ .type = CLI_INT, .name = "gpus", .meta = "N", .off = offsetof(struct args, gpus), .lo = 1,
	  .hi = 1 << 24, .want = "a positive number of GPUs",
	  .help = "GPUs of the job (default: the launcher's --nproc-per-node\n"
		  "x --nnodes, or the log's world_size)" },
	{ .type = CLI_STR, .name = "model", .meta = "NAME|FILE", .off = offsetof(struct args, model),
	  .help = "the model, instead of the job's own model flags (a\n"
		  "bundled name or a Hugging Face config): for a job whose\n"
		  "vocabulary comes from a tokenizer file" },
	{ .type = CLI_FLAG, .name = "strict", .off = offsetof(struct args, strict),
	  .help = "refuse a job or model whose key megatune does not read\n"
		  "resembles one it reads (a typo; otherwise a warning)" },
	CLI_SEC("rules"),
	{ .type = CLI_STRS, .name = "rules", .meta = "PATH",
	  .off = offsetof(struct args, rule_paths), .count_off = offsetof(struct args, nrule_paths),
	  .cap = MAX_RULE_PATHS, .want = "paths",
	  .help = "add a rule file or a folder of *.rules files" },
	{ .type = CLI_FLAG, .name = "no-rules", .off = offsetof(struct args, no_rules),
	  .help = "the model alone: no diagnoses, no rule choices" },
	CLI_SEC("output"),
	{ .type = CLI_STR, .name = "json", .meta = "FILE", .off = offsetof(struct args, json),
	  .help = "write megatune.check/1 JSON ('-': standard output,\n"
		  "instead of the text; docs/FORMATS.md)" },
	{ .type = CLI_STR, .name = "report", .meta = "FILE", .off = offsetof(struct args, report),
	  .help = "write the HTML report: the Check section, then the job\n"
		  "as it is (memory, time, rules); one job only" },
	CLI_SEC("a log's measurements"),
	{ .type = CLI_INT, .name = "warmup", .meta = "N", .off = offsetof(struct args, warmup),
	  .lo = 0, .hi = 1 << 30, .want = "a number of iterations",
	  .help = "iterations of the log left out of the measured step\n"
		  "(default: those of its first logged interval)" },
	{ .type = CLI_STR, .name = "validation", .meta = "FILE",
	  .off = offsetof(struct args, validation),
	  .help = "write the log's run as megatune.validation/1 (predicted\n"
		  "beside measured; calibrate --from-validation reads it),\n"
		  "with FILE's .advice.json and, for a model read from the\n"
		  "flags, .model.json beside it; with several logs FILE is a\n"
		  "folder: one LOG.validation.json per log with a run" },
	CLI_OPT_END,
};

static const char check_head[] =
	"usage: megatune check JOB... [--cluster P] [--gpus N] [options]\n"
	"\n"
	"check reads the job a user already runs and says what is wrong with it, what\n"
	"to change and how much that gains.  JOB ('-': standard input) is a Megatron-LM\n"
	"launch script (torchrun/srun/python lines running pretrain_gpt.py, with `\\`\n"
	"continuations and the script's variables and arrays), a file of arguments, a\n"
	"log holding the arguments block Megatron-LM prints at start-up; a\n"
	"Megatron-Bridge run_config.yaml, the configuration summary Bridge logs at\n"
	"start-up, or Bridge overrides (key=value); a verl Megatron-backend config\n"
	"(.hydra/config.yaml) or its Hydra overrides (a list or the launch script).\n"
	"The model comes from the job's own flags or keys (verl: the Hugging Face\n"
	"config its model.path names), else --model; every flag or key megatune does\n"
	"not model is listed.\n"
	"\n"
	"It prints the job as it is (the estimate's memory and time breakdown and the\n"
	"rules that fire for it: the diagnoses), then searches from it: the best change\n"
	"of one knob, the best of two, and the best configuration overall, each with its\n"
	"predicted gain and the exact diff to apply, in the job's own words\n"
	"(Megatron-LM flags, Bridge overrides or verl keys, and environment).  A job\n"
	"that does not fit gets the changes that make it fit.  Several JOBs (logs/*.log)\n"
	"are checked in turn, then one line each: its measured step against the\n"
	"prediction where it is a log with a run.\n";

static const char check_tail[] =
	"exit codes: 0 the job was checked; 1 it does not fit and no change found makes\n"
	"it fit; 2 bad usage or a job megatune cannot read (FILE:LINE: reason); with\n"
	"several jobs, the worst of theirs.\n"
	"\n"
	"examples:\n"
	"  megatune check train_llama3_70b.sh --cluster dgx-h100\n"
	"  megatune advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --format megatron \\\n"
	"    | megatune check - --gpus 8\n"
	"  megatune check checkpoints/iter_0001000/run_config.yaml --gpus 64\n"
	"  megatune check run_grpo_qwen3_30b.sh --cluster dgx-h100\n"
	"  megatune check logs/*.log --validation runs/ && megatune calibrate \\\n"
	"    --from-validation runs/*.validation.json --cluster dgx-h100 -o corrected.json\n";

const struct cli_spec cli_spec_check = {
	.cmd = "check", .head = check_head, .opts = check_opts, .tail = check_tail,
};

/* ---- the changes searched ---- */

/* A change frees a group of knobs the first of which names it; the others
 * follow it (SP with TP, VPP with PP, ...). */
static const struct change {
	const char *name;
	int k[5];
	int moe;    /* MoE models only */
} changes[] = {
	{ "TP", { MT_KNOB_TP, MT_KNOB_SP, -1 }, 0 },
	{ "PP", { MT_KNOB_PP, MT_KNOB_VPP, -1 }, 0 },
	{ "VPP", { MT_KNOB_VPP, -1 }, 0 },
	{ "CP", { MT_KNOB_CP, MT_KNOB_CP_COMM, -1 }, 0 },
	{ "CP communication", { MT_KNOB_CP_COMM, -1 }, 0 },
	{ "EP", { MT_KNOB_EP, -1 }, 1 },
	{ "ETP", { MT_KNOB_ETP, -1 }, 1 },
	{ "dispatcher", { MT_KNOB_DISPATCHER, -1 }, 1 },
	{ "EP overlap", { MT_KNOB_EP_OVERLAP, -1 }, 1 },
	{ "micro-batch", { MT_KNOB_MBS, -1 }, 0 },
	{ "recompute", { MT_KNOB_RECOMPUTE, MT_KNOB_RC_LAYERS, MT_KNOB_RC_METHOD, MT_KNOB_RC_MODULES, -1 }, 0 },
	{ "activation offload", { MT_KNOB_OFFLOAD, -1 }, 0 },
	{ "distributed optimizer", { MT_KNOB_DIST_OPT, -1 }, 0 },
	{ "precision-aware optimizer",
	  { MT_KNOB_PREC_OPT, MT_KNOB_EXP_AVG, MT_KNOB_EXP_AVG_SQ, MT_KNOB_MAIN_PARAMS, -1 }, 0 },
	{ "FSDP", { MT_KNOB_FSDP, MT_KNOB_DIST_OPT, -1 }, 0 },
	{ "gradient-reduce overlap", { MT_KNOB_OVERLAP_GRAD, -1 }, 0 },
	{ "param-gather overlap", { MT_KNOB_OVERLAP_PARAM, -1 }, 0 },
	{ "bucket size", { MT_KNOB_BUCKET, -1 }, 0 },
	{ "gradient-reduce precision", { MT_KNOB_GRAD_FP32, -1 }, 0 },
	{ "TP overlap", { MT_KNOB_TP_OVERLAP, -1 }, 0 },
	{ "sequence parallelism", { MT_KNOB_SP, -1 }, 0 },
	{ "pipeline send overlap", { MT_KNOB_P2P_OVERLAP, -1 }, 0 },
	{ "CUDA graphs", { MT_KNOB_CUDA_GRAPH, -1 }, 0 },
	{ "cross-entropy fusion", { MT_KNOB_FUSED_CE, -1 }, 0 },
};
#define NCHANGES ((int)(sizeof(changes) / sizeof(changes[0])))

/* A gain counts when it is at least this share of the step (below it the
 * model's own resolution decides) */
#define MIN_GAIN 0.005

struct found {
	int feasible;
	struct mt_eval e;
	int a, b;          /* the changes (-1: none); a = -2: everything free */
	struct mt_explain ex;
	int have_ex;
	struct mt_gain g[MT_GAINS_MAX]; /* what each setting buys (the shown changes) */
	int ng;
};

struct ctx {
	const struct mt_model *m;
	const struct mt_cluster *c;
	const struct mt_ruleset *rs;
	long long searches;
};

static void free_change(struct mt_job *j, int ch)
{
	int i;

	for (i = 0; i < (int)(sizeof(changes[ch].k) / sizeof(changes[ch].k[0])) &&
		    changes[ch].k[i] >= 0; i++) {
		int k = changes[ch].k[i];

		if (k == MT_KNOB_DISPATCHER)
			j->moe_dispatcher = MT_DISPATCH_AUTO;
		else
			mt_knob_set_pin(j, k, MT_UNSET);
		if (k == MT_KNOB_PP || k == MT_KNOB_VPP)
			j->pins.layout = NULL;
	}
}

/* The fastest configuration of job j (its pins as they are): top[0]. */
static int search(struct ctx *x, const struct mt_job *j, struct found *f, int a, int b,
		  struct mt_error *err)
{
	struct mt_search_result *res = calloc(1, sizeof(*res));
	struct mt_rules_run *run = NULL;
	int rc = MT_OK;

	memset(f, 0, sizeof(*f));
	f->a = a;
	f->b = b;
	if (!res)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if (x->rs && (rc = mt_rules_start(x->rs, x->m, x->c, j, &run, err)))
		goto out;
	x->searches++;
	if ((rc = mt_search(x->m, x->c, j, run, res, err))) {
		/* a pin the change leaves makes the job impossible: no result */
		memset(err, 0, sizeof(*err));
		rc = MT_OK;
		goto out;
	}
	if (res->ntop) {
		f->feasible = 1;
		f->e = res->top[0];
		if (run && !mt_rules_explain(run, &f->e, 1, (int)res->feasible, f->e.time.step,
					     &f->ex))
			f->have_ex = 1;
	}
out:
	mt_rules_end(run);
	free(res);
	return rc;
}

/* The job's environment as the rules want it for configuration c: the
 * variables the job lacks or sets otherwise (diagnoses). */
static int env_gaps(struct sbuf *sb, cJSON *arr, const struct mt_jobsrc *s, const struct mt_kv *want,
		    int nwant)
{
	int i, n = 0;
	char line[512];

	for (i = 0; i < nwant; i++) {
		const char *have = mt_jobsrc_env(s, want[i].key);

		if (mt_kv_is_note(&want[i]) || (have && !strcmp(have, want[i].val)))
			continue;
		n++;
		if (have)
			snprintf(line, sizeof(line), "%s=%s, the rules want %s", want[i].key, have,
				 want[i].val);
		else
			snprintf(line, sizeof(line), "%s is not set; the rules want %s=%s", want[i].key,
				 want[i].key, want[i].val);
		if (sb)
			sbuf_addf(sb, "  ! %s\n", line);
		if (arr)
			cJSON_AddItemToArray(arr, cJSON_CreateString(line));
	}
	return n;
}

/* What the job departs from: the constraints it breaks, the set rules its
 * flags override, the diagnose rules that fire.  Returns the count. */
static int check_diagnoses(struct sbuf *sb, cJSON *arr, const struct mt_explain *ex)
{
	int i, n = 0;

	for (i = 0; ex && i < ex->n; i++) {
		const struct mt_fired *f = &ex->v[i];
		const char *what;

		if (f->status == MT_FIRE_VIOLATED)
			what = "breaks";
		else if (f->status == MT_FIRE_OVERRIDDEN)
			what = "overrides";
		else if (f->status == MT_FIRE_NOTE && f->rule->kind == MT_RK_DIAGNOSE)
			what = "diagnosis";
		else
			continue;
		n++;
		if (sb) {
			sbuf_addf(sb, "  ! %s (%s%s%s): %s\n", f->rule->id, what,
				  f->effect ? ": the rule sets " : "", f->effect ? f->effect : "",
				  f->message ? f->message : "");
			if (f->rule->ncites)
				sbuf_addf(sb, "      source: %s\n", f->rule->cites[0]);
		}
		if (arr) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "rule", f->rule->id);
			cJSON_AddStringToObject(o, "status", mt_fire_status_name(f->status));
			if (f->effect)
				cJSON_AddStringToObject(o, "effect", f->effect);
			cJSON_AddStringToObject(o, "message", f->message ? f->message : "");
			if (f->rule->ncites)
				cJSON_AddStringToObject(o, "cite", f->rule->cites[0]);
			cJSON_AddItemToArray(arr, o);
		}
	}
	return n;
}

/* TP (with CP inside it) larger than an NVLink domain */
static int span_domains(const struct mt_config *cfg, const struct mt_cluster *c)
{
	return c->nvlink_domain > 0 && cfg->tp > c->nvlink_domain;
}

/* The kinds of job, in words and in megatune.check/1 */
static const struct {
	int kind;
	const char *words, *json;
} kinds[] = {
	{ MT_JS_ARGS, "arguments", "arguments" },
	{ MT_JS_SCRIPT, "launch script", "script" },
	{ MT_JS_ARGBLOCK, "Megatron-LM log (arguments block)", "arguments_block" },
	{ MT_JS_BRIDGE_YAML, "Megatron-Bridge config", "bridge_yaml" },
	{ MT_JS_BRIDGE_SUMMARY, "Megatron-Bridge log (configuration summary)", "bridge_summary" },
	{ MT_JS_BRIDGE_OVERRIDES, "Megatron-Bridge overrides", "bridge_overrides" },
	{ MT_JS_VERL_YAML, "verl config", "verl_yaml" },
	{ MT_JS_VERL_OVERRIDES, "verl overrides", "verl_overrides" },
};

static const char *check_kind_name(int k, int json)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == k)
			return json ? kinds[i].json : kinds[i].words;
	return "arguments";
}

/* A job whose text lists every field, set or at its default */
static int lists_every_field(int k)
{
	return k == MT_JS_ARGBLOCK || k == MT_JS_BRIDGE_YAML || k == MT_JS_VERL_YAML;
}

/* An argument of the job in its own words: the key it wrote (Bridge, verl)
 * or the flag */
static void arg_name(const struct mt_jobsrc *s, int i, char *buf, size_t cap)
{
	if (s->orig[i] > 0)
		snprintf(buf, cap, "%s", s->raw[s->orig[i] - 1].key);
	else
		snprintf(buf, cap, "--%s", s->arg[i].key);
}

static const char *change_name(const struct found *f, char *buf, size_t cap)
{
	if (f->a == -2)
		snprintf(buf, cap, "everything");
	else if (f->b >= 0)
		snprintf(buf, cap, "%s + %s", changes[f->a].name, changes[f->b].name);
	else
		snprintf(buf, cap, "%s", changes[f->a].name);
	return buf;
}

static int check_parse(int argc, char **argv, struct args *a)
{
	struct stat st;
	int rc, first, i;

	memset(a, 0, sizeof(*a));
	a->cluster = "dgx-h100";
	a->warmup = -1;
	if ((rc = cli_parse(&cli_spec_check, argc, argv, a, &first)) >= 0)
		return rc;
	if (first >= argc)
		return cli_usage_error("check", "missing JOB (a launch script, a file of arguments, "
				       "a log, or '-')");
	a->job = argv[first];
	a->jobs = argv + first;
	a->njobs = argc - first;
	for (i = 0; a->njobs > 1 && i < a->njobs; i++)
		if (!strcmp(a->jobs[i], "-"))
			return cli_usage_error("check", "'-' (standard input) is one job: give it alone");
	if (a->njobs > 1 && a->validation && (stat(a->validation, &st) || !S_ISDIR(st.st_mode)))
		return cli_usage_error("check", "--validation %s: with several jobs, a folder that "
				       "exists (one LOG.validation.json per log)", a->validation);
	if (a->no_rules && a->nrule_paths)
		return cli_usage_error("check", "--rules and --no-rules exclude each other");
	if (a->report && a->json && !strcmp(a->report, "-") && !strcmp(a->json, "-"))
		return cli_usage_error("check", "--json - and --report -: one of them on standard output");
	if (a->njobs > 1 && a->report)
		return cli_usage_error("check", "--report: one job at a time");
	if (a->validation && !strcmp(a->validation, "-"))
		return cli_usage_error("check", "--validation writes files beside FILE: give a path");
	return -1;
}

/* Everything one check holds */
struct st {
	struct args a;
	struct mt_error err;
	struct mt_jobsrc *src;
	struct mt_megatron_job *mj;
	struct mt_cluster *c;
	struct mt_ruleset *rs;
	struct mt_rules_run *run;
	struct mt_explain as_ex;
	struct mt_advice_rules ar;
	struct found *one, best1, best2, overall;
	struct mt_eval as;
	int as_ok;
	char cant[MT_ERROR_MSG_MAX]; /* why the job as written cannot be timed, or "" */
	struct mt_kv want_env[MT_FLAGS_MAX];
	int nwant;
	struct ctx x;
	char *buf;
	struct mt_logparse *lp;  /* a log's iteration lines, NULL for a script */
	int warmup;              /* iterations of the log left out */
	struct mt_validation v;  /* the log's run, predicted beside measured */
	int has_run;
	int many;                /* one of several jobs: --validation only for a run */
	struct check_base base;  /* the job as it is, and its measured step, for the changes */
};

static double gain_of(const struct check_base *b, const struct found *f)
{
	return check_gain(b, &f->e);
}

/* One change, text and JSON (check_change.h) */
static void show_change(struct sbuf *sb, cJSON *arr, const char *title, const struct found *f,
			const struct st *t)
{
	char name[96];
	struct check_change ch = { title, change_name(f, name, sizeof(name)), &f->e,
				   f->have_ex ? &f->ex : NULL, f->g, f->ng };

	check_show_change(sb, arr, &ch, &t->base, t->src, t->mj);
}

/* The job, its model, the cluster and the rules */
static int check_load(struct st *t)
{
	size_t len = 0;
	int i;

	t->src = calloc(1, sizeof(*t->src));
	t->mj = calloc(1, sizeof(*t->mj));
	t->one = calloc(NCHANGES, sizeof(*t->one));
	if (!t->src || !t->mj || !t->one)
		return mt_error_set(&t->err, MT_ENOMEM, "out of memory");
	if (mt_job_load(t->a.job, t->a.model, t->a.gpus, JOB_MAX_BYTES, &t->buf, &len, t->src,
			t->mj, &t->err) ||
	    mt_cluster_load(t->a.cluster, &t->c, &t->err) ||
	    mt_job_cluster(t->mj, t->src, t->c, t->a.cluster, &t->err) ||
	    cli_typos("check", t->src, &t->mj->model, t->a.strict, &t->err))
		return MT_EINVAL;
	if (t->src->kind == MT_JS_ARGBLOCK || t->src->kind == MT_JS_BRIDGE_SUMMARY) {
		if (!(t->lp = malloc(sizeof(*t->lp))))
			return mt_error_set(&t->err, MT_ENOMEM, "out of memory");
		mt_logparse_init(t->lp);
		mt_logparse_feed(t->lp, t->buf, len);
		mt_logparse_finish(t->lp);
		/* the first logged interval holds the start-up */
		t->warmup = t->a.warmup >= 0 ? t->a.warmup : t->lp->nstep > 1 ? (int)t->lp->iter[0] : 0;
	}
	cli_cluster_warnings("check", t->c);
	for (i = 0; i < t->mj->model.nnotes; i++)
		fprintf(stderr, "megatune check: warning: %s\n", t->mj->model.notes[i]);
	if (!t->a.no_rules &&
	    mt_ruleset_load_files(t->a.rule_paths, t->a.nrule_paths, 1, &t->rs, &t->err))
		return MT_EINVAL;
	return MT_OK;
}

/* The job as it is: every knob pinned to the job's value */
static int check_as_is(struct st *t)
{
	struct mt_megatron_job *mj = t->mj;
	struct mt_config cfg = mj->cfg;

	if (t->rs && mt_rules_start(t->rs, &mj->model, t->c, &mj->job, &t->run, &t->err))
		return MT_EINVAL;
	t->as.cfg = cfg;
	if (mt_evaluate(&mj->model, t->c, &mj->job, t->run, &cfg, &t->as, &t->err)) {
		/* the same message as a pin: megatune cannot time the job as
		 * written; the searches from it still say what would run */
		snprintf(t->cant, sizeof(t->cant), "%s", t->err.msg);
		memset(&t->err, 0, sizeof(t->err));
		t->as.cfg = mj->cfg;
	}
	t->as_ok = !t->cant[0] && t->as.feasible;
	if (t->run && !t->cant[0] && !mt_rules_explain(t->run, &t->as, 0, -1, 0, &t->as_ex)) {
		t->ar.set = t->rs;
		t->ar.run = t->run;
		t->ar.ex = &t->as_ex;
		t->ar.nex = 1;
		t->nwant = mt_candidate_env(&t->as_ex, t->want_env);
	}
	return MT_OK;
}

/* The searches from the job: each change alone, each pair, everything */
static int searches(struct st *t)
{
	const struct mt_megatron_job *mj = t->mj;
	int i, k, moe = mj->model.experts > 0;

	t->x.m = &mj->model;
	t->x.c = t->c;
	t->x.rs = t->rs;
	for (i = 0; i < NCHANGES; i++) {
		struct mt_job j = mj->job;

		t->one[i].a = -1;
		if (changes[i].moe && !moe)
			continue;
		free_change(&j, i);
		if (search(&t->x, &j, &t->one[i], i, -1, &t->err))
			return MT_EINVAL;
		if (t->one[i].feasible &&
		    (!t->best1.feasible || t->one[i].e.time.step < t->best1.e.time.step))
			t->best1 = t->one[i];
	}
	for (i = 0; i < NCHANGES; i++)
		for (k = i + 1; k < NCHANGES; k++) {
			struct mt_job j = mj->job;
			struct found f;

			if ((!t->one[i].feasible && !t->one[k].feasible && t->as_ok) ||
			    ((changes[i].moe || changes[k].moe) && !moe))
				continue;
			free_change(&j, i);
			free_change(&j, k);
			if (search(&t->x, &j, &f, i, k, &t->err))
				return MT_EINVAL;
			if (f.feasible && (!t->best2.feasible || f.e.time.step < t->best2.e.time.step)) {
				if (t->best2.have_ex)
					mt_explain_free(&t->best2.ex);
				t->best2 = f;
			} else if (f.have_ex) {
				mt_explain_free(&f.ex);
			}
		}
	{
		struct mt_job j = mj->job;

		for (i = 0; i < NCHANGES; i++)
			free_change(&j, i);
		if (search(&t->x, &j, &t->overall, -2, -1, &t->err))
			return MT_EINVAL;
	}
	/* what each setting of the changes shown buys, once for text and JSON */
	for (i = 0; t->as_ok && i < 3; i++) {
		struct found *f = i == 0 ? &t->best1 : i == 1 ? &t->best2 : &t->overall;

		if (f->feasible)
			f->ng = mt_gains(&mj->model, t->c, &mj->job, &f->e, &t->as.cfg, f->g,
					 MT_GAINS_MAX);
	}
	return MT_OK;
}

/* The job's header lines: its file, model, GPUs, flags not modelled, notes */
static void text_job(struct sbuf *sb, const struct st *t)
{
	const struct mt_jobsrc *src = t->src;
	const struct mt_megatron_job *mj = t->mj;
	int i;

	sbuf_addf(sb, "megatune check: %s (%s%s%s)\n", src->file, check_kind_name(src->kind, 0),
		  src->entry[0] ? ": " : "", src->entry);
	sbuf_addf(sb, "  model: %s, %d layers, hidden %d, %d heads, %.1fB parameters%s\n",
		  mj->model.name, mj->model.layers, mj->model.hidden, mj->model.heads,
		  mj->model.params_total / 1e9, mj->model.experts ? " (MoE)" : "");
	sbuf_addf(sb, "  job: %d GPUs of %s (%s), seq %d, global batch %lld\n", mj->job.gpus,
		  t->c->name, mj->gpus_from, mj->job.seq, (long long)mj->job.gbs);
	if (mj->nunknown && lists_every_field(src->kind)) {
		/* the block and the saved configs hold every field, set or default */
		sbuf_addf(sb, "  not modelled: %d other field%s of the %s (it holds every field, set "
			  "or default; --json lists them)\n", mj->nunknown, mj->nunknown > 1 ? "s" : "",
			  src->kind == MT_JS_ARGBLOCK ? "arguments block" : "config");
	} else if (mj->nunknown) {
		sbuf_addf(sb, "  not modelled (%d %s megatune does not time):", mj->nunknown,
			  src->format == MT_JF_MEGATRON ? (mj->nunknown > 1 ? "flags" : "flag") :
			  (mj->nunknown > 1 ? "keys" : "key"));
		for (i = 0; i < mj->nunknown; i++) {
			char name[128];

			arg_name(src, mj->unknown[i], name, sizeof(name));
			sbuf_addf(sb, "%s %s (line %d)", i ? "," : "", name, src->line[mj->unknown[i]]);
		}
		sbuf_adds(sb, "\n");
	}
	i = mt_jobsrc_find(src, "transformer-impl");
	if (i >= 0 && !strcmp(src->arg[i].val, "local"))
		sbuf_adds(sb, "  Megatron-LM's own layers (--transformer-impl local): timed as the PyTorch "
			  "eager kernels they run, the unfused attention's score matrix, the norms, RoPE, "
			  "the activation and the residual adds each with its HBM traffic, and the host's "
			  "issue of each kernel; the fusions the job turns off as their eager ops; the "
			  "optimizer step Megatron-LM falls back to without Transformer Engine and Apex "
			  "(torch's AdamW, a loop over the parameter tensors for the norm and the "
			  "clipping) (docs/MODEL.md 4.11)\n");
	if (mj->nfusion_off) {
		sbuf_adds(sb, "  timed as fused (Megatron-LM's default; the job turns the fusion off and "
			  "runs slower than timed):");
		for (i = 0; i < mj->nfusion_off; i++) {
			char name[128];

			arg_name(src, mj->fusion_off[i], name, sizeof(name));
			sbuf_addf(sb, "%s %s", i ? "," : "", name);
		}
		sbuf_adds(sb, "\n");
	}
	if (src->nskipped)
		sbuf_addf(sb, "  not timed: %d key%s of sections that do not change the step time "
			  "(checkpoint, logger, scheduler, ...)\n", src->nskipped,
			  src->nskipped > 1 ? "s" : "");
	for (i = 0; i < src->nnotes; i++)
		sbuf_addf(sb, "  note: %s\n", src->notes[i]);
}

/* The job as it is and its diagnoses */
static void text_as_is(struct sbuf *sb, const struct st *t)
{
	const struct mt_megatron_job *mj = t->mj;
	struct sbuf est = SBUF_INIT;
	int n;

	sbuf_adds(sb, "\nas it is:\n");
	if (t->cant[0]) {
		sbuf_addf(sb, "  ! megatune cannot time the job as written: %s\n", t->cant);
		if (span_domains(&mj->cfg, t->c))
			sbuf_addf(sb, "  ! TP %d spans %d NVLink domains of %d GPUs: its collectives cross "
				  "the network, each layer's all-gathers and reduce-scatters at the NICs' "
				  "bandwidth\n", mj->cfg.tp,
				  (mj->cfg.tp + t->c->nvlink_domain - 1) / t->c->nvlink_domain,
				  t->c->nvlink_domain);
		return;
	}
	mt_estimate_text(&est, &mj->model, t->c, &mj->job, &t->as, -1, &t->ar);
	sbuf_add(sb, est.buf, est.len);
	sbuf_release(&est);
	sbuf_adds(sb, "\ndiagnoses (what the job departs from, each with its rule):\n");
	n = check_diagnoses(sb, NULL, t->run ? &t->as_ex : NULL);
	if (!t->as.feasible) {
		sbuf_addf(sb, "  ! the job does not fit: %.1f GiB per GPU on its most loaded stage, "
			  "%.1f GiB usable (the memory table above)\n", t->as.mem.total / (1u << 30),
			  t->c->memory_bytes * (1 - mj->job.mem_headroom) / (1u << 30));
		n++;
	}
	n += env_gaps(sb, NULL, t->src, t->want_env, t->nwant);
	if (!n)
		sbuf_adds(sb, "  none\n");
}

/* The advice document of the job as it is, parsed */
static cJSON *as_is_doc(struct st *t)
{
	struct sbuf ej = SBUF_INIT;
	struct mt_error e2 = MT_ERROR_INIT;
	cJSON *e = NULL;

	mt_estimate_json(&ej, &t->mj->model, t->c, &t->mj->job, &t->as, &t->ar);
	if (ej.failed || mt_json_parse("estimate", ej.buf, ej.len, &e, &e2))
		e = NULL;
	sbuf_release(&ej);
	return e;
}

/* A log's run as a megatune.validation/1 candidate, predicted beside
 * measured, from the advice document of the job as it is (t->v) */
static int measure_log(struct st *t)
{
	struct mt_validate_opts o;
	cJSON *adv;
	int rc;

	t->base = (struct check_base){ &t->as, t->as_ok, t->run ? &t->as_ex : NULL, 0 };
	if (!t->lp || t->cant[0])
		return MT_OK;
	if (!(adv = as_is_doc(t)))
		return mt_error_set(&t->err, MT_ENOMEM, "out of memory");
	mt_validate_opts_init(&o, ".");
	o.advice_path = "";
	o.top = 1;
	o.warmup = t->warmup;
	rc = mt_validate_init(&t->v, adv, &o, &t->err);
	cJSON_Delete(adv);
	if (rc)
		return rc;
	if (mt_validate_from_log(&t->v, 0, t->lp, t->as.tput.model_flops_step, t->warmup,
				 t->src->file) != MT_OK)
		return mt_error_set(&t->err, MT_ENOMEM, "out of memory");
	free(t->v.mode);
	t->v.mode = strdup("log");
	t->v.iters = t->lp->nstep ? (int)t->lp->last_iter : 0;
	if (mt_validation_summarize(&t->v) != MT_OK)
		return mt_error_set(&t->err, MT_ENOMEM, "out of memory");
	t->has_run = 1;
	/* the changes are stated against the measured step (check_change.h) */
	if (t->v.cand[0].has_measured && t->v.cand[0].meas.step_s > 0 && t->as.time.step > 0)
		t->base.measured = t->v.cand[0].meas.step_s;
	return MT_OK;
}

/* Measured beside predicted: the log's steady steps, memory and failure */
static void text_measured(struct sbuf *sb, const struct st *t)
{
	const struct mt_vcand *c = t->has_run ? &t->v.cand[0] : NULL;

	if (!c)
		return;
	sbuf_addf(sb, "\nmeasured (the log: %d iteration line%s):\n", t->lp->nstep,
		  t->lp->nstep == 1 ? "" : "s");
	if (c->has_measured) {
		sbuf_addf(sb, "  step %.3f s (median of %d after iteration %d; IQR %.3f s) against "
			  "%.3f s predicted: %+.1f%%\n", c->meas.step_s, c->meas.step_n, t->warmup,
			  c->meas.step_iqr_s, c->pred.step_s,
			  100 * mt_vrel(c->meas.step_s, c->pred.step_s));
		sbuf_addf(sb, "  %.0f tokens/s per GPU (predicted %.0f), %.1f model TFLOP/s per GPU "
			  "(predicted %.1f)\n", c->meas.tokens_per_s_per_gpu,
			  c->pred.tokens_per_s_per_gpu, c->meas.tflops_per_gpu, c->pred.tflops_per_gpu);
	}
	if (c->nmemr)
		check_memory_ranks(sb, NULL, c);
	else if (isfinite(c->meas.mem_max_reserved_gib) && c->has_measured)
		sbuf_addf(sb, "  memory: %.1f GiB reserved at most (worst rank) against %.1f GiB "
			  "predicted\n", c->meas.mem_max_reserved_gib, c->pred.mem_gib);
	sbuf_addf(sb, "  status: %s", mt_vstatus_name(c->status));
	if (c->reason)
		sbuf_addf(sb, " (%s)", c->reason);
	sbuf_adds(sb, "\n");
	if (c->evidence_line && c->status != MT_VS_OK)
		sbuf_addf(sb, "  line %ld: %s\n", c->evidence_lineno, c->evidence_line);
}

/* --validation FILE: the record, the advice of the job as it is and the
 * model of its flags beside it, all written or none */
static int write_validation(struct st *t)
{
	char adv_path[1100], model_path[1100];
	const char *f = t->a.validation, *dot = strrchr(f, '.');
	size_t stem = dot && dot > strrchr(f, '/') && !strcmp(dot, ".json") ? (size_t)(dot - f)
									     : strlen(f);
	struct mt_outset os;
	struct sbuf doc = SBUF_INIT;
	cJSON *adv = NULL;
	char *advtext = NULL;
	int rc = MT_EINVAL;

	if (!t->has_run)
		return mt_error_set(&t->err, MT_EINVAL, "--validation: %s", t->cant[0] ?
				    "megatune cannot time the job as written" :
				    "the job is not a log (no run to record)");
	snprintf(adv_path, sizeof(adv_path), "%.*s.advice.json", (int)stem, f);
	snprintf(model_path, sizeof(model_path), "%.*s.model.json", (int)stem, f);
	if (strlen(model_path) >= sizeof(t->mj->model.source))
		return mt_error_set(&t->err, MT_EINVAL, "--validation %s: a path of at most %zu bytes, "
				    "with its .model.json", f, sizeof(t->mj->model.source) - 12);
	if (t->mj->model_json[0])
		memcpy(t->mj->model.source, model_path, strlen(model_path) + 1);
	if (!(adv = as_is_doc(t)) || !(advtext = cJSON_Print(adv))) {
		mt_error_set(&t->err, MT_ENOMEM, "out of memory");
		goto out;
	}
	free(t->v.advice);
	t->v.advice = strdup(adv_path);
	if (mt_validation_json(&doc, &t->v) != MT_OK) {
		mt_error_set(&t->err, MT_ENOMEM, "out of memory");
		goto out;
	}
	mt_outset_begin(&os);
	if ((t->mj->model_json[0] &&
	     mt_outset_stage(&os, model_path, t->mj->model_json, strlen(t->mj->model_json), &t->err)) ||
	    mt_outset_stage(&os, adv_path, advtext, strlen(advtext), &t->err) ||
	    mt_outset_stage(&os, f, doc.buf, doc.len, &t->err)) {
		mt_outset_abort(&os);
		goto out;
	}
	rc = mt_outset_commit(&os, &t->err);
out:
	free(advtext);
	cJSON_Delete(adv);
	sbuf_release(&doc);
	return rc;
}

static int nothing_fits(const struct st *t)
{
	return !t->as_ok && !t->best1.feasible && !t->best2.feasible && !t->overall.feasible;
}

/* The changes: one knob, two, everything */
static void text_changes(struct sbuf *sb, const struct st *t)
{
	int one = t->best1.feasible && (!t->as_ok || gain_of(&t->base, &t->best1) >= MIN_GAIN);
	int two = t->best2.feasible && (!t->best1.feasible ||
					t->best2.e.time.step < t->best1.e.time.step * (1 - MIN_GAIN));
	int all = t->overall.feasible && (!t->as_ok || gain_of(&t->base, &t->overall) >= MIN_GAIN);
	double m = t->base.measured, p = t->as.time.step;
	int i;

	if (nothing_fits(t)) {
		struct mt_search_result *res = calloc(1, sizeof(*res));

		sbuf_adds(sb, "\nno change of the knobs makes the job fit");
		if (res && mt_suggest_fits(&t->mj->model, t->c, &t->mj->job, res) > 0) {
			sbuf_adds(sb, "; changes of the job that do:\n");
			for (i = 0; i < res->nsugg; i++)
				sbuf_addf(sb, "  %s\n", res->sugg[i].change);
		} else {
			sbuf_adds(sb, "\n");
		}
		free(res);
	}
	/* the basis of the changes, said once (check_change.h) */
	if (m > 0 && (one || two || all))
		sbuf_addf(sb, "\nevery change below is stated against the measured step: the model's "
			  "ratio applied to\n%.3f s, its band widened by the %.2fx the model is off here\n",
			  m, m >= p ? m / p : p / m);
	if (one)
		show_change(sb, NULL, "one knob", &t->best1, t);
	else if (t->as_ok)
		sbuf_adds(sb, "\none knob: no single change gains 0.5% or more\n");
	else
		sbuf_adds(sb, "\none knob: no single change makes the job run and fit\n");
	if (two)
		show_change(sb, NULL, "two knobs", &t->best2, t);
	if (all)
		show_change(sb, NULL, "best overall", &t->overall, t);
	else if (t->as_ok && t->overall.feasible)
		sbuf_adds(sb, "\nbest overall: the job is within 0.5% of the best megatune finds\n");
	sbuf_addf(sb, "\n(%lld searches from the job; docs/CHECK.md)\n", t->x.searches);
}

/* The log's run in the JSON: "measured" (docs/CHECK.md section 3) */
static void json_measured(cJSON *doc, const struct st *t)
{
	const struct mt_vcand *c = t->has_run ? &t->v.cand[0] : NULL;
	cJSON *m;

	if (c) {
		m = cJSON_AddObjectToObject(doc, "measured");
		cJSON_AddStringToObject(m, "status", mt_vstatus_name(c->status));
		if (c->reason)
			cJSON_AddStringToObject(m, "reason", c->reason);
		if (c->evidence_line) {
			cJSON_AddStringToObject(m, "evidence_line", c->evidence_line);
			cJSON_AddNumberToObject(m, "evidence_lineno", (double)c->evidence_lineno);
		}
		cJSON_AddNumberToObject(m, "warmup", t->warmup);
		if (c->nmemr)
			check_memory_ranks(NULL, cJSON_AddArrayToObject(m, "memory_ranks"), c);
		if (t->lp->cut_lineno) /* the log ends mid-line there: that step not counted */
			cJSON_AddNumberToObject(m, "log_cut_lineno", (double)t->lp->cut_lineno);
		if (c->has_measured) {
			cJSON_AddNumberToObject(m, "step_s", c->meas.step_s);
			cJSON_AddNumberToObject(m, "step_n", c->meas.step_n);
			cJSON_AddNumberToObject(m, "step_iqr_s", c->meas.step_iqr_s);
			cJSON_AddNumberToObject(m, "tokens_per_s_per_gpu", c->meas.tokens_per_s_per_gpu);
			cJSON_AddNumberToObject(m, "tflops_per_gpu", c->meas.tflops_per_gpu);
			if (isfinite(c->meas.mem_max_reserved_gib))
				cJSON_AddNumberToObject(m, "mem_max_reserved_gib",
							c->meas.mem_max_reserved_gib);
			cJSON_AddNumberToObject(m, "predicted_step_s", c->pred.step_s);
			cJSON_AddNumberToObject(m, "rel_error_step",
						mt_vrel(c->meas.step_s, c->pred.step_s));
			/* the changes' step_s_measured_basis: their step times this */
			if (t->base.measured > 0)
				cJSON_AddNumberToObject(m, "changes_scale",
							t->base.measured / t->as.time.step);
		}
	}
}

/* megatune.check/1 (docs/CHECK.md section 3) */
static cJSON *json_doc(struct st *t)
{
	const struct mt_jobsrc *src = t->src;
	const struct mt_megatron_job *mj = t->mj;
	const struct mt_explain *ex = t->run ? &t->as_ex : NULL;
	cJSON *doc = cJSON_CreateObject(), *j, *arr, *ch;
	int i;

	cJSON_AddStringToObject(doc, "schema", "megatune.check/1");
	j = cJSON_AddObjectToObject(doc, "job");
	cJSON_AddStringToObject(j, "file", src->file);
	cJSON_AddStringToObject(j, "kind", check_kind_name(src->kind, 1));
	cJSON_AddStringToObject(j, "format", src->format == MT_JF_BRIDGE ? "bridge" :
				src->format == MT_JF_VERL ? "verl" : "megatron");
	cJSON_AddStringToObject(j, "entry", src->entry);
	cJSON_AddNumberToObject(j, "gpus", mj->job.gpus);
	cJSON_AddStringToObject(j, "gpus_from", mj->gpus_from);
	cJSON_AddNumberToObject(j, "seq", mj->job.seq);
	cJSON_AddNumberToObject(j, "gbs", (double)mj->job.gbs);
	cJSON_AddStringToObject(j, "model", mj->model.name);
	cJSON_AddNumberToObject(j, "params", (double)mj->model.params_total);
	cJSON_AddStringToObject(j, "cluster", t->c->name);
	arr = cJSON_AddArrayToObject(j, "not_modelled");
	for (i = 0; i < mj->nunknown; i++) {
		cJSON *u = cJSON_CreateObject();

		char name[128];

		arg_name(src, mj->unknown[i], name, sizeof(name));
		cJSON_AddStringToObject(u, "flag", name[0] == '-' ? name + 2 : name);
		cJSON_AddNumberToObject(u, "line", src->line[mj->unknown[i]]);
		cJSON_AddItemToArray(arr, u);
	}
	arr = cJSON_AddArrayToObject(j, "timed_as_fused");
	for (i = 0; i < mj->nfusion_off; i++) {
		char name[128];

		arg_name(src, mj->fusion_off[i], name, sizeof(name));
		cJSON_AddItemToArray(arr, cJSON_CreateString(name[0] == '-' ? name + 2 : name));
	}
	arr = cJSON_AddArrayToObject(j, "notes");
	for (i = 0; i < src->nnotes; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(src->notes[i]));
	if (t->cant[0]) {
		cJSON_AddStringToObject(doc, "cannot_time", t->cant);
	} else {
		cJSON *e = as_is_doc(t);

		if (e)
			cJSON_AddItemToObject(doc, "as_is", e);
	}
	json_measured(doc, t);
	arr = cJSON_AddArrayToObject(doc, "diagnoses");
	check_diagnoses(NULL, arr, !t->cant[0] ? ex : NULL);
	arr = cJSON_AddArrayToObject(doc, "environment");
	env_gaps(NULL, arr, src, t->want_env, t->nwant);
	ch = cJSON_AddArrayToObject(doc, "changes");
	if (t->best1.feasible)
		show_change(NULL, ch, "one knob", &t->best1, t);
	if (t->best2.feasible)
		show_change(NULL, ch, "two knobs", &t->best2, t);
	if (t->overall.feasible)
		show_change(NULL, ch, "best overall", &t->overall, t);
	return doc;
}

static int write_json(struct st *t)
{
	cJSON *doc = json_doc(t);
	char *out = doc ? cJSON_Print(doc) : NULL;
	struct sbuf o = SBUF_INIT;
	int rc;

	cJSON_Delete(doc);
	if (!out)
		return mt_error_set(&t->err, MT_ENOMEM, "out of memory");
	sbuf_adds(&o, out);
	sbuf_addc(&o, '\n');
	free(out);
	rc = o.failed ? mt_error_set(&t->err, MT_ENOMEM, "out of memory")
		      : mt_write_atomic(t->a.json, o.buf, o.len, &t->err);
	sbuf_release(&o);
	return rc;
}

static int check_write_report(struct st *t)
{
	struct mt_report_in in;
	cJSON *doc = json_doc(t);
	int rc;

	if (!doc)
		return mt_error_set(&t->err, MT_ENOMEM, "out of memory");
	memset(&in, 0, sizeof(in));
	in.check = doc;
	in.check_file = t->a.job;
	in.advice = cJSON_GetObjectItemCaseSensitive(doc, "as_is");
	in.advice_file = in.advice ? t->a.job : NULL;
	rc = mt_report_write(t->a.report, &in, &t->err);
	cJSON_Delete(doc);
	return rc;
}

static void st_free(struct st *t)
{
	int i;

	for (i = 0; t->one && i < NCHANGES; i++)
		if (t->one[i].have_ex)
			mt_explain_free(&t->one[i].ex); /* best1 shares one of these */
	if (t->best2.have_ex)
		mt_explain_free(&t->best2.ex);
	if (t->overall.have_ex)
		mt_explain_free(&t->overall.ex);
	mt_explain_free(&t->as_ex);
	mt_rules_end(t->run);
	mt_ruleset_free(t->rs);
	mt_cluster_free(t->c);
	free(t->buf);
	free(t->lp);
	mt_validation_free(&t->v);
	free(t->one);
	free(t->mj);
	free(t->src);
}

/* One job, checked: its text on stdout (unless --json -), its JSON document
 * into arr when given (several jobs) or written to --json.  Returns the exit
 * status of the job (0, 1 nothing fits, 2 cannot be read). */
static int check_one(struct st *t, cJSON *arr)
{
	struct sbuf sb = SBUF_INIT;
	int rc;

	if (check_load(t) || check_as_is(t) || measure_log(t) || searches(t) ||
	    (t->a.json && !arr && write_json(t)) ||
	    (t->a.report && check_write_report(t)) ||
	    (t->a.validation && (!t->many || t->has_run) && write_validation(t)))
		return cli_fail("check", &t->err);
	if (arr)
		cJSON_AddItemToArray(arr, json_doc(t));
	if (!(t->a.json && !strcmp(t->a.json, "-")) && !(t->a.report && !strcmp(t->a.report, "-"))) {
		text_job(&sb, t);
		text_as_is(&sb, t);
		text_measured(&sb, t);
		text_changes(&sb, t);
		if (sb.failed) {
			sbuf_release(&sb);
			mt_error_set(&t->err, MT_ENOMEM, "out of memory");
			return cli_fail("check", &t->err);
		}
		fputs(sb.buf, stdout);
	}
	sbuf_release(&sb);
	rc = nothing_fits(t) ? 1 : 0;
	return rc;
}

/* The closing lines of several jobs: each one's outcome, its measured step
 * against the prediction where it is a log with a run */
static void many_line(struct sbuf *sum, const struct st *t, int rc, double *err, int *nerr)
{
	const struct mt_vcand *c = t->has_run ? &t->v.cand[0] : NULL;

	sbuf_addf(sum, "  %s: ", t->a.job);
	if (rc == 2)
		sbuf_adds(sum, "not read (the error above)\n");
	else if (c && c->has_measured) {
		double e = mt_vrel(c->meas.step_s, c->pred.step_s);

		sbuf_addf(sum, "%s, step %.3f s measured against %.3f s predicted (%+.1f%%)\n",
			  mt_vstatus_name(c->status), c->meas.step_s, c->pred.step_s, 100 * e);
		err[(*nerr)++] = fabs(e);
	} else if (c)
		sbuf_addf(sum, "%s, no steady step measured\n", mt_vstatus_name(c->status));
	else
		sbuf_addf(sum, "%s%s\n", t->cant[0] ? "cannot be timed as written" :
			  rc == 1 ? "does not fit" : "checked", t->lp ? "" : " (no run: not a log)");
}

static int check_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* JOB...: each checked in turn (a record per log with --validation DIR),
 * then one line per job; --json writes an array of megatune.check/1 */
static int check_many(const struct args *a)
{
	cJSON *arr = a->json ? cJSON_CreateArray() : NULL;
	struct sbuf sum = SBUF_INIT;
	double *err = calloc((size_t)a->njobs, sizeof(*err));
	char path[1100];
	int i, rc, worst = 0, nerr = 0;

	if (!err || (a->json && !arr)) {
		free(err);
		cJSON_Delete(arr);
		fputs("megatune check: error: out of memory\n", stderr);
		return 2;
	}
	sbuf_addf(&sum, "\n%d jobs:\n", a->njobs);
	for (i = 0; i < a->njobs; i++) {
		struct st *t = calloc(1, sizeof(*t));
		const char *base;

		if (!t)
			break;
		t->a = *a;
		t->a.job = a->jobs[i];
		t->many = 1;
		if (a->validation) {
			base = strrchr(t->a.job, '/');
			snprintf(path, sizeof(path), "%s/%s.validation.json", a->validation,
				 base ? base + 1 : t->a.job);
			t->a.validation = path;
		}
		if (!(a->json && !strcmp(a->json, "-")))
			printf("%s== %s ==\n", i ? "\n" : "", t->a.job);
		fflush(stdout);
		rc = check_one(t, arr);
		many_line(&sum, t, rc, err, &nerr);
		worst = rc > worst ? rc : worst;
		st_free(t);
		free(t);
	}
	if (nerr) {
		qsort(err, (size_t)nerr, sizeof(*err), check_cmp_double);
		sbuf_addf(&sum, "step error of the %d measured run%s: median %.1f%%, largest %.1f%%\n",
			  nerr, nerr > 1 ? "s" : "", 100 * err[nerr / 2], 100 * err[nerr - 1]);
	}
	if (!(a->json && !strcmp(a->json, "-")) && !sum.failed)
		fputs(sum.buf, stdout);
	if (arr) {
		char *out = cJSON_Print(arr);
		struct mt_error e = MT_ERROR_INIT;
		struct sbuf o = SBUF_INIT;

		if (out) {
			sbuf_adds(&o, out);
			sbuf_addc(&o, '\n');
		}
		if (!out || o.failed)
			worst = cli_fail("check", (mt_error_set(&e, MT_ENOMEM, "out of memory"), &e));
		else if (mt_write_atomic(a->json, o.buf, o.len, &e))
			worst = cli_fail("check", &e);
		sbuf_release(&o);
		free(out);
		cJSON_Delete(arr);
	}
	sbuf_release(&sum);
	free(err);
	return worst;
}

int cmd_check(int argc, char **argv)
{
	struct st *t;
	struct args a;
	int rc;

	if ((rc = check_parse(argc, argv, &a)) >= 0)
		return rc;
	if (a.njobs > 1)
		return check_many(&a);
	if (!(t = calloc(1, sizeof(*t)))) {
		fputs("megatune check: error: out of memory\n", stderr);
		return 2;
	}
	t->a = a;
	rc = check_one(t, NULL);
	st_free(t);
	free(t);
	return rc;
}
