#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune import, golden: every recorded nccl-tests log of
# tests/fixtures/nccl-tests (and the constructed -J and nvbandwidth files)
# read with --json must give tests/golden/import/<file>.json exactly; every
# test with an 'Avg bus bandwidth' footer must reproduce it; the imported
# profiles must feed `megatune advise`; a failed import must leave an
# existing output file as it was.
# MEGATUNE_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
# Exit 0 pass, 77 skip (with the reason on the last line), else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
[ -x "$M" ] || { echo "skip: no $M"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/import.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
F=tests/fixtures/nccl-tests
G=tests/golden/import
fail=0

bad() {
	echo "FAIL: $*"
	fail=1
}

# golden NAME ARGS...: `megatune import ARGS --json` against $G/NAME.json
golden() {
	name=$1
	shift
	"$M" import "$@" --json >"$T/out.json" 2>"$T/err"
	rc=$?
	if [ $rc -ne 0 ]; then
		bad "$name: exit status $rc"
		sed 's/^/    /' "$T/err"
		return
	fi
	if [ "${MEGATUNE_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$T/out.json" "$G/$name.json"
		echo "wrote $G/$name.json"
	elif ! diff -u "$G/$name.json" "$T/out.json" >"$T/diff"; then
		bad "$name: the output differs from $G/$name.json (MEGATUNE_UPDATE_GOLDEN=1 rewrites it)"
		head -60 "$T/diff" | sed 's/^/    /'
	fi
	# every footer printed is reproduced by the rows above it
	footers=$(grep -c '"avg_busbw_gbps"' "$T/out.json")
	ok=$(grep -c '"footer_reproduced": true' "$T/out.json")
	if [ "$footers" != "$ok" ]; then
		bad "$name: $footers footers, $ok reproduced"
	fi
	if grep -q '"rows_inconsistent": [1-9]' "$T/out.json"; then
		bad "$name: a row's busbw is not algbw x the bus factor"
	fi
	echo "ok $name: $footers footers reproduced"
}

for f in "$F"/*.txt; do
	n=$(basename "$f" .txt)
	case $n in
	# a paste without device list: the GPU is not named
	*liplus*) golden "$n" nccl-tests --base dgx-a100-80g "$f" ;;
	*) golden "$n" nccl-tests "$f" ;;
	esac
done
golden all_reduce_g8_v2.17.8 nccl-tests "$F/constructed/all_reduce_g8_v2.17.8.json"
for f in tests/fixtures/nvbandwidth/*.txt tests/fixtures/nvbandwidth/*.json; do
	n=$(basename "$f")
	golden "${n%.*}-${n##*.}" nvbandwidth "$f"
done

# the profiles feed the advisor
advise() { # profile gpus
	if ! "$M" advise --model llama3-8b --cluster "$1" --gpus "$2" --seq 4096 --gbs 64 --top 1 \
		>"$T/advise.out" 2>&1; then
		bad "advise on $1 failed"
		tail -5 "$T/advise.out" | sed 's/^/    /'
	else
		echo "ok advise --cluster $(basename "$1") --gpus $2"
	fi
}
imp() { # output args...
	out=$1
	shift
	if ! "$M" import "$@" -o "$out" >"$T/imp.out" 2>&1; then
		bad "import $* -o $out failed"
		tail -5 "$T/imp.out" | sed 's/^/    /'
	fi
}
imp "$T/h100.json" nccl-tests "$F"/h100_*.txt
advise "$T/h100.json" 16
advise "$T/h100.json" 80
imp "$T/a100.json" nccl-tests "$F"/a100_*.txt
advise "$T/a100.json" 16
imp "$T/h200.json" nccl-tests "$F"/h200_*.txt
advise "$T/h200.json" 16
imp "$T/json.json" nccl-tests "$F/constructed/all_reduce_g8_v2.17.8.json"
advise "$T/json.json" 8
imp "$T/nvb.json" nvbandwidth tests/fixtures/nvbandwidth/h100_8gpu_nvbandwidth_v0.8_constructed.txt
advise "$T/nvb.json" 8
# the imported curves are the ones the profile holds, with their provenance
if ! grep -q '"citation":[[:space:]]*"nccl-tests 2.17.8 all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf, NCCL 2.29.2, 80 ranks on 10 hosts, NVIDIA H100 80GB HBM3: h100_10node80gpu_allcoll_nccltests2.17.8_xxrjun.txt"' "$T/h100.json"; then
	bad "h100.json lacks the citation of the 10-node log"
fi
grep -q '"nccl":[[:space:]]*"2.29.2"' "$T/h100.json" || bad "h100.json: software.nccl is not 2.29.2"

# an error leaves an existing output file untouched, and no temporary file
imp "$T/keep.json" nccl-tests "$F/h200_2node2gpu_all_reduce_1nic_dranet.txt"
cp "$T/keep.json" "$T/keep.orig"
for args in "tests/fixtures/bad/import-not-a-number.txt" \
	"tests/fixtures/bad/import-empty.txt" \
	"$F/h200_2node2gpu_all_reduce_1nic_dranet.txt tests/fixtures/bad/import-short-row.txt" \
	"--strict tests/fixtures/bad/import-footer-mismatch.txt" \
	"--span nvlink $F/h100_10node80gpu_allcoll_nccltests2.17.8_xxrjun.txt" \
	"tests/fixtures/bad/import-reduce.txt"; do
	# shellcheck disable=SC2086
	"$M" import nccl-tests $args -o "$T/keep.json" >"$T/e.out" 2>&1
	rc=$?
	case $rc in
	1|2) ;;
	*) bad "import nccl-tests $args: exit status $rc, expected 1 or 2" ;;
	esac
	grep -q 'megatune import: error: ' "$T/e.out" || bad "import nccl-tests $args: no error message"
	cmp -s "$T/keep.json" "$T/keep.orig" || bad "import nccl-tests $args changed the existing output"
done
left=$(find "$T" -name 'keep.json?*' -o -name '*.tmp*' | head -1)
[ -z "$left" ] || bad "a temporary file was left behind: $left"
echo "ok a failed import leaves the output file as it was"

# the fuzz target over the fixtures (built by make unit)
if [ -x "$B/tests/fuzz-import" ]; then
	"$B/tests/fuzz-import" "$F"/*.txt "$F"/constructed/*.json tests/fixtures/nvbandwidth/*.txt \
		tests/fixtures/nvbandwidth/*.json tests/fixtures/bad/import-* >"$T/fuzz.out" 2>&1 ||
		bad "fuzz-import over the fixtures: $(tail -3 "$T/fuzz.out")"
fi

[ $fail -eq 0 ] && echo "all import checks passed"
exit $fail
