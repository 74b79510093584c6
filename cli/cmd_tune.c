/* SPDX-License-Identifier: MIT */
/* tune: advise, validate the best few, correct, re-rank, validate again. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/jsonr.h"
#include "../lib/shell.h"
#include "../reports/html.h"
#include "../validate/runner.h"
#include "../validate/tune.h"
#include "../validate/validate.h"
#include "cli.h"
#include "common.h"
#include "runner_opts.h"

static const char tune_head[] =
	"usage: megatune tune --model NAME|FILE --gpus N --seq N --gbs N [advise options]\n"
	"                     (--launch TEMPLATE | --proxy) [tune options]\n"
	"       megatune tune --advice FILE (--launch TEMPLATE | --proxy) [tune options]\n"
	"\n"
	"The benchmark-driven search in one command: advise (every option that is not\n"
	"tune's goes to `megatune advise`), validate the best --per-round candidates of\n"
	"its list for real, correct the predictions of the others from what was\n"
	"measured, re-rank, validate the best of those not yet run, and stop when a\n"
	"round leaves the measured best unchanged (or the list, --max-rounds or\n"
	"--budget ends).  With --runs N: one candidate at a time, the remaining ones\n"
	"re-predicted after each run, N runs in all.  It prints each run (predicted,\n"
	"corrected, measured and both errors) and round, the runs in order, the\n"
	"measured best configuration, its flags, and how much faster it is than the\n"
	"first prediction's top pick.\n"
	"\n"
	"Correction: the time factors `megatune calibrate --from-validation` fits\n"
	"(docs/MODEL.md section 10), fitted again from the runs that ended ok before\n"
	"every round, on the profile the advice names; every candidate is predicted\n"
	"again with them.  Where the fit keeps no factor, the predicted step is scaled\n"
	"by the measured/predicted ratio of the run with the most alike configuration\n"
	"(equal TP, PP, VPP, CP, EP, ETP, micro-batch, recompute, CP communication,\n"
	"offload on/off; ties averaged).  Runs that failed do not count.\n";

static const char tune_tail[] =
	"exit codes: 0 a measured best was found; 1 nothing feasible or no candidate\n"
	"ran to the end; 2 bad usage or input; 130 interrupted (the validation keeps\n"
	"what was measured).\n";

struct targs {
	struct cli_runner r;   /* validate's runner options (copied into t.v) */
	struct mt_tune_opts t;
	const char *advice, *report, *out;
	int ncand, resume;
	char **pass;   /* the options for advise */
	int npass;
};

#define TA(field) offsetof(struct targs, field)

static const struct cli_opt tune_opts[] = {
	CLI_SEC("tune options"),
	{ .type = CLI_STR, .name = "advice", .meta = "FILE", .off = TA(advice),
	  .help = "start from this megatune.advice/1 instead of advising" },
	{ .type = CLI_INT, .name = "candidates", .meta = "N", .off = TA(ncand), .lo = 1, .hi = 64,
	  .help = "the list advise keeps (its --top, default 16)" },
	{ .type = CLI_INT, .name = "per-round", .meta = "K", .off = TA(t.per_round), .lo = 1,
	  .hi = 1000000, .help = "candidates run per round (default 3)" },
	{ .type = CLI_INT, .name = "max-rounds", .meta = "N", .off = TA(t.max_rounds), .lo = 1,
	  .hi = 1000000, .help = "stop after N rounds (default: no limit)" },
	{ .type = CLI_INT, .name = "runs", .meta = "N", .off = TA(t.runs), .lo = 1, .hi = 1000000,
	  .help = "run N candidates one at a time, each the fastest by\n"
		  "the corrected step of those not yet run, with no early\n"
		  "stop (not with --per-round or --max-rounds)" },
	{ .type = CLI_STR, .name = "dir", .meta = "DIR", .off = TA(r.o.dir),
	  .help = "logs, advice.json, advise.txt (default tune-run)" },
	{ .type = CLI_STR, .name = "output", .short_name = 'o', .meta = "FILE", .off = TA(out),
	  .help = "the megatune.validation/1 of every run (default\nDIR/validation.json)" },
	{ .type = CLI_STR, .name = "report", .meta = "FILE", .off = TA(report),
	  .help = "the HTML report of the validation" },
	{ .type = CLI_FLAG, .name = "resume", .off = TA(resume),
	  .help = "go on from the -o file of an earlier tune (and its\n"
		  "DIR/advice.json): what it ran is not run again" },
	CLI_SEC("what to run (as for megatune validate)"),
	{ .type = CLI_GROUP, .off = TA(r), .group = cli_runner_what },
	CLI_SEC("how"),
	{ .type = CLI_GROUP, .off = TA(r), .group = cli_runner_how },
	CLI_OPT_END
};

const struct cli_spec cli_spec_tune = {
	.cmd = "tune", .head = tune_head, .opts = tune_opts, .tail = tune_tail,
};

