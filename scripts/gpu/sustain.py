#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sustained against burst GEMM, and GEMM beside a communication-like kernel
(scripts/gpu-campaign.sh).

1. burst: a bf16 GEMM (default 8192^3) timed for about one second after warm-up;
2. sustained: the same GEMM back to back for --seconds (default 30), its TFLOP/s per
   second with the SM clock, power and temperature read from NVML (pynvml, else
   nvidia-smi) at each second: what a training step meets after the first seconds;
3. interference: the GEMM alone, a memory-streaming copy kernel alone (Triton, a
   persistent grid of N programs, as NCCL's channels each hold one SM), and both
   together on two streams, for N in 8, 16, 32: the GEMM's slowdown and the copy's
   bandwidth under load (torch's full-grid copy_ when Triton is not there).

Usage: sustain.py OUT.json [--seconds S] [--size N]
Prints the figures and a last line "burst X TFLOP/s, sustained Y (Z%), ...".
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import torch


class Clocks:
    """SM clock (MHz), power (W), temperature (C) of GPU 0."""

    def __init__(self):
        self.nv = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.nv, self.h = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
            self.source = "NVML (pynvml)"
        except Exception:
            self.source = "nvidia-smi"

    def read(self):
        try:
            if self.nv:
                n, h = self.nv, self.h
                return {"sm_mhz": n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM),
                        "power_w": n.nvmlDeviceGetPowerUsage(h) / 1000.0,
                        "temp_c": n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)}
            out = subprocess.run(["nvidia-smi", "-i", "0", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                                  "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=5)
            sm, pw, tc = [x.strip() for x in out.stdout.split(",")]
            return {"sm_mhz": float(sm), "power_w": float(pw), "temp_c": float(tc)}
        except Exception as ex:
            return {"error": str(ex)[:80]}


def gemm_rate(a, b, seconds):
    """TFLOP/s of a @ b over about `seconds` (events around batches of 10)."""
    n = a.shape[0]
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    done, t_end, ms = 0, time.time() + seconds, 0.0
    while time.time() < t_end:
        s.record()
        for _ in range(10):
            torch.matmul(a, b)
        e.record()
        e.synchronize()
        ms += s.elapsed_time(e)
        done += 10
    return 2.0 * n * n * n * done / (ms / 1e3) / 1e12


def copy_kernel():
    try:
        import triton
        import triton.language as tl
    except Exception:
        return None

    @triton.jit
    def k(src, dst, n, BLOCK: tl.constexpr, NPROG: tl.constexpr):
        pid = tl.program_id(0)
        for start in range(pid * BLOCK, n, NPROG * BLOCK):
            offs = start + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)

    return k


def interference(n, ctas_list, seconds=1.0):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    src = torch.randn(64 << 20, device="cuda")  # 256 MiB
    dst = torch.empty_like(src)
    nbytes = 2 * src.numel() * 4  # read and written
    kern = copy_kernel()
    gs, cs = torch.cuda.Stream(), torch.cuda.Stream()
    flop = 2.0 * n ** 3
    rows = []

    def run(ctas, do_gemm, do_copy):
        ev = {k: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for k in ("g", "c")}
        ng = nc = rounds = 0
        t_end = time.time() + seconds
        torch.cuda.synchronize()
        if do_gemm:
            ev["g"][0].record(gs)
        if do_copy:
            ev["c"][0].record(cs)
        while time.time() < t_end:
            if do_gemm:
                with torch.cuda.stream(gs):
                    for _ in range(4):
                        torch.matmul(a, b)
                ng += 4
            if do_copy:
                with torch.cuda.stream(cs):
                    for _ in range(2):
                        if kern and ctas:
                            kern[(ctas,)](src, dst, src.numel(), BLOCK=4096, NPROG=ctas)
                        else:
                            dst.copy_(src)
                nc += 2
            rounds += 1
            if rounds % 16 == 0:  # keep the host from queueing far past the deadline
                torch.cuda.synchronize()
        if do_gemm:
            ev["g"][1].record(gs)
        if do_copy:
            ev["c"][1].record(cs)
        torch.cuda.synchronize()
        g = flop * ng / (ev["g"][0].elapsed_time(ev["g"][1]) / 1e3) / 1e12 if do_gemm else None
        c = nbytes * nc / (ev["c"][0].elapsed_time(ev["c"][1]) / 1e3) / 1e9 if do_copy else None
        return g, c

    run(ctas_list[0], True, True)  # warm-up, Triton compile
    g_alone, _ = run(0, True, False)
    for ctas in ctas_list if kern else [0]:
        _, c_alone = run(ctas, False, True)
        g_both, c_both = run(ctas, True, True)
        rows.append({"copy": ("triton persistent, %d programs" % ctas) if kern else "torch copy_ (full grid)",
                     "ctas": ctas if kern else None, "gemm_alone_tflops": g_alone, "gemm_with_copy_tflops": g_both,
                     "gemm_slowdown": g_alone / g_both if g_both else None,
                     "copy_alone_gbps": c_alone, "copy_with_gemm_gbps": c_both})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--size", type=int, default=8192)
    o = ap.parse_args()
    n = o.size
    clk = Clocks()
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(5):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    idle = clk.read()
    burst = gemm_rate(a, b, 1.0)
    burst_clk = clk.read()
    series = []
    t0 = time.time()
    while time.time() - t0 < o.seconds:
        r = gemm_rate(a, b, 1.0)
        series.append(dict(t_s=round(time.time() - t0, 2), tflops=r, **clk.read()))
        print("t=%5.1fs %7.1f TFLOP/s  %s" % (series[-1]["t_s"], r, {k: v for k, v in series[-1].items() if k not in ("t_s", "tflops")}), flush=True)
    tail = [s["tflops"] for s in series[len(series) // 3:]] or [burst]
    sustained = statistics.median(tail)
    inter = interference(n, [8, 16, 32])
    doc = {"schema": "megatune.campaign-sustain/1", "gpu": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "clock_source": clk.source, "size": n,
           "idle": idle, "burst": {"tflops": burst, **burst_clk}, "sustained_tflops": sustained,
           "sustained_over_burst": sustained / burst, "series": series, "interference": inter}
    with open(o.out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(o.out + ".tmp", o.out)
    for r in inter:
        print("%-32s gemm %6.1f alone, %6.1f beside the copy (x%.3f); copy %7.1f GB/s alone, %7.1f beside the GEMM"
              % (r["copy"], r["gemm_alone_tflops"], r["gemm_with_copy_tflops"], r["gemm_slowdown"],
                 r["copy_alone_gbps"], r["copy_with_gemm_gbps"]))
    clocks = [s.get("sm_mhz") for s in series if s.get("sm_mhz")]
    print("burst %.1f TFLOP/s, sustained %.1f (%.1f%%) over %.0f s, SM clock %s MHz"
          % (burst, sustained, 100 * sustained / burst, o.seconds,
             "%d-%d" % (min(clocks), max(clocks)) if clocks else "?"))


if __name__ == "__main__":
    main()
