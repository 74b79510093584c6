#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune-probe proxy on the CPU backends (real work, no GPU): `advise` for a
# tiny Llama-style model on 4 GPUs, then the proxy of candidates 1-3 under
# mpirun -np 4 (and of a pinned one for a recomputation mode the top 3 lack).
# Checks: the iteration lines have Megatron-LM's format (the
# regex of training_log(), with throughput) and the memory report line that of
# report_memory(); the times are positive; the layer's recomputation follows
# the candidate's (none, selective, full) and the steps agree; the composed step is at least
# the layers of a stage times the measured layer (docs/MODEL.md "The proxy");
# a configuration of 8 GPUs on 4 ranks says what it scaled; bad input exits 2
# with a message; the GPU backend exits 77 with the reason where there is no GPU.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=$(pwd)/$BUILD/megatune
PX=$(pwd)/$BUILD/megatune-probe
T=$(mktemp -d "${TMPDIR:-/tmp}/proxy.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm_rsh_agent=false
mpirun() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" command mpirun "$@"
}
TINY=tests/fixtures/models/tiny-llama.json
nfail=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; nfail=$((nfail + 1)); }

command -v mpirun >/dev/null 2>&1 || { echo "skip: no mpirun"; exit 77; }
"$MT" advise --model $TINY --gpus 4 --seq 128 --gbs 16 --top 3 --json "$T/adv.json" \
	>"$T/adv.out" 2>&1 || { echo "advise failed: $(cat "$T/adv.out")"; exit 1; }

# Megatron-LM's iteration line (training_log) and memory report (report_memory)
ITER='^ \[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\] iteration +[0-9]+/ +[0-9]+ \| consumed samples: +[0-9]+ \| elapsed time per iteration \(ms\): [0-9]+\.[0-9] \| throughput per GPU \(TFLOP/s/GPU\): [0-9]+\.[0-9] \| learning rate: [0-9]\.[0-9]{6}E[+-][0-9]{2} \| global batch size: +[0-9]+ \| lm loss: [0-9]\.[0-9]{6}E[+-][0-9]{2} \| loss scale: [0-9.]+ \| number of skipped iterations: +0 \| number of nan iterations: +0 \|$'
MEM='^\[Rank 0\] \(after [0-9]+ iterations\) memory \(MB\) \| allocated: [0-9.]+ \| max allocated: [0-9.]+ \| reserved: [0-9.]+ \| max reserved: [0-9.]+$'

px() { # advice K tag: the proxy of candidate K, checked; $T/tag.step: step, layer ratio
	if ! mpirun -np 4 "$PX" proxy --advice "$1" --candidate "$2" --backend cpu \
		--iters 3 --warmup 1 >"$T/$3.out" 2>"$T/$3.err"; then
		bad "$3: exit $? $(tail -5 "$T/$3.err")"
		return
	fi
	n=$(grep -cE "$ITER" "$T/$3.out")
	[ "$n" = 3 ] && ok "$3: 3 Megatron-LM iteration lines" ||
		bad "$3: $n well-formed iteration lines of 3: $(head -3 "$T/$3.out")"
	grep -qE "$MEM" "$T/$3.out" && grep -q '(after 3 iterations)' "$T/$3.out" &&
		ok "$3: memory report lines" || bad "$3: no memory report line"
	[ "$(grep -c . "$T/$3.out")" = 5 ] && ok "$3: nothing else on stdout" ||
		bad "$3: other lines on stdout: $(cat "$T/$3.out")"
	if /usr/bin/python3 - "$T/$3.out" "$T/$3.err" >"$T/$3.step" <<'PY'
import re, sys
out, err = open(sys.argv[1]).read(), open(sys.argv[2]).read()
its = [float(x) for x in re.findall(r"elapsed time per iteration \(ms\): ([0-9.]+)", out)]
assert len(its) == 3 and all(t > 0 for t in its), its
ns = [int(x) for x in re.findall(r"iteration +([0-9]+)/ +3 \|", out)]
cs = [int(x) for x in re.findall(r"consumed samples: +([0-9]+)", out)]
assert ns == [1, 2, 3] and cs == [16, 32, 48], (ns, cs)
m = re.search(r"median step ([0-9.]+) s; dense layer ([0-9.]+) s \(4 per stage\)", err)
assert m, err
step, layer = float(m.group(1)), float(m.group(2))
assert layer > 0 and step >= 4 * layer, (step, layer)
assert sorted(its)[1] == round(step * 1000, 1) or abs(sorted(its)[1] - step * 1000) < 0.06, (its, step)
a = float(re.search(r"attention block ([0-9.]+) s", err).group(1))
d = float(re.search(r"dense MLP ([0-9.]+) s", err).group(1))
print(step, layer / (a + d))
PY
	then
		ok "$3: positive times, step >= 4 layers ($(cut -d' ' -f1 "$T/$3.step") s)"
	else
		bad "$3: times: $(cat "$T/$3.step") $(tail -3 "$T/$3.err")"
		rm -f "$T/$3.step"
	fi
}
for k in 1 2 3; do
	px "$T/adv.json" $k c$k
