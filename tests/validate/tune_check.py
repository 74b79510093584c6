#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The checks of tests/cli/tune-correct.sh on what `megatune tune --runs` wrote
with the launcher stand-in tests/validate/offset.py, whose step is the
advice's prediction x 1.3 x the candidate's deviation in OFFSET_DEV (read here
from the same variable).  Prints one "ok - " or "not ok - " line per check;
exit 1 when one failed.

Usage:
  tune_check.py one   ADVICE VALIDATION CORRECTED-ADVICE CALIBRATE-OUTPUT TUNE-OUTPUT all|some
  tune_check.py three VALIDATION TUNE-OUTPUT RUNS-FILE best|any
  tune_check.py bad   VALIDATION TUNE-OUTPUT EXIT-CODE
"""
import json
import os
import re
import sys

failed = 0
DEV = dict(kv.split("=") for kv in os.environ.get("OFFSET_DEV", "").split())


def check(cond, what):
    global failed
    print(("ok - " if cond else "not ok - ") + what)
    failed |= not cond


def deviation(cand):
    return float(DEV.get(cand["name"].split("-")[0], "1"))


def truth(cand):
    """the stand-in's step for a candidate of the validation"""
    return cand["predicted"]["step_s"] * 1.3 * deviation(cand)


def config_key(cfg):
    return (cfg["mbs"], cfg["recompute"], cfg.get("recompute_layers"),
            tuple(cfg.get("recompute_modules") or []))


def one(adv_file, val_file, cadv_file, cal_file, out_file, kinds):
    """after one run: the correction against the stand-in and against calibrate's; the
    list has every recompute kind (kinds "all") or two of them"""
    adv, val, cadv = (json.load(open(f)) for f in (adv_file, val_file, cadv_file))
    cal, out = open(cal_file).read(), open(out_file).read()
    cfgs = [c["config"] for c in adv["candidates"]]
    rc = {c["recompute"] for c in cfgs}
    check(len(cfgs) == 6 and len({c["mbs"] for c in cfgs}) >= 2 and
          ({"none", "selective", "full"} <= rc if kinds == "all" else len(rc) >= 2),
          "the list differs in micro-batch (%s) and in recompute (%s)"
          % (" ".join(sorted({str(c["mbs"]) for c in cfgs})), " ".join(sorted(rc))))
    t = val["tune"]
    check(t["runs"] == 1 and "from 1 run" in t["correction"], "one run, the correction from it")
    ran = [c for c in val["candidates"] if c["status"] != "not_run"]
    check(len(ran) == 1 and ran[0]["name"].startswith("c1-"), "the first run is the predicted best")
    on_corrected = {config_key(c["config"]): c["time"]["step_s"] for c in cadv["candidates"]}
    for r in t["ranking_corrected"]:
        if r["name"] == ran[0]["name"]:
            continue
        c = next(c for c in val["candidates"] if c["name"] == r["name"])
        e_u = truth(c) / r["predicted_step_s"] - 1
        e_c = truth(c) / r["corrected_step_s"] - 1
        check(0.2 < e_u < 0.4 and abs(e_c) < 0.10,
              "%s: uncorrected %+.1f%%, corrected from the first run %+.1f%% off the stand-in"
              % (r["name"], 100 * e_u, 100 * e_c))
        # what is left past the two candidates' own deviations: the offset not recovered
        left = (1 + e_c) / (deviation(c) / deviation(ran[0])) - 1
        check(abs(left) < 0.03, "%s: the 1.3 offset recovered within %.1f%% past the deviations"
              % (r["name"], 100 * abs(left)))
        a = on_corrected.get(config_key(c["config"]))
        check(a is not None and abs(a / r["corrected_step_s"] - 1) < 1e-3,
              "%s: tune's corrected %.5f s is advise's on calibrate's profile (%s)"
              % (r["name"], r["corrected_step_s"], a))
    m = re.search(r"^fitted \(least squares over 1 run\): (\S+) x([\d.]+)", cal, re.M)
    check(m and ("%s x%s" % (m.group(1), m.group(2))) in t["correction"],
          "the factor calibrate fits (%s) is tune's" % (m and m.group(0)))
    check(re.search(r"^  correction: calibrate --from-validation's factors from 1 run: ", out, re.M),
          "tune prints the correction")


def later_run(c, out):
    """a run after the first: its errors, in the document and the output"""
    tu, p, m = c["tune"], c["predicted"]["step_s"], c["measured"]["step_s"]
    e_u, e_c = m / p - 1, m / tu["corrected_step_s"] - 1
    check(tu["fitted_from_runs"] == tu["run"] - 1, "run %d corrected from the %d before it"
          % (tu["run"], tu["fitted_from_runs"]))
    check(0.2 < e_u < 0.4 and abs(e_c) < 0.10 and abs(tu["rel_error_corrected"] - e_c) < 1e-3,
          "run %d %s: error %+.1f%% uncorrected, %+.1f%% corrected"
          % (tu["run"], c["name"], 100 * e_u, 100 * e_c))
    line = re.search(r"^  run %d: predicted ([\d.]+) s, corrected ([\d.]+) s \(from %d runs?\), "
                     r"measured ([\d.]+) s: error ([-+][\d.]+)%% uncorrected, ([-+][\d.]+)%% "
                     r"corrected$" % (tu["run"], tu["fitted_from_runs"]), out, re.M)
    check(line and abs(float(line.group(2)) / tu["corrected_step_s"] - 1) < 1e-3 and
          abs(float(line.group(4)) - 100 * e_u) < 0.06 and
          abs(float(line.group(5)) - 100 * e_c) < 0.06,
          "run %d printed with both predictions, the measurement and both errors" % tu["run"])
    row = re.search(r"^ +%d  %s +[\d.]+ +[\d.]+ +[\d.]+ +[-+][\d.]+%% +[-+][\d.]+%%  ok$"
                    % (tu["run"], re.escape(c["name"])), out, re.M)
    check(row is not None, "run %d in the table of runs" % tu["run"])


