#!/bin/sh
# SPDX-License-Identifier: MIT
# megatune validate end to end with the launcher stand-in
# (tests/validate/standin.sh), which replays the real excerpts of
# tests/fixtures/megatron-logs/: one run meets a success, an OOM, an NCCL
# timeout, a NaN, a hang, a crash and a run with no iteration line; every
# failure is named with its evidence line, the hang is killed by --timeout
# with nothing of its process group left, the candidates after the failures
# still run.  Then an interrupted validation (SIGINT) resumed with --resume
# loses nothing already measured and runs nothing twice.
# Usage: tests/cli/validate-standin.sh   (MEGATUNE: the binary)
set -u
cd "$(dirname "$0")/../.." || exit 2
M=${MEGATUNE:-build/megatune}
case $M in /*) ;; *) M=$PWD/$M ;; esac
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no $PY"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/tmp}/validate.XXXXXX") || exit 2
trap 'rm -rf "$t"' EXIT INT TERM
ADV=tests/fixtures/validate/advice-llama3-8b-16.json
TPL='sh tests/validate/standin.sh {name} {iters} {dir} {megatron_args}'
fail=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fail=1; }

# --- one run, every way a run ends
STANDIN_PLAN="c2=oom c3=nccl_timeout c4=nan c5=hang c6=crash c7=noiter" \
	"$M" validate --advice $ADV --top 8 --launch "$TPL" --dir "$t/a" --iters 12 --warmup 3 \
	--timeout 2 --kill-grace 0.5 -o "$t/a.json" --report "$t/a.html" >"$t/a.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "validate exits 0" || { bad "validate exit $rc"; cat "$t/a.out"; }
"$PY" - "$t/a.json" <<'PYEOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
want = {1: ("ok", None), 2: ("oom", "CUDA out of memory. Tried to allocate 786.00 MiB"),
        3: ("nccl_timeout", "Watchdog caught collective operation timeout"),
        4: ("nan", "iteration     3385/"), 5: ("hang", "iteration        3/"),
        6: ("exit", None), 7: ("no_iterations", None), 8: ("ok", None)}
bad = 0
def check(cond, what):
    global bad
    print(("ok - " if cond else "not ok - ") + what)
    bad |= not cond
check(d["schema"] == "megatune.validation/1", "schema")
for c in d["candidates"]:
    st, ev = want[c["predicted_rank"]]
    check(c["status"] == st, "%s is %s (got %s)" % (c["name"], st, c["status"]))
    if ev:
        check(c["evidence"] and ev in c["evidence"]["line"] and c["evidence"]["lineno"] > 0,
              "%s evidence names the line: %s" % (c["name"], ev))
        line = open(c["log"]).read().split("\n")[c["evidence"]["lineno"] - 1]
        check(line == c["evidence"]["line"], "%s evidence is line %d of its log" % (c["name"], c["evidence"]["lineno"]))
c6 = d["candidates"][5]
check("signal 11" in c6["reason"] or "exit status 139" in c6["reason"], "the crash gives its signal: " + c6["reason"])
c5 = d["candidates"][4]
check("--timeout" in c5["reason"] and c5["wall_s"] < 10, "the hang was killed by --timeout (%.1f s)" % c5["wall_s"])
m = d["candidates"][0]["measured"]
# stand-in: 3.0 * (1 + 0.25 (TP2 - 1)) * (1 + 0.02 / 4) = 3.76875 s, +-1 %
check(m["step_n"] == 9 and abs(m["step_s"] - 3.76875) < 0.04, "c1 median of 9 steady steps %.4f s" % m["step_s"])
check(abs(m["mem_max_allocated_gib"] - 7974.18994140625 / 1024) < 1e-3, "c1 worst-rank max allocated from the 4 unordered rank lines")
check(abs(m["tokens_per_s_per_gpu"] - 64 * 4096 / m["step_s"] / 8) < 1, "c1 tokens/s/GPU")
check(m["log_tflops_per_gpu"] is None and m["tflops_per_gpu"] > 0, "c1 TFLOP/s/GPU by megatune's count, none from the log")
s = d["summary"]
check(s["ok"] == 2 and s["failed"] == 6 and s["measured_ranking"][0].startswith("c8-"), "summary: 2 ok, 6 failed, c8 fastest")
check(s["kendall_tau"] is not None and s["mae_step"] > 0, "summary: tau and mean error")
sys.exit(bad)
PYEOF
pg=$(cat "$t/a/c5-tp1-pp1-cp2-mbs2-off6.pgid")
if pgrep -g "$pg" >/dev/null 2>&1 || kill -0 -"$pg" 2>/dev/null; then
	bad "processes of the hung run's group $pg are left: $(pgrep -g "$pg" | tr '\n' ' ')"
else
	ok "nothing of the hung run's process group $pg is left"
fi
n=$(wc -l <"$t/a/standin-runs")
[ "$n" -eq 8 ] && ok "all 8 candidates ran" || bad "$n candidates ran, 8 expected"
grep -q '<section id="validation">' "$t/a.html" && ok "--report writes the Validation section" || bad "no Validation section in the report"
grep -q 'oom, line 58: torch.cuda.OutOfMemoryError' "$t/a.out" && ok "progress names the OOM line" || bad "progress without the OOM line"

# --- the budget ends during the first run: it is killed, nothing else runs
STANDIN_SPEEDUP=2 "$M" validate --advice $ADV --top 3 --launch "$TPL" --dir "$t/d" \
	--iters 8 --warmup 2 --timeout 30 --kill-grace 0.5 --budget 0.03 -o "$t/d.json" >"$t/d.out" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "--budget: exit 1, nothing ran to the end" || bad "--budget: exit $rc, 1 expected"
"$PY" - "$t/d.json" <<'PYEOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
r = [(c["status"], c["reason"]) for c in d["candidates"]]
ok = r[0] == ("not_run", "the --budget ended during the run") and \
    all(x == ("not_run", "the --budget ended before the run") for x in r[1:])
print(("ok - " if ok else "not ok - ") + "--budget: the run in progress and the rest are not_run: %s" % r)
sys.exit(not ok)
PYEOF
n=$(wc -l <"$t/d/standin-runs")
pg=$(cat "$t/d/c1-tp2-pp1-mbs4.pgid")
[ "$n" -eq 1 ] && ! pgrep -g "$pg" >/dev/null 2>&1 && ok "--budget: one run started, its group is gone" ||
	bad "--budget: $n runs started, or group $pg left"

# --- interrupted, then resumed
STANDIN_SPEEDUP=10 "$M" validate --advice $ADV --top 4 --launch "$TPL" --dir "$t/b" \
	--iters 8 --warmup 2 --timeout 30 -o "$t/b.json" >"$t/b.out" 2>&1 &
pid=$!
i=0
while [ $i -lt 300 ]; do # until two candidates are written
	if [ -f "$t/b.json" ] && [ "$(grep -c '"status": "ok"' "$t/b.json")" -ge 2 ]; then break; fi
	sleep 0.1
	i=$((i + 1))
done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] && ok "SIGINT: exit 130" || bad "SIGINT: exit $rc, 130 expected"
grep -q 'run the same command with --resume' "$t/b.out" && ok "SIGINT: says how to go on" || bad "SIGINT: no hint"
cp "$t/b.json" "$t/b-interrupted.json"
"$M" validate --advice $ADV --top 4 --launch "$TPL" --dir "$t/b" --iters 8 --warmup 2 \
	--timeout 30 --resume -o "$t/b.json" >"$t/c.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "--resume exits 0" || { bad "--resume exit $rc"; cat "$t/c.out"; }
"$PY" - "$t/b-interrupted.json" "$t/b.json" "$t/b/standin-runs" <<'PYEOF' || fail=1
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
runs = open(sys.argv[3]).read().split()
bad = 0
def check(cond, what):
    global bad
    print(("ok - " if cond else "not ok - ") + what)
    bad |= not cond
done = [c for c in a["candidates"] if c["status"] == "ok"]
check(len(done) >= 2, "interrupted: %d measured candidates written" % len(done))
check(any(c["status"] == "not_run" for c in a["candidates"]), "interrupted: the rest are not_run")
for c in done:
    n = [x for x in b["candidates"] if x["name"] == c["name"]][0]
    check(n["measured"] == c["measured"] and n["wall_s"] == c["wall_s"], "resume keeps %s as measured" % c["name"])
    check(runs.count(c["name"]) == 1, "resume does not run %s again" % c["name"])
check(all(c["status"] == "ok" for c in b["candidates"]), "after resume every candidate is ok")
sys.exit(bad)
PYEOF
exit $fail
