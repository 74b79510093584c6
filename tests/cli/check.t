# megatune check: the job a user runs, read from its own file (tests/fixtures/jobs/).
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
check help names the inputs | 0 | Megatron-Bridge run_config.yaml, the configuration summary Bridge logs at | check --help
check needs a job | 2 | missing JOB | check
check many jobs go on after one that cannot be read | 2 | ^  b: not read \(the error above\)$ | check a b
check missing file | 2 | cannot read 'no/such.sh' | check no/such.sh
check misconfigured reads the launcher | 0 | job: 64 GPUs of dgx-h100 \(the launcher: 8 per node x 8 nodes\), seq 8192, global batch 128 | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured reads the model from its flags | 0 | 80 layers, hidden 8192, 64 heads, 70.6B parameters | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured names TP 16 across nodes | 0 | TP 16 spans 2 NVLink domains of 8 GPUs | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured says why it cannot time TP 16 | 0 | cannot time the job as written: --tp 16: .*8 key/value heads | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured has no one-knob fix | 0 | one knob: no single change makes the job run and fit | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured fixes TP with two knobs | 0 | two knobs \(TP \+ FSDP\): TP1 PP1 DP64 MBS1 | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured diff removes the job's TP | 0 | - --tensor-model-parallel-size 16 | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured best overall | 0 | best overall \(everything\): TP4 PP2 | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured lists a flag it does not time | 0 | not modelled \(1 flag megatune does not time\): --save-interval \(line 63\) | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check overlaps off does not fit | 0 | the job does not fit: 77.5 GiB per GPU | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off names the distributed optimizer | 0 | dist-opt \(overrides: the rule sets config.dist_opt = on \(pinned to off\)\) | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off names the DP overlap | 0 | dp-overlap \(overrides | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off names the TP overlap | 0 | tp-comm-overlap \(overrides | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off names the missing variable | 0 | CUDA_DEVICE_MAX_CONNECTIONS is not set; the rules want CUDA_DEVICE_MAX_CONNECTIONS=1 | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off one knob that fits | 0 | one knob \(PP\): TP8 PP4 VPP10 DP2 MBS1 | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off one-knob diff | 0 | \+ --pipeline-model-parallel-size 4 | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off removes the recompute as written | 0 | - --recompute-method uniform | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off quotes the layout for the shell | 0 | \+ --pipeline-model-parallel-layout 'Et\*14[^ ']*L'$ | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --cluster dgx-a100-80g --gpus 32
check overlaps off JSON | 0 | "schema":	"megatune.check/1" | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --json -
check overlaps off JSON diagnoses | 0 | "rule":	"dist-opt" | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --json -
check --gpus overrides the launcher | 0 | job: 128 GPUs of dgx-h100 \(--gpus\) | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --gpus 128
check bad value names the line | 2 | bad-value.sh:7: --tensor-model-parallel-size: expected a positive integer, got 'four' | check tests/fixtures/jobs/bad-value.sh
check heads that do not divide | 2 | bad-heads.args: hidden size 4096 is not divisible by 30 heads | check tests/fixtures/jobs/bad-heads.args --gpus 8
check no vocabulary says what to give | 2 | no vocabulary size: .*--model | check tests/fixtures/jobs/no-vocab.sh
check no vocabulary with --model | 0 | job: 8 GPUs | check tests/fixtures/jobs/no-vocab.sh --model llama3-8b
check unclosed quote names its line | 2 | unclosed.sh:2: a double quote is not closed | check tests/fixtures/jobs/unclosed.sh --gpus 8
check a model config is not a job | 2 | tiny-llama.json: no Megatron-LM arguments | check tests/fixtures/models/tiny-llama.json
check a log without arguments block | 2 | a training log without Megatron-LM's arguments block or Megatron-Bridge's configuration summary: no job in it | check tests/fixtures/megatron-logs/mlm_core_mixtral8x7b_16xh100_throughput_success.log
check no GPU count | 2 | llama3-8b.args: no GPU count: .*give --gpus N | check tests/fixtures/jobs/llama3-8b.args
check a file of arguments | 0 | megatune check: tests/fixtures/jobs/llama3-8b.args \(arguments\) | check tests/fixtures/jobs/llama3-8b.args --gpus 8
check says which stage of the job peaks | 0 | ^memory by stage .*, stage 1 peaks:$ | check tests/fixtures/jobs/llama3-8b.args --gpus 8
check prints the last stage with its logits | 0 | ^  stage 1 +[0-9.]+ peak +states [0-9.]+, activations [0-9.]+, logits [1-9] | check tests/fixtures/jobs/llama3-8b.args --gpus 8
check prints the allocator's figures | 0 | ^allocator, stage 1: allocated [0-9.]+, max allocated [0-9.]+, reserved | check tests/fixtures/jobs/llama3-8b.args --gpus 8
check a file of arguments advise printed is the best | 0 | best overall: the job is within 0.5% of the best megatune finds | check tests/fixtures/jobs/llama3-8b.args --gpus 8
check a file of arguments on more GPUs | 0 | best overall \(everything\) | check tests/fixtures/jobs/llama3-8b.args --gpus 64
check a log puts measured beside predicted | 0 | step 14.579 s \(median of 29 after iteration 1; IQR 0.054 s\) against 13.872 s predicted: \+5.1% | check tests/fixtures/jobs/llama3-8b-run.log
check a log reads its world size | 0 | job: 8 GPUs of dgx-h100 \(the log's world_size\) | check tests/fixtures/jobs/llama3-8b-run.log
check a log's memory | 0 | rank 0 \(stage 0\), line 858, allocated 51.09 \([0-9.]+, [-+][0-9.]+%\), max allocated 70.14 \([0-9.]+, [-+][0-9.]+%\), reserved 77.25, max reserved 77.25 | check tests/fixtures/jobs/llama3-8b-run.log
check a log's warm-up is an option | 0 | median of 25 after iteration 5 | check tests/fixtures/jobs/llama3-8b-run.log --warmup 5
check --validation needs a log | 2 | --validation: the job is not a log \(no run to record\) | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --validation /tmp/never-written.json
check --validation is not stdout | 2 | --validation writes files beside FILE | check tests/fixtures/jobs/llama3-8b-run.log --validation -
check a Bridge run_config.yaml | 0 | megatune check: tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml \(Megatron-Bridge config\) | check tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8
check a Bridge YAML states its model | 0 | 32 layers, hidden 4096, 32 heads, 8.0B parameters | check tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8
check a Bridge YAML counts what is not timed | 0 | not timed: [0-9]+ keys of sections that do not change the step time | check tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8
check a Bridge YAML configuration | 0 | configuration: TP4 PP1 CP2\(p2p\) DP1 MBS1, recompute full \(every layer, in groups of 1\), distributed optimizer off | check tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8
check a Bridge YAML reads env_vars | 0 | !TORCH_NCCL_AVOID_RECORD_STREAMS is not set | check tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8
check a Bridge job's diagnoses | 0 | [!] dist-opt \(overrides | check tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8
check a Bridge job's diff is in overrides | 0 | - ddp.use_distributed_optimizer=false | check tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8
check a Bridge job's fix in overrides | 0 | \+ ddp.use_distributed_optimizer=true | check tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8
check a Bridge job has no flag diff | 0 | !^    [-+] --[a-z] | check tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8
check a Bridge summary log | 0 | \(Megatron-Bridge log \(configuration summary\)\) | check tests/fixtures/jobs/bridge-llama3-8b-summary.log --model llama3-8b --gpus 8
check a Bridge summary reads as the YAML | 0 | configuration: TP4 PP1 CP2\(p2p\) DP1 MBS1, recompute full \(every layer, in groups of 1\), distributed optimizer off | check tests/fixtures/jobs/bridge-llama3-8b-summary.log --model llama3-8b --gpus 8
check a Bridge summary names what it does not model | 0 | not modelled \([0-9]+ keys megatune does not time\): model.deallocate_pipeline_outputs \(line 32\) | check tests/fixtures/jobs/bridge-llama3-8b-summary.log --model llama3-8b --gpus 8
check a Bridge summary in JSON | 0 | "kind":[[:space:]]*"bridge_summary" | check tests/fixtures/jobs/bridge-llama3-8b-summary.log --model llama3-8b --gpus 8 --json -
check a Bridge YAML in JSON | 0 | "format":[[:space:]]*"bridge" | check tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8 --json -
check a verl launch script | 0 | megatune check: tests/fixtures/jobs/verl-qwen3-30b-grpo.sh \(verl overrides: verl.trainer.main_ppo\) | check tests/fixtures/jobs/verl-qwen3-30b-grpo.sh
check a verl script's model from its path | 0 | model: qwen3-30b-a3b, 48 layers | check tests/fixtures/jobs/verl-qwen3-30b-grpo.sh
check a verl script's GPUs and batch | 0 | job: 16 GPUs of dgx-h100 \(verl's trainer.n_gpus_per_node x trainer.nnodes: 8 per node x 2 nodes\), seq 4096, global batch 256 | check tests/fixtures/jobs/verl-qwen3-30b-grpo.sh
check a verl script's offload noted | 0 | param_offload: verl moves it to the host between phases | check tests/fixtures/jobs/verl-qwen3-30b-grpo.sh
check a verl script's configuration | 0 | configuration: TP4 PP1 EP4 ETP4 DP4 MBS2, recompute full \(every layer, in groups of 1\), distributed optimizer on | check tests/fixtures/jobs/verl-qwen3-30b-grpo.sh
check a verl job's diff is in verl keys | 0 | \+ actor_rollout_ref.actor.megatron.expert_model_parallel_size=[0-9]+ | check tests/fixtures/jobs/verl-qwen3-30b-grpo.sh
check a verl job's keys outside the struct take ++ | 0 | \+ \+\+actor_rollout_ref.actor.megatron.override_ddp_config.overlap_grad_reduce=true | check tests/fixtures/jobs/verl-qwen3-30b-grpo.sh
check a verl config YAML | 0 | megatune check: tests/fixtures/jobs/verl-config.yaml \(verl config\) | check tests/fixtures/jobs/verl-config.yaml
check a verl config resolves rollout.n | 0 | seq 8192, global batch 256 | check tests/fixtures/jobs/verl-config.yaml
check a verl config's dynamic batch | 0 | use_dynamic_bsz: micro-batches of up to 16384 tokens \(ppo_max_token_len_per_gpu\), timed as 2 sequences of 8192 | check tests/fixtures/jobs/verl-config.yaml
check a verl config's model path is read | 0 | model: hf-qwen2.5-72b.json, 80 layers | check tests/fixtures/jobs/verl-config.yaml
check a verl model path unreadable | 2 | bad-model.verl:2: the model /nonexistent/qwen-7b cannot be read .*give the model with --model | check tests/fixtures/jobs/bad-model.verl
check YAML that is no job | 2 | bad-not-a-job.yaml:1: YAML that is neither a Megatron-Bridge config .* its top-level keys: dataset | check tests/fixtures/jobs/bad-not-a-job.yaml
check YAML that does not parse | 2 | bad-syntax.yaml:4: YAML: did not find expected | check tests/fixtures/jobs/bad-syntax.yaml
check a verl config without Megatron | 2 | verl-fsdp.yaml:4: actor_rollout_ref.actor.strategy: a verl config without the Megatron backend: expected megatron | check tests/fixtures/jobs/verl-fsdp.yaml
check a Bridge precision recipe megatune does not know | 2 | bad-precision.bridge:4: mixed_precision: expected a recipe megatune times .* got 'bf16_with_fp6_mixed' | check tests/fixtures/jobs/bad-precision.bridge --model llama3-8b --gpus 8
check a verl batch that is not a number | 2 | bad-batch.verl:2: actor_rollout_ref.actor.ppo_mini_batch_size: expected a non-negative integer, got 'sixty-four' | check tests/fixtures/jobs/bad-batch.verl --model llama3-8b
check a Bridge key's bad value names the key | 2 | model.tensor_model_parallel_size \(--tensor-model-parallel-size\): expected | check tests/fixtures/jobs/bad-tp.bridge --model llama3-8b --gpus 8
check stdin is one job | 2 | '-' \(standard input\) is one job: give it alone | check - tests/fixtures/jobs/llama3-8b.args
check many jobs need a validation folder | 2 | --validation /nonexistent: with several jobs, a folder that exists | check tests/fixtures/jobs/llama3-8b-run.log tests/fixtures/jobs/llama3-8b.args --validation /nonexistent
check many jobs end with one line each | 0 | ^  tests/fixtures/jobs/llama3-8b.args: checked \(no run: not a log\)$ | check tests/fixtures/jobs/llama3-8b-run.log tests/fixtures/jobs/llama3-8b.args --gpus 8
check many jobs name each | 0 | ^== tests/fixtures/jobs/llama3-8b.args ==$ | check tests/fixtures/jobs/llama3-8b-run.log tests/fixtures/jobs/llama3-8b.args --gpus 8
check a LoongForge script | 0 | megatune check: tests/fixtures/jobs/loongforge-deepseek-v3.sh \(launch script: train.py\) | check tests/fixtures/jobs/loongforge-deepseek-v3.sh
check a LoongForge model name | 0 | model: deepseek-v3, 61 layers | check tests/fixtures/jobs/loongforge-deepseek-v3.sh
check a LoongForge custom pipeline split | 0 | pipeline layout Et\*4.t\*3.\(t\*4.\)\*5t\*3.\(t\*4.\)\*7t\*3mL, pinned | check tests/fixtures/jobs/loongforge-deepseek-v3.sh
check a LoongForge job reads its own flags | 0 | !not modelled | check tests/fixtures/jobs/loongforge-deepseek-v3.sh
check a LoongForge job is diffed for its fork | 0 | "megatron_version":[[:space:]]*"loongforge" | check tests/fixtures/jobs/loongforge-deepseek-v3.sh --json -
# a real Megatron-LM log of one H100 (tests/fixtures/gpu/): Megatron's own layers attend unfused,
# they and the fusions the job turned off are timed as eager kernels (docs/MODEL.md 4.11), and the
# measured step is read beside the prediction (tests/cli/check-local.sh holds it within 20%)
real log: local layers attend unfused | 0 | unfused-attention +Attention runs unfused | check tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c1-tp1-pp1-mbs16.log --cluster dgx-h100
real log: the fusions turned off are timed with its own layers | 0 | !timed as fused | check tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c1-tp1-pp1-mbs16.log --cluster dgx-h100
Transformer Engine layers: the fusions turned off are named | 0 | timed as fused .*--no-rope-fusion, --no-bias-swiglu-fusion$ | check tests/fixtures/jobs/llama3-8b-fusions-off.args --gpus 8
real log: unfused gradient accumulation is read and timed | 0 | grad-accum-unfused +The job turns gradient accumulation fusion off | check tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c1-tp1-pp1-mbs16.log --cluster dgx-h100
real log: no GELU fusion claimed for SwiGLU | 0 | !no-bias-gelu-fusion | check tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c1-tp1-pp1-mbs16.log --cluster dgx-h100
real log: measured beside predicted | 0 | step 0\.241 s \(median of 11 after iteration 1; IQR 0\.005 s\) against 0\.216 s predicted | check tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c1-tp1-pp1-mbs16.log --cluster dgx-h100
real log: measured memory | 0 | rank 0 \(stage 0\), line [0-9]+, allocated 5\.88 \(5\.88, \+0\.0%\), max allocated 32\.85 \(32\.83, \+0\.1%\), reserved 34\.48, max reserved 34\.48 \(34\.17, \+0\.9%\) | check tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c1-tp1-pp1-mbs16.log --cluster dgx-h100
real log: its own layers are named | 0 | Megatron-LM's own layers \(--transformer-impl local\): timed as the PyTorch eager kernels they run | check tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c1-tp1-pp1-mbs16.log --cluster dgx-h100
Bridge overrides: unfused gradient accumulation read and timed | 0 | grad-accum-unfused +The job turns gradient accumulation fusion off | check tests/fixtures/jobs/llama3-8b-accum-off.bridge --model llama3-8b --gpus 8
verl overrides: unfused gradient accumulation read and timed | 0 | grad-accum-unfused +The job turns gradient accumulation fusion off | check tests/fixtures/jobs/llama3-8b-accum-off.verl --model llama3-8b --gpus 8
verl overrides: a Hugging Face id of a bundled model | 0 | model: llama3-8b, 32 layers | check tests/fixtures/jobs/llama3-8b-hf-id.verl --gpus 8
real log: Transformer Engine's graphs on local layers cannot run | 0 | cannot time the job as written: --cuda-graphs on: Megatron-LM's own layers \(--transformer-impl local\) cannot run it | check tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c3-tp1-pp1-mbs4.log --cluster dgx-h100
real log: the change that runs drops them | 0 | - --cuda-graph-impl transformer_engine | check tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c3-tp1-pp1-mbs4.log --cluster dgx-h100
