/* SPDX-License-Identifier: MIT */
/* analyze: per-rank time breakdown of GPU traces, stragglers, and findings. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tuner/advice.h"
#include "../tuner/search.h"
#include "../job/formats.h"
#include "../job/megatron.h"
#include "../job/script.h"
#include "../lib/fsutil.h"
#include "../lib/jsonw.h"
#include "../lib/table.h"
#include "../profiler/against.h"
#include "../profiler/analysis_doc.h"
#include "../profiler/analyze.h"
#include "../rules/engine.h"
#include "../rules/facts.h"
#include "../rules/fired.h"
#include "../rules/ruleset.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/layout.h"
#include "cli.h"
#include "common.h"

static const char analyze_head[] =
	"usage: megatune analyze TRACE... [--json FILE] [--facts FILE] [--linked-only]\n"
	"                        [--window all|steps|hta] [--comm-pattern REGEX]...\n"
	"                        [--step-range PREFIX]... [--rules PATH]... [--no-rules]\n"
	"                        [--cluster NAME|FILE] [--quiet]\n"
	"                        [--against ADVICE|JOB [--layers N] [--candidate K]\n"
	"                         [--model NAME|FILE] [--gpus N]]\n"
	"\n"
	"Reads one trace per rank of one job: PyTorch profiler (Kineto) Chrome traces\n"
	"(.json or .json.gz) or megatune.trace/1 files written by `megatune profile`,\n"
	"streamed (a trace is never loaded whole).  Prints per rank the time breakdown\n"
	"(computation, communication by kind, memory copies, idle split into host-wait\n"
	"and launch gaps), the communication/computation overlap (HTA's definition),\n"
	"exposed communication, kernel categories and iteration times; across ranks\n"
	"the slowest rank, the stragglers and the start skew; then the findings of the\n"
	"diagnose rules.\n"
	"\n"
	"With --against, the trace's measured time per class (GEMM, attention,\n"
	"element-wise, communication hidden and exposed, expert dispatch, idle) is put\n"
	"beside the model's terms for the same configuration, read from an advice file\n"
	"(megatune.advice/1) or from the job itself (anything `megatune check` reads),\n"
	"per step or per layer, and the term furthest off is named (docs/MODEL.md\n"
	"11.2).\n";

static const char analyze_tail[] =
	"exit codes: 0 success; 2 bad usage or a bad trace (unreadable, empty,\n"
	"truncated, not JSON, no GPU work), or an --against file that cannot be read.\n"
	"\n"
	"examples:\n"
	"  megatune analyze rank0.json.gz rank1.json.gz --json analysis.json\n"
	"  megatune analyze --against advice.json --candidate 1 step_trace.json\n"
	"  megatune analyze --against deepseek-v3.args --layers 4 --comm-pattern 'dpsk::ep::' \\\n"
	"    train.json\n";

struct aopts {
	struct mt_analyze_opts ao;
	const char *json, *facts, *cluster;
	const char *rules[16];
	int nrules, no_rules, quiet;
	const char *steps[17];
	int nsteps;
	const char *against, *model;
	int layers, cand, gpus;
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
	CLI_SEC("against the model"),
	{ .type = CLI_STR, .name = "against", .meta = "ADVICE|JOB", .off = AO(against),
	  .help = "the configuration the trace ran: a megatune.advice/1\n"
		  "file (with --candidate) or the job as `megatune check`\n"
		  "reads it (launch script, arguments, log, Bridge or verl\n"
		  "config); --cluster is its profile (default: the advice's,\n"
		  "or dgx-h100)" },
	{ .type = CLI_INT, .name = "layers", .meta = "N", .off = AO(layers), .lo = 1, .hi = 1 << 20,
	  .want = "a positive number of layers",
	  .help = "the trace holds N layers, each through its forward and\n"
		  "backward for one micro-batch (MoE layers for an MoE\n"
		  "model; default: each ProfilerStep is one training step)" },
	{ .type = CLI_INT, .name = "candidate", .meta = "K", .off = AO(cand), .lo = 1, .hi = 64,
	  .want = "a candidate's rank (1 = best)",
	  .help = "the advice's candidate that ran (default 1)" },
	{ .type = CLI_STR, .name = "model", .meta = "NAME|FILE", .off = AO(model),
	  .help = "the model, for a job without its own model flags" },
	{ .type = CLI_INT, .name = "gpus", .meta = "N", .off = AO(gpus), .lo = 1, .hi = 1 << 24,
	  .want = "a positive number of GPUs",
	  .help = "GPUs of the job (default: its launcher's or log's)" },
	CLI_OPT_END
};

/* the options end at the first trace: one given after it is refused below */
const struct cli_spec cli_spec_analyze = {
	.cmd = "analyze", .head = analyze_head, .opts = analyze_opts, .tail = analyze_tail,
	.in_order = 1,
};

