#!/bin/sh
# SPDX-License-Identifier: MIT
# The output layer (lib/fsutil.h): nothing a user wrote is lost.
#  - an output equal to an input (same inode, symbolic links followed) or two
#    outputs naming one file: exit 2 naming both, the input untouched
#    (analyze, import, report, advise, calibrate);
#  - -o LINK replaces the link's target and keeps the link; an existing
#    file's mode is kept; a new file gets 0666 & ~umask;
#  - advise --json ok.json --report nodir/x.html: exit 2, ok.json untouched
#    (a command's outputs are committed together or not at all);
#  - probe --json FILE that exits 77 or 2 leaves FILE and a user's FILE.tmp
#    as they were;
#  - a full disk (ulimit -f): exit 2, the previous file intact, no temporary
#    file left behind.
# Prints "ok - " / "not ok - " lines; exit 0 pass, 1 fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
case $M in /*) ;; *) M=$(pwd)/$M ;; esac
[ -x "$M" ] || { echo "skip: no $M"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/harden-outputs.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
R=$(pwd)
NCCL=$R/tests/fixtures/nccl-tests/h100_1node8gpu_all_reduce_g8_together_nvls.txt
TRACE=$(ls "$R"/tests/fixtures/traces/small/*.json 2>/dev/null | head -1)
JOB="--model llama3-8b --gpus 8 --seq 4096 --gbs 64 --top 1"
fail=0
n=0

ok() { n=$((n + 1)); echo "ok - $*"; }
nok() { n=$((n + 1)); fail=1; echo "not ok - $*"; sed 's/^/#   /' "$T/err" 2>/dev/null | head -5; }

# refused NAME EXPECT-ERE FILE-THAT-MUST-STAY -- ARGS...: exit 2, message, file intact
refused() {
	name=$1 pat=$2 keep=$3
	shift 4
	cp "$keep" "$T/keep.before"
	(cd "$T" && "$M" "$@") >"$T/err" 2>&1
	rc=$?
	if [ $rc -ne 2 ]; then
		nok "$name: exit $rc, expected 2"
	elif ! grep -Eq -- "$pat" "$T/err"; then
		nok "$name: message does not match /$pat/"
	elif ! cmp -s "$keep" "$T/keep.before"; then
		nok "$name: $keep was changed"
	else
		ok "$name"
	fi
}

cd "$T" || exit 2
cp "$NCCL" log.txt
ln -s log.txt loglink.txt
"$M" advise $JOB --json a.json >/dev/null 2>"$T/err" || nok "advise --json a.json"

# --- item 4: an output equal to an input
if [ -n "$TRACE" ]; then
	cp "$TRACE" t.json
	refused "analyze --json t.json t.json" "output 't.json' is the same file as input 't.json'" \
		t.json -- analyze --json t.json t.json
	refused "analyze --facts t.json t.json" "same file as input" t.json -- \
		analyze --facts t.json t.json
	refused "analyze --json x --facts x" "outputs 'x.json' and 'x.json' are the same file" t.json \
		-- analyze --json x.json --facts x.json t.json
fi
refused "import -o log.txt log.txt" "output 'log.txt' is the same file as input 'log.txt'" \
	log.txt -- import nccl-tests log.txt -o log.txt
refused "import -o through a symbolic link" "output 'log.txt' is the same file as input 'loglink.txt'" \
	log.txt -- import nccl-tests loglink.txt -o log.txt
refused "report --advice a.json -o a.json" "output 'a.json' is the same file as input 'a.json'" \
	a.json -- report --advice a.json -o a.json
refused "report -o ./a.json (another spelling)" "same file as input 'a.json'" \
	a.json -- report --advice a.json -o ./a.json
refused "advise --json x --report x" "outputs 'x' and 'x' are the same file" a.json -- \
	advise $JOB --json x --report x
[ -e x ] && nok "advise --json x --report x wrote x" || ok "advise --json x --report x wrote nothing"
refused "advise --json a.json --model a.json" "same file as input" a.json -- \
	advise --model a.json --gpus 8 --seq 4096 --gbs 64 --json a.json
refused "calibrate -o same.json --results same.json" "same file" a.json -- \
	calibrate --backend cpu -o same.json --results same.json
[ -e same.json ] && nok "calibrate -o same --results same created same.json" ||
	ok "calibrate -o same --results same created nothing"

# --- item 5: symbolic links, modes, umask
echo '{"mine": 0}' >target.json
chmod 600 target.json
ln -s target.json link.json
"$M" advise $JOB --json link.json >/dev/null 2>"$T/err"
if [ -L link.json ] && [ "$(readlink link.json)" = target.json ] &&
	grep -q '"megatune.advice/1"' target.json; then
	ok "-o LINK keeps the link and writes its target"
else
	nok "-o LINK replaced the link: $(ls -l link.json)"
fi
mode=$(stat -c %a target.json)
[ "$mode" = 600 ] && ok "an existing file keeps its mode (600)" || nok "mode 600 became $mode"
ln -s sub/dangling.json dangling.json
mkdir sub
"$M" advise $JOB --json dangling.json >/dev/null 2>"$T/err"
[ -L dangling.json ] && [ -f sub/dangling.json ] && ok "a dangling link: its target created" ||
	nok "a dangling link: $(ls -l dangling.json sub 2>&1)"
(umask 077 && "$M" advise $JOB --json u077.json >/dev/null 2>"$T/err")
mode=$(stat -c %a u077.json 2>/dev/null)
[ "$mode" = 600 ] && ok "umask 077: a new file is 600" || nok "umask 077: a new file is $mode"
(umask 002 && "$M" advise $JOB --json u002.json >/dev/null 2>"$T/err")
mode=$(stat -c %a u002.json 2>/dev/null)
[ "$mode" = 664 ] && ok "umask 002: a new file is 664" || nok "umask 002: a new file is $mode"

# --- item 6: outputs committed together
echo '{"mine": 1}' >ok.json
refused "advise --json ok.json --report nodir/x.html" "nodir/x.html" ok.json -- \
	advise $JOB --json ok.json --report nodir/x.html
refused "estimate --json ok.json --report nodir/x.html" "nodir/x.html" ok.json -- \
	estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --tp 1 --pp 1 --cp 1 --ep 1 \
	--mbs 1 --json ok.json --report nodir/x.html
if [ -n "$TRACE" ]; then
	echo '{"mine": 2}' >f.json
	refused "analyze --facts f.json --json nodir/a.json" "nodir/a.json" f.json -- \
		analyze --facts f.json --json nodir/a.json t.json
fi
ls ./*.tmp.* >/dev/null 2>&1 && nok "temporary files left: $(ls ./*.tmp.*)" ||
	ok "no temporary file left behind"

# --- item 3: probe --json that exits 77 or 2
echo mine >ex.jsonl
echo usertmp >ex.jsonl.tmp
"$M" probe gemm --backend cuda --json ex.jsonl >"$T/err" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
	[ "$(cat ex.jsonl)" = mine ] && ok "probe exiting 77 leaves --json FILE" ||
		nok "probe exiting 77 replaced --json FILE"
else
	ok "probe gemm --backend cuda ran here (exit $rc): the 77 case is not reproducible"
fi
"$M" probe gemm --backend cpu --smoke --sizes bad --json ex.jsonl >"$T/err" 2>&1
rc=$?
[ $rc -eq 2 ] && [ "$(cat ex.jsonl)" = mine ] && ok "probe exiting 2 leaves --json FILE" ||
	nok "probe exit $rc, FILE now $(head -c 60 ex.jsonl)"
"$M" probe gemm --backend cpu --smoke -q --json ex.jsonl >"$T/err" 2>&1
grep -q '"megatune.result/1"' ex.jsonl && ok "probe --json written on success" ||
	nok "probe --json not written on success"
[ "$(cat ex.jsonl.tmp)" = usertmp ] && ok "a user's FILE.tmp is never touched" ||
	nok "FILE.tmp was changed"

# --- a full disk: the previous file intact, exit 2, nothing left behind
cp a.json big.json
(trap '' XFSZ; ulimit -f 8; "$M" advise $JOB --json big.json >/dev/null 2>"$T/err")
rc=$?
if [ $rc -eq 2 ] && cmp -s big.json a.json && grep -q "cannot write 'big.json'" "$T/err" &&
	! ls ./big.json.tmp.* >/dev/null 2>&1; then
	ok "a full disk: exit 2, the previous file intact, no temporary file"
else
	nok "a full disk: exit $rc $(ls big.json.tmp.* 2>/dev/null)"
fi

# --- standard output on a full device: exit 2, never a silent 0
if [ -w /dev/full ]; then
	for args in "advise $JOB" "rules list" "import nccl-tests log.txt"; do
		"$M" $args >/dev/full 2>"$T/err"
		rc=$?
		[ $rc -eq 2 ] && grep -q "cannot write to standard output" "$T/err" &&
			ok "$args >/dev/full: exit 2" || nok "$args >/dev/full: exit $rc"
	done
fi

echo "$n checks"
exit $fail
