#!/bin/sh
# SPDX-License-Identifier: MIT
# The precision-aware optimizer as a knob (docs/MODEL.md 4.8): advise prints
# --use-precision-aware-optimizer and the dtypes of its states for Megatron-LM
# (and as Bridge and verl overrides); check reads the printed launch script,
# Megatron-LM's arguments block of the same flags (tests/megatron/check_args.py
# --dump) and the overrides back into the same candidate, step and memory; its
# optimizer bytes per parameter are master + exp_avg + exp_avg_sq in their
# dtypes; the search takes it only where a candidate does not fit without it;
# Megatron-LM's checks refuse what it refuses.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
TEST=precaware
. tests/lib/clitest.sh
JOB="--model llama3-70b --gpus 64 --seq 8192 --gbs 128"

# 1. advise prints the flags, for each set of dtypes
# shellcheck disable=SC2086
"$M" advise $JOB --precision-aware-optimizer on --format megatron >"$T/a.flags" 2>"$T/a.err" ||
	no "advise --precision-aware-optimizer on exits $?: $(cat "$T/a.err")"
if grep -q -- "--use-precision-aware-optimizer" "$T/a.flags" &&
	grep -q -- "--exp-avg-dtype bf16" "$T/a.flags" && grep -q -- "--exp-avg-sq-dtype bf16" "$T/a.flags" &&
	! grep -q -- "--main-params-dtype" "$T/a.flags"
then ok "advise --format megatron: --use-precision-aware-optimizer with BF16 moments, FP32 master weights"
else no "advise --format megatron: $(tr '\n' ' ' <"$T/a.flags")"; fi
# shellcheck disable=SC2086
"$M" advise $JOB --exp-avg-dtype fp8 --exp-avg-sq-dtype bf16 --main-params-dtype fp16 \
	--format megatron >"$T/b.flags" 2>"$T/b.err" || no "advise with dtypes exits $?: $(cat "$T/b.err")"
if grep -q -- "--use-precision-aware-optimizer" "$T/b.flags" &&
	grep -q -- "--exp-avg-dtype fp8" "$T/b.flags" && grep -q -- "--exp-avg-sq-dtype bf16" "$T/b.flags" &&
	grep -q -- "--main-params-dtype fp16" "$T/b.flags"
then ok "advise --format megatron: a dtype pinned implies the optimizer and is printed"
else no "advise with dtypes: $(tr '\n' ' ' <"$T/b.flags")"; fi

# 2. check reads back each printed form of the top candidate: the same
# configuration, step and memory
rt() { # name, advise options
	n=$1; shift
	# shellcheck disable=SC2086
	"$M" advise $JOB "$@" --top 1 --json "$T/$n.json" >/dev/null 2>"$T/err" ||
		{ no "advise $n exits $?: $(cat "$T/err")"; return; }
	"$PY" - "$T/$n.json" "$T/$n" <<'PYEOF' || { no "$n: writing the job"; return; }
import json, shlex, sys
sys.path.insert(0, "tests/lib")
import bridge_notes
c = json.load(open(sys.argv[1]))["candidates"][0]
base = sys.argv[2]
with open(base + ".sh", "w") as f:
    f.write("#!/bin/bash\n")
    for k, v in c["env"].items():
        f.write("export %s=%s\n" % (k, shlex.quote(str(v))))
    f.write("torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py \\\n")
    f.write(" \\\n".join("  " + shlex.quote(a) for a in c["megatron_args"]) + "\n")
# Bridge: the notes naming what the recipe must set applied
bridge = bridge_notes.overrides(c)
with open(base + ".bridge", "w") as f:
    f.write("".join("# %s\n" % n for n in c["bridge_notes"]))
    f.write("".join(shlex.quote(o) + "\n" for o in bridge))
with open(base + ".verl", "w") as f:
    f.write("python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer \\\n")
    f.write(" \\\n".join("  " + shlex.quote(o) for o in c["verl_overrides"]) + "\n")
json.dump({"step": c["time"]["step_s"], "config": c["config"], "memory": c["memory"]},
          open(base + ".want", "w"))
PYEOF
	mkdir -p "$T/$n.logs"
	"$PY" tests/megatron/advice_sets.py "$n" "$T/$n.json" | sed 's/^\([^ ]*\) #\([0-9]*\) ::/\1 ::/' \
		>"$T/$n.sets"
	"$PY" tests/megatron/check_args.py --dump "$T/$n.logs" "$T/$n.sets" >"$T/$n.args" 2>&1 ||
		no "$n: Megatron-LM's validate_args refuses the flags: $(grep '^not ok' "$T/$n.args")"
	# verl takes the moments in fp32 or bf16 alone (its notes say so)
	v="$T/$n.verl"
	[ "$n" = on ] || v=
	for f in "$T/$n.sh" "$T/$n".logs/*.log "$T/$n.bridge" $v; do
		[ -f "$f" ] || { no "$n: no ${f##*/}"; continue; }
		"$M" check "$f" --model llama3-70b --gpus 64 --json "$T/c.json" >/dev/null 2>"$T/err" ||
			{ no "check $n ${f##*/} exits $?: $(cat "$T/err")"; continue; }
		"$PY" - "$T/c.json" "$T/$n.want" <<'PYEOF' >"$T/out" 2>&1
