# megatune advise and estimate from the command line.
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
help lists the commands | 0 | advise .*search every parallel | --help
version | 0 | ^megatune [0-9]+\.[0-9]+ | --version
no command | 2 | usage: megatune | 
unknown command | 2 | unknown command 'frobnicate' | frobnicate
advise help has the exit codes | 0 | exit codes: 0 success; 1 nothing feasible | advise --help
missing required options | 2 | missing --model --gpus --seq --gbs | advise
missing gbs | 2 | missing --gbs | advise --model llama3-8b --gpus 8 --seq 4096
unknown option | 2 | unknown option '--tpp' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tpp 2
option without value | 2 | needs a value | advise --model llama3-8b --gpus 8 --seq 4096 --gbs
bad integer | 2 | --gpus: expected a positive number of GPUs, got 'eight' | advise --model llama3-8b --gpus eight --seq 4096 --gbs 64
negative integer | 2 | --tp: expected a positive integer, got '-2' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp -2
bad enum | 2 | --recompute: expected none, selective or full, got 'some' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --recompute some
bad on/off | 2 | --dist-opt: expected on or off, got 'yes please' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --dist-opt 'yes please'
unknown bundled model | 2 | unknown model 'llama9-1t': give a config.json path, a Hugging Face id of a bundled model or one of: deepseek-v3, .*llama3.1-405b | advise --model llama9-1t --gpus 8 --seq 4096 --gbs 64
unknown bundled cluster | 2 | unknown cluster 'dgx-z9' | advise --model llama3-8b --cluster dgx-z9 --gpus 8 --seq 4096 --gbs 64
missing model file | 2 | cannot read 'nope/config.json': No such file | advise --model nope/config.json --gpus 8 --seq 4096 --gbs 64
Hugging Face id of a bundled model | 0 | ^llama3-8b \(8\.03 B parameters\) on dgx-h100 | estimate --model meta-llama/Meta-Llama-3-8B --gpus 8 --seq 4096 --gbs 64
Hugging Face id in any case | 0 | ^llama3-8b \(8\.03 B parameters\) | estimate --model META-LLAMA/meta-llama-3-8b --gpus 8 --seq 4096 --gbs 64
Hugging Face id of an MoE model | 0 | ^deepseek-v3 \(671 B parameters | estimate --model deepseek-ai/DeepSeek-V3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --pp 16 --ep 64
Hugging Face id named as megatune names it | 0 | ^qwen3-30b-a3b \( | advise --model Qwen/Qwen3-30B-A3B --gpus 8 --seq 4096 --gbs 64 --top 1
Hugging Face id in the advice is the bundled name | 0 | "model":[[:space:]]*"llama3-8b" | advise --model meta-llama/Meta-Llama-3-8B --gpus 8 --seq 4096 --gbs 64 --top 1 --format json
Hugging Face id megatune does not bundle | 2 | cannot read 'meta-llama/Llama-4-Behemoth' | estimate --model meta-llama/Llama-4-Behemoth --gpus 8 --seq 4096 --gbs 64
truncated config | 2 | config-truncated.json:1:59: malformed JSON: the file ends too early | advise --model tests/fixtures/bad/config-truncated.json --gpus 8 --seq 4096 --gbs 64
malformed config | 2 | config-malformed.json:1:23: malformed JSON | advise --model tests/fixtures/bad/config-malformed.json --gpus 8 --seq 4096 --gbs 64
empty config | 2 | config-empty.json: empty file | advise --model tests/fixtures/bad/config-empty.json --gpus 8 --seq 4096 --gbs 64
array config | 2 | expected a JSON object at the top level, got an array | advise --model tests/fixtures/bad/config-array.json --gpus 8 --seq 4096 --gbs 64
not a model config | 2 | not a model config: missing field 'hidden_size' | advise --model tests/fixtures/bad/config-not-a-model.json --gpus 8 --seq 4096 --gbs 64
wrong type in config | 2 | field 'hidden_size': expected an integer .*, got "4096" | advise --model tests/fixtures/bad/config-wrong-type.json --gpus 8 --seq 4096 --gbs 64
missing field in config | 2 | missing field 'num_hidden_layers' | advise --model tests/fixtures/bad/config-missing-layers.json --gpus 8 --seq 4096 --gbs 64
kv heads do not divide heads | 2 | 5 key/value heads must divide the 32 attention heads | advise --model tests/fixtures/bad/config-kv-heads.json --gpus 8 --seq 4096 --gbs 64
more experts per token than experts | 2 | experts per token \(8\) must be between 1 and the number of experts \(4\) | advise --model tests/fixtures/bad/config-topk.json --gpus 8 --seq 4096 --gbs 64
misspelt megatune model key | 2 | unknown field 'num_layer' | advise --model tests/fixtures/bad/model-unknown-key.json --gpus 8 --seq 4096 --gbs 64
Gemma 2 is refused by field | 2 | config-gemma2.json: field 'attn_logit_softcapping': logit soft-capping is not in Megatron-Core | advise --model tests/fixtures/bad/config-gemma2.json --gpus 8 --seq 4096 --gbs 64
T5 is refused as encoder-decoder | 2 | config-t5.json: field 'is_encoder_decoder': true: an encoder-decoder model | advise --model tests/fixtures/bad/config-t5.json --gpus 8 --seq 512 --gbs 64
Mamba is refused as state-space | 2 | config-mamba.json: field 'model_type': "mamba" is a state-space | estimate --model tests/fixtures/bad/config-mamba.json --gpus 8 --seq 2048 --gbs 64
Qwen3-Next named by architectures alone is refused | 2 | config-qwen3next-no-type.json: field 'architectures': "qwen3_next" is a state-space \(Mamba\) or recurrent architecture | estimate --model tests/fixtures/bad/config-qwen3next-no-type.json --gpus 8 --seq 2048 --gbs 64
a family named by architectures alone is read as that family | 0 | --add-qkv-bias | estimate --model tests/fixtures/models/qwen2.5-72b-no-type.json --gpus 64 --seq 2048 --gbs 64 --tp 8 --pp 4 --format megatron
an unknown class in architectures is refused by name | 2 | field 'architectures': "foo_bar" is not a family megatune reads | estimate --model tests/fixtures/bad/config-architectures-unknown.json --gpus 8 --seq 2048 --gbs 64
sliding window shorter than the sequence | 2 | --seq 8192: model 'hf-mistral-7b.json', read from tests/fixtures/models/hf-mistral-7b.json, has field 'sliding_window' 4096 | advise --model tests/fixtures/models/hf-mistral-7b.json --gpus 8 --seq 8192 --gbs 64
sliding window as long as the sequence | 0 | ^1 +[0-9]+ | advise --model tests/fixtures/models/hf-mistral-7b.json --gpus 8 --seq 4096 --gbs 64
past RoPE positions is a warning | 0 | megatune advise: warning: --seq 32768 is longer than the 8192 tokens model 'llama3-8b' states \(field 'max_position_embeddings' of bundled \(models/llama3-8b.json\)\): with RoPE | advise --model llama3-8b --gpus 8 --seq 32768 --gbs 64
past learned positions | 2 | --seq 4096: model 'gpt3-175b', read from bundled \(models/gpt3-175b.json\), has field 'n_positions' 2048: its learned position embeddings cover 2048 tokens | estimate --model gpt3-175b --gpus 64 --seq 4096 --gbs 64
truncated profile | 2 | profile-truncated.json:[0-9]+:[0-9]+: malformed JSON: the file ends too early | advise --model llama3-8b --cluster tests/fixtures/bad/profile-truncated.json --gpus 8 --seq 4096 --gbs 64
profile without gpu | 2 | missing field 'gpu': expected an object | advise --model llama3-8b --cluster tests/fixtures/bad/profile-missing-gpu.json --gpus 8 --seq 4096 --gbs 64
profile of another version | 2 | version "megatune.profile/9" is not supported | advise --model llama3-8b --cluster tests/fixtures/bad/profile-version.json --gpus 8 --seq 4096 --gbs 64
profile with an unknown source | 2 | field 'gemm\[0\].source': unknown source id "nowhere" | advise --model llama3-8b --cluster tests/fixtures/bad/profile-unknown-source.json --gpus 8 --seq 4096 --gbs 64
profile with a string bandwidth | 2 | field 'collectives\[2\].points\[3\].busbw_gbps': expected a number | advise --model llama3-8b --cluster tests/fixtures/bad/profile-busbw-type.json --gpus 8 --seq 4096 --gbs 64
profile above the datasheet peak | 2 | field 'gemm\[1\].tflops': 5000.0 is above the fp8 peak | advise --model llama3-8b --cluster tests/fixtures/bad/profile-gemm-above-peak.json --gpus 8 --seq 4096 --gbs 64
profile with zero GPUs per node | 2 | field 'node.gpus_per_node': expected an integer in \[1, 4096\], got 0 | advise --model llama3-8b --cluster tests/fixtures/bad/profile-gpus-per-node.json --gpus 8 --seq 4096 --gbs 64
more TP than heads | 2 | --tp 64: model 'llama3-8b' has 32 attention heads, which TP must divide | advise --model llama3-8b --gpus 64 --seq 4096 --gbs 64 --tp 64
TP not dividing kv heads | 2 | --tp 16: model 'llama3-8b' has 8 key/value heads | advise --model llama3-8b --gpus 16 --seq 4096 --gbs 64 --tp 16
TP not dividing GPUs | 2 | --tp 8: must divide --gpus 6 | advise --model llama3-8b --gpus 6 --seq 4096 --gbs 64 --tp 8
GPUs not whole nodes | 2 | --gpus 12: more than one node of 8 GPUs must be whole nodes | advise --model llama3-8b --gpus 12 --seq 4096 --gbs 64
FP8 on A100 | 2 | have no FP8 tensor cores | advise --model llama3-8b --cluster dgx-a100-80g --gpus 8 --seq 4096 --gbs 64 --precision fp8
EP on a dense model | 2 | model 'llama3-8b' is dense | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --ep 2
CP not dividing the sequence | 2 | --cp 3: the sequence length 4096 must be divisible by 2 x CP = 6 | advise --model llama3-8b --gpus 24 --seq 4096 --gbs 72 --cp 3
offload with PP | 2 | offloads activations only with PP 1 | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --pp 2 --offload-layers 2
nothing fits | 1 | nothing feasible: [0-9]+ candidates evaluated, none fits | advise --model llama3.1-405b --gpus 8 --seq 8192 --gbs 64
nothing fits names the closest | 1 | closest: TP[0-9]+ PP[0-9]+ .*needs [0-9.]+ GiB | advise --model llama3.1-405b --gpus 8 --seq 8192 --gbs 64
estimate of a configuration that does not fit | 1 | DOES NOT FIT in memory | estimate --model llama3-70b --gpus 8 --seq 8192 --gbs 64 --tp 8
llama3-70b on 64 H100 | 0 | ^1 +[1248] +[0-9]+ .* on +[0-9.]+ | advise --model llama3-70b --cluster dgx-h100 --gpus 64 --seq 8192 --gbs 128
pins narrow the search | 0 | best: TP8 PP2 | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2
every knob pinned is one candidate | 0 | searched 1 candidates | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5 --cp 1 --mbs 1 --recompute selective --dist-opt on --offload-layers 0 --sequence-parallel on --fsdp off
megatron flags | 0 | --tensor-model-parallel-size 8 | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --format megatron
megatron model flags first | 0 | ^--num-layers 32 | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --format megatron
megatron GQA and vocabulary | 0 | --vocab-size 128256 | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --format megatron
megatron first-k-dense pattern quoted | 0 | --moe-layer-freq '\(\[0\]\*3\+\[1\]\*58\)' | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 4096 --format megatron
megatron context extension | 0 | --max-position-embeddings 65536 | advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64 --format megatron
HF config model flags | 0 | --add-qkv-bias | advise --model tests/fixtures/models/hf-qwen2-7b.json --gpus 8 --seq 4096 --gbs 64 --format megatron
slurm header nodes | 0 | ^#SBATCH --nodes=8$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
slurm header one task per node | 0 | ^#SBATCH --ntasks-per-node=1$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
slurm header GPUs per node | 0 | ^#SBATCH --gpus-per-node=8$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
slurm exclusive | 0 | ^#SBATCH --exclusive$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
slurm environment | 0 | ^export CUDA_DEVICE_MAX_CONNECTIONS=1$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
slurm Megatron-LM path | 0 | ^MEGATRON_LM=\$\{MEGATRON_LM:-/opt/megatron-lm\}$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
slurm srun torchrun | 0 | ^srun .*torchrun \\$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
slurm rendezvous | 0 | --rdzv-endpoint "\$MASTER_ADDR:\$MASTER_PORT" | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
slurm pretrain_gpt.py | 0 | ^  "\$MEGATRON_LM/pretrain_gpt.py" \\$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
slurm mock data | 0 | ^  --mock-data \\$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
slurm ends with the benchmark | 0 | ^  --lr 1.0e-4$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format slurm
torchrun one node | 0 | ^  --nnodes 1 \\$ | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --format torchrun
torchrun processes per node | 0 | ^  --nproc-per-node 8 \\$ | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --format torchrun
torchrun no sbatch | 0 | !SBATCH | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --format torchrun
torchrun environment | 0 | ^export TORCH_NCCL_AVOID_RECORD_STREAMS=1$ | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --format torchrun
torchrun model and parallel flags | 0 | ^  --tensor-model-parallel-size | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --format torchrun
torchrun several nodes | 0 | ^  --nnodes 4 \\$ | advise --model llama3-70b --gpus 32 --seq 8192 --gbs 128 --format torchrun
launch from estimate | 0 | ^  --train-iters 20 \\$ | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --format torchrun
bad format names the launch ones | 2 | expected text, json, megatron, bridge, verl, env, torchrun or slurm | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --format sbatch
bridge overrides | 0 | ^model.tensor_model_parallel_size=4 | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format bridge
environment | 0 | ^export CUDA_DEVICE_MAX_CONNECTIONS=1 | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format env
json to stdout | 0 | "schema": "megatune.advice/1" | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --format json
json into a missing folder | 2 | cannot write 'no/such/dir/a.json' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --json no/such/dir/a.json
estimate breaks down memory | 0 | optimizer states | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2
estimate breaks down time | 0 | pipeline bubble | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2
estimate with defaults is TP1 | 0 | configuration: TP1 PP1 DP8 MBS1 | estimate --model gpt3-5b --gpus 8 --seq 2048 --gbs 64
estimate of an impossible split | 2 | cannot be split over PP 4 x VPP 9 | estimate --model llama3-8b --gpus 32 --seq 4096 --gbs 64 --pp 4 --vpp 9
deepseek-v3 on 1024 H100 | 0 | ^1 +[1248] +[0-9]+ | advise --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192
qwen3-235b-a22b on 256 H100 | 0 | ^1 +[1248] +[0-9]+ | advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048
mixtral on B200 in FP8 | 0 | ^1 +[0-9]+ | advise --model mixtral-8x7b --cluster dgx-b200 --gpus 16 --seq 4096 --gbs 256 --precision fp8
GPT-3 on A100 with unfused attention | 0 | ^1 +[0-9]+ | advise --model gpt3-175b --cluster dgx-a100-80g --gpus 512 --seq 2048 --gbs 1536 --attention unfused
a Hugging Face config by path | 0 | ^llama3-8b.json \(8.03 B parameters\) | advise --model models/llama3-8b.json --gpus 8 --seq 4096 --gbs 64
a megatune model JSON | 0 | sc21-gpt-18.4b \(18.4 B parameters\) | advise --model tests/fixtures/models/sc21-gpt-18.4b.json --cluster dgx-a100-80g --gpus 64 --seq 2048 --gbs 512
nothing fits says how many GPUs | 1 | need at least 96 GPUs of 75.7 GiB | advise --model llama3.1-405b --gpus 8 --seq 8192 --gbs 64
global batch too large | 2 | --gbs: expected a global batch size between 1 and 16777216 | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 17179869184
pinned sizes not dividing the GPUs | 2 | --tp x --cp x --pp = 128 does not divide --gpus 64 | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --cp 2 --pp 8
a2a+p2p group not dividing CP | 2 | a2a\+p2p: the a2a group \(4 GPUs\) must be more than 1, less than CP 6 | estimate --model llama3-8b --gpus 48 --seq 12288 --gbs 8 --tp 2 --cp 6 --cp-comm a2a+p2p
param gather without grad overlap | 2 | --overlap-param-gather on needs --overlap-grad-reduce on | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --overlap-grad-reduce off --overlap-param-gather on
no param gather overlap without grad overlap | 0 | !--overlap-param-gather | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --dist-opt on --overlap-grad-reduce off --format megatron
unfused attention with CP | 2 | context parallelism needs fused attention | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cp 2 --attention unfused
SP off for MoE with TP | 2 | needs sequence parallelism for MoE models with TP > 1 | advise --model mixtral-8x7b --gpus 16 --seq 4096 --gbs 64 --tp 2 --sequence-parallel off
pinned micro-batch above the searched range | 0 | best: .*MBS64 | advise --model llama3-8b --gpus 8 --seq 512 --gbs 512 --mbs 64
activation offload by its layer count only | 0 | --cpu-offloading-num-layers [0-9]+ | advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64 --prefer-headroom 0 --format megatron
no --cpu-offloading flag | 0 | !--cpu-offloading[^-]*$ | advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64 --format megatron
FP8 through the recipe name | 0 | mixed_precision=bf16_with_fp8_delayed_scaling_mixed | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --precision fp8 --format bridge
nothing under mixed_precision after its name | 0 | !^ *mixed_precision\. | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --precision fp8 --format bridge
no comm_overlap override | 0 | !^ *comm_overlap\. | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format bridge
TP overlap named for the recipe | 0 | ^# comm_overlap.tp_comm_overlap=true: .*CommOverlapConfig\(tp_comm_overlap=True\) | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --format bridge
no ddp.grad_reduce_in_fp32 override | 0 | !ddp\.grad_reduce_in_fp32 | advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64 --format bridge
attention backend as the enum | 0 | 'model.attention_backend=\{_target_:megatron.core.transformer.enums.AttnBackend.fused,_call_:false\}' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --format bridge
32 connections on Blackwell | 0 | ^export CUDA_DEVICE_MAX_CONNECTIONS=32$ | advise --model llama3-70b --cluster dgx-b200 --gpus 64 --seq 8192 --gbs 128 --tp 4 --format env
not 1 on Blackwell | 0 | !CUDA_DEVICE_MAX_CONNECTIONS=1 | advise --model llama3-70b --cluster gb200-nvl72 --gpus 64 --seq 8192 --gbs 128 --tp 4 --format env
help lists the release options | 0 | --megatron-version R .*core_v0.8.0 | advise --help
help lists the Bridge release option | 0 | --bridge-version R | advise --help
newest release by default | 0 | "megatron_version": "core_v0.19.0" | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --format json
newest Bridge release by default | 0 | "bridge_version": "v0.6.0" | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --format json
virtual stages by default | 0 | --num-virtual-stages-per-pipeline-rank 2 | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 2 --format megatron
layers per virtual stage before core_v0.11.0 | 0 | --num-layers-per-virtual-pipeline-stage 10 | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 2 --format megatron --megatron-version core_v0.10.0
no virtual stages flag before core_v0.11.0 | 0 | !num-virtual-stages | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 2 --format megatron --megatron-version 0.10
a flag the release lacks is a note | 0 | ^# --attention-backend needs Megatron-LM >= core_v0.11.0 \(left out for core_v0.10.0\)$ | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --format megatron --megatron-version 0.10
and is left out | 0 | !^ *--attention-backend | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --format megatron --megatron-version 0.10
launch script for an older release | 0 | ^# --attention-backend needs Megatron-LM | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --format torchrun --megatron-version 0.10
DeepEP before core_v0.16.0 | 0 | --moe-enable-deepep | estimate --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256 --ep 8 --moe-dispatcher flex --format megatron --megatron-version 0.15
JSON names the release | 0 | "megatron_version": "core_v0.10.0" | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --format json --megatron-version core_v0.10.0
JSON carries the release notes | 0 | ^ *"--attention-backend needs Megatron-LM >= core_v0.11.0 \(left out for core_v0.10.0\)",?$ | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --format json --megatron-version core_v0.10.0
dataset sequence length before Bridge v0.6.0 | 0 | dataset.sequence_length=8192 | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --format bridge --bridge-version 0.5
unknown Megatron-LM release | 2 | --megatron-version: unknown release 'core_r0.7.0'; known: core_v0.8.0, .*core_v0.19.0 | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --megatron-version core_r0.7.0
unknown Bridge release | 2 | --bridge-version: unknown release 'v9'; known: v0.2.0, .*v0.6.0 | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --bridge-version v9
no flex dispatcher before core_v0.12.0 | 2 | --moe-dispatcher flex needs Megatron-LM core_v0.12.0 or newer | estimate --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256 --ep 8 --moe-dispatcher flex --format megatron --megatron-version 0.11
text output indents the release notes | 0 | ^    # --attention-backend needs Megatron-LM >= core_v0.11.0 | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --megatron-version 0.10
# a pinned configuration Megatron-LM rejects: the error names its check (docs/MEGATRON_CHECKS.md)
estimate TP not dividing the query groups cites Megatron | 2 | --tp 7: model 'hf-qwen2-7b.json' has 4 key/value heads.*Megatron-LM d98e8a6 megatron/core/transformer/transformer_config\.py:1465 raises: num_query_groups must be a multiple or divisor | estimate --model tests/fixtures/models/hf-qwen2-7b.json --gpus 7 --seq 4096 --gbs 63 --tp 7
estimate VPP with micro-batches not divisible by PP cites Megatron | 2 | --vpp 2: interleaving needs --pp > 1 and the 6 micro-batches divisible by PP 4 \(Megatron-LM d98e8a6 .*megatron/core/pipeline_parallel/schedules\.py:1160 | estimate --model llama3-8b --gpus 32 --seq 4096 --gbs 48 --pp 4 --vpp 2
estimate MoE with TP and no SP cites Megatron | 2 | Megatron-LM d98e8a6 megatron/core/transformer/moe/moe_layer\.py:636 raises | estimate --model mixtral-8x7b --gpus 16 --seq 4096 --gbs 64 --tp 2 --sequence-parallel off
estimate CP with unfused attention cites Megatron | 2 | --attention unfused \(Megatron-LM d98e8a6 megatron/core/transformer/dot_product_attention\.py:57 asserts | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --cp 2 --attention unfused
estimate with model-parallel sizes over the GPUs cites Megatron | 2 | --tp x --cp x --pp = 16 does not divide --gpus 8 \(Megatron-LM d98e8a6 megatron/training/arguments\.py:432 asserts | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 4 --pp 4

# MoE token dispatch and the EP overlap (docs/MODEL.md 5.3)
an unknown dispatcher | 2 | --moe-dispatcher: expected alltoall, allgather, flex or auto, got 'nccl' | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 1024 --moe-dispatcher nccl
flex on a profile without dispatch curves | 2 | --moe-dispatcher flex: the profile of cluster 'dgx-a100-80g' has no 'moe_dispatch' section | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 1024 --moe-dispatcher flex --cluster dgx-a100-80g
EP overlap with PP and no VPP cites Megatron | 2 | --ep-overlap on: Megatron-Core rejects this combination: with PP > 1 it needs a virtual pipeline .*transformer_config\.py:3007 | advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --ep-overlap on --pp 8 --vpp 1
estimate EP overlap with PP and no VPP | 2 | --ep-overlap on: .*needs a virtual pipeline | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --ep-overlap on --pp 8 --ep 32
EP overlap with full recompute cites Megatron | 2 | --ep-overlap on: .*cannot run with full recomputation .*transformer_config\.py:3021 | advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --ep-overlap on --recompute full
EP overlap with the allgather dispatcher | 2 | --ep-overlap on: .*alltoall or flex dispatcher .*transformer_config\.py:3016 | advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --ep-overlap on --moe-dispatcher allgather
EP overlap on a dense model | 2 | --ep-overlap on: .*needs expert parallelism .*transformer_config\.py:3013 | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --ep-overlap on
EP overlap needs on or off | 2 | --ep-overlap: expected on or off, got 'yes' | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 1024 --ep-overlap yes
a bad router balance | 2 | --moe-balance: expected aux, pretrained, forced or drop:CF | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 1024 --moe-balance drop:0.5
EP overlap pinned on is emitted | 0 | --overlap-moe-expert-parallel-comm | estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --tp 2 --pp 8 --vpp 4 --ep 32 --recompute selective --ep-overlap on --format megatron
EP overlap pinned off leaves the shared-expert overlap | 0 | --moe-shared-expert-overlap | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --pp 16 --ep 64 --ep-overlap off --format megatron
allgather dispatcher pinned | 0 | --moe-token-dispatcher-type allgather | estimate --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256 --ep 8 --moe-dispatcher allgather --format megatron
forced balance flag | 0 | --moe-router-force-load-balancing | estimate --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 4 --moe-balance forced --precision-aware-optimizer on --format megatron --cluster dgx-b200
token drop flag | 0 | model\.moe_expert_capacity_factor=1\.25 | estimate --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 4 --moe-balance drop:1.25 --precision-aware-optimizer on --format bridge --cluster dgx-b200
graph scopes as Megatron-LM's modules | 0 | --cuda-graph-modules attn moe_router \\ | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 1 --cuda-graph-scope attn,moe_router --format megatron
graph scopes as Bridge's | 0 | cuda_graph_modules=\[moe_router,moe_preprocess\] | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 1 --cuda-graph-scope moe_router,moe_preprocess --format bridge
graph scopes in the advice | 0 | "cuda_graph_scope": \[ | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 1 --cuda-graph-scope attn --format json
an unknown graph scope | 2 | --cuda-graph-scope: expected scopes among attn, mlp, moe_router, moe_preprocess, moe \(comma-separated\), got 'attention' | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 1 --cuda-graph-scope attention
the whole MoE block needs token drop | 2 | --cuda-graph-scope moe: Megatron-LM graphs the whole MoE block only with padded token drop | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 1 --cuda-graph-scope moe
a graph scope without graphs | 2 | not with --cuda-graphs off | estimate --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 1 --cuda-graph-scope attn --cuda-graphs off
the all-to-all dispatcher with 16 experts per GPU warns of its host wait | 0 | moe-alltoall-host-wait +The all-to-all dispatcher copies each MoE layer's split sizes | estimate --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --tp 1 --pp 2 --vpp 24 --ep 8 --mbs 2 --precision fp8 --fp8-recipe tensorwise --moe-dispatcher alltoall --ep-overlap on --moe-balance forced
the host-wait warning names HybridEP where the profile has it | 0 | HybridEP \(--moe-dispatcher flex\) waits too | estimate --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 1 --moe-dispatcher alltoall --cluster dgx-b200
no host-wait warning with the flex dispatcher | 0 | !moe-alltoall-host-wait | estimate --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 512 --ep 8 --mbs 1 --moe-dispatcher flex --cluster dgx-b200
no host-wait warning with 4 experts per GPU | 0 | !moe-alltoall-host-wait | estimate --model qwen3-30b-a3b --gpus 32 --seq 4096 --gbs 512 --ep 32 --mbs 1 --moe-dispatcher alltoall --ep-overlap on
NVFP4 on H100 names the GPU and what it needs | 2 | --precision nvfp4: the NVIDIA H100 80GB HBM3 GPUs of cluster 'dgx-h100' \(compute capability 9\.0\) cannot run NVFP4.*needs Blackwell | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --precision nvfp4
MXFP8 on H100 names the GPU and what it needs | 2 | --fp8-recipe mxfp8: the NVIDIA H100 80GB HBM3 GPUs .*cannot run MXFP8.*needs Blackwell | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --precision fp8 --fp8-recipe mxfp8
blockwise FP8 on A100 names the missing FP8 | 2 | --precision fp8: the NVIDIA A100-SXM4-80GB GPUs of cluster 'dgx-a100-80g' have no FP8 tensor cores | estimate --model llama3-8b --cluster dgx-a100-80g --gpus 8 --seq 4096 --gbs 64 --precision fp8 --fp8-recipe blockwise
blockwise FP8 on a profile without compute capability 9 | 2 | --fp8-recipe blockwise: the .* GPUs of cluster .*cannot run FP8 with 128x128 weight and 1x128 activation scales; it needs Hopper | advise --model llama3-8b --cluster tests/fixtures/bad/profile-ada-fp8.json --gpus 8 --seq 4096 --gbs 64 --precision fp8 --fp8-recipe blockwise
unknown FP8 recipe | 2 | --fp8-recipe: expected delayed, tensorwise, blockwise or mxfp8, got 'mx4' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --precision fp8 --fp8-recipe mx4
unknown precision | 2 | --precision: expected bf16, fp8 or nvfp4, got 'fp4' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --precision fp4
NVFP4 on B200 emits the FP4 format | 0 | --fp4-format e2m1 | advise --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 64 --precision nvfp4 --format megatron
MXFP8 through the Bridge recipe name | 0 | mixed_precision=bf16_with_mxfp8_mixed | advise --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 64 --precision fp8 --fp8-recipe mxfp8 --format bridge
blockwise through the Bridge recipe name | 0 | mixed_precision=bf16_with_fp8_subchannel_scaling_mixed | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --precision fp8 --fp8-recipe blockwise --format bridge
FP8 parameter gather without FP8 | 2 | --fp8-param-gather on needs --precision fp8 or nvfp4 \(Megatron-LM d98e8a6 .*transformer_config\.py:1566 | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --fp8-param-gather on
FP8 parameter gather without the distributed optimizer | 2 | --fp8-param-gather on needs the distributed optimizer \(Megatron-LM d98e8a6 megatron/training/arguments\.py:1097 | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --precision fp8 --fp8-param-gather on --dist-opt off
FP8 parameter gather off keeps the flag out | 0 | !--fp8-param-gather | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --precision fp8 --fp8-param-gather off --format megatron
optimizer CPU offload without the distributed optimizer | 2 | --optimizer-cpu-offload 0\.5: needs the distributed optimizer.*__init__\.py:1057 | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --optimizer-cpu-offload 0.5 --dist-opt off
optimizer CPU offload share out of range | 2 | --optimizer-cpu-offload: expected a share of the optimizer states in \(0, 1\], got '1\.5' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --optimizer-cpu-offload 1.5
optimizer CPU offload with FP8 gathers needs delayed scaling | 2 | --fp8-recipe delayed \(Megatron-LM d98e8a6 megatron/training/arguments\.py:1889 | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --precision fp8 --fp8-recipe tensorwise --fp8-param-gather on --optimizer-cpu-offload 0.5
optimizer CPU offload emits its fraction | 0 | --optimizer-offload-fraction 0\.5 | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --optimizer-cpu-offload 0.5 --format megatron
optimizer CPU offload shows the host memory | 0 | host memory per node: [0-9.]+ GiB of 1843\.2 GiB usable | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --optimizer-cpu-offload 0.5
CUDA graphs with full recompute cite Megatron | 2 | --cuda-graphs on: per-layer CUDA graphs run with neither --recompute full \(Megatron-LM d98e8a6 megatron/core/transformer/transformer_config\.py:2856 | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cuda-graphs on --recompute full
CUDA graphs with offload cite Megatron | 2 | --cuda-graphs on: per-layer CUDA graphs run with neither --offload-layers .*transformer_config\.py:2801 raises: CUDA graphs not supported with CPU offloading | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cuda-graphs on --offload-layers 4
CUDA graphs bad value | 2 | --cuda-graphs: expected on or off, got 'maybe' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cuda-graphs maybe
CUDA graphs pinned emit the TE implementation | 0 | --cuda-graph-impl transformer_engine | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cuda-graphs on --format megatron
CUDA graphs on a dense model capture attention and MLP | 0 | --cuda-graph-modules attn mlp | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cuda-graphs on --format megatron
CUDA graphs on a MoE model leave the experts eager | 0 | --cuda-graph-modules attn moe_router | estimate --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 64 --ep 8 --pp 2 --cuda-graphs on --format megatron
CUDA graphs through Bridge | 0 | model\.cuda_graph_modules=\[attn,mlp\] | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cuda-graphs on --format bridge
CUDA graphs for Bridge v0.5.0 take the older scope field | 0 | model\.cuda_graph_scope=\[attn,mlp\] | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cuda-graphs on --format bridge --bridge-version v0.5.0
CUDA graphs for Megatron-LM core_v0.17.0 take the older scope flag | 0 | --cuda-graph-scope attn mlp | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cuda-graphs on --format megatron --megatron-version core_v0.17.0
CUDA graphs take their static buffers | 0 | CUDA graphs +[1-9][0-9.]* | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cuda-graphs on
CUDA graphs save the host time of a launch-bound step | 0 | host overhead +0\.0250 | estimate --model llama3-8b --gpus 8 --seq 256 --gbs 64 --tp 8 --cluster dgx-b200
without CUDA graphs the launch-bound step waits on the host | 0 | host overhead +[0-9.]+ +- +[1-9][0-9]\.[0-9]% | estimate --model llama3-8b --gpus 8 --seq 256 --gbs 64 --tp 8 --cluster dgx-b200 --cuda-graphs off
profile host memory below 1 GB | 2 | host_memory_bytes.*expected | advise --model llama3-8b --cluster tests/fixtures/bad/profile-host-memory.json --gpus 8 --seq 4096 --gbs 64
NVFP4 on B200 emits the FP4 recipe | 0 | --fp4-recipe nvfp4 | advise --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 64 --precision nvfp4 --format megatron
optimizer CPU offload emits the precision-aware optimizer | 0 | --use-precision-aware-optimizer | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --optimizer-cpu-offload 0.5 --format megatron
CUDA graphs with PP keep buffers for every micro-batch in flight | 1 | CUDA graphs +11\.59 | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 --vpp 5 --mbs 1 --cuda-graphs on --format text
fine-grained offload emits the Megatron-LM flags | 0 | --offload-modules core_attn attn_proj | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --offload-modules core_attn,attn_proj --format megatron
fine-grained offload switch | 0 | --fine-grained-activation-offloading | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --offload-modules core_attn --format megatron
fine-grained offload through Bridge | 0 | model\.offload_modules=\[core_attn,attn_proj\] | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --offload-modules core_attn,attn_proj --format bridge
fine-grained offload before core_v0.16.0 is refused | 2 | --offload-modules needs Megatron-LM core_v0.16.0 or newer | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --offload-modules core_attn --format megatron --megatron-version core_v0.15.0
fine-grained offload shows the host memory | 0 | host memory per node: [0-9.]+ GiB of 1843\.2 GiB usable | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --offload-modules core_attn
fine-grained offload of an unknown module | 2 | --offload-modules: expected modules among attn_norm, .*got 'frob' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --offload-modules core_attn,frob
fine-grained offload attn_proj alone cites Megatron | 2 | attn_proj needs core_attn as well \(Megatron-LM d98e8a6 megatron/core/transformer/transformer_config\.py:2149 raises | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --offload-modules attn_proj
fine-grained offload with layer offload cites Megatron | 2 | cannot run with --offload-layers \(Megatron-LM d98e8a6 .*transformer_config\.py:2128 asserts | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --offload-modules core_attn --offload-layers 4
fine-grained offload of experts on a dense model | 2 | expert_fc1 and moe_act offload the experts' inputs, and model 'llama3-8b' has no experts | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --offload-modules expert_fc1
fine-grained offload lowers the activations (34.0 GiB without) | 0 | ^activations +23\.[0-9] | estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --offload-modules core_attn,attn_proj,qkv_linear,attn_norm,mlp_norm
CUDA graphs with the EP overlap cite Megatron | 2 | --cuda-graphs on with --ep-overlap on: .*delay-wgrad-compute.*megatron/training/arguments\.py:1910-1918 asserts .*CUDA graph with delay_wgrad_compute requires TE version >= 2\.12\.0 | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 16 --seq 4096 --gbs 64 --vpp 2 --cuda-graphs on --ep-overlap on
estimate CUDA graphs with the EP overlap refused | 2 | --cuda-graphs on with --ep-overlap on: .*arguments\.py:1910-1918 | estimate --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 64 --ep 8 --pp 2 --vpp 2 --cuda-graphs on --ep-overlap on
graphs of the router and preprocessing run beside the EP overlap | 0 | --cuda-graph-modules moe_router moe_preprocess | estimate --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 64 --ep 8 --pp 2 --vpp 2 --cuda-graph-scope moe_router,moe_preprocess --ep-overlap on --format megatron
the router's graph with shared experts beside the EP overlap refused | 2 | --cuda-graphs on with --ep-overlap on: .*shared experts.*arguments\.py:1910-1918 | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --pp 16 --vpp 2 --ep 64 --cuda-graph-scope moe_router,moe_preprocess --ep-overlap on
a graphed dense MLP beside the EP overlap refused | 2 | --cuda-graphs on with --ep-overlap on: .*transformer_config\.py:3063-3071 asserts: CUDA graph scope on moe and mlp | estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --pp 16 --vpp 2 --ep 64 --cuda-graph-scope mlp,moe_router,moe_preprocess --ep-overlap on
pinned graph scopes that allow it leave the EP overlap to the search | 0 | EP overlap 1F1B, per-layer CUDA graphs | estimate --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 64 --ep 8 --pp 2 --vpp 2 --cuda-graph-scope moe_router,moe_preprocess
the preprocessing's graph needs the router's | 2 | --cuda-graph-scope moe_preprocess needs moe_router too .*transformer_config\.py:2821-2824 | estimate --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 64 --ep 8 --pp 2 --vpp 2 --cuda-graph-scope moe_preprocess
CUDA graphs pinned keep the EP overlap off | 0 | !--overlap-moe-expert-parallel-comm | estimate --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 64 --ep 8 --pp 2 --vpp 2 --cuda-graphs on --format megatron
EP overlap pinned keeps CUDA graphs off on a host-bound GPU | 0 | !--cuda-graph-impl transformer_engine | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 16 --seq 4096 --gbs 64 --vpp 2 --ep-overlap on --format megatron
# every knob that differs from Megatron-LM's defaults is in the headline and the report
best line names the layer offload | 0 | ^best: TP8 PP1 DP8 MBS1, recompute none, activations of [0-9]+ layers offloaded to the host | advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64 --top 2 --prefer-headroom 0
best line names full recompute's layers | 0 | ^best: .*recompute full \([0-9]+ layers? per model chunk\) | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --recompute full --top 1
best line names fine-grained offload | 0 | ^best: .*inputs of core_attn,attn_proj offloaded to the host | advise --model llama3-70b --gpus 64 --seq 32768 --gbs 64 --offload-modules core_attn,attn_proj --top 1
best line names the optimizer offload | 0 | ^best: .*50% of the optimizer states on the host | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --optimizer-cpu-offload 0.5 --top 1
report summary names the offload and its host memory | 0 | Recommended: <b>TP8 PP1 DP8 MBS1</b>, recompute none, <b>activations of [0-9]+ layers offloaded to the host</b> \([0-9.]+ GiB of pinned host memory per node\) | advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64 --top 2 --prefer-headroom 0 --report -
report table shows the offload | 0 | <td>none \+offload [0-9]+</td> | advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64 --top 2 --report -
# nothing fits: the changes that would, each searched, in the text and the JSON
no-fit lists the optimizer offload that fits | 1 | ^  --optimizer-cpu-offload 1 +TP[0-9]+ PP[0-9]+.*s per step | advise --model llama3-70b --gpus 8 --seq 4096 --gbs 64
no-fit lists the GPUs that fit | 1 | ^  --gpus 32 +TP | advise --model llama3-70b --gpus 8 --seq 4096 --gbs 64
no-fit JSON carries the changes | 1 | "change": "--optimizer-cpu-offload 1" | advise --model llama3-70b --gpus 8 --seq 4096 --gbs 64 --format json
no-fit JSON carries the closest and the minimum GPUs | 1 | "min_gpus_model_states": 16 | advise --model llama3-70b --gpus 8 --seq 4096 --gbs 64 --format json
no-fit closest says FSDP | 1 | ^closest: .*, in Megatron-FSDP, needs | advise --model llama3-70b --gpus 8 --seq 4096 --gbs 64
# smaller things a new user found
env lines are exported | 0 | ^export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True$ | advise --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --format env
runner-up says how it differs from the best | 0 | ^  runner-up: TP[^ ]* .*, .* \(.* against .*\)$ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --top 3
one GPU is one GPU | 0 | , 1 GPU, sequence | estimate --model tests/fixtures/models/tiny-llama.json --gpus 1 --seq 128 --gbs 8
one micro-batch is one micro-batch | 0 | , 1 micro-batch(, .*)?$ | estimate --model tests/fixtures/models/tiny-llama.json --gpus 1 --seq 128 --gbs 1
one writer of stdout: JSON and flags are refused | 2 | --json - and --format megatron write to standard output: choose one | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --json - --format megatron
one writer of stdout: JSON and the page are refused | 2 | --json - and --report - write to standard output: choose one | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --json - --report -
one writer of stdout: --json - alone is the JSON alone | 0 | !^best: | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --json -
# headroom before speed (docs/MODEL.md 7.1): MBS 2 at 75.7 of 76.5 GiB (4% kept free) is 1.8% faster
# than MBS 1 at 57.0 GiB (the GEMM workspaces held, 4.8: 0.09 GiB, not a flat 0.25)
headroom: the pick off the memory limit is first | 0 | best: TP1 PP1 DP8 MBS1, recompute none | advise --model tests/fixtures/models/hf-mistral-7b.json --gpus 8 --seq 4096 --gbs 256 --mem-headroom 4
headroom: the faster one on the limit is the runner-up, named so | 0 | runner-up: TP1 PP1 DP8 MBS2, 1.8% faster but on the memory limit \(75.7 of 76.5 GiB usable\) | advise --model tests/fixtures/models/hf-mistral-7b.json --gpus 8 --seq 4096 --gbs 256 --mem-headroom 4
headroom: the JSON says the pick was for headroom | 0 | "headroom_pick": true | advise --model tests/fixtures/models/hf-mistral-7b.json --gpus 8 --seq 4096 --gbs 256 --mem-headroom 4 --json -
headroom: 0 ranks by step time alone | 0 | best: TP1 PP1 DP8 MBS2, recompute none | advise --model tests/fixtures/models/hf-mistral-7b.json --gpus 8 --seq 4096 --gbs 256 --mem-headroom 4 --prefer-headroom 0
headroom: a share below the gap still yields to the band | 0 | best: TP1 PP1 DP8 MBS1, recompute none | advise --model tests/fixtures/models/hf-mistral-7b.json --gpus 8 --seq 4096 --gbs 256 --mem-headroom 4 --prefer-headroom 1
# the key's first on the limit but slower by step (5% kept free: MBS 2 needs full recompute of 2
# layers, 74.8 of 75.7 GiB): the pick is faster, and the line says which the runner-up led by
headroom: a runner-up first by its own terms is not called the fastest | 0 | #1 goes first for headroom: #2, first by its own terms, uses more | advise --model tests/fixtures/models/hf-mistral-7b.json --gpus 8 --seq 4096 --gbs 256
# a long context (docs/MODEL.md 7.1): TP8 with 71 layers offloaded fills 75.3 of 75.7 GiB and pins
# 1.25 TB of host memory per node; TP8 PP2 CP4 with the precision-aware optimizer and no offload,
# 3% slower and within the band, is first
headroom: long context picks a layout with headroom | 0 | ^best: TP8 PP2 VPP12 CP4\(p2p\) DP1 MBS1, recompute none, distributed optimizer on, precision-aware | advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64 --top 2
headroom: long context names the offload it passed over | 0 | runner-up: TP8 PP1 DP8 MBS1, 3.0% faster but on the memory limit \(75.3 of 75.7 GiB usable, activations offloaded\) | advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64 --top 2
headroom: a bad share is refused | 2 | --prefer-headroom.*a percentage in \[0, 90\) | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --prefer-headroom 95
# FP8 on Blackwell without a recipe: delayed scaling, with a word about MXFP8
fp8 on Blackwell names MXFP8 | 0 | warning: --precision fp8 on .*B200.* uses delayed \(per-tensor\) scaling, Megatron-LM's default; NVIDIA's Blackwell recipes train with MXFP8 | estimate --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 64 --precision fp8
fp8 on Blackwell with a recipe given is quiet | 0 | !Blackwell recipes train with MXFP8 | estimate --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 64 --precision fp8 --fp8-recipe delayed
fp8 on Hopper is quiet | 0 | !Blackwell recipes | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --precision fp8
# the step floors skip what cannot rank; --exhaustive evaluates everything
the search skips by its floor | 0 | "bound":[[:space:]]*[1-9] | advise --no-rules --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --json -
--exhaustive skips nothing | 0 | "bound":[[:space:]]*0$ | advise --no-rules --exhaustive --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --json -
unfused gradient accumulation costs its traffic | 0 | element-wise +0\.47 | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --grad-accum-fusion off
unfused gradient accumulation is printed for Megatron-LM | 0 | --no-gradient-accumulation-fusion | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --grad-accum-fusion off --format megatron
unfused gradient accumulation is printed for Bridge | 0 | model.gradient_accumulation_fusion=false | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --grad-accum-fusion off --format bridge
fused gradient accumulation prints no flag | 0 | !no-gradient-accumulation-fusion | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --format megatron
gradient accumulation fusion takes on or off | 2 | --grad-accum-fusion: expected on or off | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --grad-accum-fusion maybe
every pipeline stage in the advice JSON | 0 | "stages": \[ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --pp 4 --top 1 --json -
the advice JSON flags the peak stage | 0 | "peak": true | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --pp 4 --top 1 --json -
the allocator's figures in the advice JSON | 0 | "outside_allocator_bytes": [0-9] | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --pp 4 --top 1 --json -
the text says which stage peaks | 0 | memory by stage .*, stage 0 peaks: | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --pp 4 --top 1
the text has a line for the last stage | 0 | ^    stage 3 +[0-9.]+ +states [0-9.]+, activations [0-9.]+, logits [0-9]+\.[0-9]*[1-9] | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --pp 4 --top 1
the text gives the allocator's four figures | 0 | allocator, stage 0: allocated [0-9.]+, max allocated [0-9.]+, reserved [0-9.]+; outside it [0-9.]+ | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --pp 4 --top 1
one stage has no line per stage | 0 | !memory by stage | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2
estimate prints the stage asked for | 0 | ^\(stage 3 of 4, --stage; stage 0 is the most loaded | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --stage 3
estimate of the last stage has its logits | 0 | ^logits and loss +0\.[0-9]*[1-9] | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --stage 3
estimate of stage 0 has no logits | 0 | ^logits and loss +0\.00  | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --stage 0
estimate prints the allocator's figures of the stage asked for | 0 | ^allocator, stage 2: allocated | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --stage 2
estimate refuses a stage past the last | 2 | --stage 4: the configuration has 4 pipeline stages: give 0 to 3 | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --stage 4
estimate refuses a stage of a job without PP | 2 | --stage 1: the configuration has one pipeline stage: give 0 | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --stage 1
estimate refuses a negative stage | 2 | --stage: expected a pipeline stage, 0 to PP - 1, got '-1' | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --stage -1
advise has no --stage | 2 | unknown option '--stage' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --stage 0
local layers: the Megatron-LM flags name them and the fusions off | 0 | --transformer-impl local \\$ | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --fusions-off rope,bias_activation --format megatron
local layers: SwiGLU's bias fusion off by its flag | 0 | --no-bias-swiglu-fusion | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --fusions-off rope,bias_activation --format megatron
local layers: no attention backend printed | 0 | !attention-backend | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --format megatron
local layers: Bridge builds the local spec | 0 | model.transformer_layer_spec=\{_target_:megatron.bridge.models.gpt_provider.local_layer_spec,_call_:false\} | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --fusions-off all --format bridge
local layers: Bridge turns the fusion off | 0 | model.apply_rope_fusion=false | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --fusions-off all --format bridge
local layers: verl says it cannot | 0 | Megatron-LM's own layers \(--transformer-impl local\) and their fusions turned off are left out: verl builds Transformer Engine's layers | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --format verl
local layers: verl has no key for them | 0 | !transformer_impl= | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --fusions-off all --format verl
local layers: verl has no key for their fusions | 0 | !apply_rope_fusion= | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --fusions-off all --format verl
local layers: the search leaves out the TP overlap | 0 | !"tp_comm_overlap": true | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --transformer-impl local --top 10 --format json
local layers: the search leaves out per-layer CUDA graphs | 0 | !"cuda_graphs": true | advise --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 256 --gbs 64 --transformer-impl local --top 10 --format json
local layers: the search leaves out CP | 0 | !"cp": [2-9] | advise --model llama3-8b --gpus 16 --seq 65536 --gbs 16 --transformer-impl local --top 10 --format json
local layers: the job is written with them | 0 | "transformer_impl": "local" | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --fusions-off rope --format json
local layers: estimate times them as eager kernels | 0 | "fusions_off": \[ | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --fusions-off rope --format json
local layers refuse FP8 | 2 | --precision fp8: Megatron-LM's own layers \(--transformer-impl local\) cannot run it: their linears are torch.matmul | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --precision fp8
local layers refuse NVFP4 | 2 | --precision nvfp4: Megatron-LM's own layers | estimate --model llama3-8b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --precision nvfp4
local layers refuse the TP overlap | 2 | --tp-comm-overlap on: Megatron-LM's own layers \(--transformer-impl local\) cannot run it: the overlap runs in Transformer Engine's userbuffers \(Megatron-LM d98e8a6 megatron/training/initialize.py:194-207 | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --tp-comm-overlap on
local layers refuse per-layer CUDA graphs | 2 | --cuda-graphs on: .*cuda_graphs.py:2189 asserts: CUDA Graphs are not supported without TE | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --cuda-graphs on
local layers refuse a graph scope | 2 | --cuda-graph-scope: Megatron-LM's own layers | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --cuda-graph-scope attn
local layers refuse the EP overlap | 2 | --ep-overlap on: .*arguments.py:1903-1905 asserts: Delaying wgrad compute is only supported with transformer_engine implementation | advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --transformer-impl local --ep-overlap on
local layers refuse the rank budget | 2 | --moe-rank-budget on: Megatron-LM's own layers | advise --model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --seq 4096 --gbs 512 --transformer-impl local --moe-rank-budget on
local layers refuse fine-grained offload | 2 | --offload-modules: .*arguments.py:1935-1937 asserts: Fine-grained activation offloading is only supported with transformer_engine implementation | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --offload-modules core_attn
local layers refuse CP | 2 | --cp 2: .*dot_product_attention.py:57-59 asserts: Context parallelism is only supported by TEDotProductAttention | advise --model llama3-8b --gpus 16 --seq 65536 --gbs 16 --transformer-impl local --cp 2
local layers refuse the precision-aware optimizer | 2 | --precision-aware-optimizer on: .*torch.optim.AdamW | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --precision-aware-optimizer on
local layers refuse an optimizer dtype | 2 | --exp-avg-dtype, --exp-avg-sq-dtype, --main-params-dtype\): Megatron-LM's own layers | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --exp-avg-dtype bf16
local layers refuse the optimizer offload | 2 | --optimizer-cpu-offload: .*arguments.py:1884-1887 | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --optimizer-cpu-offload 0.5
local layers refuse fused attention | 2 | --attention flash with --transformer-impl local: Megatron-LM's own layers attend with DotProductAttention | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --attention flash
fusions off need the local layers | 2 | --fusions-off needs --transformer-impl local | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --fusions-off rope
fusions off: an unknown name | 2 | --fusions-off: expected fusions among masked_softmax, bias_activation, bias_dropout, rope \(comma-separated\), or all, got 'rope,glu' | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --fusions-off rope,glu
fusions off: an empty item | 2 | --fusions-off: expected fusions among | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --fusions-off rope,
transformer implementation: an unknown one | 2 | --transformer-impl: expected | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl apex
local layers accumulate gradients apart | 0 | --no-gradient-accumulation-fusion | estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 2 --transformer-impl local --format megatron
local layers refuse the fused accumulation | 2 | --grad-accum-fusion on with --transformer-impl local: .*layers.py:1148-1157 | advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --transformer-impl local --grad-accum-fusion on
