#!/bin/sh
# SPDX-License-Identifier: MIT
# The trace reader under damaged and hostile traces (megatune analyze):
#  - GPU events with ts/dur of 1e308, null, a string, 2^63, start > end or a
#    duration over an hour: counted in left_out with their reason
#    (events.left_out_reasons), never read as zero-length or dropped silently;
#  - two JSON documents in one Kineto trace file: refused naming the byte offset;
#  - a megatune.trace/2 header: refused (FORMATS.md: unknown versions are);
#  - the same trace given twice: refused; two traces of one rank: named;
#  - a string longer than the reader's cap (1 MiB): cut, counted, linear time
#    (an 8 MiB name here; bench/ measures the 1 GB one);
#  - a number token longer than 64 characters: refused naming its offset.
# Prints "ok - " / "not ok - " lines; exit 0 pass, 1 fail, 77 skip.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
case $M in /*) ;; *) M=$(pwd)/$M ;; esac
[ -x "$M" ] || { echo "skip: no $M"; exit 77; }
PY=/usr/bin/python3
[ -x $PY ] || { echo "skip: no $PY"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/harden-traces.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
R=$(pwd)
cd "$T" || exit 2
fail=0

ok() { echo "ok - $*"; }
nok() { fail=1; echo "not ok - $*"; sed 's/^/#   /' "$T/out" | head -4; }

# a small Kineto trace: 10 good kernels on stream 7, a comm kernel on 21,
# then the bad events given as JSON fragments of ts/dur
$PY - <<'EOF'
import json
good = []
for i in range(10):
    good.append('{"ph":"X","cat":"kernel","name":"sm90_gemm","pid":0,"tid":7,"ts":%d,"dur":50,"args":{"device":0,"stream":7}}' % (100 + 100 * i))
good.append('{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_bf16_RING_LL","pid":0,"tid":21,"ts":120,"dur":300,"args":{"device":0,"stream":21}}')
bad = [
    '"ts":1e308,"dur":5',          # out of range
    '"ts":null,"dur":5',           # null
    '"ts":"soon","dur":5',         # a string
    '"ts":9223372036854775808,"dur":5',  # 2^63
    '"ts":300,"dur":null',         # null dur
    '"ts":300,"dur":-40',          # end before start
    '"ts":300,"dur":1e12',         # 11 days
]
def ev(t):
    return '{"ph":"X","cat":"kernel","name":"nccl_bad","pid":0,"tid":21,%s,"args":{"device":0,"stream":21}}' % t
open("good.json", "w").write('{"traceEvents":[' + ",".join(good) + ']}')
open("bad.json", "w").write('{"traceEvents":[' + ",".join(good + [ev(b) for b in bad]) + ']}')
open("two.json", "w").write('{"traceEvents":[' + ",".join(good) + ']}\n{"traceEvents":[' + good[0] + ']}')
open("v2.jsonl", "w").write('{"schema":"megatune.trace/2","rank":0}\n{"t":"kernel","name":"k","start":1,"end":2,"dev":0,"stream":7}\n')
open("rank1.json", "w").write('{"distributedInfo":{"rank":1,"world_size":2},"traceEvents":[' + ",".join(good) + ']}')
name = "x" * (8 << 20)
open("longname.json", "w").write('{"traceEvents":[' + ",".join(good) + ',{"ph":"X","cat":"kernel","name":"' + name + '","pid":0,"tid":7,"ts":5000,"dur":5,"args":{"device":0,"stream":7}}]}')
open("longnum.json", "w").write('{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1' + "0" * 300000 + ',"dur":5}]}')
EOF

# --- item 10: bad times counted with their reason
"$M" analyze --no-rules --json good.a.json good.json >"$T/out" 2>&1 || nok "analyze good.json"
"$M" analyze --no-rules --json bad.a.json bad.json >"$T/out" 2>&1
rc=$?
R=$($PY - <<'EOF'
import json
g = json.load(open("good.a.json"))["ranks"][0]
b = json.load(open("bad.a.json"))["ranks"][0]
r = b["events"]["left_out_reasons"]
print(b["events"]["left_out"] - g["events"]["left_out"], r["bad_time"], r["end_before_start"],
      r["over_an_hour"], b["overlap_pct"] == g["overlap_pct"], b["comm_us"] == g["comm_us"])
EOF
)
if [ $rc -eq 0 ] && [ "$R" = "7 5 1 1 True True" ] && grep -q "7 GPU events left out for their times" "$T/out"; then
	ok "7 events with broken times: left_out +7 (5 bad, 1 end before start, 1 over an hour), figures unchanged"
else
	nok "broken times: exit $rc, got '$R' (want '7 5 1 1 True True')"
fi

# --- item 9: one trace per file, known versions, each rank once
"$M" analyze --no-rules two.json >"$T/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "two.json: a second JSON document at byte" "$T/out" &&
	ok "two JSON documents in one trace: exit 2 with the byte offset" || nok "two documents: exit $rc"
"$M" analyze --no-rules v2.jsonl >"$T/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "v2.jsonl: field 'schema': \"megatune.trace/2\" is a version" "$T/out" &&
	ok "megatune.trace/2: refused" || nok "megatune.trace/2: exit $rc"
"$M" analyze --no-rules good.json ./good.json >"$T/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "the trace './good.json' is given twice (also as 'good.json')" "$T/out" &&
	ok "the same trace twice: refused" || nok "the same trace twice: exit $rc"
cp rank1.json rank1-copy.json
"$M" analyze --no-rules rank1.json rank1-copy.json >"$T/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "warning: rank 1 appears in rank1.json and in rank1-copy.json" "$T/out" &&
	ok "two traces of rank 1: named" || nok "two traces of rank 1: exit $rc"

# --- item 8: caps on strings and numbers
"$M" analyze --no-rules --json long.a.json longname.json >"$T/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "1 strings cut at 1048576 bytes" "$T/out" &&
	ok "an 8 MiB name: cut at 1 MiB and said" || nok "an 8 MiB name: exit $rc"
"$M" analyze --no-rules longnum.json >"$T/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "longnum.json: a number of more than 64 characters at byte 73" "$T/out" &&
	ok "a 300001-digit number (across read chunks): refused at its byte offset" || nok "a 300001-digit number (across read chunks): exit $rc"
exit $fail
