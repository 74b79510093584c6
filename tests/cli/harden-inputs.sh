#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile and damaged inputs: refused with exit 2 naming the file and the
# field, never read as a silently wrong answer.
#  - numbers: nan, inf, 1e400 refused by every numeric option (one reader,
#    lib/num.h); 1e308 or a 309-digit number in a JSON input refused naming
#    the field (report, rules check, advise);
#  - terminal escape sequences and invalid UTF-8 in names: refused or shown
#    escaped, never sent raw to the terminal;
#  - duplicate JSON keys refused naming the key (model, Hugging Face config,
#    profile, facts);
#  - a Llama config.json without intermediate_size refused;
#    --recompute-layers above the layer count refused;
#  - a rule SET of a value the knob does not take and an ARG holding shell
#    metacharacters refused by the compiler and by `rules lint`; a value from
#    an input file is shell-quoted in the printed flags;
#  - typos: a key megatune does not read that resembles one it reads (a
#    Hugging Face config's, a megatune model's, a Bridge YAML's, a launch
#    script's flag) named with the key it resembles, a warning, and under
#    --strict an error (exit 2).
# Prints "ok - " / "not ok - " lines; exit 0 pass, 1 fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build}
M=${MEGATUNE:-$B/megatune}
case $M in /*) ;; *) M=$(pwd)/$M ;; esac
[ -x "$M" ] || { echo "skip: no $M"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/harden-inputs.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
R=$(pwd)
cd "$T" || exit 2
JOB="--gpus 8 --seq 4096 --gbs 64 --top 1"
ESC=$(printf '\033')
fail=0

ok() { echo "ok - $*"; }
nok() { fail=1; echo "not ok - $*"; sed 's/^/#   /' "$T/out" | head -4; }

# expect NAME EXIT ERE ARGS...: exit status and output (stdout+stderr)
expect() {
	name=$1 want=$2 pat=$3
	shift 3
	"$M" "$@" >"$T/out" 2>&1 </dev/null
	rc=$?
	if [ $rc -ne "$want" ]; then
		nok "$name: exit $rc, expected $want"
	elif ! grep -Eq -- "$pat" "$T/out"; then
		nok "$name: output does not match /$pat/"
	elif grep -q "$ESC" "$T/out"; then
		nok "$name: a raw escape character reached the output"
	else
		ok "$name"
	fi
}

cp "$R/models/llama3-8b.json" l.json
"$M" advise --model l.json $JOB --json a.json >/dev/null 2>&1 || nok "advise --json a.json"

# --- item 11: strtod inputs
for v in nan inf -inf 1e400 0x10 infinity; do
	expect "--mem-headroom $v" 2 "--mem-headroom: expected a percentage" \
		advise --model l.json $JOB --mem-headroom "$v"
done
expect "calibrate --margin nan" 2 "--margin: expected a percentage between 0 and 100, got 'nan'" \
	calibrate --backend cpu -o c.json --margin nan
expect "probe --timeout nan" 2 "timeout" probe gemm --backend cpu --timeout nan
expect "probe --max-bytes inf" 2 "bytes" probe collective --backend cpu --max-bytes inf
sed 's/"step_s": [0-9.e+-]*,/"step_s": 1e308,/' a.json >huge.json
expect "report: 1e308 in an advice file" 2 "huge.json: field 'candidates\[0\]\.time\.step_s': expected a number of at most" \
	report --advice huge.json -o r.html
[ -e r.html ] && nok "report wrote a page from 1e308" || ok "report wrote no page from 1e308"
D309=1$(printf '%0308d' 0)
sed "s/\"mfu\": [0-9.e+-]*,/\"mfu\": $D309,/" a.json >d309.json
expect "report: a 309-digit number" 2 "d309.json: field 'candidates\[0\]\.throughput\.mfu'" \
	report --advice d309.json -o r.html
sed 's/"rms_norm_eps": 1e-05/"rms_norm_eps": 1e400/' l.json >e400.json
expect "advise: 1e400 in config.json" 2 "e400.json: field 'rms_norm_eps': expected a number of at most" \
	advise --model e400.json $JOB
F=$R/tests/fixtures/findings/hta-nccl-resnet.json
sed 's/"finding.compute_frac": [0-9.e+-]*/"finding.compute_frac": 1e29/' "$F" >f29.json
expect "rules check: a fraction of 1e29" 2 "f29.json: field 'facts.finding.compute_frac': expected a fraction between 0 and 1" \
	rules check --facts f29.json
