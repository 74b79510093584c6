/* SPDX-License-Identifier: MIT */
/* launch: a candidate configuration as a script that runs it, a Megatron-LM
 * pretrain_gpt.py benchmark on mock data, through torchrun or Slurm.
 *
 * mt_launch_script() is the one generator: `megatune advise --format
 * torchrun|slurm` prints what it writes, and whatever checks a configuration
 * by running it calls it the same way.  The script sets the environment
 * (`KEY=value` items, as --format env prints them), names the Megatron-LM
 * checkout as MEGATRON_LM (default /opt/megatron-lm, overridable from the
 * caller's environment) and runs every argument given, then the benchmark's
 * own: --mock-data, --train-iters N, --eval-iters 0, --log-interval 1,
 * --log-throughput and a learning rate.  Values are shell-quoted as
 * mt_kv_render does (docs/FORMATS.md section 7).
 */
#ifndef MT_LAUNCH_H
#define MT_LAUNCH_H

#include "../lib/err.h"
#include "../lib/sbuf.h"
#include "../perfmodel/config.h"

enum mt_launch_kind {
	MT_LAUNCH_TORCHRUN = 1, /* a shell script: one torchrun per node */
	MT_LAUNCH_SLURM = 2,    /* an sbatch script: srun starts one torchrun per node */
};

struct mt_launch {
	int kind;              /* enum mt_launch_kind */
	int gpus;              /* GPUs of the job */
	int gpus_per_node;     /* of the cluster */
	int train_iters;       /* benchmark length; 0: MT_LAUNCH_ITERS */
	const struct mt_kv *args; /* Megatron-LM arguments, notes allowed (printed as comments) */
	int nargs;
	const struct mt_kv *env;  /* environment variables */
	int nenv;
	const char *title;     /* one comment line on what it runs ("" or NULL: none) */
	int loongforge;        /* run LoongForge's loongforge/train.py (from $LOONGFORGE),
				* not Megatron-LM's pretrain_gpt.py (from $MEGATRON_LM) */
};

#define MT_LAUNCH_ITERS 20

/* Append the script to `sb`.  MT_EINVAL when the GPUs do not make whole nodes
 * (torchrun starts the same number of processes on every node) or a count is
 * not positive; sb is then unchanged.  Nodes: gpus / gpus_per_node, or one
 * node of `gpus` processes when the job is smaller than a node. */
int mt_launch_script(struct sbuf *sb, const struct mt_launch *l, struct mt_error *err);

#endif
