/* SPDX-License-Identifier: MIT
 *
 * Test helper for tests/cli/inject.sh; one file, two programs.
 *
 * Built normally: a host program that behaves like an ordinary application which
 * happens to load the injection library (as the CUDA driver would):
 *   inject-host LIB OUT [SECONDS]
 *     dlopens LIB, calls InitializeInjection twice (the second must be a no-op),
 *     calls fake_cupti_generate(FAKE_N) when the CUPTI the library loaded is the fake below
 *     (and the library's InitializeInjectionNvtx2, printing "nvtx=7" when it reached the
 *     fake's),
 *     computes and prints a checksum, writes it to OUT, sleeps SECONDS if given,
 *     prints the thread counts before and after the library was set up, exits 0.
 *     INJECT_HOST_FORK=1: also fork a child that exits through exit() (atexit handlers
 *     run in it). INJECT_HOST_HANDLER=1: install a SIGTERM handler of its own before
 *     loading LIB; SIGTERM then ends the sleep and the program prints "got SIGTERM".
 *
 * Built with -DFAKE_CUPTI -shared: a stand-in libcupti.so.13 (put first on
 * LD_LIBRARY_PATH) that implements the CUPTI calls inject.c makes and, on each
 * flush, hands over synthetic records, so the whole trace path can be tested without
 * a GPU. FAKE_CUPTI_FAIL=attr|enable|version makes set-up fail at that point.
 */
#define _POSIX_C_SOURCE 200809L

#ifdef FAKE_CUPTI

#include <cupti.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

__attribute__((visibility("default"))) void fake_cupti_generate(int n);
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *(*get)(uint32_t));

/* NVTX's entry: the tracer forwards its own to this one; 7 says it arrived */
int InitializeInjectionNvtx2(const void *(*get)(uint32_t))
{
	return get == NULL ? 7 : 0;
}

static CUpti_BuffersCallbackRequestFunc g_req;
static CUpti_BuffersCallbackCompleteFunc g_done;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char g_pending[1 << 20];
static size_t g_npending;
static int g_dropped_reported;

static int fail_at(const char *what)
{
	const char *f = getenv("FAKE_CUPTI_FAIL");
	return f && strcmp(f, what) == 0;
}

CUptiResult cuptiGetVersion(uint32_t *version)
{
	*version = fail_at("version") ? CUPTI_API_VERSION - 1 : CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR_UNKNOWN (fake)";
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value)
{
	(void)attr, (void)size, (void)value;
	return fail_at("attr") ? CUPTI_ERROR_UNKNOWN : CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
					   CUpti_BuffersCallbackCompleteFunc done)
{
	g_req = req;
	g_done = done;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	return fail_at("enable") && kind == CUPTI_ACTIVITY_KIND_MARKER ? CUPTI_ERROR_NOT_INITIALIZED
								       : CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	(void)kind;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	(void)cbid, (void)enable;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	(void)cbid, (void)enable;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableAllSyncRecords(uint8_t enable)
{
	(void)enable;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
		*name = "cudaLaunchKernel_v7000";
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
		*name = "cuLaunchKernel";
	else if (cbid == 999999)
		return CUPTI_ERROR_INVALID_PARAMETER;
	else
		*name = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cudaOther" : "cuOther";
	return CUPTI_SUCCESS;
}

static size_t rec_size(CUpti_ActivityKind kind)
{
	size_t n;
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: n = sizeof(CUpti_ActivityKernel10); break;
	case CUPTI_ACTIVITY_KIND_MEMCPY: n = sizeof(CUpti_ActivityMemcpy6); break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2: n = sizeof(CUpti_ActivityMemcpyPtoP4); break;
	case CUPTI_ACTIVITY_KIND_MEMSET: n = sizeof(CUpti_ActivityMemset4); break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: n = sizeof(CUpti_ActivitySynchronization2); break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: n = sizeof(CUpti_ActivityAPI); break;
	case CUPTI_ACTIVITY_KIND_MARKER: n = sizeof(CUpti_ActivityMarker2); break;
	case CUPTI_ACTIVITY_KIND_CONTEXT: n = sizeof(CUpti_ActivityContext3); break;
	default: n = sizeof(CUpti_Activity); break;
	}
	return (n + 7) & ~(size_t)7;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	size_t off = *rec ? (size_t)((uint8_t *)*rec - buf) + rec_size((*rec)->kind) : 0;
	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(void *)(buf + off);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
	(void)ctx, (void)stream;
	*dropped = g_dropped_reported++ ? 0 : 3; /* three records "lost" once */
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	pthread_mutex_lock(&g_mu);
	if (g_npending > 0 && g_req && g_done) {
		uint8_t *buf = NULL;
		size_t size = 0, maxrec = 0;
		g_req(&buf, &size, &maxrec);
		if (buf && size >= g_npending) {
			memcpy(buf, g_pending, g_npending);
			g_done(NULL, 0, buf, size, g_npending);
			g_npending = 0;
		} else if (buf) {
			g_done(NULL, 0, buf, size, 0);
		}
	}
	pthread_mutex_unlock(&g_mu);
	return CUPTI_SUCCESS;
}

