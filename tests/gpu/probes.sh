#!/bin/sh
# SPDX-License-Identifier: MIT
# On a machine with a GPU: every probe of the CUDA backend at --smoke sizes
# (gemm, attention, offload, host launch, collective), then checks of the
# megatune.result/1 records (docs/FORMATS.md section 11):
#  - every measurement is verified ("verified": "yes", no "error");
#  - rates are positive and below the datasheet peak of this GPU (dense
#    TFLOP/s per dtype; host copies below 130 GB/s per direction unless the
#    GPU sits on NVLink-C2C; collective busbw below the NVLink bandwidth);
#  - the gemm probe's bf16 rate at its largest shape is within 3% of a plain
#    cuBLASLt loop at the same shape (build/tests/ref-gemm) or faster (the probe
#    autotunes); when the smoke shapes are too small for a stable comparison
#    (under 1e11 FLOP), the --quick bf16 sweep is run for it.
# Collectives run with --single-process over the local GPUs (none with one GPU:
# not run).  Once nvidia-smi lists a GPU, a probe answering 77 ("not applicable") is a
# failure: on a GPU machine it means a broken driver or library, not a missing GPU.
# Exit 0 pass, 77 skip (no GPU, no CUDA library built), anything else fail.
# Usage: BUILD=build tests/gpu/probes.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=${MEGATUNE:-$BUILD/megatune}
LIB=$BUILD/libmegatune_cuda.so
REF=$BUILD/tests/ref-gemm

if [ ! -x "$MT" ]; then
	echo "FAIL: no $MT (run make first)"
	exit 1
fi
if [ ! -f "$LIB" ]; then
	echo "no $LIB: nvcc absent at build time"
	exit 77
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "no GPU: nvidia-smi -L failed"
	exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "no python3 to read the results"
	exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-probes.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
unset OMPI_COMM_WORLD_SIZE PMI_SIZE SLURM_NTASKS

"$MT" probe topology >"$T/topology.out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	cat "$T/topology.out"
	echo "FAIL: megatune probe topology exited with status $rc"
	exit 1
fi
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "GPU: $GPU ($NGPU visible)"

fail=0
ran=0
: >"$T/skipped"
run_probe() {   # name, json file, extra options...
	name=$1
	out=$2
	shift 2
	echo "== megatune probe $name --backend cuda $*"
	timeout 1800 "$MT" probe "$name" --backend cuda --json "$out" "$@" >"$T/$name.out" 2>&1
	prc=$?
	cat "$T/$name.out"
	case $prc in
	0) ran=$((ran + 1)) ;;
	77)
		echo "FAIL: megatune probe $name: not applicable (exit 77) on a machine with a GPU"
		fail=1
		rm -f "$out"
		;;
	1)
		ran=$((ran + 1))
		echo "FAIL: megatune probe $name: a result failed verification (exit 1)"
		fail=1
		;;
	*)
		echo "FAIL: megatune probe $name exited with status $prc"
		fail=1
		rm -f "$out"
		;;
	esac
}

run_probe gemm "$T/gemm.jsonl" --smoke
run_probe attention "$T/attention.jsonl" --smoke
run_probe offload "$T/offload.jsonl" --smoke
run_probe host "$T/host.jsonl" --smoke
if [ "$NGPU" -gt 1 ]; then
	run_probe collective "$T/collective.jsonl" --smoke --single-process --timeout 300
else
	echo "collective: one GPU, no group to measure" >>"$T/skipped"
fi

if [ $ran -eq 0 ]; then
	cat "$T/skipped"
	echo "FAIL: no CUDA probe ran on a machine with a GPU"
	exit 1
fi

# a bf16 shape large enough for the 3% comparison with ref-gemm
need_quick=$(python3 - "$T/gemm.jsonl" <<'EOF'
import json, sys
best = 0
try:
    for line in open(sys.argv[1]):
        r = json.loads(line)
        c = r.get("case") or {}
        if r.get("probe") == "gemm" and str(c.get("dtype")) in ("bf16", "0") and r.get("verified") == "yes":
            best = max(best, 2.0 * c["m"] * c["n"] * c["k"])
except (OSError, ValueError, KeyError):
    pass
print(1 if best < 1e11 else 0)
EOF
)
if [ "$need_quick" = 1 ] && [ -f "$T/gemm.jsonl" ]; then
	run_probe gemm "$T/gemm-quick.jsonl" --quick --dtype bf16
fi

python3 - "$T" "$GPU" "$REF" <<'EOF'
import glob, json, os, re, subprocess, sys

tdir, gpu, ref = sys.argv[1], sys.argv[2].lower(), sys.argv[3]

# dense TFLOP/s by dtype (datasheets), NVLink GB/s per GPU (both directions)
PEAKS = [
    ("gb200", {"bf16": 2500, "fp16": 2500, "fp8": 5000, "tf32": 1250, "fp32": 90}, 1800),
    ("b200", {"bf16": 2250, "fp16": 2250, "fp8": 4500, "tf32": 1100, "fp32": 80}, 1800),
    ("h200", {"bf16": 989.4, "fp16": 989.4, "fp8": 1978.9, "tf32": 494.7, "fp32": 66.9}, 900),
    ("gh200", {"bf16": 989.4, "fp16": 989.4, "fp8": 1978.9, "tf32": 494.7, "fp32": 66.9}, 900),
    ("h100 nvl", {"bf16": 835.5, "fp16": 835.5, "fp8": 1670.5, "tf32": 417.5, "fp32": 60}, 600),
    ("h100 pcie", {"bf16": 756.5, "fp16": 756.5, "fp8": 1513, "tf32": 378, "fp32": 51.2}, 600),
    ("h100", {"bf16": 989.4, "fp16": 989.4, "fp8": 1978.9, "tf32": 494.7, "fp32": 66.9}, 900),
    ("a100", {"bf16": 312, "fp16": 312, "tf32": 156, "fp32": 19.5}, 600),
]
DTYPES = ["bf16", "fp16", "fp8", "tf32", "fp32"]
peak, nvlink = None, None
for key, p, nv in PEAKS:
    if key in gpu:
        peak, nvlink = p, nv
        break
