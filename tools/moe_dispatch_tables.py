# SPDX-License-Identifier: MIT
"""The published MoE token-dispatch bandwidth tables (DeepEP, DeepEP V2,
HybridEP) as the `moe_dispatch` section of the bundled profiles
(docs/FORMATS.md section 2); tools/build-profiles.py calls add() for each
profile it writes.  Figures exactly as their sources publish them; a point's
dtype is what its measurement sent (docs/MOE_DISPATCH.md).  What Megatron-LM
sends is not a profile field: BF16 with DeepEP and HybridEP (docs/MODEL.md
5.3), which the model times at these figures."""
# what each measurement sent against what Megatron-LM sends (cited in the sources)
WIRE = "; sent as BF16 by Megatron-LM (token_dispatcher.py:1320 @ d98e8a64dd)"
SRC = {
 "deepep-v1": ("published", "DeepEP docs/legacy.md @ dd758caf45 (deepseek-ai/DeepEP; table unchanged since 3b1045db43, 2025-04-22): normal kernels, H800 (NVLink ~160 GB/s) with one ConnectX-7 400 Gb/s InfiniBand NIC per GPU, 4096 tokens, hidden 7168, top-4 groups, top-8 experts, FP8 dispatch, BF16 combine; bottleneck bandwidth: NVLink GB/s intranode (EP8: dispatch 153, combine 158), RDMA GB/s internode (EP16 43/43, EP32 58/57, EP64 51/50); the test uses 24 SMs" + WIRE),
 "deepep-v2": ("published", "DeepEP README.md @ dd758caf45 (EPv2, NCCL Gin backend): 8192 tokens, hidden 7168, top-8, FP8 dispatch, BF16 combine, logical bandwidth (local ranks' traffic included): SM90 + CX7 EP8x2 dispatch 90 / combine 81 GB/s with 12 SMs, EP8x4 61/61 with 6 SMs; SM100 + CX7 EP8x2 90/91 with 12 SMs; SM100 single node EP8 726/740 (64 SMs), 643/675 (24 SMs) over NVLink" + WIRE),
 "hybridep": ("published", "DeepEP branch hybrid-ep docs/README_Hybrid-EP.md @ 94a9f8f6b1: HybridEP and DeepEP algorithm bandwidth through the Torch API (the copy into and out of the registered buffer included), 4096 tokens, hidden 7168, top-8, uniformly random router, 8 local experts per rank; H100 multi-node over InfiniBand, B200 8 ranks over NVLink, GB200 NVL72 (MNNVL)" + WIRE),
 "deepep-v1-cx7": ("derived", "Derived from DeepEP docs/legacy.md @ dd758caf45: internode normal kernels, H800 + one CX7 400 Gb/s IB NIC per GPU, RDMA bottleneck bandwidth counting a token once per destination node, 4096 tokens, hidden 7168, top-8, 24 SMs, FP8 dispatch: EP16 43/43, EP32 58/57, EP64 51/50 GB/s dispatch/combine, applied unchanged to this system's same 50 GB/s NIC per GPU (no SM100 node-basis figure is published)" + WIRE),
 "hybridep-ib-cx7": ("derived", "Derived from DeepEP branch hybrid-ep docs/README_Hybrid-EP.md @ 94a9f8f6b1: HybridEP on H100 over InfiniBand (one 400 Gb/s NIC per GPU), Torch API algorithm bandwidth (per rank), 4096 tokens, hidden 7168, top-8, 8 local experts per rank, 16-64 ranks at 4-16 SMs, applied unchanged to this system's same 50 GB/s NIC per GPU (none published for Blackwell across NVLink domains)" + WIRE),
}
# HybridEP on H100 over InfiniBand (README_Hybrid-EP.md table): ranks, SMs, Torch API
# dispatch FP8, dispatch BF16, combine
HEP_IB = [(16,4,28.09,37.08,42.47),(16,8,44.87,57.74,56.96),(16,16,48.26,54.47,53.35),
          (32,4,32.58,44.88,43.60),(32,8,41.23,46.54,50.68),(32,16,42.10,47.36,52.53),
          (64,4,30.42,40.63,41.00),(64,8,35.71,41.46,47.68),(64,16,35.01,41.24,46.57)]
# DeepEP V1 internode normal kernels (legacy.md): EP, dispatch, combine; node basis, 24 SMs
DEP_V1_RDMA = [(16,43,43),(32,58,57),(64,51,50)]
def pt(backend, op, dtype, span, ranks, sms, gbps, src, basis="rank"):
    return {"backend": backend, "op": op, "dtype": dtype, "span": span, "ranks": ranks,
            "sms": sms, "basis": basis, "gbps": gbps, "source": src}
