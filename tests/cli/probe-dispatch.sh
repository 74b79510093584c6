#!/bin/sh
# SPDX-License-Identifier: MIT
# The dispatch probe (probes/dispatch.c) on the CPU backend: a top-k routed all-to-all of a
# MoE model's tokens over MPI (dispatch in FP8 records, combine in BF16), every byte verified;
# calibrate writes its measured points into the profile's moe_dispatch section, which the
# advisor reads for the flex dispatcher.
#  - one process: not applicable (exit 77 with the reason);
#  - mpirun -np 2: dispatch and combine records, verified;
#  - mpirun -np 4 calibrate: moe_dispatch points (backend probe, source measured) for groups
#    of 2 and 4 ranks, and `estimate --moe-dispatcher flex` on that profile;
#  - a dense --model: exit 2 with the reason.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=$(pwd)/$BUILD/megatune
T=$(mktemp -d "${TMPDIR:-/tmp}/probe-dispatch.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm_rsh_agent=false
mpirun() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" command mpirun "$@"
}

fail() {
	echo "FAIL: $*"
	exit 1
}

"$MT" probe dispatch --backend cpu --smoke >"$T/one" 2>&1
rc=$?
[ $rc -eq 77 ] || fail "one rank: exit $rc, expected 77 $(cat "$T/one")"
grep -q 'dispatch: one rank; launch with mpirun' "$T/one" || fail "one rank: no reason: $(cat "$T/one")"

command -v mpirun >/dev/null 2>&1 || { echo "mpirun missing: the dispatch probe needs openmpi-bin"; exit 77; }

mpirun -np 2 "$MT" probe dispatch --backend cpu --smoke --json "$T/d.jsonl" >"$T/d.txt" 2>&1 ||
	fail "mpirun -np 2 probe dispatch: exit $? $(tail -20 "$T/d.txt")"
grep -q 'dispatch nvlink-2 t32 ' "$T/d.txt" || fail "no dispatch case: $(cat "$T/d.txt")"
grep -q 'combine nvlink-2 t32 ' "$T/d.txt" || fail "no combine case: $(cat "$T/d.txt")"
grep -q '"op": *"dispatch".*"dtype": *"fp8"' "$T/d.jsonl" || fail "no FP8 dispatch record"
grep -q '"op": *"combine".*"dtype": *"bf16"' "$T/d.jsonl" || fail "no BF16 combine record"
grep -q '"verified": *"FAILED"' "$T/d.jsonl" && fail "a dispatch result failed verification"
grep -q '"verified": *"yes"' "$T/d.jsonl" || fail "no verified result"

mpirun -np 4 "$MT" calibrate --backend cpu --smoke --probes gemm,collective,dispatch -o "$T/p.json" \
	>"$T/c.txt" 2>&1 || fail "mpirun -np 4 calibrate: exit $? $(tail -20 "$T/c.txt")"
python3 - "$T/p.json" <<'PY' || fail "moe_dispatch section of the calibrated profile"
import json, sys
p = json.load(open(sys.argv[1]))
sec = p["moe_dispatch"]
kinds = {s["id"]: s["kind"] for s in p["sources"]}
got = {(q["op"], q["ranks"]) for q in sec["points"]}
assert {("dispatch", 2), ("combine", 2), ("dispatch", 4), ("combine", 4)} <= got, got
for q in sec["points"]:
    assert q["backend"] == "probe" and q["basis"] == "rank" and q["gbps"] > 0, q
    assert kinds[q["source"]] == "measured", q
    assert q["dtype"] == ("fp8" if q["op"] == "dispatch" else "bf16"), q
PY
"$MT" estimate --model tests/fixtures/models/hf-qwen1.5-moe-a2.7b.json --cluster "$T/p.json" \
	--gpus 4 --seq 1024 --gbs 8 --ep 4 --moe-dispatcher flex >"$T/e.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "estimate on the calibrated profile: exit $rc $(cat "$T/e.txt")"
grep -q 'dispatcher flex' "$T/e.txt" || fail "estimate does not run flex: $(head -5 "$T/e.txt")"

mpirun -np 2 "$MT" probe dispatch --backend cpu --smoke --model llama3-8b >"$T/dense" 2>&1
grep -q 'dispatch: --model llama3-8b has no experts' "$T/dense" || fail "dense model: $(cat "$T/dense")"
echo ok
