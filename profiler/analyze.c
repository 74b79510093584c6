/* SPDX-License-Identifier: MIT */
/* analyze: time breakdown, overlap, idle causes, categories, stragglers. */
#include "analyze.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/stats.h"
#include "../rules/facts.h"

const char *mt_kcat_name(enum mt_kcat c)
{
	static const char *const n[MT_KC_N] = {
		"gemm", "attention", "elementwise", "reduction", "communication", "memcpy",
		"memset", "other",
	};
	return (unsigned)c < MT_KC_N ? n[c] : "other";
}

static int ci_any(const char *s, const char *const *list)
{
	size_t n = strlen(s);

	for (; *list; list++)
		if (mt_ci_contains(s, n, *list))
			return 1;
	return 0;
}

/* The function's own name in a demangled kernel name: the last `::` part
 * before the template arguments or the parameters ("transpose" of "void
 * a::b::transpose<512, 128>(char const*)"); "" when there is none. */
static void function_name(const char *n, char *out, size_t cap)
{
	const char *e = n + strcspn(n, "<("), *s = e;

	out[0] = 0;
	while (s > n && s[-1] != ':' && s[-1] != ' ')
		s--;
	if (e > s && (size_t)(e - s) < cap && s > n && s[-1] == ':') {
		memcpy(out, s, (size_t)(e - s));
		out[e - s] = 0;
	}
}

/* Kernel category by name; the lists follow the kernel families of cuBLAS,
 * CUTLASS, cuDNN, FlashAttention, Transformer Engine and PyTorch ATen. */
static enum mt_kcat kernel_category(const char *n)
{
	static const char *const attn[] = { "flash", "fmha", "attention", "attn", "sdpa",
					    "_mha", "mha_", NULL };
	static const char *const gemm[] = { "gemm", "gemv", "cutlass", "cublas", "xmma", "nvjet",
					    "matmul", "wgmma", "hmma", "s884", "s1688", "h884",
					    "h1688", "s16816", "h16816", "bmm", "conv", NULL };
	static const char *const red[] = { "reduce", "norm", "softmax", "sum_kernel", "argmax",
					   "argmin", "welford", "cross_entropy", "max_kernel",
					   "min_kernel", "mean", "scan", "topk", "sort", NULL };
	static const char *const elw[] = { "elementwise", "vectorized", "unrolled", "copy",
					   "fill", "cast", "gelu", "silu", "swiglu", "relu",
					   "dropout", "activation", "bias", "add", "mul", "scale",
					   "rope", "rotary", "index", "cat", "transpose", "permute",
					   "pointwise", "triton_poi", "quantize", NULL };

	char base[96];

	/* the function's own name decides first: a transpose or a cast in a
	 * GEMM library's namespace (dpsk::grouped_gemm::cuda::utils::transpose)
	 * is data movement, not a GEMM */
	function_name(n, base, sizeof(base));
	if (base[0] && !ci_any(base, attn) && !ci_any(base, gemm) && ci_any(base, elw) &&
	    !ci_any(base, red))
		return MT_KC_ELEMENTWISE;
	if (ci_any(n, attn))
		return MT_KC_ATTENTION;
	if (ci_any(n, gemm))
		return MT_KC_GEMM;
	if (ci_any(n, red) || !strncmp(n, "triton_red", 10) || !strncmp(n, "triton_per", 10))
		return MT_KC_REDUCTION;
	if (ci_any(n, elw))
		return MT_KC_ELEMENTWISE;
	return MT_KC_OTHER;
}

/* ------------------------------------------------------------ intervals */

struct ivl {
	int64_t s, e;
};

/* A merged list of disjoint, sorted intervals, built from starts in order. */
struct merged {
	struct ivl *v;
	size_t n, cap;
	int oom;
};

static void merge_add(struct merged *m, int64_t s, int64_t e)
{
	if (e <= s)
		return;
	if (m->n && s <= m->v[m->n - 1].e) {
		if (e > m->v[m->n - 1].e)
			m->v[m->n - 1].e = e;
		return;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct ivl *p = realloc(m->v, cap * sizeof(*p));
		if (!p) {
			m->oom = 1;
			return;
		}
		m->v = p;
		m->cap = cap;
	}
	m->v[m->n].s = s;
	m->v[m->n].e = e;
	m->n++;
}

