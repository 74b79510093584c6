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

#include <cjson/cJSON.h>

#include "../advisor/advice.h"
#include "../advisor/search.h"
#include "../advisor/suggest.h"
#include "../job/flags.h"
#include "../job/knobs.h"
#include "../job/megatron.h"
#include "../job/script.h"
#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../lib/sbuf.h"
#include "../reports/advice.h"
#include "../rules/engine.h"
#include "../tuner/dispatch.h"
#include "cli.h"
#include "common.h"
#include "opts.h"

#define JOB_MAX_BYTES (256u << 20)
#define MAX_RULE_PATHS 16

struct args {
	const char *job, *cluster, *model, *json;
	int gpus;
	int no_rules;
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
	CLI_OPT_END,
};

static const char check_head[] =
	"usage: megatune check JOB [--cluster P] [--gpus N] [options]\n"
	"\n"
	"check reads the job a user already runs and says what is wrong with it, what\n"
	"to change and how much that gains.  JOB ('-': standard input) is a Megatron-LM\n"
	"launch script (torchrun/srun/python lines running pretrain_gpt.py, with `\\`\n"
	"continuations and the script's variables and arrays), a file of arguments, or\n"
	"a log holding the arguments block Megatron-LM prints at start-up.  The model\n"
	"comes from the job's own flags; every flag megatune does not model is listed.\n"
	"\n"
	"It prints the job as it is (the estimate's memory and time breakdown and the\n"
	"rules that fire for it: the diagnoses), then searches from it: the best change\n"
	"of one knob, the best of two, and the best configuration overall, each with its\n"
	"predicted gain and the exact diff of Megatron-LM flags (and environment) to\n"
	"apply.  A job that does not fit gets the changes that make it fit.\n";

static const char check_tail[] =
	"exit codes: 0 the job was checked; 1 it does not fit and no change found makes\n"
	"it fit; 2 bad usage or a job megatune cannot read (FILE:LINE: reason).\n"
	"\n"
	"examples:\n"
	"  megatune check train_llama3_70b.sh --cluster dgx-h100\n"
	"  megatune advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --format megatron \\\n"
	"    | megatune check - --gpus 8\n";

const struct cli_spec cli_spec_check = {
	.cmd = "check", .head = check_head, .opts = check_opts, .tail = check_tail,
};

/* ---- the changes searched ---- */

/* A change frees a group of knobs the first of which names it; the others
 * follow it (SP with TP, VPP with PP, ...). */
static const struct change {
	const char *name;
	int k[4];
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
	{ "recompute", { MT_KNOB_RECOMPUTE, MT_KNOB_RC_LAYERS, MT_KNOB_RC_MODULES, -1 }, 0 },
	{ "activation offload", { MT_KNOB_OFFLOAD, -1 }, 0 },
	{ "distributed optimizer", { MT_KNOB_DIST_OPT, -1 }, 0 },
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
};

struct ctx {
	const struct mt_model *m;
	const struct mt_cluster *c;
	const struct mt_ruleset *rs;
	const struct mt_job *base;
	long long searches;
};

