/* SPDX-License-Identifier: MIT */
/* calibrate_fit: `megatune calibrate --from-validation` (cli/calibrate_fit.h). */
#include "calibrate_fit.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../lib/sbuf.h"
#include "../validate/fit.h"
#include "common.h"

int calibrate_fit_wanted(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--from-validation") ||
		    !strncmp(argv[i], "--from-validation=", 18))
			return 1;
	return 0;
}

#define GIB (1024.0 * 1024 * 1024)

/* The memory fit from the ranks' reports (docs/MODEL.md 10) */
static void print_memory_ranks(const struct mt_vset *s, const struct mt_vfit *f)
{
	char b[32], a[32];

	fprintf(stderr, "memory: %d rank report%s of %d run%s (memory_ranks; %d run%s without one, "
		"%d report%s without a known stage, left out)\n", s->npts, s->npts == 1 ? "" : "s",
		f->mem_point_runs, f->mem_point_runs == 1 ? "" : "s", s->nruns - f->mem_point_runs,
		s->nruns - f->mem_point_runs == 1 ? "" : "s", s->pts_left_out,
		s->pts_left_out == 1 ? "" : "s");
	mt_vfit_pct(b, sizeof(b), f->max_alloc_rms_before);
	mt_vfit_pct(a, sizeof(a), f->max_alloc_rms_after);
	fprintf(stderr, "step memory factor x%.3f (least squares of max allocated over the "
		"reports); max allocated error (rms): before %s, after %s\n", f->corr.mem_step, b, a);
	mt_vfit_pct(b, sizeof(b), f->max_alloc_loo_before);
	mt_vfit_pct(a, sizeof(a), f->max_alloc_loo_after);
	fprintf(stderr, "max allocated error, leave-one-out: before %s, after %s%s%s\n", b, a,
		f->mem_step_why[0] ? "; not applied: " : "", f->mem_step_why);
	mt_vfit_pct(b, sizeof(b), f->mem_loo_before);
	mt_vfit_pct(a, sizeof(a), f->mem_loo_after);
	fprintf(stderr, "memory term %+.2f GiB (measured max reserved less the predicted reserved "
		"with the factor); leave-one-out error before %s, after %s%s\n",
		f->corr.mem_bytes / GIB, b, a,
		isfinite(f->mem_loo_after) && !(f->mem_loo_after < f->mem_loo_before)
			? " (no better on reports left out: not applied)" : "");
}

/* The memory term from the worst rank's max reserved: records without the
 * ranks' reports, as before them */
static void print_memory_worst(const struct mt_vset *s, const struct mt_vfit *f)
{
	char b[32], a[32];

	fprintf(stderr, "memory: no run's record has the ranks' memory reports (memory_ranks), so "
		"no step memory factor; the memory term alone, from the worst rank's max reserved "
		"against the predicted peak%s\n", s->pts_left_out ? " (reports without a known "
		"stage left out)" : "");
	if (f->mem_runs > 0) {
		mt_vfit_pct(b, sizeof(b), f->mem_loo_before);
		mt_vfit_pct(a, sizeof(a), f->mem_loo_after);
		fprintf(stderr, "memory term %+.2f GiB from %d run%s; leave-one-out error before %s, "
			"after %s%s\n", f->corr.mem_bytes / GIB, f->mem_runs,
			f->mem_runs == 1 ? "" : "s", b, a,
			isfinite(f->mem_loo_after) && !(f->mem_loo_after < f->mem_loo_before)
				? " (no better on runs left out: not applied)" : "");
	} else {
		fprintf(stderr, "memory term: not fitted (no run with measured memory outside proxy "
			"mode)\n");
	}
}

static void print_fit(const struct mt_vset *s, const struct mt_vfit *f)
{
	char b[32], a[32];
	struct sbuf sb;
	int i;

	fprintf(stderr, "read %d measured run%s from %s (%d candidate%s without a measurement "
		"left out)\n", s->nruns, s->nruns == 1 ? "" : "s", s->files, s->left_out,
		s->left_out == 1 ? "" : "s");
	sbuf_init(&sb);
	mt_vfit_text(&sb, f);
	fprintf(stderr, "fitted (least squares over %d run%s): %s\n", s->nruns,
		s->nruns == 1 ? "" : "s", sb.buf);
	sbuf_release(&sb);
	for (i = 0; i < f->ndrop; i++)
		fprintf(stderr, "not fitted: %s (%s)\n", mt_corr_name(f->drop[i]), f->drop_why[i]);
	mt_vfit_pct(b, sizeof(b), f->loo_before);
	mt_vfit_pct(a, sizeof(a), f->loo_after);
	fprintf(stderr, "step error, leave-one-out (mean |predicted / measured - 1|): before %s, "
		"after %s\n", b, a);
	mt_vfit_pct(b, sizeof(b), f->rms_before);
	mt_vfit_pct(a, sizeof(a), f->rms_after);
	fprintf(stderr, "step error, all runs in the fit (rms): before %s, after %s\n", b, a);
	if (s->npts > 0)
		print_memory_ranks(s, f);
	else
		print_memory_worst(s, f);
}

int calibrate_fit_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "from-validation", required_argument, NULL, 'v' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	const char *files[64], *cluster = NULL, *out = NULL;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *base = NULL;
	struct mt_vset set;
	struct mt_vfit fit;
	int nf = 0, c, rc, i;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:", lo, NULL)) != -1) {
		switch (c) {
		case 'v': if (nf < 64) files[nf++] = optarg; break;
		case 'c': cluster = optarg; break;
		case 'o': out = optarg; break;
		default:
			return cli_usage_error("calibrate", "--from-validation takes only --cluster and -o "
					       "(and more validation files), not '%s'", argv[optind - 1]);
		}
	}
	for (; optind < argc && nf < 64; optind++)
		files[nf++] = argv[optind];
	if (!cluster)
		return cli_usage_error("calibrate", "--from-validation needs --cluster PROFILE (the "
				       "profile the predictions used)");
	if (!out)
		return cli_usage_error("calibrate", "--from-validation needs -o CORRECTED.json");
	memset(&set, 0, sizeof(set));
	memset(&fit, 0, sizeof(fit));
	for (i = 0; i < nf; i++)
		if ((rc = mt_vset_read(&set, files[i], &err)))
			goto fail;
	if ((rc = mt_cluster_load(cluster, &base, &err)) ||
	    (rc = mt_vfit_run(&set, base, &fit, &err)))
		goto fail;
	print_fit(&set, &fit);
	if ((rc = mt_vfit_profile_write(cluster, out, &set, &fit, &err)))
		goto fail;
	fprintf(stderr, "wrote %s (the profile %s with a corrections section)\n", out, cluster);
	mt_vfit_free(&fit);
	mt_vset_free(&set);
	mt_cluster_free(base);
	return 0;
fail:
	mt_vfit_free(&fit);
	mt_vset_free(&set);
	mt_cluster_free(base);
	return cli_fail("calibrate", &err);
}
