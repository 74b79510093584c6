/* SPDX-License-Identifier: MIT */
/* trace: streaming reader of Kineto Chrome traces and megatune.trace/1 files.
 *
 * yajl calls us back for every token; a small stack of contexts (one per
 * nesting level) says what the current container is (the top object, the
 * traceEvents array, an event, its args, distributedInfo, deviceProperties,
 * or something we skip), and the fields of the event being read accumulate
 * in `struct acc` until its closing brace, when the event is kept or dropped.
 * The driver that feeds it (a file, gzipped or not, or memory), the look-up of a
 * launch, freeing and the Chrome writer are trace_io.c; the parser's state,
 * trace_parser.h.
 */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "../lib/num.h"
#include "trace_guard.h"
#include "trace_parser.h"

enum ctx { C_SKIP, C_TOP, C_EVENTS, C_EVENT, C_ARGS, C_DINFO, C_DPROPS, C_DPROP };

/* Keys we read; everything else is K_OTHER. */
enum key {
	K_OTHER, K_TRACEEVENTS, K_DINFO, K_DPROPS, K_BASETIME, K_SCHEMA,
	K_PH, K_CAT, K_NAME, K_PID, K_TID, K_TS, K_DUR, K_ARGS,
	K_CORR, K_DEVICE, K_STREAM, K_COLL, K_RANK, K_WORLD, K_NUMSMS,
	K_T, K_START, K_END, K_DEV, K_DROPPED,
};

/* ------------------------------------------------------------------ strings */

static uint32_t fnv(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static int rehash(struct mt_trace *t, uint32_t cap)
{
	uint32_t *nh = calloc(cap, sizeof(*nh));
	uint32_t i;

	if (!nh)
		return -1;
	for (i = 0; i < t->nstr; i++) {
		const char *s = t->strs + t->str_off[i];
		uint32_t j = fnv(s, strlen(s)) & (cap - 1);
		while (nh[j])
			j = (j + 1) & (cap - 1);
		nh[j] = i + 1;
	}
	free(t->hash);
	t->hash = nh;
	t->hashcap = cap;
	return 0;
}

static uint32_t intern_one(struct mt_trace *t, const char *s, size_t n, size_t limit);

/* Intern s[0..n); returns the id or UINT32_MAX when out of memory.  Past
 * MT_TRACE_MAX_NAME_BYTES of distinct names, new names share one id
 * ("(name past the reader's cap)"), counted in names_capped. */
static uint32_t intern(struct mt_trace *t, const char *s, size_t n)
{
	static const char capped[] = "(name past the reader's cap)";

	if (t->nstrs_bytes + n + 1 > MT_TRACE_MAX_NAME_BYTES) {
		uint32_t id = intern_one(t, s, n, MT_TRACE_MAX_NAME_BYTES);

		if (id != UINT32_MAX - 1)
			return id; /* a name already known */
		t->names_capped++;
		return intern_one(t, capped, sizeof(capped) - 1, SIZE_MAX);
	}
	return intern_one(t, s, n, SIZE_MAX);
}

/* Intern s[0..n); UINT32_MAX when out of memory; an unknown name that
 * would take the strings past `limit` bytes is not added: UINT32_MAX - 1. */
static uint32_t intern_one(struct mt_trace *t, const char *s, size_t n, size_t limit)
{
	uint32_t h = fnv(s, n), j;

	if (t->nstr * 2 + 2 >= t->hashcap && rehash(t, t->hashcap ? t->hashcap * 2 : 1024))
		return UINT32_MAX;
	for (j = h & (t->hashcap - 1); t->hash[j]; j = (j + 1) & (t->hashcap - 1)) {
		const char *o = t->strs + t->str_off[t->hash[j] - 1];
		if (!strncmp(o, s, n) && o[n] == '\0')
			return t->hash[j] - 1;
	}
	if (t->nstrs_bytes + n + 1 > limit)
		return UINT32_MAX - 1;
	if (t->nstrs_bytes + n + 1 > t->capstrs) {
		size_t cap = t->capstrs ? t->capstrs * 2 : 65536;
		char *p;
		while (cap < t->nstrs_bytes + n + 1)
			cap *= 2;
		if (cap > UINT32_MAX || !(p = realloc(t->strs, cap)))
			return UINT32_MAX;
		t->strs = p;
		t->capstrs = cap;
	}
	if (t->nstr == t->capstr_off) {
		uint32_t cap = t->capstr_off ? t->capstr_off * 2 : 1024;
		uint32_t *p = realloc(t->str_off, (size_t)cap * sizeof(*p));
		if (!p)
			return UINT32_MAX;
		t->str_off = p;
		t->capstr_off = cap;
	}
	memcpy(t->strs + t->nstrs_bytes, s, n);
	t->strs[t->nstrs_bytes + n] = '\0';
	t->str_off[t->nstr] = (uint32_t)t->nstrs_bytes;
	t->nstrs_bytes += n + 1;
	t->hash[j] = t->nstr + 1;
	return t->nstr++;
}

/* Grow a vector of `size`-byte items to hold one more; 0 or -1. */
static int trace_grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t nc;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 1024;
	p = realloc(*v, nc * size);
	if (!p)
		return -1;
	*v = p;
	*cap = nc;
	return 0;
}