static int64_t mlen(const struct merged *m)
{
	int64_t t = 0;
	size_t i;

	for (i = 0; i < m->n; i++)
		t += m->v[i].e - m->v[i].s;
	return t;
}

/* |a - b| */
static int64_t minus_len(const struct merged *a, const struct merged *b)
{
	int64_t total = 0;
	size_t i, j = 0;

	for (i = 0; i < a->n; i++) {
		int64_t cur = a->v[i].s, e = a->v[i].e;
		size_t k;
		while (j < b->n && b->v[j].e <= cur)
			j++;
		for (k = j; k < b->n && b->v[k].s < e; k++) {
			if (b->v[k].s > cur)
				total += b->v[k].s - cur;
			if (b->v[k].e > cur)
				cur = b->v[k].e;
			if (cur >= e)
				break;
		}
		if (cur < e)
			total += e - cur;
	}
	return total;
}

/* ------------------------------------------------------------ events */

struct ev {
	int64_t s, e;
	int64_t launch;     /* launch call start, INT64_MIN when unlinked */
	uint32_t name;
	uint8_t kind;       /* enum mt_gpu_kind */
	uint8_t comm;       /* 0 computation, 1 NCCL-like, 2 custom */
	uint8_t coll;
	uint8_t cat;
};

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

/* Per name: bits 0-3 category, 4-6 collective, 7 custom communication; 0xFF unknown. */
struct classifier {
	regex_t re[MT_MAX_COMM_PATTERNS];
	int nre;
	uint8_t *cls;
	uint8_t *comm;
};

/* Communication kernels by name (case-insensitive substrings): NCCL old
 * (ncclKernel_*) and new (ncclDevKernel_*), RCCL, vLLM's custom all-reduce
 * (TraceLens's list); and, as "custom" communication, DeepEP, NVSHMEM and the
 * user's patterns. */
static void classify(struct classifier *c, const struct mt_trace *t, uint32_t id)
{
	const char *n = mt_trace_str(t, id);
	static const char *const nccl[] = { "nccl", "rccl", "cross_device_reduce", NULL };
	static const char *const custom[] = { "dpsk::ep::", "deep_ep", "nvshmem", NULL };
	int comm = 0, k;

	if (ci_any(n, nccl))
		comm = 1;
	else if (ci_any(n, custom))
		comm = 2;
	for (k = 0; !comm && k < c->nre; k++)
		if (!regexec(&c->re[k], n, 0, NULL, 0))
			comm = 2;
	c->comm[id] = (uint8_t)comm;
	c->cls[id] = (uint8_t)((comm ? MT_KC_COMM : kernel_category(n)) | (mt_tcoll_of(n, strlen(n)) << 4));
}

/* Launched (by the call at pid/tid/ts) inside an all_to_all annotation? */
static int under_a2a(const struct mt_trace *t, const struct mt_launch *l)
{
	size_t i;

	for (i = 0; i < t->na2a; i++) {
		const struct mt_range *r = &t->a2a[i];
		if (r->pid == l->pid && r->tid == l->tid && l->ts >= r->ts && l->ts <= r->end)
			return 1;
	}
	return 0;
}

/* A small set of (device, stream) pairs. */
struct pairset {
	uint64_t *v;
	size_t n, cap;
	uint64_t last;
	int has_last;
};

static int pair_add(struct pairset *p, int device, int stream)
{
	uint64_t key = ((uint64_t)(uint16_t)device << 32) | (uint32_t)stream;
	size_t i;

	if (p->has_last && p->last == key)
		return 0;
	p->last = key;
	p->has_last = 1;
	for (i = 0; i < p->n; i++)
		if (p->v[i] == key)
			return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		uint64_t *q = realloc(p->v, cap * sizeof(*q));
		if (!q)
			return -1;
		p->v = q;
		p->cap = cap;
	}
	p->v[p->n++] = key;
	return 0;
}

enum { L_ALL, L_KERN, L_COMP, L_COMM, L_MEMCPY, L_DP, L_EP, L_CUSTOM, L_COLL0,
       L_N = L_COLL0 + MT_TC_N };

