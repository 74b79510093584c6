# The interleaved schedule's P2P overlap (--overlap-p2p; docs/MODEL.md 5.5): pinned, checked, printed.
# name | expected exit status | ERE that stdout+stderr must match (!ERE: must not) | arguments
not on or off | 2 | --overlap-p2p: expected on or off, got 'sometimes' | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5 --overlap-p2p sometimes
off with VPP over PP 2 refused | 2 | --overlap-p2p off with 5 virtual stages per rank: interleaving without the overlap needs --pp > 2, got 2 \(Megatron-LM d98e8a6 megatron/training/arguments.py:1006 | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2 --vpp 5 --overlap-p2p off
off named in the configuration line | 0 | ^configuration: TP8 PP4 VPP5 DP2 MBS1, .*pipeline sends blocking \(P2P overlap off\)$ | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5 --overlap-p2p off
on by default: no blocking sends | 0 | !pipeline sends blocking | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5
off printed for Megatron-LM | 0 | --no-overlap-p2p-communication | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5 --overlap-p2p off --format megatron
on prints no flag | 0 | !overlap-p2p | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5 --format megatron
without VPP there is no overlap to turn off | 0 | !overlap-p2p | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --overlap-p2p off --format megatron
off printed for Megatron-Bridge | 0 | comm_overlap.overlap_p2p_comm=false: .*CommOverlapConfig\(overlap_p2p_comm=False\) in the recipe | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5 --overlap-p2p off --format bridge
off in the advice JSON | 0 | ^ {8}"overlap_p2p_comm": false, | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5 --overlap-p2p off --format json
on in the advice JSON | 0 | ^ {8}"overlap_p2p_comm": true, | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5 --format json
the search prunes VPP over PP 2 when off | 0 | ^pruned: .*p2p-pp [1-9] | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --pp 2 --overlap-p2p off
every send exposed when off | 0 | ^PP send/recv +[0-9.]+ +0\.0000 | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5 --overlap-p2p off
off batches the Bridge sends as Megatron-LM does | 0 | CommOverlapConfig\(batch_p2p_comm=True\) in the recipe | estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 4 --vpp 5 --overlap-p2p off --format bridge
NVFP4 keeps its TP overlap off in Bridge beside blocking sends | 0 | CommOverlapConfig\(tp_comm_overlap=False\) | estimate --model llama3-70b --cluster gb200-nvl72 --gpus 64 --seq 8192 --gbs 128 --precision nvfp4 --tp 8 --pp 4 --vpp 5 --overlap-p2p off --format bridge
NVFP4 with the TP overlap pinned on prints it on only | 0 | !tp_comm_overlap=false | estimate --model llama3-70b --cluster gb200-nvl72 --gpus 64 --seq 8192 --gbs 128 --precision nvfp4 --tp 8 --pp 4 --vpp 5 --overlap-p2p off --tp-comm-overlap on --format bridge
off over PP 2: the pp-vpp rule does not ask for interleaving | 0 | !pruned by rules: .*pp-vpp | advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --pp 2 --overlap-p2p off
a layout of 4 stages over PP 2 with off refused | 2 | --overlap-p2p off with 2 virtual stages per rank: interleaving without the overlap needs --pp > 2, got 2 | advise --model llama3-8b --gpus 16 --seq 8192 --gbs 128 --pp 2 --pp-layout 'Et*8|t*8|t*8|t*8L' --overlap-p2p off