static void free_change(struct mt_job *j, int ch)
{
	int i;

	for (i = 0; i < 4 && changes[ch].k[i] >= 0; i++) {
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

/* ---- flags and their diff ---- */

static int job_flags(const struct mt_model *m, const struct mt_job *j, const struct mt_config *c,
		     const struct mt_explain *ex, struct mt_kv *args, struct mt_kv *env, int *nenv)
{
	*nenv = ex ? mt_candidate_env(ex, env) : 0;
	return mt_candidate_args(m, j, c, ex, args);
}

static const struct mt_kv *kv_find(const struct mt_kv *kv, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (!mt_kv_is_note(&kv[i]) && !strcmp(kv[i].key, key))
			return &kv[i];
	return NULL;
}

static void diff_line(struct sbuf *sb, cJSON *arr, const char *indent, char sign, int env,
		      const char *key, const char *val)
{
	struct sbuf line = SBUF_INIT;

	if (env) {
		sbuf_addf(&line, "%c %s=", sign, key);
		mt_shell_word(&line, val);
	} else {
		sbuf_addf(&line, "%c --%s", sign, key);
		if (val[0]) {
			sbuf_addc(&line, ' ');
			mt_shell_word(&line, val);
		}
	}
	if (line.failed) {
		sbuf_release(&line);
		return;
	}
	if (sb)
		sbuf_addf(sb, "%s%s\n", indent, line.buf);
	if (arr)
		cJSON_AddItemToArray(arr, cJSON_CreateString(line.buf));
	sbuf_release(&line);
}

/* Flags of older releases that set what a flag megatune prints sets */
static const char *const aliases[][2] = {
	{ "num-virtual-stages-per-pipeline-rank", "num-layers-per-virtual-pipeline-stage" },
	{ "num-virtual-stages-per-pipeline-rank", "virtual-pipeline-model-parallel-size" },
	{ "moe-flex-dispatcher-backend", "moe-enable-deepep" },
	{ "moe-token-dispatcher-type", "moe-enable-deepep" },
};

/* The flags that turn the job into configuration b, in the job's own words:
 * `a` is megatune's rendering of the job's configuration, `b` of the new
 * one; a flag whose rendering differs is removed as the job wrote it ("-")
 * and added as b has it ("+").  Into sb (text, with indent) and arr (JSON
 * strings); either may be NULL.  Returns the number of lines. */
static int diff(struct sbuf *sb, cJSON *arr, const char *indent, const struct mt_jobsrc *src,
		const struct mt_kv *a, int na, const struct mt_kv *b, int nb)
{
	int i, k, nd = 0, pass;

	for (pass = 0; pass < 2; pass++) {
		const struct mt_kv *x = pass ? b : a, *y = pass ? a : b;
		int nx = pass ? nb : na, ny = pass ? na : nb;

		for (i = 0; i < nx; i++) {
			const struct mt_kv *o, *n;
			int u;

			if (mt_kv_is_note(&x[i]))
				continue;
			o = kv_find(y, ny, x[i].key);
			if (pass && o)
				continue; /* both: done in the first pass */
			if (o && !strcmp(o->val, x[i].val))
				continue;
			n = pass ? &x[i] : o;
			if ((u = mt_jobsrc_find(src, x[i].key)) >= 0) {
				diff_line(sb, arr, indent, '-', 0, src->arg[u].key, src->arg[u].val);
				nd++;
			}
			for (k = 0; k < (int)(sizeof(aliases) / sizeof(aliases[0])); k++)
				if (!strcmp(aliases[k][0], x[i].key) &&
				    (u = mt_jobsrc_find(src, aliases[k][1])) >= 0) {
					diff_line(sb, arr, indent, '-', 0, src->arg[u].key, src->arg[u].val);
					nd++;
				}
			if (n) {
				diff_line(sb, arr, indent, '+', 0, n->key, n->val);
				nd++;
			}
		}
	}
	return nd;
}

/* The variables configuration b wants that the job lacks or sets otherwise */
static int env_diff(struct sbuf *sb, cJSON *arr, const char *indent, const struct mt_jobsrc *src,
		    const struct mt_kv *b, int nb)
{
	int i, nd = 0;

	for (i = 0; i < nb; i++) {
		const char *have = mt_jobsrc_env(src, b[i].key);

		if (mt_kv_is_note(&b[i]) || (have && !strcmp(have, b[i].val)))
			continue;
		if (have)
			diff_line(sb, arr, indent, '-', 1, b[i].key, have);
		diff_line(sb, arr, indent, '+', 1, b[i].key, b[i].val);
		nd++;
	}
	return nd;
}

/* The job's environment as the rules want it for configuration c: the
 * variables the job lacks or sets otherwise (diagnoses). */
static int env_gaps(struct sbuf *sb, cJSON *arr, const struct mt_jobsrc *s, const struct mt_kv *want,
		    int nwant)
{
	int i, n = 0;
	char line[400];

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
static int diagnoses(struct sbuf *sb, cJSON *arr, const struct mt_explain *ex)
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

static const char *kind_name(int k)
{
	return k == MT_JS_SCRIPT ? "launch script" : k == MT_JS_ARGBLOCK ?
	       "Megatron-LM log (arguments block)" : "arguments";
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

static double gain_of(const struct mt_eval *as, int as_ok, const struct found *f)
{
	if (!as_ok || !(as->time.step > 0))
		return NAN;
	return as->time.step / f->e.time.step - 1;
}

/* One change, text and JSON */
static void show_change(struct sbuf *sb, cJSON *arr, const char *title, const struct found *f,
			const struct mt_jobsrc *src, const struct mt_megatron_job *mj, const struct mt_eval *as, int as_ok,
			const struct mt_explain *as_ex)
{
	struct mt_kv a[MT_FLAGS_MAX], b[MT_FLAGS_MAX], ea[MT_FLAGS_MAX], eb[MT_FLAGS_MAX];
	int na, nb, nea, neb;

	(void)ea;
	char label[160], name[96];
	double g = gain_of(as, as_ok, f);
	cJSON *o = arr ? cJSON_CreateObject() : NULL, *d = NULL;

	na = job_flags(&mj->model, &mj->job, &as->cfg, as_ex, a, ea, &nea);
	nb = job_flags(&mj->model, &mj->job, &f->e.cfg, f->have_ex ? &f->ex : NULL, b, eb, &neb);
	mt_config_label(label, sizeof(label), &mj->model, &f->e.cfg);
	change_name(f, name, sizeof(name));
	if (sb) {
		sbuf_addf(sb, "\n%s (%s): %s\n", title, name, label);
		if (as_ok)
			sbuf_addf(sb, "  step %.3f s -> %.3f s, %+.1f%% tokens/s (%.2fx)\n",
				  as->time.step, f->e.time.step, 100 * g, 1 + g);
		else
			sbuf_addf(sb, "  fits: %.1f GiB per GPU, step %.3f s\n",
				  f->e.mem.total / (1u << 30), f->e.time.step);
	}
	if (o) {
		cJSON_AddStringToObject(o, "kind", title);
		cJSON_AddStringToObject(o, "changes", name);
		cJSON_AddStringToObject(o, "config", label);
		cJSON_AddNumberToObject(o, "step_s", f->e.time.step);
		cJSON_AddNumberToObject(o, "memory_gib", f->e.mem.total / (1u << 30));
		if (!isnan(g))
			cJSON_AddNumberToObject(o, "gain", g);
		d = cJSON_AddArrayToObject(o, "diff");
	}
	diff(sb, d, "    ", src, a, na, b, nb);
	env_diff(sb, d, "    ", src, eb, neb);
	if (o)
		cJSON_AddItemToArray(arr, o);
}

static int read_job(const char *path, char **buf, size_t *len, struct mt_error *err)
{
	struct sbuf sb = SBUF_INIT;
	char chunk[65536];
	size_t n;

	if (strcmp(path, "-"))
		return mt_read_file(path, JOB_MAX_BYTES, buf, len, err);
	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0) {
		sbuf_add(&sb, chunk, n);
		if (sb.len > JOB_MAX_BYTES) {
			sbuf_release(&sb);
			return mt_error_set(err, MT_EINVAL, "standard input: more than %u bytes",
					    JOB_MAX_BYTES);
		}
	}
	sbuf_adds(&sb, "");
	if (sb.failed) {
		sbuf_release(&sb);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	*buf = sbuf_detach(&sb, len);
	return MT_OK;
}

static int parse(int argc, char **argv, struct args *a)
{
	int rc, first;

	memset(a, 0, sizeof(*a));
	a->cluster = "dgx-h100";
	if ((rc = cli_parse(&cli_spec_check, argc, argv, a, &first)) >= 0)
		return rc;
	if (first >= argc)
		return cli_usage_error("check", "missing JOB (a launch script, a file of arguments, "
				       "a log, or '-')");
	a->job = argv[first];
	if (first + 1 < argc)
		return cli_usage_error("check", "unexpected argument '%s' (one JOB)", argv[first + 1]);
	if (a->no_rules && a->nrule_paths)
		return cli_usage_error("check", "--rules and --no-rules exclude each other");
	return -1;
}

int cmd_check(int argc, char **argv)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_jobsrc *src = NULL;
	struct mt_megatron_job *mj = NULL;
	struct mt_cluster *c = NULL;
	struct mt_ruleset *rs = NULL;
	struct mt_rules_run *run = NULL;
	struct mt_explain as_ex;
	struct mt_advice_rules ar;
	struct found *one = NULL, best1, best2, overall;
	struct mt_eval as;
	struct mt_config cfg;
	struct sbuf sb = SBUF_INIT, est = SBUF_INIT;
	struct ctx x;
	struct args a;
	cJSON *doc = NULL, *arr;
	char *buf = NULL;
	size_t len = 0;
	int rc, i, k, as_ok = 0, nfound = 0, text;
	struct mt_kv want_env[MT_FLAGS_MAX];
	struct mt_model given;
	char cant[MT_ERROR_MSG_MAX] = "";
	int nwant = 0;

	memset(&as_ex, 0, sizeof(as_ex));
	memset(&ar, 0, sizeof(ar));
	memset(&best1, 0, sizeof(best1));
	memset(&best2, 0, sizeof(best2));
	memset(&overall, 0, sizeof(overall));
	if ((rc = parse(argc, argv, &a)) >= 0)
		return rc;
	text = !(a.json && !strcmp(a.json, "-"));
	src = calloc(1, sizeof(*src));
	mj = calloc(1, sizeof(*mj));
	one = calloc(NCHANGES, sizeof(*one));
	if (!src || !mj || !one) {
		mt_error_set(&err, MT_ENOMEM, "out of memory");
		goto fail;
	}
	if (read_job(a.job, &buf, &len, &err) ||
	    mt_jobsrc_read(!strcmp(a.job, "-") ? "<stdin>" : a.job, buf, len, src, &err) ||
	    (a.model && mt_model_load(a.model, &given, &err)) ||
	    mt_megatron_job(src, a.gpus, a.model ? &given : NULL, mj, &err))
		goto fail;
	if (mt_cluster_load(a.cluster, &c, &err))
		goto fail;
	if (mj->flex_backend >= 0 && mt_dispatch_use_backend(&c->dispatch, mj->flex_backend)) {
		mt_error_set(&err, MT_EINVAL, "%s: --moe-flex-dispatcher-backend %s: profile %s has no "
			     "moe_dispatch point of that library", src->file,
			     mt_flex_backend_name(mj->flex_backend), a.cluster);
		goto fail;
	}
	cli_cluster_warnings("check", c);
	for (i = 0; i < mj->model.nnotes; i++)
		fprintf(stderr, "megatune check: warning: %s\n", mj->model.notes[i]);
	if (!a.no_rules && mt_ruleset_load_files(a.rule_paths, a.nrule_paths, 1, &rs, &err))
		goto fail;

	/* the job as it is */
	if (rs && mt_rules_start(rs, &mj->model, c, &mj->job, &run, &err))
		goto fail;
	cfg = mj->cfg;
	memset(&as, 0, sizeof(as));
	as.cfg = cfg;
	if (mt_evaluate(&mj->model, c, &mj->job, run, &cfg, &as, &err)) {
		/* the same message as a pin: megatune cannot time the job as
		 * written; the searches from it still say what would run */
		snprintf(cant, sizeof(cant), "%s", err.msg);
		memset(&err, 0, sizeof(err));
		as.cfg = mj->cfg;
	}
	as_ok = !cant[0] && as.feasible;
	if (run && !cant[0] && !mt_rules_explain(run, &as, 0, -1, 0, &as_ex)) {
		ar.set = rs;
		ar.run = run;
		ar.ex = &as_ex;
		ar.nex = 1;
		nwant = mt_candidate_env(&as_ex, want_env);
	}

	/* the searches from it */
	memset(&x, 0, sizeof(x));
	x.m = &mj->model;
	x.c = c;
	x.rs = rs;
	x.base = &mj->job;
	for (i = 0; i < NCHANGES; i++) {
		struct mt_job j = mj->job;

		one[i].a = -1;
		if (changes[i].moe && !mj->model.experts)
			continue;
		free_change(&j, i);
		if (search(&x, &j, &one[i], i, -1, &err))
			goto fail;
		if (one[i].feasible)
			nfound++;
		if (one[i].feasible && (!best1.feasible || one[i].e.time.step < best1.e.time.step))
			best1 = one[i];
	}
	for (i = 0; i < NCHANGES; i++) {
		for (k = i + 1; k < NCHANGES; k++) {
			struct mt_job j = mj->job;
			struct found f;

			if (!one[i].feasible && !one[k].feasible && as_ok)
				continue;
			if ((changes[i].moe || changes[k].moe) && !mj->model.experts)
				continue;
			free_change(&j, i);
			free_change(&j, k);
			if (search(&x, &j, &f, i, k, &err))
				goto fail;
			if (f.feasible && (!best2.feasible || f.e.time.step < best2.e.time.step)) {
				if (best2.have_ex)
					mt_explain_free(&best2.ex);
				best2 = f;
			} else if (f.have_ex) {
				mt_explain_free(&f.ex);
			}
		}
	}
	{
		struct mt_job j = mj->job;

		for (i = 0; i < NCHANGES; i++)
			free_change(&j, i);
		if (search(&x, &j, &overall, -2, -1, &err))
			goto fail;
	}

	/* the text */
	sbuf_addf(&sb, "megatune check: %s (%s%s%s)\n", src->file, kind_name(src->kind),
		  src->entry[0] ? ": " : "", src->entry);
	sbuf_addf(&sb, "  model: %s, %d layers, hidden %d, %d heads, %.1fB parameters%s\n",
		  mj->model.name, mj->model.layers, mj->model.hidden, mj->model.heads,
		  mj->model.params_total / 1e9, mj->model.experts ? " (MoE)" : "");
	sbuf_addf(&sb, "  job: %d GPUs of %s (%s), seq %d, global batch %lld\n", mj->job.gpus,
		  c->name, mj->gpus_from, mj->job.seq, (long long)mj->job.gbs);
	if (mj->nunknown && src->kind == MT_JS_ARGBLOCK) {
		/* the block prints every field, set or left at its default */
		sbuf_addf(&sb, "  not modelled: %d other field%s of the arguments block (it prints "
			  "every field, set or default; --json lists them)\n", mj->nunknown,
			  mj->nunknown > 1 ? "s" : "");
	} else if (mj->nunknown) {
		sbuf_addf(&sb, "  not modelled (%d flag%s megatune does not time):", mj->nunknown,
			  mj->nunknown > 1 ? "s" : "");
		for (i = 0; i < mj->nunknown; i++)
			sbuf_addf(&sb, "%s --%s (line %d)", i ? "," : "", src->arg[mj->unknown[i]].key,
				  src->line[mj->unknown[i]]);
		sbuf_adds(&sb, "\n");
	}
	for (i = 0; i < src->nnotes; i++)
		sbuf_addf(&sb, "  note: %s\n", src->notes[i]);
	sbuf_adds(&sb, "\nas it is:\n");
	if (cant[0]) {
		sbuf_addf(&sb, "  ! megatune cannot time the job as written: %s\n", cant);
		if (span_domains(&mj->cfg, c))
			sbuf_addf(&sb, "  ! TP %d spans %d NVLink domains of %d GPUs: its collectives cross "
				  "the network, each layer's all-gathers and reduce-scatters at the NICs' "
				  "bandwidth\n", mj->cfg.tp,
				  (mj->cfg.tp + c->nvlink_domain - 1) / c->nvlink_domain, c->nvlink_domain);
	} else {
		mt_estimate_text(&est, &mj->model, c, &mj->job, &as, &ar);
		sbuf_add(&sb, est.buf, est.len);
	}
	if (!cant[0]) {
		sbuf_adds(&sb, "\ndiagnoses (what the job departs from, each with its rule):\n");
		i = diagnoses(&sb, NULL, run ? &as_ex : NULL);
		if (!as.feasible) {
			sbuf_addf(&sb, "  ! the job does not fit: %.1f GiB per GPU on its most loaded stage, "
				  "%.1f GiB usable (the memory table above)\n", as.mem.total / (1u << 30),
				  c->memory_bytes * (1 - mj->job.mem_headroom) / (1u << 30));
			i++;
		}
		i += env_gaps(&sb, NULL, src, want_env, nwant);
		if (!i)
			sbuf_adds(&sb, "  none\n");
	}
	if (!as_ok && !best1.feasible && !best2.feasible && !overall.feasible) {
		struct mt_search_result *res = calloc(1, sizeof(*res));

		sbuf_adds(&sb, "\nno change of the knobs makes the job fit");
		if (res && mt_suggest_fits(&mj->model, c, &mj->job, res) > 0) {
			sbuf_adds(&sb, "; changes of the job that do:\n");
			for (i = 0; i < res->nsugg; i++)
				sbuf_addf(&sb, "  %s\n", res->sugg[i].change);
		} else {
			sbuf_adds(&sb, "\n");
		}
		free(res);
	}
	if (best1.feasible &&
	    (!as_ok || gain_of(&as, as_ok, &best1) >= MIN_GAIN))
		show_change(&sb, NULL, "one knob", &best1, src, mj, &as, as_ok, run ? &as_ex : NULL);
	else if (as_ok)
		sbuf_adds(&sb, "\none knob: no single change gains 0.5% or more\n");
	else
		sbuf_adds(&sb, "\none knob: no single change makes the job run and fit\n");
	if (best2.feasible && (!best1.feasible || best2.e.time.step < best1.e.time.step * (1 - MIN_GAIN)))
		show_change(&sb, NULL, "two knobs", &best2, src, mj, &as, as_ok, run ? &as_ex : NULL);
	if (overall.feasible &&
	    (!as_ok || gain_of(&as, as_ok, &overall) >= MIN_GAIN))
		show_change(&sb, NULL, "best overall", &overall, src, mj, &as, as_ok, run ? &as_ex : NULL);
	else if (as_ok && overall.feasible)
		sbuf_adds(&sb, "\nbest overall: the job is within 0.5% of the best megatune finds\n");
	sbuf_addf(&sb, "\n(%lld searches from the job; docs/CHECK.md)\n", x.searches);

	/* the JSON */
	if (a.json) {
		cJSON *j, *ch;

		doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "schema", "megatune.check/1");
		j = cJSON_AddObjectToObject(doc, "job");
		cJSON_AddStringToObject(j, "file", src->file);
		cJSON_AddStringToObject(j, "kind", src->kind == MT_JS_SCRIPT ? "script" :
					src->kind == MT_JS_ARGBLOCK ? "arguments_block" : "arguments");
		cJSON_AddStringToObject(j, "entry", src->entry);
		cJSON_AddNumberToObject(j, "gpus", mj->job.gpus);
		cJSON_AddStringToObject(j, "gpus_from", mj->gpus_from);
		cJSON_AddNumberToObject(j, "seq", mj->job.seq);
		cJSON_AddNumberToObject(j, "gbs", (double)mj->job.gbs);
		cJSON_AddStringToObject(j, "model", mj->model.name);
		cJSON_AddNumberToObject(j, "params", (double)mj->model.params_total);
		cJSON_AddStringToObject(j, "cluster", c->name);
		arr = cJSON_AddArrayToObject(j, "not_modelled");
		for (i = 0; i < mj->nunknown; i++) {
			cJSON *u = cJSON_CreateObject();

			cJSON_AddStringToObject(u, "flag", src->arg[mj->unknown[i]].key);
			cJSON_AddNumberToObject(u, "line", src->line[mj->unknown[i]]);
			cJSON_AddItemToArray(arr, u);
		}
		arr = cJSON_AddArrayToObject(j, "notes");
		for (i = 0; i < src->nnotes; i++)
			cJSON_AddItemToArray(arr, cJSON_CreateString(src->notes[i]));
		if (cant[0]) {
			cJSON_AddStringToObject(doc, "cannot_time", cant);
		} else {
			struct sbuf ej = SBUF_INIT;
			cJSON *e = NULL;

			mt_estimate_json(&ej, &mj->model, c, &mj->job, &as, &ar);
			if (!ej.failed && !mt_json_parse("estimate", ej.buf, ej.len, &e, &err))
				cJSON_AddItemToObject(doc, "as_is", e);
			sbuf_release(&ej);
			memset(&err, 0, sizeof(err));
		}
		arr = cJSON_AddArrayToObject(doc, "diagnoses");
		diagnoses(NULL, arr, run && !cant[0] ? &as_ex : NULL);
		arr = cJSON_AddArrayToObject(doc, "environment");
		env_gaps(NULL, arr, src, want_env, nwant);
		ch = cJSON_AddArrayToObject(doc, "changes");
		if (best1.feasible)
			show_change(NULL, ch, "one knob", &best1, src, mj, &as, as_ok, run ? &as_ex : NULL);
		if (best2.feasible)
			show_change(NULL, ch, "two knobs", &best2, src, mj, &as, as_ok, run ? &as_ex : NULL);
		if (overall.feasible)
			show_change(NULL, ch, "best overall", &overall, src, mj, &as, as_ok,
				    run ? &as_ex : NULL);
		{
			char *out = cJSON_Print(doc);
			struct sbuf o = SBUF_INIT;

			if (!out) {
				mt_error_set(&err, MT_ENOMEM, "out of memory");
				goto fail;
			}
			sbuf_adds(&o, out);
			sbuf_addc(&o, '\n');
			free(out);
			rc = mt_write_atomic(a.json, o.buf, o.len, &err);
			sbuf_release(&o);
			if (rc)
				goto fail;
		}
	}
	if (text)
		fputs(sb.buf, stdout);
	rc = !as_ok && !best1.feasible && !best2.feasible && !overall.feasible ? 1 : 0;
	goto out;
fail:
	rc = cli_fail("check", &err);
out:
	if (best1.have_ex) {
		/* best1 shares its explanation with one[] */
	}
	for (i = 0; one && i < NCHANGES; i++)
		if (one[i].have_ex)
			mt_explain_free(&one[i].ex);
	if (best2.have_ex)
		mt_explain_free(&best2.ex);
	if (overall.have_ex)
		mt_explain_free(&overall.ex);
	mt_explain_free(&as_ex);
	cJSON_Delete(doc);
	sbuf_release(&sb);
	sbuf_release(&est);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	mt_cluster_free(c);
	free(buf);
	free(one);
	free(mj);
	free(src);
	return rc;
}
