#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune history and compare --history:
#  - a history of 20 runs (probe results with samples, seeded noise of 2%) with one step
#    change (gemm 10% slower from run 11 on): compare --history flags run 11 and none
#    before it, and from run 12 on names run 11 as where the step began;
#  - two processes adding 20 runs each at once lose nothing;
#  - a run lacking a metric the newest run has fails (unless --allow-missing); one whose
#    last record is cut short is refused by compare and by history add;
#  - history list, show, prune; a corrupt or newer-version database: exit 2.
# Exit 0 pass, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=$(pwd)/$BUILD/megatune
T=$(mktemp -d "${TMPDIR:-/tmp}/compare-history.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail() {
	echo "not ok - $*"
	exit 1
}

/usr/bin/python3 - "$T" <<'EOF' || fail "cannot write the runs"
import json, random, sys
rng = random.Random(15)
cases = [("gemm", "fp32 512x512x512", 1000.0), ("host", "triad 3x64MiB", 7600.0),
         ("attention", "fp32 fwd causal h4/2 d64 s256", 1020.0)]
for run in range(1, 21):
    with open("%s/run%02d.jsonl" % (sys.argv[1], run), "w") as f:
        f.write(json.dumps({"schema": "megatune.result/1", "kind": "run", "megatune": "0.1.0",
                            "started": "2026-01-%02dT00:00:00Z" % run, "host": "ci-node",
                            "backend": "cpu", "depth": "quick"}) + "\n")
        for probe, label, t in cases:
            if probe == "gemm" and run >= 11:
                t *= 1.10          # the step
            s = [t * rng.lognormvariate(0, 0.02) for _ in range(15)]
            ss = sorted(s)
            f.write(json.dumps({"probe": probe, "label": label, "rank": 0,
                                "time_us": {"n": 15, "median": ss[7], "min": ss[0],
                                            "max": ss[-1], "cv": 0.02},
                                "samples_us": [round(x, 3) for x in s]}) + "\n")
EOF

