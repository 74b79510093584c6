/* SPDX-License-Identifier: MIT */
/* calibrate: run the probes, append every result as it comes, write the
 * cluster profile, name the outliers. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../lib/num.h"
#include "../lib/sbuf.h"
#include "../lib/text.h"
#include "../probes/calibrate.h"
#include "../probes/gpu.h"
#include "../probes/mpi.h"
#include "../probes/probe.h"
#include "../perfmodel/profile.h"
#include "../validate/runner.h"
#include "../probes/topology.h"
#include "calibrate_fit.h"
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
static int g_stop_after = -1; /* tests: stop as if interrupted after N results */

static void calibrate_on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* --launcher: the launch of the round running now, which a signal to this
 * process is passed on to */
static volatile sig_atomic_t g_child;

static void on_launcher_signal(int sig)
{
	g_stop = 1;
	if (g_child > 0)
		kill((pid_t)g_child, sig);
}

/* The line an interrupted pass ends with (round 0: not named). */
static void say_interrupted(const char *results, int round)
{
	char in[32] = "";

	if (round > 0)
		snprintf(in, sizeof(in), " in round %d", round);
	fprintf(stderr, "\ninterrupted%s: the results so far are in %s; run the same command "
		"with --resume to continue\n", in, results);
}

struct csink {
	struct mt_sink s;
	struct mt_stream results; /* locked for the whole pass; fd -1 when closed */
	struct mt_error werr;     /* the first write error on it */
	int emitted, header, written, write_failed;
	const cJSON *done;  /* --resume: records already measured */
	int round;          /* the round being run (0: no rounds) */
	int nolib;          /* a probe's library is missing on this GPU machine: stop, exit 2 */
	double t0;
};

static void c_emit(struct mt_sink *s, const struct mt_measurement *m)
{
	struct csink *cs = (struct csink *)s;
	struct sbuf sb = SBUF_INIT;

	if (!cs->write_failed) {
		mt_result_record_sb(&sb, m);
		if (sb.failed)
			mt_error_set(&cs->werr, MT_ENOMEM, "out of memory");
		if (sb.failed || mt_stream_write(&cs->results, sb.buf, sb.len, &cs->werr)) {
			cs->write_failed = 1;
			g_stop = 1; /* nothing more is measured that could not be kept */
		} else {
			cs->written++;
		}
		sbuf_release(&sb);
	}
	if (m->verified < 0)
		fprintf(stderr, "  %s %s: %s\n", m->probe->name, m->c.label, m->note);
	if (g_stop_after >= 0 && ++cs->emitted >= g_stop_after)
		g_stop = 1;
}

static void c_progress(struct mt_sink *s, const struct mt_probe *p, int done, int total,
		       const char *label)
{
	struct csink *cs = (struct csink *)s;

	if (!isatty(2) && done < total)
		return;
	fprintf(stderr, "\r%-11s [%3d/%3d] %6.1f s  %-40.40s%s", p->name, done, total,
		mt_now() - cs->t0, label, done == total ? "\n" : "");
	fflush(stderr);
}

static void c_skip(const struct mt_probe *p, const char *why)
{
	fprintf(stderr, "%-11s skipped: %s\n", p->name, why);
}

static int skip_case(void *user, const struct mt_probe *p, const struct mt_case *c)
{
	struct csink *cs = user;

	if (g_stop)
		return 1;
	return cs->done && mt_results_has(cs->done, p->name, c->label, cs->round);
}

static int has(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return 1;
		p += n;
	}
	return 0;
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

/* The options of one pass. */
struct calib_args {
	const char *out, *probes, *results, *name, *launcher;
	int resume, fresh, repair, rounds;
	int lround; /* the one round a --launcher launch runs (0: not one) */
	double margin;
	struct mt_probe_opts o;
	char resbuf[4096];
};

static int calibrate_opt_name(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	if (!name_ok(arg))
		return cli_opt_bad(cmd, opt->name, "text without control characters, in UTF-8",
				   arg);
	((struct calib_args *)args)->name = arg;
	return 0;
}

