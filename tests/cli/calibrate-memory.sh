#!/bin/sh
# SPDX-License-Identifier: MIT
# The ranks' memory reports in the validation record and the memory fit of
# calibrate --from-validation (docs/MODEL.md 4.8 and 10, docs/FORMATS.md 17):
#   1. check --validation and validate carry each report of a real log
#      (the GPU campaign's Megatron-LM run c1; the four unordered ranks of
#      TransformerEngine#2043's log) as memory_ranks: rank, stage, the four
#      figures in bytes as printed, and the prediction for that stage as
#      check prints it;
#   2. calibrate from c1's record fits the step memory factor on max
#      allocated: the model already predicts c1 within 0.1% (the native fused
#      loss's second FP32 copy of the logits, docs/MODEL.md 4.8), so the
#      factor stays within 1% of 1 (the fit re-evaluates the record's advice,
#      which must carry the job's settings to agree with the record's
#      prediction), c2 (half c1's micro-batch, never seen by the fit) stays
#      within 1% of its measured max allocated, and its max reserved moves
#      closer on c1's memory term;
#   3. on records made from the model's own stages with the memory allocated
#      inside a step 1.25x and reserved 0.5 GiB above (three PP 4
#      candidates, every report of every stage), the fit recovers 1.25 and
#      0.5 GiB, and advise on the corrected profile predicts each stage's
#      max allocated as measured;
#   4. a record without memory_ranks keeps the old fit (the worst rank's max
#      reserved against the peak) and says so; bad memory_ranks and a bad
#      step_memory_factor exit 2 naming the file and the field.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
TEST=calmem
. tests/lib/clitest.sh
G=tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs
C1=$G/c1-tp1-pp1-mbs16.log
C2=$G/c2-tp1-pp1-mbs8.log

# 1. the record carries c1's report and the prediction check prints
"$M" check "$C1" --cluster dgx-h100 --json "$T/c1.json" --validation "$T/v1.json" \
	>"$T/c1.out" 2>&1 || no "check c1 --validation: exit $?: $(tail -3 "$T/c1.out")"
"$PY" - "$T/v1.json" "$T/c1.json" "$C1" <<'PYEOF' && ok "c1's record: rank 0, stage 0, the log's four figures in bytes, check's prediction for the stage" ||
import json, re, sys
r = json.load(open(sys.argv[1]))["candidates"][0]["memory_ranks"]
k = json.load(open(sys.argv[2]))["measured"]["memory_ranks"][0]
last = [l for l in open(sys.argv[3]) if "memory (MB)" in l][-1]
mb = [float(x) for x in re.findall(r": ([0-9.]+)", last.split("memory (MB)")[1])]
assert len(r) == 1 and r[0]["rank"] == 0 and r[0]["stage"] == 0, r
m, p = r[0]["measured"], r[0]["predicted"]
for key, v in zip(("allocated", "max_allocated", "reserved", "max_reserved"), mb):
    assert abs(m[key + "_bytes"] - v * 2**20) <= 1, (key, m, v)
for key, ck in (("allocated", "allocated"), ("max_allocated", "max_allocated"),
                ("reserved", "max_reserved")):
    assert abs(p[key + "_bytes"] / (k["predicted_" + ck + "_gib"] * 2**30) - 1) < 1e-9, (key, p, k)
PYEOF
	no "c1's record: $(cat "$T/v1.json" | head -c 600)"

# the record's advice carries the job's native fused loss (Megatron-LM's
# default, as c1 ran it), so that calibrate re-evaluates what check printed
grep -q '"cross_entropy_fusion_impl":[[:space:]]*"native"' "$T/v1.advice.json" &&
	ok "c1's advice: the job's native fused loss, for the fit's re-evaluation" ||
	no "c1's advice lacks job.cross_entropy_fusion_impl: $(head -c 600 "$T/v1.advice.json")"

# validate of a 4-GPU PP 2 advice, the run being TransformerEngine#2043's log of
# four ranks printed out of order: each rank's stage (ranks 0-1 stage 0, 2-3
# stage 1) and that stage's prediction
"$M" advise --model llama3-8b --gpus 4 --seq 4096 --gbs 8 --tp 2 --pp 2 --top 1 \
	--json "$T/a4.json" >/dev/null 2>"$T/a4.err" || no "advise PP 2: $(cat "$T/a4.err")"
"$M" validate --advice "$T/a4.json" --launch \
	"cat tests/fixtures/megatron-logs/mlm_core_2025_fp8_memreport_mb_4ranks_unordered.log" \
	--warmup 0 --dir "$T/runs" -o "$T/v4.json" >"$T/v4.out" 2>&1 ||
	no "validate with a stand-in run: exit $?: $(tail -3 "$T/v4.out")"