done
# the recomputation of each candidate in its composed layer (docs/MODEL.md 9):
# the layer is the attention block plus the MLP, forward and backward, plus a
# forward (full), the attention's forward (selective) or nothing (none).  The
# modes come from the advice; one the top 3 lack is pinned (--recompute) on
# the top candidate's TP, PP and MBS, so all do the same per-GPU work and
# their steps agree within the noise of a shared host (a factor of 3)
rc_of() { # advice K -> recompute, tp, pp, mbs of candidate K
	/usr/bin/python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["candidates"][int(sys.argv[2]) - 1]["config"]
print(c["recompute"], c["tp"], c["pp"], c["mbs"])' "$1" "$2"
}
set -- $(rc_of "$T/adv.json" 1)
pins="--tp $2 --pp $3 --mbs $4"
runs=""
for k in 1 2 3; do
	runs="$runs $T/adv.json:$k:$T/c$k.step"
done
for m in none selective full; do
	for k in 1 2 3; do
		[ "$(rc_of "$T/adv.json" $k | cut -d' ' -f1)" = $m ] && continue 2
	done
	# shellcheck disable=SC2086
	"$MT" advise --model $TINY --gpus 4 --seq 128 --gbs 16 --top 1 --recompute $m $pins \
		--json "$T/adv-$m.json" >/dev/null 2>&1 || bad "advise --recompute $m $pins"
	px "$T/adv-$m.json" 1 $m
	runs="$runs $T/adv-$m.json:1:$T/$m.step"
done
# shellcheck disable=SC2086
/usr/bin/python3 - $runs >"$T/rc.out" 2>&1 <<'PY' &&
import json, sys
r, s, shape = {}, [], set()
for run in sys.argv[1:]:
    adv, k, step = run.split(":")
    c = json.load(open(adv))["candidates"][int(k) - 1]["config"]
    st, ratio = map(float, open(step).read().split())  # a missing step file fails here
    r.setdefault(c["recompute"], []).append(ratio)
    s.append(st)
    shape.add((c["tp"], c["pp"], c["mbs"], c["dp"]))
print(r, s, shape)
assert sorted(r) == ["full", "none", "selective"], r
assert all(abs(x - 1) < 1e-3 for x in r["none"]), r
assert all(1 + 1e-3 < x < min(r["full"]) for x in r["selective"]), r  # attention forward > 0
assert all(x > 1.1 for x in r["full"]), r
assert len(shape) == 1, shape
assert max(s) < 3 * min(s), s
PY
	ok "recomputation composed: none < selective < full layer; steps agree" ||
	bad "recomputation: $(cat "$T/rc.out")"

# 8 GPUs (TP2 PP2 DP2) on 4 ranks: fewer DP replicas, said on stderr
"$MT" advise --model $TINY --gpus 8 --seq 128 --gbs 16 --tp 2 --pp 2 --top 1 \
	--json "$T/adv8.json" >/dev/null 2>&1 || bad "advise --gpus 8 --tp 2 --pp 2"
