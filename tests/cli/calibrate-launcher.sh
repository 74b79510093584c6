#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune calibrate --rounds N --launcher CMD: each round is a launch of its own.
#  - a launcher that logs how it was called: one call per round, each a process of
#    its own with --launched-round k; one head record, the same cases in every
#    round, the profile written at the end from the median round;
#  - under `--launcher 'mpirun -np 2'`: every round a 2-rank world;
#  - a round whose launch fails stops the pass with the round named (exit 1), and
#    --resume runs the rounds that are missing without measuring a case twice;
#  - an interrupted round: exit 130, --resume finishes;
#  - bad input: an empty launcher, one that does not exist, --launcher under a
#    launcher, --launched-round beyond --rounds: exit 2 with the reason.
# Exit 0 pass, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=$(pwd)/$BUILD/megatune
T=$(mktemp -d "${TMPDIR:-/tmp}/calibrate-launcher.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm_rsh_agent=false
CAL="calibrate --backend cpu --smoke --probes gemm,host"

fail() {
	echo "FAIL: $*"
	exit 1
}

# records of a results file in round $2 (head record excluded)
in_round() {
	grep -c "\"round\":[[:space:]]*$2[,}]" "$1"
}

# a launcher that logs its arguments, then runs the command; with FAIL_ROUND
# set, the launch of that round exits FAIL_CODE (default 1, as mpirun and srun
# do when a launch fails) instead; with SLOW set, it sleeps that long first
cat >"$T/launch" <<'EOF'
#!/bin/sh
log=$1
shift
echo "$*" >>"$log"
for a in "$@"; do last=$a; done
[ "${FAIL_ROUND:-0}" = "$last" ] && exit "${FAIL_CODE:-1}"
[ -n "${SLOW:-}" ] && sleep "$SLOW"
exec "$@"
EOF
chmod +x "$T/launch"

# --- three rounds, three launches
"$MT" $CAL --rounds 3 --launcher "$T/launch $T/log" -o "$T/p.json" 2>"$T/err" ||
	fail "calibrate --launcher: exit $? $(cat "$T/err")"
[ "$(wc -l <"$T/log")" -eq 3 ] || fail "expected 3 launches: $(cat "$T/log")"
for k in 1 2 3; do
	grep -q -- "--launched-round $k\$" "$T/log" || fail "no launch of round $k: $(cat "$T/log")"
	grep -q "^round $k of 3: $T/launch" "$T/err" || fail "round $k not announced: $(cat "$T/err")"
done
grep -q "megatune-probe calibrate --backend cpu --smoke --probes gemm,host --rounds 3 --launcher" "$T/log" ||
	fail "the launch does not run this calibrate command: $(cat "$T/log")"
R=$T/p.json.results.jsonl
[ "$(grep -c '"kind":[[:space:]]*"run"' "$R")" -eq 1 ] || fail "expected one head record"
n1=$(in_round "$R" 1)
[ "$n1" -ge 3 ] || fail "round 1 has $n1 records"
[ "$(in_round "$R" 2)" -eq "$n1" ] && [ "$(in_round "$R" 3)" -eq "$n1" ] ||
	fail "rounds differ: $n1, $(in_round "$R" 2), $(in_round "$R" 3)"
grep -q '"schema":[[:space:]]*"megatune.profile/1"' "$T/p.json" || fail "no profile written"
grep -q "wrote $T/p.json" "$T/err" || fail "the profile not announced: $(cat "$T/err")"
# the launches are not asked to resume what they started: no "resuming" line
grep -q '^resuming' "$T/err" && fail "a later round said it resumed: $(cat "$T/err")"

# --- a launch that fails (exit 1) in round 2, then --resume
rm -f "$T/log"
FAIL_ROUND=2 "$MT" $CAL --rounds 3 --launcher "$T/launch $T/log" -o "$T/q.json" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] || fail "a failed round: expected exit 1, got $rc: $(cat "$T/err")"
grep -q "round 2: '$T/launch $T/log' exited with status 1" "$T/err" ||
	fail "the failed round not named: $(cat "$T/err")"
grep -q "^round 3 of 3" "$T/err" && fail "the pass went on after a failed launch: $(cat "$T/err")"
grep -q -- "--resume continues" "$T/err" || fail "no way on named: $(cat "$T/err")"
[ -e "$T/q.json" ] && fail "a profile written from a pass that stopped"
Q=$T/q.json.results.jsonl
n1=$(in_round "$Q" 1)
[ "$(in_round "$Q" 2)" -eq 0 ] || fail "round 2 measured in a failed launch"
"$MT" $CAL --rounds 3 --launcher "$T/launch $T/log" --resume -o "$T/q.json" 2>"$T/err" ||
	fail "--resume after a failed round: exit $? $(cat "$T/err")"
[ "$(in_round "$Q" 1)" -eq "$n1" ] || fail "round 1 measured twice: $(in_round "$Q" 1) vs $n1"
[ "$(in_round "$Q" 2)" -eq "$n1" ] && [ "$(in_round "$Q" 3)" -eq "$n1" ] ||
	fail "--resume did not finish the rounds: $(in_round "$Q" 2), $(in_round "$Q" 3) of $n1"
