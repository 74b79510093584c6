#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 29: the NICs a profile describes drive the model.  A copy of dgx-h100
# with node.nic_gbps 50 -> 12.5 or nics_per_node 8 -> 4 once gave the very
# step time of the original (its measured curves were used as measured);
# now the described NICs bound them and the step is slower.  Without network
# curves the NIC description alone prices the network: half the NIC rate
# slows a multi-node job that leans on data parallelism, and the advice says
# where its figures come from.  Fixtures: tests/fixtures/profiles/README.md.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=${MEGATUNE:-$BUILD/megatune}
P=tests/fixtures/profiles
T=$(mktemp -d "${TMPDIR:-/tmp}/profile-nics.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT

fail() {
	echo "FAIL: $*"
	exit 1
}

PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY (Debian's python3)"; exit 77; }

# step_s of the best candidate: advise ARGS... > the step on stdout
step() {
	"$MT" advise "$@" --top 1 --format json >"$T/out.json" 2>"$T/err" ||
		fail "advise $*: exit $? $(cat "$T/err")"
	"$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["candidates"][0]["time"]["step_s"])' \
		"$T/out.json" || fail "advise $*: no step_s in $(head -c 300 "$T/out.json")"
}

# slower A B: A > B * 1.001
slower() {
	"$PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 1.001 * float(sys.argv[2]) else 1)' "$1" "$2"
}

# the issue's job: llama3-70b on 64 H100, distributed optimizer, DP across nodes
job="--model llama3-70b --gpus 64 --seq 8192 --gbs 128"
base=$(step $job --cluster dgx-h100) || exit 1
for f in dgx-h100-nic12.5 dgx-h100-nics4; do
	s=$(step $job --cluster $P/$f.json) || exit 1
	slower "$s" "$base" || fail "$f: step $s s, not slower than dgx-h100's $base s"
	grep -q "warning: .*network curves .* faster than the NICs the profile describes" "$T/err" ||
		fail "$f: no warning on the NICs: $(cat "$T/err")"
done

# a DP-heavy job across 8 nodes on the NIC description alone
dp="--model llama3-8b --gpus 64 --seq 4096 --gbs 128 --tp 1 --pp 1 --cp 1"
full=$(step $dp --cluster $P/dgx-h100-nonet.json) || exit 1
grep -q '(derived from the NIC description)' "$T/out.json" ||
	fail "dgx-h100-nonet: the advice does not say its network is derived from the NICs"
half=$(step $dp --cluster $P/dgx-h100-nonet-nic25.json) || exit 1
slower "$half" "$full" || fail "half the NIC rate: step $half s, not slower than $full s"
exit 0
