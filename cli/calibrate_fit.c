/* SPDX-License-Identifier: MIT */
/* calibrate_fit: `megatune calibrate --from-validation` (cli/calibrate_fit.h). */
#include "calibrate_fit.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "../lib/sbuf.h"
#include "../validate/fit.h"
#include "../perfmodel/profile.h"
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

static void calibrate_fit_pct(char *buf, size_t cap, double v)
{
	if (isfinite(v))
		snprintf(buf, cap, "%.2f%%", 100 * v);
	else
		snprintf(buf, cap, "n/a");
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
	calibrate_fit_pct(b, sizeof(b), f->max_alloc_rms_before);
	calibrate_fit_pct(a, sizeof(a), f->max_alloc_rms_after);
	fprintf(stderr, "step memory factor x%.3f (least squares of max allocated over the "
		"reports); max allocated error (rms): before %s, after %s\n", f->corr.mem_step, b, a);
	calibrate_fit_pct(b, sizeof(b), f->max_alloc_loo_before);
	calibrate_fit_pct(a, sizeof(a), f->max_alloc_loo_after);
	fprintf(stderr, "max allocated error, leave-one-out: before %s, after %s%s%s\n", b, a,
		f->mem_step_why[0] ? "; not applied: " : "", f->mem_step_why);
	calibrate_fit_pct(b, sizeof(b), f->mem_loo_before);
	calibrate_fit_pct(a, sizeof(a), f->mem_loo_after);
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
		calibrate_fit_pct(b, sizeof(b), f->mem_loo_before);
		calibrate_fit_pct(a, sizeof(a), f->mem_loo_after);
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
	calibrate_fit_pct(b, sizeof(b), f->loo_before);
	calibrate_fit_pct(a, sizeof(a), f->loo_after);
	fprintf(stderr, "step error, leave-one-out (mean |predicted / measured - 1|): before %s, "
		"after %s\n", b, a);
	calibrate_fit_pct(b, sizeof(b), f->rms_before);
	calibrate_fit_pct(a, sizeof(a), f->rms_after);
	fprintf(stderr, "step error, all runs in the fit (rms): before %s, after %s\n", b, a);
	if (s->npts > 0)
		print_memory_ranks(s, f);
	else
		print_memory_worst(s, f);
}

static int calibrate_fit_write_profile(const char *cluster, const char *out, const struct mt_vset *s,
			 const struct mt_vfit *f, struct mt_error *err)
{
	struct mt_profile_corr pc;
	struct mt_profile_corr_run *runs = calloc((size_t)s->nruns, sizeof(*runs));
	struct mt_profile_corr_mempt *pts = calloc((size_t)s->npts + 1, sizeof(*pts));
	const char *why[MT_CORR_N];
	char when[32], id[48], cite[2048], mem[400], lb[32], la[32];
	time_t now = time(NULL);
	struct tm tm;
	cJSON *doc = NULL;
	int i, rc;

	if (!runs || !pts) {
		free(runs);
		free(pts);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	if ((rc = mt_profile_new(cluster, NULL, &doc, err))) {
		free(runs);
		free(pts);
		return rc;
	}
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	strftime(id, sizeof(id), "fit-validation-%Y%m%dT%H%M%SZ", &tm);
	for (i = 0; i < s->nruns; i++) {
		runs[i].file = s->runs[i].file;
		runs[i].name = s->runs[i].name;
		runs[i].measured_step_s = s->runs[i].measured_step_s;
		runs[i].predicted_step_s = f->pred_before[i];
		runs[i].corrected_step_s = f->pred_after[i];
		runs[i].measured_mem_bytes = s->runs[i].measured_mem_bytes;
		runs[i].predicted_mem_bytes = f->mem_before[i];
	}
	for (i = 0; i < s->npts; i++) {
		const struct mt_vmempt *p = &s->pts[i];

		pts[i] = (struct mt_profile_corr_mempt){
			s->runs[p->run].file, s->runs[p->run].name, p->rank, p->stage,
			p->max_allocated, f->pt_max_alloc[i], f->pt_max_alloc_after[i],
			p->max_reserved, f->pt_reserved[i], f->pt_reserved_after[i]
		};
	}
	for (i = 0; i < f->ndrop; i++)
		why[i] = f->drop_why[i];
	memset(&pc, 0, sizeof(pc));
	pc.corr = &f->corr;
	pc.fitted = f->fit;
	pc.nfitted = f->nfit;
	pc.dropped = f->drop;
	pc.dropped_why = why;
	pc.ndropped = f->ndrop;
	pc.runs = runs;
	pc.nruns = s->nruns;
	pc.mem_runs = f->mem_runs;
	pc.fitted_at = when;
	pc.rms_before = f->rms_before;
	pc.rms_after = f->rms_after;
	pc.loo_before = f->loo_before;
	pc.loo_after = f->loo_after;
	pc.mem_loo_before = f->mem_loo_before;
	pc.mem_loo_after = f->mem_loo_after;
	pc.pts = pts;
	pc.npts = s->npts;
	pc.max_alloc_rms_before = f->max_alloc_rms_before;
	pc.max_alloc_rms_after = f->max_alloc_rms_after;
	pc.max_alloc_loo_before = f->max_alloc_loo_before;
	pc.max_alloc_loo_after = f->max_alloc_loo_after;
	pc.mem_step_why = f->mem_step_why[0] ? f->mem_step_why : NULL;
	if (s->npts > 0)
		snprintf(mem, sizeof(mem), "; memory from %d rank report%s of %d run%s: step memory "
			 "factor x%.3f, max allocated rms error %.1f%% -> %.1f%%, memory term %+.3f GiB",
			 s->npts, s->npts == 1 ? "" : "s", f->mem_point_runs,
			 f->mem_point_runs == 1 ? "" : "s", f->corr.mem_step,
			 100 * f->max_alloc_rms_before, 100 * f->max_alloc_rms_after,
			 f->corr.mem_bytes / GIB);
	else
		snprintf(mem, sizeof(mem), "; memory from the worst rank's max reserved of %d run%s "
			 "(no rank reports): memory term %+.3f GiB", f->mem_runs,
			 f->mem_runs == 1 ? "" : "s", f->corr.mem_bytes / GIB);
	calibrate_fit_pct(lb, sizeof(lb), f->loo_before);
	calibrate_fit_pct(la, sizeof(la), f->loo_after);
	snprintf(cite, sizeof(cite), "megatune calibrate --from-validation %s: least squares over %d "
		 "measured run%s; leave-one-out step error %s -> %s%s", s->files, s->nruns,
		 s->nruns == 1 ? "" : "s", lb, la, mem);
	mt_profile_add_source(doc, id, "derived", cite);
	mt_profile_corrections(doc, &pc, id);
	rc = mt_profile_write(doc, out, err);
	cJSON_Delete(doc);
	free(runs);
	free(pts);
	return rc;
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
	if ((rc = calibrate_fit_write_profile(cluster, out, &set, &fit, &err)))
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
