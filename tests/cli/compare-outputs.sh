#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune compare's outputs on the two real nccl-tests logs of one AWS p5 cluster (2 x 8
# H100, EFA, NCCL 2.22.3) without and with the tuner plugin:
#  - the +20% time at 64 KiB in place is flagged, and no size whose change is within the noise
#    band is (the verdicts are printed);
#  - JUnit XML valid against the schema CI systems read (tests/fixtures/compare/junit.xsd),
#    one test case per metric, a regression a failure with its numbers;
#  - the Markdown summary, the JSON document read back by the report;
#  - a crashed calibration: a results file cut mid-record is exit 2 naming the file and line,
#    with a JUnit failure saying so; one stopped between records fails (exit 1) on the metrics
#    it lacks, each a JUnit failure, unless --allow-missing.
# Exit 0 pass, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=$(pwd)/$BUILD/megatune
T=$(mktemp -d "${TMPDIR:-/tmp}/compare-outputs.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail() {
	echo "not ok - $*"
	exit 1
}
NT=tests/fixtures/nccl-tests/h100_p5_2node16gpu_all_reduce_efa_v2.22.3-1
"$MT" compare "$NT.txt" "$NT-with-tuner.txt" --all --json "$T/c.json" --junit "$T/c.xml" \
	--markdown "$T/c.md" >"$T/out" 2>&1
rc=$?
cat "$T/out"
[ $rc -eq 1 ] || fail "exit $rc, expected 1 (regressed)"
/usr/bin/python3 - "$T/c.json" <<'EOF' || fail "the verdicts"
import json, sys
d = json.load(open(sys.argv[1]))
m = {x["name"]: x for x in d["metrics"]}
r = m["all_reduce time, 16 ranks, 64 KiB, in place"]
assert r["verdict"] == "regressed" and abs(r["change_pct"] - 20.10) < 0.01, r
assert r["method"] == "document spread" and 3 < r["noise_pct"] < 5, r
within = [x for x in d["metrics"] if abs(x["change_pct"]) <= x["noise_pct"]]
assert within and all(x["verdict"] == "unchanged" for x in within), within
big = [x for x in d["metrics"] if x["name"].endswith("in place")
       and int(x["id"].split("|")[2]) >= 1 << 20]
assert big and all(x["verdict"] == "unchanged" for x in big), big
flagged = [x for x in d["metrics"] if x["verdict"] in ("regressed", "improved")]
assert all(abs(x["change_pct"]) - x["noise_pct"] > x["tolerance_pct"] for x in flagged)
# the band reaches back into the tolerance: the noise explains the change
loose = [x for x in d["metrics"] if x["tolerance_pct"] < abs(x["change_pct"])
         <= x["tolerance_pct"] + x["noise_pct"]]
assert loose and all(x["verdict"] == "inconclusive" for x in loose), loose
print("64 KiB in place: %+.2f%% (noise +-%.2f%%): %s; %d of %d metrics within the noise, all "
      "unchanged; %d in place sizes of 1 MiB and up, all unchanged; %d flagged; %d beyond the "
      "tolerance by less than the noise, inconclusive" % (
      r["change_pct"], r["noise_pct"], r["verdict"], len(within), len(d["metrics"]), len(big),
      len(flagged), len(loose)))
EOF
echo "ok - the +20% at 64 KiB is flagged, sizes within the noise are not"

xmllint --noout --schema tests/fixtures/compare/junit.xsd "$T/c.xml" >"$T/xl" 2>&1 ||
	fail "JUnit XML not valid: $(cat "$T/xl")"
/usr/bin/python3 - "$T/c.xml" "$T/c.json" <<'EOF' || fail "JUnit contents"
import json, sys, xml.etree.ElementTree as ET
regressed = sum(x["verdict"] == "regressed" for x in json.load(open(sys.argv[2]))["metrics"])
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suite = root.find("testsuite")
cases = suite.findall("testcase")
assert len(cases) == 64 == int(suite.get("tests")), len(cases)
fails = [c for c in cases if c.find("failure") is not None]
assert len(fails) == int(suite.get("failures")) == regressed == 6, (len(fails), regressed)
f = [c for c in fails if c.get("name") == "all_reduce time, 16 ranks, 64 KiB, in place"][0]
msg = f.find("failure").get("message")
assert "+20.10%" in msg and "86.01 us" in msg and "103.3 us" in msg, msg
print("JUnit: %d test cases, %d failures; %s" % (len(cases), len(fails), msg))
EOF
echo "ok - JUnit XML valid against the schema, one case per metric, failures with numbers"

