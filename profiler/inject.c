/* SPDX-License-Identifier: MIT
 *
 * libmegatune_trace.so: a CUPTI injection library that traces an unmodified CUDA
 * process (PyTorch, Megatron) into a JSON Lines file.  This file holds the CUPTI
 * side (set-up, callbacks, finishing); profiler/inject/records.c the record decoding
 * (names, NVTX ranges, one line per record); profiler/inject/out.c the buffered writer
 * of the trace file.
 *
 * USE
 *   CUDA_INJECTION64_PATH=/abs/path/libmegatune_trace.so \
 *   NVTX_INJECTION64_PATH=/abs/path/libmegatune_trace.so \   (optional: NVTX ranges)
 *   MEGATUNE_TRACE_DIR=/some/dir  torchrun ... train.py
 *
 * CONTRACT
 *   - CUPTI is not linked: it is found at run time by lib/dlsearch.h (compiled in), in
 *     this order: the copy the process has already loaded (PyTorch's), the file
 *     $MEGATUNE_CUPTI_PATH names, the folders of $MEGATUNE_CUDA_LIBRARY_PATH, the loader's
 *     path, the Python wheels (site-packages/nvidia/cu13/lib, nvidia/cuda_cupti/lib), the
 *     CUDA toolkit; the first copy whose API version is CUPTI_API_VERSION is used. So one
 *     build traces both a toolkit program and a pip-installed PyTorch, and one CUPTI
 *     serves the process.
 *   - Two exported symbols. `int InitializeInjection(void)`: the CUDA driver calls it
 *     once, during cuInit. It always returns 1 and never exits, aborts or raises.
 *     `int InitializeInjectionNvtx2(getExportTable)`: NVTX calls it at the first NVTX
 *     call; it forwards to the same entry of the CUPTI loaded here (so the NVTX ranges
 *     reach the instance that records the activity), or returns 0 (NVTX stays a no-op)
 *     when no CUPTI was found.
 *   - Body runs once (pthread_once). cuptiGetVersion() must equal the CUPTI_API_VERSION
 *     this file was compiled against (record layouts change between releases); when no
 *     such CUPTI is found, or when any CUPTI set-up call fails (no driver, driver older than R580,
 *     another CUPTI client such as nsys), exactly one line starting "megatune-trace: "
 *     goes to stderr, no file is created, no thread is started, and the process runs on
 *     untraced.
 *   - Output file: $MEGATUNE_TRACE_DIR (default ".", created if missing) /
 *     megatune-trace.rank<RANK>.jsonl if RANK is a non-negative integer, else
 *     megatune-trace.local<LOCAL_RANK>.jsonl if LOCAL_RANK is, else
 *     megatune-trace.pid<PID>.jsonl; locked (flock) while written, so that a second live
 *     process of the same rank writes <name>.pid<PID>.jsonl instead of truncating the
 *     first one's. Truncated when opened and written as a stream:
 *     lines are appended as CUPTI hands over buffers, so a killed process leaves a
 *     valid prefix (the last line may be cut short; readers must tolerate that).
 *   - A flusher thread calls cuptiActivityFlushAll(0) every MEGATUNE_TRACE_FLUSH_MS
 *     (default 1000, 10..3600000). At exit (atexit) the kinds are disabled, CUPTI is
 *     flushed with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED and the end record is written.
 *   - SIGTERM (unless it was ignored at start): the handler only writes a byte to a
 *     self-pipe; the flusher thread does the full flush and end record, restores the
 *     previous disposition and sends SIGTERM to the process again, so a default
 *     disposition still kills the process (status 143) and a previous handler still
 *     runs (tracing has then ended). A second SIGTERM
 *     while the first is being handled goes straight to the previous disposition.
 *     SIGKILL and os._exit() skip all this: the file then ends without an end record.
 *   - A child forked from a traced process does not trace and writes nothing.
 *   - MEGATUNE_TRACE_API: "launch" (default) records only the runtime/driver calls that
 *     launch work, copy, set, allocate, free or synchronise (names starting cudaLaunch,
 *     cudaMemcpy, cudaMemset, cudaMalloc, cudaFree, cudaHostAlloc, cudaGraphLaunch,
 *     cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize,
 *     cudaStreamWaitEvent and their cu* driver counterparts); "all" records every call;
 *     "none" records no API calls.
 *   - Memory is bounded: at most 64 CUPTI buffers of 4 MiB outstanding (CUPTI counts
 *     the records it then loses as dropped), a 1 MiB output buffer, at most 65536 open
 *     NVTX ranges (names cut to 511 bytes), a 1024-entry demangling cache.
 *
 * FORMAT megatune.trace/1: JSON Lines, one object per line, UTF-8 (invalid bytes become
 * U+FFFD), strings JSON-escaped. Times are CUPTI timestamps in ns (integers; by default
 * CLOCK_REALTIME-based, GPU times interpolated onto it); start == end == 0 means CUPTI
 * could not time the record. Unknown fields must be ignored by readers.
 *
 *   first line:
 *   {"schema":"megatune.trace/1","pid":1234,"rank":0,"local_rank":0,"world_size":8,
 *    "host":"node1","cupti_version":130001,"cupti_path":"/usr/local/cuda/lib64/libcupti.so.13",
 *    "cupti_from":"the CUDA toolkit","clock":"cupti"}
 *     rank, local_rank, world_size: from RANK, LOCAL_RANK, WORLD_SIZE; omitted when unset
 *     or not a non-negative integer. cupti_version: cuptiGetVersion() at run time.
 *     cupti_path, cupti_from: the CUPTI file loaded and where it was found (lib/dlsearch.h).
 *
 *   GPU records (dev: CUDA device ordinal; ctx: CUPTI context id; stream: CUPTI stream
 *   id; corr: correlation id, equal to the corr of the runtime/driver record that issued
 *   the work):
 *   {"t":"kernel","name":"void at::native::foo<float>(...)","dev":0,"ctx":1,"stream":7,
 *    "start":123,"end":456,"corr":42,"grid":[x,y,z],"block":[x,y,z]}
 *     name: demangled with __cxa_demangle, or as CUPTI gave it when that fails (C names,
 *     e.g. ncclDevKernel_AllReduce_Sum_f32_RING_LL).
 *   {"t":"memcpy","name":"Memcpy HtoD (Pageable -> Device)","dev":0,"stream":7,
 *    "start":..,"end":..,"corr":..,"bytes":N}
 *     name as PyTorch Kineto builds it: "Memcpy <K> (<src> -> <dst>)", K one of HtoD DtoH
 *     HtoA AtoH AtoA AtoD DtoA DtoD HtoH PtoP <unknown>, src/dst one of Unknown Pageable
 *     Pinned Device Array Managed "Device Static" "Managed Static" Unrecognized.
 *     Peer-to-peer copies (CUPTI MEMCPY2) are "Memcpy PtoP (Device -> Device)".
 *   {"t":"memset","name":"Memset (Device)","dev":0,"stream":7,"start":..,"end":..,
 *    "corr":..,"bytes":N}
 *   {"t":"sync","name":"Stream Sync","dev":0,"stream":7,"start":..,"end":..,"corr":..}
 *     name: "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync" or
 *     "Unknown Sync". dev omitted when the context's device is not known yet; stream
 *     omitted when not applicable (context and event synchronisation).
 *
 *   CPU records (tid: CUPTI's thread id of the calling thread):
 *   {"t":"runtime","name":"cudaLaunchKernel_v7000","tid":N,"start":..,"end":..,"corr":..}
 *   {"t":"driver","name":"cuLaunchKernel","tid":N,"start":..,"end":..,"corr":..}
 *     name: cuptiGetCallbackName(), or "cbid:<n>" when CUPTI has none.
 *   {"t":"nvtx","name":"fwd","domain":"x","tid":N,"start":..,"end":..}
 *     one line per NVTX range, written when the range ends (START/END records paired by
 *     id; tid is the thread that started it); a mark (nvtxMark) has start == end.
 *     domain omitted for the default domain.
 *
 *   last line (only when the process exits normally or by SIGTERM):
 *   {"t":"end","records":N,"dropped":N}
 *     records: record lines written (header and end excluded). dropped: records CUPTI
 *     reports dropped plus ours (NVTX ranges evicted from the full pending table, ends
 *     without a start, ranges still open at exit, records lost to a write error).
 */

