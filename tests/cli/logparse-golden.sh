#!/bin/sh
# SPDX-License-Identifier: MIT
# The log parser over every real excerpt of tests/fixtures/megatron-logs/:
# `megatune validate --parse-log` (format, steps with their iteration and
# the log's TFLOP/s, worst-rank memory, skipped iterations, status and its
# evidence line) byte for byte as recorded in tests/golden/megatron-logs/.
# Usage: tests/cli/logparse-golden.sh [--update]   (MEGATUNE: the binary)
set -u
cd "$(dirname "$0")/../.." || exit 2
M=${MEGATUNE:-build/megatune}
G=tests/golden/megatron-logs
fail=0 n=0
for f in tests/fixtures/megatron-logs/*.log; do
	name=$(basename "$f" .log)
	out=$("$M" validate --parse-log "$f" 2>&1) || { echo "not ok - $name: exit $?"; fail=1; continue; }
	n=$((n + 1))
	if [ "${1:-}" = --update ]; then
		printf '%s\n' "$out" >"$G/$name.out"
		continue
	fi
	if [ ! -f "$G/$name.out" ]; then
		echo "not ok - $name: no golden file $G/$name.out"
		fail=1
	elif printf '%s\n' "$out" | cmp -s - "$G/$name.out"; then
		echo "ok - $name"
	else
		echo "not ok - $name"
		printf '%s\n' "$out" | diff "$G/$name.out" - | head -20
		fail=1
	fi
done
# every golden file has its excerpt
for g in "$G"/*.out; do
	[ -f "tests/fixtures/megatron-logs/$(basename "$g" .out).log" ] ||
		{ echo "not ok - $g has no excerpt"; fail=1; }
done
[ "$n" -ge 26 ] || { echo "not ok - only $n excerpts parsed (26 expected)"; fail=1; }
exit $fail
