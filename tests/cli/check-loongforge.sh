#!/bin/sh
# SPDX-License-Identifier: MIT
# --megatron-version loongforge spells a candidate as LoongForge runs it
# (loongforge/train.py, the fork's flags; job/flagtable.def MT_FORK), and
# `check` reads that script back as a LoongForge job: the same configuration
# and the same predicted step, its diffs in LoongForge's spelling.
# Exit 0 pass, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
MT=${BUILD:-build}/megatune
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/check-loongforge.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
no() { echo "not ok - $*"; fail=1; }

n=0
while IFS='|' read -r gpus args; do
	[ -n "$gpus" ] || continue
	n=$((n + 1))
	# shellcheck disable=SC2086
	"$MT" advise $args --gpus "$gpus" --megatron-version loongforge --json "$T/a$n.json" \
		>/dev/null 2>"$T/err" || { no "advise $args: $(cat "$T/err")"; continue; }
	# shellcheck disable=SC2086
	"$MT" advise $args --gpus "$gpus" --megatron-version loongforge --format torchrun \
		>"$T/job$n.sh" 2>/dev/null || { no "advise $args --format torchrun"; continue; }
	grep -q '"$LOONGFORGE/loongforge/train.py"' "$T/job$n.sh" || no "$args: no loongforge/train.py"
	"$MT" check "$T/job$n.sh" --json "$T/c$n.json" >/dev/null 2>"$T/err" ||
		{ no "check of $args: $(cat "$T/err")"; continue; }
	$PY - "$T/a$n.json" "$T/c$n.json" "$args" <<'PYEOF' || fail=1
import json, sys
a = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
want = a["candidates"][0]
got = c["as_is"]["candidates"][0]
bad = []
if c["as_is"]["job"].get("megatron_version") != "loongforge":
    bad.append("read back as %s, not loongforge" % c["as_is"]["job"].get("megatron_version"))
for k in ("tp", "pp", "vpp", "cp", "ep", "etp", "dp", "mbs", "recompute", "moe_dispatcher",
          "ep_overlap", "distributed_optimizer", "fsdp", "cross_entropy_fusion"):
    if want["config"].get(k) != got["config"].get(k):
        bad.append("%s: %s, read back %s" % (k, want["config"].get(k), got["config"].get(k)))
ws, gs = want["time"]["step_s"], got["time"]["step_s"]
if abs(ws - gs) > 1e-5 * ws:
    bad.append("step %s s, read back %s s" % (ws, gs))
if any(n.get("flag") in ("cross-entropy-fusion-impl", "offload-tensors")
       for n in c["job"]["not_modelled"]):
    bad.append("LoongForge's own flags listed as not modelled")
for b in bad:
    print("not ok - %s: %s" % (sys.argv[3], b))
sys.exit(1 if bad else 0)
PYEOF
done <<'EOF2'
16|--model qwen3-30b-a3b --seq 4096 --gbs 512
64|--model llama3-70b --seq 8192 --gbs 128
16|--model qwen3-30b-a3b --seq 4096 --gbs 512 --tp 1 --ep 8 --ep-overlap on --offload-modules expert_fc1
EOF2

# the fork's tensor tags with its EP overlap path; its entry, its linear loss
"$MT" advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --tp 1 --ep 8 --ep-overlap on \
	--offload-modules expert_fc1 --megatron-version loongforge --format megatron >"$T/f" 2>&1
grep -q -- '--offload-tensors dispatched_input' "$T/f" || no "no --offload-tensors dispatched_input"
grep -q -- '--cross-entropy-fusion-impl linear' "$T/f" || no "no --cross-entropy-fusion-impl linear"
# upstream core_v0.15.0 has no fine-grained offload; the fork has
"$MT" advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --tp 1 --ep 8 \
	--offload-modules expert_fc1 --megatron-version 0.15 --format megatron >"$T/f" 2>&1
[ $? -eq 2 ] && grep -q 'needs Megatron-LM core_v0.16.0' "$T/f" || no "core_v0.15.0 took --offload-modules"
# what the fork's base lacks is refused naming the fork
"$MT" estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --offload-layers 4 \
	--megatron-version loongforge >"$T/f" 2>&1
[ $? -eq 2 ] && grep -q 'needs Megatron-LM core_v0.16.0 or newer (--cpu-offloading-num-layers); the target is loongforge' "$T/f" ||
	no "--offload-layers with loongforge: $(cat "$T/f")"
# the advice names its target
"$MT" advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128 --megatron-version loongforge \
	--json - 2>/dev/null | grep -q '"megatron_version": "loongforge"' || no "advice job.megatron_version"

[ $n -eq 3 ] || no "$n jobs read, 3 expected"
[ $fail -eq 0 ] && echo "ok - LoongForge round trip ($n jobs)"
exit $fail
