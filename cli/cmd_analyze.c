/* SPDX-License-Identifier: MIT */
/* analyze: per-rank time breakdown of GPU traces, stragglers, and findings. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/jsonw.h"
#include "../lib/table.h"
#include "../profiler/analysis_doc.h"
#include "../profiler/analyze.h"
#include "../rules/engine.h"
#include "../rules/facts.h"
#include "../rules/fired.h"
#include "../rules/ruleset.h"
#include "../tuner/cluster.h"
#include "cli.h"
#include "common.h"

static const char analyze_head[] =
	"usage: megatune analyze TRACE... [--json FILE] [--facts FILE] [--linked-only]\n"
	"                        [--window all|steps|hta] [--comm-pattern REGEX]...\n"
	"                        [--step-range PREFIX]... [--rules PATH]... [--no-rules]\n"
	"                        [--cluster NAME|FILE] [--quiet]\n"
	"\n"
	"Reads one trace per rank of one job: PyTorch profiler (Kineto) Chrome traces\n"
	"(.json or .json.gz) or megatune.trace/1 files written by `megatune profile`,\n"
	"streamed (a trace is never loaded whole).  Prints per rank the time breakdown\n"
	"(computation, communication by kind, memory copies, idle split into host-wait\n"
	"and launch gaps), the communication/computation overlap (HTA's definition),\n"
	"exposed communication, kernel categories and iteration times; across ranks\n"
	"the slowest rank, the stragglers and the start skew; then the findings of the\n"
	"diagnose rules.\n";

static const char analyze_tail[] =
	"exit codes: 0 success; 2 bad usage or a bad trace (unreadable, empty,\n"
	"truncated, not JSON, no GPU work).\n";

struct aopts {
	struct mt_analyze_opts ao;
	const char *json, *facts, *cluster;
	const char *rules[16];
	int nrules, no_rules, quiet;
	const char *steps[17];
	int nsteps;
};

static const char *const windows[] = { "all", "steps", "hta", NULL };
_Static_assert(sizeof(enum mt_window) == sizeof(int), "--window is read as an int");

#define AO(field) offsetof(struct aopts, field)

static const struct cli_opt analyze_opts[] = {
	CLI_SEC("options"),
	{ .type = CLI_STR, .name = "json", .meta = "FILE", .off = AO(json),
	  .help = "write megatune.analysis/1 ('-': standard output)" },
	{ .type = CLI_STR, .name = "facts", .meta = "FILE", .off = AO(facts),
	  .help = "write the findings as megatune.facts/1 (for rules check)" },
	{ .type = CLI_FLAG, .name = "linked-only", .off = AO(ao.linked_only),
	  .help = "count only GPU events linked to a CPU launch call, as\n"
		  "TraceLens does (default: every GPU event counts)" },
	{ .type = CLI_CHOICE, .name = "window", .meta = "W", .off = AO(ao.window),
	  .choices = windows,
	  .help = "all (default): the whole trace; steps: events launched\n"
		  "inside the ProfilerStep ranges; hta: from the first step\n"
		  "to the start of the last (Holistic Trace Analysis)" },
	{ .type = CLI_STRS, .name = "comm-pattern", .meta = "RE", .off = AO(ao.comm_patterns),
	  .count_off = AO(ao.ncomm_patterns), .cap = MT_MAX_COMM_PATTERNS, .want = "patterns",
	  .help = "also count kernels matching this extended regular\n"
		  "expression as communication (NCCL, RCCL, DeepEP\n"
		  "dpsk::ep:: and NVSHMEM are recognised already)" },
	{ .type = CLI_STRS, .name = "step-range", .meta = "PREFIX", .off = AO(steps),
	  .count_off = AO(nsteps), .cap = 16, .want = "prefixes",
	  .help = "CPU or NVTX ranges starting with PREFIX are iterations\n"
		  "(ProfilerStep#N always is)" },
	{ .type = CLI_STRS, .name = "rules", .meta = "PATH", .off = AO(rules),
	  .count_off = AO(nrules), .cap = 16, .want = "paths",
	  .help = "more rule files (the bundled diagnose rules always run\n"
		  "unless --no-rules)" },
	{ .type = CLI_FLAG, .name = "no-rules", .off = AO(no_rules),
	  .help = "leave out the bundled diagnose rules (those of --rules\n"
		  "still run)" },
	{ .type = CLI_STR, .name = "cluster", .meta = "NAME|FILE", .off = AO(cluster),
	  .help = "a cluster profile for rules that read cluster facts" },
	{ .type = CLI_FLAG, .name = "quiet", .short_name = 'q', .off = AO(quiet),
	  .help = "no text summary (with --json or --facts)" },
	CLI_OPT_END
};

/* the options end at the first trace: one given after it is refused below */
const struct cli_spec cli_spec_analyze = {
	.cmd = "analyze", .head = analyze_head, .opts = analyze_opts, .tail = analyze_tail,
	.in_order = 1,
};

static int parse(int argc, char **argv, struct aopts *o, int *first)
{
	memset(o, 0, sizeof(*o));
	return cli_parse(&cli_spec_analyze, argc, argv, o, first);
}