static int analyze_parse(int argc, char **argv, struct aopts *o, int *first)
{
	int rc;

	memset(o, 0, sizeof(*o));
	if ((rc = cli_parse(&cli_spec_analyze, argc, argv, o, first)) >= 0)
		return rc;
	if (!o->against && (o->layers || o->cand || o->model || o->gpus))
		return cli_usage_error("analyze", "--layers, --candidate, --model and --gpus go "
				       "with --against");
	return -1;
}

/* What the trace is compared with: the model, cluster, job and the
 * configuration's evaluation */
struct against {
	struct mt_model m;
	struct mt_cluster *c;
	struct mt_job job;
	struct mt_eval e;
	struct mt_layout layout;
	struct mt_jobsrc *src;
	struct mt_megatron_job *mj;
	char *buf;
};

static int is_advice(const char *path)
{
	FILE *f = fopen(path, "r");
	char head[4096];
	size_t n;

	if (!f)
		return 0;
	n = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[n] = 0;
	return strstr(head, "\"megatune.advice/1\"") != NULL;
}

static int against_load(const struct aopts *o, struct against *g, struct mt_error *err)
{
	char cluster[256] = "";
	struct mt_config cfg;
	struct mt_job j;
	size_t len = 0;
	int rc;

	if (is_advice(o->against)) {
		if (o->gpus)
			return mt_error_set(err, MT_EUSAGE, "--gpus: an advice file states its GPUs");
		if ((rc = mt_advice_candidate(o->against, o->cand ? o->cand : 1,
					      o->model ? NULL : &g->m, &j, &cfg, &g->layout,
					      cluster, sizeof(cluster), err)) ||
		    (o->model && (rc = mt_model_load(o->model, &g->m, err))))
			return rc;
		mt_advice_eval_job(&j, &cfg, g->layout.n ? &g->layout : NULL, &g->job);
	} else {
		if (o->cand)
			return mt_error_set(err, MT_EUSAGE, "--candidate: %s is a job, not an advice "
					    "file", o->against);
		g->src = calloc(1, sizeof(*g->src));
		g->mj = calloc(1, sizeof(*g->mj));
		if (!g->src || !g->mj)
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		if ((rc = mt_job_load(o->against, o->model, o->gpus, 256u << 20, &g->buf, &len,
				      g->src, g->mj, err)))
			return rc;
		g->m = g->mj->model;
		g->job = g->mj->job;
		cfg = g->mj->cfg;
	}
	if ((rc = mt_cluster_load(o->cluster ? o->cluster : cluster[0] ? cluster : "dgx-h100",
				  &g->c, err)))
		return rc;
	if (g->mj && (rc = mt_job_cluster(g->mj, g->src, g->c, o->cluster ? o->cluster : "dgx-h100",
					  err)))
		return rc;
	g->e.cfg = cfg;
	if ((rc = mt_evaluate(&g->m, g->c, &g->job, NULL, &cfg, &g->e, err)))
		mt_error_prefix(err, "%s: the configuration cannot be timed: ", o->against);
	return rc;
}

