/* SPDX-License-Identifier: MIT */
/* cluster_int: what the profile reader (perfmodel/cluster.c) asks of
 * perfmodel/curves.c once it has read a profile's sections; private to those
 * two files.  The lookups in the curves are cluster.h's. */
#ifndef MT_CLUSTER_INT_H
#define MT_CLUSTER_INT_H

#include "../lib/err.h"
#include "cluster.h"

/* The GEMM curve of each dtype from c->gemm (sorted by size, in log space,
 * one point a size), those of the dtypes the GPU has but the profile did not
 * measure derived from a measured one, and each curve's sustained rate.
 * Returns MT_OK, MT_ENOMEM, or MT_EINVAL (file names it) when no bf16, fp16
 * or fp8 point is measured and fp32 alone has no peak. */
int mt_cluster_prepare_gemm(struct mt_cluster *c, const char *file, struct mt_error *err);

/* Each collective curve's points in log space, its peak bus bandwidth and
 * the latency fit of its first two points. */
void mt_cluster_prepare_coll(struct mt_cluster *c);

#endif
