#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune tune --proxy runs end to end with the CPU backend: it advises, runs the proxy of
# each candidate under mpirun (megatune-probe found beside megatune, with validate's own
# defaults), reads the runs and writes the validation.  It once crashed (exit 139): tune
# copied validate's defaults by hand and left out the proxy program.
# Exit 0 pass, 77 skip, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=${MEGATUNE:-$BUILD/megatune}
MT=$(cd "$(dirname "$MT")" && pwd)/$(basename "$MT")
command -v mpirun >/dev/null 2>&1 || { echo "no mpirun"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/tune-proxy.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm_rsh_agent=false
cd "$T" || exit 2
# Open MPI's own allocations are reported as leaks under the sanitizers
"$MT" tune --model "$OLDPWD/tests/fixtures/models/tiny-llama.json" --gpus 4 --seq 128 --gbs 16 \
	--proxy --backend cpu --per-round 2 --max-rounds 1 --iters 3 --warmup 1 --dir "$T/run" \
	--mpirun "env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 mpirun -np {gpus}" \
	>"$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	tail -20 "$T/out"
	echo "FAIL: tune --proxy --backend cpu exited $rc (expected 0)"
	exit 1
fi
grep -q '"mode": "proxy"' "$T/run/validation.json" || { echo "FAIL: no proxy validation"; exit 1; }
n=$(grep -c '"status": "ok"' "$T/run/validation.json")
[ "$n" -ge 2 ] || { tail -20 "$T/out"; echo "FAIL: $n candidates ran ok, expected 2"; exit 1; }
echo "tune --proxy: $n candidates ran ok"
