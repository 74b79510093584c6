#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""megatune's CUPTI trace against torch.profiler's of the same program (scripts/gpu-campaign.sh).

Two runs of scripts/gpu/tinygpt.py: one under `megatune profile` (megatune.trace/1, steps as
NVTX ranges "step#N"), one with torch.profiler (Kineto, steps 10-15 as "ProfilerStep#N").
In each, the kernels launched inside steps 10-15 (by the launch's correlation id) are counted
and their durations summed, per kernel name and in all.  The tracer passes when both
count the same kernels and their busy times are within 5%.

Usage: cmp_traces.py MEGATUNE_TRACE.jsonl KINETO_TRACE.json
Prints the 12 costliest kernels side by side and a last line
"steps 10-15: kineto N kernels X us busy; megatune N kernels Y us busy (+Z%)"; exit 1 when
the counts differ or the busy times are more than 5% apart.
"""
import collections
import json
import re
import sys

STEPS = range(10, 16)


def within(t, wins):
    return any(a <= t <= b for a, b in wins)


def kineto(path):
    ev = json.load(open(path))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    wins = [(e["ts"], e["ts"] + e["dur"]) for e in ev
            if str(e.get("name", "")).startswith("ProfilerStep#") and "dur" in e
            and e.get("cat") == "user_annotation"  # not its GPU copy (gpu_user_annotation)
            and int(e["name"].split("#")[1]) in STEPS]
    launch = {e["args"]["correlation"]: e["ts"] for e in ev
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    out = collections.defaultdict(lambda: [0, 0.0])
    for e in ev:
        if e.get("cat") == "kernel" and within(launch.get(e.get("args", {}).get("correlation"), -1), wins):
            out[e["name"]][0] += 1
            out[e["name"]][1] += e["dur"]
    return out, len(wins)


def megatune(path):
    recs = [json.loads(l) for l in open(path) if l.strip()]
    wins = [(r["start"], r["end"]) for r in recs if r.get("t") == "nvtx"
            and re.match(r"step#(\d+)$", r.get("name", "")) and int(r["name"][5:]) in STEPS]
    launch = {r["corr"]: r["start"] for r in recs if r.get("t") in ("runtime", "driver")}
    out = collections.defaultdict(lambda: [0, 0.0])
    for r in recs:
        if r.get("t") == "kernel" and within(launch.get(r.get("corr"), -1), wins):
            out[r["name"]][0] += 1
            out[r["name"]][1] += (r["end"] - r["start"]) / 1e3
    return out, len(wins)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    m, nm = megatune(sys.argv[1])
    k, nk = kineto(sys.argv[2])
    print("steps found: megatune %d, kineto %d (want %d)" % (nm, nk, len(STEPS)))
    print("%8s %10s | %8s %10s   kernel (12 costliest in the Kineto trace)" % ("kineto", "us", "megatune", "us"))
    for name, (c, t) in sorted(k.items(), key=lambda x: -x[1][1])[:12]:
        mc = m.get(name, [0, 0.0])
        print("%8d %10.1f | %8d %10.1f   %s" % (c, t, mc[0], mc[1], name[:100]))
    kc, kt = sum(v[0] for v in k.values()), sum(v[1] for v in k.values())
    mc, mt = sum(v[0] for v in m.values()), sum(v[1] for v in m.values())
    diff = 100.0 * (mt - kt) / kt if kt else float("nan")
    print("steps 10-15: kineto %d kernels %.1f us busy; megatune %d kernels %.1f us busy (%+.2f%%)"
          % (kc, kt, mc, mt, diff))
    ok = nm == nk == len(STEPS) and kc > 0 and kc == mc and abs(mt - kt) <= 0.05 * kt
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
