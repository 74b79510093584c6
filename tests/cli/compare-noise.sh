#!/bin/sh
# SPDX-License-Identifier: MIT
# The statistics of `megatune compare` on results whose noise is known: 10 pairs of
# synthetic probe results (40 metrics each, 24 samples per metric, log-normal noise of 3%
# within a run, drawn from a fixed seed) compared at the default tolerance give at most one
# `regressed` metric in all; the same pairs with a 10% slowdown of one probe's samples in
# the current run are flagged every time.  Deterministic, unlike repeated calibrations of a
# shared machine (bench/compare-calibrate.sh, part of make bench).  Prints the rates.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
BUILD=${BUILD:-build}
MT=$(pwd)/$BUILD/megatune
T=$(mktemp -d "${TMPDIR:-/tmp}/compare-noise.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT

/usr/bin/python3 - "$T" <<'PYEOF' || { echo "not ok - generating the results"; exit 1; }
import json, math, random, sys
out = sys.argv[1]
rng = random.Random(20261123)
head = {"schema": "megatune.result/1", "kind": "run", "megatune": "0.1.0",
        "started": "2026-11-23T00:00:00Z", "argv": ["megatune", "calibrate"], "host": "synthetic",
        "os": "Linux", "backend": "cpu", "depth": "quick",
        "world": {"ranks": 1, "nodes": 1, "ranks_per_node": 1, "mpi": False}}
probes = [("gemm", "fp32 %dx%dx%d" % (s, s, s), 100.0 * s)
          for s in (64, 128, 256, 512, 768, 1024, 1536, 2048)]
probes += [("host", "triad %d MiB" % s, 400.0 * s) for s in (8, 16, 32, 64, 96, 128, 192, 256)]
probes += [("collective", "all_reduce %d" % s, 20.0 + s / 1e3)
           for s in (4096, 65536, 262144, 1048576, 4194304, 8388608, 16777216, 33554432)]
probes += [("attention", "fwd s%d" % s, 5.0 * s)
           for s in (256, 512, 1024, 2048, 4096, 6144, 8192, 16384)]
probes += [("offload", "h2d %d MiB" % s, 80.0 * s) for s in (1, 4, 16, 64, 128, 256, 512, 1024)]


def run(path, slow=None):
    with open(path, "w") as f:
        f.write(json.dumps(head) + "\n")
        for probe, label, base in probes:
            k = 1.10 if probe == slow else 1.0
            s = sorted(base * k * math.exp(rng.gauss(0, 0.03)) for _ in range(24))
            med = s[len(s) // 2]
            f.write(json.dumps({"probe": probe, "backend": "cpu", "label": label,
                                "origin": "sweep", "rank": 0, "host": "synthetic", "device": 0,
                                "case": {}, "time_us": {"n": len(s), "median": med,
                                                        "min": s[0], "max": s[-1]},
                                "samples_us": s, "verified": "yes"}) + "\n")


for i in range(1, 11):
    run("%s/a%d.jsonl" % (out, i))
    run("%s/b%d.jsonl" % (out, i))
    run("%s/s%d.jsonl" % (out, i), slow="host")
PYEOF

count() { # comparison verdict [probe]: how many metrics
	/usr/bin/python3 "$ROOT/tests/lib/verdicts.py" "$@"
}

fa=0 caught=0 hostf=0 metrics=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$MT" compare "$T/a$i.jsonl" "$T/b$i.jsonl" --json "$T/c$i.json" >/dev/null 2>&1
	[ $? -le 1 ] || { echo "not ok - compare pair $i"; exit 1; }
	fa=$((fa + $(count "$T/c$i.json" regressed)))
	metrics=$((metrics + $(count "$T/c$i.json" metrics)))
	"$MT" compare "$T/a$i.jsonl" "$T/s$i.jsonl" --json "$T/s$i.json" >/dev/null 2>&1
	[ $? -eq 1 ] || { echo "not ok - the slowed pair $i: exit status, expected 1"; exit 1; }
	h=$(count "$T/s$i.json" regressed host)
	hostf=$((hostf + h))
	# flagged on the slowed probe: some of its metrics regressed, none unchanged, no other
	# probe's regressed
	[ "$h" -ge 1 ] && [ "$(count "$T/s$i.json" unchanged host)" -eq 0 ] &&
		[ "$(count "$T/s$i.json" regressed)" -eq "$h" ] && caught=$((caught + 1))
done
echo "false alarms: $fa regressed of $metrics metrics in 10 pairs (at most 1 allowed)"
echo "10% slowdown of one probe: flagged in $caught of 10 pairs ($hostf of its 80 metrics regressed, the others inconclusive)"
[ "$metrics" -eq 400 ] || { echo "not ok - $metrics metrics compared, expected 400"; exit 1; }
[ "$fa" -le 1 ] || { echo "not ok - $fa false alarms"; exit 1; }
[ "$caught" -eq 10 ] || { echo "not ok - slowdown missed in $((10 - caught)) pairs"; exit 1; }
echo "ok - at most one false alarm, every injected slowdown flagged"