static int opt_margin(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	double v;

	if (mt_parse_num_range(arg, 0, 100, &v) || !(v > 0) || v >= 100)
		return cli_opt_bad(cmd, opt->name, "a percentage between 0 and 100", arg);
	((struct calib_args *)args)->margin = v;
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
	{ .type = CLI_STR, .name = "output", .short_name = 'o', .meta = "FILE", .off = CA(out),
	  .help = "the profile to write (written whole at the end, never\n"
		  "over a good file on failure)" },
	{ .type = CLI_STR, .name = "probes", .meta = "LIST", .off = CA(probes),
	  .help = "which probes, comma-separated" },
	{ .type = CLI_FLAG, .name = "resume", .off = CA(resume),
	  .help = "continue an interrupted pass from its results file" },
	{ .type = CLI_FLAG, .name = "fresh", .off = CA(fresh),
	  .help = "start over, replacing an earlier results file" },
	{ .type = CLI_FLAG, .name = "repair", .off = CA(repair),
	  .help = "with --resume: a damaged results file (a record cut or\n"
		  "zeroed in the middle) is rewritten with its valid\n"
		  "records, naming what was dropped" },
	{ .type = CLI_STR, .name = "results", .meta = "FILE", .off = CA(results),
	  .help = "the results file (default PROFILE.json.results.jsonl)" },
	{ .type = CLI_FN, .name = "margin", .meta = "PCT", .fn = opt_margin, .has_arg = 1,
	  .help = "outlier margin below the median of peers (default 10)" },
	{ .type = CLI_FN, .name = "name", .meta = "NAME", .fn = calibrate_opt_name, .has_arg = 1,
	  .help = "the profile's name (default: calibrated-<host>)" },
	{ .type = CLI_INT, .name = "rounds", .meta = "N", .off = CA(rounds), .lo = 1, .hi = 100,
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
	{ .type = CLI_INT, .name = "launched-round", .meta = "K", .off = CA(lround), .lo = 1,
	  .hi = 100, .want = "a whole number from 1 to 100",
	  .help = "(internal) the one round K this launch of --launcher\nruns" },
	CLI_SEC("probe options"),
	{ .type = CLI_GROUP, .off = CA(o), .group = probe_opts_group },
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
	a->margin = 10;
	a->rounds = 1;
	probe_opts_init(&a->o);
	if ((rc = cli_parse(&cli_spec_calibrate, argc, argv, a, &first)) >= 0)
		return rc ? rc : -1;
	a->o.rounds = a->rounds > 1 ? a->rounds : 0;
	if (first < argc) {
		fprintf(stderr, "megatune calibrate: error: unexpected argument '%s'\n",
			argv[first]);
		return 2;
	}
	if (!a->out) {
		fprintf(stderr, "megatune calibrate: error: -o PROFILE.json is required\n");
		return 2;
	}
	if (a->repair && !a->resume) {
		fprintf(stderr, "megatune calibrate: error: --repair goes with --resume\n");
		return 2;
	}
	if (a->out && a->results && mt_same_file(a->results, a->out)) {
		fprintf(stderr, "megatune calibrate: error: -o '%s' and --results '%s' are the "
			"same file: give each its own path\n", a->out, a->results);
		return 2;
	}
	if (a->lround > a->rounds) {
		fprintf(stderr, "megatune calibrate: error: --launched-round %d: expected at most "
			"--rounds (%d)\n", a->lround, a->rounds);
		return 2;
	}
	if (a->lround > 1) { /* a later round adds to the file the first one started */
		a->resume = 1;
		a->fresh = a->repair = 0;
	}
	if (a->resume && a->fresh) {
		fprintf(stderr, "megatune calibrate: error: --resume and --fresh exclude each other\n");
		return 2;
	}
	snprintf(list, sizeof(list), "%s", a->probes ? a->probes : "");
	mt_probe_names(names, sizeof(names), ", ");
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!mt_probe_find(tok)) {
			fprintf(stderr, "megatune calibrate: error: --probes: unknown probe '%s' "
				"(expected %s)\n", tok, names);
			return 2;
		}
	if (!a->results) {
		snprintf(a->resbuf, sizeof(a->resbuf), "%s.results.jsonl", a->out);
		a->results = a->resbuf;
	}
	return 0;
}

