#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/gpu-campaign.sh on a machine without a GPU runs to its summary: every GPU phase
# is reported "no-GPU" with the reason, the phases that need none (env, megatron-args: the
# 6 candidates the megatron phase tunes, timed as Megatron-LM's own layers with the fusions the
# runs turn off, through Megatron-LM's own argument checks) pass,
# nothing fails or runs out of time, and the three files come back in OUT.  With only GPU
# phases selected (PHASES=megatron) it exits 77 saying why each could not run.  Its Python
# helpers parse.  With the bundle when tests/cli/gpu-bundle.sh made one, else the build
# folder.
# Exit 0 pass, 77 skip, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
[ -x "$BUILD/megatune" ] || { echo "no $BUILD/megatune"; exit 77; }
command -v bash >/dev/null || { echo "no bash"; exit 77; }
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
	echo "a GPU is here: the campaign is run by hand (it measures for minutes)"
	exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/gpu-campaign.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" -c 'import ast, sys
for f in sys.argv[1:]:
    ast.parse(open(f).read(), f)' scripts/gpu/*.py || bad "a Python helper does not parse"
bash -n scripts/gpu-campaign.sh || bad "scripts/gpu-campaign.sh does not parse"

B=$BUILD/gpu-bundle.tar.xz
[ -f "$B" ] || B=$BUILD
OUT=$T/out BUNDLE=$B DEADLINE=300 bash scripts/gpu-campaign.sh >"$T/run.log" 2>&1
rc=$?
S=$T/out/summary.txt
[ $rc -eq 0 ] || bad "gpu-campaign.sh exited $rc"
[ -s "$S" ] || { tail -30 "$T/run.log"; echo "FAIL: no summary"; exit 1; }
for p in gpu-trace-check gpu-probes calibrate torch-ref tinygpt-plain tinygpt-cupti tinygpt-kineto \
	analyze-cupti analyze-kineto compare-traces proxy-validate megatron megatron-traced \
	megatron-kineto sustain host-cost; do
	grep -Eq "^$p +no-GPU " "$S" || bad "phase $p is not reported no-GPU: $(grep "^$p " "$S")"
done
for p in env megatron-args; do
	grep -Eq "^$p +ok " "$S" || bad "phase $p did not pass: $(grep "^$p " "$S")"
done
grep -Eq '^megatron-args +ok .*# 6 flag sets, 0 failed' "$S" || bad "megatron-args did not check 6 flag sets"
grep -Eq ' (FAIL|TIMEOUT|NO-TIME|SKIP-77)' "$S" && bad "a phase failed: $(grep -E ' (FAIL|TIMEOUT|NO-TIME|SKIP-77)' "$S")"
grep -q '^total .* 0 phase(s) failed' "$S" || bad "the summary does not end with its total"
for f in summary.txt campaign.log campaign.tgz; do
	[ -s "$T/out/$f" ] || bad "no $f in OUT"
done
tar -tzf "$T/out/campaign.tgz" 2>/dev/null | grep -q 'results/mlm-flagsets.txt' ||
	bad "campaign.tgz lacks results/mlm-flagsets.txt"
# the advice the tune starts from times the layers the runs use: Megatron-LM's own, every
# fusion of MLM_LOCAL off (its uncorrected predictions are for those)
tar -xzOf "$T/out/campaign.tgz" results/mlm-advice.json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)["job"]
sys.exit(not (j.get("transformer_impl") == "local" and not j["gradient_accumulation_fusion"] and
              sorted(j.get("fusions_off", [])) == ["bias_activation", "bias_dropout", "masked_softmax", "rope"]))' ||
	bad "the campaign's advice is not for Megatron-LM's own layers with the fusions of MLM_LOCAL off"
# the tune's list: micro-batch and recompute none, selective and full
for want in '-mbs16 ' '-mbs8 ' '-rcfull ' '-rcsele '; do
	tar -xzOf "$T/out/campaign.tgz" results/mlm-flagsets.txt 2>/dev/null | grep -q -- "$want" ||
		bad "the flag sets checked lack a candidate named *$want"
done

# only a phase that needs a GPU: exit 77 and the reason, the summary all the same
OUT=$T/out2 BUNDLE=$B DEADLINE=120 PHASES=megatron bash scripts/gpu-campaign.sh >"$T/run2.log" 2>&1
rc=$?
[ $rc -eq 77 ] || bad "PHASES=megatron without a GPU exited $rc (77 expected)"
grep -Eq '^  megatron no-GPU: (no nvidia-smi|nvidia-smi lists no GPU)$' "$T/run2.log" &&
	grep -q 'none of the phases selected (megatron) could run here' "$T/run2.log" ||
	bad "PHASES=megatron without a GPU does not say why: $(tail -5 "$T/run2.log")"
grep -Eq '^megatron +no-GPU ' "$T/out2/summary.txt" || bad "PHASES=megatron: no summary line"
[ $fail -eq 0 ] && cat "$S"
[ $fail -eq 0 ] || tail -40 "$T/run.log"
exit $fail