static void add(const void *rec, size_t n)
{
	size_t sz = rec_size(((const CUpti_Activity *)rec)->kind);
	if (g_npending + sz <= sizeof g_pending) {
		memset(g_pending + g_npending, 0, sz);
		memcpy(g_pending + g_npending, rec, n);
		g_npending += sz;
	}
}

static void marker(uint32_t flags, uint32_t id, uint64_t t, const char *name, const char *domain)
{
	CUpti_ActivityMarker2 m;
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = (CUpti_ActivityFlag)flags;
	m.timestamp = t;
	m.id = id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.processId = 1;
	m.objectId.pt.threadId = 77;
	m.name = name;
	m.domain = domain;
	add(&m, sizeof m);
}

/* per i: 2 kernels, 2 memcpys, 1 peer copy, 1 memset, 2 syncs, 2 API calls,
 * 1 NVTX range, 1 mark; once: an END without START and a START never ended */
void fake_cupti_generate(int n)
{
	pthread_mutex_lock(&g_mu);
	CUpti_ActivityContext3 c;
	memset(&c, 0, sizeof c);
	c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	c.contextId = 1;
	c.deviceId = 2;
	add(&c, sizeof c);
	for (int i = 0; i < n; i++) {
		uint64_t t = 1000000000000ull + (uint64_t)i * 100000u;
		uint32_t corr = (uint32_t)i * 10u + 1u;
		CUpti_ActivityKernel10 k;
		memset(&k, 0, sizeof k);
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.deviceId = 2;
		k.contextId = 1;
		k.streamId = 7;
		k.start = t;
		k.end = t + 1500;
		k.correlationId = corr;
		k.gridX = 128, k.gridY = 2, k.gridZ = 1;
		k.blockX = 256, k.blockY = 1, k.blockZ = 1;
		k.name = "_Z6kernelILi3EEvPfi";
		add(&k, sizeof k);
		k.name = "plain_c \"kernel\"\\\n\x01 caf\xc3\xa9 bad\xff";
		k.start += 2000;
		k.end += 2500;
		add(&k, sizeof k);

		CUpti_ActivityMemcpy6 m;
		memset(&m, 0, sizeof m);
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
		m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
		m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		m.bytes = 4096;
		m.start = t + 5000;
		m.end = t + 6000;
		m.deviceId = 2;
		m.contextId = 1;
		m.streamId = 7;
		m.correlationId = corr + 1;
		add(&m, sizeof m);
		m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
		m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
		m.correlationId = corr + 2;
		add(&m, sizeof m);

		CUpti_ActivityMemcpyPtoP4 p;
		memset(&p, 0, sizeof p);
		p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
		p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
		p.bytes = 1 << 20;
		p.start = t + 7000;
		p.end = t + 9000;
		p.deviceId = 2;
		p.streamId = 8;
		p.correlationId = corr + 3;
		add(&p, sizeof p);

		CUpti_ActivityMemset4 s;
		memset(&s, 0, sizeof s);
		s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		s.bytes = 512;
		s.start = t + 9500;
		s.end = t + 9600;
		s.deviceId = 2;
		s.streamId = 7;
		s.correlationId = corr + 4;
		s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		add(&s, sizeof s);

		CUpti_ActivitySynchronization2 y;
		memset(&y, 0, sizeof y);
		y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
		y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
		y.start = t + 10000;
		y.end = t + 11000;
		y.correlationId = corr + 5;
		y.contextId = 1;
		y.streamId = 7;
		y.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
		add(&y, sizeof y);
		y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
		y.contextId = 9; /* a context with no known device */
		y.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
		y.correlationId = corr + 6;
		add(&y, sizeof y);

		CUpti_ActivityAPI a;
		memset(&a, 0, sizeof a);
		a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
		a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
		a.start = t - 500;
		a.end = t - 100;
		a.processId = 1;
		a.threadId = 77;
		a.correlationId = corr;
		add(&a, sizeof a);
		a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
		a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
		a.correlationId = corr + 7;
		add(&a, sizeof a);

		marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 100u + (uint32_t)i, t, "fwd\t\"x\"", i % 2 ? "megatron" : NULL);
		marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 100u + (uint32_t)i, t + 20000, NULL, NULL);
		marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 50000u + (uint32_t)i, t + 30000, "step", NULL);
	}
	marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 424242, 5, NULL, NULL);       /* no START: dropped */
	marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 434343, 6, "never ends", NULL); /* open at exit */
	pthread_mutex_unlock(&g_mu);
}

