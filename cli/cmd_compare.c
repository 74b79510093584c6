/* SPDX-License-Identifier: MIT */
/* compare: a noise-aware verdict of CURRENT against BASELINE or a history. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compare/compare.h"
#include "../compare/history.h"
#include "../lib/fsutil.h"
#include "../lib/num.h"
#include "cli.h"

static const char compare_head[] =
	"usage: megatune compare BASELINE CURRENT [options]\n"
	"       megatune compare --history DB CURRENT [--window N] [options]\n"
	"\n"
	"Compares two documents of the same kind metric by metric, matched by\n"
	"identity (probe, case, rank; collective, ranks, size, placement;\n"
	"configuration), never by position: probe results (megatune.result/1,\n"
	"e.g. PROFILE.json.results.jsonl), profiles (or a bundled profile's name),\n"
	"analyses, advice files, and raw nccl-tests or nvbandwidth output.  Each metric is `regressed`,\n"
	"`improved`, `unchanged` (within the tolerance) or `inconclusive` (beyond\n"
	"the tolerance by no more than its noise band, or not significant: the\n"
	"noise explains it); `regressed` needs the change minus its band beyond\n"
	"the tolerance.  The noise is\n"
	"measured in the data: raw samples (Mann-Whitney U test), a coefficient\n"
	"of variation, the spread nccl-tests shows between its placements, or\n"
	"the spread of the history's runs (docs/FORMATS.md section 14).  CPU\n"
	"GEMM and attention that moved the way the core's canary did (a rank test\n"
	"on its timings) are `inconclusive`: the core itself ran at another speed.\n"
	"A metric of the baseline that CURRENT lacks fails the gate (verdict\n"
	"`fail`; --allow-missing lists it instead), and a results file whose last\n"
	"record is cut short is bad input naming the file and line: a run that\n"
	"crashed does not pass.  With --junit, an error is a failure there too.\n";

static const char compare_tail[] =
	"exit codes: 0 nothing regressed or missing; 1 something regressed or a\n"
	"metric of the baseline is missing; 2 bad usage or bad input (unreadable,\n"
	"a record cut short, another schema, documents of different kinds).\n";

struct copts {
	struct mt_cmp_opts o;
	const char *json, *junit, *markdown, *history, *thresholds;
	int all, quiet, window;
	int match_host, match_gpu;
	int junit_tried; /* the JUnit file was written, or failed to be */
};

/* --tolerance, --confidence: a percentage (a trailing '%' allowed) in [lo, hi]
 * from the entry, into the double at its offset */
static int opt_pct(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	char num[64];
	size_t n = strlen(arg);
	double v;

	if (n && arg[n - 1] == '%')
		n--;
	if (n >= sizeof(num))
		return cli_opt_bad(cmd, opt->name, opt->want, arg);
	memcpy(num, arg, n);
	num[n] = 0;
	if (mt_parse_num_range(num, opt->lo, opt->hi, &v))
		return cli_opt_bad(cmd, opt->name, opt->want, arg);
	*(double *)((char *)args + opt->off) = v;
	return 0;
}

static int opt_match(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	struct copts *c = args;

	c->match_host = !strcmp(arg, "host,gpu") || !strcmp(arg, "gpu,host") ||
			!strcmp(arg, "host");
	c->match_gpu = !strcmp(arg, "host,gpu") || !strcmp(arg, "gpu,host") || !strcmp(arg, "gpu");
	if (!c->match_host && !c->match_gpu && strcmp(arg, "none"))
		return cli_opt_bad(cmd, opt->name, "host,gpu, gpu, host or none", arg);
	return 0;
}

#define CO(field) offsetof(struct copts, field)

