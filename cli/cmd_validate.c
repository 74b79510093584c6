/* SPDX-License-Identifier: MIT */
/* validate: run the top candidates of an advice for real and compare. */
#include <errno.h>
#include <stddef.h>
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
#include "runner_opts.h"

static const char validate_head[] =
	"usage: megatune validate --advice FILE [--top K] (--launch TEMPLATE | --proxy)\n"
	"                         -o validation.json [options]\n"
	"       megatune validate --parse-log LOG\n"
	"\n"
	"Run the top K candidates of an advice for a few iterations, one after\n"
	"another on the same allocation, read their logs, and write predicted and\n"
	"measured side by side (megatune.validation/1, docs/FORMATS.md) with the\n"
	"ranking by measured step, Kendall's tau and the mean error.  Templates and\n"
	"what the log parser reads: docs/VALIDATE.md.\n";

static const char validate_tail[] =
	"Statuses: ok, oom, nccl_timeout, nccl_error, nan, hang, exit (non-zero exit\n"
	"or signal), no_iterations, not_run.  A template whose program is not found\n"
	"(not executable, not on PATH) stops before any run with exit 2.  Ctrl-C stops\n"
	"the run in progress, keeps what was measured in the -o file and exits 130;\n"
	"run again with --resume to go on.\n"
	"\n"
	"exit codes: 0 validation written; 1 no candidate ran to the end; 2 bad usage\n"
	"or input; 130 interrupted (the document keeps what was measured).\n";

struct vargs {
	struct cli_runner r;
	const char *report, *parse_log;
	int resume;
};

#define VA(field) offsetof(struct vargs, field)

static const struct cli_opt validate_opts[] = {
	CLI_SEC("what to run"),
	{ .type = CLI_STR, .name = "advice", .meta = "FILE", .off = VA(r.o.advice_path),
	  .help = "megatune.advice/1 (advise --json)" },
	{ .type = CLI_INT, .name = "top", .meta = "K", .off = VA(r.o.top), .lo = 1, .hi = 64,
	  .help = "candidates to run, best predicted first (default 5)" },
	{ .type = CLI_GROUP, .off = VA(r), .group = cli_runner_what },
	CLI_SEC("how"),
	{ .type = CLI_GROUP, .off = VA(r), .group = cli_runner_how },
	{ .type = CLI_STR, .name = "dir", .meta = "DIR", .off = VA(r.o.dir),
	  .help = "the logs, DIR/<name>.log (default validate-logs)" },
	{ .type = CLI_FLAG, .name = "resume", .off = VA(resume),
	  .help = "keep the candidates the -o file already has run" },
	{ .type = CLI_FLAG, .name = "dry-run", .off = VA(r.o.dry_run),
	  .help = "print each candidate's command, run nothing" },
	CLI_SEC("output"),
	{ .type = CLI_STR, .name = "output", .short_name = 'o', .meta = "FILE", .off = VA(r.o.out),
	  .help = "megatune.validation/1, rewritten after each candidate" },
	{ .type = CLI_STR, .name = "report", .meta = "FILE", .off = VA(report),
	  .help = "the HTML report of the validation" },
	{ .type = CLI_STR, .name = "parse-log", .meta = "LOG", .off = VA(parse_log),
	  .help = "print what the log parser reads in LOG (steps, memory,\n"
		  "status and its evidence line) and exit" },
	CLI_OPT_END
};

const struct cli_spec cli_spec_validate = {
	.cmd = "validate", .head = validate_head, .opts = validate_opts, .tail = validate_tail,
};

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

/* 0, or the exit code (after the help: -1; after --parse-log: -2 - its code). */
static int validate_parse_args(int argc, char **argv, struct vargs *a)
{
	const struct mt_validate_opts *o = &a->r.o;
	int rc, first;

	if ((rc = cli_parse(&cli_spec_validate, argc, argv, a, &first)) >= 0)
		return rc ? rc : -1;
	if (a->parse_log)
		return -2 - parse_log(a->parse_log);
	if (first < argc)
		return cli_usage_error("validate", "unexpected argument '%s'", argv[first]);
	if (!o->advice_path)
		return cli_usage_error("validate", "missing --advice FILE (advise --json writes it)");
	if ((rc = cli_runner_check("validate", &a->r)))
		return rc;
	if (!o->out && !o->dry_run)
		return cli_usage_error("validate", "missing -o FILE (the validation to write)");
	if (a->resume && !o->out)
		return cli_usage_error("validate", "--resume needs -o FILE (the validation to go on)");
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

static int validate_finish(struct mt_validation *v, const struct vargs *a, volatile sig_atomic_t *stop)
{
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb;

	sbuf_init(&sb);
	if (mt_validation_text(&sb, v) != MT_OK) {
		sbuf_release(&sb);
		return cli_fail("validate", (mt_error_set(&err, MT_ENOMEM, "out of memory"), &err));
	}
	fputs("\n", stdout);
	fwrite(sb.buf, 1, sb.len, stdout);
	sbuf_release(&sb);
	if (a->report) {
		struct mt_report_in in;

		memset(&in, 0, sizeof(in));
		in.validation = v;
		in.validation_file = a->r.o.out;
		if (mt_report_write(a->report, &in, &err))
			return cli_fail("validate", &err);
	}
	if (*stop) {
		fprintf(stderr, "megatune validate: interrupted: %d candidate(s) measured are kept in "
			"%s; run the same command with --resume to go on\n",
			v->sum.ok + v->sum.failed, a->r.o.out);
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
	struct mt_validate_opts *o = &a.r.o;
	cJSON *advice = NULL;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&v, 0, sizeof(v));
	cli_runner_init(&a.r, "validate-logs");
	rc = validate_parse_args(argc, argv, &a);
	if (rc == -1)
		return 0;
	if (rc <= -2)
		return -2 - rc;
	if (rc)
		return rc;
	o->progress = stdout;
	o->stop = &stop;
	o->deadline = cli_runner_deadline(&a.r);
	if (mt_json_load(o->advice_path, &advice, &err) ||
	    mt_validate_init(&v, advice, o, &err)) {
		rc = cli_fail("validate", &err);
		goto out;
	}
	if (o->dry_run) {
		rc = dry_run(&v, advice, o);
		goto out;
	}
	if (a.resume && access(o->out, F_OK) == 0) {
		if (mt_validation_load(o->out, "--resume", &prev, &err)) {
			rc = cli_fail("validate", &err);
			goto out;
		}
		rc = mt_validate_resume(&v, &prev);
		mt_validation_free(&prev);
		if (rc) {
			rc = cli_fail("validate", (mt_error_set(&err, MT_ENOMEM, "out of memory"), &err));
			goto out;
		}
	}
	mt_runner_signals(&stop);
	rc = mt_validate_all(&v, advice, o, &err);
	mt_runner_signals(NULL);
	if (rc) {
		rc = cli_fail("validate", &err);
		goto out;
	}
	rc = validate_finish(&v, &a, &stop);
out:
	mt_validation_free(&v);
	cJSON_Delete(advice);
	return rc;
}
