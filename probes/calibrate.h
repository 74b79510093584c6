/* SPDX-License-Identifier: MIT */
/* calibrate: from probe results (`megatune.result/1` records) to a
 * `megatune.profile/1`, with the outliers across GPUs and nodes named.
 *
 * `megatune calibrate` appends every record to a results file as it comes, so
 * an interrupted pass keeps what it measured; the profile is then built from
 * the whole file (old and new records alike), which is also how `--resume`
 * works.  The functions here read records as cJSON objects, so they are
 * tested on synthetic records without running a probe.
 */
#ifndef MT_CALIBRATE_H
#define MT_CALIBRATE_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/stats.h"
#include "../perfmodel/cluster.h"
#include "probe.h"
#include "topology.h"

/* Read a results file: the head record (*head, caller deletes) and the
 * measurement records as a cJSON array (*records, caller deletes).  A last
 * line cut short by a killed run (or NUL bytes at the end) is dropped
 * (*truncated = 1); damage followed by valid records is an error naming the
 * file, the line and the byte offset (mt_results_load()). */
int mt_results_read(const char *path, cJSON **head, cJSON **records, int *truncated,
		    struct mt_error *err);

/* What mt_results_load() found damaged in a results file: lines that are
 * not a JSON record (NUL bytes a crash left, a cut or garbled line). */
struct mt_results_damage {
	long long good_len;   /* bytes up to the end of the last record before any damage */
	long long first_off;  /* byte offset of the first damaged line; -1: none */
	int first_line;       /* its line number (1-based) */
	int dropped;          /* damaged lines */
	int valid_after;      /* a valid record follows damage (not just a cut tail) */
	int nul;              /* the damage holds NUL bytes */
	int records;          /* measurement records kept */
};

/* Read and validate a results file.  Damage only at the tail (after the last
 * valid record) is described in *d and the records before it returned: the
 * caller cuts the file to d->good_len.  Damage followed by valid records is
 * an error naming the line and byte offset, unless `repair`: then every
 * valid record is returned and, when `kept` is given, their lines appended
 * to it verbatim (to rewrite the file). */
struct sbuf;
int mt_results_load(const char *path, int repair, cJSON **head, cJSON **records,
		    struct mt_results_damage *d, struct sbuf *kept, struct mt_error *err);

/* 1 when `records` already has a measurement of probe `p`, case label `label`
 * in round `round` (a record without "round" is round 1; round < 1 means 1):
 * for --resume, done cases are not measured again. */
int mt_results_has(const cJSON *records, const char *probe, const char *label, int round);

/* A results file of several rounds (calibrate --rounds) reduced to one
 * record per measurement (probe, label, host, rank, device): the round with
 * the median time (the lower median; a round that failed only when all did).
 * Without rounds every record is kept.  The profile and the outliers are
 * built from this, so rounds do not count as extra ranks.  A new array (the
 * caller deletes it), NULL when out of memory. */
cJSON *mt_results_one_round(const cJSON *records);

/* What calibrate knows beyond the records. */
struct mt_calib_info {
	int backend;                  /* enum mt_backend */
	const struct mt_host_info *hosts;
	int nhosts;
	int ranks, ranks_per_node;
	const struct mt_topo *topo;   /* NULL without a GPU (CPU backend) */
	const char *name;             /* profile name */
	const char *nccl, *cuda;      /* versions, NULL when unknown */
	double margin_pct;            /* outlier margin, e.g. 10 */
	const char *when;             /* ISO date of the pass */
};

/* An outlier: what, metric, its value, the median of its peers, how far below. */
struct mt_outlier {
	char what[160];
	char metric[96];
	double value, median, below_pct;
};

/* Compare each per-rank measurement with its peers (same probe and case on
 * the other ranks): a rate more than margin_pct below the median of all
 * ranks is an outlier.  Needs at least 3 ranks per case, except that two
 * ranks suffice when they are on different hosts.  Returns the count; fills
 * at most `max` into out (heap by the caller). */
int mt_find_outliers(const cJSON *records, double margin_pct, struct mt_outlier *out, int max);

/* The profile being built, as a probe's to_profile() sees it (probes/probe.h).
 * The records are grouped by probe and case label (usable ones only:
 * verified, with times); groups are in file order of their first record,
 * members in file order.  The figures below start at 0; probes raise them,
 * and the device and node sections are built from them after the groups. */
struct mt_calib {
	cJSON *doc;                   /* the megatune.profile/1 being built */
	const char *src;              /* the source id of measured values */
	const struct mt_calib_info *info;
	double best_tflops[MT_DT_N];  /* best rate per dtype: an unknown device's peaks */
	double membw_gbps;            /* host memory bandwidth (STREAM triad) */
	double nvlink_busbw;          /* best all-reduce busbw inside an NVLink domain */
	double net_busbw;             /* best all-reduce busbw across domains */
	const void *groups;           /* the grouping (calibrate.c's own) */
};

int mt_calib_groups(const struct mt_calib *b);            /* how many groups */
int mt_calib_size(const struct mt_calib *b, int g);       /* records of group g */
/* Record j of group g (0: the first in file order), and the "case" object
 * of its first record. */
const cJSON *mt_calib_record(const struct mt_calib *b, int g, int j);
const cJSON *mt_calib_case(const struct mt_calib *b, int g);
/* Across the ranks of group g: the median of the ranks' median rates, with
 * the spread kept (n summed, min and max over all ranks, p95 the slowest
 * bound, cv the largest); *time_med the median of the ranks' median times.
 * MT_OK, or MT_ENOMEM with the reason in err. */
int mt_calib_aggregate(const struct mt_calib *b, int g, struct mt_stats *st, double *time_med,
		       struct mt_error *err);

/* Build the profile from the records: each group goes to its probe's
 * to_profile(), then the device, node, software and outliers sections. */
int mt_calibrate_profile(const cJSON *records, const struct mt_calib_info *info, cJSON **doc,
			 struct mt_error *err);

#endif
