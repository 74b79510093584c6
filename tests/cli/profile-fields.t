# Issue 29: every field of a cluster profile drives the model or is refused;
# the hardware a profile describes bounds what it measured, and a network
# described but not measured gets curves derived from its NICs
# (tests/fixtures/profiles/README.md says what each fixture changes).
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
misspelt node key is refused | 2 | dgx-h100-unknown-key.json: field 'node.nic_latency': unknown field \(expected one of .*nic_gbps, nic_latency_us, | advise --model llama3-8b --cluster tests/fixtures/profiles/dgx-h100-unknown-key.json --gpus 8 --seq 4096 --gbs 64
slower NICs than the curves are named | 0 | warning: .*dgx-h100-nic12.5.json: 18 network curves .* faster than the NICs the profile describes \(node.nics_per_node 8 x node.nic_gbps 12.5 | estimate --model llama3-8b --cluster tests/fixtures/profiles/dgx-h100-nic12.5.json --gpus 8 --seq 4096 --gbs 64
fewer NICs than the curves are named | 0 | warning: .*16 network curves .*node.nics_per_node 4 x node.nic_gbps 50 | estimate --model llama3-8b --cluster tests/fixtures/profiles/dgx-h100-nics4.json --gpus 8 --seq 4096 --gbs 64
a bounded curve says so | 0 | "message": "Bucket [^"]*\(derived, not measured, bounded by the NICs' line rate\) | advise --model llama3-70b --cluster tests/fixtures/profiles/dgx-h100-nic12.5.json --gpus 64 --seq 8192 --gbs 128 --top 1 --format json
import onto slower NICs warns | 0 | import: warning: .*network curves .* faster than the NICs the profile describes | import nccl-tests tests/fixtures/nccl-tests/h100_10node80gpu_allcoll_nccltests2.17.8_xxrjun.txt --base tests/fixtures/profiles/dgx-h100-nic12.5.json
network without curves is derived from its NICs | 0 | "message": "Bucket [^"]*\(derived from the NIC description\) | advise --model llama3-70b --cluster tests/fixtures/profiles/dgx-h100-nonet.json --gpus 64 --seq 8192 --gbs 128 --top 1 --format json
# Issue 47: every bundled profile gives its GPU's SMs (no "n/a SMs" in a rule's text); a
# profile without them leaves the count out of the sentence; a network curve holds no more
# ranks per node than the node has GPUs (a GB200 NVL72 compute tray has 4)
B200 states its SMs | 0 | gives 16 of the 148 SMs to communication | advise --model llama3-70b --cluster dgx-b200 --gpus 64 --seq 8192 --gbs 128 --top 1
GB200 states its SMs | 0 | gives 16 of the 152 SMs to communication | advise --model llama3-70b --cluster gb200-nvl72 --gpus 64 --seq 8192 --gbs 128 --top 1
no bundled profile prints n/a SMs (A100) | 0 | !n/a SMs | advise --model llama3-70b --cluster dgx-a100-80g --gpus 64 --seq 8192 --gbs 128 --top 1 --format json
no bundled profile prints n/a SMs (H100) | 0 | !n/a SMs | advise --model llama3-70b --cluster dgx-h100 --gpus 64 --seq 8192 --gbs 128 --top 1 --format json
no bundled profile prints n/a SMs (H200) | 0 | !n/a SMs | advise --model llama3-70b --cluster dgx-h200 --gpus 64 --seq 8192 --gbs 128 --top 1 --format json
no bundled profile prints n/a SMs (B200) | 0 | !n/a SMs | advise --model llama3-70b --cluster dgx-b200 --gpus 64 --seq 8192 --gbs 128 --top 1 --format json
no bundled profile prints n/a SMs (GB200) | 0 | !n/a SMs | advise --model llama3-70b --cluster gb200-nvl72 --gpus 64 --seq 8192 --gbs 128 --top 1 --format json
the GB200 report states its SMs | 0 | <th>SMs</th><td class="n">152</td> | report --profile gb200-nvl72 -o -
GB200 network curves hold a tray's 4 GPUs | 0 | network, 40 ranks \(4 per node\) | report --profile gb200-nvl72 -o -
GB200 has no network curve of 8 per node | 0 | !\([5-9] per node\) | report --profile gb200-nvl72 -o -
GB200 NVLink curves span the domain, not a node | 0 | nvlink, 72 ranks in one domain | report --profile gb200-nvl72 -o -
more ranks per node than GPUs is refused | 2 | dgx-h100-gpn4.json: field 'collectives\[10\].ranks_per_node': 8 ranks on a node of node.gpus_per_node 4 GPUs | advise --model llama3-8b --cluster tests/fixtures/profiles/dgx-h100-gpn4.json --gpus 8 --seq 4096 --gbs 64
a profile without SMs leaves the count out | 0 | The overlap gives 16 SMs to communication by default | advise --model llama3-70b --cluster tests/fixtures/rules/gb200-nccl2.21.json --gpus 64 --seq 8192 --gbs 128 --top 1
a profile without SMs prints no n/a | 0 | !n/a SMs | advise --model llama3-70b --cluster tests/fixtures/rules/gb200-nccl2.21.json --gpus 64 --seq 8192 --gbs 128 --top 1 --format json