grep -q '^### megatune compare (nccl-tests): \*\*regressed\*\*' "$T/c.md" || fail "markdown heading: $(head -3 "$T/c.md")"
grep -qxF '| **regressed** | all\_reduce time, 16 ranks, 64 KiB, in place | 86.01 us | 103.3 us | +20.10% | ±3.98% |' "$T/c.md" ||
	fail "markdown row: $(cat "$T/c.md")"
echo "ok - Markdown summary"

"$MT" report --compare "$T/c.json" -o "$T/r.html" >"$T/rout" 2>&1 || fail "report: $(cat "$T/rout")"
grep -q 'all_reduce time, 16 ranks, 64 KiB, in place' "$T/r.html" || fail "report: no metric"
grep -q 'document spread' "$T/r.html" || fail "report: no noise source"
echo "ok - the report reads the comparison compare writes"

# a thresholds file; unmatched metrics are listed, not dropped
/usr/bin/python3 - "$NT.txt" "$T/cut.txt" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines(True)
# drop the 16 GiB row: a metric only in the baseline
open(sys.argv[2], "w").writelines(l for l in lines if "17179869184" not in l)
EOF
"$MT" compare "$NT.txt" "$T/cut.txt" --json "$T/u.json" >"$T/uout" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "a metric missing from the current: exit $rc, expected 1"
grep -q 'only in the baseline (2): missing from the current, a failure' "$T/uout" ||
	fail "unmatched not listed: $(cat "$T/uout")"
grep -q '16 GiB, in place' "$T/uout" || fail "unmatched names"
grep -q '"verdict": "fail"' "$T/u.json" || fail "JSON verdict: $(grep verdict "$T/u.json" | head -2)"
"$MT" compare "$NT.txt" "$T/cut.txt" --allow-missing >"$T/uout" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q 'only in the baseline (2):$' "$T/uout" ||
	fail "--allow-missing: exit $rc $(cat "$T/uout")"
echo "ok - metrics on one side only are listed; missing from the current fails (exit 1) unless --allow-missing"

# a crashed calibration: the results file cut at 3,000 bytes, mid-record
R=tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3
head -c 3000 "$R-2/calibrated.json.results.jsonl" >"$T/cut.jsonl"
"$MT" compare "$R-1/calibrated.json.results.jsonl" "$T/cut.jsonl" --junit "$T/cut.xml" \
	>"$T/cout" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "a cut results file: exit $rc, expected 2: $(cat "$T/cout")"
grep -q "error: $T/cut.jsonl:5: a record cut short" "$T/cout" ||
	fail "a cut results file: the message names no file and line: $(cat "$T/cout")"
grep -q 'compare result: pass' "$T/cout" && fail "a cut results file passes"
xmllint --noout --schema tests/fixtures/compare/junit.xsd "$T/cut.xml" >"$T/xl" 2>&1 ||
	fail "JUnit XML of a cut file not valid: $(cat "$T/xl")"
/usr/bin/python3 - "$T/cut.xml" "$T/cut.jsonl" <<'EOF' || fail "JUnit of a cut file"
import sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert suite.get("failures") == "1" and suite.get("tests") == "1", suite.attrib
f = suite.find("testcase").find("failure")
msg = f.get("message")
assert msg.startswith(sys.argv[2] + ":5: a record cut short") and msg in f.text, msg
print("JUnit: " + msg)
EOF
echo "ok - a results file cut mid-record: exit 2 naming file and line 5, a JUnit failure saying so"

# a run stopped between records: its whole records compare, the rest is missing
head -n 4 "$R-2/calibrated.json.results.jsonl" >"$T/stop.jsonl"
"$MT" compare "$R-1/calibrated.json.results.jsonl" "$T/stop.jsonl" --junit "$T/stop.xml" \
	>"$T/sout" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "a stopped run: exit $rc, expected 1: $(cat "$T/sout")"
xmllint --noout --schema tests/fixtures/compare/junit.xsd "$T/stop.xml" >"$T/xl" 2>&1 ||
	fail "JUnit XML of a stopped run not valid: $(cat "$T/xl")"
/usr/bin/python3 - "$T/stop.xml" "$T/stop.jsonl" <<'EOF' || fail "JUnit of a stopped run"
import sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
fails = [c for c in suite.findall("testcase") if c.find("failure") is not None]
assert len(fails) == int(suite.get("failures")) == 53, (len(fails), suite.attrib)
assert suite.get("skipped") == "0", suite.attrib
f = fails[0].find("failure")
assert f.get("type") == "missing", f.attrib
assert f.get("message").startswith("missing: in the baseline, not in " + sys.argv[2]), f.attrib
print("JUnit: %d failures, e.g. %s: %s" % (len(fails), fails[0].get("name"), f.get("message")))
EOF
echo "ok - a run stopped between records: exit 1, each missing metric a JUnit failure"
