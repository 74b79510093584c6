#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The host's cost of the framework: a PyTorch eager layer's CPU time against its GPU time
(scripts/gpu-campaign.sh).

Three layers with the op mix of Megatron-LM's, bf16, plain PyTorch ops, 4096 tokens:
  dense         Llama-style (h 4096, 32 heads, 8 KV heads, FFN 14336): RMSNorm, QKV, RoPE,
                SDPA, projection, residual, RMSNorm, gate/up, SwiGLU, down, residual;
  moe-dropless  a Qwen3-30B-A3B layer as one rank of EP8 holds it (h 2048, router over 128
                experts, top-8, 16 local experts of FFN 768; the all-to-all left out): router,
                softmax, top-k, permute (argsort, index_select), the token counts copied to
                the host (what MoEAlltoAllTokenDispatcher.preprocess does), 16 expert GEMM
                pairs, unpermute (index_add_);
  moe-padded    the same with the experts' inputs padded to a fixed capacity (capacity factor
                1.0): no host copy, batched GEMMs.
For each:
  ops       per op, the CPU time to issue it while the GPU is kept busy (a queued
            torch.cuda._sleep), its kernels (torch.profiler), and the CPU time per kernel;
            the host copy of moe-dropless is timed with the GPU idle (kept busy, it would
            time the spin it waits for);
  layer     forward+backward: CPU issue time (GPU kept busy; for moe-dropless it includes
            the wait at its host copy), GPU time (the GPU never waiting), and wall time from
            an idle GPU; wall / GPU > 1 is host-bound;
  graphs    forward+backward through torch.cuda.make_graphed_callables: the replay's wall
            time (not for moe-dropless: its host copy cannot be captured).
And the floor: one tiny eager op (add_ on one element), CPU time per call.

