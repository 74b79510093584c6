/* SPDX-License-Identifier: MIT */
/* fit: correction factors fitted by least squares over measured
 * runs (`megatune calibrate --from-validation`, docs/MODEL.md section 10).
 *
 * The validation is read through its owner (validate/validation.h); the fit
 * uses only (docs/FORMATS.md, "What calibrate --from-validation reads"): schema,
 * mode, advice, model, gpus, seq, gbs and, per candidate, name, status,
 * config, measured.step_s, measured.mem_max_reserved_gib and memory_ranks
 * (each rank's rank, stage and measured max allocated and max reserved; the
 * predictions beside them are recomputed).  The model and
 * the job's precision come from the advice file the validation names when it
 * can be read (job.model_source, job.precision, job.attention,
 * job.moe_dispatcher), else from the validation's `model` as a name or path.
 * Runs whose status is not "ok" or that lack measured.step_s are counted and
 * left out.
 *
 * The fit re-evaluates every run's configuration with the model (advisor
 * search.h mt_evaluate) on the base cluster with trial factors
 * (perfmodel/correction.h), and minimises the sum of squared relative step
 * errors (Gauss-Newton, factors bounded to [0.05, 20], a 1e-10 pull towards 1
 * so that an unexercised factor stays 1).  Factors that change no run's step
 * by 1% are not fitted; the others are, largest share of the predicted step
 * first, with q parameters: the first q - 1 factors one each, the others
 * sharing the last (one run scales every exercised class alike).  q is 1, or
 * from three runs on the count up to max(1, runs - 2) whose leave-one-out
 * error is the least (the fewest where equal).
 *
 * Memory (runs not in proxy mode: a proxy holds one layer's buffers, not the
 * job's memory).  With the ranks' memory reports (memory_ranks), a step
 * memory factor k on what a stage allocates inside a step, so that the
 * predicted max allocated of each report's stage, allocated + k (max
 * allocated - allocated), matches the measured one: least squares over the
 * relative errors of every report of every run, closed form; then the memory
 * term, the mean of measured max reserved less the stage's predicted
 * reserved with k.  Without them (records written before memory_ranks, logs
 * without the reports), the memory term alone: the mean of the worst rank's
 * measured max reserved less the predicted peak.  Each is kept only when it
 * predicts the points left out better (with two points or more).
 *
 * Ownership: the set owns its models, runs and the layouts its runs pin
 * (runs[i].job.pins.layout; mt_vset_free); the result is
 * a plain record.
 */
#ifndef MT_VALIDATE_FIT_H
#define MT_VALIDATE_FIT_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"
#include "../perfmodel/model.h"

struct mt_vrun {
	char file[256];          /* the validation file */
	char name[128];          /* the candidate's name */
	int model;               /* index into the set's models */
	struct mt_job job;
	struct mt_config cfg;
	double measured_step_s;
	double measured_mem_bytes; /* NAN: not measured (or proxy mode) */
};

/* One rank's memory report of a run, what the memory fit matches */
struct mt_vmempt {
	int run;                 /* index into the set's runs */
	int rank, stage;
	double max_allocated;    /* measured, bytes */
	double max_reserved;     /* measured, bytes; NAN: not printed */
};

struct mt_vset {
	struct mt_model *models;
	int nmodels;
	struct mt_vrun *runs;
	int nruns;
	int left_out;            /* candidates not used (status, no measurement) */
	struct mt_vmempt *pts;   /* the runs' memory reports with a known stage */
	int npts;
	int pts_left_out;        /* reports without a known stage or max allocated */
	char files[512];         /* the files read, comma-separated */
	struct mt_job job;       /* the job of the last validation added (mt_vset_predict) */
	char path[256];          /* and its file */
};

/* Read one validation file into the set (appending).  MT_EINVAL or
 * MT_EPARSE name the file and the field; a file with no usable run is
 * MT_EINVAL saying how many candidates it has and their statuses. */
