#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A small GPT trained in plain PyTorch for a few steps, to trace (scripts/gpu-campaign.sh).

Six pre-norm blocks (d 768, 12 heads, sequence 1024, batch 8, vocabulary 8192), bf16
autocast, fused AdamW; each step inside an NVTX range "step#N" (what `megatune analyze
--step-range step#` reads in a megatune trace) and timed with CUDA events.  With a file
argument, torch.profiler records steps 10-15 (schedule wait 8, warm-up 2, active 6) as a
Kineto trace with ProfilerStep#N ranges.  Steps 10-15, not earlier: on the first H100 run
an untraced process took until step 10 to settle (18.5 ms at step 1, 12.7 at step 10,
against 12.1 from step 2 under the tracer).

Usage: tinygpt.py [KINETO_TRACE.json]
Prints "loss L; ms/step over steps 10-15: X".
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

V, D, H, L, S, B, STEPS = 8192, 768, 12, 6, 1024, 8, 18


class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.n1, s.n2 = nn.LayerNorm(D), nn.LayerNorm(D)
        s.qkv, s.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        s.fc, s.out = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(s, x):
        q, k, v = s.qkv(s.n1(x)).view(x.shape[0], S, 3, H, D // H).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(x.shape)
        x = x + s.proj(a)
        return x + s.out(F.gelu(s.fc(s.n2(x))))


class GPT(nn.Module):
    def __init__(s):
        super().__init__()
        s.emb, s.pos = nn.Embedding(V, D), nn.Parameter(torch.zeros(S, D))
        s.blocks = nn.Sequential(*[Block() for _ in range(L)])
        s.norm, s.head = nn.LayerNorm(D), nn.Linear(D, V, bias=False)

    def forward(s, t):
        return s.head(s.norm(s.blocks(s.emb(t) + s.pos)))


def main():
    torch.manual_seed(0)
    kineto = sys.argv[1] if len(sys.argv) > 1 else None
    m = GPT().cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=3e-4, fused=True)
    tok = torch.randint(0, V, (B, S + 1), device="cuda")
    prof = None
    if kineto:
        from torch.profiler import ProfilerActivity, profile, schedule
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       schedule=schedule(wait=8, warmup=2, active=6, repeat=1),
                       on_trace_ready=lambda p: p.export_chrome_trace(kineto))
        prof.start()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(STEPS + 1)]
    for i in range(STEPS):
        ev[i].record()
        torch.cuda.nvtx.range_push("step#%d" % i)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(m(tok[:, :-1]).float().view(-1, V), tok[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.nvtx.range_pop()
        if prof:
            prof.step()
    ev[STEPS].record()
    torch.cuda.synchronize()
    if prof:
        prof.stop()
    ms = [ev[i].elapsed_time(ev[i + 1]) for i in range(STEPS)]
    print("steps ms: %s" % " ".join("%.2f" % x for x in ms))
    print("loss %.3f; ms/step over steps 10-15: %.3f" % (loss.item(), sum(ms[10:16]) / 6))


if __name__ == "__main__":
    main()