"$PY" - "$T/v4.json" "$T/a4.json" <<'PYEOF' && ok "validate: four ranks out of order, each with its stage and that stage's prediction" ||
import json, sys
r = json.load(open(sys.argv[1]))["candidates"][0]["memory_ranks"]
st = json.load(open(sys.argv[2]))["candidates"][0]["memory"]["stages"]
assert [(x["rank"], x["stage"]) for x in r] == [(1, 0), (3, 1), (2, 1), (0, 0)], r
assert st[0]["max_allocated_bytes"] != st[1]["max_allocated_bytes"]
for x in r:
    assert abs(x["measured"]["max_allocated_bytes"] - 7974.18994140625 * 2**20) <= 1, x
    s = st[x["stage"]]
    for k in ("allocated", "max_allocated", "reserved"):
        assert abs(x["predicted"][k + "_bytes"] - s[k + "_bytes"]) <= 1, (x, s)
PYEOF
	no "validate's memory_ranks: $(head -c 800 "$T/v4.json")"

# 2. calibrate from c1; c2 before and after
"$M" check "$C2" --cluster dgx-h100 --json "$T/c2-before.json" >/dev/null 2>&1 ||
	no "check c2: exit $?"
"$M" calibrate --from-validation "$T/v1.json" --cluster dgx-h100 -o "$T/c1-corr.json" \
	>"$T/cal.out" 2>&1 || no "calibrate from c1: exit $?: $(cat "$T/cal.out")"
grep -q "memory: 1 rank report of 1 run" "$T/cal.out" && grep -q "step memory factor x1\.0" "$T/cal.out" &&
	ok "calibrate names the report it fitted and the factor" || no "calibrate's text: $(cat "$T/cal.out")"
"$M" check "$C2" --cluster "$T/c1-corr.json" --json "$T/c2-after.json" >"$T/c2-after.out" 2>&1 ||
	no "check c2 on c1's correction: exit $?"
"$PY" - "$T/c1-corr.json" "$T/c2-before.json" "$T/c2-after.json" <<'PYEOF' && ok "c2, unseen by the fit: max allocated kept within 1%, max reserved predicted closer on c1's correction" ||
import json, sys
p = json.load(open(sys.argv[1]))
c = p["corrections"]
cite = [s["citation"] for s in p["sources"] if s["id"] == c["source"]][0]
assert c["memory_basis"] == "rank_reports" and c["memory_points_used"] == 1, c
# c1 is predicted within 0.1%: a factor away from 1 means the fit's
# re-evaluation disagrees with the prediction check printed
assert 0.99 < c["step_memory_factor"] < 1.01, c["step_memory_factor"]
assert "memory from 1 rank report of 1 run" in cite and "max allocated rms error" in cite, cite
b = json.load(open(sys.argv[2]))["measured"]["memory_ranks"][0]
a = json.load(open(sys.argv[3]))["measured"]["memory_ranks"][0]
m = b["max_allocated_gib"]
eb, ea = b["predicted_max_allocated_gib"] / m - 1, a["predicted_max_allocated_gib"] / m - 1
rb = b["predicted_max_reserved_gib"] / b["max_reserved_gib"] - 1
ra = a["predicted_max_reserved_gib"] / a["max_reserved_gib"] - 1
print("c2 max allocated: measured %.2f GiB, predicted %.2f (%+.1f%%) on dgx-h100, %.2f (%+.1f%%) "
      "corrected from c1 (x%.3f); max reserved %.2f, predicted %.2f (%+.1f%%), %.2f (%+.1f%%)" % (
      m, b["predicted_max_allocated_gib"], 100 * eb, a["predicted_max_allocated_gib"], 100 * ea,
      c["step_memory_factor"], b["max_reserved_gib"], b["predicted_max_reserved_gib"], 100 * rb,
      a["predicted_max_reserved_gib"], 100 * ra))
# within 1% of the measurement before, and still after
assert abs(eb) < 0.01 and abs(ea) < 0.01, (eb, ea)
assert abs(ra) < abs(rb) / 2, (rb, ra)
PYEOF
	no "c2's max allocated on c1's correction"
grep -q "step memory x1\.0" "$T/c2-after.out" && ok "check on the corrected profile says the step memory factor" ||
	no "check on the corrected profile: $(head -3 "$T/c2-after.out")"