/* One more record of a vector: NULL past MT_TRACE_MAX_EVENTS (counted in
 * over_cap: the footprint stays bounded) or when out of memory (p->oom). */
#define PUSH(p, vec, n, cap) \
	((p)->t->n >= MT_TRACE_MAX_EVENTS ? ((p)->t->over_cap_other++, (void *)0) : \
	 trace_grow((void **)&(p)->t->vec, &(p)->t->cap, (p)->t->n, sizeof(*(p)->t->vec)) ? \
		 ((p)->oom = 1, (void *)0) : (void *)&(p)->t->vec[(p)->t->n++])

/* ------------------------------------------------------------------ numbers */

int mt_us_to_ns(const char *s, size_t n, int64_t *ns)
{
	size_t i = 0;
	int neg = 0, digits = 0;
	int64_t ip = 0, frac = 0;
	int nf = 0, round_digit = -1, sticky = 0;

	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (ip > (INT64_MAX / 1000 - 9) / 10)
			return -1;
		ip = ip * 10 + (s[i] - '0');
	}
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
			if (nf < 3) {
				frac = frac * 10 + (s[i] - '0');
				nf++;
			} else if (round_digit < 0) {
				round_digit = s[i] - '0';
			} else if (s[i] != '0') {
				sticky = 1;
			}
		}
	}
	if (!digits)
		return -1;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		char buf[64];
		double d;
		if (n >= sizeof(buf))
			return -1;
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (mt_parse_num(buf, &d) || d * 1000.0 > 9.2e18 || d * 1000.0 < -9.2e18)
			return -1;
		*ns = (int64_t)(d * 1000.0 + (d >= 0 ? 0.5 : -0.5));
		return 0;
	}
	if (i != n)
		return -1;
	while (nf < 3) {
		frac *= 10;
		nf++;
	}
	{
		int64_t v = ip * 1000 + frac;
		if (round_digit > 5 || (round_digit == 5 && (sticky || (v & 1))))
			v++;
		*ns = neg ? -v : v;
	}
	return 0;
}

/* An integer time in ns (megatune.trace/1), digits read whole: CUPTI's epoch
 * clock (about 1.8e18 ns) must not be scaled by 1000 (else the decimal reader) */
static int parse_int(const char *s, size_t n, int64_t *v)
{
	size_t i = n && (s[0] == '-' || s[0] == '+'), d = i;
	int64_t x = 0, ns;

	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (x > (INT64_MAX - (s[i] - '0')) / 10)
			return -1;
		x = x * 10 + (s[i] - '0');
	}
	if (i == n && i > d) {
		int neg = d && s[0] == '-';

		*v = neg ? -x : x;
		return 0;
	}
	if (mt_us_to_ns(s, n, &ns))
		return -1;
	*v = ns / 1000;
	return 0;
}

/* ------------------------------------------------------------------ names */

