/* SPDX-License-Identifier: MIT */
/* records: what profiler/inject.c and profiler/inject/records.c share in
 * libmegatune_trace.so: the CUPTI functions the library calls (g_cupti, loaded by
 * inject.c's set-up), the count of dropped records, and the decoding of CUPTI's
 * activity records into megatune.trace/1 lines (records.c).
 *
 * Private to the library: its symbols are hidden.  Every call is made with inject.c's
 * g_lock held; the lines go out through out.h.  It includes CUPTI's header, so the
 * Makefile's `headers` compiles it alone only where cupti.h is.
 */
#ifndef MT_INJECT_RECORDS_H
#define MT_INJECT_RECORDS_H

#include <cupti.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* The CUPTI functions the library calls; found in the copy lib/dlsearch.h picks (the one this
 * process already has, $MEGATUNE_CUPTI_PATH, the loader's path, the Python wheels, then the
 * toolkit), whose API version must be the one the library was compiled against. */
#define CUPTI_FNS(X)                            \
	X(cuptiGetVersion)                      \
	X(cuptiGetResultString)                 \
	X(cuptiGetCallbackName)                 \
	X(cuptiActivityGetNextRecord)           \
	X(cuptiActivityGetNumDroppedRecords)    \
	X(cuptiActivityEnable)                  \
	X(cuptiActivityDisable)                 \
	X(cuptiActivityFlushAll)                \
	X(cuptiActivityEnableRuntimeApi)        \
	X(cuptiActivityEnableDriverApi)         \
	X(cuptiActivitySetAttribute)            \
	X(cuptiActivityRegisterCallbacks)       \
	X(cuptiActivityEnableAllSyncRecords)
#define CUPTI_PTR(f) __typeof__(&f) f;
struct cupti_fns {
	CUPTI_FNS(CUPTI_PTR)
};
extern struct cupti_fns g_cupti; /* inject.c: found once per process */
/* records CUPTI reports dropped plus ours (the end record's "dropped") */
extern uint64_t g_dropped;

/* One CUPTI activity record: its trace line, if it has one (a context record only
 * teaches its device; an NVTX start waits for its end). */
void on_record(const CUpti_Activity *rec);
/* The NVTX ranges still open, counted as dropped, and their table freed. */
void nv_free_all(void);
/* Forget the demangled names (the end of the trace). */
void dm_free_all(void);

#pragma GCC visibility pop

#endif
