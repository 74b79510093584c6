# megatune check: the job a user runs, read from its own file (tests/fixtures/jobs/).
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
check help names the three inputs | 0 | a file of arguments, or | check --help
check needs a job | 2 | missing JOB | check
check one job only | 2 | unexpected argument 'b' | check a b
check missing file | 2 | cannot read 'no/such.sh' | check no/such.sh
check misconfigured reads the launcher | 0 | job: 64 GPUs of dgx-h100 \(the launcher: 8 per node x 8 nodes\), seq 8192, global batch 128 | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured reads the model from its flags | 0 | 80 layers, hidden 8192, 64 heads, 70.6B parameters | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured names TP 16 across nodes | 0 | TP 16 spans 2 NVLink domains of 8 GPUs | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured says why it cannot time TP 16 | 0 | cannot time the job as written: --tp 16: .*8 key/value heads | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured has no one-knob fix | 0 | one knob: no single change makes the job run and fit | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured fixes TP with two knobs | 0 | two knobs \(TP \+ PP\): TP8 | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured diff removes the job's TP | 0 | - --tensor-model-parallel-size 16 | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured best overall | 0 | best overall \(everything\): TP4 PP2 | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check misconfigured lists a flag it does not time | 0 | not modelled \(1 flag megatune does not time\): --save-interval \(line 63\) | check tests/fixtures/jobs/llama3-70b-misconfigured.sh
check overlaps off does not fit | 0 | the job does not fit: 99.1 GiB per GPU | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off names the distributed optimizer | 0 | dist-opt \(overrides: the rule sets config.dist_opt = on \(pinned to off\)\) | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off names the DP overlap | 0 | dp-overlap \(overrides | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off names the TP overlap | 0 | tp-comm-overlap \(overrides | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off names the missing variable | 0 | CUDA_DEVICE_MAX_CONNECTIONS is not set; the rules want CUDA_DEVICE_MAX_CONNECTIONS=1 | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off one knob that fits | 0 | one knob \(distributed optimizer\): TP8 PP2 DP4 MBS1 | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off one-knob diff | 0 | \+ --use-distributed-optimizer | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off removes the recompute as written | 0 | - --recompute-method uniform | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off quotes the layout for the shell | 0 | \+ --pipeline-model-parallel-layout 'E | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh
check overlaps off JSON | 0 | "schema":	"megatune.check/1" | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --json -
check overlaps off JSON diagnoses | 0 | "rule":	"dist-opt" | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --json -
check --gpus overrides the launcher | 0 | job: 128 GPUs of dgx-h100 \(--gpus\) | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --gpus 128
check bad value names the line | 2 | bad-value.sh:7: --tensor-model-parallel-size: expected a positive integer, got 'four' | check tests/fixtures/jobs/bad-value.sh
check heads that do not divide | 2 | bad-heads.args: hidden size 4096 is not divisible by 30 heads | check tests/fixtures/jobs/bad-heads.args --gpus 8
check no vocabulary says what to give | 2 | no vocabulary size: .*--model | check tests/fixtures/jobs/no-vocab.sh
check no vocabulary with --model | 0 | job: 8 GPUs | check tests/fixtures/jobs/no-vocab.sh --model llama3-8b
check unclosed quote names its line | 2 | unclosed.sh:2: a double quote is not closed | check tests/fixtures/jobs/unclosed.sh --gpus 8
check a model config is not a job | 2 | tiny-llama.json: no Megatron-LM arguments | check tests/fixtures/models/tiny-llama.json
check a log without arguments block | 2 | a training log without Megatron-LM's arguments block: no job in it | check tests/fixtures/megatron-logs/mlm_core_mixtral8x7b_16xh100_throughput_success.log
check no GPU count | 2 | llama3-8b.args: no GPU count: .*give --gpus N | check tests/fixtures/jobs/llama3-8b.args
check a file of arguments | 0 | megatune check: tests/fixtures/jobs/llama3-8b.args \(arguments\) | check tests/fixtures/jobs/llama3-8b.args --gpus 8
check a file of arguments advise printed is the best | 0 | best overall: the job is within 0.5% of the best megatune finds | check tests/fixtures/jobs/llama3-8b.args --gpus 8
check a file of arguments on more GPUs | 0 | best overall \(everything\) | check tests/fixtures/jobs/llama3-8b.args --gpus 64
check a log puts measured beside predicted | 0 | step 14.579 s \(median of 29 after iteration 1; IQR 0.054 s\) against 13.855 s predicted: \+5.2% | check tests/fixtures/jobs/llama3-8b-run.log
check a log reads its world size | 0 | job: 8 GPUs of dgx-h100 \(the log's world_size\) | check tests/fixtures/jobs/llama3-8b-run.log
check a log's memory | 0 | memory: 77.2 GiB reserved at most \(worst rank\) against 70.7 GiB predicted | check tests/fixtures/jobs/llama3-8b-run.log
check a log's warm-up is an option | 0 | median of 25 after iteration 5 | check tests/fixtures/jobs/llama3-8b-run.log --warmup 5
check --validation needs a log | 2 | --validation: the job is not a log \(no run to record\) | check tests/fixtures/jobs/llama3-70b-overlaps-off.sh --validation /tmp/never-written.json
check --validation is not stdout | 2 | --validation writes files beside FILE | check tests/fixtures/jobs/llama3-8b-run.log --validation -