static enum key key_of(int ctx, const unsigned char *k, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && !memcmp(k, lit, n))
	switch (ctx) {
	case C_EVENT:
	case C_TOP:
		if (n <= 4) {
			if (IS("ph")) return K_PH;
			if (IS("cat")) return K_CAT;
			if (IS("name")) return K_NAME;
			if (IS("pid")) return K_PID;
			if (IS("tid")) return K_TID;
			if (IS("ts")) return K_TS;
			if (IS("dur")) return K_DUR;
			if (IS("args")) return K_ARGS;
			if (ctx == C_EVENT)
				return K_OTHER;
			/* megatune.trace/1 lines are top-level objects */
			if (IS("t")) return K_T;
			if (IS("end")) return K_END;
			if (IS("dev")) return K_DEV;
			if (IS("corr")) return K_CORR;
			if (IS("rank")) return K_RANK;
			return K_OTHER;
		}
		if (IS("stream")) return K_STREAM;
		if (ctx == C_EVENT)
			return K_OTHER;
		if (IS("start")) return K_START;
		if (IS("traceEvents")) return K_TRACEEVENTS;
		if (IS("distributedInfo")) return K_DINFO;
		if (IS("deviceProperties")) return K_DPROPS;
		if (IS("baseTimeNanoseconds")) return K_BASETIME;
		if (IS("schema")) return K_SCHEMA;
		if (IS("world_size")) return K_WORLD;
		if (IS("dropped")) return K_DROPPED;
		if (IS("gpu")) return K_DEVICE;
		return K_OTHER;
	case C_ARGS:
		if (IS("correlation")) return K_CORR;
		if (IS("device")) return K_DEVICE;
		if (IS("stream")) return K_STREAM;
		if (IS("Collective name")) return K_COLL;
		return K_OTHER;
	case C_DINFO:
		if (IS("rank")) return K_RANK;
		if (IS("world_size")) return K_WORLD;
		return K_OTHER;
	case C_DPROP:
		if (IS("name")) return K_NAME;
		if (IS("numSms")) return K_NUMSMS;
		return K_OTHER;
	default:
		return K_OTHER;
	}
#undef IS
}

static int cat_of(const unsigned char *s, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && !memcmp(s, lit, n))
	if (IS("kernel") || IS("Kernel")) return CAT_KERNEL;
	if (IS("gpu_memcpy") || IS("Memcpy") || IS("memcpy")) return CAT_MEMCPY;
	if (IS("gpu_memset") || IS("Memset") || IS("memset")) return CAT_MEMSET;
	if (IS("cuda_runtime") || IS("cuda_driver") || IS("Runtime") || IS("runtime") ||
	    IS("driver"))
		return CAT_LAUNCH;
	if (IS("user_annotation") || IS("cpu_op") || IS("nvtx") || IS("Operator"))
		return CAT_ANNOT;
	if (IS("gpu_user_annotation")) return CAT_GPU_ANNOT;
	if (IS("cuda_sync") || IS("sync")) return CAT_SYNC;
	return CAT_OTHER;
#undef IS
}

