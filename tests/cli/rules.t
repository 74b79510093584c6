# megatune rules, and the rules in advise and estimate.
# name | exit status | ERE the output must match (!ERE: must not) | arguments
list | 0 | tp-nvlink +constraint +tp +Keep TP inside the NVLink domain | rules list
list counts | 0 | ^[0-9]+ rules$ | rules list
list by kind | 0 | diag-idle-gpu +diagnose | rules list --kind diagnose
list by kind, others out | 0 | !tp-nvlink | rules list --kind diagnose
list a bad kind | 2 | --kind: expected constraint, set, advise or diagnose, got 'hint' | rules list --kind hint
list ids | 0 | ^why-tp$ | rules list --ids
show | 0 | source +rules/defs/tp.rules:[0-9]+ | rules show tp-nvlink
show the condition | 0 | when +config.tp > cluster.nvlink_domain | rules show tp-nvlink
show the citation | 0 | cites +Bridge guide, "Parallel Mapping Strategies" | rules show tp-nvlink
show the facts read | 0 | facts +config.tp cluster.nvlink_domain | rules show tp-nvlink
show a set rule | 0 | set +config.sp = divides | rules show sp-with-tp
show an unknown rule | 2 | no rule 'tp-nvlnk' \(megatune rules list shows them\) | rules show tp-nvlnk
show needs an id | 2 | expected one rule id | rules show
lint the bundled rules | 0 | bundled rules: no problems | rules lint
lint a user file | 0 | 2 rules from 1 path and [0-9]+ bundled: no problems | rules lint tests/fixtures/rules/site-tp4.rules
lint a broken file: the line and the name | 2 | broken.rules:5: WHEN: unknown name 'config.tensor_parallel' | rules lint tests/fixtures/bad/broken.rules
lint a broken file: the missing source | 2 | broken.rules:9: rule 'site-no-cite': missing CITE | rules lint tests/fixtures/bad/broken.rules
lint a broken file: the count | 2 | ^2 problems$ | rules lint tests/fixtures/bad/broken.rules
lint a missing file | 2 | no-such.rules: cannot read | rules lint tests/fixtures/rules/no-such.rules
facts | 0 | config.tp +tp +tensor-parallel size | rules facts
facts have units | 0 | dp.bucket_bytes +bytes +plan | rules facts
doc | 0 | ^# megatune rules | rules doc
doc lists every rule | 0 | ^#### `diag-slow-rank`: Slow or late ranks | rules doc
check findings | 0 | \[diag-idle-gpu\] Idle GPU: the host does not keep up | rules check --facts tests/fixtures/findings/tracelens-bert-h100.json
check says what it did not evaluate | 0 | [0-9]+ facts; [0-9]+ rules evaluated, [0-9]+ not | rules check --facts tests/fixtures/findings/tracelens-bert-h100.json
check a quiet run | 0 | no rule fired | rules check --facts tests/fixtures/findings/tracelens-qwen-h100.json
check as JSON | 0 | "schema": "megatune.rulecheck/1" | rules check --facts tests/fixtures/findings/dlrm-8rank.json --json
check with a cluster: its facts fill in | 0 | \[tp-nvlink\] VIOLATED: Keep TP inside the NVLink domain | rules check --facts tests/fixtures/rules/run-tp16.json --cluster dgx-h100
check without a cluster: the rule is not evaluated | 0 | !tp-nvlink | rules check --facts tests/fixtures/rules/run-tp16.json
check needs facts | 2 | --facts FILE is required | rules check
check an unknown fact | 2 | facts-unknown.json: field 'facts.finding.idle_fraction': unknown fact \(did you mean 'finding.idle_frac'\?\) | rules check --facts tests/fixtures/bad/facts-unknown.json
check a wrong value | 2 | field 'facts.config.cp_comm': "ring" is not one of its values | rules check --facts tests/fixtures/bad/facts-type.json
check a missing file | 2 | cannot read 'nope.json' | rules check --facts nope.json
an unknown subcommand | 2 | unknown rules command 'frob' | rules frob
no subcommand | 2 | usage: megatune rules list | rules
#
# in advise and estimate
advise shows why, under the best | 0 | why-tp +TP [0-9]+: each collective moves | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
advise shows the pruning by rule | 0 | pruned by rules: .*pp-microbatches [0-9]+ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
advise without rules says so | 0 | rules: off \(--no-rules\): the model alone | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --no-rules
advise without rules has no rule output | 0 | !why-tp | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --no-rules
rules and no-rules exclude each other | 2 | --rules and --no-rules exclude each other | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --no-rules --rules tests/fixtures/rules/site-tp4.rules
without a site rule TP 8 is best | 0 | ^best: TP8 PP | advise --model llama3.1-405b --gpus 1024 --seq 8192 --gbs 1024
a site rule limits TP to 4 | 0 | ^best: TP4 | advise --model llama3.1-405b --gpus 1024 --seq 8192 --gbs 1024 --rules tests/fixtures/rules/site-tp4.rules
a site rule is counted | 0 | pruned by rules: site-tp-at-most-4 [0-9]+ | advise --model llama3.1-405b --gpus 1024 --seq 8192 --gbs 1024 --rules tests/fixtures/rules/site-tp4.rules
a site rule replaces a bundled one | 0 | --manual-gc-interval 500 | advise --model llama3.1-405b --gpus 1024 --seq 8192 --gbs 1024 --rules tests/fixtures/rules/site-tp4.rules
a folder of rules | 0 | ^best: TP[1-4] PP1 | advise --model llama3.1-405b --gpus 1024 --seq 8192 --gbs 1024 --rules tests/fixtures/rules
a broken rule file: file, line, reason | 2 | megatune advise: error: tests/fixtures/bad/broken.rules:5: WHEN: unknown name 'config.tensor_parallel' | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --rules tests/fixtures/bad/broken.rules
a broken rule file in estimate | 2 | broken.rules:5: | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --rules tests/fixtures/bad/broken.rules
a missing rule file | 2 | cannot read 'nope.rules' | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --rules nope.rules
estimate lists the broken constraints | 0 | tp-nvlink +TP 16 would span 2 NVLink domains | estimate --model gpt3-175b --gpus 64 --seq 2048 --gbs 64 --tp 16 --pp 4
estimate: a pin overrides a set rule | 1 | sp-with-tp +\(overridden\) \[config.sp = on \(pinned to off\)\] | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 --sequence-parallel off
estimate: set rules fill what is not pinned | 0 | \[config.bucket_params = [0-9.]+M\] | estimate --model llama3-8b --gpus 64 --seq 4096 --gbs 512
nothing fits the constraints: one is relaxed | 0 | NOTE: no candidate that fits satisfies every constraint rule; ranked without rule site-no-pipeline | advise --model llama3.1-405b --gpus 128 --seq 8192 --gbs 128 --fsdp off --rules tests/fixtures/rules/site-no-pp.rules
a relaxed rule is marked under the best | 0 | site-no-pipeline +PP [0-9]+: our launcher | advise --model llama3.1-405b --gpus 128 --seq 8192 --gbs 128 --fsdp off --rules tests/fixtures/rules/site-no-pp.rules
the flex dispatcher may cross NVLink domains | 0 | --moe-token-dispatcher-type flex | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --moe-dispatcher flex
a bad dispatcher | 2 | --moe-dispatcher: expected alltoall, allgather, flex or auto, got 'deepep' | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --moe-dispatcher deepep
environment from rules | 0 | ^export CUDA_DEVICE_MAX_CONNECTIONS=1$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --format env
no environment without rules | 0 | !CUDA_DEVICE_MAX_CONNECTIONS | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --format env --no-rules
NCCL versions read as versions | 0 | with NCCL 2\.21\.5 \(before 2\.26\) | estimate --model llama3-8b --cluster tests/fixtures/rules/gb200-nccl2.21.json --gpus 8 --seq 8192 --gbs 64 --tp 2 --offload-layers 8 --format json
memory alone: no relaxation is claimed | 1 | !NOTE | advise --model llama3.1-405b --gpus 8 --seq 8192 --gbs 64 --tp 8 --pp 1 --cp 1
a pinned pipeline is not pruned by pp-vpp | 0 | pp-vpp +PP 4 without interleaving | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --pp 4 --vpp 1
a pinned offload is not pruned by offload-bandwidth | 0 | offload-bandwidth +Copying one layer | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --offload-layers 8 --tp 2
a pinned bucket | 0 | --ddp-bucket-size 123000000 | estimate --model llama3-8b --gpus 64 --seq 4096 --gbs 512 --bucket-size 123000000
rules show says when a rule runs on one line | 0 | ^  evaluated in the search, once the search knows 'tp'$ | rules show tp-nvlink
