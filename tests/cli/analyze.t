# megatune analyze and megatune profile: "name | exit | ERE pattern | arguments"
help                     | 0 | --linked-only                                  | analyze --help
no trace                 | 2 | give at least one trace                        | analyze
bad window               | 2 | --window: expected all, steps or hta           | analyze --window x tests/fixtures/traces/small/megatune-mini.jsonl
bad pattern              | 2 | --comm-pattern '\(\[': not a valid             | analyze --comm-pattern '([' tests/fixtures/traces/small/megatune-mini.jsonl
option after traces      | 2 | options go before the traces                   | analyze tests/fixtures/traces/small/megatune-mini.jsonl --json x
missing file             | 2 | nope.json: cannot open                         | analyze nope.json
empty trace              | 2 | trace-empty.json: empty                        | analyze tests/fixtures/bad/trace-empty.json
truncated trace          | 2 | trace-truncated.json: truncated                | analyze tests/fixtures/bad/trace-truncated.json
truncated gzip           | 2 | trace-truncated.json.gz: truncated: the gzip   | analyze tests/fixtures/bad/trace-truncated.json.gz
not JSON                 | 2 | trace-not-json.json: not valid JSON at byte 0  | analyze tests/fixtures/bad/trace-not-json.json
no GPU work              | 2 | trace-no-gpu.json: no GPU kernel               | analyze tests/fixtures/bad/trace-no-gpu.json
a directory              | 2 | tests/fixtures/bad: cannot read                | analyze tests/fixtures/bad
megatune format          | 0 | reduce_scatter +1 +0\.028 +0\.005              | analyze tests/fixtures/traces/small/megatune-mini.jsonl
iteration from NVTX      | 0 | 0\.060 +0\.038 .* 0\.070$                      | analyze --step-range iteration tests/fixtures/traces/small/megatune-mini.jsonl
json schema              | 0 | "schema": "megatune.analysis/1"                | analyze --json - tests/fixtures/traces/small/megatune-mini.jsonl
json overlap             | 0 | "overlap_pct": 82\.143                          | analyze --json - tests/fixtures/traces/small/megatune-mini.jsonl
json idle split          | 0 | "idle_host_wait_us": 20\.000                   | analyze --json - tests/fixtures/traces/small/megatune-mini.jsonl
facts out                | 0 | "finding.idle_frac": 0\.366667                 | analyze --facts - tests/fixtures/traces/small/megatune-mini.jsonl
finding with rule id     | 0 | \[diag-idle-gpu\]                              | analyze tests/fixtures/traces/small/megatune-mini.jsonl
no rules                 | 0 | !Findings                                      | analyze --no-rules tests/fixtures/traces/small/megatune-mini.jsonl
bad rule file            | 2 | broken.rules:[0-9]+:                           | analyze --rules tests/fixtures/bad/broken.rules tests/fixtures/traces/small/megatune-mini.jsonl
TraceLens Qwen linked    | 0 | 34\.892 +31\.905 +31\.903 +0\.000 +0\.000 +0\.0 +0\.002 +0\.002 +2\.987 | analyze --linked-only tests/fixtures/traces/tracelens_h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
Qwen every event         | 0 | "kernels": 1465                                | analyze --json - tests/fixtures/traces/tracelens_h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
HTA window 4876          | 0 | "gpu_events": 4876                             | analyze --window hta --json - tests/fixtures/traces/hta/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz
DLRM slowest rank        | 0 | slowest rank 4, computation 1\.074x            | analyze --window steps tests/fixtures/traces/param_dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker2_step_12.1694128201554.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker4_step_12.1694128201547.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker5_step_12.1694128201549.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker6_step_12.1694128201553.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker7_step_12.1694128201553.pt.trace.json.gz
DLRM start skew          | 0 | Start skew of ProfilerStep#10: 7\.513 ms; rank 1 | analyze tests/fixtures/traces/param_dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker2_step_12.1694128201554.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker4_step_12.1694128201547.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker5_step_12.1694128201549.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker6_step_12.1694128201553.pt.trace.json.gz tests/fixtures/traces/param_dlrm_kineto/worker7_step_12.1694128201553.pt.trace.json.gz
DeepSeek DeepEP comm     | 0 | custom \(DeepEP, NVSHMEM, patterns\) +36       | analyze tests/fixtures/traces/deepseek_profile_data/train.json.gz
DeepSeek EP fact         | 0 | "finding.ep_exposed_frac": 0\.03              | analyze --json - tests/fixtures/traces/deepseek_profile_data/train.json.gz
no comm on 2 streams     | 0 | warning: .*GPU work on 2 streams and no kernel recognised as communication | analyze --no-rules tests/fixtures/traces/small/custom-comm.json
comm pattern             | 0 | custom \(DeepEP, NVSHMEM, patterns\) +1 +0\.060 +0\.030 | analyze --no-rules --comm-pattern '^my_team::a2a' tests/fixtures/traces/small/custom-comm.json
Kineto mini (real events)| 0 | all_to_all +1 +2\.146 +2\.121                  | analyze --no-rules tests/fixtures/traces/small/dlrm-worker0-mini.json
profile help             | 0 | CUDA_INJECTION64_PATH                          | profile --help
profile no dir           | 2 | -o DIR is required                             | profile -- true
profile no command       | 2 | give the command to run                        | profile -o pdir
profile exit status      | 3 | !error                                         | profile -o pdir -- sh -c 'exit 3'
profile missing command  | 127 | cannot run no-such-cmd                       | profile -o pdir -- no-such-cmd
profile missing lib      | 77 | libmegatune_trace.so is not here              | profile --lib /nonexistent.so -o pdir -- true
killed tracer (cut line) | 0 | warning: .*no end record: the traced process did not exit cleanly \(its last line was cut short | analyze --no-rules tests/fixtures/traces/small/megatune-killed.jsonl
Kineto event with t key  | 0 | "gpu_events": 1                               | analyze --json - tests/fixtures/traces/small/kineto-t-key.json
zero-length events       | 0 | "total_us": 0\.000                            | analyze --json - tests/fixtures/traces/small/zero-length.jsonl
profile forwards SIGTERM | 7 | !error                                         | profile -o pdir -- sh -c 'trap "exit 7" TERM; kill -TERM $PPID; sleep 5 & wait'
against needs it         | 2 | --layers, --candidate, --model and --gpus go with --against | analyze --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against missing file     | 2 | cannot read 'nope.args'                        | analyze --against nope.args tests/fixtures/traces/deepseek_profile_data/train.json.gz
against bad job          | 2 | bad-heads.args: hidden size 4096 is not divisible by 30 heads | analyze --against tests/fixtures/jobs/bad-heads.args tests/fixtures/traces/deepseek_profile_data/train.json.gz
against too many layers  | 2 | --layers 99: the model has 58 MoE layers       | analyze --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 99 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against no steps         | 2 | custom-comm.json: no ProfilerStep range.*--layers N | analyze --against tests/fixtures/report/advice-llama3-8b.json tests/fixtures/traces/small/custom-comm.json
against a graph scope    | 2 | custom-comm.json: no ProfilerStep range | analyze --against tests/fixtures/validate/advice-llama3-8b-16-graph-scope.json tests/fixtures/traces/small/custom-comm.json
against a bad graph scope | 2 | advice-graph-scope.json: field 'job.cuda_graph_scope': expected scope names among attn, mlp, moe_router, moe_preprocess, moe | analyze --against tests/fixtures/bad/advice-graph-scope.json tests/fixtures/traces/small/custom-comm.json
against candidate range  | 2 | --candidate 9: .*advice-llama3-8b.json has 3 candidates | analyze --against tests/fixtures/report/advice-llama3-8b.json --candidate 9 tests/fixtures/traces/small/megatune-mini.jsonl
against candidate of job | 2 | --candidate: .*is a job, not an advice file    | analyze --against tests/fixtures/jobs/llama3-8b.args --candidate 2 tests/fixtures/traces/small/megatune-mini.jsonl
against DeepSeek layers  | 0 | unit: 4 MoE layers; measured: mean of 1 trace   | analyze --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against DeepSeek GEMM    | 0 | GEMM +75\.057 +[0-9]+\.[0-9]{3} +[-+][0-9]+\.[0-9]{3} +[0-9.]+ +18\.764 / [0-9.]+ | analyze --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against DeepSeek EP      | 0 | of it expert dispatch +113\.440                | analyze --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against furthest off     | 0 | furthest off: [a-z_]+, the model [a-z]+ by [0-9.]+ ms | analyze --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against json             | 0 | "config": "TP1 PP16 VPP2 EP64 ETP1 DP128 MBS1", | analyze --json - --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against step advice      | 0 | window +0\.060 +3089\.452                      | analyze --step-range iteration --against tests/fixtures/report/advice-llama3-8b.json tests/fixtures/traces/small/megatune-mini.jsonl
against not this job     | 0 | warning: the model's window is [0-9.e+]+x the trace's | analyze --step-range iteration --against tests/fixtures/report/advice-llama3-8b.json tests/fixtures/traces/small/megatune-mini.jsonl
against json furthest    | 0 | "furthest_off": "[a-z_]+"                      | analyze --json - --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against DeepSeek no why GEMM within 25% | 0 | !why gemm | analyze --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against DeepSeek why attention | 0 | why attention is 43% off: the profile dgx-h100 measures attention at head dimension 128, not the model's 192 | analyze --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against DeepSeek no why within 25% | 0 | !why element | analyze --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
against DeepSeek why in JSON | 0 | "why":[[:space:]]*"the profile dgx-h100 measures attention | analyze --json - --against tests/fixtures/jobs/deepseek-v3-ep64-h800.args --gpus 2048 --layers 4 tests/fixtures/traces/deepseek_profile_data/train.json.gz
epoch clock              | 0 | ^ +1 +0\.060 +0\.038                         | analyze tests/fixtures/traces/small/megatune-epoch.jsonl
launcher left out        | 0 | left out, a process that put no work on a GPU | analyze tests/fixtures/traces/small/megatune-launcher.jsonl tests/fixtures/traces/small/megatune-mini.jsonl
launcher alone           | 2 | no GPU kernel, memcpy or memset events \(0 GPU | analyze tests/fixtures/traces/small/megatune-launcher.jsonl
# real traces of one H100 (tests/fixtures/gpu/): the same small GPT under megatune profile (12 steps)
# and torch.profiler (steps 4-9), read back gzipped
real CUPTI trace         | 0 | ^ +0 +4803\.997 +165\.366 .* 4852 +3 +41\.419 | analyze --step-range step# tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/trace-cupti/megatune-trace.pid1174.jsonl.gz
real Kineto trace        | 0 | ^ +0 +111\.135 +68\.068 .* 2310 +1 +18\.511 | analyze --window steps tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/trace-kineto/tinygpt.pt.trace.json.gz
