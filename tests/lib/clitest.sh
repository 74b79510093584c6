# SPDX-License-Identifier: MIT
# The set-up the shell tests of tests/cli/ share, sourced from the
# repository root after `set -u`: M (the megatune under test), PY (Debian's
# python3; the test skips, exit 77, without it), T (a temporary folder named
# after $TEST, removed on exit), fail (0 until a check fails), and
# ok / no to report each check ("ok - ..." / "not ok - ...", setting fail).
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY (Debian's python3)"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/${TEST:-test}.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
ok() { echo "ok - $*"; }
no() { echo "not ok - $*"; fail=1; }
