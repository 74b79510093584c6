/* SPDX-License-Identifier: MIT */
/* dl: cuBLASLt, cuDNN and NCCL, loaded at run time (inside build/libmegatune_cuda.so).
 *
 * The library links none of the three: each is found by lib/dlsearch.h (the toolkit first,
 * then the pip wheels) the first time env() runs, checked against the major version of the
 * headers it was built with, and its functions are reached through the table `mtc_dl`:
 *
 *     st = mtc_dl.cublasLtCreate(&lt);
 *
 * A function of a library that did not load is NULL: the probes call mtc_dl_need() (through
 * the api's need(), before a probe opens) so that they never reach one.  A missing library
 * is never fatal to the others: the gemm probe runs where cuDNN is absent.
 *
 * Each table lists the functions of one library; a function marked optional (O) may be
 * absent from an older release of it (ncclAlltoAll before NCCL 2.28) and is then NULL.
 * CUDA C++ only (decltype of the headers' own declarations keeps the types exact).
 */
#ifndef MT_CUDA_DL_H
#define MT_CUDA_DL_H

#include <cublasLt.h>
#include <cudnn.h>
#include <nccl.h>

#include "mtc.h"

/* X(function) required, O(function) optional */
#define MTC_DL_CUBLASLT(X, O)                       \
	X(cublasLtGetVersion)                       \
	X(cublasLtCreate)                           \
	X(cublasLtDestroy)                          \
	X(cublasLtGetStatusName)                    \
	X(cublasLtGetStatusString)                  \
	X(cublasLtMatmul)                           \
	X(cublasLtMatmulAlgoConfigGetAttribute)     \
	X(cublasLtMatmulAlgoGetHeuristic)           \
	X(cublasLtMatmulDescCreate)                 \
	X(cublasLtMatmulDescDestroy)                \
	X(cublasLtMatmulDescSetAttribute)           \
	X(cublasLtMatmulPreferenceCreate)           \
	X(cublasLtMatmulPreferenceDestroy)          \
	X(cublasLtMatmulPreferenceSetAttribute)     \
	X(cublasLtMatrixLayoutCreate)               \
	X(cublasLtMatrixLayoutDestroy)

#define MTC_DL_CUDNN(X, O)                          \
	X(cudnnGetVersion)                          \
	X(cudnnBackendCreateDescriptor)             \
	X(cudnnBackendDestroyDescriptor)            \
	X(cudnnBackendExecute)                      \
	X(cudnnBackendFinalize)                     \
	X(cudnnBackendGetAttribute)                 \
	X(cudnnBackendSetAttribute)                 \
	X(cudnnCreate)                              \
	X(cudnnDestroy)                             \
	X(cudnnGetErrorString)                      \
	X(cudnnGetLastErrorString)                  \
	X(cudnnSetStream)

#define MTC_DL_NCCL(X, O)                           \
	X(ncclGetVersion)                           \
	X(ncclAllGather)                            \
	X(ncclAllReduce)                            \
	O(ncclAlltoAll)                             \
	X(ncclBroadcast)                            \
	X(ncclCommAbort)                            \
	X(ncclCommDestroy)                          \
	X(ncclCommFinalize)                         \
	X(ncclCommGetAsyncError)                    \
	X(ncclCommInitAll)                          \
	X(ncclCommInitRankConfig)                   \
	X(ncclGetErrorString)                       \
	X(ncclGetLastError)                         \
	X(ncclGetUniqueId)                          \
	X(ncclGroupEnd)                             \
	X(ncclGroupStart)                           \
	X(ncclRecv)                                 \
	X(ncclReduceScatter)                        \
	X(ncclSend)

#define MTC_DL_PTR(f) decltype(&::f) f;

struct mtc_dl_table {
	MTC_DL_CUBLASLT(MTC_DL_PTR, MTC_DL_PTR)
	MTC_DL_CUDNN(MTC_DL_PTR, MTC_DL_PTR)
	MTC_DL_NCCL(MTC_DL_PTR, MTC_DL_PTR)
};

/* The functions; filled by mtc_dl_load(), NULL for a library that is not loaded. */
extern struct mtc_dl_table mtc_dl;

/* Find and load the three libraries, once (thread-safe); never fails as a whole: what did
 * not load is kept with its reason for mtc_dl_need() and mtc_dl_info(). */
void mtc_dl_load(void);

/* MT_OK when library `lib` (enum mt_cuda_libid) is loaded with every required function;
 * else MT_ENOLIB with the library, the places looked in and what to do. */
int mtc_dl_need(int lib, struct mt_error *err);

/* What became of library `lib`: name, version, path, where found, or why not. */
void mtc_dl_info(int lib, struct mt_cuda_lib *out);

#endif
