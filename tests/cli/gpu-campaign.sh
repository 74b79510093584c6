#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/gpu-campaign.sh on a machine without a GPU runs to its summary: every GPU phase
# is reported "no-GPU", the phases that need none (env, megatron-args: advise's top 3 for
# the one-GPU Megatron-LM runs through Megatron-LM's own argument checks) pass, nothing
# fails or runs out of time, and the three files come back in OUT.  Its Python helpers
# parse.  With the bundle when tests/cli/gpu-bundle.sh made one, else the build folder.
# Exit 0 pass, 77 skip, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
[ -x "$BUILD/megatune" ] || { echo "no $BUILD/megatune"; exit 77; }
command -v bash >/dev/null || { echo "no bash"; exit 77; }
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	echo "a GPU is here: the campaign is run by hand (it measures for minutes)"
	exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-campaign.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" -c 'import ast, sys
for f in sys.argv[1:]:
    ast.parse(open(f).read(), f)' scripts/gpu/*.py || bad "a Python helper does not parse"
bash -n scripts/gpu-campaign.sh || bad "scripts/gpu-campaign.sh does not parse"

B=$BUILD/gpu-bundle.tar.xz
[ -f "$B" ] || B=$BUILD
OUT=$T/out BUNDLE=$B DEADLINE=300 bash scripts/gpu-campaign.sh >"$T/run.log" 2>&1
rc=$?
S=$T/out/summary.txt
[ $rc -eq 0 ] || bad "gpu-campaign.sh exited $rc"
[ -s "$S" ] || { tail -30 "$T/run.log"; echo "FAIL: no summary"; exit 1; }
for p in gpu-trace-check gpu-probes calibrate torch-ref tinygpt-plain tinygpt-cupti tinygpt-kineto \
	analyze-cupti analyze-kineto compare-traces proxy-validate megatron sustain host-cost; do
	grep -Eq "^$p +no-GPU " "$S" || bad "phase $p is not reported no-GPU: $(grep "^$p " "$S")"
done
for p in env megatron-args; do
	grep -Eq "^$p +ok " "$S" || bad "phase $p did not pass: $(grep "^$p " "$S")"
done
grep -Eq '^megatron-args +ok .*# 3 flag sets, 0 failed' "$S" || bad "megatron-args did not check 3 flag sets"
grep -Eq ' (FAIL|TIMEOUT|NO-TIME|SKIP-77)' "$S" && bad "a phase failed: $(grep -E ' (FAIL|TIMEOUT|NO-TIME|SKIP-77)' "$S")"
grep -q '^total .* 0 phase(s) failed' "$S" || bad "the summary does not end with its total"
for f in summary.txt campaign.log campaign.tgz; do
	[ -s "$T/out/$f" ] || bad "no $f in OUT"
done
tar -tzf "$T/out/campaign.tgz" 2>/dev/null | grep -q 'results/mlm-flagsets.txt' ||
	bad "campaign.tgz lacks results/mlm-flagsets.txt"
[ $fail -eq 0 ] && cat "$S"
[ $fail -eq 0 ] || tail -40 "$T/run.log"
exit $fail
