#!/bin/sh
# SPDX-License-Identifier: MIT
# MXFP8's parameter all-gather (docs/MODEL.md 4.9): under the distributed
# optimizer Megatron-Core gathers MXFP8 weights in BF16 through the gradient
# buffer and every rank casts them after, and runs it only with
# --reuse-grad-buf-for-mxfp8-param-ag.  advise prints the flag (Megatron-LM)
# and the keys (verl) wherever it prints --fp8-param-gather for MXFP8, and
# check reads the printed job back to the same step; a Megatron-LM job
# without the flag, or with it and no --fp8-param-gather, cannot be timed as
# written and check says why and what to change; a Bridge override turning the reuse off is undone by the
# precision recipe, and read so.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
TEST=mxfp8ag
. tests/lib/clitest.sh
JOB="--model llama3-8b --cluster dgx-b200 --seq 8192 --gbs 128 --precision fp8 --tp 1 --pp 1"

# 1. printed for MXFP8 only
# shellcheck disable=SC2086
"$M" advise $JOB --gpus 8 --fp8-recipe mxfp8 --top 1 --format megatron >"$T/mx.flags" 2>"$T/err" ||
	no "advise mxfp8 exits $?: $(cat "$T/err")"
# shellcheck disable=SC2086
"$M" advise $JOB --gpus 8 --fp8-recipe tensorwise --top 1 --format megatron >"$T/cs.flags" 2>"$T/err" ||
	no "advise tensorwise exits $?: $(cat "$T/err")"
if grep -q -- "--fp8-param-gather" "$T/mx.flags" && grep -q -- "--reuse-grad-buf-for-mxfp8-param-ag" "$T/mx.flags" &&
	! grep -q -- "--reuse-grad-buf-for-mxfp8-param-ag" "$T/cs.flags"
then ok "advise --format megatron: the BF16 gather of MXFP8 weights printed beside --fp8-param-gather, not for tensorwise"
else no "--reuse-grad-buf-for-mxfp8-param-ag: mxfp8 $(grep -c reuse-grad "$T/mx.flags"), tensorwise $(grep -c reuse-grad "$T/cs.flags")"; fi

# check's as-is step of a job file, seconds ("" when check fails)
step() { # file, [options]
	f=$1; shift
	"$M" check "$f" --cluster dgx-b200 "$@" --json "$T/c.json" >"$T/c.out" 2>"$T/err" ||
		{ echo "check $f exits $?: $(cat "$T/err")" >&2; return; }
	"$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["as_is"]["candidates"][0]["time"]["step_s"])' "$T/c.json"
}
script() { # flags file, GPUs -> launch script on stdout
	echo "#!/bin/bash"
	echo "torchrun --nproc_per_node $2 pretrain_gpt.py \\"
	cat "$1"
}
# advise's own step of its top candidate
"$M" advise $JOB --gpus 8 --fp8-recipe mxfp8 --top 1 --json "$T/a.json" >/dev/null 2>"$T/err" ||
	no "advise --json exits $?: $(cat "$T/err")"
want=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["candidates"][0]["time"]["step_s"])' "$T/a.json")

# 2. the printed script reads back to advise's step; without the flag, or with
# it and no --fp8-param-gather, it is not timed as written: check names the
# flag, and with the flag added the job runs
script "$T/mx.flags" 8 >"$T/with.sh"
got=$(step "$T/with.sh")
if [ -n "$got" ] && "$PY" -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(abs(a - b) > 1e-6 * b)' "$got" "$want"
then ok "check of the printed script: $got s, advise's $want s"
else no "check of the printed script: '$got' s against advise's $want s"; fi
sed 's/--reuse-grad-buf-for-mxfp8-param-ag//' "$T/with.sh" >"$T/without.sh"
"$M" check "$T/without.sh" --cluster dgx-b200 >"$T/o" 2>"$T/err"; rc=$?
if [ $rc -eq 0 ] && grep -q -- "cannot time the job as written: .*needs --reuse-grad-buf-for-mxfp8-param-ag" "$T/o" &&
	grep -q "replace_raw_data for MXFP8Tensor" "$T/o" && grep -q -- "+ --reuse-grad-buf-for-mxfp8-param-ag" "$T/o"
