#!/bin/sh
# SPDX-License-Identifier: MIT
# Megatron-LM's own layers timed as they run (docs/MODEL.md 4.11 and 11.1):
# the GPU campaign's two recorded runs of a 317M Llama with
# --transformer-impl local and every --no-*-fusion flag on one H100
# (tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs):
#   - `check` predicts each measured step within 20% (|measured / predicted
#     - 1|) on the bundled dgx-h100 and on the campaign's own calibrated
#     profile, and the memory within 10% of the log's peak: its "max
#     reserved" (what the caching allocator held at most, the figure `check`
#     reads), against the predicted peak less the CUDA context, which the
#     allocator does not hold;
#   - a correction fitted from c1 alone (`check --validation`, then
#     `calibrate --from-validation`) predicts c2 within 10%, on dgx-h100 and
#     on the campaign's own calibrated profile.
# Exit 0 pass, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
MT=${MEGATUNE:-${BUILD:-build}/megatune}
G=tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2
T=$(mktemp -d "${TMPDIR:-/tmp}/check-local.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0

# within FILE.json LIMIT [MEMLIMIT]: the measured step (and memory) of a
# check's --json against its prediction; prints the figures
within() {
	/usr/bin/python3 - "$@" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["measured"]
err = m["step_s"] / m["predicted_step_s"] - 1
line = "%s: step %.3f s measured, %.3f s predicted (%+.1f%%)" % (
    sys.argv[1].rsplit("/", 1)[-1], m["step_s"], m["predicted_step_s"], 100 * err)
ok = abs(err) <= float(sys.argv[2])
if len(sys.argv) > 3:  # the rank's report beside check's prediction for its stage
    r = m["memory_ranks"][0]
    for k in ("max_allocated", "max_reserved"):
        merr = r[k + "_gib"] / r["predicted_" + k + "_gib"] - 1
        line += "; %s %.2f GiB measured, %.2f GiB predicted (%+.1f%%)" % (
            k.replace("_", " "), r[k + "_gib"], r["predicted_" + k + "_gib"], 100 * merr)
        ok = ok and abs(merr) <= float(sys.argv[3])
print(("" if ok else "FAIL: ") + line)
sys.exit(0 if ok else 1)
PYEOF
}

for p in dgx-h100 "$G/calibrated.json"; do
	n=$(basename "$p" .json)
	for c in c1-tp1-pp1-mbs16 c2-tp1-pp1-mbs8; do
		"$MT" check "$G/megatron-logs/$c.log" --cluster "$p" --json "$T/$c-$n.json" \
			>"$T/$c-$n.out" 2>&1 ||
			{ echo "FAIL: check $c on $n: exit $?: $(head -3 "$T/$c-$n.out")"; fail=1; continue; }
		within "$T/$c-$n.json" 0.20 0.10 || fail=1
		# the local layers are timed, not named as timed fused
		grep -q "Megatron-LM's own layers (--transformer-impl local): timed as the PyTorch eager kernels" \
			"$T/$c-$n.out" && ! grep -q "timed as fused" "$T/$c-$n.out" ||
			{ echo "FAIL: check $c on $n does not say its own layers are timed as eager kernels"
			  fail=1; }
	done
done

"$MT" check "$G/megatron-logs/c1-tp1-pp1-mbs16.log" --cluster dgx-h100 --validation "$T/v1.json" \
	>"$T/v1.out" 2>&1 || { echo "FAIL: check c1 --validation: exit $?"; fail=1; }
grep -q '"transformer_impl":[[:space:]]*"local"' "$T/v1.advice.json" ||
	{ echo "FAIL: c1's record does not carry its transformer implementation"; fail=1; }
for p in dgx-h100 "$G/calibrated.json"; do
	n=$(basename "$p" .json)
	"$MT" calibrate --from-validation "$T/v1.json" --cluster "$p" -o "$T/$n-c1.json" \
		>"$T/$n-cal.out" 2>&1 || { echo "FAIL: calibrate from c1 on $n: exit $?"; fail=1; continue; }
	"$MT" check "$G/megatron-logs/c2-tp1-pp1-mbs8.log" --cluster "$T/$n-c1.json" \
		--json "$T/c2-from-c1-$n.json" >/dev/null 2>&1 ||
		{ echo "FAIL: check c2 on the profile corrected from c1 ($n): exit $?"; fail=1; continue; }
	within "$T/c2-from-c1-$n.json" 0.10 || fail=1
done
[ $fail -eq 0 ] || exit 1
echo "ok: c1 and c2 of the campaign predicted within 20% on dgx-h100 and the calibrated profile (memory within 10%), c2 within 10% from c1's correction"
