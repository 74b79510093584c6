/* SPDX-License-Identifier: MIT */
/* verl: verl's Megatron-backend job, both ways.
 *
 * Read (mt_verl_read): a run's `.hydra/config.yaml` (or any verl YAML) or its
 * Hydra overrides (`key=v`, `+key=v`, `++key=v`, in a list or on the launch
 * script's `python3 -m verl.trainer.main_ppo ...` line) into Megatron-LM
 * arguments (struct mt_jobsrc), as verl hands them to Megatron-Core:
 *  - the engine keys under actor_rollout_ref.actor.megatron. (or
 *    critic.megatron. when only the critic runs Megatron), any other
 *    TransformerConfig field under override_transformer_config., DDP fields
 *    under override_ddp_config., optimizer fields under
 *    actor_rollout_ref.actor.optim.override_optimizer_config.;
 *  - what verl sets before applying the overrides (its engine,
 *    verl/workers/engine/megatron/transformer_impl.py @ 1dda039b9c: the
 *    alltoall dispatcher, no load-balancing loss, flash attention) and its
 *    defaults (engine/megatron.yaml: sequence parallel and the distributed
 *    optimizer on);
 *  - the batch: a global batch of ppo_mini_batch_size prompts times
 *    rollout.n responses, micro-batches of ppo_micro_batch_size_per_gpu (or,
 *    with use_dynamic_bsz, ppo_max_token_len_per_gpu tokens over the
 *    sequence), a sequence of data.max_prompt_length +
 *    data.max_response_length; the GPUs trainer.n_gpus_per_node x
 *    trainer.nnodes; the model actor_rollout_ref.model.path (s->model_path).
 *
 * Write (mt_verl_keys): a configuration as those keys, for `--format verl`:
 * keys verl's config declares as `key=value`, the others `++key=value`
 * (Hydra's `+` fails where a default exists, `++` adds or overrides).
 * Names read at verl-project/verl 1dda039b9c (verl/trainer/config/engine/
 * megatron.yaml, _generated_ppo_megatron_trainer.yaml).
 */
#ifndef MT_JOB_VERL_H
#define MT_JOB_VERL_H

#include "../lib/err.h"
#include "../perfmodel/config.h"
#include "../perfmodel/model.h"
#include "script.h"
#include "yamlflat.h"

#define MT_VERL_RELEASE "verl-project/verl@1dda039b9c"

/* The verl job in f (YAML flattened, or the overrides as items) into s.
 * MT_OK, or MT_EINVAL: "FILE:LINE: actor_rollout_ref.actor.strategy:
 * expected megatron ..." for a config without the Megatron backend, a batch
 * key that is not a number, no Megatron key at all. */
int mt_verl_read(struct mt_jobsrc *s, const struct mt_yflat *f, struct mt_error *err);

/* s->raw (Hydra overrides) as items for mt_verl_read: quotes off, null,
 * lists "[a,b]" as words.  The caller frees f (mt_yflat_free). */
int mt_verl_items(const struct mt_jobsrc *s, struct mt_yflat *f, struct mt_error *err);

/* A configuration of job j as verl keys into o (MT_FLAGS_MAX entries, struct
 * mt_kv; notes as job/flags.h has them), from its nb Bridge overrides b
 * (mt_bridge_overrides, with the rules' effects and the release applied):
 * verl's engine passes the same TransformerConfig, DDP and optimizer fields
 * to Megatron-Bridge's provider.  Returns the count. */
int mt_verl_keys(const struct mt_model *m, const struct mt_job *j, const struct mt_kv *b, int nb,
		 struct mt_kv *o);

#endif
