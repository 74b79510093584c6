/* SPDX-License-Identifier: MIT */
/* calibrate: run the probes, append every result as it comes, write the
 * cluster profile, name the outliers (the pass itself: probes/calib_pass.h). */
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/fsutil.h"
#include "../lib/num.h"
#include "../lib/text.h"
#include "../probes/calib_pass.h"
#include "../probes/calibrate.h"
#include "../probes/gpu.h"
#include "../probes/mpi.h"
#include "../probes/probe.h"
#include "calibrate_fit.h"
#include "calibrate_launch.h"
#include "cli.h"
#include "probe_opts.h"

static const char calibrate_head[] =
	"usage: megatune calibrate -o PROFILE.json [--probes LIST] [--quick|--full]\n"
	"                          [--backend cuda|cpu] [--resume|--fresh] [--margin PCT]\n"
	"                          [--results FILE] [--name NAME] [--rounds N]\n"
	"                          [--launcher CMD] [probe options]\n"
	"       mpirun -np N megatune calibrate ...   (or srun: one rank per GPU)\n"
	CALIBRATE_FIT_USAGE
	"\n"
	"Runs the probes (default: topology,gemm,attention,collective,dispatch,offload,\n"
	"host), shows progress, and writes a megatune.profile/1 that `megatune advise\n"
	"--cluster PROFILE.json` reads.  Every result is appended to the results file\n"
	"(PROFILE.json.results.jsonl, megatune.result/1) as it is measured, so an\n"
	"interrupted pass keeps what it measured and --resume continues it.  A GPU or\n"
	"link more than --margin percent below the median of its peers is named on\n"
	"screen and in the profile's `outliers`.\n";

static const char calibrate_tail[] =
	CALIBRATE_FIT_HELP
	"\n"
	"exit codes: 0 success; 1 a result failed verification (the profile is still\n"
	"written from the verified ones); 2 bad usage, a bad results file, or a GPU\n"
	"library missing on a machine with an NVIDIA GPU (named, with where it was\n"
	"looked for: megatune probe --help); 77 the backend does not apply here (no\n"
	"GPU: use --backend cpu); 130 interrupted (--resume continues).\n";

static volatile sig_atomic_t g_stop;

static void calibrate_on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void c_emit(struct mt_sink *s, const struct mt_measurement *m)
{
	mt_calib_keep((struct mt_calib_pass *)s, m);
	if (m->verified < 0)
		fprintf(stderr, "  %s %s: %s\n", m->probe->name, m->c.label, m->note);
}

static void c_progress(struct mt_sink *s, const struct mt_probe *p, int done, int total,
		       const char *label)
{
	struct mt_calib_pass *cs = (struct mt_calib_pass *)s;

	if (!isatty(2) && done < total)
		return;
	fprintf(stderr, "\r%-11s [%3d/%3d] %6.1f s  %-40.40s%s", p->name, done, total,
		mt_now() - cs->t0, label, done == total ? "\n" : "");
	fflush(stderr);
}

/* What the pass tells as it goes: a note after the command's name, a line as
 * it is. */
static void c_say(struct mt_calib_pass *p, int kind, const char *msg)
{
	(void)p;
	if (kind == MT_CALIB_NOTE)
		fprintf(stderr, "megatune calibrate: %s\n", msg);
	else
		fprintf(stderr, "%s\n", msg);
}

/* An error of the pass: a refusal as it is, anything else through cli_fail. */
static int c_fail(const struct mt_calib_pass *p, const struct mt_error *err)
{
	if (!p->refused)
		return cli_fail("calibrate", err);
	fprintf(stderr, "megatune calibrate: error: %s\n", err->msg);
	return 2;
}

/* A profile name: UTF-8 without control characters (it is printed). */
static int name_ok(const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	return *s && mt_utf8_valid(s, (size_t)(p - s));
}

/* The options of one pass, and calibrate's own. */
struct calib_args {
	struct mt_calib_opts c;
	const char *launcher;
	char resbuf[4096];
};

static int calibrate_opt_name(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	if (!name_ok(arg))
		return cli_opt_bad(cmd, opt->name, "text without control characters, in UTF-8",
				   arg);
	((struct calib_args *)args)->c.name = arg;
	return 0;
}

