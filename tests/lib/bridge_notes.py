# SPDX-License-Identifier: MIT
# A candidate of megatune.advice/1 as the Bridge overrides a user would run:
# its bridge_overrides, and the fields its bridge_notes say the recipe must
# set (the CommOverlapConfig field a recipe rejects, BF16 gradient reduction,
# the quantised weight gather, the precision-aware optimizer's dtypes).
# Imported by the round-trip tests (tests/cli/check-roundtrip.sh,
# tests/cli/precision-aware.sh) from the repository root.
import re


def overrides(c):
    out = list(c["bridge_overrides"])
    for note in c["bridge_notes"]:
        m = re.match(r"(comm_overlap\.[a-z_]+)=([a-z0-9]+): rejected where", note)
        if m:
            out.append("%s=%s" % m.groups())
        if note.startswith("gradients reduced in BF16"):
            out.append("mixed_precision.grad_reduce_in_fp32=false")
        m = re.match(r"weights all-gathered .*; in the recipe: "
                     r"cfg\.(mixed_precision\.[a-z0-9_]+) = (True|False)$", note)
        if m:
            out.append("%s=%s" % (m.group(1), m.group(2).lower()))
        m = re.search(r"in the recipe: cfg\.(optimizer\.[a-z_]+) = (torch\.[a-z0-9]+)$", note)
        if m:
            out.append("%s=%s" % m.groups())
    return out