#else /* the host program */

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (d == NULL)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: inject-host LIB OUT [SECONDS]\n");
		return 2;
	}
	const char *opt = getenv("INJECT_HOST_HANDLER");
	if (opt && *opt == '1') {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_term;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGTERM, &sa, NULL) != 0)
			return 2;
	}
	int before = threads();
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "inject-host: dlopen: %s\n", dlerror());
		return 2;
	}
	int (*init)(void);
	*(void **)&init = dlsym(h, "InitializeInjection");
	if (init == NULL) {
		fprintf(stderr, "inject-host: no InitializeInjection\n");
		return 2;
	}
	int r1 = init(), r2 = init();
	printf("init=%d,%d\n", r1, r2);
	void (*gen)(int) = NULL;
	/* the CUPTI the library found and loaded (lib/dlsearch.h): the stand-in, or not */
	void *cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (cupti)
		*(void **)&gen = dlsym(cupti, "fake_cupti_generate");
	if (gen) { /* the stand-in: NVTX's entry of the library reaches the stand-in's */
		int (*nvtx)(const void *(*)(uint32_t));
		*(void **)&nvtx = dlsym(h, "InitializeInjectionNvtx2");
		printf("nvtx=%d\n", nvtx ? nvtx(NULL) : -1);
	}
	if (gen) {
		const char *n = getenv("FAKE_N");
		gen(n ? atoi(n) : 5);
	}
	int after = threads();
	opt = getenv("INJECT_HOST_FORK");
	if (opt && *opt == '1') {
		fflush(stdout);
		pid_t child = fork();
		if (child == 0)
			exit(0);
		int st;
		if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "inject-host: the forked child failed\n");
			return 1;
		}
	}

	uint64_t sum = 1469598103934665603ull;
	for (uint32_t i = 1; i <= 1000000; i++)
		sum = (sum ^ i) * 1099511628211ull;
	printf("checksum=%016llx\n", (unsigned long long)sum);
	FILE *f = fopen(argv[2], "w");
	if (f == NULL || fprintf(f, "%016llx\n", (unsigned long long)sum) < 0 || fclose(f) != 0) {
		fprintf(stderr, "inject-host: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (argc == 4) {
		printf("sleeping\n");
		fflush(stdout);
		struct timespec ts = {atoi(argv[3]), 0};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !got_term)
			;
		if (got_term)
			printf("got SIGTERM\n");
	}
	printf("threads before=%d after=%d\n", before, after);
	printf("done\n");
	return 0;
}

#endif
