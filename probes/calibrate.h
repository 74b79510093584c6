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
#include "probe.h"
#include "topology.h"

/* Read a results file: the head record (*head, caller deletes) and the
 * measurement records as a cJSON array (*records, caller deletes).  A last
 * line cut short by a killed run is dropped (*truncated = 1); a malformed
 * line elsewhere is an error naming the file and the line. */
int mt_results_read(const char *path, cJSON **head, cJSON **records, int *truncated,
		    struct mt_error *err);

/* 1 when `records` already has a measurement of probe `p`, case label `label`
 * (for --resume: done cases are not measured again). */
int mt_results_has(const cJSON *records, const char *probe, const char *label);

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

/* Build the profile from the records. */
int mt_calibrate_profile(const cJSON *records, const struct mt_calib_info *info, cJSON **doc,
			 struct mt_error *err);

#endif
