# Every rule, on realistic inputs: at least one case where it fires and one where it
# does not.  Format: rule | fires|quiet | megatune arguments
# advise and estimate run with --format json --top 1 and a rule "fires" when the best
# candidate lists it (or, for a constraint in advise, when it pruned candidates);
# "rules check" runs with --json.  tests/run.sh also checks that every bundled rule
# has both kinds of case here.
#
# ---- tensor and sequence parallelism
tp-nvlink | fires | advise --model gpt3-175b --gpus 64 --seq 2048 --gbs 64
tp-nvlink | fires | estimate --model gpt3-175b --gpus 64 --seq 2048 --gbs 64 --tp 16 --pp 4
tp-nvlink | quiet | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64
sp-with-tp | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
sp-with-tp | fires | estimate --model llama3-8b --gpus 8 --seq 16384 --gbs 16 --tp 2 --cp 2 --sequence-parallel off
sp-with-tp | quiet | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64
tp-comm-overlap | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
tp-comm-overlap | quiet | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64
tp-comm-overlap-nvfp4 | fires | estimate --model llama3-70b --cluster gb200-nvl72 --gpus 64 --seq 8192 --gbs 256 --mbs 1 --tp 2 --pp 4 --vpp 5 --precision nvfp4
tp-comm-overlap-nvfp4 | quiet | estimate --model llama3-70b --cluster gb200-nvl72 --gpus 64 --seq 8192 --gbs 256 --mbs 1 --tp 2 --pp 4 --vpp 5 --precision fp8
tp-overlap-settings | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
tp-overlap-settings | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 --tp-comm-overlap off
cuda-max-connections | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
cuda-max-connections | fires | estimate --model llama3-8b --gpus 8 --seq 16384 --gbs 64 --cp 2
cuda-max-connections | quiet | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64
cuda-max-connections | quiet | estimate --model llama3-70b --cluster dgx-b200 --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
cuda-max-connections | quiet | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --tp 2
fsdp-connections | fires | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --tp 2
fsdp-connections | quiet | estimate --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 8192 --gbs 128 --fsdp on --tp 2
fsdp-connections | quiet | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on
max-connections-blackwell | fires | estimate --model llama3-70b --cluster dgx-b200 --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
max-connections-blackwell | fires | estimate --model llama3-8b --cluster gb200-nvl72 --gpus 8 --seq 16384 --gbs 64 --cp 2
max-connections-blackwell | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
max-connections-blackwell | quiet | estimate --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 64
tp-small-hidden | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2
tp-small-hidden | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
tp-small-hidden | quiet | estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 8 --full-iteration-graphs on
tp-exposed-comm | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2 --tp-comm-overlap off
tp-exposed-comm | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
tp8-vs-tp4-pp2 | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
tp8-vs-tp4-pp2 | quiet | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128
why-tp | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
why-tp | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
#
# ---- data parallelism
dp-world | fires | rules check --facts tests/fixtures/rules/run-dp-mismatch.json
dp-world | quiet | rules check --facts tests/fixtures/rules/run-llama3-70b.json
dist-opt | fires | advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512
dist-opt | quiet | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 8
dp-first | fires | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128
dp-first | quiet | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --fsdp off
dp-overlap | fires | advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512
dp-overlap | quiet | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 8
dp-grad-reduce-dtype | fires | advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512
dp-grad-reduce-dtype | quiet | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 8
dp-bucket-knee | fires | advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512 --pp 1
dp-bucket-knee | quiet | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 512
dp-align-param-gather | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
dp-align-param-gather | quiet | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --vpp 1
dp-optimizer-instances | fires | advise --model llama3-8b --gpus 1024 --seq 2048 --gbs 1024
dp-optimizer-instances | quiet | advise --model llama3-70b --gpus 1024 --seq 4096 --gbs 1024
dp-ln-sm-margin | fires | advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512
dp-ln-sm-margin | quiet | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 8
why-bucket | fires | advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512
why-bucket | quiet | advise --model llama3-70b --gpus 8 --seq 4096 --gbs 64 --tp 8 --pp 1
#
# ---- context parallelism
cp-short-chunks | fires | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64
cp-short-chunks | fires | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cp 2
cp-short-chunks | quiet | advise --model llama3-8b --gpus 8 --seq 65536 --gbs 8
cp-skinny | fires | estimate --model llama3-70b --gpus 16 --seq 8192 --gbs 32 --tp 8 --cp 2
cp-skinny | quiet | estimate --model llama3-8b --gpus 16 --seq 16384 --gbs 32 --tp 4 --cp 2
cp-seq-divisible | fires | rules check --facts tests/fixtures/rules/run-cp-odd-seq.json
cp-seq-divisible | quiet | rules check --facts tests/fixtures/rules/run-llama3-70b.json
cp-ulysses-size | fires | estimate --model llama3-8b --gpus 64 --seq 131072 --gbs 64 --tp 2 --cp 16
cp-ulysses-size | quiet | estimate --model llama3-8b --gpus 16 --seq 16384 --gbs 32 --tp 4 --cp 2
cp-comm-hierarchical | fires | estimate --model llama3-8b --gpus 64 --seq 131072 --gbs 64 --tp 2 --cp 16
cp-comm-hierarchical | quiet | estimate --model llama3-8b --gpus 16 --seq 16384 --gbs 32 --tp 4 --cp 2
cp-comm-p2p | fires | estimate --model llama3-8b --gpus 16 --seq 16384 --gbs 32 --tp 4 --cp 2
cp-comm-p2p | quiet | estimate --model llama3-8b --gpus 64 --seq 131072 --gbs 64 --tp 2 --cp 16
cp-all-gather-mha | fires | estimate --model gpt3-175b --gpus 128 --seq 2048 --gbs 64 --tp 8 --pp 8 --cp 2 --cp-comm all_gather
cp-all-gather-mha | quiet | estimate --model llama3-70b --gpus 16 --seq 8192 --gbs 32 --tp 8 --cp 2 --cp-comm all_gather
cp-a2a-heads | fires | rules check --facts tests/fixtures/rules/run-cp-a2a-heads.json
cp-a2a-heads | quiet | rules check --facts tests/fixtures/rules/run-llama3-70b.json
cp-a2a-exposed | fires | estimate --model llama3-8b --gpus 8 --seq 16384 --gbs 16 --cp 2 --cp-comm a2a
cp-a2a-exposed | quiet | estimate --model llama3-8b --gpus 8 --seq 16384 --gbs 16 --cp 2
why-cp | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
why-cp | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
#
# ---- mixture of experts
moe-etp-1 | fires | advise --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256
moe-etp-1 | quiet | advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512
moe-experts-divisible | fires | rules check --facts tests/fixtures/rules/run-ep-experts.json
moe-experts-divisible | quiet | rules check --facts tests/fixtures/rules/run-deepseek-v3.json
moe-ep-nvlink | fires | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192
moe-ep-nvlink | quiet | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --moe-dispatcher flex
moe-ep-nvlink | fires | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 1024 --tp 1 --pp 4 --vpp 1 --ep 16 --moe-dispatcher alltoall
moe-ep-nvlink | quiet | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 1024 --tp 1 --pp 4 --vpp 2 --ep 16
moe-alltoall-host-wait | fires | estimate --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --tp 1 --pp 2 --vpp 24 --ep 8 --mbs 2 --moe-dispatcher alltoall
moe-alltoall-host-wait | quiet | estimate --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --tp 1 --pp 2 --vpp 24 --ep 8 --mbs 2 --moe-dispatcher flex
moe-alltoall-host-wait | quiet | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 1024 --tp 1 --pp 4 --vpp 2 --ep 32 --moe-dispatcher alltoall --ep-overlap on
moe-ep-overlap-1f1b | fires | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 1024 --tp 1 --pp 4 --vpp 2 --ep 16 --ep-overlap on
moe-ep-overlap-1f1b | quiet | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 1024 --tp 1 --pp 4 --vpp 1 --ep 16
moe-ep-overlap-1f1b | quiet | advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 1024 --ep-overlap off
moe-ep-exposed | fires | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --tp 2 --pp 8 --vpp 4 --ep 32 --moe-dispatcher flex --ep-overlap off
moe-ep-exposed | quiet | estimate --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256 --tp 2 --pp 4
moe-grouped-gemm | fires | advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 1024
moe-grouped-gemm | quiet | estimate --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256 --tp 1 --pp 8 --ep 8
moe-permute-fusion | fires | advise --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256
moe-permute-fusion | quiet | advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512
moe-shared-expert-overlap | fires | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --ep-overlap off
moe-ep-overlap-connections | fires | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 1024
moe-ep-overlap-connections | quiet | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 1024 --ep-overlap off
moe-flex-cross-domain | fires | advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048
moe-flex-cross-domain | quiet | advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --moe-dispatcher alltoall
moe-shared-expert-overlap | quiet | estimate --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256 --tp 1 --pp 8 --ep 8
why-ep | fires | advise --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256
why-ep | quiet | advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512
#
# ---- pipeline parallelism
pp-microbatches | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
pp-microbatches | quiet | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 512 --mbs 1 --tp 1
pp-vpp | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
pp-vpp | quiet | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 512 --pp 1
pp-vpp-many-microbatches | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
pp-vpp-many-microbatches | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 --vpp 2
pp-only-when-needed | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
pp-only-when-needed | quiet | advise --model llama3.1-405b --gpus 1024 --seq 8192 --gbs 1024 --fsdp off
pp-account-embedding | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 --vpp 5
pp-account-embedding | quiet | estimate --model gpt3-175b --gpus 512 --seq 2048 --gbs 1536 --tp 8 --pp 8
why-pp | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
why-pp | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
#
# ---- memory
recompute-full-cost | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2 --recompute full
recompute-full-cost | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2 --recompute selective
recompute-modules-moe | fires | estimate --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256 --tp 2 --pp 4 --recompute full
recompute-modules-moe | fires | advise --model mixtral-8x22b --cluster gb200-nvl72 --gpus 16 --seq 65536 --gbs 64
recompute-modules-moe | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2 --recompute full
offload-bandwidth | fires | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --tp 2 --offload-layers 8
offload-bandwidth | fires | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64
offload-bandwidth | quiet | estimate --model llama3-70b --cluster gb200-nvl72 --gpus 64 --seq 32768 --gbs 32 --tp 8 --offload-layers 40
offload-nccl-gdr-level | fires | estimate --model llama3-8b --cluster tests/fixtures/rules/gb200-nccl2.21.json --gpus 8 --seq 8192 --gbs 64 --tp 2 --offload-layers 8
offload-nccl-gdr-level | quiet | estimate --model llama3-8b --cluster tests/fixtures/rules/h100-1numa-nccl2.27.json --gpus 8 --seq 8192 --gbs 64 --tp 2 --offload-layers 8
offload-nccl-gdr-c2c | fires | estimate --model llama3-8b --cluster tests/fixtures/rules/h100-1numa-nccl2.27.json --gpus 8 --seq 8192 --gbs 64 --tp 2 --offload-layers 8
offload-nccl-gdr-c2c | quiet | estimate --model llama3-8b --cluster tests/fixtures/rules/gb200-nccl2.21.json --gpus 8 --seq 8192 --gbs 64 --tp 2 --offload-layers 8
offload-nccl-unknown | fires | estimate --model llama3-8b --cluster gb200-nvl72 --gpus 8 --seq 8192 --gbs 64 --tp 2 --offload-layers 8
offload-nccl-unknown | quiet | estimate --model llama3-8b --cluster tests/fixtures/rules/gb200-nccl2.21.json --gpus 8 --seq 8192 --gbs 64 --tp 2 --offload-layers 8
optimizer-offload | fires | advise --model llama3-70b --cluster tests/fixtures/rules/h100-1numa-nccl2.27.json --gpus 64 --seq 8192 --gbs 128
optimizer-offload | quiet | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
precision-aware-optimizer | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
precision-aware-optimizer | quiet | estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 2
mem-avoid-record-streams | fires | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64
mem-avoid-record-streams | quiet | estimate --model tests/fixtures/models/hf-gpt2.json --gpus 1 --seq 1024 --gbs 8
mem-expandable-segments | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
mem-expandable-segments | quiet | estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 2
mem-nvls-off | fires | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --pp 16 --ep 8 --mbs 1 --pp-layout 'Et*2|(t*4|)*14t*3mL' --recompute full --recompute-layers 1
mem-nvls-off | quiet | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
mem-headroom | fires | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --pp 16 --ep 8 --mbs 1 --pp-layout 'Et*2|(t*4|)*14t*3mL' --recompute full --recompute-layers 1
mem-headroom | quiet | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
#
# ---- host overhead and placement
host-bound | fires | estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 8 --cuda-graphs off
host-bound | fires | estimate --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 64 --ep 8 --cuda-graphs on
host-bound | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2
# per-layer graphs carry the launches; one graph of the step leaves none per layer
host-bound | quiet | estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 8
host-bound | quiet | estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 8 --full-iteration-graphs on
cuda-graphs | fires | estimate --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 64
cuda-graphs | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2
cuda-graphs | quiet | estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 8 --cuda-graphs on
cuda-graphs-host-bound | fires | estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 8
cuda-graphs-host-bound | fires | advise --model llama3-8b --gpus 8 --seq 256 --gbs 64 --cluster dgx-b200 --tp 8 --mbs 1
cuda-graphs-host-bound | quiet | estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 8 --recompute full
cuda-graphs-host-bound | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2
cuda-graphs-nccl-register | fires | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cuda-graphs on
cuda-graphs-nccl-register | fires | estimate --model llama3-8b --gpus 8 --seq 256 --gbs 64 --tp 8 --cluster dgx-b200
cuda-graphs-nccl-register | quiet | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64
fine-offload-te-env | fires | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --offload-modules core_attn
fine-offload-te-env | fires | advise --model llama3-70b --gpus 64 --seq 32768 --gbs 64 --offload-modules core_attn,attn_proj
fine-offload-te-env | quiet | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64
manual-gc | fires | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64
manual-gc | quiet | estimate --model tests/fixtures/models/hf-gpt2.json --gpus 1 --seq 1024 --gbs 8
numa-binding | fires | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64
numa-binding | quiet | advise --model llama3-8b --cluster tests/fixtures/rules/h100-1numa-nccl2.27.json --gpus 8 --seq 4096 --gbs 64
nvl72-placement | fires | estimate --model llama3-70b --cluster gb200-nvl72 --gpus 192 --seq 8192 --gbs 192 --tp 4 --pp 4
nvl72-placement | quiet | estimate --model llama3-70b --cluster gb200-nvl72 --gpus 144 --seq 8192 --gbs 144 --tp 8 --pp 2
#
# ---- precision and fusions
fp8-speedup | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
fp8-speedup | quiet | advise --model llama3-70b --cluster dgx-a100-80g --gpus 64 --seq 8192 --gbs 128
fp8-speedup | quiet | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --precision fp8
fp8-param-gather | fires | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --precision fp8
fp8-param-gather | quiet | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128
masked-softmax-fusion | fires | estimate --model gpt3-175b --gpus 512 --seq 2048 --gbs 1536 --tp 8 --pp 8 --attention unfused
masked-softmax-fusion | quiet | estimate --model gpt3-175b --gpus 512 --seq 2048 --gbs 1536 --tp 8 --pp 8
bias-fusions | fires | estimate --model gpt3-175b --gpus 512 --seq 2048 --gbs 1536 --tp 8 --pp 8
bias-fusions | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
grad-accum-fusion | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
grad-accum-fusion | quiet | estimate --model llama3-8b --gpus 64 --seq 4096 --gbs 64
grad-accum-fusion | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 --grad-accum-fusion off
grad-accum-unfused | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 --grad-accum-fusion off
grad-accum-unfused | quiet | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
rope-fusion | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
rope-fusion | quiet | estimate --model gpt3-175b --gpus 512 --seq 2048 --gbs 1536 --tp 8 --pp 8
ce-fusion | fires | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4
ce-fusion | quiet | estimate --model llama2-7b --gpus 8 --seq 4096 --gbs 128
unfused-attention | fires | estimate --model gpt3-175b --gpus 512 --seq 2048 --gbs 1536 --tp 8 --pp 8 --attention unfused
unfused-attention | quiet | estimate --model gpt3-175b --gpus 512 --seq 2048 --gbs 1536 --tp 8 --pp 8
#
# ---- diagnose, on findings measured from real traces (tests/fixtures/findings/README.md)
# and on the model's own breakdown of real configurations (tests/fixtures/rules/README.md)
diag-exposed-tp | fires | rules check --facts tests/fixtures/rules/findings-llama3-70b-tp8-no-overlap.json
diag-exposed-tp | quiet | rules check --facts tests/fixtures/rules/findings-llama3-70b-tp4-overlap.json
diag-exposed-dp | fires | rules check --facts tests/fixtures/findings/hta-ddp-exposed-allreduce.json
diag-exposed-dp | quiet | rules check --facts tests/fixtures/findings/hta-nccl-resnet.json
diag-exposed-ep | fires | rules check --facts tests/fixtures/findings/dlrm-8rank.json
diag-exposed-ep | quiet | rules check --facts tests/fixtures/findings/deepseek-v3-ep64.json
diag-bubble | fires | rules check --facts tests/fixtures/rules/findings-gpt3-175b-pp8.json
diag-bubble | quiet | rules check --facts tests/fixtures/rules/findings-llama3-70b-tp4-overlap.json
diag-idle-gpu | fires | rules check --facts tests/fixtures/findings/tracelens-bert-h100.json
diag-idle-gpu | quiet | rules check --facts tests/fixtures/findings/tracelens-qwen-h100.json
diag-slow-rank | fires | rules check --facts tests/fixtures/findings/dlrm-8rank.json
diag-slow-rank | quiet | rules check --facts tests/fixtures/findings/tracelens-qwen-h100.json
# Megatron-LM asserts no full recompute, no shared-expert overlap and at most one MTP layer under overlap_moe_expert_parallel_comm
moe-ep-overlap-1f1b | quiet | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 1024 --tp 1 --pp 4 --vpp 2 --ep 16 --recompute full
moe-ep-overlap-1f1b | quiet | estimate --model tests/fixtures/models/qwen3-235b-mtp2.json --gpus 256 --seq 4096 --gbs 1024 --tp 1 --pp 4 --vpp 2 --ep 16
moe-shared-expert-overlap | quiet | estimate --model tests/fixtures/models/hf-qwen1.5-moe-a2.7b.json --gpus 96 --seq 4096 --gbs 192 --tp 1 --pp 2 --vpp 2 --ep 12