# 3. records from the model's own stages, in-step memory 1.25x, reserved +0.5 GiB
JOB="--model llama3-8b --gpus 16 --seq 4096 --gbs 64 --pp 4"
# shellcheck disable=SC2086
"$M" advise $JOB --top 3 --json "$T/a16.json" >/dev/null 2>"$T/a16.err" ||
	no "advise PP 4: $(cat "$T/a16.err")"
"$PY" - "$T/a16.json" "$T/v16.json" <<'PYEOF' || no "building the PP 4 record"
import json, sys
adv = json.load(open(sys.argv[1]))
cands = []
for i, c in enumerate(adv["candidates"]):
    cfg, st = c["config"], c["memory"]["stages"]
    per = 16 // cfg["pp"]
    ranks = []
    for s in st:  # data-parallel rank 0 of each tensor-parallel rank of each stage
        for t in range(cfg["tp"]):
            a = s["allocated_bytes"]
            ranks.append({"rank": s["stage"] * per + t, "stage": s["stage"], "lineno": 1,
                          "measured": {"allocated_bytes": a,
                                       "max_allocated_bytes": a + 1.25 * (s["max_allocated_bytes"] - a),
                                       "reserved_bytes": None,
                                       "max_reserved_bytes": a + 1.25 * (s["reserved_bytes"] - a) + 0.5 * 2**30},
                          "predicted": None})
    ranks.append({"rank": 99, "stage": None, "lineno": 2, "predicted": None,  # outside the job
                  "measured": {"max_allocated_bytes": 1e9}})
    step = c["time"]["step_s"]
    cands.append({"name": "c%d" % (i + 1), "predicted_rank": i + 1, "config": cfg, "status": "ok",
                  "predicted": {"step_s": step}, "memory_ranks": ranks,
                  "measured": {"step_s": step, "step_n": 8, "mem_max_reserved_gib": 99}})
json.dump({"schema": "megatune.validation/1", "advice": sys.argv[1], "model": "llama3-8b",
           "cluster": "dgx-h100", "gpus": 16, "seq": 4096, "gbs": 64, "mode": "launch",
           "candidates": cands}, open(sys.argv[2], "w"), indent=1)
PYEOF
"$M" calibrate --from-validation "$T/v16.json" --cluster dgx-h100 -o "$T/c16.json" \
	>"$T/c16.out" 2>&1 || no "calibrate on the PP 4 record: exit $?: $(cat "$T/c16.out")"
"$PY" - "$T/c16.json" "$T/c16.out" "$T/a16.json" <<'PYEOF' && ok "PP 4 record: step memory x1.25 and +0.5 GiB recovered from every stage's reports; leave-one-out error falls" ||
import json, re, sys
c = json.load(open(sys.argv[1]))["corrections"]
out = open(sys.argv[2]).read()
n = sum(len(x["memory"]["stages"]) * x["config"]["tp"] for x in json.load(open(sys.argv[3]))["candidates"])
assert abs(c["step_memory_factor"] - 1.25) < 0.002, c["step_memory_factor"]
assert abs(c["memory_overhead_bytes"] / 2**30 - 0.5) < 0.005, c["memory_overhead_bytes"]
assert c["memory_points_used"] == n == len(c["memory_points"]) and n >= 12, (n, c["memory_points_used"])
assert {p["stage"] for p in c["memory_points"]} == {0, 1, 2, 3}, c["memory_points"]
assert c["max_allocated_loo_mean_abs_rel_error_after"] < 0.001 < c["max_allocated_loo_mean_abs_rel_error_before"], c
assert c["memory_loo_mean_abs_rel_error_after"] < c["memory_loo_mean_abs_rel_error_before"], c
assert re.search(r"memory: %d rank reports of 3 runs .*3 reports without a known stage" % n, out), out
PYEOF
	no "PP 4 fit: $(cat "$T/c16.out")"
# shellcheck disable=SC2086
"$M" advise $JOB --top 3 --cluster "$T/c16.json" --json "$T/a16c.json" >/dev/null 2>"$T/a16c.err" ||
	no "advise on the corrected profile: $(cat "$T/a16c.err")"
"$PY" - "$T/a16.json" "$T/a16c.json" <<'PYEOF' && ok "advise on the corrected profile: each stage's max allocated as measured, 1.25x the in-step memory" ||
import json, sys
key = lambda c: json.dumps({k: v for k, v in c["config"].items()}, sort_keys=True)
before = {key(c): c for c in json.load(open(sys.argv[1]))["candidates"]}
n = 0
for c in json.load(open(sys.argv[2]))["candidates"]:
    b = before.get(key(c))
    if not b:
        continue
    for sb, sa in zip(b["memory"]["stages"], c["memory"]["stages"]):
        a = sb["allocated_bytes"]
        want = a + 1.25 * (sb["max_allocated_bytes"] - a)
        assert abs(sa["max_allocated_bytes"] / want - 1) < 0.003, (sa, want)
        n += 1
