#!/bin/sh
# SPDX-License-Identifier: MIT
# Outputs unchanged: run every command of tests/golden/outputs.cmds and compare
# its stdout, stderr and exit status with tests/golden/outputs/NAME.out, byte
# for byte, after masking what legitimately varies between runs (the search
# wall time).  Prints "ok - NAME" / "not ok - NAME"
# lines for tests/run.sh.
# Usage: tests/golden/outputs.sh [--update] [MEGATUNE]
set -u
cd "$(dirname "$0")/../.." || exit 2
update=0
[ "${1:-}" = "--update" ] && { update=1; shift; }
M=${1:-${MEGATUNE:-build/megatune}}
SHARED=${SHARED:-../shared/data}
dir=tests/golden/outputs
tmp=$(mktemp -d "${TMPDIR:-/tmp}/megatune-golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
# the search's own wall time, and timing lines, vary from run to run
mask() {
	sed -E -e 's/("seconds": )[0-9.e+-]+/\1X/g' \
		-e 's/(candidates? in )[0-9.]+ ?(m?s)/\1X \2/g'
}
while IFS= read -r line; do
	case $line in ''|'#'*) continue ;; esac
	name=$(printf '%s' "$line" | cut -d'|' -f1 | tr -d ' ')
	args=$(printf '%s' "$line" | cut -d'|' -f2- | sed 's/^ *//')
	case $args in *'$SHARED'*) [ -d "$SHARED" ] || { echo "skip - outputs: $name # no $SHARED"; continue; } ;; esac
	args=$(printf '%s' "$args" | sed "s#\\\$SHARED#$SHARED#g")
	# shellcheck disable=SC2086
	(eval "set -- $args"; "$M" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; echo "exit $?" >"$tmp/rc")
	{ cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; cat "$tmp/rc"; } | mask >"$tmp/$name.out"
	if [ $update -eq 1 ]; then
		cp "$tmp/$name.out" "$dir/$name.out"
		echo "updated $dir/$name.out"
	elif cmp -s "$tmp/$name.out" "$dir/$name.out"; then
		echo "ok - outputs: $name"
	else
		echo "not ok - outputs: $name"
		diff "$dir/$name.out" "$tmp/$name.out" | head -20 | sed 's/^/#   /'
	fi
done <tests/golden/outputs.cmds
