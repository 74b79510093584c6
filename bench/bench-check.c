/* SPDX-License-Identifier: MIT */
/* bench-check: how fast `megatune check` reads a long training log and
 * checks its job.
 *
 * A 100,000-line Megatron-LM log: launcher-prefixed start-up lines, the
 * arguments block of a Llama-3 8B job on 8 H100 (TP 2, PP 1, MBS 1, GBS 128),
 * then iteration and memory lines.  Times the reader alone (the whole log
 * through job/script.h and job/megatron.h, median of 5) and the whole command
 * (`megatune check LOG --json FILE`: read, evaluate, the one- and two-knob
 * searches and the overall search; median of 3).  Target: the whole command
 * under 1 s.  Usage: bench-check MEGATUNE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "../job/megatron.h"
#include "../job/formats.h"
#include "../job/script.h"
#include "../lib/sbuf.h"

#define LINES 100000
#define REPS 5

static const char *const fields[][2] = {
	{ "attention_backend", "AttnBackend.fused" }, { "bf16", "True" },
	{ "context_parallel_size", "1" },
	{ "add_bias_linear", "False" }, { "ffn_hidden_size", "14336" },
	{ "global_batch_size", "128" }, { "group_query_attention", "True" },
	{ "hidden_size", "4096" }, { "lr", "0.0003" }, { "max_position_embeddings", "8192" },
	{ "micro_batch_size", "1" }, { "normalization", "RMSNorm" },
	{ "num_attention_heads", "32" }, { "num_layers", "32" }, { "num_query_groups", "8" },
	{ "overlap_grad_reduce", "True" }, { "overlap_param_gather", "True" },
	{ "pipeline_model_parallel_size", "1" }, { "position_embedding_type", "rope" },
	{ "recompute_granularity", "None" }, { "rotary_base", "500000" },
	{ "seq_length", "8192" }, { "sequence_parallel", "True" }, { "swiglu", "True" },
	{ "tensor_model_parallel_size", "2" }, { "tokenizer_type", "NullTokenizer" },
	{ "untie_embeddings_and_output_weights", "True" },
	{ "use_distributed_optimizer", "True" }, { "vocab_size", "128256" },
	{ "world_size", "8" },
};

static void make_log(struct sbuf *sb)
{
	size_t i;
	int n = 0;

	sbuf_adds(sb, "[default0]:using world size: 8, data-parallel size: 4\n");
	sbuf_adds(sb, "[default0]:------------------------ arguments ------------------------\n");
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++, n++) {
		sbuf_addf(sb, "[default0]:  %s ", fields[i][0]);
		sbuf_pad(sb, '.', 48 - strlen(fields[i][0]));
		sbuf_addf(sb, " %s\n", fields[i][1]);
	}
	sbuf_adds(sb, "[default0]:-------------------- end of arguments ---------------------\n");
	for (n += 4; n < LINES; n++) {
		if (n % 2)
			sbuf_addf(sb, "[default0]: [2026-11-27 10:00:00] iteration %8d/  100000 | "
				  "consumed samples: %10d | elapsed time per iteration (ms): %.1f | "
				  "learning rate: 3.000000E-04 | global batch size:   128 | lm loss: "
				  "2.1E+00 | loss scale: 1.0 | grad norm: 1.2 | number of skipped "
				  "iterations:   0 | number of nan iterations:   0 |\n", n / 2, n * 64,
				  1900.0 + n % 17);
		else
			sbuf_addf(sb, "[default0]:[Rank %d] (after %d iterations) memory (MB) | "
				  "allocated: 30000.1 | max allocated: 52000.3 | reserved: 60000.0 | "
				  "max reserved: 60000.0\n", n % 8, n / 2);
	}
}

static double run_check(const char *megatune, const char *log, const char *json)
{
	double t0 = bench_now();
	pid_t p = fork();
	int st;

	if (p == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execl(megatune, megatune, "check", log, "--json", json, (char *)NULL);
		_exit(127);
	}
	if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench-check: megatune check %s failed\n", log);
		exit(1);
	}
	return bench_now() - t0;
}

int main(int argc, char **argv)
{
	struct sbuf sb = SBUF_INIT;
	struct mt_jobsrc *s = calloc(1, sizeof(*s));
	struct mt_megatron_job *j = calloc(1, sizeof(*j));
	struct mt_error err = MT_ERROR_INIT;
	double rd[REPS], whole[3];
	char dir[] = "/tmp/bench-check.XXXXXX", log[64], json[64];
	FILE *f;
	int i;

	if (argc < 2 || !s || !j) {
		fprintf(stderr, "usage: bench-check MEGATUNE\n");
		return 2;
	}
	make_log(&sb);
	for (i = 0; i < REPS; i++) {
		double t0 = bench_now();

		if (mt_job_read("bench.log", sb.buf, sb.len, s, &err) ||
		    mt_megatron_job(s, 0, NULL, j, &err)) {
			fprintf(stderr, "bench-check: %s\n", err.msg);
			return 1;
		}
		rd[i] = bench_now() - t0;
	}
	if (!mkdtemp(dir))
		return 1;
	snprintf(log, sizeof(log), "%s/train.log", dir);
	snprintf(json, sizeof(json), "%s/check.json", dir);
	if (!(f = fopen(log, "w")) || fwrite(sb.buf, 1, sb.len, f) != sb.len || fclose(f))
		return 1;
	for (i = 0; i < 3; i++)
		whole[i] = run_check(argv[1], log, json);
	printf("check: a %d-line log (%.1f MB): read %.1f ms (%.0f lines/s); whole command "
	       "%.3f s (target < 1 s)\n", LINES, sb.len / 1e6, 1e3 * bench_median(rd, REPS),
	       LINES / bench_median(rd, REPS), bench_median(whole, 3));
	unlink(json);
	unlink(log);
	rmdir(dir);
	sbuf_release(&sb);
	free(s);
	free(j);
	return 0;
}
