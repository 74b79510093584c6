#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Random pinned jobs for `megatune advise` (seeded, so a run is repeatable):
one line of arguments per job, over the bundled models and clusters, the
precisions and every knob a user can pin.  tests/cli/megatron-fuzz.sh runs
advise on each and gives what advise accepts to check_args.py.

Usage: random_pins.py [--seed N] [--count N]
"""
import argparse
import random

MODELS = [  # name, a sequence its positions allow
    ("llama3-8b", 8192), ("llama3-70b", 8192), ("llama3.1-405b", 8192),
    ("mixtral-8x7b", 4096), ("mixtral-8x22b", 4096), ("qwen3-30b-a3b", 4096),
    ("qwen3-235b-a22b", 4096), ("deepseek-v3", 4096), ("gpt3-175b", 2048),
]
CLUSTERS = ["dgx-h100", "dgx-h200", "dgx-a100-80g", "dgx-b200", "gb200-nvl72"]


def job(rng):
    model, seq = rng.choice(MODELS)
    cluster = rng.choice(CLUSTERS)
    per_node = 72 if cluster == "gb200-nvl72" else 8
    gpus = per_node * rng.choice([1, 2, 4, 8, 16, 32, 64])
    if model in ("deepseek-v3", "llama3.1-405b", "qwen3-235b-a22b") and gpus < 64:
        gpus = per_node * 16
    seq = rng.choice([seq, seq, seq * 2 if model.startswith("llama3") else seq])
    gbs = rng.choice([1, 2, 4]) * gpus
    args = ["--model", model, "--cluster", cluster, "--gpus", str(gpus), "--seq", str(seq),
            "--gbs", str(gbs)]
    if cluster != "dgx-a100-80g" and rng.random() < 0.3:
        args += ["--precision", "fp8"]
    pins = {
        "--tp": [1, 2, 4, 8], "--pp": [1, 2, 4, 8], "--vpp": [1, 2, 4], "--cp": [1, 2, 4],
        "--mbs": [1, 2], "--recompute": ["none", "selective", "full"],
        "--dist-opt": ["on", "off"], "--sequence-parallel": ["on", "off"],
        "--cp-comm": ["p2p", "all_gather", "a2a", "a2a+p2p"], "--offload-layers": [0, 2, 8],
    }
    if model in ("mixtral-8x7b", "mixtral-8x22b", "qwen3-30b-a3b", "qwen3-235b-a22b",
                 "deepseek-v3"):
        pins["--ep"] = [1, 2, 4, 8, 16]
        pins["--etp"] = [1, 2]
    for k in rng.sample(sorted(pins), rng.randint(1, 4)):
        args += [k, str(rng.choice(pins[k]))]
    return args


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--count", type=int, default=80)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    for _ in range(a.count):
        print(" ".join(job(rng)))


if __name__ == "__main__":
    main()
