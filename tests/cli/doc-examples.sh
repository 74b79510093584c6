#!/bin/sh
# SPDX-License-Identifier: MIT
# The examples of README.md and docs/ show what the program prints now
# (tests/docs/check_examples.py says what an example is and how it matches).
# Exit 0 pass, 77 skip (with the reason on the last line), else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
M=${MEGATUNE:-${BUILD:-build}/megatune}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY (Debian's python3)"; exit 77; }
[ -x "$M" ] || { echo "FAIL: no $M"; exit 1; }
"$PY" tests/docs/check_examples.py "$M" README.md docs/*.md
