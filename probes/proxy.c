/* SPDX-License-Identifier: MIT */
/* proxy: run a proxy plan with the probes' backends and compose the step
 * (probes/proxy.h, docs/MODEL.md "The proxy"). */
#include "proxy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../lib/stats.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"
#include "mpi.h"

static const char *const probe_name[MT_PX_NPROBE] = { "gemm", "attention", "collective" };
static const char *const group_name[MT_PG_N] = { "tp", "cp", "ep", "dp", "pp" };

struct runner {
	const struct mt_proxy_plan *p;
	const struct mt_world *w;
	struct mt_probe_opts opts;
	struct mt_probe_ctx ctx[MT_PX_NPROBE];
	const struct mt_probe_ops *ops[MT_PX_NPROBE];
	int used[MT_PX_NPROBE], opened[MT_PX_NPROBE];
	struct mt_group groups[MT_PG_N];
	void *comm[MT_PG_N];
	void **state;
	int *have;
	double *t;               /* seconds of each item, this iteration */
	double mem_bytes;        /* the proxy's own buffers on this rank */
};

static int px_bcast(const struct mt_probe_ctx *ctx, int g, void *buf, int len, struct mt_error *err)
{
	void *const *comm = ctx->priv;

	if (g < 0 || g >= ctx->ngroups)
		return mt_error_set(err, MT_EINVAL, "group %d out of range", g);
	if (mt_comm_bcast(comm[g], buf, len))
		return mt_error_set(err, MT_EIO, "broadcast in group %s failed", ctx->groups[g].name);
	return MT_OK;
}

static void *px_comm(const struct mt_probe_ctx *ctx, int g)
{
	void *const *comm = ctx->priv;

	return g >= 0 && g < ctx->ngroups ? comm[g] : NULL;
}

/* Rank r's groups: members of one share r / block and r % stride. */
static void make_groups(struct runner *R)
{
	const struct mt_proxy_plan *p = R->p;
	const struct mt_world *w = R->w;
	int g, r = w->rank, L = w->local_size > 0 ? w->local_size : 1;

	for (g = 0; g < MT_PG_N; g++) {
		struct mt_group *x = &R->groups[g];
		int s = p->gsize[g], st = p->gstride[g], bl = p->gblock[g], i, node0, same = 0;

		memset(x, 0, sizeof(*x));
		x->ranks = s;
		snprintf(x->name, sizeof(x->name), "%s-%d", group_name[g], s);
		x->member = s > 1 && r < p->used;
		x->color = x->member ? (r / bl) * st + r % st : -1;
		x->grank = x->member ? (r % bl) / st : 0;
		/* ranks fill hosts in order (mpirun --map-by slot, srun's block) */
		node0 = ((r / bl) * bl + r % st) / L;
		for (i = 0; i < s; i++)
			same += ((r / bl) * bl + r % st + i * st) / L == node0;
		x->per_node = same;
		x->span = same == s ? MT_SPAN_NVLINK : MT_SPAN_NETWORK;
	}
}

static double item_bytes(const struct mt_proxy_item *it, int backend)
{
	double e = backend == MT_BACKEND_CPU ? 4 : it->c.dtype == MT_DT_FP8 ? 1 : 2;
	const struct mt_case *c = &it->c;

	switch (it->probe) {
	case MT_PX_GEMM:
		return ((double)c->m * c->k + (double)c->k * c->n + (double)c->m * c->n) * e;
	case MT_PX_ATTN:
		return (double)c->batch * c->seq * c->head_dim * (2.0 * c->heads + 2.0 * c->kv_heads) *
		       e * (c->bwd ? 2 : 1);
	default:
		return 2 * c->bytes;
	}
}

static int proxy_agree(const struct mt_world *w, int rc)
{
	int v = rc;

	mt_world_min_int(w, &v, 1);
	return v;
}

/* proxy_agree(), naming the cause on a rank whose own step went well */
static int agree_err(const struct mt_world *w, int rc, struct mt_error *err, const char *what)
{
	int v = proxy_agree(w, rc);

	if (v && !rc)
		mt_error_set(err, v, "proxy: %s failed on another rank", what);
	return v;
}