sed 's/"finding.step_s": [0-9.e+-]*/"finding.step_s": 1e308/' "$F" >f308.json
expect "rules check: 1e308 seconds" 2 "f308.json: field 'facts.finding.step_s': expected a number of at most" \
	rules check --facts f308.json

# --- item 12: escape sequences and invalid UTF-8
printf '{"schema":"megatune.model/1","name":"x\\u001b[31mRED","hidden_size":4096}' >esc.json
expect "an escape sequence in a model name" 2 "esc.json: field 'name': expected text without control characters.*x\\\\x1b\[31mRED" \
	advise --model esc.json $JOB
printf '{"schema":"megatune.model/1","name":"bad\377utf","hidden_size":4096}' >utf.json
expect "invalid UTF-8 in a model name" 2 "utf.json: field 'name': expected text without control characters, in UTF-8, got \"bad\\\\xff" \
	advise --model utf.json $JOB
expect "calibrate --name with an escape sequence" 2 "--name: expected text without control characters, in UTF-8, got .x\\\\x1b\\[2Jy." \
	calibrate --backend cpu -o c.json --name "x${ESC}[2Jy"
printf '{"schema":"megatune.model/1","hidden_size":4096,"x\033]0;title\007":1}' >key.json
expect "an escape sequence in an echoed key" 2 "unknown field 'x\\\\x1b\]0;title\\\\x07'" \
	advise --model key.json $JOB
expect "an escape sequence in an echoed argument" 2 "x\\\\x1b\[2J" advise --model "x${ESC}[2J" $JOB

# --- item 13: duplicate keys, defaults, clamps, rules
sed 's/"hidden_size": 4096,/"hidden_size": 4096, "hidden_size": 8192,/' l.json >dup.json
expect "duplicate key in config.json" 2 "dup.json: field 'hidden_size': duplicate key" \
	advise --model dup.json $JOB
sed 's/"schema": "megatune.profile\/1",/"schema": "megatune.profile\/1", "name": "a", "name": "b",/' \
	"$R/profiles/dgx-h100.json" >dupp.json
expect "duplicate key in a profile" 2 "dupp.json: field 'name': duplicate key" \
	advise --model l.json --cluster dupp.json $JOB
sed 's/"finding.ranks": 1,/"finding.ranks": 1, "finding.ranks": 2,/' "$F" >dupf.json
expect "duplicate key in a facts file" 2 "dupf.json: field 'facts.finding.ranks': duplicate key" \
	rules check --facts dupf.json
grep -v intermediate_size l.json >noffn.json
expect "Llama config.json without intermediate_size" 2 "noffn.json: missing field 'intermediate_size'" \
	advise --model noffn.json $JOB
expect "--recompute-layers above the layer count" 2 "--recompute-layers 1000: the model has 32 layers" \
	advise --model l.json $JOB --recompute full --recompute-layers 1000
cat >set0.rules <<'EOF'
RULE x-bucket-zero
TITLE zero bucket
KIND set
WHEN config.dp > 1
SET config.bucket_params = 0
SAY set the bucket to zero
CITE nowhere: a test
EOF
expect "rules lint: SET config.bucket_params = 0" 2 "set0.rules:5: .*SET config.bucket_params = 0: not a value this knob takes" \
	rules lint set0.rules
expect "advise --rules: SET config.bucket_params = 0" 2 "set0.rules:5: .*not a value this knob takes" \
	advise --model l.json $JOB --rules set0.rules
sed 's/SET config.bucket_params = 0/SET config.frobnicate = 1/' set0.rules >setx.rules
expect "rules lint: SET of an unknown field" 2 "setx.rules:5: .*SET config.frobnicate" rules lint setx.rules

# --- item 14: ARG values and the shell
sed 's/SET config.bucket_params = 0/ARG --data-path $(touch pwned);echo/' set0.rules >arg.rules
expect "rules lint: an ARG with shell metacharacters" 2 "arg.rules:5: .*ARG data-path: the value holds '\\$', a shell metacharacter" \
	rules lint arg.rules
sed 's/SET config.bucket_params = 0/ARG --wandb-exp-name {model.name}/' set0.rules >name.rules
printf '{"schema":"megatune.model/1","name":"m;touch pwned'"'"'q","hidden_size":1024,"num_layers":4,"num_attention_heads":8,"vocab_size":32000,"ffn_hidden_size":4096,"max_position_embeddings":2048}' >semi.json
"$M" advise --model semi.json --gpus 8 --seq 1024 --gbs 64 --top 1 --rules name.rules \
	--format megatron >flags.txt 2>"$T/out"
