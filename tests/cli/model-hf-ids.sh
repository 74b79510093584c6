#!/bin/sh
# SPDX-License-Identifier: MIT
# Every bundled model copied from a Hugging Face repository (its _megatune_source:
# "Hugging Face <id> config.json") is read under that id: `--model <id>` names the
# bundled model, as a job's model path does (perfmodel/model.c, docs/FORMATS.md section 1).
# Exit 0 pass, anything else fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
MT=${MEGATUNE:-$BUILD/megatune}
fail=0
n=0
for f in models/*.json; do
	name=$(basename "$f" .json)
	id=$(sed -n 's/.*"_megatune_source": *"Hugging Face \([^ "]*\) config\.json".*/\1/p' "$f")
	[ -n "$id" ] || continue
	n=$((n + 1))
	out=$("$MT" advise --model "$id" --gpus 1024 --seq 4096 --gbs 8192 --top 1 --format json 2>&1)
	got=$(printf '%s\n' "$out" | sed -n 's/^ *"model": *"\([^"]*\)",*$/\1/p' | head -1)
	if [ "$got" != "$name" ]; then
		echo "FAIL: $id read as '${got:-nothing}', expected $name: $(printf '%s\n' "$out" | head -2)"
		fail=1
	fi
done
[ "$n" -ge 10 ] || { echo "FAIL: only $n bundled models name their Hugging Face repository"; fail=1; }
[ $fail -eq 0 ] && echo "model-hf-ids: $n bundled models read under their Hugging Face ids"
exit $fail
