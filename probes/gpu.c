/* SPDX-License-Identifier: MIT */
/* gpu: load build/libmegatune_cuda.so at run time and forward the CUDA ops of
 * each probe to it (probes/gpu.h). */
#define _GNU_SOURCE
#include "gpu.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends.h"
#include "collective.h"

static const struct mt_cuda_api *g_api;
static struct mt_cuda_env g_env;
static struct mt_error g_err;
static int g_tried;

/* The library next to the executable (build/), else the loader's search. */
static void *open_lib(char *why, size_t n)
{
	const char *env = getenv("MEGATUNE_CUDA_LIB");
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t len;
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
		if (slash) {
			*slash = 0;
			snprintf(path, sizeof(path), "%s/libmegatune_cuda.so", exe);
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
	snprintf(why, n, "libmegatune_cuda.so was not built (megatune was built without "
		 "the CUDA toolkit) and is not on the library path");
	return NULL;
}

int mt_cuda_load(const struct mt_cuda_api **api, struct mt_cuda_env *env, struct mt_error *err)
{
	if (!g_tried) {
		char why[512] = "";
		void *h;
		mt_cuda_api_fn fn;

		g_tried = 1;
		h = open_lib(why, sizeof(why));
		if (!h) {
			mt_error_set(&g_err, MT_EUNSUPPORTED, "CUDA backend unavailable: %s", why);
		} else if (!(fn = (mt_cuda_api_fn)(uintptr_t)dlsym(h, "mt_cuda_api"))) {
			mt_error_set(&g_err, MT_EUNSUPPORTED,
				     "CUDA backend unavailable: libmegatune_cuda.so lacks mt_cuda_api");
		} else if (!(g_api = fn()) || g_api->abi != MT_CUDA_ABI) {
			mt_error_set(&g_err, MT_EUNSUPPORTED,
				     "CUDA backend unavailable: libmegatune_cuda.so has interface %d, "
				     "this megatune needs %d (rebuild both)",
				     g_api ? g_api->abi : -1, MT_CUDA_ABI);
			g_api = NULL;
		} else if (g_api->env(&g_env, &g_err)) {
			if (!g_err.code)
				mt_error_set(&g_err, MT_EUNSUPPORTED, "no usable CUDA GPU");
			g_api = NULL;
		} else if (g_env.device_count <= 0) {
			mt_error_set(&g_err, MT_EUNSUPPORTED,
				     "no GPU visible (check CUDA_VISIBLE_DEVICES)");
			g_api = NULL;
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

/* ------------------------------------------------------- forwarding ops */

enum { P_GEMM, P_ATTN, P_COLL, P_OFF };

static const struct mt_probe_ops *table(int which, struct mt_error *err)
{
	const struct mt_cuda_api *a;

	if (mt_cuda_load(&a, NULL, err))
		return NULL;
	switch (which) {
	case P_GEMM: return a->gemm;
	case P_ATTN: return a->attention;
	case P_COLL: return a->collective;
	default: return a->offload;
	}
}

/* The state handed to the probe is the library's; the ops table is looked up
 * again on every call (it is cached), so no wrapper state is needed. */
#define FORWARD(tag, which)                                                                   \
	static int tag##_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)     \
	{                                                                                     \
		const struct mt_probe_ops *o = table(which, err);                             \
		if (!o)                                                                       \
			return err && err->code ? err->code : MT_EUNSUPPORTED;               \
		return o->applicable ? o->applicable(ctx, err) : MT_OK;                      \
	}                                                                                     \
	static int tag##_open(struct mt_probe_ctx *ctx, struct mt_error *err)                 \
	{                                                                                     \
		const struct mt_probe_ops *o = table(which, err);                             \
		if (!o)                                                                       \
			return err && err->code ? err->code : MT_EUNSUPPORTED;               \
		return o->open ? o->open(ctx, err) : MT_OK;                                  \
	}                                                                                     \
	static void tag##_close(struct mt_probe_ctx *ctx)                                     \
	{                                                                                     \
		const struct mt_probe_ops *o = table(which, NULL);                            \
		if (o && o->close)                                                            \
			o->close(ctx);                                                        \
	}                                                                                     \
	static int tag##_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **st,  \
			       struct mt_error *err)                                          \
	{                                                                                     \
		const struct mt_probe_ops *o = table(which, err);                             \
		if (!o)                                                                       \
			return err && err->code ? err->code : MT_EUNSUPPORTED;               \
		return o->setup(ctx, c, st, err);                                             \
	}                                                                                     \
	static int tag##_run(void *st, const struct mt_case *c, double *s, struct mt_error *err) \
	{                                                                                     \
		return table(which, NULL)->run(st, c, s, err);                                \
	}                                                                                     \
	static int tag##_verify(void *st, const struct mt_case *c, struct mt_error *err)      \
	{                                                                                     \
		const struct mt_probe_ops *o = table(which, NULL);                            \
		return o->verify ? o->verify(st, c, err) : MT_OK;                             \
	}                                                                                     \
	static void tag##_teardown(void *st)                                                  \
	{                                                                                     \
		table(which, NULL)->teardown(st);                                             \
	}                                                                                     \
	static void tag##_extra(void *st, const struct mt_case *c, char *buf, size_t n)       \
	{                                                                                     \
		const struct mt_probe_ops *o = table(which, NULL);                            \
		if (o->extra)                                                                 \
			o->extra(st, c, buf, n);                                              \
	}

FORWARD(gemm, P_GEMM)
FORWARD(attn, P_ATTN)
FORWARD(coll, P_COLL)
FORWARD(off, P_OFF)

#define OPS(tag, planfn)                                                                   \
	{ .applicable = tag##_applicable, .open = tag##_open, .close = tag##_close,          \
	  .plan = planfn, .setup = tag##_setup, .run = tag##_run, .verify = tag##_verify,     \
	  .teardown = tag##_teardown, .extra = tag##_extra }

const struct mt_probe_ops mt_gemm_cuda = OPS(gemm, mt_plan_gemm);
const struct mt_probe_ops mt_attention_cuda = OPS(attn, mt_plan_attention);
const struct mt_probe_ops mt_collective_cuda = OPS(coll, mt_plan_collective);
const struct mt_probe_ops mt_offload_cuda = OPS(off, mt_plan_offload);
