#!/bin/sh
# SPDX-License-Identifier: MIT
# Run the whole suite: the cmocka unit tests (TAP) and the CLI tests
# (tests/cli/*.t).  Prints one line per test and ends with
# "N passed, N failed, N skipped".  Exit status 0 only when nothing failed.
# Usage: tests/run.sh [PATTERN]   (PATTERN filters test files by name)
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
MEGATUNE=${MEGATUNE:-$BUILD/megatune}
PATTERN=${1:-}
pass=0 fail=0 skip=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/megatune-tests.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

report() { # status name [detail]
	case $1 in
	ok) pass=$((pass + 1)); echo "ok - $2" ;;
	skip) skip=$((skip + 1)); echo "skip - $2${3:+ # $3}" ;;
	*) fail=$((fail + 1)); echo "not ok - $2"; [ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /' ;;
	esac
}

# --- unit tests (cmocka, TAP output)
for t in "$BUILD"/tests/t-*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	case $name in *"$PATTERN"*) ;; *) continue ;; esac
	out="$tmp/$name.out"
	CMOCKA_MESSAGE_OUTPUT=TAP "$t" >"$out" 2>&1
	rc=$?
	seen=0
	while IFS= read -r line; do
		case $line in
		"ok "*) seen=1; report ok "$name: ${line#ok * - }" ;;
		"not ok "*) seen=1; report fail "$name: ${line#not ok * - }" "$(grep -E '^#' "$out" | grep -v '^# ok' | head -20)" ;;
		esac
	done <"$out"
	if [ $seen -eq 0 ] || { [ $rc -ne 0 ] && ! grep -q '^not ok' "$out"; }; then
		report fail "$name: exited with status $rc" "$(tail -20 "$out")"
	fi
done

# --- CLI tests: "name | exit | ERE pattern (stdout+stderr; !ERE: must not match) | arguments"
run_cli() { # file
	while IFS= read -r line; do
		case $line in ''|'#'*) continue ;; esac
		name=$(printf '%s' "$line" | cut -d'|' -f1 | sed 's/^ *//; s/ *$//')
		want=$(printf '%s' "$line" | cut -d'|' -f2 | tr -d ' ')
		pat=$(printf '%s' "$line" | cut -d'|' -f3 | sed 's/^ *//; s/ *$//')
		args=$(printf '%s' "$line" | cut -d'|' -f4- | sed 's/^ *//')
		out="$tmp/cli.out"
		(cd "$tmp/cwd" && eval "set -- $args" && "$MEGATUNE" "$@") >"$out" 2>&1 </dev/null
		rc=$?
		detail=""
		if [ "$rc" != "$want" ]; then
			detail="exit status $rc, expected $want"
		else
			case $pat in
			'!'*) # a leading ! means: must not match
				if grep -Eq -- "${pat#!}" "$out"; then
					detail="output matches /${pat#!}/"
				fi ;;
			'') ;;
			*) if ! grep -Eq -- "$pat" "$out"; then
					detail="output does not match /$pat/"
				fi ;;
			esac
		fi
		if [ -z "$detail" ]; then
			report ok "$(basename "$1" .t): $name"
		else
			report fail "$(basename "$1" .t): $name" "$detail
