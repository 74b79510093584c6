/* SPDX-License-Identifier: MIT */
/* report: the HTML tuning report from the documents the other commands write. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compare/history.h"
#include "../compare/trend.h"
#include "../lib/jsonr.h"
#include "../reports/html.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/profile.h"
#include "../validate/validation.h"
#include "cli.h"
#include "common.h"

static const char report_head[] =
	"usage: megatune report [--advice FILE] [--profile FILE|NAME] [--analysis FILE]\n"
	"                       [--compare FILE] [--validation FILE] [--check FILE]\n"
	"                       [--history DB [--window N]]\n"
	"                       -o report.html\n"
	"\n"
	"One self-contained HTML page (inline CSS, SVG charts and a few lines of\n"
	"JavaScript; it fetches nothing) from what the other commands write.\n";

static const char report_tail[] =
	"Each section appears when its input is given.  `megatune advise ... --report\n"
	"FILE` writes the same page for a search, with its cluster.\n"
	"\n"
	"exit codes: 0 success; 2 bad usage or a bad input file.\n";

struct rargs {
	struct mt_report_in in;
	const char *out;
	int window;
};

#define RA(field) offsetof(struct rargs, field)

static const struct cli_opt report_opts[] = {
	CLI_SEC("inputs"),
	{ .type = CLI_STR, .name = "advice", .meta = "FILE", .off = RA(in.advice_file),
	  .help = "megatune.advice/1 (advise --json): summary, candidates,\n"
		  "memory, time, the rules that fired, configuration" },
	{ .type = CLI_STR, .name = "profile", .meta = "FILE", .off = RA(in.profile_file),
	  .help = "megatune.profile/1, or a bundled profile name: the\n"
		  "cluster, its GEMM and collective curves, with provenance" },
	{ .type = CLI_STR, .name = "analysis", .meta = "FILE", .off = RA(in.analysis_file),
	  .help = "megatune.analysis/1: per-rank time and profile findings" },
	{ .type = CLI_STR, .name = "compare", .meta = "FILE", .off = RA(in.compare_file),
	  .help = "megatune.comparison/1: regression verdicts" },
	{ .type = CLI_STR, .name = "history", .meta = "DB", .off = RA(in.history_file),
	  .help = "a history (megatune history add): a trend chart per\n"
		  "metric of its newest run's kind, host and GPU, with the\n"
		  "rolling baseline of `megatune compare --history` and\n"
		  "its band" },
	{ .type = CLI_INT, .name = "window", .meta = "N", .off = RA(window), .lo = 1, .hi = 100000,
	  .want = "a number of runs from 1 to 100000",
	  .help = "the runs of that baseline (default 10)" },
	{ .type = CLI_STR, .name = "validation", .meta = "FILE", .off = RA(in.validation_file),
	  .help = "megatune.validation/1 (validate -o): predicted vs\n"
		  "measured step, each run's status with its evidence" },
	{ .type = CLI_STR, .name = "check", .meta = "FILE", .off = RA(in.check_file),
	  .help = "megatune.check/1 (check --json): the job as it is,\n"
		  "its diagnoses and the changes with their diffs" },
	CLI_SEC("output"),
	{ .type = CLI_STR, .name = "output", .short_name = 'o', .meta = "FILE", .off = RA(out),
	  .help = "the page ('-' for standard output)" },
	CLI_OPT_END
};

const struct cli_spec cli_spec_report = {
	.cmd = "report", .head = report_head, .opts = report_opts, .tail = report_tail,
};

/* What the Trends section draws, read from the history here so that the
 * report itself needs no database. */
struct trends {
	struct mt_hist_run *runs;
	struct mt_cm_set *sets;
	long long *ids;
	const char **labels;
	int n;
	struct mt_trend *t;
	int nt;
};

static void trends_free(struct trends *tr)
{
	int i;

	mt_trends_free(tr->t, tr->nt);
	for (i = 0; tr->sets && i < tr->n; i++)
		mt_cm_set_free(&tr->sets[i]);
	free(tr->sets);
	free(tr->runs);
	free(tr->ids);
	free(tr->labels);
}