static const struct cli_opt compare_opts[] = {
	CLI_SEC("options"),
	{ .type = CLI_FN, .name = "tolerance", .meta = "PCT", .off = CO(o.tolerance_pct),
	  .fn = opt_pct, .has_arg = 1, .lo = 0, .hi = 1e6,
	  .want = "a percentage from 0 to 1000000",
	  .help = "a change smaller than this is `unchanged` (default 5)" },
	{ .type = CLI_STR, .name = "thresholds", .meta = "FILE", .off = CO(thresholds),
	  .help = "per-metric tolerances: lines 'PATTERN PCT' (a glob\n"
		  "on the metric id or name); a line matching no metric\nis an error" },
	{ .type = CLI_FN, .name = "confidence", .meta = "PCT", .off = CO(o.confidence_pct),
	  .fn = opt_pct, .has_arg = 1, .lo = 50, .hi = 99.9999,
	  .want = "a percentage from 50 to 99.9999",
	  .help = "of the noise band and the test (default 99)" },
	{ .type = CLI_STR, .name = "history", .meta = "DB", .off = CO(history),
	  .help = "compare CURRENT against the median of the last N\n"
		  "comparable runs of the history (same kind, host and\n"
		  "GPU; `megatune history add` stores them), and say\n"
		  "where a step change began" },
	{ .type = CLI_INT, .name = "window", .meta = "N", .off = CO(window), .lo = 1, .hi = 100000,
	  .want = "a number of runs from 1 to 100000",
	  .help = "the runs of that baseline (default 10)" },
	{ .type = CLI_FN, .name = "match", .meta = "LIST", .fn = opt_match, .has_arg = 1,
	  .help = "what makes a run comparable besides its kind: host,gpu\n"
		  "(the default), gpu (runners with changing host names),\nhost, or none" },
	{ .type = CLI_STR, .name = "json", .meta = "FILE", .off = CO(json),
	  .help = "the megatune.comparison/1 document ('-': stdout)" },
	{ .type = CLI_STR, .name = "junit", .meta = "FILE", .off = CO(junit),
	  .help = "JUnit XML: one test case per metric, a regression is\n"
		  "a failure with its numbers" },
	{ .type = CLI_STR, .name = "markdown", .meta = "FILE", .off = CO(markdown),
	  .help = "a summary a CI system can post" },
	{ .type = CLI_FLAG, .name = "allow-missing", .off = CO(o.allow_missing),
	  .help = "a metric of the baseline that CURRENT lacks is listed,\n"
		  "not a failure (a probe left out on purpose)" },
	{ .type = CLI_FLAG, .name = "all", .off = CO(all), .help = "list unchanged metrics too" },
	{ .type = CLI_FLAG, .name = "quiet", .short_name = 'q', .off = CO(quiet),
	  .help = "no text verdict" },
	CLI_OPT_END
};

const struct cli_spec cli_spec_compare = {
	.cmd = "compare", .head = compare_head, .opts = compare_opts, .tail = compare_tail,
};

/* -1 to go on with the operands at argv[*first..], or the exit code. */
static int compare_parse(int argc, char **argv, struct copts *c, int *first)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->o.tolerance_pct = MT_CMP_DEFAULT_TOLERANCE;
	c->o.confidence_pct = MT_CMP_DEFAULT_CONFIDENCE;
	c->window = 10;
	c->match_host = c->match_gpu = 1;
	if ((rc = cli_parse(&cli_spec_compare, argc, argv, c, first)) >= 0)
		return rc;
	if (argc - *first != (c->history ? 1 : 2))
		return cli_usage_error("compare", c->history ? "expected one CURRENT document with "
				       "--history" : "expected BASELINE and CURRENT");
	return -1;
}

static int write_out(const char *path, int which, const struct mt_comparison *cmp,
		     struct mt_error *err)
{
	struct sbuf sb = SBUF_INIT;
	int rc;

	if (which == 0)
		mt_comparison_json(&sb, cmp);
	else if (which == 1)
		mt_compare_junit(&sb, cmp);
	else
		mt_compare_markdown(&sb, cmp);
	if (sb.failed) {
		sbuf_release(&sb);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	rc = mt_write_atomic(path, sb.buf, sb.len, err);
	sbuf_release(&sb);
	return rc;
}

static int outputs(struct copts *c, struct mt_comparison *cmp, struct mt_error *err)
{
	int rc;

	/* nothing in common is a mistake (another rank count, another test), not a pass */
	if (!cmp->nmetrics)
		return mt_error_set(err, MT_EINVAL, "%s and %s have no metric in common (%d only in "
				    "the baseline, %d only in the current): nothing to compare",
				    cmp->baseline_file, cmp->current_file, cmp->nonly_baseline,
				    cmp->nonly_current);
	if (c->json && (rc = write_out(c->json, 0, cmp, err)))
		return rc;
	c->junit_tried = c->junit != NULL;
	if ((c->junit && (rc = write_out(c->junit, 1, cmp, err))) ||
	    (c->markdown && (rc = write_out(c->markdown, 2, cmp, err))))
		return rc;
	if (!c->quiet && !(c->json && !strcmp(c->json, "-"))) {
		struct sbuf sb = SBUF_INIT;

		mt_compare_text(&sb, cmp, c->all);
		if (sb.buf)
			fputs(sb.buf, stdout);
		sbuf_release(&sb);
	}
	return MT_OK;
}

/* No comparison (an unreadable or cut document, nothing in common): a CI
 * system reads the JUnit file, so it says why as a failure. */
static void junit_error(const char *path, const char *base, const char *cur,
			const struct mt_error *why)
{
	struct sbuf sb = SBUF_INIT;
	struct mt_error err = MT_ERROR_INIT;

	mt_compare_junit_error(&sb, base, cur, why->msg);
	if (sb.failed)
		mt_error_set(&err, MT_ENOMEM, "out of memory");
	else
		mt_write_atomic(path, sb.buf, sb.len, &err);
	if (err.code)
		cli_fail("compare", &err);
	sbuf_release(&sb);
}

/* The last `window` runs of the history comparable with cur, as sets. */
static int load_history(const struct copts *c, const struct mt_cm_set *cur,
			struct mt_hist_run **runs, struct mt_cm_set **sets, int *n,
			struct mt_error *err)
{
	struct mt_history *h = NULL;
	int rc, i;

