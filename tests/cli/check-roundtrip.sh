#!/bin/sh
# SPDX-License-Identifier: MIT
# check reads back what advise prints: for the top-10 candidates of twelve
# jobs (dense, MoE, MLA, long sequence, FP8, FP4, B200, GB200, pipeline
# layouts, offload, Megatron-LM's own layers), each candidate's Megatron-LM arguments and environment, written as
# a launch script under torchrun, are read by `megatune check` into the same
# configuration and the same predicted step time (to 1e-6); and the same
# candidates' arguments blocks, as Megatron-LM's own _print_args prints them at
# the end of validate_args (tests/megatron/check_args.py --dump, the pinned
# Megatron-LM copy under tests/megatron/upstream), read back the same way;
# and the same candidates' Megatron-Bridge overrides (with the notes that
# name what the recipe must set applied, as a user applies them) and verl
# Hydra overrides, read with the job's --model and --gpus.  Two jobs run on
# Megatron-LM's own layers (--transformer-impl local, fusions turned off):
# their verl keys, which cannot say so, carry the note instead.
# Exit 0 pass, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
MT=${BUILD:-build}/megatune
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/check-rt.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
n=0
while read -r name cluster gpus job; do
	[ -n "$name" ] || continue
	# shellcheck disable=SC2086
	"$MT" advise --cluster "$cluster" --gpus "$gpus" $job --top 10 --json "$T/$name.json" \
		>/dev/null 2>"$T/err" || { echo "FAIL: advise $name: $(cat "$T/err")"; fail=1; continue; }
	"$PY" - "$T/$name.json" "$T/$name" "$gpus" <<'PYEOF' || { fail=1; continue; }