static int read_trends(const char *db, int window, struct trends *tr, struct mt_error *err)
{
	struct mt_cmp_opts o = { .tolerance_pct = MT_CMP_DEFAULT_TOLERANCE,
				  .confidence_pct = MT_CMP_DEFAULT_CONFIDENCE };
	struct mt_history *h = NULL;
	struct mt_hist_run *all = NULL;
	const struct mt_hist_run *last;
	int rc, nall = 0, i;

	memset(tr, 0, sizeof(*tr));
	if ((rc = mt_history_open(db, 0, &h, err)) ||
	    (rc = mt_history_list(h, NULL, NULL, NULL, 1, &all, &nall, err)))
		goto out;
	if (!nall) {
		rc = mt_error_set(err, MT_EINVAL, "%s: the history has no run", db);
		goto out;
	}
	last = &all[0];
	if ((rc = mt_history_list(h, last->kind, last->env.host, last->env.gpu, 0, &tr->runs,
				  &tr->n, err)))
		goto out;
	if (!(tr->sets = calloc((size_t)tr->n, sizeof(*tr->sets))) ||
	    !(tr->ids = calloc((size_t)tr->n, sizeof(*tr->ids))) ||
	    !(tr->labels = calloc((size_t)tr->n, sizeof(char *)))) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < tr->n && !rc; i++) {
		tr->ids[i] = tr->runs[i].id;
		tr->labels[i] = tr->runs[i].label;
		rc = mt_history_metrics(h, tr->runs[i].id, &tr->sets[i], err);
	}
	if (!rc)
		rc = mt_trends_build(&(struct mt_cmp_hist_in){ tr->sets, tr->ids, tr->labels, tr->n },
				     window, &o, 60, &tr->t, &tr->nt, err);
out:
	free(all);
	mt_history_close(h);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct mt_error err = MT_ERROR_INIT;
	struct rargs ra;
	struct mt_report_in *inp = &ra.in;
	cJSON *docs[5] = { NULL, NULL, NULL, NULL, NULL };
	struct mt_cluster *cluster = NULL;
	struct trends tr;
	struct mt_validation val;
	int has_val = 0;
	const char *out;
	int rc = 0, i, first;

	memset(&ra, 0, sizeof(ra));
	ra.window = 10;
	if ((rc = cli_parse(&cli_spec_report, argc, argv, &ra, &first)) >= 0)
		return rc;
	rc = 0;
	out = ra.out;
	if (first < argc)
		return cli_usage_error("report", "unexpected argument '%s'", argv[first]);
	if (!out)
		return cli_usage_error("report", "missing -o FILE (the page to write)");
	{
		const char *ins[7] = { inp->advice_file, inp->profile_file, inp->analysis_file,
				       inp->compare_file, inp->history_file, inp->validation_file,
				       inp->check_file };

		if ((rc = cli_check_io("report", ins, 7, &out, 1)))
			return rc;
	}
	memset(&tr, 0, sizeof(tr));
	if ((inp->history_file && read_trends(inp->history_file, ra.window, &tr, &err)) ||
	    (inp->advice_file && mt_json_load(inp->advice_file, &docs[0], &err)) ||
	    (inp->profile_file && mt_profile_load_json(inp->profile_file, &docs[1], &err)) ||
	    (inp->analysis_file && mt_json_load(inp->analysis_file, &docs[2], &err)) ||
	    (inp->compare_file && mt_json_load(inp->compare_file, &docs[3], &err)) ||
	    (inp->check_file && mt_json_load(inp->check_file, &docs[4], &err)) ||
	    (docs[1] && (mt_report_schema(docs[1], "megatune.profile/1", inp->profile_file,
					  "--profile", &err) ||
			 mt_profile_cluster(inp->profile_file, docs[1], &cluster, &err)))) {
		rc = cli_fail("report", &err);
		goto out;
	}
	if (inp->validation_file) {
		if (mt_validation_load(inp->validation_file, "--validation", &val, &err)) {
			rc = cli_fail("report", &err);
			goto out;
		}
		has_val = 1;
		inp->validation = &val;
	}
	cli_cluster_warnings("report", cluster);
	inp->advice = docs[0];
	inp->cluster = cluster;
	inp->analysis = docs[2];
	inp->compare = docs[3];
	inp->check = docs[4];
	inp->trends = tr.t;
	inp->ntrends = tr.nt;
	{
		char note[768];

		if (mt_report_mismatch(inp, note, sizeof(note)))
			cli_warning("report", note);
	}
	if (mt_report_write(out, inp, &err))
		rc = cli_fail("report", &err);
out:
	trends_free(&tr);
	if (has_val)
		mt_validation_free(&val);
	mt_cluster_free(cluster);
	for (i = 0; i < 5; i++)
		cJSON_Delete(docs[i]);
	return rc;
}
