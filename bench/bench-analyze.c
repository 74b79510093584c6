/* SPDX-License-Identifier: MIT */
/* Trace analysis throughput and peak memory (one core).
 *
 * 1. The largest real trace at hand (the shared data folder when it is next
 *    to the repository, else the fixtures), read and analysed 5 times:
 *    MB of trace JSON (uncompressed) per second, median.
 * 2. A synthetic Kineto trace of MT_BENCH_TRACE_MB (default 1024) MB written
 *    by this benchmark to $TMPDIR: a training-like stream of CPU ops, launch
 *    calls, flows, compute kernels on one stream and NCCL kernels on another,
 *    with the args PyTorch writes; analysed once.
 * Each analysis runs in a child process so that its peak resident memory
 * (getrusage) is its own.  Targets: >= 100 MB/s, peak < half the trace size.
 */
#define _DEFAULT_SOURCE 1
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "bench.h"

#include "../profiler/analyze.h"

struct result {
	double seconds;
	double mb;       /* uncompressed JSON */
	long rss_kb;
	size_t events;
	int ok;
};

/* Read and analyse in a child; report through a pipe. */
static struct result run_child(const char *path)
{
	struct result r = { 0 };
	int fd[2];
	pid_t pid;

	if (pipe(fd))
		return r;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_trace *t = NULL;
		struct mt_rank_stats st;
		struct mt_analyze_opts o = { 0 };
		struct result c = { 0 };
		double t0 = bench_now();
		close(fd[0]);
		if (!mt_trace_read(path, NULL, &t, &err) && !mt_analyze_rank(t, 0, &o, &st, &err)) {
			c.seconds = bench_now() - t0;
			c.mb = (double)t->bytes / 1e6;
			c.events = st.nevents;
			c.ok = 1;
		} else {
			fprintf(stderr, "bench-analyze: %s\n", err.msg);
		}
		mt_trace_free(t);
		if (write(fd[1], &c, sizeof(c)) != (ssize_t)sizeof(c))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (pid > 0) {
		int status;
		struct rusage ru;
		if (read(fd[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
			r.ok = 0;
		if (wait4(pid, &status, 0, &ru) == pid)
			r.rss_kb = ru.ru_maxrss;
	}
	close(fd[0]);
	return r;
}

static long long usize(const char *path)
{
	gzFile g = gzopen(path, "rb");
	static char buf[1 << 16];
	long long n = 0;
	int k;

	if (!g)
		return -1;
	while ((k = gzread(g, buf, sizeof(buf))) > 0)
		n += k;
	gzclose(g);
	return n;
}

/* The largest trace (uncompressed) under dir, recursively. */
static void largest(const char *dir, char *best, size_t len, long long *bestn)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[1024];
		struct stat st;
		size_t n = strlen(e->d_name);
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (stat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			largest(p, best, len, bestn);
		} else if ((n > 5 && !strcmp(e->d_name + n - 5, ".json")) ||
			   (n > 8 && !strcmp(e->d_name + n - 8, ".json.gz"))) {
			long long u = usize(p);
			if (u > *bestn) {
				*bestn = u;
				snprintf(best, len, "%s", p);
			}
		}
	}
	closedir(d);
}

static int synth(const char *path, long long target)
{
	FILE *f = fopen(path, "w");
	static char buf[1 << 20];
	long long ts = 1700000000000000LL, corr = 1, it = 0;
	long written = 0;

	if (!f)
		return -1;
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	fputs("{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\","
	      "\"totalGlobalMem\":85045379072,\"numSms\":132}],\"distributedInfo\":{\"backend\":"
	      "\"nccl\",\"rank\":0,\"world_size\":8},\"traceEvents\":[\n", f);
	while (ftell(f) < target) {
		int k;
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%lld\","
			"\"pid\":4242,\"tid\":4242,\"ts\":%lld.000,\"dur\":20000.000,\"args\":{\"External id\":%lld}},\n",
			it, ts, corr);
		for (k = 0; k < 200; k++, corr++) {
			long long cpu = ts + k * 100, gpu = cpu + 40;
			int nccl = k % 20 == 19;
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":4242,"
				"\"tid\":4242,\"ts\":%lld.125,\"dur\":9.500,\"args\":{\"External id\":%lld,"
				"\"Record function id\":0,\"Sequence number\":%lld,\"Fwd thread id\":0,"
				"\"Ev Idx\":%lld,\"Input Dims\":[[16,2048,4096],[4096,4096],[]],"
				"\"Input type\":[\"c10::BFloat16\",\"c10::BFloat16\",\"\"]}},\n",
				cpu, corr, corr, corr);
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
				"\"pid\":4242,\"tid\":4242,\"ts\":%lld.500,\"dur\":4.250,\"args\":{\"External id\":%lld,"
				"\"cbid\":211,\"correlation\":%lld}},\n", cpu, corr, corr);
			fprintf(f, "{\"ph\":\"s\",\"id\":%lld,\"pid\":4242,\"tid\":4242,\"ts\":%lld.500,"
				"\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n", corr, cpu);
			if (nccl)
				fprintf(f, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)\","
					"\"pid\":0,\"tid\":13,\"ts\":%lld.250,\"dur\":900.000,\"args\":{\"External id\":%lld,"
					"\"queued\":0,\"device\":0,\"context\":1,\"stream\":13,\"correlation\":%lld,"
					"\"registers per thread\":96,\"shared memory\":0,\"blocks per SM\":0.25,"
					"\"warps per SM\":2.0,\"grid\":[32,1,1],\"block\":[512,1,1],"
					"\"est. achieved occupancy %%\":3,\"Collective name\":\"allreduce\","
					"\"In msg nelems\":16777216,\"Out msg nelems\":16777216,\"Group size\":8,"
					"\"dtype\":\"BFloat16\",\"Process Group Name\":\"0\"}},\n", gpu, corr, corr);
			else
				fprintf(f, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas\","
					"\"pid\":0,\"tid\":7,\"ts\":%lld.750,\"dur\":85.125,\"args\":{\"External id\":%lld,"
					"\"queued\":0,\"device\":0,\"context\":1,\"stream\":7,\"correlation\":%lld,"
					"\"registers per thread\":168,\"shared memory\":213248,\"blocks per SM\":1,"
					"\"warps per SM\":12,\"grid\":[132,1,1],\"block\":[384,1,1],"
					"\"est. achieved occupancy %%\":19}},\n", gpu, corr, corr);
			fprintf(f, "{\"ph\":\"f\",\"id\":%lld,\"pid\":0,\"tid\":7,\"ts\":%lld.750,"
				"\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},\n", corr, gpu);
		}
		ts += 20000;
		it++;
		written++;
	}
	fprintf(f, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Record Window End\",\"pid\":\"\",\"tid\":\"\","
		"\"ts\":%lld}\n],\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":0}\n", ts);
	if (ferror(f) | fclose(f))
		return -1;
	(void)written;
	return 0;
}

