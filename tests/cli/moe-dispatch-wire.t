# Issue 30, item 2: MoE dispatch bytes and curves as Megatron-LM sends them
# (docs/MODEL.md 5.3). DeepEP and HybridEP get the BF16 hidden states whatever
# the precision, so the section-wide fp8_dispatch flag of older profiles is
# refused; EP across NVLink domains on Blackwell is timed on the node-basis RDMA
# figures (DeepEP V1 for the same 400 Gb/s NIC per GPU, derived), not DeepEP V2's
# EP16 per-rank figure (407 MiB per dispatch at 90 GB/s before).
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
old fp8_dispatch key is refused with the reason | 2 | dgx-h100-fp8-dispatch.json: field 'moe_dispatch.fp8_dispatch': no longer read: Megatron-LM's DeepEP and HybridEP dispatchers send BF16 tokens | estimate --model deepseek-v3 --cluster tests/fixtures/profiles/dgx-h100-fp8-dispatch.json --gpus 256 --seq 4096 --gbs 2048 --ep 32 --moe-dispatcher flex
EP32 on B200 sends once per other node | 0 | exposed: [0-9.]+ s per step \([0-9.]+%\), 152 MiB per | estimate --model deepseek-v3 --cluster dgx-b200 --gpus 256 --seq 4096 --gbs 2048 --tp 1 --pp 8 --vpp 4 --ep 32 --moe-dispatcher flex --recompute full
EP32 on B200 is not timed per rank at 90 GB/s | 0 | !407 MiB per | estimate --model deepseek-v3 --cluster dgx-b200 --gpus 256 --seq 4096 --gbs 2048 --tp 1 --pp 8 --vpp 4 --ep 32 --moe-dispatcher flex --recompute full