/* --resume --repair: the file rewritten with its valid records only (through
 * a temporary file), then reopened and locked again. */
static int rewrite_results(const struct calib_args *a, struct csink *cs,
			   const struct mt_results_damage *d, const struct sbuf *kept)
{
	struct mt_error err = MT_ERROR_INIT;

	fprintf(stderr, "megatune calibrate: %s: --repair: dropped %d damaged line%s (the "
		"first at line %d, byte offset %lld%s); kept %d records\n", a->results, d->dropped,
		d->dropped == 1 ? "" : "s", d->first_line, d->first_off,
		d->nul ? ", NUL bytes" : "", d->records);
	if (kept->failed)
		mt_error_set(&err, MT_ENOMEM, "out of memory");
	if (kept->failed || mt_write_atomic(a->results, kept->buf, kept->len, &err) ||
	    mt_stream_close(&cs->results, &err) ||
	    mt_stream_open(&cs->results, a->results, 0, &err))
		return cli_fail("calibrate", &err);
	return 0;
}

/* --resume on rank 0: the results file locked, validated and checked
 * against this run; 0 or the exit code. */
static int resume_results(const struct calib_args *a, const struct mt_world *w,
			  struct csink *cs, cJSON **head, cJSON **records)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_results_damage d;
	struct sbuf kept = SBUF_INIT;
	const char *b;
	int ranks, code = 0;

	if (access(a->results, F_OK) != 0) {
		fprintf(stderr, "megatune calibrate: error: --resume: %s does not exist "
			"(nothing to resume)\n", a->results);
		return 2;
	}
	if (mt_stream_open(&cs->results, a->results, 0, &err))
		return cli_fail("calibrate", &err);
	if (mt_results_load(a->results, a->repair, head, records, &d, a->repair ? &kept : NULL,
			    &err)) {
		code = cli_fail("calibrate", &err);
		goto out;
	}
	b = mt_jget_strd(*head, "backend", NULL);
	ranks = (int)mt_jget_num(*head, "world.ranks", 0);
	if (!b || strcmp(b, a->o.backend == MT_BACKEND_CUDA ? "cuda" : "cpu")) {
		fprintf(stderr, "megatune calibrate: error: %s: field 'backend': the "
			"pass was started with --backend %s; resume it with the same\n",
			a->results, b ? b : "?");
		code = 2;
		goto out;
	}
	if (ranks != w->size) {
		fprintf(stderr, "megatune calibrate: error: %s: field 'world.ranks': "
			"the pass was started on %d ranks, this run has %d\n",
			a->results, ranks, w->size);
		code = 2;
		goto out;
	}
	if (d.valid_after) {
		if ((code = rewrite_results(a, cs, &d, &kept)))
			goto out;
	} else if (d.first_off >= 0) {
		/* damage only after the last record: cut back to it */
		fprintf(stderr, "megatune calibrate: %s: byte offset %lld (line %d): dropped %s "
			"after the last whole record\n", a->results, d.first_off, d.first_line,
			d.nul ? "NUL bytes a crash left" : "a last line cut short");
		if (mt_stream_truncate(&cs->results, d.good_len, &err)) {
			code = cli_fail("calibrate", &err);
			goto out;
		}
	}
	if (a->lround <= 1) /* a later round of --launcher adds its own */
		fprintf(stderr, "resuming: %d results already in %s\n",
			cJSON_GetArraySize(*records), a->results);
	cs->done = *records;
out:
	sbuf_release(&kept);
	return code;
}

/* 1 when the file exists and holds no whole line (a pass killed while it
 * wrote its head record): nothing to resume. */
