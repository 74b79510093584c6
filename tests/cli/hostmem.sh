#!/bin/sh
# SPDX-License-Identifier: MIT
# Host memory (docs/MODEL.md 4.10): the long-sequence Llama 3 70B job on
# DGX H100 (2 TiB per node) that needs activation offload never ranks a
# candidate whose offloaded state the node cannot hold; the search counts
# those as host-memory; estimate shows the host memory per node and says
# when it does not fit.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY (Debian's python3)"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/hostmem.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fail=0
ok() { echo "ok - $*"; }
no() { echo "not ok - $*"; fail=1; }
JOB="--model llama3-70b --gpus 64 --seq 65536 --gbs 64 --cluster dgx-h100"

# shellcheck disable=SC2086
"$M" advise $JOB --top 64 --format json >"$T/a.json" 2>"$T/a.err" || no "advise exits $?"
"$PY" - "$T/a.json" >"$T/check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cap = 0.9 * 2 * 1024**4          # 90% of the 2 TiB of a DGX H100 node
c = d["candidates"]
assert len(c) > 0, "no candidate"
off = [x for x in c if x["config"]["offload_layers"] > 0]
assert off, "no candidate offloads: the case no longer tests host memory"
worst = max(x["memory"]["host_per_node_bytes"] for x in c)
assert worst <= cap, "a candidate holds %.0f GiB per node" % (worst / 2**30)
for x in off:  # 8 ranks share the node, each above its offloaded activations
    assert x["memory"]["host_per_node_bytes"] >= 8 * x["memory"]["host_per_gpu_bytes"] - 1
assert d["pruned"]["host-memory"] > 0, "nothing pruned for host memory"
print("max %.0f GiB per node of %.0f usable; %d pruned" % (worst / 2**30, cap / 2**30,
      d["pruned"]["host-memory"]))
PY
if [ $? -eq 0 ]; then ok "advise: every candidate fits in host memory ($(cat "$T/check"))"
else no "advise: $(tail -1 "$T/check")"; fi

# shellcheck disable=SC2086
"$M" advise $JOB >"$T/a.txt" 2>/dev/null
grep -Eq '^pruned: .*host-memory [1-9]' "$T/a.txt" && ok "the pruned: line counts host-memory" ||
	no "no host-memory count in the pruned: line"

# what advise used to recommend: 78 layers of 2 micro-batch-sized sequences per GPU
# shellcheck disable=SC2086
"$M" estimate $JOB --tp 8 --mbs 2 --offload-layers 78 >"$T/e.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "estimate TP8 MBS2 offload 78: exit 1" || no "estimate TP8 MBS2 offload 78: exit $rc"
grep -q '^verdict: DOES NOT FIT in host memory' "$T/e.txt" && ok "estimate: verdict names host memory" ||
	no "estimate: no host-memory verdict"
grep -Eq '^host memory per node: [0-9.]+ GiB of 1843.2 GiB usable' "$T/e.txt" &&
	ok "estimate: host memory per node shown" || no "estimate: no host memory line"
# shellcheck disable=SC2086
"$M" estimate $JOB --tp 8 --cp 8 --recompute full >"$T/f.txt" 2>&1
grep -Eq '^host memory per node: [0-9.]+ GiB of' "$T/f.txt" && ok "estimate without offload shows it too" ||
	no "estimate without offload: no host memory line"
exit $fail
