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
#include "../tuner/profile.h"
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

static void pct(char *buf, size_t cap, double v)
{
	if (isfinite(v))
		snprintf(buf, cap, "%.2f%%", 100 * v);
	else
		snprintf(buf, cap, "n/a");
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
	pct(b, sizeof(b), f->loo_before);
	pct(a, sizeof(a), f->loo_after);
	fprintf(stderr, "step error, leave-one-out (mean |predicted / measured - 1|): before %s, "
		"after %s\n", b, a);
	pct(b, sizeof(b), f->rms_before);
	pct(a, sizeof(a), f->rms_after);
	fprintf(stderr, "step error, all runs in the fit (rms): before %s, after %s\n", b, a);
	if (f->mem_runs > 0) {
		pct(b, sizeof(b), f->mem_loo_before);
		pct(a, sizeof(a), f->mem_loo_after);
		fprintf(stderr, "memory term %+.2f GiB from %d run%s; leave-one-out error before %s, "
			"after %s%s\n", f->corr.mem_bytes / (1024.0 * 1024 * 1024), f->mem_runs,
			f->mem_runs == 1 ? "" : "s", b, a,
			f->mem_loo_after < f->mem_loo_before ? "" :
			" (no better on runs left out: not applied)");
	} else {
		fprintf(stderr, "memory term: not fitted (no run with measured memory outside proxy "
			"mode)\n");
	}
}

static int write_profile(const char *cluster, const char *out, const struct mt_vset *s,
			 const struct mt_vfit *f, struct mt_error *err)
{
	struct mt_profile_corr pc;
	struct mt_profile_corr_run *runs = calloc((size_t)s->nruns, sizeof(*runs));
	const char *why[MT_CORR_N];
	char when[32], id[48], cite[1024];
	time_t now = time(NULL);
	struct tm tm;
	cJSON *doc = NULL;
	int i, rc;

	if (!runs)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if ((rc = mt_profile_new(cluster, NULL, &doc, err))) {
		free(runs);
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
	snprintf(cite, sizeof(cite), "megatune calibrate --from-validation %s: least squares over %d "
		 "measured runs; leave-one-out step error %.1f%% -> %.1f%%", s->files, s->nruns,
		 100 * f->loo_before, 100 * f->loo_after);
	mt_profile_add_source(doc, id, "derived", cite);
	mt_profile_corrections(doc, &pc, id);
	rc = mt_profile_write(doc, out, err);
	cJSON_Delete(doc);
	free(runs);
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
	if ((rc = write_profile(cluster, out, &set, &fit, &err)))
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
