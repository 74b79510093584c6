/* SPDX-License-Identifier: MIT */
/* history: store runs for `megatune compare --history`, list, show, prune. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compare/history.h"
#include "cli.h"

static const char history_usage[] =
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
	"metric's value) is not added twice: `add` names its run and goes on.\n"
	"\n"
	"  --db DB         the history file\n"
	"  --label TEXT    a label for the added runs (a commit, a build)\n"
	"  --kind KIND     list only runs of this kind (result, profile, analysis,\n"
	"                  advice, nccl-tests, nvbandwidth)\n"
	"  --last N        list only the newest N runs\n"
	"  --keep N        prune all but the newest N runs of each kind, host and GPU\n"
	"\n"
	"exit codes: 0 success; 2 bad usage, an unreadable document, or a file that\n"
	"is not a megatune history (or of a newer schema version).\n";

struct hopts {
	const char *db, *label, *kind;
	int last, keep;
};

static int parse(int argc, char **argv, struct hopts *o)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "label", required_argument, NULL, 'l' },
		{ "kind", required_argument, NULL, 'k' },
		{ "last", required_argument, NULL, 'n' },
		{ "keep", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	char *end;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			fputs(history_usage, stdout);
			return 0;
		case 'd': o->db = optarg; break;
		case 'l': o->label = optarg; break;
		case 'k': o->kind = optarg; break;
		case 'n':
		case 'K':
			*(ch == 'n' ? &o->last : &o->keep) = (int)strtol(optarg, &end, 10);
			if (*end || (ch == 'n' ? o->last : o->keep) < 1)
				return cli_usage_error("history", "%s '%s': expected a number >= 1",
						       ch == 'n' ? "--last" : "--keep", optarg);
			break;
		default:
			return cli_usage_error("history", "%s '%s'", optopt ? "option needs a value:"
					       : "unknown option", argv[optind - 1]);
		}
	}
	if (!o->db)
		return cli_usage_error("history", "missing --db DB (the history file)");
	return -1;
}

static int add(struct mt_history *h, const struct hopts *o, int argc, char **argv,
	       struct mt_error *err)
{
	int i, rc = MT_OK;

	if (optind >= argc)
		return mt_error_set(err, MT_EUSAGE, "history add: expected FILE...");
	for (i = optind; i < argc && !rc; i++) {
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

static int show(struct mt_history *h, int argc, char **argv, struct mt_error *err)
{
	struct mt_hist_run *r = NULL, *x = NULL;
	struct mt_cm_set s;
	long long id;
	char *end;
	int n = 0, i, rc;

	if (argc - optind != 1)
		return mt_error_set(err, MT_EUSAGE, "history show: expected one RUN id");
	id = strtoll(argv[optind], &end, 10);
	if (*end || id < 1)
		return mt_error_set(err, MT_EUSAGE, "history show: '%s' is not a run id",
				    argv[optind]);
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

static int prune(struct mt_history *h, const struct hopts *o, int argc, char **argv,
		 struct mt_error *err)
{
	long long *ids = NULL;
	int n = argc - optind, i, removed = 0, rc;
	char *end;

	if ((o->keep > 0) == (n > 0))
		return mt_error_set(err, MT_EUSAGE, "history prune: give --keep N or run ids");
	if (n && !(ids = calloc((size_t)n, sizeof(*ids))))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		ids[i] = strtoll(argv[optind + i], &end, 10);
		if (*end || ids[i] < 1) {
			rc = mt_error_set(err, MT_EUSAGE, "history prune: '%s' is not a run id",
					  argv[optind + i]);
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
	int rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(history_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	sub = argv[1];
	if (strcmp(sub, "add") && strcmp(sub, "list") && strcmp(sub, "show") && strcmp(sub, "prune"))
		return cli_usage_error("history", "unknown subcommand '%s' (add, list, show, prune)",
				       sub);
	if ((rc = parse(argc - 1, argv + 1, &o)) >= 0)
		return rc;
	optind++; /* parse() counted from argv + 1 */
	if ((rc = mt_history_open(o.db, !strcmp(sub, "add"), &h, &err)))
		return cli_fail("history", &err);
	if (!strcmp(sub, "add"))
		rc = add(h, &o, argc, argv, &err);
	else if (!strcmp(sub, "list"))
		rc = optind < argc ? mt_error_set(&err, MT_EUSAGE, "history list: unexpected '%s'",
						  argv[optind]) : list(h, &o, &err);
	else if (!strcmp(sub, "show"))
		rc = show(h, argc, argv, &err);
	else
		rc = prune(h, &o, argc, argv, &err);
	mt_history_close(h);
	if (rc == MT_EUSAGE) {
		fprintf(stderr, "megatune history: error: %s\n", err.msg);
		cli_usage_hint("history");
		return 2;
	}
	return rc ? cli_fail("history", &err) : 0;
}