/* The rank's identity and the note on how its trace ended. */
static void rank_header(const struct mt_trace *t, int index, struct mt_rank_stats *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", t->path);
	r->rank = t->rank >= 0 ? t->rank : index;
	r->rank_from_trace = t->rank >= 0;
	r->world_size = t->world_size;
	snprintf(r->gpu_name, sizeof(r->gpu_name), "%s", t->gpu_name ? t->gpu_name : "");
	r->ndevice_props = t->ndevice_props;
	r->device_props_hash = t->device_props_hash;
	r->device = -1;
	if (t->format == MT_TRACE_MEGATUNE && (!t->has_end || t->dropped))
		snprintf(r->note, sizeof(r->note), "%s%s%s", !t->has_end ?
			 "no end record: the traced process did not exit cleanly" : "",
			 t->cut_short ? " (its last line was cut short and is left out)" : "",
			 t->dropped ? "the tracer dropped records (see its end record): the figures "
				      "undercount" : "");
}

static int compile_patterns(struct classifier *c, const struct mt_analyze_opts *o,
			    struct mt_error *err)
{
	int k;

	for (k = 0; k < o->ncomm_patterns; k++) {
		int e = regcomp(&c->re[k], o->comm_patterns[k], REG_EXTENDED | REG_NOSUB);
		if (e) {
			char msg[128];
			regerror(e, &c->re[k], msg, sizeof(msg));
			return mt_error_set(err, MT_EINVAL, "--comm-pattern '%s': not a valid extended "
					    "regular expression: %s", o->comm_patterns[k], msg);
		}
		c->nre = k + 1;
	}
	return 0;
}

/* Steps: the iteration times, and the window [*lo, *hi] of launches kept.
 * Whether the window applies. */
static int read_steps(const struct mt_trace *t, const struct mt_analyze_opts *o,
		      struct mt_rank_stats *r, int64_t *lo, int64_t *hi)
{
	int64_t sum = 0, last_start = INT64_MIN, nmin = INT64_MAX, nmax = INT64_MIN;
	size_t i;

	if (!t->nstep)
		return 0;
	r->has_steps = 1;
	r->nsteps = t->nstep;
	r->step_min = INT64_MAX;
	*lo = INT64_MAX;
	*hi = INT64_MIN;
	for (i = 0; i < t->nstep; i++) {
		const struct mt_range *s = &t->step[i];
		int64_t d = s->end - s->ts;
		int j;
		sum += d;
		if (d < r->step_min)
			r->step_min = d;
		if (d > r->step_max)
			r->step_max = d;
		if (s->ts < *lo)
			*lo = s->ts;
		if (s->end > *hi)
			*hi = s->end;
		if (s->ts > last_start)
			last_start = s->ts;
		if (s->num < nmin)
			nmin = s->num;
		if (s->num > nmax)
			nmax = s->num;
		for (j = 0; j < r->nstep_num && r->step_num[j] != s->num; j++)
			;
		if (j == r->nstep_num && j < 32) {
			r->step_num[j] = s->num;
			r->step_start[j] = s->ts + t->base_ns;
			r->nstep_num++;
		} else if (j < r->nstep_num && s->ts + t->base_ns < r->step_start[j]) {
			r->step_start[j] = s->ts + t->base_ns;
		}
	}
	r->step_mean = sum / (int64_t)t->nstep;
	if (o->window == MT_WIN_HTA && nmin != nmax)
		*hi = last_start - 1;   /* the last step is taken as incomplete */
	return o->window != MT_WIN_ALL;
}

/* What one rank's pass holds; freed by pass_free(). */
struct pass {
	struct classifier c;
	struct merged m[L_N];
	struct ev *ev;
	double *kd; /* kernel durations, ns (exact in a double) */
	size_t nev, nkd, *first;
	struct pairset streams, devs;
	int64_t lo, hi;
	int use_window;
};

/* Choose and classify the events into p->ev; -1 when out of memory. */
static int choose_events(const struct mt_trace *t, const struct mt_analyze_opts *o,
			 struct pass *p, struct mt_rank_stats *r)
{
	size_t i;