DB=$T/h.sqlite
flagged=""
for i in $(seq 1 20); do
	f=$T/run$(printf %02d "$i").jsonl
	if [ "$i" -gt 1 ]; then
		"$MT" compare --history "$DB" "$f" --json "$T/c$i.json" >"$T/out$i" 2>&1
		rc=$?
		[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "compare --history run $i: exit $rc $(cat "$T/out$i")"
		[ $rc -eq 1 ] && flagged="$flagged $i"
	fi
	"$MT" history add "$f" --db "$DB" --label "commit-$i" >"$T/add$i" 2>&1 ||
		fail "history add run $i: $(cat "$T/add$i")"
done
echo "runs flagged by compare --history (step at run 11):$flagged"
first=$(echo $flagged | cut -d' ' -f1)
[ "$first" = 11 ] || fail "the first flagged run is '$first', expected 11"
grep -q 'regressed .*gemm fp32 512x512x512' "$T/out11" || fail "run 11: gemm not the regression: $(cat "$T/out11")"
grep -q 'host triad' "$T/out11" && fail "run 11 flags an unchanged metric: $(cat "$T/out11")"
grep -q 'a step: since run 11 (commit-11)' "$T/out12" || fail "run 12 does not name the step: $(cat "$T/out12")"
grep -q '"method": "history"' "$T/c12.json" || fail "no history method in the JSON"
echo "ok - a 20-run history with one step: flagged at run 11, none before"

# another host: not comparable, unless --match leaves the host out
sed 's/"host": "ci-node"/"host": "ci-node-2"/' "$T/run05.jsonl" >"$T/other-host.jsonl"
"$MT" compare --history "$DB" "$T/other-host.jsonl" >"$T/oh1" 2>&1
[ $? -eq 2 ] || fail "another host compared by default: $(cat "$T/oh1")"
grep -q "no run of kind result (host 'ci-node-2'" "$T/oh1" || fail "another host: $(cat "$T/oh1")"
"$MT" compare --history "$DB" --match gpu "$T/other-host.jsonl" >"$T/oh2" 2>&1 ||
	fail "--match gpu: exit $? $(cat "$T/oh2")"
echo "ok - runs of another host are compared only with --match gpu"

# a run that crashed: a metric the newest run has is missing (a failure unless
# --allow-missing); a record cut short is refused, by compare and by history add
grep -v '"probe": "attention"' "$T/run20.jsonl" >"$T/lacks.jsonl"
"$MT" compare --history "$DB" "$T/lacks.jsonl" --junit "$T/lacks.xml" >"$T/m1" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '; 1 missing from the current' "$T/m1" &&
	grep -q '<failure type="missing"' "$T/lacks.xml" || fail "a missing metric: exit $rc $(cat "$T/m1")"
"$MT" compare --history "$DB" "$T/lacks.jsonl" --allow-missing >"$T/m2" 2>&1 ||
	fail "--allow-missing: exit $? $(cat "$T/m2")"
head -c 700 "$T/run20.jsonl" >"$T/cut.jsonl"
"$MT" compare --history "$DB" "$T/cut.jsonl" --junit "$T/cut.xml" >"$T/m3" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "$T/cut.jsonl:[2-9]: a record cut short" "$T/m3" &&
	grep -q "<failure type=\"bad input\" message=\"$T/cut.jsonl:[2-9]: a record cut short" \
		"$T/cut.xml" || fail "a cut current: exit $rc $(cat "$T/m3")"
n=$("$MT" history list --db "$DB" | grep -c commit-)
"$MT" history add "$T/cut.jsonl" --db "$DB" >"$T/m4" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "cut.jsonl:[2-9]: a record cut short" "$T/m4" &&
	[ "$("$MT" history list --db "$DB" | grep -c commit-)" -eq "$n" ] ||
	fail "history add of a cut file: exit $rc $(cat "$T/m4")"
echo "ok - a run lacking a metric of the newest run fails unless --allow-missing; a cut one is refused"

# two writers at once, from a database neither has created yet: writer a adds the 20 runs,
# writer b the same runs of another host
DB2=$T/two.sqlite
for i in $(seq -w 1 20); do
	sed 's/"host": "ci-node"/"host": "ci-node-b"/' "$T/run$i.jsonl" >"$T/b-run$i.jsonl"
done
( for i in $(seq -w 1 20); do "$MT" history add "$T/run$i.jsonl" --db "$DB2" --label a$i || exit 1; done ) >"$T/wa" 2>&1 &
pa=$!
( for i in $(seq -w 1 20); do "$MT" history add "$T/b-run$i.jsonl" --db "$DB2" --label b$i || exit 1; done ) >"$T/wb" 2>&1 &
pb=$!
wait $pa || fail "writer a: $(tail -3 "$T/wa")"
wait $pb || fail "writer b: $(tail -3 "$T/wb")"
n=$("$MT" history list --db "$DB2" | grep -c ' a[0-9]*$\| b[0-9]*$')
[ "$n" -eq 40 ] || fail "two writers: $n runs listed, expected 40"
na=$("$MT" history list --db "$DB2" --kind result | grep -c ' a[0-9]*$')
nb=$("$MT" history list --db "$DB2" --kind result | grep -c ' b[0-9]*$')
[ "$na" -eq 20 ] && [ "$nb" -eq 20 ] || fail "two writers: $na and $nb runs of 20"
/usr/bin/python3 - "$DB2" <<'EOF' || fail "metrics lost"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("select count(*) from metrics").fetchone()[0]
assert n == 40 * 3, n
assert db.execute("pragma journal_mode").fetchone()[0] == "wal"
assert db.execute("pragma user_version").fetchone()[0] == 1
EOF
echo "ok - two processes adding 20 runs each at once to a new database: 40 runs, 120 metrics, nothing lost"

# the same run added again, and by two writers at once: stored once
"$MT" history add "$T/run07.jsonl" --db "$DB2" --label again >"$T/again" 2>&1 ||
	fail "adding a run again: exit $? $(cat "$T/again")"
grep -q "not added: $T/run07.jsonl is run [0-9]* already (the same result, host, GPU, time and all 3 metrics)" \
	"$T/again" || fail "adding a run again: $(cat "$T/again")"
"$MT" history list --db "$DB2" | grep -q ' again$' && fail "a run stored twice"
DB3=$T/same.sqlite
"$MT" history add "$T/run04.jsonl" --db "$DB3" >"$T/s1" 2>&1 &
pa=$!
"$MT" history add "$T/run04.jsonl" --db "$DB3" >"$T/s2" 2>&1 &
pb=$!
wait $pa && wait $pb || fail "two writers of one run: $(cat "$T/s1" "$T/s2")"
[ "$(cat "$T/s1" "$T/s2" | grep -c '^added run')" -eq 1 ] &&
	[ "$(cat "$T/s1" "$T/s2" | grep -c '^not added')" -eq 1 ] ||
	fail "two writers of one run: $(cat "$T/s1" "$T/s2")"
# a run with one metric changed is another run
sed 's/"median": \([0-9.]*\)/"median": 1\1/' "$T/run07.jsonl" >"$T/run07b.jsonl"
"$MT" history add "$T/run07b.jsonl" --db "$DB2" >"$T/again2" 2>&1 && grep -q '^added run' "$T/again2" ||
	fail "a run with other values not added: $(cat "$T/again2")"
echo "ok - a run added again (or by two writers at once) is stored once; other values are another run"

# list, show, prune
"$MT" history show 1 --db "$DB" >"$T/show" 2>&1 || fail "history show: $(cat "$T/show")"
grep -q 'host: ci-node' "$T/show" || fail "show: no host: $(cat "$T/show")"
grep -q 'label: commit-1' "$T/show" || fail "show: no label"
grep -q 'gemm fp32 512x512x512, rank 0' "$T/show" || fail "show: no metric"
"$MT" history prune --db "$DB" --keep 5 >"$T/prune" 2>&1 || fail "prune: $(cat "$T/prune")"
grep -q 'removed 15 runs' "$T/prune" || fail "prune: $(cat "$T/prune")"
[ "$("$MT" history list --db "$DB" | grep -c commit-)" -eq 5 ] || fail "prune kept the wrong count"
"$MT" history prune --db "$DB" 20 >/dev/null || fail "prune by id"
[ "$("$MT" history list --db "$DB" | grep -c commit-)" -eq 4 ] || fail "prune by id"
echo "ok - history list, show, prune"

# bad databases: exit 2 with the reason
/usr/bin/python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute('create table runs(x)'); db.execute('pragma user_version = 2'); db.commit()" "$T/newer.sqlite"
"$MT" compare --history "$T/newer.sqlite" "$T/run01.jsonl" >"$T/e1" 2>&1
[ $? -eq 2 ] || fail "newer history: not exit 2"
grep -q 'schema version 2 is newer than this megatune reads (1)' "$T/e1" || fail "newer: $(cat "$T/e1")"
"$MT" history add "$T/run01.jsonl" --db "$T/newer.sqlite" >"$T/e2" 2>&1
[ $? -eq 2 ] || fail "add to a newer history: not exit 2"
/usr/bin/python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute('create table other(x)'); db.commit()" "$T/other.sqlite"
"$MT" history add "$T/run01.jsonl" --db "$T/other.sqlite" >"$T/e3" 2>&1
[ $? -eq 2 ] || fail "add to a foreign database: not exit 2"
grep -q 'not a megatune history' "$T/e3" || fail "foreign: $(cat "$T/e3")"
head -c 3000 "$T/run01.jsonl" >"$T/corrupt.sqlite"
"$MT" history list --db "$T/corrupt.sqlite" >"$T/e4" 2>&1
[ $? -eq 2 ] || fail "corrupt history: not exit 2"
grep -q 'not a megatune history database' "$T/e4" || fail "corrupt: $(cat "$T/e4")"
"$MT" compare --history "$T/none.sqlite" "$T/run01.jsonl" >"$T/e5" 2>&1
[ $? -eq 2 ] || fail "missing history: not exit 2"
[ -e "$T/none.sqlite" ] && fail "compare --history created a database"
echo "ok - corrupt, foreign, newer and missing databases: exit 2 with the reason"
