/* SPDX-License-Identifier: MIT */
/* fit_profile: the profile with the fitted corrections, as `megatune
 * calibrate --from-validation` writes it (validate/fit.h). */
#include "fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../perfmodel/profile.h"

#define GIB (1024.0 * 1024 * 1024)

void mt_vfit_pct(char *buf, size_t cap, double v)
{
	if (isfinite(v))
		snprintf(buf, cap, "%.2f%%", 100 * v);
	else
		snprintf(buf, cap, "n/a");
}

int mt_vfit_profile_write(const char *cluster, const char *out, const struct mt_vset *s,
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
	mt_vfit_pct(lb, sizeof(lb), f->loo_before);
	mt_vfit_pct(la, sizeof(la), f->loo_after);
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
