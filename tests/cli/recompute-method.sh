#!/bin/sh
# SPDX-License-Identifier: MIT
# Full recomputation as Megatron-Core runs each method (docs/MODEL.md 4.4):
# --recompute-method uniform --recompute-num-layers N recomputes every layer,
# in groups of N whose input alone is kept; block recomputes the first N
# layers of each model chunk and keeps the rest whole.  estimate, check (a
# script, a Bridge YAML, verl overrides) and the printed flags keep the
# method; the Megatron-LM arguments advise prints read back as the same job.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
TEST=rcmethod
. tests/lib/clitest.sh
JOB="--model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2 --recompute full"

est() { # name, options: the estimate's JSON into $T/name.json
	n=$1; shift
	# shellcheck disable=SC2086
	"$M" estimate $JOB "$@" --json - >"$T/$n.json" 2>"$T/$n.err" || no "estimate $* exits $?"
}
est u1 --recompute-method uniform --recompute-layers 1
est u4 --recompute-method uniform --recompute-layers 4
est u40 --recompute-method uniform --recompute-layers 40
est ball --recompute-layers all
est b1 --recompute-method block --recompute-layers 1
est b1d --recompute-layers 1
"$PY" - "$T" >"$T/out" 2>&1 <<'PY'
import json, sys
d = {n: json.load(open("%s/%s.json" % (sys.argv[1], n)))["candidates"][0]
     for n in ("u1", "u4", "u40", "ball", "b1", "b1d")}
step = {n: c["time"]["step_s"] for n, c in d.items()}
act = {n: c["memory"]["activations_bytes"] for n, c in d.items()}
meth = {n: c["config"].get("recompute_method") for n, c in d.items()}
# the method is kept, and block is the default
assert meth["u1"] == "uniform" and meth["b1"] == "block" and meth["b1d"] == "block", meth
# uniform recomputes every layer whatever the group: the time of block all
for n in ("u1", "u4", "u40"):
    assert abs(step[n] - step["ball"]) < 1e-9, (n, step)
# groups of one keep every layer's input: block all exactly
assert abs(act["u1"] - act["ball"]) < 1, act
# block 1 recomputes one layer of 40 per chunk: much faster, far more memory
assert step["b1"] < 0.85 * step["u1"], step
assert act["b1"] > 5 * act["u1"], act
# larger groups keep fewer inputs; the whole chunk as one group rematerialises
# 40 layers at once in backward
assert act["u4"] < act["u1"] < act["u40"], act
print("step uniform %.3f s, block 1 %.3f s; activations uniform 1/4/40 %.2f/%.2f/%.2f GiB, "
      "block 1 %.2f GiB" % (step["u1"], step["b1"], act["u1"] / 2**30, act["u4"] / 2**30,
                            act["u40"] / 2**30, act["b1"] / 2**30))
PY
if [ $? -eq 0 ]; then ok "estimate: uniform and block as Megatron-Core runs them ($(cat "$T/out"))"
else no "estimate: uniform and block"; cat "$T/out"; fi

# the method applies to full recomputation only, as Megatron-LM checks
# shellcheck disable=SC2086
"$M" estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --recompute selective \
	--recompute-method uniform >"$T/sel.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "recompute-method uniform applies to --recompute full only" "$T/sel.out"
then ok "selective with a method is refused"
else no "selective with a method: exit $rc: $(cat "$T/sel.out")"; fi