static int opt_margin(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	double v;

	if (mt_parse_num_range(arg, 0, 100, &v) || !(v > 0) || v >= 100)
		return cli_opt_bad(cmd, opt->name, "a percentage between 0 and 100", arg);
	((struct calib_args *)args)->c.margin = v;
	return 0;
}

static int opt_launcher(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	if (!*arg || strspn(arg, " \t") == strlen(arg))
		return cli_opt_bad(cmd, opt->name, "a command (e.g. 'mpirun -np 2')", arg);
	((struct calib_args *)args)->launcher = arg;
	return 0;
}

#define CA(field) offsetof(struct calib_args, field)

static const struct cli_opt calibrate_opts[] = {
	CLI_SEC("options"),
	{ .type = CLI_STR, .name = "output", .short_name = 'o', .meta = "FILE", .off = CA(c.out),
	  .help = "the profile to write (written whole at the end, never\n"
		  "over a good file on failure)" },
	{ .type = CLI_STR, .name = "probes", .meta = "LIST", .off = CA(c.probes),
	  .help = "which probes, comma-separated" },
	{ .type = CLI_FLAG, .name = "resume", .off = CA(c.resume),
	  .help = "continue an interrupted pass from its results file" },
	{ .type = CLI_FLAG, .name = "fresh", .off = CA(c.fresh),
	  .help = "start over, replacing an earlier results file" },
	{ .type = CLI_FLAG, .name = "repair", .off = CA(c.repair),
	  .help = "with --resume: a damaged results file (a record cut or\n"
		  "zeroed in the middle) is rewritten with its valid\n"
		  "records, naming what was dropped" },
	{ .type = CLI_STR, .name = "results", .meta = "FILE", .off = CA(c.results),
	  .help = "the results file (default PROFILE.json.results.jsonl)" },
	{ .type = CLI_FN, .name = "margin", .meta = "PCT", .fn = opt_margin, .has_arg = 1,
	  .help = "outlier margin below the median of peers (default 10)" },
	{ .type = CLI_FN, .name = "name", .meta = "NAME", .fn = calibrate_opt_name, .has_arg = 1,
	  .help = "the profile's name (default: calibrated-<host>)" },
	{ .type = CLI_INT, .name = "rounds", .meta = "N", .off = CA(c.rounds), .lo = 1, .hi = 100,
	  .want = "a whole number from 1 to 100",
	  .help = "run the whole pass N times (default 1); each record\n"
		  "keeps its round, the profile takes the median round,\n"
		  "and `megatune compare` tests on the rounds' spread,\n"
		  "which holds the run-to-run noise (8 or more for a CI\n"
		  "baseline: docs/CI.md)" },
	{ .type = CLI_FN, .name = "launcher", .meta = "CMD", .fn = opt_launcher, .has_arg = 1,
	  .help = "start each round as a launch of its own: CMD (e.g.\n"
		  "'mpirun -np 2', 'srun -N 2 --ntasks-per-node 8')\n"
		  "followed by this calibrate command, run by /bin/sh;\n"
		  "the rounds' spread then also holds what a launch keeps\n"
		  "for its life (shared-memory segments, NCCL's rings);\n"
		  "run it outside mpirun/srun" },
	{ .type = CLI_INT, .name = "launched-round", .meta = "K", .off = CA(c.lround), .lo = 1,
	  .hi = 100, .want = "a whole number from 1 to 100",
	  .help = "(internal) the one round K this launch of --launcher\nruns" },
	CLI_SEC("probe options"),
	{ .type = CLI_GROUP, .off = CA(c.o), .group = probe_opts_group },
	CLI_OPT_END
};

const struct cli_spec cli_spec_calibrate = {
	.cmd = "calibrate", .head = calibrate_head, .opts = calibrate_opts, .tail = calibrate_tail,
};

