# megatune validate: bad input, dry runs, the log parser.
# name | exit status | ERE the output must match (!ERE: must not) | arguments
help | 0 | usage: megatune validate | validate --help
help names the placeholders | 0 | \{megatron_args\} \{bridge_overrides\} \{env\} \{nodes\} \{gpus\} | validate --help
an unknown placeholder | 2 | unknown placeholder \{foo\} in the --launch template | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch 'torchrun {foo} pretrain_gpt.py' -o v.json
an unknown placeholder in a dry run | 2 | unknown placeholder \{nnodes\} | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch 'torchrun --nnodes {nnodes}' --dry-run
advice of the wrong schema | 2 | h100-1numa-nccl2.27.json: field 'schema': --advice expects "megatune.advice/1", got "megatune.profile/1" | validate --advice tests/fixtures/rules/h100-1numa-nccl2.27.json --launch 'true' -o v.json
a validation given as advice | 2 | field 'schema': --advice expects "megatune.advice/1" | validate --advice tests/fixtures/validate/validation-standin.json --launch 'true' -o v.json
a missing advice file | 2 | cannot read 'nope.json' | validate --advice nope.json --launch 'true' -o v.json
a launcher path that does not exist | 2 | the launcher '/nonexistent/torchrun' does not exist or is not executable | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch '/nonexistent/torchrun {megatron_args}' -o v.json
a launcher not on PATH | 2 | the launcher 'no-such-launcher-xyz' is not found on PATH | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch 'FOO=1 no-such-launcher-xyz {megatron_args}' -o v.json
no advice | 2 | missing --advice FILE | validate --launch 'true' -o v.json
nothing to run | 2 | missing --launch TEMPLATE or --proxy | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json -o v.json
launch and proxy | 2 | give --launch or --proxy, not both | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true --proxy -o v.json
a bad backend | 2 | --backend expects cpu or gpu, got 'tpu' | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --proxy --backend tpu -o v.json
mpirun without proxy | 2 | --mpirun goes with --proxy | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true --mpirun 'srun' -o v.json
warm-up leaves nothing | 2 | --warmup 20 leaves no iteration of --iters 20 | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true --warmup 20 -o v.json
a bad top | 2 | --top: expected an integer from 1 to 64, got '0' | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true --top 0 -o v.json
a bad timeout | 2 | --timeout: expected seconds from 0.001 to 10000000, got 'soon' | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true --timeout soon -o v.json
no output | 2 | missing -o FILE | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true
an unknown option | 2 | unknown option '--colour' | validate --colour
resume of a document of another kind | 2 | field 'schema': --resume expects "megatune.validation/1" | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true --resume -o tests/fixtures/validate/advice-llama3-8b-16.json
dry run fills the template | 0 | ^torchrun --nproc-per-node 8 --nnodes 1 pretrain_gpt.py --num-layers 32 .*--tensor-model-parallel-size 2 .*--train-iters 20 | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --top 2 --launch 'torchrun --nproc-per-node {gpus_per_node} --nnodes {nodes} pretrain_gpt.py {megatron_args} --mock-data --train-iters {iters}' --dry-run
dry run names each candidate | 0 | # c2-tp1-pp1-mbs1-off5 | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --top 2 --launch 'run {name}' --dry-run
dry run quotes values | 0 | model.attention_backend=\{_target_:megatron.core.transformer.enums.AttnBackend.fused,_call_:false\}' | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --top 1 --launch 'python run.py {bridge_overrides}' --dry-run
dry run of the environment | 0 | ^env NVTE_FWD_LAYERNORM_SM_MARGIN=16 NVTE_BWD_LAYERNORM_SM_MARGIN=16 .*PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True torchrun x$ | validate --advice tests/fixtures/validate/advice-llama3-8b-rules-2.json --top 1 --launch 'env {env} torchrun x' --dry-run
shell parameters and literal braces stay | 0 | ^echo \$\{HOME\} \{x\} c1-tp2-pp1-mbs4$ | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --top 1 --launch 'echo ${HOME} {{x}} {name}' --dry-run
dry run of the proxy | 0 | ^mpirun -np 8 [^ ]*/megatune-probe proxy --advice tests/fixtures/validate/advice-llama3-8b-16.json --candidate 3 --backend cpu --iters 20 --warmup 0$ | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --top 3 --proxy --dry-run
the proxy without mpirun | 0 | ^[^ ]*/megatune-probe proxy --advice [^ ]* --candidate 1 --backend gpu --iters 8 --warmup 0$ | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --top 1 --proxy --backend gpu --mpirun '' --iters 8 --warmup 2 --dry-run
the proxy under srun | 0 | ^srun -N 1 -n 8 [^ ]*/megatune-probe proxy | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --top 1 --proxy --mpirun 'srun -N {nodes} -n {gpus}' --dry-run
an unknown placeholder in --mpirun | 2 | unknown placeholder \{np\} | validate --advice tests/fixtures/validate/advice-llama3-8b-16.json --proxy --mpirun 'mpirun -np {np}' --dry-run
parse a log with no iteration line | 0 | status: no_iterations | validate --parse-log tests/fixtures/megatron-logs/mlm_2023_timers_minmax_block_ul2.log
parse an OOM log | 0 | evidence: line 61: torch.cuda.OutOfMemoryError: CUDA out of memory | validate --parse-log tests/fixtures/megatron-logs/mlm_oom_v100_gpt_774m_first_iteration_torchrun.log
parse a missing log | 2 | cannot read 'nope.log' | validate --parse-log nope.log
report of a validation | 0 | <section id="validation"> | report --validation tests/fixtures/validate/validation-standin.json -o -
the report draws y = x | 0 | data-ref="y=x" | report --validation tests/fixtures/validate/validation-standin.json -o -
the report shows the evidence | 0 | Watchdog caught collective operation timeout | report --validation tests/fixtures/validate/validation-standin.json -o -
report of an advice given as validation | 2 | field 'schema': --validation expects "megatune.validation/1" | report --validation tests/fixtures/validate/advice-llama3-8b-16.json -o x.html
tune help | 0 | usage: megatune tune | tune --help
tune without a job | 2 | missing the job | tune --launch true
tune with advice and job flags | 2 | with --advice, the job comes from the file | tune --advice tests/fixtures/validate/advice-llama3-8b-16.json --model llama3-8b --launch true
tune sets advise's top | 2 | --top: tune sets advise's --top itself | tune --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --top 3 --launch true
tune without what to run | 2 | missing --launch TEMPLATE or --proxy | tune --model llama3-8b --gpus 8 --seq 4096 --gbs 64
tune passes bad job flags to advise | 2 | megatune advise: error | tune --model no-such-model --gpus 8 --seq 4096 --gbs 64 --launch true --dir tune-bad
tune with a bad per-round | 2 | --per-round: expected an integer from 1 to 1000000, got '0' | tune --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true --per-round 0
tune with no runs | 2 | --runs: expected an integer from 1 to 1000000, got '0' | tune --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true --runs 0
tune with runs and rounds | 2 | --runs runs one candidate a round until N runs: give it without --per-round and --max-rounds | tune --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true --runs 3 --per-round 2
tune with runs and a round limit | 2 | give it without --per-round and --max-rounds | tune --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch true --runs 3 --max-rounds 1
tune with an unknown placeholder | 2 | unknown placeholder \{gpu\} | tune --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch 'run {gpu}' --dir tune-ph
tune with a launcher that does not exist | 2 | the launcher '/no/such/launcher' does not exist | tune --advice tests/fixtures/validate/advice-llama3-8b-16.json --launch '/no/such/launcher {name}' --dir tune-nl
