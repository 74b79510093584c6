#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/gpu-fixtures.sh turns a campaign's campaign.tgz into a fixture folder: the summary
# and every phase's output, the trace folders at any depth (Megatron-LM's profiler writes
# <dir>/torch_profile/rank-N.json.gz) gzipped once, PROVENANCE.md naming the machine; an
# existing folder and a tarball without a summary are refused (exit 2) and leave nothing.
# Exit 0 pass, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-fixtures.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
R=$T/c/results
mkdir -p "$R/trace-cupti" "$R/trace-megatron-kineto/tb" "$R/trace-megatron-kineto/torch_profile"
printf 'megatune GPU campaign, 2026-11-28T01:39:22Z, host vm\ngpu: NVIDIA H100 80GB HBM3, 580.159.04\n\nphase\n' \
	>"$R/summary.txt"
echo "calibrate: ok" >"$R/calibrate.out"
echo '{"t":"end","records":0,"dropped":0}' >"$R/trace-cupti/megatune-trace.rank0.jsonl"
echo '{"traceEvents":[]}' | gzip >"$R/trace-megatron-kineto/torch_profile/rank-0.json.gz"
(cd "$T/c" && tar czf "$T/campaign.tgz" results) || fail "cannot make the tarball"

sh scripts/gpu-fixtures.sh "$T/campaign.tgz" "$T/out" >"$T/o" 2>&1 || fail "gpu-fixtures.sh: $(cat "$T/o")"
for f in summary.txt calibrate.out PROVENANCE.md trace-cupti/megatune-trace.rank0.jsonl.gz \
	trace-megatron-kineto/torch_profile/rank-0.json.gz; do
	[ -f "$T/out/$f" ] || fail "no $f in the fixture folder: $(cd "$T/out" && find . -type f)"
done
[ ! -e "$T/out/trace-megatron-kineto/torch_profile/rank-0.json.gz.gz" ] || fail "a .gz gzipped twice"
gzip -dc "$T/out/trace-megatron-kineto/torch_profile/rank-0.json.gz" | grep -q traceEvents ||
	fail "the profiler's trace is not the one given"
grep -q 'gpu: NVIDIA H100 80GB HBM3' "$T/out/PROVENANCE.md" || fail "PROVENANCE.md does not name the GPU"

sh scripts/gpu-fixtures.sh "$T/campaign.tgz" "$T/out" >"$T/o2" 2>&1
[ $? -eq 2 ] || fail "an existing folder was not refused with exit 2"
grep -q "exists" "$T/o2" || fail "no reason given for the existing folder: $(cat "$T/o2")"
mkdir -p "$T/e/results" && (cd "$T/e" && tar czf "$T/empty.tgz" results)
sh scripts/gpu-fixtures.sh "$T/empty.tgz" "$T/out3" >"$T/o3" 2>&1
[ $? -eq 2 ] || fail "a tarball without a summary was not refused with exit 2"
[ ! -e "$T/out3" ] && [ ! -e "$T/out3.tmp" ] || fail "a refused tarball left a folder"
echo ok
