#!/bin/sh
# SPDX-License-Identifier: MIT
# Every real log of tests/fixtures/megatron-logs/ (none holds Megatron-LM's
# arguments block) is refused by `megatune check` with exit 2 and the reason,
# never a crash or a job made up; and a job piped in on standard input (what
# `advise --format megatron` prints) is read as a file would be.
# Exit 0 pass, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
MT=${BUILD:-build}/megatune
T=$(mktemp -d "${TMPDIR:-/tmp}/check-logs.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
n=0
for f in tests/fixtures/megatron-logs/*.log; do
	n=$((n + 1))
	"$MT" check "$f" --gpus 8 >"$T/out" 2>&1
	rc=$?
	if [ $rc -ne 2 ] || ! grep -q "^megatune check: error: $f: a training log without Megatron-LM's arguments block: no job in it" "$T/out"; then
		echo "FAIL: $f: exit $rc: $(head -2 "$T/out")"
		fail=1
	fi
done
"$MT" advise --model qwen3-30b-a3b --gpus 16 --seq 4096 --gbs 512 --format megatron 2>/dev/null |
	"$MT" check - --gpus 16 >"$T/pipe" 2>&1 || { echo "FAIL: check - exit $?: $(head -3 "$T/pipe")"; fail=1; }
grep -q '^megatune check: <stdin> (arguments)' "$T/pipe" &&
	grep -q 'best overall: the job is within 0.5% of the best megatune finds' "$T/pipe" ||
	{ echo "FAIL: the piped advice is not read back as the best: $(head -5 "$T/pipe")"; fail=1; }
[ $fail -eq 0 ] && [ $n -ge 20 ] || exit 1
echo "ok: $n real logs refused with the reason; a job on standard input read back"
