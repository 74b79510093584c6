#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The Megatron-LM flag sets of a megatune.advice/1 document, one line per
candidate in check_args.py's input form:
    LABEL #RANK :: WORLD_SIZE=N CAPABILITY=X ENV=VALUE... FLAGS...
(the job's GPUs as the world size, the compute capability of the profile's
GPU, the candidate's environment, then its megatron_args, shell-quoted).

Usage: advice_sets.py LABEL ADVICE.json
"""
import json
import shlex
import sys


def main():
    label, path = sys.argv[1], sys.argv[2]
    d = json.load(open(path))
    gpu = d["cluster"]["gpu"]
    cap = "10.0" if "B200" in gpu or "B300" in gpu else "8.0" if "A100" in gpu else "9.0"
    for c in d["candidates"]:
        env = ["WORLD_SIZE=%d" % d["job"]["gpus"], "CAPABILITY=" + cap]
        env += ["%s=%s" % kv for kv in sorted(c.get("env", {}).items())]
        print("%s #%d :: %s" % (label, c["rank"], " ".join(map(shlex.quote, env + c["megatron_args"]))))


if __name__ == "__main__":
    main()
