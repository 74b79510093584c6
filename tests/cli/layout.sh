#!/bin/sh
# SPDX-License-Identifier: MIT
# The shape of the code (CONTRIBUTING.md): dependencies run one way through
# the layers, no command file calls another, no file over 1,200 lines and no
# function over 150 (tests, benchmarks and generated code aside).
set -u
cd "$(dirname "$0")/../.." || exit 2
fail=0
# lib -> tuner -> rules -> advisor -> validate -> reports -> cli; probes, import and the
# profiler sit beside rules and advisor: each may include only a folder of a
# lower layer (or its own).  compare (5) sits above them, below reports.
layer() {
	case $1 in
	lib) echo 0 ;; tuner) echo 1 ;; rules|probes) echo 2 ;;
	advisor|import|profiler) echo 3 ;; validate) echo 4 ;; reports) echo 6 ;; cli) echo 7 ;;
	compare) echo 5 ;;
	*) echo 9 ;;
	esac
}
for f in $(git ls-files 'lib/*.[ch]' 'tuner/*.[ch]' 'rules/*.[ch]' 'advisor/*.[ch]' \
	'probes/*.[ch]' 'probes/*.cu' 'import/*.[ch]' 'profiler/*.[ch]' 'validate/*.[ch]' 'reports/*.[ch]' 'cli/*.[ch]' 'compare/*.[ch]'); do
	[ -f "$f" ] || continue
	from=${f%%/*}
	lf=$(layer "$from")
	dir=$(dirname "$f")
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		# resolve the include against the file's folder
		target=$(realpath -m --relative-to=. "$dir/$inc")
		to=${target%%/*}
		[ "$to" = "$from" ] && continue
		lt=$(layer "$to")
		if [ "$lt" -ge "$lf" ]; then
			echo "layer: $f includes $inc ($to is not below $from)"
			fail=1
		fi
	done
done
# no command file calls another: each cmd_<name>.c may use cli/common.h and
# the declarations of its own command only
for f in cli/cmd_*.c; do
	[ -f "$f" ] || continue
	own=$(basename "$f" .c)
	for other in cli/cmd_*.c; do
		[ "$other" = "$f" ] && continue
		o=$(basename "$other" .c)
		# the functions the other file defines at file scope, not static
		for fn in $(sed -n 's/^\(int\|void\|const char \*\|char \*\) *\([a-z_0-9]*\)(.*/\2/p' "$other"); do
			case $fn in "$own"*) continue ;; esac
			if grep -q "\b$fn(" "$f"; then
				echo "cli: $f calls $fn() of $other"
				fail=1
			fi
		done
	done
done
# sizes: files at most 1,200 lines; a function (from a line "{" to a line "}")
# at most 150
for f in $(git ls-files '*.c' '*.h' '*.cu' | grep -v -e '^tests/' -e '^bench/'); do
	[ -f "$f" ] || continue
	n=$(wc -l <"$f")
	if [ "$n" -gt 1200 ]; then
		echo "size: $f has $n lines (at most 1200)"
		fail=1
	fi
	awk -v f="$f" '
		/^[A-Za-z_].*\(/ { sig = $0; sigline = NR }
		/^\{/ { start = NR; name = sig }
		/^\}/ && start { len = NR - start - 1
			if (len > 150) { n = name; sub(/\(.*/, "", n); print "size: " f ":" sigline ": " n " has " len " lines (at most 150)"; bad = 1 }
			start = 0 }
		END { exit bad }' "$f" || fail=1
done
[ $fail -eq 0 ] && echo "layout: ok"
exit $fail
