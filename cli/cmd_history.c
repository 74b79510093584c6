/* SPDX-License-Identifier: MIT */
/* history: store runs for `megatune compare --history`, list, show, prune. */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compare/history.h"
#include "../lib/num.h"
#include "cli.h"

static const char history_head[] =
	"usage: megatune history add FILE... --db DB [--label TEXT]\n"
	"       megatune history list --db DB [--kind KIND] [--last N]\n"
	"       megatune history show RUN --db DB\n"
	"       megatune history prune --db DB (--keep N | RUN...)\n"
	"\n"
	"A history of runs in one SQLite file, for `megatune compare --history DB\n"
	"CURRENT` (a rolling baseline).  `add` stores each FILE (any document\n"
	"`megatune compare` reads: probe results, a profile, nccl-tests output...)\n"
	"with its metrics and raw samples, the host, GPU, driver, CUDA and NCCL\n"
	"versions the document gives, the megatune version and the label (e.g. a\n"
	"commit).  `list` prints the runs, oldest first; `show` a run's metrics;\n"
	"`prune` deletes the given runs, or keeps the newest N of each kind, host\n"
	"and GPU.  The file is created by `add`; two processes may add at once.  A\n"
	"document the history holds already (same kind, host, GPU, time and every\n"
	"metric's value) is not added twice: `add` names its run and goes on.\n";

static const char history_tail[] =
	"exit codes: 0 success; 2 bad usage, an unreadable document, or a file that\n"
	"is not a megatune history (or of a newer schema version).\n";

struct hopts {
	const char *db, *label, *kind;
	int last, keep;
};

#define HO(field) offsetof(struct hopts, field)

static const struct cli_opt history_opts[] = {
	CLI_SEC("options"),
	{ .type = CLI_STR, .name = "db", .meta = "DB", .off = HO(db), .help = "the history file" },
	{ .type = CLI_STR, .name = "label", .meta = "TEXT", .off = HO(label),
	  .help = "a label for the added runs (a commit, a build)" },
	{ .type = CLI_STR, .name = "kind", .meta = "KIND", .off = HO(kind),
	  .help = "list only runs of this kind (result, profile, analysis,\n"
		  "advice, nccl-tests, nvbandwidth)" },
	{ .type = CLI_INT, .name = "last", .meta = "N", .off = HO(last), .lo = 1, .hi = INT_MAX,
	  .want = "a number >= 1", .help = "list only the newest N runs" },
	{ .type = CLI_INT, .name = "keep", .meta = "N", .off = HO(keep), .lo = 1, .hi = INT_MAX,
	  .want = "a number >= 1",
	  .help = "prune all but the newest N runs of each kind, host\nand GPU" },
	CLI_OPT_END
};

const struct cli_spec cli_spec_history = {
	.cmd = "history", .head = history_head, .opts = history_opts, .tail = history_tail,
};

/* argv[0] is the subcommand; -1 to go on with the operands at argv[*first..],
 * or the exit code. */
static int history_parse(int argc, char **argv, struct hopts *o, int *first)
{
	int rc;

	memset(o, 0, sizeof(*o));
	if ((rc = cli_parse(&cli_spec_history, argc, argv, o, first)) >= 0)
		return rc;
	if (!o->db)
		return cli_usage_error("history", "missing --db DB (the history file)");
	return -1;
}

/* A run id operand: a decimal integer >= 1. */
static int run_id(const char *s, long long *id)
{
	return mt_parse_int(s, 1, LLONG_MAX, id);
}

static int history_add(struct mt_history *h, const struct hopts *o, int first, int argc, char **argv,
	       struct mt_error *err)
{
	int i, rc = MT_OK;

	if (first >= argc)
		return mt_error_set(err, MT_EUSAGE, "history add: expected FILE...");
	for (i = first; i < argc && !rc; i++) {
		struct mt_cm_set s;
		long long id = 0, dup = 0;

		if (!(rc = mt_cm_load(argv[i], &s, err)) &&
		    !(rc = mt_history_add(h, argv[i], o->label, &s, &id, &dup, err))) {
			if (dup)
				printf("not added: %s is run %lld already (the same %s, host, GPU, "
				       "time and all %d metrics)\n", argv[i], dup, s.kind, s.n);
			else
				printf("added run %lld: %s, %d metrics, from %s\n", id, s.kind, s.n,
				       argv[i]);
		}
		mt_cm_set_free(&s);
	}
	return rc;
}

static int list(struct mt_history *h, const struct hopts *o, struct mt_error *err)
{
	struct mt_hist_run *r = NULL;
	int n = 0, i, rc;

	if ((rc = mt_history_list(h, o->kind, NULL, NULL, o->last, &r, &n, err)))
		return rc;
	printf("%6s  %-20s  %-11s  %7s  %-20s  %-24s  %s\n", "run", "added", "kind", "metrics",
	       "host", "GPU", "label");
	for (i = 0; i < n; i++)
		printf("%6lld  %-20s  %-11s  %7d  %-20.20s  %-24.24s  %s\n", r[i].id, r[i].added,
		       r[i].kind, r[i].nmetrics, r[i].env.host, r[i].env.gpu, r[i].label);
	if (!n)
		printf("(no runs)\n");
	free(r);
	return MT_OK;
}

