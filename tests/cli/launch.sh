#!/bin/sh
# SPDX-License-Identifier: MIT
# advise --format slurm|torchrun: the scripts parse as shell (sh -n, and
# bash -n where there is bash), run pretrain_gpt.py once, with the variables
# --format env prints and the arguments --format megatron prints.
# Usage: tests/cli/launch.sh   (MEGATUNE: the binary, default build/megatune)
set -u
cd "$(dirname "$0")/../.." || exit 2
M=${MEGATUNE:-build/megatune}
t=$(mktemp -d "${TMPDIR:-/tmp}/launch.XXXXXX") || exit 2
trap 'rm -rf "$t"' EXIT INT TERM
fail=0
bad() { echo "launch: $*"; fail=1; }
for job in "llama3-70b --gpus 64 --seq 8192 --gbs 128" \
	"deepseek-v3 --gpus 1024 --seq 4096 --gbs 4096" \
	"llama3-8b --gpus 4 --seq 4096 --gbs 32"; do
	# shellcheck disable=SC2086
	set -- --model $job
	for fmt in slurm torchrun; do
		"$M" advise "$@" --format $fmt >"$t/$fmt.sh" 2>"$t/err" || { bad "$job $fmt: exit $?"; cat "$t/err"; continue; }
		sh -n "$t/$fmt.sh" || bad "$job $fmt: sh -n fails"
		if command -v bash >/dev/null 2>&1; then
			bash -n "$t/$fmt.sh" || bad "$job $fmt: bash -n fails"
		fi
		[ "$(grep -c 'pretrain_gpt.py' "$t/$fmt.sh")" -eq 1 ] || bad "$job $fmt: not one pretrain_gpt.py line"
	done
	"$M" advise "$@" --format env >"$t/env" 2>/dev/null
	while IFS= read -r v; do
		grep -qxF "$v" "$t/slurm.sh" || bad "$job: no '$v' in the slurm script"
	done <"$t/env"
	"$M" advise "$@" --format megatron 2>/dev/null | sed 's/ \\$//; s/^ *//' >"$t/args"
	while IFS= read -r a; do
		grep -qxF -- "  $a \\" "$t/slurm.sh" || bad "$job: no '$a' in the slurm script"
	done <"$t/args"
done
[ $fail -eq 0 ] && echo "launch: scripts parse and carry every variable and argument"
exit $fail