import json, shlex, sys
sys.path.insert(0, "tests/lib")
import bridge_notes
doc = json.load(open(sys.argv[1]))
for c in doc["candidates"]:
    with open("%s.%d.sh" % (sys.argv[2], c["rank"]), "w") as f:
        f.write("#!/bin/bash\n")
        for k, v in c["env"].items():
            f.write("export %s=%s\n" % (k, shlex.quote(str(v))))
        f.write("GPUS_PER_NODE=%d\nNNODES=%d\n" % (min(8, int(sys.argv[3])), max(1, int(sys.argv[3]) // 8)))
        f.write("torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NNODES \\\n"
                "  pretrain_gpt.py \\\n")
        f.write(" \\\n".join("  " + shlex.quote(a) for a in c["megatron_args"]) + "\n")
    with open("%s.%d.want" % (sys.argv[2], c["rank"]), "w") as f:
        json.dump({"step": c["time"]["step_s"], "config": c["config"]}, f)
    # Bridge: the notes about the recipe's CommOverlapConfig and precision
    # recipe applied as the fields they name
    bridge = bridge_notes.overrides(c)
    with open("%s.%d.bridge" % (sys.argv[2], c["rank"]), "w") as f:
        f.write("".join("# %s\n" % n for n in c["bridge_notes"]))
        f.write("".join(shlex.quote(o) + "\n" for o in bridge))
    # verl cannot run full-iteration graphs (Megatron-LM's training loop
    # wraps them) nor Megatron-LM's own layers (it builds Transformer
    # Engine's): its keys leave them out with a note, a different job
    local = doc["job"].get("transformer_impl") == "local"
    if local and not any("Megatron-LM's own layers (--transformer-impl local) and their fusions "
                         "turned off are left out" in n for n in c["verl_notes"]):
        print("FAIL: %s.%d: verl notes do not say the local layers are left out" %
              (sys.argv[2], c["rank"]))
        sys.exit(1)
    if c["config"].get("full_iteration_graphs"):
        if not any("full-iteration CUDA graphs are left out" in n for n in c["verl_notes"]):
            print("FAIL: %s.%d: verl notes do not say full-iteration graphs are left out" %
                  (sys.argv[2], c["rank"]))
            sys.exit(1)
        continue
    if local:
        continue
    with open("%s.%d.verl" % (sys.argv[2], c["rank"]), "w") as f:
        f.write("".join("# %s\n" % n for n in c["verl_notes"]))
        f.write("python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \\\n")
        f.write(" \\\n".join("  " + shlex.quote(o) for o in c["verl_overrides"]) + "\n")
PYEOF
	# the arguments blocks Megatron-LM prints for the same flag sets
	mkdir -p "$T/$name.logs"
	"$PY" tests/megatron/advice_sets.py "$name" "$T/$name.json" |
		sed 's/^\([^ ]*\) #\([0-9]*\) ::/\1.\2 ::/' >"$T/$name.sets"
	"$PY" tests/megatron/check_args.py --dump "$T/$name.logs" "$T/$name.sets" >"$T/$name.out" 2>&1 ||
		{ echo "FAIL: Megatron-LM refuses flag sets of $name:"; grep '^not ok' "$T/$name.out"; fail=1; }
	model=$(echo "$job" | sed -n 's/.*--model \([^ ]*\).*/\1/p')
	for s in "$T/$name".*.sh "$T/$name".logs/*.log "$T/$name".*.bridge "$T/$name".*.verl; do
		[ -f "$s" ] || continue
		set --
		case $s in
		*.sh) r=${s%.sh} ;;
		*.bridge) r=${s%.bridge}.bridge; set -- --model "$model" --gpus "$gpus" ;;
		*.verl) r=${s%.verl}.verl; set -- --model "$model" --gpus "$gpus" ;;
		*) r=$T/$name.${s##*.logs/$name.}; r=${r%.log}.block ;;
		esac
		n=$((n + 1))
		"$MT" check "$s" --cluster "$cluster" "$@" --json "$r.check.json" >/dev/null 2>"$T/err" ||
			{ echo "FAIL: check $name ${r##*/}: $(cat "$T/err")"; fail=1; continue; }
		w=${r%.block}
		w=${w%.bridge}
		w=${w%.verl}
		"$PY" - "$r.check.json" "$w.want" "${r##*/}" <<'PYEOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
got = d["as_is"]["candidates"][0]
if abs(got["time"]["step_s"] - want["step"]) > 1e-6 * want["step"] or got["config"] != want["config"]:
    diff = {k: (want["config"].get(k), got["config"].get(k)) for k in set(want["config"]) | set(got["config"])
            if want["config"].get(k) != got["config"].get(k)}
    print("FAIL: %s: advise %.6g s, check reads %.6g s; config (advise, check): %s" %
          (sys.argv[3], want["step"], got["time"]["step_s"], diff))
    sys.exit(1)
if d["job"]["kind"] == "script" and d["job"]["not_modelled"]:
    print("FAIL: %s: flags advise prints are not modelled: %s" % (sys.argv[3], d["job"]["not_modelled"]))
    sys.exit(1)
PYEOF
	done
done <<'JOBS'
llama70b dgx-h100 64 --model llama3-70b --seq 8192 --gbs 128
llama8b-fp8 dgx-h100 16 --model llama3-8b --seq 8192 --gbs 256 --precision fp8 --fp8-recipe blockwise
long dgx-h100 64 --model llama3-8b --seq 131072 --gbs 16
qwen30b dgx-h100 16 --model qwen3-30b-a3b --seq 4096 --gbs 512
mixtral dgx-h200 32 --model mixtral-8x7b --seq 4096 --gbs 256 --moe-balance forced
dsv3 dgx-b200 256 --model deepseek-v3 --seq 4096 --gbs 1024 --precision fp8 --fp8-recipe mxfp8
qwen235b gb200-nvl72 144 --model qwen3-235b-a22b --seq 4096 --gbs 1152 --precision fp8 --fp8-recipe mxfp8
gpt3 dgx-a100-80g 64 --model gpt3-5b --seq 2048 --gbs 512
l405b gb200-nvl72 576 --model llama3.1-405b --seq 8192 --gbs 576 --precision nvfp4
drop dgx-b200 8 --model qwen3-30b-a3b --seq 4096 --gbs 256 --moe-balance drop:1.25
local1 dgx-h100 1 --model tests/fixtures/models/campaign-llama-350m.json --seq 1024 --gbs 16 --transformer-impl local --fusions-off all --grad-accum-fusion off
local8 dgx-h100 8 --model llama3-8b --seq 4096 --gbs 64 --transformer-impl local --fusions-off rope,bias_dropout
JOBS
[ $fail -eq 0 ] && [ $n -ge 360 ] || { echo "FAIL ($n scripts, logs and overrides read back)"; exit 1; }
echo "ok: $n launch scripts, arguments blocks, Bridge and verl overrides of the top candidates of 12 jobs read back to the same configuration and step time"