	for (i = 0; i < t->ngpu; i++) {
		const struct mt_gpu_ev *g = &t->gpu[i];
		const struct mt_launch *l = mt_trace_launch(t, g->corr);
		struct ev *e;
		unsigned cls;

		if (!l && (o->linked_only || (p->use_window && t->nlaunch))) {
			r->nunlinked++;
			r->nleft_out++;
			continue;
		}
		if (p->use_window) {
			int64_t at = l ? l->ts : g->start;
			if (at < p->lo || at > p->hi) {
				r->nleft_out++;
				continue;
			}
		}
		if (p->c.cls[g->name] == 0xFF)
			classify(&p->c, t, g->name);
		cls = p->c.cls[g->name];
		e = &p->ev[p->nev++];
		e->s = g->start;
		e->e = g->end;
		e->launch = l ? l->ts : INT64_MIN;
		e->name = g->name;
		e->kind = g->kind;
		e->comm = g->kind == MT_GK_MEMCPY ? 0 : p->c.comm[g->name];
		e->coll = (uint8_t)(g->coll != MT_TC_OTHER ? g->coll : (cls >> 4) & 7);
		if (e->comm && e->coll == MT_TC_SENDRECV && l && t->na2a && under_a2a(t, l))
			e->coll = MT_TC_ALLTOALL;
		e->cat = (uint8_t)(g->kind == MT_GK_MEMCPY ? MT_KC_MEMCPY :
				   e->comm ? MT_KC_COMM :
				   g->kind == MT_GK_MEMSET ? MT_KC_MEMSET : (cls & 15));
		if (pair_add(&p->streams, g->device, g->stream) || pair_add(&p->devs, g->device, 0))
			return -1;
	}
	return 0;
}

/* The unions of busy intervals by kind, built in start order; -1 when out
 * of memory. */
static int build_unions(struct pass *p, struct mt_rank_stats *r)
{
	struct merged *m = p->m;
	size_t i;
	int k;

	for (i = 0; i < p->nev; i++) {
		const struct ev *e = &p->ev[i];
		size_t before = m[L_ALL].n;
		merge_add(&m[L_ALL], e->s, e->e);
		if (m[L_ALL].n > before)
			p->first[m[L_ALL].n - 1] = i;
		r->cat_count[e->cat]++;
		r->cat_time[e->cat] += e->e - e->s;
		if (e->kind == MT_GK_MEMCPY) {
			r->nmemcpy++;
			merge_add(&m[L_MEMCPY], e->s, e->e);
			continue;
		}
		if (e->kind == MT_GK_KERNEL) {
			r->nkernels++;
			p->kd[p->nkd++] = (double)(e->e - e->s);
		} else {
			r->nmemset++;
		}
		merge_add(&m[L_KERN], e->s, e->e);
		if (!e->comm) {
			merge_add(&m[L_COMP], e->s, e->e);
			continue;
		}
		r->ncomm++;
		merge_add(&m[L_COMM], e->s, e->e);
		if (e->comm == 2) {
			r->custom_kernels++;
			merge_add(&m[L_CUSTOM], e->s, e->e);
			r->ep_present = 1;
			merge_add(&m[L_EP], e->s, e->e);
		} else {
			r->coll_kernels[e->coll]++;
			merge_add(&m[L_COLL0 + e->coll], e->s, e->e);
			if (e->coll == MT_TC_ALLREDUCE || e->coll == MT_TC_ALLGATHER ||
			    e->coll == MT_TC_REDUCESCATTER) {
				r->dp_present = 1;
				merge_add(&m[L_DP], e->s, e->e);
			} else if (e->coll == MT_TC_ALLTOALL) {
				r->ep_present = 1;
				merge_add(&m[L_EP], e->s, e->e);
			}
		}
	}
	for (k = 0; k < L_N; k++)
		if (m[k].oom)
			return -1;
	return 0;
}

/* The figures from the unions, and the idle gaps by the launch call of the
 * event that ends each. */