int mt_vset_read(struct mt_vset *s, const char *path, struct mt_error *err);
/* The same from a validation in memory (tune: the runs so far), which may
 * have no usable run yet (its model and job are read all the same, for
 * mt_vset_predict); path names it in messages and finds a relative `advice`
 * beside it. */
struct mt_validation;
int mt_vset_add(struct mt_vset *s, const struct mt_validation *v, const char *path,
		struct mt_error *err);
void mt_vset_free(struct mt_vset *s);

/* The predicted step of a candidate's `config` (as in a validation or an
 * advice, `where` naming it in messages: "candidates[2].config") under the job
 * of the set's last validation, on base with the factors of k (NULL or off:
 * none; the memory term does not touch the step): what the fit's
 * predictions are for its runs, for any candidate of the same job (tune
 * re-predicts those not yet run).  MT_EINVAL naming the field or saying why
 * the configuration cannot be evaluated. */
int mt_vset_predict(const struct mt_vset *s, const struct mt_cluster *base,
		    const struct mt_corr *k, const cJSON *config, const char *where, double *step,
		    struct mt_error *err);

struct mt_vfit {
	int nfit;
	int fit[MT_CORR_N];             /* the factors fitted, best share first */
	int nparam;                     /* the parameters fitted (<= nfit) */
	int param_of[MT_CORR_N];        /* fit[i]'s parameter: the first nparam - 1
					 * factors one each, the others the last together */
	int ndrop;
	int drop[MT_CORR_N];
	char drop_why[MT_CORR_N][96];
	struct mt_corr corr;            /* the fitted factors and memory terms */
	int mem_runs;                   /* runs the memory term was fitted on */
	/* the step memory factor from the ranks' reports (npts > 0); per
	 * point, heap: the stage's predicted allocated, max allocated and
	 * reserved without correction, and max allocated and reserved with */
	int mem_point_runs;
	double *pt_alloc, *pt_max_alloc, *pt_reserved, *pt_max_alloc_after, *pt_reserved_after;
	double max_alloc_rms_before, max_alloc_rms_after; /* relative, every point */
	double max_alloc_loo_before, max_alloc_loo_after; /* mean |relative| left out; NAN */
	char mem_step_why[128];         /* why the factor stayed 1, or "" */
	double *pred_before, *pred_after; /* per run, heap (mt_vfit_free) */
	double *mem_before;             /* per run predicted peak (uncorrected) */
	double rms_before, rms_after;   /* relative step error, all runs */
	double loo_before, loo_after;   /* mean |relative error| left out; NAN: one run */
	double mem_loo_before, mem_loo_after;
};

/* Fit the set on `base` (its own corrections ignored).  MT_EINVAL when a
 * run's configuration cannot be evaluated (the message names it). */
int mt_vfit_run(const struct mt_vset *s, const struct mt_cluster *base, struct mt_vfit *out,
		struct mt_error *err);
/* The factors fitted as words, appended to sb: "gemm_large x1.200,
 * a2a_network x1.500", factors sharing a parameter named together
 * ("gemm_large=gemm_small x1.850 (one factor for the 2)"), or
 * "nothing". */
struct sbuf;
void mt_vfit_text(struct sbuf *sb, const struct mt_vfit *f);
void mt_vfit_free(struct mt_vfit *f);

/* A relative error as a percentage, "12.34%", or "n/a" when it is not a
 * number (validate/fit_profile.c). */
void mt_vfit_pct(char *buf, size_t cap, double v);
/* The profile `cluster` (a bundled name or a file, read again) with a
 * `corrections` section holding the fit f of the set s (the factors, the
 * runs, the memory points and the residuals) and a source citing how it was
 * fitted, written to `out` (validate/fit_profile.c).  MT_OK, or the error
 * reading the profile or writing the file, MT_ENOMEM. */
int mt_vfit_profile_write(const char *cluster, const char *out, const struct mt_vset *s,
			  const struct mt_vfit *f, struct mt_error *err);

#endif
