#!/bin/sh
# SPDX-License-Identifier: MIT
# A missing GPU library is "not applicable here" (exit 77) only where there is no GPU:
# where the NVIDIA driver has a GPU, it is an error naming the library and where it was
# looked for (exit 2).  The machine with a GPU is simulated by MEGATUNE_NVIDIA_PROC (the
# folder megatune reads instead of /proc/driver/nvidia/gpus) holding one entry; the
# missing library by MEGATUNE_CUDA_LIB / --lib naming a file that does not exist.
# Exit 0 pass, 77 skip, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=${MEGATUNE:-$BUILD/megatune}
[ -x "$MT" ] || { echo "no $MT"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-missing-lib.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/proc/0000:01:00.0" "$T/noproc"
fail=0
check() { # want-exit pattern description command...
	want=$1 pat=$2 what=$3
	shift 3
	"$@" >"$T/out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL: $what: exit $rc, expected $want"; sed 's/^/  /' "$T/out"; fail=1
	elif ! grep -Eq -- "$pat" "$T/out"; then
		echo "FAIL: $what: output does not match /$pat/"; sed 's/^/  /' "$T/out"; fail=1
	else
		echo "ok: $what (exit $rc)"
	fi
}
GPU="env MEGATUNE_NVIDIA_PROC=$T/proc MEGATUNE_CUDA_LIB=$T/nonexistent.so"
NOGPU="env MEGATUNE_NVIDIA_PROC=$T/noproc MEGATUNE_CUDA_LIB=$T/nonexistent.so"
check 2 "probe gemm: error: CUDA backend unavailable on a machine with 1 NVIDIA GPU: .*nonexistent.so" \
	"probe, GPU present" $GPU "$MT" probe gemm --backend cuda --smoke
check 77 "not applicable here: CUDA backend unavailable: .*nonexistent.so" \
	"probe, no GPU" $NOGPU "$MT" probe gemm --backend cuda --smoke
check 2 "calibrate: error: CUDA backend unavailable on a machine with 1 NVIDIA GPU" \
	"calibrate, GPU present" $GPU "$MT" calibrate --quick --probes gemm -o "$T/p.json"
[ -e "$T/p.json" ] && { echo "FAIL: calibrate wrote a profile"; fail=1; }
check 77 "not applicable here" "calibrate, no GPU" $NOGPU "$MT" calibrate --quick --probes gemm -o "$T/p.json"
# nothing measured: no results file left to stop the next pass
[ -e "$T/p.json.results.jsonl" ] && { echo "FAIL: calibrate left p.json.results.jsonl"; fail=1; }
check 2 "profile: error: .*nonexistent.so: the tracer library .*this machine has an NVIDIA GPU" \
	"profile, GPU present" $GPU "$MT" profile --lib "$T/nonexistent.so" -o "$T/tr" -- true
check 77 "the tracer library libmegatune_trace.so is not here" \
	"profile, no GPU" $NOGPU "$MT" profile --lib "$T/nonexistent.so" -o "$T/tr" -- true
exit $fail
