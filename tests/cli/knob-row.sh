#!/bin/sh
# SPDX-License-Identifier: MIT
# A timed knob is one row of job/knobs.def and its physics: the test-only TIMED
# row under MT_TEST_KNOB, its two flag rows (job/flagtable.def) and its cost
# (perfmodel/constants.h, perfmodel/timing.c: each step away from 5 costs
# 50 ms), and nothing else, make --test-knob an option of advise (in its
# --help), a pin (refused like every number when it is not one), a knob the
# search tries every value of (it picks 5), a key of the advice JSON that
# validate reads back, a rule fact (config.test_knob), a Megatron-LM flag and
# Bridge override (left out at the default, 0), a flag a target release
# gates (core_v0.19.0 and newer) and a change check tries.  Built apart, in
# $BUILD/knobtest, with -DMT_TEST_KNOB.
# Exit 0 pass, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
KB=$BUILD/knobtest
fail() { echo "FAIL: $*"; exit 1; }
# -O0 for speed; gcc's format-truncation guesses at -O0 are not errors here
# (make check's WERROR=1 judges the real build)
make -s BUILD="$KB" NO_DEPS=1 WERROR= CFLAGS="-O0 -DMT_TEST_KNOB" "$KB/megatune" >/dev/null 2>"$KB.log" ||
	{ cat "$KB.log"; fail "the build with -DMT_TEST_KNOB"; }
MT=$KB/megatune
# the table's own checks (tests/unit/t-knobs.c) hold with the row in it
make -s BUILD="$KB" NO_DEPS=1 WERROR= CFLAGS="-O0 -DMT_TEST_KNOB" "$KB/tests/t-knobs" >/dev/null 2>>"$KB.log" &&
	"$KB/tests/t-knobs" >"$KB.unit" 2>&1 || { tail -20 "$KB.unit"; fail "t-knobs with the test row"; }
T=$(mktemp -d "${TMPDIR:-/tmp}/knob-row.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
job="--model llama3-8b --gpus 8 --seq 4096 --gbs 64"
# shellcheck disable=SC2086
{
	"$MT" advise --help | grep -q '^  --test-knob N  *a test-only knob' ||
		fail "--test-knob is not in advise --help"
	"$MT" estimate $job --test-knob 0x7 >"$T/out" 2>&1
	[ $? -eq 2 ] && grep -q "^megatune estimate: error: --test-knob: expected an integer from 0 to 8, got '0x7'" "$T/out" ||
		fail "--test-knob 0x7 is not refused: $(cat "$T/out")"
	"$MT" estimate $job --test-knob 7 --format megatron >"$T/mlm" || fail "estimate --test-knob 7"
	grep -q -- '--test-knob-size 7' "$T/mlm" || fail "no --test-knob-size 7 in the Megatron-LM flags"
	"$MT" estimate $job --test-knob 7 --format bridge >"$T/bridge" || fail "estimate --format bridge"
	grep -q 'model.test_knob_size=7' "$T/bridge" || fail "no model.test_knob_size=7 in the overrides"
	"$MT" estimate $job --test-knob 7 --format verl >"$T/verl" || fail "estimate --format verl"
	grep -q 'megatron.override_transformer_config.test_knob_size=7' "$T/verl" ||
		fail "no test_knob_size=7 in the verl overrides"
	# the physics: estimate times the default (0) and a pin, 50 ms a step from 5
	"$MT" estimate $job >"$T/e0" && "$MT" estimate $job --test-knob 5 >"$T/e5" ||
		fail "estimate with the default and with --test-knob 5"
	s0=$(awk '$1 == "step" {print $2}' "$T/e0")
	s5=$(awk '$1 == "step" {print $2}' "$T/e5")
	awk -v a="$s0" -v b="$s5" 'BEGIN { d = a - b; exit !(d > 0.2499 && d < 0.2501) }' ||
		fail "the default (0) is not 0.25 s slower than 5: $s0 s against $s5 s"
	"$MT" estimate $job --format megatron | grep -q -- '--test-knob-size' &&
		fail "the default value is printed as a flag"
	# the search: unpinned, it tries every value and picks the fastest, 5
	"$MT" advise $job --top 1 --format megatron >"$T/picked" || fail "advise --format megatron"
	grep -q -- '--test-knob-size 5' "$T/picked" || fail "the search did not pick --test-knob-size 5"
	# the release gate: before core_v0.19.0 a pin is refused, the search keeps the default
	"$MT" estimate $job --test-knob 7 --megatron-version core_v0.18.0 >"$T/old" 2>&1
	[ $? -eq 2 ] && grep -q -- '--test-knob 7 needs Megatron-LM core_v0.19.0 or newer (--test-knob-size)' "$T/old" ||
		fail "an older release does not refuse the pin: $(cat "$T/old")"
	"$MT" advise $job --megatron-version core_v0.18.0 --top 1 --format megatron >"$T/oldpick" ||
		fail "advise for core_v0.18.0"
	grep -q -- '--test-knob-size' "$T/oldpick" && fail "the search tried the knob on a release without it"
	# the advice JSON: the pin and the candidate's value, read back by validate
	"$MT" advise $job --test-knob 7 --top 2 --json "$T/advice.json" >/dev/null || fail "advise --json"
	[ "$(grep -c '"test_knob": 7' "$T/advice.json")" -eq 3 ] ||
		fail "the pin and the two candidates do not carry test_knob 7"
	"$MT" validate --advice "$T/advice.json" --top 1 --launch 'echo {megatron_args}' --dry-run \
		-o "$T/val.json" >"$T/dry" 2>&1 || fail "validate --dry-run: $(tail -3 "$T/dry")"
	grep -q -- '--test-knob-size 7' "$T/dry" || fail "validate did not read test_knob back"
	# check: a job run at 7 is offered the one change of the knob, to 5
	"$MT" estimate $job --test-knob 7 --format torchrun >"$T/job.sh" || fail "estimate --format torchrun"
	"$MT" check "$T/job.sh" >"$T/check" 2>&1 || fail "check of a job at 7: $(tail -3 "$T/check")"
	grep -A3 '^one knob (test knob): ' "$T/check" | grep -q -- '^    + --test-knob-size 5$' ||
		fail "check does not try the knob: $(grep -A3 '^one knob' "$T/check")"
	# a rule reads it
	printf 'RULE test-knob-seen\nTITLE The test knob reaches the rules\nKIND advise\nWHEN config.test_knob > 3\nSAY The test knob is {config.test_knob}.\nCITE tests/cli/knob-row.sh\n' >"$T/t.rules"
	"$MT" estimate $job --test-knob 7 --rules "$T/t.rules" >"$T/rule" || fail "estimate --rules"
	grep -q 'test-knob-seen .*The test knob is 7\.' "$T/rule" || fail "the rule did not see config.test_knob"
	# and without the row, none of it
	build_mt=${MEGATUNE:-$BUILD/megatune}
	"$build_mt" advise --help | grep -q -- '--test-knob' && fail "the default build has --test-knob"
}
echo "ok: one row of job/knobs.def gives --test-knob everywhere"
