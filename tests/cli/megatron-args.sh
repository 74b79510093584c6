#!/bin/sh
# SPDX-License-Identifier: MIT
# Megatron-LM's own argument checks (parse_args, validate_args,
# core_transformer_config_from_args at the commit pinned in
# tests/megatron/README.md) over flag sets, through tests/megatron/check_args.py:
# 1. the hand-written flag sets of tests/megatron/cases.txt give the outcome
#    each states (accepted, or rejected with the message fragment given);
# 2. every candidate of `advise --top 10` for twenty
#    jobs (dense, MoE, long sequence, FP8, B200, GB200, the FP8 and NVFP4
#    recipes, optimizer CPU offload, CUDA graphs, fine-grained offload, a pipeline
#    layout, Megatron-FSDP, PyTorch FSDP2, blocking pipeline sends), its flags with its
#    environment on as many GPUs as the job, is accepted.
# Exit 0 pass, 77 skip (with the reason on the last line), else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
PY=/usr/bin/python3
CHECK=tests/megatron/check_args.py
[ -x "$PY" ] || { echo "skip: no $PY (Debian's python3)"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/megatron-args.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fail=0

bad() {
	echo "FAIL: $*"
	fail=1
}

# --- 1. the hand-written cases: "NAME | ok|fails: FRAGMENT | [ENV...] FLAGS"
grep -v '^#' tests/megatron/cases.txt | grep . >"$T/cases"
sed 's/^\([^|]*[^ |]\) *| *[^|]*| */\1 :: /' "$T/cases" >"$T/input"
"$PY" $CHECK "$T/input" >"$T/out" 2>&1
rc=$?
if ! grep -q '^# [0-9]* flag sets' "$T/out"; then
	bad "check_args.py did not finish (exit $rc)"
	tail -20 "$T/out"
fi
n=0
while IFS='|' read -r name want rest; do
	name=$(echo "$name" | sed 's/^ *//; s/ *$//')
	want=$(echo "$want" | sed 's/^ *//; s/ *$//')
	n=$((n + 1))
	got=$(grep -E "^(not )?ok - $name(:|\$)" "$T/out")
	case $want in
	ok) [ "$got" = "ok - $name" ] || bad "$name: expected ok, got: ${got:-nothing}" ;;
	fails:*)
		frag=${want#fails: }
		case $got in
		"not ok - $name: "*"$frag"*) ;;
		*) bad "$name: expected a failure with '$frag', got: ${got:-nothing}" ;;
		esac ;;
	*) bad "$name: bad expectation '$want' in cases.txt" ;;
	esac
done <"$T/cases"
[ "$n" -ge 5 ] || bad "only $n cases read from tests/megatron/cases.txt"
echo "cases: $n checked"

# --- 2. advise's top-10 Megatron flag sets of ten jobs
if [ "${MEGATRON_ARGS_ADVISE:-1}" = 1 ]; then
	[ -x "$M" ] || bad "no $M: build it first"
	cat >"$T/jobs" <<'JOBS'