/* 0, or the exit code after printing the error (or the help: -1). */
static int calibrate_parse_args(int argc, char **argv, struct calib_args *a)
{
	char list[256], names[256], *tok, *save;
	int rc, first;

	memset(a, 0, sizeof(*a));
	a->c.margin = 10;
	a->c.rounds = 1;
	probe_opts_init(&a->c.o);
	if ((rc = cli_parse(&cli_spec_calibrate, argc, argv, a, &first)) >= 0)
		return rc ? rc : -1;
	a->c.o.rounds = a->c.rounds > 1 ? a->c.rounds : 0;
	if (first < argc) {
		fprintf(stderr, "megatune calibrate: error: unexpected argument '%s'\n",
			argv[first]);
		return 2;
	}
	if (!a->c.out) {
		fprintf(stderr, "megatune calibrate: error: -o PROFILE.json is required\n");
		return 2;
	}
	if (a->c.repair && !a->c.resume) {
		fprintf(stderr, "megatune calibrate: error: --repair goes with --resume\n");
		return 2;
	}
	if (a->c.out && a->c.results && mt_same_file(a->c.results, a->c.out)) {
		fprintf(stderr, "megatune calibrate: error: -o '%s' and --results '%s' are the "
			"same file: give each its own path\n", a->c.out, a->c.results);
		return 2;
	}
	if (a->c.lround > a->c.rounds) {
		fprintf(stderr, "megatune calibrate: error: --launched-round %d: expected at most "
			"--rounds (%d)\n", a->c.lround, a->c.rounds);
		return 2;
	}
	if (a->c.lround > 1) { /* a later round adds to the file the first one started */
		a->c.resume = 1;
		a->c.fresh = a->c.repair = 0;
	}
	if (a->c.resume && a->c.fresh) {
		fprintf(stderr, "megatune calibrate: error: --resume and --fresh exclude each other\n");
		return 2;
	}
	snprintf(list, sizeof(list), "%s", a->c.probes ? a->c.probes : "");
	mt_probe_names(names, sizeof(names), ", ");
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!mt_probe_find(tok)) {
			fprintf(stderr, "megatune calibrate: error: --probes: unknown probe '%s' "
				"(expected %s)\n", tok, names);
			return 2;
		}
	if (!a->c.results) {
		snprintf(a->resbuf, sizeof(a->resbuf), "%s.results.jsonl", a->c.out);
		a->c.results = a->resbuf;
	}
	return 0;
}

/* Rank 0: the outliers on screen, then the profile from the whole results
 * file.  0, 1 (some result failed) or the exit code. */
static int calibrate_write_profile(const struct calib_args *a, const struct mt_world *w,
				   const struct mt_calib_env *e, int failed)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_outlier outl[32];
	cJSON *records = NULL, *doc = NULL;
	int n, k, code = 0;

	if (mt_calib_records(&a->c, &records, &failed, &err))
		return cli_fail("calibrate", &err);
	n = mt_find_outliers(records, a->c.margin, outl, 32);
	for (k = 0; k < n && k < 32; k++)
		fprintf(stderr, "outlier: %s: %s %.4g, %.1f%% below the median %.4g of its "
			"peers\n", outl[k].what, outl[k].metric, outl[k].value,
			outl[k].below_pct, outl[k].median);
	if (n > 32)
		fprintf(stderr, "outlier: ... and %d more (see %s)\n", n - 32, a->c.out);
	if (mt_calib_write(&a->c, w, e, records, &doc, &err)) {
		code = cli_fail("calibrate", &err);
	} else {
		cli_profile_warnings("calibrate", doc, a->c.out);
		fprintf(stderr, "wrote %s (%d results, %d outlier%s); results in %s\n", a->c.out,
			cJSON_GetArraySize(records), n, n == 1 ? "" : "s", a->c.results);
		if (failed) {
			fprintf(stderr, "megatune calibrate: %d result%s failed verification or "
				"errored; the profile uses the verified ones\n", failed,
				failed == 1 ? "" : "s");
			code = 1;
		}
	}
	cJSON_Delete(records);
	cJSON_Delete(doc);
	return code;
}

/* The backend, then hosts, GPU topology and versions; 0 or the exit code. */
static int gather_env(const struct calib_args *a, const struct mt_world *w,
		      struct mt_calib_env *e)
{
	struct mt_error err = MT_ERROR_INIT;

	/* the backend must exist at all */
	if (a->c.o.backend == MT_BACKEND_CUDA && mt_cuda_load(NULL, NULL, &err)) {
		if (err.code != MT_EUNSUPPORTED) /* a GPU is there: the library must be too */
			return w->rank == 0 ? cli_fail("calibrate", &err) : mt_exit_code(err.code);
		if (w->rank == 0)
			fprintf(stderr, "megatune calibrate: not applicable here: %s\n(--backend cpu "
				"calibrates with the CPU backends)\n", err.msg);
		return 77;
	}
	if (mt_calib_env_gather(e, &a->c, w, &err))
		return cli_fail("calibrate", &err);
	return 0;
}

