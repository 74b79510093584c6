#!/bin/sh
# SPDX-License-Identifier: MIT
# The calibrate results stream (megatune.result/1 JSON Lines) under faults:
#  - NUL bytes a crash left after the last record: --resume names the byte
#    offset, cuts them and appends after the last whole record;
#  - damage followed by valid records: --resume refuses (exit 2, line and byte
#    offset); --resume --repair keeps every valid record and says what it dropped;
#  - a full disk (ulimit -f): calibrate stops with the reason and exit 2, the
#    records written stay whole, --resume finishes the pass;
#  - a second pass (--resume or --fresh) beside a running one: exit 2, the file
#    untouched (the results file is locked);
#  - kill -9 at 60 seeded random points, each followed by --resume: the pass
#    ends with every case measured once and every line a whole record.
# Prints "ok - " / "not ok - " lines; exit 0 pass, 1 fail, 77 skip.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
case $M in /*) ;; *) M=$(pwd)/$M ;; esac
[ -x "$M" ] || { echo "skip: no $M"; exit 77; }
PY=/usr/bin/python3
[ -x $PY ] || { echo "skip: no $PY"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/harden-results.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
cd "$T" || exit 2
CAL="calibrate --backend cpu --smoke --probes gemm,attention,host"
fail=0

ok() { echo "ok - $*"; }
nok() { fail=1; echo "not ok - $*"; sed 's/^/#   /' "$T/err" 2>/dev/null | head -6; }

# lines of a results file that are not a whole JSON object, and repeated cases
check_file() { # file -> prints "bad=N dup=N records=N"
	$PY - "$1" <<'EOF'
import json, sys
bad = dup = 0
seen = set()
data = open(sys.argv[1], 'rb').read()
lines = data.split(b'\n')
if lines and lines[-1] == b'':
    lines.pop()
else:
    bad += 1
for i, l in enumerate(lines):
    try:
        o = json.loads(l)
        assert isinstance(o, dict)
    except Exception:
        bad += 1
        continue
    if i == 0:
        continue
    k = (o.get('probe'), o.get('label'), o.get('rank'), o.get('device'))
    dup += k in seen
    seen.add(k)
print("bad=%d dup=%d records=%d" % (bad, dup, len(seen)))
EOF
}

# the complete pass, for reference
"$M" $CAL -o full.json >/dev/null 2>"$T/err" || nok "a complete pass"
FULL=$(check_file full.json.results.jsonl)
case $FULL in "bad=0 dup=0 records="*) ok "a complete pass: $FULL" ;; *) nok "complete pass: $FULL" ;; esac

# a stopped pass with 4 records
MEGATUNE_CALIBRATE_STOP_AFTER=4 "$M" $CAL -o p.json >/dev/null 2>"$T/err"
cp p.json.results.jsonl good.jsonl
SIZE=$(wc -c <good.jsonl)

# --- item 1: NUL bytes after the last record
head -c 4096 /dev/zero >>p.json.results.jsonl
"$M" $CAL -o p.json --resume >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && grep -q "byte offset $SIZE .*NUL bytes" "$T/err" &&
	[ "$(check_file p.json.results.jsonl)" = "$FULL" ]; then
	ok "NUL bytes at the end: named at byte offset $SIZE, cut, the pass completed"
else
	nok "NUL bytes at the end: exit $rc, $(check_file p.json.results.jsonl)"
fi

# --- damage in the middle: refused, then --repair
{ head -3 good.jsonl; head -c 300 /dev/zero; echo; tail -n +4 good.jsonl; } >p.json.results.jsonl
cp p.json.results.jsonl damaged.jsonl
OFF=$(head -3 good.jsonl | wc -c)
"$M" $CAL -o p.json --resume >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "line 4 (byte offset $OFF)" "$T/err" && grep -q -- "--repair" "$T/err" &&
	cmp -s p.json.results.jsonl damaged.jsonl; then
	ok "NUL bytes between records: exit 2 naming line 4, byte offset $OFF, file untouched"
else
	nok "NUL bytes between records: exit $rc"
fi
"$M" $CAL -o p.json --resume --repair >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && grep -q "dropped 1 damaged line" "$T/err" && grep -q "kept 4 records" "$T/err" &&
	[ "$(check_file p.json.results.jsonl)" = "$FULL" ]; then
	ok "--repair keeps the valid records, names what it dropped, the pass completes"
else
	nok "--repair: exit $rc, $(check_file p.json.results.jsonl)"
fi
{ head -2 good.jsonl; echo '{"probe": "gemm", "lab'; tail -n +3 good.jsonl; } >p.json.results.jsonl
"$M" $CAL -o p.json --resume >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && grep -q "line 3 (byte offset" "$T/err" && ok "a garbled record between records: exit 2" ||
	nok "a garbled record between records: exit $rc"
{ head -2 good.jsonl | sed '2s/"probe":"\([a-z]*\)",/"probe":"\1","probe":"x",/'; tail -n +3 good.jsonl; } >p.json.results.jsonl
"$M" $CAL -o p.json --resume >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && grep -q "p.json.results.jsonl: line 2: field 'probe': duplicate key" "$T/err" &&
	ok "a duplicate key in a record: exit 2 naming the line and key" || nok "a duplicate key: exit $rc"
"$M" calibrate --backend cpu -o p.json --repair >/dev/null 2>"$T/err"
[ $? -eq 2 ] && ok "--repair without --resume: exit 2" || nok "--repair without --resume"

# --- item 2: a full disk
rm -f d.json*
(trap '' XFSZ; ulimit -f 2; "$M" $CAL -o d.json >/dev/null 2>"$T/err")
rc=$?
R=$(check_file d.json.results.jsonl)
if [ $rc -eq 2 ] && grep -q "d.json.results.jsonl: cannot write" "$T/err" &&
	case $R in "bad=0 dup=0"*) true ;; *) false ;; esac && [ ! -e d.json ]; then
	ok "a full disk: exit 2 with the reason, whole records only ($R), no profile"
else
	nok "a full disk: exit $rc, $R"
fi
"$M" $CAL -o d.json --resume >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && [ "$(check_file d.json.results.jsonl)" = "$FULL" ] &&
	ok "after a full disk, --resume completes the pass" || nok "resume after a full disk: exit $rc"

# a small filesystem that fills up (tmpfs in a private mount namespace, where allowed):
# the results stream stops with ENOSPC and keeps whole records; an output written
# there fails without touching the previous file
mkdir -p small
if unshare -rm sh -c "mount -t tmpfs -o size=4k tmpfs small" 2>/dev/null; then
	unshare -rm sh -c '
		mount -t tmpfs -o size=4k tmpfs small || exit 9
		"$1" calibrate --backend cpu --smoke -o small/s.json >/dev/null 2>err.small
		echo $? >rc.small
		cp small/s.json.results.jsonl small.jsonl
		rm -f small/*
		echo "{\"mine\": 1}" >small/keep.json
		"$1" advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --top 1 \
			--json small/keep.json >/dev/null 2>err.small2
		echo $? >rc.small2
		cp small/keep.json keep.after
		ls small >ls.small' sh "$M" "$CAL"
	R=$(check_file small.jsonl)
	if [ "$(cat rc.small)" = 2 ] && grep -q "No space left on device" err.small &&
		case $R in "bad=0 dup=0"*) true ;; *) false ;; esac; then
		ok "a full tmpfs: exit 2 (ENOSPC), whole records only ($R)"
	else
		cp err.small "$T/err"
		nok "a full tmpfs: exit $(cat rc.small), $R"
	fi
	if [ "$(cat rc.small2)" = 2 ] && grep -q '"mine"' keep.after && ! grep -q "tmp" ls.small; then
		ok "a full tmpfs: an output fails with exit 2, the previous file intact, no temporary file"
	else
		cp err.small2 "$T/err"
		nok "a full tmpfs: advise exit $(cat rc.small2), $(cat keep.after) $(cat ls.small | tr '\n' ' ')"
	fi
else
	echo "# no tmpfs in a private mount namespace here: the ulimit -f cases stand for it"
fi

# --- item 7: a second pass beside a running one
cp good.jsonl l.jsonl
if command -v flock >/dev/null 2>&1; then
	flock l.jsonl sleep 3 &
	holder=$!
	sleep 0.5
	"$M" $CAL -o l.json --results l.jsonl --resume >/dev/null 2>"$T/err"
	rc1=$?
	"$M" $CAL -o l.json --results l.jsonl --fresh >/dev/null 2>"$T/err2"
	rc2=$?
	kill $holder 2>/dev/null
	wait $holder 2>/dev/null
	if [ $rc1 -eq 2 ] && [ $rc2 -eq 2 ] && grep -q "locked" "$T/err" && grep -q "locked" "$T/err2" &&
		cmp -s l.jsonl good.jsonl; then
		ok "--resume and --fresh beside a running pass: exit 2, the file untouched"
	else
		nok "beside a running pass: --resume exit $rc1, --fresh exit $rc2"
	fi
fi
# two real passes at once: exactly one runs, the other is refused
rm -f c.json*
MEGATUNE_CALIBRATE_STOP_AFTER=2 "$M" $CAL -o c.json >/dev/null 2>&1
"$M" $CAL -o c.json --resume >c1.out 2>&1 &
p1=$!
"$M" $CAL -o c.json --resume >c2.out 2>&1 &
p2=$!
wait $p1
r1=$?
wait $p2
r2=$?
R=$(check_file c.json.results.jsonl)
if { [ $r1 -eq 0 ] || [ $r1 -eq 2 ]; } && { [ $r2 -eq 0 ] || [ $r2 -eq 2 ]; } &&
	case $R in "bad=0 dup=0"*) true ;; *) false ;; esac; then
	ok "two --resume at once: exits $r1 and $r2, no duplicate and no cut record ($R)"
else
	nok "two --resume at once: exits $r1 and $r2, $R"
fi

# --- kill -9 at seeded random points, then --resume
rm -f k.json*
seed=${HARDEN_SEED:-1616}
kills=0
i=0
while [ $kills -lt 60 ] && [ $i -lt 200 ]; do
	i=$((i + 1))
	# a delay of 0 to 250 ms from a seeded generator
	d=$(awk -v s=$seed -v i=$i 'BEGIN { srand(s + i); printf "%.3f", rand() * 0.25 }')
	if [ -e k.json.results.jsonl ]; then r=--resume; else r=; fi
	"$M" $CAL -o k.json $r >/dev/null 2>"$T/kerr" &
	pid=$!
	sleep "$d"
	if kill -9 $pid 2>/dev/null; then
		kills=$((kills + 1))
	fi
	wait $pid 2>/dev/null
	rc=$?
	if [ $rc -ne 137 ] && [ $rc -ne 0 ]; then
		cp "$T/kerr" "$T/err"
		nok "kill loop: run $i (after $kills kills) exited $rc"
		break
	fi
	[ $rc -eq 0 ] && rm -f k.json k.json.results.jsonl
done
"$M" $CAL -o k.json $( [ -e k.json.results.jsonl ] && echo --resume ) >/dev/null 2>"$T/err"
rc=$?
R=$(check_file k.json.results.jsonl)
if [ $rc -eq 0 ] && [ "$R" = "$FULL" ] && [ $kills -ge 50 ]; then
	ok "$kills kills -9 (seed $seed), each resumed: the pass ends whole ($R)"
else
	nok "after $kills kills: exit $rc, $R (complete: $FULL)"
fi
exit $fail