/* tune's own options into a; the others (advise's) into a->pass, in order.
 * -1 to go on, or the exit code (0 after the help). */
static int tune_parse(int argc, char **argv, struct targs *a)
{
	int i, rc;

	if ((rc = cli_parse_known(&cli_spec_tune, argc, argv, a, a->pass, &a->npass)) >= 0)
		return rc;
	for (i = 0; i < a->npass; i++) {
		const char *p = a->pass[i], *eq = strchr(p, '=');
		size_t n = eq && !strncmp(p, "--", 2) ? (size_t)(eq - p) : strlen(p);

		if ((n == 5 && !strncmp(p, "--top", 5)) || (n == 6 && !strncmp(p, "--json", 6)) ||
		    (n == 8 && !strncmp(p, "--format", 8)))
			return cli_usage_error("tune", "%.*s: tune sets advise's %.*s itself "
					       "(the list's size is --candidates)", (int)n, p,
					       (int)n, p);
	}
	return -1;
}

static int check(struct targs *a)
{
	int rc;

	if ((rc = cli_runner_check("tune", &a->r)))
		return rc;
	if (a->t.runs > 0 && (a->t.per_round > 0 || a->t.max_rounds > 0))
		return cli_usage_error("tune", "--runs runs one candidate a round until N runs: "
				       "give it without --per-round and --max-rounds");
	if (a->advice && a->npass)
		return cli_usage_error("tune", "'%s': with --advice, the job comes from the file "
				       "(no advise options)", a->pass[0]);
	if (!a->advice && !a->npass)
		return cli_usage_error("tune", "missing the job (--model, --gpus, --seq, --gbs as "
				       "for advise) or --advice FILE");
	return 0;
}

/* megatune advise <pass> --top N --json DIR/advice.json, stdout to DIR/advise.txt */
static int run_advise(struct targs *a, const char *json)
{
	char exe[4096], top[16], txt[4096];
	char **av = calloc((size_t)a->npass + 8, sizeof(char *));
	int i, k = 0, status = 0, fd;
	pid_t pid;

	if (!av) {
		fprintf(stderr, "megatune tune: error: out of memory\n");
		return 2;
	}
	cli_sibling_exe("megatune", exe, sizeof(exe));
	snprintf(top, sizeof(top), "%d", a->ncand);
	snprintf(txt, sizeof(txt), "%s/advise.txt", a->t.v.dir);
	av[k++] = exe;
	av[k++] = (char *)"advise";
	for (i = 0; i < a->npass; i++)
		av[k++] = a->pass[i];
	av[k++] = (char *)"--top";
	av[k++] = top;
	av[k++] = (char *)"--json";
	av[k++] = (char *)json;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fd = open(txt, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0)
			dup2(fd, 1);
		execv(exe, av);
		_exit(2);
	}
	free(av);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		fprintf(stderr, "megatune tune: error: advise did not run: %s\n", strerror(errno));
		return 2;
	}
	if (WEXITSTATUS(status) == 1)
		fprintf(stderr, "megatune tune: nothing feasible to tune (see %s)\n", txt);
	return WEXITSTATUS(status);
}

static void flags(const char *title, const cJSON *list, int env)
{
	const cJSON *it;
	struct sbuf sb;

	sbuf_init(&sb);
	cJSON_ArrayForEach(it, list) {
		if (!cJSON_IsString(it))
			continue;
		if (env) {
			char kv[1024];

			snprintf(kv, sizeof(kv), "%s=%s", it->string, it->valuestring);
			mt_shell_word(&sb, kv);
		} else {
			mt_shell_word(&sb, it->valuestring);
		}
		sbuf_addc(&sb, ' ');
	}
	if (sb.len)
		printf("%s\n  %s\n", title, sb.buf);
	sbuf_release(&sb);
}

static void summary(const struct mt_validation *v, const cJSON *advice,
		    const struct mt_tune_result *r)
{
	const struct mt_vcand *b = &v->cand[r->best], *top = &v->cand[0];
	const cJSON *j = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(advice, "candidates"),
					    r->best);

	int i, ran = 0;
	char run[32] = "";

	for (i = 0; i < v->ncand; i++)
		ran += v->cand[i].status != MT_VS_NOT_RUN;
	printf("\ntune: %d round(s), %d run(s) of the %d candidates in the list (%d now); "
	       "stopped: %s\n", r->rounds, ran, v->ncand, r->runs, r->why);
	if (b->tune_run > 0)
		snprintf(run, sizeof(run), "; run %d", b->tune_run);
	printf("measured best: %s, %.4g s per step, %.0f tokens/s per GPU, %.1f TFLOP/s per GPU "
	       "(predicted rank %d, %.4g s%s)\n", b->name, b->meas.step_s,
	       b->meas.tokens_per_s_per_gpu, b->meas.tflops_per_gpu, b->predicted_rank,
	       b->pred.step_s, run);
	if (top == b)
		printf("the first prediction's top pick is the measured best\n");
	else if (top->status == MT_VS_OK && top->has_measured)
		printf("first prediction's top pick %s: %.4g s per step measured; the measured best "
		       "is %.1f%% faster (%.3fx the tokens/s)\n", top->name, top->meas.step_s,
		       100 * (top->meas.step_s - b->meas.step_s) / top->meas.step_s,
		       top->meas.step_s / b->meas.step_s);
	else
		printf("first prediction's top pick %s: %s%s%s\n", top->name,
		       mt_vstatus_name(top->status), top->reason ? ": " : "",
		       top->reason ? top->reason : "");
	flags("Megatron-LM arguments:", mt_jget(j, "megatron_args"), 0);
	flags("Megatron-Bridge overrides:", mt_jget(j, "bridge_overrides"), 0);
	flags("environment:", mt_jget(j, "env"), 1);
}