static void figures(struct pass *p, struct mt_rank_stats *r)
{
	const struct merged *m = p->m;
	size_t i;
	int k;

	r->nevents = p->nev;
	r->nstreams = p->streams.n;
	r->ndevices = p->devs.n;
	if (p->devs.n == 1)
		r->device = (int)(int16_t)(p->devs.v[0] >> 32);
	if (m[L_ALL].n) {
		r->t0 = m[L_ALL].v[0].s;
		r->t1 = m[L_ALL].v[m[L_ALL].n - 1].e;
	} else {                /* only zero-length events (untimed records) */
		r->t0 = r->t1 = p->ev[0].s;
	}
	r->total = r->t1 - r->t0;
	r->busy = mlen(&m[L_ALL]);
	r->idle = r->total - r->busy;
	r->comp = mlen(&m[L_COMP]);
	r->comm = mlen(&m[L_COMM]);
	r->exposed_comm = minus_len(&m[L_COMM], &m[L_COMP]);
	r->memcpy = mlen(&m[L_MEMCPY]);
	r->exposed_memcpy = minus_len(&m[L_MEMCPY], &m[L_KERN]);
	r->overlap_pct = r->comm ? 100.0 * (double)(r->comm - r->exposed_comm) / (double)r->comm : 0;
	for (k = 0; k < MT_TC_N; k++) {
		r->coll_time[k] = mlen(&m[L_COLL0 + k]);
		r->coll_exposed[k] = minus_len(&m[L_COLL0 + k], &m[L_COMP]);
	}
	r->custom_comm = mlen(&m[L_CUSTOM]);
	r->custom_exposed = minus_len(&m[L_CUSTOM], &m[L_COMP]);
	r->dp_comm = minus_len(&m[L_DP], &m[L_COMP]);
	r->ep_comm = minus_len(&m[L_EP], &m[L_COMP]);
	r->median_kernel = p->nkd ? mt_median(p->kd, p->nkd) : 0;
	r->no_comm_multi_stream = !r->ncomm && p->streams.n >= 2;

	for (i = 1; i < m[L_ALL].n; i++) {
		int64_t g0 = m[L_ALL].v[i - 1].e, g1 = m[L_ALL].v[i].s;
		int64_t l = p->ev[p->first[i]].launch;
		if (l == INT64_MIN) {
			r->idle_unattributed += g1 - g0;
		} else {
			int64_t w = (l < g1 ? l : g1) - g0;
			if (w < 0)
				w = 0;
			r->idle_host_wait += w;
			r->idle_launch += (g1 - g0) - w;
		}
	}
}

static void pass_free(struct pass *p)
{
	int k;

	for (k = 0; k < p->c.nre; k++)
		regfree(&p->c.re[k]);
	for (k = 0; k < L_N; k++)
		free(p->m[k].v);
	free(p->c.cls);
	free(p->c.comm);
	free(p->ev);
	free(p->kd);
	free(p->first);
	free(p->streams.v);
	free(p->devs.v);
}

int mt_analyze_rank(const struct mt_trace *t, int index, const struct mt_analyze_opts *o,
		    struct mt_rank_stats *r, struct mt_error *err)
{
	struct pass p;
	int rc = 0;

	memset(&p, 0, sizeof(p));
	p.lo = INT64_MIN;
	p.hi = INT64_MAX;
	rank_header(t, index, r);
	r->left_bad_time = t->bad_time;
	r->left_order = t->bad_order;
	r->left_long = t->bad_long;
	r->left_cap = t->over_cap;
	r->nleft_out = t->bad_time + t->bad_order + t->bad_long + t->over_cap;
	r->strings_cut = t->strings_cut;
	r->names_capped = t->names_capped;
	r->other_cap = t->over_cap_other;
	if ((rc = compile_patterns(&p.c, o, err)) < 0)
		goto out;
	p.c.cls = malloc(t->nstr ? t->nstr : 1);
	p.c.comm = malloc(t->nstr ? t->nstr : 1);
	p.ev = malloc((t->ngpu ? t->ngpu : 1) * sizeof(*p.ev));
	if (!p.c.cls || !p.c.comm || !p.ev)
		goto oom;
	memset(p.c.cls, 0xFF, t->nstr);

