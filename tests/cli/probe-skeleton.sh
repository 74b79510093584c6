#!/bin/sh
# SPDX-License-Identifier: MIT
# The template probe (probes/skeleton.c): registered by one line, hidden from
# the default calibrate list, run when named; its records in the results file
# (case members from its describe) and its record in the profile (from its
# to_profile).  gemm runs beside it: a profile needs a GEMM measurement.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=$(pwd)/$BUILD/megatune
T=$(mktemp -d "${TMPDIR:-/tmp}/probe-skeleton.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT

fail() {
	echo "FAIL: $*"
	exit 1
}

PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY (Debian's python3)"; exit 77; }
"$MT" probe --list | grep -qx skeleton || fail "skeleton is not registered"
# hidden: not among the probes a default pass runs
"$MT" calibrate --probes nope -o "$T/x.json" 2>"$T/err"
grep -q "unknown probe 'nope' (expected .*host" "$T/err" || fail "no probe list: $(cat "$T/err")"
grep -q skeleton "$T/err" && fail "skeleton is in the default list: $(cat "$T/err")"

"$MT" calibrate --backend cpu --smoke --probes skeleton,gemm -o "$T/p.json" 2>"$T/err" ||
	fail "calibrate --probes skeleton,gemm: exit $? $(cat "$T/err")"
grep -q 'skeleton *\[ *1/ *1]' "$T/err" || fail "no skeleton progress: $(cat "$T/err")"
"$PY" - "$T/p.json" <<'PY' || fail "skeleton records or profile"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + ".results.jsonl")]
sk = [r for r in recs if r.get("probe") == "skeleton"]
assert sk, "no skeleton record"
for r in sk:
    assert r["backend"] == "cpu" and r["verified"] == "yes", r
    assert r["case"]["bytes"] > 0 and r["case"]["inner"] >= 1, r
    assert r["gbps"] > 0 and r["time_us"]["n"] >= 1, r
p = json.load(open(sys.argv[1]))
s = p["skeleton"]
assert s["copy_gbps"] > 0 and s["bytes"] == max(r["case"]["bytes"] for r in sk), s
assert s["source"] == "measured", s
PY
# one probe alone, its JSON Lines on stdout
"$MT" probe skeleton --backend cpu --smoke --json - >"$T/one" 2>"$T/err" ||
	fail "probe skeleton: exit $? $(cat "$T/err")"
grep -q '"probe": *"skeleton".*"verified": *"yes"' "$T/one" || fail "probe skeleton: $(cat "$T/one")"
exit 0
