#!/bin/sh
# SPDX-License-Identifier: MIT
# Megatron-Bridge overrides of `advise --format json` (bridge_overrides of
# the top 3 candidates, with their bridge_notes as `#` lines) applied to a
# Bridge recipe's ConfigContainer through OmegaConf, then Bridge's runtime
# set-up, by tests/bridge/check_overrides.py
# (pinned Bridge files: tests/bridge/README.md).  Every override must apply
# and hold the value it meant after set-up.
# Exit 0 pass, 77 skip (with the reason on the last line), else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY (Debian's python3)"; exit 77; }
"$PY" -c 'import omegaconf' 2>/dev/null || { echo "skip: no omegaconf for $PY (Debian's python3-omegaconf)"; exit 77; }
[ -x "$M" ] || { echo "FAIL: no $M: build it first"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bridge-overrides.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fail=0

# "RECIPE | GPUS | advise arguments": a BF16 recipe without a
# CommOverlapConfig, a FP8 one, the 70B BF16 one (CommOverlapConfig) given
# advise's FP8 mixed_precision, and a MoE one.
while IFS='|' read -r recipe gpus job; do
	recipe=$(echo $recipe) gpus=$(echo $gpus)
	# shellcheck disable=SC2086  # the job's words
	if ! "$M" advise $job --gpus "$gpus" --format json --top 3 >"$T/a.json" 2>"$T/a.err"; then
		echo "FAIL: advise $job: $(head -1 "$T/a.err")"
		fail=1
		continue
	fi
	n=$("$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for i, c in enumerate(d["candidates"]):
    notes = ["# " + n for n in c.get("bridge_notes", [])]
    open("%s/c%d" % (sys.argv[2], i), "w").write("\n".join(notes + c["bridge_overrides"]) + "\n")
print(len(d["candidates"]))
' "$T/a.json" "$T") || { echo "FAIL: advise $job: cannot read the JSON output"; fail=1; continue; }
	[ "$n" -ge 1 ] || { echo "FAIL: advise $job: no candidates"; fail=1; }
	i=0
	while [ $i -lt "$n" ]; do
		echo "# advise $job --gpus $gpus, candidate $((i + 1)) -> $recipe"
		"$PY" tests/bridge/check_overrides.py --recipe "$recipe" --world-size "$gpus" "$T/c$i" 2>"$T/err"
		rc=$?
		[ $rc -eq 0 ] || { echo "FAIL: candidate $((i + 1)) of advise $job (exit $rc)"; tail -5 "$T/err"; fail=1; }
		i=$((i + 1))
	done
done <<'JOBS'
llama3_8b_pretrain_2gpu_h100_bf16_config | 8 | --model llama3-8b --seq 8192 --gbs 64
llama3_8b_pretrain_2gpu_h100_fp8cs_config | 8 | --model llama3-8b --precision fp8 --seq 8192 --gbs 64
llama3_70b_pretrain_32gpu_h100_bf16_config | 64 | --model llama3-70b --precision fp8 --seq 8192 --gbs 128
qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config | 32 | --model qwen3-30b-a3b --seq 4096 --gbs 256
llama3_8b_pretrain_2gpu_h100_bf16_config | 8 | --model llama3-8b --seq 8192 --gbs 64 --optimizer-cpu-offload 0.5
llama3_8b_pretrain_2gpu_h100_fp8cs_config | 8 | --model llama3-8b --precision fp8 --fp8-recipe mxfp8 --cluster dgx-b200 --seq 8192 --gbs 64
llama3_70b_pretrain_32gpu_h100_bf16_config | 64 | --model llama3-70b --precision nvfp4 --cluster gb200-nvl72 --seq 8192 --gbs 128
llama3_8b_pretrain_2gpu_h100_bf16_config | 8 | --model llama3-8b --seq 256 --gbs 64 --cluster dgx-b200 --tp 8 --mbs 1
qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config | 32 | --model qwen3-30b-a3b --seq 4096 --gbs 256 --pp 4 --vpp 7
llama3_8b_pretrain_2gpu_h100_bf16_config | 8 | --model llama3-8b --seq 8192 --gbs 64 --fsdp on
llama3_8b_pretrain_2gpu_h100_bf16_config | 8 | --model llama3-8b --seq 8192 --gbs 64 --fsdp torch
JOBS

[ $fail -eq 0 ] && echo "ok"
exit $fail
