#!/bin/sh
# SPDX-License-Identifier: MIT
# advise and estimate time Megatron-LM's own layers as the GPU campaign ran them
# (docs/MODEL.md 4.11; tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/megatron-logs,
# --transformer-impl local with every --no-*-fusion flag on one H100):
#   - estimate of c1 and c2, their settings read from the logs' arguments blocks, with
#     --transformer-impl local and the fusions the runs turned off, predicts each measured
#     step within 20% (|measured / predicted - 1|) on the campaign's calibrated profile
#     and on the bundled dgx-h100, and gives the step `check` predicts of the same log
#     (to 1e-6): advise agrees with check;
#   - advise with the campaign's options (scripts/gpu-campaign.sh mlm_advice:
#     MLM_ADVISE_LOCAL) ranks c1's and c2's configurations with the same steps;
#   - without --transformer-impl local the same job is timed as Transformer Engine's
#     layers and misses the runs by more than 20%, the error the campaign's first tune
#     made (megatron.out: +150% and +176%).
# Exit 0 pass, other fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
MT=${MEGATUNE:-${BUILD:-build}/megatune}
G=tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2
MODEL=tests/fixtures/models/campaign-llama-350m.json
T=$(mktemp -d "${TMPDIR:-/tmp}/advise-local.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
ADVISE_LOCAL=$(sed -n '/^MLM_ADVISE_LOCAL="/,/"$/p' scripts/gpu-campaign.sh | tr -d '\\\n' |
	sed 's/^MLM_ADVISE_LOCAL="//; s/"$//')
[ -n "$ADVISE_LOCAL" ] || { echo "FAIL: no MLM_ADVISE_LOCAL in scripts/gpu-campaign.sh"; exit 1; }

# pins LOG: estimate's options for the job of a log's arguments block (the fields
# Megatron-LM prints at the end of validate_args), the layers and fusions included
pins() {
	/usr/bin/python3 - "$1" <<'PYEOF'
import re, sys
f = {}
for ln in open(sys.argv[1], errors="replace"):
    m = re.match(r"^  (\w+) \.+ (.*)$", ln.rstrip("\n"))
    if m:
        f[m.group(1)] = m.group(2)
onoff = lambda k: "on" if f[k] == "True" else "off"
o = ["--gpus", f["world_size"], "--seq", f["seq_length"], "--gbs", f["global_batch_size"],
     "--mbs", f["micro_batch_size"], "--tp", f["tensor_model_parallel_size"],
     "--pp", f["pipeline_model_parallel_size"], "--cp", f["context_parallel_size"],
     "--dist-opt", onoff("use_distributed_optimizer"),
     "--overlap-grad-reduce", onoff("overlap_grad_reduce"),
     "--overlap-param-gather", onoff("overlap_param_gather"),
     "--bucket-size", f["ddp_bucket_size"], "--ce-fusion", onoff("cross_entropy_loss_fusion"),
     "--recompute", "none" if f["recompute_granularity"] == "None" else f["recompute_granularity"],
     "--transformer-impl", f["transformer_impl"],
     "--grad-accum-fusion", onoff("gradient_accumulation_fusion")]
off = [n for n, k in (("masked_softmax", "masked_softmax_fusion"), ("bias_activation", "bias_swiglu_fusion"),
                      ("bias_dropout", "bias_dropout_fusion"), ("rope", "apply_rope_fusion"))
       if f[k] == "False"]
if off:
    o += ["--fusions-off", ",".join(off)]
print(" ".join(o))
PYEOF
}

# agree EST.json CHECK.json LIMIT NAME: estimate's step against check's of the same log and
# the measured one; prints the figures
agree() {
	/usr/bin/python3 - "$@" <<'PYEOF'
import json, sys
e = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
est = (e["candidates"][0] if "candidates" in e else e)["time"]["step_s"]
m = c["measured"]
err = m["step_s"] / est - 1
same = abs(est - m["predicted_step_s"]) <= 1e-6 * est
ok = abs(err) <= float(sys.argv[3]) and same
print("%s%s: step %.3f s measured, %.4f s estimated (%+.1f%%), check predicts %.4f s" %
      ("" if ok else "FAIL: ", sys.argv[4], m["step_s"], est, 100 * err, m["predicted_step_s"]))
sys.exit(0 if ok else 1)
PYEOF
}

for p in "$G/calibrated.json" dgx-h100; do
	n=$(basename "$p" .json)
	for c in c1-tp1-pp1-mbs16 c2-tp1-pp1-mbs8; do
		log=$G/megatron-logs/$c.log
		# shellcheck disable=SC2046
		"$MT" estimate --model "$MODEL" --cluster "$p" $(pins "$log") --format json \
			>"$T/$c-$n.est.json" 2>"$T/err" ||
			{ echo "FAIL: estimate $c on $n: exit $?: $(head -3 "$T/err")"; fail=1; continue; }
		"$MT" check "$log" --cluster "$p" --json "$T/$c-$n.check.json" >/dev/null 2>"$T/err" ||
			{ echo "FAIL: check $c on $n: exit $?: $(head -3 "$T/err")"; fail=1; continue; }
		agree "$T/$c-$n.est.json" "$T/$c-$n.check.json" 0.20 "estimate $c on $n" || fail=1
		# the same model as the log's flags
		/usr/bin/python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["model"]; b = json.load(open(sys.argv[2]))["as_is"]["model"]
sys.exit(a["params_total"] != b["params_total"] or a["layers"] != b["layers"])' \
			"$T/$c-$n.est.json" "$T/$c-$n.check.json" ||
			{ echo "FAIL: $MODEL is not the model of $c's flags"; fail=1; }
		# Transformer Engine's layers: the uncorrected error the campaign met
		# shellcheck disable=SC2046
		"$MT" estimate --model "$MODEL" --cluster "$p" $(pins "$log" |
			sed 's/--transformer-impl local//; s/--fusions-off [a-z_,]*//') \
			--attention unfused --format json >"$T/$c-$n.te.json" 2>/dev/null &&
			! agree "$T/$c-$n.te.json" "$T/$c-$n.check.json" 0.20 "as Transformer Engine's layers" \
				>/dev/null ||
			{ echo "FAIL: $c on $n: Transformer Engine's layers predict it within 20% too"; fail=1; }
	done
	# advise as the campaign runs it: c1's and c2's configurations among its ranking
	# shellcheck disable=SC2086
	"$MT" advise --model "$MODEL" --cluster "$p" --gpus 1 --seq 1024 --gbs 16 --dist-opt off \
		$ADVISE_LOCAL --full-iteration-graphs off --top 6 --no-fold --json "$T/$n.advice.json" \
		>/dev/null 2>"$T/err" || { echo "FAIL: advise on $n: exit $?: $(head -3 "$T/err")"; fail=1; continue; }
	for c in c1-tp1-pp1-mbs16:16 c2-tp1-pp1-mbs8:8; do
		/usr/bin/python3 - "$T/$n.advice.json" "${c#*:}" "$T/${c%:*}-$n.cand.json" <<'PYEOF' ||
import json, sys
d = json.load(open(sys.argv[1]))
want = [x for x in d["candidates"] if x["config"]["mbs"] == int(sys.argv[2]) and
        x["config"]["recompute"] == "none" and not x["config"]["full_iteration_graphs"]]
if not want or d["job"].get("transformer_impl") != "local":
    sys.exit(1)
json.dump(want[0], open(sys.argv[3], "w"))
PYEOF
			{ echo "FAIL: advise on $n does not rank ${c%:*}'s configuration on local layers"; fail=1; continue; }
		agree "$T/${c%:*}-$n.cand.json" "$T/${c%:*}-$n.check.json" 0.20 "advise ${c%:*} on $n" ||
			fail=1
	done
done
[ $fail -eq 0 ] || exit 1
echo "ok: advise and estimate of the campaign's c1 and c2 on Megatron-LM's own layers predict the measured steps within 20% and agree with check"