static int show(struct mt_history *h, int first, int argc, char **argv, struct mt_error *err)
{
	struct mt_hist_run *r = NULL, *x = NULL;
	struct mt_cm_set s;
	long long id;
	int n = 0, i, rc;

	if (argc - first != 1)
		return mt_error_set(err, MT_EUSAGE, "history show: expected one RUN id");
	if (run_id(argv[first], &id))
		return mt_error_set(err, MT_EUSAGE, "history show: '%s' is not a run id",
				    argv[first]);
	if ((rc = mt_history_list(h, NULL, NULL, NULL, 0, &r, &n, err)))
		return rc;
	for (i = 0; i < n; i++)
		if (r[i].id == id)
			x = &r[i];
	if (!x) {
		free(r);
		return mt_error_set(err, MT_EINVAL, "history show: no run %lld", id);
	}
	printf("run %lld, added %s: %s from %s\nlabel: %s\nhost: %s  GPU: %s  driver: %s  CUDA: %s"
	       "  NCCL: %s  megatune: %s  created: %s\n\n", x->id, x->added, x->kind, x->source,
	       x->label, x->env.host, x->env.gpu, x->env.driver, x->env.cuda, x->env.nccl,
	       x->env.megatune, x->env.created);
	free(r);
	if ((rc = mt_history_metrics(h, id, &s, err)))
		return rc;
	printf("%14s  %-9s  %7s  %5s  %s\n", "value", "unit", "cv%", "n", "metric");
	for (i = 0; i < s.n; i++) {
		printf("%14.6g  %-9s  ", s.m[i].value, s.m[i].unit);
		if (isfinite(s.m[i].cv))
			printf("%7.2f  ", s.m[i].cv * 100);
		else
			printf("%7s  ", "-");
		printf("%5d  %s\n", s.m[i].nsamples ? s.m[i].nsamples : s.m[i].n, s.m[i].name);
	}
	mt_cm_set_free(&s);
	return MT_OK;
}

static int prune(struct mt_history *h, const struct hopts *o, int first, int argc, char **argv,
		 struct mt_error *err)
{
	long long *ids = NULL;
	int n = argc - first, i, removed = 0, rc;

	if ((o->keep > 0) == (n > 0))
		return mt_error_set(err, MT_EUSAGE, "history prune: give --keep N or run ids");
	if (n && !(ids = calloc((size_t)n, sizeof(*ids))))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		if (run_id(argv[first + i], &ids[i])) {
			rc = mt_error_set(err, MT_EUSAGE, "history prune: '%s' is not a run id",
					  argv[first + i]);
			free(ids);
			return rc;
		}
	}
	rc = mt_history_prune(h, ids, n, o->keep, &removed, err);
	free(ids);
	if (!rc)
		printf("removed %d runs from %s\n", removed, o->db);
	return rc;
}

int cmd_history(int argc, char **argv)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_history *h = NULL;
	struct hopts o;
	const char *sub;
	int rc, first = 0;

	if (argc < 2) {
		cli_help(stderr, &cli_spec_history);
		return 2;
	}
	if ((rc = cli_help_arg(&cli_spec_history, argv[1])) >= 0)
		return rc;
	sub = argv[1];
	if (strcmp(sub, "add") && strcmp(sub, "list") && strcmp(sub, "show") && strcmp(sub, "prune"))
		return cli_usage_error("history", "unknown subcommand '%s' (add, list, show, prune)",
				       sub);
	if ((rc = history_parse(argc - 1, argv + 1, &o, &first)) >= 0)
		return rc;
	first++; /* history_parse() counted from argv + 1 */
	if ((rc = mt_history_open(o.db, !strcmp(sub, "add"), &h, &err)))
		return cli_fail("history", &err);
	if (!strcmp(sub, "add"))
		rc = history_add(h, &o, first, argc, argv, &err);
	else if (!strcmp(sub, "list"))
		rc = first < argc ? mt_error_set(&err, MT_EUSAGE, "history list: unexpected '%s'",
						 argv[first]) : list(h, &o, &err);
	else if (!strcmp(sub, "show"))
		rc = show(h, first, argc, argv, &err);
	else
		rc = prune(h, &o, first, argc, argv, &err);
	mt_history_close(h);
	if (rc == MT_EUSAGE) {
		fprintf(stderr, "megatune history: error: %s\n", err.msg);
		cli_usage_hint("history");
		return 2;
	}
	return rc ? cli_fail("history", &err) : 0;
}
