#!/bin/bash
# SPDX-License-Identifier: MIT
# gpu-campaign.sh: megatune's GPU side proven on one GPU in one run of under 9 minutes.
#
# From the repository root, on a machine with a GPU, a driver and PyTorch (no Debian -dev
# packages needed: the bundle is self-contained):
#
#   make gpu-bundle [MEGATRON_LM=<git repository of NVIDIA/Megatron-LM>]   (on the build machine)
#   bash scripts/gpu-campaign.sh                  (on the GPU machine, with build/gpu-bundle.tar.xz)
#
# Each phase runs under its own timeout, cut to what is left of DEADLINE; a phase that fails
# does not stop the others.  Results: $OUT/summary.txt (one line per phase and the figures
# that matter), $OUT/campaign.log (everything printed), $OUT/campaign.tgz (every output;
# scripts/gpu-fixtures.sh turns it into tests/fixtures/gpu/<date>-<gpu>/).  Without a GPU
# every GPU phase is reported "no-GPU" with the reason and the others run
# (tests/cli/gpu-campaign.sh); when none of the phases selected could run, the script says so
# and exits 77.
#
# Phases, in order (PHASES=a,b,... runs some; the names are in the summary):
#   env              the machine, the bundle, the libraries each part loads (any machine)
#   gpu-trace-check  tests/gpu/trace-check.sh: the tracer against CUDA events
#   gpu-probes       tests/gpu/probes.sh: every CUDA probe verified, GEMM against ref-gemm
#   calibrate        calibrate --quick: topology, GEMM bf16+fp8 with the dense and MoE expert
#                    shapes of qwen3-30b-a3b, attention fwd+bwd, offload, host
#   torch-ref        the probes' cases measured by PyTorch (scripts/gpu/torch_ref.py)
#   tinygpt-plain    a small GPT in plain PyTorch (scripts/gpu/tinygpt.py), untraced
#   tinygpt-cupti    the same under megatune profile
#   tinygpt-kineto   the same under torch.profiler
#   analyze-cupti    megatune analyze of each trace
#   analyze-kineto
#   compare-traces   kernels and busy time of the two traces (scripts/gpu/cmp_traces.py)
#   megatron-args    advise's 6 best for a 317M Llama on 1 GPU (micro-batch 4 to 16, recompute
#                    none, selective and full), through Megatron-LM's own argument checks
#                    with the local-implementation flags (any machine)
#   proxy-validate   validate --proxy of the top 2 on the GPU
#   megatron         tune --runs 3 of those 6 with Megatron-LM (pretrain_gpt.py, mock data,
#                    --transformer-impl local): one run at a time, the others re-predicted
#                    after each with the correction calibrate --from-validation fits; per run
#                    the uncorrected and corrected prediction, the measurement, both errors
#   megatron-traced  the predicted best once more, traced by megatune profile, and analysed
#   megatron-kineto  the best under Megatron-LM's own torch.profiler (steps 5-7), analysed
#                    --against its log: the model's terms beside the step, class by class
#   sustain          sustained vs burst GEMM with NVML clocks, GEMM beside a copy kernel
#   host-cost        a PyTorch eager dense and MoE layer: CPU time per op, with CUDA graphs
#
# Environment: BUNDLE (gpu-bundle.tar.xz, or a folder holding build/, or a build folder;
# default build/gpu-bundle.tar.xz, else build/), MLM (megatron-lm.tgz; default the bundle's),
# OUT (default ./campaign-out), DEADLINE (seconds for everything, default 500), PHASES.
# Exit status: 0 when no phase failed or timed out; 1 otherwise; 2 bad usage; 77 when no
# phase selected could run here (no GPU, no Megatron-LM), with the reason.
set -u
T0=$(date +%s)
DEADLINE=${DEADLINE:-500}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/campaign-out}
PHASES=${PHASES:-all}
case $DEADLINE in '' | *[!0-9]*) echo "gpu-campaign: DEADLINE must be whole seconds" >&2; exit 2 ;; esac
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/campaign.XXXXXX") || exit 2
R=$W/results
mkdir -p "$R"
trap 'rm -rf "$W"' EXIT
exec > >(tee -a "$R/campaign.log") 2>&1
SUM=$R/summary.txt
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 R W ROOT

