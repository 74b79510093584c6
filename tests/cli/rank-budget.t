# The HybridEP rank budget (docs/MODEL.md 5.8): --moe-expert-rank-capacity-factor fixes the
# received size on the host, so the host no longer waits after each dispatch.
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
budget searched with HybridEP | 0 | ^best: .*dispatcher flex \(hybridep, rank budget\) | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --top 2
budget printed for Megatron-LM | 0 | --moe-expert-rank-capacity-factor 1.5 | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --format megatron
budget prints the op fuser it needs | 0 | --use-transformer-engine-op-fuser | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --format megatron
budget printed for Bridge | 0 | model.moe_expert_rank_capacity_factor=1.5 | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --format bridge
budget in the advice JSON | 0 | "moe_rank_budget":[[:space:]]*true | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --top 1 --json -
budget not searched before core_v0.18.0 | 0 | ^best: .*dispatcher flex \(hybridep\), | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --top 2 --megatron-version 0.17
budget pin refused before core_v0.18.0 | 2 | --moe-rank-budget on needs Megatron-LM core_v0.18.0 or newer \(--moe-expert-rank-capacity-factor\); the target is core_v0.17.0 | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --megatron-version 0.17 --moe-rank-budget on
budget pin refused before Bridge v0.5.0 | 2 | --moe-rank-budget on needs Megatron-Bridge v0.5.0 or newer | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --bridge-version 0.4 --moe-rank-budget on
budget needs HybridEP | 2 | --moe-rank-budget on needs the flex dispatcher on HybridEP: profile dgx-h100 times flex as deepep | estimate --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --moe-rank-budget on
budget needs flex | 2 | --moe-rank-budget on needs --moe-dispatcher flex | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-dispatcher alltoall --moe-rank-budget on
budget needs experts | 2 | --moe-rank-budget on: the model has no experts | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --moe-rank-budget on
budget: a bad value | 2 | --moe-rank-budget.*on or off | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-rank-budget 1.5
without a budget the host waits before each dispatch | 0 | host waits for the GPU 48 times, before the tokens are dispatched | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-dispatcher flex --ep 8 --mbs 1 --precision fp8 --fp8-recipe mxfp8 --moe-balance forced --moe-rank-budget off
with a budget it does not | 0 | !host waits for the GPU | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-dispatcher flex --ep 8 --mbs 1 --precision fp8 --fp8-recipe mxfp8 --moe-balance forced --moe-rank-budget on
a job's budget is read back | 0 | dispatcher flex \(hybridep, rank budget\) | check tests/fixtures/jobs/rank-budget.args --cluster dgx-b200 --gpus 8
a job's budget below 1 is refused | 2 | moe-expert-rank-capacity-factor.*a rank budget from 1 to 64 | check tests/fixtures/jobs/rank-budget-low.args --cluster dgx-b200 --gpus 8
budget needs ETP 1 | 2 | --moe-rank-budget on: the budget's fused experts take no expert tensor parallelism: ETP 1 | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-dispatcher flex --ep 4 --etp 2 --moe-rank-budget on
budget prints grouped GEMM without the rules | 0 | --moe-grouped-gemm | advise --no-rules --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --format megatron
budget names the Transformer Engine it needs | 0 | fused experts need Transformer Engine 2.14 or newer | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --format megatron
budget not searched with ETP 2 | 0 | !"moe_rank_budget":[[:space:]]*true | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --etp 2 --ep 4 --top 3 --json -