if peak is None:
    print("note: no datasheet peaks for %r; checking rates are positive only" % gpu)
c2c = "gh200" in gpu or "gb200" in gpu or "gb300" in gpu
copy_ceiling = 1000.0 if c2c else 130.0

errors, checked = [], 0
recs = {}
for f in sorted(glob.glob(os.path.join(tdir, "*.jsonl"))):
    for n, line in enumerate(open(f), 1):
        try:
            r = json.loads(line)
        except ValueError:
            errors.append("%s:%d: not JSON" % (os.path.basename(f), n))
            continue
        if r.get("kind") == "run" or "schema" in r:
            continue
        recs.setdefault(os.path.basename(f), []).append(r)

def num(r, *keys):
    for k in keys:
        v = r.get(k)
        if isinstance(v, (int, float)):
            return float(v)
    return None

for f, rs in recs.items():
    for r in rs:
        p, label, c = r.get("probe"), r.get("label"), r.get("case") or {}
        where = "%s %s" % (p, label)
        checked += 1
        if r.get("error"):
            errors.append("%s: %s" % (where, r["error"]))
            continue
        if r.get("verified") != "yes":
            errors.append("%s: verified is %r" % (where, r.get("verified")))
        if p in ("gemm", "attention"):
            t = num(r, "tflops")
            dt = c.get("dtype", "bf16")
            if isinstance(dt, int):
                dt = DTYPES[dt] if 0 <= dt < len(DTYPES) else str(dt)
            if t is None or t <= 0:
                errors.append("%s: tflops %r not positive" % (where, t))
            elif peak is not None and dt in peak and t >= peak[dt]:
                errors.append("%s: %.1f TFLOP/s at or above the %s peak %.1f" % (where, t, dt, peak[dt]))
            elif peak is not None and dt not in peak:
                errors.append("%s: %s measured on a GPU without it" % (where, dt))
        elif p == "offload":
            g = num(r, "gbps", "algbw_gbps")
            if g is None or g <= 0:
                errors.append("%s: gbps %r not positive" % (where, g))
            elif g >= copy_ceiling:
                errors.append("%s: %.1f GB/s at or above %g GB/s" % (where, g, copy_ceiling))
        elif p == "collective":
            b = num(r, "busbw_gbps")
            ranks = c.get("ranks", 2)
            if ranks and ranks > 1 and (b is None or b <= 0):
                errors.append("%s: busbw %r not positive" % (where, b))
            elif b is not None and nvlink is not None and b >= nvlink:
                errors.append("%s: busbw %.1f GB/s at or above NVLink's %g" % (where, b, nvlink))
        elif p == "host":
            tu = (r.get("time_us") or {}).get("median")
            if c.get("metric", "").startswith("launch"):
                if not isinstance(tu, (int, float)) or not 0 < tu < 1000:
                    errors.append("%s: launch time %r us out of (0, 1000)" % (where, tu))

# the probe against a plain cuBLASLt loop, bf16, at the largest shape
best = None
for f in ("gemm-quick.jsonl", "gemm.jsonl"):
    for r in recs.get(f, []):
        c = r.get("case") or {}
        if r.get("probe") == "gemm" and str(c.get("dtype")) in ("bf16", "0") and r.get("verified") == "yes":
            fl = 2.0 * c["m"] * c["n"] * c["k"]
            if best is None or fl > best[0]:
                best = (fl, c["m"], c["n"], c["k"], num(r, "tflops"))
if best is None:
    errors.append("no verified bf16 gemm result to compare with ref-gemm")
elif not os.access(ref, os.X_OK):
    errors.append("no %s to compare with" % ref)
else:
    fl, m, n, k, t = best
    out = subprocess.run([ref, str(m), str(n), str(k)], capture_output=True, text=True, timeout=600)
    mt = re.search(r"tflops=([0-9.]+)", out.stdout)
    if out.returncode != 0 or not mt:
        errors.append("ref-gemm %d %d %d failed: %s %s" % (m, n, k, out.stdout, out.stderr))
    else:
        rt = float(mt.group(1))
        print("gemm bf16 %dx%dx%d: probe %.1f TFLOP/s, ref-gemm %.1f TFLOP/s (%+.1f%%)"
              % (m, n, k, t, rt, 100.0 * (t - rt) / rt))
        if fl < 1e11:
            print("note: shape under 1e11 FLOP, comparison informative only")
        elif t < 0.97 * rt:
            errors.append("gemm bf16 %dx%dx%d: probe %.1f TFLOP/s is more than 3%% below ref-gemm's %.1f"
                          % (m, n, k, t, rt))

print("%d records checked" % checked)
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
EOF
prc=$?
cat "$T/skipped"
if [ $prc -ne 0 ] || [ $fail -ne 0 ]; then
	exit 1
fi
exit 0
