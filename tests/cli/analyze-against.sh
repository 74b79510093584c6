#!/bin/sh
# SPDX-License-Identifier: MIT
# `megatune analyze --against` puts the trace beside the model, and each side
# is what it says: the measured classes are the analysis's own figures, the
# model's step is the one advise and check predict for the same
# configuration, the model's computation is the sum of its terms, and the
# term named furthest off is the one with the largest gap.
# Exit 0 pass, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
MT=${BUILD:-build}/megatune
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/analyze-against.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
DS=tests/fixtures/traces/deepseek_profile_data/train.json.gz
JOB=tests/fixtures/jobs/deepseek-v3-ep64-h800.args
MINI=tests/fixtures/traces/small/megatune-mini.jsonl
ADV=tests/fixtures/report/advice-llama3-8b.json

no() { echo "not ok - $*"; fail=1; }

# the DeepSeek-V3 trace, 4 MoE layers forward and backward
if ! "$MT" analyze --quiet --json "$T/ds.json" --against "$JOB" --gpus 2048 --layers 4 "$DS" \
	2>"$T/err"; then
	no "DeepSeek against: $(cat "$T/err")"
else
	$PY - "$T/ds.json" <<'PYEOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
r = d["ranks"][0]
a = d["against"]
c = a["classes"]
bad = []
def near(x, y, tol=2e-3):
    return abs(x - y) <= tol * max(1.0, abs(y))
cat = {k: v["time_us"] / 1e3 for k, v in r["categories"].items()}
if not near(c["gemm"]["measured_ms"], cat["gemm"]):
    bad.append("measured gemm %s != categories.gemm %s" % (c["gemm"]["measured_ms"], cat["gemm"]))
elem = sum(cat.get(k, 0) for k in ("elementwise", "reduction", "memset", "other"))
if not near(c["elementwise"]["measured_ms"], elem):
    bad.append("measured element-wise %s != %s" % (c["elementwise"]["measured_ms"], elem))
if not near(c["comm_ep"]["measured_ms"], r["comm_by_kind"]["custom"]["time_us"] / 1e3):
    bad.append("measured expert dispatch is not the DeepEP kernels' time")
if not near(c["window"]["measured_ms"], r["total_us"] / 1e3):
    bad.append("measured window is not the trace's")
m = {k: v["model_ms"] for k, v in c.items()}
s = m["gemm"] + m["attention"] + m["elementwise"] + m["recompute"] + m["kernel_gaps"]
if not near(m["computation"], s):
    bad.append("model computation %s != sum of its terms %s" % (m["computation"], s))
if not m["window"] >= m["computation"]:
    bad.append("model window below its computation")
if not (m["comm_ep"] > 0 and m["exposed_comm"] <= m["comm"] + 1e-9):
    bad.append("model EP communication missing or exposed above the total")
cand = ["gemm", "attention", "elementwise", "comm_ep", "exposed_comm", "idle"]
far = max(cand, key=lambda k: abs(c[k]["measured_ms"] - c[k]["model_ms"]))
if a["furthest_off"] != far:
    bad.append("furthest_off %s, the largest gap is %s" % (a["furthest_off"], far))
if (a["unit"], a["layers"], a["layer_kind"]) != ("layers", 4, "moe"):
    bad.append("unit %s" % a)
for b in bad:
    print("not ok - DeepSeek against: " + b)
sys.exit(1 if bad else 0)
PYEOF
fi

# a step: the model's window is the step advise predicted for candidate K
for k in 1 2; do
	want=$($PY -c "import json,sys; print('%.3f' % (json.load(open(sys.argv[1]))['candidates'][int(sys.argv[2]) - 1]['time']['step_s'] * 1e3))" "$ADV" $k)
	got=$("$MT" analyze --quiet --json - --step-range iteration --against "$ADV" --candidate $k "$MINI" |
		$PY -c "import json,sys; print('%.3f' % json.load(sys.stdin)['against']['classes']['window']['model_ms'])")
	# the advice keeps 6 significant digits
	$PY -c "import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 1e-5 * float(sys.argv[2]))" \
		"$got" "$want" || no "advice candidate $k: model window $got ms, advise predicted $want ms"
done

# ... and the step check predicts for the same job
want=$("$MT" check tests/fixtures/jobs/llama3-8b.args --gpus 8 --json - 2>/dev/null |
	$PY -c "import json,sys; print('%.2f' % (json.load(sys.stdin)['as_is']['candidates'][0]['time']['step_s'] * 1e3))")
got=$("$MT" analyze --quiet --json - --step-range iteration --against tests/fixtures/jobs/llama3-8b.args \
	--gpus 8 "$MINI" | $PY -c "import json,sys; print('%.2f' % json.load(sys.stdin)['against']['classes']['window']['model_ms'])")
[ -n "$want" ] && $PY -c "import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 1e-5 * float(sys.argv[2]))" \
	"$got" "$want" || no "job: model window $got ms, check predicted $want ms"

# nothing written when the comparison fails
"$MT" analyze --json "$T/none.json" --against "$JOB" --gpus 2048 --layers 999 "$DS" >/dev/null 2>&1
[ $? -eq 2 ] || no "--layers 999: exit 2 expected"
[ -e "$T/none.json" ] && no "--layers 999 wrote its JSON"

[ $fail -eq 0 ] && echo "ok - analyze --against"
exit $fail
