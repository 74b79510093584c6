#!/bin/sh
# SPDX-License-Identifier: MIT
# MXFP8's parameter all-gather (docs/MODEL.md 4.9): as Bridge's MXFP8 recipe
# runs it, the weights travel in BF16 through the gradient buffer and every
# rank casts them after; advise prints --reuse-grad-buf-for-mxfp8-param-ag for
# Megatron-LM; check reads the flag, and a job without it (Megatron-LM's
# default) or a Bridge job that turns it off is timed with the weights
# gathered in MXFP8 and no cast: a shorter step.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
TEST=mxfp8ag
. tests/lib/clitest.sh
JOB="--model llama3-8b --cluster dgx-b200 --gpus 8 --seq 8192 --gbs 128 --precision fp8 --tp 1 --pp 1"

# 1. printed for MXFP8 only
# shellcheck disable=SC2086
"$M" advise $JOB --fp8-recipe mxfp8 --top 1 --format megatron >"$T/mx.flags" 2>"$T/err" ||
	no "advise mxfp8 exits $?: $(cat "$T/err")"
# shellcheck disable=SC2086
"$M" advise $JOB --fp8-recipe tensorwise --top 1 --format megatron >"$T/cs.flags" 2>"$T/err" ||
	no "advise tensorwise exits $?: $(cat "$T/err")"
if grep -q -- "--reuse-grad-buf-for-mxfp8-param-ag" "$T/mx.flags" &&
	! grep -q -- "--reuse-grad-buf-for-mxfp8-param-ag" "$T/cs.flags"
then ok "advise --format megatron: the BF16 gather of MXFP8 weights printed, not for tensorwise"
else no "--reuse-grad-buf-for-mxfp8-param-ag: mxfp8 $(grep -c reuse-grad "$T/mx.flags"), tensorwise $(grep -c reuse-grad "$T/cs.flags")"; fi

# 2. check of the printed script, and of the same without the flag
step() { # file, [options]: check's as-is step, seconds
	f=$1; shift
	"$M" check "$f" --cluster dgx-b200 "$@" --json "$T/c.json" >/dev/null 2>"$T/err" ||
		{ echo "check $f exits $?: $(cat "$T/err")" >&2; echo 0; return; }
	"$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["as_is"]["candidates"][0]["time"]["step_s"])' "$T/c.json"
}
{ echo "#!/bin/bash"; echo "torchrun --nproc_per_node 8 pretrain_gpt.py \\"; cat "$T/mx.flags"; } >"$T/with.sh"
sed 's/--reuse-grad-buf-for-mxfp8-param-ag//' "$T/with.sh" >"$T/without.sh"
with=$(step "$T/with.sh")
without=$(step "$T/without.sh")
if "$PY" -c 'import sys; a, b = map(float, sys.argv[1:]); sys.exit(not (a > 0 and b > 0 and a > b))' "$with" "$without"
then ok "check: the BF16 gather and its cast cost time ($with s with the flag, $without s without)"
else no "check: with the flag $with s, without $without s"; fi

# 3. Bridge: the recipe sets it; turning it off in the DDP config saves what
# dropping the flag saves Megatron-LM
# shellcheck disable=SC2086
"$M" advise $JOB --fp8-recipe mxfp8 --top 1 --format bridge 2>"$T/err" | grep -v '^#' |
	sed 's/ *\\$//; s/^ *//' >"$T/b.over" || no "advise --format bridge exits: $(cat "$T/err")"
cp "$T/b.over" "$T/b-off.over"
echo "ddp.reuse_grad_buf_for_mxfp8_param_ag=false" >>"$T/b-off.over"
bon=$(step "$T/b.over" --model llama3-8b --gpus 8)
boff=$(step "$T/b-off.over" --model llama3-8b --gpus 8)
if "$PY" -c 'import sys; a, b, c, d = map(float, sys.argv[1:]); sys.exit(not (a > b > 0 and abs((a - b) - (c - d)) < 0.02 * (c - d)))' "$bon" "$boff" "$with" "$without"
then ok "check of Bridge overrides: the recipe's BF16 gather ($bon s), off in ddp ($boff s), the same cost as Megatron-LM's"
else no "check of Bridge overrides: $bon s and $boff s against Megatron-LM's $with s and $without s"; fi
[ $fail -eq 0 ] || exit 1