word=$(grep -- '--wandb-exp-name' flags.txt | sed 's/^ *--wandb-exp-name //; s/ *\\$//')
eval "set -- $word"
if [ $# -eq 1 ] && [ "$1" = "m;touch pwned'q" ] && [ ! -e pwned ]; then
	ok "a name with ; and ' is one shell word in the printed flags"
else
	nok "printed flag value: $word"
fi
# --- typos: named with the key they resemble; --strict refuses them
sed 's/"num_key_value_heads"/"num_key_value_head"/' "$R/models/llama3-8b.json" >kv.json
expect "HF config typo warned" 0 \
	"warning: kv.json: unknown field 'num_key_value_head': did you mean 'num_key_value_heads'\\?" \
	estimate --model kv.json --gpus 8 --seq 4096 --gbs 64 --tp 2
expect "HF config typo refused under --strict" 2 \
	"error: kv.json: unknown field 'num_key_value_head': did you mean 'num_key_value_heads'\\?" \
	advise --model kv.json $JOB --strict
grep -q "error: --strict: 1 key megatune does not read resembles one it reads" "$T/out" ||
	nok "--strict says why it refuses"
# an error the typo leads to carries it
sed 's/"hidden_size"/"hiden_size"/' "$R/models/llama3-8b.json" >hs.json
expect "HF config typo in the error it leads to" 2 \
	"missing field 'hidden_size'.*\\(and hs.json: unknown field 'hiden_size': did you mean 'hidden_size'\\?" \
	advise --model hs.json $JOB
printf -- '--num-layer 2 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --vocab-size 32000\n' >nl.args
expect "script typo in the error it leads to" 2 \
	"no model flags: expected --num-layers.*\\(and nl.args:1: unknown flag '--num-layer': did you mean '--num-layers'\\?" \
	check nl.args --gpus 8
sed 's/"num_layers"/"num_layer"/' "$R/tests/fixtures/models/mlm-gpt-1.7b.json" >mt.json
expect "megatune model typo" 2 "mt.json: unknown field 'num_layer': did you mean 'num_layers'\\?" \
	advise --model mt.json $JOB
# a Bridge YAML: the typo named at its line before the error it leads to
sed -e '49s/tensor_model_parallel_size/tensor_model_paralel_size/' -e '55s/false/true/' \
	"$R/tests/fixtures/jobs/bridge-llama3-8b-run_config.yaml" >tp.yaml
expect "Bridge YAML typo warned" 0 \
	"warning: tp.yaml:49: unknown key 'model.tensor_model_paralel_size': did you mean 'model.tensor_model_parallel_size'\\?" \
	check tp.yaml --gpus 8
expect "Bridge YAML typo refused under --strict" 2 \
	"error: tp.yaml:49: unknown key 'model.tensor_model_paralel_size'" check tp.yaml --gpus 8 --strict
printf 'torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 2 --hidden-size 1024 \\\n  --num-attention-heads 8 --seq-length 2048 --global-batch-size 8 --vocab-size 32000 \\\n  --tensor-model-paralel-size 2\n' >tp.sh
expect "script flag typo warned" 0 \
	"warning: tp.sh:3: unknown flag '--tensor-model-paralel-size': did you mean '--tensor-model-parallel-size'\\?" \
	check tp.sh
sed '38s/tensor_model_parallel_size/tensor_model_paralel_size/' "$R/tests/fixtures/jobs/verl-qwen3-30b-grpo.sh" >v.sh
expect "verl key typo warned" 0 \
	"warning: v.sh:38: unknown key 'actor_rollout_ref.actor.megatron.tensor_model_paralel_size': did you mean 'actor_rollout_ref.actor.megatron.tensor_model_parallel_size'\\?" \
	check v.sh
# the advice's argv has it as one token too, and the report's copy block as one word
"$M" advise --model semi.json --gpus 8 --seq 1024 --gbs 64 --top 1 --rules name.rules \
	--format json --report semi.html >semi-advice.json 2>"$T/out"
if grep -q '"m;touch pwned'"'"'q"' semi-advice.json &&
	grep -q -- "--wandb-exp-name &#39;m;touch pwned&#39;\\\\&#39;&#39;q&#39;" semi.html; then
	ok "a name with ; and ' is one token in the advice and one word in the report"
else
	nok "the advice's token or the report's word: $(grep -o -- '--wandb-exp-name[^\\]*' semi.html)"
fi
exit $fail
