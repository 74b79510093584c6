/* SPDX-License-Identifier: MIT */
/* dl: cuBLASLt, cuDNN and NCCL loaded at run time (dl.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dl.h"
#include "../../lib/dlsearch.h"

#define MTC_STR2(x) #x
#define MTC_STR(x) MTC_STR2(x)

/* where each library is looked for, beside the loader's own search */
#define TOOLKIT_DIRS "lib64:lib:targets/x86_64-linux/lib:targets/sbsa-linux/lib"

/* what each library needs to be usable: its major version, as built */
static const int want_major[MT_CUDA_NLIBS] = { CUBLAS_VER_MAJOR, CUDNN_MAJOR, NCCL_MAJOR };

struct mtc_dl_table mtc_dl;

static struct mt_cuda_lib g_info[MT_CUDA_NLIBS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Resolve every function of one library into `t`: 0, or -1 with the first missing
 * required one in `miss`. */
static int resolve(void *h, int lib, struct mtc_dl_table *t, const char **miss)
{
	void *p;

	*miss = NULL;
#define MTC_DL_REQ(f)                                                  \
	p = dlsym(h, #f);                                              \
	if (!p && !*miss)                                              \
		*miss = #f;                                            \
	memcpy(&t->f, &p, sizeof(p));
#define MTC_DL_OPT(f)                                                  \
	p = dlsym(h, #f);                                              \
	memcpy(&t->f, &p, sizeof(p));
	switch (lib) {
	case MT_LIB_CUBLASLT:
		MTC_DL_CUBLASLT(MTC_DL_REQ, MTC_DL_OPT)
		break;
	case MT_LIB_CUDNN:
		MTC_DL_CUDNN(MTC_DL_REQ, MTC_DL_OPT)
		break;
	default:
		MTC_DL_NCCL(MTC_DL_REQ, MTC_DL_OPT)
		break;
	}
#undef MTC_DL_REQ
#undef MTC_DL_OPT
	return *miss ? -1 : 0;
}

/* The library's own version code (cuBLASLt 130100, cuDNN 91300, NCCL 22809). */
static int version_of(int lib, const struct mtc_dl_table *t)
{
	int v = 0;

	switch (lib) {
	case MT_LIB_CUBLASLT:
		return (int)t->cublasLtGetVersion();
	case MT_LIB_CUDNN:
		return (int)t->cudnnGetVersion();
	default:
		if (t->ncclGetVersion(&v) != ncclSuccess)
			return 0;
		return v;
	}
}

/* A copy is usable when it has every required function and the major version the
 * headers had: else the search goes on (a CUDA 12 cuDNN ahead of the right one). */
static int accept_lib(int lib, void *h, char *why, size_t n)
{
	struct mtc_dl_table t;
	const char *miss;
	int v;

	memset(&t, 0, sizeof(t));
	if (resolve(h, lib, &t, &miss)) {
		snprintf(why, n, "it lacks %s: an older release than this library needs", miss);
		return -1;
	}
	v = version_of(lib, &t);
	if (v / 10000 != want_major[lib]) {
		snprintf(why, n, "version %d, this library was built for major version %d", v,
			 want_major[lib]);
		return -1;
	}
	return 0;
}

static int accept_cublaslt(void *h, char *why, size_t n)
{
	return accept_lib(MT_LIB_CUBLASLT, h, why, n);
}

static int accept_cudnn(void *h, char *why, size_t n)
{
	return accept_lib(MT_LIB_CUDNN, h, why, n);
}

static int accept_nccl(void *h, char *why, size_t n)
{
	return accept_lib(MT_LIB_NCCL, h, why, n);
}

static const struct mt_dl_spec specs[MT_CUDA_NLIBS] = {
	{ "cuBLASLt", "libcublasLt.so." MTC_STR(CUBLAS_VER_MAJOR), NULL, TOOLKIT_DIRS,
	  "nvidia/cu" MTC_STR(CUBLAS_VER_MAJOR) "/lib:nvidia/cublas/lib", accept_cublaslt },
	{ "cuDNN", "libcudnn.so." MTC_STR(CUDNN_MAJOR), NULL, TOOLKIT_DIRS, "nvidia/cudnn/lib",
	  accept_cudnn },
	{ "NCCL", "libnccl.so." MTC_STR(NCCL_MAJOR), NULL, TOOLKIT_DIRS, "nvidia/nccl/lib",
	  accept_nccl },
};

static void load_one(int lib)
{
	struct mt_cuda_lib *in = &g_info[lib];
	struct mt_dl_found f;
	const char *miss;

	memset(in, 0, sizeof(*in));
	mtc_copy(in->name, sizeof(in->name), specs[lib].label);
	if (mt_dl_find(&specs[lib], MT_DL_TOOLKIT_FIRST, &f, in->why, sizeof(in->why)))
		return;
	/* accepted, so every required function is there: publish this library's part */
	resolve(f.handle, lib, &mtc_dl, &miss);
	in->version = version_of(lib, &mtc_dl);
	mtc_copy(in->path, sizeof(in->path), f.path);
	mtc_copy(in->from, sizeof(in->from), f.from);
}

static void load_all(void)
{
	int i;

	/* cuBLASLt first: cuDNN's engines use it, and find it loaded */
	for (i = 0; i < MT_CUDA_NLIBS; i++)
		load_one(i);
}

void mtc_dl_load(void)
{
	pthread_once(&g_once, load_all);
}

int mtc_dl_need(int lib, struct mt_error *err)
{
	const struct mt_cuda_lib *in;

	mtc_dl_load();
	if (lib < 0 || lib >= MT_CUDA_NLIBS)
		return mtc_fail(err, MT_EINVAL, "unknown library %d", lib);
	in = &g_info[lib];
	if (in->version)
		return MT_OK;
	return mtc_fail(err, MT_ENOLIB, "%s; this machine has a GPU, so install it (the CUDA "
			"toolkit, a distribution package or the pip wheel) or name its folder in "
			"MEGATUNE_CUDA_LIBRARY_PATH", in->why);
}

void mtc_dl_info(int lib, struct mt_cuda_lib *out)
{
	mtc_dl_load();
	if (lib >= 0 && lib < MT_CUDA_NLIBS)
		*out = g_info[lib];
	else
		memset(out, 0, sizeof(*out));
}
