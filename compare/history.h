/* SPDX-License-Identifier: MIT */
/* history: the runs `megatune history add` stores, in one SQLite file.
 *
 * Schema version 1 (PRAGMA user_version; docs/FORMATS.md section 15): a
 * table `runs` (one row per added document: when, its kind, the file, a
 * label, host, GPU, driver, CUDA, NCCL and megatune versions) and a table
 * `metrics` (the figures of each run as compare/metrics.h reads them, raw
 * samples included).  The file is in WAL mode with a busy timeout; every
 * write is one IMMEDIATE transaction, so two processes adding runs at once
 * both succeed, one after the other.  A file that is not SQLite, or not a
 * megatune history, or of a newer schema version, is refused (MT_EINVAL).
 *
 * Only this file links SQLite (build/megatune alone): the runs it reads come
 * back as plain structs (compare/metrics.h sets), which compare and the
 * report take without knowing where they came from.
 */
#ifndef MT_COMPARE_HISTORY_H
#define MT_COMPARE_HISTORY_H

#include "../lib/err.h"
#include "metrics.h"

#define MT_HISTORY_VERSION 1

struct mt_history;

struct mt_hist_run {
	long long id;
	char added[32];           /* UTC, ISO 8601 */
	char kind[32];
	char label[256];
	char source[512];         /* the file added */
	struct mt_cm_env env;     /* host, GPU, versions as the document gave them */
	int nmetrics;
};

/* Open (create with `create`) the history at path. */
int mt_history_open(const char *path, int create, struct mt_history **out, struct mt_error *err);
void mt_history_close(struct mt_history *h);

/* Store a run: its metrics and environment (`megatune` defaults to this
 * build's version).  *id, when not NULL, is the new run's id.  A run the
 * history already holds (the same kind, host, GPU and creation time, and
 * every metric with the same value) is not stored twice: *dup, when not
 * NULL, is then that run's id and *id is left alone (0 otherwise). */
int mt_history_add(struct mt_history *h, const char *source, const char *label,
		   const struct mt_cm_set *s, long long *id, long long *dup, struct mt_error *err);

/* The runs, oldest first; filtered by kind, host and GPU when those are not
 * NULL; the last `last` of them when last > 0.  *runs is owned by the caller
 * (free()). */
int mt_history_list(struct mt_history *h, const char *kind, const char *host, const char *gpu,
		    int last, struct mt_hist_run **runs, int *n, struct mt_error *err);

/* A run's metrics (out owned by the caller: mt_cm_set_free), indexed. */
int mt_history_metrics(struct mt_history *h, long long id, struct mt_cm_set *out,
		       struct mt_error *err);

/* Delete runs: those with id in ids[0..nids), or, with keep > 0, all but the
 * newest `keep` of each (kind, host, GPU).  *removed counts them. */
int mt_history_prune(struct mt_history *h, const long long *ids, int nids, int keep,
		     int *removed, struct mt_error *err);

#endif
