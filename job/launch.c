/* SPDX-License-Identifier: MIT */
/* launch: a torchrun or Slurm script for a candidate (launch.h). */
#include "launch.h"

#include <stdio.h>
#include <string.h>

#include "../lib/shell.h"
#include "flags.h"

/* The benchmark's own arguments (Megatron-LM megatron/training/arguments.py
 * @ d98e8a64dd and the training_config.py fields it turns into flags):
 * --mock-data lets the dataset builder generate tokens (and its split,
 * megatron/core/datasets/blended_megatron_dataset_config.py lines 136-146);
 * --eval-iters 0 skips validation; --eval-interval is given too, since from
 * core_v0.16 its default is None and training.py divides --train-iters by it
 * (get_train_valid_test_num_samples), a TypeError at start-up on the first
 * H100 run; --lr has no default. */
static int launch_set(struct mt_kv *kv, const char *key, const char *val)
{
	snprintf(kv->key, sizeof(kv->key), "%s", key);
	snprintf(kv->val, sizeof(kv->val), "%s", val);
	return 1;
}

static int bench_args(struct mt_kv *o, int n, int iters)
{
	struct mt_kv b[7];
	char it[16];
	int k = 0;

	snprintf(it, sizeof(it), "%d", iters);
	k += launch_set(&b[k], "mock-data", "");
	k += launch_set(&b[k], "train-iters", it);
	k += launch_set(&b[k], "eval-iters", "0");
	k += launch_set(&b[k], "eval-interval", it);
	k += launch_set(&b[k], "log-interval", "1");
	k += launch_set(&b[k], "log-throughput", "");
	k += launch_set(&b[k], "lr", "1.0e-4");
	return mt_kv_merge(o, n, b, k);
}

static void env_lines(struct sbuf *sb, const struct mt_launch *l)
{
	char buf[sizeof(l->env->key) + sizeof(l->env->val) + 2];
	int i;

	for (i = 0; i < l->nenv; i++) {
		snprintf(buf, sizeof(buf), "%s=%s", l->env[i].key, l->env[i].val);
		sbuf_adds(sb, "export ");
		mt_shell_word(sb, buf);
		sbuf_addc(sb, '\n');
	}
}

static void slurm_head(struct sbuf *sb, int nodes, int gpn)
{
	sbuf_adds(sb, "#!/bin/bash\n");
	sbuf_adds(sb, "#SBATCH --job-name=megatune\n");
	sbuf_addf(sb, "#SBATCH --nodes=%d\n", nodes);
	/* one torchrun per node starts the node's ranks */
	sbuf_adds(sb, "#SBATCH --ntasks-per-node=1\n");
	sbuf_addf(sb, "#SBATCH --gpus-per-node=%d\n", gpn);
	sbuf_adds(sb, "#SBATCH --exclusive\n");
	sbuf_adds(sb, "#SBATCH --time=00:30:00\n");
	sbuf_adds(sb, "# --time: a placeholder; add --partition and --account as the site needs\n");
}

int mt_launch_script(struct sbuf *sb, const struct mt_launch *l, struct mt_error *err)
{
	struct mt_kv kv[MT_FLAGS_MAX];
	int nodes, gpn, n, i;

	if (l->gpus <= 0 || l->gpus_per_node <= 0 || l->train_iters < 0 || l->nargs < 0 ||
	    l->nenv < 0 || l->nargs > MT_FLAGS_MAX)
		return mt_error_set(err, MT_EINVAL, "launch: bad counts");
	if (l->kind != MT_LAUNCH_TORCHRUN && l->kind != MT_LAUNCH_SLURM)
		return mt_error_set(err, MT_EINVAL, "launch: unknown kind %d", l->kind);
	gpn = l->gpus < l->gpus_per_node ? l->gpus : l->gpus_per_node;
	if (l->gpus % gpn)
		return mt_error_set(err, MT_EINVAL,
				    "launch: %d GPUs do not make whole nodes of %d; torchrun starts "
				    "as many ranks on every node", l->gpus, gpn);
	nodes = l->gpus / gpn;
	for (i = n = 0; i < l->nargs; i++)
		if (!mt_kv_is_note(&l->args[i]))
			kv[n++] = l->args[i];
	n = bench_args(kv, n, l->train_iters ? l->train_iters : MT_LAUNCH_ITERS);

	if (l->kind == MT_LAUNCH_SLURM)
		slurm_head(sb, nodes, gpn);
	else
		sbuf_adds(sb, "#!/bin/bash\n");
	if (l->title && l->title[0]) {
		const char *t;

		/* one comment line, whatever the names in it hold */
		sbuf_adds(sb, "# ");
		for (t = l->title; *t; t++)
			sbuf_addc(sb, (unsigned char)*t < 0x20 || *t == 0x7f ? '?' : *t);
		sbuf_addc(sb, '\n');
	}
	for (i = 0; i < l->nargs; i++)
		if (mt_kv_is_note(&l->args[i]))
			sbuf_addf(sb, "# %s\n", l->args[i].val);
	sbuf_adds(sb, "set -euo pipefail\n\n");
	sbuf_adds(sb, l->loongforge ? "LOONGFORGE=${LOONGFORGE:-/opt/loongforge}\n"
				    : "MEGATRON_LM=${MEGATRON_LM:-/opt/megatron-lm}\n");
	env_lines(sb, l);
	if (l->kind == MT_LAUNCH_SLURM) {
		sbuf_adds(sb, "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" "
			      "| head -n 1)\n");
		sbuf_adds(sb, "MASTER_PORT=${MASTER_PORT:-29500}\n\n");
		sbuf_adds(sb, "srun --kill-on-bad-exit=1 torchrun \\\n");
		sbuf_adds(sb, "  --nnodes \"$SLURM_NNODES\" \\\n");
		sbuf_addf(sb, "  --nproc-per-node %d \\\n", gpn);
		sbuf_adds(sb, "  --rdzv-id \"$SLURM_JOB_ID\" \\\n");
	} else {
		/* every node runs the same command; the first node's address is
		 * the rendezvous point */
		sbuf_adds(sb, "MASTER_ADDR=${MASTER_ADDR:-localhost}\n");
		sbuf_adds(sb, "MASTER_PORT=${MASTER_PORT:-29500}\n\n");
		if (nodes > 1)
			sbuf_addf(sb, "# run on each of the %d nodes, with MASTER_ADDR set to the "
				      "first one's address\n", nodes);
		sbuf_adds(sb, "torchrun \\\n");
		sbuf_addf(sb, "  --nnodes %d \\\n", nodes);
		sbuf_addf(sb, "  --nproc-per-node %d \\\n", gpn);
	}
	sbuf_adds(sb, "  --rdzv-backend c10d \\\n");
	sbuf_adds(sb, "  --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" \\\n");
	sbuf_adds(sb, l->loongforge ? "  \"$LOONGFORGE/loongforge/train.py\" \\\n  "
				    : "  \"$MEGATRON_LM/pretrain_gpt.py\" \\\n  ");
	mt_kv_render(sb, kv, n, MT_KV_ARGS, " \\\n  ");
	sbuf_addc(sb, '\n');
	return 0;
}
