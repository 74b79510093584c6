/* SPDX-License-Identifier: MIT */
/* harness: warm-up, timed repeats, statistics, verification, gathering. */
#include "probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if MT_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

#include "canary.h"
#include "collective.h"
#include "gpu.h"
#include "mpi.h"

void mt_nvtx_push(const char *probe, const char *label)
{
#if MT_HAVE_NVTX
	char name[160];

	snprintf(name, sizeof(name), "%s:%s", probe, label);
	nvtxRangePushA(name);
#else
	(void)probe;
	(void)label;
#endif
}

void mt_nvtx_pop(void)
{
#if MT_HAVE_NVTX
	nvtxRangePop();
#endif
}

/* ------------------------------------------------------------- groups */

#define MAX_GROUPS 16

struct hpriv {
	void *comm[MAX_GROUPS];
};

static int group_bcast(const struct mt_probe_ctx *ctx, int g, void *buf, int len,
		       struct mt_error *err)
{
	const struct hpriv *h = ctx->priv;

	if (g < 0 || g >= ctx->ngroups)
		return mt_error_set(err, MT_EINVAL, "group %d out of range", g);
	if (mt_comm_bcast(h->comm[g], buf, len))
		return mt_error_set(err, MT_EIO, "broadcast in group %s failed",
				    ctx->groups[g].name);
	return MT_OK;
}

static void *group_comm(const struct mt_probe_ctx *ctx, int g)
{
	const struct hpriv *h = ctx->priv;

	return g >= 0 && g < ctx->ngroups ? h->comm[g] : NULL;
}

/* ---------------------------------------------------------------- run */

static void harness_summarise(struct mt_measurement *m, double *samples, int n)
{
	const struct mt_case *c = &m->c;
	double t;

	mt_stats_compute(samples, n, &m->time_us); /* seconds, sorted */
	t = m->time_us.median;
	if (c->flops > 0 && t > 0) {
		m->tflops = c->flops / t / 1e12;
		mt_stats_invert(samples, n, c->flops / 1e12, &m->rate);
	}
	if (c->moved > 0 && t > 0) {
		m->gbps = c->moved / t / 1e9;
		if (c->busbw_factor > 0) {
			m->busbw_gbps = m->gbps * c->busbw_factor;
			mt_stats_invert(samples, n, c->moved / 1e9 * c->busbw_factor, &m->rate);
		} else if (!(c->flops > 0)) {
			mt_stats_invert(samples, n, c->moved / 1e9, &m->rate);
		}
	}
	mt_stats_scale(&m->time_us, 1e6, &m->time_us);
}

/* All ranks agree: the worst status (most negative) wins. */
static int harness_agree(const struct mt_world *w, int rc)
{
	int v = rc;

	mt_world_min_int(w, &v, 1);
	return v;
}

struct runctx {
	const struct mt_probe *p;
	const struct mt_probe_ops *ops;
	struct mt_probe_ctx *ctx;
	struct mt_sink *sink;
	int *failed;
};

/* Measure one case on this rank (device probes) or with the group
 * (collective probes).  Fills *m; returns MT_OK, or an error for the case
 * (recorded, the run goes on) with m->verified = -1 and the reason. */
