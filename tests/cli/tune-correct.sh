#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune tune --runs: one candidate at a time, the others re-predicted after
# each run with the correction `calibrate --from-validation` fits, with the
# launcher stand-in tests/validate/offset.py, whose step is megatune's own
# prediction x 1.3 (a systematic offset) x a deviation of its own per
# candidate (within 3%).  The job: the GPU campaign's 317M Llama on one H100,
# sequence 1024, global batch 16; the list: advise's 6 best, which differ in
# micro-batch and in recomputation (none, selective, full).  Checks:
#   - after the first run, every candidate not run is predicted within 10% of
#     what the stand-in measures for it, where the uncorrected prediction is
#     20-40% off; the prediction is the one `advise` makes on the profile
#     `calibrate --from-validation` corrects from that run (the same fit);
#   - in three runs, each run after the first ran with a corrected
#     prediction within 10% of its measurement, the output and the document
#     say both predictions, the measurement and both errors, and the best
#     the stand-in has in the whole list is found and named with its run;
#     whether the correction reorders the list is said as the document has it;
#   - --resume goes on to the runs asked for, running nothing twice;
#   - a launcher that fails, a cut log, one cut before any steady step, a
#     launcher failing every run, an advice whose profile or configuration
#     cannot be read: clear messages and exit codes 0, 1 and 2.
# The checks on the documents are tests/validate/tune_check.py's.
# Exit 0 pass, 77 skip, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
M=${MEGATUNE:-build/megatune}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/tune-correct.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
JOB="--model tests/fixtures/models/campaign-llama-350m.json --cluster dgx-h100 --gpus 1 --seq 1024
--gbs 16 --dist-opt off --attention unfused --cuda-graphs off --full-iteration-graphs off --no-fold"
TPL="$PY tests/validate/offset.py {advice} {rank} {iters} {dir} {name}"
export OFFSET_DEV="c1=1.03 c2=1.02 c3=0.97 c4=1.01 c5=0.99 c6=1.00"
tune() { # DIR [options]: tune of the job's 6 best into DIR/run, output in DIR/out
	d=$1
	shift
	mkdir -p "$d"
	# shellcheck disable=SC2086
	"$M" tune $JOB --candidates 6 --launch "$TPL" --iters 10 --warmup 3 --timeout 20 \
		--dir "$d/run" "$@" >"$d/out" 2>&1
}

# --- one run: the correction it gives, against the stand-in and calibrate's own
tune "$T/one" --runs 1 || { echo "not ok - tune --runs 1: exit $?"; cat "$T/one/out"; exit 1; }
"$M" calibrate --from-validation "$T/one/run/validation.json" --cluster dgx-h100 \
	-o "$T/corr.json" >"$T/cal.out" 2>&1 || { echo "not ok - calibrate: exit $?"; cat "$T/cal.out"; exit 1; }
# shellcheck disable=SC2086
"$M" advise $JOB --cluster "$T/corr.json" --top 16 --json "$T/corr-adv.json" >/dev/null 2>&1 ||
	{ echo "not ok - advise on the corrected profile: exit $?"; exit 1; }
"$PY" tests/validate/tune_check.py one "$T/one/run/advice.json" "$T/one/run/validation.json" \
	"$T/corr-adv.json" "$T/cal.out" "$T/one/out" || fail=1

# --- three runs
tune "$T/three" --runs 3 || { echo "not ok - tune --runs 3: exit $?"; cat "$T/three/out"; exit 1; }
"$PY" tests/validate/tune_check.py three "$T/three/run/validation.json" "$T/three/out" \
	"$T/three/run/offset-runs" || fail=1

# --- two runs, then --resume to three: the same runs, none twice
tune "$T/res" --runs 2 && tune "$T/res" --runs 3 --resume ||
	{ echo "not ok - tune --runs 2, then --resume --runs 3: exit $?"; cat "$T/res/out"; fail=1; }
a=$(sed -n 's/^measured best: \([^,]*\),.*/\1/p' "$T/res/out")
b=$(sed -n 's/^measured best: \([^,]*\),.*/\1/p' "$T/three/out")
n=$(wc -l <"$T/res/run/offset-runs")
[ "$n" -eq 3 ] && [ -z "$(sort "$T/res/run/offset-runs" | uniq -d)" ] && [ "$a" = "$b" ] &&
	grep -q "^best of the runs: run [123] of 3," "$T/res/out" &&
	echo "ok - --resume: 3 runs in all, none twice, the same best $a" ||
	{ echo "not ok - --resume: $n runs, best '$a' against '$b'"; cat "$T/res/out"; fail=1; }

# --- bad inputs
# the first run fails, the second has its log cut mid-line, the third is cut
# before a steady step: the tune goes on, the correction from what ended ok
OFFSET_PLAN="c1=fail c2=cut c3=cutearly" tune "$T/bad" --runs 4
"$PY" tests/validate/tune_check.py bad "$T/bad/run/validation.json" "$T/bad/out" "$?" || fail=1
OFFSET_PLAN="c1=fail c2=fail c3=fail c4=fail c5=fail c6=fail" tune "$T/allbad" --runs 2
rc=$?
[ $rc -eq 1 ] && grep -q "^tune: no candidate ran to the end in 2 run(s)" "$T/allbad/out" &&
	grep -q "^best of the runs: none ran to the end" "$T/allbad/out" &&
	echo "ok - every run failing: exit 1, said" ||
	{ echo "not ok - every run failing: exit $rc"; cat "$T/allbad/out"; fail=1; }

# an advice whose profile or configuration cannot be read: exit 2 before any run
mkdir -p "$T/adv"
"$PY" - "$T/one/run/advice.json" "$T/adv" <<'PYEOF'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.loads(json.dumps(a))
b["job"]["cluster"] = "no-such-profile"
b["job"]["cluster_source"] = "/no/such/profile.json"
json.dump(b, open(sys.argv[2] + "/cluster.json", "w"))
b = json.loads(json.dumps(a))
b["candidates"][3]["config"]["mbs"] = "eight"
json.dump(b, open(sys.argv[2] + "/config.json", "w"))
PYEOF
for c in "cluster|field 'job.cluster': the profile 'no-such-profile' cannot be loaded" \
	"config|config.json: field 'candidates\[3\].config.mbs'"; do
	f=${c%%|*}
	want=${c#*|}
	"$M" tune --advice "$T/adv/$f.json" --runs 2 --launch "$TPL" --iters 10 --warmup 3 \
		--dir "$T/adv/$f" >"$T/adv/$f.out" 2>&1
	rc=$?
	[ $rc -eq 2 ] && grep -q "$want" "$T/adv/$f.out" && [ ! -e "$T/adv/$f/offset-runs" ] &&
		echo "ok - an advice with a bad $f: exit 2 before any run" ||
		{ echo "not ok - an advice with a bad $f: exit $rc"; cat "$T/adv/$f.out"; fail=1; }
done
exit $fail
