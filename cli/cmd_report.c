/* SPDX-License-Identifier: MIT */
/* report: the HTML tuning report from the documents the other commands write. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../reports/html.h"
#include "../tuner/cluster.h"
#include "../tuner/profile.h"
#include "../validate/validation.h"
#include "cli.h"
#include "common.h"

static const char report_usage[] =
	"usage: megatune report [--advice FILE] [--profile FILE|NAME] [--analysis FILE]\n"
	"                       [--compare FILE] [--validation FILE] -o report.html\n"
	"\n"
	"One self-contained HTML page (inline CSS, SVG charts and a few lines of\n"
	"JavaScript; it fetches nothing) from what the other commands write:\n"
	"  --advice FILE     megatune.advice/1 (advise --json): summary, candidates,\n"
	"                    memory, time, the rules that fired, configuration\n"
	"  --profile FILE    megatune.profile/1, or a bundled profile name: the\n"
	"                    cluster, its GEMM and collective curves, with provenance\n"
	"  --analysis FILE   megatune.analysis/1: per-rank time and profile findings\n"
	"  --compare FILE    megatune.comparison/1: regression verdicts\n"
	"  --validation FILE megatune.validation/1 (validate -o): predicted vs measured\n"
	"                    step, each run's status with its evidence\n"
	"  -o, --output FILE the page ('-' for standard output)\n"
	"Each section appears when its input is given.  `megatune advise ... --report\n"
	"FILE` writes the same page for a search, with its cluster.\n"
	"\n"
	"exit codes: 0 success; 2 bad usage or a bad input file.\n";

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "advice", required_argument, NULL, 'a' },
		{ "profile", required_argument, NULL, 'p' },
		{ "analysis", required_argument, NULL, 'n' },
		{ "compare", required_argument, NULL, 'c' },
		{ "validation", required_argument, NULL, 'v' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mt_error err = MT_ERROR_INIT;
	struct mt_report_in in;
	cJSON *docs[4] = { NULL, NULL, NULL, NULL };
	struct mt_cluster *cluster = NULL;
	struct mt_validation val;
	int has_val = 0;
	const char *out = NULL;
	int c, rc = 0, i;

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
	if ((in.advice_file && mt_json_load(in.advice_file, &docs[0], &err)) ||
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
	if (mt_report_write(out, &in, &err))
		rc = cli_fail("report", &err);
out:
	if (has_val)
		mt_validation_free(&val);
	mt_cluster_free(cluster);
	for (i = 0; i < 4; i++)
		cJSON_Delete(docs[i]);
	return rc;
}
