#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune calibrate and megatune probe on the CPU backends (real work, no GPU):
#  - one process: a valid profile that `megatune advise` reads, its MFU against the CPU's
#    peak written as the fraction of a TFLOP/s it is;
#  - under mpirun -np 4: collectives over MPI groups of 2 and 4 ranks, every rank's
#    per-device results gathered on rank 0, a valid profile;
#  - an interrupted pass (stopped after 3 results) keeps its results, refuses to
#    start over silently, and --resume finishes it without measuring a case twice;
#  - bad results files and bad options: exit 2, a good profile left untouched;
#  - the GPU probes exit 77 with the reason where there is no GPU.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=$(pwd)/$BUILD/megatune
T=$(mktemp -d "${TMPDIR:-/tmp}/calibrate.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# a container has no ptrace-based single copy; keep MPI to shared memory and self
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm_rsh_agent=false
HAVE_MPI=0
command -v mpirun >/dev/null 2>&1 && HAVE_MPI=1
# under the sanitizers (make check): OpenMPI's plugins, unloaded at exit, leave
# allocations LeakSanitizer cannot attribute; leak checking stays on for the
# single-process runs
mpirun() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" command mpirun "$@"
}
GPT2=tests/fixtures/models/hf-gpt2.json

fail() {
	echo "FAIL: $*"
	exit 1
}

# count JSON records of a results file whose probe is $2
count() {
	grep -c "\"probe\": *\"$2\"" "$1"
}

# --- one process
"$MT" calibrate --backend cpu --smoke -o "$T/p1.json" 2>"$T/err1" ||
	fail "calibrate --backend cpu: exit $? $(cat "$T/err1")"
grep -q '"schema":[[:space:]]*"megatune.profile/1"' "$T/p1.json" || fail "no profile schema"
grep -q '"kind":[[:space:]]*"measured"' "$T/p1.json" || fail "no measured source"
grep -q '"dtype":[[:space:]]*"fp32"' "$T/p1.json" || fail "no gemm measurement"
grep -q '"optimizer_gparams_per_s"' "$T/p1.json" || fail "no Adam throughput"
grep -q 'collective *skipped: .*one rank' "$T/err1" || fail "collective not skipped with one rank: $(cat "$T/err1")"
[ "$(count "$T/p1.json.results.jsonl" gemm)" -ge 2 ] || fail "too few gemm results"
grep -q '"verified": *"FAILED"' "$T/p1.json.results.jsonl" && fail "a CPU result failed verification"
"$MT" advise --model $GPT2 --cluster "$T/p1.json" --gpus 1 --seq 1024 --gbs 8 --top 1 \
	>"$T/adv1" 2>&1
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "advise on the calibrated profile: exit $rc $(cat "$T/adv1")"
# MFU against the CPU's own peak, a fraction of a TFLOP/s, written as such (not "of 0")
peak=$(sed -n 's/.*MFU [0-9.]*% of \([0-9.e+-]*\) TFLOP\/s.*/\1/p' "$T/adv1")
[ -n "$peak" ] && awk -v p="$peak" 'BEGIN { exit !(p > 0) }' ||
	fail "the MFU line names no peak above 0: $(grep MFU "$T/adv1")"

# --- mpirun -np 4
if [ $HAVE_MPI = 1 ]; then
	mpirun -np 4 "$MT" calibrate --backend cpu --smoke -o "$T/p4.json" \
		--probes gemm,collective,host >"$T/out4" 2>&1 ||
		fail "mpirun -np 4 calibrate: exit $? $(tail -20 "$T/out4")"
	R="$T/p4.json.results.jsonl"
	grep -q '"ranks": *4' "$R" || fail "the head does not say 4 ranks"
	for rk in 0 1 2 3; do
		grep -q "\"probe\": *\"gemm\".*\"rank\": *$rk," "$R" || fail "no gemm result of rank $rk"
	done
	grep -q '"label": *"all_reduce nvlink-2 ' "$R" || fail "no all_reduce on pairs"
	grep -q '"label": *"all_gather nvlink-4 ' "$R" || fail "no all_gather on 4 ranks"
	grep -q '"busbw_gbps": *[0-9]' "$R" || fail "no bus bandwidth"
	python3 - "$T/p4.json" <<'EOF' || fail "profile of 4 ranks"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["node"]["gpus_per_node"] == 4, p["node"]
curves = {(c["op"], c["ranks"]) for c in p["collectives"]}
assert ("all_reduce", 2) in curves and ("all_reduce", 4) in curves, curves
for c in p["collectives"]:
    assert c["span"] == "nvlink" and c["points"], c
    for pt in c["points"]:
        assert pt["busbw_gbps"] > 0 and pt["stats"]["n"] >= 1, pt
EOF
	"$MT" advise --model $GPT2 --cluster "$T/p4.json" --gpus 4 --seq 1024 --gbs 8 --top 1 \
		>"$T/adv4" 2>&1
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "advise on the 4-rank profile: exit $rc $(cat "$T/adv4")"
	# the collective probe alone, as nccl-tests would be run
	mpirun -np 2 "$MT" probe collective --backend cpu --smoke --ops all_reduce \
		--json "$T/coll.jsonl" >"$T/coll.txt" 2>&1 || fail "probe collective: $(cat "$T/coll.txt")"
	grep -q '^# case' "$T/coll.txt" || fail "no table header"
	head -1 "$T/coll.jsonl" | grep -q '"schema": *"megatune.result/1"' || fail "no result head"
	grep -q '"op": *"all_reduce".*"busbw_gbps"' "$T/coll.jsonl" || fail "no all_reduce record"