int cmd_calibrate(int argc, char **argv)
{
	struct calib_args a;
	struct mt_calib_env e;
	struct mt_world w;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_calib_pass cs;
	cJSON *head = NULL, *records = NULL;
	int full_argc = argc, code = 0, failed = 0, stop_after = -1;

	if (calibrate_fit_wanted(argc, argv))
		return calibrate_fit_main(argc, argv);
	char **full_argv = argv;
	const char *env;

	if ((code = calibrate_parse_args(argc, argv, &a)))
		return code < 0 ? 0 : code;
	if (a.launcher && !a.c.lround)
		return calibrate_launch(a.launcher, &a.c, argc, argv);
	if ((env = getenv("MEGATUNE_CALIBRATE_STOP_AFTER"))) {
		long long v;

		/* tests only: a count of results; anything else is ignored */
		if (!mt_parse_int(env, 0, INT_MAX, &v))
			stop_after = (int)v;
	}
	if (mt_world_init(&w, &full_argc, &full_argv, &err))
		return cli_fail("calibrate", &err);
	mt_calib_pass_init(&cs, &g_stop);
	cs.stop_after = stop_after;
	memset(&e, 0, sizeof(e));
	cs.s.emit = c_emit;
	cs.s.progress = c_progress;
	cs.say = c_say;
	signal(SIGINT, calibrate_on_signal);
	signal(SIGTERM, calibrate_on_signal);

	if (w.rank == 0 && mt_calib_open(&cs, &a.c, argc, argv, &w, &head, &records, &err))
		code = c_fail(&cs, &err);
	if (w.mpi)
		mt_world_bcast(&w, &code, (int)sizeof(code));
	if (code)
		goto done;
	if ((code = gather_env(&a, &w, &e))) {
		/* nothing measured (no GPU, or its library missing): a new results file holding
		 * only its head would stop the next pass ("exists"), so it goes */
		if (w.rank == 0 && !a.c.resume && cs.results.fd >= 0) {
			mt_stream_close(&cs.results, NULL);
			unlink(a.c.results);
		}
		goto done;
	}
	if (w.rank == 0)
		fprintf(stderr, "calibrating %d host%s, %d rank%s, backend %s, %s sweep\n", w.nnodes,
			w.nnodes == 1 ? "" : "s", w.size, w.size == 1 ? "" : "s",
			a.c.o.backend == MT_BACKEND_CUDA ? "cuda" : "cpu",
			a.c.o.depth == MT_DEPTH_QUICK ? "quick" : a.c.o.depth == MT_DEPTH_FULL ? "full" :
			a.c.o.depth == MT_DEPTH_SMOKE ? "smoke" : "normal");
	failed = mt_calib_rounds(&cs, &a.c, &w);
	if (cs.nolib) {
		if (w.rank == 0)
			fprintf(stderr, "stopped: the results measured before are kept in %s; fix the "
				"library and run the same command with --resume\n", a.c.results);
		code = 2;
		goto done;
	}
	if (cs.write_failed) {
		if (w.rank == 0)
			fprintf(stderr, "\nmegatune calibrate: error: %s\nstopped: %d result%s "
				"written to %s before the failure are kept; free the space and run "
				"the same command with --resume\n", cs.werr.msg, cs.written,
				cs.written == 1 ? "" : "s", a.c.results);
		code = mt_exit_code(cs.werr.code);
		goto done;
	}
	if (g_stop) {
		if (w.rank == 0)
			calibrate_say_interrupted(a.c.results, 0);
		code = 130;
		goto done;
	}
	cs.done = NULL;
	if (w.rank == 0 && a.c.lround && a.c.lround < a.c.rounds)
		code = 0; /* the last round's launch writes the profile, counting the
			   * failed results of every round */
	else if (w.rank == 0)
		code = calibrate_write_profile(&a, &w, &e, failed);
	if (w.mpi)
		mt_world_bcast(&w, &code, (int)sizeof(code));
done:
	if (w.rank == 0 && mt_stream_close(&cs.results, &err) && !code)
		code = cli_fail("calibrate", &err);
	cJSON_Delete(head);
	cJSON_Delete(records);
	mt_calib_env_free(&e);
	mt_world_finalize(&w);
	return code;
}