def hopper():
    p = [pt("deepep","dispatch","fp8","nvlink",8,24,153,"deepep-v1"),
         pt("deepep","combine","bf16","nvlink",8,24,158,"deepep-v1")]
    for r,d,c in DEP_V1_RDMA:
        p += [pt("deepep","dispatch","fp8","network",r,24,d,"deepep-v1","node"),
              pt("deepep","combine","bf16","network",r,24,c,"deepep-v1","node")]
    p += [pt("deepep","dispatch","fp8","network",16,12,90,"deepep-v2"),
          pt("deepep","combine","bf16","network",16,12,81,"deepep-v2"),
          pt("deepep","dispatch","fp8","network",32,6,61,"deepep-v2"),
          pt("deepep","combine","bf16","network",32,6,61,"deepep-v2")]
    for r,s,f8,b16,c in HEP_IB:
        p += [pt("hybridep","dispatch","fp8","network",r,s,f8,"hybridep"),
              pt("hybridep","dispatch","bf16","network",r,s,b16,"hybridep"),
              pt("hybridep","combine","bf16","network",r,s,c,"hybridep")]
    return {"flex_backend": "deepep", "flex_sms": 20, "points": p}
def blackwell_network():
    """EP across NVLink domains on Blackwell: DeepEP V2's published SM100 EP8x2 figure (per
    rank) and, derived for the same 400 Gb/s NIC per GPU, DeepEP V1's node-basis RDMA
    figures and HybridEP's H100 InfiniBand table."""
    p = [pt("deepep","dispatch","fp8","network",16,12,90,"deepep-v2"),
         pt("deepep","combine","bf16","network",16,12,91,"deepep-v2")]
    for r,d,c in DEP_V1_RDMA:
        p += [pt("deepep","dispatch","fp8","network",r,24,d,"deepep-v1-cx7","node"),
              pt("deepep","combine","bf16","network",r,24,c,"deepep-v1-cx7","node")]
    for r,s,f8,b16,c in HEP_IB:
        p += [pt("hybridep","dispatch","fp8","network",r,s,f8,"hybridep-ib-cx7"),
              pt("hybridep","dispatch","bf16","network",r,s,b16,"hybridep-ib-cx7"),
              pt("hybridep","combine","bf16","network",r,s,c,"hybridep-ib-cx7")]
    return p
def b200():
    p = [pt("hybridep","dispatch","fp8","nvlink",8,16,409.71,"hybridep"),
         pt("hybridep","dispatch","bf16","nvlink",8,16,535.94,"hybridep"),
         pt("hybridep","combine","bf16","nvlink",8,16,530.86,"hybridep")]
    for s,f8,b16,c in [(16,246,348,302),(24,349,494,420),(32,443,619,524),(48,554,646,586)]:
        p += [pt("deepep","dispatch","fp8","nvlink",8,s,f8,"hybridep"),
              pt("deepep","dispatch","bf16","nvlink",8,s,b16,"hybridep"),
              pt("deepep","combine","bf16","nvlink",8,s,c,"hybridep")]
    p += blackwell_network()
    return {"flex_backend": "hybridep", "flex_sms": 16, "points": p}
def gb200():
    p = []
    for r,s,f8,b16,c in [(8,16,421.67,550.10,538.44),(8,32,455.35,545.71,568.94),(16,16,397.33,472.84,474.48),
                         (16,32,444.67,523.48,521.55),(24,16,281.73,441.89,444.40),(24,32,403.20,507.32,483.76),
                         (32,16,236.33,485.50,423.19),(32,32,392.70,484.22,464.54),(36,16,215.36,469.96,418.27),
                         (36,32,361.13,479.02,447.89)]:
        p += [pt("hybridep","dispatch","fp8","nvlink",r,s,f8,"hybridep"),
              pt("hybridep","dispatch","bf16","nvlink",r,s,b16,"hybridep"),
              pt("hybridep","combine","bf16","nvlink",r,s,c,"hybridep")]
    for r,s,f8,b16,c in [(8,16,248.86,362.01,310.21),(8,24,350.97,512.72,425.95),(8,32,447.76,615.78,519.57),
                         (16,16,242.51,328.80,278.34),(16,24,338.87,442.47,378.32),(16,32,393.72,520.76,442.51),
                         (24,16,258.33,324.64,126.53),(24,24,351.05,450.22,163.62),(24,32,405.04,502.84,207.10)]:
        p += [pt("deepep","dispatch","fp8","nvlink",r,s,f8,"hybridep"),
              pt("deepep","dispatch","bf16","nvlink",r,s,b16,"hybridep"),
              pt("deepep","combine","bf16","nvlink",r,s,c,"hybridep")]
    p += blackwell_network()
    return {"flex_backend": "hybridep", "flex_sms": 16, "points": p}
BUILDERS = {"dgx-h100": hopper, "dgx-h200": hopper, "dgx-b200": b200, "gb200-nvl72": gb200}


def add(prof):
    """Add (or replace) the section and its sources to profile dict `prof` (by its name);
    a source already listed gets the kind and citation of SRC."""
    fn = BUILDERS.get(prof["name"])
    if not fn:
        return
    sec = fn()
    have = {s["id"]: s for s in prof["sources"]}
    for u in sorted({q["source"] for q in sec["points"]}):
        if u in have:
            have[u]["kind"], have[u]["citation"] = SRC[u]
        else:
            prof["sources"].append({"id": u, "kind": SRC[u][0], "citation": SRC[u][1]})
    prof.pop("moe_dispatch", None)
    prof["moe_dispatch"] = sec
