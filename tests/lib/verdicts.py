#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# How many metrics of a megatune.comparison/1 document have a verdict, optionally of one
# probe (metric ids start "PROBE|"); with "metrics" instead of a verdict, how many in all.
# Usage: verdicts.py COMPARISON.json VERDICT|metrics [PROBE]
import json
import sys

d = json.load(open(sys.argv[1]))
want = sys.argv[2]
probe = sys.argv[3] + "|" if len(sys.argv) > 3 else ""
print(sum(1 for m in d["metrics"]
          if (want == "metrics" or m["verdict"] == want) and m["id"].startswith(probe)))
