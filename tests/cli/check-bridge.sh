#!/bin/sh
# SPDX-License-Identifier: MIT
# check reads a Megatron-Bridge job in the forms Bridge itself writes: advise's
# overrides (--format json, the best candidate) are applied to a real recipe by
# the pinned Bridge files (tests/bridge/check_overrides.py, which also runs
# Bridge's set-up), and the ConfigContainer that results is written as YAML
# (run_config.yaml's form, `_target_` entries included) and as the
# configuration summary Bridge logs at start-up (log_non_default_values,
# behind a launcher prefix); where the recipe has a CommOverlapConfig, the
# notes that name its fields are applied as a user applies them; a recipe
# without one rejects the TP overlap, so its jobs pin it off.
# `megatune check` must read the YAML and the
# summary to the same configuration and step time, the parallel layout and
# batch advise chose, and the model's own shape from the YAML alone (no
# --model).  Exit 0 pass, 77 skip (with the reason), else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
MT=${BUILD:-build}/megatune
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY (Debian's python3)"; exit 77; }
"$PY" -c 'import omegaconf' 2>/dev/null || { echo "skip: no omegaconf for $PY (Debian's python3-omegaconf)"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/check-bridge.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
n=0
while IFS='|' read -r recipe overlap gpus model job; do
	recipe=$(echo $recipe) overlap=$(echo $overlap) gpus=$(echo $gpus) model=$(echo $model)
	[ -n "$recipe" ] || continue
	n=$((n + 1))
	# shellcheck disable=SC2086  # the job's words
	"$MT" advise --model "$model" $job --gpus "$gpus" --json "$T/a.json" >/dev/null 2>"$T/err" ||
		{ echo "FAIL: advise $model $job: $(head -1 "$T/err")"; fail=1; continue; }
	"$PY" -c '
import json, re, sys
c = json.load(open(sys.argv[1]))["candidates"][0]
o = list(c["bridge_overrides"])
if sys.argv[4] == "yes":  # the recipe has a CommOverlapConfig: its notes applied
    o += ["%s=%s" % m.groups() for m in (re.match(r"(comm_overlap\.[a-z_]+)=([a-z0-9]+): rejected", x)
                                          for x in c["bridge_notes"]) if m]
open(sys.argv[2], "w").write("".join("# %s\n" % x for x in c["bridge_notes"]) + "\n".join(o) + "\n")
json.dump(c["config"], open(sys.argv[3], "w"))
' "$T/a.json" "$T/o" "$T/want.json" "$overlap" || { fail=1; continue; }
	"$PY" tests/bridge/check_overrides.py --recipe "$recipe" --world-size "$gpus" \
		--dump-yaml "$T/run_config.yaml" --dump-summary "$T/summary.log" "$T/o" >"$T/co" 2>&1 ||
		{ echo "FAIL: $recipe: the overrides do not apply:"; grep 'not ok' "$T/co" | head -3; fail=1; continue; }
	for f in run_config.yaml summary.log; do
		"$MT" check "$T/$f" --model "$model" --gpus "$gpus" --json "$T/$f.json" >/dev/null 2>"$T/err" ||
			{ echo "FAIL: check $recipe $f: $(head -1 "$T/err")"; fail=1; continue 2; }
	done
	# the model as the YAML states it, without --model
	"$MT" check "$T/run_config.yaml" --gpus "$gpus" --json "$T/own.json" >/dev/null 2>"$T/err" ||
		{ echo "FAIL: check $recipe run_config.yaml without --model: $(head -1 "$T/err")"; fail=1; continue; }
	"$PY" - "$T" "$recipe" "$model" <<'PYEOF' || fail=1
import json, sys
T, recipe, model = sys.argv[1:4]
y = json.load(open(T + "/run_config.yaml.json"))
s = json.load(open(T + "/summary.log.json"))
own = json.load(open(T + "/own.json"))
want = json.load(open(T + "/want.json"))
bad = []
if y["job"]["kind"] != "bridge_yaml" or s["job"]["kind"] != "bridge_summary":
    bad.append("kinds %s, %s" % (y["job"]["kind"], s["job"]["kind"]))
cy, cs = y["as_is"]["candidates"][0], s["as_is"]["candidates"][0]
if cy["config"] != cs["config"] or abs(cy["time"]["step_s"] - cs["time"]["step_s"]) > 1e-9 * cy["time"]["step_s"]:
    bad.append("YAML and summary differ: %s" % {k: (cy["config"].get(k), cs["config"].get(k))
                                                for k in cy["config"] if cy["config"].get(k) != cs["config"].get(k)})
for k in ("tp", "pp", "vpp", "cp", "ep", "etp", "mbs", "num_microbatches", "recompute",
          "distributed_optimizer", "sequence_parallel", "fsdp", "moe_dispatcher", "pipeline_split",
          "cuda_graphs", "offload_layers", "ep_overlap", "cross_entropy_fusion", "overlap_grad_reduce",
          "overlap_param_gather", "tp_comm_overlap", "recompute_modules"):
    if cy["config"].get(k) != want.get(k):
        bad.append("%s: advise %r, read back %r" % (k, want.get(k), cy["config"].get(k)))
m = own["model"] if "model" in own else own["as_is"]["model"]
ref = y["as_is"]["model"]
for k in ("layers", "hidden", "heads", "kv_heads", "ffn", "experts", "topk", "vocab"):
    if k in ref and m.get(k) != ref.get(k):
        bad.append("model from the YAML: %s %r, %s has %r" % (k, m.get(k), model, ref.get(k)))
if bad:
    print("FAIL: %s: %s" % (recipe, "; ".join(bad)))
    sys.exit(1)
print("ok - %s: YAML and summary read back as %s" % (recipe, cy["config"]["label"] if "label" in cy["config"] else
      "TP%(tp)d PP%(pp)d CP%(cp)d EP%(ep)d MBS%(mbs)d" % cy["config"]))
PYEOF
done <<'JOBS'
llama3_8b_pretrain_2gpu_h100_bf16_config | no | 8 | llama3-8b | --seq 8192 --gbs 64 --tp-comm-overlap off
llama3_8b_pretrain_2gpu_h100_bf16_config | no | 8 | llama3-8b | --seq 8192 --gbs 64 --tp 2 --tp-comm-overlap off
llama3_8b_pretrain_2gpu_h100_fp8cs_config | no | 8 | llama3-8b | --precision fp8 --seq 8192 --gbs 64
llama3_70b_pretrain_32gpu_h100_bf16_config | yes | 64 | llama3-70b | --seq 8192 --gbs 128
qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config | no | 32 | qwen3-30b-a3b | --seq 4096 --gbs 256
qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config | yes | 16 | qwen3-30b-a3b | --seq 4096 --gbs 512
llama3_8b_pretrain_2gpu_h100_bf16_config | no | 8 | llama3-8b | --seq 8192 --gbs 64 --fsdp on
JOBS
[ $fail -eq 0 ] && [ $n -eq 7 ] || { echo "FAIL ($n recipes)"; exit 1; }
echo "ok"