static int open_probes(struct runner *R, struct mt_error *err)
{
	const struct mt_proxy_plan *p = R->p;
	int k, i, g, any_group = 0, rc = MT_OK;

	for (g = 0; g < MT_PG_N; g++)
		any_group |= p->gsize[g] > 1;
	for (i = 0; i < p->nitems; i++)
		R->used[p->items[i].probe] = 1;
	if (!any_group || R->w->size < 2)
		R->used[MT_PX_COLL] = 0; /* no group of two: nothing to measure */
	for (k = 0; k < MT_PX_NPROBE; k++) {
		const struct mt_probe *pr = mt_probe_find(probe_name[k]);
		struct mt_probe_ctx *c = &R->ctx[k];

		if (!R->used[k])
			continue;
		c->opts = &R->opts;
		c->world = R->w;
		c->device = R->w->local_rank;
		c->ndevices = 1;
		c->probe = pr;
		c->priv = R->comm;
		c->group_bcast = px_bcast;
		c->group_comm = px_comm;
		if (k == MT_PX_COLL) {
			c->groups = R->groups;
			c->ngroups = MT_PG_N;
		}
		R->ops[k] = pr ? pr->ops[R->opts.backend] : NULL;
		if (!R->ops[k])
			rc = mt_error_set(err, MT_EUNSUPPORTED, "proxy: the %s probe has no %s backend",
					  probe_name[k], R->opts.backend == MT_BACKEND_CPU ? "CPU" : "CUDA");
		else if (R->ops[k]->applicable)
			rc = R->ops[k]->applicable(c, err);
		if (proxy_agree(R->w, rc) && !rc)
			rc = mt_error_set(err, MT_EUNSUPPORTED, "proxy: %s does not apply on another rank",
					  probe_name[k]);
		if (rc)
			return rc;
		if (R->ops[k]->open) {
			rc = proxy_agree(R->w, R->ops[k]->open(c, err));
			if (rc)
				return rc;
			R->opened[k] = 1;
		}
	}
	return MT_OK;
}

/* The CPU backend shares the host: refuse a plan whose buffers would take
 * more than half of this rank's share of its memory. */
static int fits_host(const struct runner *R, struct mt_error *err)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	double need = 0, have;
	int i;

	if (R->opts.backend != MT_BACKEND_CPU || pages <= 0 || psz <= 0)
		return MT_OK;
	for (i = 0; i < R->p->nitems; i++)
		need += item_bytes(&R->p->items[i], R->opts.backend);
	have = (double)pages * psz / (R->w->local_size > 0 ? R->w->local_size : 1);
	if (need > 0.5 * have)
		return mt_error_set(err, MT_EINVAL, "proxy: the buffers of one layer take %.1f GiB per "
				    "rank, more than half of this host's %.1f GiB per rank: use a "
				    "smaller model, sequence or micro-batch on the CPU backend",
				    need / (1 << 30), have / (1 << 30));
	return MT_OK;
}

static int setup_items(struct runner *R, struct mt_error *err)
{
	const struct mt_proxy_plan *p = R->p;
	int i, rc = proxy_agree(R->w, fits_host(R, err));

	if (rc)
		return rc;

	/* every rank walks every item, so that the agreements match */
	for (i = 0; i < p->nitems; i++) {
		const struct mt_proxy_item *it = &p->items[i];
		struct mt_case c = it->c;

		if (!R->used[it->probe])
			continue;
		if (!rc && R->w->rank < p->used) { /* idle ranks only keep the collective calls */
			rc = R->ops[it->probe]->setup(&R->ctx[it->probe], &c, &R->state[i], err);
			if (!rc) {
				R->have[i] = 1;
				R->mem_bytes += item_bytes(it, R->opts.backend);
			} else {
				mt_error_prefix(err, "proxy item %s: ", it->c.label);
			}
		}
		if (it->probe == MT_PX_COLL)
			rc = agree_err(R->w, rc, err, "setting up");
	}
	return agree_err(R->w, rc, err, "setting up");
}