Usage: host_cost.py OUT.json
"""
import contextlib
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

T = 4096
DEV = "cuda"
BF = torch.bfloat16


def busy(ms=200.0):
    """Queue a spin of about `ms` on the GPU (at about 2 GHz) so the host never waits for it."""
    torch.cuda._sleep(int(2.0e9 * ms / 1e3))


def cpu_us(fn, reps=15):
    ts = []
    for _ in range(reps):
        busy(50)
        t = time.perf_counter_ns()
        fn()
        ts.append((time.perf_counter_ns() - t) / 1e3)
    torch.cuda.synchronize()
    return statistics.median(ts)


def kernels_of(fn):
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as p:
            fn()
            torch.cuda.synchronize()
        return sum(1 for e in p.events() if str(e.device_type).endswith("CUDA"))
    except Exception:
        return None


class Stepped(nn.Module):
    """A layer written as named steps (ops()), run in order by forward()."""

    def forward(s, x):
        steps, st = s.ops(x)
        for _, f in steps:
            f()
        return st["y"]


class Dense(Stepped):
    def __init__(s, h=4096, heads=32, kv=8, ffn=14336):
        super().__init__()
        s.h, s.heads, s.kv, s.d = h, heads, kv, h // heads
        s.n1, s.n2 = nn.RMSNorm(h), nn.RMSNorm(h)
        s.qkv = nn.Linear(h, (heads + 2 * kv) * s.d, bias=False)
        s.proj = nn.Linear(h, h, bias=False)
        s.up = nn.Linear(h, 2 * ffn, bias=False)
        s.down = nn.Linear(ffn, h, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, s.d, 2).float() / s.d))
        f = torch.outer(torch.arange(T).float(), inv)
        s.register_buffer("cos", f.cos().to(BF), persistent=False)
        s.register_buffer("sin", f.sin().to(BF), persistent=False)

    def rope(s, x):  # x [1, heads, T, d]
        a, b = x[..., ::2], x[..., 1::2]
        return torch.cat((a * s.cos - b * s.sin, a * s.sin + b * s.cos), -1)

    def ops(s, x):
        """The forward as named steps (each a closure over the previous outputs)."""
        st = {}
        steps = [
            ("rmsnorm", lambda: st.__setitem__("n", s.n1(x))),
            ("qkv linear", lambda: st.__setitem__("qkv", s.qkv(st["n"]))),
            ("split heads", lambda: st.__setitem__("q", st["qkv"].view(1, T, -1, s.d).transpose(1, 2))),
            ("rope q,k", lambda: st.__setitem__("qr", s.rope(st["q"][:, :s.heads + s.kv]))),
            ("sdpa", lambda: st.__setitem__("a", F.scaled_dot_product_attention(
                st["qr"][:, :s.heads], st["qr"][:, s.heads:], st["q"][:, s.heads + s.kv:], is_causal=True,
                enable_gqa=True))),
            ("merge heads", lambda: st.__setitem__("m", st["a"].transpose(1, 2).reshape(T, s.h))),
            ("proj linear", lambda: st.__setitem__("p", s.proj(st["m"]))),
            ("residual add", lambda: st.__setitem__("r", x + st["p"])),
            ("rmsnorm 2", lambda: st.__setitem__("n2", s.n2(st["r"]))),
            ("gate/up linear", lambda: st.__setitem__("u", s.up(st["n2"]))),
            ("swiglu", lambda: st.__setitem__("g", (lambda g, u: F.silu(g) * u)(*st["u"].chunk(2, -1)))),
            ("down linear", lambda: st.__setitem__("dn", s.down(st["g"]))),
            ("residual add 2", lambda: st.__setitem__("y", st["r"] + st["dn"])),
        ]
        return steps, st


class MoE(Stepped):
    def __init__(s, padded, h=2048, experts=128, local=16, ffn=768, topk=8, cap=1.0):
        super().__init__()
        s.padded, s.h, s.E, s.L, s.F, s.K = padded, h, experts, local, ffn, topk
        s.C = int(math.ceil(T * topk / local * cap))
        s.router = nn.Linear(h, experts, bias=False)
        s.w13 = nn.Parameter(torch.randn(local, h, 2 * ffn) * h ** -0.5)
        s.w2 = nn.Parameter(torch.randn(local, ffn, h) * ffn ** -0.5)

    def ops(s, x):
        st = {}
        K, L = s.K, s.L

        def experts_dropless():
            counts = st["counts"]
            outs, i = [], 0
            for e, c in enumerate(counts):
                t = st["xs"][i:i + c]
                g, u = (t @ s.w13[e]).chunk(2, -1)
                outs.append((F.silu(g) * u) @ s.w2[e])
                i += c
            st["ye"] = torch.cat(outs)

        def dispatch_padded():
            e = st["eid"][st["order"]]
            start = torch.cumsum(st["tpe"], 0) - st["tpe"]
            pos = torch.arange(e.numel(), device=DEV) - start[e]
            keep = pos < s.C
            slot = (e * s.C + pos).clamp(max=L * s.C - 1)
            buf = torch.zeros(L * s.C, s.h, device=DEV, dtype=BF)
            st["slot"], st["keep"] = slot, keep
            st["buf"] = buf.index_add(0, slot, st["xs"] * keep.unsqueeze(-1).to(BF))

        def experts_padded():
            b = st["buf"].view(L, s.C, s.h)
            g, u = torch.bmm(b, s.w13).chunk(2, -1)
            st["ye"] = (torch.bmm(F.silu(g) * u, s.w2)).view(L * s.C, s.h)[st["slot"]] * \
                st["keep"].unsqueeze(-1).to(BF)

        steps = [
            ("router linear", lambda: st.__setitem__("lg", s.router(x))),
            ("softmax", lambda: st.__setitem__("pr", st["lg"].float().softmax(-1))),
            ("top-k", lambda: st.update(zip(("tw", "ti"), st["pr"].topk(K, -1)))),
            ("normalise weights", lambda: st.__setitem__("tw", (st["tw"] / st["tw"].sum(-1, keepdim=True)).to(BF))),
            ("local expert ids", lambda: st.__setitem__("eid", st["ti"].flatten() % L)),
            ("argsort", lambda: st.__setitem__("order", torch.argsort(st["eid"], stable=True))),
            # not torch.bincount: with minlength it copies its maximum to the host (a sync)
            ("tokens per expert", lambda: st.__setitem__("tpe", torch.zeros(L, dtype=torch.long, device=DEV)
                                                          .index_add_(0, st["eid"], torch.ones_like(st["eid"])))),
        ]
        if not s.padded:
            steps.append(("counts to host (sync)", lambda: st.__setitem__("counts", st["tpe"].tolist())))
        steps += [
            ("permute (index_select)", lambda: st.__setitem__("xs", x.index_select(0, st["order"] // K))),
        ]
        if s.padded:
            steps += [("pad to capacity", dispatch_padded), ("expert GEMMs (bmm)", experts_padded)]
        else:
            steps += [("expert GEMMs (16 pairs)", experts_dropless)]
        steps += [
            ("weight by probs", lambda: st.__setitem__("yw", st["ye"] * st["tw"].flatten()[st["order"]].unsqueeze(-1))),
            ("unpermute (index_add_)", lambda: st.__setitem__("y", torch.zeros_like(x).index_add_(
                0, st["order"] // K, st["yw"]))),
        ]
        return steps, st



def measure(name, mod, h):
    x = torch.randn(T, h, device=DEV, dtype=BF, requires_grad=True)
    gy = torch.randn(T, h, device=DEV, dtype=BF)
    for _ in range(3):
        mod(x).backward(gy)
    torch.cuda.synchronize()
    rows = []
    steps, _ = mod.ops(x)
    for i, (op, f) in enumerate(steps):
        # the steps before this one, untimed, then this one timed
        def one(i=i, f=f):
            for _, g in steps[:i]:
                g()
            if "(sync)" in op:  # it waits for the GPU: time it with nothing queued
                torch.cuda.synchronize()
            else:
                busy(50)
            t = time.perf_counter_ns()
            f()
            return (time.perf_counter_ns() - t) / 1e3
        ts = [one() for _ in range(9)]
        torch.cuda.synchronize()

        def only(i=i, f=f):
            f()
        nk = kernels_of(only)
        us = statistics.median(ts)
        rows.append({"op": op, "cpu_us": us, "kernels": nk, "cpu_us_per_kernel": us / nk if nk else None})
    fwd = cpu_us(lambda: mod(x))

    def fwd_bwd():
        mod(x).backward(gy)
    fb = cpu_us(fwd_bwd)
    nk_fb = kernels_of(fwd_bwd)
    # GPU time with the host ahead: queue a spin, then the layer, between events
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    g = []
    for _ in range(7):
        busy(100)
        e0.record()
        fwd_bwd()
        e1.record()
        e1.synchronize()
        g.append(e0.elapsed_time(e1) * 1e3)
    w = []
    for _ in range(7):
        torch.cuda.synchronize()
        t = time.perf_counter_ns()
        fwd_bwd()
        torch.cuda.synchronize()
        w.append((time.perf_counter_ns() - t) / 1e3)
    gpu, wall = statistics.median(g), statistics.median(w)
    graphed = None if getattr(mod, "padded", True) else \
        "not capturable: the token counts are copied to the host"
    return {"layer": name, "ops": rows, "fwd_cpu_us": fwd, "fwd_bwd_cpu_us": fb, "fwd_bwd_kernels": nk_fb,
            "cpu_us_per_kernel": fb / nk_fb if nk_fb else None, "fwd_bwd_gpu_us": gpu,
            "fwd_bwd_wall_us": wall, "wall_over_gpu": wall / gpu if gpu else None,
            "graphed_fwd_bwd_wall_us": graphed}


def graphed_wall(mod, h):
    """Forward+backward replayed from CUDA graphs (make_graphed_callables): the median wall
    time, or why it could not be captured.  Tried with PyTorch's default attention backends,
    then with cuDNN's left out (a capture that fails names the first error)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    why = []
    for label, backends in (("default", None),
                            ("no cuDNN attention", [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION])):
        try:
            x = torch.randn(T, h, device=DEV, dtype=BF, requires_grad=True)
            gy = torch.randn(T, h, device=DEV, dtype=BF)
            torch.cuda.synchronize()
            ctx = sdpa_kernel(backends) if backends else contextlib.nullcontext()
            with ctx:
                gm = torch.cuda.make_graphed_callables(mod, (x,))
                for _ in range(3):
                    gm(x).backward(gy)
                torch.cuda.synchronize()
                gw = []
                for _ in range(7):
                    torch.cuda.synchronize()
                    t = time.perf_counter_ns()
                    gm(x).backward(gy)
                    torch.cuda.synchronize()
                    gw.append((time.perf_counter_ns() - t) / 1e3)
            return statistics.median(gw), label
        except Exception as ex:
            why.append("%s: %s" % (label, " ".join(str(ex).split())[:160]))
            try:
                torch.cuda.synchronize()
            except Exception:
                pass
    return "capture failed: " + "; ".join(why), None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    torch.manual_seed(0)
    one = torch.zeros(1, device=DEV)
    floor = cpu_us(lambda: one.add_(1), reps=51)
    layers, mods = [], {}
    for name, mod, h in (("dense", Dense(), 4096), ("moe-padded", MoE(True), 2048),
                         ("moe-dropless", MoE(False), 2048)):
        mod = mod.to(DEV, BF)
        try:
            layers.append(measure(name, mod, h))
        except Exception as ex:
            layers.append({"layer": name, "error": str(ex).splitlines()[0][:200]})
        mods[name] = (mod, h)
        torch.cuda.empty_cache()
    # the captures last, after every eager figure: a failed capture can leave the CUDA RNG
    # unusable for what follows ("Offset increment outside graph capture")
    for L in sorted(layers, key=lambda L: L["layer"] == "dense"):
        if "error" in L or L["graphed_fwd_bwd_wall_us"] is not None:
            continue
        mod, h = mods[L["layer"]]
        L["graphed_fwd_bwd_wall_us"], L["graphed_with"] = graphed_wall(mod, h)
    doc = {"schema": "megatune.campaign-host-cost/1", "gpu": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "tokens": T, "tiny_op_cpu_us": floor, "layers": layers}
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    print("one tiny eager op: %.1f us of CPU" % floor)
    for L in layers:
        if "error" in L:
            print("%s: error: %s" % (L["layer"], L["error"]))
            continue
        print("\n%s: forward+backward %d kernels, CPU %.0f us (%.1f us/kernel), GPU %.0f us, wall from idle %.0f us "
              "(wall/GPU %.2f), CUDA graphs: %s" % (
                  L["layer"], L["fwd_bwd_kernels"] or -1, L["fwd_bwd_cpu_us"], L["cpu_us_per_kernel"] or -1,
                  L["fwd_bwd_gpu_us"], L["fwd_bwd_wall_us"], L["wall_over_gpu"] or -1,
                  "%.0f us" % L["graphed_fwd_bwd_wall_us"] if isinstance(L["graphed_fwd_bwd_wall_us"], float)
                  else L["graphed_fwd_bwd_wall_us"]))
        for r in L["ops"]:
            print("  %-26s %8.1f us CPU  %4s kernels" % (r["op"], r["cpu_us"], r["kernels"] if r["kernels"] is not None else "?"))
    d = {L["layer"]: L for L in layers if "error" not in L}
    if "moe-dropless" in d and "moe-padded" in d:
        print("\nmoe: dropless wall %.0f us against padded %.0f us (x%.2f); dropless wall/GPU %.2f"
              % (d["moe-dropless"]["fwd_bwd_wall_us"], d["moe-padded"]["fwd_bwd_wall_us"],
                 d["moe-dropless"]["fwd_bwd_wall_us"] / d["moe-padded"]["fwd_bwd_wall_us"],
                 d["moe-dropless"]["wall_over_gpu"]))


if __name__ == "__main__":
    main()
