/* SPDX-License-Identifier: MIT */
/* trace_parser: the state of the streaming trace reader, private to profiler/trace.c
 * (yajl's callbacks, which fill it) and profiler/trace_io.c (the driver, which sets
 * it up and feeds yajl): the fields of the event being read (`struct acc`), the
 * stack of contexts, and the callbacks to hand yajl_alloc(). */
#ifndef MT_TRACE_PARSER_H
#define MT_TRACE_PARSER_H

#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_parse.h>

#include "trace.h"
#include "trace_guard.h"

#define MAXDEPTH 128
#define NAME_MAX_LEN 2048

enum cat {
	CAT_OTHER, CAT_KERNEL, CAT_MEMCPY, CAT_MEMSET, CAT_LAUNCH, CAT_ANNOT, CAT_GPU_ANNOT,
	CAT_SYNC,
};

struct acc {
	char ph;
	int cat;           /* enum cat (Kineto) */
	int t;             /* megatune record type: enum cat, or -1 none */
	int is_header, is_end;
	char name[NAME_MAX_LEN];
	size_t namelen;
	int has_ts, has_dur, has_start, has_end;
	int bad_time;      /* ts/dur/start/end null, not a number, or beyond int64 ns */
	int64_t ts, dur, start, end;
	int64_t pid, tid;
	int64_t corr, device, stream, rank, world;
	int64_t dev_plain;  /* megatune "dev" */
	int coll;
};

struct parser {
	struct mt_trace *t;
	const struct mt_trace_opts *o;
	int depth;
	unsigned char ctx[MAXDEPTH];
	unsigned char key[MAXDEPTH];
	int ntop;          /* top-level values seen */
	int scalar_top;    /* a top-level value was not an object or array */
	int oom;
	int second_doc;    /* a second JSON document after a Kineto trace */
	char bad_schema[40]; /* a megatune.trace/N this reader does not know */
	struct acc a;
	uint64_t props_hash;
	struct mt_guard guard;
};

static inline void acc_reset(struct acc *a)
{
	a->ph = 0;
	a->cat = CAT_OTHER;
	a->t = -1;
	a->is_header = a->is_end = 0;
	a->namelen = 0;
	a->name[0] = '\0';
	a->has_ts = a->has_dur = a->has_start = a->has_end = 0;
	a->bad_time = 0;
	a->ts = a->dur = a->start = a->end = 0;
	a->pid = a->tid = -1;
	a->corr = -1;
	a->device = a->stream = a->dev_plain = -1;
	a->rank = a->world = -1;
	a->coll = MT_TC_OTHER;
}

/* yajl's callbacks (trace.c); the context pointer is the struct parser. */
extern const yajl_callbacks mt_trace_callbacks;

#endif