grep -q '"schema":[[:space:]]*"megatune.profile/1"' "$T/q.json" || fail "no profile after --resume"

# --- interrupted inside a round (stopped after 2 results of each launch)
MEGATUNE_CALIBRATE_STOP_AFTER=2 "$MT" $CAL --rounds 2 --launcher env -o "$T/s.json" 2>"$T/err"
rc=$?
[ $rc -eq 130 ] || fail "an interrupted round: expected exit 130, got $rc: $(cat "$T/err")"
grep -q "interrupted in round 1" "$T/err" || fail "the interrupted round not named: $(cat "$T/err")"
"$MT" $CAL --rounds 2 --launcher env --resume -o "$T/s.json" 2>"$T/err" ||
	fail "--resume after an interrupted round: exit $? $(cat "$T/err")"
S=$T/s.json.results.jsonl
[ "$(in_round "$S" 1)" -eq "$(in_round "$S" 2)" ] ||
	fail "rounds differ after --resume: $(in_round "$S" 1), $(in_round "$S" 2)"
grep -q '"schema":[[:space:]]*"megatune.profile/1"' "$T/s.json" || fail "no profile after --resume"

# --- the last round's launch fails: no profile, the launch named
rm -f "$T/log"
FAIL_ROUND=2 "$MT" $CAL --rounds 2 --launcher "$T/launch $T/log" -o "$T/l.json" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "round 2: '$T/launch $T/log' exited with status 1" "$T/err" ||
	fail "a failed last launch: exit $rc $(cat "$T/err")"
[ -e "$T/l.json" ] && fail "a profile from a pass whose last launch failed"

# --- SIGTERM to megatune during round 1: passed on, no round 2, exit 130
rm -f "$T/log"
SLOW=3 "$MT" $CAL --rounds 3 --launcher "$T/launch $T/log" -o "$T/t.json" 2>"$T/err" &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || fail "SIGTERM: expected exit 130, got $rc: $(cat "$T/err")"
grep -q "^round 2 of 3" "$T/err" && fail "SIGTERM: the pass went on: $(cat "$T/err")"
grep -q "interrupted in round 1" "$T/err" || fail "SIGTERM: the round not named: $(cat "$T/err")"

# --- under mpirun: every round a 2-rank world
if command -v mpirun >/dev/null 2>&1; then
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$MT" calibrate --backend cpu \
		--smoke --probes gemm,collective,host --rounds 2 --launcher 'mpirun -np 2' \
		-o "$T/m.json" >"$T/out" 2>&1 || fail "--launcher 'mpirun -np 2': exit $? $(tail -20 "$T/out")"
	M=$T/m.json.results.jsonl
	grep '"kind":[[:space:]]*"run"' "$M" | grep -q '"world":[[:space:]]*{"ranks":[[:space:]]*2' ||
		fail "the head record is not a 2-rank world: $(head -1 "$M")"
	[ "$(grep '"probe":[[:space:]]*"collective"' "$M" | in_round /dev/stdin 1)" -ge 1 ] &&
		[ "$(grep '"probe":[[:space:]]*"collective"' "$M" | in_round /dev/stdin 2)" -ge 1 ] ||
		fail "no collective in each round"
	grep -q '"schema":[[:space:]]*"megatune.profile/1"' "$T/m.json" || fail "no profile under mpirun"
else
	echo "mpirun missing: the 2-rank launch needs openmpi-bin (checked the rest)"
fi

# --- bad input
"$MT" $CAL --rounds 2 --launcher '' -o "$T/b.json" 2>"$T/err"
[ $? -eq 2 ] && grep -q -- "--launcher: expected a command" "$T/err" ||
	fail "an empty launcher: $(cat "$T/err")"
"$MT" $CAL --rounds 2 --launcher 'no-such-launcher-here -n 2' -o "$T/b.json" 2>"$T/err"
[ $? -eq 2 ] && grep -q "the launcher .no-such-launcher-here. is not found on PATH (the program of --launcher)" "$T/err" ||
	fail "a launcher that does not exist: $(cat "$T/err")"
[ -e "$T/b.json.results.jsonl" ] && fail "a results file started for a launcher that does not exist"
OMPI_COMM_WORLD_SIZE=2 "$MT" $CAL --rounds 2 --launcher env -o "$T/b.json" 2>"$T/err"
[ $? -eq 2 ] && grep -q "outside mpirun or srun" "$T/err" ||
	fail "--launcher under a launcher: $(cat "$T/err")"
"$MT" $CAL --rounds 2 --launched-round 3 -o "$T/b.json" 2>"$T/err"
[ $? -eq 2 ] && grep -q -- "--launched-round 3: expected at most --rounds (2)" "$T/err" ||
	fail "--launched-round beyond --rounds: $(cat "$T/err")"
echo "calibrate --launcher: 3 launches for 3 rounds, a failed and an interrupted round resumed"