#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "../lib/dlsearch.h"
#include "inject/out.h"
#include "inject/records.h"

__attribute__((visibility("default"))) int InitializeInjection(void);
/* NVTX's injection entry (nvtx3/nvtxDetail/nvtxInit.h), forwarded to the CUPTI loaded here */
typedef const void *(*mt_nvtx_export_table_fn)(uint32_t id);
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(mt_nvtx_export_table_fn get);

#define SCHEMA "megatune.trace/1"
#define CUPTI_BUF_SIZE ((size_t)4 << 20)
#define CUPTI_BUF_MAX 64
#define DEVICE_BUF_SIZE ((size_t)2 << 20)

/* ---- state ------------------------------------------------------------------------ */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;        /* output and tables */
static pthread_mutex_t g_finish_lock = PTHREAD_MUTEX_INITIALIZER; /* finish_trace */

uint64_t g_dropped;
static atomic_int g_buffers;  /* CUPTI buffers handed out, not yet returned */
/* lock-free atomics, so the SIGTERM handler may read them too */
static atomic_int g_finished;     /* end record written (or tracing abandoned) */
static atomic_int g_term_pending; /* SIGTERM seen, the flusher is finishing */
static atomic_int g_forked;       /* this is a child forked from the traced process */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the SIGTERM handler needs lock-free atomic_int");

