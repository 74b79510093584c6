/* SPDX-License-Identifier: MIT */
/* trace: a streaming reader for GPU traces of one process (one rank).
 *
 * Reads, plain or gzipped (zlib detects which):
 *   - PyTorch profiler (Kineto) Chrome traces: a top-level object with
 *     `traceEvents`, or a bare array of events; old and new timestamp bases
 *     (`baseTimeNanoseconds`), integer or ns-resolution float `ts`, string
 *     pids and `"stream 7"` tids, capitalised pre-1.10 categories, missing or
 *     partial `distributedInfo`;
 *   - megatune.trace/1 JSON Lines, written by libmegatune_trace.so.
 *
 * The file is parsed with yajl in 256 KiB chunks and never held whole: only
 * the records the analysis needs are kept, compactly (about 40 bytes per GPU
 * event, 32 per launch call; names interned once).  Times are integer
 * nanoseconds: Kineto's microsecond decimals are converted exactly (no
 * floating point), so "1.5015" us is 1502 ns (round half to even).
 *
 * Ownership: mt_trace_read() allocates *out; free it with mt_trace_free().
 * Errors (unreadable, empty, truncated, not JSON, no GPU activity at all is NOT
 * an error) name the file and the byte offset and return MT_EIO/MT_EPARSE.
 */
#ifndef MT_TRACE_H
#define MT_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../lib/err.h"

enum mt_gpu_kind { MT_GK_KERNEL, MT_GK_MEMCPY, MT_GK_MEMSET };

/* The collective a communication kernel or its metadata names. */
enum mt_tcoll {
	MT_TC_OTHER, MT_TC_ALLREDUCE, MT_TC_ALLGATHER, MT_TC_REDUCESCATTER,
	MT_TC_ALLTOALL, MT_TC_SENDRECV, MT_TC_BROADCAST, MT_TC_REDUCE, MT_TC_N
};

/* What one trace may hold in memory (the footprint stays bounded whatever
 * the input; what is past a cap is counted, never silently lost): 2^21
 * records of each kind (GPU events, launches, ranges: about 40 to 48 bytes
 * each) and 64 MiB of distinct names.  A GPU event lasting more than an hour
 * is a broken timestamp, not a kernel. */
#define MT_TRACE_MAX_EVENTS ((size_t)1 << 21)
#define MT_TRACE_MAX_NAME_BYTES ((size_t)64 << 20)
#define MT_TRACE_MAX_DUR_NS (3600LL * 1000000000LL)

struct mt_gpu_ev {
	int64_t start, end;   /* ns */
	int64_t corr;         /* CUPTI correlation id; -1 when absent */
	uint32_t name;        /* interned name id */
	int32_t stream;
	int16_t device;
	uint8_t kind;         /* enum mt_gpu_kind */
	uint8_t coll;         /* enum mt_tcoll from args "Collective name" (NONE if absent) */
};

/* A CPU launch call (cuda_runtime / cuda_driver). */
struct mt_launch {
	int64_t corr;
	int64_t ts, end;      /* ns */
	int64_t pid, tid;
	uint32_t name;
	uint8_t driver;       /* cuda_driver rather than cuda_runtime */
};

/* A CPU range: ProfilerStep#N / iteration NVTX ranges, and all-to-all annotations. */
struct mt_range {
	int64_t ts, end;      /* ns */
	int64_t pid, tid;
	int64_t num;          /* the step number (N of ProfilerStep#N), -1 if none */
	uint32_t name;
};

/* A GPU user annotation (record_function projected on a stream). */
struct mt_gpu_annot {
	int64_t start, end;
	uint32_t name;
	int32_t stream;
	int16_t device;
};

