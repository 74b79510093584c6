/* SPDX-License-Identifier: MIT */
/* profile: the owner of the `megatune.profile/1` document (docs/FORMATS.md
 * section 2).  It alone finds and loads a profile (a path or a bundled name),
 * builds one from measurements for `megatune calibrate` and `megatune import`,
 * and writes it; the parsed, validated form is struct mt_cluster (cluster.h),
 * whose fields are the typed accessors every reader uses (the time model, the
 * report).
 *
 * The document is a cJSON tree owned by the caller (cJSON_Delete).  It starts
 * from a base: a bundled profile or a file (whose GPU, node and curves stand
 * until a measurement replaces them) or an empty skeleton.  Every added record
 * names a source added with mt_profile_add_source().  mt_profile_write()
 * validates the document with the same reader `megatune advise` uses
 * (perfmodel/cluster.h) and only then writes it atomically, so a failed import or
 * calibration never leaves a bad file nor replaces a good one.
 *
 * profile.c finds, loads and builds the document and calls nothing of
 * cluster.c (whose mt_cluster_load() finds profiles through it);
 * profile_validate.c holds the two functions that run the cluster reader,
 * mt_profile_cluster() and mt_profile_write().
 */
#ifndef MT_PROFILE_H
#define MT_PROFILE_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/stats.h"

struct mt_cluster;

/* A profile's JSON document as it is: a path or a bundled name (a name that
 * is not bundled is tried as a path). */
int mt_profile_load_json(const char *spec, cJSON **out, struct mt_error *err);

/* The same for `--cluster`: an unknown name is MT_EUSAGE listing the bundled
 * ones.  *file is the name messages use (the path, or the bundled file's). */
int mt_profile_read(const char *spec, cJSON **out, const char **file, struct mt_error *err);

/* Validate doc, loaded from spec, into a cluster (mt_cluster_from_json with
 * the file name mt_profile_read gives); the caller frees it. */
int mt_profile_cluster(const char *spec, const cJSON *doc, struct mt_cluster **out,
		       struct mt_error *err);

/* The base: `spec` a bundled name ("dgx-h100") or a path; NULL gives a
 * skeleton with schema, name and empty arrays (gpu and node must then be set
 * by the caller).  `name` replaces the base's name when not NULL. */
int mt_profile_new(const char *spec, const char *name, cJSON **doc, struct mt_error *err);

/* Add a provenance record (kind: measured, imported, spec, published,
 * derived).  An id already present is replaced. */
int mt_profile_add_source(cJSON *doc, const char *id, const char *kind, const char *citation);

/* The collective curve (op, span, ranks, per_node) from source `src`:
 * an existing curve with the same op, span, ranks and per_node is emptied and
 * reused (a measurement replaces what the base had), else a new one is
 * appended.  op is an mt_coll_name() ("all_reduce", ...), span "nvlink" or
 * "network".  Returns the curve object (owned by doc). */
cJSON *mt_profile_coll_curve(cJSON *doc, const char *op, const char *span, int ranks,
			     int per_node, const char *src);
/* Add a point (bytes as nccl-tests counts them) to a curve; a point of the
 * same size is replaced.  time_us <= 0 leaves it out; st may be NULL. */
void mt_profile_coll_point(cJSON *curve, double bytes, double busbw_gbps, double time_us,
			   const struct mt_stats *st);

/* Sections written by calibrate; each replaces an equal record of the base
 * (same dtype and shape, same head_dim/seq/causal, same direction/memory...). */
void mt_profile_gemm(cJSON *doc, const char *dtype, double m, double n, double k, double tflops,
		     const struct mt_stats *st, const char *src);
void mt_profile_attention(cJSON *doc, const char *dtype, int head_dim, int seq, int causal,
			  double fwd_tflops, double bwd_tflops, const char *src);
void mt_profile_offload(cJSON *doc, const char *direction, int pinned, int numa_local,
			int under_load, double gbps, const struct mt_stats *st, const char *src);
/* The object member `key` of doc, created (or replacing a non-object) when
 * missing; owned by doc. */
cJSON *mt_profile_object(cJSON *doc, const char *key);

/* Set one host field ("launch_overhead_us", "optimizer_gparams_per_s") */
void mt_profile_host(cJSON *doc, const char *key, double value, const char *src);
void mt_profile_memory_bandwidth(cJSON *doc, const char *kernel, double gbps, const char *src);
/* software.nccl / software.cuda ("2.28.9", "13.0"); NULL leaves it */
void mt_profile_software(cJSON *doc, const char *nccl, const char *cuda);
/* Name a slow GPU or link: {"what": what, "metric": metric, "value": v,
 * "median": med, "below_pct": pct} */
void mt_profile_outlier(cJSON *doc, const char *what, const char *metric, double value,
			double median, double below_pct);

/* The `corrections` section (replaced whole): the factors fitted by
 * `megatune calibrate --from-validation`, with their provenance (source
 * `src`, added by the caller with mt_profile_add_source()). */
struct mt_corr;
struct mt_profile_corr_run {
	const char *file, *name;  /* the validation file and the candidate's name */
	double measured_step_s, predicted_step_s, corrected_step_s;
	double measured_mem_bytes, predicted_mem_bytes; /* NAN: not measured */
};
/* A rank's memory report the memory fit matched (bytes; NAN: not printed) */
struct mt_profile_corr_mempt {
	const char *file, *name;  /* the validation file and the candidate's name */
	int rank, stage;
	double measured_max_allocated, predicted_max_allocated, corrected_max_allocated;
	double measured_max_reserved, predicted_reserved, corrected_reserved;
};
struct mt_profile_corr {
	const struct mt_corr *corr;               /* the factors and the memory term */
	const int *fitted;                        /* indices of the factors fitted */
	int nfitted;
	const int *dropped;                       /* factors left at 1, and why */
	const char *const *dropped_why;
	int ndropped;
	const struct mt_profile_corr_run *runs;
	int nruns, mem_runs;
	const char *fitted_at;                    /* ISO 8601 UTC */
	double rms_before, rms_after;             /* relative step error, in sample */
	double loo_before, loo_after;             /* leave-one-out mean |error|; NAN: n/a */
	double mem_loo_before, mem_loo_after;     /* NAN: n/a */
	/* the ranks' reports (npts > 0: step_memory_factor and its fit) */
	const struct mt_profile_corr_mempt *pts;
	int npts;
	double max_alloc_rms_before, max_alloc_rms_after;
	double max_alloc_loo_before, max_alloc_loo_after; /* NAN: n/a */
	const char *mem_step_why;                 /* why the factor stayed 1, or NULL */
};
void mt_profile_corrections(cJSON *doc, const struct mt_profile_corr *pc, const char *src);

/* Validate (perfmodel/cluster.c) and write atomically ("-": stdout).  Nothing is
 * written when validation fails; the message names `path` and the field. */
int mt_profile_write(const cJSON *doc, const char *path, struct mt_error *err);

#endif