static int g_pipe[2] = {-1, -1};
static pthread_t g_flusher;
static int g_flusher_started;
static atomic_int g_quit;
static int g_flush_ms = 1000;
static struct sigaction g_prev_term;
static int g_term_installed;

static CUpti_ActivityKind g_kinds[16];
static int g_nkinds;

/* ---- CUPTI, loaded at run time -------------------------------------------------------- */

struct cupti_fns g_cupti;
static struct mt_dl_found g_cupti_lib;
static char g_cupti_why[1024];
static int g_cupti_ok;
static pthread_once_t g_cupti_once = PTHREAD_ONCE_INIT;

static int cupti_accept(void *h, char *why, size_t n)
{
	CUptiResult (*get)(uint32_t *);
	void *p = dlsym(h, "cuptiGetVersion");
	uint32_t v = 0;

	memcpy(&get, &p, sizeof(p));
	if (!get || get(&v) != CUPTI_SUCCESS) {
		snprintf(why, n, "no working cuptiGetVersion");
		return -1;
	}
	if (v != CUPTI_API_VERSION) {
		snprintf(why, n, "API version %" PRIu32 ", this library was built for %d", v,
			 CUPTI_API_VERSION);
		return -1;
	}
	return 0;
}

static void cupti_find(void)
{
	static char soname[32], wheels[96];
	const int major = CUDA_VERSION / 1000;
	struct mt_dl_spec spec = {
		"CUPTI", soname, "MEGATUNE_CUPTI_PATH",
		"extras/CUPTI/lib64:lib64:lib:targets/x86_64-linux/lib:targets/sbsa-linux/lib",
		wheels, cupti_accept,
	};
	void *p;

	snprintf(soname, sizeof soname, "libcupti.so.%d", major);
	snprintf(wheels, sizeof wheels, "nvidia/cu%d/lib:nvidia/cuda_cupti/lib", major);
	/* the wheels first: inside a PyTorch process that is the copy torch uses */
	if (mt_dl_find(&spec, MT_DL_WHEELS_FIRST, &g_cupti_lib, g_cupti_why, sizeof g_cupti_why))
		return;
	g_cupti_ok = 1;
#define CUPTI_SYM(f)                                                                           \
	p = dlsym(g_cupti_lib.handle, #f);                                                     \
	memcpy(&g_cupti.f, &p, sizeof p);                                                      \
	if (!p && g_cupti_ok) {                                                                \
		snprintf(g_cupti_why, sizeof g_cupti_why, "%.900s lacks %s", g_cupti_lib.path, \
			 #f);                                                                  \
		g_cupti_ok = 0;                                                                \
	}
	CUPTI_FNS(CUPTI_SYM)
#undef CUPTI_SYM
}

/* 1 when CUPTI is loaded with every function above (found once per process). */
static int cupti_ready(void)
{
	return pthread_once(&g_cupti_once, cupti_find) == 0 && g_cupti_ok;
}

/* ---- small helpers ------------------------------------------------------------------ */

static const char *cupti_err(CUptiResult r)
{
	const char *s = NULL;
	if (g_cupti.cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == NULL)
		return "unknown CUPTI error";
	return s;
}

/* ---- CUPTI buffer callbacks -------------------------------------------------------- */

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = NULL;
	*size = 0;
	*max_records = 0;
	if (g_forked)
		return;
	if (atomic_fetch_add(&g_buffers, 1) >= CUPTI_BUF_MAX) {
		atomic_fetch_sub(&g_buffers, 1); /* CUPTI counts what it loses as dropped */
		return;
	}
	void *p = NULL;
	if (posix_memalign(&p, 8, CUPTI_BUF_SIZE) != 0) {
		atomic_fetch_sub(&g_buffers, 1);
		return;
	}
	*buf = p;
	*size = CUPTI_BUF_SIZE;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				      size_t valid)
{
	(void)size;
	if (buf == NULL)
		return;
	if (!g_forked && pthread_mutex_lock(&g_lock) == 0) {
		if (!atomic_load(&g_finished) && g_fd >= 0) {
			CUpti_Activity *rec = NULL;
			uint64_t before = g_records;
			for (;;) {
				CUptiResult r =
					g_cupti.cuptiActivityGetNextRecord(buf, valid, &rec);
				if (r != CUPTI_SUCCESS)
					break; /* CUPTI_ERROR_MAX_LIMIT_REACHED: end of buffer */
				on_record(rec);
			}
			size_t nd = 0;
			if (g_cupti.cuptiActivityGetNumDroppedRecords(ctx, stream, &nd) ==
			    CUPTI_SUCCESS)
				g_dropped += nd;
			if (g_write_failed)
				g_dropped += g_records - before;
			out_flush();
		}
		pthread_mutex_unlock(&g_lock);
	}
	free(buf);
	atomic_fetch_sub(&g_buffers, 1);
}

/* ---- finishing --------------------------------------------------------------------- */

static void finish_trace(void)
{
	if (pthread_mutex_lock(&g_finish_lock) != 0)
		return;
	if (!atomic_load(&g_finished) && !g_forked) {
		for (int i = 0; i < g_nkinds; i++)
			(void)g_cupti.cuptiActivityDisable(g_kinds[i]); /* best effort */
		CUptiResult r = g_cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		if (r != CUPTI_SUCCESS)
			log_line("final flush failed: %s; the trace may miss its last records",
				 cupti_err(r));
		if (pthread_mutex_lock(&g_lock) == 0) {
			nv_free_all();
			out_s("{\"t\":\"end\"");
			kv_u64("records", g_records);
			kv_u64("dropped", g_dropped);
			out_raw("}\n", 2);
			out_flush();
			if (g_fd >= 0 && close(g_fd) != 0)
				log_line("closing %s failed: %s", g_path, strerror(errno));
			g_fd = -1;
			dm_free_all();
			atomic_store(&g_finished, 1);
			pthread_mutex_unlock(&g_lock);
		}
	}
	pthread_mutex_unlock(&g_finish_lock);
}

static void restore_sigterm(void)
{
	if (!g_term_installed)
		return;
	g_term_installed = 0;
	if (sigaction(SIGTERM, &g_prev_term, NULL) != 0)
		log_line("restoring the SIGTERM handler failed: %s", strerror(errno));
}

static void on_sigterm(int sig)
{
	int saved = errno;
	if (atomic_load(&g_forked) || atomic_load(&g_finished) || atomic_load(&g_term_pending)) {
		/* not ours to handle (any more): the previous disposition decides */
		(void)sigaction(SIGTERM, &g_prev_term, NULL);
		(void)raise(sig);
	} else {
		atomic_store(&g_term_pending, 1);
		ssize_t w = write(g_pipe[1], "T", 1);
		(void)w; /* a full pipe already holds a wake-up */
	}
	errno = saved;
}

static void *flusher_main(void *arg)
{
	(void)arg;
	int warned = 0;
	while (!atomic_load(&g_quit)) {
		struct pollfd p = {.fd = g_pipe[0], .events = POLLIN};
		int n = poll(&p, 1, g_flush_ms);
		if (n < 0) {
			if (errno != EINTR) { /* should not happen; fall back to sleeping */
				struct timespec ts = {g_flush_ms / 1000, (long)(g_flush_ms % 1000) * 1000000L};
				(void)nanosleep(&ts, NULL);
			}
			continue;
		}
		if (n == 0) {
			CUptiResult r = g_cupti.cuptiActivityFlushAll(0);
			if (r != CUPTI_SUCCESS && !warned) {
				warned = 1;
				log_line("periodic flush failed: %s", cupti_err(r));
			}
			continue;
		}
		char b[64];
		int term = 0;
		ssize_t k = read(g_pipe[0], b, sizeof b);
		for (ssize_t i = 0; i < k; i++)
			term |= b[i] == 'T';
		if (term || atomic_load(&g_term_pending)) {
			finish_trace();
			/* hand SIGTERM back to the disposition it had before us, process-directed
			 * as it came (this thread blocks it), so a previous handler interrupts the
			 * thread it would have interrupted */
			restore_sigterm();
			if (kill(getpid(), SIGTERM) != 0)
				log_line("re-raising SIGTERM failed: %s", strerror(errno));
			break;
		}
	}
	return NULL;
}

static void at_exit(void)
{
	if (g_forked)
		return;
	if (g_flusher_started && !pthread_equal(pthread_self(), g_flusher)) {
		atomic_store(&g_quit, 1);
		ssize_t w;
		do
			w = write(g_pipe[1], "Q", 1);
		while (w < 0 && errno == EINTR);
		/* poll times out within g_flush_ms even when the byte did not fit */
		if (pthread_join(g_flusher, NULL) == 0)
			g_flusher_started = 0;
	}
	finish_trace();
	struct sigaction cur;
	if (g_term_installed && sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == on_sigterm)
		restore_sigterm();
}

static void at_fork_child(void)
{
	atomic_store(&g_forked, 1);
	struct sigaction cur;
	if (g_term_installed && sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == on_sigterm)
		(void)sigaction(SIGTERM, &g_prev_term, NULL);
	g_term_installed = 0;
	g_flusher_started = 0;
	if (g_fd >= 0)
		(void)close(g_fd);
	g_fd = -1;
	for (int i = 0; i < 2; i++)
		if (g_pipe[i] >= 0)
			(void)close(g_pipe[i]);
	g_pipe[0] = g_pipe[1] = -1;
}

/* ---- set-up ------------------------------------------------------------------------- */

static const char *const RUNTIME_PREFIXES[] = {
	"cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaMalloc", "cudaFree", "cudaHostAlloc",
	"cudaGraphLaunch", "cudaStreamSynchronize", "cudaDeviceSynchronize",
	"cudaEventSynchronize", "cudaStreamWaitEvent", NULL};
static const char *const DRIVER_PREFIXES[] = {
	"cuLaunch", "cuMemcpy", "cuMemset", "cuMemAlloc", "cuMemFree", "cuMemHostAlloc",
	"cuGraphLaunch", "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize",
	"cuStreamWaitEvent", NULL};

static int has_prefix(const char *s, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (strncmp(s, *prefixes, strlen(*prefixes)) == 0)
			return 1;
	return 0;
}

/* enable the launch/copy/set/alloc/sync calls of one API domain */
static CUptiResult enable_api_subset(int runtime, const char **what)
{
	CUpti_CallbackDomain dom = runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
	uint32_t n = runtime ? CUPTI_RUNTIME_TRACE_CBID_SIZE : CUPTI_DRIVER_TRACE_CBID_SIZE;
	for (uint32_t cbid = 1; cbid < n; cbid++) {
		const char *name = NULL;
		if (g_cupti.cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS ||
		    name == NULL || !has_prefix(name, runtime ? RUNTIME_PREFIXES : DRIVER_PREFIXES))
			continue;
		CUptiResult r = runtime ? g_cupti.cuptiActivityEnableRuntimeApi(cbid, 1) :
					  g_cupti.cuptiActivityEnableDriverApi(cbid, 1);
		if (r != CUPTI_SUCCESS) {
			*what = runtime ? "cuptiActivityEnableRuntimeApi" : "cuptiActivityEnableDriverApi";
			return r;
		}
	}
	return CUPTI_SUCCESS;
}

static void write_header(uint32_t version)
{
	char host[256];
	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "%s", "unknown");
	host[sizeof host - 1] = '\0';
	out_s("{\"schema\":\"" SCHEMA "\"");
	kv_u64("pid", (uint64_t)getpid());
	static const char *const envs[][2] = {
		{"RANK", "rank"}, {"LOCAL_RANK", "local_rank"}, {"WORLD_SIZE", "world_size"}};
	for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++) {
		long v = env_nonneg(envs[i][0]);
		if (v >= 0)
			kv_u64(envs[i][1], (uint64_t)v);
	}
	kv_str("host", host);
	kv_u64("cupti_version", version);
	kv_str("cupti_path", g_cupti_lib.path);
	kv_str("cupti_from", g_cupti_lib.from);
	out_s(",\"clock\":\"cupti\"}\n");
}

