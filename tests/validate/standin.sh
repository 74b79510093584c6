#!/bin/sh
# SPDX-License-Identifier: MIT
# A launcher stand-in for `megatune validate` and `megatune tune` tests: it
# plays a Megatron-LM run of the candidate it is given, replaying the real
# excerpts of tests/fixtures/megatron-logs/ for its failures.
#
# Usage (as a --launch template):
#   sh tests/validate/standin.sh {name} {iters} {dir} {megatron_args}
#
# Step time, a stated function of the configuration read from the Megatron-LM
# arguments (TP, CP, micro-batch, full recompute, offloaded layers):
#   step_s = 3.0 * (1 + 0.25 (TP - 1)) * (1 + 0.03 (CP - 1))
#                * (1 + 0.10 [recompute]) * (1 + 0.01 offload) * (1 + 0.02 / MBS)
# iteration 1 takes 1.6 times that, later ones vary by +-1%.  It prints that
# time; it sleeps it divided by STANDIN_SPEEDUP (default 100).
#
# What happens is chosen by the candidate's predicted rank (the cN of its
# name) in STANDIN_PLAN, e.g. "c2=oom c3=nccl_timeout c4=nan c5=hang c6=crash
# c7=noiter"; a rank not listed runs to the end:
#   oom           two iterations, then the V100 CUDA OOM traceback, exit 1
#   nccl_timeout  three iterations, then the NCCL watchdog abort, SIGABRT
#   nan           the Falcon-40B lines where `lm loss` vanishes
#   hang          three iterations, then nothing: ignores SIGTERM, and a
#                 child of its process group sleeps too
#   crash         two iterations, then SIGSEGV
#   noiter        the setup timers only, exit 0
# Each run appends "NAME" to DIR/standin-runs and writes its process group to
# DIR/NAME.pgid.
set -u
name=$1 iters=$2 dir=$3
shift 3
here=$(dirname "$0")
logs=$here/../fixtures/megatron-logs
tp=1 cp=1 mbs=1 rc=0 off=0
while [ $# -gt 0 ]; do
	case $1 in
	--tensor-model-parallel-size) tp=$2; shift ;;
	--context-parallel-size) cp=$2; shift ;;
	--micro-batch-size) mbs=$2; shift ;;
	--recompute-granularity) rc=1; shift ;;
	--cpu-offloading-num-layers) off=$2; shift ;;
	esac
	shift
done
echo "$name" >>"$dir/standin-runs"
ps -o pgid= -p $$ | tr -d ' ' >"$dir/$name.pgid"
step=$(awk -v tp="$tp" -v cp="$cp" -v mbs="$mbs" -v rc="$rc" -v off="$off" 'BEGIN {
	printf "%.6f", 3.0 * (1 + 0.25 * (tp - 1)) * (1 + 0.03 * (cp - 1)) * (1 + 0.10 * rc) \
		* (1 + 0.01 * off) * (1 + 0.02 / mbs) }')
speed=${STANDIN_SPEEDUP:-100}
rank=${name%%-*}
what=ok
for item in ${STANDIN_PLAN:-}; do
	[ "${item%%=*}" = "$rank" ] && what=${item#*=}
done

body() { # the excerpt without its two header lines
	sed '1,2d' "$logs/$1"
}

iteration() { # N
	ms=$(awk -v s="$step" -v i="$1" 'BEGIN {
		f = (i == 1) ? 1.6 : 1 + 0.01 * ((i * 7) % 5 - 2) / 2; printf "%.1f", s * f * 1000 }')
	sleep "$(awk -v ms="$ms" -v sp="$speed" 'BEGIN { printf "%.3f", ms / 1000 / sp }')"
	printf ' [2025-08-28 16:31:%02d] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %s | learning rate: 4.915152E-07 | global batch size:     8 | lm loss: 1.160178E+01 | loss scale: 1.0 | grad norm: 5.645 | number of skipped iterations:   0 | number of nan iterations:   0 |\n' \
		$(($1 % 60)) "$1" "$iters" $(($1 * 8)) "$ms"
	if [ "$1" -eq 1 ]; then
		grep '^\[Rank ' "$logs/mlm_core_2025_fp8_memreport_mb_4ranks_unordered.log"
	fi
}

echo "[before the start of training step] datetime: 2025-08-28 16:31:40"
case $what in
ok)
	i=1
	while [ $i -le "$iters" ]; do iteration $i; i=$((i + 1)); done
	exit 0 ;;
oom)
	iteration 1; iteration 2
	body mlm_oom_v100_gpt_774m_first_iteration_torchrun.log | sed -n '/^Traceback/,$p' >&2
	exit 1 ;;
nccl_timeout)
	iteration 1; iteration 2; iteration 3
	body mlm_nccl_watchdog_timeout_reduce_scatter_distbackenderror.log >&2
	kill -ABRT $$ ;;
nan)
	body megatron_llm_falcon40b_nan_loss_lm_loss_field_missing.log
	exit 0 ;;
hang)
	iteration 1; iteration 2; iteration 3
	trap '' TERM
	sleep 600 &
	sleep 600
	exit 0 ;;
crash)
	iteration 1; iteration 2
	kill -SEGV $$ ;;
noiter)
	body mlm_2023_timers_minmax_block_ul2.log
	exit 0 ;;
esac
