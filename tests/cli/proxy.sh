#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune-probe proxy on the CPU backends (real work, no GPU): `advise` for a
# tiny Llama-style model on 4 GPUs, then the proxy of candidates 1-3 under
# mpirun -np 4.  Checks: the iteration lines have Megatron-LM's format (the
# regex of training_log(), with throughput) and the memory report line that of
# report_memory(); the times are positive; the layer's recomputation follows
# the candidate (none, selective, full) and the steps agree; the composed step is at least
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

for k in 1 2 3; do
	if ! mpirun -np 4 "$PX" proxy --advice "$T/adv.json" --candidate $k --backend cpu \
		--iters 3 --warmup 1 >"$T/c$k.out" 2>"$T/c$k.err"; then
		bad "candidate $k: exit $? $(tail -5 "$T/c$k.err")"
		continue
	fi
	n=$(grep -cE "$ITER" "$T/c$k.out")
	[ "$n" = 3 ] && ok "candidate $k: 3 Megatron-LM iteration lines" ||
		bad "candidate $k: $n well-formed iteration lines of 3: $(head -3 "$T/c$k.out")"
	grep -qE "$MEM" "$T/c$k.out" && grep -q '(after 3 iterations)' "$T/c$k.out" &&
		ok "candidate $k: memory report lines" || bad "candidate $k: no memory report line"
	[ "$(grep -c . "$T/c$k.out")" = 5 ] && ok "candidate $k: nothing else on stdout" ||
		bad "candidate $k: other lines on stdout: $(cat "$T/c$k.out")"
	if /usr/bin/python3 - "$T/c$k.out" "$T/c$k.err" >"$T/c$k.step" <<'PY'
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
		ok "candidate $k: positive times, step >= 4 layers ($(cut -d' ' -f1 "$T/c$k.step") s)"
	else
		bad "candidate $k: times: $(cat "$T/c$k.step") $(tail -3 "$T/c$k.err")"
		rm -f "$T/c$k.step"
	fi
done
# the recomputation of each candidate in its composed layer (docs/MODEL.md 9):
# the layer is the attention block plus the MLP, forward and backward, plus a
# forward (full), the attention's forward (selective) or nothing (none); the
# three do the same per-GPU work, so their steps agree within the noise of a
# shared host (a factor of 3)
if [ -s "$T/c1.step" ] && [ -s "$T/c2.step" ] && [ -s "$T/c3.step" ]; then
	grep -q '^1 .* none ' "$T/adv.out" && grep -q '^2 .* selective ' "$T/adv.out" &&
	grep -q '^3 .* full ' "$T/adv.out" &&
	/usr/bin/python3 - "$T/c1.step" "$T/c2.step" "$T/c3.step" <<'PY' &&
import sys
(s1, r1), (s2, r2), (s3, r3) = [map(float, open(f).read().split()) for f in sys.argv[1:]]
assert abs(r1 - 1) < 1e-3 and 1 - 1e-3 <= r2 < r3 and r3 > 1.1, (r1, r2, r3)
assert max(s1, s2, s3) < 3 * min(s1, s2, s3), (s1, s2, s3)
PY
		ok "recomputation composed: none < selective < full layer; steps agree" ||
		bad "recomputation: $(cat "$T/c1.step") / $(cat "$T/c2.step") / $(cat "$T/c3.step")"
fi

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
if timeout 300 mpirun -np 4 "$PX" proxy --advice "$T/adv2.json" --candidate 1 --backend cpu \
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
check2 "candidate 0" "--candidate: expected an integer >= 1" --advice "$T/adv.json" --candidate 0
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