static int open_output(void)
{
	const char *dir = getenv("MEGATUNE_TRACE_DIR");
	if (dir == NULL || *dir == '\0')
		dir = ".";
	long rank = env_nonneg("RANK"), local = env_nonneg("LOCAL_RANK");
	int n;
	if (rank >= 0)
		n = snprintf(g_path, sizeof g_path, "%s/megatune-trace.rank%ld.jsonl", dir, rank);
	else if (local >= 0)
		n = snprintf(g_path, sizeof g_path, "%s/megatune-trace.local%ld.jsonl", dir, local);
	else
		n = snprintf(g_path, sizeof g_path, "%s/megatune-trace.pid%ld.jsonl", dir,
			     (long)getpid());
	if (n < 0 || (size_t)n >= sizeof g_path) {
		log_line("tracing disabled: output path under %s is too long", dir);
		return -1;
	}
	if (mkdir_p(dir) != 0) {
		log_line("tracing disabled: cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	/* Another live process may hold the same name: a program the job starts
	 * with RANK in its environment that loads CUDA too.  Truncating its file
	 * under it left a 14 MB trace of NULs and two end records on the first
	 * H100 run; the file is locked while written, and a second process of
	 * the same rank writes <name>.pid<PID>.jsonl beside it. */
	g_fd = open(g_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (g_fd >= 0 && flock(g_fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
		close(g_fd);
		g_fd = -1;
		n = (int)strlen(g_path) - (int)strlen(".jsonl");
		if (snprintf(g_path + n, sizeof g_path - (size_t)n, ".pid%ld.jsonl",
			     (long)getpid()) >= (int)(sizeof g_path - (size_t)n)) {
			log_line("tracing disabled: output path under %s is too long", dir);
			return -1;
		}
		g_fd = open(g_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	} else if (g_fd >= 0 && ftruncate(g_fd, 0) != 0) {
		log_line("tracing disabled: cannot truncate %s: %s", g_path, strerror(errno));
		close(g_fd);
		g_fd = -1;
		return -1;
	}
	if (g_fd < 0) {
		log_line("tracing disabled: cannot open %s: %s", g_path, strerror(errno));
		return -1;
	}
	return 0;
}

static void disable_all(void)
{
	for (int i = 0; i < g_nkinds; i++)
		(void)g_cupti.cuptiActivityDisable(g_kinds[i]); /* best effort while backing out */
	g_nkinds = 0;
}

/* start the flusher thread with every signal blocked in it */
static int start_flusher(void)
{
	if (pipe(g_pipe) != 0)
		return errno;
	for (int i = 0; i < 2; i++) {
		int fl = fcntl(g_pipe[i], F_GETFL);
		if (fl < 0 || fcntl(g_pipe[i], F_SETFL, fl | O_NONBLOCK) != 0 ||
		    fcntl(g_pipe[i], F_SETFD, FD_CLOEXEC) != 0)
			goto fail;
	}
	sigset_t all, old;
	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old) != 0)
		goto fail;
	int rc = pthread_create(&g_flusher, NULL, flusher_main, NULL);
	if (pthread_sigmask(SIG_SETMASK, &old, NULL) != 0 && rc == 0)
		log_line("restoring the signal mask failed");
	if (rc != 0) {
		errno = rc;
		goto fail;
	}
	g_flusher_started = 1;
	(void)pthread_setname_np(g_flusher, "megatune-trace"); /* cosmetic */
	return 0;
fail:;
	int e = errno;
	for (int i = 0; i < 2; i++) {
		if (g_pipe[i] >= 0)
			(void)close(g_pipe[i]);
		g_pipe[i] = -1;
	}
	return e ? e : EINVAL;
}

static void install_sigterm(void)
{
	if (sigaction(SIGTERM, NULL, &g_prev_term) != 0) {
		log_line("no SIGTERM flush: %s", strerror(errno));
		return;
	}
	if (!(g_prev_term.sa_flags & SA_SIGINFO) && g_prev_term.sa_handler == SIG_IGN)
		return; /* the process ignores SIGTERM: keep it that way */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigterm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0) {
		log_line("no SIGTERM flush: %s", strerror(errno));
		return;
	}
	g_term_installed = 1;
}

static void inject_setup(void)
{
	uint32_t version = 0;
	CUptiResult r, e;

	if (!cupti_ready()) {
		log_line("tracing disabled: %s", g_cupti_why);
		return;
	}
	r = g_cupti.cuptiGetVersion(&version);
	if (r != CUPTI_SUCCESS) {
		log_line("tracing disabled: cuptiGetVersion: %s", cupti_err(r));
		return;
	}
	long ms = -1;
	const char *fs = getenv("MEGATUNE_TRACE_FLUSH_MS");
	if (fs && *fs) {
		char *end;
		errno = 0;
		ms = strtol(fs, &end, 10);
		if (errno || *end || ms < 10 || ms > 3600000)
			ms = -1;
	}
	g_flush_ms = ms > 0 ? (int)ms : 1000;

	const char *what = "cuptiActivitySetAttribute(DEVICE_BUFFER_SIZE)";
	size_t dev_buf = DEVICE_BUF_SIZE, attr_size = sizeof dev_buf;
	r = g_cupti.cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &attr_size,
					      &dev_buf);
	if (r == CUPTI_SUCCESS) {
		what = "cuptiActivityRegisterCallbacks";
		r = g_cupti.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	}
	if (r != CUPTI_SUCCESS) {
		log_line("tracing disabled: %s: %s", what, cupti_err(r));
		return;
	}
	if (pthread_mutex_lock(&g_lock) != 0) {
		log_line("tracing disabled: mutex");
		return;
	}
	g_out = malloc(OUT_BUF_SIZE);
	if (g_out == NULL) {
		pthread_mutex_unlock(&g_lock);
		log_line("tracing disabled: out of memory");
		return;
	}
	if (open_output() != 0) {
		free(g_out);
		g_out = NULL;
		pthread_mutex_unlock(&g_lock);
		return;
	}
	write_header(version);
	pthread_mutex_unlock(&g_lock);

	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MARKER};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && r == CUPTI_SUCCESS; i++) {
		what = "cuptiActivityEnable";
		r = g_cupti.cuptiActivityEnable(kinds[i]);
		if (r == CUPTI_SUCCESS)
			g_kinds[g_nkinds++] = kinds[i];
	}
	/* no records for event/stream queries that find work still pending (polling loops
	 * such as NCCL's watchdog would flood the trace); only a filter, so not fatal */
	if (r == CUPTI_SUCCESS &&
	    (e = g_cupti.cuptiActivityEnableAllSyncRecords(0)) != CUPTI_SUCCESS)
		log_line("cuptiActivityEnableAllSyncRecords: %s; pending queries are traced too",
			 cupti_err(e));
	const char *api = getenv("MEGATUNE_TRACE_API");
	int all = api && strcmp(api, "all") == 0, none = api && strcmp(api, "none") == 0;
	for (int rt = 1; rt >= 0 && r == CUPTI_SUCCESS && !none; rt--) {
		CUpti_ActivityKind kind = rt ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
		if (all) {
			what = "cuptiActivityEnable";
			r = g_cupti.cuptiActivityEnable(kind);
		} else {
			r = enable_api_subset(rt, &what);
		}
		/* recorded even after a partial subset, so that disabling covers it */
		g_kinds[g_nkinds++] = kind;
	}
	if (r != CUPTI_SUCCESS) {
		disable_all();
		log_line("tracing disabled: %s: %s", what, cupti_err(r));
		if (pthread_mutex_lock(&g_lock) == 0) {
			if (close(g_fd) != 0 || unlink(g_path) != 0)
				log_line("removing %s failed: %s", g_path, strerror(errno));
			g_fd = -1;
			g_out_len = 0;
			atomic_store(&g_finished, 1);
			pthread_mutex_unlock(&g_lock);
		}
		return;
	}

	int err = start_flusher();
	if (err != 0)
		log_line("no flusher thread (%s): records reach %s only when buffers fill and at exit",
			 strerror(err), g_path);
	else
		install_sigterm();
	if ((err = pthread_atfork(NULL, NULL, at_fork_child)) != 0)
		log_line("pthread_atfork failed: %s", strerror(err));
	if (atexit(at_exit) != 0)
		log_line("atexit failed: the trace will have no end record");
}

int InitializeInjectionNvtx2(mt_nvtx_export_table_fn get)
{
	int (*fn)(mt_nvtx_export_table_fn);
	void *p;

	if (!cupti_ready())
		return 0; /* NVTX calls then stay no-ops; InitializeInjection says why */
	p = dlsym(g_cupti_lib.handle, "InitializeInjectionNvtx2");
	memcpy(&fn, &p, sizeof p);
	return fn ? fn(get) : 0;
}

int InitializeInjection(void)
{
	int rc = pthread_once(&g_once, inject_setup);
	if (rc != 0)
		log_line("tracing disabled: pthread_once: %s", strerror(rc));
	return 1;
}
