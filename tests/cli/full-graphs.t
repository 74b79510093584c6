# Full-iteration CUDA graphs (docs/MODEL.md 5.10): one graph of each step's forward and backward,
# where no layer waits for the host.
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
full graphs taken where the host is exposed | 0 | ^best: .*one CUDA graph per step \(full iteration\) | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-balance forced --mbs 1 --precision fp8 --fp8-recipe mxfp8 --top 1
full graphs not taken where the host is hidden | 0 | !full iteration | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --top 1
full graphs printed for Megatron-LM | 0 | --cuda-graph-impl full_iteration | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-balance forced --mbs 1 --precision fp8 --fp8-recipe mxfp8 --format megatron
full graphs turn the NaN check off | 0 | --no-check-for-nan-in-loss-and-grad | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-balance forced --mbs 1 --precision fp8 --fp8-recipe mxfp8 --format megatron
full graphs printed for Bridge | 0 | rerun_state_machine.check_for_nan_in_loss=false | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-balance forced --mbs 1 --precision fp8 --fp8-recipe mxfp8 --format bridge
full graphs as the local scope for core_v0.17 | 0 | --cuda-graph-scope full_iteration | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --full-iteration-graphs on --megatron-version 0.17 --format megatron
full graphs left out of verl with a note | 0 | full-iteration CUDA graphs are left out | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-balance forced --mbs 1 --precision fp8 --fp8-recipe mxfp8 --top 1 --json -
full graphs in the advice JSON | 0 | "full_iteration_graphs":[[:space:]]*true | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-balance forced --mbs 1 --precision fp8 --fp8-recipe mxfp8 --top 1 --json -
full graphs refused where the dispatcher waits | 2 | --full-iteration-graphs on: a MoE layer waits for the host | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-dispatcher alltoall --full-iteration-graphs on
full graphs refused with per-layer graphs | 2 | --cuda-graphs on with --full-iteration-graphs on | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --full-iteration-graphs on --cuda-graphs on
full graphs refused before core_v0.16.0 | 2 | --full-iteration-graphs on needs Megatron-LM core_v0.16.0 or newer | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --full-iteration-graphs on --megatron-version 0.15
full graphs hide the host | 0 | !host waits for the GPU | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 1 --precision fp8 --fp8-recipe mxfp8 --moe-dispatcher flex --moe-rank-budget on --full-iteration-graphs on
a job's full graphs are read back | 0 | one CUDA graph per step \(full iteration\) | check tests/fixtures/jobs/full-graphs.args --cluster dgx-b200 --gpus 8
full graphs pinned with --format verl are refused | 2 | --full-iteration-graphs on with --format verl: verl runs | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --full-iteration-graphs on --format verl
verl targets are searched without full graphs | 0 | !full_iteration | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --moe-balance forced --mbs 1 --precision fp8 --fp8-recipe mxfp8 --format verl