if mpirun -np 4 "$PX" proxy --advice "$T/adv8.json" --candidate 1 --backend cpu --iters 2 \
	--warmup 0 >"$T/s.out" 2>"$T/s.err"; then
	grep -q 'scaled to this launch: DP 2 -> 1 replicas' "$T/s.err" &&
		ok "8 GPUs on 4 ranks: DP scaled, said on stderr" ||
		bad "no scaling note: $(cat "$T/s.err")"
	[ "$(grep -cE "$ITER" "$T/s.out")" = 2 ] && ok "TP2 PP2: 2 iteration lines" ||
		bad "TP2 PP2 lines: $(cat "$T/s.out")"
	grep -Eq 'PP send/recv [0-9.]*[1-9]' "$T/s.err" && ok "TP2 PP2: send/recv measured" ||
		bad "TP2 PP2: no send/recv time: $(cat "$T/s.err")"
else
	bad "TP2 PP2 on 4 ranks: $(tail -5 "$T/s.err")"
fi

# 2 GPUs (TP2) on 4 ranks: two ranks idle (they still take part in every
# collective call of the setup; a hang here is a failure, not a wait)
"$MT" advise --model $TINY --gpus 2 --seq 128 --gbs 8 --tp 2 --top 1 \
	--json "$T/adv2.json" >/dev/null 2>&1 || bad "advise --gpus 2 --tp 2"
if ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 300 mpirun -np 4 "$PX" proxy --advice "$T/adv2.json" --candidate 1 --backend cpu \
	--iters 2 --warmup 0 >"$T/i.out" 2>"$T/i.err"; then
	grep -q 'scaled to this launch: 2 of 4 ranks idle' "$T/i.err" &&
		[ "$(grep -cE "$ITER" "$T/i.out")" = 2 ] && ok "2 GPUs on 4 ranks: 2 idle, 2 lines" ||
		bad "2 GPUs on 4 ranks: $(cat "$T/i.err" "$T/i.out")"
else
	bad "2 GPUs on 4 ranks: exit $? $(tail -5 "$T/i.err")"
fi

# bad input: exit 2 with a message
check2() { # name pattern args...
	name=$1 pat=$2
	shift 2
	"$PX" proxy "$@" >"$T/b.out" 2>&1
	rc=$?
	[ $rc = 2 ] && grep -Eq -- "$pat" "$T/b.out" && ok "$name: exit 2" ||
		bad "$name: exit $rc, $(cat "$T/b.out")"
}
echo '{"schema": "megatune.profile/1"}' >"$T/wrong.json"
echo '{"schema": "megatune.advice/1", "job": {"gpus": 4}, "candidates": [' >"$T/trunc.json"
check2 "missing advice" "cannot read .*nothere.json" --advice "$T/nothere.json" --candidate 1 --backend cpu
check2 "candidate out of range" "--candidate 4: .* has 3 candidates" --advice "$T/adv.json" --candidate 4 --backend cpu
check2 "candidate 0" "--candidate: expected an integer from 1 to 1000000, got '0'" --advice "$T/adv.json" --candidate 0
check2 "wrong schema" "schema.*megatune.advice/1" --advice "$T/wrong.json" --candidate 1 --backend cpu
check2 "truncated advice" "trunc.json" --advice "$T/trunc.json" --candidate 1 --backend cpu
check2 "no --candidate" "--candidate K is required" --advice "$T/adv.json"
check2 "bad backend" "--backend: expected cpu or gpu" --advice "$T/adv.json" --candidate 1 --backend tpu

# megatune proxy runs megatune-probe proxy
"$MT" proxy --advice "$T/adv.json" --candidate 9 --backend cpu >"$T/f.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q -- '--candidate 9: .* has 3 candidates' "$T/f.out" &&
	ok "megatune proxy forwards to megatune-probe" || bad "megatune proxy: exit $rc $(cat "$T/f.out")"

# the GPU backend where there is no GPU: 77 with the reason
if ! command -v nvidia-smi >/dev/null 2>&1; then
	"$PX" proxy --advice "$T/adv.json" --candidate 1 >"$T/g.out" 2>&1
	rc=$?
	[ $rc = 77 ] && grep -qiE 'driver|GPU|CUDA' "$T/g.out" && ok "gpu backend without a GPU: 77" ||
		bad "gpu backend without a GPU: exit $rc $(cat "$T/g.out")"
fi
[ $nfail = 0 ]