static int tune_run(struct targs *a, cJSON *advice, volatile sig_atomic_t *stop)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_tune_result r;
	struct mt_validation v;
	int rc;

	a->t.v.top = a->ncand;
	if ((rc = mt_validate_init(&v, advice, &a->t.v, &err)) != MT_OK)
		return cli_fail("tune", &err);
	if (a->resume && access(a->t.v.out, F_OK) == 0) {
		struct mt_validation prev;

		if (mt_validation_load(a->t.v.out, "--resume", &prev, &err)) {
			mt_validation_free(&v);
			return cli_fail("tune", &err);
		}
		rc = mt_validate_resume(&v, &prev);
		mt_validation_free(&prev);
		if (rc) {
			mt_validation_free(&v);
			return cli_fail("tune", (mt_error_set(&err, MT_ENOMEM, "out of memory"), &err));
		}
	}
	mt_runner_signals(stop);
	rc = mt_tune(&v, advice, &a->t, &r, &err);
	mt_runner_signals(NULL);
	if (rc) {
		rc = cli_fail("tune", &err);
	} else {
		struct sbuf sb;

		sbuf_init(&sb);
		if (mt_tune_text(&sb, &v) != MT_OK) {
			sbuf_release(&sb);
			mt_validation_free(&v);
			return cli_fail("tune", (mt_error_set(&err, MT_ENOMEM, "out of memory"), &err));
		}
		printf("\n%s", sb.buf ? sb.buf : "");
		sbuf_release(&sb);
		if (r.best >= 0)
			summary(&v, advice, &r);
		else
			printf("\ntune: no candidate ran to the end in %d run(s)\n", r.runs);
		printf("validation: %s\n", a->t.v.out);
		rc = r.best >= 0 ? 0 : 1;
		if (a->report) {
			struct mt_report_in in;

			memset(&in, 0, sizeof(in));
			in.validation = &v;
			in.validation_file = a->t.v.out;
			if (mt_report_write(a->report, &in, &err))
				rc = cli_fail("tune", &err);
		}
		if (*stop) {
			fprintf(stderr, "megatune tune: interrupted; what was measured is in %s\n",
				a->t.v.out);
			rc = 130;
		}
	}
	mt_validation_free(&v);
	return rc;
}

int cmd_tune(int argc, char **argv)
{
	static volatile sig_atomic_t stop;
	struct mt_error err = MT_ERROR_INIT;
	char json[4096], out[4096];
	cJSON *advice = NULL;
	struct targs a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.pass = calloc((size_t)argc + 1, sizeof(char *));
	if (!a.pass)
		return 2;
	a.ncand = 16;
	a.t.per_round = 0;  /* 3 unless given (check() tells it from --runs) */
	/* validate's defaults, the proxy program included: never a copy of them */
	cli_runner_init(&a.r, "tune-run");
	if ((rc = tune_parse(argc, argv, &a)) >= 0 || (rc = check(&a))) {
		free(a.pass);
		return rc;
	}
	if (a.t.per_round == 0)
		a.t.per_round = 3;
	a.t.v = a.r.o;
	a.t.v.progress = stdout;
	a.t.v.stop = &stop;
	a.t.v.deadline = cli_runner_deadline(&a.r);
	if (mkdir(a.t.v.dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "megatune tune: error: cannot create '%s': %s\n", a.t.v.dir,
			strerror(errno));
		free(a.pass);
		return 2;
	}
	snprintf(json, sizeof(json), "%s/advice.json", a.t.v.dir);
	snprintf(out, sizeof(out), "%s/validation.json", a.t.v.dir);
	a.t.v.out = a.out ? a.out : out;
	/* resuming: the list advise made then, so the names match */
	if (!a.advice && a.resume && access(json, F_OK) == 0)
		a.advice = json;
	if (!a.advice && (rc = run_advise(&a, json)) != 0) {
		free(a.pass);
		return rc;
	}
	a.t.v.advice_path = a.advice ? a.advice : json;
	if (mt_json_load(a.t.v.advice_path, &advice, &err))
		rc = cli_fail("tune", &err);
	else
		rc = tune_run(&a, advice, &stop);
	cJSON_Delete(advice);
	free(a.pass);
	return rc;
}