static int cut_head(const char *path)
{
	FILE *f = fopen(path, "rb");
	int ch, whole = 0;

	if (!f)
		return 0;
	while ((ch = getc(f)) != EOF && !(whole = ch == '\n'))
		;
	fclose(f);
	return !whole;
}

/* Rank 0 owns the results file, locked for the whole pass: resumed,
 * refused, or started with its head record.  0 or the exit code. */
static int open_results(const struct calib_args *a, int argc, char **argv,
			const struct mt_world *w, struct csink *cs, cJSON **head, cJSON **records)
{
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb = SBUF_INIT;
	int code = 0;

	if (a->resume && !cut_head(a->results))
		return resume_results(a, w, cs, head, records);
	if (a->resume)
		fprintf(stderr, "megatune calibrate: %s: no whole record (the pass was stopped "
			"before its first): starting it\n", a->results);
	else if (access(a->results, F_OK) == 0 && !a->fresh) {
		fprintf(stderr, "megatune calibrate: error: %s exists (an earlier pass): "
			"--resume continues it, --fresh starts over\n", a->results);
		return 2;
	}
	/* locked before it is emptied: a --fresh beside a running pass is refused */
	if (mt_stream_open(&cs->results, a->results, 1, &err))
		return cli_fail("calibrate", &err);
	mt_result_head_sb(&sb, argc + 1, argv - 1, &a->o, w);
	if (sb.failed)
		mt_error_set(&err, MT_ENOMEM, "out of memory");
	if (sb.failed || mt_stream_write(&cs->results, sb.buf, sb.len, &err))
		code = cli_fail("calibrate", &err);
	sbuf_release(&sb);
	return code;
}

/* Every probe of the list (default: those not hidden) in registry order;
 * returns the count of failed results and errors. */
static int run_probes(const struct calib_args *a, const struct mt_world *w, struct csink *cs)
{
	struct mt_error err = MT_ERROR_INIT;
	const struct mt_probe *p;
	int i, rc, failed = 0;

	for (i = 0; (p = mt_probe_at(i)); i++) {
		if (a->probes ? !has(a->probes, p->name) : p->hidden)
			continue;
		if (p->kind == MT_PROBE_INFO)
			continue;
		rc = mt_probe_run(p, &a->o, w, &cs->s, skip_case, cs, &failed, &err);
		if (rc == MT_EUNSUPPORTED) {
			if (w->rank == 0)
				c_skip(p, err.msg);
		} else if (rc == MT_ENOLIB) {
			/* not a skip: the pass would miss what this machine can measure */
			if (w->rank == 0)
				fprintf(stderr, "megatune calibrate: error: %s: %s\n", p->name, err.msg);
			cs->nolib = 1;
			break;
		} else if (rc) {
			if (w->rank == 0)
				fprintf(stderr, "megatune calibrate: %s: %s\n", p->name, err.msg);
			failed++;
		}
		if (g_stop)
			break;
	}
	return failed;
}

/* What calibrate knows beyond the records, gathered on every rank. */
struct calib_env {
	struct mt_host_info *hosts;
	int nhosts;
	struct mt_topo *topo;
	char nccl[32], cuda[32], drv[32], when[32], name[128];
};

/* Rank 0: the outliers on screen, then the profile from the whole results
 * file.  0, 1 (some result failed) or the exit code. */
