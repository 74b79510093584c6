#!/bin/sh
# SPDX-License-Identifier: MIT
# The functions lib/banned.h bans, called anywhere in the project's C, C++
# and CUDA sources (tests and benchmarks aside): each use is printed as
# FILE:LINE: NAME() and the script exits 1; 0 when there is none.  It also
# checks that lib/banned.h itself turns a use into a compile error ($CC,
# default cc).
# Usage: tests/cli/banned.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
names=$(sed -n 's/^#define \([a-z_]*\)(.*BANNED(.*/\1/p' lib/banned.h | tr '\n' '|')
names=${names%|}
[ -n "$names" ] || { echo "banned: no names in lib/banned.h"; exit 2; }
fail=0
for f in $(git ls-files 'lib/*.[ch]' 'tuner/*.[ch]' 'rules/*.[ch]' 'advisor/*.[ch]' \
	'probes/*.[ch]' 'probes/*.cu' 'import/*.[ch]' 'profiler/*.[ch]' 'reports/*.[ch]' \
	'cli/*.[ch]'); do
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
[ $fail -eq 0 ] && echo "banned: ok"
exit $fail
