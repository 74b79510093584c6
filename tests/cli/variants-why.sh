#!/bin/sh
# SPDX-License-Identifier: MIT
# The ranking says what it did (docs/MODEL.md 7.1, 8.1): the text states the
# order; every folded variant faster or lighter than its layout's pick says
# why it ranks after it, in the text and the JSON, and what it says holds of
# the numbers; a selective variant names its modules.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
TEST=variants
. tests/lib/clitest.sh
JOB="--model llama3-70b --gpus 64 --seq 8192 --gbs 128"

# shellcheck disable=SC2086
"$M" advise $JOB >"$T/a.txt" 2>&1 || no "advise exits $?"
# shellcheck disable=SC2086
"$M" advise $JOB --format json >"$T/a.json" 2>"$T/a.err" || no "advise --format json exits $?"
grep -q "^order: the step plus each candidate's own uncertainty (docs/MODEL.md 8.1)" "$T/a.txt" &&
	ok "the text states the order" || no "the text states the order: $(sed -n 8,16p "$T/a.txt")"
grep -q -- "--recompute selective --recompute-modules core_attn:" "$T/a.txt" &&
	ok "a selective variant names its modules" || no "a selective variant names its modules"
"$PY" - "$T/a.json" "$T/a.txt" >"$T/out" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
n = 0
for c in d["candidates"]:
    step, mem = c["time"]["step_s"], c["memory"]["total_bytes"]
    key = step + c["band"]["own_hi_s"]
    for v in c["variants"]:
        faster = v["step_s"] < step
        lighter = v["peak_bytes"] < mem - 0.05 * 2**30
        why = v.get("why_after")
        assert (why is not None) == (faster or lighter), (c["rank"], v)
        if why is None:
            continue
        n += 1
        assert why in text, why                      # the text says it too
        if faster:   # ranked after on the key: the key is at least the pick's
            assert v["rank_key_s"] >= key - 1e-6, (v, key)
            assert why.startswith("faster"), why
        elif mem <= 0.95 * d["search"]["capacity_bytes"]:
            # lighter and slower: the pick leaves headroom anyway
            assert "memory counts in the ranking only above 95%" in why, why
        else:        # a pick on the limit: only the first pick yields to headroom
            assert "headroom moves the first pick alone" in why, why
            assert c["rank"] > 1 or not d["search"]["headroom_pick"], (c["rank"], why)
        if "selective" in json.dumps(v["differs"]):
            assert "recompute_modules" in v["differs"], v
assert n > 0, "no variant faster or lighter than its pick: the case no longer tests it"
print("%d variants say why they rank after their pick" % n)
PY
if [ $? -eq 0 ]; then ok "$(cat "$T/out")"; else no "variants' reasons"; cat "$T/out"; fi
exit $fail