then ok "check without the flag: not timed as written, Transformer Engine's refusal named, the flag offered"
else no "check without the flag: exit $rc: $(head -12 "$T/o") $(cat "$T/err")"; fi
sed 's/--fp8-param-gather//' "$T/with.sh" >"$T/nogather.sh"
"$M" check "$T/nogather.sh" --cluster dgx-b200 >"$T/o" 2>"$T/err"
if grep -q -- "cannot time the job as written: --reuse-grad-buf-for-mxfp8-param-ag without --fp8-param-gather" "$T/o" &&
	grep -q "distributed_data_parallel_config.py:259-260" "$T/o"
then ok "check of the flag without --fp8-param-gather: not timed, Megatron-Core's assert named"
else no "check of the flag without --fp8-param-gather: $(head -8 "$T/o") $(cat "$T/err")"; fi

# 3. one data-parallel rank, two of context parallelism: the optimizer still
# gathers over DP x CP; the flag comes with --fp8-param-gather, and check
# agrees with advise
# shellcheck disable=SC2086
"$M" advise $JOB --gpus 2 --cp 2 --fp8-recipe mxfp8 --top 1 --format megatron >"$T/cp.flags" 2>"$T/err" ||
	no "advise CP 2 exits $?: $(cat "$T/err")"
# shellcheck disable=SC2086
"$M" advise $JOB --gpus 2 --cp 2 --fp8-recipe mxfp8 --top 1 --json "$T/cp.json" >/dev/null 2>"$T/err" ||
	no "advise CP 2 --json exits $?: $(cat "$T/err")"
script "$T/cp.flags" 2 >"$T/cp.sh"
got=$(step "$T/cp.sh")
want=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["candidates"][0]["time"]["step_s"])' "$T/cp.json")
if grep -q -- "--fp8-param-gather" "$T/cp.flags" && grep -q -- "--reuse-grad-buf-for-mxfp8-param-ag" "$T/cp.flags" &&
	[ -n "$got" ] && "$PY" -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(abs(a - b) > 1e-6 * b)' "$got" "$want"
then ok "DP 1 CP 2: both flags printed, check reads advise's $want s"
else no "DP 1 CP 2: flags $(grep -c -e fp8-param-gather -e reuse-grad "$T/cp.flags"), check '$got' s, advise $want s"; fi

# 4. Bridge: the recipe sets the reuse and copies it onto ddp, so an
# override turning it off changes nothing, and says so
# shellcheck disable=SC2086
"$M" advise $JOB --gpus 8 --fp8-recipe mxfp8 --top 1 --format bridge >"$T/b.raw" 2>"$T/err" ||
	no "advise --format bridge exits $?: $(cat "$T/err")"
grep -v '^#' "$T/b.raw" | sed 's/ *\\$//; s/^ *//' >"$T/b.over"
{ cat "$T/b.over"; echo "ddp.reuse_grad_buf_for_mxfp8_param_ag=false"; } >"$T/b-off.over"
bon=$(step "$T/b.over" --model llama3-8b --gpus 8)
boff=$(step "$T/b-off.over" --model llama3-8b --gpus 8)
if [ -n "$bon" ] && [ "$bon" = "$boff" ] && grep -q "undone by the precision recipe" "$T/c.out"
then ok "check of Bridge overrides: ddp.reuse_grad_buf_for_mxfp8_param_ag=false read as the recipe sets it ($bon s), said"
else no "check of Bridge overrides: '$bon' s, with the override '$boff' s; $(grep -i reuse "$T/c.out")"; fi

# 5. verl: the reuse in the DDP and the optimizer configs
# shellcheck disable=SC2086
"$M" advise $JOB --gpus 8 --fp8-recipe mxfp8 --top 1 --format verl >"$T/v.out" 2>"$T/err" ||
	no "advise --format verl exits $?: $(cat "$T/err")"
if grep -q "override_ddp_config.reuse_grad_buf_for_mxfp8_param_ag=true" "$T/v.out" &&
	grep -q "override_optimizer_config.reuse_grad_buf_for_mxfp8_param_ag=true" "$T/v.out"
then ok "advise --format verl: the reuse in the DDP and the optimizer configs"
else no "advise --format verl: $(grep -c reuse_grad "$T/v.out") reuse keys"; fi
[ $fail -eq 0 ] || exit 1
