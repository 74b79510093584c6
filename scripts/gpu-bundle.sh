#!/bin/sh
# SPDX-License-Identifier: MIT
# The last step of `make gpu-bundle` (scripts/gpu-bundle.mk): gather the statically linked
# executables the Makefile made in BUNDLE/build with the CUDA library, the tracer and the GPU
# tests' helpers, add Megatron-LM when given, write MANIFEST and pack BUILD/gpu-bundle.tar.xz
# (written to a temporary file, then renamed).
# Usage: scripts/gpu-bundle.sh BUILD BUNDLE MEGATRON_LM_REPO|"" COMMIT FILE...
set -eu
B=$1 D=$2 MLM=$3 COMMIT=$4
shift 4
mkdir -p "$D/build/tests"
rm -f "$D/megatron-lm.tgz"
for f in "$@"; do
	case $f in
	"$B"/tests/*) cp -f "$f" "$D/build/tests/" ;;
	*) cp -f "$f" "$D/build/" ;;
	esac
done
strip --strip-debug "$D/build/megatune" "$D/build/megatune-probe"
for f in "$D"/build/*.so; do
	[ -f "$f" ] && strip --strip-debug "$f"
done
if [ -n "$MLM" ]; then
	git -C "$MLM" archive --format=tar "$COMMIT" megatron pretrain_gpt.py gpt_builders.py \
		model_provider.py LICENSE | gzip -9 >"$D/megatron-lm.tgz.tmp"
	mv "$D/megatron-lm.tgz.tmp" "$D/megatron-lm.tgz"
fi
{
	echo "megatune single-GPU bundle"
	echo "megatune $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm), $(${CC:-cc} --version | head -1)"
	if [ -f "$D/megatron-lm.tgz" ]; then
		echo "megatron-lm.tgz: NVIDIA/Megatron-LM at $COMMIT (its LICENSE inside)"
	else
		echo "megatron-lm.tgz: absent (make gpu-bundle MEGATRON_LM=<a git repository of NVIDIA/Megatron-LM>)"
	fi
	for f in "$D"/build/* "$D"/build/tests/*; do
		[ -f "$f" ] || continue
		echo "== ${f#"$D"/} ($(stat -c %s "$f") bytes)"
		ldd "$f" 2>&1 | sed 's/ (0x[0-9a-f]*)//'
	done
} >"$D/MANIFEST"
tar -C "$(dirname "$D")" -cJf "$B/gpu-bundle.tar.xz.tmp" "$(basename "$D")"
mv "$B/gpu-bundle.tar.xz.tmp" "$B/gpu-bundle.tar.xz"
echo "gpu-bundle: $B/gpu-bundle.tar.xz ($(stat -c %s "$B/gpu-bundle.tar.xz") bytes)"
