#!/bin/sh
# SPDX-License-Identifier: MIT
# make gpu-bundle (scripts/gpu-bundle.mk), checked without a GPU:
#  - it builds $BUILD/gpu-bundle.tar.xz;
#  - ldd of megatune and megatune-probe lists only libc and libm (with the loader and
#    the vDSO); of libmegatune_cuda.so and libmegatune_trace.so only libc, libm,
#    libstdc++ and libgcc_s;
#  - unpacked elsewhere, its megatune advises, its megatune-probe measures with the CPU
#    backend (static OpenBLAS), its one-rank build refuses a launcher, and its CUDA
#    probes say "not applicable" here (77) and "missing library" where a GPU is (2);
#  - the bundle plus the tree (tracked and untracked files, not ignored ones) fit in
#    the 64 MiB a GPU machine receives.
# Exit 0 pass, 77 skip (reason on the last line), other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
if [ -x "$BUILD/megatune" ] && ldd "$BUILD/megatune" 2>/dev/null | grep -q 'libasan\|libubsan'; then
	echo "the bundle is made from the plain build, $BUILD is sanitized"
	exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-bundle.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# the outer make's jobserver is not ours
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory BUILD="$BUILD" NO_DEPS=1 \
	gpu-bundle >"$T/make.log" 2>&1; then
	tail -30 "$T/make.log"
	echo "FAIL: make gpu-bundle"
	exit 1
fi
TAR=$BUILD/gpu-bundle.tar.xz
[ -s "$TAR" ] || { echo "FAIL: no $TAR"; exit 1; }
tar -C "$T" -xJf "$TAR" || { echo "FAIL: $TAR does not unpack"; exit 1; }
B=$T/gpu-bundle/build
echo "bundle: $(stat -c %s "$TAR") bytes packed, $(du -sk "$T/gpu-bundle" | cut -f1) KiB unpacked"

# the libraries each file needs, by their names alone
needs() { ldd "$1" 2>&1 | sed -n 's/^[[:space:]]*\([^ ]*\).*/\1/p' | sed 's|^/.*/||' | sort | tr '\n' ' '; }
for f in megatune megatune-probe; do
	got=$(needs "$B/$f")
	for n in $got; do
		case $n in
		linux-vdso.so.1 | ld-linux-*.so.* | libc.so.6 | libm.so.6) ;;
		*) bad "$f needs $n (only libc and libm allowed): $got" ;;
		esac
	done
	echo "$f: $got"
done
for f in libmegatune_cuda.so libmegatune_trace.so; do
	[ -f "$B/$f" ] || { echo "note: no $f (built where nvcc and CUPTI are)"; continue; }
	got=$(needs "$B/$f")
	for n in $got; do
		case $n in
		linux-vdso.so.1 | ld-linux-*.so.* | libc.so.6 | libm.so.6 | libstdc++.so.6 | libgcc_s.so.1) ;;
		*) bad "$f needs $n (only libc, libm, libstdc++, libgcc_s allowed): $got" ;;
		esac
	done
	echo "$f: $got"
done
grep -q '^megatune single-GPU bundle' "$T/gpu-bundle/MANIFEST" || bad "no MANIFEST"

# it runs, from elsewhere, with nothing of this tree
cd "$T" || exit 2
"$B/megatune" advise --model llama3-8b --cluster dgx-h100 --gpus 8 --seq 4096 --gbs 32 --top 1 \
	>"$T/advise.out" 2>&1 || bad "bundle megatune advise: exit $? ($(tail -3 "$T/advise.out"))"
grep -q '^llama3-8b' "$T/advise.out" || bad "bundle megatune advise printed: $(head -3 "$T/advise.out")"
"$B/megatune" probe gemm --backend cpu --smoke --json "$T/gemm.jsonl" >"$T/gemm.out" 2>&1 ||
	bad "bundle megatune probe gemm --backend cpu: exit $? ($(tail -3 "$T/gemm.out"))"
grep -q '"verified":"yes"' "$T/gemm.jsonl" 2>/dev/null || bad "bundle CPU gemm: no verified record"
grep -q '"blas": "OpenBLAS' "$T/gemm.jsonl" 2>/dev/null || bad "bundle CPU gemm: not OpenBLAS"
OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 "$B/megatune" probe host --backend cpu --smoke \
	>"$T/launched.out" 2>&1
rc=$?
[ $rc -eq 77 ] && grep -q 'one-rank build' "$T/launched.out" ||
	bad "bundle under a launcher: exit $rc, expected 77 naming the one-rank build: $(cat "$T/launched.out")"
if [ -f "$B/libmegatune_cuda.so" ]; then
	mkdir -p "$T/proc/0000:01:00.0" "$T/noproc"
	MEGATUNE_NVIDIA_PROC=$T/noproc "$B/megatune" probe gemm --backend cuda --smoke >"$T/c1" 2>&1
	rc=$?
	[ $rc -eq 77 ] || bad "bundle CUDA gemm without a GPU: exit $rc, expected 77: $(cat "$T/c1")"
	MEGATUNE_NVIDIA_PROC=$T/proc MEGATUNE_CUDA_LIB=$T/absent.so "$B/megatune" probe gemm \
		--backend cuda --smoke >"$T/c2" 2>&1
	rc=$?
	[ $rc -eq 2 ] || bad "bundle CUDA gemm, GPU present, library missing: exit $rc, expected 2: $(cat "$T/c2")"
fi
cd - >/dev/null || exit 2

# what a GPU machine receives: the working tree (git's view) and the bundle
tree=$( { git ls-files -z; git ls-files -z --others --exclude-standard; } |
	xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
total=$((tree + $(stat -c %s "$TAR")))
echo "tree $tree bytes + bundle $(stat -c %s "$TAR") bytes = $total bytes (limit 67108864)"
[ "$total" -lt 67108864 ] || bad "the tree and the bundle exceed 64 MiB: $total bytes"
exit $fail