static int calibrate_write_profile(const struct calib_args *a, const struct mt_world *w,
			 const struct calib_env *e, int failed)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_calib_info info;
	struct mt_outlier outl[32];
	cJSON *head = NULL, *records = NULL, *doc = NULL;
	int n, k, truncated = 0, code = 0;

	if (mt_results_read(a->results, &head, &records, &truncated, &err))
		return cli_fail("calibrate", &err);
	if (a->lround) { /* --launcher: the failed results of every round's launch */
		const cJSON *r;

		failed = 0;
		cJSON_ArrayForEach(r, records) {
			const char *v = mt_jget_strd(r, "verified", NULL);

			failed += v && !strcmp(v, "FAILED");
		}
	}
	{
		/* rounds: one record per measurement, the median round's */
		cJSON *one = mt_results_one_round(records);

		if (!one) {
			cJSON_Delete(head);
			cJSON_Delete(records);
			mt_error_set(&err, MT_ENOMEM, "out of memory");
			return cli_fail("calibrate", &err);
		}
		cJSON_Delete(records);
		records = one;
	}
	memset(&info, 0, sizeof(info));
	info.backend = a->o.backend;
	info.hosts = e->hosts;
	info.nhosts = e->nhosts;
	info.ranks = w->size;
	info.ranks_per_node = w->local_size;
	info.topo = e->topo;
	info.name = a->name ? a->name : e->name;
	info.nccl = e->nccl[0] ? e->nccl : NULL;
	info.cuda = e->cuda[0] ? e->cuda : NULL;
	info.margin_pct = a->margin;
	info.when = e->when;
	n = mt_find_outliers(records, a->margin, outl, 32);
	for (k = 0; k < n && k < 32; k++)
		fprintf(stderr, "outlier: %s: %s %.4g, %.1f%% below the median %.4g of its "
			"peers\n", outl[k].what, outl[k].metric, outl[k].value,
			outl[k].below_pct, outl[k].median);
	if (n > 32)
		fprintf(stderr, "outlier: ... and %d more (see %s)\n", n - 32, a->out);
	if (mt_calibrate_profile(records, &info, &doc, &err) ||
	    mt_profile_write(doc, a->out, &err)) {
		code = cli_fail("calibrate", &err);
	} else {
		cli_profile_warnings("calibrate", doc, a->out);
		fprintf(stderr, "wrote %s (%d results, %d outlier%s); results in %s\n", a->out,
			cJSON_GetArraySize(records), n, n == 1 ? "" : "s", a->results);
		if (failed) {
			fprintf(stderr, "megatune calibrate: %d result%s failed verification or "
				"errored; the profile uses the verified ones\n", failed,
				failed == 1 ? "" : "s");
			code = 1;
		}
	}
	cJSON_Delete(head);
	cJSON_Delete(records);
	cJSON_Delete(doc);
	return code;
}

/* Hosts, GPU topology and versions; 0 or the exit code. */
static int gather_env(const struct calib_args *a, const struct mt_world *w, struct calib_env *e)
{
	struct mt_error err = MT_ERROR_INIT;
	time_t now = time(NULL);
	struct tm tmv;

	strftime(e->when, sizeof(e->when), "%Y-%m-%d", gmtime_r(&now, &tmv));
	snprintf(e->name, sizeof(e->name), "calibrated-%s", w->host);
	/* the backend must exist at all */
	if (a->o.backend == MT_BACKEND_CUDA && mt_cuda_load(NULL, NULL, &err)) {
		if (err.code != MT_EUNSUPPORTED) /* a GPU is there: the library must be too */
			return w->rank == 0 ? cli_fail("calibrate", &err) : mt_exit_code(err.code);
		if (w->rank == 0)
			fprintf(stderr, "megatune calibrate: not applicable here: %s\n(--backend cpu "
				"calibrates with the CPU backends)\n", err.msg);
		return 77;
	}
	if (mt_hosts_gather(w, &e->hosts, &e->nhosts, &err))
		return cli_fail("calibrate", &err);
	if (a->o.backend == MT_BACKEND_CUDA) {
		e->topo = calloc(1, sizeof(*e->topo));
		if (e->topo && mt_gpu_topology(e->topo, &err)) {
			free(e->topo);
			e->topo = NULL;
		}
		mt_cuda_versions(e->nccl, e->cuda, e->drv, sizeof(e->nccl));
	}
	return 0;
}

/* --launcher: round k runs as `sh -c 'LAUNCHER "$@"' megatune EXE calibrate
 * ARGS... --launched-round k`.  The launches of the rounds before the last
 * exit 0 whether or not a result failed (the file says), so any other status
 * is the launcher failing; the last round's launch writes the profile and
 * exits 1 when a result of any round failed.  0, 1 (a result failed, or a
 * launch did), or the exit code of the round that stopped the pass (2, 77,
 * 130). */