# check: the same script with uniform and with block
U=tests/fixtures/jobs/llama3-70b-overlaps-off.sh
sed 's/--recompute-method uniform/--recompute-method block/' "$U" >"$T/block.sh"
"$M" check "$U" --json "$T/cu.json" >"$T/cu.out" 2>&1 || no "check uniform exits $?"
"$M" check "$T/block.sh" --json "$T/cb.json" >"$T/cb.out" 2>&1 || no "check block exits $?"
"$PY" - "$T/cu.json" "$T/cb.json" >"$T/out" 2>&1 <<'PY'
import json, sys
u, b = (json.load(open(f))["as_is"]["candidates"][0] for f in sys.argv[1:])
assert u["config"]["recompute_method"] == "uniform", u["config"]
assert b["config"]["recompute_method"] == "block", b["config"]
su, sb = u["time"]["step_s"], b["time"]["step_s"]
mu, mb = u["memory"]["total_bytes"], b["memory"]["total_bytes"]
assert su > 1.2 * sb, (su, sb)           # every layer against one layer per chunk
assert mb - mu > 10 * 2**30, (mu, mb)    # 39 layers' activations a chunk kept
print("uniform %.2f s %.1f GiB, block %.2f s %.1f GiB" % (su, mu / 2**30, sb, mb / 2**30))
PY
if [ $? -eq 0 ]; then ok "check: uniform and block differ as they run ($(cat "$T/out"))"
else no "check: uniform and block"; cat "$T/out"; fi
grep -q "recompute full (every layer, in groups of 1)" "$T/cu.out" &&
	grep -q "recompute full (1 layer per model chunk)" "$T/cb.out" &&
	ok "check: the text names the method" || no "check: the text names the method"

# the Bridge YAML and verl overrides keep theirs (both run uniform 1)
for f in "tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml --gpus 8" \
	"tests/fixtures/jobs/verl-qwen3-30b-grpo.sh"; do
	# shellcheck disable=SC2086
	if "$M" check $f 2>&1 | grep -q "recompute full (every layer, in groups of 1)"
	then ok "check ${f%% *}: uniform read"
	else no "check ${f%% *}: uniform read"; fi
done

# printed and read back: advise pinned to uniform 2 prints it for Megatron-LM
# and Bridge, and check of the printed arguments times the same candidate
# shellcheck disable=SC2086
"$M" advise $JOB --recompute-method uniform --recompute-layers 2 --top 1 --format megatron \
	>"$T/u2.sh" 2>"$T/u2.err" || no "advise --format megatron exits $?"
grep -q -- "--recompute-method uniform" "$T/u2.sh" && grep -q -- "--recompute-num-layers 2" "$T/u2.sh" &&
	ok "advise prints --recompute-method uniform --recompute-num-layers 2" ||
	no "advise prints the method: $(grep recompute "$T/u2.sh")"
# shellcheck disable=SC2086
"$M" advise $JOB --recompute-method uniform --recompute-layers 2 --top 1 --format bridge \
	>"$T/u2.br" 2>&1 || no "advise --format bridge exits $?"
grep -q "model.recompute_method=uniform" "$T/u2.br" &&
	ok "advise prints model.recompute_method=uniform for Bridge" ||
	no "Bridge override: $(grep recompute "$T/u2.br")"
# shellcheck disable=SC2086
"$M" advise $JOB --recompute-method uniform --recompute-layers 2 --top 1 --json "$T/u2.json" \
	>/dev/null 2>&1 || no "advise --json exits $?"
"$M" check "$T/u2.sh" --gpus 64 --json "$T/u2c.json" >"$T/u2c.out" 2>&1 || no "check of the printed job exits $?"
"$PY" - "$T/u2.json" "$T/u2c.json" >"$T/out" 2>&1 <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["candidates"][0]
c = json.load(open(sys.argv[2]))["as_is"]["candidates"][0]
assert c["config"]["recompute_method"] == "uniform" and c["config"]["recompute_layers"] == 2, c["config"]
assert abs(a["time"]["step_s"] - c["time"]["step_s"]) <= 1e-3 * a["time"]["step_s"], \
    (a["time"]["step_s"], c["time"]["step_s"])
print("%.3f s both" % a["time"]["step_s"])
PY
if [ $? -eq 0 ]; then ok "round trip: the printed uniform job times as advised ($(cat "$T/out"))"
else no "round trip"; cat "$T/out"; fi
exit $fail