static int harness_measure(struct runctx *r, struct mt_case *c, struct mt_measurement *m)
{
	const struct mt_probe_opts *o = r->ctx->opts;
	const struct mt_world *w = r->ctx->world;
	int coll = r->p->kind == MT_PROBE_COLLECTIVE;
	int warm = o->warmup > 0 ? o->warmup : 2;
	int reps = o->repeats > 0 ? o->repeats : (o->depth == MT_DEPTH_FULL ? 20 : o->depth == MT_DEPTH_SMOKE ? 3 : 7);
	double *samples = NULL;
	void *state = NULL;
	struct mt_error e = MT_ERROR_INIT;
	int rc, i, have_state = 0;

	memset(m, 0, sizeof(*m));
	m->probe = r->p;
	m->backend = o->backend;
	m->rank = coll ? -1 : w->rank;
	m->device = r->ctx->device;
	snprintf(m->host, sizeof(m->host), "%s", w->host);
	mt_nvtx_push(r->p->name, c->label);
	rc = r->ops->setup(r->ctx, c, &state, &e);
	have_state = rc == MT_OK;
	if (coll) {
		double inner = c->inner;

		rc = harness_agree(w, rc);
		if (rc == MT_OK) { /* every rank of a group runs the same count */
			mt_world_max(w, &inner, 1);
			c->inner = (int)inner;
		}
	}
	if (c->inner < 1)
		c->inner = 1;
	m->c = *c;
	if (rc)
		goto out;
	if (o->backend == MT_BACKEND_CPU) {
		m->canary_us = mt_canary_us();
		if (coll)
			mt_world_max(w, &m->canary_us, 1);
	}
	samples = calloc((size_t)reps, sizeof(double));
	if (!samples) {
		rc = mt_error_set(&e, MT_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < warm + reps && rc == MT_OK; i++) {
		double s = 0;

		if (coll)
			mt_world_barrier(w);
		rc = r->ops->run(state, c, &s, &e);
		if (coll) {
			/* nccl-tests: the time is the mean over the ranks that ran */
			double v[2] = { s, s > 0 ? 1 : 0 };

			if (harness_agree(w, rc) && !rc)
				rc = mt_error_set(&e, MT_EIO, "another rank failed");
			mt_world_sum(w, v, 2);
			s = v[1] > 0 ? v[0] / v[1] : 0;
		}
		if (i >= warm)
			samples[i - warm] = s / c->inner;
	}
	if (rc)
		goto out;
	if (r->ops->verify) {
		int vr = r->ops->verify(state, c, &e);

		if (coll)
			vr = harness_agree(w, vr);
		if (vr) {
			m->verified = -1;
			snprintf(m->note, sizeof(m->note), "verification failed: %.200s",
				 e.msg[0] ? e.msg : "on another rank");
			(*r->failed)++;
		} else {
			m->verified = 1;
		}
	}
	m->nsamples = reps < MT_MAX_SAMPLES ? reps : MT_MAX_SAMPLES;
	for (i = 0; i < m->nsamples; i++)
		m->samples_us[i] = (float)(samples[i] * 1e6);
	harness_summarise(m, samples, reps);
	if (m->verified >= 0 && r->ops->extra)
		r->ops->extra(state, c, m->note, sizeof(m->note));
out:
	mt_nvtx_pop();
	if (have_state)
		r->ops->teardown(state);
	free(samples);
	if (rc) {
		m->verified = -1;
		snprintf(m->note, sizeof(m->note), "%.250s", e.msg[0] ? e.msg : mt_strerror(rc));
	}
	return rc;
}

static void emit_gathered(struct runctx *r, struct mt_measurement *m)
{
	const struct mt_world *w = r->ctx->world;
	struct mt_measurement *all = NULL;
	int i;

	if (r->p->kind == MT_PROBE_COLLECTIVE || !w->mpi) {
		if (w->rank == 0)
			r->sink->emit(r->sink, m);
		return;
	}
	if (mt_world_gather(w, m, (int)sizeof(*m), (void **)&all, NULL))
		return;
	if (w->rank == 0) {
		for (i = 0; i < w->size; i++) {
			all[i].probe = r->p; /* pointers do not travel between processes */
			r->sink->emit(r->sink, &all[i]);
		}
		free(all);
	}
}

int mt_probe_run(const struct mt_probe *p, const struct mt_probe_opts *opts,
		 const struct mt_world *world, struct mt_sink *sink,
		 int (*skip)(void *user, const struct mt_probe *p, const struct mt_case *c),
		 void *skip_user, int *failed, struct mt_error *err)
{
	const struct mt_probe_ops *ops = p->ops[opts->backend];
	struct mt_group groups[MAX_GROUPS];
	struct hpriv priv;
	struct mt_probe_ctx ctx;
	struct mt_case *cases = NULL;
	struct runctx r;
	int rc, ncases = 0, i, g, opened = 0, ndev = 1;

	memset(&priv, 0, sizeof(priv));
	memset(&ctx, 0, sizeof(ctx));
	ctx.opts = opts;
	ctx.world = world;
	ctx.device = world->local_rank;
	ctx.ndevices = 1;
	ctx.priv = &priv;
	ctx.group_bcast = group_bcast;
	ctx.group_comm = group_comm;
	ctx.probe = p;
	if (!ops)
		return mt_error_set(err, MT_EUNSUPPORTED, "probe %s has no %s backend", p->name,
				    opts->backend == MT_BACKEND_CPU ? "CPU" : "CUDA");
	if (opts->backend == MT_BACKEND_CUDA && opts->single_process && !world->mpi) {
		struct mt_cuda_env env;

		ndev = mt_cuda_load(NULL, &env, NULL) ? 1 : env.device_count;
		if (ndev < 1)
			ndev = 1;
	}
	ctx.ndevices = ndev;
	if (p->kind == MT_PROBE_COLLECTIVE) {
		ctx.ngroups = mt_coll_layouts(world, ndev > 1 ? ndev : 0, groups, MAX_GROUPS);
		ctx.groups = groups;
	}
	rc = ops->applicable ? ops->applicable(&ctx, err) : MT_OK;
	if (harness_agree(world, rc) && !rc)
		rc = mt_error_set(err, MT_EUNSUPPORTED, "%s does not apply on another rank", p->name);
	if (rc)
		return rc;
	for (g = 0; g < ctx.ngroups; g++)
		priv.comm[g] = mt_world_split(world, groups[g].member ? groups[g].color : -1,
					      groups[g].grank);
	if (ops->open) {
		rc = harness_agree(world, ops->open(&ctx, err));
		if (rc)
			goto out;
		opened = 1;
	}
	if ((rc = ops->plan(&ctx, &cases, &ncases, err)))
		goto out;
	r.p = p;
	r.ops = ops;
	r.ctx = &ctx;
	r.sink = sink;
	r.failed = failed;
	for (i = 0; i < ncases; i++) {
		struct mt_measurement m;
		int d, s = 0;

		/* a resumed pass: rank 0 decides from what it already has */
		if (skip && world->rank == 0)
			s = skip(skip_user, p, &cases[i]);
		if (world->mpi)
			mt_world_bcast(world, &s, (int)sizeof(s));
		if (s)
			continue;
		if (world->rank == 0 && sink->progress)
			sink->progress(sink, p, i, ncases, cases[i].label);
		/* one process over several GPUs: device probes on each in turn */
		for (d = 0; d < (p->kind == MT_PROBE_COLLECTIVE ? 1 : ndev); d++) {
			struct mt_case c = cases[i];

			if (p->kind != MT_PROBE_COLLECTIVE)
				ctx.device = ndev > 1 ? d : world->local_rank;
			rc = harness_measure(&r, &c, &m);
			if (rc == MT_EUNSUPPORTED)
				m.verified = 0; /* not applicable to this case: recorded */
			else if (rc)
				(*failed)++;
			if (ndev > 1)
				m.rank = d;
			m.round = opts->round;
			emit_gathered(&r, &m);
		}
	}
	if (world->rank == 0 && sink->progress)
		sink->progress(sink, p, ncases, ncases, "");
	rc = MT_OK;
out:
	if (opened && ops->close)
		ops->close(&ctx);
	for (g = 0; g < ctx.ngroups; g++)
		mt_world_comm_free(priv.comm[g]);
	free(cases);
	return rc;
}
