#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A launcher stand-in for `megatune tune` tests whose step time is megatune's
own prediction with a known systematic offset and a deviation of its own per
candidate: it plays a Megatron-LM run of the candidate it is given.

Usage (as a --launch template):
  /usr/bin/python3 tests/validate/offset.py {advice} {rank} {iters} {dir} {name}

Step time of candidate cN:
  step_s = time.step_s of candidate N in the advice * OFFSET_FACTOR * deviation
with OFFSET_FACTOR (default 1.3) and the deviation of cN from OFFSET_DEV
("c1=1.05 c3=0.95"; a rank not listed: 1).  Iteration 1 takes 3 times the
step, later ones vary by +-0.5% around it (a fixed pattern, whose median is
the step).  It prints Megatron-LM's iteration lines and, after iteration 1,
its memory report.  It does not sleep.

What happens is chosen by the rank in OFFSET_PLAN ("c2=fail c4=cut"); a rank
not listed runs to the end:
  fail     two iterations, then a Python traceback on stderr, exit 1
  cut      every iteration, the last one cut mid-line (no newline), exit 0
  cutearly the first iteration whole, the second cut mid-line, exit 0
Each run appends "NAME" to DIR/offset-runs.
"""
import json
import os
import sys


def table(var):
    out = {}
    for item in var.split():
        key, _, value = item.partition("=")
        out[key] = value
    return out


def line(i, iters, ms):
    return (" [2026-11-28 01:41:%02d.000000] iteration %8d/%8d | consumed samples: %12d | "
            "elapsed time per iteration (ms): %.1f | learning rate: 9.166667E-05 | "
            "global batch size:    16 | lm loss: 1.057986E+01 | loss scale: 1.0 | "
            "grad norm: 6.720 | number of skipped iterations:   0 | "
            "number of nan iterations:   0 |" % (i % 60, i, iters, 16 * i, ms))


def main():
    advice, rank, iters, rundir, name = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        sys.argv[4], sys.argv[5]
    with open(os.path.join(rundir, "offset-runs"), "a") as f:
        f.write(name + "\n")
    cand = json.load(open(advice))["candidates"][rank - 1]
    dev = float(table(os.environ.get("OFFSET_DEV", "")).get("c%d" % rank, "1"))
    step = cand["time"]["step_s"] * float(os.environ.get("OFFSET_FACTOR", "1.3")) * dev
    what = table(os.environ.get("OFFSET_PLAN", "")).get("c%d" % rank, "ok")
    out = sys.stdout
    out.write("[before the start of training step] datetime: 2026-11-28 01:41:40.028116\n")
    pattern = [0.0, 0.005, -0.005, 0.003, -0.003]
    for i in range(1, iters + 1):
        ms = 1000 * step * (3.0 if i == 1 else 1 + pattern[i % 5])
        text = line(i, iters, ms)
        if (what == "cut" and i == iters) or (what == "cutearly" and i == 2):
            out.write(text[:len(text) // 2])  # cut mid-line, no newline
            out.flush()
            return 0
        out.write(text + "\n")
        if i == 1:
            mb = cand["memory"]["total_bytes"] / 2**20
            out.write("[Rank 0] (after 1 iterations) memory (MB) | allocated: %.1f | "
                      "max allocated: %.1f | reserved: %.1f | max reserved: %.1f\n"
                      % (mb / 4, mb * 0.95, mb, mb))
        if what == "fail" and i == 2:
            out.flush()
            sys.stderr.write("Traceback (most recent call last):\n"
                             "  File \"pretrain_gpt.py\", line 1, in <module>\n"
                             "RuntimeError: the stand-in fails here as asked (OFFSET_PLAN)\n")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
