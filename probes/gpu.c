/* SPDX-License-Identifier: MIT */
/* gpu: load build/libmegatune_cuda.so at run time and forward the CUDA ops of
 * each probe to it (probes/gpu.h). */
#define _GNU_SOURCE
#include "gpu.h"

#include "../lib/dlsearch.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static const struct mt_cuda_api *g_api;
static int g_loaded;              /* the library loaded with our ABI (g_env filled) */
static struct mt_cuda_env g_env;
static struct mt_error g_err;
static int g_tried;

/* The library next to the executable (build/), else in ../lib/megatune/ from it (make
 * install: bin/ and lib/megatune/), else the loader's search. */
static void *open_lib(char *why, size_t n)
{
	static const char *const where[] = { "", "../lib/megatune/" };
	const char *env = getenv("MEGATUNE_CUDA_LIB");
	char exe[PATH_MAX], path[PATH_MAX + 48];
	ssize_t len;
	size_t i;
	void *h;

	if (env && *env) {
		if ((h = dlopen(env, RTLD_NOW | RTLD_LOCAL)))
			return h;
		snprintf(why, n, "%s", dlerror());
		return NULL;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		char *slash;

		exe[len] = 0;
		slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		for (i = 0; slash && i < sizeof(where) / sizeof(where[0]); i++) {
			snprintf(path, sizeof(path), "%s/%slibmegatune_cuda.so", exe, where[i]);
			if (access(path, R_OK) == 0) {
				if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
					return h;
				snprintf(why, n, "%s", dlerror());
				return NULL;
			}
		}
	}
	if ((h = dlopen("libmegatune_cuda.so", RTLD_NOW | RTLD_LOCAL)))
		return h;
	snprintf(why, n, "libmegatune_cuda.so is neither next to this executable (%.200s), nor in "
		 "../lib/megatune from it, nor on the loader's path: megatune was built without the "
		 "CUDA toolkit (nvcc); $MEGATUNE_CUDA_LIB names another copy", len > 0 ? exe : "?");
	return NULL;
}

int mt_cuda_load(const struct mt_cuda_api **api, struct mt_cuda_env *env, struct mt_error *err)
{
	if (!g_tried) {
		/* no GPU: not applicable; a GPU the driver has bound: a build or set-up to fix */
		int ngpu = mt_dl_nvidia_gpus(), code = ngpu > 0 ? MT_ENOLIB : MT_EUNSUPPORTED;
		char why[512] = "", where[64] = "";
		void *h;
		mt_cuda_api_fn fn;

		g_tried = 1;

		if (ngpu > 0)
			snprintf(where, sizeof(where), " on a machine with %d NVIDIA GPU%s", ngpu,
				 ngpu == 1 ? "" : "s");
		h = open_lib(why, sizeof(why));
		if (!h) {
			mt_error_set(&g_err, code, "CUDA backend unavailable%s: %s", where, why);
		} else if (!(fn = (mt_cuda_api_fn)(uintptr_t)dlsym(h, "mt_cuda_api"))) {
			mt_error_set(&g_err, code, "CUDA backend unavailable%s: libmegatune_cuda.so "
				     "lacks mt_cuda_api", where);
		} else if (!(g_api = fn()) || g_api->abi != MT_CUDA_ABI) {
			mt_error_set(&g_err, code,
				     "CUDA backend unavailable%s: libmegatune_cuda.so has interface "
				     "%d, this megatune needs %d (rebuild both)", where,
				     g_api ? g_api->abi : -1, MT_CUDA_ABI);
			g_api = NULL;
		} else {
			g_loaded = 1; /* env() fills the libraries even without a GPU */
			if (g_api->env(&g_env, &g_err)) {
				if (!g_err.code)
					mt_error_set(&g_err, MT_EUNSUPPORTED, "no usable CUDA GPU");
				g_api = NULL;
			} else if (g_env.device_count <= 0) {
				mt_error_set(&g_err, MT_EUNSUPPORTED,
					     "no GPU visible (check CUDA_VISIBLE_DEVICES)");
				g_api = NULL;
			}
		}
	}
	if (!g_api) {
		if (err)
			*err = g_err;
		return g_err.code ? g_err.code : MT_EUNSUPPORTED;
	}
	if (api)
		*api = g_api;
	if (env)
		*env = g_env;
	return MT_OK;
}