--model llama3-8b --gpus 8 --seq 8192 --gbs 64
--model llama3-70b --gpus 64 --seq 8192 --gbs 128
--model llama3.1-405b --gpus 512 --seq 8192 --gbs 512 --precision fp8
--model llama3-70b --gpus 64 --seq 65536 --gbs 64
--model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256
--model qwen3-30b-a3b --gpus 32 --seq 4096 --gbs 256
--model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 512
--model deepseek-v3 --gpus 1024 --seq 4096 --gbs 1024
--model llama3-70b --gpus 64 --seq 8192 --gbs 128 --cluster dgx-b200
--model llama3-70b --gpus 72 --seq 8192 --gbs 144 --cluster gb200-nvl72
--model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048
--model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 1024
--model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --precision fp8
--model deepseek-v3 --cluster gb200-nvl72 --gpus 256 --seq 4096 --gbs 4096 --precision fp8 --fp8-recipe mxfp8
--model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 512 --precision fp8 --cluster dgx-b200
--model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --ep-overlap off --cluster gb200-nvl72
--model llama3-70b --gpus 64 --seq 8192 --gbs 128 --cluster gb200-nvl72 --precision nvfp4
--model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 512 --cluster dgx-b200 --precision fp8 --fp8-recipe mxfp8
--model llama3-8b --gpus 8 --seq 8192 --gbs 64 --precision fp8 --fp8-recipe blockwise --optimizer-cpu-offload 0.5
--model llama3-8b --gpus 8 --seq 8192 --gbs 64 --precision fp8 --fp8-recipe tensorwise --optimizer-cpu-offload 1
--model llama3-8b --gpus 8 --seq 256 --gbs 64 --cluster dgx-b200 --tp 8 --mbs 1
--model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 64 --ep 8 --cuda-graphs on
--model llama3-70b --gpus 64 --seq 32768 --gbs 64 --offload-modules core_attn,attn_proj
--model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 256 --offload-modules expert_fc1,moe_act
--model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --pp 32 --vpp 3
--model llama3-8b --gpus 16 --seq 8192 --gbs 128 --fsdp on
--model llama3-8b --gpus 16 --seq 8192 --gbs 128 --fsdp torch
--model llama3-70b --gpus 64 --seq 8192 --gbs 128 --overlap-p2p off
--model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --pp 8 --vpp 4 --ep 64 --mbs 1 --recompute-modules mla_up_proj,mlp
--model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 256 --ep 8 --recompute-modules moe_act,layernorm
--model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256 --ep 4 --recompute-modules core_attn,mlp,moe_act
JOBS
	: >"$T/sets"
	while IFS= read -r job; do
		# shellcheck disable=SC2086  # the job's words
		if ! "$M" advise $job --format json --top 10 >"$T/advice.json" 2>"$T/advice.err"; then
			bad "advise $job: exit status $? ($(head -1 "$T/advice.err"))"
			continue
		fi
		# one line per candidate: "LABEL :: WORLD_SIZE=N CAPABILITY=X ENV... FLAGS"
		"$PY" tests/megatron/advice_sets.py "$job" "$T/advice.json" >>"$T/sets" || bad "advise $job: cannot read the JSON output"
	done <"$T/jobs"
	sets=$(grep -c . "$T/sets")
	[ "$sets" -ge 50 ] || bad "only $sets flag sets from advise"
	"$PY" $CHECK "$T/sets" >"$T/advise.out" 2>&1
	rc=$?
	cat "$T/advise.out"
	failed=$(grep -c '^not ok' "$T/advise.out")
	[ $rc -eq 0 ] || bad "advise: $failed of $sets flag sets fail Megatron-LM's checks"
fi

# --- 3. the printed model is the model advised: for every Hugging Face config megatune
# bundles or tests with, the flags of a one-node estimate build, in Megatron-LM's own
# code, the arguments and TransformerConfig of that config, field by field (hidden,
# FFN, heads, KV groups, head dim, RoPE base and scaling, norm type and epsilon, QK
# norm, biases, gated MLP, tied embeddings, experts and their layers, top-k, the
# router's score function, renormalisation, scaling and groups, the aux loss,
# shared experts and their gate, MLA ranks, MTP: check_args.py hf_mismatches)
: >"$T/hf"
for f in models/*.json tests/fixtures/models/hf-*.json; do
	grep -q '"model_type"' "$f" || continue
	flags=$("$M" estimate --model "$f" --gpus 8 --seq 1024 --gbs 64 --format megatron 2>/dev/null |
		grep -v '^#' | tr -d '\\\n')
	[ -n "$flags" ] || { bad "estimate --model $f printed no flags"; continue; }
	echo "model $(basename "$f" .json) :: WORLD_SIZE=8 HF=$f $flags" >>"$T/hf"
done
"$PY" $CHECK "$T/hf" >"$T/hf.out" 2>&1 || bad "the printed model differs from its config: $(grep '^not ok' "$T/hf.out")"
grep '^ok\|^not ok' "$T/hf.out"
[ "$(grep -c '^ok' "$T/hf.out")" -ge 20 ] || bad "fewer than 20 models compared"

[ $fail -eq 0 ] && echo "ok"
exit $fail