	*sets = NULL;
	if ((rc = mt_history_open(c->history, 0, &h, err)) ||
	    (rc = mt_history_list(h, cur->kind, c->match_host ? cur->env.host : NULL,
				  c->match_gpu ? cur->env.gpu : NULL, c->window, runs, n, err))) {
		mt_history_close(h);
		return rc;
	}
	if (*n && !(*sets = calloc((size_t)*n, sizeof(**sets))))
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
	for (i = 0; i < *n && !rc; i++)
		rc = mt_history_metrics(h, (*runs)[i].id, &(*sets)[i], err);
	mt_history_close(h);
	return rc;
}

static int compare_history(struct copts *c, const char *cur_file,
			   const struct mt_cm_set *cur, struct mt_comparison *cmp, struct mt_error *err)
{
	struct mt_hist_run *runs = NULL;
	struct mt_cm_set *sets = NULL;
	long long *ids = NULL;
	const char **labels = NULL;
	char **notes = NULL;
	int n = 0, i, rc;

	if ((rc = load_history(c, cur, &runs, &sets, &n, err)))
		goto out;
	if (!n) {
		rc = mt_error_set(err, MT_EINVAL, "%s: no run of kind %s (host '%s', GPU '%s'; "
				  "--match says which must be equal) to compare %s with: `megatune "
				  "history add` one first", c->history, cur->kind, cur->env.host,
				  cur->env.gpu, cur_file);
		goto out;
	}
	if (!(ids = calloc((size_t)n, sizeof(*ids))) || !(labels = calloc((size_t)n, sizeof(char *)))) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		ids[i] = runs[i].id;
		labels[i] = runs[i].label;
	}
	rc = mt_compare_history(&(struct mt_cmp_hist_in){ sets, ids, labels, n }, cur, &c->o, cmp,
				&notes, err);
	if (!rc) {
		char src[600];

		snprintf(src, sizeof(src), "the median of the last %d comparable runs of %s (runs "
			 "%lld to %lld)", n, c->history, runs[0].id, runs[n - 1].id);
		cmp->source = src;
		cmp->baseline_file = c->history;
		cmp->current_file = cur_file;
		rc = outputs(c, cmp, err);
		cmp->source = NULL;
	}
out:
	for (i = 0; notes && i < cur->n; i++)
		free(notes[i]);
	free(notes);
	for (i = 0; sets && i < n; i++)
		mt_cm_set_free(&sets[i]);
	free(sets);
	free(runs);
	free(ids);
	free(labels);
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	struct copts c;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cm_set base, cur;
	struct mt_thresholds th;
	struct mt_comparison cmp;
	int first = 0, rc = compare_parse(argc, argv, &c, &first), fail;

	if (rc >= 0)
		return rc;
	memset(&base, 0, sizeof(base));
	memset(&cur, 0, sizeof(cur));
	memset(&th, 0, sizeof(th));
	memset(&cmp, 0, sizeof(cmp));
	if (c.thresholds) {
		if ((rc = mt_thresholds_load(c.thresholds, &th, &err)))
			goto out;
		c.o.th = &th;
	}
	if (c.history) {
		if (!(rc = mt_cm_load(argv[first], &cur, &err)))
			rc = compare_history(&c, argv[first], &cur, &cmp, &err);
		goto out;
	}
	if ((rc = mt_cm_load(argv[first], &base, &err)) ||
	    (rc = mt_cm_load(argv[first + 1], &cur, &err)))
		goto out;
	if (strcmp(base.kind, cur.kind)) {
		rc = mt_error_set(&err, MT_EINVAL, "%s is %s, %s is %s: compare documents of one "
				  "kind", argv[first], base.kind, argv[first + 1], cur.kind);
		goto out;
	}
	if (!(rc = mt_compare_sets(&base, &cur, &c.o, &cmp, &err))) {
		char src[1200];

		snprintf(src, sizeof(src), "%s: %s (baseline) against %s (current)", base.kind,
			 argv[first], argv[first + 1]);
		cmp.source = src;
		cmp.baseline_file = argv[first];
		cmp.current_file = argv[first + 1];
		rc = outputs(&c, &cmp, &err);
		cmp.source = NULL;
	}
out:
	fail = cmp.verdict && strcmp(cmp.verdict, "pass");
	mt_compare_free(&cmp);
	mt_cm_set_free(&base);
	mt_cm_set_free(&cur);
	mt_thresholds_free(&th);
	if (rc) {
		rc = cli_fail("compare", &err);
		if (c.junit && !c.junit_tried)
			junit_error(c.junit, c.history ? c.history : argv[first],
				    argv[first + !c.history], &err);
		return rc;
	}
	return fail ? 1 : 0;
}