/* One pass over the items; R->t[i] is each one's time. */
static int run_items(struct runner *R, struct mt_error *err)
{
	const struct mt_proxy_plan *p = R->p;
	int i, rc = MT_OK;

	for (i = 0; i < p->nitems; i++) {
		const struct mt_proxy_item *it = &p->items[i];
		struct mt_case c = it->c;
		double s = 0;

		R->t[i] = 0;
		if (!R->used[it->probe])
			continue;
		if (it->probe == MT_PX_COLL)
			mt_world_barrier(R->w);
		if (!R->have[i] || rc)
			continue;
		c.inner = 1;
		rc = R->ops[it->probe]->run(R->state[i], &c, &s, err);
		R->t[i] = s > 0 ? s : 0;
	}
	return agree_err(R->w, rc, err, "an iteration");
}

/* The composition of docs/MODEL.md "The proxy", on this rank. */
static void compose(const struct runner *R, struct mt_proxy_iter *it)
{
	const struct mt_proxy_plan *p = R->p;
	double f[MT_PX_NPART] = { 0 }, b[MT_PX_NPART] = { 0 }, attn_f = 0;
	double Fd, Bd, Fm, Bm, rcd = 0, rcm = 0, mb, exposed;
	int i, vpp = p->vpp > 0 ? p->vpp : 1;

	memset(it, 0, sizeof(*it));
	for (i = 0; i < p->nitems; i++) {
		const struct mt_proxy_item *x = &p->items[i];
		double t = R->t[i] * x->weight;

		if (x->bwd)
			b[x->part] += t;
		else
			f[x->part] += t;
		if (x->attn_fwd)
			attn_f += t;
	}
	for (i = 0; i < MT_PX_NPART; i++)
		it->part_s[i] = f[i] + b[i];
	Fd = f[MT_PX_COMMON] + f[MT_PX_DENSE];
	Bd = b[MT_PX_COMMON] + b[MT_PX_DENSE];
	Fm = f[MT_PX_COMMON] + f[MT_PX_MOE];
	Bm = b[MT_PX_COMMON] + b[MT_PX_MOE];
	if (p->recompute == MT_RC_FULL)
		rcd = Fd, rcm = Fm;
	else if (p->recompute == MT_RC_SELECTIVE)
		rcd = rcm = attn_f;
	it->layer_dense_s = Fd + Bd + rcd;
	it->layer_moe_s = Fm + Bm + rcm;
	mb = p->layers_dense * it->layer_dense_s + p->layers_moe * it->layer_moe_s +
	     it->part_s[MT_PX_OUTPUT] + vpp * it->part_s[MT_PX_P2P];
	it->step_s = mb * (p->num_mb + (double)(p->pp - 1) / vpp);
	/* DP: the reduce-scatter overlaps the last micro-batch's backward, the
	 * all-gather the first one's forward, when Megatron overlaps them */
	exposed = it->part_s[MT_PX_DP_RS];
	if (p->overlap_grad)
		exposed -= fmin(exposed, p->layers_dense * (Bd + rcd) + p->layers_moe * (Bm + rcm));
	it->step_s += exposed;
	exposed = it->part_s[MT_PX_DP_AG];
	if (p->overlap_param)
		exposed -= fmin(exposed, p->layers_dense * Fd + p->layers_moe * Fm);
	it->step_s += exposed;
}

void mt_proxy_iter_line(char *buf, size_t cap, long long now, int iter, int iters, long long gbs,
			double step_s, double tflops)
{
	char ts[32] = "";
	time_t t = (time_t)now;
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, cap, " [%s] iteration %8d/%8d | consumed samples: %12lld | elapsed time per "
		 "iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: "
		 "%.6E | global batch size: %5lld | lm loss: %.6E | loss scale: %.1f | number of "
		 "skipped iterations: %3d | number of nan iterations: %3d |", ts, iter, iters,
		 (long long)iter * gbs, step_s * 1000.0, tflops, 0.0, gbs, 0.0, 1.0, 0, 0);
}

void mt_proxy_mem_line(char *buf, size_t cap, int rank, int iter, double alloc_mib,
		       double max_alloc_mib, double reserved_mib, double max_reserved_mib)
{
	snprintf(buf, cap, "[Rank %d] (after %d iterations) memory (MB) | allocated: %.2f | max "
		 "allocated: %.2f | reserved: %.2f | max reserved: %.2f", rank, iter, alloc_mib,
		 max_alloc_mib, reserved_mib, max_reserved_mib);
}

