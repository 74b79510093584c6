/* SPDX-License-Identifier: MIT */
/* flagtable: the upstream releases that accept each Megatron-LM flag and
 * Megatron-Bridge override path megatune prints (the data, with its sources,
 * is job/flagtable.def), and the rewriting of a list for a chosen release.
 *
 * A release is named by its index among the releases of its kind, oldest
 * first; mt_release_resolve turns the job's setting (0: the newest) into one.
 * Nothing here allocates.
 */
#ifndef MT_FLAGTABLE_H
#define MT_FLAGTABLE_H

#include "../perfmodel/config.h"

enum mt_flag_kind { MT_FLAG_MEGATRON, MT_FLAG_BRIDGE };

/* How a value moves to the older spelling (flagtable.def). */
enum mt_flag_conv { MT_CONV_SAME, MT_CONV_LAYERS_PER_STAGE, MT_CONV_BARE };

struct mt_flag_row {
	int kind;               /* enum mt_flag_kind */
	const char *name;       /* flag without "--", or override path */
	const char *first;      /* first release that accepts it */
	const char *last;       /* last release, "" while the newest does */
	const char *older;      /* spelling before `first`, "" none */
	int conv;               /* enum mt_flag_conv */
	const char *source;     /* file@tag where `first` defines it */
	const char *source_new; /* file@tag at the newest release, "" the same */
};

/* The table, in the order of flagtable.def. */
const struct mt_flag_row *mt_flag_rows(int *n);

/* The row of a name of a kind, or NULL. */
const struct mt_flag_row *mt_flag_find(int kind, const char *name);

/* Releases of a kind, oldest first: the count, and the name of index i
 * (NULL out of range; a fork's from the count on). */
int mt_release_count(int kind);
const char *mt_release_name(int kind, int i);

/* Forks of a kind (flagtable.def MT_FORK: LoongForge's Megatron-LM), indexed
 * after the releases: mt_release_count(kind) + f.  A fork accepts what its
 * base release accepts and its own rows; the base of index i, or NULL when
 * i is a release. */
int mt_release_forks(int kind);
const char *mt_release_fork_base(int kind, int i);

/* 1 when the job's --megatron-version is LoongForge's fork: its flags are
 * spelled as LoongForge runs them (job/flags.c, job/launch.h). */
int mt_job_loongforge(const struct mt_job *j);

/* The index of a release name, or -1.  Accepted: the name itself
 * ("core_v0.14.0", "v0.5.0") or its number ("0.14.0", "0.14"). */
int mt_release_find(int kind, const char *name);

/* A job's setting (struct mt_job megatron_version / bridge_version: 0 the
 * newest, else index + 1) as an index. */
int mt_release_resolve(int kind, int setting);

/* Whether release index `rel` accepts the row: 1 yes, 0 no. */
int mt_flag_accepts(const struct mt_flag_row *r, int rel);

/* Rewrite a list of n items (struct mt_kv) in place for release
 * `rel`: a name the release does not accept takes its older spelling where
 * that one is accepted (the value converted), or becomes a note saying which
 * release it needs ("--foo needs Megatron-LM >= core_v0.x.0").  Names not in
 * the table and notes pass through.  For the newest release every row of
 * the table is accepted and the list is unchanged.  Returns n. */
int mt_flags_for_release(int kind, int rel, struct mt_kv *o, int n);

#endif