import json, sys
got = json.load(open(sys.argv[1]))["as_is"]["candidates"][0]
want = json.load(open(sys.argv[2]))
assert abs(got["time"]["step_s"] - want["step"]) <= 1e-6 * want["step"], (got["time"]["step_s"], want["step"])
diff = {k: (want["config"].get(k), got["config"].get(k))
        for k in set(want["config"]) | set(got["config"]) if want["config"].get(k) != got["config"].get(k)}
assert not diff, diff
for k in ("total_bytes", "optimizer_bytes", "grads_bytes", "transient_bytes"):
    assert abs(got["memory"][k] - want["memory"][k]) <= 1e-6 * want["memory"]["total_bytes"], k
print("%s, optimizer %.2f GiB" % (got["config"].get("exp_avg_dtype"), got["memory"]["optimizer_bytes"] / 2**30))
PYEOF
		if [ $? -eq 0 ]; then ok "check reads back $n's ${f##*/} ($(cat "$T/out"))"
		else no "check $n ${f##*/}: $(cat "$T/out")"; fi
	done
}
rt on --precision-aware-optimizer on
rt dtypes --exp-avg-dtype fp8 --exp-avg-sq-dtype bf16 --main-params-dtype fp16

# 3. the optimizer's bytes per parameter of the shard: 12 without it; master
# (FP32 as a remainder: 2; FP16: 2) + the two moments in their dtypes; the
# step's FP32 copies of each state below FP32
est() { # name, options
	n=$1; shift
	# shellcheck disable=SC2086
	"$M" estimate $JOB --tp 8 --pp 2 --dist-opt on "$@" --json - >"$T/$n.json" 2>"$T/err" ||
		no "estimate $n exits $?: $(cat "$T/err")"
}
est off
est bf16 --precision-aware-optimizer on
est fp32 --precision-aware-optimizer on --exp-avg-dtype fp32 --exp-avg-sq-dtype fp32
est low --exp-avg-dtype fp8 --exp-avg-sq-dtype fp8 --main-params-dtype fp16
"$PY" - "$T" >"$T/out" 2>&1 <<'PYEOF'
import json, sys
d = {n: json.load(open("%s/%s.json" % (sys.argv[1], n)))["candidates"][0]
     for n in ("off", "bf16", "fp32", "low")}
opt = {n: c["memory"]["optimizer_bytes"] for n, c in d.items()}
step = {n: c["time"]["step_s"] for n, c in d.items()}
for n, per in (("bf16", 6), ("fp32", 10), ("low", 4)):
    assert abs(opt[n] / opt["off"] - per / 12.0) < 1e-9, (n, opt)
    assert d[n]["memory"]["weights_bytes"] == d["off"]["memory"]["weights_bytes"]
