#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The probes' own cases measured by PyTorch, side by side (scripts/gpu-campaign.sh).

Reads a megatune.result/1 file (calibrate's PROFILE.json.results.jsonl) and, for every
verified CUDA record of the gemm, attention and offload probes, times the same case
with PyTorch:
  gemm       torch.matmul (bf16, fp16, tf32, fp32) or torch._scaled_mm (fp8 e4m3, per-tensor
             scales, fast accumulation, bf16 out), A m x k and B stored n x k (the probe's
             "TN" layout);
  attention  scaled_dot_product_attention with the cuDNN and the flash back ends, forward,
             or backward alone (autograd.grad of a kept forward), FLOPs counted as the
             probe counted them (its rate times its time);
  offload    Tensor.copy_ host<->device, pinned (non_blocking) or pageable.
GPU time only, as the probe's spin gate gives: `inner` calls are captured in a CUDA graph
and replayed between two events (eager between events when capture fails; the method is
in each row).  Median of 7 samples after warm-up.

Usage: torch_ref.py RESULTS.jsonl OUT.json
Prints one row per case (megatune, torch, megatune/torch) and a last line
"N cases: N within 3% (N faster), N outside"; OUT.json holds the rows.
"""
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "fp32": torch.float32}
TARGET_S = 0.010


def gpu_seconds(fn, inner_hint=None, graph=True):
    """Seconds per call of fn on the GPU alone: (median, method).  graph=False for autograd
    calls: a backward that fails inside a capture leaves PyTorch's CUDA generator unusable
    for every later case ("Offset increment outside graph capture", the first H100 run)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    one = max(s.elapsed_time(e) / 1e3, 1e-6)
    inner = inner_hint or max(1, min(256, int(TARGET_S / one)))
    method = "graph"
    try:
        if not graph:
            raise RuntimeError("eager by choice")
        g = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()
        torch.cuda.current_stream().wait_stream(side)
        with torch.cuda.graph(g):
            for _ in range(inner):
                fn()
        run = g.replay
        g.replay()
    except Exception:  # not capturable: eager calls between the events
        method = "eager"
        torch.cuda.synchronize()

        def run():
            for _ in range(inner):
                fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(7):
        s.record()
        run()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) / 1e3 / inner)
    return statistics.median(ts), "%s x%d" % (method, inner)


def gemm_case(c):
    m, n, k, dt = c["m"], c["n"], c["k"], c["dtype"]
    torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
    if dt == "fp8":
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
        sa = torch.tensor(0.5, device="cuda")
        sb = torch.tensor(0.25, device="cuda")
        fn = lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True)
        what = "_scaled_mm e4m3"
    else:
        a = torch.randn(m, k, device="cuda", dtype=DT[dt])
        b = torch.randn(n, k, device="cuda", dtype=DT[dt]).t()
        fn = lambda: torch.matmul(a, b)
        what = "matmul"
    sec, how = gpu_seconds(fn)
    return [(what, 2.0 * m * n * k / sec / 1e12, how)]


def attention_cases(r, c):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    flops = r["tflops"] * 1e12 * r["time_us"]["median"] * 1e-6  # the probe's own count
    b, h, kh, d, s = c["batch"], c["heads"], c["kv_heads"], c["head_dim"], c["seq"]
    dt = DT.get(c["dtype"])
    if dt is None or dt == torch.float32:
        return []
    q = torch.randn(b, h, s, d, device="cuda", dtype=dt, requires_grad=True)
    k = torch.randn(b, kh, s, d, device="cuda", dtype=dt, requires_grad=True)
    v = torch.randn(b, kh, s, d, device="cuda", dtype=dt, requires_grad=True)
    out = []
    for name, be in (("sdpa cudnn", SDPBackend.CUDNN_ATTENTION), ("sdpa flash", SDPBackend.FLASH_ATTENTION)):
        try:
            with sdpa_kernel(be):
                f = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=c["causal"], enable_gqa=h != kh)
                if c["direction"] == "fwd":
                    with torch.no_grad():
                        sec, how = gpu_seconds(f)
                else:
                    o = f()
                    go = torch.randn_like(o)
                    g = lambda: torch.autograd.grad(o, (q, k, v), go, retain_graph=True)
                    sec, how = gpu_seconds(g, graph=False)
            out.append((name, flops / sec / 1e12, how))
        except Exception as ex:  # this back end does not take the case
            out.append((name + " (%s)" % str(ex).splitlines()[0][:50], None, "-"))
    return out