def three(val_file, out_file, runs_file, best_wanted):
    """three runs: each after the first, the best (with "best": the stand-in's best of the
    whole list, which its deviations put among the three best corrected), the ranking"""
    val, out = json.load(open(val_file)), open(out_file).read()
    runs = open(runs_file).read().split()
    cands = val["candidates"]
    steps = {c["name"]: truth(c) for c in cands}
    check(len(runs) == 3 and len(set(runs)) == 3, "three runs, none twice: %s" % " ".join(runs))
    ran = sorted((c for c in cands if c.get("tune")), key=lambda c: c["tune"]["run"])
    check([c["tune"]["run"] for c in ran] == [1, 2, 3] and [c["name"] for c in ran] == runs,
          "each run's place recorded in the order made")
    check(ran[0]["tune"]["corrected_step_s"] is None and ran[0]["tune"]["fitted_from_runs"] == 0,
          "the first run has no correction")
    for c in ran:
        check(abs(c["measured"]["step_s"] / steps[c["name"]] - 1) < 0.01,
              "%s measured %.4f s, the stand-in's %.4f s"
              % (c["name"], c["measured"]["step_s"], steps[c["name"]]))
    for c in ran[1:]:
        later_run(c, out)
    nexts = re.findall(r"^  not run yet, by the corrected step: (\S+) ", out, re.M)
    check(nexts[:2] == [c["name"] for c in ran[1:]],
          "each run after the first is the fastest by the corrected step: %s" % " ".join(nexts[:2]))
    best = min(steps, key=steps.get)
    t = val["tune"]
    if best_wanted == "best":
        check(not best.startswith("c1-"), "the stand-in's best %s is not the predicted top" % best)
        check(t["best"] == best and val["summary"]["measured_ranking"][0] == best,
              "the best of the whole list found: %s" % t["best"])
    best = min((c["name"] for c in ran), key=lambda n: steps[n])
    check(t["best"] == best, "the best of the runs: %s" % t["best"])
    check(1 <= t["best_run"] <= 3 and
          re.search(r"^best of the runs: run %d of 3, %s, " % (t["best_run"], re.escape(best)),
                    out, re.M) and
          re.search(r"^measured best: %s, .*; run %d\)$" % (re.escape(best), t["best_run"]),
                    out, re.M),
          "tune names the best and its run (%d)" % t["best_run"])
    order_u = t["ranking_uncorrected"]
    order_c = [r["name"] for r in t["ranking_corrected"]]
    check(t["ranking_changed"] == (order_u != order_c) and sorted(order_u) == sorted(order_c),
          "ranking_changed is %s as the two orders say" % t["ranking_changed"])
    said = re.search(r"^ranking by the step, (changed|unchanged) by the correction: "
                     r"uncorrected (.*); corrected (.*)$", out, re.M)
    words = lambda names: " ".join(n.split("-")[0] for n in names)
    check(said and (said.group(1) == "changed") == t["ranking_changed"] and
          said.group(2) == words(order_u) and said.group(3) == words(order_c),
          "the text says whether the correction reorders the list")
    check(re.search(r"stopped: the runs --runs asked for were made$", out, re.M),
          "it stops at 3 runs")


def failures(val_file, out_file, rc):
    """a failed run, a cut log, one cut before a steady step"""
    val, out, rc = json.load(open(val_file)), open(out_file).read(), int(rc)
    c = {x["name"].split("-")[0]: x for x in val["candidates"]}
    check(rc == 0, "a failed run, a cut log: exit %d (0 expected)" % rc)
    check(c["c1"]["status"] == "exit" and "RuntimeError" in c["c1"]["evidence"]["line"] and
          re.search(r"^\[1/6\] c1-\S+: exit, line \d+: RuntimeError: .*; exit status 1$", out,
                    re.M),
          "the launcher's failure: status exit, its error line and exit status said")
    check(c["c2"]["status"] == "ok" and "log cut: line" in (c["c2"]["reason"] or "") and
          re.search(r"^\[2/6\] c2-\S+: ok, step .*; log cut: line \d+ ends mid-line; its step "
                    r"is not counted$", out, re.M) and c["c2"]["measured"]["step_n"] == 6,
          "a log cut mid-line: ok, the cut line named and its step not counted")
    check(c["c2"]["tune"]["fitted_from_runs"] == 0 and c["c2"]["tune"]["corrected_step_s"] is None,
          "no correction before a run ended ok")
    check(c["c3"]["status"] == "no_iterations" and "log cut: line" in c["c3"]["reason"],
          "a log cut before a steady step: no_iterations, the cut named")
    check(c["c4"]["tune"]["fitted_from_runs"] == 1 and
          abs(c["c4"]["tune"]["rel_error_corrected"]) < 0.1,
          "the correction comes from the one run that ended ok")


if __name__ == "__main__":
    {"one": one, "three": three, "bad": failures}[sys.argv[1]](*sys.argv[2:])
    sys.exit(failed)