megatune $args
$(head -15 "$out")"
		fi
	done <"$1"
}
MEGATUNE=$(cd "$(dirname "$MEGATUNE")" && pwd)/$(basename "$MEGATUNE")
mkdir -p "$tmp/cwd"
ln -s "$PWD/tests" "$tmp/cwd/tests"
ln -s "$PWD/models" "$tmp/cwd/models"
for f in tests/cli/*.t; do
	[ -f "$f" ] || continue
	case $(basename "$f") in *"$PATTERN"*) ;; *) continue ;; esac
	if [ ! -x "$MEGATUNE" ]; then
		report skip "$(basename "$f")" "no $MEGATUNE"
		continue
	fi
	run_cli "$f"
done

# --- rule tests: "rule | fires|quiet | arguments" (tests/rules/*.t); a rule fires
# when the JSON output lists it for the best candidate, or counts candidates it
# pruned.  Then: every bundled rule must have a case of each kind.
run_fire() { # file
	while IFS= read -r line; do
		case $line in ''|'#'*) continue ;; esac
		rule=$(printf '%s' "$line" | cut -d'|' -f1 | tr -d ' ')
		want=$(printf '%s' "$line" | cut -d'|' -f2 | tr -d ' ')
		args=$(printf '%s' "$line" | cut -d'|' -f3- | sed 's/^ *//')
		out="$tmp/fire.out"
		case $args in
		advise*|estimate*) extra="--format json --top 1" ;;
		*) extra="--json" ;;
		esac
		(cd "$tmp/cwd" && eval "set -- $args $extra" && "$MEGATUNE" "$@") >"$out" 2>&1 </dev/null
		rc=$?
		if grep -Eq "\"id\": \"$rule\"|\"$rule\": [1-9]" "$out"; then got=fires; else got=quiet; fi
		name="$rule $want: $args"
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
			report fail "rules: $name" "exit status $rc
$(head -5 "$out")"
		elif [ "$got" = "$want" ]; then
			report ok "rules: $name"
			echo "$rule $want" >>"$tmp/fire-seen"
		else
			report fail "rules: $name" "the rule is $got"
		fi
	done <"$1"
}
: >"$tmp/fire-seen"
for f in tests/rules/*.t; do
	[ -f "$f" ] || continue
	case $(basename "$f") in *"$PATTERN"*) ;; *) continue ;; esac
	[ -x "$MEGATUNE" ] || { report skip "$(basename "$f")" "no $MEGATUNE"; continue; }
	run_fire "$f"
	missing=""
	for id in $("$MEGATUNE" rules list --ids); do
		for kind in fires quiet; do
			grep -qx "$id $kind" "$tmp/fire-seen" || missing="$missing $id($kind)"
		done
	done
	if [ -z "$missing" ]; then
		report ok "rules: every bundled rule has a passing case where it fires and one where it does not"
	else
		report fail "rules: every bundled rule has a passing case where it fires and one where it does not" "missing:$missing"
	fi
done

# --- shell tests: tests/cli/*.sh, and tests/gpu/*.sh (which need a GPU), exit 0
# (pass), 77 (skip, with the reason) or other (fail)
for f in tests/cli/*.sh tests/gpu/*.sh; do
	[ -f "$f" ] || continue
	case $(basename "$f") in *"$PATTERN"*) ;; *) continue ;; esac
	out="$tmp/sh.out"
	BUILD="$BUILD" MEGATUNE="$MEGATUNE" TMPDIR="$tmp" sh "$f" >"$out" 2>&1
	rc=$?
	case $rc in
	0) report ok "$(basename "$f" .sh)" ;;
	77) report skip "$(basename "$f" .sh)" "$(tail -1 "$out")" ;;
	*) report fail "$(basename "$f" .sh)" "$(tail -20 "$out")" ;;
	esac
done

# --- golden outputs: advise, estimate, analyze, import, rules and report byte for
# byte as recorded (tests/golden/outputs.cmds); "ok/not ok/skip - NAME" lines
case outputs in *"$PATTERN"*)
	if [ -x "$MEGATUNE" ]; then
		tests/golden/outputs.sh "$MEGATUNE" >"$tmp/golden.out" 2>&1
		while IFS= read -r line; do
			case $line in
			"ok - "*) report ok "${line#ok - }" ;;
			"skip - "*) n=${line#skip - }; report skip "${n%% \#*}" "${n#* \# }" ;;
			"not ok - "*) n=${line#not ok - }
				report fail "$n" "$(sed -n "/^not ok - $n\$/,/^[no]/p" "$tmp/golden.out" | grep '^#' | head -20)" ;;
			esac
		done <"$tmp/golden.out"
	else
		report skip "outputs" "no $MEGATUNE"
	fi ;;
esac

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
