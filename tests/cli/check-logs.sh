#!/bin/sh
# SPDX-License-Identifier: MIT
# Every real log of tests/fixtures/megatron-logs/ (none holds Megatron-LM's
# arguments block) is refused by `megatune check` with exit 2 and the reason,
# never a crash or a job made up; a job piped in on standard input (what
# `advise --format megatron` prints) is read as a file would be; and a log
# with the arguments block gives measured beside predicted, its failure named
# with its line, and a megatune.validation/1 record calibrate reads; and
# all of them at once, a record per log with a run; a log whose last line is
# cut says so (not NaN), a cut arguments block is refused naming its line.
# Exit 0 pass, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
MT=${BUILD:-build}/megatune
T=$(mktemp -d "${TMPDIR:-/tmp}/check-logs.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
n=0
for f in tests/fixtures/megatron-logs/*.log; do
	n=$((n + 1))
	"$MT" check "$f" --gpus 8 >"$T/out" 2>&1
	rc=$?
	if [ $rc -ne 2 ] || ! grep -q "^megatune check: error: $f: a training log without Megatron-LM's arguments block or Megatron-Bridge's configuration summary: no job in it" "$T/out"; then
		echo "FAIL: $f: exit $rc: $(head -2 "$T/out")"
		fail=1
	fi
done
"$MT" advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --format megatron 2>/dev/null |
	"$MT" check - --gpus 16 >"$T/pipe" 2>&1 || { echo "FAIL: check - exit $?: $(head -3 "$T/pipe")"; fail=1; }
grep -q '^megatune check: <stdin> (arguments)' "$T/pipe" &&
	grep -q 'best overall: the job is within 0.5% of the best megatune finds' "$T/pipe" ||
	{ echo "FAIL: the piped advice is not read back as the best: $(head -5 "$T/pipe")"; fail=1; }
[ $n -ge 20 ] || { echo "FAIL: only $n real logs"; fail=1; }

# a log with the job's arguments block: a failure is named with its line, and
# the run becomes a megatune.validation/1 record that calibrate reads
run=tests/fixtures/jobs/llama3-8b-run.log
end=$(grep -n "end of arguments" "$run" | cut -d: -f1)
{ head -n "$end" "$run"; echo "[default0]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"; } >"$T/oom.log"
"$MT" check "$T/oom.log" >"$T/oom.out" 2>&1 || { echo "FAIL: check of an OOM log: exit $?"; fail=1; }
grep -q "status: oom (oom at line $((end + 1)) of the log" "$T/oom.out" &&
	grep -q "line $((end + 1)): \[default0\]:torch.OutOfMemoryError" "$T/oom.out" ||
	{ echo "FAIL: the OOM is not named with its line: $(grep -A3 '^measured' "$T/oom.out")"; fail=1; }
"$MT" check "$run" --validation "$T/run.json" >/dev/null 2>"$T/err" ||
	{ echo "FAIL: check --validation: $(cat "$T/err")"; fail=1; }
/usr/bin/python3 - "$T/run.json" <<'PYEOF' || fail=1
import json, sys
v = json.load(open(sys.argv[1]))
c = v["candidates"][0]
ok = (v["schema"] == "megatune.validation/1" and v["mode"] == "log" and c["status"] == "ok"
      and abs(c["measured"]["step_s"] - 14.579) < 0.002 and c["measured"]["step_n"] == 29
      and abs(c["predicted"]["step_s"] - 13.872) < 0.002 and v["gpus"] == 8)
if not ok:
    print("FAIL: the validation record: %s" % json.dumps(c)[:400])
    sys.exit(1)
PYEOF
[ -f "$T/run.model.json" ] && [ -f "$T/run.advice.json" ] || { echo "FAIL: no model or advice beside the record"; fail=1; }
"$MT" calibrate --from-validation "$T/run.json" --cluster dgx-h100 -o "$T/cal.json" >"$T/cal.out" 2>&1 &&
	grep -q "step error, all runs in the fit (rms): before 4.85%" "$T/cal.out" ||
	{ echo "FAIL: calibrate --from-validation of the log's record: $(tail -3 "$T/cal.out")"; fail=1; }

# the last iteration line cut mid-line: the log is said to be cut, never NaN,
# and the fragment is no step
last=$(wc -l <"$run")
{ head -n $((last - 1)) "$run"; sed -n "${last}p" "$run" | sed 's/(ms): [0-9.]*.*/(ms): 163/' | tr -d '\n'; } >"$T/cut.log"
"$MT" check "$T/cut.log" >"$T/cut.out" 2>&1 || { echo "FAIL: check of a cut log: exit $?"; fail=1; }
grep -q "^  status: ok (log cut: line $last ends mid-line; its step is not counted)$" "$T/cut.out" &&
	grep -q "^measured (the log: 29 iteration lines):" "$T/cut.out" && ! grep -qi "nan" "$T/cut.out" ||
	{ echo "FAIL: the cut log: $(grep -A4 '^measured' "$T/cut.out")"; fail=1; }
"$MT" check "$T/cut.log" --json - 2>/dev/null | /usr/bin/python3 -c '
import json, sys
m = json.load(sys.stdin)["measured"]
sys.exit(not (m["status"] == "ok" and m["log_cut_lineno"] == int(sys.argv[1]) and "log cut" in m["reason"]))' "$last" ||
	{ echo "FAIL: the cut log in the JSON"; fail=1; }
# an arguments block whose last line has no value: a cut dump, refused
line=$(grep -n "  sequence_parallel \.\.\." "$run" | cut -d: -f1)
{ head -n $((line - 1)) "$run"; printf '[default0]:  sequence_parallel .............................\n'; } >"$T/dump.log"
"$MT" check "$T/dump.log" >"$T/dump.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "^megatune check: error: $T/dump.log:$line: the arguments block is cut: field 'sequence_parallel' has no value" "$T/dump.out" ||
	{ echo "FAIL: a cut arguments block: exit $rc: $(head -2 "$T/dump.out")"; fail=1; }

# many jobs at once (check logs/*.log): each checked in turn, one line each at
# the end, a record per log with a run in the --validation folder, --json an
# array, and exit 2 because the real logs hold no job
mkdir -p "$T/v"
"$MT" check tests/fixtures/megatron-logs/*.log "$run" "$T/oom.log" --validation "$T/v" \
	--json "$T/all.json" >"$T/many.out" 2>"$T/many.err"
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: check of many logs: exit $rc, not 2"; fail=1; }
grep -q "^$((n + 2)) jobs:" "$T/many.out" &&
	grep -q "^  $run: ok, step 14.579 s measured against 13.872 s predicted (+5.1%)" "$T/many.out" &&
	grep -q "^  $T/oom.log: oom, no steady step measured" "$T/many.out" &&
	[ "$(grep -c ': not read (the error above)$' "$T/many.out")" -eq "$n" ] &&
	[ "$(grep -c "no job in it" "$T/many.err")" -eq "$n" ] ||
	{ echo "FAIL: the lines of many logs: $(tail -4 "$T/many.out")"; fail=1; }
[ -f "$T/v/llama3-8b-run.log.validation.json" ] && [ -f "$T/v/oom.log.validation.json" ] &&
	[ "$(ls "$T/v" | grep -c '\.validation\.json$')" -eq 2 ] ||
	{ echo "FAIL: the records of many logs: $(ls "$T/v")"; fail=1; }
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (len(d) == 2 and d[0]["schema"] == "megatune.check/1"))' "$T/all.json" ||
	{ echo "FAIL: --json of many logs is not an array of the two checked"; fail=1; }
"$MT" calibrate --from-validation "$T/v/llama3-8b-run.log.validation.json" --cluster dgx-h100 -o "$T/cal2.json" >/dev/null 2>&1 ||
	{ echo "FAIL: calibrate reads a record of many logs"; fail=1; }
# a log that measures its step: every change is stated against the measured
# step (the model's ratio applied to it, its band widened by the model's
# offset on the job, said once), never against the prediction alone: the
# GPU campaign's Megatron-LM run at MBS 8 measured 0.274 s, predicted 0.252 s; the
# change it names, MBS 16, is stated as 0.234 s, which that campaign measured at 0.241 s
c2=tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c2-tp1-pp1-mbs8.log
"$MT" check "$c2" --json "$T/c2.json" >"$T/c2.out" 2>&1 || { echo "FAIL: check of c2: exit $?"; fail=1; }
[ "$(grep -c "every change below is stated against the measured step" "$T/c2.out")" -eq 1 ] &&
	grep -q "the model is off" "$T/c2.out" &&
	grep -q "^  step 0.274 s measured -> 0.234 s (band " "$T/c2.out" &&
	! grep -q "^  step 0.252 s -> " "$T/c2.out" ||
	{ echo "FAIL: check of a measured log states its changes against the prediction: $(grep -A1 "^one knob\|^best" "$T/c2.out")"; fail=1; }
/usr/bin/python3 - "$T/c2.json" <<'PYEOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
m = d["measured"]
scale = m["changes_scale"]
assert abs(scale / (m["step_s"] / m["predicted_step_s"]) - 1) < 1e-4, m
assert d["changes"], "no change to state"
for c in d["changes"]:
    base = c["step_s_measured_basis"]
    assert abs(base - c["step_s"] * scale) < 1e-9, c
    assert c["band_lo_s"] < base < c["band_hi_s"], c
    # the band holds the model's own band widened by the 1.14x offset
    assert c["band_hi_s"] / base > scale and base / c["band_lo_s"] > scale, c
    # the gain is the model's ratio, the same on either basis
    assert abs((m["step_s"] / base - 1) - c["gain"]) < 1e-9, c
PYEOF
# memory reports: each reporting rank's allocated, max allocated and max
# reserved beside the prediction for its pipeline stage (PP 2 of 8 GPUs:
# ranks 0-3 stage 0, 4-7 stage 1), in the text and the JSON
c1=tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs/c1-tp1-pp1-mbs16.log
"$MT" check "$c1" >"$T/c1.out" 2>&1 || { echo "FAIL: check of c1: exit $?"; fail=1; }
grep -q "^    rank 0 (stage 0), line [0-9]*, allocated 5.88 ([0-9.]*, [-+][0-9.]*%), max allocated 32.85 ([0-9.]*, [-+][0-9.]*%)" "$T/c1.out" ||
	{ echo "FAIL: c1's memory report beside the prediction: $(grep -A1 "^  memory" "$T/c1.out")"; fail=1; }
{ cat "$run"; echo "[default0]:[Rank 4] (after 1 iterations) memory (MB) | allocated: 40000.0 | max allocated: 60000.0 | reserved: 70000.0 | max reserved: 70000.0"; } >"$T/ranks.log"
"$MT" check "$T/ranks.log" --json "$T/ranks.json" >"$T/ranks.out" 2>&1 || { echo "FAIL: check of two ranks: exit $?"; fail=1; }
grep -q "^    rank 4 (stage 1), line" "$T/ranks.out" ||
	{ echo "FAIL: rank 4 is not stage 1: $(grep -A2 "^  memory" "$T/ranks.out")"; fail=1; }
/usr/bin/python3 - "$T/ranks.json" <<'PYEOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["rank"]: x for x in d["measured"]["memory_ranks"]}
assert set(r) == {0, 4} and r[0]["stage"] == 0 and r[4]["stage"] == 1, r
st = d["as_is"]["candidates"][0]["memory"]["stages"]
for k in (0, 4):
    s = st[r[k]["stage"]]
    assert abs(r[k]["predicted_allocated_gib"] - s["allocated_bytes"] / 2**30) < 1e-3, (r[k], s)
    assert abs(r[k]["predicted_max_allocated_gib"] - s["max_allocated_bytes"] / 2**30) < 1e-3, (r[k], s)
    assert r[k]["predicted_allocated_gib"] <= r[k]["predicted_max_allocated_gib"], r[k]
assert abs(r[4]["max_allocated_gib"] - 60000 / 1024) < 1e-6, r[4]
assert r[0]["predicted_max_allocated_gib"] != r[4]["predicted_max_allocated_gib"], r
PYEOF
[ $fail -eq 0 ] || exit 1
echo "ok: $n real logs refused with the reason; a job on standard input read back; a log's OOM named with its line, its run recorded and read by calibrate; a cut log and a cut arguments block named; $((n + 2)) logs checked at once; changes stated against a measured step; memory reports beside their stage"
