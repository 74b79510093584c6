#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune tune end to end with the launcher stand-in
# (tests/validate/standin.sh), whose step time is a stated function of the
# configuration that disagrees with megatune's model (tensor parallelism
# costs 25% per extra rank there): tune advises, runs 3 candidates a round,
# corrects and re-ranks, and must converge to the stand-in's best of the
# whole list in fewer runs than validating the whole list, and print it
# with its flags (that candidate's in the advice) and its gain over the
# first prediction's top pick.
# Usage: tests/cli/tune-standin.sh   (MEGATUNE: the binary)
set -u
cd "$(dirname "$0")/../.." || exit 2
M=${MEGATUNE:-build/megatune}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/tmp}/tune.XXXXXX") || exit 2
trap 'rm -rf "$t"' EXIT INT TERM
fail=0
# ranked by step time alone (--prefer-headroom 0), without FSDP and the
# precision-aware optimizer (which the stand-in cannot tell apart): the model's
# top pick is then not the stand-in's best, which tune must find
"$M" tune --model llama3-8b --cluster dgx-h100 --gpus 8 --seq 4096 --gbs 64 --no-rules \
	--prefer-headroom 0 --fsdp off --precision-aware-optimizer off \
	--launch 'sh tests/validate/standin.sh {name} {iters} {dir} {megatron_args}' \
	--iters 8 --warmup 2 --timeout 20 --dir "$t/run" --report "$t/tune.html" >"$t/out" 2>&1
rc=$?
[ $rc -eq 0 ] && echo "ok - tune exits 0" || { echo "not ok - tune exit $rc"; cat "$t/out"; exit 1; }
"$PY" - "$t/run/advice.json" "$t/run/validation.json" "$t/out" <<'PYEOF' || fail=1
import json, sys, re, shlex
adv = json.load(open(sys.argv[1])); val = json.load(open(sys.argv[2])); out = open(sys.argv[3]).read()
bad = 0
def check(cond, what):
    global bad
    print(("ok - " if cond else "not ok - ") + what)
    bad |= not cond
def standin(args):  # the stand-in's stated function (tests/validate/standin.sh)
    v = {"--tensor-model-parallel-size": 1, "--context-parallel-size": 1, "--micro-batch-size": 1,
         "--cpu-offloading-num-layers": 0}
    rc = 0
    for i, a in enumerate(args):
        if a in v: v[a] = int(args[i + 1])
        if a == "--recompute-granularity": rc = 1
    return 3.0 * (1 + 0.25 * (v["--tensor-model-parallel-size"] - 1)) * \
        (1 + 0.03 * (v["--context-parallel-size"] - 1)) * (1 + 0.10 * rc) * \
        (1 + 0.01 * v["--cpu-offloading-num-layers"]) * (1 + 0.02 / v["--micro-batch-size"])
truth = [standin(c["megatron_args"]) for c in adv["candidates"]]
best = min(range(len(truth)), key=lambda i: truth[i])
n = len(adv["candidates"])
check(n == 16, "advise kept the 16-candidate list")
check(best != 0, "the stand-in's best (rank %d) is not the predicted top" % (best + 1))
ran = [c for c in val["candidates"] if c["status"] != "not_run"]
check(len(ran) < n, "tune ran %d candidates, fewer than the %d of the list" % (len(ran), n))
top = val["summary"]["measured_ranking"][0]
check(top.startswith("c%d-" % (best + 1)), "tune's measured best %s is the stand-in's best c%d" % (top, best + 1))
m = re.search(r"^measured best: (\S+), ([\d.]+) s per step", out, re.M)
check(m and m.group(1) == top, "tune prints the measured best")
check(abs(float(m.group(2)) - truth[best]) / truth[best] < 0.02, "its step is the stand-in's %.4f s" % truth[best])
g = re.search(r"the measured best is ([\d.]+)% faster", out)
want = 100 * (truth[0] - truth[best]) / truth[0]
check(g and abs(float(g.group(1)) - want) < 1.5, "gain over the first top pick %s%% (stand-in: %.1f%%)" % (g and g.group(1), want))
# the flags printed are the measured best's, from the advice, shell-quoted
def printed(title):
    f = re.search(r"^" + re.escape(title) + r"\n  (.*)$", out, re.M)
    return shlex.split(f.group(1)) if f else None
bc = adv["candidates"][best]
env = ["%s=%s" % kv for kv in (bc.get("env") or {}).items()]
check(printed("Megatron-LM arguments:") == bc["megatron_args"] and
      printed("Megatron-Bridge overrides:") == bc["bridge_overrides"] and
      printed("environment:") == (env or None) and
      bc["megatron_args"] != adv["candidates"][0]["megatron_args"], "tune prints the flags")
check(re.search(r"round 2: ran", out) is not None, "tune ran more than one round")
sys.exit(bad)
PYEOF
grep -q '<section id="validation">' "$t/tune.html" && echo "ok - tune --report" || { echo "not ok - tune --report"; fail=1; }

# one round, then --resume: the same best, the same 9 runs, none run twice
TPL='sh tests/validate/standin.sh {name} {iters} {dir} {megatron_args}'
for extra in "--max-rounds 1" "--resume"; do
	# shellcheck disable=SC2086
	"$M" tune --model llama3-8b --cluster dgx-h100 --gpus 8 --seq 4096 --gbs 64 --no-rules \
		--prefer-headroom 0 --fsdp off --precision-aware-optimizer off --launch "$TPL" --iters 8 \
		--warmup 2 --timeout 20 --dir "$t/r" $extra >"$t/r.out" 2>&1 ||
		{ echo "not ok - tune $extra: exit $?"; cat "$t/r.out"; fail=1; }
done
best=$(sed -n 's/^measured best: \([^,]*\),.*/\1/p' "$t/r.out")
want=$(sed -n 's/^measured best: \([^,]*\),.*/\1/p' "$t/out")
[ -n "$best" ] && [ "$best" = "$want" ] && echo "ok - tune --resume finds $best" ||
	{ echo "not ok - tune --resume finds '$best', '$want' expected"; fail=1; }
n=$(wc -l <"$t/r/standin-runs")
d=$(sort "$t/r/standin-runs" | uniq -d)
[ "$n" -eq 9 ] && [ -z "$d" ] && echo "ok - tune --resume: 9 runs in all, none twice" ||
	{ echo "not ok - tune --resume: $n runs, run twice: $d"; fail=1; }
exit $fail
