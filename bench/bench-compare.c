/* SPDX-License-Identifier: MIT */
/* megatune compare on two calibrations of 10,000 metrics each.
 *
 * Two megatune.result/1 files of 10,000 records each (gemm-like cases on 8
 * ranks, 7 raw samples per record, 1% noise, 1% of the metrics 10% slower in
 * the second) are written to $TMPDIR; `megatune compare A B --json FILE
 * --junit FILE` is run 5 times (the whole command: reading both, 10,000
 * Mann-Whitney tests, the outputs), median wall time.  Target: under 1 s.
 */
#define _DEFAULT_SOURCE 1
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define N 10000
#define SAMPLES 7

static double noise(unsigned *s)
{
	/* a uniform variate in [-1, 1) from a small LCG: reproducible */
	*s = *s * 1103515245u + 12345u;
	return ((*s >> 8) & 0xffff) / 32768.0 - 1;
}

static int write_run(const char *path, int slow, unsigned seed)
{
	FILE *f = fopen(path, "w");
	int i, j;

	if (!f)
		return -1;
	fprintf(f, "{\"schema\": \"megatune.result/1\", \"kind\": \"run\", \"megatune\": "
		   "\"bench\", \"host\": \"bench\", \"backend\": \"cpu\"}\n");
	for (i = 0; i < N; i++) {
		double t = 100 + i % 977, s[SAMPLES];

		if (slow && i % 100 == 0)
			t *= 1.10;
		fprintf(f, "{\"probe\": \"gemm\", \"label\": \"bf16 %dx%dx%d\", \"rank\": %d, "
			   "\"time_us\": {\"n\": %d, \"median\": %.6g, \"cv\": 0.01}, \"samples_us\": [",
			i / 8 + 64, 4096, 4096, i % 8, SAMPLES, t);
		for (j = 0; j < SAMPLES; j++) {
			s[j] = t * (1 + 0.01 * noise(&seed));
			fprintf(f, "%s%.6g", j ? ", " : "", s[j]);
		}
		fprintf(f, "]}\n");
	}
	return fclose(f);
}

int main(int argc, char **argv)
{
	const char *mt = argc > 1 ? argv[1] : "build/megatune";
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char a[512], b[512], cmd[4096];
	double t[5];
	int i, rc = 0;

	snprintf(a, sizeof(a), "%s/bench-compare-a.%d.jsonl", tmp, (int)getpid());
	snprintf(b, sizeof(b), "%s/bench-compare-b.%d.jsonl", tmp, (int)getpid());
	if (write_run(a, 0, 1) || write_run(b, 1, 2)) {
		fprintf(stderr, "bench-compare: cannot write to %s\n", tmp);
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "%s compare -q %s %s --json %s.json --junit %s.xml", mt, a, b,
		 a, a);
	for (i = 0; i < 5; i++) {
		double t0 = bench_now();
		int st = system(cmd);

		t[i] = bench_now() - t0;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 1) { /* 1% regressed: exit 1 */
			fprintf(stderr, "bench-compare: %s: status %d, expected 1\n", cmd, st);
			rc = 1;
			break;
		}
	}
	if (!rc) {
		double m = bench_median(t, 5);

		printf("compare: two calibrations of %d metrics (%d samples each): %.3f s "
		       "(median of 5, the whole command), %.0f metrics/s; target < 1 s: %s\n",
		       N, SAMPLES, m, N / m, m < 1 ? "met" : "MISSED");
	}
	unlink(a);
	unlink(b);
	snprintf(cmd, sizeof(cmd), "%s.json", a);
	unlink(cmd);
	snprintf(cmd, sizeof(cmd), "%s.xml", a);
	unlink(cmd);
	return rc;
}
