# Megatron-FSDP (--fsdp; perfmodel/fsdp.h): sharded states, its flags, the combinations refused.
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
fsdp shards the states | 0 | distributed optimizer on, in Megatron-FSDP | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on
fsdp flag for Megatron-LM | 0 | --use-megatron-fsdp | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --format megatron
fsdp sharding strategy for Megatron-LM | 0 | --data-parallel-sharding-strategy optim_grads_params | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --format megatron
fsdp checkpoint format for Megatron-LM | 0 | --ckpt-format fsdp_dtensor | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --format megatron
fsdp override for Bridge | 0 | ddp.use_megatron_fsdp=true | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --format bridge
fsdp sharding strategy for Bridge | 0 | ddp.data_parallel_sharding_strategy=optim_grads_params | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --format bridge
fsdp checkpoint format for Bridge | 0 | checkpoint.ckpt_format=fsdp_dtensor | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --format bridge
fsdp off prints none of it | 0 | !use-megatron-fsdp | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp off --recompute full --format megatron
fsdp in the advice JSON | 0 | "fsdp": true | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --format json
# FSDP with TP below compute capability 10: Megatron-LM warns (arguments.py:1456-1465), FSDP wants
# CUDA_DEVICE_MAX_CONNECTIONS above 1 (1166), the TP collectives then lose their order
fsdp with TP on Hopper is accepted | 0 | CUDA_DEVICE_MAX_CONNECTIONS=32 | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --tp 2
fsdp with TP on Hopper says why | 0 | [ ]fsdp-connections | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --tp 2
fsdp with TP on Hopper is not given one connection | 0 | !CUDA_DEVICE_MAX_CONNECTIONS=1 | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --tp 2
Qwen3-235B TP2 EP8 FSDP on 256 H100 runs as the ModelZoo ran it | 0 | configuration: TP2 PP1 EP8 ETP1 DP128 MBS4, recompute full .*in Megatron-FSDP | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --tp 2 --ep 8 --mbs 4 --fsdp on --recompute full --moe-dispatcher flex --moe-balance forced
fsdp with the distributed optimizer off is refused | 2 | --fsdp on with --dist-opt off: Megatron-FSDP shards the optimizer itself | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on --dist-opt off
fsdp on one GPU is refused | 2 | --fsdp on: Megatron-FSDP needs a data-parallel group | estimate --model llama3-8b --gpus 1 --seq 4096 --gbs 8 --fsdp on --recompute full
fsdp with TP on Blackwell | 0 | TP2 PP1 DP36 MBS1, recompute none, distributed optimizer on, in Megatron-FSDP | estimate --model llama3-70b --cluster gb200-nvl72 --gpus 72 --seq 8192 --gbs 144 --fsdp on --tp 2
fsdp pinned in the search | 0 | ^best: .*in Megatron-FSDP | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp on
# PyTorch FSDP2 (--fsdp torch): its flags, and what validate_args refuses with it.
fsdp2 configuration | 0 | distributed optimizer off, in PyTorch FSDP2 | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch
fsdp2 flag for Megatron-LM | 0 | --use-torch-fsdp2 | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --format megatron
fsdp2 without gradient accumulation fusion | 0 | --no-gradient-accumulation-fusion | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --format megatron
fsdp2 checkpoint format | 0 | --ckpt-format torch_dist | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --format megatron
fsdp2 without the distributed optimizer | 0 | !use-distributed-optimizer | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --format megatron
fsdp2 override for Bridge | 0 | dist.use_torch_fsdp2=true | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --format bridge
fsdp2 turns the fusion off for Bridge | 0 | model.gradient_accumulation_fusion=false | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --format bridge
fsdp2 is not given the fusion rule | 0 | !gradient_accumulation_fusion=true | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --format bridge
fsdp2 in the advice JSON | 0 | "fsdp_impl": "torch" | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --format json
fsdp2 with PP is refused | 2 | --fsdp torch with --pp > 1: Megatron-LM d98e8a6 megatron/training/arguments.py:1031-1049 | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --pp 2
fsdp2 with the distributed optimizer is refused | 2 | --fsdp torch with --dist-opt on | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --dist-opt on
fsdp2 with tied embeddings is refused | 2 | --fsdp torch with a model with tied embeddings | estimate --model gpt3-5b --gpus 8 --seq 2048 --gbs 64 --fsdp torch
fsdp2 with TP on Hopper is accepted | 0 | in PyTorch FSDP2 | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch --tp 2
fsdp with an unknown implementation | 2 | --fsdp: expected on, off, megatron or torch, got 'maybe' | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp maybe
fsdp2 pinned in the search | 0 | ^best: .*in PyTorch FSDP2 | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --fsdp torch
fsdp2 loses to Megatron-FSDP by its copies and its unfused accumulation | 0 | ^best: TP1 PP1 DP8 MBS1, recompute none, distributed optimizer on, in Megatron-FSDP | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --pp 1 --cp 1 --recompute none --mbs 1 --top 10
fsdp2 is searched and ranked | 0 | none +fsdp2 +60\.3 +15\.019 | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --pp 1 --cp 1 --recompute none --mbs 1 --top 10
