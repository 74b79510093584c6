#!/bin/sh
# SPDX-License-Identifier: MIT
# The advisor carries only what it needs: build/megatune links no MPI, BLAS
# or PAPI library; `megatune calibrate|probe` run build/megatune-probe from
# beside it (under mpirun too), and say which file is missing when it is not
# there (exit 2).
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=$(pwd)/$BUILD/megatune
T=$(mktemp -d "${TMPDIR:-/tmp}/probe-exe.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm_rsh_agent=false

fail() {
	echo "FAIL: $*"
	exit 1
}

[ -x "$BUILD/megatune-probe" ] || fail "$BUILD/megatune-probe was not built"
if command -v ldd >/dev/null 2>&1; then
	ldd "$MT" >"$T/ldd" 2>&1 || fail "ldd $MT: $(cat "$T/ldd")"
	if grep -E 'lib(mpi|open-rte|open-pal|openblas|blas|cblas|papi)[.-]' "$T/ldd"; then
		fail "$MT links a measuring library"
	fi
	ldd "$BUILD/megatune-probe" | grep -q libmpi || fail "megatune-probe does not link MPI"
fi

# the probe links and `megatune probe` reach the same program
"$MT" probe --list >"$T/list" || fail "probe --list: exit $?"
for n in $(cat "$T/list"); do
	[ "$BUILD/probe-$n" -ef "$BUILD/megatune-probe" ] || fail "$BUILD/probe-$n is not megatune-probe"
done
"$MT" calibrate --probes nope -o "$T/x.json" 2>"$T/err"
[ $? -eq 2 ] && grep -q "unknown probe 'nope'" "$T/err" || fail "calibrate --probes nope: $(cat "$T/err")"

# megatune without megatune-probe beside it: exit 2 naming the file
mkdir "$T/alone" && cp "$MT" "$T/alone/megatune" || exit 2
"$T/alone/megatune" calibrate --backend cpu --smoke -o "$T/p.json" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] || fail "calibrate without megatune-probe: exit $rc"
grep -q "alone/megatune-probe" "$T/err" || fail "no file named: $(cat "$T/err")"
"$T/alone/megatune" probe gemm --backend cpu --smoke >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "alone/megatune-probe" "$T/err" || fail "probe without megatune-probe: $(cat "$T/err")"

# under mpirun, through megatune
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not installed"; exit 77; }
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" mpirun -np 4 "$MT" calibrate \
	--backend cpu --smoke --probes gemm,collective --ops all_reduce -o "$T/p4.json" >"$T/out4" 2>&1 ||
	fail "mpirun -np 4 megatune calibrate: exit $? $(tail -20 "$T/out4")"
grep -q '"ranks": *4' "$T/p4.json.results.jsonl" || fail "the head does not say 4 ranks"
grep -q '"schema":[[:space:]]*"megatune.profile/1"' "$T/p4.json" || fail "no profile"
exit 0