static void print_mem(const struct runner *R, FILE *out, int iter)
{
	char line[512];
	double a = R->mem_bytes / (1024.0 * 1024.0), res = a;
	struct rusage ru;

	if (R->opts.backend == MT_BACKEND_CPU && !getrusage(RUSAGE_SELF, &ru))
		res = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
	if (res < a)
		res = a;
	mt_proxy_mem_line(line, sizeof(line), R->w->rank, iter, a, a, res, res);
	fprintf(out, "%s\n", line);
}

static int cmp_step(const void *a, const void *b)
{
	double x = ((const struct mt_proxy_iter *)a)->step_s, y = ((const struct mt_proxy_iter *)b)->step_s;

	return (x > y) - (x < y);
}

static int iterate(struct runner *R, const struct mt_proxy_opts *o, FILE *out,
		   struct mt_proxy_iter *median, struct mt_error *err)
{
	const struct mt_proxy_plan *p = R->p;
	struct mt_proxy_iter *all = calloc((size_t)o->iters, sizeof(*all));
	int i, rc = MT_OK;

	if (!all)
		return mt_error_set(err, MT_ENOMEM, "proxy: out of memory");
	for (i = 0; i < o->warmup + o->iters && !rc; i++) {
		struct mt_proxy_iter it;
		double v[1];

		mt_world_barrier(R->w);
		if ((rc = run_items(R, err)))
			break;
		compose(R, &it);
		v[0] = it.step_s;
		mt_world_max(R->w, v, 1);
		it.step_s = v[0];
		it.tflops_per_gpu = it.step_s > 0 && p->gpus > 0
				    ? p->model_flops_step / it.step_s / p->gpus / 1e12 : 0;
		if (i < o->warmup)
			continue;
		all[i - o->warmup] = it;
		if (R->w->rank == 0 && out) {
			char line[1024];
			int n = i - o->warmup + 1;

			mt_proxy_iter_line(line, sizeof(line), (long long)time(NULL), n, o->iters,
					   p->gbs, it.step_s, it.tflops_per_gpu);
			fprintf(out, "%s\n", line);
			if (n == 1 || n == o->iters)
				print_mem(R, out, n);
			fflush(out);
		}
	}
	if (!rc) {
		qsort(all, (size_t)o->iters, sizeof(*all), cmp_step);
		*median = all[(o->iters - 1) / 2];
	}
	free(all);
	return rc;
}

int mt_proxy_run(const struct mt_proxy_plan *p, const struct mt_proxy_opts *o,
		 const struct mt_world *w, FILE *out, struct mt_proxy_iter *median,
		 struct mt_error *err)
{
	struct runner R;
	int rc, i, g;

	memset(&R, 0, sizeof(R));
	memset(median, 0, sizeof(*median));
	if (o->iters < 1 || o->warmup < 0)
		return mt_error_set(err, MT_EUSAGE, "proxy: --iters must be >= 1 and --warmup >= 0");
	R.p = p;
	R.w = w;
	R.opts.backend = o->backend;
	R.opts.depth = MT_DEPTH_SMOKE;
	R.opts.timeout_s = o->timeout_s;
	R.state = calloc((size_t)p->nitems + 1, sizeof(*R.state));
	R.have = calloc((size_t)p->nitems + 1, sizeof(*R.have));
	R.t = calloc((size_t)p->nitems + 1, sizeof(*R.t));
	if (!R.state || !R.have || !R.t) {
		rc = mt_error_set(err, MT_ENOMEM, "proxy: out of memory");
		goto out;
	}
	make_groups(&R);
	for (g = 0; g < MT_PG_N; g++)
		R.comm[g] = mt_world_split(w, R.groups[g].member ? R.groups[g].color : -1,
					   R.groups[g].grank);
	if (!(rc = open_probes(&R, err)) && !(rc = setup_items(&R, err)))
		rc = iterate(&R, o, out, median, err);
out:
	for (i = 0; i < p->nitems && R.have; i++)
		if (R.have[i])
			R.ops[p->items[i].probe]->teardown(R.state[i]);
	for (i = 0; i < MT_PX_NPROBE; i++)
		if (R.opened[i] && R.ops[i]->close)
			R.ops[i]->close(&R.ctx[i]);
	for (g = 0; g < MT_PG_N; g++)
		mt_world_comm_free(R.comm[g]);
	free(R.state);
	free(R.have);
	free(R.t);
	return rc;
}