int mt_ci_contains(const char *s, size_t n, const char *needle)
{
	size_t m = strlen(needle), i, j;

	for (i = 0; i + m <= n; i++) {
		for (j = 0; j < m; j++) {
			char c = s[i + j];
			if (c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			if (c != needle[j])
				break;
		}
		if (j == m)
			return 1;
	}
	return 0;
}

/* all_to_all, alltoall, AllToAll, all_toall ... */
static int is_a2a(const char *s, size_t n)
{
	return mt_ci_contains(s, n, "alltoall") || mt_ci_contains(s, n, "all_to_all") ||
	       mt_ci_contains(s, n, "all_toall") || mt_ci_contains(s, n, "allto_all");
}

enum mt_tcoll mt_tcoll_of(const char *s, size_t n)
{
	if (mt_ci_contains(s, n, "allreduce") || mt_ci_contains(s, n, "all_reduce") ||
	    mt_ci_contains(s, n, "cross_device_reduce"))
		return MT_TC_ALLREDUCE;
	if (mt_ci_contains(s, n, "reducescatter") || mt_ci_contains(s, n, "reduce_scatter"))
		return MT_TC_REDUCESCATTER;
	if (mt_ci_contains(s, n, "allgather") || mt_ci_contains(s, n, "all_gather"))
		return MT_TC_ALLGATHER;
	if (is_a2a(s, n))
		return MT_TC_ALLTOALL;
	if (mt_ci_contains(s, n, "send") || mt_ci_contains(s, n, "recv"))
		return MT_TC_SENDRECV;
	if (mt_ci_contains(s, n, "broadcast") || mt_ci_contains(s, n, "bcast"))
		return MT_TC_BROADCAST;
	if (mt_ci_contains(s, n, "reduce"))
		return MT_TC_REDUCE;
	return MT_TC_OTHER;
}

const char *mt_tcoll_name(enum mt_tcoll c)
{
	static const char *const n[MT_TC_N] = {
		"other", "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv",
		"broadcast", "reduce",
	};
	return (unsigned)c < MT_TC_N ? n[c] : "other";
}

/* ------------------------------------------------------------------ events */

/* "ProfilerStep#12" -> 12; an iteration prefix -> trailing number or 0. */
static int step_number(const struct parser *p, const char *s, size_t n, int64_t *num)
{
	static const char ps[] = "ProfilerStep#";
	size_t k;

	if (n > sizeof(ps) - 1 && !memcmp(s, ps, sizeof(ps) - 1)) {
		int64_t v = 0;
		for (k = sizeof(ps) - 1; k < n; k++) {
			if (s[k] < '0' || s[k] > '9' || v > INT64_MAX / 10 - 10)
				return 0;
			v = v * 10 + (s[k] - '0');
		}
		*num = v;
		return 1;
	}
	if (p->o && p->o->step_prefixes) {
		const char *const *pre;
		for (pre = p->o->step_prefixes; *pre; pre++) {
			size_t m = strlen(*pre);
			if (m && n >= m && !memcmp(s, *pre, m)) {
				int64_t v = 0;
				k = n;
				while (k > m && s[k - 1] >= '0' && s[k - 1] <= '9')
					k--;
				for (; k < n && v < INT64_MAX / 10 - 10; k++)
					v = v * 10 + (s[k] - '0');
				*num = v;
				return 1;
			}
		}
	}
	return 0;
}

/* A GPU event (kernel, memcpy, memset) left out for its times: counted by
 * reason (the analysis adds them to left_out); other records are dropped. */
static void bad_event(int cat, size_t *reason)
{
	if (cat == CAT_KERNEL || cat == CAT_MEMCPY || cat == CAT_MEMSET)
		(*reason)++;
}

/* The event's start and end in ns; -1 when it is left out (not an 'X' event, bad times). */
static int event_times(struct parser *p, int cat, int64_t *start, int64_t *end)
{
	struct acc *a = &p->a;
	struct mt_trace *t = p->t;

	if (a->t >= 0) {            /* megatune.trace/1: integer ns */
		if (!a->has_start || a->bad_time) {
			bad_event(cat, &t->bad_time);
			return -1;
		}
		*start = a->start;
		*end = a->has_end ? a->end : a->start;
		if (a->dev_plain >= 0)
			a->device = a->dev_plain;
	} else {
		if (a->ph != 'X')
			return -1;
		if (!a->has_ts || a->bad_time ||
		    (a->has_dur && a->dur > 0 && a->ts > INT64_MAX - a->dur)) {
			bad_event(cat, &t->bad_time);
			return -1;
		}
		*start = a->ts;
		*end = a->ts + (a->has_dur ? a->dur : 0);
		if (a->device < 0 && a->pid >= 0)
			a->device = a->pid;
		if (a->stream < 0)
			a->stream = a->tid;
	}
	if (*end < *start) {
		bad_event(cat, &t->bad_order);
		return -1;
	}
	if (*end - *start > MT_TRACE_MAX_DUR_NS) {
		bad_event(cat, &t->bad_long);
		return -1;
	}
	return 0;
}

/* The event's stream and device as the trace keeps them, -1 out of range */
static int32_t acc_stream(const struct acc *a)
{
	return (int32_t)(a->stream >= INT32_MIN && a->stream <= INT32_MAX ? a->stream : -1);
}

static int16_t acc_device(const struct acc *a)
{
	return (int16_t)(a->device >= 0 && a->device < INT16_MAX ? a->device : -1);
}

/* A kernel, memcpy or memset into the trace's GPU events. */
static void add_gpu_event(struct parser *p, int cat, int64_t start, int64_t end)
{
	struct acc *a = &p->a;
	struct mt_trace *t = p->t;
	struct mt_gpu_ev *g;
	uint32_t id;

	if (t->ngpu >= MT_TRACE_MAX_EVENTS) {
		t->over_cap++;
		return;
	}
	if ((id = intern(t, a->name, a->namelen)) == UINT32_MAX) {
		p->oom = 1;
		return;
	}
	if (!(g = PUSH(p, gpu, ngpu, capgpu)))
		return;
	g->start = start;
	g->end = end;
	g->corr = a->corr;
	g->name = id;
	g->stream = acc_stream(a);
	g->device = acc_device(a);
	g->kind = cat == CAT_KERNEL ? MT_GK_KERNEL :
		  cat == CAT_MEMCPY ? MT_GK_MEMCPY : MT_GK_MEMSET;
	g->coll = (uint8_t)a->coll;
}

/* A runtime or driver launch call into the trace's launches. */
static void add_launch(struct parser *p, int64_t start, int64_t end)
{
	struct acc *a = &p->a;
	struct mt_launch *l;
	uint32_t id;

	if (a->corr < 0)
		return;
	if ((id = intern(p->t, a->name, a->namelen)) == UINT32_MAX) {
		p->oom = 1;
		return;
	}
	if (!(l = PUSH(p, launch, nlaunch, caplaunch)))
		return;
	l->corr = a->corr;
	l->ts = start;
	l->end = end;
	l->name = id;
	l->driver = a->name[0] == 'c' && a->name[1] == 'u' && a->name[2] != 'd';
	l->pid = a->pid;
	l->tid = a->tid;
}

/* A CPU range into the trace's steps, all-to-all ranges or (megatune format) NVTX ranges. */
static void add_range(struct parser *p, int64_t start, int64_t end)
{
	struct acc *a = &p->a;
	int64_t num = -1;
	int step = step_number(p, a->name, a->namelen, &num);
	int a2a = !step && is_a2a(a->name, a->namelen);
	struct mt_range *r;
	uint32_t id;

	if (!step && !a2a && a->t < 0)
		return;
	if ((id = intern(p->t, a->name, a->namelen)) == UINT32_MAX) {
		p->oom = 1;
		return;
	}
	if (a->t >= 0) {       /* megatune format: keep every NVTX range */
		if (!(r = PUSH(p, nvtx, nnvtx, capnvtx)))
			return;
		r->ts = start;
		r->end = end;
		r->pid = a->pid;
		r->tid = a->tid;
		r->num = num;
		r->name = id;
		if (!step && !a2a)
			return;
	}
	r = step ? PUSH(p, step, nstep, capstep) : PUSH(p, a2a, na2a, capa2a);
	if (!r)
		return;
	r->ts = start;
	r->end = end;
	r->pid = a->pid;
	r->tid = a->tid;
	r->num = num;
	r->name = id;
}

/* A GPU-side annotation into the trace's annotations. */
static void add_gpu_annot(struct parser *p, int64_t start, int64_t end)
{
	struct acc *a = &p->a;
	struct mt_gpu_annot *g;
	uint32_t id = intern(p->t, a->name, a->namelen);

	if (id == UINT32_MAX) {
		p->oom = 1;
		return;
	}
	if (!(g = PUSH(p, annot, nannot, capannot)))
		return;
	g->start = start;
	g->end = end;
	g->name = id;
	g->stream = acc_stream(a);
	g->device = acc_device(a);
}

/* The event just read into the trace, by its category. */
static void finish_event(struct parser *p)
{
	struct acc *a = &p->a;
	int cat = a->t >= 0 ? a->t : a->cat;
	int64_t start, end;

	if (event_times(p, cat, &start, &end))
		return;
	switch (cat) {
	case CAT_KERNEL:
	case CAT_MEMCPY:
	case CAT_MEMSET:
		add_gpu_event(p, cat, start, end);
		break;
	case CAT_LAUNCH:
		add_launch(p, start, end);
		break;
	case CAT_ANNOT:
		add_range(p, start, end);
		break;
	case CAT_GPU_ANNOT:
		add_gpu_annot(p, start, end);
		break;
	case CAT_SYNC:
		p->t->nsync++;
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------ callbacks */

#define P ((struct parser *)ctx)

static int trace_cur(const struct parser *p)
{
	return p->ctx[p->depth];
}

static int cur_key(const struct parser *p)
{
	return p->key[p->depth];
}

static int open_container(struct parser *p, int is_map)
{
	int parent = trace_cur(p), k = cur_key(p), c = C_SKIP;

	if (p->depth + 1 >= MAXDEPTH)
		return 0;
	if (p->depth == 0) {
		if (p->ntop && p->t->format != MT_TRACE_MEGATUNE) {
			/* JSON Lines are megatune.trace/1 only: a Kineto trace is one document */
			p->second_doc = 1;
			return 0;
		}
		p->ntop++;
		c = is_map ? C_TOP : C_EVENTS;    /* a bare array of events */
	} else if (parent == C_TOP && k == K_TRACEEVENTS && !is_map) {
		c = C_EVENTS;
	} else if (parent == C_EVENTS && is_map) {
		c = C_EVENT;
	} else if (parent == C_EVENT && k == K_ARGS && is_map) {
		c = C_ARGS;
	} else if (parent == C_TOP && k == K_DINFO && is_map) {
		c = C_DINFO;
	} else if (parent == C_TOP && k == K_DPROPS && !is_map) {
		c = C_DPROPS;
		p->t->ndevice_props = 0;
	} else if (parent == C_DPROPS && is_map) {
		c = C_DPROP;
		p->t->ndevice_props++;
	} else if (parent == C_DPROP) {
		c = C_DPROP;       /* nested values still feed the hash */
	}
	p->depth++;
	p->ctx[p->depth] = (unsigned char)c;
	p->key[p->depth] = K_OTHER;
	if (c == C_EVENT || c == C_TOP)
		acc_reset(&p->a);
	return 1;
}

static int close_container(struct parser *p)
{
	int c = trace_cur(p);

	if (c == C_EVENT) {
		finish_event(p);
	} else if (c == C_TOP) {
		if (p->a.is_header) {
			if (p->a.rank >= 0)
				p->t->rank = p->a.rank;
			if (p->a.world >= 0)
				p->t->world_size = p->a.world;
			p->t->format = MT_TRACE_MEGATUNE;
		} else if (p->a.is_end) {
			p->t->has_end = 1;
		} else if (p->a.t >= 0) {
			p->t->format = MT_TRACE_MEGATUNE;
			finish_event(p);
		}
	} else if (c == C_DPROPS) {
		p->t->device_props_hash = p->props_hash;
	}
	if (p->depth <= 0)
		return 0;
	p->depth--;
	return !p->oom;
}

static int cb_start_map(void *ctx) { return open_container(P, 1); }
static int cb_end_map(void *ctx) { return close_container(P); }
static int cb_start_array(void *ctx) { return open_container(P, 0); }
static int cb_end_array(void *ctx) { return close_container(P); }

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
	struct parser *p = P;
	int c = trace_cur(p);

	if (c == C_SKIP || c == C_EVENTS || c == C_DPROPS)
		return 1;
	if (c == C_DPROP) {
		p->props_hash = (p->props_hash ^ fnv((const char *)k, n)) * 1099511628211ull;
		if (p->depth >= 1 && p->ctx[p->depth - 1] != C_DPROPS) {
			p->key[p->depth] = K_OTHER;
			return 1;
		}
	}
	p->key[p->depth] = (unsigned char)key_of(c, k, n);
	return 1;
}

static void hash_value(struct parser *p, const char *s, size_t n)
{
	if (p->depth == 0)
		p->scalar_top = 1;
	if (trace_cur(p) == C_DPROP)
		p->props_hash = (p->props_hash ^ fnv(s, n)) * 1099511628211ull;
}

/* A time field (ts, dur, start, end) holding something else than a number. */
static void time_not_number(struct parser *p)
{
	int c = trace_cur(p), k = cur_key(p);

	if ((c == C_EVENT || c == C_TOP) && (k == K_TS || k == K_DUR || k == K_START || k == K_END))
		p->a.bad_time = 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct parser *p = P;
	struct acc *a = &p->a;
	int c = trace_cur(p), k = cur_key(p);
	const char *cs = (const char *)s;

	hash_value(p, cs, n);
	time_not_number(p);
	if (c == C_EVENT || c == C_TOP) {
		switch (k) {
		case K_PH:
			a->ph = n ? cs[0] : 0;
			break;
		case K_CAT:
			a->cat = cat_of(s, n);
			break;
		case K_T:
			if (n == 3 && !memcmp(s, "end", 3))
				a->is_end = 1;
			else if (n == 4 && !memcmp(s, "nvtx", 4))
				a->t = CAT_ANNOT;
			else
				a->t = cat_of(s, n);
			break;
		case K_NAME:
			a->namelen = n < NAME_MAX_LEN - 1 ? n : NAME_MAX_LEN - 1;
			memcpy(a->name, s, a->namelen);
			a->name[a->namelen] = '\0';
			break;
		case K_SCHEMA:
			if (c == C_TOP && n == 16 && !memcmp(s, "megatune.trace/1", 16)) {
				a->is_header = 1;
			} else if (c == C_TOP && n >= 15 && !memcmp(s, "megatune.trace/", 15)) {
				/* a version this reader does not know: refused (FORMATS.md) */
				snprintf(p->bad_schema, sizeof(p->bad_schema), "%.*s",
					 (int)(n < 32 ? n : 32), cs);
				return 0;
			}
			break;
		case K_PID:
			/* string pids ("Spans") are not devices */
			a->pid = -2;
			break;
		case K_TID: {
			/* "stream 7" -> 7 */
			size_t i = n;
			int64_t v = 0, m = 1;
			while (i > 0 && cs[i - 1] >= '0' && cs[i - 1] <= '9' && m < 1000000000000LL) {
				v += (cs[i - 1] - '0') * m;
				m *= 10;
				i--;
			}
			a->tid = i < n ? v : -2;
			break;
		}
		case K_DEVICE:
			if (c == C_TOP && !p->t->gpu_name && !(p->t->gpu_name = strndup(cs, n)))
				p->oom = 1;
			break;
		default:
			break;
		}
	} else if (c == C_ARGS && k == K_COLL) {
		a->coll = mt_tcoll_of(cs, n);
	} else if (c == C_DPROP && k == K_NAME && p->t->ndevice_props == 1 && !p->t->gpu_name) {
		if (!(p->t->gpu_name = strndup(cs, n)))
			p->oom = 1;
	}
	return !p->oom;
}

/* Where an integer field of an event (or megatune line) goes, or NULL. */
static int64_t *int_slot(struct acc *a, int k)
{
	switch (k) {
	case K_PID: return &a->pid;
	case K_TID: return &a->tid;
	case K_CORR: return &a->corr;
	case K_DEV: return &a->dev_plain;
	case K_STREAM: return &a->stream;
	case K_RANK: return &a->rank;
	case K_WORLD: return &a->world;
	default: return NULL;
	}
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	struct parser *p = P;
	struct acc *a = &p->a;
	int c = trace_cur(p), k = cur_key(p);
	int64_t v, *slot;

	hash_value(p, s, n);
	if (c == C_EVENT || c == C_TOP) {
		if (k == K_TS)
			a->bad_time |= !(a->has_ts = !mt_us_to_ns(s, n, &a->ts));
		else if (k == K_DUR)
			a->bad_time |= !(a->has_dur = !mt_us_to_ns(s, n, &a->dur));
		else if (k == K_START)
			a->bad_time |= !(a->has_start = !parse_int(s, n, &a->start));
		else if (k == K_END)
			a->bad_time |= !(a->has_end = !parse_int(s, n, &a->end));
		else if (parse_int(s, n, &v))
			;
		else if ((slot = int_slot(a, k)))
			*slot = v;
		else if (k == K_BASETIME && c == C_TOP)
			p->t->base_ns = v;
		else if (k == K_DROPPED)
			p->t->dropped += v;
	} else if (c == C_ARGS) {
		if (!parse_int(s, n, &v)) {
			if (k == K_CORR)
				a->corr = v;
			else if (k == K_DEVICE)
				a->device = v;
			else if (k == K_STREAM)
				a->stream = v;
		}
	} else if (c == C_DINFO) {
		if (!parse_int(s, n, &v)) {
			if (k == K_RANK)
				p->t->rank = v;
			else if (k == K_WORLD)
				p->t->world_size = v;
		}
	}
	return 1;
}

static int cb_null(void *ctx)
{
	hash_value(P, "null", 4);
	time_not_number(P);
	return 1;
}

static int cb_bool(void *ctx, int b)
{
	hash_value(P, b ? "true" : "false", b ? 4 : 5);
	time_not_number(P);
	return 1;
}

#undef P

const yajl_callbacks mt_trace_callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end_map, cb_start_array, cb_end_array,
};