static int launch_rounds(const struct calib_args *a, int argc, char **argv)
{
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf script = SBUF_INIT;
	char exe[4096], kbuf[16];
	char **av = calloc((size_t)argc + 8, sizeof(char *));
	int i, k, j, code = 0;

	if (mt_world_launched()) {
		free(av);
		fprintf(stderr, "megatune calibrate: error: --launcher starts the ranks itself: run "
			"`megatune calibrate --launcher '%s' ...` outside mpirun or srun\n",
			a->launcher);
		return 2;
	}
	if (mt_program_check(a->launcher, "--launcher", &err)) {
		free(av);
		fprintf(stderr, "megatune calibrate: error: %s\n", err.msg);
		return 2;
	}
	if (!av) {
		fprintf(stderr, "megatune calibrate: error: out of memory\n");
		return 1;
	}
	/* this program: calibrate runs in megatune-probe */
	cli_sibling_exe("megatune-probe", exe, sizeof(exe));
	sbuf_addf(&script, "%s \"$@\"", a->launcher);
	if (script.failed) {
		free(av);
		fprintf(stderr, "megatune calibrate: error: out of memory\n");
		return 2;
	}
	j = 0;
	av[j++] = (char *)"/bin/sh";
	av[j++] = (char *)"-c";
	av[j++] = script.buf;
	av[j++] = (char *)"megatune";
	av[j++] = exe;
	for (i = 0; i < argc; i++)
		av[j++] = argv[i];
	av[j++] = (char *)"--launched-round";
	av[j++] = kbuf;
	av[j] = NULL;
	for (k = 1; k <= a->rounds && !code && !g_stop; k++) {
		int status = 0, last = k == a->rounds;
		time_t t0 = time(NULL);
		struct stat st;
		pid_t pid;

		snprintf(kbuf, sizeof(kbuf), "%d", k);
		fprintf(stderr, "round %d of %d: %s\n", k, a->rounds, a->launcher);
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid == 0) {
			execv(av[0], av);
			_exit(127);
		}
		g_child = pid;
		while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		g_child = 0;
		if (pid < 0) {
			fprintf(stderr, "megatune calibrate: error: cannot start round %d: %s\n", k,
				strerror(errno));
			code = 1;
		} else if (g_stop || (WIFEXITED(status) && WEXITSTATUS(status) == 130) ||
			   (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)) {
			say_interrupted(a->results, k);
			code = 130;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			continue;
		} else if (WIFEXITED(status) && (WEXITSTATUS(status) == 2 ||
						 WEXITSTATUS(status) == 77)) {
			code = WEXITSTATUS(status); /* the launch said why */
		} else if (last && WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
			   stat(a->out, &st) == 0 && st.st_mtime >= t0) {
			code = 1; /* the profile is written; some results failed (it said) */
		} else {
			/* earlier rounds' launches exit 0 with failed results: anything
			 * else is the launcher's own failure */
			if (WIFEXITED(status))
				fprintf(stderr, "megatune calibrate: error: round %d: '%s' exited with "
					"status %d", k, a->launcher, WEXITSTATUS(status));
			else
				fprintf(stderr, "megatune calibrate: error: round %d: '%s' was killed "
					"by signal %d", k, a->launcher, WTERMSIG(status));
			fprintf(stderr, "; the results so far are in %s, and the same command with "
				"--resume continues\n", a->results);
			code = 1;
		}
	}
	if (!code && g_stop) { /* stopped between two rounds */
		say_interrupted(a->results, 0);
		code = 130;
	}
	free(av);
	sbuf_release(&script);
	return code;
}

