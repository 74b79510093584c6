#!/bin/sh
# SPDX-License-Identifier: MIT
# advise never prints a configuration Megatron-LM rejects: random pinned jobs
# (tests/megatron/random_pins.py, seeded: the same jobs every run; MEGATRON_FUZZ_SEED
# and MEGATRON_FUZZ_COUNT change them), and for each one advise accepts (exit 0),
# its top 3 candidates' flags with their environment go through Megatron-LM's
# own parse_args, validate_args and core_transformer_config_from_args
# (tests/megatron/check_args.py).  A job advise refuses (exit 1: nothing fits,
# 2: pins that cannot hold) is fine; any other exit status fails.
# Exit 0 pass, 77 skip (with the reason on the last line), else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY (Debian's python3)"; exit 77; }
[ -x "$M" ] || { echo "FAIL: no $M"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/megatron-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
"$PY" tests/megatron/random_pins.py --seed "${MEGATRON_FUZZ_SEED:-20261123}" \
	--count "${MEGATRON_FUZZ_COUNT:-80}" >"$T/jobs" || exit 2
: >"$T/sets"
accepted=0 refused=0
while IFS= read -r job; do
	# shellcheck disable=SC2086  # the job's words
	"$M" advise $job --format json --top 3 >"$T/advice.json" 2>"$T/advice.err" </dev/null
	rc=$?
	case $rc in
	0) accepted=$((accepted + 1)) ;;
	1|2) refused=$((refused + 1)); continue ;;
	*) echo "FAIL: advise $job: exit status $rc ($(head -1 "$T/advice.err"))"; fail=1; continue ;;
	esac
	"$PY" tests/megatron/advice_sets.py "$job" "$T/advice.json" >>"$T/sets" || { echo "FAIL: advise $job: cannot read its JSON"; fail=1; }
done <"$T/jobs"
echo "jobs: $accepted accepted by advise, $refused refused"
# the test means something only when advise accepted a good share of them
[ "$accepted" -ge 20 ] || { echo "FAIL: only $accepted jobs accepted"; fail=1; }
"$PY" tests/megatron/check_args.py "$T/sets" >"$T/check.out" 2>&1
rc=$?
grep -v '^ok - ' "$T/check.out"
[ $rc -eq 0 ] || { echo "FAIL: $(grep -c '^not ok' "$T/check.out") flag sets fail Megatron-LM's checks"; fail=1; }
[ $fail -eq 0 ] && echo "ok"
exit $fail
