#!/bin/sh
# SPDX-License-Identifier: MIT
# The functions lib/banned.h bans, called anywhere in the project's C, C++
# and CUDA sources (tests and benchmarks aside): each use is printed as
# FILE:LINE: NAME() and the script exits 1; 0 when there is none.  It also
# checks that lib/banned.h itself turns a use into a compile error ($CC,
# default cc).  And library code never ends the process (lib/err.h): abort(),
# exit(), _exit(), _Exit() and quick_exit() outside cli/ are printed as
# FILE:LINE: NAME() in FUNCTION(), but for the few listed below that must.
# Usage: tests/cli/banned.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
names=$(sed -n 's/^#define \([a-z_]*\)(.*BANNED(.*/\1/p' lib/banned.h | tr '\n' '|')
names=${names%|}
[ -n "$names" ] || { echo "banned: no names in lib/banned.h"; exit 2; }
fail=0
for f in $(git ls-files 'lib/*.[ch]' 'perfmodel/*.[ch]' 'rules/*.[ch]' 'tuner/*.[ch]' \
	'probes/*.[ch]' 'probes/*.cu' 'import/*.[ch]' 'profiler/*.[ch]' 'reports/*.[ch]' \
	'job/*.[ch]' 'validate/*.[ch]' 'compare/*.[ch]' 'check/*.[ch]' 'cli/*.[ch]'); do
	[ -f "$f" ] && [ "$f" != lib/banned.h ] || continue
	# a call: the name, then "(", outside // and /* ... */ comment lines
	hits=$(grep -nE "(^|[^A-Za-z0-9_.>])($names)[[:space:]]*\\(" "$f" |
		grep -vE '^[0-9]+:[[:space:]]*(/?\*|//)' |
		sed -E "s/^([0-9]+):.*[^A-Za-z0-9_.>]?($names)[[:space:]]*\\(.*/\\1: \\2()/")
	[ -n "$hits" ] || continue
	printf '%s\n' "$hits" | sed "s|^|$f:|"
	fail=1
done
# the header does what it says
CC=${CC:-cc}
if command -v "$CC" >/dev/null 2>&1; then
	t=$(mktemp -d "${TMPDIR:-/tmp}/banned.XXXXXX") || exit 2
	printf '#include <string.h>\n#include "%s/lib/banned.h"\nvoid f(char *d);\nvoid f(char *d) { strcpy(d, "x"); }\n' \
		"$(pwd)" >"$t/bad.c"
	printf '#include <string.h>\n#include "%s/lib/banned.h"\nsize_t f(const char *s);\nsize_t f(const char *s) { return strlen(s); }\n' \
		"$(pwd)" >"$t/good.c"
	if "$CC" -std=c11 -fsyntax-only "$t/bad.c" 2>"$t/err"; then
		echo "banned: lib/banned.h lets strcpy() compile"
		fail=1
	elif ! grep -q sorry_strcpy_is_a_banned_function "$t/err"; then
		echo "banned: the error for strcpy() does not name it:"
		cat "$t/err"
		fail=1
	fi
	if ! "$CC" -std=c11 -fsyntax-only "$t/good.c"; then
		echo "banned: lib/banned.h breaks a file that uses no banned function"
		fail=1
	fi
	rm -rf "$t"
fi

# Library code returns its errors; only cli/ exits.  The calls that end the
# process, outside comments and strings, each with the function it is in
# (the last line at column 0 naming one): "FILE LINE FUNCTION CALL".
c_code=$(cat tests/cli/c-code.awk) || exit 2
calls_that_end() { # FILE...
	awk "$c_code"'
		FNR == 1 { incom = 0; fn = "" }
		{
			out = c_code($0)
			if (out ~ /^[A-Za-z_][^;]*\(/) {
				fn = out; sub(/[ \t]*\(.*/, "", fn); sub(/.*[ \t*]/, "", fn)
			}
			t = out
			re = "(^|[^A-Za-z0-9_.>])(abort|exit|_exit|_Exit|quick_exit)[ \t]*\\([^()]*\\)?"
			while (match(t, re)) {
				c = substr(t, RSTART, RLENGTH); sub(/^[^A-Za-z_]/, "", c); gsub(/[ \t]/, "", c)
				print FILENAME, FNR, (fn == "" ? "-" : fn), c
				t = substr(t, RSTART + RLENGTH)
			}
		}' "$@"
}
# The only ones allowed, "FILE FUNCTION CALL" (FILE a shell pattern; CALL as
# written without spaces, * any), and why each must end the process:
# - validate/runner.c start(): the child fork() made, when exec of the
#   command failed: returning would run a second copy of the caller; 127 is
#   the shell's "command not found", read back by the parent as the run's end.
# - probes/mpi.c mt_world_abort(): "stop every rank now" (a hung collective),
#   MPI_Abort's job, then _exit where MPI was not started; cli/cmd_probe.c
#   alone calls it.
# - probes/onerank/mpi.h MPI_Abort(): the one-rank MPI of the GPU bundle stands
#   in for MPI_Abort, which ends the process by definition.
# - main() of an executable under probes/ (none today) is a program.
# profiler/inject.c's atexit handler calls none of them: nothing to allow.
allowed_ends='
validate/runner.c start _exit(127)
probes/mpi.c mt_world_abort _exit(code)
probes/onerank/mpi.h MPI_Abort exit(code)
probes/* main *
'
is_allowed() { # FILE FUNCTION CALL
	printf '%s\n' "$allowed_ends" | while read -r af afn acall; do
		[ -n "$af" ] || continue
		# shellcheck disable=SC2254
		case $1 in $af) ;; *) continue ;; esac
		[ "$afn" = "$2" ] || continue
		[ "$acall" = "*" ] || [ "$acall" = "$3" ] || continue
		echo yes
		break
	done
}
libs=""
for f in $(git ls-files 'lib/*.[ch]' 'perfmodel/*.[ch]' 'job/*.[ch]' 'rules/*.[ch]' \
	'tuner/*.[ch]' 'import/*.[ch]' 'profiler/*.[ch]' 'validate/*.[ch]' 'compare/*.[ch]' \
	'reports/*.[ch]' 'check/*.[ch]' 'probes/*.[ch]' 'probes/*.cu'); do
	[ -f "$f" ] && libs="$libs $f"
done
# shellcheck disable=SC2086
ends=$(calls_that_end $libs)
while read -r f line fn call; do
	[ -n "$f" ] || continue
	[ -n "$(is_allowed "$f" "$fn" "$call")" ] && continue
	echo "$f:$line: ${call%%(*}() in $fn(): library code returns the error (lib/err.h); only cli/ exits"
	fail=1
done <<END
$ends
END
# the scan itself: no call in a comment or a string, nor another name's
t=$(mktemp -d "${TMPDIR:-/tmp}/banned.XXXXXX") || exit 2
cat >"$t/x.c" <<'END'
/* abort() in a comment,
 * exit(1) too */
static int f(int x)
{
	const char *s = "exit(2)"; // abort()
	atexit(g); at_exit(); mt_outset_abort(&os); exit_text(r); o->exit(3); o.abort();
	if (x)
		abort();
	_exit (4); exit(x + 1);
	return s != 0;
}
END
got=$(cd "$t" && calls_that_end x.c | tr '\n' ';')
want='x.c 8 f abort();x.c 9 f _exit(4);x.c 9 f exit(x+1);'
if [ "$got" != "$want" ]; then
	echo "banned: the scan for abort() and exit() found \"$got\", expected \"$want\""
	fail=1
fi
rm -rf "$t"
[ $fail -eq 0 ] && echo "banned: ok"
exit $fail