left() { echo $((DEADLINE - ($(date +%s) - T0))); }
selected() { [ "$PHASES" = all ] || case ",$PHASES," in *",$1,"*) true ;; *) false ;; esac; }
fails=0 ran=0

# phase NAME SECONDS gpu|any FUNCTION: FUNCTION (exported) under a timeout cut to the time
# left (PHASE_LIMIT: that timeout, for the function's own budget); its output in $R/NAME.out;
# one line in the summary
phase() {
	local name=$1 want=$2 needs=$3 fn=$4 l t s rc st
	selected "$name" || return 0
	if [ "$needs" = gpu ] && [ "$HAVE_GPU" = 0 ]; then
		printf '%-16s %-9s %5s  %s\n' "$name" "no-GPU" "-" "$NO_GPU_WHY" >>"$SUM"
		return 0
	fi
	l=$(left)
	t=$((want < l - 10 ? want : l - 10))
	if [ "$t" -lt 15 ]; then
		printf '%-16s %-9s %5s  %s\n' "$name" "NO-TIME" "-" "rerun with PHASES=$name" >>"$SUM"
		return 0
	fi
	echo "=== $name (limit ${t}s, $(left)s left)"
	s=$(date +%s)
	ran=$((ran + 1))
	PHASE_LIMIT=$t timeout -k 5 "$t" bash -c "$fn" >"$R/$name.out" 2>&1
	rc=$?
	tail -n 30 "$R/$name.out"
	case $rc in
	0) st=ok ;;
	77) st=SKIP-77 ;;   # "not applicable" on a GPU machine: a failure to look at
	124 | 137) st=TIMEOUT ;;
	*) st="FAIL:$rc" ;;
	esac
	[ "$st" = ok ] || fails=$((fails + 1))
	printf '%-16s %-9s %4ss  %s\n' "$name" "$st" "$(($(date +%s) - s))" \
		"$(grep -v '^[[:space:]]*$' "$R/$name.out" | tail -n 1 | cut -c1-110)" >>"$SUM"
}

# --- the machine and the bundle ------------------------------------------------------------
HAVE_GPU=0
NO_GPU_WHY="nvidia-smi lists no GPU"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	HAVE_GPU=1
elif ! command -v nvidia-smi >/dev/null 2>&1; then
	NO_GPU_WHY="no nvidia-smi"
fi
B=${BUNDLE:-}
if [ -z "$B" ]; then
	B=$ROOT/build/gpu-bundle.tar.xz
	[ -f "$B" ] || B=$ROOT/build
fi
if [ -f "$B" ]; then
	mkdir -p "$W/bundle"
	tar -C "$W/bundle" -xJf "$B" 2>/dev/null ||
		python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$B" "$W/bundle" ||
		{ echo "gpu-campaign: cannot unpack $B"; exit 2; }
	B=$W/bundle/gpu-bundle
fi
if [ -x "$B/build/megatune" ]; then
	BUN=$(cd "$B/build" && pwd)
elif [ -x "$B/megatune" ]; then
	BUN=$(cd "$B" && pwd)
else
	echo "gpu-campaign: no megatune in $B (make gpu-bundle, or BUNDLE=<build folder>)"
	exit 2
fi
MT=$BUN/megatune
MLM=${MLM:-}
[ -z "$MLM" ] && [ -f "$B/megatron-lm.tgz" ] && MLM=$B/megatron-lm.tgz
[ -n "$MLM" ] && MLM=$(readlink -f "$MLM")
# Python: the one on PATH (PyTorch's); Megatron-LM's argument checks want numpy and
# packaging, which Debian's /usr/bin/python3 has where install-deps.sh --test ran
PY=python3
CHECK_PY=python3
if /usr/bin/python3 -c 'import numpy, packaging' 2>/dev/null; then CHECK_PY=/usr/bin/python3; fi
# the CUDA libraries of the GPU tests' helpers (ref-gemm, gpu-trace-check), which link
# them: the toolkit's and the pip wheels' folders (megatune's own parts find them alone)
SP=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null || true)
LDP=""
for d in /usr/local/cuda/lib64 "$SP"/nvidia/cu13/lib "$SP"/nvidia/cudnn/lib "$SP"/nvidia/nccl/lib \
	"$SP"/nvidia/cuda_runtime/lib "$SP"/nvidia/cublas/lib; do
	[ -d "$d" ] && LDP=$LDP:$d