static void against_free(struct against *g)
{
	mt_cluster_free(g->c);
	free(g->src);
	free(g->mj);
	free(g->buf);
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

/* A trace with no GPU event at all, none left out either. */
static int idle_process(const struct mt_trace *t)
{
	return t->ngpu == 0 && t->bad_time + t->bad_order + t->bad_long + t->over_cap == 0;
}

/* The traces and outputs of the command line checked before anything is read. */
static int analyze_check_args(int argc, char **argv, int first, const struct aopts *o)
{
	const char *outs[2] = { o->json, o->facts };
	int n = argc - first, i, j, rc;

	if (n < 1)
		return cli_usage_error("analyze", "give at least one trace file");
	for (i = first; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("analyze",
					       "options go before the traces: '%s'", argv[i]);
	if (n > 1024)
		return cli_usage_error("analyze", "at most 1024 traces");
	for (i = first; i < argc; i++)
		for (j = first; j < i; j++)
			if (mt_same_file(argv[j], argv[i]))
				return cli_usage_error("analyze", "the trace '%s' is given "
						       "twice (also as '%s'): each rank once",
						       argv[i], argv[j]);
	if ((rc = cli_check_io("analyze", (const char *const *)argv + first, n, outs, 2)) ||
	    (rc = cli_check_io("analyze", o->rules, o->nrules, outs, 2)) ||
	    (rc = cli_check_io("analyze", &o->cluster, 1, outs, 2)) ||
	    (rc = cli_check_io("analyze", &o->against, 1, outs, 2)))
		return rc;
	return 0;
}

/* The statistics of the n traces into stats[], *kept of them (idle launchers left out). */
static int analyze_read_traces(char **paths, int n, const struct mt_trace_opts *to,
			       const struct mt_analyze_opts *ao, struct mt_rank_stats *stats,
			       int *kept, struct mt_error *err)
{
	int i, m, skipped = 0, rc;

	/* One trace at a time: only its statistics are kept.  A process that
	 * put nothing on a GPU (the launcher: torchrun imports PyTorch, so the
	 * tracer starts in it too) is left out with a note when other traces
	 * have GPU work; alone, it is the error it always was. */
	for (i = 0, m = 0; i < n; i++) {
		struct mt_trace *t = NULL;
		if ((rc = mt_trace_read(paths[i], to, &t, err)))
			return rc;
		if (n > 1 && idle_process(t)) {
			fprintf(stderr, "megatune analyze: note: %s: left out, a process that put "
				"no work on a GPU (a launcher?)\n", paths[i]);
			mt_trace_free(t);
			skipped++;
			if (skipped < n)
				continue;
			return mt_error_set(err, MT_EINVAL, "%s: no GPU kernel, memcpy or memset "
					    "events in any of the %d traces", paths[0], n);
		}
		rc = mt_analyze_rank(t, m, ao, &stats[m], err);
		mt_trace_free(t);
		if (rc)
			return rc;
		m++;
	}
	*kept = m;
	return 0;
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
	struct against *g = NULL;
	struct mt_against ag;
	int first = 0, n, i, rc;

	memset(&ex, 0, sizeof(ex));
	memset(&os, 0, sizeof(os));
	if ((rc = analyze_parse(argc, argv, &o, &first)) >= 0)
		return rc;
	if ((rc = analyze_check_args(argc, argv, first, &o)))
		return rc;
	n = argc - first;
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
	if ((rc = analyze_read_traces(argv + first, n, &to, &o.ao, stats, &n, &err)))
		goto fail;
	warn_repeated_ranks(stats, n);
	if (o.against) {
		if (!(g = calloc(1, sizeof(*g)))) {
			rc = mt_error_set(&err, MT_ENOMEM, "out of memory");
			goto fail;
		}
		if ((rc = against_load(&o, g, &err)) ||
		    (rc = mt_against_compare(&g->m, g->c, &g->job, &g->e, stats, n, o.layers, &ag,
					     &err)))
			goto fail;
		mt_config_label(ag.config, sizeof(ag.config), &g->m, &g->e.cfg);
	}
	mt_analyze_job(stats, n, &job);
	mt_analyze_facts(stats, n, &job, facts, given);
	if (rs && mt_rules_on_facts(rs, facts, given, cl, &ex, &i)) {
		rc = mt_error_set(&err, MT_ENOMEM, "out of memory");
		goto fail;
	}
	mt_outset_begin(&os);
	if (o.json) {
		mt_analysis_json(&sb, stats, n, &job, rs ? &ex : NULL, facts, given, &o.ao,
				 g ? &ag : NULL);
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
		if (g)
			mt_against_text(&sb, &ag);
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
	if (g)
		against_free(g);
	free(g);
	free(stats);
	free(facts);
	return rc;
}