static void report(const char *what, const struct result *r)
{
	printf("  %-44s %8.1f MB  %7.3f s  %7.1f MB/s  peak %7.1f MB (%.1f%% of the trace)  %zu GPU events\n",
	       what, r->mb, r->seconds, r->mb / r->seconds, r->rss_kb / 1024.0,
	       100.0 * (r->rss_kb * 1024.0) / (r->mb * 1e6), r->events);
}

int main(int argc, char **argv)
{
	char best[1024] = "", syn[1024];
	long long bestn = -1;
	const char *tmp = getenv("TMPDIR");
	const char *mbs = getenv("MT_BENCH_TRACE_MB");
	long long target = (mbs ? atoll(mbs) : 1024) * 1000000LL;
	double secs[5];
	struct result r = { 0 };
	int i;

	(void)argc;
	(void)argv;
	printf("bench-analyze: trace read + analysis, one core, megatune analyze's default options\n");
	largest("../shared/data/traces", best, sizeof(best), &bestn);
	if (bestn < 0)
		largest("tests/fixtures/traces", best, sizeof(best), &bestn);
	if (bestn > 0) {
		for (i = 0; i < 5; i++) {
			r = run_child(best);
			if (!r.ok)
				return 1;
			secs[i] = r.seconds;
		}
		r.seconds = bench_median(secs, 5);
		printf("  largest trace here: %s\n", best);
		report("  (median of 5)", &r);
	}
	snprintf(syn, sizeof(syn), "%s/megatune-bench-trace-%d.json", tmp ? tmp : "/tmp", (int)getpid());
	printf("  writing a synthetic trace of %.0f MB to %s ...\n", target / 1e6, syn);
	fflush(stdout);
	if (synth(syn, target)) {
		fprintf(stderr, "bench-analyze: cannot write %s\n", syn);
		remove(syn);
		return 1;
	}
	r = run_child(syn);
	remove(syn);
	if (!r.ok)
		return 1;
	report("synthetic training trace", &r);
	printf("  targets: >= 100 MB/s, peak memory < 50%% of the trace size\n");
	return 0;
}
