/* SPDX-License-Identifier: MIT */
/* validate: run the top candidates of an advice for real and compare. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../reports/html.h"
#include "../validate/logparse.h"
#include "../validate/runner.h"
#include "../validate/validate.h"
#include "cli.h"
#include "common.h"

static const char validate_usage[] =
	"usage: megatune validate --advice FILE [--top K] (--launch TEMPLATE | --proxy)\n"
	"                         -o validation.json [options]\n"
	"       megatune validate --parse-log LOG\n"
	"\n"
	"Run the top K candidates of an advice for a few iterations, one after\n"
	"another on the same allocation, read their logs, and write predicted and\n"
	"measured side by side (megatune.validation/1, docs/FORMATS.md) with the\n"
	"ranking by measured step, Kendall's tau and the mean error.  Templates and\n"
	"what the log parser reads: docs/VALIDATE.md.\n"
	"\n"
	"what to run:\n"
	"  --advice FILE       megatune.advice/1 (advise --json)\n"
	"  --top K             candidates to run, best predicted first (default 5)\n"
	"  --launch TEMPLATE   a command line run by /bin/sh for each candidate, with\n"
	"                      {megatron_args} {bridge_overrides} {env} {nodes} {gpus}\n"
	"                      {gpus_per_node} {name} {dir} {log} {iters} {warmup} {rank}\n"
	"                      {advice} replaced (shell-quoted); {{ }} are literal braces\n"
	"                      and ${VAR} is left to the shell; another {word} is an error\n"
	"  --proxy             run megatune-probe's proxy of each candidate instead:\n"
	"                      MPIRUN megatune-probe proxy --advice FILE --candidate K\n"
	"                      --backend B --iters N --warmup W\n"
	"  --backend cpu|gpu   the proxy's backend (default cpu)\n"
	"  --mpirun CMD        the proxy's launcher prefix (default 'mpirun -np {gpus}';\n"
	"                      '' runs the proxy alone)\n"
	"\n"
	"how:\n"
	"  --iters N           iterations each run is asked for ({iters}, default 20)\n"
	"  --warmup N          iterations dropped before the median (default 5)\n"
	"  --timeout S         no new iteration line for S seconds (from the start, then\n"
	"                      from the last one) is a hang: SIGTERM to the run's process\n"
	"                      group, SIGKILL after --kill-grace (default 600)\n"
	"  --kill-grace S      seconds between SIGTERM and SIGKILL (default 10)\n"
	"  --budget MIN        minutes for the whole validation; what is left is not_run\n"
	"  --dir DIR           the logs, DIR/<name>.log (default validate-logs)\n"
	"  --resume            keep the candidates the -o file already has run\n"
	"  --dry-run           print each candidate's command, run nothing\n"
	"\n"
	"output:\n"
	"  -o, --output FILE   megatune.validation/1, rewritten after each candidate\n"
	"  --report FILE       the HTML report of the validation\n"
	"  --parse-log LOG     print what the log parser reads in LOG (steps, memory,\n"
	"                      status and its evidence line) and exit\n"
	"\n"
	"Statuses: ok, oom, nccl_timeout, nccl_error, nan, hang, exit (non-zero exit\n"
	"or signal), no_iterations, not_run.  A template whose program is not found\n"
	"(not executable, not on PATH) stops before any run with exit 2.  Ctrl-C stops\n"
	"the run in progress, keeps what was measured in the -o file and exits 130;\n"
	"run again with --resume to go on.\n"
	"\n"
	"exit codes: 0 validation written; 1 no candidate ran to the end; 2 bad usage\n"
	"or input; 130 interrupted (the document keeps what was measured).\n";

static int parse_log(const char *path)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_logparse *p = malloc(sizeof(*p));
	struct sbuf sb;
	char *data = NULL;
	size_t len = 0;

	if (!p)
		return 2;
	if (mt_read_file(path, (size_t)1 << 30, &data, &len, &err)) {
		free(p);
		return cli_fail("validate", &err);
	}
	mt_logparse_init(p);
	mt_logparse_feed(p, data, len);
	mt_logparse_finish(p);
	sbuf_init(&sb);
	mt_logparse_text(&sb, p);
	fwrite(sb.buf, 1, sb.len, stdout);
	sbuf_release(&sb);
	free(data);
	free(p);
	return 0;
}

static int pos_num(const char *opt, const char *s, double lo, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo) || !isfinite(v))
		return cli_usage_error("validate", "%s expects a number >= %g, got '%s'", opt, lo, s);
	*out = v;
	return 0;
}

struct vargs {
	struct mt_validate_opts o;
	const char *report;
	int resume;
	double budget_min;
};

static int parse_args(int argc, char **argv, struct vargs *a)
{
	static const struct option opts[] = {
		{ "advice", required_argument, NULL, 'a' },
		{ "top", required_argument, NULL, 'k' },
		{ "launch", required_argument, NULL, 'l' },
		{ "proxy", no_argument, NULL, 'P' },
		{ "backend", required_argument, NULL, 'b' },
		{ "mpirun", required_argument, NULL, 'm' },
		{ "iters", required_argument, NULL, 'i' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "kill-grace", required_argument, NULL, 'g' },
		{ "budget", required_argument, NULL, 'B' },
		{ "dir", required_argument, NULL, 'd' },
		{ "resume", no_argument, NULL, 'r' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "report", required_argument, NULL, 'R' },
		{ "parse-log", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double x;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(validate_usage, stdout); return -1;
		case 'L': return -2 - parse_log(optarg);
		case 'a': a->o.advice_path = optarg; break;
		case 'l': a->o.launch = optarg; break;
		case 'P': a->o.proxy = 1; break;
		case 'b': a->o.backend = optarg; break;
		case 'm': a->o.mpirun = optarg; break;
		case 'd': a->o.dir = optarg; break;
		case 'r': a->resume = 1; break;
		case 'n': a->o.dry_run = 1; break;
		case 'o': a->o.out = optarg; break;
		case 'R': a->report = optarg; break;
		case 'k':
			if (pos_num("--top", optarg, 1, &x) || x != floor(x) || x > 64)
				return cli_usage_error("validate", "--top expects a whole number "
						       "1..64, got '%s'", optarg);
			a->o.top = (int)x;
			break;
		case 'i':
			if (pos_num("--iters", optarg, 1, &x))
				return 2;
			a->o.iters = (int)x;
			break;
		case 'w':
			if (pos_num("--warmup", optarg, 0, &x))
				return 2;
			a->o.warmup = (int)x;
			break;
		case 't':
			if (pos_num("--timeout", optarg, 0.001, &a->o.timeout_s))
				return 2;
			break;
		case 'g':
			if (pos_num("--kill-grace", optarg, 0, &a->o.grace_s))
				return 2;
			break;
		case 'B':
			if (pos_num("--budget", optarg, 0.001, &a->budget_min))
				return 2;
			break;
		default:
			return cli_usage_error("validate", "%s '%s'", optopt ? "option needs a value:"
					       : "unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("validate", "unexpected argument '%s'", argv[optind]);
	if (!a->o.advice_path)
		return cli_usage_error("validate", "missing --advice FILE (advise --json writes it)");
	if (!a->o.launch == !a->o.proxy)
		return cli_usage_error("validate", a->o.proxy ? "give --launch or --proxy, not both"
				       : "missing --launch TEMPLATE or --proxy (what to run)");
	if (a->o.proxy && strcmp(a->o.backend, "cpu") && strcmp(a->o.backend, "gpu"))
		return cli_usage_error("validate", "--backend expects cpu or gpu, got '%s'",
				       a->o.backend);
	if (!a->o.proxy && a->o.mpirun)
		return cli_usage_error("validate", "--mpirun goes with --proxy");
	if (!a->o.out && !a->o.dry_run)
		return cli_usage_error("validate", "missing -o FILE (the validation to write)");
	if (a->resume && !a->o.out)
		return cli_usage_error("validate", "--resume needs -o FILE (the validation to go on)");
	if (a->o.warmup >= a->o.iters)
		return cli_usage_error("validate", "--warmup %d leaves no iteration of --iters %d",
				       a->o.warmup, a->o.iters);
	return 0;
}

static int dry_run(struct mt_validation *v, const cJSON *advice, const struct mt_validate_opts *o)
{
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb;
	int i;

	sbuf_init(&sb);
	for (i = 0; i < v->ncand; i++) {
		sbuf_reset(&sb);
		if (mt_validate_command(v, advice, i, o, &sb, &err)) {
			sbuf_release(&sb);
			return cli_fail("validate", &err);
		}
		printf("# %s\n%s\n", v->cand[i].name, sb.buf);
	}
	sbuf_release(&sb);
	return 0;
}

static int finish(struct mt_validation *v, const struct vargs *a, volatile sig_atomic_t *stop)
{
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb;

	sbuf_init(&sb);
	mt_validation_text(&sb, v);
	fputs("\n", stdout);
	fwrite(sb.buf, 1, sb.len, stdout);
	sbuf_release(&sb);
	if (a->report) {
		struct mt_report_in in;

		memset(&in, 0, sizeof(in));
		in.validation = v;
		in.validation_file = a->o.out;
		if (mt_report_write(a->report, &in, &err))
			return cli_fail("validate", &err);
	}
	if (*stop) {
		fprintf(stderr, "megatune validate: interrupted: %d candidate(s) measured are kept in "
			"%s; run the same command with --resume to go on\n",
			v->sum.ok + v->sum.failed, a->o.out);
		return 130;
	}
	return v->sum.ok > 0 ? 0 : 1;
}

int cmd_validate(int argc, char **argv)
{
	static volatile sig_atomic_t stop;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_validation v, prev;
	struct vargs a;
	char probe[4096];
	cJSON *advice = NULL;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&v, 0, sizeof(v));
	cli_sibling_exe("megatune-probe", probe, sizeof(probe));
	mt_validate_opts_init(&a.o, "validate-logs");
	a.o.probe_exe = probe;
	rc = parse_args(argc, argv, &a);
	if (rc == -1)
		return 0;
	if (rc <= -2)
		return -2 - rc;
	if (rc)
		return rc;
	a.o.progress = stdout;
	a.o.stop = &stop;
	if (a.budget_min > 0)
		a.o.deadline = mt_now() + a.budget_min * 60;
	if (mt_json_load(a.o.advice_path, &advice, &err) ||
	    mt_validate_init(&v, advice, &a.o, &err)) {
		rc = cli_fail("validate", &err);
		goto out;
	}
	if (a.o.dry_run) {
		rc = dry_run(&v, advice, &a.o);
		goto out;
	}
	if (a.resume && access(a.o.out, F_OK) == 0) {
		if (mt_validation_load(a.o.out, "--resume", &prev, &err)) {
			rc = cli_fail("validate", &err);
			goto out;
		}
		mt_validate_resume(&v, &prev);
		mt_validation_free(&prev);
	}
	mt_runner_signals(&stop);
	rc = mt_validate_all(&v, advice, &a.o, &err);
	mt_runner_signals(NULL);
	if (rc) {
		rc = cli_fail("validate", &err);
		goto out;
	}
	rc = finish(&v, &a, &stop);
out:
	mt_validation_free(&v);
	cJSON_Delete(advice);
	return rc;
}