done
HELPER_LD=${LDP#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
MODEL=$ROOT/tests/fixtures/models/campaign-llama-350m.json
export BUN MT MLM PY CHECK_PY HELPER_LD MODEL HAVE_GPU

{
	echo "megatune GPU campaign, $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname)"
	if [ "$HAVE_GPU" = 1 ]; then
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit \
			--format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
	else
		echo "gpu: none ($NO_GPU_WHY)"
	fi
	head -2 "$B/MANIFEST" 2>/dev/null | sed 's/^/bundle: /'
	echo "megatron-lm: ${MLM:-none}"
	echo "deadline ${DEADLINE}s, phases $PHASES"
	echo
	printf '%-16s %-9s %5s  %s\n' phase status time "last line"
} >"$SUM"

# --- phases ----------------------------------------------------------------------------------
p_env() {
	echo "bundle $BUN"; echo "helpers' LD_LIBRARY_PATH=$HELPER_LD"
	command -v nvidia-smi >/dev/null && nvidia-smi
	$PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
"cudnn", torch.backends.cudnn.version(), "nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else "-",
"gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")' 2>&1 || echo "no PyTorch"
	for f in "$BUN"/megatune "$BUN"/megatune-probe "$BUN"/*.so "$BUN"/tests/*; do
		[ -f "$f" ] && { echo "== ldd $f"; LD_LIBRARY_PATH=$HELPER_LD ldd "$f"; }
	done
	echo "== megatune probe topology (and the libraries the CUDA library loaded)"
	"$MT" probe topology; rc=$?
	echo "megatune probe topology: exit $rc"
	[ "$HAVE_GPU" = 0 ] || [ $rc -eq 0 ]
}
t_trace() { cd "$ROOT" && LD_LIBRARY_PATH=$HELPER_LD BUILD=$BUN sh tests/gpu/trace-check.sh; }
t_probes() {
	local rc
	cd "$ROOT" && LD_LIBRARY_PATH=$HELPER_LD BUILD=$BUN MEGATUNE=$MT sh tests/gpu/probes.sh
	rc=$?
	# an FP8 GEMM that fails: cuBLASLt's own log of it (CUBLASLT_LOG_LEVEL=5: every call
	# with its descriptors, and the reason where the library gives one)
	if grep -q 'FAIL: gemm fp8' "$R/gpu-probes.out" 2>/dev/null; then
		CUBLASLT_LOG_LEVEL=5 CUBLASLT_LOG_FILE="$R/fp8-cublaslt.log" timeout 60 \
			"$MT" probe gemm --backend cuda --dtype fp8 --smoke >/dev/null 2>&1
		echo "fp8 GEMM failed: cuBLASLt's log in fp8-cublaslt.log"
	fi
	return $rc
}
p_calib() {
	"$MT" calibrate --quick --probes topology,gemm,attention,offload,host --dtype bf16,fp8 \
		--model qwen3-30b-a3b -o "$R/calibrated.json"
}
p_torchref() { $PY "$ROOT/scripts/gpu/torch_ref.py" "$R/calibrated.json.results.jsonl" "$R/torch-ref.json"; }
g_plain() { $PY "$ROOT/scripts/gpu/tinygpt.py"; }
g_cupti() { "$MT" profile -o "$R/trace-cupti" -- $PY "$ROOT/scripts/gpu/tinygpt.py"; }
g_kineto() { mkdir -p "$R/trace-kineto" && $PY "$ROOT/scripts/gpu/tinygpt.py" "$R/trace-kineto/tinygpt.pt.trace.json"; }
a_cupti() { "$MT" analyze --step-range 'step#' --json "$R/analysis-cupti.json" "$R"/trace-cupti/megatune-trace.*.jsonl; }
a_kineto() { "$MT" analyze --window steps --json "$R/analysis-kineto.json" "$R/trace-kineto/tinygpt.pt.trace.json"; }
c_traces() {
	$PY "$ROOT/scripts/gpu/cmp_traces.py" "$(ls "$R"/trace-cupti/megatune-trace.*.jsonl | head -1)" \
		"$R/trace-kineto/tinygpt.pt.trace.json" || return 1
	p=$(sed -n 's/.*ms\/step over steps 10-15: \([0-9.]*\).*/\1/p' "$R/tinygpt-plain.out")
	c=$(sed -n 's/.*ms\/step over steps 10-15: \([0-9.]*\).*/\1/p' "$R/tinygpt-cupti.out")
	[ -n "$p" ] && [ -n "$c" ] && awk -v p="$p" -v c="$c" \
		'BEGIN { printf "tracer overhead: %.3f ms/step traced, %.3f untraced (%+.2f%%)\n", c, p, 100 * (c - p) / p }'
}
# the advice every Megatron-LM phase uses: a 317M Llama on one GPU, its 6 best (they differ
# in micro-batch and in recomputation: none, selective, full), on the calibrated profile
# when this run made one
mlm_advice() {
	local P=$R/calibrated.json
	[ -s "$P" ] || P=dgx-h100
	# timed as the runs' layers: Megatron-LM's own with every fusion of MLM_LOCAL off (unfused
	# attention, nothing that needs Transformer Engine: docs/MODEL.md 4.11); full-iteration
	# graphs left out, as no run has measured them on these layers
	"$MT" advise --model "$MODEL" --cluster "$P" --gpus 1 --seq 1024 --gbs 16 --dist-opt off \
		$MLM_ADVISE_LOCAL --full-iteration-graphs off \
		--top 6 --no-fold --json "$R/mlm-advice.json"
}
# 0 when PyTorch sees a CUDA device; else the reason, and 77 (a phase that needs one)
need_torch_gpu() {
	$PY -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2>/dev/null && return 0
	echo "skip: PyTorch ($PY) sees no CUDA device: $($PY -c 'import torch
print("torch", torch.__version__, "built for CUDA", torch.version.cuda)' 2>&1 | tail -n 1)"
	return 77
}
MLM_COMMON="--mock-data --eval-iters 0 --eval-interval 1000 --log-interval 1 --log-throughput --lr 1e-4"
# neither Transformer Engine nor Apex is there: Megatron-LM's own layers, and advise's
# options for the same layers and fusions (the advice's flags repeat them, which argparse
# takes; the persistent kernel --no-persist-layer-norm turns off is Apex's LayerNorm,
# Megatron-LM d98e8a6 megatron/core/fusions/fused_layer_norm.py:16, not the campaign's RMSNorm)
MLM_LOCAL="--transformer-impl local --no-persist-layer-norm --no-gradient-accumulation-fusion \
--no-masked-softmax-fusion --no-rope-fusion --no-bias-swiglu-fusion --no-bias-dropout-fusion"
MLM_ADVISE_LOCAL="--transformer-impl local --grad-accum-fusion off \
--fusions-off masked_softmax,rope,bias_activation,bias_dropout"
MLM_TEMPLATE="cd \"\$MLM_DIR\" && env {env} \${MLM_WRAP:-} $PY -m torch.distributed.run --standalone \
--nproc-per-node {gpus} pretrain_gpt.py {megatron_args} $MLM_COMMON $MLM_LOCAL --train-iters {iters}"
export MLM_COMMON MLM_LOCAL MLM_ADVISE_LOCAL MLM_TEMPLATE
export -f mlm_advice need_torch_gpu
p_mlm_args() {
	mlm_advice || return 1
	MLM_DIR=/nonexistent "$MT" validate --advice "$R/mlm-advice.json" --top 6 --dry-run \
		--launch "$MLM_TEMPLATE" -o "$R/unused.json" >"$R/mlm-commands.txt" || return 1
	# "# NAME" then the command: into check_args.py's "LABEL :: WORLD_SIZE=1 FLAGS"
	awk '/^# /{name=$2; next} name { sub(/.*pretrain_gpt\.py /, ""); print name " :: WORLD_SIZE=1 " $0; name="" }' \
		"$R/mlm-commands.txt" >"$R/mlm-flagsets.txt"
	[ "$(wc -l <"$R/mlm-flagsets.txt")" -eq 6 ] || { echo "not 6 flag sets"; cat "$R/mlm-commands.txt"; return 1; }
	$CHECK_PY "$ROOT/tests/megatron/check_args.py" --world-size 1 "$R/mlm-flagsets.txt"
}
p_proxy() {
	[ -s "$R/mlm-advice.json" ] || mlm_advice || return 1
	"$MT" validate --advice "$R/mlm-advice.json" --top 2 --proxy --backend gpu --mpirun '' \
		--iters 6 --warmup 2 --timeout 60 --dir "$R/proxy-logs" -o "$R/validation-proxy.json"
}
# Megatron-LM unpacked once into $W/mlm, its dataset helpers built ahead
mlm_unpack() {
	export MLM_DIR=$W/mlm
	[ -f "$MLM_DIR/pretrain_gpt.py" ] && return 0
	mkdir -p "$MLM_DIR" && tar -C "$MLM_DIR" -xzf "$MLM" || return 1
	# the dataset helpers Megatron-LM compiles at start-up with make and python3-config
	(cd "$MLM_DIR/megatron/core/datasets" &&
		g++ -O3 -shared -std=c++17 -fPIC $($PY -m pybind11 --includes) helpers.cpp \
			-o "helpers_cpp$($PY -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')") ||
		echo "warning: helpers_cpp not built ahead"
	if ! command -v make >/dev/null; then   # built above: its make has nothing to do
		mkdir -p "$W/bin" && printf '#!/bin/sh\nexit 0\n' >"$W/bin/make" && chmod +x "$W/bin/make"
		export PATH=$W/bin:$PATH
	fi
}
# The 6 candidates tuned: three Megatron-LM runs, one at a time, each the fastest by the
# prediction corrected from the runs before it (tune --runs 3, docs/VALIDATE.md section 5);
# tune's own budget ends before the phase's timeout, so that it writes what it measured
p_megatron() {
	local budget rc line
	need_torch_gpu || return
	[ -s "$R/mlm-advice.json" ] || mlm_advice || return 1
	mlm_unpack || return 1
	budget=$(awk -v l="${PHASE_LIMIT:-210}" 'BEGIN { b = (l - 15) / 60; printf "%.2f", b < 0.1 ? 0.1 : b }')
	"$MT" tune --advice "$R/mlm-advice.json" --runs 3 --launch "$MLM_TEMPLATE" --iters 12 \
		--warmup 4 --timeout 120 --budget "$budget" --dir "$R/megatron-logs" \
		-o "$R/validation-megatron.json"
	rc=$?
	line=$(grep '^best of the runs: ' "$R/megatron.out" | tail -n 1)
	echo "tune: ${line:-no run}; exit $rc"
	return $rc
}
# the predicted best once more under megatune profile, and its trace analysed
p_mlm_traced() {
	need_torch_gpu || return
	[ -s "$R/mlm-advice.json" ] || mlm_advice || return 1
	mlm_unpack || return 1
	MLM_WRAP="$MT profile -o $R/trace-megatron --" "$MT" validate --advice "$R/mlm-advice.json" \
		--top 1 --launch "$MLM_TEMPLATE" --iters 8 --warmup 3 --timeout 120 \
		--dir "$R/megatron-traced-logs" -o "$R/validation-megatron-traced.json" || return 1
	"$MT" analyze --json "$R/analysis-megatron.json" "$R"/trace-megatron/megatune-trace.*.jsonl | tail -n 25
}
# The best candidate once more under Megatron-LM's own torch.profiler (steps 5-7, ProfilerStep
# ranges; the trace lands in <tensorboard-dir>/../torch_profile/rank-0.json.gz), then set
# beside the model class by class with the job read back from its log (docs/MODEL.md 11.2):
# the in-step GEMM, attention and element-wise rates
p_mlm_kineto() {
	local log
	need_torch_gpu || return
	[ -s "$R/mlm-advice.json" ] || mlm_advice || return 1
	mlm_unpack || return 1
	mkdir -p "$R/trace-megatron-kineto/tb"
	"$MT" validate --advice "$R/mlm-advice.json" --top 1 --launch "$MLM_TEMPLATE --profile \
--use-pytorch-profiler --profile-step-start 5 --profile-step-end 8 \
--tensorboard-dir $R/trace-megatron-kineto/tb" --iters 10 --warmup 4 --timeout 150 \
		--dir "$R/megatron-kineto-logs" -o "$R/validation-megatron-kineto.json" || return 1
	log=$(ls "$R"/megatron-kineto-logs/*.log | head -1)
	"$MT" analyze --window steps --against "$log" --cluster dgx-h100 \
		--json "$R/analysis-megatron-kineto.json" "$R"/trace-megatron-kineto/torch_profile/rank-0.json.gz
}
p_sustain() { $PY "$ROOT/scripts/gpu/sustain.py" "$R/sustain.json" --seconds 30; }
p_host() { $PY "$ROOT/scripts/gpu/host_cost.py" "$R/host-cost.json"; }
export -f p_env t_trace t_probes p_calib p_torchref g_plain g_cupti g_kineto a_cupti a_kineto \
	c_traces p_mlm_args p_proxy mlm_unpack p_megatron p_mlm_traced p_mlm_kineto p_sustain p_host

phase env 60 any p_env
phase gpu-trace-check 60 gpu t_trace
phase gpu-probes 150 gpu t_probes
phase calibrate 150 gpu p_calib
phase torch-ref 90 gpu p_torchref
phase tinygpt-plain 60 gpu g_plain
phase tinygpt-cupti 60 gpu g_cupti
phase tinygpt-kineto 60 gpu g_kineto
phase analyze-cupti 30 gpu a_cupti
phase analyze-kineto 30 gpu a_kineto
phase compare-traces 30 gpu c_traces
phase megatron-args 60 any p_mlm_args
phase proxy-validate 90 gpu p_proxy
if [ -n "$MLM" ] && [ -f "$MLM" ] || [ "$HAVE_GPU" = 0 ] || ! selected megatron; then
	phase megatron 210 gpu p_megatron
	phase megatron-traced 80 gpu p_mlm_traced
	phase megatron-kineto 100 gpu p_mlm_kineto
else
	for p in megatron megatron-traced megatron-kineto; do
		printf '%-16s %-9s %5s  %s\n' $p no-input - \
			"no Megatron-LM: make gpu-bundle MEGATRON_LM=<repository>, or MLM=<megatron-lm.tgz>" >>"$SUM"
	done
fi
phase sustain 75 gpu p_sustain
phase host-cost 90 gpu p_host

# --- what comes back -------------------------------------------------------------------------
{
	echo
	echo "highlights:"
	for f in "$R"/*.out; do
		grep -E 'probe .* ref-gemm|records checked|within 3%|^burst |tracer overhead|busy; megatune|ms/step over|wall/GPU|^moe: |^c[0-9]+-tp|[0-9]+ ok, [0-9]+ failed|CUPTI: |^library |^  run [0-9]+: predicted|^best of the runs|^correction after|^ranking by the step' \
			"$f" 2>/dev/null | cut -c1-150 | sed "s|^|$(basename "$f" .out): |"
	done | head -n 50
	echo
	later=$(awk '$2 == "NO-TIME" { printf "%s%s", n++ ? "," : "", $1 }' "$SUM")
	[ -n "$later" ] && echo "not reached in time; run them next: PHASES=$later bash scripts/gpu-campaign.sh"
	echo "total $(($(date +%s) - T0)) s; $fails phase(s) failed or timed out"
} >>"$SUM"
echo "=== summary"
cat "$SUM"
cp "$SUM" "$OUT/summary.txt"
tar -C "$W" -czf "$OUT/campaign.tgz" results
if [ "$(stat -c %s "$OUT/campaign.tgz")" -gt 15000000 ]; then # what comes back is capped: raw traces go
	tar -C "$W" -czf "$OUT/campaign.tgz" --exclude='results/trace-*' results
fi
cp "$R/campaign.log" "$OUT/campaign.log"
ls -la "$OUT"
if [ "$ran" -eq 0 ]; then
	echo "gpu-campaign: none of the phases selected ($PHASES) could run here:"
	awk '$2 == "no-GPU" || $2 == "no-input" || $2 == "NO-TIME" { n = $1 " " $2; $1 = $2 = $3 = "";
		sub(/^ +/, ""); print "  " n ": " $0 }' "$SUM"
	exit 77
fi
[ "$fails" -eq 0 ]