assert n >= 4, n
PYEOF
	no "advise on the corrected profile"

# 4. without memory_ranks: the old fit, said
"$PY" - "$T/v1.json" "$T/v1-old.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
del d["candidates"][0]["memory_ranks"]
json.dump(d, open(sys.argv[2], "w"))
PYEOF
cp "$T/v1.advice.json" "$T/v1-old.advice.json"
"$M" calibrate --from-validation "$T/v1-old.json" --cluster dgx-h100 -o "$T/old-corr.json" \
	>"$T/old.out" 2>&1 || no "calibrate without memory_ranks: exit $?: $(cat "$T/old.out")"
"$M" check "$C2" --cluster "$T/old-corr.json" --json "$T/c2-old.json" >/dev/null 2>&1 ||
	no "check c2 on the old correction: exit $?"
grep -q "no run's record has the ranks' memory reports (memory_ranks)" "$T/old.out" &&
"$PY" - "$T/old-corr.json" "$T/v1.json" "$T/c2-before.json" "$T/c2-old.json" <<'PYEOF' && ok "without memory_ranks: the worst rank's max reserved against the peak, as before, said; max allocated unchanged" ||
import json, sys
c = json.load(open(sys.argv[1]))["corrections"]
v = json.load(open(sys.argv[2]))["candidates"][0]
assert "step_memory_factor" not in c and c["memory_basis"] == "worst_rank_max_reserved", c
want = (v["measured"]["mem_max_reserved_gib"] - v["predicted"]["mem_gib"]) * 2**30
assert abs(c["memory_overhead_bytes"] - want) < 0.01 * 2**30, (c["memory_overhead_bytes"], want)
b = json.load(open(sys.argv[3]))["measured"]["memory_ranks"][0]
a = json.load(open(sys.argv[4]))["measured"]["memory_ranks"][0]
assert abs(a["predicted_max_allocated_gib"] - b["predicted_max_allocated_gib"]) < 1e-9, (a, b)
PYEOF
	no "without memory_ranks: $(cat "$T/old.out")"

# bad input
bad() { # name, pattern, file
	"$M" calibrate --from-validation "$3" --cluster dgx-h100 -o "$T/x.json" >"$T/b.out" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -Eq -- "$2" "$T/b.out"; then ok "$1: exit 2"
	else no "$1: exit $rc: $(cat "$T/b.out")"; fi
}
"$PY" - "$T/v16.json" "$T" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["candidates"][0]["memory_ranks"][1]["measured"]["max_allocated_bytes"] = "35 GB"
json.dump(d, open(sys.argv[2] + "/bad-bytes.json", "w"))
d["candidates"][0]["memory_ranks"] = {"rank": 0}
json.dump(d, open(sys.argv[2] + "/bad-arr.json", "w"))
d["candidates"][0]["memory_ranks"] = [{"stage": 0, "measured": {}}]
json.dump(d, open(sys.argv[2] + "/bad-rank.json", "w"))
PYEOF
bad "a byte count as a string" "bad-bytes.json: field 'candidates\[0\]\.memory_ranks\[1\]\.measured\.max_allocated_bytes': expected a number" "$T/bad-bytes.json"
bad "memory_ranks not an array" "bad-arr.json: field 'candidates\[0\]\.memory_ranks': expected an array" "$T/bad-arr.json"
bad "a report without its rank" "bad-rank.json: missing field 'candidates\[0\]\.memory_ranks\[0\]\.rank': expected an integer" "$T/bad-rank.json"
[ -e "$T/x.json" ] && no "a profile was written on bad input"
"$PY" - "$T/c16.json" "$T/bad-factor.json" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))
p["corrections"]["step_memory_factor"] = 50
json.dump(p, open(sys.argv[2], "w"))
PYEOF
# shellcheck disable=SC2086
"$M" advise $JOB --cluster "$T/bad-factor.json" >"$T/bf.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "bad-factor.json: field 'corrections.step_memory_factor': expected a number from 0.05 to 20" "$T/bf.out" &&
	ok "a step memory factor out of range: exit 2" || no "step memory factor 50: exit $rc: $(cat "$T/bf.out")"

[ $fail -eq 0 ] || exit 1
echo "ok: the ranks' memory reports recorded, fitted on max allocated, and c2 predicted closer from c1's"