def offload_case(c):
    nb, pinned = c["bytes"], c["memory"] == "pinned"
    host = torch.empty(nb, dtype=torch.uint8, pin_memory=pinned)
    dev = torch.empty(nb, dtype=torch.uint8, device="cuda")
    if c["direction"] == "h2d":
        fn = lambda: dev.copy_(host, non_blocking=pinned)
    else:
        fn = lambda: host.copy_(dev, non_blocking=pinned)
    # pageable copies synchronise with the host: eager, as the probe times them
    sec, how = gpu_seconds(fn) if pinned else eager_seconds(fn)
    return [("copy_ " + ("pinned" if pinned else "pageable"), nb / sec / 1e9, how)]


def eager_seconds(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(7):
        s.record()
        for _ in range(4):
            fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) / 1e3 / 4)
    return statistics.median(ts), "eager x4"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    res, out = sys.argv[1], sys.argv[2]
    rows = []
    for line in open(res):
        if not line.strip():
            continue
        r = json.loads(line)
        p, c = r.get("probe"), r.get("case") or {}
        if r.get("kind") == "run" or r.get("backend") != "cuda" or r.get("verified") != "yes":
            continue
        if r.get("rank", 0) != 0 or r.get("error"):
            continue
        try:
            if p == "gemm":
                got, unit, mine = gemm_case(c), "TFLOP/s", r.get("tflops")
            elif p == "attention":
                got, unit, mine = attention_cases(r, c), "TFLOP/s", r.get("tflops")
            elif p == "offload" and not c.get("under_load"):
                got, unit, mine = offload_case(c), "GB/s", r.get("gbps")
            else:
                continue
        except Exception as ex:
            got, unit, mine = [("error: %s" % str(ex).splitlines()[0][:60], None, "-")], "-", None
        for what, rate, how in got:
            rows.append({"probe": p, "label": r.get("label"), "case": c, "unit": unit, "megatune": mine,
                         "torch": what, "torch_rate": rate, "method": how,
                         "ratio": mine / rate if mine and rate else None})
        torch.cuda.empty_cache()
    doc = {"schema": "megatune.campaign-torch-ref/1", "torch": torch.__version__,
           "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
           "gpu": torch.cuda.get_device_name(0), "rows": rows}
    with open(out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(out + ".tmp", out)
    print("%-46s %-18s %10s %10s %8s  %s" % ("case", "torch", "megatune", "torch", "mt/torch", "method"))
    for w in rows:
        fmt = lambda v: "%10.2f" % v if isinstance(v, (int, float)) else "%10s" % "-"
        print("%-46s %-18s %s %s %8s  %s" % ((w["probe"] + " " + str(w["label"]))[:46], w["torch"][:18],
              fmt(w["megatune"]), fmt(w["torch_rate"]),
              "%.3f" % w["ratio"] if w["ratio"] else "-", w["method"]))
    # the best torch back end per case decides (attention has two)
    best = {}
    for w in rows:
        key = (w["probe"], w["label"])
        if w["ratio"] and (key not in best or w["ratio"] < best[key]):
            best[key] = w["ratio"]
    within = sum(1 for v in best.values() if v >= 0.97)
    faster = sum(1 for v in best.values() if v > 1.03)
    print("%d cases: %d within 3%% or faster (%d more than 3%% faster), %d more than 3%% slower than PyTorch"
          % (len(best), within, faster, len(best) - within))


if __name__ == "__main__":
    main()
