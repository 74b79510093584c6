# Pipeline layouts (--pp-layout; perfmodel/layout.h): read, checked, searched, printed.
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
unknown symbol | 2 | --pp-layout: position 14: unknown symbol 'x'; expected E \(embedding\), t \(transformer layer\), m \(MTP layer\), L \(loss\) | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --ep 64 --pp 8 --pp-layout 'Et*3|(tt|)*29x|L'
stage count not PP x VPP | 2 | --pp-layout: 31 stages, not a multiple of PP 8 \(PP x VPP stages expected | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --ep 64 --pp 8 --pp-layout 'Et*3|(tt|)*28m|L'
stage count against --vpp | 2 | --pp-layout: 32 stages where PP 8 x VPP 2 = 16 were expected | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --ep 64 --pp 8 --vpp 2 --pp-layout 'Et*3|(tt|)*29m|L'
layers do not add up | 2 | --pp-layout: 31 transformer layers \('t'\) where model 'llama3-8b' has 32 | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp 2 --pp-layout 'Et*16|t*15L'
MTP layer count | 2 | --pp-layout: 0 MTP layers \('m'\) where model 'deepseek-v3' has 1 | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --ep 64 --pp 8 --pp-layout 'Et*2|(tt|)*29t|L'
MTP symbol without MTP | 2 | --pp-layout: position 11: 'm' \(an MTP layer\) but model 'llama3-8b' has no MTP layers | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp 2 --pp-layout 'Et*16|t*15mL'
must start with E | 2 | --pp-layout: position 1: 't': the layout must start with E | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp 2 --pp-layout 'tEt*15|t*16L'
loss last | 2 | --pp-layout: position 7: L: the loss must be the last symbol | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp 2 --pp-layout 'Et*16|L|t*16'
MTP before a layer | 2 | --pp-layout: position 8: t: transformer layers must come before the MTP layers | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --ep 64 --pp 2 --pp-layout 'Et*30|mt*31L'
MTP off the last virtual stage | 2 | --pp-layout: the MTP layers are in stage 4; Megatron expects them in the last virtual stage of a rank \(stages 5 to 6\) | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --ep 64 --pp 2 --pp-layout 'Et*20|t*20|t*21|m||L'
needs --pp | 2 | --pp-layout: needs --pp | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp-layout 'Et*16|t*16L'
a bad repetition is an unknown symbol | 2 | --pp-layout: position 2: unknown symbol '\(' | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp 2 --pp-layout 'E(t*16|)t*16L'
pinned layout printed as given | 0 | --pipeline-model-parallel-layout 'Et\*15.t\*17L' | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp 2 --pp-layout 'Et*15|t*17L' --format megatron
pinned layout gives VPP, not the virtual-stage flag | 0 | !num-virtual-stages-per-pipeline-rank | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp 2 --pp-layout 'Et*8|t*8|t*8|t*8L' --format megatron
pinned layout in the Bridge overrides | 0 | 'model.pipeline_model_parallel_layout="Et\*8.\(t\*8.\)\*2t\*8L"' | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp 2 --pp-layout 'Et*8|t*8|t*8|t*8L' --format bridge
DeepSeek-V3 PP8 VPP4 gets a balanced layout, MTP and loss at the end | 0 | --pipeline-model-parallel-layout 'Et[^ ]*m.?L' | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --precision fp8 --tp 2 --pp 8 --vpp 4 --ep 64 --recompute full --format megatron
Qwen3-235B PP32 VPP3 evaluates | 0 | configuration: TP2 PP32 VPP3 EP8 | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --tp 2 --pp 32 --vpp 3 --ep 8 --recompute full
a layout in the rules' evidence | 0 | "config.split": *"layout" | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 --vpp 7 --recompute full --format json
advise with a pinned layout keeps it in the job's pins | 0 | ^ {6}"pipeline_layout": "Et\*3.\(tt.\)\*29m.L" | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --precision fp8 --pp 8 --pp-layout 'Et*3|(tt|)*29m|L' --top 1 --format json
DeepSeek-V3 on 1024 H100 names its layout | 0 | ^  pipeline layout E[^ ]*m.?L \(--pipeline-model-parallel-layout\): 61 layers and 1 MTP layer over [0-9]+ chunks | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --precision fp8 --cluster dgx-h100
# PP8 VPP5 holds 73.5 GiB on stage 1, whose first chunk of 3 layers the interleaved warm-up keeps
# in flight (docs/MODEL.md 4.8): on the limit at the default 5% kept free, where PP4 VPP10 goes
# first for headroom; with 2% kept free (78.1 GiB usable) it is the pick for headroom over PP4
# VPP7, as fast at 77.3 GiB
Qwen3-235B on 256 H100 without FSDP pipelines over 8 stages | 0 | ^best: TP[0-9]+ PP8 VPP[0-9]+ EP | advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --fsdp off --mem-headroom 2
Qwen3-235B's best without FSDP names its layout | 0 | ^  pipeline layout E.*94 layers over | advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --fsdp off
