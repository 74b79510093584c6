/* SPDX-License-Identifier: MIT */
/* check: the command line of `megatune check`: its options, its arguments,
 * the exit codes; the check itself (the job evaluated as it is, diagnosed,
 * searched from; its text and megatune.check/1) is check/check.h. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../check/check.h"
#include "../lib/sbuf.h"
#include "../perfmodel/model.h"
#include "cli.h"
#include "common.h"
#include "opts.h"

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

/* One job checked by t: its text on stdout (unless --json - or --report -),
 * its document into arr when given (several jobs) or written to --json, the
 * record of its run to `validation` (with several jobs, only for a log with a
 * run).  Returns the exit status of the job (0, 1 nothing fits, 2 cannot be
 * read). */
static int check_one(const struct args *a, struct mt_check *t, const char *job,
		     const char *validation, int many, cJSON *arr)
{
	const struct mt_check_opts o = {
		.job = job, .model = a->model, .cluster = a->cluster, .gpus = a->gpus,
		.warmup = a->warmup, .no_rules = a->no_rules, .rule_paths = a->rule_paths,
		.nrule_paths = a->nrule_paths,
	};
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb = SBUF_INIT;
	const struct mt_model *m;
	int i;

	if (mt_check_load(t, &o, &err) ||
	    cli_typos("check", mt_check_src(t), mt_check_model(t), a->strict, &err))
		return cli_fail("check", &err);
	cli_cluster_warnings("check", mt_check_cluster(t));
	m = mt_check_model(t);
	for (i = 0; i < m->nnotes; i++)
		fprintf(stderr, "megatune check: warning: %s\n", m->notes[i]);
	if (mt_check_run(t, &err) ||
	    (a->json && !arr && mt_check_write_json(t, a->json, &err)) ||
	    (a->report && mt_check_write_report(t, a->report, &err)) ||
	    (validation && (!many || mt_check_has_run(t)) &&
	     mt_check_write_validation(t, validation, &err)))
		return cli_fail("check", &err);
	if (arr)
		cJSON_AddItemToArray(arr, mt_check_doc(t));
	if (!(a->json && !strcmp(a->json, "-")) && !(a->report && !strcmp(a->report, "-"))) {
		if (mt_check_text(&sb, t, &err)) {
			sbuf_release(&sb);
			return cli_fail("check", &err);
		}
		fputs(sb.buf, stdout);
	}
	sbuf_release(&sb);
	return mt_check_nothing_fits(t) ? 1 : 0;
}

/* JOB...: each checked in turn (a record per log with --validation DIR),
 * then one line per job; --json writes an array of megatune.check/1 */
static int check_many(const struct args *a)
{
	cJSON *arr = a->json ? cJSON_CreateArray() : NULL;
	struct mt_check_tally y;
	char path[1100];
	int i, rc, worst = 0;

	if (mt_check_tally_init(&y, a->njobs) || (a->json && !arr)) {
		mt_check_tally_free(&y);
		cJSON_Delete(arr);
		fputs("megatune check: error: out of memory\n", stderr);
		return 2;
	}
	for (i = 0; i < a->njobs; i++) {
		struct mt_check *t = mt_check_new();
		const char *job = a->jobs[i], *base;

		if (!t)
			break;
		if (a->validation) {
			base = strrchr(job, '/');
			snprintf(path, sizeof(path), "%s/%s.validation.json", a->validation,
				 base ? base + 1 : job);
		}
		if (!(a->json && !strcmp(a->json, "-")))
			printf("%s== %s ==\n", i ? "\n" : "", job);
		fflush(stdout);
		rc = check_one(a, t, job, a->validation ? path : NULL, 1, arr);
		/* the exit status of the job, as the closing lines say it */
		mt_check_tally_add(&y, t, rc == 2 ? MT_CHECK_NOT_READ :
					  rc == 1 ? MT_CHECK_NO_FIT : MT_CHECK_CHECKED);
		worst = rc > worst ? rc : worst;
		mt_check_free(t);
	}
	mt_check_tally_end(&y);
	if (!(a->json && !strcmp(a->json, "-")) && !y.sum.failed)
		fputs(y.sum.buf, stdout);
	if (arr) {
		struct mt_error e = MT_ERROR_INIT;

		if (mt_check_write_doc(a->json, arr, &e))
			worst = cli_fail("check", &e);
		cJSON_Delete(arr);
	}
	mt_check_tally_free(&y);
	return worst;
}

int cmd_check(int argc, char **argv)
{
	struct mt_check *t;
	struct args a;
	int rc;

	if ((rc = check_parse(argc, argv, &a)) >= 0)
		return rc;
	if (a.njobs > 1)
		return check_many(&a);
	if (!(t = mt_check_new())) {
		fputs("megatune check: error: out of memory\n", stderr);
		return 2;
	}
	rc = check_one(&a, t, a.job, a.validation, 0, NULL);
	mt_check_free(t);
	return rc;
}
