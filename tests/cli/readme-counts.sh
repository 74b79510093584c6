#!/bin/sh
# SPDX-License-Identifier: MIT
# The counts README.md and docs/USAGE.md state are the program's: "N bundled
# rules" is what `megatune rules list` ends with ("N rules").  Exit 0 pass, else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
M=${MEGATUNE:-${BUILD:-build}/megatune}
have=$("$M" rules list | sed -n 's/^\([0-9][0-9]*\) rules$/\1/p' | tail -1)
[ -n "$have" ] || { echo "FAIL: $M rules list does not end with N rules"; exit 1; }
for f in README.md docs/USAGE.md; do
	said=$(sed -n 's/^\([0-9][0-9]*\) bundled rules .*/\1/p' "$f" | head -1)
	[ -n "$said" ] || { echo "FAIL: $f no longer says how many bundled rules"; exit 1; }
	[ "$said" = "$have" ] || { echo "FAIL: $f says $said bundled rules, rules list has $have"; exit 1; }
	echo "ok: $f's $said bundled rules are the $have of rules list"
done
