/* SPDX-License-Identifier: MIT */
/* metrics: the figures `megatune compare` compares, taken from any document
 * megatune reads, one table entry per document kind (compare/kinds.c).
 *
 * A metric has an identity (`id`: what it is, never where it was in the
 * file: probe, case, rank; collective, span, ranks, size, placement;
 * configuration), a display name, a unit, its direction (lower or higher is
 * better), its central value (a median where samples exist) and the noise
 * the document measured for it: raw samples, else a coefficient of
 * variation over n repeats, else a relative spread the kind estimates from
 * the document itself (docs/FORMATS.md section 14).
 *
 * Ownership: a set owns every string and array in it (mt_cm_set_free).
 * Library code: nothing here prints or exits.
 */
#ifndef MT_COMPARE_METRICS_H
#define MT_COMPARE_METRICS_H

#include <stddef.h>

#include "../lib/err.h"

struct mt_cm_metric {
	char *id;           /* identity, unique in a set */
	char *name;         /* for people */
	const char *unit;   /* static string */
	int higher_better;  /* 1 bandwidth, throughput; 0 time */
	double value;       /* the median, or the single figure */
	double cv;          /* coefficient of variation of one sample; NAN unknown */
	int n;              /* repeats behind cv (0: a single figure) */
	double spread;      /* relative noise of `value` estimated by the kind; NAN none */
	double *samples;    /* raw samples, NULL when the document has none */
	int nsamples;
	int round;          /* the record's round (calibrate --rounds), 0 none */
	double *rounds;     /* after mt_cm_merge_rounds: each round's median */
	int nrounds;
	double canary;      /* the core's canary time before the case (us; the
			     * rounds' median), 0 none: compare.h */
	int canary_ix;      /* its rank's canary times in the set's canaries[],
			     * -1 none */
	int compute_bound;  /* CPU backend gemm or attention: bound by the
			     * core's arithmetic, which the canary times */
};

/* Every canary time of one rank in a document (all cases, all rounds). */
struct mt_cm_canary {
	double rank;        /* the record's rank, -1 for all ranks */
	double *v;          /* reordered by mt_cm_canary_medians() */
	int n, cap;
	double median;      /* of v[0..n), 0 until mt_cm_canary_medians() */
};

/* What the document says about where it ran; "" when it does not say. */
struct mt_cm_env {
	char host[128], gpu[128], driver[48], cuda[48], nccl[48], megatune[48], created[40];
};

struct mt_cm_set {
	const char *kind;   /* the kind's name ("result", "nccl-tests", ...) */
	struct mt_cm_env env;
	struct mt_cm_metric *m;
	int n, cap;
	int *order;         /* internal: indices sorted by id (mt_cm_index) */
	struct mt_cm_canary *canaries; /* per rank, NULL when no record has one */
	int ncanaries, capcanaries;
};

/* The kinds `megatune compare` reads, each one entry of a table. */
struct mt_cm_kind {
	const char *name;    /* "result", "profile", ... */
	const char *schema;  /* the JSON schema it owns, NULL for text formats */
	/* text formats: does this text look like the tool's output? */
	int (*sniff)(const char *path, const char *text, size_t len);
	/* fill `out` (empty, kind already set) from the file at `path`, whose
	 * contents are text[0..len) */
	int (*extract)(const char *path, const char *text, size_t len, struct mt_cm_set *out,
		       struct mt_error *err);
};

/* The table, ending with a NULL name. */
extern const struct mt_cm_kind mt_cm_kinds[];

/* Read any supported document into `out` (owned by the caller, free it with
 * mt_cm_set_free even on error).  MT_EIO when unreadable, MT_EINVAL naming
 * the file when it is no kind megatune compares (or a JSON schema it does not
 * know, or a newer version of a known one). */
int mt_cm_load(const char *path, struct mt_cm_set *out, struct mt_error *err);

/* The same for the contents text[0..len) of the file named `path` (used to
 * find the kind, in messages, and by kinds that read names from it). */
int mt_cm_parse(const char *path, const char *text, size_t len, struct mt_cm_set *out,
		struct mt_error *err);

/* Append a metric (strings copied; samples copied when nsamples > 0).
 * Returns the metric or NULL when out of memory.  An id already in the set
 * gets " #2", " #3"... so that identities stay unique. */
struct mt_cm_metric *mt_cm_add(struct mt_cm_set *s, const char *id, const char *name,
			       const char *unit, int higher_better, double value);
int mt_cm_set_samples(struct mt_cm_metric *m, const double *x, int n);

/* Record a canary time of `rank` in the set; the index of its rank's entry,
 * or -1 when out of memory. */
int mt_cm_add_canary(struct mt_cm_set *s, double rank, double us);

/* Once every canary time of the document is in: each rank's median, the
 * machine's speed over the whole run (the times are reordered). */
void mt_cm_canary_medians(struct mt_cm_set *s);

/* Metrics of one id measured in several rounds (round > 0) become one: its
 * `rounds` the rounds' medians in round order, its value their median, its
 * samples all the rounds' samples (cv and n unset: the rounds' spread is
 * the noise, compare.h).  Metrics without rounds are left as they are.
 * MT_OK or MT_ENOMEM. */
int mt_cm_merge_rounds(struct mt_cm_set *s);

/* Sort the lookup index (after the last mt_cm_add); then find by id, or -1. */
int mt_cm_index(struct mt_cm_set *s);
int mt_cm_find(const struct mt_cm_set *s, const char *id);

void mt_cm_set_free(struct mt_cm_set *s);

/* The static spelling of a unit the kinds use ("us", "GB/s", ...), or "?"
 * (for sets read back from a history). */
const char *mt_cm_unit(const char *s);

/* Bytes as nccl-tests and megatune print sizes: "8 B", "64 KiB", "1.5 MiB". */
const char *mt_cm_size(char *buf, size_t cap, double bytes);

#endif