	p.use_window = read_steps(t, o, r, &p.lo, &p.hi);
	if (choose_events(t, o, &p, r))
		goto oom;
	if (!p.nev) {
		rc = mt_error_set(err, MT_EINVAL, "%s: no GPU kernel, memcpy or memset events%s "
				  "(%zu GPU events in the trace, %zu left out)", t->path,
				  p.use_window ? " launched inside the ProfilerStep window" :
				  o->linked_only ? " linked to a CPU launch call" : "",
				  t->ngpu, r->nleft_out);
		goto out;
	}
	qsort(p.ev, p.nev, sizeof(*p.ev), cmp_ev);
	p.kd = malloc(p.nev * sizeof(*p.kd));
	p.first = malloc(p.nev * sizeof(*p.first));
	if (!p.kd || !p.first || build_unions(&p, r))
		goto oom;
	figures(&p, r);
	goto out;
oom:
	rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", t->path);
out:
	pass_free(&p);
	return rc;
}

/* One host clock: a complete world (ranks 0..n-1 each once, world_size n),
 * one deviceProperties listing of >= n GPUs in every trace, and each rank on
 * a device of its own. */
static int one_clock(const struct mt_rank_stats *r, int n, char *why, size_t whylen)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (!r[i].rank_from_trace || r[i].world_size != n || r[i].rank < 0 ||
		    r[i].rank >= n || r[i].device < 0)
			return 0;
		if (r[i].ndevice_props < n || r[i].device_props_hash != r[0].device_props_hash)
			return 0;
		for (j = 0; j < i; j++)
			if (r[j].rank == r[i].rank || r[j].device == r[i].device)
				return 0;
	}
	snprintf(why, whylen, "complete %d-rank world, identical deviceProperties listing %d GPUs "
		 "in every trace, each rank on a GPU of its own", n, r[0].ndevice_props);
	return 1;
}

void mt_analyze_job(const struct mt_rank_stats *r, int n, struct mt_job_stats *j)
{
	double comp[1024];
	double med, sum = 0;
	int i, k, nsteps = 0;

	memset(j, 0, sizeof(*j));
	j->nranks = n;
	j->slowest = -1;
	j->wait_rank = -1;
	j->start_skew = -1;
	j->step_mean_s = NAN;
	for (i = 0; i < n; i++) {
		if (r[i].has_steps) {
			sum += (double)r[i].step_mean * (double)r[i].nsteps;
			nsteps += (int)r[i].nsteps;
		}
		if (!i || r[i].idle > j->idle_max)
			j->idle_max = r[i].idle;
		if (!i || r[i].idle < j->idle_min)
			j->idle_min = r[i].idle;
	}
	if (nsteps)
		j->step_mean_s = sum / nsteps / 1e9;
	if (n < 2)
		return;
	for (i = 0; i < n && i < 1024; i++) {
		comp[i] = (double)r[i].comp;
		if (j->slowest < 0 || r[i].comp > r[j->slowest].comp)
			j->slowest = i;
	}
	med = mt_median(comp, (size_t)(n < 1024 ? n : 1024));
	j->slowest_ratio = med > 0 ? (double)r[j->slowest].comp / med : NAN;
	for (i = 0; i < n; i++)
		if (med > 0 && (double)r[i].comp > 1.05 * med && j->nstragglers < 64)
			j->stragglers[j->nstragglers++] = i;

	j->one_clock = one_clock(r, n, j->clock_evidence, sizeof(j->clock_evidence));
	if (!j->one_clock)
		return;
	/* the smallest step number present in every rank */
	j->skew_step = INT64_MAX;
	for (k = 0; k < r[0].nstep_num; k++) {
		int64_t num = r[0].step_num[k];
		int all = 1;
		for (i = 1; i < n && all; i++) {
			int q;
			for (q = 0; q < r[i].nstep_num && r[i].step_num[q] != num; q++)
				;
			all = q < r[i].nstep_num;
		}
		if (all && num < j->skew_step)
			j->skew_step = num;
	}
	if (j->skew_step == INT64_MAX)
		return;
	{
		int64_t mn = INT64_MAX, mx = INT64_MIN;
		for (i = 0; i < n; i++) {
			int q;
			for (q = 0; r[i].step_num[q] != j->skew_step; q++)
				;
			if (r[i].step_start[q] < mn) {
				mn = r[i].step_start[q];
				j->wait_rank = i;
			}
			if (r[i].step_start[q] > mx)
				mx = r[i].step_start[q];
		}
		j->start_skew = mx - mn;
	}
}

