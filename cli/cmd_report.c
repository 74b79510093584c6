/* SPDX-License-Identifier: MIT */
/* report: the HTML tuning report from the documents the other commands write. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compare/history.h"
#include "../compare/trend.h"
#include "../lib/jsonr.h"
#include "../reports/html.h"
#include "../tuner/cluster.h"
#include "../tuner/profile.h"
#include "../validate/validation.h"
#include "cli.h"
#include "common.h"

static const char report_usage[] =
	"usage: megatune report [--advice FILE] [--profile FILE|NAME] [--analysis FILE]\n"
	"                       [--compare FILE] [--validation FILE] [--history DB [--window N]]\n"
	"                       -o report.html\n"
	"\n"
	"One self-contained HTML page (inline CSS, SVG charts and a few lines of\n"
	"JavaScript; it fetches nothing) from what the other commands write:\n"
	"  --advice FILE     megatune.advice/1 (advise --json): summary, candidates,\n"
	"                    memory, time, the rules that fired, configuration\n"
	"  --profile FILE    megatune.profile/1, or a bundled profile name: the\n"
	"                    cluster, its GEMM and collective curves, with provenance\n"
	"  --analysis FILE   megatune.analysis/1: per-rank time and profile findings\n"
	"  --compare FILE    megatune.comparison/1: regression verdicts\n"
	"  --history DB      a history (megatune history add): a trend chart per metric\n"
	"                    of its newest run's kind, host and GPU, with the rolling\n"
	"                    baseline of `megatune compare --history` and its band\n"
	"  --window N        the runs of that baseline (default 10)\n"
	"  --validation FILE megatune.validation/1 (validate -o): predicted vs measured\n"
	"                    step, each run's status with its evidence\n"
	"  -o, --output FILE the page ('-' for standard output)\n"
	"Each section appears when its input is given.  `megatune advise ... --report\n"
	"FILE` writes the same page for a search, with its cluster.\n"
	"\n"
	"exit codes: 0 success; 2 bad usage or a bad input file.\n";

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
	struct mt_cmp_opts o = { MT_CMP_DEFAULT_TOLERANCE, MT_CMP_DEFAULT_CONFIDENCE, NULL };
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
	static const struct option opts[] = {
		{ "advice", required_argument, NULL, 'a' },
		{ "profile", required_argument, NULL, 'p' },
		{ "analysis", required_argument, NULL, 'n' },
		{ "compare", required_argument, NULL, 'c' },
		{ "history", required_argument, NULL, 'H' },
		{ "window", required_argument, NULL, 'w' },
		{ "validation", required_argument, NULL, 'v' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mt_error err = MT_ERROR_INIT;
	struct mt_report_in in;
	cJSON *docs[4] = { NULL, NULL, NULL, NULL };
	struct mt_cluster *cluster = NULL;
	struct trends tr;
	struct mt_validation val;
	int has_val = 0;
	const char *out = NULL;
	char *end;
	int c, rc = 0, i, window = 10;

	memset(&in, 0, sizeof(in));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(report_usage, stdout);
			return 0;
		case 'a': in.advice_file = optarg; break;
		case 'p': in.profile_file = optarg; break;
		case 'n': in.analysis_file = optarg; break;
		case 'c': in.compare_file = optarg; break;
		case 'H': in.history_file = optarg; break;
		case 'w':
			window = (int)strtol(optarg, &end, 10);
			if (*end || window < 1)
				return cli_usage_error("report", "--window '%s': expected a number "
						       "of runs >= 1", optarg);
			break;
		case 'v': in.validation_file = optarg; break;
		case 'o': out = optarg; break;
		default:
			return cli_usage_error("report", "%s '%s'", optopt ? "option needs a value:"
					       : "unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		return cli_usage_error("report", "unexpected argument '%s'", argv[optind]);
	}
	if (!out) {
		return cli_usage_error("report", "missing -o FILE (the page to write)");
	}
	{
		const char *ins[5] = { in.advice_file, in.profile_file, in.analysis_file,
				       in.compare_file, in.history_file };

		if ((rc = cli_check_io("report", ins, 5, &out, 1)))
			return rc;
	}
	memset(&tr, 0, sizeof(tr));
	if ((in.history_file && read_trends(in.history_file, window, &tr, &err)) ||
	    (in.advice_file && mt_json_load(in.advice_file, &docs[0], &err)) ||
	    (in.profile_file && mt_profile_load_json(in.profile_file, &docs[1], &err)) ||
	    (in.analysis_file && mt_json_load(in.analysis_file, &docs[2], &err)) ||
	    (in.compare_file && mt_json_load(in.compare_file, &docs[3], &err)) ||
	    (docs[1] && (mt_report_schema(docs[1], "megatune.profile/1", in.profile_file,
					  "--profile", &err) ||
			 mt_profile_cluster(in.profile_file, docs[1], &cluster, &err)))) {
		rc = cli_fail("report", &err);
		goto out;
	}
	if (in.validation_file) {
		if (mt_validation_load(in.validation_file, "--validation", &val, &err)) {
			rc = cli_fail("report", &err);
			goto out;
		}
		has_val = 1;
		in.validation = &val;
	}
	in.advice = docs[0];
	in.cluster = cluster;
	in.analysis = docs[2];
	in.compare = docs[3];
	in.trends = tr.t;
	in.ntrends = tr.nt;
	if (mt_report_write(out, &in, &err))
		rc = cli_fail("report", &err);
out:
	trends_free(&tr);
	if (has_val)
		mt_validation_free(&val);
	mt_cluster_free(cluster);
	for (i = 0; i < 4; i++)
		cJSON_Delete(docs[i]);
	return rc;
}
