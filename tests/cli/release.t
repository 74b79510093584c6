# The target release in the search (job/release.h): what --megatron-version / --bridge-version
# lacks is not searched, a pin of it is refused naming the release that introduced it.
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
release newest searches the EP overlap | 0 | ^best: .*EP overlap 1F1B | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --top 2
release 0.12 leaves the EP overlap out | 0 | ^best: .*EP overlap off | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --top 2 --megatron-version 0.12
release 0.12 prints no EP overlap flag | 0 | !overlap-moe-expert-parallel-comm | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --megatron-version 0.12 --format megatron
release 0.12 counts what it left out | 0 | pruned: .*release [1-9] | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --top 2 --megatron-version 0.12
release pin of the EP overlap is refused | 2 | --ep-overlap on needs Megatron-LM core_v0.14.0 or newer \(--overlap-moe-expert-parallel-comm\); the target is core_v0.12.0 | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --megatron-version 0.12 --ep-overlap on
release pin of Megatron-FSDP is refused | 2 | --fsdp megatron needs Megatron-LM core_v0.14.0 or newer \(--use-megatron-fsdp\) | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --megatron-version 0.13
release 0.13 does not pick Megatron-FSDP | 0 | !in Megatron-FSDP | advise --model llama3-70b --cluster gb200-nvl72 --gpus 144 --seq 8192 --gbs 576 --megatron-version 0.13 --top 3
release pin of CUDA graphs is refused | 2 | --cuda-graphs on needs Megatron-LM core_v0.15.0 | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --cuda-graphs on --megatron-version 0.14
release NVFP4 needs core_v0.15.0 | 2 | --precision nvfp4 needs Megatron-LM core_v0.15.0 | advise --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 8192 --gbs 128 --precision nvfp4 --megatron-version 0.14
release fine-grained offload needs Bridge v0.3.0 | 2 | --offload-modules needs Megatron-Bridge v0.3.0 or newer | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --offload-modules core_attn --bridge-version 0.2
release flex needs core_v0.12.0 | 2 | --moe-dispatcher flex needs Megatron-LM core_v0.12.0 | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --moe-dispatcher flex --megatron-version 0.11
release 0.11 searches no flex dispatcher | 0 | !dispatcher flex | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --megatron-version 0.11 --top 3
release 0.8 splits the layers evenly | 0 | --num-layers-per-virtual-pipeline-stage 4 | advise --model llama3-70b --gpus 64 --seq 4096 --gbs 128 --pp 4 --megatron-version 0.8 --format megatron
release 0.8 searches no pipeline layout | 0 | !pipeline-model-parallel-layout | advise --model llama3-70b --gpus 64 --seq 4096 --gbs 128 --pp 4 --megatron-version 0.8 --format megatron
release 0.8 refuses a VPP only a layout reaches | 2 | cannot be split over PP 4 x VPP 3 by the target release, which has no --pipeline-model-parallel-layout \(core_v0.13.0 or newer\) | estimate --model llama3-70b --gpus 64 --seq 4096 --gbs 128 --tp 4 --pp 4 --vpp 3 --megatron-version 0.8
release 0.9 splits first and last stages apart | 0 | --decoder-first-pipeline-num-layers | advise --model llama3-70b --gpus 48 --seq 4096 --gbs 96 --tp 8 --pp 6 --megatron-version 0.9 --format megatron
release pin of a layout is refused | 2 | --pp-layout needs Megatron-LM core_v0.13.0 or newer \(--pipeline-model-parallel-layout\); the target is core_v0.12.0 | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp 2 --pp-layout 'Et*16|t*16L' --megatron-version 0.12
release 0.10 interleaves even splits only | 2 | cannot be split over PP 6 x VPP 2 by the target release | estimate --model llama3-70b --gpus 48 --seq 4096 --gbs 96 --tp 8 --pp 6 --vpp 2 --megatron-version 0.10
release 0.11 interleaves first and last stages apart | 0 | --num-virtual-stages-per-pipeline-rank 2 | estimate --model llama3-70b --gpus 48 --seq 4096 --gbs 96 --tp 8 --pp 6 --vpp 2 --megatron-version 0.11 --format megatron
release 0.8 keeps and reduces gradients in FP32 | 0 | Gradients are kept and reduced | estimate --model gpt3-5b --gpus 64 --seq 2048 --gbs 2048 --mbs 4 --megatron-version core_v0.8.0
release 0.8 gradients take 4 bytes a parameter | 0 | ^gradients +18\.80 | estimate --model gpt3-5b --gpus 64 --seq 2048 --gbs 2048 --mbs 4 --megatron-version core_v0.8.0
release newest reduces gradients in BF16 | 0 | Gradients are reduced in BF16 | estimate --model gpt3-5b --gpus 64 --seq 2048 --gbs 2048 --mbs 4
release 0.8 refuses a BF16 gradient reduction | 2 | --grad-reduce bf16 needs Megatron-LM core_v0.12.0 or newer \(--grad-reduce-in-bf16\); the target is core_v0.8.0 | estimate --model gpt3-5b --gpus 64 --seq 2048 --gbs 2048 --mbs 4 --grad-reduce bf16 --megatron-version core_v0.8.0
