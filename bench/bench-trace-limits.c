/* SPDX-License-Identifier: MIT */
/* The trace reader's bounds (profiler/trace.h, trace_guard.h) on two hostile
 * synthetic traces, written gzipped to $TMPDIR by this benchmark:
 * 1. one Kineto event whose name is a string of MT_BENCH_STRING_MB (default
 *    1024) MB: about 1 MB of gzip; before the cap, 16 MB took 0.7 s, 256 MB
 *    76 s and 1 GB did not finish in 300 s;
 * 2. MT_BENCH_EVENTS (default 20 million) GPU kernel events with their launch
 *    calls: before the cap, 1.73 GB of peak memory.
 * Each is read and analysed once in a child process (its own peak resident
 * memory, getrusage).  Targets: peak below 25% of the uncompressed trace and
 * below 1 GiB. */
#define _DEFAULT_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "bench.h"

#include "../profiler/analyze.h"

struct result {
	double seconds, mb;
	long rss_kb;
	size_t events, left_out, cut;
	int ok;
};

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
			c.left_out = st.nleft_out;
			c.cut = st.strings_cut;
			c.ok = 1;
		} else {
			fprintf(stderr, "bench-trace-limits: %s\n", err.msg);
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

static const char kernel[] =
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_xmma_gemm_bf16bf16_bf16f32\",\"pid\":0,"
	"\"tid\":7,\"ts\":%lld.750,\"dur\":3.125,\"args\":{\"device\":0,\"stream\":7,"
	"\"correlation\":%lld}},\n";
static const char launch[] =
	"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":42,\"tid\":42,"
	"\"ts\":%lld.500,\"dur\":2.250,\"args\":{\"correlation\":%lld}},\n";

static int write_string_trace(const char *path, long long mb)
{
	gzFile g = gzopen(path, "wb1");
	static char chunk[1 << 20];
	long long i;

	if (!g)
		return -1;
	memset(chunk, 'x', sizeof(chunk));
	gzprintf(g, "{\"traceEvents\":[");
	gzprintf(g, kernel, 1000LL, 1LL);
	gzprintf(g, launch, 990LL, 1LL);
	gzprintf(g, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"");
	for (i = 0; i < mb; i++)
		if (gzwrite(g, chunk, sizeof(chunk)) != (int)sizeof(chunk))
			break;
	gzprintf(g, "\",\"pid\":0,\"tid\":7,\"ts\":2000,\"dur\":5,\"args\":{\"stream\":7}}]}\n");
	return gzclose(g) == Z_OK && i == mb ? 0 : -1;
}

static int write_events_trace(const char *path, long long n)
{
	gzFile g = gzopen(path, "wb1");
	long long i, ts = 1000;

	if (!g)
		return -1;
	gzbuffer(g, 1 << 20);
	gzprintf(g, "{\"traceEvents\":[\n");
	for (i = 1; i <= n; i++, ts += 5) {
		gzprintf(g, launch, ts, i);
		gzprintf(g, kernel, ts + 1, i);
	}
	gzprintf(g, "{\"ph\":\"i\",\"name\":\"end\",\"ts\":%lld}]}\n", ts);
	return gzclose(g) == Z_OK ? 0 : -1;
}

static int report(const char *what, const struct result *r)
{
	double frac = (r->rss_kb * 1024.0) / (r->mb * 1e6);

	if (!r->ok)
		return 1;
	printf("  %-30s %9.1f MB  %8.2f s  %7.1f MB/s  peak %7.1f MB (%.1f%% of the trace)  "
	       "%zu GPU events kept, %zu left out, %zu strings cut\n", what, r->mb, r->seconds,
	       r->mb / r->seconds, r->rss_kb / 1024.0, 100.0 * frac, r->events, r->left_out,
	       r->cut);
	return 0;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	const char *smb = getenv("MT_BENCH_STRING_MB"), *sev = getenv("MT_BENCH_EVENTS");
	long long mb = smb ? atoll(smb) : 1024, nev = sev ? atoll(sev) : 20000000;
	char path[1024];
	struct result r;
	int bad = 0;

	printf("bench-trace-limits: hostile traces, read + analysed once each, one core\n");
	snprintf(path, sizeof(path), "%s/megatune-bench-string-%d.json.gz", tmp ? tmp : "/tmp",
		 (int)getpid());
	if (write_string_trace(path, mb)) {
		fprintf(stderr, "bench-trace-limits: cannot write %s\n", path);
		remove(path);
		return 1;
	}
	r = run_child(path);
	remove(path);
	bad |= report("one string of the whole trace", &r);
	snprintf(path, sizeof(path), "%s/megatune-bench-events-%d.json.gz", tmp ? tmp : "/tmp",
		 (int)getpid());
	if (write_events_trace(path, nev)) {
		fprintf(stderr, "bench-trace-limits: cannot write %s\n", path);
		remove(path);
		return 1;
	}
	r = run_child(path);
	remove(path);
	bad |= report("GPU events with launches", &r);
	printf("  targets: peak memory < 25%% of the trace and < 1024 MB; linear time\n");
	return bad;
}
