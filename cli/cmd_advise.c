/* SPDX-License-Identifier: MIT */
/* advise and estimate: parse the job and the pins, run the model, print. */
#include <stdio.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/sbuf.h"
#include "../lib/jsonr.h"
#include "../job/local.h"
#include "../reports/advice.h"
#include "../reports/html.h"
#include "../rules/engine.h"
#include "../perfmodel/perf.h"
#include "../tuner/advise.h"
#include "advise_opts.h"
#include "cli.h"
#include "common.h"

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
	.cmd = "advise", .head = advise_head, .opts = cli_advise_opts, .tail = advise_tail,
};
const struct cli_spec cli_spec_estimate = {
	.cmd = "estimate", .head = advise_head, .opts = cli_estimate_opts, .tail = advise_tail,
};

static int advise_parse_args(const char *cmd, int argc, char **argv, struct advise_args *a)
{
	const struct cli_spec *spec = !strcmp(cmd, "advise") ? &cli_spec_advise :
				      &cli_spec_estimate;
	struct mt_error err = MT_ERROR_INIT;
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
	if (mt_local_defaults(&a->job, &err))
		return cli_usage_error(cmd, "%s", err.msg);
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
					       cli_advise_formats[a->format] : "");
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

/* --format megatron|bridge|verl|env|torchrun|slurm: the candidate in that form
 * (tuner/advise.h) on stdout. */
_Static_assert(F_SLURM - F_MEGATRON == MT_FORM_SLURM - MT_FORM_MEGATRON,
	       "the --format names of the flags follow enum mt_flags_form");
static int print_flags(const struct mt_model *m, const struct mt_cluster *cl,
		       const struct mt_job *j, const struct mt_config *c,
		       const struct mt_explain *ex, int format)
{
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb = SBUF_INIT;
	int rc = 0;

	if (mt_candidate_flags(&sb, m, cl, j, c, ex, MT_FORM_MEGATRON + format - F_MEGATRON, &err))
		rc = cli_fail("advise", &err);
	else
		fputs(sb.buf, stdout);
	sbuf_release(&sb);
	return rc;
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

static int load_inputs(const char *cmd, struct advise_args *a, struct mt_model *m,
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
			cmd, cli_advise_flex[a->flex_backend], a->cluster);
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
static int advise_write_report(const char *cmd, const struct advise_args *a,
			       const struct mt_cluster *c, const struct sbuf *json)
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
static int emit_outputs(const char *cmd, const struct advise_args *a,
			const struct mt_cluster *c, const struct sbuf *sb)
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

int cmd_advise(int argc, char **argv)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	struct mt_ruleset *rs = NULL;
	struct mt_advised adv;
	struct mt_search_result *res;
	struct mt_model m;
	struct sbuf sb = SBUF_INIT;
	struct advise_args a;
	int rc;

	memset(&adv, 0, sizeof(adv));
	if ((rc = advise_parse_args("advise", argc, argv, &a)) >= 0)
		return rc;
	if ((rc = load_inputs("advise", &a, &m, &c, &rs)) >= 0)
		goto out;
	if (mt_advise(&m, c, &a.job, rs, &adv, &err)) {
		rc = cli_fail("advise", &err);
		goto out;
	}
	res = adv.res;
	if (a.json || a.format == F_JSON || a.report) {
		mt_advice_json(&sb, &m, c, &a.job, res, &adv.ar);
		if ((rc = emit_outputs("advise", &a, c, &sb)))
			goto out;
		if (a.format == F_JSON && (rc = advise_emit("advise", "-", &sb)))
			goto out;
	}
	if (!res->ntop) {
		sbuf_reset(&sb);
		mt_infeasible_text(&sb, &m, c, &a.job, res, &adv.ar);
		fputs(sb.buf, a.format == F_TEXT ? stdout : stderr);
		rc = 1;
		goto out;
	}
	rc = 0;
	if (a.format == F_TEXT) {
		sbuf_reset(&sb);
		mt_advice_text(&sb, &m, c, &a.job, res, &adv.ar);
		rc = advise_emit("advise", "-", &sb);
	} else if (a.format != F_JSON && a.format != F_NONE) {
		rc = print_flags(&m, c, &a.job, &res->top[0].cfg, adv.ex, a.format);
	}
out:
	mt_advised_free(&adv);
	sbuf_release(&sb);
	mt_ruleset_free(rs);
	mt_cluster_free(c);
	return rc;
}

int cmd_estimate(int argc, char **argv)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	struct mt_ruleset *rs = NULL;
	struct mt_estimated est;
	struct mt_model m;
	struct sbuf sb = SBUF_INIT;
	struct advise_args a;
	int rc;

	memset(&est, 0, sizeof(est));
	if ((rc = advise_parse_args("estimate", argc, argv, &a)) >= 0)
		return rc;
	if ((rc = load_inputs("estimate", &a, &m, &c, &rs)) >= 0)
		goto out;
	if (mt_estimate(&m, c, &a.job, rs, &est, &err)) {
		rc = cli_fail("estimate", &err);
		goto out;
	}
	if (a.stage >= est.e.cfg.pp) {
		if (est.e.cfg.pp == 1)
			rc = cli_usage_error("estimate", "--stage %d: the configuration has one "
					     "pipeline stage: give 0", a.stage);
		else
			rc = cli_usage_error("estimate", "--stage %d: the configuration has %d "
					     "pipeline stages: give 0 to %d", a.stage, est.e.cfg.pp,
					     est.e.cfg.pp - 1);
		goto out;
	}
	if (mt_estimate_explain(&est, rs, &err)) {
		rc = cli_fail("estimate", &err);
		goto out;
	}
	if (a.json || a.format == F_JSON || a.report) {
		mt_estimate_json(&sb, &m, c, &a.job, &est.e, &est.ar);
		if ((rc = emit_outputs("estimate", &a, c, &sb)))
			goto out;
		if (a.format == F_JSON && (rc = advise_emit("estimate", "-", &sb)))
			goto out;
	}
	rc = 0;
	if (a.format == F_TEXT) {
		sbuf_reset(&sb);
		mt_estimate_text(&sb, &m, c, &a.job, &est.e, a.stage, &est.ar);
		rc = advise_emit("estimate", "-", &sb);
	} else if (a.format != F_JSON && a.format != F_NONE) {
		rc = print_flags(&m, c, &a.job, &est.e.cfg, est.run ? &est.ex : NULL, a.format);
	}
	if (!rc && !est.e.feasible)
		rc = 1;
out:
	mt_estimated_free(&est);
	sbuf_release(&sb);
	mt_ruleset_free(rs);
	mt_cluster_free(c);
	return rc;
}