int mt_cuda_libraries(struct mt_cuda_lib libs[MT_CUDA_NLIBS], struct mt_error *err)
{
	int rc = mt_cuda_load(NULL, NULL, err);

	if (!g_loaded)
		return rc ? rc : MT_EUNSUPPORTED;
	memcpy(libs, g_env.libs, sizeof(g_env.libs));
	return MT_OK;
}

/* ------------------------------------------------------- forwarding ops */

const struct mt_probe_ops *mt_cuda_ops(const char *name, struct mt_error *err)
{
	const struct mt_cuda_api *a;
	int i;

	if (mt_cuda_load(&a, NULL, err))
		return NULL;
	for (i = 0; i < a->nprobes; i++)
		if (!strcmp(a->probes[i].name, name))
			return a->need(name, err) ? NULL : a->probes[i].ops;
	mt_error_set(err, MT_EUNSUPPORTED, "the CUDA library has no %s probe", name);
	return NULL;
}

/* The state handed to the harness: the library's ops and its own state. */
struct fwd_state {
	const struct mt_probe_ops *ops;
	void *inner;
};

static const struct mt_probe_ops *ops_of(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	return mt_cuda_ops(ctx->probe->name, err);
}

static int fwd_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	const struct mt_probe_ops *o = ops_of(ctx, err);

	if (!o)
		return err && err->code ? err->code : MT_EUNSUPPORTED;
	return o->applicable ? o->applicable(ctx, err) : MT_OK;
}

static int fwd_open(struct mt_probe_ctx *ctx, struct mt_error *err)
{
	const struct mt_probe_ops *o = ops_of(ctx, err);

	if (!o)
		return err && err->code ? err->code : MT_EUNSUPPORTED;
	return o->open ? o->open(ctx, err) : MT_OK;
}

static void fwd_close(struct mt_probe_ctx *ctx)
{
	const struct mt_probe_ops *o = ops_of(ctx, NULL);

	if (o && o->close)
		o->close(ctx);
}

static int fwd_plan(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		    struct mt_error *err)
{
	const struct mt_probe_ops *cpu = ctx->probe->ops[MT_BACKEND_CPU];

	if (!cpu || !cpu->plan)
		return mt_error_set(err, MT_EUNSUPPORTED, "probe %s has no plan", ctx->probe->name);
	return cpu->plan(ctx, cases, n, err);
}

static int fwd_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
		     struct mt_error *err)
{
	const struct mt_probe_ops *o = ops_of(ctx, err);
	struct fwd_state *f;
	int rc;

	*state = NULL;
	if (!o)
		return err && err->code ? err->code : MT_EUNSUPPORTED;
	if (!(f = calloc(1, sizeof(*f))))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	f->ops = o;
	if ((rc = o->setup(ctx, c, &f->inner, err))) {
		free(f);
		return rc;
	}
	*state = f;
	return MT_OK;
}

static int fwd_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct fwd_state *f = state;

	return f->ops->run(f->inner, c, seconds, err);
}

static int fwd_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	struct fwd_state *f = state;

	return f->ops->verify ? f->ops->verify(f->inner, c, err) : MT_OK;
}

static void fwd_teardown(void *state)
{
	struct fwd_state *f = state;

	if (!f)
		return;
	f->ops->teardown(f->inner);
	free(f);
}

static void fwd_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	struct fwd_state *f = state;

	if (f->ops->extra)
		f->ops->extra(f->inner, c, buf, n);
}

const struct mt_probe_ops mt_cuda_forward = {
	.applicable = fwd_applicable,
	.open = fwd_open,
	.close = fwd_close,
	.plan = fwd_plan,
	.setup = fwd_setup,
	.run = fwd_run,
	.verify = fwd_verify,
	.teardown = fwd_teardown,
	.extra = fwd_extra,
};
