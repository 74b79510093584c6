#!/bin/sh
# SPDX-License-Identifier: MIT
# MoE token dispatch and the EP overlap in `megatune advise` (docs/MODEL.md 5.3): for
# Qwen3-235B-A22B on 256 H100, Qwen3-30B-A3B on 16 H100 and DeepSeek-V3 on 1024 H100 (FP8)
# the best candidate names its dispatcher and EP overlap, and its explanation the EP span
# (GPUs, NVLink domains); with EP across domains the dispatcher is flex, which the
# profile times from its published DeepEP curve; pinning the alltoall dispatcher without
# the overlap keeps EP inside one domain (rule moe-ep-nvlink).  The flags of these jobs
# are checked against Megatron-LM by megatron-args.sh.
# Exit 0 pass, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
M=${MEGATUNE:-${BUILD:-build}/megatune}
T=$(mktemp -d "${TMPDIR:-/tmp}/moe-dispatch.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fail=0

bad() {
	echo "not ok - $*"
	fail=1
}

# advise, its text on one line (explanations are wrapped)
flat() {
	"$M" advise "$@" >"$T/out" 2>&1 || { echo "exit $?"; cat "$T/out"; return; }
	tr '\n' ' ' <"$T/out" | tr -s ' '
}

check() { # name text ERE
	if printf '%s' "$2" | grep -Eq "$3"; then
		echo "ok - $1"
	else
		bad "$1: no match for '$3'"
	fi
}

for job in "qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048" \
	"qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 1024" \
	"deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --precision fp8"; do
	name=${job%% *}
	# shellcheck disable=SC2086  # the job's words
	out=$(flat --model $job)
	check "$name: best names dispatcher and overlap" "$out" \
		'best: [^:]*, dispatcher (alltoall|allgather|flex( \((deepep|hybridep)\))?), EP overlap (1F1B|off)'
	check "$name: EP span in GPUs and NVLink domains" "$out" \
		'The (alltoall|allgather|flex) dispatcher spans [0-9]+ GPUs in [0-9]+ NVLink domains?'
	check "$name: overlap stated" "$out" '1F1B EP overlap (on|off)'
	# EP across domains only with flex or the 1F1B overlap
	span=$(printf '%s' "$out" | grep -oE 'spans [0-9]+ GPUs in [0-9]+' | head -1 | awk '{print $5}')
	if [ "${span:-1}" -gt 1 ]; then
		check "$name: EP across $span domains is carried" "$out" \
			'dispatcher flex \((deepep|hybridep)\)|EP overlap 1F1B'
	fi
done

# Qwen3-235B on 256 H100: EP crosses nodes with DeepEP, timed from the published curve
out=$(flat --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048)
check "qwen3-235b: DeepEP across nodes" "$out" 'dispatcher flex \(deepep\)'
check "qwen3-235b: the cost flex pays across domains" "$out" \
	'sends each token once per destination node over RDMA'
# alltoall pinned, overlap off: EP stays inside the 8-GPU NVLink domain
out=$(flat --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --moe-dispatcher alltoall --ep-overlap off)
check "qwen3-235b alltoall: EP inside one domain" "$out" 'dispatcher spans [0-9]+ GPUs in 1 NVLink domain;'
check "qwen3-235b alltoall: pinned dispatcher" "$out" 'dispatcher alltoall, EP overlap off'
# the emitted flags say the same
"$M" advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --format megatron >"$T/flags" 2>&1 ||
	bad "advise --format megatron: exit $?"
grep -q -- '--moe-token-dispatcher-type flex' "$T/flags" || bad "no flex dispatcher flag"
grep -q -- '--moe-flex-dispatcher-backend deepep' "$T/flags" || bad "no DeepEP backend flag"
grep -q -- '--overlap-moe-expert-parallel-comm' "$T/flags" || bad "no EP overlap flag"
grep -q -- '--delay-wgrad-compute' "$T/flags" || bad "no --delay-wgrad-compute"
grep -q -- '--moe-shared-expert-overlap' "$T/flags" && bad "shared-expert overlap with the EP overlap"
# Blackwell: HybridEP
"$M" advise --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 512 --precision fp8 --cluster dgx-b200 \
	--format megatron >"$T/b200" 2>&1 || bad "advise on dgx-b200: exit $?"
grep -q -- '--moe-flex-dispatcher-backend hybridep' "$T/b200" && echo "ok - B200 runs HybridEP" ||
	bad "B200: no HybridEP backend"
[ $fail -eq 0 ] && echo "ok"
exit $fail
