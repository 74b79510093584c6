/* SPDX-License-Identifier: MIT */
/* layout: Megatron-LM's pipeline layouts (--pipeline-model-parallel-layout),
 * read from a string, checked against a model and a pipeline size, built
 * balanced for a pipeline the layers do not divide evenly, and written back
 * as a string (docs/MODEL.md 4.6).
 *
 * The grammar is Megatron-Core's (megatron/core/transformer/
 * pipeline_parallel_layer_layout.py @ d98e8a6, parse_str_to_list): commas are
 * dropped; "(X)*N" repeats X (no ')' inside) N times, then "c*N" repeats one
 * character; '|' ends a model chunk; in a chunk 'E' is the embedding, 't' a
 * transformer layer, 'm' an MTP layer, 'L' the loss (output layer).  Chunks
 * are in Megatron's flat order: chunk j is on pipeline rank j % PP, virtual
 * stage j / PP.
 *
 * A struct mt_layout is a plain record (no pointers): it can be kept in a job
 * or a plan and copied.  Nothing here allocates.
 */
#ifndef MT_LAYOUT_H
#define MT_LAYOUT_H

#include <stddef.h>

#include "../lib/err.h"

struct mt_model;

#define MT_LAYOUT_MAX 256        /* model chunks (PP x VPP) a layout may have */
#define MT_LAYOUT_STR_MAX 256    /* longest layout string read or written */

struct mt_layout {
	int n;                       /* model chunks; 0: no layout */
	int layers, mtp;             /* 't' and 'm' symbols in all */
	int mtp_chunk;               /* the chunk holding the MTP layers; -1 none */
	int mtp_pos;                 /* position of the first 'm' in the string read; 0 none */
	unsigned short t[MT_LAYOUT_MAX]; /* transformer layers of each chunk */
	unsigned char m[MT_LAYOUT_MAX];  /* MTP layers of each chunk */
};

/* Read a layout string.  Checks what depends on the string alone: symbols,
 * repetition syntax, the number of chunks (at most MT_LAYOUT_MAX), 'E' first
 * and 'L' last, each exactly once (pipeline_parallel_layer_layout.py
 * validate_layer_layout).  Returns MT_OK, or MT_EUSAGE with a message naming
 * --pp-layout, the position (1-based, in the string as given) and what was
 * expected. */
int mt_layout_parse(const char *s, struct mt_layout *out, struct mt_error *err);

/* Check a read layout against a model and a pipeline size: the chunks a
 * multiple of pp (vpp > 0: exactly pp x vpp), the 't' symbols the model's
 * layers, the 'm' symbols its MTP depth (none for a model without MTP), all
 * MTP layers after the last 't', in one chunk, on the last virtual stage of
 * its rank (validate_layer_layout).  Returns MT_OK or MT_EUSAGE naming
 * --pp-layout and what was expected. */
int mt_layout_check(const struct mt_layout *l, const struct mt_model *m, int pp, int vpp,
		    struct mt_error *err);

/* Build the balanced layout of model m over pp x vpp chunks at sequence
 * length seq: the embedding, the layers in order, the MTP layers (one
 * group) and the loss cut into pp x vpp non-empty chunks so that the
 * heaviest chunk is as light as it can be, by the forward FLOPs per token
 * of each item (mt_layout_weight).  Returns 0, or -1 when there are more
 * chunks than items or pp x vpp > MT_LAYOUT_MAX. */
int mt_layout_balanced(const struct mt_model *m, int seq, int pp, int vpp, struct mt_layout *out);

/* The heaviest pipeline stage of a layout (its chunks' weights summed), in
 * the units of mt_layout_weight. */
double mt_layout_max_stage(const struct mt_model *m, int seq, const struct mt_layout *l, int pp);

/* Weights of the items, forward FLOPs per token: a transformer layer i
 * (dense or MoE), an MTP layer, the loss (output layer); the embedding 0. */
double mt_layout_weight_layer(const struct mt_model *m, int seq, int layer);
double mt_layout_weight_mtp(const struct mt_model *m, int seq);
double mt_layout_weight_loss(const struct mt_model *m);

/* The layout of a candidate whose split is MT_SPLIT_LAYOUT: the job's
 * pinned layout, else the balanced one (what the plan used).  Returns 0, or
 * -1 when there is none. */
struct mt_job;
int mt_layout_of(const struct mt_model *m, const struct mt_job *j, int pp, int vpp,
		 struct mt_layout *out);

/* Write a layout as a string Megatron reads back to the same chunks, runs of
 * equal chunks as "(X|)*N" and runs of a symbol as "t*N".  Returns the length,
 * or -1 when it does not fit in cap. */
int mt_layout_format(const struct mt_layout *l, char *buf, size_t cap);

#endif
