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
