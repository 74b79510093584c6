#!/bin/sh
# SPDX-License-Identifier: MIT
# The shape of the code (CONTRIBUTING.md): dependencies run one way through
# the layers, no command file calls another, no file over 1,000 lines (a
# command file of cli/ over 600) and no function over 150 (tests, benchmarks
# and generated code aside).
set -u
cd "$(dirname "$0")/../.." || exit 2
fail=0
# lib -> perfmodel -> job -> rules -> tuner -> validate -> reports -> check -> cli; probes,
# import and the profiler sit beside rules and tuner: each may include only a folder of a
# lower layer (or its own).  job (2), the job as Megatron-LM, Bridge and verl spell
# it, sits on the performance model (perfmodel) and below the rules, whose facts its knob table
# declares; compare (6) sits above validate, below reports; check (8), megatune check's
# searches, diagnoses and document, sits above reports (its text and HTML), below cli (9).
layer() {
	case $1 in
	lib) echo 0 ;; perfmodel) echo 1 ;; job) echo 2 ;; rules|probes) echo 3 ;;
	tuner|import|profiler) echo 4 ;; validate) echo 5 ;; reports) echo 7 ;; check) echo 8 ;;
	cli) echo 9 ;; compare) echo 6 ;;
	*) echo 10 ;;
	esac
}
for f in $(git ls-files 'lib/*.[ch]' 'perfmodel/*.[ch]' 'job/*.[ch]' 'rules/*.[ch]' 'tuner/*.[ch]' \
	'probes/*.[ch]' 'probes/*.cu' 'import/*.[ch]' 'profiler/*.[ch]' 'profiler/inject/*.[ch]' 'validate/*.[ch]' 'reports/*.[ch]' 'check/*.[ch]' \
	'cli/*.[ch]' 'compare/*.[ch]'); do
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
# no loop of calls among the files of a folder, of any length: A.c calls a
# function B.c defines, B.c one of C.c, ... and one of them calls back into A.c
# (headers don't count); and no two files define a function of one name,
# static or not (main aside), which reads as a call between them to any tool
# that draws the house.  One awk pass over the .c files given: the file-scope
# definitions ("int mt_x(...)" or "int" then "mt_x(...)", then a line "{"),
# and the calls "name(" outside comments, strings and characters; then a
# depth-first walk of the calls between files names each loop it closes.
c_code=$(cat tests/cli/c-code.awk)
loops() {
awk "$c_code"'
	FNR == 1 { n = split(FILENAME, p, "/"); dir = p[1]; incom = 0; spec = ""; cand = "" }
	{
		# comments (possibly over several lines), strings and characters out
		line = c_code($0)
		# a definition: its signature at column 0, then a line "{"
		sig = line
		# attributes out, wherever they stand: "static __attribute__((x)) void f("
		gsub(/__attribute__[ \t]*\(\(([^()]|\([^()]*\))*\)\)[ \t]*/, "", sig)
		if (sig ~ /^[A-Za-z_][A-Za-z_0-9 \t*]*[ \t*][A-Za-z_][A-Za-z_0-9]*\(/ ||
		    (sig ~ /^[A-Za-z_][A-Za-z_0-9]*\(/ && spec != "")) {
			st = (sig ~ /^(static|typedef|extern)[ \t]/ || spec ~ /(^|[ \t])static([ \t]|$)/)
			nm = sig; sub(/\(.*/, "", nm); sub(/.*[ \t*]/, "", nm)
			cand = st ? "" : nm
			if (st) local[FILENAME, nm] = 1
			spec = ""
		} else if (line ~ /^[A-Za-z_][A-Za-z_0-9 \t*]*$/) {
			spec = spec " " line	# a return type on its own line
		} else
			spec = ""
		if (cand != "" && (line ~ /^\{/ || line ~ /\)[ \t]*\{/)) {
			if (!(cand in def)) def[cand] = FILENAME
			local[FILENAME, cand] = 1
			cand = ""
		}
		if (nm != "" && (line ~ /^\{/ || line ~ /\)[ \t]*\{/)) {
			if (nm != "main" && (nm in where) && where[nm] != FILENAME && !((nm, FILENAME) in said)) {
				print "name: " nm "() is defined in " where[nm] " and in " FILENAME
				said[nm, FILENAME] = 1
				bad = 1
			}
			if (!(nm in where)) where[nm] = FILENAME
			nm = ""
		}
		if (nm != "" && line ~ /;[ \t]*$/) nm = ""	# a declaration
		if (cand != "" && line ~ /;[ \t]*$/) cand = ""	# a declaration
		# the calls, in the order they appear
		t = line
		while (match(t, /[A-Za-z_][A-Za-z_0-9]*\(/)) {
			c = substr(t, RSTART, RLENGTH - 1)
			if (RSTART == 1 || substr(t, RSTART - 1, 1) !~ /[A-Za-z_0-9.>]/)
				if (!((FILENAME, c) in seen)) { seen[FILENAME, c] = 1; calls[++ncalls] = FILENAME SUBSEP c }
			t = substr(t, RSTART + RLENGTH)
		}
		files[FILENAME] = dir
	}
	END {
		# the first function of B that A calls, for each pair of files A, B
		for (k = 1; k <= ncalls; k++) {
			split(calls[k], q, SUBSEP); a = q[1]; c = q[2]
			if (!(c in def)) continue
			b = def[c]
			if (b == a || files[a] != files[b] || ((a, c) in local)) continue
			if (!((a, b) in edge)) { edge[a, b] = c; order[++nedges] = a SUBSEP b }
		}
		for (k = 1; k <= nedges; k++) {
			split(order[k], q, SUBSEP); a = q[1]; b = q[2]
			adj[a, ++nadj[a]] = b
			if (!(a in node)) { node[a] = 1; nodes[++nn] = a }
		}
		for (k = 1; k <= nn; k++)
			if (!color[nodes[k]])
				walk(nodes[k])
		exit bad
	}
	# depth first; an edge back into the path closes a loop, named from
	# where it starts
	function walk(u,    i, v, k, msg) {
		color[u] = 1
		path[++depth] = u
		for (i = 1; i <= nadj[u]; i++) {
			v = adj[u, i]
			if (color[v] == 1) {
				for (k = depth; path[k] != v; k--)
					;
				msg = "loop:"
				for (; k < depth; k++)
					msg = msg " " path[k] " calls " edge[path[k], path[k + 1]] "() of " path[k + 1] ","
				print msg " " u " calls " edge[u, v] "() of " v
				bad = 1
			} else if (!color[v])
				walk(v)
		}
		depth--
		color[u] = 2
	}' "$@"
}
# the walk finds a loop of three files planted in a folder of its own
P=$(mktemp -d "${TMPDIR:-/tmp}/layout.XXXXXX") || exit 2
trap 'rm -rf "$P"' EXIT INT TERM
mkdir -p "$P/room"
printf 'int b_one(void);\nint a_one(void)\n{\n\treturn b_one();\n}\n' >"$P/room/a.c"
printf 'int c_one(void);\nint b_one(void)\n{\n\treturn c_one();\n}\n' >"$P/room/b.c"
printf 'int a_one(void);\nint c_one(void)\n{\n\treturn a_one();\n}\nstatic int twin(void)\n{\n\treturn 0;\n}\n' >"$P/room/c.c"
printf 'static int twin(void)\n{\n\treturn 1;\n}\nint d_one(void)\n{\n\treturn twin();\n}\n' >"$P/room/d.c"
planted=$(cd "$P" && loops room/a.c room/b.c room/c.c room/d.c)
case $planted in
*"loop: room/a.c calls b_one() of room/b.c, room/b.c calls c_one() of room/c.c, room/c.c calls a_one() of room/a.c"*) ;;
*) echo "layout: the planted loop of three files is not found: $planted"; fail=1 ;;
esac
case $planted in
*"name: twin() is defined in room/c.c and in room/d.c"*) ;;
*) echo "layout: the planted twin name is not found: $planted"; fail=1 ;;
esac
loops lib/*.c perfmodel/*.c job/*.c rules/*.c tuner/*.c import/*.c profiler/*.c profiler/inject/*.c validate/*.c \
	compare/*.c reports/*.c check/*.c probes/*.c cli/*.c || fail=1
# sizes: files at most 1,000 lines, those of cli/ (the command line alone) 600;
# a function (from a line "{" to a line "}") at most 150
for f in $(git ls-files '*.c' '*.h' '*.cu' | grep -v -e '^tests/' -e '^bench/'); do
	[ -f "$f" ] || continue
	n=$(wc -l <"$f")
	case $f in cli/*) cap=600 ;; *) cap=1000 ;; esac
	if [ "$n" -gt "$cap" ]; then
		echo "size: $f has $n lines (at most $cap)"
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