struct mt_trace {
	char *path;
	int format;               /* MT_TRACE_KINETO or MT_TRACE_MEGATUNE */
	int64_t rank, world_size; /* -1 when the trace does not say */
	int64_t base_ns;          /* baseTimeNanoseconds (0 if absent): add for epoch time */
	char *gpu_name;           /* first deviceProperties entry / header; NULL if absent */
	int ndevice_props;        /* entries in deviceProperties */
	uint64_t device_props_hash; /* hash of the whole deviceProperties listing */
	int64_t dropped;          /* records the tracer says it dropped (megatune format) */
	int has_end;              /* megatune format: the end record was written */
	int cut_short;            /* megatune format: the last line was cut short (kept the rest) */
	uint64_t bytes;           /* uncompressed bytes parsed */
	/* GPU events (kernel, memcpy, memset) left out while reading, by reason;
	 * the analysis adds them to its left_out */
	size_t bad_time;          /* ts/dur (start/end) null, not a number, beyond int64 ns */
	size_t bad_order;         /* ends before it starts (negative dur, end < start) */
	size_t bad_long;          /* lasts more than MT_TRACE_MAX_DUR_NS */
	size_t over_cap;          /* past MT_TRACE_MAX_EVENTS GPU events */
	size_t over_cap_other;    /* launches and ranges past MT_TRACE_MAX_EVENTS */
	size_t strings_cut;       /* strings or keys cut at MT_TRACE_MAX_STR (trace_guard.h) */
	size_t names_capped;      /* events whose new name was past MT_TRACE_MAX_NAME_BYTES */

	struct mt_gpu_ev *gpu;   size_t ngpu, capgpu;
	struct mt_launch *launch; size_t nlaunch, caplaunch;   /* sorted by corr after reading */
	struct mt_range *step;   size_t nstep, capstep;
	struct mt_range *a2a;    size_t na2a, capa2a;
	struct mt_gpu_annot *annot; size_t nannot, capannot;
	struct mt_range *nvtx;   size_t nnvtx, capnvtx;     /* megatune format: every NVTX range */
	size_t nsync;             /* cuda_sync / sync records seen (not GPU work) */

	/* interned strings: ids index `str_off` into `strs` */
	char *strs;          size_t nstrs_bytes, capstrs;
	uint32_t *str_off;   uint32_t nstr, capstr_off;
	uint32_t *hash;      uint32_t hashcap; /* open addressing: id+1, 0 = empty */
};

enum { MT_TRACE_KINETO = 1, MT_TRACE_MEGATUNE = 2 };

/* Options for reading. `step_prefixes` (NULL-terminated, may be NULL) name CPU
 * ranges (user annotations or NVTX) taken as iterations besides
 * "ProfilerStep#N". */
struct mt_trace_opts {
	const char *const *step_prefixes;
};

int mt_trace_read(const char *path, const struct mt_trace_opts *o, struct mt_trace **out,
		  struct mt_error *err);
/* Same, from a memory buffer (fuzzing, tests); `name` is used in messages. */
int mt_trace_read_mem(const char *name, const void *data, size_t len,
		      const struct mt_trace_opts *o, struct mt_trace **out, struct mt_error *err);
void mt_trace_free(struct mt_trace *t);

static inline const char *mt_trace_str(const struct mt_trace *t, uint32_t id)
{
	return t->strs + t->str_off[id];
}

/* The launch call of correlation id `corr`, or NULL. */
const struct mt_launch *mt_trace_launch(const struct mt_trace *t, int64_t corr);

/* Write the trace as Chrome trace JSON (Perfetto, chrome://tracing): GPU
 * events on pid = device, tid = stream; launch calls and NVTX ranges on the
 * process's threads; names as read.  Returns 0 or -1 (a write error). */
int mt_trace_write_chrome(const struct mt_trace *t, FILE *f);

/* Parse a decimal number of microseconds ("12.3456", "-1", "1e3") into integer
 * ns, rounding half to even; returns 0 or -1 when it is not a number. */
int mt_us_to_ns(const char *s, size_t n, int64_t *ns);

const char *mt_tcoll_name(enum mt_tcoll c);

/* The collective a kernel name or a "Collective name" argument names
 * ("ncclDevKernel_AllGather_RING_LL", "reduce_scatter", "all_to_allv", ...). */
enum mt_tcoll mt_tcoll_of(const char *s, size_t n);

/* 1 when s[0..n) contains the lower-case `needle`, ignoring ASCII case. */
int mt_ci_contains(const char *s, size_t n, const char *needle);

#endif