int cmd_calibrate(int argc, char **argv)
{
	struct calib_args a;
	struct calib_env e;
	struct mt_world w;
	struct mt_error err = MT_ERROR_INIT;
	struct csink cs;
	cJSON *head = NULL, *records = NULL;
	int full_argc = argc, code = 0, failed = 0, round;

	if (calibrate_fit_wanted(argc, argv))
		return calibrate_fit_main(argc, argv);
	char **full_argv = argv;
	const char *env;

	if ((code = calibrate_parse_args(argc, argv, &a)))
		return code < 0 ? 0 : code;
	if (a.launcher && !a.lround) {
		signal(SIGINT, on_launcher_signal);
		signal(SIGTERM, on_launcher_signal);
		return launch_rounds(&a, argc, argv);
	}
	if ((env = getenv("MEGATUNE_CALIBRATE_STOP_AFTER"))) {
		long long v;

		/* tests only: a count of results; anything else is ignored */
		if (!mt_parse_int(env, 0, INT_MAX, &v))
			g_stop_after = (int)v;
	}
	if (mt_world_init(&w, &full_argc, &full_argv, &err))
		return cli_fail("calibrate", &err);
	memset(&cs, 0, sizeof(cs));
	cs.results.fd = -1;
	memset(&e, 0, sizeof(e));
	cs.s.emit = c_emit;
	cs.s.progress = c_progress;
	cs.t0 = mt_now();
	signal(SIGINT, calibrate_on_signal);
	signal(SIGTERM, calibrate_on_signal);

	if (w.rank == 0)
		code = open_results(&a, argc, argv, &w, &cs, &head, &records);
	if (w.mpi)
		mt_world_bcast(&w, &code, (int)sizeof(code));
	if (code)
		goto done;
	if ((code = gather_env(&a, &w, &e))) {
		/* nothing measured (no GPU, or its library missing): a new results file holding
		 * only its head would stop the next pass ("exists"), so it goes */
		if (w.rank == 0 && !a.resume && cs.results.fd >= 0) {
			mt_stream_close(&cs.results, NULL);
			unlink(a.results);
		}
		goto done;
	}
	if (w.rank == 0)
		fprintf(stderr, "calibrating %d host%s, %d rank%s, backend %s, %s sweep\n", w.nnodes,
			w.nnodes == 1 ? "" : "s", w.size, w.size == 1 ? "" : "s",
			a.o.backend == MT_BACKEND_CUDA ? "cuda" : "cpu",
			a.o.depth == MT_DEPTH_QUICK ? "quick" : a.o.depth == MT_DEPTH_FULL ? "full" :
			a.o.depth == MT_DEPTH_SMOKE ? "smoke" : "normal");
	for (round = a.lround ? a.lround : 1;
	     round <= (a.lround ? a.lround : a.rounds) && !g_stop && !cs.write_failed && !cs.nolib;
	     round++) {
		a.o.round = cs.round = a.rounds > 1 ? round : 0;
		if (w.rank == 0 && a.rounds > 1 && !a.lround) /* else the launcher said it */
			fprintf(stderr, "round %d of %d\n", round, a.rounds);
		failed += run_probes(&a, &w, &cs);
	}
	if (cs.nolib) {
		if (w.rank == 0)
			fprintf(stderr, "stopped: the results measured before are kept in %s; fix the "
				"library and run the same command with --resume\n", a.results);
		code = 2;
		goto done;
	}
	if (cs.write_failed) {
		if (w.rank == 0)
			fprintf(stderr, "\nmegatune calibrate: error: %s\nstopped: %d result%s "
				"written to %s before the failure are kept; free the space and run "
				"the same command with --resume\n", cs.werr.msg, cs.written,
				cs.written == 1 ? "" : "s", a.results);
		code = mt_exit_code(cs.werr.code);
		goto done;
	}
	if (g_stop) {
		if (w.rank == 0)
			say_interrupted(a.results, 0);
		code = 130;
		goto done;
	}
	cs.done = NULL;
	if (w.rank == 0 && a.lround && a.lround < a.rounds)
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
	free(e.hosts);
	free(e.topo);
	mt_world_finalize(&w);
	return code;
}
