#!/bin/sh
# SPDX-License-Identifier: MIT
# The counts README.md states are the program's: "N bundled rules" is what
# `megatune rules list` ends with ("N rules").  Exit 0 pass, else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
M=${MEGATUNE:-${BUILD:-build}/megatune}
said=$(sed -n 's/^\([0-9][0-9]*\) bundled rules .*/\1/p' README.md | head -1)
have=$("$M" rules list | sed -n 's/^\([0-9][0-9]*\) rules$/\1/p' | tail -1)
[ -n "$said" ] || { echo "FAIL: README.md no longer says how many bundled rules"; exit 1; }
[ "$said" = "$have" ] || { echo "FAIL: README.md says $said bundled rules, rules list has $have"; exit 1; }
echo "ok: README.md's $said bundled rules are the $have of rules list"
