#!/bin/sh
# SPDX-License-Identifier: MIT
# On a machine with a GPU: run build/tests/gpu-trace-check (tests/gpu/trace-check.cu)
# under CUDA_INJECTION64_PATH=build/libmegatune_trace.so and compare the trace with
# the program's own CUDA-event measurements:
#  - per kernel name, the number of kernel records equals the number of launches;
#  - per kernel name, the summed trace duration is within 5% (or 20 us) of the
#    summed CUDA-event time;
#  - memcpy and memset records are there, the first line is the megatune.trace/1
#    header (naming the CUPTI loaded), the last the end record, and nothing was dropped;
#  - the program's NVTX range is there (NVTX_INJECTION64_PATH is the tracer, which
#    hands NVTX to the CUPTI it loaded).
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
# Usage: BUILD=build tests/gpu/trace-check.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
BIN=$BUILD/tests/gpu-trace-check
LIB=$BUILD/libmegatune_trace.so

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "no GPU: nvidia-smi -L failed"
	exit 77
fi
if [ ! -x "$BIN" ]; then
	echo "no $BIN: nvcc absent"
	exit 77
fi
if [ ! -f "$LIB" ]; then
	echo "no $LIB: CUPTI headers absent"
	exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "no python3 to read the trace"
	exit 77
fi
LIB=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
T=$(mktemp -d "${TMPDIR:-/tmp}/trace-check.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
unset RANK LOCAL_RANK WORLD_SIZE MEGATUNE_TRACE_API

# NVTX goes through the tracer to the CUPTI it loaded: the same instance
CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$LIB \
	MEGATUNE_TRACE_DIR=$T/tr CUDA_MODULE_LOADING=EAGER \
	timeout 300 "$BIN" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 77 ]; then   # nvidia-smi lists a GPU: CUDA not working is a failure
	cat "$T/err"
	echo "FAIL: gpu-trace-check found no usable GPU where nvidia-smi lists one"
	exit 1
fi
if [ $rc -ne 0 ]; then
	cat "$T/err"
	echo "FAIL: gpu-trace-check exited with status $rc"
	exit 1
fi
if grep -q '^megatune-trace: ' "$T/err"; then
	cat "$T/err"
	echo "FAIL: the injection library reported a problem"
	exit 1
fi
set -- "$T"/tr/megatune-trace.pid*.jsonl
if [ ! -f "$1" ]; then
	echo "FAIL: no trace file in $T/tr ($(ls "$T/tr" 2>&1)); stderr: $(cat "$T/err")"
	exit 1
fi

python3 - "$1" "$T/out" <<'EOF'
import json, sys

trace, summary = sys.argv[1], sys.argv[2]
want = json.loads(open(summary).read().strip().splitlines()[-1])
lines = open(trace, encoding="utf-8").read().splitlines()
recs = [json.loads(l) for l in lines]
errors = []
if recs[0].get("schema") != "megatune.trace/1":
    errors.append("first line is not the megatune.trace/1 header: %s" % lines[0])
if not recs[0].get("cupti_path"):
    errors.append("the header does not say which CUPTI was loaded: %s" % lines[0])
print("CUPTI: %s (%s)" % (recs[0].get("cupti_path"), recs[0].get("cupti_from")))
end = recs[-1]
if end.get("t") != "end":
    errors.append("last line is not the end record: %s" % lines[-1])
body = recs[1:-1]
if end.get("records") != len(body):
    errors.append("end record counts %s records, the file has %d" % (end.get("records"), len(body)))
if end.get("dropped"):
    errors.append("%s records dropped" % end["dropped"])

got = {k: [0, 0] for k in want["kernels"]}
other = {}
for r in body:
    if r["t"] != "kernel":
        continue
    keys = [k for k in want["kernels"] if k in r["name"]]
    if len(keys) != 1:
        other[r["name"]] = other.get(r["name"], 0) + 1
        continue
    got[keys[0]][0] += 1
    got[keys[0]][1] += r["end"] - r["start"]
for name, w in want["kernels"].items():
    n, ns = got[name]
    ev_ns = w["ms"] * 1e6
    diff = abs(ns - ev_ns)
    ok = n == w["count"] and (diff <= 0.05 * ev_ns or diff <= 20000)
    print("%-8s launches %3d traced %3d   events %10.3f ms  trace %10.3f ms  (%+.2f%%) %s"
          % (name, w["count"], n, ev_ns / 1e6, ns / 1e6,
             100.0 * (ns - ev_ns) / ev_ns if ev_ns else 0.0, "ok" if ok else "MISMATCH"))
    if not ok:
        errors.append("kernel %s: %d launches, %d traced; %.1f us by events, %.1f us traced"
                      % (name, w["count"], n, ev_ns / 1e3, ns / 1e3))
if other:
    errors.append("kernels the program did not launch: %s" % other)

count = lambda t: sum(r["t"] == t for r in body)
for t in ("memcpy", "memset"):
    if count(t) < want[t]:
        errors.append("%d %s records, the program made %d" % (count(t), t, want[t]))
names = sorted({r["name"] for r in body if r["t"] == "memcpy"})
print("memcpy %d %s, memset %d, runtime %d, driver %d, sync %d, nvtx %d"
      % (count("memcpy"), names, count("memset"), count("runtime"), count("driver"),
         count("sync"), count("nvtx")))
if not any(r["t"] == "runtime" and r["name"].startswith("cudaLaunchKernel") for r in body):
    errors.append("no cudaLaunchKernel runtime records")
kcorr = {r["corr"] for r in body if r["t"] == "kernel"}
acorr = {r["corr"] for r in body if r["t"] in ("runtime", "driver")}
if kcorr - acorr:
    errors.append("%d kernels have no runtime/driver record with their corr" % len(kcorr - acorr))
if not any(r["t"] == "nvtx" and r["name"] == "trace-check" for r in body):
    errors.append("no NVTX range 'trace-check': the tracer did not hand NVTX to its CUPTI")
for e in errors:
    print("FAIL: " + e)
sys.exit(1 if errors else 0)
EOF