static void give(struct mt_val *f, unsigned char *g, int id, double v)
{
	if (isnan(v))
		return;
	f[id].n = v;
	g[id] = 1;
}

void mt_analyze_facts(const struct mt_rank_stats *r, int n, const struct mt_job_stats *j,
		      struct mt_val *f, unsigned char *g)
{
	double win = 0, comp = 0, busy = 0, exp = 0, dp = 0, ep = 0;
	double med[1024];
	int i, dp_present = 0, ep_present = 0, comm_present = 0;

	for (i = 0; i < MT_F_N; i++) {
		f[i].n = NAN;
		f[i].s = NULL;
		g[i] = 0;
	}
	if (n < 1)
		return;
	for (i = 0; i < n; i++) {
		win += (double)r[i].total;
		comp += (double)r[i].comp;
		busy += (double)r[i].busy;
		exp += (double)r[i].exposed_comm;
		dp += (double)r[i].dp_comm;
		ep += (double)r[i].ep_comm;
		dp_present |= r[i].dp_present;
		ep_present |= r[i].ep_present;
		comm_present |= r[i].ncomm > 0;
		if (i < 1024)
			med[i] = r[i].median_kernel;
	}
	give(f, g, MT_F_FIND_RANKS, n);
	give(f, g, MT_F_FIND_STEP, !isnan(j->step_mean_s) ? j->step_mean_s : win / n / 1e9);
	if (win > 0) {
		give(f, g, MT_F_FIND_COMPUTE, comp / win);
		give(f, g, MT_F_FIND_IDLE, 1 - busy / win);
		if (comm_present)
			give(f, g, MT_F_FIND_COMM_EXPOSED, exp / win);
		if (dp_present)
			give(f, g, MT_F_FIND_DP_EXPOSED, dp / win);
		if (ep_present)
			give(f, g, MT_F_FIND_EP_EXPOSED, ep / win);
	}
	give(f, g, MT_F_FIND_KERNEL_US, mt_median(med, (size_t)(n < 1024 ? n : 1024)) / 1e3);
	if (n > 1 && j->slowest >= 0) {
		give(f, g, MT_F_FIND_SLOW_RANK, (double)r[j->slowest].rank);
		give(f, g, MT_F_FIND_SLOW_RATIO, j->slowest_ratio);
	}
	if (j->start_skew >= 0) {
		give(f, g, MT_F_FIND_START_SKEW, (double)j->start_skew / 1e9);
		give(f, g, MT_F_FIND_WAIT_RANK, (double)r[j->wait_rank].rank);
	}
}

void mt_analyze_method(const struct mt_analyze_opts *o, struct sbuf *sb)
{
	int k;

	sbuf_addf(sb, "Per rank, in integer ns, reported in us. Events: %s%s. Window (total): first "
		  "start to last end of those events. busy = union of kernel/memcpy/memset "
		  "intervals, idle = total - busy; communication = kernels whose name contains "
		  "nccl, rccl or cross_device_reduce (any case), or dpsk::ep::, deep_ep, nvshmem",
		  o->linked_only ? "GPU kernel/memcpy/memset events linked to a CPU launch call "
				   "(correlation id)" : "every GPU kernel/memcpy/memset event",
		  o->window == MT_WIN_STEPS ? ", launched inside the ProfilerStep annotations" :
		  o->window == MT_WIN_HTA ? ", launched from the start of the first ProfilerStep to "
					    "the start of the last (HTA's window)" : "");
	for (k = 0; k < o->ncomm_patterns; k++)
		sbuf_addf(sb, "%s'%s'", k ? ", " : ", or matches ", o->comm_patterns[k]);
	sbuf_adds(sb, "; computation = every other kernel and memset (TraceLens); exposed_comm = "
		  "communication with no computation running; exposed_memcpy = memcpy with no "
		  "kernel running; overlap_pct = 100 * (comm - exposed_comm) / comm (HTA). Idle gaps: "
		  "host_wait = the part before the launch call of the event ending the gap began, "
		  "launch = the rest; unattributed when that event has no launch call.");
}