assert d["bf16"]["config"]["precision_aware_optimizer"] is True
assert d["off"]["config"]["precision_aware_optimizer"] is False
# FusedAdam's step runs on FP32 copies of the BF16 moments: slower, not faster
assert step["bf16"] > step["off"] > step["fp32"], step
print("optimizer per GPU: %.2f GiB without, %.2f with BF16 moments (6/12), %.2f with FP32 ones "
      "(10/12), %.2f with FP8 moments and FP16 master weights (4/12)" %
      tuple(opt[n] / 2**30 for n in ("off", "bf16", "fp32", "low")))
PYEOF
if [ $? -eq 0 ]; then ok "estimate: $(cat "$T/out")"; else no "estimate: optimizer bytes: $(cat "$T/out")"; fi

# 4. searched only where memory binds: every ranked candidate with it does not
# fit without it
# shellcheck disable=SC2086
"$M" advise $JOB --top 10 --json "$T/s.json" >/dev/null 2>&1 || no "advise (searched) exits $?"
"$PY" - "$T/s.json" >"$T/pins" 2>&1 <<'PYEOF'
import json, sys
for c in json.load(open(sys.argv[1]))["candidates"]:
    k = c["config"]
    if not k.get("precision_aware_optimizer"):
        continue
    pins = ["--tp", k["tp"], "--pp", k["pp"], "--vpp", k["vpp"], "--cp", k["cp"], "--mbs", k["mbs"],
            "--recompute", k["recompute"], "--offload-layers", k["offload_layers"],
            "--cuda-graphs", "on" if k["cuda_graphs"] else "off",
            "--grad-reduce", k["grad_reduce_dtype"]]
    if k["cp"] > 1:
        pins += ["--cp-comm", k["cp_comm_type"]]
    if k["recompute"] == "full":
        pins += ["--recompute-layers", k["recompute_layers"], "--recompute-method", k["recompute_method"]]
    if k["recompute"] == "selective":
        pins += ["--recompute-modules", ",".join(k["recompute_modules"])]
    if k["pipeline_split"] == "layout":
        pins += ["--pp-layout", k["pipeline_layout"]]
    print(" ".join(str(p) for p in pins))
PYEOF
np=0
while read -r pins; do
	np=$((np + 1))
	# shellcheck disable=SC2086
	"$M" estimate $JOB $pins --precision-aware-optimizer off --json - >"$T/e.json" 2>"$T/err"
	rc=$? # 1: it does not fit
	[ $rc -le 1 ] || { no "estimate without it: $pins: exit $rc: $(cat "$T/err")"; continue; }
	"$PY" -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["candidates"][0]["feasible"])' \
		"$T/e.json" || no "searched with the precision-aware optimizer though it fits without: $pins"
done <"$T/pins"
[ "$np" -gt 0 ] && ok "advise: $np of the 10 ranked take the precision-aware optimizer, none that fits without it" ||
	no "advise: no ranked candidate takes the precision-aware optimizer"

# 5. Megatron-LM's checks
refused() { # message, options
	want=$1; shift
	# shellcheck disable=SC2086
	"$M" estimate $JOB "$@" >"$T/r.out" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$want" "$T/r.out"; then ok "refused: $* ($want)"
	else no "$*: exit $rc: $(cat "$T/r.out")"; fi
}
refused "only supported with distributed optimizer" --precision-aware-optimizer on --dist-opt off
refused "optimizer_config.py:468-480" --precision-aware-optimizer off --exp-avg-dtype bf16
refused "keeps its states in FP32" --optimizer-cpu-offload 0.5 --exp-avg-dtype bf16
refused "Megatron-LM core_v0.13.0 or newer" --precision-aware-optimizer on --megatron-version core_v0.12.0
refused "expected fp32 or fp16" --main-params-dtype bf16

[ $fail -eq 0 ] || exit 1
echo "ok: the precision-aware optimizer is pinned, printed, read back and searched as Megatron-Core runs it"
