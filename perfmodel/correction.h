/* SPDX-License-Identifier: MIT */
/* correction: factors fitted from measured runs (`megatune calibrate
 * --from-validation`, docs/MODEL.md section 10) that the time and memory
 * model applies, read from a profile's `corrections` section
 * (docs/FORMATS.md section 2; perfmodel/profile.c writes it).
 *
 * Each time factor multiplies the time the measured curves give for one
 * class of work: GEMMs by size (the cube root of m n k from
 * MT_CORR_LARGE_GEMM up is "large"), collectives other than all-to-all and
 * all-to-all, each inside one NVLink domain or across domains.  The step
 * memory factor multiplies what a stage allocates inside a step (activations,
 * logits, the largest transient, the MoE dispatch buffers: max allocated less
 * allocated, and the fragmentation that follows them); the memory term is
 * added to every stage's reserved memory and total.  A profile without the
 * section (on = 0) changes nothing: every factor reads 1 and the term 0.
 */
#ifndef MT_CORRECTION_H
#define MT_CORRECTION_H

#include <cjson/cJSON.h>

#include "../lib/err.h"

enum mt_corr_factor {
	MT_CORR_GEMM_LARGE,
	MT_CORR_GEMM_SMALL,
	MT_CORR_COLL_NVLINK,    /* all-reduce, all-gather, reduce-scatter, send/recv, broadcast */
	MT_CORR_COLL_NETWORK,
	MT_CORR_A2A_NVLINK,
	MT_CORR_A2A_NETWORK,
	MT_CORR_N
};

#define MT_CORR_LARGE_GEMM 4096.0 /* cbrt(m n k) at and above which a GEMM is large */
#define MT_CORR_MIN 0.05          /* a factor outside [MIN, MAX] is refused */
#define MT_CORR_MAX 20.0
#define MT_CORR_RUNS 32        /* runs of the fit a profile keeps for the report */

struct mt_corr {
	int on;                   /* the profile has a corrections section */
	double f[MT_CORR_N];      /* time multipliers (1: none) */
	double mem_step;          /* multiplies the memory allocated inside a step (1: none) */
	double mem_bytes;         /* added to the reserved memory and total of every stage */
	char note[512];           /* provenance in words, for the explanation */
	/* the fit's residuals as the profile records them (for the report) */
	double loo_before, loo_after; /* leave-one-out mean |relative error|; NAN unknown */
	int nruns;                /* runs[] kept, at most MT_CORR_RUNS */
	struct mt_corr_run {
		char name[64];
		double measured_s, predicted_s, corrected_s;
	} runs[MT_CORR_RUNS];
};

/* "gemm_large", ... (the profile's keys); NULL out of range. */
const char *mt_corr_name(int i);
/* The index of a name, -1 when unknown. */
int mt_corr_parse(const char *s);

/* No correction: on = 0, factors 1, term 0. */
void mt_corr_init(struct mt_corr *k);

/* Read the `corrections` member of profile `root` (absent: no correction).
 * MT_EINVAL names `file`, the field and what was expected. */
int mt_corr_read(const cJSON *root, const char *file, struct mt_corr *out, struct mt_error *err);

/* The multiplier of a GEMM's time, and of a collective's (`op` an enum
 * mt_coll; across domains when per_domain < nranks).  1 when off. */
double mt_corr_gemm(const struct mt_corr *k, double m, double n, double kk);
double mt_corr_coll(const struct mt_corr *k, int op, int nranks, int per_domain);

/* The step memory factor, 1 when off. */
double mt_corr_mem_step(const struct mt_corr *k);

/* One line for the explanation when on ("model corrected by calibrate
 * --from-validation: gemm_large x1.200, ...; step memory x1.072, memory
 * +2.00 GiB: <note>"),
 * nothing when off. */
struct sbuf;
void mt_corr_text(struct sbuf *sb, const struct mt_corr *k);

#endif