else
	echo "mpirun missing: the multi-process checks need openmpi-bin"
	exit 77
fi

# --- interrupted and resumed
MEGATUNE_CALIBRATE_STOP_AFTER=3 "$MT" calibrate --backend cpu --smoke --probes gemm,host \
	-o "$T/r.json" 2>"$T/errr"
rc=$?
[ $rc -eq 130 ] || fail "interrupted pass: exit $rc, expected 130 $(cat "$T/errr")"
[ -e "$T/r.json" ] && fail "an interrupted pass wrote a profile"
grep -q -- "--resume" "$T/errr" || fail "no hint to resume"
n1=$(grep -c '"probe"' "$T/r.json.results.jsonl")
[ "$n1" -ge 3 ] || fail "interrupted pass kept $n1 results"
"$MT" calibrate --backend cpu --smoke --probes gemm,host -o "$T/r.json" 2>"$T/errx"
[ $? -eq 2 ] || fail "a second pass over an unfinished one must refuse"
grep -q "exists" "$T/errx" || fail "no reason given: $(cat "$T/errx")"
"$MT" calibrate --backend cpu --smoke --probes gemm,host -o "$T/r.json" --resume 2>"$T/errr2" ||
	fail "resume: exit $? $(cat "$T/errr2")"
grep -q "resuming: $n1 results" "$T/errr2" || fail "resume did not read the results: $(cat "$T/errr2")"
"$MT" calibrate --backend cpu --smoke --probes gemm,host -o "$T/f.json" 2>/dev/null ||
	fail "fresh pass"
nr=$(grep -c '"probe"' "$T/r.json.results.jsonl")
nf=$(grep -c '"probe"' "$T/f.json.results.jsonl")
[ "$nr" -eq "$nf" ] || fail "resumed pass has $nr results, a whole pass $nf"
dups=$(grep -o '"label": *"[^"]*"' "$T/r.json.results.jsonl" | sort | uniq -d | head -1)
[ -z "$dups" ] || fail "measured twice: $dups"
grep -q '"schema":[[:space:]]*"megatune.profile/1"' "$T/r.json" || fail "no profile after resume"
# a killed writer's last line is dropped with a warning
printf '{"probe": "gemm", "lab' >>"$T/r.json.results.jsonl"
"$MT" calibrate --backend cpu --smoke --probes gemm,host -o "$T/r.json" --resume 2>"$T/errr3" ||
	fail "resume after a cut line: $(cat "$T/errr3")"
grep -q "cut short" "$T/errr3" || fail "no warning on a cut line"

# --- bad input: exit 2, the good profile stays
cp "$T/p1.json" "$T/good.json"
printf '{"schema": "megatune.result/1", "backend": "cpu", "world": {"ranks": 1}}\nnot json\n{}\n' \
	>"$T/good.json.results.jsonl"
"$MT" calibrate --backend cpu --smoke -o "$T/good.json" --resume 2>"$T/errb"
[ $? -eq 2 ] || fail "a malformed results file must exit 2"
grep -q "line 2" "$T/errb" || fail "the message does not name the line: $(cat "$T/errb")"
cmp -s "$T/p1.json" "$T/good.json" || fail "a failed resume touched the profile"
printf '{"schema": "megatune.result/1", "backend": "cuda", "world": {"ranks": 1}}\n' \
	>"$T/good.json.results.jsonl"
"$MT" calibrate --backend cpu --smoke -o "$T/good.json" --resume 2>"$T/errb"
[ $? -eq 2 ] && grep -q "backend" "$T/errb" || fail "resuming another backend's pass: $(cat "$T/errb")"
for args in "--margin 200" "--probes gemm,nosuch" "--backend tpu" "--max-bytes 12Q" "--resume --fresh"; do
	# shellcheck disable=SC2086
	"$MT" calibrate --backend cpu -o "$T/x.json" $args 2>"$T/erro"
	[ $? -eq 2 ] || fail "calibrate $args: expected exit 2"
	grep -q "error" "$T/erro" || fail "calibrate $args: no message"
done
"$MT" calibrate --backend cpu 2>/dev/null
[ $? -eq 2 ] || fail "calibrate without -o"

# --- the GPU backends where there is none
if ! "$MT" probe topology >/dev/null 2>&1; then
	for p in gemm attention collective offload; do
		"$MT" probe $p --smoke >/dev/null 2>"$T/err77"
		rc=$?
		[ $rc -eq 77 ] || fail "probe $p without a GPU: exit $rc, expected 77"
		grep -q "not applicable here" "$T/err77" || fail "probe $p: no reason: $(cat "$T/err77")"
	done
	"$BUILD/probe-gemm" --smoke >/dev/null 2>&1
	[ $? -eq 77 ] || fail "build/probe-gemm without a GPU: expected 77"
	"$MT" calibrate -o "$T/g.json" 2>"$T/errg"
	[ $? -eq 77 ] || fail "calibrate (cuda) without a GPU: expected 77"
	grep -q "backend cpu" "$T/errg" || fail "no hint for the CPU backend"
	[ -e "$T/g.json" ] && fail "calibrate without a GPU wrote a profile"
fi
"$BUILD/probe-host" --backend cpu --smoke --json - >"$T/host.jsonl" || fail "build/probe-host"
head -1 "$T/host.jsonl" | grep -q '"kind": *"run"' || fail "probe-host: no run record"
"$MT" probe nosuch 2>/dev/null
[ $? -eq 2 ] || fail "an unknown probe must exit 2"
echo "calibrate: ok"
exit 0