/* Two traces that say they are the same rank (copies of one trace, or two
 * runs mixed): named, since the job figures would count that rank twice. */
static void warn_repeated_ranks(const struct mt_rank_stats *s, int n)
{
	int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (s[i].rank_from_trace && s[j].rank_from_trace && s[i].rank == s[j].rank) {
				fprintf(stderr, "megatune analyze: warning: rank %lld appears in %s "
					"and in %s\n", (long long)s[i].rank, s[j].path, s[i].path);
				break;
			}
}

int cmd_analyze(int argc, char **argv)
{
	struct aopts o;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_rank_stats *stats = NULL;
	struct mt_job_stats job;
	struct mt_val *facts = NULL;
	unsigned char given[MT_F_N];
	struct mt_explain ex;
	struct mt_ruleset *rs = NULL;
	struct mt_cluster *cl = NULL;
	struct mt_trace_opts to;
	struct sbuf sb = SBUF_INIT;
	struct mt_outset os;
	int first = 0, n, i, rc;

	memset(&ex, 0, sizeof(ex));
	memset(&os, 0, sizeof(os));
	if ((rc = parse(argc, argv, &o, &first)) >= 0)
		return rc;
	n = argc - first;
	if (n < 1)
		return cli_usage_error("analyze", "give at least one trace file");
	for (i = first; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("analyze",
					       "options go before the traces: '%s'", argv[i]);
	if (n > 1024)
		return cli_usage_error("analyze", "at most 1024 traces");
	{
		const char *outs[2] = { o.json, o.facts };

		for (i = first; i < argc; i++)
			for (rc = first; rc < i; rc++)
				if (mt_same_file(argv[rc], argv[i]))
					return cli_usage_error("analyze", "the trace '%s' is given "
							       "twice (also as '%s'): each rank once",
							       argv[i], argv[rc]);
		if ((rc = cli_check_io("analyze", (const char *const *)argv + first, n, outs, 2)) ||
		    (rc = cli_check_io("analyze", o.rules, o.nrules, outs, 2)) ||
		    (rc = cli_check_io("analyze", &o.cluster, 1, outs, 2)))
			return rc;
	}
	o.steps[o.nsteps] = NULL;
	to.step_prefixes = o.steps;
	stats = calloc((size_t)n, sizeof(*stats));
	facts = calloc(MT_F_N, sizeof(*facts));
	if (!stats || !facts) {
		rc = mt_error_set(&err, MT_ENOMEM, "out of memory");
		goto fail;
	}
	/* Load the rules and the cluster first: a bad rule file fails fast. */
	if (o.cluster && (rc = mt_cluster_load(o.cluster, &cl, &err)))
		goto fail;
	if ((!o.no_rules || o.nrules) &&
	    (rc = mt_ruleset_load_files(o.rules, o.nrules, !o.no_rules, &rs, &err)))
		goto fail;
	/* One trace at a time: only its statistics are kept. */
	for (i = 0; i < n; i++) {
		struct mt_trace *t = NULL;
		if ((rc = mt_trace_read(argv[first + i], &to, &t, &err)))
			goto fail;
		rc = mt_analyze_rank(t, i, &o.ao, &stats[i], &err);
		mt_trace_free(t);
		if (rc)
			goto fail;
	}
	warn_repeated_ranks(stats, n);
	mt_analyze_job(stats, n, &job);
	mt_analyze_facts(stats, n, &job, facts, given);
	if (rs && mt_rules_on_facts(rs, facts, given, cl, &ex, &i)) {
		rc = mt_error_set(&err, MT_ENOMEM, "out of memory");
		goto fail;
	}
	mt_outset_begin(&os);
	if (o.json) {
		mt_analysis_json(&sb, stats, n, &job, rs ? &ex : NULL, facts, given, &o.ao);
		if (sb.failed || (rc = mt_write_atomic(o.json, sb.buf, sb.len, &err)))
			goto fail_sb;
		sbuf_release(&sb);
	}
	if (o.facts) {
		mt_analysis_facts(&sb, stats, n, facts, given, &o.ao);
		if (sb.failed || (rc = mt_write_atomic(o.facts, sb.buf, sb.len, &err)))
			goto fail_sb;
		sbuf_release(&sb);
	}
	if ((rc = mt_outset_commit(&os, &err)))
		goto fail;
	if (!o.quiet && !(o.json && !strcmp(o.json, "-")) && !(o.facts && !strcmp(o.facts, "-"))) {
		mt_analysis_text(&sb, stats, n, &job, rs ? &ex : NULL, &o.ao);
		if (sb.failed)
			goto fail_sb;
		fputs(sb.buf, stdout);
	}
	rc = 0;
	goto out;
fail_sb:
	if (sb.failed)
		rc = mt_error_set(&err, MT_ENOMEM, "out of memory");
fail:
	mt_outset_abort(&os);
	rc = cli_fail("analyze", &err);
out:
	sbuf_release(&sb);
	mt_explain_free(&ex);
	mt_ruleset_free(rs);
	mt_cluster_free(cl);
	free(stats);
	free(facts);
	return rc;
}
